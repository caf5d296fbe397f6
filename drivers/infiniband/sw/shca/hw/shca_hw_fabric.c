// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the fabric.
 *
 * The fabric is the list of every shca device in the kernel, cut into
 * segments: each port reports, with its link state, the segment it is
 * cabled to.  A message is routed by destination GID to the device on the
 * sender's segment whose GID table holds it and whose port is up, then by
 * QPN to the QP; it never touches a netdev.  Loopback on one device is the
 * same path.  A UD send to QPN 0xffffff with a multicast destination GID
 * goes to every QP attached to that group (shca_hw_mcast.c) on every
 * device on the sender's segment with its port up, the sender's own QP
 * excepted.  The fabric also builds the headers a UD receive starts
 * with: a GRH for RoCE v1, an IPv6 or IPv4 header for RoCE v2.
 *
 * A QP's turn keeps the route its last message took (struct
 * shca_hw_route): the source, and the device holding the destination
 * GID.  Anything that can change a route (a device joining or leaving,
 * a port's link, MTU or cabling, a GID table entry) counts the fabric's
 * generation up, and a route found under an older generation is looked
 * up again.  The cached device is not referenced: a route is used only
 * under rcu_read_lock() after its generation is checked, and a device
 * leaving counts the generation up, then waits for a grace period
 * before it may go.  The QP within the device is still looked up by
 * QPN, and held, for every message.
 *
 * Lock order: shca_fabric_lock (read side while routing) comes after the
 * sender's turn_mutex and before any QP, CQ or EQ lock; under it a
 * device's shca_hw.lock (its port and GID table), its shca_hw.mcast_lock
 * (its multicast groups) and the QP table's xarray lock are taken, one at
 * a time, and nothing else.  Routing holds no lock of the
 * sending QP.
 */
#include <asm/checksum.h>
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "shca_hw_int.h"

/* Every device in the kernel, for routing. */
static LIST_HEAD(shca_fabric);
/* Guards shca_fabric. */
static DEFINE_RWLOCK(shca_fabric_lock);
/* Counted up on every change a route depends on; 0 is never current. */
static atomic_t shca_fabric_gen = ATOMIC_INIT(1);

/**
 * shca_hw_fabric_changed() - say that a route may have changed
 *
 * Called after a change to the fabric's devices, a port or a GID table,
 * with the change made: every QP's cached route is looked up again.
 */
void shca_hw_fabric_changed(void)
{
	/* Fully ordered: after the change, before any grace period. */
	if (!atomic_inc_return(&shca_fabric_gen))
		atomic_inc(&shca_fabric_gen);
}

/**
 * shca_hw_fabric_generation() - the fabric's count of route changes
 *
 * Return: the generation a route found now is found under.
 */
u32 shca_hw_fabric_generation(void)
{
	return atomic_read(&shca_fabric_gen);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_fabric_generation);

/**
 * shca_hw_fabric_add() - connect a device to the fabric
 * @hw: the device
 */
void shca_hw_fabric_add(struct shca_hw *hw)
{
	write_lock(&shca_fabric_lock);
	list_add_tail(&hw->fabric_node, &shca_fabric);
	write_unlock(&shca_fabric_lock);
	shca_hw_fabric_changed();
}

/**
 * shca_hw_fabric_del() - disconnect a device from the fabric
 * @hw: the device
 *
 * On return no QP's turn still routes to @hw through a cached route.
 * Context: may sleep.
 */
void shca_hw_fabric_del(struct shca_hw *hw)
{
	might_sleep();
	write_lock(&shca_fabric_lock);
	list_del_init(&hw->fabric_node);
	write_unlock(&shca_fabric_lock);
	shca_hw_fabric_changed();
	/* A turn that read the old generation is inside rcu_read_lock(). */
	synchronize_rcu();
}

/* The largest IB MTU whose packets, with RoCE headers, fit the link. */
static u32 shca_hw_link_mtu(u32 link_mtu)
{
	u32 mtu;

	for (mtu = 4096; mtu > 256; mtu >>= 1)
		if (mtu + 96 <= link_mtu)
			break;
	return mtu;
}

/*
 * Where a message from @hw sent with @av comes from: the source GID, its
 * encapsulation, the path MTU and the segment the port is cabled to.
 * False if the port is down or the source GID is not valid.
 */
static bool shca_hw_fabric_source(struct shca_hw *hw,
				  const struct shca_hw_av *av,
				  struct shca_hw_src *src)
{
	static const u8 v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	const struct shca_hw_gid_entry *e;
	unsigned long flags;
	bool ok;

	if (av->sgid_index >= hw->caps->gid_tbl_len)
		return false;
	spin_lock_irqsave(&hw->lock, flags);
	e = &hw->gids[av->sgid_index];
	ok = hw->port.link_up && e->valid;
	if (ok) {
		memcpy(src->gid, e->gid, SHCA_HW_GID_LEN);
		src->mtu = shca_hw_link_mtu(hw->port.mtu);
		src->segment = hw->port.segment;
		if (e->type == SHCA_HW_GID_ROCE_V1)
			src->net_type = SHCA_NET_ROCE_V1;
		else if (!memcmp(e->gid, v4_prefix, sizeof(v4_prefix)))
			src->net_type = SHCA_NET_IPV4;
		else
			src->net_type = SHCA_NET_IPV6;
	}
	spin_unlock_irqrestore(&hw->lock, flags);
	return ok;
}

static bool shca_hw_on_segment(struct shca_hw *hw, u64 segment)
{
	unsigned long flags;
	bool on;

	spin_lock_irqsave(&hw->lock, flags);
	on = hw->port.link_up && hw->port.segment == segment;
	spin_unlock_irqrestore(&hw->lock, flags);
	return on;
}

static bool shca_hw_owns_gid(struct shca_hw *hw, const u8 *gid, u64 segment)
{
	unsigned long flags;
	bool found = false;
	u32 i;

	spin_lock_irqsave(&hw->lock, flags);
	if (hw->port.link_up && hw->port.segment == segment) {
		for (i = 0; i < hw->caps->gid_tbl_len && !found; i++)
			found = hw->gids[i].valid &&
				!memcmp(hw->gids[i].gid, gid, SHCA_HW_GID_LEN);
	}
	spin_unlock_irqrestore(&hw->lock, flags);
	return found;
}

/*
 * The device on @segment with its port up whose GID table holds @dgid,
 * or NULL.  Not referenced: the caller is inside rcu_read_lock(), which
 * keeps it from being freed (shca_hw_fabric_del()).
 */
static struct shca_hw *shca_hw_fabric_find(const u8 *dgid, u64 segment)
{
	struct shca_hw *hw, *found = NULL;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "fabric lookup outside RCU");
	read_lock(&shca_fabric_lock);
	list_for_each_entry(hw, &shca_fabric, fabric_node) {
		if (shca_hw_owns_gid(hw, dgid, segment)) {
			found = hw;
			break;
		}
	}
	read_unlock(&shca_fabric_lock);
	return found;
}

