// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: the rdma-core provider of shca devices.
 *
 * The kernel creates each CQ, QP and SRQ with its rings and doorbell
 * record in one buffer and gives an mmap offset for it.  From then on the
 * data path is the process's own: posting writes WQEs into the mapped
 * ring and publishes the producer index in the doorbell record (sends
 * also ring the doorbell, a POST_SEND command with no work requests);
 * polling reads CQEs by owner bit and publishes the consumer index, with
 * no system call.
 *
 * Teardown keeps the kernel's guarantee: after the kernel's DESTROY_QP (or
 * a modify to RESET) returns, the device writes no more CQEs for the QP,
 * and the provider sweeps the QP's CQEs out of its CQs under their poll
 * locks with shca_sweep_cq_ring(), the very code the kernel sweeps kernel
 * CQs with.  No poll returns a completion of a destroyed QP, and a CQE of
 * another QP is never lost or changed.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shca.h"
#include "shca_cq_sweep.h"

/* Commands with the driver data of <rdma/shca-abi.h> after the core's. */
struct shca_ucmd_create_cq {
	struct ibv_create_cq ibv_cmd;
	struct shca_create_cq_cmd drv;
};

struct shca_uresp_create_cq {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct shca_create_cq_resp drv;
};

struct shca_ucmd_create_qp {
	struct ibv_create_qp ibv_cmd;
	struct shca_create_qp_cmd drv;
};

struct shca_uresp_create_qp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct shca_create_qp_resp drv;
};

struct shca_ucmd_create_srq {
	struct ibv_create_srq ibv_cmd;
	struct shca_create_srq_cmd drv;
};

struct shca_uresp_create_srq {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct shca_create_srq_resp drv;
};

struct shca_uresp_get_context {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct shca_alloc_ucontext_resp drv;
};

static const struct verbs_match_ent shca_match_table[] = {
	/* The kernel reports no driver id: devices are known by name. */
	VERBS_NAME_MATCH("shca", NULL),
	{},
};

static inline struct shca_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct shca_context, ibv_ctx.context);
}

static inline struct shca_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, vcq.cq);
}

static inline struct shca_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, vqp.qp);
}

static inline struct shca_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct shca_qp, vqp.qp_ex);
}

static inline struct shca_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, vsrq.srq);
}

static inline struct shca_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibv_ah);
}

static inline uint32_t load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Map an object's buffer at the offset its create response named. */
static void *shca_map(struct ibv_context *ibctx, uint64_t offset, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ibctx->cmd_fd, offset);

	return p == MAP_FAILED ? NULL : p;
}

/* --- device, context --------------------------------------------------- */

