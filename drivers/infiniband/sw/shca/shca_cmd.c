// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: issuing device commands.
 *
 * The verbs layer reaches the hardware model only through here, with one
 * typed function per command (shca_cmd.h): only this file fills a
 * struct shca_hw_cmd.  A status the device returns becomes an errno in
 * shca_status_to_errno() and nowhere else.
 */
#include <kunit/visibility.h>
#include <linux/etherdevice.h>

#include "shca.h"

static const int shca_status_errno[SHCA_HW_NUM_STATUS] = {
	[SHCA_HW_OK]		= 0,
	[SHCA_HW_BAD_OPCODE]	= -EOPNOTSUPP,
	[SHCA_HW_BAD_PARAM]	= -EINVAL,
	[SHCA_HW_BAD_INDEX]	= -EINVAL,
	[SHCA_HW_NO_RESOURCES]	= -ENOMEM,
	[SHCA_HW_BAD_STATE]	= -EINVAL,
	[SHCA_HW_BUSY]		= -EBUSY,
	[SHCA_HW_INJECTED]	= -EIO,
	[SHCA_HW_EXISTS]	= -EEXIST,
	[SHCA_HW_NOT_FOUND]	= -ENOENT,
};

/**
 * shca_status_to_errno() - the errno a device status stands for
 * @status: what a command completed with
 *
 * Return: 0 for success, a negative errno otherwise; -EIO for a status
 * the driver does not know.
 */
int shca_status_to_errno(enum shca_hw_status status)
{
	if ((unsigned int)status >= SHCA_HW_NUM_STATUS)
		return -EIO;
	return shca_status_errno[status];
}
EXPORT_SYMBOL_IF_KUNIT(shca_status_to_errno);

/**
 * shca_cmd_exec() - run a device command and translate its status
 * @sdev: the device
 * @cmd: the command block
 *
 * Statuses that mean the caller passed something wrong, and failures a test
 * injected, are logged at debug level; those that mean the device
 * misbehaved are logged as errors, rate limited.
 *
 * Return: 0 or a negative errno.
 */
VISIBLE_IF_KUNIT int shca_cmd_exec(struct shca_dev *sdev,
				   struct shca_hw_cmd *cmd)
{
	enum shca_hw_status status = shca_hw_exec(sdev->hw, cmd);

	switch (status) {
	case SHCA_HW_OK:
		break;
	case SHCA_HW_BAD_PARAM:
	case SHCA_HW_BAD_INDEX:
	case SHCA_HW_NO_RESOURCES:
	case SHCA_HW_BAD_STATE:
	case SHCA_HW_BUSY:
	case SHCA_HW_INJECTED:
	case SHCA_HW_EXISTS:
	case SHCA_HW_NOT_FOUND:
		shca_dbg(sdev, "command %s: status %d\n",
			 shca_hw_opcode_name(cmd->opcode), status);
		break;
	default:
		ibdev_err_ratelimited(&sdev->ibdev,
				      "command %s failed: status %d\n",
				      shca_hw_opcode_name(cmd->opcode),
				      status);
		break;
	}
	return shca_status_to_errno(status);
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_exec);

/**
 * shca_netdev_segment() - the fabric segment a netdev's port is cabled to
 * @ndev: the netdev
 *
 * A port reaches only the ports whose netdevs share its network namespace:
 * the segment is that namespace's cookie.
 *
 * Return: the cookie.
 */
u64 shca_netdev_segment(const struct net_device *ndev)
{
	u64 cookie;

	rcu_read_lock();
	cookie = dev_net_rcu(ndev)->net_cookie;
	rcu_read_unlock();
	return cookie;
}

/**
 * shca_cmd_set_port() - tell the device's port what its netdev's link is
 * @sdev: the device
 * @ndev: the netdev the port is bound to
 * @link_up: set to whether the link is now up; may be NULL
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_set_port(struct shca_dev *sdev, const struct net_device *ndev,
		      bool *link_up)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_SET_PORT,
		.port = 1,
	};
	int err;

	cmd.in.port.link_up = netif_running(ndev) && netif_carrier_ok(ndev);
	cmd.in.port.mtu = max(ndev->mtu, 256U);
	ether_addr_copy(cmd.in.port.mac, ndev->dev_addr);
	cmd.in.port.segment = shca_netdev_segment(ndev);
	err = shca_cmd_exec(sdev, &cmd);
	if (!err && link_up)
		*link_up = cmd.in.port.link_up;
	return err;
}

/**
 * shca_cmd_query_caps() - read the device's capability table
 * @sdev: the device
 * @caps: where to put it
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_query_caps(struct shca_dev *sdev, struct shca_hw_caps *caps)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_CAPS };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*caps = cmd.out.caps;
	return err;
}

/**
 * shca_cmd_query_port() - read what a port reports of its link
 * @sdev: the device
 * @port: the port, from 1
 * @attr: where to put it
 *
 * Return: 0, -EINVAL for a port the device does not have, or another
 * negative errno.
 */
