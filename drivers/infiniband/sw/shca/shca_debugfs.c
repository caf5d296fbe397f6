// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: debugfs test knobs and mirrors of the device's state.
 *
 * /sys/kernel/debug/shca/<ibdev>/
 *   caps           read-only mirror of the device's capability table
 *   cmd_counts     read-only: commands executed, by opcode
 *   fail_cmd_once  one-shot injection: write an opcode number and the next
 *                  command with that opcode fails; reads back -1 once it
 *                  has fired.  Write -1 to cancel.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "shca.h"

static struct dentry *shca_debugfs_root;

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

	return shca_hw_inject_cmd_failure(sdev->hw, (int)(s64)val);
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_fail_cmd_once_fops, shca_fail_cmd_once_get,
			 shca_fail_cmd_once_set, "%lld\n");

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
 */
void shca_debugfs_init(void)
{
	shca_debugfs_root = debugfs_create_dir("shca", NULL);
}

/**
 * shca_debugfs_exit() - remove /sys/kernel/debug/shca
 */
void shca_debugfs_exit(void)
{
	debugfs_remove_recursive(shca_debugfs_root);
	shca_debugfs_root = NULL;
}
