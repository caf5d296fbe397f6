// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: the ibv_wr_* send API.  A batch runs from wr_start to
 * wr_complete (or wr_abort) under the send queue's lock.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

static void shca_wr_start(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	shca_lock(qp->single_threaded, &qp->sq_lock);
	qp->wr_start_pi = qp->sq.pi;
	qp->cur = NULL;
	qp->wr_err = shca_can_send(qp) ? 0 : EINVAL;
}

static int shca_wr_complete(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);
	int err = qp->wr_err, posted;

	if (err)
		qp->sq.pi = qp->wr_start_pi;
	posted = qp->sq.pi != qp->wr_start_pi;
	if (posted)
		store_release(&qp->dbrec->sq_pi, qp->sq.pi);
	shca_unlock(qp->single_threaded, &qp->sq_lock);
	if (posted)
		err = shca_ring_sq(qp);
	return err;
}

static void shca_wr_abort(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	qp->sq.pi = qp->wr_start_pi;
	shca_unlock(qp->single_threaded, &qp->sq_lock);
}

/* Start a WQE for the next ibv_wr_* call; NULL after an error. */
static struct shca_hw_send_wqe *shca_wr_new(struct ibv_qp_ex *qpx,
					    uint8_t opcode)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);
	struct shca_hw_send_wqe *w;

	qp->cur = NULL;
	if (qp->wr_err)
		return NULL;
	w = shca_sq_next(qp);
	if (!w) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	shca_wqe_start(w, opcode, shca_wqe_flags(qpx->wr_flags));
	shca_wq_produce(&qp->sq, qpx->wr_id);
	qp->cur = w;
	return w;
}

static void shca_wr_send(struct ibv_qp_ex *qpx)
{
	shca_wr_new(qpx, SHCA_WQE_SEND);
}

static void shca_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct shca_hw_send_wqe *w = shca_wr_new(qpx, SHCA_WQE_SEND_IMM);

	if (w)
		w->imm_inv = imm;
}

static void shca_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct shca_hw_send_wqe *w = shca_wr_new(qpx, SHCA_WQE_SEND_INV);

	if (w)
		w->imm_inv = rkey;
}

static void shca_wr_rdma(struct ibv_qp_ex *qpx, uint8_t opcode, uint32_t rkey,
			 uint64_t addr, uint32_t imm)
{
	struct shca_hw_send_wqe *w = shca_wr_new(qpx, opcode);

	if (!w)
		return;
	w->rdma.remote_addr = addr;
	w->rdma.rkey = rkey;
	w->imm_inv = imm;
}

static void shca_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t addr)
{
	shca_wr_rdma(qpx, SHCA_WQE_RDMA_WRITE, rkey, addr, 0);
}

static void shca_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t addr, __be32 imm)
{
	shca_wr_rdma(qpx, SHCA_WQE_RDMA_WRITE_IMM, rkey, addr, imm);
}

static void shca_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr)
{
	shca_wr_rdma(qpx, SHCA_WQE_RDMA_READ, rkey, addr, 0);
}

static void shca_wr_atomic(struct ibv_qp_ex *qpx, uint8_t opcode,
			   uint32_t rkey, uint64_t addr, uint64_t compare_add,
			   uint64_t swap)
{
	struct shca_hw_send_wqe *w = shca_wr_new(qpx, opcode);

	if (!w)
		return;
	w->rdma.remote_addr = addr;
	w->rdma.rkey = rkey;
	w->rdma.compare_add = compare_add;
	w->rdma.swap = swap;
}

static void shca_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t addr, uint64_t compare,
				   uint64_t swap)
{
	shca_wr_atomic(qpx, SHCA_WQE_ATOMIC_CS, rkey, addr, compare, swap);
}

static void shca_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t addr, uint64_t add)
{
	shca_wr_atomic(qpx, SHCA_WQE_ATOMIC_FA, rkey, addr, add, 0);
}

static void shca_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t addr, const void *atomic_wr)
{
	struct shca_hw_send_wqe *w = shca_wr_new(qpx, SHCA_WQE_ATOMIC_WRITE);

	if (!w)
		return;
	w->rdma.remote_addr = addr;
	w->rdma.rkey = rkey;
	memcpy(&w->rdma.swap, atomic_wr, sizeof(w->rdma.swap));
}

static void shca_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct shca_hw_send_wqe *w = shca_wr_new(qpx, SHCA_WQE_LOCAL_INV);

	if (w)
		w->imm_inv = rkey;
}

static void shca_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *info)
{
	struct shca_hw_send_wqe *w = shca_wr_new(qpx, SHCA_WQE_BIND_MW);
	struct shca_qp *qp = qpx_to_sqp(qpx);

	if (w && shca_wqe_bind(w, mw, rkey, info)) {
		qp->cur = NULL;
		qp->wr_err = EINVAL;
	}
}

/* The placement types and selectivity levels the device knows. */
static int shca_flush_args_ok(uint8_t type, uint8_t level)
{
	return type && !(type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) &&
	       (level == IBV_FLUSH_RANGE || level == IBV_FLUSH_MR);
}

