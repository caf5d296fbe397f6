// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the multicast group table.
 *
 * A device's table maps a multicast GID to the UD QPs attached to it:
 * up to max_mcast_grp groups, max_mcast_qp_attach QPs in one group and
 * max_total_mcast_qp_attach attachments in all (the capability table).
 * A group's entry is taken by its first attachment and freed by its last
 * detachment.  ATTACH_MCAST and DETACH_MCAST edit it; the fabric
 * (shca_hw_fabric.c) reads it to deliver a UD send to a group, one copy
 * to each member on every device of the sender's segment.
 *
 * A member is a QPN and the generation of the QP that attached.  A QP
 * leaves every group when it is destroyed (as it is hidden, under the
 * command mutex, so no attachment can come after) and when it is reset,
 * so a reissued QPN never finds itself in a group it did not join.  A
 * sender notes the members, and looks each one up only as it delivers
 * its copy: the generation keeps a copy meant for a QP destroyed in
 * between from reaching the newer QP that got its number, even once that
 * one has joined the group too.  The responder checks that the QP it
 * holds is still a member as it takes the copy.
 *
 * This unit is a leaf: the QP unit runs the commands (it looks the QP up)
 * and the fabric turns members into QPs.
 *
 * Lock order: ATTACH_MCAST and DETACH_MCAST run under shca_hw.cmd_mutex;
 * shca_hw.mcast_lock comes after shca_fabric_lock and is a leaf.
 */
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/minmax.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "shca_hw_int.h"

/**
 * shca_hw_gid_is_mcast() - whether a GID names a multicast group
 * @gid: the GID's 16 bytes
 *
 * Return: true for an IPv6 multicast address (ff00::/8) and for an
 * IPv4-mapped multicast address (::ffff:224.0.0.0/100).
 */
bool shca_hw_gid_is_mcast(const u8 *gid)
{
	static const u8 v4_prefix[12] = { [10] = 0xff, [11] = 0xff };

	if (gid[0] == 0xff)
		return true;
	return !memcmp(gid, v4_prefix, sizeof(v4_prefix)) &&
	       (gid[12] & 0xf0) == 0xe0;
}

/**
 * shca_hw_mcast_init() - allocate a device's multicast group table
 * @hw: the device
 *
 * Return: 0, or -ENOMEM.
 */
int shca_hw_mcast_init(struct shca_hw *hw)
{
	const struct shca_hw_caps *caps = hw->caps;
	struct shca_hw_mcg_member *members;
	u32 i;

	spin_lock_init(&hw->mcast_lock);
	hw->mcgs = kcalloc(caps->max_mcast_grp, sizeof(*hw->mcgs),
			   GFP_KERNEL);
	members = kcalloc(caps->max_mcast_grp * caps->max_mcast_qp_attach,
			  sizeof(*members), GFP_KERNEL);
	if (!hw->mcgs || !members) {
		kfree(members);
		kfree(hw->mcgs);
		hw->mcgs = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < caps->max_mcast_grp; i++)
		hw->mcgs[i].members = members + i * caps->max_mcast_qp_attach;
	return 0;
}

/**
 * shca_hw_mcast_fini() - free a device's multicast group table
 * @hw: the device; its QPs are gone
 */
void shca_hw_mcast_fini(struct shca_hw *hw)
{
	if (!hw->mcgs)
		return;
	kfree(hw->mcgs[0].members);
	kfree(hw->mcgs);
	hw->mcgs = NULL;
}

/* The group of @mgid, or NULL. */
static struct shca_hw_mcg *shca_hw_mcg_find(struct shca_hw *hw,
					    const u8 *mgid)
{
	u32 i;

	lockdep_assert_held(&hw->mcast_lock);
	for (i = 0; i < hw->caps->max_mcast_grp; i++)
		if (hw->mcgs[i].nr &&
		    !memcmp(hw->mcgs[i].mgid, mgid, SHCA_HW_GID_LEN))
			return &hw->mcgs[i];
	return NULL;
}

/* The index of @qpn among @g's members, or -1. */
static int shca_hw_mcg_member(const struct shca_hw_mcg *g, u32 qpn)
{
	u32 i;

	for (i = 0; i < g->nr; i++)
		if (g->members[i].qpn == qpn)
			return i;
	return -1;
}

