// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: shared receive queue verbs.
 *
 * An SRQ is an array of WQE slots plus a ring of slot numbers.  Posting
 * fills a free slot and puts its number on the ring; the device takes
 * numbers off the ring in order, and the receive CQE names the slot, which
 * polling returns to the free stack.  Completions may come back in any
 * order across QPs, so slots are recycled individually, never by index
 * arithmetic (include/shca/shca_wq.h, shared with libshca).  Posting is in
 * shca_post.c.  A resize keeps slot numbers: the slots in use stay where
 * they are, in new memory.  An XRC SRQ is on its domain's list from its
 * creation to its destruction; a poll holds the one an XRC receive CQE
 * names (shca_xrc_srq_get()).
 */
#include <linux/uaccess.h>

#include "shca.h"

/**
 * shca_xrc_srq_add() - a new XRC SRQ joins its domain's list
 * @srq: the SRQ, created on the device
 */
void shca_xrc_srq_add(struct shca_srq *srq)
{
	struct shca_xrcd *xrcd = to_shca_xrcd(srq->ibsrq.ext.xrc.xrcd);

	mutex_lock(&xrcd->lock);
	list_add_tail(&srq->xrc_node, &xrcd->srqs);
	mutex_unlock(&xrcd->lock);
}

/**
 * shca_xrc_srq_del() - an XRC SRQ leaves its domain's list
 * @srq: the SRQ, destroyed on the device
 */
void shca_xrc_srq_del(struct shca_srq *srq)
{
	struct shca_xrcd *xrcd = to_shca_xrcd(srq->ibsrq.ext.xrc.xrcd);

	mutex_lock(&xrcd->lock);
	list_del(&srq->xrc_node);
	mutex_unlock(&xrcd->lock);
}

/**
 * shca_xrc_srq_get() - the XRC SRQ an XRC receive CQE names, held
 * @sdev: the device
 * @srqn: the SRQ number in the CQE
 *
 * Return: the SRQ with a reference shca_xrc_srq_put() drops, or NULL if
 * there is no XRC SRQ of that number.
 */
struct shca_srq *shca_xrc_srq_get(struct shca_dev *sdev, u32 srqn)
{
	struct shca_srq *srq;
	unsigned long flags;

	xa_lock_irqsave(&sdev->srqs, flags);
	srq = xa_load(&sdev->srqs, srqn);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	xa_unlock_irqrestore(&sdev->srqs, flags);
	return srq;
}

/**
 * shca_xrc_srq_put() - drop a reference shca_xrc_srq_get() took
 * @srq: the SRQ
 */
void shca_xrc_srq_put(struct shca_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->free);
}

/**
 * shca_srq_free_slot() - return a completed SRQ slot for posting
 * @srq: the SRQ
 * @slot: the slot a receive CQE named
 */
void shca_srq_free_slot(struct shca_srq *srq, u32 slot)
{
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	shca_srq_slot_put(srq->free_slots, &srq->nr_free, srq->log_depth, slot);
	spin_unlock_irqrestore(&srq->lock, flags);
}

/**
 * shca_srq_take_slot() - the wr_id of a completed SRQ slot, which returns
 *	for posting
 * @ctx: the SRQ
 * @slot: the slot a receive CQE named
 *
 * Return: the slot's wr_id.
 */
u64 shca_srq_take_slot(void *ctx, u32 slot)
{
	struct shca_srq *srq = ctx;
	unsigned long flags;
	u64 wr_id;

	spin_lock_irqsave(&srq->lock, flags);
	wr_id = shca_srq_slot_wr_id(srq->wrid, srq->log_depth, slot);
	shca_srq_slot_put(srq->free_slots, &srq->nr_free, srq->log_depth, slot);
	spin_unlock_irqrestore(&srq->lock, flags);
	return wr_id;
}

static void shca_srq_free_mem(struct shca_srq *srq)
{
	mutex_destroy(&srq->resize_mutex);
	shca_buf_release(srq->buf, srq->mmap);
	kvfree(srq->free_slots);
	kvfree(srq->wrid);
}

