// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: debugfs test knobs and mirrors of the device's state.
 *
 * /sys/kernel/debug/shca/
 *   teardown_delay_ms  every device teardown waits this long (at most
 *                  5000 ms) after its EQ is gone and before the model
 *                  powers off, to widen the window against rmmod
 *   teardowns      read-only: device teardowns begun and not yet finished
 *
 * /sys/kernel/debug/shca/<ibdev>/
 *   caps           read-only mirror of the device's capability table
 *   cmd_counts     read-only: commands executed, by opcode
 *   fail_cmd_once  one-shot injection: write an opcode number and the next
 *                  command with that opcode fails; reads back -1 once it
 *                  has fired.  Write -1 to cancel.
 *   engine_paused  1 stops the execution units (doorbells are remembered),
 *                  0 restarts them
 *   engine_step    write N: a paused device runs N more WQEs (refused
 *                  when not paused); reads back the steps not yet taken
 *   next_qpn       where the cyclic QPN search starts next; write a freed
 *                  QPN to have it reissued at once
 *   eq             read-only: the event queue's depth, limit, EQEs written
 *                  and acknowledged, and objects owing an event
 *   eq_paused      1 holds the interrupt handler before it drains the EQ
 *                  (EQEs pile up), 0 lets it go on
 *   eq_delay_us    the handler sleeps this long per EQE (at most 100 ms)
 *   eq_limit       the EQ counts as full at this many unacknowledged
 *                  EQEs (0: its depth), to overrun it on purpose
 *   windows/<name>/   a race window (cqe_publish, fence_sweep):
 *     delay_us     every pass waits this long (at most 100 ms)
 *     qpn          only passes for this QPN count; 0 for every QPN
 *     hold         one-shot: write 1 and the next pass stops in the window
 *                  until 0 is written; reads 0 idle, 1 armed, 2 holding
 *     passes       read-only: passes counted
 *     timeouts     read-only: holds given up because nobody released them
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/seq_file.h>

#include "shca.h"

static struct dentry *shca_debugfs_root;
/* The teardown_delay_ms knob. */
static u32 shca_teardown_delay_ms;

#define SHCA_TEARDOWN_DELAY_MAX_MS	5000