int shca_cmd_query_port(struct shca_dev *sdev, u32 port,
			struct shca_hw_port_attr *attr)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_PORT, .port = port };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*attr = cmd.out.port;
	return err;
}

/**
 * shca_cmd_query_gid() - read one GID table entry
 * @sdev: the device
 * @port: the port, from 1
 * @index: the entry
 * @entry: where to put it; @entry->valid is clear for an empty entry
 *
 * Return: 0, -EINVAL for an index past the table, or another negative
 * errno.
 */
int shca_cmd_query_gid(struct shca_dev *sdev, u32 port, u32 index,
		       struct shca_hw_gid_entry *entry)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_QUERY_GID,
		.port = port,
		.index = index,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*entry = cmd.out.gid;
	return err;
}

/**
 * shca_cmd_set_gid() - write or clear one GID table entry
 * @sdev: the device
 * @port: the port, from 1
 * @index: the entry
 * @entry: the new entry; one with @entry->valid clear empties the slot
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_set_gid(struct shca_dev *sdev, u32 port, u32 index,
		     const struct shca_hw_gid_entry *entry)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_SET_GID,
		.port = port,
		.index = index,
		.in.gid = *entry,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_query_pkey() - read one P_Key table entry
 * @sdev: the device
 * @port: the port, from 1
 * @index: the entry
 * @pkey: where to put it
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_query_pkey(struct shca_dev *sdev, u32 port, u32 index,
			u16 *pkey)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_QUERY_PKEY,
		.port = port,
		.index = index,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*pkey = cmd.out.pkey;
	return err;
}

/**
 * shca_cmd_query_counters() - read the device's counters
 * @sdev: the device
 * @counters: where to put them, by enum shca_hw_counter
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_query_counters(struct shca_dev *sdev,
			    u64 counters[SHCA_CNT_NUM])
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_COUNTERS };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		memcpy(counters, cmd.out.counters, sizeof(cmd.out.counters));
	return err;
}

/**
 * shca_cmd_alloc_pd() - allocate a protection domain number
 * @sdev: the device
 * @pdn: where to put it
 *
 * Return: 0, -ENOMEM when the device has none left, or another negative
 * errno.
 */
int shca_cmd_alloc_pd(struct shca_dev *sdev, u32 *pdn)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_ALLOC_PD };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*pdn = cmd.out.pdn;
	return err;
}

/**
 * shca_cmd_dealloc_pd() - release a protection domain number
 * @sdev: the device
 * @pdn: the number shca_cmd_alloc_pd() gave
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_dealloc_pd(struct shca_dev *sdev, u32 pdn)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_DEALLOC_PD,
		.in.pdn = pdn,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_alloc_xrcd() - allocate an XRC domain number
 * @sdev: the device
 * @xrcdn: where to put it
 *
 * Return: 0, -ENOMEM when the device has none left, or another negative
 * errno.
 */
int shca_cmd_alloc_xrcd(struct shca_dev *sdev, u32 *xrcdn)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_ALLOC_XRCD };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*xrcdn = cmd.out.num;
	return err;
}

/**
 * shca_cmd_dealloc_xrcd() - release an XRC domain number
 * @sdev: the device
 * @xrcdn: the number shca_cmd_alloc_xrcd() gave
 *
 * Return: 0, -EBUSY while an XRC SRQ or target QP is in the domain, or
 * another negative errno.
 */
