// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the adaptive pollers.
 *
 * A turn that finds its send queue empty normally stops: it clears the
 * doorbell record's sq_running and looks at the producer index once more
 * (shca_hw_req_park()), and the driver's next post rings.  When another
 * CPU is free, a poller takes the QP instead, as io_uring's SQPOLL thread
 * takes a ring: the turn hands it over with sq_running still set, so the
 * driver goes on posting without doorbells, and the poller, a work item
 * bound to that CPU, runs the QP's turn whenever the index moves.
 *
 * A poller lets its QPs go when none of them had work for its idle
 * window; at once when its CPU is wanted (need_resched()) or another task
 * can run there, when the device is paused, and when poll_us is 0.  Each
 * QP goes as a stopping turn would: sq_running cleared, a full barrier,
 * the producer index read again (windows poll_idle and poll_recheck), so
 * either the driver sees the bit clear and rings, or the poller sees its
 * WQE and queues the QP's turn.  The idle window adapts: halved whenever
 * it ran out, doubled when work came in its second half, between
 * SHCA_HW_POLL_MIN_NS and poll_us (debugfs, at most SHCA_HW_POLL_MAX_US; 0,
 * the default, turns the pollers off; the poll_us module parameter sets it
 * for the devices created after it).
 * A poller that found its CPU busy is passed over for poll_shun_us (1 ms
 * by default; tests that must know where a QP goes set 0), and twice as
 * long each time in a row, until it serves work again.
 *
 * A turn run by an execution unit hands its QP to the poller of its own
 * CPU, which it is about to leave; a doorbell's caller's CPU is its
 * process's, so that turn looks for another.  Kernel and user QPs alike.
 *
 * Lock order: a poller takes a QP's turn_mutex with nothing held, and its
 * own lock (a leaf, interrupts off) under it or alone.  A QP joins and
 * leaves a poller under both, so that either tells whether a poller holds
 * it.  The poller holds the QP's reference while it serves it; a fence
 * takes the QP from its poller under its turn_mutex
 * (shca_hw_poll_forget()), so the poller is one more turn holder.
 */
#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/timekeeping.h>

#include "shca_hw_int.h"

static unsigned int poll_us = SHCA_HW_POLL_DEFAULT_US;
module_param(poll_us, uint, 0644);
MODULE_PARM_DESC(poll_us,
		 "the adaptive pollers' longest idle window in us for new devices (0..50; 0, the default, turns them off); debugfs poll_us changes one device's");

/* Whether a turn may hand a QP to @p: it holds some, or was not busy. */
static bool shca_hw_poll_open(struct shca_hw_poller *p, u64 now)
{
	return READ_ONCE(p->nr) || now >= READ_ONCE(p->shun_until);
}

/*
 * The poller a QP goes to: the turn's own CPU's, when an execution unit
 * ran it, else the first other online CPU's that holds QPs already, else
 * the first other that was not found busy.  NULL if none may take it.
 */
static struct shca_hw_poller *shca_hw_poll_pick(struct shca_hw *hw,
						enum shca_hw_turn_by by)
{
	struct shca_hw_poller *p, *open = NULL;
	int self = raw_smp_processor_id();
	u64 now = ktime_get_ns();
	int cpu;

	if (by == SHCA_HW_TURN_UNIT && shca_hw_poll_open(&hw->pollers[self], now))
		return &hw->pollers[self];
	for_each_online_cpu(cpu) {
		p = &hw->pollers[cpu];
		if (cpu == self || !shca_hw_poll_open(p, now))
			continue;
		if (READ_ONCE(p->nr))
			return p;
		if (!open)
			open = p;
	}
	return open;
}

/**
 * shca_hw_poll_adopt() - hand a QP whose send queue is empty to a poller
 * @qp: the QP, its turn_mutex held by a turn that found no WQE to run
 * @by: who runs the turn: an execution unit or a doorbell's caller
 *
 * Only a QP whose sq_running is set goes: the turn ran a WQE, so the
 * driver may be posting more.  None goes while the device is paused,
 * while its turn is queued (a retry timer), or while poll_us is 0.
 *
 * Return: true if a poller holds the QP now (or held it already): the
 * turn stops with sq_running set and does not look again.
 */
