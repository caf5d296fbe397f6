// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the responder.
 *
 * The responder handles one inbound message for a QP: it checks that the
 * QP takes it, takes a receive WQE (from the RQ or the SRQ) or checks the
 * remote key, moves the data, writes the receive CQE and tells the
 * requester what to put in its completion (an ACK, a NAK, an RNR NAK or
 * nothing).  It runs in the context of the requester's turn, under the
 * receiving QP's resp_mutex, one inbound message at a time, so message
 * order per connection is the order of the sender's SQ.
 *
 * Lock order: shca_hw_qp.resp_mutex, then shca_hw_qp.lock (dropped before
 * the receive queue, the SRQ or the memory is touched), under which the
 * device's shca_hw.mcast_lock, a leaf, is taken for a multicast copy;
 * shca_atomic_lock, a leaf taken with only resp_mutex held.  CQEs are
 * written and events raised with no spinlock held.
 */
#include <linux/lockdep.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "shca_hw_int.h"

/* Makes atomics atomic across every device's execution units. */
static DEFINE_SPINLOCK(shca_atomic_lock);

/*
 * Read the receive WQE an inbound message would take, from the RQ or the
 * SRQ, leaving it there: *@ci is the consumer index it was found at.
 */
static bool shca_hw_peek_recv(struct shca_hw_qp *qp,
			      const struct shca_hw_msg *m,
			      struct shca_hw_recv_wqe *wqe, u32 *idx, u32 *ci)
{
	unsigned long flags;

	if (m->srq)
		return shca_hw_srq_peek(m->srq, wqe, idx, ci);

	spin_lock_irqsave(&qp->lock, flags);
	/* Pairs with the driver's release: the WQEs below pi are written. */
	if (!shca_hw_wq_posted(smp_load_acquire(&qp->dbrec->rq_pi), qp->rq.ci,
			       qp->rq.log_depth)) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	*ci = qp->rq.ci;
	*idx = qp->rq.ci & ((1U << qp->rq.log_depth) - 1);
	memcpy(wqe, (struct shca_hw_recv_wqe *)qp->rq.ring + *idx,
	       sizeof(*wqe));
	spin_unlock_irqrestore(&qp->lock, flags);
	return true;
}

/*
 * Take the WQE shca_hw_peek_recv() read.  The RQ is this responder's
 * alone (resp_mutex); an SRQ's WQE may have gone to another QP meanwhile,
 * and then the responder looks again.
 */
static bool shca_hw_take_recv(struct shca_hw_qp *qp,
			      const struct shca_hw_msg *m, u32 ci)
{
	unsigned long flags;
	bool taken;

	lockdep_assert_held(&qp->resp_mutex);
	if (m->srq)
		return shca_hw_srq_take(m->srq, ci);
	spin_lock_irqsave(&qp->lock, flags);
	taken = qp->rq.ci == ci;
	if (taken)
		qp->rq.ci++;
	spin_unlock_irqrestore(&qp->lock, flags);
	return taken;
}

/* A responder error: the QP goes to error, with an event if asked. */
static void shca_hw_resp_fail(struct shca_hw_qp *qp, int event)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	shca_hw_qp_to_err(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (event >= 0)
		shca_hw_qp_event(qp, event);
}

/*
 * A connected QP takes a message only from its peer: the source GID is
 * its path's destination GID and the sending QP its destination QP, so a
 * QP elsewhere on the segment that names it cannot speak on the
 * connection.  An RC or XRC responder also takes only the PSN it expects
 * next: the model loses no packet, so any other is not the peer's.  A UC
 * responder takes the PSN it finds, as IBTA's resynchronisation does.
 */
static bool shca_hw_resp_from_peer(struct shca_hw_qp *qp,
				   const struct shca_hw_msg *m)
{
	lockdep_assert_held(&qp->lock);
	if (qp->attr.dest_qpn != m->src_qp->qpn ||
	    memcmp(m->src.gid, qp->attr.av.dgid, SHCA_HW_GID_LEN))
		return false;
	return qp->type == SHCA_QPT_UC || m->psn == qp->attr.rq_psn;
}