int shca_cmd_dealloc_xrcd(struct shca_dev *sdev, u32 xrcdn)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_DEALLOC_XRCD,
		.in.xrcdn = xrcdn,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_create_eq() - hand the device one event queue's ring
 * @sdev: the device
 * @eqn: the EQ, which is also its vector
 * @ring: the ring, zeroed
 * @log_depth: log2 of its number of EQEs
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_create_eq(struct shca_dev *sdev, u32 eqn,
		       struct shca_hw_eqe *ring, u32 log_depth)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_CREATE_EQ,
		.index = eqn,
		.in.eq.ring = ring,
		.in.eq.log_depth = log_depth,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_destroy_eq() - take an event queue back from the device
 * @sdev: the device
 * @eqn: the EQ, no CQ's vector any more
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_destroy_eq(struct shca_dev *sdev, u32 eqn)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_DESTROY_EQ,
		.index = eqn,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_create_cq() - create a completion queue context
 * @sdev: the device
 * @params: its ring and doorbell record
 * @id: where to put the new CQ's number and generation
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_create_cq(struct shca_dev *sdev,
		       const struct shca_hw_cq_create *params,
		       struct shca_hw_obj_id *id)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_CREATE_CQ,
		.in.cq = *params,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*id = cmd.out.id;
	return err;
}

/**
 * shca_cmd_resize_cq() - move a CQ to a new ring, keeping its live CQEs
 * @sdev: the device
 * @cqn: the CQ
 * @params: the new ring and doorbell record
 *
 * Return: 0, -EINVAL if the live CQEs do not fit, or another negative
 * errno; on failure the CQ keeps its old ring.
 */
int shca_cmd_resize_cq(struct shca_dev *sdev, u32 cqn,
		       const struct shca_hw_cq_create *params)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_RESIZE_CQ,
		.index = cqn,
		.in.cq = *params,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_modify_cq() - set a CQ's interrupt moderation
 * @sdev: the device
 * @cqn: the CQ
 * @count: CQEs per completion event
 * @period: microseconds an event may wait for more CQEs
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_modify_cq(struct shca_dev *sdev, u32 cqn, u16 count,
		       u16 period)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MODIFY_CQ,
		.index = cqn,
		.in.moder.count = count,
		.in.moder.period = period,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_query_cq() - read a CQ context
 * @sdev: the device
 * @cqn: the CQ
 * @out: where to put it
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_query_cq(struct shca_dev *sdev, u32 cqn,
		      struct shca_hw_cq_query *out)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_CQ, .index = cqn };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*out = cmd.out.cq;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_query_cq);

/**
 * shca_cmd_destroy_cq() - destroy a CQ context
 * @sdev: the device
 * @cqn: the CQ
 *
 * Return: 0, -EBUSY while a QP or SRQ still points at the CQ, or another
 * negative errno.
 */
int shca_cmd_destroy_cq(struct shca_dev *sdev, u32 cqn)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_DESTROY_CQ, .index = cqn };

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_create_srq() - create a shared receive queue context
 * @sdev: the device
 * @params: its protection domain, memory and limit
 * @id: where to put the new SRQ's number and generation
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_create_srq(struct shca_dev *sdev,
			const struct shca_hw_srq_create *params,
			struct shca_hw_obj_id *id)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_CREATE_SRQ,
		.in.srq = *params,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*id = cmd.out.id;
	return err;
}

/**
 * shca_cmd_modify_srq() - arm an SRQ's limit
 * @sdev: the device
 * @srqn: the SRQ
 * @limit: the limit; 0 disarms it
 *
 * Return: 0, -EINVAL for a limit over the depth, or another negative errno.
 */
int shca_cmd_modify_srq(struct shca_dev *sdev, u32 srqn, u32 limit)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MODIFY_SRQ,
		.index = srqn,
		.in.srq_limit = limit,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_resize_srq() - run a step of an SRQ's resize
 * @sdev: the device
 * @srqn: the SRQ
 * @params: the step, the new memory, its depth and the limit to arm with
 *	it (or SHCA_HW_SRQ_LIMIT_KEEP), and, after START, what the last copy
 *	step returned
 * @copied: for START and COPY, set to how far the copy got
 *
 * START and COPY sleep; SWITCH never does: the caller holds its posting
 * lock across it.
 *
 * Return: 0; -EBUSY from SWITCH if more was posted since the last copy
 * step than the switch copies itself: copy again; -EINVAL if a posted WQE
 * would not fit or sits in a slot past the new depth, or the limit is
 * over it.  On failure the SRQ is unchanged.
 */
int shca_cmd_resize_srq(struct shca_dev *sdev, u32 srqn,
			const struct shca_hw_srq_resize *params,
			struct shca_hw_srq_copied *copied)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_RESIZE_SRQ,
		.index = srqn,
		.in.srq_resize = *params,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err && copied)
		*copied = cmd.out.srq_copied;
	return err;
}

