// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: completion queues, legacy and extended, polled by one decoder.
 * Polling and the sweep run under the CQ's poll lock; a QP's two CQs are
 * locked lower CQN first.  A CQ created with
 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED is the application's promise that
 * one thread at a time uses it and the QPs on it: its polls take no lock.
 * So is one created on a parent domain with a thread domain
 * (IBV_CQ_INIT_ATTR_MASK_PD), whose allocator gives struct shca_cq.
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include "shca.h"
#include "shca_cq_sweep.h"

/* The completion fields a RoCE CQ of the device can fill. */
#define SHCA_CQ_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/* Map a new CQ's ring and doorbell record, as the kernel's response says. */
static int shca_cq_map(struct ibv_context *ibctx, struct shca_cq *cq,
		       const struct shca_create_cq_resp *resp)
{
	cq->map_len = resp->mmap_len;
	cq->map = shca_map(ibctx, resp->mmap_offset, cq->map_len);
	if (!cq->map)
		return errno;
	cq->ring = cq->map;
	cq->dbrec = (void *)((char *)cq->map + resp->dbrec_offset);
	cq->log_depth = resp->log_depth;
	cq->cqn = resp->cqn;
	cq->ci = 0;
	cq->arm_dbrec = !!(resp->flags & SHCA_CQ_RESP_F_ARM_DBREC);
	cq->arm_word = 0;
	return 0;
}

/* A CQ's memory, and the hold on its parent domain, go. */
static void shca_cq_free(struct shca_cq *cq)
{
	struct shca_pd *pdom = cq->pdom;

	pthread_spin_destroy(&cq->lock);
	shca_mem_free(pdom, cq, SHCA_RES_TYPE_CQ, cq->custom);
	shca_pdom_put(pdom);
}

/*
 * A new CQ's memory and poll lock, from the parent domain @pdom (held by
 * the caller, and from now on by the CQ) if there is one; NULL, errno set
 * and @pdom put, if there are none.
 */
static struct shca_cq *shca_cq_alloc(struct shca_pd *pdom)
{
	unsigned int custom = 0;
	struct shca_cq *cq;
	int ret;

	cq = shca_mem_alloc(pdom, sizeof(*cq), SHCA_RES_TYPE_CQ, &custom);
	if (!cq) {
		shca_pdom_put(pdom);
		return NULL;
	}
	cq->pdom = pdom;
	cq->custom = custom;
	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		shca_mem_free(pdom, cq, SHCA_RES_TYPE_CQ, custom);
		shca_pdom_put(pdom);
		errno = ret;
		return NULL;
	}
	return cq;
}

/*
 * After the kernel's create command, which returned @ret: map the CQ's
 * ring, or undo what is made.  Returns 0, or -1 with errno set and @cq
 * freed.
 */
static int shca_cq_created(struct ibv_context *ibctx, struct shca_cq *cq,
			   int ret, const struct shca_create_cq_resp *resp)
{
	if (!ret) {
		ret = shca_cq_map(ibctx, cq, resp);
		if (!ret)
			return 0;
		ibv_cmd_destroy_cq(&cq->vcq.cq);
	}
	shca_cq_free(cq);
	errno = ret;
	return -1;
}

struct ibv_cq *shca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct shca_ucmd_create_cq_resp resp = {};
	struct shca_ucmd_create_cq cmd = {};
	struct shca_cq *cq;
	int ret;

	cq = shca_cq_alloc(NULL);
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (shca_cq_created(ibctx, cq, ret, &resp.drv_payload))
		return NULL;
	return &cq->vcq.cq;
}

int shca_destroy_cq(struct ibv_cq *ibcq)
{
	struct shca_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	munmap(cq->map, cq->map_len);
	shca_cq_free(cq);
	return 0;
}

