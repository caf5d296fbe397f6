// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: QP contexts.
 *
 * The QP context table, the QP commands and state machine and the flush of
 * a QP in error (the doorbells are shca_hw_doorbell.c's).  QPNs are 24 bits and handed
 * out cyclically from 2 to 0xfffffe (QP0 does not exist on a RoCE port;
 * QP1 is the GSI QP; 0xffffff is the multicast QPN), so a freed QPN is not
 * reissued until the space wraps.  Each QP also has a generation, which
 * events carry: a device-wide count of the QPs created, so a reissued QPN
 * never comes back with a generation it had before (not until 2^32 QPs
 * later), and the device keeps nothing for a QPN nobody holds.
 *
 * This unit holds state; it does not execute.  A doorbell or a change of
 * state asks the scheduler (shca_hw_sched.c) for the QP's turn; the
 * requester and the responder call in here, never the other way round.
 * Fencing a QP (RESET, destroy) cancels its turn, waits for whoever runs
 * it, and waits out any inbound message its responder is handling; after
 * that nothing is written for it.  Destroy and RESET also take the QP out
 * of every multicast group (shca_hw_mcast.c).
 *
 * Lock order: shca_hw.cmd_mutex (create; destroy only to hide and erase;
 * ATTACH_MCAST and DETACH_MCAST only to change the group table: nothing
 * under it waits for the data path), then shca_hw_qp.modify_mutex (never
 * under cmd_mutex), then
 * shca_hw_qp.turn_mutex and shca_hw_qp.resp_mutex (a destroy's fence
 * holds both), then shca_hw_qp.lock.  CQEs are written and events raised
 * with shca_hw_qp.lock dropped.
 */
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/limits.h>
#include <linux/slab.h>

#include "shca_hw_int.h"

/**
 * shca_hw_qp_get() - look up a live QP context and hold it
 * @hw: the device
 * @qpn: the QP number
 *
 * Return: the context, or NULL.
 */
struct shca_hw_qp *shca_hw_qp_get(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp;

	/* The entry is freed after a grace period (kfree_rcu()). */
	rcu_read_lock();
	qp = xa_load(&hw->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

/**
 * shca_hw_qp_put() - drop a hold on a QP context
 * @qp: the context
 */
void shca_hw_qp_put(struct shca_hw_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->done);
}

/**
 * shca_hw_qp_event() - raise an affiliated event on a QP
 * @qp: the QP
 * @event: the event
 */
void shca_hw_qp_event(struct shca_hw_qp *qp, enum shca_hw_event event)
{
	shca_hw_eq_raise(qp->hw, &qp->ev, event);
}

/**
 * shca_hw_qp_to_err() - move a QP to the error state
 * @qp: the QP, locked
 *
 * Its execution unit then flushes both work queues.
 */
void shca_hw_qp_to_err(struct shca_hw_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->attr.state == SHCA_QPS_RESET || qp->fenced)
		return;
	qp->attr.state = SHCA_QPS_ERR;
	shca_hw_sched_kick_now(qp);
}

static bool shca_hw_wq_ok(const struct shca_hw_wq_desc *wq, u32 max_depth)
{
	return wq->ring && wq->log_depth &&
	       wq->log_depth <= SHCA_HW_MAX_LOG_DEPTH &&
	       (1U << wq->log_depth) <= max_depth;
}

static void shca_hw_qp_unlink(struct shca_hw_qp *qp)
{
	if (qp->scq) {
		atomic_dec(&qp->scq->assoc);
		shca_hw_cq_put(qp->scq);
	}
	if (qp->rcq) {
		atomic_dec(&qp->rcq->assoc);
		shca_hw_cq_put(qp->rcq);
	}
	if (qp->srq) {
		atomic_dec(&qp->srq->assoc);
		shca_hw_srq_put(qp->srq);
	}
	if (qp->xrcd)
		shca_hw_xrcd_put(qp->xrcd);
}

/*
 * What each kind of QP has: an XRC initiator a send queue and a send CQ
 * only, an XRC target neither queue, no CQ and no protection domain, but
 * an XRC domain; every other kind both queues (or an SRQ) and both CQs.
 */
static bool shca_hw_qp_create_ok(const struct shca_hw_caps *caps,
				 const struct shca_hw_qp_create *in)
{
	bool pd_ok = in->pdn && in->pdn <= caps->max_pd;

	switch (in->type) {
	case SHCA_QPT_XRC_INI:
		return pd_ok && shca_hw_wq_ok(&in->sq, caps->max_qp_wr) &&
		       !in->recv_cqn && !in->srqn && !in->xrcdn &&
		       !in->rq.ring && !in->max_recv_sge;
	case SHCA_QPT_XRC_TGT:
		return !in->pdn && in->xrcdn && !in->send_cqn &&
		       !in->recv_cqn && !in->srqn && !in->sq.ring &&
		       !in->rq.ring && !in->max_send_sge &&
		       !in->max_recv_sge && !in->max_inline;
	default:
		return in->type <= SHCA_QPT_GSI && pd_ok && !in->xrcdn &&
		       shca_hw_wq_ok(&in->sq, caps->max_qp_wr) &&
		       (in->srqn || shca_hw_wq_ok(&in->rq, caps->max_qp_wr));
	}
}

/**
 * shca_hw_cmd_create_qp() - run CREATE_QP
 * @hw: the device, its command mutex held
 * @cmd: the QP's type, queues, CQs, SRQ or domain in @cmd->in.qp; the QPN
 *	is returned in @cmd->out.num
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_create_qp(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	const struct shca_hw_qp_create *in = &cmd->in.qp;
	const struct shca_hw_caps *caps = hw->caps;
	enum shca_hw_status status;
	struct shca_hw_qp *qp;
	u32 qpn;
	int err;

	lockdep_assert_held(&hw->cmd_mutex);
	if (!shca_hw_qp_create_ok(caps, in) || !in->dbrec ||
	    in->max_send_sge > SHCA_HW_MAX_SGE ||
	    in->max_recv_sge > SHCA_HW_MAX_SGE ||
	    in->max_inline > SHCA_HW_MAX_INLINE)
		return SHCA_HW_BAD_PARAM;
	if (hw->nr_qps >= caps->max_qp)
		return SHCA_HW_NO_RESOURCES;

	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp)
		return SHCA_HW_NO_RESOURCES;
	qp->hw = hw;
	qp->type = in->type;
	qp->pdn = in->pdn;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->done);
	mutex_init(&qp->modify_mutex);
	mutex_init(&qp->turn_mutex);
	mutex_init(&qp->resp_mutex);
	spin_lock_init(&qp->lock);
	shca_hw_sched_qp_init(qp);
	INIT_LIST_HEAD(&qp->backstop_node);
	INIT_LIST_HEAD(&qp->poll_node);
	qp->attr.state = SHCA_QPS_RESET;
	qp->attr.mtu = 1024;
	qp->sq.ring = in->sq.ring;
	qp->sq.log_depth = in->sq.log_depth;
	if (!in->srqn && !shca_hw_qp_is_xrc(qp)) {
		qp->rq.ring = in->rq.ring;
		qp->rq.log_depth = in->rq.log_depth;
	}
	qp->dbrec = in->dbrec;
	/* The device's field of the record: no turn is running. */
	WRITE_ONCE(qp->dbrec->sq_running, 0);
	qp->max_send_sge = in->max_send_sge;
	qp->max_recv_sge = in->max_recv_sge;
	qp->max_inline = in->max_inline;
	qp->sig_all = in->sig_all;
	qp->user = in->user;

	status = SHCA_HW_BAD_INDEX;
	if (in->send_cqn) {
		qp->scq = shca_hw_cq_get(hw, in->send_cqn);
		if (qp->scq)
			atomic_inc(&qp->scq->assoc);
	}
	if (in->recv_cqn) {
		qp->rcq = shca_hw_cq_get(hw, in->recv_cqn);
		if (qp->rcq)
			atomic_inc(&qp->rcq->assoc);
	}
	if (in->srqn) {
		qp->srq = shca_hw_srq_get(hw, in->srqn);
		if (qp->srq)
			atomic_inc(&qp->srq->assoc);
	}
	if (in->xrcdn)
		qp->xrcd = shca_hw_xrcd_get(hw, in->xrcdn);
	if (in->type == SHCA_QPT_XRC_TGT ? !qp->xrcd :
	    !qp->scq || (in->type != SHCA_QPT_XRC_INI && !qp->rcq))
		goto err;
	/*
	 * An XRC SRQ takes messages from XRC target QPs only.  Another SRQ
	 * may be of another protection domain than the QP: IBTA checks the
	 * receive WQEs against the SRQ's, and the rest against the QP's.
	 */
	if ((in->srqn && !qp->srq) || (qp->srq && qp->srq->xrcd))
		goto err;

	/* Reserve the number first: lookups find nothing until it is live. */
	if (in->type == SHCA_QPT_GSI) {
		qpn = SHCA_HW_GSI_QPN;
		err = xa_insert_irq(&hw->qps, qpn, NULL, GFP_KERNEL);
		status = err == -EBUSY ? SHCA_HW_BUSY : SHCA_HW_NO_RESOURCES;
	} else {
		err = xa_alloc_cyclic_irq(&hw->qps, &qpn, NULL,
					  XA_LIMIT(SHCA_HW_FIRST_QPN,
						   SHCA_HW_LAST_QPN),
					  &hw->next_qpn, GFP_KERNEL);
		status = SHCA_HW_NO_RESOURCES;
	}
	if (err < 0)
		goto err;
	qp->qpn = qpn;
	qp->gen = shca_hw_new_gen(hw);
	shca_hw_evsrc_init(&qp->ev, SHCA_EQE_QP, qpn, qp->gen, 0);
	xa_store_irq(&hw->qps, qpn, qp, GFP_KERNEL);
	hw->nr_qps++;
	cmd->out.id.num = qpn;
	cmd->out.id.gen = qp->gen;
	return SHCA_HW_OK;

err:
	shca_hw_qp_unlink(qp);
	kfree(qp);
	return status;
}