/**
 * shca_cmd_query_srq() - read an SRQ context
 * @sdev: the device
 * @srqn: the SRQ
 * @out: where to put it
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_query_srq(struct shca_dev *sdev, u32 srqn,
		       struct shca_hw_srq_query *out)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_SRQ, .index = srqn };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*out = cmd.out.srq;
	return err;
}

/**
 * shca_cmd_destroy_srq() - destroy an SRQ context
 * @sdev: the device
 * @srqn: the SRQ
 *
 * Return: 0, -EBUSY while a QP is attached, or another negative errno.
 */
int shca_cmd_destroy_srq(struct shca_dev *sdev, u32 srqn)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_DESTROY_SRQ,
		.index = srqn,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_create_qp() - create a queue pair context
 * @sdev: the device
 * @params: its type, protection domain, CQs, SRQ, queues and limits
 * @id: where to put the new QP's number and generation
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_create_qp(struct shca_dev *sdev,
		       const struct shca_hw_qp_create *params,
		       struct shca_hw_obj_id *id)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_CREATE_QP,
		.in.qp = *params,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*id = cmd.out.id;
	return err;
}

/**
 * shca_cmd_modify_qp() - change a QP's state and attributes
 * @sdev: the device
 * @qpn: the QP
 * @attr: the attributes
 * @mask: which of them to write, SHCA_QP_ATTR_*
 * @state: where to put the QP's state once the command ran, unless the
 *	QP was not found or the command block was refused; may be NULL
 *
 * Return: 0, -EINVAL for a transition or attribute the device refuses, or
 * another negative errno.
 */
int shca_cmd_modify_qp(struct shca_dev *sdev, u32 qpn,
		       const struct shca_hw_qp_attr *attr, u32 mask,
		       u32 *state)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MODIFY_QP,
		.index = qpn,
		.mask = mask,
		.in.qp_attr = *attr,
		.out.qp_state = SHCA_QPS_NUM,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (state)
		*state = cmd.out.qp_state;
	return err;
}

/**
 * shca_cmd_query_qp() - read a QP context
 * @sdev: the device
 * @qpn: the QP
 * @out: where to put it
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_query_qp(struct shca_dev *sdev, u32 qpn,
		      struct shca_hw_qp_query *out)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_QP, .index = qpn };
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*out = cmd.out.qp;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_query_qp);

/**
 * shca_cmd_destroy_qp() - fence a QP and destroy its context
 * @sdev: the device
 * @qpn: the QP
 *
 * The device moves the QP to ERR and flushes its outstanding work first:
 * when this returns, the device writes nothing more for the QP.
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_destroy_qp(struct shca_dev *sdev, u32 qpn)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_DESTROY_QP, .index = qpn };

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_attach_mcast() - attach a UD QP to a multicast group
 * @sdev: the device
 * @qpn: the QP
 * @mgid: the group's GID, SHCA_HW_GID_LEN bytes
 *
 * Return: 0; -EINVAL for a GID that is not multicast, a QP that is not UD
 * or a QPN no QP holds; -EEXIST if the QP is in the group already;
 * -ENOMEM when the group, the group table or the device's attachments
 * are full; or another negative errno.
 */
int shca_cmd_attach_mcast(struct shca_dev *sdev, u32 qpn, const u8 *mgid)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ATTACH_MCAST,
		.index = qpn,
	};

	memcpy(cmd.in.mgid, mgid, sizeof(cmd.in.mgid));
	return shca_cmd_exec(sdev, &cmd);
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_attach_mcast);

/**
 * shca_cmd_detach_mcast() - detach a UD QP from a multicast group
 * @sdev: the device
 * @qpn: the QP
 * @mgid: the group's GID, SHCA_HW_GID_LEN bytes
 *
 * Return: 0; -EINVAL for a GID that is not multicast, a QP that is not UD
 * or a QPN no QP holds; -ENOENT if the QP is not in the group; or another
 * negative errno.
 */
int shca_cmd_detach_mcast(struct shca_dev *sdev, u32 qpn, const u8 *mgid)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_DETACH_MCAST,
		.index = qpn,
	};

	memcpy(cmd.in.mgid, mgid, sizeof(cmd.in.mgid));
	return shca_cmd_exec(sdev, &cmd);
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_detach_mcast);

