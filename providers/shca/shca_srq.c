// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: shared receive queues.  The free slot stack and the wr_ids are
 * the process's, under the SRQ's lock; the slot arithmetic is the
 * kernel's (shca_wq.h).  Posting is in shca_post.c.  A resize keeps slot
 * numbers: the kernel moves the posted WQEs to new memory.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shca.h"

/* Everything of an SRQ but the kernel's: its tables, its memory. */
static void shca_srq_free(struct shca_srq *srq)
{
	struct shca_pd *pdom = srq->pdom;

	shca_mem_free(pdom, srq->free_slots, SHCA_RES_TYPE_SRQ_FREE,
		      srq->custom);
	shca_mem_free(pdom, srq->wrid, SHCA_RES_TYPE_SRQ_WRID, srq->custom);
	shca_mem_free(pdom, srq, SHCA_RES_TYPE_SRQ, srq->custom);
	shca_pdom_put(pdom);
}

/* An SRQ's free slot stack and wr_ids for 2^@log slots, in @custom. */
static int shca_srq_tables(struct shca_srq *srq, uint32_t log,
			   uint32_t **free_slots, __u64 **wrid,
			   unsigned int *custom)
{
	*free_slots = shca_mem_alloc(srq->pdom, sizeof(**free_slots) << log,
				     SHCA_RES_TYPE_SRQ_FREE, custom);
	*wrid = shca_mem_alloc(srq->pdom, sizeof(**wrid) << log,
			       SHCA_RES_TYPE_SRQ_WRID, custom);
	if (*free_slots && *wrid)
		return 0;
	shca_mem_free(srq->pdom, *free_slots, SHCA_RES_TYPE_SRQ_FREE, *custom);
	shca_mem_free(srq->pdom, *wrid, SHCA_RES_TYPE_SRQ_WRID, *custom);
	*free_slots = NULL;
	*wrid = NULL;
	return ENOMEM;
}

static struct shca_srq **shca_xsrq_slot(struct shca_context *ctx, uint32_t srqn)
{
	return &ctx->xsrq_table[srqn % SHCA_XSRQ_TABLE_SIZE];
}

/* The XRC SRQ of this process with number @srqn, or NULL. */
struct shca_srq *shca_xsrq_lookup(struct shca_context *ctx, uint32_t srqn)
{
	struct shca_srq *srq;

	pthread_mutex_lock(&ctx->xsrq_lock);
	for (srq = *shca_xsrq_slot(ctx, srqn); srq; srq = srq->xnext)
		if (srq->srqn == srqn)
			break;
	pthread_mutex_unlock(&ctx->xsrq_lock);
	return srq;
}

static void shca_xsrq_insert(struct shca_context *ctx, struct shca_srq *srq)
{
	struct shca_srq **slot = shca_xsrq_slot(ctx, srq->srqn);

	pthread_mutex_lock(&ctx->xsrq_lock);
	srq->xnext = *slot;
	*slot = srq;
	pthread_mutex_unlock(&ctx->xsrq_lock);
}

static void shca_xsrq_remove(struct shca_context *ctx, struct shca_srq *srq)
{
	struct shca_srq **p;

	pthread_mutex_lock(&ctx->xsrq_lock);
	for (p = shca_xsrq_slot(ctx, srq->srqn); *p; p = &(*p)->xnext) {
		if (*p == srq) {
			*p = srq->xnext;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->xsrq_lock);
}

/* A new SRQ on @pd (a PD or a parent domain), its lock ready; or NULL. */
static struct shca_srq *shca_srq_new(struct ibv_pd *pd)
{
	unsigned int custom = 0;
	struct shca_pd *pdom;
	struct shca_srq *srq;
	int ret;

	pdom = shca_pdom_get(pd->context, pd, &ret);
	srq = shca_mem_alloc(pdom, sizeof(*srq), SHCA_RES_TYPE_SRQ, &custom);
	if (!srq) {
		shca_pdom_put(pdom);
		return NULL;
	}
	srq->pdom = pdom;
	srq->custom = custom;
	srq->single_threaded = pdom && pdom->td;
	ret = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		shca_srq_free(srq);
		errno = ret;
		return NULL;
	}
	return srq;
}