static const u8 shca_hw_cqe_opcodes[SHCA_WQE_NUM_OPCODES] = {
	[SHCA_WQE_SEND]			= SHCA_CQE_SEND,
	[SHCA_WQE_SEND_IMM]		= SHCA_CQE_SEND,
	[SHCA_WQE_SEND_INV]		= SHCA_CQE_SEND,
	[SHCA_WQE_RDMA_WRITE]		= SHCA_CQE_RDMA_WRITE,
	[SHCA_WQE_RDMA_WRITE_IMM]	= SHCA_CQE_RDMA_WRITE,
	[SHCA_WQE_RDMA_READ]		= SHCA_CQE_RDMA_READ,
	[SHCA_WQE_ATOMIC_CS]		= SHCA_CQE_ATOMIC_CS,
	[SHCA_WQE_ATOMIC_FA]		= SHCA_CQE_ATOMIC_FA,
	[SHCA_WQE_LOCAL_INV]		= SHCA_CQE_LOCAL_INV,
	[SHCA_WQE_REG_MR]		= SHCA_CQE_REG_MR,
	[SHCA_WQE_FLUSH]		= SHCA_CQE_FLUSH,
	[SHCA_WQE_ATOMIC_WRITE]		= SHCA_CQE_ATOMIC_WRITE,
	[SHCA_WQE_BIND_MW]		= SHCA_CQE_BIND_MW,
};