/* Remove member @i of @g; the others keep their order. */
static void shca_hw_mcg_remove(struct shca_hw *hw, struct shca_hw_mcg *g,
			       u32 i)
{
	lockdep_assert_held(&hw->mcast_lock);
	memmove(&g->members[i], &g->members[i + 1],
		(g->nr - i - 1) * sizeof(g->members[0]));
	g->nr--;
	hw->mcast_attached--;
	if (!g->nr)
		memset(g->mgid, 0, sizeof(g->mgid));
}

/**
 * shca_hw_mcast_attach() - put a QP in a group
 * @hw: the device
 * @qpn: the QP, a UD QP
 * @gen: its generation
 * @mgid: the group, a multicast GID
 *
 * Return: SHCA_HW_OK; SHCA_HW_EXISTS if the QP is in the group already;
 * SHCA_HW_NO_RESOURCES when the group, the table or the device's
 * attachments are full.
 */
enum shca_hw_status shca_hw_mcast_attach(struct shca_hw *hw, u32 qpn,
					 u32 gen, const u8 *mgid)
{
	const struct shca_hw_caps *caps = hw->caps;
	enum shca_hw_status status = SHCA_HW_OK;
	struct shca_hw_mcg *g;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&hw->mcast_lock, flags);
	g = shca_hw_mcg_find(hw, mgid);
	if (g && shca_hw_mcg_member(g, qpn) >= 0) {
		status = SHCA_HW_EXISTS;
		goto out;
	}
	if ((g && g->nr >= caps->max_mcast_qp_attach) ||
	    hw->mcast_attached >= caps->max_total_mcast_qp_attach) {
		status = SHCA_HW_NO_RESOURCES;
		goto out;
	}
	for (i = 0; !g && i < caps->max_mcast_grp; i++) {
		if (!hw->mcgs[i].nr) {
			g = &hw->mcgs[i];
			memcpy(g->mgid, mgid, SHCA_HW_GID_LEN);
		}
	}
	if (!g) {
		status = SHCA_HW_NO_RESOURCES;
		goto out;
	}
	g->members[g->nr].qpn = qpn;
	g->members[g->nr].gen = gen;
	g->nr++;
	hw->mcast_attached++;
out:
	spin_unlock_irqrestore(&hw->mcast_lock, flags);
	return status;
}

/**
 * shca_hw_mcast_detach() - take a QP out of a group
 * @hw: the device
 * @qpn: the QP
 * @mgid: the group
 *
 * Return: SHCA_HW_OK, or SHCA_HW_NOT_FOUND if the QP is not in the group.
 */
enum shca_hw_status shca_hw_mcast_detach(struct shca_hw *hw, u32 qpn,
					 const u8 *mgid)
{
	enum shca_hw_status status = SHCA_HW_NOT_FOUND;
	struct shca_hw_mcg *g;
	unsigned long flags;
	int i;

	spin_lock_irqsave(&hw->mcast_lock, flags);
	g = shca_hw_mcg_find(hw, mgid);
	i = g ? shca_hw_mcg_member(g, qpn) : -1;
	if (i >= 0) {
		shca_hw_mcg_remove(hw, g, i);
		status = SHCA_HW_OK;
	}
	spin_unlock_irqrestore(&hw->mcast_lock, flags);
	return status;
}

/**
 * shca_hw_mcast_purge() - take a QP out of every group
 * @hw: the device
 * @qpn: the QP, being destroyed or reset
 */
void shca_hw_mcast_purge(struct shca_hw *hw, u32 qpn)
{
	unsigned long flags;
	u32 i;
	int m;

	spin_lock_irqsave(&hw->mcast_lock, flags);
	for (i = 0; i < hw->caps->max_mcast_grp; i++) {
		m = shca_hw_mcg_member(&hw->mcgs[i], qpn);
		if (m >= 0)
			shca_hw_mcg_remove(hw, &hw->mcgs[i], m);
	}
	spin_unlock_irqrestore(&hw->mcast_lock, flags);
}

/**
 * shca_hw_mcast_is_member() - whether a QP is in a group
 * @hw: the device
 * @qpn: the QP's number; the caller holds the QP, so no other QP can have
 *	the number meanwhile (it is freed with the QP), and a newer QP that
 *	gets it later is never a member of the held one's groups: the QP
 *	left them all when it was hidden
 * @mgid: the group
 *
 * The responder asks, for each multicast copy, as it takes it.
 *
 * Return: true if the group has the QP.
 */
