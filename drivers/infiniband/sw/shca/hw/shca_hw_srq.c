// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: shared receive queues.
 *
 * An SRQ is an array of WQE slots and a ring of slot numbers.  The driver
 * fills a free slot and puts its number on the ring; the responder takes
 * numbers in order (shca_hw_srq_peek(), shca_hw_srq_take()) and the slot
 * comes back to the driver when its completion is polled.  RESIZE_SRQ
 * moves the posted WQEs to new memory, slot numbers kept, most of them
 * with no lock held.  An armed limit raises the limit event once and
 * disarms itself.  QPs attached to an SRQ hold a reference and count in
 * its association count; DESTROY_SRQ is refused while that count is not
 * zero.  An XRC SRQ also belongs to an XRC domain and has a CQ of its
 * own, where its receive completions go, whichever XRC target QP took the
 * message; it counts in that CQ's association count.
 *
 * Lock order: shca_hw_srq.lock is taken after shca_hw_qp.lock is dropped
 * (the responder pops with only its resp_mutex held) and before
 * shca_hw_eq.lock; the limit event is raised after it is dropped.
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

/**
 * shca_hw_cmd_create_srq() - run CREATE_SRQ
 * @hw: the device, its command mutex held
 * @cmd: the SRQ's memory, limit, and for an XRC SRQ its domain and CQ,
 *	in @cmd->in.srq; the SRQN is returned in @cmd->out.id
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_create_srq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	const struct shca_hw_srq_create *in = &cmd->in.srq;
	struct shca_hw_srq *srq;
	int err;

	lockdep_assert_held(&hw->cmd_mutex);

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
	shca_hw_evsrc_init(&srq->ev, SHCA_EQE_SRQ, 0, cmd->out.id.gen, 0);
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

/* Posted WQEs RESIZE_SRQ copies at a time, and at most in its switch. */
#define SHCA_HW_SRQ_RESIZE_CHUNK	256

/*
 * Copy ring indices @c->next up to @end into the new memory: the slot
 * number, then the WQE in it, to the same slot of the new array.  A slot
 * past the new depth is not copied; its index is kept in @c.
 *
 * The SRQ's lock need not be held: only SWITCH changes the SRQ's memory,
 * and the driver runs no other step meanwhile.  A WQE below the producer
 * index stays as it is until the responder takes it; if its slot is then
 * posted again, at a later index, the new WQE is copied at that index,
 * after this copy, so the copy of every WQE still posted at the switch is
 * the WQE as it was posted.
 */
static void shca_hw_srq_copy(const struct shca_hw_srq *srq,
			     const struct shca_hw_srq_create *to, u32 end,
			     struct shca_hw_srq_copied *c)
{
	u32 old_mask = (1U << srq->log_depth) - 1;
	u32 mask = (1U << to->log_depth) - 1;
	u32 slot;

	for (; c->next != end; c->next++) {
		slot = READ_ONCE(srq->index_ring[c->next & old_mask]) &
		       old_mask;
		if (slot > mask) {
			c->bad = c->next;
			c->has_bad = true;
			continue;
		}
		to->index_ring[c->next & mask] = slot;
		memcpy(&to->slots[slot], &srq->slots[slot], sizeof(*to->slots));
	}
}

/*
 * Where a copy goes on from: @c->next, or the consumer index if the
 * responder has taken past it (what it took needs no copy).  Returns the
 * producer index, or false if the ring holds more than its depth.
 */
static bool shca_hw_srq_copy_from(struct shca_hw_srq *srq,
				  struct shca_hw_srq_copied *c, u32 *pi)
{
	u32 ci = READ_ONCE(srq->ci);

	/* Pairs with the driver's release: slots and ring entries are set. */
	*pi = smp_load_acquire(&srq->dbrec->pi);
	if ((s32)(ci - c->next) > 0)
		c->next = ci;
	if ((s32)(*pi - c->next) < 0)
		c->next = *pi;
	return *pi - ci <= 1U << srq->log_depth;
}