static int shca_query_device(struct ibv_context *ibctx,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int shca_query_port(struct ibv_context *ibctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *shca_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp,
			     sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int shca_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

static struct ibv_mr *shca_reg_mr(struct ibv_pd *pd, void *addr,
				  size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			   sizeof(cmd), &resp, sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int shca_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/* --- address handles --------------------------------------------------- */

static struct ibv_ah *shca_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp;
	struct shca_ah *ah;

	if (!attr->is_global) {
		/* RoCE: every address carries a GRH. */
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	if (ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp, sizeof(resp))) {
		free(ah);
		return NULL;
	}
	memcpy(ah->av.dgid, attr->grh.dgid.raw, sizeof(ah->av.dgid));
	ah->av.flow_label = attr->grh.flow_label;
	ah->av.sgid_index = attr->grh.sgid_index;
	ah->av.hop_limit = attr->grh.hop_limit;
	ah->av.traffic_class = attr->grh.traffic_class;
	ah->av.sl = attr->sl;
	return &ah->ibv_ah;
}

static int shca_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (!ret)
		free(to_sah(ibah));
	return ret;
}

/* --- the QP table: QPN to QP, for polling ------------------------------ */

static struct shca_qp **shca_qp_slot(struct shca_context *ctx, uint32_t qpn)
{
	return &ctx->qp_table[qpn % SHCA_QP_TABLE_SIZE];
}

static struct shca_qp *shca_qp_lookup(struct shca_context *ctx, uint32_t qpn)
{
	struct shca_qp *qp;

	pthread_mutex_lock(&ctx->qp_lock);
	for (qp = *shca_qp_slot(ctx, qpn); qp; qp = qp->next)
		if (qp->vqp.qp.qp_num == qpn)
			break;
	pthread_mutex_unlock(&ctx->qp_lock);
	return qp;
}

/*
 * A QPN the kernel reissued while its previous owner in this process is
 * still being swept waits for that sweep: a CQE of the old QP must never
 * be found under the new one.
 */
static void shca_qp_insert(struct shca_context *ctx, struct shca_qp *qp)
{
	struct shca_qp **slot = shca_qp_slot(ctx, qp->vqp.qp.qp_num);
	struct shca_qp *p;

	pthread_mutex_lock(&ctx->qp_lock);
again:
	for (p = *slot; p; p = p->next) {
		if (p->vqp.qp.qp_num == qp->vqp.qp.qp_num) {
			pthread_cond_wait(&ctx->qp_gone, &ctx->qp_lock);
			goto again;
		}
	}
	qp->next = *slot;
	*slot = qp;
	pthread_mutex_unlock(&ctx->qp_lock);
}

static void shca_qp_remove(struct shca_context *ctx, struct shca_qp *qp)
{
	struct shca_qp **p;

	pthread_mutex_lock(&ctx->qp_lock);
	for (p = shca_qp_slot(ctx, qp->vqp.qp.qp_num); *p; p = &(*p)->next) {
		if (*p == qp) {
			*p = qp->next;
			break;
		}
	}
	pthread_cond_broadcast(&ctx->qp_gone);
	pthread_mutex_unlock(&ctx->qp_lock);
}

/* --- completion queues ------------------------------------------------- */

static struct ibv_cq *shca_create_cq(struct ibv_context *ibctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct shca_uresp_create_cq resp = {};
	struct shca_ucmd_create_cq cmd = {};
	struct shca_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE))
		goto err_free;
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret) {
		errno = ret;
		goto err_lock;
	}
	cq->map_len = resp.drv.mmap_len;
	cq->map = shca_map(ibctx, resp.drv.mmap_offset, cq->map_len);
	if (!cq->map)
		goto err_destroy;
	cq->ring = cq->map;
	cq->dbrec = (void *)((char *)cq->map + resp.drv.dbrec_offset);
	cq->log_depth = resp.drv.log_depth;
	cq->cqn = resp.drv.cqn;
	cq->ci = 0;
	return &cq->vcq.cq;

err_destroy:
	ret = errno;
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	errno = ret;
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
	return NULL;
}