/**
 * shca_hw_route_source() - where a QP's message comes from
 * @qp: the sending QP
 * @av: the address vector the message is sent with
 * @src: filled in: the source GID, its encapsulation, the path MTU and
 *	the segment the port is cabled to
 *
 * Takes the QP's cached route when it was found for @av under the
 * fabric's current generation, and otherwise looks the source up and
 * starts a new route (the destination is looked up by
 * shca_hw_route_dest()).
 *
 * Return: false if the port is down or the source GID is not valid.
 */
bool shca_hw_route_source(struct shca_hw_qp *qp, const struct shca_hw_av *av,
			  struct shca_hw_src *src)
{
	struct shca_hw_route *rt = &qp->route;
	u32 gen = atomic_read(&shca_fabric_gen);

	lockdep_assert_held(&qp->turn_mutex);
	if (rt->gen != gen || rt->sgid_index != av->sgid_index ||
	    memcmp(rt->dgid, av->dgid, SHCA_HW_GID_LEN)) {
		rt->routable = shca_hw_fabric_source(qp->hw, av, &rt->src);
		rt->sgid_index = av->sgid_index;
		memcpy(rt->dgid, av->dgid, SHCA_HW_GID_LEN);
		rt->dst_known = false;
		rt->gen = gen;
	}
	if (rt->routable)
		*src = rt->src;
	return rt->routable;
}