static bool shca_hw_resp_accepts(struct shca_hw_qp *qp,
				 const struct shca_hw_msg *m)
{
	u32 st = qp->attr.state;
	bool ud = qp->type == SHCA_QPT_UD || qp->type == SHCA_QPT_GSI;
	bool src_ud = m->src_qp->type == SHCA_QPT_UD ||
		      m->src_qp->type == SHCA_QPT_GSI;

	lockdep_assert_held(&qp->lock);
	if (qp->fenced || (st != SHCA_QPS_RTR && st != SHCA_QPS_RTS &&
			   st != SHCA_QPS_SQD && st != SHCA_QPS_SQE))
		return false;
	/* An XRC initiator has nothing to receive with. */
	if (ud != src_ud || qp->type == SHCA_QPT_XRC_INI)
		return false;
	/* An XRC target QP takes messages from an XRC initiator only. */
	if (!ud && qp->type != m->src_qp->type &&
	    (qp->type != SHCA_QPT_XRC_TGT ||
	     m->src_qp->type != SHCA_QPT_XRC_INI))
		return false;
	/*
	 * A copy is for the group's members as they are now, not as the
	 * sender found them: a RESET or a DETACH_MCAST since then (each
	 * ordered against resp_mutex) leaves the QP nothing to accept.
	 */
	if (m->mcast &&
	    !shca_hw_mcast_is_member(qp->hw, qp->qpn, m->av->dgid))
		return false;
	if (ud)
		return m->qkey == qp->attr.qkey;
	if (shca_hw_resp_from_peer(qp, m))
		return true;
	shca_hw_count(qp->hw, SHCA_CNT_RX_REJECTED);
	return false;
}

/*
 * Deliver a receive: scatter @payload (after a header for UD) into a
 * receive WQE and complete it.  Returns the status the requester sees.
 */
static u8 shca_hw_resp_recv(struct shca_hw_qp *qp, struct shca_hw_msg *m,
			    struct shca_hw_mem *payload, u64 write_len,
			    struct shca_hw_result *res)
{
	struct shca_hw_cqe cqe = { .qpn = qp->qpn, .opcode = SHCA_CQE_RECV };
	const struct shca_hw_send_wqe *w = m->wqe;
	bool ud = qp->type == SHCA_QPT_UD || qp->type == SHCA_QPT_GSI;
	bool rc = shca_hw_qp_reliable(qp);
	struct shca_hw_recv_wqe rwqe;
	struct shca_hw_mem dst;
	u8 hdr[SHCA_HW_GRH_LEN];
	u64 need;
	u32 idx, ci;
	u8 reply = SHCA_CQE_OK;

again:
	if (!shca_hw_peek_recv(qp, m, &rwqe, &idx, &ci)) {
		if (rc) {
			shca_hw_count(qp->hw, SHCA_CNT_RNR_NAK);
			res->rnr = true;
			res->rnr_timer = qp->attr.min_rnr_timer;
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
		}
		return SHCA_CQE_OK;
	}
	dst.n = 0;
	if (rwqe.num_sge > (m->srq ? m->srq->max_sge : qp->max_recv_sge)) {
		cqe.status = SHCA_CQE_LOC_QP_OP_ERR;
		reply = SHCA_CQE_REM_OP_ERR;
	} else {
		/* An SRQ's receive WQEs are its protection domain's. */
		cqe.status = shca_hw_mem_resolve(qp->hw,
						 m->srq ? m->srq->pdn : m->pdn,
						 rwqe.sge,
						 rwqe.num_sge,
						 SHCA_ACCESS_LOCAL_WRITE,
						 &m->defer, &dst);
		/* A page fault: the WQE stays for the message sent again. */
		if (m->defer.raised)
			return SHCA_CQE_OK;
		if (cqe.status != SHCA_CQE_OK)
			reply = SHCA_CQE_REM_OP_ERR;
	}
	/*
	 * A datagram longer than the receive WQE is dropped, and the WQE
	 * stays for the next one: a UD receive fails only for its own sake.
	 */
	need = (ud ? SHCA_HW_GRH_LEN : 0) + (payload ? m->len : 0);
	if (ud && cqe.status == SHCA_CQE_OK && need > dst.total) {
		shca_hw_mem_release(&dst);
		shca_hw_count(qp->hw, SHCA_CNT_LEN_ERR);
		shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
		return SHCA_CQE_OK;
	}
	/* From here the WQE is the message's, and completes. */
	if (!shca_hw_take_recv(qp, m, ci)) {
		shca_hw_mem_release(&dst);
		cqe.status = SHCA_CQE_OK;
		reply = SHCA_CQE_OK;
		goto again;
	}
	shca_hw_count(qp->hw, SHCA_CNT_RECV_WQES);
	cqe.wqe_idx = idx;
	if (m->srq)
		cqe.flags |= SHCA_CQE_F_SRQ;
	if (qp->type == SHCA_QPT_XRC_TGT) {
		cqe.flags |= SHCA_CQE_F_XRC;
		cqe.src_qp = m->src_qp->qpn;
		cqe.net_type = m->srq->srqn & 0xff;
		cqe.sl = m->srq->srqn >> 8;
	}
	if (w->opcode == SHCA_WQE_RDMA_WRITE_IMM)
		cqe.opcode = SHCA_CQE_RECV_RDMA_IMM;
	if (w->opcode == SHCA_WQE_SEND_IMM ||
	    w->opcode == SHCA_WQE_RDMA_WRITE_IMM) {
		cqe.flags |= SHCA_CQE_F_IMM;
		cqe.imm_inv = w->imm_inv;
	}

