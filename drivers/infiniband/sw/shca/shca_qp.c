// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: queue pair verbs and posting.
 *
 * Posting writes WQEs into the ring, publishes the producer index in the
 * doorbell record and rings the doorbell; the device takes it from there.
 * What a WQE may ask for depends on the QP type; anything else is refused
 * at post time with -EINVAL and @bad_wr set, and a full queue with -ENOMEM.
 */
#include <linux/log2.h>
#include <rdma/ib_cache.h>

#include "shca.h"

static const u8 shca_wqe_opcode[] = {
	[IB_WR_SEND]			= SHCA_WQE_SEND,
	[IB_WR_SEND_WITH_IMM]		= SHCA_WQE_SEND_IMM,
	[IB_WR_SEND_WITH_INV]		= SHCA_WQE_SEND_INV,
	[IB_WR_RDMA_WRITE]		= SHCA_WQE_RDMA_WRITE,
	[IB_WR_RDMA_WRITE_WITH_IMM]	= SHCA_WQE_RDMA_WRITE_IMM,
	[IB_WR_RDMA_READ]		= SHCA_WQE_RDMA_READ,
	[IB_WR_ATOMIC_CMP_AND_SWP]	= SHCA_WQE_ATOMIC_CS,
	[IB_WR_ATOMIC_FETCH_AND_ADD]	= SHCA_WQE_ATOMIC_FA,
	[IB_WR_LOCAL_INV]		= SHCA_WQE_LOCAL_INV,
	[IB_WR_REG_MR]			= SHCA_WQE_REG_MR,
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
	default:
		return SHCA_QPT_GSI;
	}
}

