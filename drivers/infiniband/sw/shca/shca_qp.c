// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: queue pair verbs.  Posting is in shca_post.c.
 */
#include <linux/log2.h>
#include <rdma/ib_cache.h>

#include "shca.h"

/*
 * How often a modify starts again when the device has moved the QP on its
 * own (to SQE or ERR) since the state it was checked against: the device
 * moves a QP at most twice (RTS, SQE, ERR), so a third try is the last
 * that can need it, unless another modify races it.
 */
#define SHCA_QP_MODIFY_TRIES	4

static unsigned int max_mcast_per_process = 32;
module_param(max_mcast_per_process, uint, 0444);
MODULE_PARM_DESC(max_mcast_per_process,
		 "multicast attachments the QPs of one process may hold on one device (default 32; the kernel's QPs are not counted)");

/**
 * struct shca_mcast_quota - the multicast attachments of one process's QPs
 * @node: on &shca_dev.mcast_quotas
 * @tgid: the process; a reference is held on it
 * @used: the struct shca_mcast entries its QPs hold on the device
 */
struct shca_mcast_quota {
	struct list_head node;
	struct pid *tgid;
	unsigned int used;
};

static u32 shca_qp_type_to_hw(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return SHCA_QPT_RC;
	case IB_QPT_UC:
		return SHCA_QPT_UC;
	case IB_QPT_UD:
		return SHCA_QPT_UD;
	case IB_QPT_XRC_INI:
		return SHCA_QPT_XRC_INI;
	case IB_QPT_XRC_TGT:
		return SHCA_QPT_XRC_TGT;
	default:
		return SHCA_QPT_GSI;
	}
}

/* A queue for @wr work requests; its ring comes with the QP's buffer. */
static int shca_qp_wq_alloc(struct shca_wq *wq, u32 wr, bool user)
{
	u32 log_depth = shca_wq_log_depth(wr);
	u64 *wrid = NULL;

	/* A process keeps its own wr_ids. */
	if (!user) {
		wrid = kvcalloc(1U << log_depth, sizeof(*wrid), GFP_KERNEL);
		if (!wrid)
			return -ENOMEM;
	}
	shca_wq_init(wq, NULL, log_depth, wrid);
	return 0;
}

static int shca_qp_check_caps(struct shca_dev *sdev,
			      const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;
	const struct shca_hw_caps *c = &sdev->caps;

	if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UC &&
	    init->qp_type != IB_QPT_UD && init->qp_type != IB_QPT_GSI &&
	    init->qp_type != IB_QPT_XRC_INI && init->qp_type != IB_QPT_XRC_TGT) {
		shca_dbg(sdev, "QP type %d not supported\n", init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		shca_dbg(sdev, "QP create flags %#x not supported\n",
			 init->create_flags);
		return -EOPNOTSUPP;
	}
	/* A target QP has no queues: its sizes are nobody's business. */
	if (init->qp_type == IB_QPT_XRC_TGT) {
		if (init->xrcd)
			return 0;
		shca_dbg(sdev, "an XRC target QP needs an XRC domain\n");
		return -EINVAL;
	}
	if (init->qp_type == IB_QPT_XRC_INI && (init->recv_cq || init->srq)) {
		shca_dbg(sdev, "an XRC initiator QP receives nothing: no receive CQ or SRQ\n");
		return -EINVAL;
	}
	/*
	 * A queue of no work requests is allowed (a receive-only or a
	 * send-only QP); it gets the smallest ring, and the QP's caps say so.
	 */
	if (cap->max_send_wr > c->max_qp_wr ||
	    cap->max_send_sge > c->max_send_sge ||
	    cap->max_inline_data > c->max_inline_data ||
	    (!init->srq && init->qp_type != IB_QPT_XRC_INI &&
	     (cap->max_recv_wr > c->max_qp_wr ||
	      cap->max_recv_sge > c->max_recv_sge))) {
		shca_dbg(sdev, "QP caps out of range (wr %u/%u sge %u/%u inline %u)\n",
			 cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			 cap->max_recv_sge, cap->max_inline_data);
		return -EINVAL;
	}
	if (init->qp_type == IB_QPT_GSI && init->port_num != 1) {
		shca_dbg(sdev, "GSI QP on port %u\n", init->port_num);
		return -EINVAL;
	}
	return 0;
}

