// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the doorbells, and the backstop of lazy doorbells.
 *
 * A doorbell tells the device that a producer index in a doorbell record
 * moved: the send doorbell asks the scheduler for the QP's turn, or runs
 * it in its caller's context.
 *
 * A driver may also leave a send doorbell for later, as libshca does
 * while WQEs are outstanding (Documentation/userspace.rst), when the QP's
 * doorbell record says it is lazy and the record's backstop word says the
 * device's backstop for the QP is armed.  A send doorbell of a lazy QP
 * arms it: the QP joins the device's armed list, the word is set, and the
 * backstop's timer runs if it did not.  When the period (backstop_us in
 * debugfs, at most SHCA_HW_BACKSTOP_MAX_US) has passed, a sweep takes
 * every armed QP off the list, clears its word, issues a full barrier and
 * reads the producer index once more: WQEs nobody rang for get the QP's
 * turn.  The driver stores the index, issues a full barrier and reads the
 * word.  So either it sees the word clear and rings, or the sweep sees
 * its WQE (the pairing of sq_running and a stopping turn).  A deferred
 * WQE therefore waits one period at most, and the sweep's wakeup.  The
 * device reads the lazy word only to arm, and never the backstop word:
 * a process that writes either can only delay its own WQEs.
 *
 * Lock order: backstop_lock is a leaf, taken with interrupts off.  The
 * sweep holds each QP it serves (shca_hw_qp.ref), and drops the lock
 * before it passes its windows or takes the QP's lock; a destroy waits
 * for the hold, then takes the QP off the list (shca_hw_backstop_forget()).
 */
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/limits.h>
#include <linux/workqueue.h>

#include "shca_hw_int.h"

