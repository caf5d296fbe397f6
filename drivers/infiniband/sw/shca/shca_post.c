// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: posting work requests.
 *
 * Posting writes WQEs into the ring, publishes the producer index in the
 * doorbell record and rings the doorbell; the device takes it from there.
 * What a WQE may ask for depends on the QP type; anything else is refused
 * at post time with -EINVAL and @bad_wr set, and a full queue with -ENOMEM.
 * The WQE layout, the table of what each QP type takes and the queue
 * arithmetic are shared with libshca (include/shca/shca_wqe.h and
 * shca_wq.h); this file maps ib_core's work requests onto them.
 */
#include <linux/log2.h>

#include "shca.h"

#define shca_wr_sge			ib_sge
#define SHCA_WR_OPCODE(name)		IB_WR_##name
#define SHCA_WR_OPCODE_LOCAL_INV	IB_WR_LOCAL_INV
#define SHCA_WR_OPCODE_REG_MR		IB_WR_REG_MR
#include "shca_wqe.h"

/* The transport service of a QP type, for shca_wqe_op_ok(). */
static u32 shca_qp_svc(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
	case IB_QPT_XRC_INI:
		return SHCA_WQE_SVC_RC;
	case IB_QPT_UC:
		return SHCA_WQE_SVC_UC;
	default:
		return SHCA_WQE_SVC_UD;
	}
}

static u8 shca_wr_flags(int send_flags)
{
	return (send_flags & IB_SEND_SIGNALED ? SHCA_WQE_F_SIGNALED : 0) |
	       (send_flags & IB_SEND_SOLICITED ? SHCA_WQE_F_SOLICITED : 0) |
	       (send_flags & IB_SEND_FENCE ? SHCA_WQE_F_FENCE : 0);
}

static void shca_build_reg(const struct ib_send_wr *wr,
			   struct shca_hw_send_wqe *w)
{
	const struct ib_reg_wr *reg = reg_wr(wr);
	struct shca_mr *mr = to_shca_mr(reg->mr);

	w->reg.iova = mr->ibmr.iova;
	w->reg.length = mr->ibmr.length;
	w->reg.pbl = (uintptr_t)mr->pages;
	w->reg.key = reg->key;
	w->reg.access = shca_access_to_hw(reg->access);
	w->reg.npages = mr->npages;
	w->reg.page_shift = ilog2(mr->ibmr.page_size);
}

/* Write one send WQE; -EINVAL if the QP cannot take it. */
static int shca_build_send(struct shca_qp *qp, const struct ib_send_wr *wr,
			   struct shca_hw_send_wqe *w)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	u32 opcode = shca_wr_opcode(wr->opcode);

	if (!shca_wqe_op_ok(shca_qp_svc(type), opcode)) {
		shca_qp_dbg(qp, "opcode %d not valid for QP type %d\n",
			    wr->opcode, type);
		return -EINVAL;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge) {
		shca_qp_dbg(qp, "%d SGEs, %u allowed\n", wr->num_sge,
			    qp->max_send_sge);
		return -EINVAL;
	}
	shca_wqe_start(w, opcode, shca_wr_flags(wr->send_flags));

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->imm_inv = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->imm_inv = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		shca_wqe_set_rdma(w, rdma_wr(wr)->remote_addr,
				  rdma_wr(wr)->rkey);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		shca_wqe_set_atomic(w, atomic_wr(wr)->remote_addr,
				    atomic_wr(wr)->rkey,
				    atomic_wr(wr)->compare_add,
				    atomic_wr(wr)->swap);
		break;
	case IB_WR_REG_MR:
		shca_build_reg(wr, w);
		return 0;
	case IB_WR_LOCAL_INV:
		return 0;
	default:
		break;
	}

	if (type == IB_QPT_UD || type == IB_QPT_GSI) {
		if (!ud_wr(wr)->ah) {
			shca_qp_dbg(qp, "UD send without an AH\n");
			return -EINVAL;
		}
		shca_wqe_set_ud(w, &to_shca_ah(ud_wr(wr)->ah)->av,
				ud_wr(wr)->remote_qpn, ud_wr(wr)->remote_qkey);
	}

	if (shca_wqe_fill_data(w, wr->send_flags & IB_SEND_INLINE, wr->sg_list,
			       wr->num_sge, qp->max_send_sge,
			       qp->max_inline)) {
		shca_qp_dbg(qp, "inline data over %u bytes\n", qp->max_inline);
		return -EINVAL;
	}
	return 0;
}

/*
 * A process's QP: libshca wrote the WQEs and the producer index itself,
 * and a POST_SEND or POST_RECV without work requests is its doorbell (the
 * receive one matters only in ERR, where the device flushes what it finds
 * posted).  The kernel never writes a process's rings.
 */
static int shca_user_doorbell(struct shca_dev *sdev, struct shca_qp *qp,
			      bool send, const void *wr)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (wr) {
		shca_qp_dbg(qp, "work requests through the kernel\n");
		return -EINVAL;
	}
	if (state == IB_QPS_RESET ||
	    (send && (state == IB_QPS_INIT || state == IB_QPS_RTR))) {
		shca_qp_dbg(qp, "doorbell in state %d\n", state);
		return -EINVAL;
	}
	/* A system call: the process may run the QP's turn itself. */
	if (send)
		shca_hw_ring_sq_run(sdev->hw, qp->qpn);
	else
		shca_hw_ring_rq(sdev->hw, qp->qpn);
	return 0;
}