/*
 * What a QP's queues hold: nothing for a queue an XRC QP does not have;
 * an SRQ's receive sizes are the SRQ's, left as they are.
 */
static void shca_qp_caps(const struct shca_qp *qp, struct ib_qp_cap *cap,
			 bool srq)
{
	cap->max_send_wr = qp->sq.ring ? 1U << qp->sq.log_depth : 0;
	cap->max_send_sge = qp->sq.ring ? qp->max_send_sge : 0;
	cap->max_inline_data = qp->sq.ring ? qp->max_inline : 0;
	if (srq)
		return;
	cap->max_recv_wr = qp->rq.ring ? 1U << qp->rq.log_depth : 0;
	cap->max_recv_sge = qp->rq.ring ? qp->max_recv_sge : 0;
}

/* A process's QP: map the rings, say where and what was granted. */
static int shca_qp_user_init(struct shca_dev *sdev, struct shca_qp *qp,
			     struct ib_udata *udata, size_t sq_bytes,
			     size_t rq_bytes)
{
	size_t len = shca_buf_len(sq_bytes + rq_bytes);
	struct shca_create_qp_resp resp = {
		.mmap_len = len,
		.rq_offset = sq_bytes,
		.dbrec_offset = PAGE_ALIGN(sq_bytes + rq_bytes),
		.sq_log_depth = qp->sq.log_depth,
		.rq_log_depth = rq_bytes ? qp->rq.log_depth : 0,
		.max_send_sge = qp->max_send_sge,
		.max_recv_sge = qp->max_recv_sge,
		.max_inline = qp->max_inline,
		/* The model serves every QP whose record says lazy. */
		.flags = SHCA_QP_RESP_F_LAZY_DB,
	};
	int err;

	qp->mmap = shca_mmap_insert(udata, qp->buf, len, &resp.mmap_offset);
	if (IS_ERR(qp->mmap)) {
		err = PTR_ERR(qp->mmap);
		qp->mmap = NULL;
		return err;
	}
	return shca_udata_resp(sdev, udata, &resp, sizeof(resp));
}

/**
 * shca_create_qp() - create a queue pair
 * @ibqp: the object ib_core allocated
 * @init: type, CQs, SRQ and queue sizes; the sizes granted are written back
 * @udata: for a process's QP, struct shca_create_qp_cmd in and
 *	struct shca_create_qp_resp out; NULL for the kernel's
 *
 * Return: 0 or a negative errno.
 */