/* Which work requests a QP of @type takes. */
static bool shca_wr_opcode_ok(enum ib_qp_type type, enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

static int shca_wq_init(struct shca_wq *wq, u32 wr, bool user)
{
	/* The device takes rings of two entries or more. */
	wq->log_depth = order_base_2(max(wr, 2U));
	/* A process keeps its own wr_ids. */
	if (user)
		return 0;
	wq->wrid = kvcalloc(1U << wq->log_depth, sizeof(*wq->wrid),
			    GFP_KERNEL);
	return wq->wrid ? 0 : -ENOMEM;
}

static int shca_qp_check_caps(struct shca_dev *sdev,
			      const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;
	const struct shca_hw_caps *c = &sdev->caps;

	if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UC &&
	    init->qp_type != IB_QPT_UD && init->qp_type != IB_QPT_GSI) {
		shca_dbg(sdev, "QP type %d not supported\n", init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		shca_dbg(sdev, "QP create flags %#x not supported\n",
			 init->create_flags);
		return -EOPNOTSUPP;
	}
	if (!cap->max_send_wr || cap->max_send_wr > c->max_qp_wr ||
	    cap->max_send_sge > c->max_send_sge ||
	    cap->max_inline_data > c->max_inline_data ||
	    (!init->srq && (!cap->max_recv_wr ||
			    cap->max_recv_wr > c->max_qp_wr ||
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
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_CREATE_QP };
	struct shca_hw_qp_create *in = &cmd.in.qp;
	struct shca_hw_qp_query q;
	size_t sq_bytes, rq_bytes;
	void *dbrec;
	int err;

	if (udata) {
		err = shca_udata_create_cmd(sdev, udata, "QP");
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
	qp->state = IB_QPS_RESET;
	qp->max_send_sge = max(init->cap.max_send_sge, 1U);
	qp->max_recv_sge = max(init->cap.max_recv_sge, 1U);
	qp->max_inline = init->cap.max_inline_data;
	qp->user = !!udata;
	err = shca_wq_init(&qp->sq, init->cap.max_send_wr, qp->user);
	if (!err && !init->srq)
		err = shca_wq_init(&qp->rq, init->cap.max_recv_wr, qp->user);
	if (err)
		goto err_free;

	sq_bytes = sizeof(struct shca_hw_send_wqe) << qp->sq.log_depth;
	rq_bytes = init->srq ? 0 :
		   sizeof(struct shca_hw_recv_wqe) << qp->rq.log_depth;
	qp->buf = shca_buf_alloc(sq_bytes + rq_bytes, &dbrec);
	if (!qp->buf) {
		err = -ENOMEM;
		goto err_free;
	}
	qp->sq.ring = qp->buf;
	qp->rq.ring = init->srq ? NULL : qp->buf + sq_bytes;
	qp->dbrec = dbrec;

	in->type = shca_qp_type_to_hw(init->qp_type);
	in->pdn = to_shca_pd(ibqp->pd)->pdn;
	in->send_cqn = to_shca_cq(init->send_cq)->cqn;
	in->recv_cqn = to_shca_cq(init->recv_cq)->cqn;
	in->srqn = init->srq ? to_shca_srq(init->srq)->srqn : 0;
	in->sq.ring = qp->sq.ring;
	in->sq.log_depth = qp->sq.log_depth;
	in->rq.ring = qp->rq.ring;
	in->rq.log_depth = qp->rq.log_depth;
	in->dbrec = qp->dbrec;
	in->max_send_sge = qp->max_send_sge;
	in->max_recv_sge = qp->max_recv_sge;
	in->max_inline = qp->max_inline;
	in->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	in->user = qp->user;
	err = shca_cmd_exec(sdev, &cmd);
	if (err)
		goto err_free;
	qp->qpn = cmd.out.num;
	err = shca_cmd_query_qp(sdev, qp->qpn, &q);
	if (err)
		goto err_destroy;
	qp->gen = q.gen;
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
	init->cap.max_send_wr = 1U << qp->sq.log_depth;
	init->cap.max_send_sge = qp->max_send_sge;
	init->cap.max_inline_data = qp->max_inline;
	if (!init->srq) {
		init->cap.max_recv_wr = 1U << qp->rq.log_depth;
		init->cap.max_recv_sge = qp->max_recv_sge;
	}
	return 0;

err_destroy:
	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_QP,
				    .index = qp->qpn };
	shca_cmd_exec(sdev, &cmd);
err_free:
	shca_buf_release(qp->buf, qp->mmap);
	kvfree(qp->sq.wrid);
	kvfree(qp->rq.wrid);
	return err;
}

/* The fence is up; a test may hold the QP here before its sweep. */
static void shca_qp_fenced(struct shca_dev *sdev, struct shca_qp *qp)
{
	shca_hw_window_pass(sdev->hw, SHCA_WIN_FENCE_SWEEP, qp->qpn);
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
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_DESTROY_QP,
		.index = qp->qpn,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (err)
		return err;
	shca_qp_fenced(sdev, qp);
	shca_cq_sweep_qp(qp, true);
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->free);
	wait_for_completion(&qp->free);
	shca_buf_release(qp->buf, qp->mmap);
	kvfree(qp->sq.wrid);
	kvfree(qp->rq.wrid);
	return 0;
}

/**
 * shca_av_from_ah_attr() - the device's address vector for an ib_core one
 * @av: filled in
 * @attr: the address; RoCE addresses always carry a GRH
 */
void shca_av_from_ah_attr(struct shca_hw_av *av,
			  const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);

	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
}

static int shca_modify_to_hw(struct shca_dev *sdev, struct shca_qp *qp,
			     const struct ib_qp_attr *attr, int mask,
			     struct shca_hw_cmd *cmd)
{
	struct shca_hw_qp_attr *a = &cmd->in.qp_attr;
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
			shca_dbg(sdev, "QP %u: RoCE path without a GRH\n",
				 qp->qpn);
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
			shca_dbg(sdev, "QP %u: bad path MTU %d\n", qp->qpn,
				 attr->path_mtu);
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
	cmd->mask = m;
	return 0;
}

/* Start the driver's view of both work queues over, as after RESET. */
static void shca_qp_reset_queues(struct shca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	WRITE_ONCE(qp->sq.pi, 0);
	WRITE_ONCE(qp->sq.ci, 0);
	WRITE_ONCE(qp->dbrec->sq_pi, 0);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	spin_lock_irqsave(&qp->rq_lock, flags);
	WRITE_ONCE(qp->rq.pi, 0);
	WRITE_ONCE(qp->rq.ci, 0);
	WRITE_ONCE(qp->dbrec->rq_pi, 0);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
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
 * of its past in any CQ.
 *
 * Return: 0, -EINVAL for a transition or attribute the IBTA does not
 * allow, -EOPNOTSUPP for alternate paths and rate limits, or another
 * negative errno.
 */
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MODIFY_QP,
		.index = qp->qpn,
	};
	struct shca_hw_qp_query q;
	enum ib_qp_state cur, next;
	int err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return err;
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_RATE_LIMIT |
		    IB_QP_CAP)) {
		shca_dbg(sdev, "QP %u: unsupported attributes %#x\n", qp->qpn,
			 mask);
		return -EOPNOTSUPP;
	}
	/* The device may have moved the QP to SQE or ERR on its own. */
	err = shca_cmd_query_qp(sdev, qp->qpn, &q);
	if (err)
		return err;
	cur = q.attr.state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		shca_dbg(sdev, "QP %u: current state is %d, not %d\n",
			 qp->qpn, cur, attr->cur_qp_state);
		return -EINVAL;
	}
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		shca_dbg(sdev, "QP %u: %d -> %d with mask %#x not allowed\n",
			 qp->qpn, cur, next, mask);
		return -EINVAL;
	}
	if ((mask & IB_QP_PORT) && attr->port_num != 1) {
		shca_dbg(sdev, "QP %u: bad port %u\n", qp->qpn, attr->port_num);
		return -EINVAL;
	}
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= sdev->caps.max_pkeys) {
		shca_dbg(sdev, "QP %u: bad P_Key index %u\n", qp->qpn,
			 attr->pkey_index);
		return -EINVAL;
	}
	err = shca_modify_to_hw(sdev, qp, attr, mask, &cmd);
	if (err)
		return err;
	err = shca_cmd_exec(sdev, &cmd);
	if (err)
		return err;
	WRITE_ONCE(qp->state, next);
	if (next == IB_QPS_RESET) {
		/* Fenced by the device: sweep, then start the queues over. */
		shca_qp_fenced(sdev, qp);
		shca_cq_sweep_qp(qp, false);
		/* A process's queues are its own to start over. */
		if (!qp->user)
			shca_qp_reset_queues(qp);
	}
	return 0;
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
		 IB_ACCESS_REMOTE_ATOMIC : 0);
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
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC) {
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&attr->ah_attr, 1);
		rdma_ah_set_sl(&attr->ah_attr, av->sl);
		rdma_ah_set_grh(&attr->ah_attr, NULL, av->flow_label,
				av->sgid_index, av->hop_limit,
				av->traffic_class);
		rdma_ah_set_dgid_raw(&attr->ah_attr, av->dgid);
	}
	attr->cap.max_send_wr = 1U << qp->sq.log_depth;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (!ibqp->srq) {
		attr->cap.max_recv_wr = 1U << qp->rq.log_depth;
		attr->cap.max_recv_sge = qp->max_recv_sge;
	}
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