static int shca_destroy_cq(struct ibv_cq *ibcq)
{
	struct shca_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	munmap(cq->map, cq->map_len);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static const enum ibv_wc_opcode shca_wc_opcode[] = {
	[SHCA_CQE_SEND]		= IBV_WC_SEND,
	[SHCA_CQE_RDMA_WRITE]	= IBV_WC_RDMA_WRITE,
	[SHCA_CQE_RDMA_READ]	= IBV_WC_RDMA_READ,
	[SHCA_CQE_ATOMIC_CS]	= IBV_WC_COMP_SWAP,
	[SHCA_CQE_ATOMIC_FA]	= IBV_WC_FETCH_ADD,
	[SHCA_CQE_LOCAL_INV]	= IBV_WC_LOCAL_INV,
	[SHCA_CQE_REG_MR]	= IBV_WC_BIND_MW,
	[SHCA_CQE_RECV]		= IBV_WC_RECV,
	[SHCA_CQE_RECV_RDMA_IMM] = IBV_WC_RECV_RDMA_WITH_IMM,
};

static const enum ibv_wc_status shca_wc_status[SHCA_CQE_NUM_STATUS] = {
	[SHCA_CQE_OK]			= IBV_WC_SUCCESS,
	[SHCA_CQE_LOC_LEN_ERR]		= IBV_WC_LOC_LEN_ERR,
	[SHCA_CQE_LOC_QP_OP_ERR]	= IBV_WC_LOC_QP_OP_ERR,
	[SHCA_CQE_LOC_PROT_ERR]		= IBV_WC_LOC_PROT_ERR,
	[SHCA_CQE_WR_FLUSH_ERR]		= IBV_WC_WR_FLUSH_ERR,
	[SHCA_CQE_MW_BIND_ERR]		= IBV_WC_MW_BIND_ERR,
	[SHCA_CQE_REM_INV_REQ_ERR]	= IBV_WC_REM_INV_REQ_ERR,
	[SHCA_CQE_REM_ACCESS_ERR]	= IBV_WC_REM_ACCESS_ERR,
	[SHCA_CQE_REM_OP_ERR]		= IBV_WC_REM_OP_ERR,
	[SHCA_CQE_RETRY_EXC_ERR]	= IBV_WC_RETRY_EXC_ERR,
	[SHCA_CQE_RNR_RETRY_EXC_ERR]	= IBV_WC_RNR_RETRY_EXC_ERR,
};

/*
 * A CQE completes its WQE and every unsignaled one before it.  The slot is
 * the poster's again once ci moves past it.  A CQE naming nothing
 * outstanding is refused.
 */
static int shca_wq_complete(struct shca_wq *wq, uint32_t idx,
			    uint64_t *wr_id)
{
	uint32_t mask = (1U << wq->log_depth) - 1;
	uint32_t dist = (idx - wq->ci) & mask;

	if (dist >= __atomic_load_n(&wq->pi, __ATOMIC_RELAXED) - wq->ci)
		return 0;
	*wr_id = wq->wrid[idx & mask];
	store_release(&wq->ci, wq->ci + dist + 1);
	return 1;
}

static void shca_srq_put_slot(void *ctx, uint32_t slot)
{
	struct shca_srq *srq = ctx;

	pthread_spin_lock(&srq->lock);
	if (srq->nr_free < (1U << srq->log_depth))
		srq->free_slots[srq->nr_free++] =
			slot & ((1U << srq->log_depth) - 1);
	pthread_spin_unlock(&srq->lock);
}

static int shca_cqe_to_wc(struct shca_qp *qp, const struct shca_hw_cqe *cqe,
			  struct ibv_wc *wc)
{
	int recv = cqe->opcode == SHCA_CQE_RECV ||
		   cqe->opcode == SHCA_CQE_RECV_RDMA_IMM;
	struct shca_srq *srq;

	memset(wc, 0, sizeof(*wc));
	wc->qp_num = cqe->qpn;
	wc->status = cqe->status < SHCA_CQE_NUM_STATUS ?
		     shca_wc_status[cqe->status] : IBV_WC_GENERAL_ERR;
	wc->opcode = cqe->opcode < sizeof(shca_wc_opcode) /
				   sizeof(shca_wc_opcode[0]) ?
		     shca_wc_opcode[cqe->opcode] : IBV_WC_SEND;
	wc->vendor_err = wc->status == IBV_WC_SUCCESS ? 0 : cqe->status;
	wc->byte_len = cqe->byte_len;
	wc->src_qp = cqe->src_qp;
	wc->sl = cqe->sl;
	if (cqe->flags & SHCA_CQE_F_IMM) {
		wc->imm_data = cqe->imm_inv;
		wc->wc_flags |= IBV_WC_WITH_IMM;
	}
	if (cqe->flags & SHCA_CQE_F_INV) {
		wc->invalidated_rkey = cqe->imm_inv;
		wc->wc_flags |= IBV_WC_WITH_INV;
	}
	if (cqe->flags & SHCA_CQE_F_GRH)
		wc->wc_flags |= IBV_WC_GRH;
	if (!recv)
		return shca_wq_complete(&qp->sq, cqe->wqe_idx, &wc->wr_id);
	if (!!(cqe->flags & SHCA_CQE_F_SRQ) != !!qp->vqp.qp.srq)
		return 0;
	if (!qp->vqp.qp.srq)
		return shca_wq_complete(&qp->rq, cqe->wqe_idx, &wc->wr_id);
	srq = to_ssrq(qp->vqp.qp.srq);
	wc->wr_id = srq->wrid[cqe->wqe_idx & ((1U << srq->log_depth) - 1)];
	shca_srq_put_slot(srq, cqe->wqe_idx);
	return 1;
}

static int shca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct shca_context *ctx = to_sctx(ibcq->context);
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_qp *qp = NULL;
	struct shca_hw_cqe *cqe;
	uint32_t start;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	start = cq->ci;
	while (n < ne) {
		/* The acquire orders the body's loads after the owner's. */
		if (!shca_cqe_published(cq->ring, cq->log_depth, cq->ci))
			break;
		cqe = &cq->ring[cq->ci & ((1U << cq->log_depth) - 1)];
		if (!qp || qp->vqp.qp.qp_num != cqe->qpn)
			qp = shca_qp_lookup(ctx, cqe->qpn);
		cq->ci++;
		/* The sweep leaves none the table cannot place. */
		if (!qp || !shca_cqe_to_wc(qp, cqe, &wc[n]))
			continue;
		/* An error took the QP to ERR: later receives need a kick. */
		if (wc[n].status != IBV_WC_SUCCESS)
			__atomic_store_n(&qp->state, IBV_QPS_ERR,
					 __ATOMIC_RELEASE);
		n++;
	}
	if (cq->ci != start)
		store_release(&cq->dbrec->ci, cq->ci);
	pthread_spin_unlock(&cq->lock);
	return n;
}

