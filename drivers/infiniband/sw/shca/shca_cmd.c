// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: issuing device commands.
 *
 * The verbs layer reaches the hardware model only through here.  A status
 * the device returns becomes an errno in shca_status_to_errno() and
 * nowhere else.
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
int shca_cmd_exec(struct shca_dev *sdev, struct shca_hw_cmd *cmd)
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
