// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: completion queues.
 *
 * A CQE is written in two steps: its body, then (after a write barrier)
 * its owner byte.  The driver reads the owner byte first and the body
 * after a read barrier, so it never sees half a CQE.  One writer at a time
 * per CQ (write_mutex), so CQEs become valid in ring order.  An armed CQ
 * raises its completion event in the EQ (shca_hw_eq.c), under moderation.
 * A CQ is armed by the ARM_CQ doorbell, or by a new value of its doorbell
 * record's arm word, which the device reads after each CQE it publishes.
 *
 * Lock order: shca_hw_cq.write_mutex, then shca_hw_cq.lock, then (to raise
 * an event) shca_hw_eq.lock.  CQEs are written with no QP, SRQ or other CQ
 * lock held; the CQE publish and CQ arm windows sleep with only
 * write_mutex held, the CQ resize window with no lock.
 */
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include "shca_hw_int.h"

/**
 * shca_hw_cq_get() - look up a CQ context and hold it
 * @hw: the device
 * @cqn: the CQ number
 *
 * Return: the context, or NULL if no CQ has that number.
 */
struct shca_hw_cq *shca_hw_cq_get(struct shca_hw *hw, u32 cqn)
{
	struct shca_hw_cq *cq;

	/* The entry is freed after a grace period (kfree_rcu()). */
	rcu_read_lock();
	cq = xa_load(&hw->cqs, cqn);
	if (cq && !refcount_inc_not_zero(&cq->ref))
		cq = NULL;
	rcu_read_unlock();
	return cq;
}

/**
 * shca_hw_cq_put() - drop a hold on a CQ context
 * @cq: the context
 */
void shca_hw_cq_put(struct shca_hw_cq *cq)
{
	if (refcount_dec_and_test(&cq->ref))
		wake_up_var(&cq->ref);
}

static void shca_hw_cq_event(struct shca_hw_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->armed = 0;
	cq->pending = 0;
	shca_hw_eq_raise(cq->hw, &cq->ev, SHCA_HW_EV_COMP);
}

/* Arm for the next CQE, or for the next solicited one. */
static void shca_hw_cq_arm(struct shca_hw_cq *cq, u32 how)
{
	lockdep_assert_held(&cq->lock);
	if (how == SHCA_CQ_ARM_NEXT || !cq->armed)
		cq->armed = how == SHCA_CQ_ARM_NEXT ? SHCA_CQ_ARM_NEXT :
			    SHCA_CQ_ARM_SOLICITED;
}

/*
 * Take an arm request the driver stored in the doorbell record's arm word:
 * any value unlike the last one taken.  A value naming neither way of
 * arming is taken and does nothing.  The caller has issued a full barrier
 * since publishing its last CQE: see struct shca_hw_cq_dbrec.
 */
static void shca_hw_cq_take_arm(struct shca_hw_cq *cq)
{
	u32 arm;

	lockdep_assert_held(&cq->lock);
	arm = READ_ONCE(cq->dbrec->arm);
	if (arm == cq->arm_seen)
		return;
	cq->arm_seen = arm;
	WRITE_ONCE(cq->dbrec->arm_taken, arm);
	shca_hw_count(cq->hw, SHCA_CNT_CQ_DBREC_ARMS);
	if (arm & SHCA_CQ_DBREC_ARM_NEXT)
		shca_hw_cq_arm(cq, SHCA_CQ_ARM_NEXT);
	else if (arm & SHCA_CQ_DBREC_ARM_SOLICITED)
		shca_hw_cq_arm(cq, SHCA_CQ_ARM_SOLICITED);
}