static void shca_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);
	struct shca_hw_send_wqe *w;

	if (!shca_flush_args_ok(type, level)) {
		qp->cur = NULL;
		qp->wr_err = qp->wr_err ? qp->wr_err : EINVAL;
		return;
	}
	w = shca_wr_new(qpx, SHCA_WQE_FLUSH);
	if (!w)
		return;
	w->flush.remote_addr = addr;
	w->flush.rkey = rkey;
	w->flush.length = len;
	w->flush.type = (type & IBV_FLUSH_GLOBAL ? SHCA_FLUSH_GLOBAL : 0) |
			(type & IBV_FLUSH_PERSISTENT ?
			 SHCA_FLUSH_PERSISTENT : 0);
	w->flush.level = level == IBV_FLUSH_MR ? SHCA_FLUSH_MR :
			 SHCA_FLUSH_RANGE;
}

static void shca_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
				 const struct ibv_sge *sg)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	if (!qp->cur) {
		qp->wr_err = qp->wr_err ? qp->wr_err : EINVAL;
		return;
	}
	if (shca_wqe_fill_sges(qp->cur, sg, n, qp->max_send_sge))
		qp->wr_err = EINVAL;
}

static void shca_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sg = { .addr = addr, .length = length, .lkey = lkey };

	shca_wr_set_sge_list(qpx, 1, &sg);
}

static void shca_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
					 const struct ibv_data_buf *buf)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);
	struct ibv_sge sg[SHCA_HW_MAX_SGE];
	size_t i;

	if (!qp->cur || n > SHCA_HW_MAX_SGE ||
	    !shca_wqe_op_inline(qp->cur->opcode)) {
		qp->wr_err = qp->wr_err ? qp->wr_err : EINVAL;
		return;
	}
	for (i = 0; i < n; i++) {
		sg[i].addr = (uintptr_t)buf[i].addr;
		sg[i].length = buf[i].length;
		sg[i].lkey = 0;
	}
	if (shca_wqe_fill_inline(qp->cur, sg, n, qp->max_inline))
		qp->wr_err = EINVAL;
}

static void shca_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	shca_wr_set_inline_data_list(qpx, 1, &buf);
}

static void shca_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	if (qp->cur)
		shca_wqe_set_ud(qp->cur, &to_sah(ah)->av, remote_qpn,
				remote_qkey);
}

static void shca_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	if (qp->cur)
		qp->cur->xrc_srqn = remote_srqn;
}

/* The ibv_wr_* operations of what the QP takes (shca_wqe_op_ok()). */
void shca_set_wr_ops(struct shca_qp *qp)
{
	uint32_t svc = shca_qp_svc(qp->vqp.qp.qp_type);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = shca_wr_start;
	qpx->wr_complete = shca_wr_complete;
	qpx->wr_abort = shca_wr_abort;
	qpx->wr_set_sge = shca_wr_set_sge;
	qpx->wr_set_sge_list = shca_wr_set_sge_list;
	qpx->wr_set_inline_data = shca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = shca_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = shca_wr_set_ud_addr;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = shca_wr_set_xrc_srqn;
	if (shca_wqe_op_ok(svc, SHCA_WQE_SEND))
		qpx->wr_send = shca_wr_send;
	if (shca_wqe_op_ok(svc, SHCA_WQE_SEND_IMM))
		qpx->wr_send_imm = shca_wr_send_imm;
	if (shca_wqe_op_ok(svc, SHCA_WQE_SEND_INV))
		qpx->wr_send_inv = shca_wr_send_inv;
	if (shca_wqe_op_ok(svc, SHCA_WQE_RDMA_WRITE))
		qpx->wr_rdma_write = shca_wr_rdma_write;
	if (shca_wqe_op_ok(svc, SHCA_WQE_RDMA_WRITE_IMM))
		qpx->wr_rdma_write_imm = shca_wr_rdma_write_imm;
	if (shca_wqe_op_ok(svc, SHCA_WQE_RDMA_READ))
		qpx->wr_rdma_read = shca_wr_rdma_read;
	if (shca_wqe_op_ok(svc, SHCA_WQE_ATOMIC_CS))
		qpx->wr_atomic_cmp_swp = shca_wr_atomic_cmp_swp;
	if (shca_wqe_op_ok(svc, SHCA_WQE_ATOMIC_FA))
		qpx->wr_atomic_fetch_add = shca_wr_atomic_fetch_add;
	if (shca_wqe_op_ok(svc, SHCA_WQE_FLUSH))
		qpx->wr_flush = shca_wr_flush;
	if (shca_wqe_op_ok(svc, SHCA_WQE_ATOMIC_WRITE))
		qpx->wr_atomic_write = shca_wr_atomic_write;
	if (shca_wqe_op_ok(svc, SHCA_WQE_LOCAL_INV))
		qpx->wr_local_inv = shca_wr_local_inv;
	if (shca_wqe_op_ok(svc, SHCA_WQE_BIND_MW))
		qpx->wr_bind_mw = shca_wr_bind_mw;
}
