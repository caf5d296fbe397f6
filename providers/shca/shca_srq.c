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

/* Map what the kernel created and set up the slots; an errno on failure. */
static int shca_srq_setup(struct shca_srq *srq, struct ibv_context *ibctx,
			  const struct shca_create_srq_resp *resp)
{
	uint32_t depth;

	srq->srqn = resp->srqn;
	srq->log_depth = resp->log_depth;
	srq->max_sge = resp->max_sge;
	depth = 1U << srq->log_depth;
	srq->free_slots = calloc(depth, sizeof(*srq->free_slots));
	srq->wrid = calloc(depth, sizeof(*srq->wrid));
	srq->map_len = resp->mmap_len;
	srq->map = shca_map(ibctx, resp->mmap_offset, srq->map_len);
	if (!srq->map)
		return errno;
	if (!srq->free_slots || !srq->wrid)
		return ENOMEM;
	srq->slots = srq->map;
	srq->index_ring = (void *)((char *)srq->map + resp->index_offset);
	srq->dbrec = (void *)((char *)srq->map + resp->dbrec_offset);
	srq->nr_free = shca_srq_slots_init(srq->free_slots, srq->log_depth);
	srq->pi = load_acquire(&srq->dbrec->pi);
	return 0;
}

/* Undo a create the kernel did: @ret is the errno to leave. */
static void shca_srq_undo(struct shca_srq *srq, int ret)
{
	if (srq->map)
		munmap(srq->map, srq->map_len);
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
	free(srq->free_slots);
	free(srq->wrid);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	errno = ret;
}

struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct shca_uresp_create_srq resp = {};
	struct shca_ucmd_create_srq cmd = {};
	struct shca_srq *srq;
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
	ret = shca_srq_setup(srq, pd->context, &resp.drv);
	if (ret) {
		shca_srq_undo(srq, ret);
		return NULL;
	}
	return &srq->vsrq.srq;

err_lock:
	pthread_spin_destroy(&srq->lock);
err_free:
	free(srq);
	return NULL;
}

/*
 * A basic SRQ, or an XRC SRQ: in an XRC domain, with a CQ of its own, and
 * a number initiators address (ibv_get_srq_num()).  No tag matching.
 */
struct ibv_srq *shca_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct shca_uresp_create_srq resp = {};
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
	    (type == IBV_SRQT_XRC &&
	     (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	      !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq))) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	if (pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE)) {
		free(srq);
		return NULL;
	}
	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		pthread_spin_destroy(&srq->lock);
		free(srq);
		errno = ret;
		return NULL;
	}
	ret = shca_srq_setup(srq, ibctx, &resp.drv);
	if (ret) {
		shca_srq_undo(srq, ret);
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
static uint32_t shca_srq_log_depth(uint32_t max_wr)
{
	uint32_t log = 1;

	while ((1U << log) < max_wr)
		log++;
	return log;
}

/*
 * The new free stack and wr_ids for 2^@log slots.  Slot numbers are kept,
 * so every slot in use must be below the new depth.
 */
static int shca_srq_resize_slots(struct shca_srq *srq, uint32_t log,
				 uint32_t *free_slots, uint32_t *nr_free,
				 __u64 *wrid)
{
	uint32_t old_depth = 1U << srq->log_depth, depth = 1U << log;
	uint32_t i, slot, above = 0, n = 0;

	for (i = depth; i-- > old_depth;)
		free_slots[n++] = i;
	for (i = 0; i < srq->nr_free; i++) {
		slot = srq->free_slots[i];
		if (slot < depth && n < depth)
			free_slots[n++] = slot;
		else if (slot >= depth)
			above++;
	}
	if (depth < old_depth && above != old_depth - depth)
		return EINVAL;
	memcpy(wrid, srq->wrid,
	       sizeof(*wrid) * (depth < old_depth ? depth : old_depth));
	*nr_free = n;
	return 0;
}

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
	__u64 *wrid;
	void *map;
	int ret;

	if (!attr->max_wr || attr->max_wr > (1U << 30))
		return EINVAL;
	log = shca_srq_log_depth(attr->max_wr);
	free_slots = calloc(1U << log, sizeof(*free_slots));
	wrid = calloc(1U << log, sizeof(*wrid));
	if (!free_slots || !wrid) {
		ret = ENOMEM;
		goto out_free;
	}
	cmd.drv.resp_addr = (uintptr_t)&resp;
	pthread_spin_lock(&srq->lock);
	ret = shca_srq_resize_slots(srq, log, free_slots, &nr_free, wrid);
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
	free(srq->free_slots);
	free(srq->wrid);
	srq->free_slots = free_slots;
	srq->wrid = wrid;
	srq->nr_free = nr_free;
	free_slots = NULL;
	wrid = NULL;
out_unlock:
	pthread_spin_unlock(&srq->lock);
out_free:
	free(free_slots);
	free(wrid);
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
	free(srq->free_slots);
	free(srq->wrid);
	free(srq);
	return 0;
}

/* A swept CQE named a slot of the SRQ @ctx: it is free again (shca_sweep_srq_fn). */
void shca_srq_put_slot(void *ctx, const struct shca_hw_cqe *cqe)
{
	struct shca_srq *srq = ctx;
	uint32_t slot = cqe->wqe_idx;

	pthread_spin_lock(&srq->lock);
	shca_srq_slot_put(srq->free_slots, &srq->nr_free, srq->log_depth, slot);
	pthread_spin_unlock(&srq->lock);
}

/* A receive CQE named @slot of the SRQ @ctx: its wr_id; it is free again. */
__u64 shca_srq_take_slot(void *ctx, uint32_t slot)
{
	struct shca_srq *srq = ctx;
	__u64 wr_id;

	pthread_spin_lock(&srq->lock);
	wr_id = shca_srq_slot_wr_id(srq->wrid, srq->log_depth, slot);
	shca_srq_slot_put(srq->free_slots, &srq->nr_free, srq->log_depth, slot);
	pthread_spin_unlock(&srq->lock);
	return wr_id;
}
