// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: shared receive queues.
 *
 * An SRQ is an array of WQE slots and a ring of slot numbers.  The driver
 * fills a free slot and puts its number on the ring; the responder takes
 * numbers in order (shca_hw_srq_peek(), shca_hw_srq_take()) and the slot comes back to the
 * driver when its completion is polled.  RESIZE_SRQ moves the posted WQEs
 * to new memory, slot numbers kept.  An armed limit raises the limit
 * event once and disarms itself.  QPs attached to an SRQ hold a reference
 * and count in its association count; DESTROY_SRQ is refused while that
 * count is not zero.  An XRC SRQ also belongs to an XRC domain and
 * has a CQ of its own, where its receive completions go, whichever XRC
 * target QP took the message; it counts in that CQ's association count.
 *
 * Lock order: shca_hw_srq.lock is taken after shca_hw_qp.lock is dropped
 * (the responder pops with only its resp_mutex held) and before
 * shca_hw.eq_lock; the limit event is raised after it is dropped.
 */
#include <linux/lockdep.h>
#include <linux/slab.h>

#include "shca_hw_int.h"

/**
 * shca_hw_srq_get() - look up an SRQ context and hold it
 * @hw: the device
 * @srqn: the SRQ number
 *
 * Return: the context, or NULL if no SRQ has that number.
 */
struct shca_hw_srq *shca_hw_srq_get(struct shca_hw *hw, u32 srqn)
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
 * shca_hw_srq_peek() - read the next posted WQE of an SRQ, leaving it there
 * @srq: the SRQ
 * @wqe: where to copy it
 * @slot: set to the slot it came from
 * @ci: set to the consumer index it was found at, for shca_hw_srq_take()
 *
 * The responder reads a WQE, checks its memory (which may raise a page
 * fault and end the message with no effect), and only then takes it.
 *
 * Return: false if the SRQ is empty.
 */
bool shca_hw_srq_peek(struct shca_hw_srq *srq, struct shca_hw_recv_wqe *wqe,
		      u32 *slot, u32 *ci)
{
	unsigned long flags;
	u32 mask, pi;

	spin_lock_irqsave(&srq->lock, flags);
	/* Under the lock: a resize swaps the depth with the ring. */
	mask = (1U << srq->log_depth) - 1;
	/* Pairs with the driver's release: slots and ring entries are set. */
	pi = smp_load_acquire(&srq->dbrec->pi);
	if (!shca_hw_wq_posted(pi, srq->ci, srq->log_depth)) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return false;
	}
	*ci = srq->ci;
	*slot = READ_ONCE(srq->index_ring[srq->ci & mask]) & mask;
	memcpy(wqe, &srq->slots[*slot], sizeof(*wqe));
	spin_unlock_irqrestore(&srq->lock, flags);
	return true;
}

/**
 * shca_hw_srq_take() - take the WQE shca_hw_srq_peek() read
 * @srq: the SRQ
 * @ci: the consumer index the WQE was found at
 *
 * Fails if another QP's responder took it meanwhile: the caller peeks
 * again.  A resize keeps the consumer index and the slot numbers, so the
 * WQE read is still the one at @ci.  Raises the limit event, once per
 * arming, when fewer WQEs than the limit remain.
 *
 * Return: true if the WQE is the caller's.
 */
bool shca_hw_srq_take(struct shca_hw_srq *srq, u32 ci)
{
	unsigned long flags;
	bool fire = false;

	spin_lock_irqsave(&srq->lock, flags);
	if (srq->ci != ci) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return false;
	}
	srq->ci++;
	if (srq->limit && READ_ONCE(srq->dbrec->pi) - srq->ci < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (fire)
		shca_hw_eq_raise(srq->hw, &srq->ev, SHCA_EV_SRQ_LIMIT);
	return true;
}