/* The poll lock, which a CQ created single-threaded does without. */
static void shca_cq_lock(struct shca_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void shca_cq_unlock(struct shca_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
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
	struct shca_ucmd_resize_cq_resp resp = {};
	struct shca_ucmd_resize_cq cmd = {};
	void *map;
	int ret;

	shca_cq_lock(cq);
	/* The device starts from here; polls have stored it already. */
	store_release(&cq->dbrec->ci, cq->ci);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto out;
	map = shca_map(ibcq->context, resp.mmap_offset,
		       resp.mmap_len);
	if (!map) {
		/* The device writes a ring this process cannot see. */
		ret = errno;
		goto out;
	}
	munmap(cq->map, cq->map_len);
	cq->map = map;
	cq->map_len = resp.mmap_len;
	cq->ring = map;
	cq->dbrec = (void *)((char *)map + resp.dbrec_offset);
	cq->log_depth = resp.log_depth;
	cq->ci = 0;
out:
	shca_cq_unlock(cq);
	return ret;
}

/*
 * Take the next CQE that completes a work request off the ring, decoded
 * by the kernel's own decoder into @c; @qp caches the QP of the last one.
 * Returns 0 when the ring holds no valid CQE.  Under the poll lock.
 */
static int shca_cq_take(struct shca_cq *cq, struct shca_qp **qp,
			struct shca_cqe_wc *c)
{
	struct shca_context *ctx = to_sctx(cq->vcq.cq.context);
	struct shca_hw_cqe *cqe;
	struct shca_qp *q;

	for (;;) {
		/* The acquire orders the body's loads after the owner's. */
		if (!shca_cqe_published(cq->ring, cq->log_depth, cq->ci))
			return 0;
		cqe = &cq->ring[cq->ci & ((1U << cq->log_depth) - 1)];
		if (cqe->flags & SHCA_CQE_F_XRC) {
			/* An XRC target QP's receive: its SRQ is named. */
			struct shca_srq *srq =
				shca_xsrq_lookup(ctx, shca_cqe_xrc_srqn(cqe));

			cq->ci++;
			if (srq && shca_cqe_is_recv(cqe) &&
			    shca_cqe_complete(cqe, NULL, NULL,
					      shca_srq_take_slot, srq, c))
				return 1;
			continue;
		}
		if (!*qp || (*qp)->vqp.qp.qp_num != cqe->qpn)
			*qp = shca_qp_lookup(ctx, cqe->qpn);
		q = *qp;
		cq->ci++;
		/* The sweep leaves none the table cannot place. */
		if (!q || !shca_cqe_complete(cqe, &q->sq, &q->rq,
					     q->vqp.qp.srq ?
					     shca_srq_take_slot : NULL,
					     q->vqp.qp.srq ?
					     to_ssrq(q->vqp.qp.srq) : NULL, c))
			continue;
		/* An error took the QP to ERR: later receives need a kick. */
		if (c->status != IBV_WC_SUCCESS)
			__atomic_store_n(&q->state, IBV_QPS_ERR,
					 __ATOMIC_RELEASE);
		return 1;
	}
}

/* Give the device the slots polled since @start. */
static void shca_cq_release(struct shca_cq *cq, uint32_t start)
{
	if (cq->ci != start)
		store_release(&cq->dbrec->ci, cq->ci);
}

int shca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_qp *qp = NULL;
	struct shca_cqe_wc c;
	uint32_t start;
	int n;

	shca_ring_lazy(to_sctx(ibcq->context));
	shca_cq_lock(cq);
	start = cq->ci;
	for (n = 0; n < ne && shca_cq_take(cq, &qp, &c); n++) {
		shca_cqe_wc_copy(&wc[n], &c);
		wc[n].qp_num = c.qpn;
		if (c.wc_flags & IBV_WC_WITH_IMM)
			wc[n].imm_data = c.imm_inv;
		if (c.wc_flags & IBV_WC_WITH_INV)
			wc[n].invalidated_rkey = c.imm_inv;
	}
	shca_cq_release(cq, start);
	shca_cq_unlock(cq);
	return n;
}

/* --- ibv_start_poll(), ibv_next_poll(), ibv_end_poll() ----------------- */

/* Make the completion just taken the current one. */
static void shca_cqx_set_cur(struct shca_cq *cq)
{
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = cq->cur.status;
}

static int shca_cqx_start_poll(struct ibv_cq_ex *cqx,
			       struct ibv_poll_cq_attr *attr)
{
	struct shca_cq *cq = cqx_to_scq(cqx);
	struct timespec mono, real;

	if (attr->comp_mask)
		return EINVAL;
	shca_ring_lazy(to_sctx(cqx->context));
	shca_cq_lock(cq);
	cq->batch_ci = cq->ci;
	cq->batch_qp = NULL;
	if (!shca_cq_take(cq, &cq->batch_qp, &cq->cur)) {
		/* No batch: ibv_end_poll() is not called after ENOENT. */
		shca_cq_release(cq, cq->batch_ci);
		shca_cq_unlock(cq);
		return ENOENT;
	}
	if (cq->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK) {
		/* The device clock is CLOCK_MONOTONIC: one offset per batch. */
		clock_gettime(CLOCK_MONOTONIC, &mono);
		clock_gettime(CLOCK_REALTIME, &real);
		cq->wallclock_offset =
			((int64_t)real.tv_sec - mono.tv_sec) * 1000000000LL +
			(real.tv_nsec - mono.tv_nsec);
	}
	shca_cqx_set_cur(cq);
	return 0;
}