/* A process's SRQ: map the slots and the index ring, say where. */
static int shca_srq_user_init(struct shca_dev *sdev, struct shca_srq *srq,
			      struct ib_udata *udata, size_t ring_bytes)
{
	size_t len = shca_buf_len(ring_bytes);
	struct shca_create_srq_resp resp = {
		.mmap_len = len,
		.index_offset = (void *)srq->index_ring - srq->buf,
		.dbrec_offset = PAGE_ALIGN(ring_bytes),
		.srqn = srq->srqn,
		.log_depth = srq->log_depth,
		.max_sge = srq->max_sge,
	};
	int err;

	srq->mmap = shca_mmap_insert(udata, srq->buf, len, &resp.mmap_offset);
	if (IS_ERR(srq->mmap)) {
		err = PTR_ERR(srq->mmap);
		srq->mmap = NULL;
		return err;
	}
	return shca_udata_resp(sdev, udata, &resp, sizeof(resp));
}

/**
 * shca_create_srq() - create a shared receive queue
 * @ibsrq: the object ib_core allocated
 * @init: its size and limit; the size granted is written back
 * @udata: for a process's SRQ, struct shca_create_srq_cmd in and
 *	struct shca_create_srq_resp out; NULL for the kernel's
 *
 * Return: 0 or a negative errno.
 */
int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibsrq->device);
	struct shca_srq *srq = to_shca_srq(ibsrq);
	struct shca_hw_srq_create params = {};
	struct shca_hw_obj_id id;
	struct ib_srq_attr *a = &init->attr;
	size_t slots_bytes;
	u32 depth, i;
	void *dbrec;
	int err;

	if (udata) {
		err = shca_udata_create_cmd(sdev, udata, "SRQ",
					    offsetofend(struct shca_create_srq_cmd,
							comp_mask));
		if (err)
			return err;
	}
	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC) {
		shca_dbg(sdev, "SRQ type %d not supported\n", init->srq_type);
		return -EOPNOTSUPP;
	}
	if (!a->max_wr || a->max_wr > sdev->caps.max_srq_wr ||
	    a->max_sge > sdev->caps.max_srq_sge || a->srq_limit > a->max_wr) {
		shca_dbg(sdev, "SRQ attributes out of range (wr %u sge %u limit %u)\n",
			 a->max_wr, a->max_sge, a->srq_limit);
		return -EINVAL;
	}
	spin_lock_init(&srq->lock);
	mutex_init(&srq->resize_mutex);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->free);
	/* The device takes rings of two entries or more. */
	srq->log_depth = shca_wq_log_depth(a->max_wr);
	srq->max_sge = max(a->max_sge, 1U);
	depth = 1U << srq->log_depth;
	slots_bytes = sizeof(*srq->slots) * depth;
	srq->buf = shca_buf_alloc(slots_bytes + sizeof(u32) * depth, &dbrec);
	if (!srq->buf) {
		err = -ENOMEM;
		goto err_free;
	}
	srq->slots = srq->buf;
	srq->index_ring = srq->buf + slots_bytes;
	srq->dbrec = dbrec;
	srq->user = !!udata;
	if (!srq->user) {
		/* A process keeps its own free slots and wr_ids. */
		srq->free_slots = kvcalloc(depth, sizeof(u32), GFP_KERNEL_ACCOUNT);
		srq->wrid = kvcalloc(depth, sizeof(u64), GFP_KERNEL_ACCOUNT);
		if (!srq->free_slots || !srq->wrid) {
			err = -ENOMEM;
			goto err_free;
		}
		for (i = 0; i < depth; i++)
			srq->free_slots[i] = depth - 1 - i;
		srq->nr_free = depth;
	}

	params.pdn = to_shca_pd(ibsrq->pd)->pdn;
	params.slots = srq->slots;
	params.index_ring = srq->index_ring;
	params.log_depth = srq->log_depth;
	params.dbrec = srq->dbrec;
	params.max_sge = srq->max_sge;
	params.limit = a->srq_limit;
	if (init->srq_type == IB_SRQT_XRC) {
		/* Its receive completions go to its own CQ (shca_xrc.c). */
		params.xrcdn = to_shca_xrcd(init->ext.xrc.xrcd)->xrcdn;
		params.cqn = to_shca_cq(init->ext.cq)->cqn;
	}
	err = shca_cmd_create_srq(sdev, &params, &id);
	if (err)
		goto err_free;
	srq->srqn = id.num;
	srq->gen = id.gen;
	if (udata)
		err = shca_srq_user_init(sdev, srq, udata,
					 slots_bytes + sizeof(u32) * depth);
	if (!err)
		err = xa_insert_irq(&sdev->srqs, srq->srqn, srq, GFP_KERNEL);
	if (err)
		goto err_destroy;
	if (init->srq_type == IB_SRQT_XRC) {
		/* The number initiators address; uverbs reports it. */
		ibsrq->ext.xrc.srq_num = srq->srqn;
		shca_xrc_srq_add(srq);
	}
	a->max_wr = depth;
	a->max_sge = srq->max_sge;
	return 0;