bool shca_hw_poll_adopt(struct shca_hw_qp *qp, enum shca_hw_turn_by by)
{
	struct shca_hw *hw = qp->hw;
	struct shca_hw_poller *p;
	unsigned long flags;

	lockdep_assert_held(&qp->turn_mutex);
	if (qp->poller)
		return true;
	if (!READ_ONCE(hw->poll_us) || !READ_ONCE(qp->dbrec->sq_running) ||
	    READ_ONCE(hw->engine_paused) || delayed_work_pending(&qp->engine))
		return false;
	p = shca_hw_poll_pick(hw, by);
	if (!p)
		return false;
	spin_lock_irqsave(&p->lock, flags);
	list_add_tail(&qp->poll_node, &p->watch);
	p->nr++;
	qp->poller = p;
	spin_unlock_irqrestore(&p->lock, flags);
	shca_hw_count(hw, SHCA_CNT_POLL_ADOPTS);
	/* Running already, it runs again: it never misses the new QP. */
	queue_work_on(p->cpu, hw->poll_wq, &p->work);
	return true;
}

/*
 * The next QP of @p's list, moved to its tail and held; NULL when the
 * list is empty.  *@skipped says a QP being destroyed was passed: it
 * stays until its fence takes it.
 */
static struct shca_hw_qp *shca_hw_poll_next(struct shca_hw_poller *p,
					    bool *skipped)
{
	struct shca_hw_qp *qp;
	unsigned long flags;

	*skipped = false;
	spin_lock_irqsave(&p->lock, flags);
	qp = list_first_entry_or_null(&p->watch, struct shca_hw_qp, poll_node);
	if (qp) {
		list_move_tail(&qp->poll_node, &p->watch);
		if (!refcount_inc_not_zero(&qp->ref)) {
			*skipped = true;
			qp = NULL;
		}
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return qp;
}

static u32 shca_hw_poll_count(struct shca_hw_poller *p)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&p->lock, flags);
	n = p->nr;
	spin_unlock_irqrestore(&p->lock, flags);
	return n;
}

/*
 * Let @qp go, as a stopping turn does: clear sq_running, issue a full
 * barrier, and queue the QP's turn for a WQE posted meanwhile.  No second
 * look where a turn comes anyway (queued) or cannot run (paused:
 * restarting kicks every QP).
 */
static void shca_hw_poll_release(struct shca_hw_poller *p,
				 struct shca_hw_qp *qp)
{
	struct shca_hw *hw = p->hw;
	unsigned long flags;
	bool due;