static int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited);
}

/* Both CQs of a QP (or the one) locked, lower CQN first. */
static void shca_lock_cqs(struct shca_cq *a, struct shca_cq *b)
{
	if (a == b) {
		pthread_spin_lock(&a->lock);
	} else if (a->cqn < b->cqn) {
		pthread_spin_lock(&a->lock);
		pthread_spin_lock(&b->lock);
	} else {
		pthread_spin_lock(&b->lock);
		pthread_spin_lock(&a->lock);
	}
}

static void shca_unlock_cqs(struct shca_cq *a, struct shca_cq *b)
{
	if (a != b)
		pthread_spin_unlock(&b->lock);
	pthread_spin_unlock(&a->lock);
}

static void shca_sweep_cq(struct shca_cq *cq, uint32_t qpn,
			  struct shca_srq *srq)
{
	uint32_t n;

	n = shca_sweep_cq_ring(cq->ring, cq->log_depth, cq->ci, qpn,
			       srq ? shca_srq_put_slot : NULL, srq);
	if (!n)
		return;
	cq->ci += n;
	store_release(&cq->dbrec->ci, cq->ci);
}

/*
 * The kernel has fenced the QP: sweep its CQEs out of both CQs under their
 * poll locks, and for a destroy, take it out of the table while they are
 * held, so that no poll can find either.
 */
static void shca_qp_sweep(struct shca_qp *qp, int forget)
{
	struct shca_cq *scq = to_scq(qp->vqp.qp.send_cq);
	struct shca_cq *rcq = to_scq(qp->vqp.qp.recv_cq);
	struct shca_srq *srq = qp->vqp.qp.srq ? to_ssrq(qp->vqp.qp.srq) : NULL;

	shca_lock_cqs(scq, rcq);
	shca_sweep_cq(scq, qp->vqp.qp.qp_num, srq);
	if (rcq != scq)
		shca_sweep_cq(rcq, qp->vqp.qp.qp_num, srq);
	if (forget)
		shca_qp_remove(to_sctx(qp->vqp.qp.context), qp);
	shca_unlock_cqs(scq, rcq);
}

/* --- shared receive queues --------------------------------------------- */

static struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				       struct ibv_srq_init_attr *attr)
{
	struct shca_uresp_create_srq resp = {};
	struct shca_ucmd_create_srq cmd = {};
	struct shca_srq *srq;
	uint32_t depth, i;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	if (pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE))
		goto err_free;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		errno = ret;
		goto err_lock;
	}
	srq->log_depth = resp.drv.log_depth;
	srq->max_sge = resp.drv.max_sge;
	depth = 1U << srq->log_depth;
	srq->free_slots = calloc(depth, sizeof(*srq->free_slots));
	srq->wrid = calloc(depth, sizeof(*srq->wrid));
	srq->map_len = resp.drv.mmap_len;
	srq->map = shca_map(pd->context, resp.drv.mmap_offset, srq->map_len);
	ret = srq->map ? ENOMEM : errno;
	if (!srq->free_slots || !srq->wrid || !srq->map)
		goto err_destroy;
	srq->slots = srq->map;
	srq->index_ring = (void *)((char *)srq->map + resp.drv.index_offset);
	srq->dbrec = (void *)((char *)srq->map + resp.drv.dbrec_offset);
	for (i = 0; i < depth; i++)
		srq->free_slots[i] = depth - 1 - i;
	srq->nr_free = depth;
	srq->pi = load_acquire(&srq->dbrec->pi);
	return &srq->vsrq.srq;

