// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the QP and SRQ context tables, the QP state
 * machine and the work queue doorbells.
 *
 * QPNs are 24 bits and handed out cyclically from 2 (QP0 does not exist on
 * a RoCE port; QP1 is the GSI QP), so a freed QPN is not reissued until
 * the space wraps.  Each QP also has a generation, which events carry: a
 * device-wide count of the QPs created, so a reissued QPN never comes back
 * with a generation it had before (not until 2^32 QPs later), and the
 * device keeps nothing for a QPN nobody holds.
 *
 * Fencing a QP (RESET, destroy) stops its execution unit and waits out any
 * inbound message its responder is handling; after that the engine writes
 * nothing for it.
 */
#include <kunit/visibility.h>
#include <linux/slab.h>

#include "shca_hw_int.h"

/**
 * shca_hw_qp_get() - look up a live QP context and hold it
 * @hw: the device
 * @qpn: the QP number
 *
 * Return: the context, or NULL.
 */
struct shca_hw_qp *shca_hw_qp_get(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&hw->qps, flags);
	qp = xa_load(&hw->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&hw->qps, flags);
	return qp;
}

/**
 * shca_hw_qp_put() - drop a hold on a QP context
 * @qp: the context
 */
void shca_hw_qp_put(struct shca_hw_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->done);
}

static struct shca_hw_srq *shca_hw_srq_get(struct shca_hw *hw, u32 srqn)
{
	struct shca_hw_srq *srq;
	unsigned long flags;

	xa_lock_irqsave(&hw->srqs, flags);
	srq = xa_load(&hw->srqs, srqn);
	if (srq && !refcount_inc_not_zero(&srq->ref))
		srq = NULL;
	xa_unlock_irqrestore(&hw->srqs, flags);
	return srq;
}

/**
 * shca_hw_srq_put() - drop a hold on an SRQ context
 * @srq: the context
 */
void shca_hw_srq_put(struct shca_hw_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		wake_up_var(&srq->ref);
}

/**
 * shca_hw_qp_event() - raise an affiliated event on a QP
 * @qp: the QP
 * @event: the event
 */
void shca_hw_qp_event(struct shca_hw_qp *qp, enum shca_hw_event event)
{
	shca_hw_eq_raise(qp->hw, &qp->ev, event);
}

static void shca_hw_qp_kick(struct shca_hw_qp *qp)
{
	queue_delayed_work(qp->hw->engine_wq, &qp->engine, 0);
}

/**
 * shca_hw_qp_to_err() - move a QP to the error state
 * @qp: the QP, locked
 *
 * Its execution unit then flushes both work queues.
 */
void shca_hw_qp_to_err(struct shca_hw_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->attr.state == SHCA_QPS_RESET || qp->fenced)
		return;
	qp->attr.state = SHCA_QPS_ERR;
	mod_delayed_work(qp->hw->engine_wq, &qp->engine, 0);
}

/**
 * shca_hw_srq_pop() - take the next posted WQE from an SRQ
 * @srq: the SRQ
 * @wqe: where to copy it
 * @slot: set to the slot it came from
 *
 * Raises the limit event, once per arming, when fewer WQEs than the limit
 * remain.
 *
 * Return: false if the SRQ is empty.
 */
bool shca_hw_srq_pop(struct shca_hw_srq *srq, struct shca_hw_recv_wqe *wqe,
		     u32 *slot)
{
	u32 mask = (1U << srq->log_depth) - 1;
	unsigned long flags;
	bool fire = false;
	u32 pi;

	spin_lock_irqsave(&srq->lock, flags);
	/* Pairs with the driver's release: slots and ring entries are set. */
	pi = smp_load_acquire(&srq->dbrec->pi);
	if (pi == srq->ci || pi - srq->ci > mask + 1) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return false;
	}
	*slot = READ_ONCE(srq->index_ring[srq->ci & mask]) & mask;
	memcpy(wqe, &srq->slots[*slot], sizeof(*wqe));
	srq->ci++;
	if (srq->limit && pi - srq->ci < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (fire)
		shca_hw_eq_raise(srq->hw, &srq->ev, SHCA_EV_SRQ_LIMIT);
	return true;
}