static void shca_hw_cq_moder_expired(struct timer_list *t)
{
	struct shca_hw_cq *cq = from_timer(cq, t, moder_timer);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	/* As after a CQE: the arm word is read after the CQEs are visible. */
	smp_mb();
	shca_hw_cq_take_arm(cq);
	if (cq->armed && cq->pending)
		shca_hw_cq_event(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* Whether the next CQE would overflow the ring; if so, it is lost. */
static bool shca_hw_cq_overflow(struct shca_hw_cq *cq)
{
	u32 ci;

	lockdep_assert_held(&cq->lock);
	/* Pairs with the consumer's (and the sweep's) release of ci. */
	ci = smp_load_acquire(&cq->dbrec->ci);
	if (!cq->overflowed && cq->pi - ci < (1U << cq->log_depth))
		return false;
	shca_hw_count(cq->hw, SHCA_CNT_CQ_OVERFLOW);
	if (!cq->overflowed) {
		cq->overflowed = true;
		shca_hw_eq_raise(cq->hw, &cq->ev, SHCA_EV_CQ_ERR);
	}
	return true;
}

/**
 * shca_hw_cq_write() - produce one CQE
 * @cq: the CQ
 * @cqe: its contents, timestamp 0; the device fills in the timestamp (on a
 *	CQ that asked for it) and the owner byte
 * @solicited: the completion is solicited, for CQs armed for those only
 *
 * A full ring is an overflow: the CQE is lost, the CQ goes to error and
 * the CQ error event is raised, once.
 *
 * On a CQ created with SHCA_HW_CQ_F_TIMESTAMP, the CQE is stamped with the
 * device clock as it is published; on others it is not read at all.
 *
 * One writer at a time per CQ, body then owner byte, so CQEs are
 * published in ring order: an entry is never valid while one before it is
 * not.  The driver's sweep relies on that.  When the CQE publish window is
 * open, the body goes into the ring, the CQ is let go and the writer
 * sleeps in the window before it writes the owner byte.
 */
void shca_hw_cq_write(struct shca_hw_cq *cq, const struct shca_hw_cqe *cqe,
		      bool solicited)
{
	struct shca_hw *hw = cq->hw;
	struct shca_hw_window *win = &hw->windows[SHCA_WIN_CQE_PUBLISH];
	struct shca_hw_cqe *slot;
	unsigned long flags;

	might_sleep();
	mutex_lock(&cq->write_mutex);
	spin_lock_irqsave(&cq->lock, flags);
	if (shca_hw_cq_overflow(cq))
		goto out;
	if (shca_hw_window_enter(win, cqe->qpn)) {
		memcpy(&cq->ring[cq->pi & ((1U << cq->log_depth) - 1)], cqe,
		       offsetof(struct shca_hw_cqe, owner));
		spin_unlock_irqrestore(&cq->lock, flags);
		shca_hw_window_wait(win);
		spin_lock_irqsave(&cq->lock, flags);
		/* A resize meanwhile moved the ring, and may have shrunk it. */
		if (shca_hw_cq_overflow(cq))
			goto out;
	}
	slot = &cq->ring[cq->pi & ((1U << cq->log_depth) - 1)];
	memcpy(slot, cqe, offsetof(struct shca_hw_cqe, owner));
	/* Read under the lock: a CQ's timestamps never go back in ring order. */
	if (cq->timestamps)
		put_unaligned_le64(shca_hw_read_clock(hw), slot->timestamp);
	dma_wmb();
	WRITE_ONCE(slot->owner, !((cq->pi >> cq->log_depth) & 1));
	cq->pi++;
	shca_hw_count(hw, SHCA_CNT_CQES);

	/*
	 * The CQE is visible before the arm word is read: pairs with the
	 * driver's barrier between storing the arm word and polling.
	 */
	smp_mb();
	win = &hw->windows[SHCA_WIN_CQ_ARM];
	if (shca_hw_window_enter(win, cqe->qpn)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		shca_hw_window_wait(win);
		spin_lock_irqsave(&cq->lock, flags);
	}
	shca_hw_cq_take_arm(cq);
	if (cq->armed == SHCA_CQ_ARM_NEXT ||
	    (cq->armed == SHCA_CQ_ARM_SOLICITED &&
	     (solicited || cqe->status != SHCA_CQE_OK))) {
		cq->pending++;
		if (cq->moder_count <= 1 || cq->pending >= cq->moder_count) {
			shca_hw_cq_event(cq);
		} else if (cq->moder_period && !timer_pending(&cq->moder_timer)) {
			mod_timer(&cq->moder_timer, jiffies +
				  usecs_to_jiffies(cq->moder_period));
		}
	}
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	mutex_unlock(&cq->write_mutex);
}

/**
 * shca_hw_arm_cq() - the CQ arm doorbell
 * @hw: the device
 * @cqn: the CQ
 * @how: SHCA_CQ_ARM_NEXT or SHCA_CQ_ARM_SOLICITED
 *
 * The next (solicited) CQE raises one completion event.  Arming for next
 * overrides an armed solicited request; the reverse does not.
 */
void shca_hw_arm_cq(struct shca_hw *hw, u32 cqn, u32 how)
{
	struct shca_hw_cq *cq = shca_hw_cq_get(hw, cqn);
	unsigned long flags;

	if (!cq)
		return;
	shca_hw_count(hw, SHCA_CNT_DOORBELLS);
	spin_lock_irqsave(&cq->lock, flags);
	shca_hw_cq_arm(cq, how);
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
}

/**
 * shca_hw_cmd_create_cq() - run CREATE_CQ
 * @hw: the device, its command mutex held
 * @cmd: the ring, its doorbell record, depth and flags in @cmd->in.cq; the
 *	CQN is returned in @cmd->out.id
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_create_cq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	const struct shca_hw_cq_create *in = &cmd->in.cq;
	struct shca_hw_cq *cq;
	int err;

	lockdep_assert_held(&hw->cmd_mutex);

	if (!in->ring || !in->dbrec || !shca_hw_log_depth_ok(in->log_depth) ||
	    (1U << in->log_depth) > hw->caps->max_cqe + 1 ||
	    (in->flags & ~SHCA_HW_CQ_F_TIMESTAMP) ||
	    in->eqn >= hw->caps->max_eq)
		return SHCA_HW_BAD_PARAM;
	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq)
		return SHCA_HW_NO_RESOURCES;
	cq->hw = hw;
	refcount_set(&cq->ref, 1);
	spin_lock_init(&cq->lock);
	mutex_init(&cq->write_mutex);
	cq->ring = in->ring;
	cq->log_depth = in->log_depth;
	cq->dbrec = in->dbrec;
	cq->timestamps = in->flags & SHCA_HW_CQ_F_TIMESTAMP;
	cq->pi = READ_ONCE(in->dbrec->ci);
	cq->arm_seen = READ_ONCE(in->dbrec->arm);
	cq->moder_count = 1;
	timer_setup(&cq->moder_timer, shca_hw_cq_moder_expired, 0);
	atomic_set(&cq->assoc, 0);
	cmd->out.id.gen = shca_hw_new_gen(hw);
	shca_hw_evsrc_init(&cq->ev, SHCA_EQE_CQ, 0, cmd->out.id.gen, in->eqn);

	err = xa_alloc_cyclic_irq(&hw->cqs, &cmd->out.id.num, cq,
				  XA_LIMIT(1, hw->caps->max_cq),
				  &hw->next_cqn, GFP_KERNEL);
	if (err < 0) {
		kfree(cq);
		return SHCA_HW_NO_RESOURCES;
	}
	cq->cqn = cmd->out.id.num;
	cq->ev.obj = cq->cqn;
	shca_hw_eq_add_cq(hw, in->eqn);
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_destroy_cq(struct shca_hw *hw, u32 cqn)
{
	struct shca_hw_cq *cq;

	lockdep_assert_held(&hw->cmd_mutex);
	xa_lock_irq(&hw->cqs);
	cq = xa_load(&hw->cqs, cqn);
	if (!cq) {
		xa_unlock_irq(&hw->cqs);
		return SHCA_HW_BAD_INDEX;
	}
	if (atomic_read(&cq->assoc)) {
		xa_unlock_irq(&hw->cqs);
		return SHCA_HW_BUSY;
	}
	__xa_erase(&hw->cqs, cqn);
	xa_unlock_irq(&hw->cqs);

	shca_hw_cq_put(cq);
	wait_var_event(&cq->ref, !refcount_read(&cq->ref));
	timer_shutdown_sync(&cq->moder_timer);
	shca_hw_evsrc_del(hw, &cq->ev);
	shca_hw_eq_del_cq(hw, cq->ev.eqn);
	mutex_destroy(&cq->write_mutex);
	kfree_rcu(cq, rcu);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cq_fini() - free the CQs a device still has when it powers off
 * @hw: the device, its QPs already freed, so no CQ is associated
 */
void shca_hw_cq_fini(struct shca_hw *hw)
{
	struct shca_hw_cq *cq;
	unsigned long index;

	mutex_lock(&hw->cmd_mutex);
	xa_for_each(&hw->cqs, index, cq)
		shca_hw_destroy_cq(hw, index);
	mutex_unlock(&hw->cmd_mutex);
}

/**
 * shca_hw_cmd_destroy_cq() - run DESTROY_CQ
 * @hw: the device, its command mutex held
 * @cmd: the CQ in @cmd->index
 *
 * Return: the completion status; BUSY while a QP or SRQ is associated.
 */
enum shca_hw_status shca_hw_cmd_destroy_cq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	lockdep_assert_held(&hw->cmd_mutex);
	return shca_hw_destroy_cq(hw, cmd->index);
}

/* CQEs RESIZE_CQ copies with the CQ's lock held, interrupts off. */
#define SHCA_HW_CQ_RESIZE_CHUNK	256

/**
 * shca_hw_cmd_resize_cq() - run RESIZE_CQ
 * @hw: the device
 * @cmd: the CQ in @cmd->index, the new ring in @cmd->in.cq
 *
 * Moves the live CQEs, ci to pi, to the start of a new ring, a chunk at a
 * time: the CQ's lock (interrupts off) is held for one chunk and let go
 * between chunks.  The consumer stands still meanwhile: the driver keeps
 * its pollers and sweeps off the CQ, a process holds its poll lock.  The
 * device goes on writing CQEs into the old ring, after the live ones;
 * they are copied in a later chunk, and the ring changes, under the lock,
 * once every CQE is copied.  The consumer starts over at index 0 of the
 * new ring.  Sleeps; no command mutex.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_resize_cq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	const struct shca_hw_cq_create *in = &cmd->in.cq;
	enum shca_hw_status status = SHCA_HW_OK;
	u32 ci, n, i, done, chunk, old_mask;
	struct shca_hw_cq *cq;
	unsigned long flags;

	if (!in->ring || !in->dbrec || !shca_hw_log_depth_ok(in->log_depth) ||
	    (1U << in->log_depth) > hw->caps->max_cqe + 1)
		return SHCA_HW_BAD_PARAM;
	cq = shca_hw_cq_get(hw, cmd->index);
	if (!cq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->resizing) {
		status = SHCA_HW_BUSY;
		goto out;
	}
	cq->resizing = true;
	ci = READ_ONCE(cq->dbrec->ci);
	old_mask = (1U << cq->log_depth) - 1;
	for (done = 0;; done += chunk) {
		n = cq->pi - ci;
		if (n > (1U << in->log_depth)) {
			status = SHCA_HW_BAD_PARAM;
			goto done;
		}
		chunk = min(n - done, SHCA_HW_CQ_RESIZE_CHUNK);
		if (!chunk)
			break;
		for (i = done; i < done + chunk; i++) {
			memcpy(&in->ring[i], &cq->ring[(ci + i) & old_mask],
			       offsetof(struct shca_hw_cqe, owner));
			in->ring[i].owner = 1;
		}
		spin_unlock_irqrestore(&cq->lock, flags);
		shca_hw_window_pass(hw, SHCA_WIN_CQ_RESIZE, cq->cqn);
		cond_resched();
		spin_lock_irqsave(&cq->lock, flags);
	}
	WRITE_ONCE(in->dbrec->ci, 0);
	/* An arm request stored in the old record is not lost. */
	smp_mb();
	shca_hw_cq_take_arm(cq);
	WRITE_ONCE(in->dbrec->arm, cq->arm_seen);
	WRITE_ONCE(in->dbrec->arm_taken, cq->arm_seen);
	cq->ring = in->ring;
	cq->dbrec = in->dbrec;
	cq->log_depth = in->log_depth;
	cq->pi = n;
	cq->overflowed = false;
done:
	cq->resizing = false;
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
	return status;
}