/**
 * shca_hw_wqe_cqe_opcode() - the CQE opcode that completes a send WQE
 * @opcode: the WQE's opcode, as the driver wrote it
 *
 * Return: the CQE opcode; an opcode the device does not know is taken
 * modulo the number it knows.
 */
u8 shca_hw_wqe_cqe_opcode(u32 opcode)
{
	return shca_hw_cqe_opcodes[opcode % SHCA_WQE_NUM_OPCODES];
}

/*
 * Complete a QP's outstanding WQEs with a flush error.  A fenced QP's
 * WQEs are the destroy's to flush (@destroy), once nothing else can run
 * for it; a turn that raced with the fence flushes nothing.
 */
static void shca_hw_qp_flush_wqes(struct shca_hw_qp *qp, bool rq,
				  bool destroy)
{
	struct shca_hw_cqe cqe = { .qpn = qp->qpn,
				   .status = SHCA_CQE_WR_FLUSH_ERR };
	const struct shca_hw_send_wqe *sq = qp->sq.ring;
	u32 smask = (1U << qp->sq.log_depth) - 1;
	u32 rmask = (1U << qp->rq.log_depth) - 1;
	u32 sq_first = 0, sq_n = 0, rq_first = 0, rq_n = 0, pi, i;
	bool last_wqe = false;
	unsigned long flags;

	mutex_lock(&qp->resp_mutex);
	spin_lock_irqsave(&qp->lock, flags);
	if (destroy || !qp->fenced) {
		/*
		 * A producer index out of the ring's reach flushes nothing,
		 * and shca_hw_qp_flush_pending() agrees.
		 */
		if (qp->sq.ring) {
			/* Pairs with the driver's release: WQEs below pi. */
			pi = smp_load_acquire(&qp->dbrec->sq_pi);
			sq_first = qp->sq.ci;
			sq_n = shca_hw_wq_posted(pi, sq_first, qp->sq.log_depth);
			qp->sq.ci += sq_n;
		}
		if (rq && qp->rq.ring) {
			/* As above, for the receive queue. */
			pi = smp_load_acquire(&qp->dbrec->rq_pi);
			rq_first = qp->rq.ci;
			rq_n = shca_hw_wq_posted(pi, rq_first, qp->rq.log_depth);
			qp->rq.ci += rq_n;
		}
		if (rq && qp->srq && !qp->last_wqe_sent) {
			qp->last_wqe_sent = true;
			last_wqe = true;
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);

	/*
	 * Writing a CQE may sleep, so it happens unlocked.  The WQEs stay the
	 * device's until their CQEs are out: the driver cannot reuse their
	 * slots meanwhile, and a fence waits for the responder mutex.
	 */
	for (i = 0; i < sq_n; i++) {
		cqe.wqe_idx = (sq_first + i) & smask;
		cqe.opcode = shca_hw_wqe_cqe_opcode(sq[cqe.wqe_idx].opcode);
		shca_hw_cq_write(qp->scq, &cqe, false);
	}
	cqe.opcode = SHCA_CQE_RECV;
	for (i = 0; i < rq_n; i++) {
		cqe.wqe_idx = (rq_first + i) & rmask;
		shca_hw_cq_write(qp->rcq, &cqe, false);
	}
	mutex_unlock(&qp->resp_mutex);
	shca_hw_count_add(qp->hw, SHCA_CNT_FLUSHED, sq_n + rq_n);
	if (last_wqe)
		shca_hw_qp_event(qp, SHCA_EV_QP_LAST_WQE);
}

/**
 * shca_hw_qp_flush() - complete a QP's outstanding WQEs with a flush error
 * @qp: the QP, in ERR or SQE
 * @rq: flush the receive queue too, not only the send queue
 *
 * For a QP on an SRQ, flushing the receive side raises the last WQE
 * reached event, once.
 */
void shca_hw_qp_flush(struct shca_hw_qp *qp, bool rq)
{
	shca_hw_qp_flush_wqes(qp, rq, false);
}

/**
 * shca_hw_qp_flush_pending() - whether shca_hw_qp_flush() has work
 * @qp: the QP, locked
 * @rq: the receive side counts too
 *
 * A producer index the driver wrote out of the ring's reach names no WQE:
 * the flush would take none, so none is pending, and a QP in error with a
 * garbage index costs its execution unit nothing.
 *
 * Return: true if a WQE is outstanding, or an SRQ-attached QP still owes
 * its last WQE reached event.
 */
bool shca_hw_qp_flush_pending(struct shca_hw_qp *qp, bool rq)
{
	lockdep_assert_held(&qp->lock);
	if (qp->sq.ring &&
	    shca_hw_wq_posted(READ_ONCE(qp->dbrec->sq_pi), qp->sq.ci,
			      qp->sq.log_depth))
		return true;
	if (!rq)
		return false;
	if (qp->srq)
		return !qp->last_wqe_sent;
	return qp->rq.ring &&
	       shca_hw_wq_posted(READ_ONCE(qp->dbrec->rq_pi), qp->rq.ci,
				 qp->rq.log_depth);
}

/* The transitions IBTA allows, whatever the attributes. */
static bool shca_hw_qp_transition_ok(u32 type, u32 cur, u32 next)
{
	if (next == SHCA_QPS_RESET || next == SHCA_QPS_ERR)
		return true;
	switch (cur) {
	case SHCA_QPS_RESET:
		return next == SHCA_QPS_INIT;
	case SHCA_QPS_INIT:
		return next == SHCA_QPS_INIT || next == SHCA_QPS_RTR;
	case SHCA_QPS_RTR:
		return next == SHCA_QPS_RTS;
	case SHCA_QPS_RTS:
		return next == SHCA_QPS_RTS || next == SHCA_QPS_SQD;
	case SHCA_QPS_SQD:
		return next == SHCA_QPS_SQD || next == SHCA_QPS_RTS;
	case SHCA_QPS_SQE:
		return next == SHCA_QPS_RTS && type != SHCA_QPT_RC &&
		       type != SHCA_QPT_XRC_INI && type != SHCA_QPT_XRC_TGT;
	default:
		return false;
	}
}

/*
 * Stop everything the engine does for @qp and wait until it is done.  The
 * caller has already set a state or flag that keeps new work from starting.
 * A destroy (@flush) then flushes the QP's WQEs in the same pass: the
 * turn and the responder are waited out once, by the flush itself.
 */
static void shca_hw_qp_fence(struct shca_hw_qp *qp, bool flush)
{
	shca_hw_sched_cancel(qp);
	/*
	 * A doorbell may be running the turn in its caller's context, or a
	 * poller: after it, no poller holds the QP, and no turn completes a
	 * WQE the flush completes.
	 */
	mutex_lock(&qp->turn_mutex);
	shca_hw_poll_forget(qp);
	if (flush)
		shca_hw_qp_flush_wqes(qp, true, true);
	mutex_unlock(&qp->turn_mutex);
	if (!flush) {
		mutex_lock(&qp->resp_mutex);
		mutex_unlock(&qp->resp_mutex);
	}
}

static void shca_hw_qp_apply(struct shca_hw_qp *qp, u32 mask,
			     const struct shca_hw_qp_attr *in)
{
	struct shca_hw_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->lock);
	if (mask & SHCA_QP_ATTR_ACCESS)
		a->access = in->access;
	if (mask & SHCA_QP_ATTR_QKEY)
		a->qkey = in->qkey;
	if (mask & SHCA_QP_ATTR_AV)
		a->av = in->av;
	if (mask & SHCA_QP_ATTR_DEST_QPN)
		a->dest_qpn = in->dest_qpn & SHCA_HW_QPN_MASK;
	if (mask & SHCA_QP_ATTR_RQ_PSN)
		a->rq_psn = in->rq_psn;
	if (mask & SHCA_QP_ATTR_SQ_PSN)
		a->sq_psn = in->sq_psn;
	if (mask & SHCA_QP_ATTR_MTU)
		a->mtu = in->mtu;
	if (mask & SHCA_QP_ATTR_TIMEOUT)
		a->timeout = in->timeout;
	if (mask & SHCA_QP_ATTR_RETRY_CNT)
		a->retry_cnt = in->retry_cnt;
	if (mask & SHCA_QP_ATTR_RNR_RETRY)
		a->rnr_retry = in->rnr_retry;
	if (mask & SHCA_QP_ATTR_MIN_RNR_TIMER)
		a->min_rnr_timer = in->min_rnr_timer;
	if (mask & SHCA_QP_ATTR_MAX_RD_ATOMIC)
		a->max_rd_atomic = in->max_rd_atomic;
	if (mask & SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = in->max_dest_rd_atomic;
	if (mask & SHCA_QP_ATTR_PKEY_INDEX)
		a->pkey_index = in->pkey_index;
	if (mask & SHCA_QP_ATTR_SQD_NOTIFY)
		a->sqd_notify = in->sqd_notify;
}

/**
 * shca_hw_qp_sq_due() - whether a QP's turn has send queue work
 * @qp: the QP, locked
 *
 * The one test the requester's second look before it stops
 * (shca_hw_req_park()) and a modify's kick share.
 *
 * Return: true for a WQE posted in RTS, or one left to flush in SQE or
 * ERR; never for a fenced QP, nor one without a send queue.
 */
bool shca_hw_qp_sq_due(struct shca_hw_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->fenced || !qp->sq.ring)
		return false;
	switch (qp->attr.state) {
	case SHCA_QPS_RTS:
		return READ_ONCE(qp->dbrec->sq_pi) != qp->sq.ci;
	case SHCA_QPS_SQE:
	case SHCA_QPS_ERR:
		return shca_hw_qp_flush_pending(qp,
						qp->attr.state == SHCA_QPS_ERR);
	default:
		return false;
	}
}