int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_hw_qp_create params = {};
	bool tgt = init->qp_type == IB_QPT_XRC_TGT;
	bool has_rq = !init->srq && !tgt && init->qp_type != IB_QPT_XRC_INI;
	struct shca_hw_obj_id id;
	size_t sq_bytes, rq_bytes;
	void *dbrec;
	int err;

	if (udata) {
		err = shca_udata_create_cmd(sdev, udata, "QP",
					    offsetofend(struct shca_create_qp_cmd,
							comp_mask));
		if (err)
			return err;
		if (init->qp_type == IB_QPT_GSI) {
			shca_dbg(sdev, "a process cannot create the GSI QP\n");
			return -EINVAL;
		}
	}
	err = shca_qp_check_caps(sdev, init);
	if (err)
		return err;

	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->free);
	mutex_init(&qp->mcast_mutex);
	INIT_LIST_HEAD(&qp->mcast);
	if (udata)
		qp->owner = get_task_pid(current, PIDTYPE_TGID);
	qp->state = IB_QPS_RESET;
	/* An XRC target QP has neither queue: the device needs none. */
	if (!tgt) {
		qp->max_send_sge = max(init->cap.max_send_sge, 1U);
		qp->max_inline = init->cap.max_inline_data;
	}
	if (has_rq)
		qp->max_recv_sge = max(init->cap.max_recv_sge, 1U);
	qp->user = !!udata;
	err = tgt ? 0 :
	      shca_qp_wq_alloc(&qp->sq, init->cap.max_send_wr, qp->user);
	if (!err && has_rq)
		err = shca_qp_wq_alloc(&qp->rq, init->cap.max_recv_wr,
				       qp->user);
	if (err)
		goto err_free;

	sq_bytes = tgt ? 0 :
		   sizeof(struct shca_hw_send_wqe) << qp->sq.log_depth;
	rq_bytes = !has_rq ? 0 :
		   sizeof(struct shca_hw_recv_wqe) << qp->rq.log_depth;
	qp->buf = qp->user ? shca_buf_alloc(sq_bytes + rq_bytes, &dbrec) :
		  shca_buf_alloc_kernel(sq_bytes + rq_bytes, &dbrec);
	if (!qp->buf) {
		err = -ENOMEM;
		goto err_free;
	}
	qp->sq.ring = tgt ? NULL : qp->buf;
	qp->rq.ring = has_rq ? qp->buf + sq_bytes : NULL;
	qp->dbrec = dbrec;

	params.type = shca_qp_type_to_hw(init->qp_type);
	params.pdn = tgt ? 0 : to_shca_pd(ibqp->pd)->pdn;
	params.send_cqn = tgt ? 0 : to_shca_cq(init->send_cq)->cqn;
	params.recv_cqn = init->recv_cq && !tgt ?
			  to_shca_cq(init->recv_cq)->cqn : 0;
	params.srqn = init->srq ? to_shca_srq(init->srq)->srqn : 0;
	qp->xrcd = tgt ? to_shca_xrcd(init->xrcd) : NULL;
	params.xrcdn = tgt ? qp->xrcd->xrcdn : 0;
	params.sq.ring = qp->sq.ring;
	params.sq.log_depth = qp->sq.log_depth;
	params.rq.ring = qp->rq.ring;
	params.rq.log_depth = qp->rq.log_depth;
	params.dbrec = qp->dbrec;
	params.max_send_sge = qp->max_send_sge;
	params.max_recv_sge = qp->max_recv_sge;
	params.max_inline = qp->max_inline;
	params.sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	params.user = qp->user;
	err = shca_cmd_create_qp(sdev, &params, &id);
	if (err)
		goto err_free;
	qp->qpn = id.num;
	qp->gen = id.gen;
	if (udata) {
		err = shca_qp_user_init(sdev, qp, udata, sq_bytes, rq_bytes);
		if (err)
			goto err_destroy;
	}
	/*
	 * The device frees a QPN when DESTROY_QP returns, before the driver
	 * has swept its CQEs; a QPN reissued at once waits for that.
	 */
	while ((err = xa_insert_irq(&sdev->qps, qp->qpn, qp, GFP_KERNEL)) ==
	       -EBUSY)
		wait_event(sdev->qpn_wait, !xa_load(&sdev->qps, qp->qpn));
	if (err)
		goto err_destroy;

	ibqp->qp_num = qp->qpn;
	shca_qp_caps(qp, &init->cap, init->srq);
	return 0;

err_destroy:
	shca_cmd_destroy_qp(sdev, qp->qpn);
err_free:
	shca_buf_release(qp->buf, qp->mmap);
	kvfree(qp->sq.wrid);
	kvfree(qp->rq.wrid);
	put_pid(qp->owner);
	return err;
}

/* The fence is up; a test may hold the QP here before its sweep. */
static void shca_qp_fenced(struct shca_dev *sdev, struct shca_qp *qp)
{
	shca_hw_window_pass(sdev->hw, SHCA_WIN_FENCE_SWEEP, qp->qpn);
}

/*
 * Undo shca_qp_mcast_restore(): detach the QP, still in RESET, from the
 * groups it attached.  DETACH_MCAST is a release and cannot fail for a QP
 * in the group; if it did, the entry stays marked attached, and RESET or
 * destroy takes the QP out of it.
 */
static void shca_qp_mcast_undo(struct shca_dev *sdev, struct shca_qp *qp)
{
	struct shca_mcast *m;

	lockdep_assert_held(&qp->mcast_mutex);
	list_for_each_entry(m, &qp->mcast, node)
		if (m->attached &&
		    !shca_cmd_detach_mcast(sdev, qp->qpn, m->mgid))
			m->attached = false;
}