/* Map what the kernel created and set up the slots; an errno on failure. */
static int shca_srq_setup(struct shca_srq *srq, struct ibv_context *ibctx,
			  const struct shca_create_srq_resp *resp)
{
	int ret;

	srq->srqn = resp->srqn;
	srq->log_depth = resp->log_depth;
	srq->max_sge = resp->max_sge;
	srq->map_len = resp->mmap_len;
	srq->map = shca_map(ibctx, resp->mmap_offset, srq->map_len);
	ret = srq->map ? 0 : errno;
	if (!ret)
		ret = shca_srq_tables(srq, srq->log_depth, &srq->free_slots,
				      &srq->wrid, &srq->custom);
	if (ret)
		return ret;
	srq->slots = srq->map;
	srq->index_ring = (void *)((char *)srq->map + resp->index_offset);
	srq->dbrec = (void *)((char *)srq->map + resp->dbrec_offset);
	srq->nr_free = shca_srq_slots_init(srq->free_slots, srq->log_depth);
	srq->pi = load_acquire(&srq->dbrec->pi);
	return 0;
}

/* Undo a create, the kernel's part too if @created; errno is @ret. */
static void shca_srq_undo(struct shca_srq *srq, int created, int ret)
{
	if (srq->map)
		munmap(srq->map, srq->map_len);
	if (created)
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
	pthread_spin_destroy(&srq->lock);
	shca_srq_free(srq);
	errno = ret;
}

struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct shca_ucmd_create_srq_resp resp = {};
	struct shca_ucmd_create_srq cmd = {};
	struct shca_srq *srq;
	int ret;

	srq = shca_srq_new(pd);
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		shca_srq_undo(srq, 0, ret);
		return NULL;
	}
	ret = shca_srq_setup(srq, pd->context, &resp.drv_payload);
	if (ret) {
		shca_srq_undo(srq, 1, ret);
		return NULL;
	}
	return &srq->vsrq.srq;
}

/*
 * A basic SRQ, or an XRC SRQ: in an XRC domain, with a CQ of its own, and
 * a number initiators address (ibv_get_srq_num()).  No tag matching.
 */
struct ibv_srq *shca_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct shca_ucmd_create_xsrq_resp resp = {};
	struct shca_ucmd_create_xsrq cmd = {};
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	struct shca_srq *srq;
	int ret;

	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	if ((attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_TYPE |
				 IBV_SRQ_INIT_ATTR_PD |
				 IBV_SRQ_INIT_ATTR_XRCD |
				 IBV_SRQ_INIT_ATTR_CQ)) ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ibctx ||
	    (type == IBV_SRQT_XRC &&
	     (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	      attr->xrcd->context != ibctx ||
	      !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq ||
	      attr->cq->context != ibctx))) {
		errno = EINVAL;
		return NULL;
	}
	srq = shca_srq_new(attr->pd);
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		shca_srq_undo(srq, 0, ret);
		return NULL;
	}
	ret = shca_srq_setup(srq, ibctx, &resp.drv_payload);
	if (ret) {
		shca_srq_undo(srq, 1, ret);
		return NULL;
	}
	if (type == IBV_SRQT_XRC)
		shca_xsrq_insert(to_sctx(ibctx), srq);
	return &srq->vsrq.srq;
}

int shca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct shca_srq *srq = to_ssrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->srqn;
	return 0;
}

/* The depth the kernel gives a request for @max_wr WQEs. */
/*
 * A resize: under the posting lock, the kernel moves the posted WQEs to
 * new memory, slot numbers and indices kept, and says where it is.
 */
