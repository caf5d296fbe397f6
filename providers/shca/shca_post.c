// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: posting work requests.  WQE building, the table of what each
 * QP type takes and the queue arithmetic are the kernel's own
 * (include/shca/shca_wqe.h and shca_wq.h); this file maps libibverbs' work
 * requests onto them.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

/*
 * The doorbell, after the producer index was stored: a POST_SEND with no
 * work requests, unless the QP's turn is running in the device.  A
 * running turn reads the producer index again before it stops, and it
 * clears sq_running, then issues a full barrier, then reads the index;
 * here the index was stored, then a full barrier, then sq_running read.
 * So either this sees the turn stopping and rings, or the turn sees the
 * new WQEs.
 */
int shca_ring_sq(struct shca_qp *qp)
{
	struct ibv_send_wr *bad;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&qp->dbrec->sq_running, __ATOMIC_RELAXED))
		return 0;
	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

/* The device's opcode for @op, with the two only a process's QPs post. */
static uint32_t shca_user_wr_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_LOCAL_INV:
		return SHCA_WQE_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return SHCA_WQE_BIND_MW;
	default:
		return shca_wr_opcode(op);
	}
}

static int shca_build_send(struct shca_qp *qp, struct shca_hw_send_wqe *w,
			   const struct ibv_send_wr *wr)
{
	uint32_t opcode = shca_user_wr_opcode(wr->opcode);

	if (!shca_wqe_op_ok(shca_qp_svc(qp->vqp.qp.qp_type), opcode) ||
	    wr->num_sge < 0)
		return EINVAL;
	shca_wqe_start(w, opcode, shca_wqe_flags(wr->send_flags));
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		w->imm_inv = wr->imm_data;
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_INV:
		w->imm_inv = wr->invalidate_rkey;
		break;
	case IBV_WR_LOCAL_INV:
		/* No data: its SGEs, if any, are not the device's business. */
		w->imm_inv = wr->invalidate_rkey;
		return 0;
	case IBV_WR_BIND_MW:
		return shca_wqe_bind(w, wr->bind_mw.mw, wr->bind_mw.rkey,
				     &wr->bind_mw.bind_info);
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		shca_wqe_set_rdma(w, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		shca_wqe_set_atomic(w, wr->wr.atomic.remote_addr,
				    wr->wr.atomic.rkey,
				    wr->wr.atomic.compare_add,
				    wr->wr.atomic.swap);
		break;
	default:
		break;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		shca_wqe_set_ud(w, &to_sah(wr->wr.ud.ah)->av,
				wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
	}
	if (shca_wqe_fill_data(w, wr->send_flags & IBV_SEND_INLINE,
			       wr->sg_list, wr->num_sge, qp->max_send_sge,
			       qp->max_inline))
		return EINVAL;
	return 0;
}

int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_hw_send_wqe *w;
	int posted = 0, err = 0;

	/* An XRC target QP has no send queue. */
	if (!qp->sq.wrid) {
		*bad_wr = wr;
		return EINVAL;
	}
	shca_lock(qp->single_threaded, &qp->sq_lock);
	if (!shca_can_send(qp))
		err = EINVAL;
	for (; !err && wr; wr = wr->next) {
		w = shca_sq_next(qp);
		if (!w) {
			err = ENOMEM;
			break;
		}
		err = shca_build_send(qp, w, wr);
		if (err)
			break;
		shca_wq_produce(&qp->sq, wr->wr_id);
		posted = 1;
	}
	if (posted)
		/* The WQEs before the index that names them. */
		store_release(&qp->dbrec->sq_pi, qp->sq.pi);
	shca_unlock(qp->single_threaded, &qp->sq_lock);
	if (posted) {
		int ret = shca_ring_sq(qp);

		if (!err)
			err = ret;
	}
	if (err)
		*bad_wr = wr;
	return err;
}

int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	int posted = 0, err = 0;

	/* An SRQ takes the receives, or the QP has no receive queue. */
	if (ibqp->srq || !qp->rq.wrid) {
		*bad_wr = wr;
		return EINVAL;
	}
	shca_lock(qp->single_threaded, &qp->rq_lock);
	if (__atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) == IBV_QPS_RESET)
		err = EINVAL;
	for (; !err && wr; wr = wr->next) {
		if (shca_wq_full(&qp->rq)) {
			err = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 ||
		    shca_recv_wqe_fill(shca_wq_recv_wqe(&qp->rq), wr->sg_list,
				       wr->num_sge, qp->max_recv_sge)) {
			err = EINVAL;
			break;
		}
		shca_wq_produce(&qp->rq, wr->wr_id);
		posted = 1;
	}
	if (posted)
		/* The device reads it when a message comes. */
		store_release(&qp->dbrec->rq_pi, qp->rq.pi);
	shca_unlock(qp->single_threaded, &qp->rq_lock);
	/*
	 * Only a QP in ERR needs the receive doorbell: the device flushes
	 * what it finds posted then, and nothing arrives to find it.
	 */
	if (posted && __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) ==
		      IBV_QPS_ERR) {
		struct ibv_recv_wr *bad;
		int ret = ibv_cmd_post_recv(ibqp, NULL, &bad);

		if (!err)
			err = ret;
	}
	if (err)
		*bad_wr = wr;
	return err;
}

int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	int posted = 0, err = 0;
	uint32_t slot;

	shca_lock(srq->single_threaded, &srq->lock);
	for (; wr; wr = wr->next) {
		if (!srq->nr_free) {
			err = ENOMEM;
			break;
		}
		slot = shca_srq_slot_next(srq->free_slots, srq->nr_free);
		if (wr->num_sge < 0 ||
		    shca_recv_wqe_fill(&srq->slots[slot], wr->sg_list,
				       wr->num_sge, srq->max_sge)) {
			err = EINVAL;
			break;
		}
		shca_srq_slot_post(srq->free_slots, &srq->nr_free,
				   srq->index_ring, &srq->pi, srq->log_depth,
				   srq->wrid, wr->wr_id);
		posted = 1;
	}
	if (posted)
		/* The slots and ring entries before the index naming them. */
		store_release(&srq->dbrec->pi, srq->pi);
	shca_unlock(srq->single_threaded, &srq->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * ibv_bind_mw(): a type 1 window (libibverbs checked the type and the
 * PD), rebound with the next key variant.  The new key is the window's
 * from the post on: the WQEs after it see it.
 */
int shca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	ret = shca_post_send(qp, &wr, &bad);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}