/*
 * Charge a process's QP for one more group it is in, up to
 * max_mcast_per_process for all the process's QPs on the device; the
 * kernel's QPs are not counted.  Return: 0 or -ENOMEM.
 */
static int shca_mcast_charge(struct shca_dev *sdev, struct shca_qp *qp)
{
	unsigned int max = READ_ONCE(max_mcast_per_process);
	struct shca_mcast_quota *q;
	int err = 0;

	if (!qp->owner)
		return 0;
	mutex_lock(&sdev->mcast_quota_lock);
	list_for_each_entry(q, &sdev->mcast_quotas, node)
		if (q->tgid == qp->owner)
			goto found;
	if (!max) {
		q = NULL;
		goto full;
	}
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q) {
		err = -ENOMEM;
		goto out;
	}
	q->tgid = get_pid(qp->owner);
	list_add(&q->node, &sdev->mcast_quotas);
found:
	if (q->used < max) {
		q->used++;
		goto out;
	}
full:
	shca_qp_dbg(qp, "the process's QPs are in %u groups already (max_mcast_per_process)\n",
		    q ? q->used : 0);
	err = -ENOMEM;
out:
	mutex_unlock(&sdev->mcast_quota_lock);
	return err;
}

/* Undo one shca_mcast_charge(). */
static void shca_mcast_uncharge(struct shca_dev *sdev, struct shca_qp *qp)
{
	struct shca_mcast_quota *q;

	if (!qp->owner)
		return;
	mutex_lock(&sdev->mcast_quota_lock);
	list_for_each_entry(q, &sdev->mcast_quotas, node) {
		if (q->tgid != qp->owner)
			continue;
		if (!--q->used) {
			list_del(&q->node);
			put_pid(q->tgid);
			kfree(q);
		}
		break;
	}
	mutex_unlock(&sdev->mcast_quota_lock);
}

/* An entry of @qp's groups goes: its process is charged for one fewer. */
static void shca_qp_mcast_free(struct shca_dev *sdev, struct shca_qp *qp,
			       struct shca_mcast *m)
{
	lockdep_assert_held(&qp->mcast_mutex);
	list_del(&m->node);
	kfree(m);
	shca_mcast_uncharge(sdev, qp);
}

/* The device took the QP out of its groups: by RESET, or @destroy. */
static void shca_qp_mcast_forget(struct shca_dev *sdev, struct shca_qp *qp,
				 bool destroy)
{
	struct shca_mcast *m, *tmp;

	lockdep_assert_held(&qp->mcast_mutex);
	list_for_each_entry_safe(m, tmp, &qp->mcast, node) {
		m->attached = false;
		if (destroy)
			shca_qp_mcast_free(sdev, qp, m);
	}
}

/**
 * shca_destroy_qp() - destroy a queue pair
 * @ibqp: the QP
 * @udata: unused
 *
 * The device moves the QP to ERR, flushes its outstanding work and fences
 * it: when DESTROY_QP returns, nothing more is written for it.  Then every
 * CQE of the QP is swept from its CQs, and the QP leaves the table polling
 * looks CQEs up in.  When this returns, no poll returns a completion of
 * the QP, and none of another QP was lost or changed.
 *
 * Return: 0 or a negative errno.
 */
int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	int err;

	err = shca_cmd_destroy_qp(sdev, qp->qpn);
	if (err)
		return err;
	shca_qp_fenced(sdev, qp);
	if (ibqp->qp_type == IB_QPT_XRC_TGT)
		shca_xrc_sweep_tgt(qp, true);
	else
		shca_cq_sweep_qp(qp, true);
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->free);
	wait_for_completion(&qp->free);
	shca_buf_release(qp->buf, qp->mmap);
	kvfree(qp->sq.wrid);
	kvfree(qp->rq.wrid);
	/* The device took the QP out of its groups with its context. */
	mutex_lock(&qp->mcast_mutex);
	shca_qp_mcast_forget(sdev, qp, true);
	mutex_unlock(&qp->mcast_mutex);
	mutex_destroy(&qp->mcast_mutex);
	put_pid(qp->owner);
	return 0;
}

