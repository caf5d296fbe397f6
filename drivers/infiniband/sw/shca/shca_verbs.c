// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: device, port, GID, P_Key and protection domain verbs.
 *
 * Each verb reads or changes the device only through device commands
 * (shca_cmd.c); the answers come from the model's one capability table.
 */
#include <kunit/visibility.h>
#include <linux/etherdevice.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "shca.h"

/**
 * shca_check_no_udata() - refuse driver data where none is defined
 * @sdev: the device
 * @udata: what the caller passed; kernel callers pass NULL
 *
 * Return: 0, or -EINVAL when @udata carries input or wants output.
 */
int shca_check_no_udata(struct shca_dev *sdev, struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen)) {
		shca_dbg(sdev, "unexpected udata (in %zu, out %zu)\n",
			 udata->inlen, udata->outlen);
		return -EINVAL;
	}
	return 0;
}

/**
 * shca_get_netdev() - the netdev a port is bound to
 * @ibdev: the device
 * @port_num: the port
 *
 * Return: the netdev with a reference the caller drops, or NULL.
 */
struct net_device *shca_get_netdev(struct ib_device *ibdev, u32 port_num)
{
	struct net_device *ndev = to_shca_dev(ibdev)->ndev;

	if (port_num != 1 || !ndev)
		return NULL;
	dev_hold(ndev);
	return ndev;
}

/**
 * shca_query_device() - report the device's attributes
 * @ibdev: the device
 * @attr: filled from the capability table, as read at probe
 * @udata: must carry no input or output
 *
 * Return: 0 or a negative errno.
 */
int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	const struct shca_hw_caps *c = &sdev->caps;
	int err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = (u64)SHCA_HW_FW_MAJOR << 32 |
		       (u64)SHCA_HW_FW_MINOR << 16 | SHCA_HW_FW_SUBMINOR;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = c->max_mr_size;
	attr->page_size_cap = c->page_size_cap;
	attr->vendor_id = SHCA_HW_VENDOR_ID;
	attr->vendor_part_id = SHCA_HW_VENDOR_PART_ID;
	attr->hw_ver = SHCA_HW_HW_VERSION;
	attr->max_qp = c->max_qp;
	attr->max_qp_wr = c->max_qp_wr;
	attr->max_send_sge = c->max_send_sge;
	attr->max_recv_sge = c->max_recv_sge;
	attr->max_sge_rd = c->max_sge_rd;
	attr->max_cq = c->max_cq;
	attr->max_cqe = c->max_cqe;
	attr->max_mr = c->max_mr;
	/* Windows and regions share the memory protection table. */
	attr->max_mw = c->max_mr;
	attr->max_pd = c->max_pd;
	attr->max_qp_rd_atom = c->max_qp_rd_atom;
	attr->max_qp_init_rd_atom = c->max_qp_init_rd_atom;
	/*
	 * The responder keeps no shared pool of read and atomic resources:
	 * each QP has its own max_qp_rd_atom, so the device's total is that
	 * many for every QP it can hold.
	 */
	attr->max_res_rd_atom = c->max_qp_rd_atom * c->max_qp;
	attr->max_srq = c->max_srq;
	attr->max_srq_wr = c->max_srq_wr;
	attr->max_srq_sge = c->max_srq_sge;
	attr->max_ah = c->max_ah;
	attr->max_fast_reg_page_list_len = c->max_fast_reg_page_list_len;
	attr->max_pkeys = c->max_pkeys;
	attr->max_mcast_grp = c->max_mcast_grp;
	attr->max_mcast_qp_attach = c->max_mcast_qp_attach;
	attr->max_total_mcast_qp_attach = c->max_total_mcast_qp_attach;
	attr->local_ca_ack_delay = c->local_ca_ack_delay;
	attr->atomic_cap = IB_ATOMIC_HCA;
	/* The clock every CQE is stamped with. */
	attr->hca_core_clock = c->core_clock_khz;
	attr->timestamp_mask = c->timestamp_mask;
	attr->max_dm_size = c->max_dm_size;
	/*
	 * Only what the device does: fast registration and local and remote
	 * invalidation, RNR NAKs from an RC responder with no receive
	 * posted, a PORT_ACTIVE event when the link comes up, SRQ resize
	 * (IB_SRQ_MAX_WR), the system image GUID above, RDMA FLUSH of both
	 * placement types and atomic write, memory windows of type 1 and 2B
	 * (bound by a process's QPs only: a kernel work request cannot bind
	 * one), and XRC.  No SG_GAPS MRs.
	 */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_FLUSH_GLOBAL |
				 IB_DEVICE_FLUSH_PERSISTENT |
				 IB_DEVICE_ATOMIC_WRITE |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_XRC;
	/*
	 * No local DMA lkey (ib_core gives each PD a DMA MR instead) and no
	 * IB_MR_TYPE_SG_GAPS: map_mr_sg() maps an SG list up to its first
	 * gap.  rdma link delete is allowed.
	 */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	shca_odp_caps(attr);
	return 0;
}

