// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the scheduler of the execution units.
 *
 * Each QP has one turn on the device's execution units: a work item on an
 * unbound workqueue.  This unit only schedules turns: it queues a QP's
 * turn when a doorbell rings or the QP's state changes, queues it again
 * after a delay for a retry timer, cancels it for a fence, lets a
 * doorbell's caller run it in its own context, and holds turns back while
 * the device is paused (or lets single steps through).  What a turn does
 * is the requester's business: the scheduler runs it through the handler
 * the device registers at power-on (shca_hw_sched_init()), so it names
 * no unit above it and every unit may call it.
 *
 * Lock order: whoever runs a turn holds shca_hw_qp.turn_mutex (the
 * outermost lock of the data path); the scheduler takes nothing else but
 * the QP table's xarray lock, to kick every QP, a leaf.
 */
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/workqueue.h>

#include "shca_hw_int.h"

/* A QP's turn on an execution unit. */
static void shca_hw_sched_run(struct work_struct *work)
{
	struct shca_hw_qp *qp = container_of(to_delayed_work(work),
					     struct shca_hw_qp, engine);
	bool more;

	mutex_lock(&qp->turn_mutex);
	more = qp->hw->turn(qp, SHCA_HW_TURN_UNIT);
	mutex_unlock(&qp->turn_mutex);
	if (more)
		shca_hw_sched_kick(qp);
}

/**
 * shca_hw_sched_init() - bring up a new device's execution units
 * @hw: the device
 * @turn: what a QP's turn runs, with its turn_mutex held; true if work
 *	is left and the turn goes back in the queue
 *
 * Return: 0, or -ENOMEM.
 */
int shca_hw_sched_init(struct shca_hw *hw, shca_hw_turn_fn turn)
{
	hw->turn = turn;
	hw->engine_wq = alloc_workqueue("shca_engine", WQ_UNBOUND, 0);
	return hw->engine_wq ? 0 : -ENOMEM;
}

/**
 * shca_hw_sched_fini() - stop a device's execution units
 * @hw: the device, its QPs already freed; NULL units are allowed
 */
void shca_hw_sched_fini(struct shca_hw *hw)
{
	if (hw->engine_wq)
		destroy_workqueue(hw->engine_wq);
	hw->engine_wq = NULL;
}

/**
 * shca_hw_sched_qp_init() - give a new QP its turn, not yet queued
 * @qp: the QP
 */
void shca_hw_sched_qp_init(struct shca_hw_qp *qp)
{
	INIT_DELAYED_WORK(&qp->engine, shca_hw_sched_run);
}

/**
 * shca_hw_sched_kick() - queue a QP's turn, unless it is queued already
 * @qp: the QP
 *
 * A turn waiting on a retry timer keeps waiting.
 */
void shca_hw_sched_kick(struct shca_hw_qp *qp)
{
	queue_delayed_work(qp->hw->engine_wq, &qp->engine, 0);
}

/**
 * shca_hw_sched_kick_now() - queue a QP's turn at once
 * @qp: the QP
 *
 * Unlike shca_hw_sched_kick(), cuts a retry timer short: for a QP that
 * went to ERR or SQE and must be flushed.
 */
void shca_hw_sched_kick_now(struct shca_hw_qp *qp)
{
	mod_delayed_work(qp->hw->engine_wq, &qp->engine, 0);
}

/**
 * shca_hw_sched_retry() - queue a QP's turn after a retry timer
 * @qp: the QP, its turn_mutex held by the turn that waits
 * @usecs: the timer
 */
void shca_hw_sched_retry(struct shca_hw_qp *qp, u32 usecs)
{
	lockdep_assert_held(&qp->turn_mutex);
	queue_delayed_work(qp->hw->engine_wq, &qp->engine,
			   usecs_to_jiffies(usecs));
}

/**
 * shca_hw_sched_busy() - whether a QP's turn is queued or running
 * @qp: the QP
 *
 * Return: true if it is.
 */
bool shca_hw_sched_busy(struct shca_hw_qp *qp)
{
	return work_busy(&qp->engine.work);
}

/**
 * shca_hw_sched_cancel() - take a QP's turn out of the queue, and wait
 * @qp: the QP
 *
 * Waits for an execution unit running the turn.  A doorbell's caller may
 * still be running it: the caller takes the QP's turn_mutex after this.
 */
void shca_hw_sched_cancel(struct shca_hw_qp *qp)
{
	cancel_delayed_work_sync(&qp->engine);
}

/**
 * shca_hw_sched_run_here() - run a QP's turn in the doorbell's context
 * @qp: the QP, referenced
 *
 * When the QP's turn is neither running nor queued, the caller runs it
 * here: a process posting small messages to an idle QP does not wait for
 * a worker to wake up.  It runs WQEs until it has moved the requester's
 * caller budget of payload, and queues the rest as usual.  A turn held
 * back by an RNR or transport retry timer stays queued.  For process
 * context only; the caller holds no lock.
 */
