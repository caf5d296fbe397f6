// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: completion queues.  Polling and the sweep run under the CQ's
 * poll lock; a QP's two CQs are locked lower CQN first.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shca.h"
#include "shca_cq_sweep.h"

/* CQE decoding shared with the kernel, onto libibverbs' names. */
#define SHCA_WC_OPCODE(name)	IBV_WC_##name
#define SHCA_WC_OPCODE_REG_MR	IBV_WC_BIND_MW
#define SHCA_WC_STATUS(name)	IBV_WC_##name
#define SHCA_WC_F_IMM		IBV_WC_WITH_IMM
#define SHCA_WC_F_INV		IBV_WC_WITH_INV
#define SHCA_WC_F_GRH		IBV_WC_GRH
#include "shca_cqe.h"

struct ibv_cq *shca_create_cq(struct ibv_context *ibctx, int cqe,
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

int shca_destroy_cq(struct ibv_cq *ibcq)
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

/*
 * The kernel moves the unpolled CQEs, from the consumer index in the
 * doorbell record on, to the start of a new ring and maps it at a new
 * offset.  The poll lock is held throughout, so no poll or sweep moves the
 * index meanwhile, and none sees the old ring after the switch.
 */
int shca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_uresp_resize_cq resp = {};
	struct shca_ucmd_resize_cq cmd = {};
	void *map;
	int ret;

	pthread_spin_lock(&cq->lock);
	/* The device starts from here; polls have stored it already. */
	store_release(&cq->dbrec->ci, cq->ci);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto out;
	map = shca_map(ibcq->context, resp.drv.mmap_offset,
		       resp.drv.mmap_len);
	if (!map) {
		/* The device writes a ring this process cannot see. */
		ret = errno;
		goto out;
	}
	munmap(cq->map, cq->map_len);
	cq->map = map;
	cq->map_len = resp.drv.mmap_len;
	cq->ring = map;
	cq->dbrec = (void *)((char *)map + resp.drv.dbrec_offset);
	cq->log_depth = resp.drv.log_depth;
	cq->ci = 0;
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

static int shca_cqe_to_wc(struct shca_qp *qp, const struct shca_hw_cqe *cqe,
			  struct ibv_wc *wc)
{
	struct shca_cqe_wc c;

	if (!shca_cqe_complete(cqe, &qp->sq, &qp->rq,
			       qp->vqp.qp.srq ? shca_srq_take_slot : NULL,
			       qp->vqp.qp.srq ? to_ssrq(qp->vqp.qp.srq) : NULL,
			       &c))
		return 0;
	shca_cqe_wc_copy(wc, &c);
	wc->qp_num = c.qpn;
	if (c.wc_flags & IBV_WC_WITH_IMM)
		wc->imm_data = c.imm_inv;
	if (c.wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = c.imm_inv;
	return 1;
}

int shca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
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

int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited);
}

/* Both CQs of a QP (or the one) locked, lower CQN first. */
static void shca_lock_cqs(struct shca_cq *a, struct shca_cq *b)
{
	if (a == b) {
		pthread_spin_lock(&a->lock);
	} else if (shca_sweep_lock_b_first(a->cqn, b->cqn)) {
		pthread_spin_lock(&b->lock);
		pthread_spin_lock(&a->lock);
	} else {
		pthread_spin_lock(&a->lock);
		pthread_spin_lock(&b->lock);
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
void shca_qp_sweep(struct shca_qp *qp, int forget)
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