static bool shca_hw_wq_ok(const struct shca_hw_wq_desc *wq, u32 max_depth)
{
	return wq->ring && wq->log_depth &&
	       wq->log_depth <= SHCA_HW_MAX_LOG_DEPTH &&
	       (1U << wq->log_depth) <= max_depth;
}

static void shca_hw_qp_unlink(struct shca_hw_qp *qp)
{
	if (qp->scq) {
		atomic_dec(&qp->scq->assoc);
		shca_hw_cq_put(qp->scq);
	}
	if (qp->rcq) {
		atomic_dec(&qp->rcq->assoc);
		shca_hw_cq_put(qp->rcq);
	}
	if (qp->srq) {
		atomic_dec(&qp->srq->assoc);
		shca_hw_srq_put(qp->srq);
	}
}

static enum shca_hw_status shca_hw_create_qp(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd)
{
	const struct shca_hw_qp_create *in = &cmd->in.qp;
	const struct shca_hw_caps *caps = hw->caps;
	enum shca_hw_status status;
	struct shca_hw_qp *qp;
	u32 qpn;
	int err;

	if (in->type > SHCA_QPT_GSI || !in->pdn || in->pdn > caps->max_pd ||
	    !in->dbrec || !shca_hw_wq_ok(&in->sq, caps->max_qp_wr) ||
	    (!in->srqn && !shca_hw_wq_ok(&in->rq, caps->max_qp_wr)) ||
	    in->max_send_sge > SHCA_HW_MAX_SGE ||
	    in->max_recv_sge > SHCA_HW_MAX_SGE ||
	    in->max_inline > SHCA_HW_MAX_INLINE)
		return SHCA_HW_BAD_PARAM;
	if (hw->nr_qps >= caps->max_qp)
		return SHCA_HW_NO_RESOURCES;

	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp)
		return SHCA_HW_NO_RESOURCES;
	qp->hw = hw;
	qp->type = in->type;
	qp->pdn = in->pdn;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->done);
	mutex_init(&qp->modify_mutex);
	mutex_init(&qp->turn_mutex);
	mutex_init(&qp->resp_mutex);
	spin_lock_init(&qp->lock);
	INIT_DELAYED_WORK(&qp->engine, shca_hw_engine_run);
	qp->attr.state = SHCA_QPS_RESET;
	qp->attr.mtu = 1024;
	qp->sq.ring = in->sq.ring;
	qp->sq.log_depth = in->sq.log_depth;
	if (!in->srqn) {
		qp->rq.ring = in->rq.ring;
		qp->rq.log_depth = in->rq.log_depth;
	}
	qp->dbrec = in->dbrec;
	qp->max_send_sge = in->max_send_sge;
	qp->max_recv_sge = in->max_recv_sge;
	qp->max_inline = in->max_inline;
	qp->sig_all = in->sig_all;
	qp->user = in->user;

	status = SHCA_HW_BAD_INDEX;
	qp->scq = shca_hw_cq_get(hw, in->send_cqn);
	if (qp->scq)
		atomic_inc(&qp->scq->assoc);
	qp->rcq = shca_hw_cq_get(hw, in->recv_cqn);
	if (qp->rcq)
		atomic_inc(&qp->rcq->assoc);
	if (in->srqn) {
		qp->srq = shca_hw_srq_get(hw, in->srqn);
		if (qp->srq)
			atomic_inc(&qp->srq->assoc);
	}
	if (!qp->scq || !qp->rcq || (in->srqn && !qp->srq) ||
	    (qp->srq && qp->srq->pdn != qp->pdn))
		goto err;

	/* Reserve the number first: lookups find nothing until it is live. */
	if (in->type == SHCA_QPT_GSI) {
		qpn = SHCA_HW_GSI_QPN;
		err = xa_insert_irq(&hw->qps, qpn, NULL, GFP_KERNEL);
		status = err == -EBUSY ? SHCA_HW_BUSY : SHCA_HW_NO_RESOURCES;
	} else {
		err = xa_alloc_cyclic_irq(&hw->qps, &qpn, NULL,
					  XA_LIMIT(SHCA_HW_FIRST_QPN,
						   SHCA_HW_QPN_MASK),
					  &hw->next_qpn, GFP_KERNEL);
		status = SHCA_HW_NO_RESOURCES;
	}
	if (err < 0)
		goto err;
	qp->qpn = qpn;
	/* Never 0, and never a generation an earlier QP had. */
	if (!++hw->qp_gen)
		++hw->qp_gen;
	qp->gen = hw->qp_gen;
	shca_hw_evsrc_init(&qp->ev, SHCA_EQE_QP, qpn, qp->gen);
	xa_store_irq(&hw->qps, qpn, qp, GFP_KERNEL);
	hw->nr_qps++;
	cmd->out.num = qpn;
	return SHCA_HW_OK;