/**
 * shca_hw_cmd_query_cq() - run QUERY_CQ
 * @hw: the device
 * @cmd: the CQ in @cmd->index; its state is returned in @cmd->out.cq
 *
 * Never sleeps; no command mutex.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_query_cq(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd)
{
	struct shca_hw_cq_query *out = &cmd->out.cq;
	struct shca_hw_cq *cq = shca_hw_cq_get(hw, cmd->index);
	unsigned long flags;

	if (!cq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irqsave(&cq->lock, flags);
	out->log_depth = cq->log_depth;
	out->pi = cq->pi;
	out->ci = READ_ONCE(cq->dbrec->ci);
	out->armed = cq->armed;
	out->assoc = atomic_read(&cq->assoc);
	out->overflowed = cq->overflowed;
	out->moder_count = cq->moder_count;
	out->moder_period = cq->moder_period;
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cmd_modify_cq() - run MODIFY_CQ
 * @hw: the device, its command mutex held
 * @cmd: the CQ in @cmd->index, its moderation in @cmd->in.moder
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_modify_cq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	struct shca_hw_cq *cq = shca_hw_cq_get(hw, cmd->index);
	unsigned long flags;

	lockdep_assert_held(&hw->cmd_mutex);
	if (!cq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irqsave(&cq->lock, flags);
	cq->moder_count = cmd->in.moder.count;
	cq->moder_period = cmd->in.moder.period;
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
	return SHCA_HW_OK;
}