/**
 * shca_hw_route_dest() - find the QP a message is for, and hold it
 * @qp: the sending QP, after shca_hw_route_source() said it can send
 * @dqpn: the destination QPN
 *
 * The destination GID and the segment are the route's, as
 * shca_hw_route_source() took them.  The device holding the GID comes
 * from the cached route while the fabric's generation is the route's;
 * the QP within it is looked up by @dqpn every time.
 *
 * Return: the QP, referenced (shca_hw_qp_put()), or NULL when no device
 * on the segment with its port up holds the GID, or it has no such QP.
 */
struct shca_hw_qp *shca_hw_route_dest(struct shca_hw_qp *qp, u32 dqpn)
{
	struct shca_hw_route *rt = &qp->route;
	struct shca_hw_qp *dqp = NULL;
	struct shca_hw *dst;

	lockdep_assert_held(&qp->turn_mutex);
	shca_hw_window_pass(qp->hw, SHCA_WIN_ROUTE, qp->qpn);
	rcu_read_lock();
	if (rt->gen == atomic_read(&shca_fabric_gen) && rt->dst_known) {
		dst = rt->dst;
	} else {
		shca_hw_count(qp->hw, SHCA_CNT_ROUTE_LOOKUPS);
		dst = shca_hw_fabric_find(rt->dgid, rt->src.segment);
		/* Kept unless the fabric changed since the source was found. */
		rt->dst = dst;
		rt->dst_known = rt->gen == atomic_read(&shca_fabric_gen);
	}
	if (dst)
		dqp = shca_hw_qp_get(dst, dqpn & SHCA_HW_QPN_MASK);
	rcu_read_unlock();
	return dqp;
}

/*
 * Without @targets, count the members of @mgid on every device of
 * @segment.  With it, note up to @max of them but @src in @targets, going
 * through @members, room for @max, for each device's list.  No member is
 * looked up here: shca_hw_fabric_mcast_member() does that, copy by copy.
 */
static u32 shca_hw_fabric_mcast_fill(const u8 *mgid, u64 segment,
				     const struct shca_hw_qp *src,
				     struct shca_hw_mcg_member *members,
				     struct shca_hw_mcast_target *targets,
				     u32 max)
{
	struct shca_hw *hw;
	u32 i, k, n = 0;

	read_lock(&shca_fabric_lock);
	list_for_each_entry(hw, &shca_fabric, fabric_node) {
		if (!shca_hw_on_segment(hw, segment))
			continue;
		if (!targets) {
			n += shca_hw_mcast_count(hw, mgid);
			continue;
		}
		k = shca_hw_mcast_collect(hw, mgid, members, max - n);
		for (i = 0; i < k; i++) {
			if (hw == src->hw && members[i].qpn == src->qpn)
				continue;
			targets[n].hw = hw;
			targets[n].m = members[i];
			n++;
		}
	}
	read_unlock(&shca_fabric_lock);
	return n;
}

/**
 * shca_hw_fabric_mcast() - find the members a multicast message is for
 * @mgid: the destination group
 * @segment: the sender's segment
 * @src: the sending QP, which gets no copy
 * @targets: set to an array of the members, which the caller frees with
 *	kfree(); NULL when there are none
 * @lost: set to the number of copies lost because memory ran out
 *
 * The members are counted, room for them allocated with no lock held,
 * and then collected: a QP attached in between may miss the message, as
 * it may on a real fabric.  The engine serves every consumer's QPs,
 * those of a block device's or a file system's transport too, so the
 * allocation does no I/O to reclaim memory: it must not wait for writeback
 * that may itself need the engine.  When it fails, nobody gets a copy, and
 * @lost says how many were due.  Process context: the allocation may sleep.
 *
 * Return: the number of members in @targets.
 */