err_destroy:
	shca_cmd_destroy_srq(sdev, srq->srqn);
err_free:
	shca_srq_free_mem(srq);
	return err;
}

/**
 * shca_destroy_srq() - destroy a shared receive queue
 * @ibsrq: the SRQ
 * @udata: unused
 *
 * Return: 0, or -EBUSY while a QP is attached.
 */
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibsrq->device);
	struct shca_srq *srq = to_shca_srq(ibsrq);
	int err;

	err = shca_cmd_destroy_srq(sdev, srq->srqn);
	/*
	 * ib_core calls here only once its own count of the QPs attached to
	 * the SRQ is zero (usecnt, which ib_destroy_srq_user() checks), and
	 * the device drops its association before ib_core drops usecnt.  So
	 * a device still counting one means the two disagree.  A caller of
	 * the op itself with QPs attached (a KUnit test) gets -EBUSY alone.
	 */
	WARN_ON_ONCE(err == -EBUSY && !atomic_read(&ibsrq->usecnt));
	if (err)
		return err;
	if (ibsrq->srq_type == IB_SRQT_XRC)
		shca_xrc_srq_del(srq);
	xa_erase_irq(&sdev->srqs, srq->srqn);
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->free);
	wait_for_completion(&srq->free);
	shca_srq_free_mem(srq);
	return 0;
}

/* New memory for an SRQ, allocated before its posting lock is taken. */
struct shca_srq_mem {
	struct shca_hw_srq_create params;
	void *buf;
	size_t ring_bytes;
	struct rdma_user_mmap_entry *mmap;
	u32 *free_slots;
	u64 *wrid;
	u32 nr_free;
};

static int shca_srq_mem_alloc(struct shca_srq *srq, struct shca_srq_mem *m,
			      u32 log_depth)
{
	u32 depth = 1U << log_depth;
	size_t slots_bytes = sizeof(*srq->slots) * depth;
	void *dbrec;

	m->ring_bytes = slots_bytes + sizeof(u32) * depth;
	m->buf = shca_buf_alloc(m->ring_bytes, &dbrec);
	if (!m->buf)
		return -ENOMEM;
	m->params.slots = m->buf;
	m->params.index_ring = m->buf + slots_bytes;
	m->params.dbrec = dbrec;
	m->params.log_depth = log_depth;
	if (srq->user)
		return 0;
	m->free_slots = kvcalloc(depth, sizeof(u32), GFP_KERNEL_ACCOUNT);
	m->wrid = kvcalloc(depth, sizeof(u64), GFP_KERNEL_ACCOUNT);
	return m->free_slots && m->wrid ? 0 : -ENOMEM;
}