err_destroy:
	if (srq->map)
		munmap(srq->map, srq->map_len);
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
	free(srq->free_slots);
	free(srq->wrid);
	errno = ret;
err_lock:
	pthread_spin_destroy(&srq->lock);
err_free:
	free(srq);
	return NULL;
}

static int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			   int mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
}

static int shca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int shca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	munmap(srq->map, srq->map_len);
	pthread_spin_destroy(&srq->lock);
	free(srq->free_slots);
	free(srq->wrid);
	free(srq);
	return 0;
}

static int shca_fill_recv(struct shca_hw_recv_wqe *w,
			  const struct ibv_recv_wr *wr, uint32_t max_sge)
{
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

static int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	uint32_t mask = (1U << srq->log_depth) - 1, slot;
	int posted = 0, err = 0;

	pthread_spin_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		if (!srq->nr_free) {
			err = ENOMEM;
			break;
		}
		slot = srq->free_slots[srq->nr_free - 1];
		err = shca_fill_recv(&srq->slots[slot], wr, srq->max_sge);
		if (err)
			break;
		srq->nr_free--;
		srq->wrid[slot] = wr->wr_id;
		srq->index_ring[srq->pi & mask] = slot;
		srq->pi++;
		posted = 1;
	}
	if (posted)
		/* The slots and ring entries before the index naming them. */
		store_release(&srq->dbrec->pi, srq->pi);
	pthread_spin_unlock(&srq->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

/* --- queue pairs ------------------------------------------------------- */

static int shca_wq_init(struct shca_wq *wq, uint32_t log_depth, void *ring)
{
	wq->log_depth = log_depth;
	wq->ring = ring;
	wq->wrid = calloc(1U << log_depth, sizeof(*wq->wrid));
	if (!wq->wrid)
		return ENOMEM;
	return pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
}

static void shca_wq_fini(struct shca_wq *wq)
{
	if (wq->wrid) {
		pthread_spin_destroy(&wq->lock);
		free(wq->wrid);
	}
}

static void shca_set_wr_ops(struct shca_qp *qp);

/* The ibv_wr_* operations each QP type has (shca_set_wr_ops()). */
static uint64_t shca_send_ops(enum ibv_qp_type type)
{
	uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	uint64_t uc = ud | IBV_QP_EX_WITH_SEND_WITH_INV |
		      IBV_QP_EX_WITH_RDMA_WRITE |
		      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;

	switch (type) {
	case IBV_QPT_UD:
		return ud;
	case IBV_QPT_UC:
		return uc;
	case IBV_QPT_RC:
		return uc | IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	default:
		return 0;
	}
}

static struct ibv_qp *shca_create_qp_ex(struct ibv_context *ibctx,
					struct ibv_qp_init_attr_ex *attr)
{
	struct shca_uresp_create_qp resp = {};
	struct shca_ucmd_create_qp cmd = {};
	struct shca_qp *qp;
	int ret;

	if ((attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~shca_send_ops(attr->qp_type)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	qp->map_len = resp.drv.mmap_len;
	qp->map = shca_map(ibctx, resp.drv.mmap_offset, qp->map_len);
	ret = errno;
	if (!qp->map)
		goto err_destroy;
	ret = ENOMEM;
	qp->dbrec = (void *)((char *)qp->map + resp.drv.dbrec_offset);
	qp->max_send_sge = resp.drv.max_send_sge;
	qp->max_recv_sge = resp.drv.max_recv_sge;
	qp->max_inline = resp.drv.max_inline;
	qp->state = IBV_QPS_RESET;
	if (shca_wq_init(&qp->sq, resp.drv.sq_log_depth, qp->map))
		goto err_destroy;
	if (!attr->srq &&
	    shca_wq_init(&qp->rq, resp.drv.rq_log_depth,
			 (char *)qp->map + resp.drv.rq_offset))
		goto err_destroy;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		shca_set_wr_ops(qp);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	shca_qp_insert(to_sctx(ibctx), qp);
	attr->cap.max_send_wr = 1U << resp.drv.sq_log_depth;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (!attr->srq) {
		attr->cap.max_recv_wr = 1U << resp.drv.rq_log_depth;
		attr->cap.max_recv_sge = qp->max_recv_sge;
	}
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	if (qp->map)
		munmap(qp->map, qp->map_len);
	shca_wq_fini(&qp->sq);
	shca_wq_fini(&qp->rq);
	free(qp);
	errno = ret;
	return NULL;
}

static struct ibv_qp *shca_create_qp(struct ibv_pd *pd,
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

static int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			 int mask, struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, mask, init, &cmd, sizeof(cmd));
}

/* After a RESET: both queues start over, as the kernel's do. */
static void shca_qp_reset_queues(struct shca_qp *qp)
{
	pthread_spin_lock(&qp->sq.lock);
	qp->sq.pi = 0;
	store_release(&qp->sq.ci, 0);
	store_release(&qp->dbrec->sq_pi, 0);
	pthread_spin_unlock(&qp->sq.lock);
	if (qp->rq.wrid) {
		pthread_spin_lock(&qp->rq.lock);
		qp->rq.pi = 0;
		store_release(&qp->rq.ci, 0);
		store_release(&qp->dbrec->rq_pi, 0);
		pthread_spin_unlock(&qp->rq.lock);
	}
}

static int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int mask)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (ret || !(mask & IBV_QP_STATE))
		return ret;
	__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	if (attr->qp_state == IBV_QPS_RESET) {
		/* Fenced by the kernel: nothing of its past stays queued. */
		shca_qp_sweep(qp, 0);
		shca_qp_reset_queues(qp);
	}
	return 0;
}