static int shca_build_inline(struct shca_qp *qp, const struct ib_send_wr *wr,
			     struct shca_hw_send_wqe *w)
{
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - len)
			return -EINVAL;
		memcpy(w->inline_data + len,
		       (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	w->inline_len = len;
	w->flags |= SHCA_WQE_F_INLINE;
	return 0;
}

/* Write one send WQE; -EINVAL if the QP cannot take it. */
static int shca_build_send(struct shca_dev *sdev, struct shca_qp *qp,
			   const struct ib_send_wr *wr,
			   struct shca_hw_send_wqe *w)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	const struct ib_reg_wr *reg;
	struct shca_mr *mr;
	int i;

	if (wr->opcode >= ARRAY_SIZE(shca_wqe_opcode) ||
	    !shca_wr_opcode_ok(type, wr->opcode)) {
		shca_dbg(sdev, "QP %u: opcode %d not valid for QP type %d\n",
			 qp->qpn, wr->opcode, type);
		return -EINVAL;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge) {
		shca_dbg(sdev, "QP %u: %d SGEs, %u allowed\n", qp->qpn,
			 wr->num_sge, qp->max_send_sge);
		return -EINVAL;
	}
	memset(w, 0, offsetof(struct shca_hw_send_wqe, sge));
	w->opcode = shca_wqe_opcode[wr->opcode];
	if (wr->send_flags & IB_SEND_SIGNALED)
		w->flags |= SHCA_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		w->flags |= SHCA_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		w->flags |= SHCA_WQE_F_FENCE;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->imm_inv = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->imm_inv = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->rdma.remote_addr = atomic_wr(wr)->remote_addr;
		w->rdma.rkey = atomic_wr(wr)->rkey;
		w->rdma.compare_add = atomic_wr(wr)->compare_add;
		w->rdma.swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_REG_MR:
		reg = reg_wr(wr);
		mr = to_shca_mr(reg->mr);
		w->reg.iova = mr->ibmr.iova;
		w->reg.length = mr->ibmr.length;
		w->reg.pbl = (uintptr_t)mr->pages;
		w->reg.key = reg->key;
		w->reg.access = shca_access_to_hw(reg->access);
		w->reg.npages = mr->npages;
		w->reg.page_shift = ilog2(mr->ibmr.page_size);
		return 0;
	case IB_WR_LOCAL_INV:
		return 0;
	default:
		break;
	}

	if (type == IB_QPT_UD || type == IB_QPT_GSI) {
		if (!ud_wr(wr)->ah) {
			shca_dbg(sdev, "QP %u: UD send without an AH\n",
				 qp->qpn);
			return -EINVAL;
		}
		w->ud.av = to_shca_ah(ud_wr(wr)->ah)->av;
		w->ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}

	if ((wr->send_flags & IB_SEND_INLINE) &&
	    wr->opcode != IB_WR_RDMA_READ &&
	    wr->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IB_WR_ATOMIC_FETCH_AND_ADD) {
		if (shca_build_inline(qp, wr, w)) {
			shca_dbg(sdev, "QP %u: inline data over %u bytes\n",
				 qp->qpn, qp->max_inline);
			return -EINVAL;
		}
		return 0;
	}
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/*
 * A process's QP: libshca wrote the WQEs and the producer index itself,
 * and a POST_SEND or POST_RECV without work requests is its doorbell (the
 * receive one matters only in ERR, where the device flushes what it finds
 * posted).  The kernel never writes a process's rings.
 */
