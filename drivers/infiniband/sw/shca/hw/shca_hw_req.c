// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the requester.
 *
 * A QP's turn (shca_hw_req_turn()), run by an execution unit or by a
 * doorbell's caller as the scheduler (shca_hw_sched.c) decides, takes
 * send WQEs in order and executes each to the end - local checks, routing
 * (shca_hw_fabric.c), the peer's responder (shca_hw_resp.c), the reply -
 * and completes it before taking the next.  A UD send to a multicast
 * group runs each member's responder in turn.  Because one WQE is finished
 * before the next starts, a fenced WQE never has an RDMA read or atomic
 * of its own QP in flight ahead of it, and an RDMA FLUSH finds every
 * earlier write of its QP in the target's memory already.  RNR and transport retries put the
 * turn back in the scheduler's queue with a delay.  A QP in ERR or SQE is
 * flushed by its turn (shca_hw_qp_flush()).
 *
 * Lock order: the turn runs under shca_hw_qp.turn_mutex; it takes the
 * QP's lock to read and update its context and drops it before it
 * executes a WQE, so the peer's resp_mutex, the fabric lock, the MPT
 * and the CQ are all taken with no lock of the sending QP but turn_mutex.
 */
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "shca_hw_int.h"

#define SHCA_HW_BUDGET		64
/* Payload bytes a doorbell's caller moves itself before it hands over. */
#define SHCA_HW_RUN_BYTES	8192
#define SHCA_HW_RNR_INFINITE	7
#define SHCA_HW_MAX_TIMEOUT_US	100000

static bool shca_hw_opcode_ok(const struct shca_hw_qp *qp, u32 opcode)
{
	/*
	 * A process's WQEs cannot name kernel memory; its LOCAL_INVs
	 * invalidate only windows (SHCA_HW_INV_MW_ONLY).
	 */
	if (qp->user && opcode == SHCA_WQE_REG_MR)
		return false;
	switch (qp->type) {
	case SHCA_QPT_UD:
	case SHCA_QPT_GSI:
		return opcode == SHCA_WQE_SEND || opcode == SHCA_WQE_SEND_IMM;
	case SHCA_QPT_UC:
		return opcode == SHCA_WQE_SEND || opcode == SHCA_WQE_SEND_IMM ||
		       opcode == SHCA_WQE_SEND_INV ||
		       opcode == SHCA_WQE_RDMA_WRITE ||
		       opcode == SHCA_WQE_RDMA_WRITE_IMM ||
		       opcode == SHCA_WQE_LOCAL_INV ||
		       opcode == SHCA_WQE_REG_MR ||
		       opcode == SHCA_WQE_BIND_MW;
	case SHCA_QPT_RC:
	case SHCA_QPT_XRC_INI:
		return opcode < SHCA_WQE_NUM_OPCODES;
	default:
		return false;
	}
}

/*
 * The fields of a FLUSH or an atomic write that the local checks cover:
 * neither names local memory, and a FLUSH asks for a placement type the
 * device has and a selectivity level it knows.
 */
static bool shca_hw_wqe_fields_ok(const struct shca_hw_send_wqe *w)
{
	switch (w->opcode) {
	case SHCA_WQE_FLUSH:
		return !w->num_sge && w->flush.type &&
		       !(w->flush.type & ~(SHCA_FLUSH_GLOBAL |
					   SHCA_FLUSH_PERSISTENT)) &&
		       (w->flush.level == SHCA_FLUSH_RANGE ||
			w->flush.level == SHCA_FLUSH_MR);
	case SHCA_WQE_ATOMIC_WRITE:
	case SHCA_WQE_BIND_MW:
		return !w->num_sge;
	default:
		return true;
	}
}

/*
 * A UD send to a multicast group: one copy to each member the fabric
 * finds, each member's responder taking or dropping it as it would a
 * unicast UD message, and checking that the QP is still in the group.
 * The requester hears nothing from any of them.  Copies lost for want of
 * memory count as dropped, and so does a copy whose receive buffer raised
 * a page fault: the first such member is returned, referenced, for the
 * requester to answer the fault once it holds nothing, so that the next
 * datagram finds the pages.
 */
static struct shca_hw_qp *shca_hw_send_mcast(struct shca_hw_qp *qp,
					     struct shca_hw_msg *m,
					     struct shca_hw_result *res)
{
	struct shca_hw_mcast_target *targets;
	struct shca_hw_qp *dqp, *fault_qp = NULL;
	struct shca_hw_odp_fault fault = {};
	struct shca_hw_result ignored;
	u32 i, n, lost;