/*
 * Leaving RESET: put the QP back in every group its consumer holds
 * (ib_core counts it there; uverbs never asks again).  If the device
 * refuses one, the groups attached here are detached again, so the QP,
 * still in RESET, is in no group.
 */
static int shca_qp_mcast_restore(struct shca_dev *sdev, struct shca_qp *qp)
{
	struct shca_mcast *m;
	int err;

	lockdep_assert_held(&qp->mcast_mutex);
	list_for_each_entry(m, &qp->mcast, node) {
		if (!m->users || m->attached)
			continue;
		err = shca_cmd_attach_mcast(sdev, qp->qpn, m->mgid);
		if (err) {
			shca_qp_dbg(qp, "attach to %pI6c again refused: %d\n",
				    m->mgid, err);
			shca_qp_mcast_undo(sdev, qp);
			return err;
		}
		m->attached = true;
	}
	return 0;
}

static struct shca_mcast *shca_qp_mcast_find(struct shca_qp *qp,
					     const u8 *mgid)
{
	struct shca_mcast *m;

	lockdep_assert_held(&qp->mcast_mutex);
	list_for_each_entry(m, &qp->mcast, node)
		if (!memcmp(m->mgid, mgid, sizeof(m->mgid)))
			return m;
	return NULL;
}

/**
 * shca_attach_mcast() - attach a UD QP to a multicast group
 * @ibqp: the QP
 * @gid: the group's GID; ib_core checked that it is multicast
 * @lid: unused: RoCE has no LIDs
 *
 * A process's QPs together are in at most max_mcast_per_process groups on
 * the device, so that no process fills the device's table.
 *
 * Return: 0; -EEXIST if the QP is in the group already; -ENOMEM when the
 * device's group table, the group or its attachments are full, or the
 * process's QPs are in max_mcast_per_process groups already; -EINVAL
 * for a QP that is not UD or a GID that is not multicast.
 */
int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_mcast *m, *new = NULL;
	int err;

	mutex_lock(&qp->mcast_mutex);
	m = shca_qp_mcast_find(qp, gid->raw);
	if (!m) {
		new = kzalloc(sizeof(*new), GFP_KERNEL);
		if (!new) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(new->mgid, gid->raw, sizeof(new->mgid));
		m = new;
		err = shca_mcast_charge(sdev, qp);
		if (err) {
			kfree(new);
			goto out;
		}
	}
	err = shca_cmd_attach_mcast(sdev, qp->qpn, gid->raw);
	if (err) {
		shca_qp_dbg(qp, "attach to %pI6c refused: %d\n", gid->raw, err);
		if (new)
			shca_mcast_uncharge(sdev, qp);
		kfree(new);
		goto out;
	}
	if (new)
		list_add_tail(&new->node, &qp->mcast);
	m->attached = true;
	m->users++;
out:
	mutex_unlock(&qp->mcast_mutex);
	return err;
}

/**
 * shca_detach_mcast() - detach a UD QP from a multicast group
 * @ibqp: the QP
 * @gid: the group's GID
 * @lid: unused: RoCE has no LIDs
 *
 * After a RESET, which took the QP out of every group, the detach of a
 * group it was attached to succeeds without a device command: ib_core
 * still counts the attachment.
 *
 * Return: 0; -ENOENT if the QP is not in the group; -EINVAL for a QP that
 * is not UD or a GID that is not multicast.
 */
int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_mcast *m;
	int err = 0;

	mutex_lock(&qp->mcast_mutex);
	m = shca_qp_mcast_find(qp, gid->raw);
	if (!m || m->attached)
		err = shca_cmd_detach_mcast(sdev, qp->qpn, gid->raw);
	if (err) {
		shca_qp_dbg(qp, "detach from %pI6c refused: %d\n", gid->raw,
			    err);
	} else if (m) {
		m->attached = false;
		if (!--m->users)
			shca_qp_mcast_free(sdev, qp, m);
	}
	mutex_unlock(&qp->mcast_mutex);
	return err;
}

