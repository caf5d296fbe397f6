// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: race windows, for tests.
 *
 * A window is a point where the device (or the driver, for the windows it
 * passes through) is between two steps whose order matters: a CQE written
 * but not yet published, a QP fenced but not yet swept.  A test can widen
 * a window with a delay, or arm it so that the next pass stops there until
 * the test releases it.  Holding a window open turns a race a test would
 * otherwise hope to hit into a sequence it controls.
 *
 * A pass that waits sleeps, holding no spinlock, so a held window never
 * stops a CPU.  Windows cost nothing until a test watches one: a pass is
 * a static branch, patched in once a test takes a window's handle
 * (shca_hw_window()) or writes one of its debugfs knobs, and out again
 * when the last device with a watched window is destroyed.  While it is
 * in, every pass costs a counter.
 * It does stop whatever waits for the pass: a held CQE write keeps every
 * other writer to that CQ waiting (CQEs are published in order), and with
 * them the execution units and commands that write to it.  A hold nobody
 * releases gives up after SHCA_HW_WIN_HOLD_MS, and the give-up is
 * counted; a delay is capped at SHCA_HW_WIN_MAX_DELAY_US.
 *
 * The windows are the model's: the driver only passes through one
 * (shca_hw_window_pass()); tests reach them through shca_hw_test.h and
 * the model's debugfs files.
 *
 * Lock order: none of its own.  A pass sleeps with no spinlock held; the
 * CQE publish window is passed with the CQ's write_mutex held, the
 * memory access window with the responder's resp_mutex, the multicast
 * delivery, both doorbell windows, both poller windows and the ODP defer
 * window with only the QP's turn_mutex, the CQ resize and both backstop
 * windows with no lock.
 */
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jump_label.h>

#include "shca_hw_int.h"

#define SHCA_HW_WIN_HOLD_MS		30000
#define SHCA_HW_WIN_MAX_DELAY_US	100000

/* One count per watched window of any device; see shca_hw_window_watch(). */
DEFINE_STATIC_KEY_FALSE(shca_hw_windows_watched);
EXPORT_SYMBOL_IF_KUNIT(shca_hw_windows_watched);

static const char * const shca_hw_window_names[SHCA_WIN_NUM] = {
	[SHCA_WIN_CQE_PUBLISH]	= "cqe_publish",
	[SHCA_WIN_FENCE_SWEEP]	= "fence_sweep",
	[SHCA_WIN_MEM_ACCESS]	= "mem_access",
	[SHCA_WIN_MCAST_DELIVER] = "mcast_deliver",
	[SHCA_WIN_DB_IDLE]	= "db_idle",
	[SHCA_WIN_DB_RECHECK]	= "db_recheck",
	[SHCA_WIN_CQ_ARM]	= "cq_arm",
	[SHCA_WIN_ROUTE]	= "route",
	[SHCA_WIN_ODP_DEFER]	= "odp_defer",
	[SHCA_WIN_CQ_RESIZE]	= "cq_resize",
	[SHCA_WIN_SRQ_RESIZE]	= "srq_resize",
	[SHCA_WIN_BACKSTOP_IDLE] = "backstop_idle",
	[SHCA_WIN_BACKSTOP_RECHECK] = "backstop_recheck",
	[SHCA_WIN_POLL_IDLE]	= "poll_idle",
	[SHCA_WIN_POLL_RECHECK]	= "poll_recheck",
};

/**
 * shca_hw_window_name() - a window's name, as debugfs shows it
 * @id: the window
 *
 * Return: the name.
 */
const char *shca_hw_window_name(enum shca_hw_window_id id)
{
	return shca_hw_window_names[id];
}

/**
 * shca_hw_windows_init() - set up a new device's race windows, all idle
 * @hw: the device
 */
void shca_hw_windows_init(struct shca_hw *hw)
{
	int i;

	for (i = 0; i < SHCA_WIN_NUM; i++) {
		atomic_set(&hw->windows[i].state, SHCA_HW_WIN_IDLE);
		init_waitqueue_head(&hw->windows[i].wait);
	}
}

/**
 * shca_hw_windows_fini() - let a device's watched windows go
 * @hw: the device, with no pass left to come
 */