static int shca_destroy_qp(struct ibv_qp *ibqp)
{
	struct shca_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	/* The device writes no more CQEs for the QP: sweep them. */
	shca_qp_sweep(qp, 1);
	munmap(qp->map, qp->map_len);
	shca_wq_fini(&qp->sq);
	shca_wq_fini(&qp->rq);
	free(qp);
	return 0;
}

static int shca_can_send(struct shca_qp *qp)
{
	enum ibv_qp_state s = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);

	return s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_RTR;
}

/* The doorbell: a POST_SEND with no work requests. */
static int shca_ring_sq(struct shca_qp *qp)
{
	struct ibv_send_wr *bad;

	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

static struct shca_hw_send_wqe *shca_sq_next(struct shca_qp *qp)
{
	uint32_t depth = 1U << qp->sq.log_depth;
	struct shca_hw_send_wqe *w;

	/* Pairs with polling's release: the slot's wr_id was read. */
	if (qp->sq.pi - load_acquire(&qp->sq.ci) >= depth)
		return NULL;
	w = (struct shca_hw_send_wqe *)qp->sq.ring + (qp->sq.pi & (depth - 1));
	memset(w, 0, offsetof(struct shca_hw_send_wqe, sge));
	return w;
}

static uint8_t shca_wqe_flags(unsigned int send_flags)
{
	return (send_flags & IBV_SEND_SIGNALED ? SHCA_WQE_F_SIGNALED : 0) |
	       (send_flags & IBV_SEND_SOLICITED ? SHCA_WQE_F_SOLICITED : 0) |
	       (send_flags & IBV_SEND_FENCE ? SHCA_WQE_F_FENCE : 0);
}

static int shca_inline(struct shca_qp *qp, struct shca_hw_send_wqe *w,
		       const struct ibv_sge *sg, size_t n)
{
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		if (sg[i].length > qp->max_inline - len)
			return EINVAL;
		memcpy(w->inline_data + len, (void *)(uintptr_t)sg[i].addr,
		       sg[i].length);
		len += sg[i].length;
	}
	w->inline_len = len;
	w->flags |= SHCA_WQE_F_INLINE;
	return 0;
}

static int shca_sges(struct shca_qp *qp, struct shca_hw_send_wqe *w,
		     const struct ibv_sge *sg, size_t n)
{
	size_t i;

	if (n > qp->max_send_sge)
		return EINVAL;
	w->num_sge = n;
	for (i = 0; i < n; i++) {
		w->sge[i].addr = sg[i].addr;
		w->sge[i].length = sg[i].length;
		w->sge[i].lkey = sg[i].lkey;
	}
	return 0;
}

