// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: queue pairs.  The context's table of them, which polling looks
 * CQEs up in, is shca_qp_table.c; posting is in shca_post.c and
 * shca_wr.c.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <ccan/array_size.h>

#include "shca.h"

static int shca_qp_wq_alloc(struct shca_qp *qp, struct shca_wq *wq,
			    pthread_spinlock_t *lock, enum shca_res_type type,
			    uint32_t log_depth, void *ring)
{
	__u64 *wrid = shca_mem_alloc(qp->pdom, sizeof(*wrid) << log_depth,
				     type, &qp->custom);

	if (!wrid)
		return errno;
	shca_wq_init(wq, ring, log_depth, wrid);
	return pthread_spin_init(lock, PTHREAD_PROCESS_PRIVATE);
}

static void shca_qp_wq_free(struct shca_qp *qp, struct shca_wq *wq,
			    pthread_spinlock_t *lock, enum shca_res_type type)
{
	if (wq->wrid) {
		pthread_spin_destroy(lock);
		shca_mem_free(qp->pdom, wq->wrid, type, qp->custom);
	}
}

/* Everything of a QP but the kernel's: its tables, its memory. */
static void shca_qp_free(struct shca_qp *qp)
{
	struct shca_pd *pdom = qp->pdom;

	shca_qp_wq_free(qp, &qp->sq, &qp->sq_lock, SHCA_RES_TYPE_SQ_WRID);
	shca_qp_wq_free(qp, &qp->rq, &qp->rq_lock, SHCA_RES_TYPE_RQ_WRID);
	shca_mem_free(pdom, qp, SHCA_RES_TYPE_QP, qp->custom);
	shca_pdom_put(pdom);
}

/* The ibv_wr_* operations a QP type has: what the QP takes. */
static uint64_t shca_send_ops(enum ibv_qp_type type)
{
	static const struct {
		uint64_t flag;
		uint8_t opcode;
	} ops[] = {
		{ IBV_QP_EX_WITH_SEND, SHCA_WQE_SEND },
		{ IBV_QP_EX_WITH_SEND_WITH_IMM, SHCA_WQE_SEND_IMM },
		{ IBV_QP_EX_WITH_SEND_WITH_INV, SHCA_WQE_SEND_INV },
		{ IBV_QP_EX_WITH_RDMA_WRITE, SHCA_WQE_RDMA_WRITE },
		{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, SHCA_WQE_RDMA_WRITE_IMM },
		{ IBV_QP_EX_WITH_RDMA_READ, SHCA_WQE_RDMA_READ },
		{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, SHCA_WQE_ATOMIC_CS },
		{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, SHCA_WQE_ATOMIC_FA },
		{ IBV_QP_EX_WITH_FLUSH, SHCA_WQE_FLUSH },
		{ IBV_QP_EX_WITH_ATOMIC_WRITE, SHCA_WQE_ATOMIC_WRITE },
		{ IBV_QP_EX_WITH_LOCAL_INV, SHCA_WQE_LOCAL_INV },
		{ IBV_QP_EX_WITH_BIND_MW, SHCA_WQE_BIND_MW },
	};
	uint64_t flags = 0;
	size_t i;

	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD &&
	    type != IBV_QPT_XRC_SEND)
		return 0;
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (shca_wqe_op_ok(shca_qp_svc(type), ops[i].opcode))
			flags |= ops[i].flag;
	return flags;
}

/*
 * FLUSH and ATOMIC WRITE need the kernel's side too (ib_core 6.2 on): a
 * QP takes them only where the device offers them.  Asked only when a QP
 * asks for one of them.
 */
static uint64_t shca_send_ops_device(struct ibv_context *ibctx,
				     uint64_t want)
{
	struct ibv_device_attr_ex dev = {};
	uint64_t no = 0;

	if (!(want & (IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE)))
		return 0;
	if (ibv_query_device_ex(ibctx, NULL, &dev))
		return IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (!(dev.device_cap_flags_ex & (IB_UVERBS_DEVICE_FLUSH_GLOBAL |
					 IB_UVERBS_DEVICE_FLUSH_PERSISTENT)))
		no |= IBV_QP_EX_WITH_FLUSH;
	if (!(dev.device_cap_flags_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE))
		no |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	return no;
}