void shca_hw_windows_fini(struct shca_hw *hw)
{
	int i;

	for (i = 0; i < SHCA_WIN_NUM; i++)
		if (test_and_clear_bit(0, &hw->windows[i].watched))
			static_branch_dec(&shca_hw_windows_watched);
}

/*
 * From now on passes through every window are counted, and this one's
 * knobs take effect.  May sleep (it may patch the branches in).
 */
static void shca_hw_window_watch(struct shca_hw_window *win)
{
	might_sleep();
	if (!test_and_set_bit(0, &win->watched))
		static_branch_inc(&shca_hw_windows_watched);
}

/**
 * shca_hw_window() - one of a device's race windows
 * @hw: the device
 * @id: which window
 *
 * Taking the handle watches the window: passes are counted from now on,
 * until the device is destroyed.  May sleep.
 *
 * Return: the window, a handle for the functions below.
 */
struct shca_hw_window *shca_hw_window(struct shca_hw *hw,
				      enum shca_hw_window_id id)
{
	shca_hw_window_watch(&hw->windows[id]);
	return &hw->windows[id];
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window);

/**
 * __shca_hw_window_enter() - shca_hw_window_enter() while a window is watched
 * @win: the window
 * @qpn: the QP the pass is for
 *
 * Return: true if the window has a delay or is armed for this pass.
 */
bool __shca_hw_window_enter(struct shca_hw_window *win, u32 qpn)
{
	u32 filter = READ_ONCE(win->qpn);

	if (filter && filter != qpn)
		return false;
	atomic64_inc(&win->passes);
	return READ_ONCE(win->delay_us) ||
	       atomic_read(&win->state) == SHCA_HW_WIN_ARMED;
}

/**
 * shca_hw_window_wait() - sleep the window's delay, and stop if armed
 * @win: the window, entered
 *
 * A pass stopped here goes on at shca_hw_window_release().
 */
void shca_hw_window_wait(struct shca_hw_window *win)
{
	u32 delay = min_t(u32, READ_ONCE(win->delay_us),
			  SHCA_HW_WIN_MAX_DELAY_US);
	long left;

	might_sleep();
	if (delay)
		fsleep(delay);
	if (atomic_cmpxchg(&win->state, SHCA_HW_WIN_ARMED,
			   SHCA_HW_WIN_HELD) != SHCA_HW_WIN_ARMED)
		return;
	wake_up_all(&win->wait);
	left = wait_event_timeout(win->wait,
				  atomic_read(&win->state) != SHCA_HW_WIN_HELD,
				  msecs_to_jiffies(SHCA_HW_WIN_HOLD_MS));
	if (!left && atomic_cmpxchg(&win->state, SHCA_HW_WIN_HELD,
				    SHCA_HW_WIN_IDLE) == SHCA_HW_WIN_HELD) {
		atomic_inc(&win->timeouts);
		wake_up_all(&win->wait);
	}
}

/**
 * __shca_hw_window_pass() - shca_hw_window_pass() while a window is watched
 * @hw: the device
 * @id: the window
 * @qpn: the QP the pass is for
 */
void __shca_hw_window_pass(struct shca_hw *hw, enum shca_hw_window_id id,
			   u32 qpn)
{
	struct shca_hw_window *win = &hw->windows[id];

	if (shca_hw_window_enter(win, qpn))
		shca_hw_window_wait(win);
}

/**
 * shca_hw_window_set_qpn() - count, delay and hold only one QP's passes
 * @win: the window
 * @qpn: the QPN, or 0 for every QP
 */
void shca_hw_window_set_qpn(struct shca_hw_window *win, u32 qpn)
{
	WRITE_ONCE(win->qpn, qpn);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_set_qpn);

/**
 * shca_hw_window_set_delay() - make every pass through a window sleep
 * @win: the window
 * @delay_us: how long, capped at SHCA_HW_WIN_MAX_DELAY_US; 0 for none
 */
void shca_hw_window_set_delay(struct shca_hw_window *win, u32 delay_us)
{
	WRITE_ONCE(win->delay_us, delay_us);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_set_delay);

/**
 * shca_hw_window_state() - whether a window is idle, armed or holding
 * @win: the window
 *
 * Return: SHCA_HW_WIN_IDLE, SHCA_HW_WIN_ARMED or SHCA_HW_WIN_HELD.
 */
int shca_hw_window_state(struct shca_hw_window *win)
{
	return atomic_read(&win->state);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_state);