/*
 * Whether a modify leaves a turn anything to do: send WQEs to execute, or
 * the SQ drained event to raise.  A modify that leaves neither kicks no
 * turn: posts ring for themselves (sq_running is clear until a turn runs).
 */
static bool shca_hw_qp_turn_due(struct shca_hw_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->attr.state == SHCA_QPS_SQD)
		return !qp->fenced && qp->sq.ring && qp->attr.sqd_notify &&
		       !qp->sqd_notified;
	return shca_hw_qp_sq_due(qp);
}

/**
 * shca_hw_cmd_modify_qp() - run MODIFY_QP
 * @hw: the device, its command mutex not held
 * @cmd: the QP in @cmd->index, the attributes @cmd->mask names in
 *	@cmd->in.qp_attr; the QP's state once it ran in @cmd->out.qp_state
 *
 * One QP's business, under its modify mutex and a reference: a modify to
 * RESET waits out that QP's accesses in flight and holds up no other
 * command of the device.  A turn is kicked only if the new state gives
 * it work.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_modify_qp(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	const struct shca_hw_qp_attr *in = &cmd->in.qp_attr;
	struct shca_hw_qp *qp;
	u32 cur, next;
	bool kick;

	if (cmd->mask & ~GENMASK(16, 0))
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_STATE) && in->state >= SHCA_QPS_NUM)
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_CUR_STATE) &&
	    in->cur_state >= SHCA_QPS_NUM)
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_ACCESS) && (in->access & ~SHCA_ACCESS_ALL))
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_PKEY_INDEX) &&
	    in->pkey_index >= hw->caps->max_pkeys)
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_AV) &&
	    in->av.sgid_index >= hw->caps->gid_tbl_len)
		return SHCA_HW_BAD_PARAM;
	qp = shca_hw_qp_get(hw, cmd->index);
	if (!qp)
		return SHCA_HW_BAD_INDEX;

	/*
	 * Per QP, not per device: a modify to RESET waits out the QP's turn
	 * and its responder, which may be in the middle of a large copy.
	 */
	mutex_lock(&qp->modify_mutex);
	spin_lock_irq(&qp->lock);
	if (qp->fenced) {
		/* Destroyed meanwhile: it is nobody's to modify. */
		spin_unlock_irq(&qp->lock);
		mutex_unlock(&qp->modify_mutex);
		shca_hw_qp_put(qp);
		return SHCA_HW_BAD_INDEX;
	}
	cur = qp->attr.state;
	next = cmd->mask & SHCA_QP_ATTR_STATE ? in->state : cur;
	cmd->out.qp_state = cur;
	if (((cmd->mask & SHCA_QP_ATTR_CUR_STATE) && in->cur_state != cur) ||
	    !shca_hw_qp_transition_ok(qp->type, cur, next)) {
		spin_unlock_irq(&qp->lock);
		mutex_unlock(&qp->modify_mutex);
		shca_hw_qp_put(qp);
		return SHCA_HW_BAD_STATE;
	}
	shca_hw_qp_apply(qp, cmd->mask, in);
	qp->attr.state = next;
	cmd->out.qp_state = next;
	if (cur == SHCA_QPS_RESET && next != SHCA_QPS_RESET) {
		/* Whatever was posted before is not the device's business. */
		qp->sq.ci = READ_ONCE(qp->dbrec->sq_pi);
		qp->rq.ci = READ_ONCE(qp->dbrec->rq_pi);
		/* No turn ran since the fence: every post rings. */
		WRITE_ONCE(qp->dbrec->sq_running, 0);
		qp->last_wqe_sent = false;
	}
	if (next == SHCA_QPS_SQD && cur != SHCA_QPS_SQD)
		qp->sqd_notified = false;
	if (next == SHCA_QPS_RTR && cur != SHCA_QPS_RTR)
		qp->comm_est_sent = false;
	if (next == SHCA_QPS_RTS && cur != SHCA_QPS_RTS) {
		qp->rnr_left = qp->attr.rnr_retry;
		qp->retry_left = qp->attr.retry_cnt;
	}
	kick = shca_hw_qp_turn_due(qp);
	spin_unlock_irq(&qp->lock);

	if (next == SHCA_QPS_RESET) {
		shca_hw_qp_fence(qp, false);
		/* A reset QP is in no multicast group (Documentation/model.rst). */
		shca_hw_mcast_purge(hw, qp->qpn);
	} else if (next == SHCA_QPS_ERR) {
		shca_hw_sched_kick_now(qp);
	} else if (kick) {
		shca_hw_sched_kick(qp);
	}
	mutex_unlock(&qp->modify_mutex);
	shca_hw_qp_put(qp);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cmd_query_qp() - run QUERY_QP
 * @hw: the device, its command mutex not held
 * @cmd: the QP in @cmd->index; its state is returned in @cmd->out.qp
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_query_qp(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd)
{
	struct shca_hw_qp_query *out = &cmd->out.qp;
	struct shca_hw_qp *qp = shca_hw_qp_get(hw, cmd->index);

	if (!qp)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irq(&qp->lock);
	out->attr = qp->attr;
	out->type = qp->type;
	out->gen = qp->gen;
	out->sq_pi = READ_ONCE(qp->dbrec->sq_pi);
	out->sq_ci = qp->sq.ci;
	out->rq_pi = qp->srq ? 0 : READ_ONCE(qp->dbrec->rq_pi);
	out->rq_ci = qp->rq.ci;
	spin_unlock_irq(&qp->lock);
	shca_hw_qp_put(qp);
	return SHCA_HW_OK;
}

