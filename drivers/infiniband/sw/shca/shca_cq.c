// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: completion queue verbs.
 *
 * The device writes CQEs into a ring in host memory with an owner bit;
 * polling reads them without a device command and publishes the consumer
 * index in the CQ's doorbell record.  Arming is a doorbell.
 *
 * Sweeping removes a fenced QP's CQEs from a ring under the poll lock; see
 * Documentation/teardown.rst.  The entries between the consumer index and
 * the first one the device has not published belong to the driver, and the
 * device publishes in ring order, so the sweep can rewrite them while the
 * device goes on writing past them.
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>

#include "shca.h"

/* The sweep shared with libshca, with the kernel's ordering (shca.h). */
#include "shca_cq_sweep.h"

static const enum rdma_network_type shca_net_type[] = {
	[SHCA_NET_ROCE_V1]	= RDMA_NETWORK_IB,
	[SHCA_NET_IPV4]		= RDMA_NETWORK_IPV4,
	[SHCA_NET_IPV6]		= RDMA_NETWORK_IPV6,
};

static u32 shca_cq_log_depth(int cqe)
{
	return order_base_2(max(cqe + 1, 2));
}

/* A CQ ring of 2^log_depth CQEs with its doorbell record. */
static void *shca_cq_buf(u32 log_depth, struct shca_hw_cqe **ring,
			 struct shca_hw_cq_dbrec **dbrec)
{
	void *db, *buf;

	buf = shca_buf_alloc(sizeof(**ring) << log_depth, &db);
	*ring = buf;
	*dbrec = db;
	return buf;
}

/* A process's CQ: map the ring, say where. */
static int shca_cq_user_init(struct shca_dev *sdev, struct shca_cq *cq,
			     struct ib_udata *udata)
{
	struct shca_create_cq_resp resp = {};
	size_t ring = sizeof(*cq->ring) << cq->log_depth;
	int err;

	cq->mmap = shca_mmap_insert(udata, cq->buf, shca_buf_len(ring),
				    &resp.mmap_offset);
	if (IS_ERR(cq->mmap)) {
		err = PTR_ERR(cq->mmap);
		cq->mmap = NULL;
		return err;
	}
	resp.mmap_len = shca_buf_len(ring);
	resp.dbrec_offset = PAGE_ALIGN(ring);
	resp.cqn = cq->cqn;
	resp.log_depth = cq->log_depth;
	resp.flags = SHCA_CQ_RESP_F_ARM_DBREC;
	return shca_udata_resp(sdev, udata, &resp, sizeof(resp));
}

/**
 * shca_create_cq() - create a completion queue
 * @ibcq: the object ib_core allocated
 * @attr: depth, vector and flags; of the flags, only
 *	IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
 * @udata: for a process's CQ, struct shca_create_cq_cmd in and
 *	struct shca_create_cq_resp out; NULL for the kernel's
 *
 * Return: 0 or a negative errno.
 */