static void shca_set_ud(struct shca_hw_send_wqe *w, struct ibv_ah *ah,
			uint32_t remote_qpn, uint32_t remote_qkey)
{
	w->ud.av = to_sah(ah)->av;
	w->ud.remote_qpn = remote_qpn;
	w->ud.remote_qkey = remote_qkey;
}

static int shca_build_send(struct shca_qp *qp, struct shca_hw_send_wqe *w,
			   const struct ibv_send_wr *wr)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;

	w->flags = shca_wqe_flags(wr->send_flags);
	switch (wr->opcode) {
	case IBV_WR_SEND:
		w->opcode = SHCA_WQE_SEND;
		break;
	case IBV_WR_SEND_WITH_IMM:
		w->opcode = SHCA_WQE_SEND_IMM;
		w->imm_inv = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
		w->opcode = SHCA_WQE_SEND_INV;
		w->imm_inv = wr->invalidate_rkey;
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->opcode = wr->opcode == IBV_WR_RDMA_WRITE ?
			    SHCA_WQE_RDMA_WRITE :
			    wr->opcode == IBV_WR_RDMA_READ ?
			    SHCA_WQE_RDMA_READ : SHCA_WQE_RDMA_WRITE_IMM;
		w->imm_inv = wr->imm_data;
		w->rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->opcode = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
			    SHCA_WQE_ATOMIC_CS : SHCA_WQE_ATOMIC_FA;
		w->rdma.remote_addr = wr->wr.atomic.remote_addr;
		w->rdma.rkey = wr->wr.atomic.rkey;
		w->rdma.compare_add = wr->wr.atomic.compare_add;
		w->rdma.swap = wr->wr.atomic.swap;
		break;
	default:
		return EINVAL;
	}
	if (type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		shca_set_ud(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
			    wr->wr.ud.remote_qkey);
	}
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    w->opcode <= SHCA_WQE_RDMA_WRITE_IMM &&
	    w->opcode != SHCA_WQE_RDMA_READ)
		return shca_inline(qp, w, wr->sg_list, wr->num_sge);
	if (wr->num_sge < 0)
		return EINVAL;
	return shca_sges(qp, w, wr->sg_list, wr->num_sge);
}

static int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_hw_send_wqe *w;
	int posted = 0, err = 0;

	pthread_spin_lock(&qp->sq.lock);
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
		qp->sq.wrid[qp->sq.pi & ((1U << qp->sq.log_depth) - 1)] =
			wr->wr_id;
		qp->sq.pi++;
		posted = 1;
	}
	if (posted)
		/* The WQEs before the index that names them. */
		store_release(&qp->dbrec->sq_pi, qp->sq.pi);
	pthread_spin_unlock(&qp->sq.lock);
	if (posted) {
		int ret = shca_ring_sq(qp);

		if (!err)
			err = ret;
	}
	if (err)
		*bad_wr = wr;
	return err;
}

static int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	uint32_t depth = 1U << qp->rq.log_depth;
	int posted = 0, err = 0;

	if (ibqp->srq) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq.lock);
	if (__atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) == IBV_QPS_RESET)
		err = EINVAL;
	for (; !err && wr; wr = wr->next) {
		if (qp->rq.pi - load_acquire(&qp->rq.ci) >= depth) {
			err = ENOMEM;
			break;
		}
		err = shca_fill_recv((struct shca_hw_recv_wqe *)qp->rq.ring +
				     (qp->rq.pi & (depth - 1)), wr,
				     qp->max_recv_sge);
		if (err)
			break;
		qp->rq.wrid[qp->rq.pi & (depth - 1)] = wr->wr_id;
		qp->rq.pi++;
		posted = 1;
	}
	if (posted)
		/* The device reads it when a message comes. */
		store_release(&qp->dbrec->rq_pi, qp->rq.pi);
	pthread_spin_unlock(&qp->rq.lock);
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

/* --- ibv_wr_*: the extended send API ----------------------------------- */

static void shca_wr_start(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	pthread_spin_lock(&qp->sq.lock);
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
	pthread_spin_unlock(&qp->sq.lock);
	if (posted)
		err = shca_ring_sq(qp);
	return err;
}