/* The device's attributes for ib_core's, and the mask of those written. */
static int shca_modify_to_hw(struct shca_dev *sdev, struct shca_qp *qp,
			     const struct ib_qp_attr *attr, int mask,
			     struct shca_hw_qp_attr *a, u32 *hw_mask)
{
	u32 m = 0;

	if (mask & IB_QP_STATE) {
		m |= SHCA_QP_ATTR_STATE;
		a->state = attr->qp_state;
	}
	if (mask & IB_QP_ACCESS_FLAGS) {
		m |= SHCA_QP_ATTR_ACCESS;
		a->access = shca_access_to_hw(attr->qp_access_flags);
	}
	if (mask & IB_QP_QKEY) {
		m |= SHCA_QP_ATTR_QKEY;
		a->qkey = attr->qkey;
	}
	if (mask & IB_QP_AV) {
		if (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH)) {
			shca_qp_dbg(qp, "RoCE path without a GRH\n");
			return -EINVAL;
		}
		m |= SHCA_QP_ATTR_AV;
		shca_av_from_ah_attr(&a->av, &attr->ah_attr);
	}
	if (mask & IB_QP_DEST_QPN) {
		m |= SHCA_QP_ATTR_DEST_QPN;
		a->dest_qpn = attr->dest_qp_num;
	}
	if (mask & IB_QP_RQ_PSN) {
		m |= SHCA_QP_ATTR_RQ_PSN;
		a->rq_psn = attr->rq_psn;
	}
	if (mask & IB_QP_SQ_PSN) {
		m |= SHCA_QP_ATTR_SQ_PSN;
		a->sq_psn = attr->sq_psn;
	}
	if (mask & IB_QP_PATH_MTU) {
		if (attr->path_mtu < IB_MTU_256 ||
		    ib_mtu_enum_to_int(attr->path_mtu) > sdev->caps.max_mtu) {
			shca_qp_dbg(qp, "bad path MTU %d\n", attr->path_mtu);
			return -EINVAL;
		}
		m |= SHCA_QP_ATTR_MTU;
		a->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT) {
		m |= SHCA_QP_ATTR_TIMEOUT;
		a->timeout = attr->timeout;
	}
	if (mask & IB_QP_RETRY_CNT) {
		m |= SHCA_QP_ATTR_RETRY_CNT;
		a->retry_cnt = attr->retry_cnt;
	}
	if (mask & IB_QP_RNR_RETRY) {
		m |= SHCA_QP_ATTR_RNR_RETRY;
		a->rnr_retry = attr->rnr_retry;
	}
	if (mask & IB_QP_MIN_RNR_TIMER) {
		m |= SHCA_QP_ATTR_MIN_RNR_TIMER;
		a->min_rnr_timer = attr->min_rnr_timer;
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC) {
		if (attr->max_rd_atomic > sdev->caps.max_qp_init_rd_atom)
			return -EINVAL;
		m |= SHCA_QP_ATTR_MAX_RD_ATOMIC;
		a->max_rd_atomic = attr->max_rd_atomic;
	}
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic > sdev->caps.max_qp_rd_atom)
			return -EINVAL;
		m |= SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC;
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	}
	if (mask & IB_QP_PKEY_INDEX) {
		m |= SHCA_QP_ATTR_PKEY_INDEX;
		a->pkey_index = attr->pkey_index;
	}
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) {
		m |= SHCA_QP_ATTR_SQD_NOTIFY;
		a->sqd_notify = attr->en_sqd_async_notify;
	}
	*hw_mask = m;
	return 0;
}