err:
	shca_hw_qp_unlink(qp);
	kfree(qp);
	return status;
}

/* The transitions IBTA allows, whatever the attributes. */
static bool shca_hw_qp_transition_ok(u32 type, u32 cur, u32 next)
{
	if (next == SHCA_QPS_RESET || next == SHCA_QPS_ERR)
		return true;
	switch (cur) {
	case SHCA_QPS_RESET:
		return next == SHCA_QPS_INIT;
	case SHCA_QPS_INIT:
		return next == SHCA_QPS_INIT || next == SHCA_QPS_RTR;
	case SHCA_QPS_RTR:
		return next == SHCA_QPS_RTS;
	case SHCA_QPS_RTS:
		return next == SHCA_QPS_RTS || next == SHCA_QPS_SQD;
	case SHCA_QPS_SQD:
		return next == SHCA_QPS_SQD || next == SHCA_QPS_RTS;
	case SHCA_QPS_SQE:
		return next == SHCA_QPS_RTS && type != SHCA_QPT_RC;
	default:
		return false;
	}
}

/*
 * Stop everything the engine does for @qp and wait until it is done.  The
 * caller has already set a state or flag that keeps new work from starting.
 */
static void shca_hw_qp_fence(struct shca_hw_qp *qp)
{
	cancel_delayed_work_sync(&qp->engine);
	/* A doorbell may be running the turn in its caller's context. */
	mutex_lock(&qp->turn_mutex);
	mutex_unlock(&qp->turn_mutex);
	mutex_lock(&qp->resp_mutex);
	mutex_unlock(&qp->resp_mutex);
}

static void shca_hw_qp_apply(struct shca_hw_qp *qp, u32 mask,
			     const struct shca_hw_qp_attr *in)
{
	struct shca_hw_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->lock);
	if (mask & SHCA_QP_ATTR_ACCESS)
		a->access = in->access;
	if (mask & SHCA_QP_ATTR_QKEY)
		a->qkey = in->qkey;
	if (mask & SHCA_QP_ATTR_AV)
		a->av = in->av;
	if (mask & SHCA_QP_ATTR_DEST_QPN)
		a->dest_qpn = in->dest_qpn & SHCA_HW_QPN_MASK;
	if (mask & SHCA_QP_ATTR_RQ_PSN)
		a->rq_psn = in->rq_psn;
	if (mask & SHCA_QP_ATTR_SQ_PSN)
		a->sq_psn = in->sq_psn;
	if (mask & SHCA_QP_ATTR_MTU)
		a->mtu = in->mtu;
	if (mask & SHCA_QP_ATTR_TIMEOUT)
		a->timeout = in->timeout;
	if (mask & SHCA_QP_ATTR_RETRY_CNT)
		a->retry_cnt = in->retry_cnt;
	if (mask & SHCA_QP_ATTR_RNR_RETRY)
		a->rnr_retry = in->rnr_retry;
	if (mask & SHCA_QP_ATTR_MIN_RNR_TIMER)
		a->min_rnr_timer = in->min_rnr_timer;
	if (mask & SHCA_QP_ATTR_MAX_RD_ATOMIC)
		a->max_rd_atomic = in->max_rd_atomic;
	if (mask & SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = in->max_dest_rd_atomic;
	if (mask & SHCA_QP_ATTR_PKEY_INDEX)
		a->pkey_index = in->pkey_index;
	if (mask & SHCA_QP_ATTR_SQD_NOTIFY)
		a->sqd_notify = in->sqd_notify;
}

static enum shca_hw_status shca_hw_modify_qp(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd)
{
	const struct shca_hw_qp_attr *in = &cmd->in.qp_attr;
	struct shca_hw_qp *qp;
	u32 cur, next;