static void shca_srq_mem_free(struct shca_srq_mem *m)
{
	shca_buf_release(m->buf, m->mmap);
	kvfree(m->free_slots);
	kvfree(m->wrid);
}

/* A process's resize: map the new memory and tell the process where. */
static int shca_srq_user_resize(struct shca_srq *srq, struct ib_udata *udata,
				u64 resp_addr, struct shca_srq_mem *m)
{
	size_t len = shca_buf_len(m->ring_bytes);
	struct shca_modify_srq_resp resp = {
		.mmap_len = len,
		.index_offset = (void *)m->params.index_ring - m->buf,
		.dbrec_offset = PAGE_ALIGN(m->ring_bytes),
		.log_depth = m->params.log_depth,
	};
	struct rdma_user_mmap_entry *mmap;

	if (!resp_addr) {
		shca_srq_dbg(srq, "resize without a response address\n");
		return -EINVAL;
	}
	mmap = shca_mmap_insert(udata, m->buf, len, &resp.mmap_offset);
	if (IS_ERR(mmap))
		return PTR_ERR(mmap);
	m->mmap = mmap;
	if (copy_to_user(u64_to_user_ptr(resp_addr), &resp, sizeof(resp)))
		return -EFAULT;
	return 0;
}

/*
 * The kernel's free slots and wr_ids for the new depth
 * (shca_srq_slots_resize(), shared with libshca).
 */
static int shca_srq_resize_slots(struct shca_srq *srq, struct shca_srq_mem *m)
{
	lockdep_assert_held(&srq->lock);
	if (shca_srq_slots_resize(srq->free_slots, srq->nr_free, srq->wrid,
				  srq->log_depth, m->params.log_depth,
				  m->free_slots, &m->nr_free, m->wrid)) {
		shca_srq_dbg(srq, "a slot in use is past depth %u\n",
			     1U << m->params.log_depth);
		return -EINVAL;
	}
	return 0;
}

/* Times a resize copies again while posters keep ahead of its switch. */
#define SHCA_SRQ_RESIZE_TRIES	16