int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibcq->device);
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_hw_cq_create params = {};
	struct shca_hw_obj_id id;
	int err;

	if (udata) {
		err = shca_udata_create_cmd(sdev, udata, "CQ",
					    offsetofend(struct shca_create_cq_cmd,
							comp_mask));
		if (err)
			return err;
	}
	/*
	 * A CQE carries its completion time on a CQ that asks for it:
	 * libibverbs asks for an extended CQ with a timestamp in its
	 * wc_flags.  The others save the clock read.
	 */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION) {
		shca_dbg(sdev, "unsupported CQ flags %#x\n", attr->flags);
		return -EOPNOTSUPP;
	}
	if (attr->cqe < 1 || attr->cqe > sdev->caps.max_cqe) {
		shca_dbg(sdev, "bad CQ depth %d\n", attr->cqe);
		return -EINVAL;
	}
	if (attr->comp_vector >= sdev->ibdev.num_comp_vectors) {
		shca_dbg(sdev, "bad completion vector %u\n", attr->comp_vector);
		return -EINVAL;
	}
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_mutex);
	refcount_set(&cq->ref, 1);
	init_completion(&cq->free);
	cq->user = !!udata;
	cq->log_depth = shca_cq_log_depth(attr->cqe);
	cq->buf = shca_cq_buf(cq->log_depth, &cq->ring, &cq->dbrec);
	if (!cq->buf)
		return -ENOMEM;

	params.ring = cq->ring;
	params.log_depth = cq->log_depth;
	params.dbrec = cq->dbrec;
	params.eqn = attr->comp_vector;
	if (attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		params.flags = SHCA_HW_CQ_F_TIMESTAMP;
	err = shca_cmd_create_cq(sdev, &params, &id);
	if (err)
		goto err_buf;
	cq->cqn = id.num;
	cq->gen = id.gen;
	if (udata) {
		err = shca_cq_user_init(sdev, cq, udata);
		if (err)
			goto err_destroy;
	}
	err = xa_insert_irq(&sdev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (err)
		goto err_destroy;
	ibcq->cqe = (1 << cq->log_depth) - 1;
	return 0;

err_destroy:
	shca_cmd_destroy_cq(sdev, cq->cqn);
err_buf:
	shca_buf_release(cq->buf, cq->mmap);
	return err;
}

/**
 * shca_destroy_cq() - destroy a completion queue
 * @ibcq: the CQ
 * @udata: unused
 *
 * The device refuses while a QP or SRQ still points at the CQ.
 *
 * Return: 0, or -EBUSY while the CQ is associated.
 */
int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibcq->device);
	struct shca_cq *cq = to_shca_cq(ibcq);
	int err;

	err = shca_cmd_destroy_cq(sdev, cq->cqn);
	/*
	 * ib_core calls here only once its own count of the QPs on the CQ is
	 * zero (usecnt, which ib_destroy_cq_user() and ib_free_cq() check),
	 * and the device drops its association before ib_core drops usecnt.  So
	 * a device still counting one means the two disagree.  A caller of
	 * the op itself with QPs attached (a KUnit test) gets -EBUSY alone.
	 */
	WARN_ON_ONCE(err == -EBUSY && !atomic_read(&ibcq->usecnt));
	if (err)
		return err;
	/* No new event names the CQ; wait out a handler using it. */
	xa_erase_irq(&sdev->cqs, cq->cqn);
	if (refcount_dec_and_test(&cq->ref))
		complete(&cq->free);
	wait_for_completion(&cq->free);
	/*
	 * ib_free_cq() cancels its poll work before it calls here, and an
	 * event handled in between may have queued it again.  No handler
	 * can queue it any more: cancel it before the ring goes.
	 */
	if (!udata && (ibcq->poll_ctx == IB_POLL_WORKQUEUE ||
		       ibcq->poll_ctx == IB_POLL_UNBOUND_WORKQUEUE))
		cancel_work_sync(&ibcq->work);
	shca_buf_release(cq->buf, cq->mmap);
	mutex_destroy(&cq->resize_mutex);
	return 0;
}