static int shca_caps_show(struct seq_file *s, void *unused)
{
	struct shca_dev *sdev = s->private;
	const struct shca_hw_caps *c = shca_hw_caps(sdev->hw);

	const struct {
		const char *name;
		u64 val;
	} rows[] = {
		{ "max_mr_size", c->max_mr_size },
		{ "page_size_cap", c->page_size_cap },
		{ "max_qp", c->max_qp },
		{ "max_qp_wr", c->max_qp_wr },
		{ "max_send_sge", c->max_send_sge },
		{ "max_recv_sge", c->max_recv_sge },
		{ "max_sge_rd", c->max_sge_rd },
		{ "max_cq", c->max_cq },
		{ "max_cqe", c->max_cqe },
		{ "max_mr", c->max_mr },
		{ "max_pd", c->max_pd },
		{ "max_qp_rd_atom", c->max_qp_rd_atom },
		{ "max_qp_init_rd_atom", c->max_qp_init_rd_atom },
		{ "max_srq", c->max_srq },
		{ "max_srq_wr", c->max_srq_wr },
		{ "max_srq_sge", c->max_srq_sge },
		{ "max_ah", c->max_ah },
		{ "max_fast_reg_page_list_len", c->max_fast_reg_page_list_len },
		{ "max_inline_data", c->max_inline_data },
		{ "max_msg_sz", c->max_msg_sz },
		{ "max_pkeys", c->max_pkeys },
		{ "gid_tbl_len", c->gid_tbl_len },
		{ "max_mtu", c->max_mtu },
		{ "local_ca_ack_delay", c->local_ca_ack_delay },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		seq_printf(s, "%-28s %llu\n", rows[i].name, rows[i].val);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_caps);

static int shca_cmd_counts_show(struct seq_file *s, void *unused)
{
	struct shca_dev *sdev = s->private;
	int op;

	for (op = 0; op < SHCA_CMD_NUM_OPCODES; op++)
		seq_printf(s, "%2d %-12s %llu\n", op, shca_hw_opcode_name(op),
			   shca_hw_cmd_count(sdev->hw, op));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_cmd_counts);

static int shca_fail_cmd_once_get(void *data, u64 *val)
{
	struct shca_dev *sdev = data;

	*val = (u64)(s64)shca_hw_injected_cmd_failure(sdev->hw);
	return 0;
}

static int shca_fail_cmd_once_set(void *data, u64 val)
{
	struct shca_dev *sdev = data;
	s64 op = (s64)val;

	/* Signed: "-1" cancels. */
	if (op < INT_MIN || op > INT_MAX)
		return -EINVAL;
	return shca_hw_inject_cmd_failure(sdev->hw, op);
}
DEFINE_DEBUGFS_ATTRIBUTE_SIGNED(shca_fail_cmd_once_fops,
				shca_fail_cmd_once_get,
				shca_fail_cmd_once_set, "%lld\n");

static int shca_engine_paused_get(void *data, u64 *val)
{
	*val = shca_hw_engine_paused(((struct shca_dev *)data)->hw);
	return 0;
}

static int shca_engine_paused_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	shca_hw_engine_pause(((struct shca_dev *)data)->hw, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_engine_paused_fops, shca_engine_paused_get,
			 shca_engine_paused_set, "%llu\n");

static int shca_engine_step_get(void *data, u64 *val)
{
	*val = shca_hw_engine_steps_left(((struct shca_dev *)data)->hw);
	return 0;
}

static int shca_engine_step_set(void *data, u64 val)
{
	struct shca_hw *hw = ((struct shca_dev *)data)->hw;

	if (!shca_hw_engine_paused(hw) || !val ||
	    val > S32_MAX - shca_hw_engine_steps_left(hw))
		return -EINVAL;
	shca_hw_engine_single_step(hw, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_engine_step_fops, shca_engine_step_get,
			 shca_engine_step_set, "%llu\n");

static int shca_next_qpn_get(void *data, u64 *val)
{
	*val = shca_hw_next_qpn(((struct shca_dev *)data)->hw);
	return 0;
}

static int shca_next_qpn_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	return shca_hw_set_next_qpn(((struct shca_dev *)data)->hw, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_next_qpn_fops, shca_next_qpn_get,
			 shca_next_qpn_set, "%llu\n");

static int shca_eq_show(struct seq_file *s, void *unused)
{
	struct shca_dev *sdev = s->private;
	struct shca_hw_eq_state st;

	shca_hw_eq_query(sdev->hw, &st);
	seq_printf(s, "depth %u\nlimit %u\nwritten %llu\nacked %llu\nowing %u\n",
		   st.depth, st.limit, st.written, st.acked, st.owing);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_eq);

static int shca_eq_paused_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct shca_dev *)data)->eq_paused);
	return 0;
}

static int shca_eq_paused_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	shca_eq_pause(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_eq_paused_fops, shca_eq_paused_get,
			 shca_eq_paused_set, "%llu\n");

static int shca_eq_delay_us_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct shca_dev *)data)->eq_delay_us);
	return 0;
}