	lockdep_assert_held(&qp->turn_mutex);
	if (qp->poller != p)
		return;
	shca_hw_poll_forget(qp);
	shca_hw_window_pass(hw, SHCA_WIN_POLL_IDLE, qp->qpn);
	WRITE_ONCE(qp->dbrec->sq_running, 0);
	/* Pairs with the driver's barrier between sq_pi and sq_running. */
	smp_mb();
	shca_hw_window_pass(hw, SHCA_WIN_POLL_RECHECK, qp->qpn);
	if (delayed_work_pending(&qp->engine) || READ_ONCE(hw->engine_paused))
		return;
	spin_lock_irqsave(&qp->lock, flags);
	due = shca_hw_qp_sq_due(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (due) {
		shca_hw_count(hw, SHCA_CNT_DB_RECHECKS);
		shca_hw_sched_kick(qp);
	}
}

/* Let every QP of @p go: each once, waiting for its turn_mutex. */
static void shca_hw_poll_release_all(struct shca_hw_poller *p)
{
	struct shca_hw_qp *qp;
	bool skipped;
	u32 n;

	for (n = shca_hw_poll_count(p); n; n--) {
		qp = shca_hw_poll_next(p, &skipped);
		if (!qp) {
			if (skipped)
				continue;
			break;
		}
		mutex_lock(&qp->turn_mutex);
		shca_hw_poll_release(p, qp);
		mutex_unlock(&qp->turn_mutex);
		shca_hw_qp_put(qp);
	}
}

/*
 * One pass over @p's QPs: the turn of each whose producer index moved,
 * unless another runner has it or it is queued.  Returns true if any
 * turn ran.
 */
static bool shca_hw_poll_pass(struct shca_hw_poller *p)
{
	struct shca_hw *hw = p->hw;
	struct shca_hw_qp *qp;
	bool worked = false;
	unsigned long flags;
	bool skipped, due;
	u32 n;

	for (n = shca_hw_poll_count(p); n; n--) {
		qp = shca_hw_poll_next(p, &skipped);
		if (!qp) {
			if (skipped)
				continue;
			break;
		}
		if (mutex_trylock(&qp->turn_mutex)) {
			due = false;
			if (qp->poller == p && !delayed_work_pending(&qp->engine)) {
				spin_lock_irqsave(&qp->lock, flags);
				due = shca_hw_qp_sq_due(qp);
				spin_unlock_irqrestore(&qp->lock, flags);
			}
			if (due) {
				shca_hw_count(hw, SHCA_CNT_POLL_TURNS);
				/* Work left stays for the next pass. */
				hw->turn(qp, SHCA_HW_TURN_POLLER);
				worked = true;
			}
			mutex_unlock(&qp->turn_mutex);
		}
		shca_hw_qp_put(qp);
	}
	return worked;
}

/*
 * @p found its CPU busy: pass it over for poll_shun_us, twice as long each
 * time in a row (up to SHCA_HW_POLL_SHUN_MAX_X times), so that a CPU two
 * busy-polling processes keep busy is seldom disturbed.
 */
static void shca_hw_poll_shun(struct shca_hw_poller *p)
{
	u32 base = READ_ONCE(p->hw->poll_shun_us);

	if (p->shun_us)
		p->shun_us = min(p->shun_us * 2, base * SHCA_HW_POLL_SHUN_MAX_X);
	else
		p->shun_us = base;
	WRITE_ONCE(p->shun_until,
		   ktime_get_ns() + (u64)p->shun_us * NSEC_PER_USEC);
}

/* A poller's run: it polls its QPs until it lets them all go. */
static void shca_hw_poll_run(struct work_struct *work)
{
	struct shca_hw_poller *p = container_of(work, struct shca_hw_poller,
						work);
	struct shca_hw *hw = p->hw;
	u64 now, max_ns, last = ktime_get_ns();

	while (shca_hw_poll_count(p)) {
		max_ns = (u64)READ_ONCE(hw->poll_us) * NSEC_PER_USEC;
		if (!max_ns || READ_ONCE(hw->engine_paused))
			break;
		if (need_resched() || !single_task_running()) {
			shca_hw_poll_shun(p);
			break;
		}
		p->window_ns = clamp_t(u64, p->window_ns, SHCA_HW_POLL_MIN_NS,
				       max(max_ns, SHCA_HW_POLL_MIN_NS));
		if (shca_hw_poll_pass(p)) {
			/* Work came, the CPU was free: try it again soon. */
			p->shun_us = 0;
			now = ktime_get_ns();
			/* Work came late in the window: wait longer. */
			if (now - last > p->window_ns / 2)
				p->window_ns *= 2;
			last = now;
			continue;
		}
		if (ktime_get_ns() - last > p->window_ns) {
			/* Nothing came: wait less next time. */
			p->window_ns /= 2;
			break;
		}
		cpu_relax();
	}
	shca_hw_poll_release_all(p);
}

/**
 * shca_hw_poll_init() - set up a new device's adaptive pollers
 * @hw: the device
 *
 * Return: 0, or -ENOMEM.
 */
int shca_hw_poll_init(struct shca_hw *hw)
{
	int cpu;

	hw->pollers = kcalloc(nr_cpu_ids, sizeof(*hw->pollers), GFP_KERNEL);
	if (!hw->pollers)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct shca_hw_poller *p = &hw->pollers[cpu];

		p->hw = hw;
		p->cpu = cpu;
		INIT_WORK(&p->work, shca_hw_poll_run);
		spin_lock_init(&p->lock);
		INIT_LIST_HEAD(&p->watch);
		p->window_ns = (u64)SHCA_HW_POLL_MAX_US * NSEC_PER_USEC;
	}
	hw->poll_us = min_t(u32, READ_ONCE(poll_us), SHCA_HW_POLL_MAX_US);
	hw->poll_shun_us = SHCA_HW_POLL_SHUN_US;
	/* Long-running work: it does not hold up the CPU's other work. */
	hw->poll_wq = alloc_workqueue("shca_poll", WQ_CPU_INTENSIVE, 0);
	return hw->poll_wq ? 0 : -ENOMEM;
}