/*
 * Whether @attr names an object of another context.  The kernel looks
 * handles up in the context the command comes through, so a foreign
 * object's handle would name one of this context's, or none.
 */
static bool shca_qp_foreign(struct ibv_context *ibctx,
			    const struct ibv_qp_init_attr_ex *attr)
{
	return (attr->send_cq && attr->send_cq->context != ibctx) ||
	       (attr->recv_cq && attr->recv_cq->context != ibctx) ||
	       (attr->srq && attr->srq->context != ibctx) ||
	       ((attr->comp_mask & IBV_QP_INIT_ATTR_PD) && attr->pd &&
		attr->pd->context != ibctx) ||
	       ((attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) && attr->xrcd &&
		attr->xrcd->context != ibctx);
}

/*
 * An XRC target QP is the kernel's: no rings, no driver data, and its
 * receives complete in the CQs of the XRC SRQs they name.
 */
static struct ibv_qp *shca_create_xrc_tgt(struct ibv_context *ibctx,
					  struct ibv_qp_init_attr_ex *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct shca_qp *qp;
	int ret;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
	    attr->xrcd->context != ibctx ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				   &resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	qp->state = IBV_QPS_RESET;
	qp->xrc_created = 1;
	memset(&attr->cap, 0, sizeof(attr->cap));
	return &qp->vqp.qp;
}

struct ibv_qp *shca_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct shca_qp *qp;
	int ret;

	if ((attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE) &&
	    attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	qp->state = IBV_QPS_UNKNOWN;
	return &qp->vqp.qp;
}

struct ibv_qp *shca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct shca_ucmd_create_qp_resp resp = {};
	struct shca_ucmd_create_qp cmd = {};
	unsigned int custom = 0;
	struct shca_pd *pdom;
	struct shca_qp *qp;
	uint32_t mask;
	int ret;

	if (attr->qp_type == IBV_QPT_XRC_RECV &&
	    !(attr->comp_mask & ~(IBV_QP_INIT_ATTR_XRCD |
				  IBV_QP_INIT_ATTR_CREATE_FLAGS)) &&
	    (!(attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	     !attr->create_flags))
		return shca_create_xrc_tgt(ibctx, attr);
	/*
	 * An initiator sends only: no SRQ.  A receive CQ is ignored, as the
	 * kernel ignores it (rdma-core's own tests pass one).
	 */
	if ((attr->qp_type == IBV_QPT_XRC_SEND && attr->srq) ||
	    shca_qp_foreign(ibctx, attr)) {
		verbs_debug(verbs_get_ctx(ibctx),
			    "an XRC initiator with an SRQ, or an object of another context\n");
		errno = EINVAL;
		return NULL;
	}
	/* No create flags are supported: the mask may name none. */
	if ((attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				 IBV_QP_INIT_ATTR_CREATE_FLAGS |
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    attr->qp_type == IBV_QPT_XRC_RECV ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~shca_send_ops(attr->qp_type)))) {
		verbs_debug(verbs_get_ctx(ibctx),
			    "comp_mask %#x, create flags or send ops this QP type has not\n",
			    attr->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags &
	     shca_send_ops_device(ibctx, attr->send_ops_flags))) {
		verbs_debug(verbs_get_ctx(ibctx),
			    "send ops %#llx the device does not offer\n",
			    (unsigned long long)attr->send_ops_flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	pdom = shca_pdom_get(ibctx, attr->comp_mask & IBV_QP_INIT_ATTR_PD ?
			     attr->pd : NULL, &ret);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = shca_mem_alloc(pdom, sizeof(*qp), SHCA_RES_TYPE_QP, &custom);
	if (!qp) {
		shca_pdom_put(pdom);
		return NULL;
	}
	qp->pdom = pdom;
	qp->custom = custom;
	qp->single_threaded = pdom && pdom->td;
	/*
	 * No create flags is the same create as none named, and the
	 * command takes no CREATE_FLAGS bit: hide it for the call.
	 */
	mask = attr->comp_mask;
	attr->comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	attr->comp_mask = mask;
	if (ret) {
		shca_qp_free(qp);
		errno = ret;
		return NULL;
	}
	qp->map_len = resp.mmap_len;
	qp->map = shca_map(ibctx, resp.mmap_offset, qp->map_len);
	ret = errno;
	if (!qp->map)
		goto err_destroy;
	qp->dbrec = (void *)((char *)qp->map + resp.dbrec_offset);
	/* Its doorbells set the record's lazy word (shca_ring_sq()). */
	qp->lazy = to_sctx(ibctx)->lazy_db &&
		   (resp.flags & SHCA_QP_RESP_F_LAZY_DB);
	qp->max_send_sge = resp.max_send_sge;
	qp->max_recv_sge = resp.max_recv_sge;
	qp->max_inline = resp.max_inline;
	qp->state = IBV_QPS_RESET;
	ret = shca_qp_wq_alloc(qp, &qp->sq, &qp->sq_lock,
			       SHCA_RES_TYPE_SQ_WRID, resp.sq_log_depth,
			       qp->map);
	if (ret)
		goto err_destroy;
	if (!attr->srq && attr->qp_type != IBV_QPT_XRC_SEND) {
		ret = shca_qp_wq_alloc(qp, &qp->rq, &qp->rq_lock,
				       SHCA_RES_TYPE_RQ_WRID,
				       resp.rq_log_depth,
				       (char *)qp->map + resp.rq_offset);
		if (ret)
			goto err_destroy;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		shca_set_wr_ops(qp);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	shca_qp_insert(to_sctx(ibctx), qp);
	attr->cap.max_send_wr = 1U << resp.sq_log_depth;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (attr->qp_type == IBV_QPT_XRC_SEND) {
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	} else if (!attr->srq) {
		attr->cap.max_recv_wr = 1U << resp.rq_log_depth;
		attr->cap.max_recv_sge = qp->max_recv_sge;
	}
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	if (qp->map)
		munmap(qp->map, qp->map_len);
	shca_qp_free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *shca_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {};
	struct ibv_qp *qp;

	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = shca_create_qp_ex(pd->context, &ex);
	if (qp)
		memcpy(attr, &ex, sizeof(*attr));
	return qp;
}

int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int mask, struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, mask, init, &cmd, sizeof(cmd));
}