bool shca_hw_mcast_is_member(struct shca_hw *hw, u32 qpn, const u8 *mgid)
{
	struct shca_hw_mcg *g;
	unsigned long flags;
	bool found;

	spin_lock_irqsave(&hw->mcast_lock, flags);
	g = shca_hw_mcg_find(hw, mgid);
	found = g && shca_hw_mcg_member(g, qpn) >= 0;
	spin_unlock_irqrestore(&hw->mcast_lock, flags);
	return found;
}

/**
 * shca_hw_mcast_count() - how many QPs a group has on a device
 * @hw: the device
 * @mgid: the group
 *
 * Return: the number of members.
 */
u32 shca_hw_mcast_count(struct shca_hw *hw, const u8 *mgid)
{
	struct shca_hw_mcg *g;
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&hw->mcast_lock, flags);
	g = shca_hw_mcg_find(hw, mgid);
	n = g ? g->nr : 0;
	spin_unlock_irqrestore(&hw->mcast_lock, flags);
	return n;
}

/**
 * shca_hw_mcast_collect() - the members of a group on a device
 * @hw: the device
 * @mgid: the group
 * @members: filled in with the members, as they are now
 * @max: room in @members
 *
 * Return: the number of members put in @members.
 */
u32 shca_hw_mcast_collect(struct shca_hw *hw, const u8 *mgid,
			  struct shca_hw_mcg_member *members, u32 max)
{
	struct shca_hw_mcg *g;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&hw->mcast_lock, flags);
	g = shca_hw_mcg_find(hw, mgid);
	if (g) {
		n = min(g->nr, max);
		memcpy(members, g->members, n * sizeof(*members));
	}
	spin_unlock_irqrestore(&hw->mcast_lock, flags);
	return n;
}

/**
 * shca_hw_mcast_dump() - print the group table, for debugfs
 * @hw: the device
 * @s: where: one line per group, its GID and then its members' QPNs
 */
static void shca_hw_mcast_dump(struct shca_hw *hw, struct seq_file *s)
{
	const struct shca_hw_mcg *g;
	u32 i, j;

	spin_lock_irq(&hw->mcast_lock);
	for (i = 0; i < hw->caps->max_mcast_grp; i++) {
		g = &hw->mcgs[i];
		if (!g->nr)
			continue;
		seq_printf(s, "%pI6c", g->mgid);
		for (j = 0; j < g->nr; j++)
			seq_printf(s, " %u", g->members[j].qpn);
		seq_putc(s, '\n');
	}
	spin_unlock_irq(&hw->mcast_lock);
}

/**
 * shca_hw_mcast_groups() - how many groups a device's table holds
 * @hw: the device
 *
 * Return: the groups with at least one QP attached.
 */
u32 shca_hw_mcast_groups(struct shca_hw *hw)
{
	u32 i, n = 0;

	spin_lock_irq(&hw->mcast_lock);
	for (i = 0; i < hw->caps->max_mcast_grp; i++)
		n += !!hw->mcgs[i].nr;
	spin_unlock_irq(&hw->mcast_lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_mcast_groups);

/**
 * shca_hw_mcast_groups_of() - how many groups a QPN is attached to
 * @hw: the device
 * @qpn: the QPN
 *
 * Return: the number of groups that have @qpn as a member.
 */
u32 shca_hw_mcast_groups_of(struct shca_hw *hw, u32 qpn)
{
	u32 i, n = 0;

	spin_lock_irq(&hw->mcast_lock);
	for (i = 0; i < hw->caps->max_mcast_grp; i++)
		n += shca_hw_mcg_member(&hw->mcgs[i], qpn) >= 0;
	spin_unlock_irq(&hw->mcast_lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_mcast_groups_of);

static int shca_hw_mcast_show(struct seq_file *s, void *unused)
{
	shca_hw_mcast_dump(s->private, s);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_mcast);

/**
 * shca_hw_mcast_debugfs() - create mcast, the multicast groups' read-only mirror
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_mcast_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file("mcast", 0400, dir, hw, &shca_hw_mcast_fops);
}
