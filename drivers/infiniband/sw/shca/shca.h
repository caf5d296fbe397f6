/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the verbs layer's view of a device.
 *
 * Lock order, outermost first:
 *   shca_dev_list_lock (shca_main.c)
 *   shca_hw internal locks (leaf; see hw/shca_hw.c)
 * ib_core's rtnl and device locks are never taken under shca_dev_list_lock.
 */
#ifndef SHCA_H
#define SHCA_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "hw/shca_hw.h"

#define SHCA_UVERBS_ABI_VERSION	1

/**
 * struct shca_dev - one shca device, bound to one netdev
 * @ibdev: the ib_core device; first, as ib_alloc_device() requires
 * @hw: the modeled HCA behind it
 * @caps: the device's capability table, read once at probe
 * @ndev: the netdev the port is bound to; a reference is held on it
 * @ndev_tracker: tracks that reference
 * @list: entry in the driver's device list, under shca_dev_list_lock
 * @debugfs: the device's debugfs directory
 */
struct shca_dev {
	struct ib_device ibdev;
	struct shca_hw *hw;
	struct shca_hw_caps caps;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	struct dentry *debugfs;
};

/**
 * struct shca_pd - a protection domain
 * @ibpd: the ib_core object; first, as INIT_RDMA_OBJ_SIZE requires
 * @pdn: the device's number for it
 */
struct shca_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct shca_dev *to_shca_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct shca_dev, ibdev);
}

static inline struct shca_pd *to_shca_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibpd);
}

#define shca_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

/* shca_cmd.c: the one place where device status becomes an errno */
int shca_status_to_errno(enum shca_hw_status status);
int shca_cmd_exec(struct shca_dev *sdev, struct shca_hw_cmd *cmd);
int shca_cmd_set_port(struct shca_dev *sdev, const struct net_device *ndev,
		      bool *link_up);
int shca_cmd_query_caps(struct shca_dev *sdev, struct shca_hw_caps *caps);

/* shca_verbs.c */
int shca_add_gid(const struct ib_gid_attr *attr, void **context);
int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_del_gid(const struct ib_gid_attr *attr, void **context);
void shca_get_dev_fw_str(struct ib_device *ibdev, char *str);
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev,
					 u32 port_num);
int shca_get_port_immutable(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_immutable *immutable);
int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int shca_query_gid(struct ib_device *ibdev, u32 port_num, int index,
		   union ib_gid *gid);
int shca_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
		    u16 *pkey);
int shca_query_port(struct ib_device *ibdev, u32 port_num,
		    struct ib_port_attr *attr);

/* shca_main.c */
int shca_dev_add(const char *name, struct net_device *ndev);

/* shca_debugfs.c */
void shca_debugfs_init(void);
void shca_debugfs_exit(void);
void shca_debugfs_add_dev(struct shca_dev *sdev, const char *name);
void shca_debugfs_del_dev(struct shca_dev *sdev);

#endif /* SHCA_H */