void shca_hw_sched_run_here(struct shca_hw_qp *qp)
{
	struct shca_hw *hw = qp->hw;

	might_sleep();
	/* Only a turn's runner queues a retry: none is pending unseen. */
	if (!delayed_work_pending(&qp->engine) &&
	    mutex_trylock(&qp->turn_mutex)) {
		if (!delayed_work_pending(&qp->engine)) {
			shca_hw_count(hw, SHCA_CNT_DOORBELL_RUNS);
			if (hw->turn(qp, SHCA_HW_TURN_CALLER))
				shca_hw_sched_kick(qp);
			mutex_unlock(&qp->turn_mutex);
			return;
		}
		mutex_unlock(&qp->turn_mutex);
	}
	shca_hw_sched_kick(qp);
}

/**
 * shca_hw_sched_may_run() - whether a turn may take a WQE now
 * @hw: the device
 *
 * Always, unless paused; while paused, only as many as single-stepping
 * allows, and each true takes one step.
 *
 * Return: true if the WQE (or flush) may run.
 */
bool shca_hw_sched_may_run(struct shca_hw *hw)
{
	if (!READ_ONCE(hw->engine_paused))
		return true;
	return atomic_dec_if_positive(&hw->engine_steps) >= 0;
}

/* Give every QP a turn, for work held back while paused. */
static void shca_hw_sched_kick_all(struct shca_hw *hw)
{
	struct shca_hw_qp *qp;
	unsigned long index, flags;

	/* Under the table lock, a QP found is not yet being freed. */
	xa_lock_irqsave(&hw->qps, flags);
	xa_for_each(&hw->qps, index, qp)
		shca_hw_sched_kick(qp);
	xa_unlock_irqrestore(&hw->qps, flags);
}

/**
 * shca_hw_engine_pause() - stop or restart the execution units
 * @hw: the device
 * @pause: stop them
 *
 * A paused device executes no WQE and flushes nothing; doorbells are
 * remembered.  Commands still run: destroying a QP still flushes it.
 * Restarting also drops any single steps left.
 */
void shca_hw_engine_pause(struct shca_hw *hw, bool pause)
{
	WRITE_ONCE(hw->engine_paused, pause);
	if (!pause) {
		atomic_set(&hw->engine_steps, 0);
		shca_hw_sched_kick_all(hw);
	}
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_pause);

/**
 * shca_hw_engine_flush() - wait until the turns queued now have run
 * @hw: the device
 *
 * A turn on a retry timer is not waited for.  May sleep.
 */
void shca_hw_engine_flush(struct shca_hw *hw)
{
	flush_workqueue(hw->engine_wq);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_flush);

/**
 * shca_hw_engine_paused() - whether the execution units are paused
 * @hw: the device
 *
 * Return: true if paused.
 */
bool shca_hw_engine_paused(struct shca_hw *hw)
{
	return READ_ONCE(hw->engine_paused);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_paused);

/**
 * shca_hw_engine_single_step() - let a paused device run a few steps
 * @hw: the device
 * @steps: how many more WQEs (or whole-QP flushes) it may run
 *
 * A WQE's step includes the peer's responder and both completions.
 */
void shca_hw_engine_single_step(struct shca_hw *hw, u32 steps)
{
	atomic_add(steps, &hw->engine_steps);
	shca_hw_sched_kick_all(hw);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_single_step);

/**
 * shca_hw_engine_steps_left() - single steps not yet taken
 * @hw: the device
 *
 * Return: the number of steps.
 */
u32 shca_hw_engine_steps_left(struct shca_hw *hw)
{
	return atomic_read(&hw->engine_steps);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_steps_left);

static int shca_hw_engine_paused_get(void *data, u64 *val)
{
	*val = shca_hw_engine_paused(data);
	return 0;
}

static int shca_hw_engine_paused_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	shca_hw_engine_pause(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_engine_paused_fops,
			 shca_hw_engine_paused_get,
			 shca_hw_engine_paused_set, "%llu\n");

static int shca_hw_engine_step_get(void *data, u64 *val)
{
	*val = shca_hw_engine_steps_left(data);
	return 0;
}

static int shca_hw_engine_step_set(void *data, u64 val)
{
	struct shca_hw *hw = data;

	if (!shca_hw_engine_paused(hw) || !val ||
	    val > S32_MAX - shca_hw_engine_steps_left(hw))
		return -EINVAL;
	shca_hw_engine_single_step(hw, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_engine_step_fops, shca_hw_engine_step_get,
			 shca_hw_engine_step_set, "%llu\n");

/**
 * shca_hw_sched_debugfs() - create engine_paused and engine_step, which pause and single-step
 *	the execution units
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_sched_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file_unsafe("engine_paused", 0600, dir, hw,
				   &shca_hw_engine_paused_fops);
	debugfs_create_file_unsafe("engine_step", 0600, dir, hw,
				   &shca_hw_engine_step_fops);
}