static int shca_cqx_next_poll(struct ibv_cq_ex *cqx)
{
	struct shca_cq *cq = cqx_to_scq(cqx);

	if (!shca_cq_take(cq, &cq->batch_qp, &cq->cur))
		return ENOENT;
	shca_cqx_set_cur(cq);
	return 0;
}

static void shca_cqx_end_poll(struct ibv_cq_ex *cqx)
{
	struct shca_cq *cq = cqx_to_scq(cqx);

	shca_cq_release(cq, cq->batch_ci);
	shca_cq_unlock(cq);
}

static enum ibv_wc_opcode shca_cqx_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.opcode;
}

static uint32_t shca_cqx_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.vendor_err;
}

static uint32_t shca_cqx_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.byte_len;
}

/*
 * Immediate data as the sender gave it, or the invalidated key, which
 * ibv_wc_read_invalidated_rkey() takes from here in network order.
 */
static __be32 shca_cqx_read_imm_data(struct ibv_cq_ex *cqx)
{
	const struct shca_cqe_wc *c = &cqx_to_scq(cqx)->cur;

	if (c->wc_flags & IBV_WC_WITH_INV)
		return htobe32(c->imm_inv);
	return c->imm_inv;
}

static uint32_t shca_cqx_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.qpn;
}

static uint32_t shca_cqx_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.src_qp;
}

static unsigned int shca_cqx_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.wc_flags;
}

/* RoCE has no LIDs: what ibv_poll_cq() reports, zero. */
static uint32_t shca_cqx_read_slid(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t shca_cqx_read_sl(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.sl;
}

static uint8_t shca_cqx_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return 0;
}

/* In device clock ticks: nanoseconds of CLOCK_MONOTONIC. */
static uint64_t shca_cqx_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.timestamp;
}

static uint64_t shca_cqx_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	struct shca_cq *cq = cqx_to_scq(cqx);

	return cq->cur.timestamp + cq->wallclock_offset;
}

/* The checks of ibv_create_cq_ex() that the kernel does not make. */
static int shca_cq_ex_attr_ok(const struct ibv_cq_init_attr_ex *attr)
{
	/* No mask bits libshca does not know. */
	if (attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				IBV_CQ_INIT_ATTR_MASK_PD))
		return EOPNOTSUPP;
	/* CVLAN, flow tag and tag matching are no RoCE device's. */
	if (attr->wc_flags & ~(uint64_t)SHCA_CQ_WC_FLAGS)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return EOPNOTSUPP;
	return 0;
}

static void shca_cq_ex_set_ops(struct ibv_cq_ex *cqx)
{
	cqx->start_poll = shca_cqx_start_poll;
	cqx->next_poll = shca_cqx_next_poll;
	cqx->end_poll = shca_cqx_end_poll;
	cqx->read_opcode = shca_cqx_read_opcode;
	cqx->read_vendor_err = shca_cqx_read_vendor_err;
	cqx->read_byte_len = shca_cqx_read_byte_len;
	cqx->read_imm_data = shca_cqx_read_imm_data;
	cqx->read_qp_num = shca_cqx_read_qp_num;
	cqx->read_src_qp = shca_cqx_read_src_qp;
	cqx->read_wc_flags = shca_cqx_read_wc_flags;
	cqx->read_slid = shca_cqx_read_slid;
	cqx->read_sl = shca_cqx_read_sl;
	cqx->read_dlid_path_bits = shca_cqx_read_dlid_path_bits;
	cqx->read_completion_ts = shca_cqx_read_completion_ts;
	cqx->read_completion_wallclock_ns =
		shca_cqx_read_completion_wallclock_ns;
}

struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct shca_ucmd_create_cq_ex_resp resp = {};
	struct shca_ucmd_create_cq_ex cmd = {};
	struct shca_pd *pdom = NULL;
	struct shca_cq *cq;
	int ret;

	ret = shca_cq_ex_attr_ok(attr);
	if (!ret && (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)) {
		/* Only a parent domain of this context. */
		pdom = shca_pdom_get(ibctx, attr->parent_domain, &ret);
		if (!pdom)
			ret = EINVAL;
	}
	if (ret) {
		errno = ret;
		return NULL;
	}
	cq = shca_cq_alloc(pdom);
	if (!cq)
		return NULL;
	cq->wc_flags = attr->wc_flags;
	cq->single_threaded = ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			       (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
			      (pdom && pdom->td);
	/* The kernel checks the depth and the vector: EINVAL. */
	ret = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp),
				   0);
	if (shca_cq_created(ibctx, cq, ret, &resp.drv_payload))
		return NULL;
	shca_cq_ex_set_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;
}