/*
 * Take a QP out of its table, under the command mutex: from then on no
 * lookup finds it (no doorbell, command or inbound message), but its QPN
 * stays reserved, so a QP created meanwhile cannot get it.  What is left
 * of the destroy waits for this QP alone, with the mutex dropped.
 */
static struct shca_hw_qp *shca_hw_qp_hide(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp;

	lockdep_assert_held(&hw->cmd_mutex);
	xa_lock_irq(&hw->qps);
	qp = xa_load(&hw->qps, qpn);
	/* A NULL store keeps the index allocated: a reserved QPN. */
	if (qp)
		__xa_store(&hw->qps, qpn, NULL, 0);
	xa_unlock_irq(&hw->qps);
	/* No ATTACH_MCAST finds it now: it leaves its groups for good. */
	if (qp)
		shca_hw_mcast_purge(hw, qpn);
	return qp;
}

/* The most turns a destroy runs for the datagrams posted before it. */
#define SHCA_HW_QP_SEND_OFF_TURNS	64

/*
 * Before a destroy flushes a datagram QP's send queue, send what the
 * driver posted: each WQE's doorbell rang, or was left out because a
 * turn or a poller had the QP, so the WQE is the device's already, and a
 * real HCA would have sent it long before it took the command.  A
 * poller that did not reach the QP yet, or let it go and queued its
 * turn, leaves such WQEs; they run here, in the destroyer's context.  A
 * datagram needs nothing of its QP once it left; a connected QP's
 * message needs its QP until it is acknowledged, so those are flushed,
 * as is everything while the engine is paused.  The modify mutex is
 * held: no state change comes in between.
 */