/* A process's resize: check its command, map the new ring, say where. */
static struct rdma_user_mmap_entry *
shca_cq_user_resize(struct shca_cq *cq, struct ib_udata *udata, void *buf,
		    u32 log_depth)
{
	struct shca_dev *sdev = to_shca_dev(cq->ibcq.device);
	size_t ring = sizeof(*cq->ring) << log_depth;
	struct shca_resize_cq_resp resp = {};
	struct shca_resize_cq_cmd ucmd;
	struct rdma_user_mmap_entry *mmap;
	int err;

	err = shca_udata_cmd(sdev, udata, &ucmd, sizeof(ucmd),
			     offsetofend(struct shca_resize_cq_cmd, comp_mask));
	if (err)
		return ERR_PTR(err);
	if (ucmd.comp_mask || ucmd.reserved) {
		shca_cq_dbg(cq, "resize: comp_mask %#x, reserved %#x\n",
			    ucmd.comp_mask, ucmd.reserved);
		return ERR_PTR(-EOPNOTSUPP);
	}
	/* Without every field the process could not find its new ring. */
	if (udata->outlen < sizeof(resp)) {
		shca_cq_dbg(cq, "resize: response buffer of %zu bytes\n",
			    udata->outlen);
		return ERR_PTR(-EINVAL);
	}
	mmap = shca_mmap_insert(udata, buf, shca_buf_len(ring),
				&resp.mmap_offset);
	if (IS_ERR(mmap))
		return mmap;
	resp.mmap_len = shca_buf_len(ring);
	resp.dbrec_offset = PAGE_ALIGN(ring);
	resp.log_depth = log_depth;
	/* Written before the switch: a process told of a failure ignores it. */
	err = shca_udata_resp(sdev, udata, &resp, sizeof(resp));
	if (err) {
		shca_buf_release(buf, mmap);
		return ERR_PTR(err);
	}
	return mmap;
}

/*
 * A poll or an arm found the CQ resizing, and so nothing: now that the
 * resize is done, the consumer is told to look again, as an interrupt
 * would (with bottom halves off, so a softirq poller runs when they are
 * back on).
 */
static void shca_cq_renotify(struct shca_cq *cq, bool missed)
{
	if (!missed || !cq->ibcq.comp_handler)
		return;
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/**
 * shca_resize_cq() - change the depth of a completion queue
 * @ibcq: the CQ
 * @cqe: the CQEs it must hold
 * @udata: for a process's CQ, struct shca_resize_cq_cmd in and
 *	struct shca_resize_cq_resp out; nothing for the kernel's
 *
 * Unpolled CQEs move to the new ring, in order.  The device copies them a
 * chunk at a time, interrupts on, and goes on writing CQEs meanwhile; the
 * consumer index must stand still.  A process holds its poll lock across
 * the command.  For the kernel's CQ, the poll lock is held only to mark
 * the CQ resizing and to switch rings: a poll meanwhile finds nothing, and
 * if one did, the completion handler is called once the resize is done;
 * a sweep waits for the resize (resize_mutex).  A process's CQ gets a new
 * mapping.
 *
 * Return: 0, or -EINVAL if the unpolled CQEs would not fit; the CQ is
 * unchanged and usable on failure.
 */
int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibcq->device);
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct rdma_user_mmap_entry *mmap = NULL, *old_mmap;
	struct shca_hw_cq_create params = {};
	unsigned long flags;
	void *buf, *old;
	u32 log_depth;
	bool missed;
	int err;

	if (!cq->user) {
		err = shca_check_no_udata(sdev, udata);
		if (err)
			return err;
	}
	if (cqe < 1 || cqe > sdev->caps.max_cqe) {
		shca_cq_dbg(cq, "bad CQ depth %d\n", cqe);
		return -EINVAL;
	}
	log_depth = shca_cq_log_depth(cqe);
	buf = shca_cq_buf(log_depth, &params.ring, &params.dbrec);
	if (!buf)
		return -ENOMEM;
	params.log_depth = log_depth;
	if (cq->user) {
		mmap = shca_cq_user_resize(cq, udata, buf, log_depth);
		if (IS_ERR(mmap)) {
			shca_buf_free(buf);
			return PTR_ERR(mmap);
		}
	}

	mutex_lock(&cq->resize_mutex);
	spin_lock_irqsave(&cq->lock, flags);
	cq->resizing = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	err = shca_cmd_resize_cq(sdev, cq->cqn, &params);
	spin_lock_irqsave(&cq->lock, flags);
	cq->resizing = false;
	missed = cq->missed;
	cq->missed = false;
	if (err) {
		spin_unlock_irqrestore(&cq->lock, flags);
		mutex_unlock(&cq->resize_mutex);
		shca_cq_renotify(cq, missed);
		shca_cq_dbg(cq, "cannot resize to %d\n", cqe);
		shca_buf_release(buf, mmap);
		return err;
	}
	old = cq->buf;
	old_mmap = cq->mmap;
	cq->buf = buf;
	cq->mmap = mmap;
	cq->ring = params.ring;
	cq->dbrec = params.dbrec;
	cq->log_depth = log_depth;
	cq->ci = 0;
	ibcq->cqe = (1 << log_depth) - 1;
	spin_unlock_irqrestore(&cq->lock, flags);
	mutex_unlock(&cq->resize_mutex);
	shca_cq_renotify(cq, missed);
	/* A process's old mapping keeps its pages until it unmaps them. */
	shca_buf_release(old, old_mmap);
	return 0;
}