static int shca_user_doorbell(struct shca_dev *sdev, struct shca_qp *qp,
			      bool send, const void *wr)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (wr) {
		shca_dbg(sdev, "QP %u: work requests through the kernel\n",
			 qp->qpn);
		return -EINVAL;
	}
	if (state == IB_QPS_RESET ||
	    (send && (state == IB_QPS_INIT || state == IB_QPS_RTR))) {
		shca_dbg(sdev, "QP %u: doorbell in state %d\n", qp->qpn, state);
		return -EINVAL;
	}
	/* A system call: the process may run the QP's turn itself. */
	if (send)
		shca_hw_ring_sq_run(sdev->hw, qp->qpn);
	else
		shca_hw_ring_rq(sdev->hw, qp->qpn);
	return 0;
}

/**
 * shca_post_send() - post work requests to a send queue
 * @ibqp: the QP
 * @wr: the first of a list of work requests; for a process's QP, NULL:
 *	the doorbell for what libshca posted
 * @bad_wr: set to the first one not posted, on error
 *
 * Return: 0; -EINVAL for a QP that cannot send yet or a request it cannot
 * take; -ENOMEM when the queue is full.
 */
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	u32 depth = 1U << qp->sq.log_depth;
	enum ib_qp_state state;
	unsigned long flags;
	bool posted = false;
	int err = 0;

	if (qp->user) {
		err = shca_user_doorbell(sdev, qp, true, wr);
		if (err)
			*bad_wr = wr;
		return err;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		shca_dbg(sdev, "QP %u: post send in state %d\n", qp->qpn,
			 state);
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		/* Pairs with polling's release: the slot's wr_id was read. */
		if (qp->sq.pi - smp_load_acquire(&qp->sq.ci) >= depth) {
			shca_dbg(sdev, "QP %u: send queue full\n", qp->qpn);
			err = -ENOMEM;
			break;
		}
		err = shca_build_send(sdev, qp, wr,
				      (struct shca_hw_send_wqe *)qp->sq.ring +
				      (qp->sq.pi & (depth - 1)));
		if (err)
			break;
		qp->sq.wrid[qp->sq.pi & (depth - 1)] = wr->wr_id;
		WRITE_ONCE(qp->sq.pi, qp->sq.pi + 1);
		posted = true;
	}
	if (posted)
		/* The WQEs must be visible before the index that names them. */
		smp_store_release(&qp->dbrec->sq_pi, qp->sq.pi);
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (posted)
		shca_hw_ring_sq(sdev->hw, qp->qpn);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * shca_post_recv() - post work requests to a receive queue
 * @ibqp: the QP
 * @wr: the first of a list of work requests
 * @bad_wr: set to the first one not posted, on error
 *
 * Return: 0; -EINVAL for a QP in RESET, one that uses an SRQ, or too many
 * SGEs; -ENOMEM when the queue is full.
 */
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct shca_qp *qp = to_shca_qp(ibqp);
	u32 depth = 1U << qp->rq.log_depth;
	struct shca_hw_recv_wqe *w;
	unsigned long flags;
	bool posted = false;
	int err = 0, i;

	if (ibqp->srq) {
		shca_dbg(sdev, "QP %u: post recv on an SRQ QP\n", qp->qpn);
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->user) {
		/* The device reads the receive producer index by itself. */
		err = shca_user_doorbell(sdev, qp, false, wr);
		if (err)
			*bad_wr = wr;
		return err;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		shca_dbg(sdev, "QP %u: post recv in RESET\n", qp->qpn);
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		/* Pairs with polling's release: the slot's wr_id was read. */
		if (qp->rq.pi - smp_load_acquire(&qp->rq.ci) >= depth) {
			shca_dbg(sdev, "QP %u: receive queue full\n", qp->qpn);
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > qp->max_recv_sge) {
			shca_dbg(sdev, "QP %u: %d receive SGEs, %u allowed\n",
				 qp->qpn, wr->num_sge, qp->max_recv_sge);
			err = -EINVAL;
			break;
		}
		w = (struct shca_hw_recv_wqe *)qp->rq.ring +
		    (qp->rq.pi & (depth - 1));
		w->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			w->sge[i].addr = wr->sg_list[i].addr;
			w->sge[i].length = wr->sg_list[i].length;
			w->sge[i].lkey = wr->sg_list[i].lkey;
		}
		qp->rq.wrid[qp->rq.pi & (depth - 1)] = wr->wr_id;
		WRITE_ONCE(qp->rq.pi, qp->rq.pi + 1);
		posted = true;
	}
	if (posted)
		/* The WQEs must be visible before the index that names them. */
		smp_store_release(&qp->dbrec->rq_pi, qp->rq.pi);
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (posted)
		shca_hw_ring_rq(sdev->hw, qp->qpn);
	if (err)
		*bad_wr = wr;
	return err;
}
