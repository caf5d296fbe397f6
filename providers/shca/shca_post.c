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
 * Put @qp on its context's lazy list, unless it is there.  The count of
 * deferred posts was raised first: a ring of the list clears the flag,
 * then takes the count, so either it takes this post's or this sees the
 * flag clear and lists the QP again.
 */
static void shca_lazy_list(struct shca_qp *qp)
{
	struct shca_context *ctx = to_sctx(qp->vqp.qp.context);

	if (__atomic_load_n(&qp->lazy_listed, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&ctx->lazy_lock);
	if (!__atomic_load_n(&qp->lazy_listed, __ATOMIC_RELAXED)) {
		__atomic_store_n(&qp->lazy_listed, 1, __ATOMIC_RELAXED);
		qp->lazy_next = ctx->lazy_head;
		ctx->lazy_head = qp;
		__atomic_fetch_add(&ctx->lazy_nr, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ctx->lazy_lock);
}

/*
 * A lazy doorbell: leave it for later when the device's backstop is
 * armed and enough WQEs are outstanding (shca_sq_may_defer()).  A poll or
 * an arm in this context rings it (shca_ring_lazy()), and so do a modify
 * and a destroy of the QP; the backstop runs the WQEs if none comes
 * within its period.  The caller issued the full barrier after storing
 * the producer index.
 */
static int shca_sq_defer(struct shca_qp *qp)
{
	uint32_t backstop = __atomic_load_n(&qp->dbrec->backstop,
					    __ATOMIC_RELAXED);

	if (!shca_sq_may_defer(&qp->sq, backstop,
			       __atomic_load_n(&qp->deferred,
					       __ATOMIC_RELAXED)))
		return 0;
	__atomic_fetch_add(&qp->deferred, 1, __ATOMIC_SEQ_CST);
	shca_lazy_list(qp);
	return 1;
}

/*
 * The doorbell, after the producer index was stored: a POST_SEND with no
 * work requests, unless the QP's turn is running in the device, or the
 * doorbell may wait (shca_sq_defer()).  A lazy QP's doorbell asks for the
 * backstop only while enough WQEs are outstanding for a later post to be
 * left (shca_sq_wants_backstop()).  A running turn reads the
 * producer index again before it stops, and it clears sq_running, then
 * issues a full barrier, then reads the index; here the index was
 * stored, then a full barrier, then sq_running read.  So either this
 * sees the turn stopping and rings, or the turn sees the new WQEs.  The
 * backstop word pairs the same way with the device's backstop.
 */
int shca_ring_sq(struct shca_qp *qp)
{
	struct ibv_send_wr *bad;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&qp->dbrec->sq_running, __ATOMIC_RELAXED))
		return 0;
	if (qp->lazy) {
		if (shca_sq_defer(qp))
			return 0;
		/*
		 * An exchange, not a store: a post on another thread that
		 * counted itself as left is then visible to this doorbell.
		 */
		__atomic_exchange_n(&qp->deferred, 0, __ATOMIC_SEQ_CST);
		/* The device reads the word when the doorbell rings. */
		__atomic_store_n(&qp->dbrec->lazy,
				 shca_sq_wants_backstop(&qp->sq),
				 __ATOMIC_RELAXED);
	}
	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

/**
 * shca_ring_deferred() - ring a QP's send doorbell, if a post left it
 * @qp: the QP
 */
void shca_ring_deferred(struct shca_qp *qp)
{
	struct ibv_send_wr *bad;

	if (qp->lazy &&
	    __atomic_exchange_n(&qp->deferred, 0, __ATOMIC_SEQ_CST))
		ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

/**
 * shca_ring_lazy() - ring every doorbell a context's posts left for later
 * @ctx: the context
 *
 * At every poll and arm of one of its CQs: the WQEs a process waits for
 * may be on any of its QPs.
 */
void shca_ring_lazy(struct shca_context *ctx)
{
	struct shca_qp *qp;

	if (!__atomic_load_n(&ctx->lazy_nr, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&ctx->lazy_lock);
	while ((qp = ctx->lazy_head)) {
		ctx->lazy_head = qp->lazy_next;
		__atomic_fetch_sub(&ctx->lazy_nr, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&qp->lazy_listed, 0, __ATOMIC_SEQ_CST);
		shca_ring_deferred(qp);
	}
	pthread_mutex_unlock(&ctx->lazy_lock);
}

/**
 * shca_lazy_forget() - take a QP off its context's lazy list, for good
 * @qp: the QP, being destroyed: nobody posts to it any more
 *
 * Rings what its posts left for later first.
 */
void shca_lazy_forget(struct shca_qp *qp)
{
	struct shca_context *ctx = to_sctx(qp->vqp.qp.context);
	struct shca_qp **p;

	if (!qp->lazy)
		return;
	pthread_mutex_lock(&ctx->lazy_lock);
	for (p = &ctx->lazy_head; *p; p = &(*p)->lazy_next) {
		if (*p == qp) {
			*p = qp->lazy_next;
			__atomic_fetch_sub(&ctx->lazy_nr, 1,
					   __ATOMIC_RELAXED);
			break;
		}
	}
	__atomic_store_n(&qp->lazy_listed, 0, __ATOMIC_RELAXED);
	shca_ring_deferred(qp);
	pthread_mutex_unlock(&ctx->lazy_lock);
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