static void shca_hw_qp_send_off(struct shca_hw_qp *qp)
{
	struct shca_hw *hw = qp->hw;
	int n = SHCA_HW_QP_SEND_OFF_TURNS;
	unsigned long flags;
	bool due;

	lockdep_assert_held(&qp->modify_mutex);
	if (qp->type != SHCA_QPT_UD || READ_ONCE(hw->engine_paused))
		return;
	shca_hw_sched_cancel(qp);
	mutex_lock(&qp->turn_mutex);
	do {
		spin_lock_irqsave(&qp->lock, flags);
		due = qp->attr.state == SHCA_QPS_RTS && shca_hw_qp_sq_due(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (!due)
			break;
		shca_hw_count(hw, SHCA_CNT_DESTROY_SENDS);
	} while (hw->turn(qp, SHCA_HW_TURN_DESTROY) && --n);
	mutex_unlock(&qp->turn_mutex);
}

/*
 * Destroy a hidden QP: a datagram QP sends what was posted
 * (shca_hw_qp_send_off()); then it goes to ERR, fenced, and once its
 * holders are gone the one fence flushes its outstanding WQEs here and
 * now (a paused engine does not hold that up), with no last WQE event for
 * a QP nobody will own.  Then it is unlinked, and only then is its QPN
 * free again.  The flush CQEs, like every other CQE of the QP, are the
 * driver's to sweep.  A QP left over when the device goes away is not
 * flushed: its rings may be gone.
 * Called without the command mutex.
 */
static void shca_hw_qp_free(struct shca_hw *hw, struct shca_hw_qp *qp,
			    bool flush)
{
	/* A modify that looked the QP up before it was hidden goes first. */
	mutex_lock(&qp->modify_mutex);
	if (flush)
		shca_hw_qp_send_off(qp);
	spin_lock_irq(&qp->lock);
	flush = flush && qp->attr.state != SHCA_QPS_RESET;
	if (flush)
		qp->attr.state = SHCA_QPS_ERR;
	qp->last_wqe_sent = true;
	/* From here no turn or responder takes a WQE of it. */
	qp->fenced = true;
	spin_unlock_irq(&qp->lock);
	mutex_unlock(&qp->modify_mutex);
	/*
	 * Wait out every holder first: a doorbell that looked the QP up
	 * before it was hidden may still queue its work.  Then nothing can,
	 * and one fence, which flushes what is outstanding, is final.
	 */
	shca_hw_qp_put(qp);
	wait_for_completion(&qp->done);
	/* A sweep holds the QP while it serves it: none does now. */
	shca_hw_backstop_forget(qp);
	shca_hw_qp_fence(qp, flush);
	shca_hw_evsrc_del(hw, &qp->ev);
	shca_hw_qp_unlink(qp);
	mutex_lock(&hw->cmd_mutex);
	/* Its windows go before its QPN can be reissued. */
	shca_hw_mw_qp_gone(hw, qp->qpn);
	xa_erase_irq(&hw->qps, qp->qpn);
	hw->nr_qps--;
	mutex_unlock(&hw->cmd_mutex);
	mutex_destroy(&qp->resp_mutex);
	mutex_destroy(&qp->turn_mutex);
	mutex_destroy(&qp->modify_mutex);
	kfree_rcu(qp, rcu);
}

/**
 * shca_hw_cmd_destroy_qp() - run DESTROY_QP
 * @hw: the device, its command mutex not held
 * @cmd: the QP in @cmd->index
 *
 * The QP leaves the table under the command mutex; its accesses in flight
 * are waited out, and the engine fenced, with the mutex dropped.  Its QPN
 * stays reserved until the destroy is over.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_destroy_qp(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	struct shca_hw_qp *qp;

	mutex_lock(&hw->cmd_mutex);
	qp = shca_hw_qp_hide(hw, cmd->index);
	mutex_unlock(&hw->cmd_mutex);
	if (!qp)
		return SHCA_HW_BAD_INDEX;
	shca_hw_qp_free(hw, qp, true);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cmd_mcast() - run ATTACH_MCAST or DETACH_MCAST
 * @hw: the device, its command mutex not held
 * @cmd: the QP in @cmd->index, the group in @cmd->in.mgid
 *
 * The QP must be a live UD QP, the GID a multicast one; the group table
 * (shca_hw_mcast.c) does the rest.  The table changes under the command
 * mutex, so a destroy hides the QP either before (no QP) or after (it
 * purges the attachment).  A detach then waits out the copy the QP's
 * responder may be taking in, which checked its membership before the
 * change: with the command mutex dropped, so that a responder in the
 * middle of a long message holds up no other command of the device.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_mcast(struct shca_hw *hw,
				      struct shca_hw_cmd *cmd)
{
	enum shca_hw_status status;
	struct shca_hw_qp *qp;

	if (!shca_hw_gid_is_mcast(cmd->in.mgid))
		return SHCA_HW_BAD_PARAM;
	mutex_lock(&hw->cmd_mutex);
	qp = shca_hw_qp_get(hw, cmd->index);
	if (!qp) {
		mutex_unlock(&hw->cmd_mutex);
		return SHCA_HW_BAD_INDEX;
	}
	if (qp->type != SHCA_QPT_UD)
		status = SHCA_HW_BAD_PARAM;
	else if (cmd->opcode == SHCA_CMD_ATTACH_MCAST)
		status = shca_hw_mcast_attach(hw, qp->qpn, qp->gen,
					      cmd->in.mgid);
	else
		status = shca_hw_mcast_detach(hw, qp->qpn, cmd->in.mgid);
	mutex_unlock(&hw->cmd_mutex);
	if (status == SHCA_HW_OK && cmd->opcode == SHCA_CMD_DETACH_MCAST) {
		/*
		 * The responder checks membership under resp_mutex: once
		 * this returns, no copy of the group is taken in.
		 */
		mutex_lock(&qp->resp_mutex);
		mutex_unlock(&qp->resp_mutex);
	}
	shca_hw_qp_put(qp);
	return status;
}