static int shca_srq_resize(struct shca_srq *srq, struct ibv_srq_attr *attr,
			   int mask)
{
	struct shca_modify_srq_resp resp = {};
	struct shca_ucmd_modify_srq cmd = {};
	uint32_t log, nr_free, *free_slots;
	unsigned int custom = srq->custom;
	__u64 *wrid;
	void *map;
	int ret;

	if (!attr->max_wr || attr->max_wr > (1U << 30))
		return EINVAL;
	log = shca_wq_log_depth(attr->max_wr);
	ret = shca_srq_tables(srq, log, &free_slots, &wrid, &custom);
	if (ret)
		return ret;
	cmd.resp_addr = (uintptr_t)&resp;
	shca_lock(srq->single_threaded, &srq->lock);
	/* Every slot in use must be below the new depth: slots are kept. */
	ret = shca_srq_slots_resize(srq->free_slots, srq->nr_free, srq->wrid,
				    srq->log_depth, log, free_slots, &nr_free,
				    wrid) ? EINVAL : 0;
	if (ret)
		verbs_debug(verbs_get_ctx(srq->vsrq.srq.context),
			    "SRQ %u: a slot in use is past the new depth %u\n",
			    srq->srqn, 1U << log);
	if (!ret)
		ret = ibv_cmd_modify_srq(&srq->vsrq.srq, attr, mask,
					 &cmd.ibv_cmd, sizeof(cmd));
	if (ret)
		goto out_unlock;
	map = shca_map(srq->vsrq.srq.context, resp.mmap_offset,
		       resp.mmap_len);
	if (!map || resp.log_depth != log) {
		/* The device reads memory this process cannot write. */
		ret = map ? EIO : errno;
		if (map)
			verbs_err(verbs_get_ctx(srq->vsrq.srq.context),
				  "SRQ %u: resized to 2^%u slots, not 2^%u\n",
				  srq->srqn, resp.log_depth, log);
		if (map)
			munmap(map, resp.mmap_len);
		goto out_unlock;
	}
	munmap(srq->map, srq->map_len);
	srq->map = map;
	srq->map_len = resp.mmap_len;
	srq->slots = map;
	srq->index_ring = (void *)((char *)map + resp.index_offset);
	srq->dbrec = (void *)((char *)map + resp.dbrec_offset);
	srq->log_depth = log;
	/* The old tables go as they came, the new are kept as they came. */
	shca_mem_free(srq->pdom, srq->free_slots, SHCA_RES_TYPE_SRQ_FREE,
		      srq->custom);
	shca_mem_free(srq->pdom, srq->wrid, SHCA_RES_TYPE_SRQ_WRID,
		      srq->custom);
	srq->free_slots = free_slots;
	srq->wrid = wrid;
	srq->nr_free = nr_free;
	srq->custom = custom;
	shca_unlock(srq->single_threaded, &srq->lock);
	return 0;

out_unlock:
	shca_unlock(srq->single_threaded, &srq->lock);
	shca_mem_free(srq->pdom, free_slots, SHCA_RES_TYPE_SRQ_FREE, custom);
	shca_mem_free(srq->pdom, wrid, SHCA_RES_TYPE_SRQ_WRID, custom);
	return ret;
}

int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int mask)
{
	struct ibv_modify_srq cmd = {};

	if (mask & IBV_SRQ_MAX_WR)
		return shca_srq_resize(to_ssrq(ibsrq), attr, mask);
	return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
}

int shca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int shca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	if (srq->vsrq.srq_type == IBV_SRQT_XRC)
		shca_xsrq_remove(to_sctx(ibsrq->context), srq);
	munmap(srq->map, srq->map_len);
	pthread_spin_destroy(&srq->lock);
	shca_srq_free(srq);
	return 0;
}

/* A swept CQE named a slot of the SRQ @ctx: it is free again (shca_sweep_srq_fn). */
void shca_srq_put_slot(void *ctx, const struct shca_hw_cqe *cqe)
{
	struct shca_srq *srq = ctx;
	uint32_t slot = cqe->wqe_idx;

	shca_lock(srq->single_threaded, &srq->lock);
	shca_srq_slot_put(srq->free_slots, &srq->nr_free, srq->log_depth, slot);
	shca_unlock(srq->single_threaded, &srq->lock);
}

/* A receive CQE named @slot of the SRQ @ctx: its wr_id; it is free again. */
__u64 shca_srq_take_slot(void *ctx, uint32_t slot)
{
	struct shca_srq *srq = ctx;
	__u64 wr_id;

	shca_lock(srq->single_threaded, &srq->lock);
	wr_id = shca_srq_slot_wr_id(srq->wrid, srq->log_depth, slot);
	shca_srq_slot_put(srq->free_slots, &srq->nr_free, srq->log_depth, slot);
	shca_unlock(srq->single_threaded, &srq->lock);
	return wr_id;
}