/*
 * Arm the CQ.  Where the device reads the doorbell record's arm word, a
 * new request number there is the arm doorbell: no system call.  The full
 * barrier after the store pairs with the device's between publishing a
 * CQE and reading the word, so a poll after this call finds every CQE
 * the device did not see this request for.  A solicited-only request
 * keeps the next-CQE request before it that the device has not taken
 * yet: it never narrows an armed CQ.  Should the device take that one
 * meanwhile, the CQ is armed for the next CQE once more, one spare
 * event at worst.  Under the poll lock: a resize moves the record.
 */
int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
	struct shca_cq *cq = to_scq(ibcq);
	uint32_t how = solicited ? SHCA_CQ_DBREC_ARM_SOLICITED :
				   SHCA_CQ_DBREC_ARM_NEXT;
	uint32_t sn;

	/* What the process waits for may be a post left for later. */
	shca_ring_lazy(to_sctx(ibcq->context));
	if (!cq->arm_dbrec)
		return ibv_cmd_req_notify_cq(ibcq, solicited);
	shca_cq_lock(cq);
	if ((cq->arm_word & SHCA_CQ_DBREC_ARM_NEXT) &&
	    load_acquire(&cq->dbrec->arm_taken) != cq->arm_word)
		how |= SHCA_CQ_DBREC_ARM_NEXT;
	sn = (cq->arm_word >> SHCA_CQ_DBREC_ARM_SN_SHIFT) + 1;
	cq->arm_word = sn << SHCA_CQ_DBREC_ARM_SN_SHIFT | how;
	__atomic_store_n(&cq->dbrec->arm, cq->arm_word, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	shca_cq_unlock(cq);
	return 0;
}

/* A swept XRC receive: its slot goes back to the SRQ the CQE names. */
static void shca_xrc_put_slot(void *ctx, const struct shca_hw_cqe *cqe)
{
	struct shca_srq *srq = shca_xsrq_lookup(ctx, shca_cqe_xrc_srqn(cqe));

	if (srq && (cqe->flags & SHCA_CQE_F_XRC))
		shca_srq_put_slot(srq, cqe);
}

/*
 * The kernel has fenced an XRC target QP: sweep its CQEs out of the CQ of
 * every XRC SRQ of @xrcd this process has, one CQ at a time under its
 * poll lock.  The CQs are gathered first, since a poll takes the SRQ
 * table lock under a CQ's lock; a CQ outlives the XRC SRQs that use it
 * (the kernel refuses its destroy meanwhile).
 */
void shca_xrc_tgt_sweep(struct shca_context *ctx, struct verbs_xrcd *xrcd,
			uint32_t qpn)
{
	struct shca_cq **cqs = NULL, **more;
	size_t n = 0, i;
	struct shca_srq *srq;
	uint32_t slot;

	pthread_mutex_lock(&ctx->xsrq_lock);
	for (slot = 0; slot < SHCA_XSRQ_TABLE_SIZE; slot++) {
		for (srq = ctx->xsrq_table[slot]; srq; srq = srq->xnext) {
			if (srq->vsrq.xrcd != xrcd)
				continue;
			more = realloc(cqs, (n + 1) * sizeof(*cqs));
			if (!more)
				continue;
			cqs = more;
			cqs[n++] = to_scq(srq->vsrq.cq);
		}
	}
	pthread_mutex_unlock(&ctx->xsrq_lock);
	for (i = 0; i < n; i++) {
		uint32_t k;

		pthread_spin_lock(&cqs[i]->lock);
		k = shca_sweep_cq_ring(cqs[i]->ring, cqs[i]->log_depth,
				       cqs[i]->ci, qpn, shca_xrc_put_slot, ctx);
		if (k) {
			cqs[i]->ci += k;
			store_release(&cqs[i]->dbrec->ci, cqs[i]->ci);
		}
		pthread_spin_unlock(&cqs[i]->lock);
	}
	free(cqs);
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
	/* An XRC initiator QP has no receive CQ, whatever it was given. */
	struct shca_cq *rcq = qp->vqp.qp.recv_cq &&
			      qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND ?
			      to_scq(qp->vqp.qp.recv_cq) : scq;
	struct shca_srq *srq = qp->vqp.qp.srq ? to_ssrq(qp->vqp.qp.srq) : NULL;

	shca_lock_cqs(scq, rcq);
	shca_sweep_cq(scq, qp->vqp.qp.qp_num, srq);
	if (rcq != scq)
		shca_sweep_cq(rcq, qp->vqp.qp.qp_num, srq);
	if (forget)
		shca_qp_remove(to_sctx(qp->vqp.qp.context), qp);
	shca_unlock_cqs(scq, rcq);
}