/*
 * START and COPY: copy until every WQE posted is copied, a chunk at a
 * time, the SRQ held by no lock and the CPU given up between chunks.  A
 * poster that keeps ahead is left to the switch after as many WQEs as
 * twice the depth: the driver copies again while the switch is BUSY.
 */
static enum shca_hw_status shca_hw_srq_resize_copy(struct shca_hw *hw,
						   struct shca_hw_srq *srq,
						   struct shca_hw_cmd *cmd)
{
	const struct shca_hw_srq_resize *in = &cmd->in.srq_resize;
	struct shca_hw_srq_copied *c = &cmd->out.srq_copied;
	u32 pi, budget = 2U << srq->log_depth;

	if (in->step == SHCA_SRQ_RESIZE_START) {
		spin_lock_irq(&srq->lock);
		*c = (struct shca_hw_srq_copied){ .next = srq->ci };
		spin_unlock_irq(&srq->lock);
	} else {
		*c = in->copied;
	}
	while (budget) {
		if (!shca_hw_srq_copy_from(srq, c, &pi))
			return SHCA_HW_BAD_PARAM;
		if (c->next == pi)
			break;
		pi = c->next + min3(pi - c->next, budget,
				    (u32)SHCA_HW_SRQ_RESIZE_CHUNK);
		budget -= pi - c->next;
		shca_hw_srq_copy(srq, &in->mem, pi, c);
		shca_hw_window_pass(hw, SHCA_WIN_SRQ_RESIZE, srq->srqn);
		cond_resched();
	}
	return SHCA_HW_OK;
}

/*
 * SWITCH: under the SRQ's lock, copy what was posted since the copy step
 * and move the SRQ, with its consumer index, producer index and slot
 * numbers, to the new memory.
 */
static enum shca_hw_status shca_hw_srq_resize_switch(struct shca_hw_srq *srq,
						     struct shca_hw_cmd *cmd)
{
	const struct shca_hw_srq_resize *in = &cmd->in.srq_resize;
	struct shca_hw_srq_copied c = in->copied;
	enum shca_hw_status status = SHCA_HW_OK;
	u32 depth = 1U << in->mem.log_depth;
	unsigned long flags;
	u32 pi, limit;

	spin_lock_irqsave(&srq->lock, flags);
	limit = in->mem.limit == SHCA_HW_SRQ_LIMIT_KEEP ? srq->limit :
		in->mem.limit;
	if (!shca_hw_srq_copy_from(srq, &c, &pi)) {
		status = SHCA_HW_BAD_PARAM;
		goto out;
	}
	if (pi - c.next > SHCA_HW_SRQ_RESIZE_CHUNK) {
		status = SHCA_HW_BUSY;
		goto out;
	}
	shca_hw_srq_copy(srq, &in->mem, pi, &c);
	if (pi - srq->ci > depth || limit > depth ||
	    (c.has_bad && c.bad - srq->ci < pi - srq->ci)) {
		status = SHCA_HW_BAD_PARAM;
		goto out;
	}
	WRITE_ONCE(in->mem.dbrec->pi, pi);
	srq->slots = in->mem.slots;
	srq->index_ring = in->mem.index_ring;
	srq->dbrec = in->mem.dbrec;
	srq->log_depth = in->mem.log_depth;
	srq->limit = limit;
out:
	spin_unlock_irqrestore(&srq->lock, flags);
	return status;
}