static int shca_eq_delay_us_set(void *data, u64 val)
{
	if (val > 100000)
		return -EINVAL;
	WRITE_ONCE(((struct shca_dev *)data)->eq_delay_us, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_eq_delay_us_fops, shca_eq_delay_us_get,
			 shca_eq_delay_us_set, "%llu\n");

static int shca_eq_limit_get(void *data, u64 *val)
{
	struct shca_hw_eq_state st;

	shca_hw_eq_query(((struct shca_dev *)data)->hw, &st);
	*val = st.limit;
	return 0;
}

static int shca_eq_limit_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	shca_hw_eq_set_limit(((struct shca_dev *)data)->hw, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_eq_limit_fops, shca_eq_limit_get,
			 shca_eq_limit_set, "%llu\n");

static int shca_window_hold_get(void *data, u64 *val)
{
	*val = atomic_read(&((struct shca_hw_window *)data)->state);
	return 0;
}

static int shca_window_hold_set(void *data, u64 val)
{
	struct shca_hw_window *win = data;

	if (val > 1)
		return -EINVAL;
	if (val)
		shca_hw_window_arm(win);
	else
		shca_hw_window_release(win);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_window_hold_fops, shca_window_hold_get,
			 shca_window_hold_set, "%llu\n");

static int shca_window_passes_get(void *data, u64 *val)
{
	*val = atomic64_read(&((struct shca_hw_window *)data)->passes);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_window_passes_fops, shca_window_passes_get,
			 NULL, "%llu\n");

static const char * const shca_window_names[SHCA_WIN_NUM] = {
	[SHCA_WIN_CQE_PUBLISH]	= "cqe_publish",
	[SHCA_WIN_FENCE_SWEEP]	= "fence_sweep",
	[SHCA_WIN_MEM_ACCESS]	= "mem_access",
};

static void shca_debugfs_add_windows(struct shca_dev *sdev,
				     struct dentry *parent)
{
	struct dentry *dir = debugfs_create_dir("windows", parent);
	struct shca_hw_window *win;
	struct dentry *d;
	int i;

	for (i = 0; i < SHCA_WIN_NUM; i++) {
		win = shca_hw_window(sdev->hw, i);
		d = debugfs_create_dir(shca_window_names[i], dir);
		debugfs_create_u32("delay_us", 0600, d, &win->delay_us);
		debugfs_create_u32("qpn", 0600, d, &win->qpn);
		debugfs_create_file_unsafe("hold", 0600, d, win,
					   &shca_window_hold_fops);
		debugfs_create_file_unsafe("passes", 0400, d, win,
					   &shca_window_passes_fops);
		debugfs_create_atomic_t("timeouts", 0400, d, &win->timeouts);
	}
}

/**
 * shca_debugfs_add_dev() - create a device's debugfs directory
 * @sdev: the device, about to be registered
 * @name: its name, and the directory's
 */
void shca_debugfs_add_dev(struct shca_dev *sdev, const char *name)
{
	struct dentry *d;

	d = debugfs_create_dir(name, shca_debugfs_root);
	sdev->debugfs = d;
	debugfs_create_file("caps", 0400, d, sdev, &shca_caps_fops);
	debugfs_create_file("cmd_counts", 0400, d, sdev,
			    &shca_cmd_counts_fops);
	debugfs_create_file_unsafe("fail_cmd_once", 0600, d, sdev,
				   &shca_fail_cmd_once_fops);
	debugfs_create_file_unsafe("engine_paused", 0600, d, sdev,
				   &shca_engine_paused_fops);
	debugfs_create_file_unsafe("engine_step", 0600, d, sdev,
				   &shca_engine_step_fops);
	debugfs_create_file_unsafe("next_qpn", 0600, d, sdev,
				   &shca_next_qpn_fops);
	debugfs_create_file("eq", 0400, d, sdev, &shca_eq_fops);
	debugfs_create_file_unsafe("eq_paused", 0600, d, sdev,
				   &shca_eq_paused_fops);
	debugfs_create_file_unsafe("eq_delay_us", 0600, d, sdev,
				   &shca_eq_delay_us_fops);
	debugfs_create_file_unsafe("eq_limit", 0600, d, sdev,
				   &shca_eq_limit_fops);
	shca_debugfs_add_windows(sdev, d);
}

/**
 * shca_debugfs_del_dev() - remove a device's debugfs directory
 * @sdev: the device; its directory may never have been made
 */
void shca_debugfs_del_dev(struct shca_dev *sdev)
{
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
}

/**
 * shca_debugfs_init() - create /sys/kernel/debug/shca
 * @teardowns: the driver's count of teardowns in progress, mirrored
 */
void shca_debugfs_init(atomic_t *teardowns)
{
	shca_debugfs_root = debugfs_create_dir("shca", NULL);
	debugfs_create_atomic_t("teardowns", 0400, shca_debugfs_root,
				teardowns);
	debugfs_create_u32("teardown_delay_ms", 0600, shca_debugfs_root,
			   &shca_teardown_delay_ms);
}

/**
 * shca_debugfs_teardown_delay() - wait as long as teardown_delay_ms says
 *
 * Called by a device's teardown between the EQ and the model.
 */
void shca_debugfs_teardown_delay(void)
{
	u32 ms = min(READ_ONCE(shca_teardown_delay_ms),
		     SHCA_TEARDOWN_DELAY_MAX_MS);

	if (ms)
		msleep(ms);
}

/**
 * shca_debugfs_exit() - remove /sys/kernel/debug/shca
 */
void shca_debugfs_exit(void)
{
	debugfs_remove_recursive(shca_debugfs_root);
	shca_debugfs_root = NULL;
}