/**
 * shca_hw_set_next_qpn() - move the cursor of the cyclic QPN search
 * @hw: the device
 * @qpn: where the next search starts
 *
 * A test knob: it makes the device reissue a QPN soon instead of after
 * 16 million others.  A QPN in use is still skipped.
 *
 * Return: 0, or -EINVAL for a QPN outside the range the device hands out
 * (SHCA_HW_FIRST_QPN to SHCA_HW_LAST_QPN: not the multicast QPN).
 */
int shca_hw_set_next_qpn(struct shca_hw *hw, u32 qpn)
{
	if (qpn < SHCA_HW_FIRST_QPN || qpn > SHCA_HW_LAST_QPN)
		return -EINVAL;
	mutex_lock(&hw->cmd_mutex);
	hw->next_qpn = qpn;
	mutex_unlock(&hw->cmd_mutex);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_set_next_qpn);

/**
 * shca_hw_next_qpn() - where the cyclic QPN search starts next
 * @hw: the device
 *
 * Return: the QPN.
 */
u32 shca_hw_next_qpn(struct shca_hw *hw)
{
	return READ_ONCE(hw->next_qpn);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_next_qpn);

/**
 * shca_hw_qpn_entries() - how many QPNs the device keeps state for
 * @hw: the device
 *
 * For tests: the device keeps a QPN's context while a QP holds it and
 * nothing once it is free, so this is bounded by max_qp however many
 * QPNs were ever used.
 *
 * Return: the number of live QPs in the QP context table.
 */