	m->mcast = true;
	n = shca_hw_fabric_mcast(m->av->dgid, m->src.segment, qp, &targets,
				 &lost);
	shca_hw_count_add(qp->hw, SHCA_CNT_DROPPED, lost);
	for (i = 0; i < n; i++) {
		shca_hw_window_pass(qp->hw, SHCA_WIN_MCAST_DELIVER,
				    targets[i].m.qpn);
		dqp = shca_hw_fabric_mcast_member(&targets[i]);
		if (!dqp) {
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
			continue;
		}
		memset(&ignored, 0, sizeof(ignored));
		m->defer.raised = false;
		shca_hw_respond(dqp, m, &ignored);
		if (m->defer.raised) {
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
			if (!fault_qp) {
				fault_qp = dqp;
				fault = m->defer.fault;
				continue;
			}
		}
		shca_hw_qp_put(dqp);
	}
	kfree(targets);
	shca_hw_count(qp->hw, SHCA_CNT_MCAST_TX);
	shca_hw_count_add(qp->hw, SHCA_CNT_TX_BYTES, m->len);
	res->byte_len = m->len;
	/* Not sent again: the fault only makes the pages present. */
	m->defer.raised = !!fault_qp;
	m->defer.fault = fault;
	return fault_qp;
}

/*
 * Send one WQE's message once.  @defer comes in saying whether the
 * responder may raise a page fault; when one did, the responder's QP is
 * returned, referenced, for the fault to be answered once the requester
 * holds nothing, and *@resend says whether the message took no effect
 * and goes again (not for a multicast copy).  No QP lock is held.
 */
static struct shca_hw_qp *shca_hw_send_once(struct shca_hw_qp *qp,
					    const struct shca_hw_send_wqe *w,
					    const struct shca_hw_qp_attr *attr,
					    struct shca_hw_odp_defer *defer,
					    bool *resend,
					    struct shca_hw_result *res)
{
	struct shca_hw *hw = qp->hw;
	bool ud = qp->type == SHCA_QPT_UD || qp->type == SHCA_QPT_GSI;
	bool atomic = w->opcode == SHCA_WQE_ATOMIC_CS ||
		      w->opcode == SHCA_WQE_ATOMIC_FA;
	struct shca_hw_msg m = { .src_qp = qp, .wqe = w, .defer = *defer };
	struct shca_hw_qp *dqp = NULL;
	struct shca_hw_mem local;
	u32 access = 0;
	bool routable;

	if (!shca_hw_opcode_ok(qp, w->opcode) ||
	    ((w->flags & SHCA_WQE_F_INLINE) &&
	     (w->inline_len > qp->max_inline || w->opcode > SHCA_WQE_RDMA_WRITE_IMM)) ||
	    (!(w->flags & SHCA_WQE_F_INLINE) && w->num_sge > qp->max_send_sge) ||
	    !shca_hw_wqe_fields_ok(w)) {
		res->status = SHCA_CQE_LOC_QP_OP_ERR;
		return NULL;
	}
	if (w->opcode == SHCA_WQE_LOCAL_INV) {
		if (!shca_hw_mpt_invalidate(hw, qp->pdn, qp->qpn, w->imm_inv,
					    qp->user ? SHCA_HW_INV_MW_ONLY : 0)) {
			shca_hw_count(hw, SHCA_CNT_LOC_PROT_ERR);
			res->status = SHCA_CQE_LOC_PROT_ERR;
		}
		return NULL;
	}
	if (w->opcode == SHCA_WQE_REG_MR) {
		if (!shca_hw_mpt_fast_reg(hw, qp->pdn, w))
			res->status = SHCA_CQE_MW_BIND_ERR;
		return NULL;
	}
	if (w->opcode == SHCA_WQE_BIND_MW) {
		res->status = shca_hw_mw_bind(hw, qp->pdn, qp->qpn, w);
		return NULL;
	}