/*
 * A kernel QP's send doorbell, after the producer index was stored:
 * skipped while the QP's turn is running in the device, which reads the
 * index again before it stops (struct shca_hw_qp_dbrec).  The index is
 * stored, then a full barrier, then sq_running read; the turn clears
 * sq_running, then a full barrier, then reads the index.
 */
static void shca_sq_doorbell(struct shca_dev *sdev, struct shca_qp *qp)
{
	/* Pairs with the barrier in shca_hw_req_park() and the poller's. */
	smp_mb();
	if (READ_ONCE(qp->dbrec->sq_running)) {
		shca_drv_count(sdev, SHCA_DRV_CNT_DB_SKIPPED, 1);
		return;
	}
	shca_hw_ring_sq(sdev->hw, qp->qpn);
}

/**
 * shca_post_send() - post work requests to a send queue
 * @ibqp: the QP
 * @wr: the first of a list of work requests; for a process's QP, NULL:
 *	the doorbell for what libshca posted
 * @bad_wr: set to the first one not posted, on error
 *
 * Return: 0; -EINVAL for a QP that cannot send yet or a request it cannot
 * take; -ENOMEM when the queue is full.
 */
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	bool posted = false;
	int err = 0;

	if (!qp->sq.ring) {
		shca_qp_dbg(qp, "post send on an XRC target QP\n");
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->user) {
		err = shca_user_doorbell(sdev, qp, true, wr);
		if (err)
			*bad_wr = wr;
		return err;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		shca_qp_dbg(qp, "post send in state %d\n", state);
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (shca_wq_full(&qp->sq)) {
			shca_qp_dbg(qp, "send queue full\n");
			err = -ENOMEM;
			break;
		}
		err = shca_build_send(qp, wr, shca_wq_send_wqe(&qp->sq));
		if (err)
			break;
		shca_wq_produce(&qp->sq, wr->wr_id);
		posted = true;
	}
	if (posted)
		/* The WQEs must be visible before the index that names them. */
		smp_store_release(&qp->dbrec->sq_pi, qp->sq.pi);
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (posted)
		shca_sq_doorbell(sdev, qp);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * shca_post_recv() - post work requests to a receive queue
 * @ibqp: the QP
 * @wr: the first of a list of work requests
 * @bad_wr: set to the first one not posted, on error
 *
 * Return: 0; -EINVAL for a QP in RESET, one that uses an SRQ, or too many
 * SGEs; -ENOMEM when the queue is full.
 */
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	unsigned long flags;
	bool posted = false;
	int err = 0;

	if (ibqp->srq || !qp->rq.ring) {
		shca_qp_dbg(qp, "post recv on a QP without a receive queue\n");
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->user) {
		/* The device reads the receive producer index by itself. */
		err = shca_user_doorbell(sdev, qp, false, wr);
		if (err)
			*bad_wr = wr;
		return err;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		shca_qp_dbg(qp, "post recv in RESET\n");
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (shca_wq_full(&qp->rq)) {
			shca_qp_dbg(qp, "receive queue full\n");
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 ||
		    shca_recv_wqe_fill(shca_wq_recv_wqe(&qp->rq), wr->sg_list,
				       wr->num_sge, qp->max_recv_sge)) {
			shca_qp_dbg(qp, "%d receive SGEs, %u allowed\n",
				    wr->num_sge, qp->max_recv_sge);
			err = -EINVAL;
			break;
		}
		shca_wq_produce(&qp->rq, wr->wr_id);
		posted = true;
	}
	if (posted)
		/* The WQEs must be visible before the index that names them. */
		smp_store_release(&qp->dbrec->rq_pi, qp->rq.pi);
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (posted)
		shca_hw_ring_rq(sdev->hw, qp->qpn);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * shca_post_srq_recv() - post receive work requests to an SRQ
 * @ibsrq: the SRQ
 * @wr: the first of a list of work requests
 * @bad_wr: set to the first one not posted, on error
 *
 * Return: 0; -ENOMEM when no slot is free; -EINVAL for too many SGEs.
 */
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	unsigned long flags;
	int err = 0;
	u32 slot;

	if (srq->user) {
		/* libshca posts into the mapped ring; the device reads it. */
		if (!wr)
			return 0;
		shca_srq_dbg(srq, "work requests through the kernel\n");
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (!srq->nr_free) {
			shca_srq_dbg(srq, "full\n");
			err = -ENOMEM;
			break;
		}
		slot = shca_srq_slot_next(srq->free_slots, srq->nr_free);
		if (wr->num_sge < 0 ||
		    shca_recv_wqe_fill(&srq->slots[slot], wr->sg_list,
				       wr->num_sge, srq->max_sge)) {
			shca_srq_dbg(srq, "%d SGEs, %u allowed\n", wr->num_sge,
				     srq->max_sge);
			err = -EINVAL;
			break;
		}
		shca_srq_slot_post(srq->free_slots, &srq->nr_free,
				   srq->index_ring, &srq->pi, srq->log_depth,
				   srq->wrid, wr->wr_id);
	}
	/* Slots and ring entries must be visible before the index. */
	smp_store_release(&srq->dbrec->pi, srq->pi);
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}