	if (cmd->mask & ~GENMASK(15, 0))
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_STATE) && in->state >= SHCA_QPS_NUM)
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_ACCESS) && (in->access & ~SHCA_ACCESS_ALL))
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_PKEY_INDEX) &&
	    in->pkey_index >= hw->caps->max_pkeys)
		return SHCA_HW_BAD_PARAM;
	if ((cmd->mask & SHCA_QP_ATTR_AV) &&
	    in->av.sgid_index >= hw->caps->gid_tbl_len)
		return SHCA_HW_BAD_PARAM;
	qp = shca_hw_qp_get(hw, cmd->index);
	if (!qp)
		return SHCA_HW_BAD_INDEX;

	/*
	 * Per QP, not per device: a modify to RESET waits out the QP's turn
	 * and its responder, which may be in the middle of a large copy.
	 */
	mutex_lock(&qp->modify_mutex);
	spin_lock_irq(&qp->lock);
	if (qp->fenced) {
		/* Destroyed meanwhile: it is nobody's to modify. */
		spin_unlock_irq(&qp->lock);
		mutex_unlock(&qp->modify_mutex);
		shca_hw_qp_put(qp);
		return SHCA_HW_BAD_INDEX;
	}
	cur = qp->attr.state;
	next = cmd->mask & SHCA_QP_ATTR_STATE ? in->state : cur;
	if (!shca_hw_qp_transition_ok(qp->type, cur, next)) {
		spin_unlock_irq(&qp->lock);
		mutex_unlock(&qp->modify_mutex);
		shca_hw_qp_put(qp);
		return SHCA_HW_BAD_STATE;
	}
	shca_hw_qp_apply(qp, cmd->mask, in);
	qp->attr.state = next;
	if (cur == SHCA_QPS_RESET && next != SHCA_QPS_RESET) {
		/* Whatever was posted before is not the device's business. */
		qp->sq.ci = READ_ONCE(qp->dbrec->sq_pi);
		qp->rq.ci = READ_ONCE(qp->dbrec->rq_pi);
		qp->last_wqe_sent = false;
	}
	if (next == SHCA_QPS_SQD && cur != SHCA_QPS_SQD)
		qp->sqd_notified = false;
	if (next == SHCA_QPS_RTR && cur != SHCA_QPS_RTR)
		qp->comm_est_sent = false;
	if (next == SHCA_QPS_RTS && cur != SHCA_QPS_RTS) {
		qp->rnr_left = qp->attr.rnr_retry;
		qp->retry_left = qp->attr.retry_cnt;
	}
	spin_unlock_irq(&qp->lock);

	if (next == SHCA_QPS_RESET)
		shca_hw_qp_fence(qp);
	else if (next == SHCA_QPS_ERR)
		mod_delayed_work(hw->engine_wq, &qp->engine, 0);
	else if (next != cur || next == SHCA_QPS_RTS)
		shca_hw_qp_kick(qp);
	mutex_unlock(&qp->modify_mutex);
	shca_hw_qp_put(qp);
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_query_qp(struct shca_hw *hw,
					    struct shca_hw_cmd *cmd)
{
	struct shca_hw_qp_query *out = &cmd->out.qp;
	struct shca_hw_qp *qp = shca_hw_qp_get(hw, cmd->index);

	if (!qp)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irq(&qp->lock);
	out->attr = qp->attr;
	out->type = qp->type;
	out->gen = qp->gen;
	out->sq_pi = READ_ONCE(qp->dbrec->sq_pi);
	out->sq_ci = qp->sq.ci;
	out->rq_pi = qp->srq ? 0 : READ_ONCE(qp->dbrec->rq_pi);
	out->rq_ci = qp->rq.ci;
	spin_unlock_irq(&qp->lock);
	shca_hw_qp_put(qp);
	return SHCA_HW_OK;
}

/*
 * Take a QP out of its table, under the command mutex: from then on no
 * lookup finds it (no doorbell, command or inbound message), but its QPN
 * stays reserved, so a QP created meanwhile cannot get it.  What is left
 * of the destroy waits for this QP alone, with the mutex dropped.
 */