/* Start the driver's view of both work queues over, as after RESET. */
static void shca_qp_reset_queues(struct shca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	shca_wq_reset(&qp->sq, &qp->dbrec->sq_pi);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	spin_lock_irqsave(&qp->rq_lock, flags);
	shca_wq_reset(&qp->rq, &qp->dbrec->rq_pi);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

/*
 * One MODIFY_QP from @cur, which the device checks: -EAGAIN, with the
 * state the QP is in put in @now, if it has left @cur meanwhile.
 */
static int shca_modify_qp_from(struct shca_dev *sdev, struct shca_qp *qp,
			       struct ib_qp_attr *attr, int mask,
			       enum ib_qp_state cur, enum ib_qp_state next,
			       enum ib_qp_state *now)
{
	struct shca_hw_qp_attr hw_attr = {};
	u32 hw_mask, state = SHCA_QPS_NUM;
	bool restore;
	int err;

	err = shca_modify_to_hw(sdev, qp, attr, mask, &hw_attr, &hw_mask);
	if (err)
		return err;
	hw_attr.cur_state = cur;
	hw_mask |= SHCA_QP_ATTR_CUR_STATE;
	/*
	 * RESET leaves every group and leaving it restores them: no attach
	 * or detach may slip in between.
	 */
	restore = cur == IB_QPS_RESET && next != IB_QPS_RESET;
	if (next == IB_QPS_RESET || restore) {
		mutex_lock(&qp->mcast_mutex);
		err = restore ? shca_qp_mcast_restore(sdev, qp) : 0;
		if (!err)
			err = shca_cmd_modify_qp(sdev, qp->qpn, &hw_attr,
						 hw_mask, &state);
		if (!err && next == IB_QPS_RESET)
			shca_qp_mcast_forget(sdev, qp, false);
		else if (err && restore)
			shca_qp_mcast_undo(sdev, qp);
		mutex_unlock(&qp->mcast_mutex);
	} else {
		err = shca_cmd_modify_qp(sdev, qp->qpn, &hw_attr, hw_mask,
					 &state);
	}
	if (err == -EINVAL && state < SHCA_QPS_NUM && state != cur) {
		*now = state;
		return -EAGAIN;
	}
	if (err)
		return err;
	WRITE_ONCE(qp->state, next);
	if (next == IB_QPS_RESET) {
		/* Fenced by the device: sweep, then start the queues over. */
		shca_qp_fenced(sdev, qp);
		if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
			shca_xrc_sweep_tgt(qp, false);
		else
			shca_cq_sweep_qp(qp, false);
		/* A process's queues are its own to start over. */
		if (!qp->user)
			shca_qp_reset_queues(qp);
	}
	return 0;
}

/**
 * shca_modify_qp() - change a queue pair's state and attributes
 * @ibqp: the QP
 * @attr: the attributes
 * @mask: which of them to change
 * @udata: must carry nothing
 *
 * Moving to RESET sweeps the QP's CQEs from its CQs as destroy does, and
 * empties both work queues: a QP reset for reuse starts with no completion
 * of its past in any CQ.  The device takes a QP in RESET out of every
 * multicast group; leaving RESET attaches it again to those its consumer
 * still holds, and fails with the device's errno, the QP left in RESET
 * and in no group, if one is refused.
 *
 * Return: 0, -EINVAL for a transition or attribute the IBTA does not
 * allow, -EOPNOTSUPP for alternate paths and rate limits, -EBUSY if the
 * device moved the QP on its own under every one of a few tries, or
 * another negative errno.
 */
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	enum ib_qp_state cur, next;
	struct shca_hw_qp_query q;
	bool fresh = false;
	int err, tries;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return err;
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_RATE_LIMIT |
		    IB_QP_CAP)) {
		shca_qp_dbg(qp, "unsupported attributes %#x\n", mask);
		return -EOPNOTSUPP;
	}
	if ((mask & IB_QP_PORT) && attr->port_num != 1) {
		shca_qp_dbg(qp, "bad port %u\n", attr->port_num);
		return -EINVAL;
	}
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= sdev->caps.max_pkeys) {
		shca_qp_dbg(qp, "bad P_Key index %u\n", attr->pkey_index);
		return -EINVAL;
	}
	/*
	 * Start from the state this layer last set.  The device may have
	 * left it on its own (for SQE or ERR): a request that is wrong for
	 * it is checked again against the state read afresh, and the
	 * device refuses a modify from a state the QP is no longer in,
	 * saying which it is in.
	 */
	cur = READ_ONCE(qp->state);
	for (tries = 0; tries < SHCA_QP_MODIFY_TRIES; tries++) {
		next = mask & IB_QP_STATE ? attr->qp_state : cur;
		if (((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) ||
		    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
			if (!fresh) {
				err = shca_cmd_query_qp(sdev, qp->qpn, &q);
				if (err)
					return err;
				cur = q.attr.state;
				fresh = true;
				continue;
			}
			if ((mask & IB_QP_CUR_STATE) &&
			    attr->cur_qp_state != cur)
				shca_qp_dbg(qp, "current state is %d, not %d\n",
					    cur, attr->cur_qp_state);
			else
				shca_qp_dbg(qp, "%d -> %d with mask %#x not allowed\n",
					    cur, next, mask);
			return -EINVAL;
		}
		err = shca_modify_qp_from(sdev, qp, attr, mask, cur, next,
					  &cur);
		if (err != -EAGAIN)
			return err;
		fresh = true;
	}
	shca_qp_dbg(qp, "the device moved the QP under %d modifies\n", tries);
	return -EBUSY;
}