/**
 * shca_hw_cmd_resize_srq() - run a step of RESIZE_SRQ
 * @hw: the device
 * @cmd: RESIZE_SRQ: the SRQ in @cmd->index, the step and the new memory
 *	in @cmd->in.srq_resize
 *
 * Moves an SRQ to new slots and a new index ring, in steps (struct
 * shca_hw_srq_resize) so that no lock is held while most WQEs are copied.
 * Slot numbers are kept: a WQE posted in slot s is in slot s of the new
 * array, so the receive CQEs already written, and the slot the responder
 * holds, still name it; the ring entries from the consumer index to the
 * producer index move to the same indices of the new ring, and the new
 * doorbell record starts at the old producer index.  The limit is armed
 * with the new depth, in the switch, or, if it is SHCA_HW_SRQ_LIMIT_KEEP,
 * the armed limit stays.  The switch is refused, with nothing changed,
 * if a posted WQE would not fit, or its slot is past the new depth, or the
 * limit is over it.  The driver checks the slots whose CQEs are not yet
 * polled, which the device does not track.
 *
 * START and COPY sleep; SWITCH never does.  No command mutex.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_resize_srq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	const struct shca_hw_srq_resize *in = &cmd->in.srq_resize;
	enum shca_hw_status status;
	struct shca_hw_srq *srq;

	if (!in->mem.slots || !in->mem.index_ring || !in->mem.dbrec ||
	    !in->mem.log_depth || in->mem.log_depth > SHCA_HW_MAX_LOG_DEPTH ||
	    (1U << in->mem.log_depth) > hw->caps->max_srq_wr ||
	    (unsigned int)in->step > SHCA_SRQ_RESIZE_SWITCH)
		return SHCA_HW_BAD_PARAM;
	srq = shca_hw_srq_get(hw, cmd->index);
	if (!srq)
		return SHCA_HW_BAD_INDEX;
	if (in->step == SHCA_SRQ_RESIZE_SWITCH) {
		status = shca_hw_srq_resize_switch(srq, cmd);
	} else {
		might_sleep();
		status = shca_hw_srq_resize_copy(hw, srq, cmd);
	}
	shca_hw_srq_put(srq);
	return status;
}

/**
 * shca_hw_cmd_destroy_srq() - run DESTROY_SRQ
 * @hw: the device, its command mutex not held
 * @cmd: the SRQ in @cmd->index
 *
 * Refused while a QP is attached.  The SRQ leaves the table under the
 * command mutex, so a CREATE_QP finds it or not; the wait for the
 * messages in flight that hold it (an XRC SRQ is held for a whole message
 * by the target QP that took it) is made without the mutex, so that it
 * holds up no other command of the device.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_destroy_srq(struct shca_hw *hw,
					    struct shca_hw_cmd *cmd)
{
	u32 srqn = cmd->index;
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
 * shca_hw_cmd_srq_attr() - run MODIFY_SRQ or QUERY_SRQ
 * @hw: the device, its command mutex held
 * @cmd: the SRQ in @cmd->index; MODIFY_SRQ's new limit in
 *	@cmd->in.srq_limit, QUERY_SRQ's answer in @cmd->out.srq
 *
 * Return: the completion status; BAD_PARAM for a limit over the depth.
 */
enum shca_hw_status shca_hw_cmd_srq_attr(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd)
{
	enum shca_hw_status status = SHCA_HW_OK;
	struct shca_hw_srq *srq;

	lockdep_assert_held(&hw->cmd_mutex);
	srq = shca_hw_srq_get(hw, cmd->index);
	if (!srq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irq(&srq->lock);
	if (cmd->opcode == SHCA_CMD_MODIFY_SRQ) {
		if (cmd->in.srq_limit > (1U << srq->log_depth))
			status = SHCA_HW_BAD_PARAM;
		else
			srq->limit = cmd->in.srq_limit;
	} else {
		cmd->out.srq.limit = srq->limit;
		cmd->out.srq.pi = READ_ONCE(srq->dbrec->pi);
		cmd->out.srq.ci = srq->ci;
		cmd->out.srq.assoc = atomic_read(&srq->assoc);
	}
	spin_unlock_irq(&srq->lock);
	shca_hw_srq_put(srq);
	return status;
}

/**
 * shca_hw_xrc_srq_get() - the XRC SRQ an inbound message names
 * @qp: the XRC target QP it arrived on
 * @srqn: the SRQ number in its XRC extended header
 *
 * Return: the SRQ, held, if it is an XRC SRQ of @qp's domain; else NULL.
 */
struct shca_hw_srq *shca_hw_xrc_srq_get(struct shca_hw_qp *qp, u32 srqn)
{
	struct shca_hw_srq *srq = shca_hw_srq_get(qp->hw, srqn);

	if (srq && (!srq->xrcd || srq->xrcd != qp->xrcd)) {
		shca_hw_srq_put(srq);
		srq = NULL;
	}
	return srq;
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