static void shca_wr_abort(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	qp->sq.pi = qp->wr_start_pi;
	pthread_spin_unlock(&qp->sq.lock);
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
	w->opcode = opcode;
	w->flags = shca_wqe_flags(qpx->wr_flags);
	qp->sq.wrid[qp->sq.pi & ((1U << qp->sq.log_depth) - 1)] = qpx->wr_id;
	qp->sq.pi++;
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

static void shca_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
				 const struct ibv_sge *sg)
{
	struct shca_qp *qp = qpx_to_sqp(qpx);

	if (!qp->cur) {
		qp->wr_err = qp->wr_err ? qp->wr_err : EINVAL;
		return;
	}
	if (shca_sges(qp, qp->cur, sg, n))
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
	    qp->cur->opcode == SHCA_WQE_RDMA_READ ||
	    qp->cur->opcode > SHCA_WQE_RDMA_WRITE_IMM) {
		qp->wr_err = qp->wr_err ? qp->wr_err : EINVAL;
		return;
	}
	for (i = 0; i < n; i++) {
		sg[i].addr = (uintptr_t)buf[i].addr;
		sg[i].length = buf[i].length;
		sg[i].lkey = 0;
	}
	if (shca_inline(qp, qp->cur, sg, n))
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
		shca_set_ud(qp->cur, ah, remote_qpn, remote_qkey);
}

static void shca_set_wr_ops(struct shca_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = shca_wr_start;
	qpx->wr_complete = shca_wr_complete;
	qpx->wr_abort = shca_wr_abort;
	qpx->wr_send = shca_wr_send;
	qpx->wr_send_imm = shca_wr_send_imm;
	qpx->wr_set_sge = shca_wr_set_sge;
	qpx->wr_set_sge_list = shca_wr_set_sge_list;
	qpx->wr_set_inline_data = shca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = shca_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = shca_wr_set_ud_addr;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		return;
	qpx->wr_send_inv = shca_wr_send_inv;
	qpx->wr_rdma_write = shca_wr_rdma_write;
	qpx->wr_rdma_write_imm = shca_wr_rdma_write_imm;
	if (qp->vqp.qp.qp_type == IBV_QPT_UC)
		return;
	qpx->wr_rdma_read = shca_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = shca_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = shca_wr_atomic_fetch_add;
}

/* --- the provider ------------------------------------------------------ */

static void shca_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops shca_ctx_ops = {
	.alloc_pd = shca_alloc_pd,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq,
	.create_qp = shca_create_qp,
	.create_qp_ex = shca_create_qp_ex,
	.create_srq = shca_create_srq,
	.dealloc_pd = shca_dealloc_pd,
	.dereg_mr = shca_dereg_mr,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.destroy_srq = shca_destroy_srq,
	.free_context = shca_free_context,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_device_ex = shca_query_device,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_srq = shca_query_srq,
	.reg_mr = shca_reg_mr,
	.req_notify_cq = shca_req_notify_cq,
};

static struct verbs_context *shca_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	struct shca_uresp_get_context resp = {};
	struct ibv_get_context cmd = {};
	struct shca_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp)))
		goto err;
	if (resp.drv.sq_wqe_size != sizeof(struct shca_hw_send_wqe) ||
	    resp.drv.rq_wqe_size != sizeof(struct shca_hw_recv_wqe) ||
	    resp.drv.cqe_size != sizeof(struct shca_hw_cqe)) {
		/* A kernel with other ring formats: not ours to drive. */
		errno = EPROTONOSUPPORT;
		goto err;
	}
	ctx->caps = resp.drv;
	pthread_mutex_init(&ctx->qp_lock, NULL);
	pthread_cond_init(&ctx->qp_gone, NULL);
	verbs_set_ops(&ctx->ibv_ctx, &shca_ctx_ops);
	return &ctx->ibv_ctx;

err:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

static void shca_free_context(struct ibv_context *ibctx)
{
	struct shca_context *ctx = to_sctx(ibctx);

	pthread_cond_destroy(&ctx->qp_gone);
	pthread_mutex_destroy(&ctx->qp_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *shca_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct shca_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->ibv_dev : NULL;
}

static void shca_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct shca_device, ibv_dev));
}

static const struct verbs_device_ops shca_dev_ops = {
	.name = "shca",
	.match_min_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_table = shca_match_table,
	.alloc_device = shca_device_alloc,
	.uninit_device = shca_uninit_device,
	.alloc_context = shca_alloc_context,
};

PROVIDER_DRIVER(shca, shca_dev_ops);