/**
 * shca_modify_cq() - set a CQ's interrupt moderation
 * @ibcq: the CQ
 * @cq_count: CQEs per completion event
 * @cq_period: microseconds an event may wait for more CQEs
 *
 * Return: 0 or a negative errno.
 */
int shca_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	return shca_cmd_modify_cq(to_shca_dev(ibcq->device),
				  to_shca_cq(ibcq)->cqn, cq_count, cq_period);
}

static struct shca_hw_cqe *shca_cq_next(struct shca_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	/* The acquire orders the CQE's body after its owner byte. */
	if (!shca_cqe_published(cq->ring, cq->log_depth, cq->ci))
		return NULL;
	return &cq->ring[cq->ci & ((1U << cq->log_depth) - 1)];
}

static void shca_cq_sweep_srq_slot(void *srq, const struct shca_hw_cqe *cqe)
{
	shca_srq_free_slot(srq, cqe->wqe_idx);
}

/**
 * shca_cq_sweep_ring() - remove one QP's CQEs from a kernel CQ ring
 * @ring: the ring
 * @log_depth: log2 of its depth
 * @ci: the consumer index
 * @qpn: the QP whose CQEs go
 * @srq: the QP's SRQ, which takes back the WQEs its removed receive CQEs
 *	name; or NULL
 *
 * shca_sweep_cq_ring() (include/shca/shca_cq_sweep.h, shared with libshca)
 * does the work.
 *
 * Return: the number of CQEs removed; the caller adds it to @ci.
 */
VISIBLE_IF_KUNIT u32 shca_cq_sweep_ring(struct shca_hw_cqe *ring,
					u32 log_depth, u32 ci, u32 qpn,
					struct shca_srq *srq)
{
	return shca_sweep_cq_ring(ring, log_depth, ci, qpn,
				  srq ? shca_cq_sweep_srq_slot : NULL, srq);
}
EXPORT_SYMBOL_IF_KUNIT(shca_cq_sweep_ring);

/* @n CQEs of QP @qpn were swept from @cq: give the device their slots. */
static void shca_cq_swept(struct shca_dev *sdev, struct shca_cq *cq, u32 qpn,
			  u32 n)
{
	lockdep_assert_held(&cq->lock);
	if (!n)
		return;
	cq->ci += n;
	/* The moved CQEs are in place before the device may reuse a slot. */
	smp_store_release(&cq->dbrec->ci, cq->ci);
	shca_drv_count(sdev, SHCA_DRV_CNT_SWEPT, n);
	shca_dbg(sdev, "CQ %u: %u CQEs of QP %u swept\n", cq->cqn, n, qpn);
}

static void shca_cq_sweep(struct shca_dev *sdev, struct shca_cq *cq, u32 qpn,
			  struct shca_srq *srq)
{
	lockdep_assert_held(&cq->lock);
	/* A process's CQ: libshca sweeps it, under its own poll lock. */
	if (cq->user)
		return;
	shca_cq_swept(sdev, cq, qpn,
		      shca_cq_sweep_ring(cq->ring, cq->log_depth, cq->ci, qpn,
					 srq));
}

/**
 * shca_cq_sweep_one() - remove a fenced QP's CQEs from one CQ
 * @cq: the CQ
 * @qpn: the QP
 * @fn: gives back the SRQ slot each removed SRQ receive names; or NULL
 * @ctx: passed to @fn
 *
 * For an XRC target QP, whose receives complete in the CQs of the XRC
 * SRQs they took WQEs from (shca_xrc_sweep_tgt()).  Takes the CQ's resize
 * mutex and poll lock.
 */