/* An XRC SRQ leaves its domain and its CQ. */
static void shca_hw_srq_unlink(struct shca_hw_srq *srq)
{
	if (srq->xrcd)
		shca_hw_xrcd_put(srq->xrcd);
	if (srq->cq) {
		atomic_dec(&srq->cq->assoc);
		shca_hw_cq_put(srq->cq);
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
	cmd->out.id.gen = shca_hw_new_gen(hw);
	shca_hw_evsrc_init(&srq->ev, SHCA_EQE_SRQ, 0, cmd->out.id.gen);
	if (in->xrcdn) {
		srq->xrcd = shca_hw_xrcd_get(hw, in->xrcdn);
		srq->cq = shca_hw_cq_get(hw, in->cqn);
		if (srq->cq)
			atomic_inc(&srq->cq->assoc);
		if (!srq->xrcd || !srq->cq) {
			shca_hw_srq_unlink(srq);
			kfree(srq);
			return SHCA_HW_BAD_INDEX;
		}
	}
	err = xa_alloc_irq(&hw->srqs, &cmd->out.id.num, srq,
			   XA_LIMIT(1, hw->caps->max_srq), GFP_KERNEL);
	if (err < 0) {
		shca_hw_srq_unlink(srq);
		kfree(srq);
		return SHCA_HW_NO_RESOURCES;
	}
	srq->srqn = cmd->out.id.num;
	srq->ev.obj = srq->srqn;
	return SHCA_HW_OK;
}

/**
 * shca_hw_srq_resize() - move an SRQ to new slots and a new index ring
 * @hw: the device
 * @cmd: RESIZE_SRQ: the SRQ in @cmd->index, the new memory in @cmd->in.srq
 *
 * Slot numbers are kept: a WQE posted in slot s is in slot s of the new
 * array, so the receive CQEs already written, and the slot the responder
 * holds, still name it; the index ring entries from the consumer index to
 * the producer index move to the same indices of the new ring, and the
 * new doorbell record starts at the old producer index.  The driver holds
 * its posting lock across the command, so the producer index stands still;
 * the responder's pops take the SRQ's lock, as this does.  The limit in
 * @cmd->in.srq is armed with the new depth, in the same step, or, if it is
 * SHCA_HW_SRQ_LIMIT_KEEP, the armed limit stays.  Refused, with nothing
 * changed: a posted WQE that would not fit, or whose slot is past the new
 * depth, or a limit over the new depth.  The driver checks
 * the slots whose CQEs are not yet polled, which the device does not track.
 *
 * Never sleeps; no command mutex.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_srq_resize(struct shca_hw *hw,
				       struct shca_hw_cmd *cmd)
{
	const struct shca_hw_srq_create *in = &cmd->in.srq;
	enum shca_hw_status status = SHCA_HW_OK;
	u32 depth, old_mask, pi, n, i, slot, limit;
	struct shca_hw_srq *srq;
	unsigned long flags;

	if (!in->slots || !in->index_ring || !in->dbrec || !in->log_depth ||
	    in->log_depth > SHCA_HW_MAX_LOG_DEPTH ||
	    (1U << in->log_depth) > hw->caps->max_srq_wr)
		return SHCA_HW_BAD_PARAM;
	srq = shca_hw_srq_get(hw, cmd->index);
	if (!srq)
		return SHCA_HW_BAD_INDEX;
	depth = 1U << in->log_depth;
	spin_lock_irqsave(&srq->lock, flags);
	old_mask = (1U << srq->log_depth) - 1;
	pi = READ_ONCE(srq->dbrec->pi);
	n = pi - srq->ci;
	limit = in->limit == SHCA_HW_SRQ_LIMIT_KEEP ? srq->limit : in->limit;
	if (n > old_mask + 1 || n > depth || limit > depth) {
		status = SHCA_HW_BAD_PARAM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		slot = READ_ONCE(srq->index_ring[(srq->ci + i) & old_mask]) &
		       old_mask;
		if (slot >= depth) {
			status = SHCA_HW_BAD_PARAM;
			goto out;
		}
		in->index_ring[(srq->ci + i) & (depth - 1)] = slot;
		memcpy(&in->slots[slot], &srq->slots[slot], sizeof(*in->slots));
	}
	WRITE_ONCE(in->dbrec->pi, pi);
	srq->slots = in->slots;
	srq->index_ring = in->index_ring;
	srq->dbrec = in->dbrec;
	srq->log_depth = in->log_depth;
	srq->limit = limit;
out:
	spin_unlock_irqrestore(&srq->lock, flags);
	shca_hw_srq_put(srq);
	return status;
}

/**
 * shca_hw_srq_destroy() - run DESTROY_SRQ
 * @hw: the device, its command mutex not held
 * @srqn: the SRQ
 *
 * Refused while a QP is attached.  The SRQ leaves the table under the
 * command mutex, so a CREATE_QP finds it or not; the wait for the
 * messages in flight that hold it (an XRC SRQ is held for a whole message
 * by the target QP that took it) is made without the mutex, so that it
 * holds up no other command of the device.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_srq_destroy(struct shca_hw *hw, u32 srqn)
{
	struct shca_hw_srq *srq;

	mutex_lock(&hw->cmd_mutex);
	xa_lock_irq(&hw->srqs);
	srq = xa_load(&hw->srqs, srqn);
	if (!srq || atomic_read(&srq->assoc)) {
		xa_unlock_irq(&hw->srqs);
		mutex_unlock(&hw->cmd_mutex);
		return srq ? SHCA_HW_BUSY : SHCA_HW_BAD_INDEX;
	}
	__xa_erase(&hw->srqs, srqn);
	xa_unlock_irq(&hw->srqs);
	mutex_unlock(&hw->cmd_mutex);
	shca_hw_srq_put(srq);
	wait_var_event(&srq->ref, !refcount_read(&srq->ref));
	shca_hw_evsrc_del(hw, &srq->ev);
	shca_hw_srq_unlink(srq);
	kfree(srq);
	return SHCA_HW_OK;
}

/**
 * shca_hw_srq_cmd() - run an SRQ command
 * @hw: the device, its command mutex held
 * @cmd: CREATE_SRQ, MODIFY_SRQ or QUERY_SRQ
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_srq_cmd(struct shca_hw *hw,
				    struct shca_hw_cmd *cmd)
{
	struct shca_hw_srq *srq;

	lockdep_assert_held(&hw->cmd_mutex);
	if (cmd->opcode == SHCA_CMD_CREATE_SRQ)
		return shca_hw_create_srq(hw, cmd);

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
 * shca_hw_srq_fini() - free the SRQs a device still has when it powers off
 * @hw: the device, its QPs already freed, so no SRQ is attached
 */
void shca_hw_srq_fini(struct shca_hw *hw)
{
	struct shca_hw_srq *srq;
	unsigned long index;

	xa_for_each(&hw->srqs, index, srq) {
		xa_erase_irq(&hw->srqs, index);
		shca_hw_evsrc_del(hw, &srq->ev);
		shca_hw_srq_unlink(srq);
		kfree(srq);
	}
}