	if (cqe.status != SHCA_CQE_OK)
		goto complete;

	if (need > dst.total) {
		shca_hw_count(qp->hw, SHCA_CNT_LEN_ERR);
		cqe.status = SHCA_CQE_LOC_LEN_ERR;
		reply = SHCA_CQE_REM_INV_REQ_ERR;
		shca_hw_mem_release(&dst);
		goto complete;
	}
	if (ud) {
		shca_hw_fabric_grh(hdr, m, m->av->dgid);
		shca_hw_mem_write(&dst, 0, hdr, sizeof(hdr));
		cqe.flags |= SHCA_CQE_F_GRH;
		cqe.net_type = m->src.net_type;
		cqe.src_qp = m->src_qp->qpn;
		cqe.sl = m->av->sl;
	}
	if (payload) {
		shca_hw_mem_copy(&dst, ud ? SHCA_HW_GRH_LEN : 0, payload,
				 m->len);
		cqe.byte_len = need;
	} else {
		cqe.byte_len = write_len;
	}
	shca_hw_mem_release(&dst);
	shca_hw_count_add(qp->hw, SHCA_CNT_RX_BYTES, m->len);
	if (m->mcast)
		shca_hw_count(qp->hw, SHCA_CNT_MCAST_RX);

	if (w->opcode == SHCA_WQE_SEND_INV) {
		if (shca_hw_mpt_invalidate(qp->hw, m->pdn, qp->qpn, w->imm_inv,
					   SHCA_HW_INV_REMOTE)) {
			cqe.flags |= SHCA_CQE_F_INV;
			cqe.imm_inv = w->imm_inv;
		} else {
			/* IBTA class J: an Invalid Request NAK. */
			cqe.status = SHCA_CQE_REM_INV_REQ_ERR;
			reply = SHCA_CQE_REM_INV_REQ_ERR;
		}
	}

complete:
	if (cqe.status != SHCA_CQE_OK)
		cqe.byte_len = 0;
	shca_hw_cq_write(m->rcq, &cqe, w->flags & SHCA_WQE_F_SOLICITED);
	if (cqe.status != SHCA_CQE_OK && !ud)
		shca_hw_resp_fail(qp, cqe.status == SHCA_CQE_LOC_PROT_ERR ?
				  SHCA_EV_QP_ACCESS_ERR : SHCA_EV_QP_REQ_ERR);
	return ud ? SHCA_CQE_OK : reply;
}

/*
 * An atomic write: the 8 bytes of the WQE stored at an 8-byte aligned
 * address in one access, under the lock that serializes the device's
 * atomics, so neither a concurrent reader nor another atomic sees half of
 * it.  It needs the remote write right, as an RDMA WRITE does; @need is
 * left set when that check fails.
 */
static u8 shca_hw_resp_atomic_write(struct shca_hw_qp *qp,
				    struct shca_hw_msg *m, u32 *need)
{
	const struct shca_hw_send_wqe *w = m->wqe;
	struct shca_hw_mem remote;
	unsigned long flags;
	u64 *p;