void shca_cq_sweep_one(struct shca_cq *cq, u32 qpn,
		       void (*fn)(void *ctx, const struct shca_hw_cqe *cqe),
		       void *ctx)
{
	unsigned long flags;

	/* A process's CQ: libshca sweeps it, under its own poll lock. */
	if (cq->user)
		return;
	mutex_lock(&cq->resize_mutex);
	spin_lock_irqsave(&cq->lock, flags);
	shca_cq_swept(to_shca_dev(cq->ibcq.device), cq, qpn,
		      shca_sweep_cq_ring(cq->ring, cq->log_depth, cq->ci, qpn,
					 fn, ctx));
	spin_unlock_irqrestore(&cq->lock, flags);
	mutex_unlock(&cq->resize_mutex);
}

/* Both CQs (or the one) locked: forget the QP if asked, and sweep. */
static void shca_cq_sweep_locked(struct shca_dev *sdev, struct shca_qp *qp,
				 struct shca_cq *cq, struct shca_cq *other,
				 struct shca_srq *srq, bool forget)
{
	if (forget) {
		xa_lock(&sdev->qps);
		__xa_erase(&sdev->qps, qp->qpn);
		xa_unlock(&sdev->qps);
	}
	shca_cq_sweep(sdev, cq, qp->qpn, srq);
	if (other)
		shca_cq_sweep(sdev, other, qp->qpn, srq);
}

/**
 * shca_cq_sweep_qp() - remove every CQE of a fenced QP from its CQs
 * @qp: the QP; the device writes nothing more for it
 * @forget: also take the QP out of the driver's table, while the CQs are
 *	locked, so that no poll can find it afterward (destroy)
 *
 * With separate send and receive CQs, both are locked, lower CQN first,
 * so no poller sees one swept and the other not; a shared CQ is locked and
 * swept once.  A resize of either CQ is waited out first: its copy must
 * not miss what the sweep rewrites.  Receive CQEs removed from an SRQ QP
 * give their SRQ WQEs back to the SRQ.
 */
void shca_cq_sweep_qp(struct shca_qp *qp, bool forget)
{
	struct shca_dev *sdev = to_shca_dev(qp->ibqp.device);
	struct shca_cq *scq = to_shca_cq(qp->ibqp.send_cq);
	/* An XRC initiator QP has no receive CQ. */
	struct shca_cq *rcq = qp->ibqp.recv_cq ? to_shca_cq(qp->ibqp.recv_cq) :
				 scq;
	struct shca_srq *srq = qp->ibqp.srq ? to_shca_srq(qp->ibqp.srq) : NULL;
	struct shca_cq *first = scq, *second = rcq;
	unsigned long flags;

	if (first == second) {
		mutex_lock(&first->resize_mutex);
		spin_lock_irqsave(&first->lock, flags);
		shca_cq_sweep_locked(sdev, qp, first, NULL, srq, forget);
		spin_unlock_irqrestore(&first->lock, flags);
		mutex_unlock(&first->resize_mutex);
	} else {
		if (shca_sweep_lock_b_first(first->cqn, second->cqn))
			swap(first, second);
		mutex_lock(&first->resize_mutex);
		mutex_lock_nested(&second->resize_mutex, SINGLE_DEPTH_NESTING);
		spin_lock_irqsave(&first->lock, flags);
		spin_lock_nested(&second->lock, SINGLE_DEPTH_NESTING);
		shca_cq_sweep_locked(sdev, qp, first, second, srq, forget);
		spin_unlock(&second->lock);
		spin_unlock_irqrestore(&first->lock, flags);
		mutex_unlock(&second->resize_mutex);
		mutex_unlock(&first->resize_mutex);
	}
	if (forget)
		wake_up_all(&sdev->qpn_wait);
}