static struct shca_hw_qp *shca_hw_qp_hide(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp;

	lockdep_assert_held(&hw->cmd_mutex);
	xa_lock_irq(&hw->qps);
	qp = xa_load(&hw->qps, qpn);
	/* A NULL store keeps the index allocated: a reserved QPN. */
	if (qp)
		__xa_store(&hw->qps, qpn, NULL, 0);
	xa_unlock_irq(&hw->qps);
	return qp;
}

/*
 * Destroy a hidden QP: it goes to ERR and its outstanding WQEs are
 * flushed here and now (a paused engine does not hold that up), with no
 * last WQE event for a QP nobody will own.  Then it is fenced and
 * unlinked, and only then is its QPN free again.  The flush CQEs, like
 * every other CQE of the QP, are the driver's to sweep.  A QP left over
 * when the device goes away is not flushed: its rings may be gone.
 * Called without the command mutex.
 */
static void shca_hw_qp_free(struct shca_hw *hw, struct shca_hw_qp *qp,
			    bool flush)
{
	/* A modify that looked the QP up before it was hidden goes first. */
	mutex_lock(&qp->modify_mutex);
	spin_lock_irq(&qp->lock);
	flush = flush && qp->attr.state != SHCA_QPS_RESET;
	if (flush)
		qp->attr.state = SHCA_QPS_ERR;
	qp->last_wqe_sent = true;
	spin_unlock_irq(&qp->lock);
	if (flush) {
		cancel_delayed_work_sync(&qp->engine);
		/* No turn may complete a WQE the flush completes. */
		mutex_lock(&qp->turn_mutex);
		shca_hw_qp_flush(qp, true);
		mutex_unlock(&qp->turn_mutex);
	}

	spin_lock_irq(&qp->lock);
	qp->fenced = true;
	spin_unlock_irq(&qp->lock);
	mutex_unlock(&qp->modify_mutex);
	/*
	 * Wait out every holder first: a doorbell that looked the QP up
	 * before it was hidden may still queue its work.  Then nothing can,
	 * and the fence is final.
	 */
	shca_hw_qp_put(qp);
	wait_for_completion(&qp->done);
	shca_hw_qp_fence(qp);
	shca_hw_evsrc_del(hw, &qp->ev);
	shca_hw_qp_unlink(qp);
	mutex_lock(&hw->cmd_mutex);
	xa_erase_irq(&hw->qps, qp->qpn);
	hw->nr_qps--;
	mutex_unlock(&hw->cmd_mutex);
	mutex_destroy(&qp->resp_mutex);
	mutex_destroy(&qp->turn_mutex);
	mutex_destroy(&qp->modify_mutex);
	kfree(qp);
}

static enum shca_hw_status shca_hw_destroy_qp(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp;

	mutex_lock(&hw->cmd_mutex);
	qp = shca_hw_qp_hide(hw, qpn);
	mutex_unlock(&hw->cmd_mutex);
	if (!qp)
		return SHCA_HW_BAD_INDEX;
	shca_hw_qp_free(hw, qp, true);
	return SHCA_HW_OK;
}

/**
 * shca_hw_set_next_qpn() - move the cursor of the cyclic QPN search
 * @hw: the device
 * @qpn: where the next search starts
 *
 * A test knob: it makes the device reissue a QPN soon instead of after
 * 16 million others.  A QPN in use is still skipped.
 *
 * Return: 0, or -EINVAL for a QPN outside the range the device hands out.
 */
int shca_hw_set_next_qpn(struct shca_hw *hw, u32 qpn)
{
	if (qpn < SHCA_HW_FIRST_QPN || qpn > SHCA_HW_QPN_MASK)
		return -EINVAL;
	mutex_lock(&hw->cmd_mutex);
	hw->next_qpn = qpn;
	mutex_unlock(&hw->cmd_mutex);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_set_next_qpn);

/**
 * shca_hw_next_qpn() - where the cyclic QPN search starts next
 * @hw: the device
 *
 * Return: the QPN.
 */
u32 shca_hw_next_qpn(struct shca_hw *hw)
{
	return READ_ONCE(hw->next_qpn);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_next_qpn);

/**
 * shca_hw_qpn_entries() - how many QPNs the device keeps state for
 * @hw: the device
 *
 * For tests: the device keeps a QPN's context while a QP holds it and
 * nothing once it is free, so this is bounded by max_qp however many
 * QPNs were ever used.
 *
 * Return: the number of live QPs in the QP context table.
 */