/* Serve every armed QP: the period is over. */
static void shca_hw_backstop_sweep(struct work_struct *work)
{
	struct shca_hw *hw = container_of(work, struct shca_hw,
					  backstop_work);
	struct shca_hw_qp *qp, *tmp;
	unsigned long flags;
	LIST_HEAD(swept);
	bool due;

	spin_lock_irqsave(&hw->backstop_lock, flags);
	list_for_each_entry_safe(qp, tmp, &hw->backstop_armed, backstop_node) {
		/* One being destroyed needs no WQE run. */
		if (refcount_inc_not_zero(&qp->ref))
			list_move_tail(&qp->backstop_node, &swept);
		else
			list_del_init(&qp->backstop_node);
	}
	spin_unlock_irqrestore(&hw->backstop_lock, flags);

	list_for_each_entry_safe(qp, tmp, &swept, backstop_node) {
		shca_hw_window_pass(hw, SHCA_WIN_BACKSTOP_IDLE, qp->qpn);
		spin_lock_irqsave(&hw->backstop_lock, flags);
		list_del_init(&qp->backstop_node);
		WRITE_ONCE(qp->dbrec->backstop, 0);
		spin_unlock_irqrestore(&hw->backstop_lock, flags);
		/* Pairs with the driver's barrier between sq_pi and backstop. */
		smp_mb();
		shca_hw_window_pass(hw, SHCA_WIN_BACKSTOP_RECHECK, qp->qpn);
		spin_lock_irqsave(&qp->lock, flags);
		due = shca_hw_qp_sq_due(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (due) {
			shca_hw_count(hw, SHCA_CNT_BACKSTOP_KICKS);
			shca_hw_sched_kick(qp);
		}
		shca_hw_qp_put(qp);
	}
}

static enum hrtimer_restart shca_hw_backstop_fire(struct hrtimer *timer)
{
	struct shca_hw *hw = container_of(timer, struct shca_hw,
					  backstop_timer);

	queue_work(hw->engine_wq, &hw->backstop_work);
	return HRTIMER_NORESTART;
}

/*
 * A send doorbell of a lazy QP arms its backstop.  The timer is started
 * whenever the armed list stops being empty, so a QP on the list always
 * has a sweep ahead of it: the timer's, or one that has yet to empty the
 * list.  A QP a sweep is serving is left alone: its word is clear by the
 * time the sweep looks at its WQEs, so its driver rings.
 */
static void shca_hw_backstop_arm(struct shca_hw_qp *qp)
{
	struct shca_hw *hw = qp->hw;
	u32 us = READ_ONCE(hw->backstop_us);
	unsigned long flags;

	if (!us || !READ_ONCE(qp->dbrec->lazy))
		return;
	spin_lock_irqsave(&hw->backstop_lock, flags);
	if (list_empty(&qp->backstop_node)) {
		if (list_empty(&hw->backstop_armed))
			hrtimer_start(&hw->backstop_timer,
				      ns_to_ktime((u64)us * NSEC_PER_USEC),
				      HRTIMER_MODE_REL);
		list_add_tail(&qp->backstop_node, &hw->backstop_armed);
		WRITE_ONCE(qp->dbrec->backstop, 1);
		shca_hw_count(hw, SHCA_CNT_BACKSTOP_ARMS);
	}
	spin_unlock_irqrestore(&hw->backstop_lock, flags);
}

/**
 * shca_hw_doorbell_init() - set up a new device's backstop
 * @hw: the device
 */
void shca_hw_doorbell_init(struct shca_hw *hw)
{
	spin_lock_init(&hw->backstop_lock);
	INIT_LIST_HEAD(&hw->backstop_armed);
	hrtimer_init(&hw->backstop_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	hw->backstop_timer.function = shca_hw_backstop_fire;
	INIT_WORK(&hw->backstop_work, shca_hw_backstop_sweep);
	hw->backstop_us = SHCA_HW_BACKSTOP_MAX_US;
}

/**
 * shca_hw_doorbell_fini() - stop a device's backstop
 * @hw: the device, its QPs already freed, its execution units still up
 */
void shca_hw_doorbell_fini(struct shca_hw *hw)
{
	hrtimer_cancel(&hw->backstop_timer);
	if (hw->engine_wq)
		cancel_work_sync(&hw->backstop_work);
	WARN_ON_ONCE(!list_empty(&hw->backstop_armed));
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
	shca_hw_backstop_arm(qp);
	shca_hw_sched_kick(qp);
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
 * context only; the caller holds no lock.  The scheduler decides
 * (shca_hw_sched_run_here()).
 */
void shca_hw_ring_sq_run(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_qp *qp;

	might_sleep();
	qp = shca_hw_qp_get(hw, qpn);
	if (!qp)
		return;
	shca_hw_count(hw, SHCA_CNT_DOORBELLS);
	shca_hw_backstop_arm(qp);
	shca_hw_sched_run_here(qp);
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
		shca_hw_sched_kick(qp);
	shca_hw_qp_put(qp);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_ring_rq);

/**
 * shca_hw_backstop_armed() - how many QPs are on the backstop's armed list
 * @hw: the device
 *
 * QPs a sweep is serving are not counted: they are off the list.
 *
 * Return: the number.
 */
u32 shca_hw_backstop_armed(struct shca_hw *hw)
{
	struct list_head *pos;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&hw->backstop_lock, flags);
	list_for_each(pos, &hw->backstop_armed)
		n++;
	spin_unlock_irqrestore(&hw->backstop_lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_backstop_armed);

/**
 * shca_hw_set_backstop_us() - set the period of the lazy doorbells' backstop
 * @hw: the device
 * @us: microseconds, at most SHCA_HW_BACKSTOP_MAX_US; 0 arms no backstop,
 *	so that drivers ring every doorbell.  QPs armed already keep the
 *	sweep ahead of them.
 *
 * Return: 0, or -EINVAL for a longer period.
 */
int shca_hw_set_backstop_us(struct shca_hw *hw, u32 us)
{
	if (us > SHCA_HW_BACKSTOP_MAX_US)
		return -EINVAL;
	WRITE_ONCE(hw->backstop_us, us);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_set_backstop_us);

static int shca_hw_backstop_us_get(void *data, u64 *val)
{
	struct shca_hw *hw = data;

	*val = READ_ONCE(hw->backstop_us);
	return 0;
}

static int shca_hw_backstop_us_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	return shca_hw_set_backstop_us(data, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_backstop_us_fops, shca_hw_backstop_us_get,
			 shca_hw_backstop_us_set, "%llu\n");

/**
 * shca_hw_doorbell_debugfs() - create backstop_us, the lazy doorbells' period
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_doorbell_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file_unsafe("backstop_us", 0600, dir, hw,
				   &shca_hw_backstop_us_fops);
}