	if (w->rdma.remote_addr & 7) {
		*need = 0;
		shca_hw_resp_fail(qp, SHCA_EV_QP_REQ_ERR);
		return SHCA_CQE_REM_INV_REQ_ERR;
	}
	*need = SHCA_ACCESS_REMOTE_WRITE;
	if (!shca_hw_mem_resolve_remote(qp->hw, m->pdn, qp->qpn,
					qp->attr.access, w->rdma.rkey,
					w->rdma.remote_addr, 8, *need,
					&m->defer, &remote))
		return SHCA_CQE_OK;
	*need = 0;
	p = shca_hw_mem_ptr(&remote, 0, 8);
	if (!p) {
		shca_hw_mem_release(&remote);
		shca_hw_resp_fail(qp, SHCA_EV_QP_REQ_ERR);
		return SHCA_CQE_REM_INV_REQ_ERR;
	}
	spin_lock_irqsave(&shca_atomic_lock, flags);
	WRITE_ONCE(*p, w->rdma.swap);
	spin_unlock_irqrestore(&shca_atomic_lock, flags);
	shca_hw_mem_release(&remote);
	shca_hw_count_add(qp->hw, SHCA_CNT_RX_BYTES, 8);
	return SHCA_CQE_OK;
}

/**
 * shca_hw_respond() - handle one inbound message
 * @qp: the receiving QP, referenced
 * @m: the message
 * @res: what the requester learns besides the status: an RNR NAK, or no
 *	answer at all
 *
 * Return: the status the requester completes with (SHCA_CQE_OK for UC
 * and UD, whose requester hears nothing).
 */
u8 shca_hw_respond(struct shca_hw_qp *qp, struct shca_hw_msg *m,
		   struct shca_hw_result *res)
{
	const struct shca_hw_send_wqe *w = m->wqe;
	bool rc = shca_hw_qp_reliable(qp);
	struct shca_hw_mem remote;
	unsigned long flags;
	u32 need = 0;
	bool comm_est;
	u64 orig, *p;
	u8 status = SHCA_CQE_OK;

	mutex_lock(&qp->resp_mutex);
	spin_lock_irqsave(&qp->lock, flags);
	if (!shca_hw_resp_accepts(qp, m)) {
		spin_unlock_irqrestore(&qp->lock, flags);
		mutex_unlock(&qp->resp_mutex);
		if (shca_hw_qp_reliable(m->src_qp))
			res->no_ack = true;
		else
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
		return SHCA_CQE_OK;
	}
	/* Once per RTR visit: the first message is what establishes it. */
	comm_est = qp->attr.state == SHCA_QPS_RTR && !qp->comm_est_sent &&
		   qp->type != SHCA_QPT_UD && qp->type != SHCA_QPT_GSI;
	if (comm_est)
		qp->comm_est_sent = true;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (comm_est)
		shca_hw_qp_event(qp, SHCA_EV_COMM_EST);

	m->pdn = qp->pdn;
	m->srq = qp->srq;
	m->rcq = qp->rcq;
	if (qp->type == SHCA_QPT_XRC_TGT) {
		/*
		 * The XRC extended header names the SRQ, whose protection
		 * domain and CQ the message uses.  An SRQ of another domain,
		 * or none: an Invalid Request NAK.
		 */
		m->srq = shca_hw_xrc_srq_get(qp, w->xrc_srqn);
		if (!m->srq) {
			shca_hw_resp_fail(qp, SHCA_EV_QP_REQ_ERR);
			mutex_unlock(&qp->resp_mutex);
			return SHCA_CQE_REM_INV_REQ_ERR;
		}
		m->pdn = m->srq->pdn;
		m->rcq = m->srq->cq;
	}