/* Returns false for a CQE that names nothing this QP has outstanding. */
static bool shca_cqe_to_wc(struct shca_qp *qp, const struct shca_hw_cqe *cqe,
			   struct ib_wc *wc)
{
	struct shca_srq *srq = qp->ibqp.srq ? to_shca_srq(qp->ibqp.srq) : NULL;
	bool xrc = cqe->flags & SHCA_CQE_F_XRC;
	bool tgt = qp->ibqp.qp_type == IB_QPT_XRC_TGT;
	struct shca_cqe_wc c;
	bool ok;

	/* An XRC target QP's receive names the XRC SRQ it came from. */
	if (xrc != tgt)
		return false;
	if (xrc) {
		srq = shca_xrc_srq_get(to_shca_dev(qp->ibqp.device),
				       shca_cqe_xrc_srqn(cqe));
		if (!srq)
			return false;
	}
	ok = shca_cqe_complete(cqe, &qp->sq, &qp->rq,
			       srq ? shca_srq_take_slot : NULL, srq, &c);
	if (xrc)
		shca_xrc_srq_put(srq);
	if (!ok)
		return false;
	shca_cqe_wc_copy(wc, &c);
	wc->qp = &qp->ibqp;
	if (c.wc_flags & IB_WC_WITH_IMM)
		wc->ex.imm_data = (__force __be32)c.imm_inv;
	if (c.wc_flags & IB_WC_WITH_INVALIDATE)
		wc->ex.invalidate_rkey = c.imm_inv;
	wc->port_num = 1;
	if ((cqe->flags & SHCA_CQE_F_GRH) &&
	    c.net_type < ARRAY_SIZE(shca_net_type)) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = shca_net_type[c.net_type];
	}
	return true;
}

/**
 * shca_poll_cq() - take completions off a CQ
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: where to put them
 *
 * Return: the number of completions taken.
 */
int shca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct shca_dev *sdev = to_shca_dev(ibcq->device);
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_hw_cqe *cqe;
	unsigned long flags;
	struct shca_qp *qp;
	int n = 0;

	if (cq->user) {
		/* Its process polls the mapped ring; the kernel has no wr_ids. */
		shca_dbg(sdev, "CQ %u: poll through the kernel\n", cq->cqn);
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->resizing) {
		cq->missed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		return 0;
	}
	while (n < num_entries) {
		cqe = shca_cq_next(cq);
		if (!cqe)
			break;
		qp = xa_load(&sdev->qps, cqe->qpn);
		cq->ci++;
		if (qp && shca_cqe_to_wc(qp, cqe, &wc[n])) {
			n++;
			continue;
		}
		/* The sweep leaves none of these: the model misbehaved. */
		shca_drv_count(sdev, SHCA_DRV_CNT_STRAY, 1);
		ibdev_err_ratelimited(&sdev->ibdev,
				      "CQ %u: CQE of QP %u names no outstanding work; skipped\n",
				      cq->cqn, cqe->qpn);
	}
	/* The device may reuse the slots only after we read them. */
	smp_store_release(&cq->dbrec->ci, cq->ci);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * shca_req_notify_cq() - arm a CQ for a completion event
 * @ibcq: the CQ
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, maybe with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Return: 0, or 1 when missed events were asked about and CQEs are waiting.
 */
int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct shca_dev *sdev = to_shca_dev(ibcq->device);
	struct shca_cq *cq = to_shca_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	shca_hw_arm_cq(sdev->hw, cq->cqn,
		       (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		       SHCA_CQ_ARM_SOLICITED : SHCA_CQ_ARM_NEXT);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !cq->user) {
		spin_lock_irqsave(&cq->lock, irqflags);
		/* Resizing: the resize calls the handler when it is done. */
		if (cq->resizing)
			cq->missed = true;
		else
			ret = shca_cq_next(cq) ? 1 : 0;
		spin_unlock_irqrestore(&cq->lock, irqflags);
	}
	return ret;
}
