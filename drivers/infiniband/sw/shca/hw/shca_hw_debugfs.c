// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: its debugfs test knobs and mirrors.
 *
 * The model creates these in the directory the driver hands it, the
 * device's /sys/kernel/debug/shca/<ibdev>/, and the driver removes that
 * directory, with them, before it powers the model off.  No other layer
 * writes the model's state; Documentation/debugfs.rst describes each file:
 *
 *   caps, cmd_counts            read-only mirrors of the capability table
 *                               and of the commands run, by opcode
 *   fail_cmd_once               one-shot command failure, by opcode
 *   fail_cmd/                   random command failures (fault_attr);
 *                               only with CONFIG_FAULT_INJECTION_DEBUG_FS
 *   engine_paused, engine_step  pause and single-step the execution units
 *   next_qpn                    the cyclic QPN search's cursor
 *   eq, eq_limit                the event queue's mirror and test limit
 *   mcast                       read-only mirror of the multicast groups
 *   windows/<name>/             the race windows
 *
 * Lock order: the files take the locks of the functions they call, and
 * none of their own.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/limits.h>
#include <linux/seq_file.h>

#include "shca_hw_int.h"

static int shca_hw_caps_show(struct seq_file *s, void *unused)
{
	const struct shca_hw_caps *c = shca_hw_caps(s->private);
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
		{ "max_xrcd", c->max_xrcd },
		{ "max_ah", c->max_ah },
		{ "max_fast_reg_page_list_len", c->max_fast_reg_page_list_len },
		{ "max_inline_data", c->max_inline_data },
		{ "max_msg_sz", c->max_msg_sz },
		{ "max_pkeys", c->max_pkeys },
		{ "gid_tbl_len", c->gid_tbl_len },
		{ "max_mtu", c->max_mtu },
		{ "local_ca_ack_delay", c->local_ca_ack_delay },
		{ "max_mcast_grp", c->max_mcast_grp },
		{ "max_mcast_qp_attach", c->max_mcast_qp_attach },
		{ "max_total_mcast_qp_attach", c->max_total_mcast_qp_attach },
		{ "core_clock_khz", c->core_clock_khz },
		{ "timestamp_mask", c->timestamp_mask },
		{ "max_dm_size", c->max_dm_size },
		{ "dm_log_granule", c->dm_log_granule },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		seq_printf(s, "%-28s %llu\n", rows[i].name, rows[i].val);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_caps);

static int shca_hw_cmd_counts_show(struct seq_file *s, void *unused)
{
	struct shca_hw *hw = s->private;
	int op;

	for (op = 0; op < SHCA_CMD_NUM_OPCODES; op++)
		seq_printf(s, "%2d %-12s %llu\n", op, shca_hw_opcode_name(op),
			   shca_hw_cmd_count(hw, op));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_cmd_counts);

static int shca_hw_mcast_show(struct seq_file *s, void *unused)
{
	shca_hw_mcast_dump(s->private, s);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_mcast);

static int shca_hw_fail_cmd_once_get(void *data, u64 *val)
{
	*val = (u64)(s64)shca_hw_injected_cmd_failure(data);
	return 0;
}

static int shca_hw_fail_cmd_once_set(void *data, u64 val)
{
	s64 op = (s64)val;

	/* Signed: "-1" cancels. */
	if (op < INT_MIN || op > INT_MAX)
		return -EINVAL;
	return shca_hw_inject_cmd_failure(data, op);
}
DEFINE_DEBUGFS_ATTRIBUTE_SIGNED(shca_hw_fail_cmd_once_fops,
				shca_hw_fail_cmd_once_get,
				shca_hw_fail_cmd_once_set, "%lld\n");

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

static int shca_hw_next_qpn_get(void *data, u64 *val)
{
	*val = shca_hw_next_qpn(data);
	return 0;
}

static int shca_hw_next_qpn_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	return shca_hw_set_next_qpn(data, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_next_qpn_fops, shca_hw_next_qpn_get,
			 shca_hw_next_qpn_set, "%llu\n");

static int shca_hw_eq_show(struct seq_file *s, void *unused)
{
	struct shca_hw_eq_state st;

	shca_hw_eq_query(s->private, &st);
	seq_printf(s, "depth %u\nlimit %u\nwritten %llu\nacked %llu\nowing %u\n",
		   st.depth, st.limit, st.written, st.acked, st.owing);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_eq);

static int shca_hw_eq_limit_get(void *data, u64 *val)
{
	struct shca_hw_eq_state st;

	shca_hw_eq_query(data, &st);
	*val = st.limit;
	return 0;
}

static int shca_hw_eq_limit_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	shca_hw_eq_set_limit(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_eq_limit_fops, shca_hw_eq_limit_get,
			 shca_hw_eq_limit_set, "%llu\n");

static int shca_hw_window_hold_get(void *data, u64 *val)
{
	*val = shca_hw_window_state(data);
	return 0;
}

static int shca_hw_window_hold_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	if (val)
		shca_hw_window_arm(data);
	else
		shca_hw_window_release(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_window_hold_fops, shca_hw_window_hold_get,
			 shca_hw_window_hold_set, "%llu\n");

static int shca_hw_window_passes_get(void *data, u64 *val)
{
	*val = shca_hw_window_passes(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_window_passes_fops,
			 shca_hw_window_passes_get, NULL, "%llu\n");

static void shca_hw_debugfs_windows(struct shca_hw *hw, struct dentry *parent)
{
	struct dentry *dir = debugfs_create_dir("windows", parent);
	struct shca_hw_window *win;
	struct dentry *d;
	int i;

	for (i = 0; i < SHCA_WIN_NUM; i++) {
		win = &hw->windows[i];
		d = debugfs_create_dir(shca_hw_window_name(i), dir);
		debugfs_create_u32("delay_us", 0600, d, &win->delay_us);
		debugfs_create_u32("qpn", 0600, d, &win->qpn);
		debugfs_create_file_unsafe("hold", 0600, d, win,
					   &shca_hw_window_hold_fops);
		debugfs_create_file_unsafe("passes", 0400, d, win,
					   &shca_hw_window_passes_fops);
		debugfs_create_atomic_t("timeouts", 0400, d, &win->timeouts);
	}
}

/**
 * shca_hw_debugfs_init() - create the model's debugfs files
 * @hw: the device
 * @dir: the directory to put them in; whoever made it removes it, and
 *	them with it, before the device powers off
 */
void shca_hw_debugfs_init(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file("caps", 0400, dir, hw, &shca_hw_caps_fops);
	debugfs_create_file("cmd_counts", 0400, dir, hw,
			    &shca_hw_cmd_counts_fops);
	debugfs_create_file_unsafe("fail_cmd_once", 0600, dir, hw,
				   &shca_hw_fail_cmd_once_fops);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	fault_create_debugfs_attr("fail_cmd", dir, &hw->fail_cmd);
#endif
	debugfs_create_file_unsafe("engine_paused", 0600, dir, hw,
				   &shca_hw_engine_paused_fops);
	debugfs_create_file_unsafe("engine_step", 0600, dir, hw,
				   &shca_hw_engine_step_fops);
	debugfs_create_file_unsafe("next_qpn", 0600, dir, hw,
				   &shca_hw_next_qpn_fops);
	debugfs_create_file("eq", 0400, dir, hw, &shca_hw_eq_fops);
	debugfs_create_file("mcast", 0400, dir, hw, &shca_hw_mcast_fops);
	debugfs_create_file_unsafe("eq_limit", 0600, dir, hw,
				   &shca_hw_eq_limit_fops);
	shca_hw_debugfs_windows(hw, dir);
}