u32 shca_hw_fabric_mcast(const u8 *mgid, u64 segment,
			 const struct shca_hw_qp *src,
			 struct shca_hw_mcast_target **targets, u32 *lost)
{
	struct shca_hw_mcg_member *members;
	unsigned int noio;
	u32 n;

	might_sleep();
	*targets = NULL;
	*lost = 0;
	n = shca_hw_fabric_mcast_fill(mgid, segment, src, NULL, NULL, 0);
	if (!n)
		return 0;
	noio = memalloc_noio_save();
	*targets = kmalloc_array(n, sizeof(**targets),
				 GFP_KERNEL | __GFP_NOWARN);
	members = kmalloc_array(n, sizeof(*members),
				GFP_KERNEL | __GFP_NOWARN);
	memalloc_noio_restore(noio);
	if (*targets && members) {
		n = shca_hw_fabric_mcast_fill(mgid, segment, src, members,
					      *targets, n);
	} else {
		*lost = n;
		n = 0;
	}
	kfree(members);
	if (!n) {
		kfree(*targets);
		*targets = NULL;
	}
	return n;
}

/**
 * shca_hw_fabric_mcast_member() - look up the QP a multicast copy is for
 * @t: the member, from shca_hw_fabric_mcast()
 *
 * The device is looked up on the fabric again, so one that went away
 * since is not touched; a QP that has the member's QPN but another
 * generation is a newer QP, which gets nothing sent to the one before it.
 * Whether the QP still belongs to the group is the responder's to check,
 * as it takes the copy.
 *
 * Return: the QP, referenced (shca_hw_qp_put()), or NULL.
 */
struct shca_hw_qp *
shca_hw_fabric_mcast_member(const struct shca_hw_mcast_target *t)
{
	struct shca_hw_qp *qp = NULL;
	struct shca_hw *hw;

	read_lock(&shca_fabric_lock);
	list_for_each_entry(hw, &shca_fabric, fabric_node) {
		if (hw == t->hw) {
			qp = shca_hw_qp_get(hw, t->m.qpn);
			break;
		}
	}
	read_unlock(&shca_fabric_lock);
	if (qp && qp->gen != t->m.gen) {
		shca_hw_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

/**
 * shca_hw_fabric_grh() - the header that leads a UD receive
 * @buf: SHCA_HW_GRH_LEN bytes, filled in
 * @m: the message
 * @dgid: its destination GID
 *
 * A GRH for RoCE v1 and for RoCE v2 over IPv6 (an IPv6 header), an IPv4
 * header in the last 20 bytes for RoCE v2 over IPv4.
 */
void shca_hw_fabric_grh(u8 *buf, const struct shca_hw_msg *m, const u8 *dgid)
{
	memset(buf, 0, SHCA_HW_GRH_LEN);
	if (m->src.net_type == SHCA_NET_IPV4) {
		struct iphdr *ip = (struct iphdr *)(buf + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = m->av->traffic_class;
		ip->tot_len = htons(m->len + 20 + 8 + 12 + 4);
		ip->ttl = m->av->hop_limit ?: 64;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, m->src.gid + 12, 4);
		memcpy(&ip->daddr, dgid + 12, 4);
		ip->check = ip_fast_csum((u8 *)ip, ip->ihl);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)buf;
		__be32 vtf = cpu_to_be32(6U << 28 |
					 (u32)m->av->traffic_class << 20 |
					 (m->av->flow_label & 0xfffff));

		memcpy(ip6, &vtf, sizeof(vtf));
		ip6->payload_len = htons(m->len + 12 + 4);
		ip6->nexthdr = m->src.net_type == SHCA_NET_ROCE_V1 ?
			       0x1b : IPPROTO_UDP;
		ip6->hop_limit = m->av->hop_limit;
		memcpy(&ip6->saddr, m->src.gid, SHCA_HW_GID_LEN);
		memcpy(&ip6->daddr, dgid, SHCA_HW_GID_LEN);
	}
}