static const enum ib_mtu shca_mtu_enum[] = {
	IB_MTU_256, IB_MTU_512, IB_MTU_1024, IB_MTU_2048, IB_MTU_4096,
};

/**
 * shca_query_qp() - read a queue pair's attributes back from the device
 * @ibqp: the QP
 * @attr: filled in
 * @mask: the attributes asked for; all are returned
 * @init: filled in with what the QP was created with
 *
 * Return: 0 or a negative errno.
 */
int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_hw_qp_query q;
	struct shca_hw_av *av = &q.attr.av;
	int err;

	err = shca_cmd_query_qp(sdev, qp->qpn, &q);
	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = q.attr.state;
	attr->cur_qp_state = q.attr.state;
	attr->path_mtu = shca_mtu_enum[clamp(ilog2(max(q.attr.mtu, 256U)) - 8,
					     0, 4)];
	attr->qkey = q.attr.qkey;
	attr->rq_psn = q.attr.rq_psn;
	attr->sq_psn = q.attr.sq_psn;
	attr->dest_qp_num = q.attr.dest_qpn;
	attr->qp_access_flags =
		(q.attr.access & SHCA_ACCESS_LOCAL_WRITE ?
		 IB_ACCESS_LOCAL_WRITE : 0) |
		(q.attr.access & SHCA_ACCESS_REMOTE_WRITE ?
		 IB_ACCESS_REMOTE_WRITE : 0) |
		(q.attr.access & SHCA_ACCESS_REMOTE_READ ?
		 IB_ACCESS_REMOTE_READ : 0) |
		(q.attr.access & SHCA_ACCESS_REMOTE_ATOMIC ?
		 IB_ACCESS_REMOTE_ATOMIC : 0) |
		(q.attr.access & SHCA_ACCESS_FLUSH_GLOBAL ?
		 IB_ACCESS_FLUSH_GLOBAL : 0) |
		(q.attr.access & SHCA_ACCESS_FLUSH_PERSISTENT ?
		 IB_ACCESS_FLUSH_PERSISTENT : 0);
	attr->pkey_index = q.attr.pkey_index;
	attr->en_sqd_async_notify = q.attr.sqd_notify;
	attr->sq_draining = 0;
	attr->max_rd_atomic = q.attr.max_rd_atomic;
	attr->max_dest_rd_atomic = q.attr.max_dest_rd_atomic;
	attr->min_rnr_timer = q.attr.min_rnr_timer;
	attr->port_num = 1;
	attr->timeout = q.attr.timeout;
	attr->retry_cnt = q.attr.retry_cnt;
	attr->rnr_retry = q.attr.rnr_retry;
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC ||
	    ibqp->qp_type == IB_QPT_XRC_INI || ibqp->qp_type == IB_QPT_XRC_TGT) {
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&attr->ah_attr, 1);
		rdma_ah_set_sl(&attr->ah_attr, av->sl);
		rdma_ah_set_grh(&attr->ah_attr, NULL, av->flow_label,
				av->sgid_index, av->hop_limit,
				av->traffic_class);
		rdma_ah_set_dgid_raw(&attr->ah_attr, av->dgid);
	}
	shca_qp_caps(qp, &attr->cap, ibqp->srq);
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->port_num = 1;
	return 0;
}