/**
 * shca_hw_window_passes() - passes through a window so far
 * @win: the window
 *
 * Return: the passes counted (those of its QPN only, if it has one).
 */
u64 shca_hw_window_passes(struct shca_hw_window *win)
{
	return atomic64_read(&win->passes);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_passes);

/**
 * shca_hw_window_timeouts() - holds a window gave up
 * @win: the window
 *
 * Return: the holds nobody released within SHCA_HW_WIN_HOLD_MS.
 */
int shca_hw_window_timeouts(struct shca_hw_window *win)
{
	return atomic_read(&win->timeouts);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_timeouts);

/**
 * shca_hw_window_arm() - make the next matching pass stop in the window
 * @win: the window
 */
void shca_hw_window_arm(struct shca_hw_window *win)
{
	atomic_set(&win->state, SHCA_HW_WIN_ARMED);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_arm);

/**
 * shca_hw_window_wait_held() - wait until a pass is stopped in the window
 * @win: the window, armed
 * @timeout: jiffies to wait at most
 *
 * Return: true once a pass is held; false if none came in time.
 */
bool shca_hw_window_wait_held(struct shca_hw_window *win,
			      unsigned long timeout)
{
	return wait_event_timeout(win->wait, atomic_read(&win->state) ==
				  SHCA_HW_WIN_HELD, timeout) > 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_wait_held);

/**
 * shca_hw_window_release() - let a held pass go on, or disarm the window
 * @win: the window
 */
void shca_hw_window_release(struct shca_hw_window *win)
{
	atomic_set(&win->state, SHCA_HW_WIN_IDLE);
	wake_up_all(&win->wait);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_window_release);

static int shca_hw_window_hold_get(void *data, u64 *val)
{
	*val = shca_hw_window_state(data);
	return 0;
}

static int shca_hw_window_hold_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	shca_hw_window_watch(data);
	if (val)
		shca_hw_window_arm(data);
	else
		shca_hw_window_release(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_window_hold_fops, shca_hw_window_hold_get,
			 shca_hw_window_hold_set, "%llu\n");

static int shca_hw_window_delay_get(void *data, u64 *val)
{
	struct shca_hw_window *win = data;

	*val = READ_ONCE(win->delay_us);
	return 0;
}

static int shca_hw_window_delay_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	shca_hw_window_watch(data);
	shca_hw_window_set_delay(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_window_delay_fops, shca_hw_window_delay_get,
			 shca_hw_window_delay_set, "%llu\n");

static int shca_hw_window_qpn_get(void *data, u64 *val)
{
	struct shca_hw_window *win = data;

	*val = READ_ONCE(win->qpn);
	return 0;
}

static int shca_hw_window_qpn_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	shca_hw_window_watch(data);
	shca_hw_window_set_qpn(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_window_qpn_fops, shca_hw_window_qpn_get,
			 shca_hw_window_qpn_set, "%llu\n");

static int shca_hw_window_passes_get(void *data, u64 *val)
{
	*val = shca_hw_window_passes(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_window_passes_fops,
			 shca_hw_window_passes_get, NULL, "%llu\n");

/**
 * shca_hw_window_debugfs() - create windows/, a directory per race window
 * @hw: the device
 * @parent: the device's debugfs directory, which gets windows/
 */
void shca_hw_window_debugfs(struct shca_hw *hw, struct dentry *parent)
{
	struct dentry *dir = debugfs_create_dir("windows", parent);
	struct shca_hw_window *win;
	struct dentry *d;
	int i;

	for (i = 0; i < SHCA_WIN_NUM; i++) {
		win = &hw->windows[i];
		d = debugfs_create_dir(shca_hw_window_name(i), dir);
		debugfs_create_file_unsafe("delay_us", 0600, d, win,
					   &shca_hw_window_delay_fops);
		debugfs_create_file_unsafe("qpn", 0600, d, win,
					   &shca_hw_window_qpn_fops);
		debugfs_create_file_unsafe("hold", 0600, d, win,
					   &shca_hw_window_hold_fops);
		debugfs_create_file_unsafe("passes", 0400, d, win,
					   &shca_hw_window_passes_fops);
		debugfs_create_atomic_t("timeouts", 0400, d, &win->timeouts);
	}
}