	switch (w->opcode) {
	case SHCA_WQE_SEND:
	case SHCA_WQE_SEND_IMM:
	case SHCA_WQE_SEND_INV:
		status = shca_hw_resp_recv(qp, m, m->local, 0, res);
		break;
	case SHCA_WQE_RDMA_WRITE:
	case SHCA_WQE_RDMA_WRITE_IMM:
		need = SHCA_ACCESS_REMOTE_WRITE;
		if (!shca_hw_mem_resolve_remote(qp->hw, m->pdn, qp->qpn,
						qp->attr.access,
						w->rdma.rkey,
						w->rdma.remote_addr, m->len,
						need, &m->defer, &remote))
			break;
		shca_hw_window_pass(qp->hw, SHCA_WIN_MEM_ACCESS, qp->qpn);
		shca_hw_mem_copy(&remote, 0, m->local, m->len);
		shca_hw_mem_release(&remote);
		shca_hw_count_add(qp->hw, SHCA_CNT_RX_BYTES, m->len);
		need = 0;
		if (w->opcode == SHCA_WQE_RDMA_WRITE_IMM)
			status = shca_hw_resp_recv(qp, m, NULL, m->len, res);
		break;
	case SHCA_WQE_RDMA_READ:
		need = SHCA_ACCESS_REMOTE_READ;
		if (!shca_hw_mem_resolve_remote(qp->hw, m->pdn, qp->qpn,
						qp->attr.access,
						w->rdma.rkey,
						w->rdma.remote_addr, m->len,
						need, &m->defer, &remote))
			break;
		shca_hw_mem_copy(m->local, 0, &remote, m->len);
		shca_hw_mem_release(&remote);
		need = 0;
		break;
	case SHCA_WQE_ATOMIC_CS:
	case SHCA_WQE_ATOMIC_FA:
		if (w->rdma.remote_addr & 7) {
			status = SHCA_CQE_REM_INV_REQ_ERR;
			shca_hw_resp_fail(qp, SHCA_EV_QP_REQ_ERR);
			break;
		}
		need = SHCA_ACCESS_REMOTE_ATOMIC;
		if (!shca_hw_mem_resolve_remote(qp->hw, m->pdn, qp->qpn,
						qp->attr.access,
						w->rdma.rkey,
						w->rdma.remote_addr, 8, need,
						&m->defer, &remote))
			break;
		need = 0;
		p = shca_hw_mem_ptr(&remote, 0, 8);
		if (!p) {
			shca_hw_mem_release(&remote);
			status = SHCA_CQE_REM_INV_REQ_ERR;
			shca_hw_resp_fail(qp, SHCA_EV_QP_REQ_ERR);
			break;
		}
		spin_lock_irqsave(&shca_atomic_lock, flags);
		orig = READ_ONCE(*p);
		if (w->opcode == SHCA_WQE_ATOMIC_FA)
			WRITE_ONCE(*p, orig + w->rdma.compare_add);
		else if (orig == w->rdma.compare_add)
			WRITE_ONCE(*p, w->rdma.swap);
		spin_unlock_irqrestore(&shca_atomic_lock, flags);
		shca_hw_mem_release(&remote);
		shca_hw_mem_write(m->local, 0, &orig, sizeof(orig));
		break;
	case SHCA_WQE_ATOMIC_WRITE:
		status = shca_hw_resp_atomic_write(qp, m, &need);
		break;
	case SHCA_WQE_FLUSH:
		need = (w->flush.type & SHCA_FLUSH_GLOBAL ?
			SHCA_ACCESS_FLUSH_GLOBAL : 0) |
		       (w->flush.type & SHCA_FLUSH_PERSISTENT ?
			SHCA_ACCESS_FLUSH_PERSISTENT : 0);
		if (shca_hw_mem_flush(qp->hw, m->pdn, qp->qpn,
				      qp->attr.access,
				      w->flush.rkey, w->flush.remote_addr,
				      w->flush.length,
				      w->flush.level == SHCA_FLUSH_MR, need))
			need = 0;
		break;
	default:
		status = SHCA_CQE_REM_INV_REQ_ERR;
		break;
	}

	if (m->defer.raised) {
		/* A page fault: nothing took effect; the message comes again. */
		status = SHCA_CQE_OK;
	} else if (need) {
		/* A remote access check failed. */
		if (rc) {
			status = SHCA_CQE_REM_ACCESS_ERR;
			shca_hw_resp_fail(qp, SHCA_EV_QP_ACCESS_ERR);
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
		}
	}
	if (qp->type == SHCA_QPT_XRC_TGT)
		shca_hw_srq_put(m->srq);
	/* Taken (if not RNR NAKed or sent again): its PSNs are used. */
	if (qp->type != SHCA_QPT_UD && qp->type != SHCA_QPT_GSI &&
	    !res->rnr && !m->defer.raised) {
		spin_lock_irqsave(&qp->lock, flags);
		qp->attr.rq_psn = (m->psn + m->npkts) & SHCA_HW_PSN_MASK;
		spin_unlock_irqrestore(&qp->lock, flags);
		res->npkts = m->npkts;
	}
	mutex_unlock(&qp->resp_mutex);
	return rc ? status : SHCA_CQE_OK;
}