/* After a RESET: both queues start over, as the kernel's do. */
static void shca_qp_reset_queues(struct shca_qp *qp)
{
	shca_lock(qp->single_threaded, &qp->sq_lock);
	shca_wq_reset(&qp->sq, &qp->dbrec->sq_pi);
	shca_unlock(qp->single_threaded, &qp->sq_lock);
	if (qp->rq.wrid) {
		shca_lock(qp->single_threaded, &qp->rq_lock);
		shca_wq_reset(&qp->rq, &qp->dbrec->rq_pi);
		shca_unlock(qp->single_threaded, &qp->rq_lock);
	}
}

int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int mask)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	/* A new state takes the WQEs posted so far as rung. */
	shca_ring_deferred(qp);
	ret = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (ret || !(mask & IBV_QP_STATE))
		return ret;
	__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	if (attr->qp_state == IBV_QPS_RESET &&
	    ibqp->qp_type == IBV_QPT_XRC_RECV) {
		/* The target QP is fenced: none of its CQEs stays queued. */
		shca_xrc_tgt_sweep(to_sctx(ibqp->context), qp->vqp.xrcd,
				   ibqp->qp_num);
	} else if (attr->qp_state == IBV_QPS_RESET) {
		/* Fenced by the kernel: nothing of its past stays queued. */
		shca_qp_sweep(qp, 0);
		shca_qp_reset_queues(qp);
	}
	return 0;
}

int shca_destroy_qp(struct ibv_qp *ibqp)
{
	struct shca_qp *qp = to_sqp(ibqp);
	int ret;

	shca_lazy_forget(qp);
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	if (ibqp->qp_type == IBV_QPT_XRC_RECV) {
		/*
		 * A target QP this process made goes with its handle, unless
		 * another process opened it; one opened here lives on.
		 */
		if (qp->xrc_created)
			shca_xrc_tgt_sweep(to_sctx(ibqp->context),
					   qp->vqp.xrcd, ibqp->qp_num);
		free(qp);
		return 0;
	}
	/* The device writes no more CQEs for the QP: sweep them. */
	shca_qp_sweep(qp, 1);
	munmap(qp->map, qp->map_len);
	shca_qp_free(qp);
	return 0;
}