/**
 * shca_query_port() - report a port's attributes
 * @ibdev: the device
 * @port_num: the port, from 1
 * @attr: zeroed by ib_core, filled here
 *
 * Return: 0 or a negative errno.
 */
int shca_query_port(struct ib_device *ibdev, u32 port_num,
		    struct ib_port_attr *attr)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	const struct shca_hw_caps *c = &sdev->caps;
	struct shca_hw_port_attr port;
	int err;

	err = shca_cmd_query_port(sdev, port_num, &port);
	if (err)
		return err;

	attr->gid_tbl_len = c->gid_tbl_len;
	attr->pkey_tbl_len = c->max_pkeys;
	attr->max_msg_sz = c->max_msg_sz;
	attr->max_mtu = ib_mtu_int_to_enum(c->max_mtu);
	attr->active_mtu = min(attr->max_mtu, iboe_get_mtu(port.mtu));
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP |
			       IB_PORT_VENDOR_CLASS_SUP;
	attr->ip_gids = true;
	attr->max_vl_num = 1;
	if (port.link_up) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	return ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
				&attr->active_width);
}

/**
 * shca_get_port_immutable() - the port attributes that never change
 * @ibdev: the device
 * @port_num: the port, from 1
 * @immutable: filled here
 *
 * Return: 0 or a negative errno.
 */
int shca_get_port_immutable(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port_num, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE |
				    RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	if (to_shca_dev(ibdev)->flags & SHCA_DEV_F_NO_MAD) {
		immutable->core_cap_flags &= ~(RDMA_CORE_CAP_IB_MAD |
					       RDMA_CORE_CAP_IB_CM);
		immutable->max_mad_size = 0;
	}
	return 0;
}

/**
 * shca_get_link_layer() - the port's link layer
 * @ibdev: the device
 * @port_num: the port, from 1
 *
 * Return: always Ethernet: shca ports are RoCE ports.
 */
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev,
					 u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

/**
 * shca_get_dev_fw_str() - the firmware version, as text
 * @ibdev: the device
 * @str: IB_FW_VERSION_NAME_MAX bytes
 */
void shca_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%d", SHCA_HW_FW_MAJOR,
		 SHCA_HW_FW_MINOR, SHCA_HW_FW_SUBMINOR);
}

/**
 * shca_query_gid() - read an entry of the device's GID table
 * @ibdev: the device
 * @port_num: the port, from 1
 * @index: the entry
 * @gid: the GID, or all zeroes for an empty entry
 *
 * Return: 0 or a negative errno.
 */
int shca_query_gid(struct ib_device *ibdev, u32 port_num, int index,
		   union ib_gid *gid)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	struct shca_hw_gid_entry entry;
	int err;

	if (index < 0)
		return -EINVAL;
	err = shca_cmd_query_gid(sdev, port_num, index, &entry);
	if (err)
		return err;
	if (entry.valid)
		memcpy(gid->raw, entry.gid, sizeof(gid->raw));
	else
		memset(gid->raw, 0, sizeof(gid->raw));
	return 0;
}

static int shca_write_gid(const struct ib_gid_attr *attr, bool valid)
{
	struct shca_dev *sdev = to_shca_dev(attr->device);
	struct shca_hw_gid_entry entry = {};

	if (valid) {
		entry.valid = true;
		entry.type = attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP ?
			     SHCA_HW_GID_ROCE_V2 : SHCA_HW_GID_ROCE_V1;
		memcpy(entry.gid, attr->gid.raw, SHCA_HW_GID_LEN);
	}
	return shca_cmd_set_gid(sdev, attr->port_num, attr->index, &entry);
}

/**
 * shca_add_gid() - program a GID table entry that ib_core added
 * @attr: the entry; its index is the table slot
 * @context: unused
 *
 * Return: 0 or a negative errno.
 */
int shca_add_gid(const struct ib_gid_attr *attr, void **context)
{
	return shca_write_gid(attr, true);
}

/**
 * shca_del_gid() - clear a GID table entry that ib_core removed
 * @attr: the entry
 * @context: unused
 *
 * Return: 0 or a negative errno.
 */
int shca_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return shca_write_gid(attr, false);
}

/**
 * shca_query_pkey() - read an entry of the P_Key table
 * @ibdev: the device
 * @port_num: the port, from 1
 * @index: the entry
 * @pkey: the P_Key
 *
 * Return: 0 or a negative errno.
 */
int shca_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
		    u16 *pkey)
{
	return shca_cmd_query_pkey(to_shca_dev(ibdev), port_num, index, pkey);
}

/**
 * shca_alloc_pd() - allocate a protection domain
 * @ibpd: the object ib_core allocated
 * @udata: must carry no input or output
 *
 * Return: 0 or a negative errno.
 */
int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	int err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return err;
	return shca_cmd_alloc_pd(sdev, &to_shca_pd(ibpd)->pdn);
}

/**
 * shca_dealloc_pd() - free a protection domain
 * @ibpd: the domain
 * @udata: unused
 *
 * Return: 0 or a negative errno.
 */
int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return shca_cmd_dealloc_pd(to_shca_dev(ibpd->device),
				   to_shca_pd(ibpd)->pdn);
}