u32 shca_hw_qpn_entries(struct shca_hw *hw)
{
	struct shca_hw_qp *qp;
	unsigned long index;
	u32 n = 0;

	xa_for_each(&hw->qps, index, qp)
		n++;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_qpn_entries);

/**
 * shca_hw_qp_turn_idle() - whether a QP's turn is neither queued nor running
 * @hw: the device
 * @qpn: the QP
 *
 * For tests that hold a turn in a race window: a state change that gives
 * the QP work (WQEs posted before RTS, an SQ drained event, a flush)
 * queues a turn, which would stop in the window before the turn the test
 * means to hold.  Waiting for this first leaves only the test's own.
 *
 * Return: true when idle, or when there is no such QP.
 */
bool shca_hw_qp_turn_idle(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp = shca_hw_qp_get(hw, qpn);
	bool idle;

	if (!qp)
		return true;
	idle = !shca_hw_sched_busy(qp);
	shca_hw_qp_put(qp);
	return idle;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_qp_turn_idle);

/**
 * shca_hw_qp_fini() - free what is left of the QP table
 * @hw: the device
 */
void shca_hw_qp_fini(struct shca_hw *hw)
{
	struct shca_hw_qp *qp;
	unsigned long index;

	xa_for_each(&hw->qps, index, qp) {
		mutex_lock(&hw->cmd_mutex);
		qp = shca_hw_qp_hide(hw, index);
		mutex_unlock(&hw->cmd_mutex);
		shca_hw_qp_free(hw, qp, false);
	}
}

static int shca_hw_next_qpn_get(void *data, u64 *val)
{
	*val = shca_hw_next_qpn(data);
	return 0;
}

static int shca_hw_next_qpn_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	return shca_hw_set_next_qpn(data, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_next_qpn_fops, shca_hw_next_qpn_get,
			 shca_hw_next_qpn_set, "%llu\n");

/**
 * shca_hw_qp_debugfs() - create next_qpn, the cursor of the cyclic QPN search
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_qp_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file_unsafe("next_qpn", 0600, dir, hw,
				   &shca_hw_next_qpn_fops);
}