/**
 * shca_hw_poll_fini() - stop a device's pollers
 * @hw: the device, its QPs already freed; a failed init is allowed
 */
void shca_hw_poll_fini(struct shca_hw *hw)
{
	int cpu;

	/* Their fences took every QP: each run stops, if it has not. */
	if (hw->poll_wq)
		destroy_workqueue(hw->poll_wq);
	hw->poll_wq = NULL;
	if (hw->pollers)
		for_each_possible_cpu(cpu)
			WARN_ON_ONCE(!list_empty(&hw->pollers[cpu].watch));
	kfree(hw->pollers);
	hw->pollers = NULL;
}

/**
 * shca_hw_poll_held() - how many QPs the device's pollers hold
 * @hw: the device
 *
 * Return: the number, over every poller.
 */
u32 shca_hw_poll_held(struct shca_hw *hw)
{
	u32 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += shca_hw_poll_count(&hw->pollers[cpu]);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_poll_held);

/**
 * shca_hw_set_poll_us() - set the adaptive pollers' longest idle window
 * @hw: the device
 * @us: microseconds, at most SHCA_HW_POLL_MAX_US; 0 turns the pollers
 *	off, and each lets its QPs go at its next look
 *
 * Return: 0, or -EINVAL for a longer window.
 */
int shca_hw_set_poll_us(struct shca_hw *hw, u32 us)
{
	if (us > SHCA_HW_POLL_MAX_US)
		return -EINVAL;
	WRITE_ONCE(hw->poll_us, us);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_set_poll_us);

/**
 * shca_hw_set_poll_shun_us() - set how long a busy poller is passed over
 * @hw: the device
 * @us: microseconds, at most SHCA_HW_POLL_MAX_SHUN_US; 0 passes none
 *	over, so that a turn of a doorbell's caller always finds another
 *	CPU's poller
 *
 * Return: 0, or -EINVAL for a longer time.
 */
int shca_hw_set_poll_shun_us(struct shca_hw *hw, u32 us)
{
	if (us > SHCA_HW_POLL_MAX_SHUN_US)
		return -EINVAL;
	WRITE_ONCE(hw->poll_shun_us, us);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_set_poll_shun_us);

static int shca_hw_poll_us_get(void *data, u64 *val)
{
	struct shca_hw *hw = data;

	*val = READ_ONCE(hw->poll_us);
	return 0;
}

static int shca_hw_poll_us_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	return shca_hw_set_poll_us(data, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_poll_us_fops, shca_hw_poll_us_get,
			 shca_hw_poll_us_set, "%llu\n");

static int shca_hw_poll_shun_us_get(void *data, u64 *val)
{
	struct shca_hw *hw = data;

	*val = READ_ONCE(hw->poll_shun_us);
	return 0;
}

static int shca_hw_poll_shun_us_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	return shca_hw_set_poll_shun_us(data, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_poll_shun_us_fops, shca_hw_poll_shun_us_get,
			 shca_hw_poll_shun_us_set, "%llu\n");

static int shca_hw_poll_held_get(void *data, u64 *val)
{
	*val = shca_hw_poll_held(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_poll_held_fops, shca_hw_poll_held_get,
			 NULL, "%llu\n");

/**
 * shca_hw_poll_debugfs() - create poll_us, the pollers' longest idle
 *	window, poll_shun_us, how long a busy one is passed over, and
 *	poll_held, the QPs they hold
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_poll_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file_unsafe("poll_us", 0600, dir, hw,
				   &shca_hw_poll_us_fops);
	debugfs_create_file_unsafe("poll_shun_us", 0600, dir, hw,
				   &shca_hw_poll_shun_us_fops);
	debugfs_create_file_unsafe("poll_held", 0400, dir, hw,
				   &shca_hw_poll_held_fops);
}