/* The switch, under the posting lock: the device's, then the driver's. */
static int shca_srq_resize_switch(struct shca_srq *srq, struct shca_srq_mem *m,
				  const struct shca_hw_srq_resize *r)
{
	struct shca_dev *sdev = to_shca_dev(srq->ibsrq.device);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->lock, flags);
	if (!srq->user)
		err = shca_srq_resize_slots(srq, m);
	if (!err)
		err = shca_cmd_resize_srq(sdev, srq->srqn, r, NULL);
	if (!err) {
		swap(srq->buf, m->buf);
		swap(srq->mmap, m->mmap);
		swap(srq->free_slots, m->free_slots);
		swap(srq->wrid, m->wrid);
		if (!srq->user)
			srq->nr_free = m->nr_free;
		srq->slots = m->params.slots;
		srq->index_ring = m->params.index_ring;
		srq->dbrec = m->params.dbrec;
		srq->log_depth = m->params.log_depth;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/*
 * The new depth and, unless SHCA_HW_SRQ_LIMIT_KEEP, the limit, in one
 * step.  The device copies the posted receives to the new memory while
 * posting goes on; the switch copies what was posted since, with the
 * posting lock held.  If more was posted than the switch copies, the
 * device copies again.
 */
static int shca_srq_resize(struct shca_srq *srq, u32 max_wr, u32 limit,
			   struct ib_udata *udata, u64 resp_addr)
{
	struct shca_dev *sdev = to_shca_dev(srq->ibsrq.device);
	struct shca_hw_srq_resize r = { .step = SHCA_SRQ_RESIZE_START };
	struct shca_srq_mem m = {};
	int err, tries;

	if (!max_wr || max_wr > sdev->caps.max_srq_wr) {
		shca_srq_dbg(srq, "bad depth %u\n", max_wr);
		return -EINVAL;
	}
	err = shca_srq_mem_alloc(srq, &m, shca_wq_log_depth(max_wr));
	m.params.limit = limit;
	if (!err && srq->user)
		err = shca_srq_user_resize(srq, udata, resp_addr, &m);
	if (err)
		goto out;
	r.mem = m.params;

	mutex_lock(&srq->resize_mutex);
	for (tries = 0; tries < SHCA_SRQ_RESIZE_TRIES; tries++) {
		err = shca_cmd_resize_srq(sdev, srq->srqn, &r, &r.copied);
		if (err)
			break;
		r.step = SHCA_SRQ_RESIZE_SWITCH;
		err = shca_srq_resize_switch(srq, &m, &r);
		if (err != -EBUSY)
			break;
		r.step = SHCA_SRQ_RESIZE_COPY;
	}
	mutex_unlock(&srq->resize_mutex);
	if (err)
		shca_srq_dbg(srq, "cannot resize to %u: %d\n", max_wr, err);
out:
	/* The old memory on success, the new on failure. */
	shca_srq_mem_free(&m);
	return err;
}

/**
 * shca_modify_srq() - resize an SRQ, or arm its limit
 * @ibsrq: the SRQ
 * @attr: the new depth and limit
 * @mask: IB_SRQ_MAX_WR, IB_SRQ_LIMIT or both
 * @udata: for a process's SRQ, struct shca_modify_srq_cmd (needed for a
 *	resize); nothing for the kernel's
 *
 * A resize keeps every posted receive, and every slot whose completion is
 * not yet polled; a limit asked with it is armed in the same device
 * command, so the two succeed or fail together.
 *
 * Return: 0, -EINVAL for a depth of 0 or over max_srq_wr, a shrink below
 * the slots in use, or a limit over the depth; -EOPNOTSUPP for unknown
 * driver data; -EBUSY if receives were posted faster than the device
 * could copy them, round after round.
 */
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibsrq->device);
	struct shca_srq *srq = to_shca_srq(ibsrq);
	struct shca_modify_srq_cmd ucmd = {};
	int err;

	if (srq->user && udata && udata->inlen) {
		err = shca_udata_cmd(sdev, udata, &ucmd, sizeof(ucmd),
				     offsetofend(struct shca_modify_srq_cmd,
						 comp_mask));
		if (err)
			return err;
		if (ucmd.comp_mask || ucmd.reserved) {
			shca_srq_dbg(srq, "comp_mask %#x, reserved %#x\n",
				     ucmd.comp_mask, ucmd.reserved);
			return -EOPNOTSUPP;
		}
	} else {
		err = shca_check_no_udata(sdev, udata);
		if (err)
			return err;
	}
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)) {
		shca_srq_dbg(srq, "unknown attribute mask %#x\n", mask);
		return -EINVAL;
	}
	if ((mask & IB_SRQ_LIMIT) &&
	    attr->srq_limit > ((mask & IB_SRQ_MAX_WR) ? attr->max_wr :
			       1U << srq->log_depth)) {
		shca_srq_dbg(srq, "limit %u over the depth\n", attr->srq_limit);
		return -EINVAL;
	}
	if (mask & IB_SRQ_MAX_WR)
		return shca_srq_resize(srq, attr->max_wr,
				       (mask & IB_SRQ_LIMIT) ? attr->srq_limit :
				       SHCA_HW_SRQ_LIMIT_KEEP,
				       udata, ucmd.resp_addr);
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	return shca_cmd_modify_srq(sdev, srq->srqn, attr->srq_limit);
}

/**
 * shca_query_srq() - read an SRQ's attributes
 * @ibsrq: the SRQ
 * @attr: filled in
 *
 * Return: 0 or a negative errno.
 */
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	struct shca_hw_srq_query q;
	int err;

	err = shca_cmd_query_srq(to_shca_dev(ibsrq->device), srq->srqn, &q);
	if (err)
		return err;
	attr->max_wr = 1U << srq->log_depth;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = q.limit;
	return 0;
}
