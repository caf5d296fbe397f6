// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the capability table and the clock.
 *
 * What the device can do, one table for every device, adjusted by the
 * module parameters when a device powers on; and the free-running clock
 * that stamps CQEs.  Every unit reads them; this unit reads no other, so
 * reading a limit is never a call upward.
 *
 * Lock order: none; the table is constant for a device's life.
 */
#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/timekeeping.h>

#include "shca_hw_int.h"

/*
 * The limits a process could otherwise turn into gigabytes of rings, and
 * the address handles the device advertises, as module parameters.  Every
 * ring is also charged to the memory cgroup of the process that creates
 * it.  A device takes the values in force when it is created.
 */
static unsigned int max_qp = 1024;
module_param(max_qp, uint, 0444);
MODULE_PARM_DESC(max_qp, "QPs per device (2..65536, default 1024)");

static unsigned int max_qp_wr = 4096;
module_param(max_qp_wr, uint, 0444);
MODULE_PARM_DESC(max_qp_wr,
		 "work requests per send or receive queue (1..16384, default 4096)");

static unsigned int max_cq = 1024;
module_param(max_cq, uint, 0444);
MODULE_PARM_DESC(max_cq, "CQs per device (1..65536, default 1024)");

static unsigned int max_cqe = (1 << 16) - 1;
module_param(max_cqe, uint, 0444);
MODULE_PARM_DESC(max_cqe,
		 "CQEs per CQ, 32 bytes each (1..1048575, default 65535)");

static unsigned int max_srq = 256;
module_param(max_srq, uint, 0444);
MODULE_PARM_DESC(max_srq, "SRQs per device (1..4096, default 256)");

static unsigned int max_ah = 1 << 16;
module_param(max_ah, uint, 0444);
MODULE_PARM_DESC(max_ah, "address handles per device (1..65536, default 65536)");

/* The one table of what the device can do; the parameters above adjust it. */
static const struct shca_hw_caps shca_hw_default_caps = {
	.max_mr_size			= 1ULL << 40,
	.page_size_cap			= GENMASK_ULL(SHCA_HW_MAX_PAGE_SHIFT,
						      SHCA_HW_MIN_PAGE_SHIFT),
	.max_qp				= 1 << 16,
	.max_qp_wr			= 1 << 14,
	.max_send_sge			= 16,
	.max_recv_sge			= 16,
	.max_sge_rd			= 16,
	.max_cq				= 1 << 16,
	.max_cqe			= (1 << 20) - 1,
	.max_mr				= 1 << 16,
	.max_pd				= 1 << 16,
	.max_qp_rd_atom			= 16,
	.max_qp_init_rd_atom		= 16,
	.max_srq			= 1 << 12,
	.max_srq_wr			= 1 << 14,
	.max_srq_sge			= 16,
	.max_xrcd			= 1 << 10,
	.max_ah				= 1 << 16,
	.max_fast_reg_page_list_len	= 512,
	.max_inline_data		= 256,
	.max_msg_sz			= 1U << 31,
	.max_pkeys			= 1,
	.gid_tbl_len			= 64,
	.max_mtu			= 4096,
	.local_ca_ack_delay		= 15,
	.max_mcast_grp			= 64,
	.max_mcast_qp_attach		= 8,
	.max_total_mcast_qp_attach	= 128,
	/* The clock counts nanoseconds of CLOCK_MONOTONIC: 1 GHz, 64 bits. */
	.core_clock_khz			= NSEC_PER_SEC / 1000,
	.timestamp_mask			= U64_MAX,
	/* 256 KiB of device memory, handed out in pages. */
	.max_dm_size			= 256 << 10,
	.dm_log_granule			= PAGE_SHIFT,
	.max_eq				= SHCA_HW_MAX_EQS,
};

/**
 * shca_hw_caps_init() - a new device's capability table
 * @caps: the device's own table, filled in
 *
 * The default table, within the limits the module parameters set now.
 */
void shca_hw_caps_init(struct shca_hw_caps *caps)
{
	const struct shca_hw_caps *d = &shca_hw_default_caps;

	*caps = *d;
	caps->max_qp = clamp(READ_ONCE(max_qp), 2U, d->max_qp);
	caps->max_qp_wr = clamp(READ_ONCE(max_qp_wr), 1U, d->max_qp_wr);
	caps->max_cq = clamp(READ_ONCE(max_cq), 1U, d->max_cq);
	caps->max_cqe = clamp(READ_ONCE(max_cqe), 1U, d->max_cqe);
	caps->max_srq = clamp(READ_ONCE(max_srq), 1U, d->max_srq);
	caps->max_ah = clamp(READ_ONCE(max_ah), 1U, d->max_ah);
}

/**
 * shca_hw_caps() - the capability table of a device
 * @hw: the device
 *
 * The table is constant for the life of the device; debugfs mirrors it.
 *
 * Return: the table.
 */
const struct shca_hw_caps *shca_hw_caps(struct shca_hw *hw)
{
	return hw->caps;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_caps);

/**
 * shca_hw_read_clock() - read the device's free-running clock
 * @hw: the device
 *
 * A register read: it never sleeps and never fails.  The clock ticks at
 * caps->core_clock_khz and has the bits of caps->timestamp_mask.  It is
 * the kernel's CLOCK_MONOTONIC in nanoseconds (ktime_get_ns()), so a
 * process reads the same clock with clock_gettime(CLOCK_MONOTONIC), and
 * it goes on counting through a suspend of the device's users.
 *
 * Return: the clock's count now.
 */
u64 shca_hw_read_clock(struct shca_hw *hw)
{
	return ktime_get_ns() & hw->caps->timestamp_mask;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_read_clock);

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
		{ "max_eq", c->max_eq },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		seq_printf(s, "%-28s %llu\n", rows[i].name, rows[i].val);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_caps);

/**
 * shca_hw_caps_debugfs() - create caps, the capability table's read-only mirror
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_caps_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file("caps", 0400, dir, hw, &shca_hw_caps_fops);
}