	if (w->flags & SHCA_WQE_F_INLINE) {
		/* @w is the engine's own copy of the WQE. */
		shca_hw_mem_inline(&local, w->inline_data, w->inline_len);
	} else {
		if (w->opcode == SHCA_WQE_RDMA_READ || atomic)
			access = SHCA_ACCESS_LOCAL_WRITE;
		res->status = shca_hw_mem_resolve(hw, qp->pdn, w->sge,
						  w->num_sge, access, NULL,
						  &local);
		if (res->status != SHCA_CQE_OK)
			return NULL;
	}
	m.local = &local;
	/* An atomic write's 8 bytes travel in the WQE itself. */
	m.len = w->opcode == SHCA_WQE_ATOMIC_WRITE ? 8 : local.total;
	m.av = ud ? &w->ud.av : &attr->av;
	if (!ud) {
		m.psn = attr->sq_psn;
		m.npkts = max_t(u64, 1, DIV_ROUND_UP_ULL(m.len, attr->mtu ?: 256));
	}
	m.qkey = w->ud.remote_qkey & SHCA_HW_QKEY_PRIVILEGED ?
		 attr->qkey : w->ud.remote_qkey;
	routable = shca_hw_route_source(qp, m.av, &m.src);
	if ((atomic && m.len != 8) || m.len > hw->caps->max_msg_sz ||
	    (ud && routable && m.len > m.src.mtu)) {
		shca_hw_count(hw, SHCA_CNT_LEN_ERR);
		res->status = SHCA_CQE_LOC_LEN_ERR;
		goto out;
	}

	if (routable && qp->type == SHCA_QPT_UD &&
	    (w->ud.remote_qpn & SHCA_HW_QPN_MASK) == SHCA_HW_MCAST_QPN &&
	    shca_hw_gid_is_mcast(m.av->dgid)) {
		dqp = shca_hw_send_mcast(qp, &m, res);
		*resend = false;
		goto out;
	}
	/* UC hears nothing: its packets leave, whatever becomes of them. */
	if (qp->type == SHCA_QPT_UC)
		res->npkts = m.npkts;
	if (routable)
		dqp = shca_hw_route_dest(qp, ud ? w->ud.remote_qpn :
					 attr->dest_qpn);
	if (!dqp) {
		if (shca_hw_qp_reliable(qp))
			res->no_ack = true;
		else
			shca_hw_count(hw, SHCA_CNT_DROPPED);
		goto out;
	}
	res->status = shca_hw_respond(dqp, &m, res);
	if (m.defer.raised)
		goto out;
	shca_hw_qp_put(dqp);
	dqp = NULL;
	if (res->status == SHCA_CQE_OK && !res->rnr && !res->no_ack) {
		res->byte_len = m.len;
		shca_hw_count_add(hw, SHCA_CNT_TX_BYTES, m.len);
	}
out:
	shca_hw_mem_release(&local);
	*defer = m.defer;
	return dqp;
}

/*
 * Execute one send WQE from start to finish.  No QP lock is held.
 *
 * A page fault the responder raises (struct shca_hw_odp_defer) is
 * answered here, with nothing of the message held, and the message is
 * sent again from the start: the responder took none of it.  The fault
 * may have been raised by the requester's own memory's MMU notifier, or
 * wait on it: this is the one place it can be answered without either
 * side holding pages the notifier waits for.  After a fault that fails,
 * or SHCA_HW_ODP_MAX_FAULTS of them, absent pages deny the access, as
 * they do for a local fault.  A UD multicast copy is not sent again.
 */
static void shca_hw_execute(struct shca_hw_qp *qp,
			    const struct shca_hw_send_wqe *w,
			    const struct shca_hw_qp_attr *attr,
			    struct shca_hw_result *res)
{
	struct shca_hw_odp_defer defer = {};
	struct shca_hw_qp *dqp;
	bool answered, resend;
	u32 faults = 0;

	for (;;) {
		resend = true;
		dqp = shca_hw_send_once(qp, w, attr, &defer, &resend, res);
		if (!dqp)
			return;
		shca_hw_window_pass(qp->hw, SHCA_WIN_ODP_DEFER, qp->qpn);
		answered = shca_hw_odp_answer(dqp->hw, &defer.fault);
		shca_hw_qp_put(dqp);
		if (!resend)
			return;
		defer.raised = false;
		defer.deny = !answered || ++faults >= SHCA_HW_ODP_MAX_FAULTS;
		memset(res, 0, sizeof(*res));
	}
}