u32 shca_hw_qpn_entries(struct shca_hw *hw)
{
	struct shca_hw_qp *qp;
	unsigned long index;
	u32 n = 0;

	xa_for_each(&hw->qps, index, qp)
		n++;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_qpn_entries);

/**
 * shca_hw_qp_fini() - free what is left of the QP and SRQ tables
 * @hw: the device
 */
void shca_hw_qp_fini(struct shca_hw *hw)
{
	struct shca_hw_srq *srq;
	struct shca_hw_qp *qp;
	unsigned long index;

	xa_for_each(&hw->qps, index, qp) {
		mutex_lock(&hw->cmd_mutex);
		qp = shca_hw_qp_hide(hw, index);
		mutex_unlock(&hw->cmd_mutex);
		shca_hw_qp_free(hw, qp, false);
	}
	xa_for_each(&hw->srqs, index, srq) {
		xa_erase_irq(&hw->srqs, index);
		shca_hw_evsrc_del(hw, &srq->ev);
		kfree(srq);
	}
}

static enum shca_hw_status shca_hw_create_srq(struct shca_hw *hw,
					      struct shca_hw_cmd *cmd)
{
	const struct shca_hw_srq_create *in = &cmd->in.srq;
	struct shca_hw_srq *srq;
	int err;

	if (!in->pdn || in->pdn > hw->caps->max_pd || !in->slots ||
	    !in->index_ring || !in->dbrec || !in->log_depth ||
	    in->log_depth > SHCA_HW_MAX_LOG_DEPTH ||
	    (1U << in->log_depth) > hw->caps->max_srq_wr ||
	    in->max_sge > SHCA_HW_MAX_SGE || in->limit > (1U << in->log_depth))
		return SHCA_HW_BAD_PARAM;
	srq = kzalloc(sizeof(*srq), GFP_KERNEL_ACCOUNT);
	if (!srq)
		return SHCA_HW_NO_RESOURCES;
	srq->hw = hw;
	refcount_set(&srq->ref, 1);
	spin_lock_init(&srq->lock);
	srq->pdn = in->pdn;
	srq->slots = in->slots;
	srq->index_ring = in->index_ring;
	srq->log_depth = in->log_depth;
	srq->dbrec = in->dbrec;
	srq->ci = READ_ONCE(in->dbrec->pi);
	srq->limit = in->limit;
	srq->max_sge = in->max_sge;
	atomic_set(&srq->assoc, 0);
	shca_hw_evsrc_init(&srq->ev, SHCA_EQE_SRQ, 0, 0);
	err = xa_alloc_irq(&hw->srqs, &cmd->out.num, srq,
			   XA_LIMIT(1, hw->caps->max_srq), GFP_KERNEL);
	if (err < 0) {
		kfree(srq);
		return SHCA_HW_NO_RESOURCES;
	}
	srq->srqn = cmd->out.num;
	srq->ev.obj = srq->srqn;
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_srq_cmd(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	struct shca_hw_srq *srq;

	if (cmd->opcode == SHCA_CMD_CREATE_SRQ)
		return shca_hw_create_srq(hw, cmd);
	if (cmd->opcode == SHCA_CMD_DESTROY_SRQ) {
		xa_lock_irq(&hw->srqs);
		srq = xa_load(&hw->srqs, cmd->index);
		if (!srq || atomic_read(&srq->assoc)) {
			xa_unlock_irq(&hw->srqs);
			return srq ? SHCA_HW_BUSY : SHCA_HW_BAD_INDEX;
		}
		__xa_erase(&hw->srqs, cmd->index);
		xa_unlock_irq(&hw->srqs);
		shca_hw_srq_put(srq);
		wait_var_event(&srq->ref, !refcount_read(&srq->ref));
		shca_hw_evsrc_del(hw, &srq->ev);
		kfree(srq);
		return SHCA_HW_OK;
	}

	srq = shca_hw_srq_get(hw, cmd->index);
	if (!srq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irq(&srq->lock);
	if (cmd->opcode == SHCA_CMD_MODIFY_SRQ) {
		if (cmd->in.srq_limit > (1U << srq->log_depth)) {
			spin_unlock_irq(&srq->lock);
			shca_hw_srq_put(srq);
			return SHCA_HW_BAD_PARAM;
		}
		srq->limit = cmd->in.srq_limit;
	} else {
		cmd->out.srq.limit = srq->limit;
		cmd->out.srq.pi = READ_ONCE(srq->dbrec->pi);
		cmd->out.srq.ci = srq->ci;
		cmd->out.srq.assoc = atomic_read(&srq->assoc);
	}
	spin_unlock_irq(&srq->lock);
	shca_hw_srq_put(srq);
	return SHCA_HW_OK;
}

/**
 * shca_hw_qp_cmd() - run a QP or SRQ command
 * @hw: the device
 * @cmd: the command
 *
 * DESTROY_QP comes without the command mutex and takes it itself; the
 * others come with it held.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_qp_cmd(struct shca_hw *hw, struct shca_hw_cmd *cmd)
{
	switch (cmd->opcode) {
	case SHCA_CMD_CREATE_QP:
		return shca_hw_create_qp(hw, cmd);
	case SHCA_CMD_MODIFY_QP:
		return shca_hw_modify_qp(hw, cmd);
	case SHCA_CMD_QUERY_QP:
		return shca_hw_query_qp(hw, cmd);
	case SHCA_CMD_DESTROY_QP:
		return shca_hw_destroy_qp(hw, cmd->index);
	case SHCA_CMD_CREATE_SRQ:
	case SHCA_CMD_MODIFY_SRQ:
	case SHCA_CMD_QUERY_SRQ:
	case SHCA_CMD_DESTROY_SRQ:
		return shca_hw_srq_cmd(hw, cmd);
	default:
		return SHCA_HW_BAD_OPCODE;
	}
}

/**
 * shca_hw_ring_sq() - the send queue doorbell
 * @hw: the device
 * @qpn: the QP whose producer index moved
 */
void shca_hw_ring_sq(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp = shca_hw_qp_get(hw, qpn);

	if (!qp)
		return;
	shca_hw_count(hw, SHCA_CNT_DOORBELLS);
	shca_hw_qp_kick(qp);
	shca_hw_qp_put(qp);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_ring_sq);

/**
 * shca_hw_ring_sq_run() - the send queue doorbell, run by its caller
 * @hw: the device
 * @qpn: the QP whose producer index moved
 *
 * Like shca_hw_ring_sq(), but when the QP's turn is neither running nor
 * queued, the caller runs it here, in its own context: a process posting
 * small messages to an idle QP does not wait for a worker to wake up.  It
 * runs WQEs until it has moved SHCA_HW_RUN_BYTES of payload or the
 * budget of an execution unit, and queues the rest as usual.  A turn held
 * back by an RNR or transport retry timer stays queued.  For process
 * context only; the caller holds no lock.
 */
void shca_hw_ring_sq_run(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp;

	might_sleep();
	qp = shca_hw_qp_get(hw, qpn);
	if (!qp)
		return;
	shca_hw_count(hw, SHCA_CNT_DOORBELLS);
	/* Only a turn's runner queues a retry: none is pending unseen. */
	if (!delayed_work_pending(&qp->engine) &&
	    mutex_trylock(&qp->turn_mutex)) {
		if (!delayed_work_pending(&qp->engine)) {
			shca_hw_count(hw, SHCA_CNT_DOORBELL_RUNS);
			if (shca_hw_engine_turn(qp, true))
				shca_hw_qp_kick(qp);
			mutex_unlock(&qp->turn_mutex);
			shca_hw_qp_put(qp);
			return;
		}
		mutex_unlock(&qp->turn_mutex);
	}
	shca_hw_qp_kick(qp);
	shca_hw_qp_put(qp);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_ring_sq_run);

/**
 * shca_hw_ring_rq() - the receive queue doorbell
 * @hw: the device
 * @qpn: the QP whose receive producer index moved
 *
 * Receives are consumed when messages arrive; the doorbell matters only to
 * a QP in error, whose new receives must be flushed.
 */
void shca_hw_ring_rq(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp = shca_hw_qp_get(hw, qpn);

	if (!qp)
		return;
	shca_hw_count(hw, SHCA_CNT_DOORBELLS);
	if (READ_ONCE(qp->attr.state) == SHCA_QPS_ERR)
		shca_hw_qp_kick(qp);
	shca_hw_qp_put(qp);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_ring_rq);