/**
 * shca_cmd_alloc_mpt() - allocate a memory protection table entry
 * @sdev: the device
 * @params: its type, protection domain, page list capacity and flags
 * @key: where to put the entry's key
 *
 * The entry is invalid until shca_cmd_write_mpt() or a REG_MR work
 * request writes it.
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_alloc_mpt(struct shca_dev *sdev,
		       const struct shca_hw_mpt_alloc *params, u32 *key)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = *params,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*key = cmd.out.num;
	return err;
}

/**
 * shca_cmd_rereg_mpt() - rewrite a registered MR's MPT entry, key kept
 * @sdev: the device
 * @params: what changes, and to what
 *
 * When it is done, a new translation is in force and the old page list
 * unused: the device waits out the accesses that took the old one.
 *
 * Return: 0, -EINVAL for bad parameters or an entry that is not a valid
 * registered MR, or another negative errno; on failure nothing changed.
 */
int shca_cmd_rereg_mpt(struct shca_dev *sdev,
		       const struct shca_hw_mpt_rereg *params)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_REREG_MPT,
		.in.mpt_rereg = *params,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_write_mpt() - make an MPT entry valid with a translation
 * @sdev: the device
 * @params: the entry's key, rights and translation
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_write_mpt(struct shca_dev *sdev,
		       const struct shca_hw_mpt_write *params)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_WRITE_MPT,
		.in.mpt = *params,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_map_odp() - make pages of an ODP entry present
 * @sdev: the device
 * @params: the entry, the pages and their rights
 *
 * Return: 0, -EINVAL for bad pages or a key that is no ODP entry, or
 * another negative errno.
 */
int shca_cmd_map_odp(struct shca_dev *sdev,
		     const struct shca_hw_odp_map *params)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MAP_ODP,
		.in.odp_map = *params,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_invalidate_odp() - make pages of an ODP entry absent
 * @sdev: the device
 * @params: the entry and the pages
 *
 * When it returns, the device uses none of the pages: it waited out the
 * accesses in flight.  It cannot fail for a live ODP entry.
 *
 * Return: 0, or -EINVAL for a key that is no ODP entry.
 */
int shca_cmd_invalidate_odp(struct shca_dev *sdev,
			    const struct shca_hw_odp_range *params)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_INVALIDATE_ODP,
		.in.odp_range = *params,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_free_mpt() - release an MPT entry
 * @sdev: the device
 * @key: the entry's key
 *
 * The device waits out any access in flight through the entry first.  A
 * window goes even when bound; a region with windows bound stays.
 *
 * Return: 0, -EBUSY for a region with windows bound to it, or another
 * negative errno.
 */
int shca_cmd_free_mpt(struct shca_dev *sdev, u32 key)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = key,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/**
 * shca_cmd_alloc_mw() - allocate a memory window, unbound
 * @sdev: the device
 * @type: SHCA_MW_TYPE_1 or SHCA_MW_TYPE_2
 * @pdn: its protection domain
 * @key: where to put the window's key
 *
 * A BIND_MW work request binds it; shca_cmd_free_mpt() releases it.
 *
 * Return: 0 or a negative errno.
 */
int shca_cmd_alloc_mw(struct shca_dev *sdev, u32 type, u32 pdn, u32 *key)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_MW,
		.in.mw_alloc.type = type,
		.in.mw_alloc.pdn = pdn,
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*key = cmd.out.num;
	return err;
}

/**
 * shca_cmd_alloc_dm() - allocate a range of the device memory
 * @sdev: the device
 * @length: bytes
 * @log_align: log2 of the alignment the range needs
 * @addr: where to put the range's device memory address
 *
 * The range starts zeroed.
 *
 * Return: 0, -EINVAL for a length of zero or beyond the device memory or
 * an alignment beyond it, -ENOMEM when no free range is long enough, or
 * another negative errno.
 */
int shca_cmd_alloc_dm(struct shca_dev *sdev, u64 length, u32 log_align,
		      u64 *addr)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_DM,
		.in.dm = { .length = length, .log_align = log_align },
	};
	int err;

	err = shca_cmd_exec(sdev, &cmd);
	if (!err)
		*addr = cmd.out.dm_addr;
	return err;
}

/**
 * shca_cmd_free_dm() - release a range of the device memory
 * @sdev: the device
 * @addr: its address, from shca_cmd_alloc_dm()
 *
 * Return: 0, -EBUSY while an MR maps the range, -EINVAL for an address no
 * range starts at, or another negative errno.
 */
int shca_cmd_free_dm(struct shca_dev *sdev, u64 addr)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_DM,
		.in.dm_addr = addr,
	};

	return shca_cmd_exec(sdev, &cmd);
}