/* Microseconds an RNR NAK timer value asks for (IBTA table 45). */
static u32 shca_hw_rnr_usecs(u8 timer)
{
	static const u32 usecs[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return usecs[timer & 31];
}

static u32 shca_hw_timeout_usecs(u8 timeout)
{
	if (!timeout || timeout > 14)
		return SHCA_HW_MAX_TIMEOUT_US;
	return min_t(u32, (4096U << timeout) / 1000, SHCA_HW_MAX_TIMEOUT_US);
}

/* Payload bytes a send WQE moves, as far as its fields can say. */
static u64 shca_hw_wqe_bytes(const struct shca_hw_send_wqe *w)
{
	u64 bytes = 0;
	u32 i;

	if (w->flags & SHCA_WQE_F_INLINE)
		return w->inline_len;
	/* Too many SGEs: execution rejects the WQE, at no cost. */
	for (i = 0; i < w->num_sge && i < ARRAY_SIZE(w->sge); i++)
		bytes += w->sge[i].length;
	return bytes;
}

/*
 * One step of a QP's turn: execute the WQE at the head of the SQ.  With
 * @bytes_left (a doorbell's caller running the turn), a WQE that moves
 * more payload than that is left for an execution unit, and @handover
 * says so.  Returns false when there is nothing more to do for now.
 */
static bool shca_hw_engine_step(struct shca_hw_qp *qp, u64 *bytes_left,
				bool *handover)
{
	struct shca_hw_cqe cqe = { .qpn = qp->qpn };
	struct shca_hw_result res = {};
	struct shca_hw_qp_attr attr;
	struct shca_hw_send_wqe w;
	unsigned long flags;
	u32 mask = (1U << qp->sq.log_depth) - 1;
	u32 pi, state, delay = 0;
	bool event = false, flush, signaled;
	u64 bytes = 0;

	spin_lock_irqsave(&qp->lock, flags);
	state = qp->attr.state;
	if (qp->fenced || state == SHCA_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	if (state == SHCA_QPS_ERR || state == SHCA_QPS_SQE) {
		flush = shca_hw_qp_flush_pending(qp, state == SHCA_QPS_ERR);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (flush && shca_hw_sched_may_run(qp->hw))
			shca_hw_qp_flush(qp, state == SHCA_QPS_ERR);
		return false;
	}
	/* Pairs with the driver's release: the WQEs below pi are written. */
	pi = smp_load_acquire(&qp->dbrec->sq_pi);
	if (state == SHCA_QPS_SQD && qp->attr.sqd_notify &&
	    !qp->sqd_notified) {
		qp->sqd_notified = true;
		event = true;
	}
	if (state != SHCA_QPS_RTS || pi == qp->sq.ci || !qp->sq.ring) {
		spin_unlock_irqrestore(&qp->lock, flags);
		if (event)
			shca_hw_qp_event(qp, SHCA_EV_SQ_DRAINED);
		return false;
	}
	if (pi - qp->sq.ci > mask + 1) {
		/* The driver wrote a producer index the ring cannot hold. */
		shca_hw_qp_to_err(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		shca_hw_qp_event(qp, SHCA_EV_QP_FATAL);
		return false;
	}
	memcpy(&w, (struct shca_hw_send_wqe *)qp->sq.ring + (qp->sq.ci & mask),
	       sizeof(w));
	/*
	 * A WQE the caller leaves to an execution unit is handed over before
	 * it can take a paused device's single step: the unit needs the step.
	 */
	if (bytes_left) {
		bytes = shca_hw_wqe_bytes(&w);
		if (bytes > *bytes_left) {
			spin_unlock_irqrestore(&qp->lock, flags);
			*handover = true;
			return false;
		}
	}
	if (!shca_hw_sched_may_run(qp->hw)) {
		/* Paused: shca_hw_engine_pause() kicks the QP again. */
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	if (bytes_left)
		*bytes_left -= bytes;
	attr = qp->attr;
	/*
	 * Running: this turn reads the producer index again before it
	 * stops, so a driver posting from now on may skip the doorbell.
	 */
	if (!READ_ONCE(qp->dbrec->sq_running))
		WRITE_ONCE(qp->dbrec->sq_running, 1);
	spin_unlock_irqrestore(&qp->lock, flags);

	shca_hw_execute(qp, &w, &attr, &res);

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->fenced || qp->attr.state == SHCA_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	if (res.rnr) {
		if (attr.rnr_retry == SHCA_HW_RNR_INFINITE || qp->rnr_left) {
			if (attr.rnr_retry != SHCA_HW_RNR_INFINITE)
				qp->rnr_left--;
			delay = shca_hw_rnr_usecs(res.rnr_timer);
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_RNR_EXC);
			res.status = SHCA_CQE_RNR_RETRY_EXC_ERR;
		}
	} else if (res.no_ack) {
		if (qp->retry_left) {
			qp->retry_left--;
			delay = shca_hw_timeout_usecs(attr.timeout);
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_RETRY_EXC);
			res.status = SHCA_CQE_RETRY_EXC_ERR;
		}
	}
	if (delay) {
		shca_hw_sched_retry(qp, delay);
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}

	shca_hw_count(qp->hw, SHCA_CNT_WQES);
	/* Unless a modify set a new one meanwhile, the next PSN moves on. */
	if (res.npkts && qp->attr.sq_psn == attr.sq_psn)
		qp->attr.sq_psn = (attr.sq_psn + res.npkts) & SHCA_HW_PSN_MASK;
	cqe.wqe_idx = qp->sq.ci & mask;
	cqe.opcode = shca_hw_wqe_cqe_opcode(w.opcode);
	cqe.status = res.status;
	cqe.byte_len = res.byte_len;
	qp->sq.ci++;
	qp->rnr_left = qp->attr.rnr_retry;
	qp->retry_left = qp->attr.retry_cnt;
	signaled = res.status != SHCA_CQE_OK || qp->sig_all ||
		   (w.flags & SHCA_WQE_F_SIGNALED);
	event = false;
	if (res.status != SHCA_CQE_OK) {
		if (shca_hw_qp_reliable(qp)) {
			shca_hw_qp_to_err(qp);
		} else if (qp->attr.state == SHCA_QPS_RTS) {
			qp->attr.state = SHCA_QPS_SQE;
			shca_hw_sched_kick_now(qp);
		}
		event = res.status == SHCA_CQE_LOC_PROT_ERR;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	/*
	 * Unlocked, as writing a CQE may sleep.  This is the QP's own turn, so
	 * a flush the error queued comes after it, and a fence waits for it.
	 */
	if (signaled)
		shca_hw_cq_write(qp->scq, &cqe, false);
	if (event)
		shca_hw_qp_event(qp, SHCA_EV_QP_ACCESS_ERR);
	return res.status == SHCA_CQE_OK;
}

/*
 * A turn stops: clear the doorbell record's sq_running, so that drivers
 * ring again, then look at the producer index once more.  A driver
 * stores the index, issues a full barrier and reads sq_running; the turn
 * clears sq_running, issues a full barrier and reads the index.  So
 * either the driver sees the turn stopping and rings, or the turn sees
 * the WQE (the same pairing as io_uring's SQ_NEED_WAKEUP).  A turn that
 * comes again anyway (a retry timer, another doorbell) or cannot run
 * (paused: restarting kicks every QP) does not need the second look.
 * Returns true when work is waiting that this turn must take on.
 */
static bool shca_hw_req_park(struct shca_hw_qp *qp)
{
	struct shca_hw *hw = qp->hw;
	unsigned long flags;
	bool more;

	lockdep_assert_held(&qp->turn_mutex);
	shca_hw_window_pass(hw, SHCA_WIN_DB_IDLE, qp->qpn);
	WRITE_ONCE(qp->dbrec->sq_running, 0);
	/* Pairs with the driver's barrier between sq_pi and sq_running. */
	smp_mb();
	shca_hw_window_pass(hw, SHCA_WIN_DB_RECHECK, qp->qpn);
	if (delayed_work_pending(&qp->engine) || READ_ONCE(hw->engine_paused))
		return false;
	spin_lock_irqsave(&qp->lock, flags);
	more = shca_hw_qp_sq_due(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (more)
		shca_hw_count(hw, SHCA_CNT_DB_RECHECKS);
	return more;
}

/**
 * shca_hw_req_turn() - run a QP's turn
 * @qp: the QP, its turn_mutex held
 * @by: who runs it.  A doorbell's caller moves no more than
 *	SHCA_HW_RUN_BYTES of payload, so that large transfers still overlap
 *	with the process that posts them.
 *
 * Runs up to a budget of WQEs.  While it executes them, the doorbell
 * record says so (sq_running), and WQEs posted meanwhile are taken on
 * without a doorbell.  When the send queue is empty, an adaptive poller
 * may take the QP over with sq_running still set (shca_hw_poll_adopt());
 * otherwise the turn looks for WQEs once more before it stops
 * (shca_hw_req_park()).  A poller's own turn just stops: the poller
 * goes on looking; so does a destroy's, which is the QP's last.
 *
 * Return: true if work is left (the budget ran out, or the caller handed
 * over): the turn goes back in the queue, yielding the unit to other QPs.
 */
bool shca_hw_req_turn(struct shca_hw_qp *qp, enum shca_hw_turn_by by)
{
	bool caller = by == SHCA_HW_TURN_CALLER;
	u64 bytes = SHCA_HW_RUN_BYTES;
	bool handover = false;
	int budget;

	lockdep_assert_held(&qp->turn_mutex);
	for (budget = SHCA_HW_BUDGET; budget; budget--) {
		if (shca_hw_engine_step(qp, caller ? &bytes : NULL, &handover))
			continue;
		if (handover)
			return true;
		if (by == SHCA_HW_TURN_POLLER || by == SHCA_HW_TURN_DESTROY ||
		    shca_hw_poll_adopt(qp, by))
			return false;
		if (!shca_hw_req_park(qp))
			return false;
	}
	return true;
}
