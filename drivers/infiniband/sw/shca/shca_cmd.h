/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: one typed function per device command.
 *
 * The verbs layer issues a command by calling its function here with the
 * command's parameter block and reading back its result; only shca_cmd.c
 * builds a struct shca_hw_cmd.  The parameter and result blocks are the
 * device ABI's own (hw/shca_hw_defs.h); a command with one or two scalar
 * fields takes them as arguments.  Every function returns 0 or a negative
 * errno: a device status becomes an errno in shca_status_to_errno() and
 * nowhere else.
 */
#ifndef SHCA_CMD_H
#define SHCA_CMD_H

#include <linux/types.h>

#include "hw/shca_hw_defs.h"

struct net_device;
struct shca_dev;

int shca_status_to_errno(enum shca_hw_status status);
#if IS_ENABLED(CONFIG_KUNIT)
int shca_cmd_exec(struct shca_dev *sdev, struct shca_hw_cmd *cmd);
#endif
u64 shca_netdev_segment(const struct net_device *ndev);

/* The device and its port */
int shca_cmd_query_caps(struct shca_dev *sdev, struct shca_hw_caps *caps);
int shca_cmd_query_port(struct shca_dev *sdev, u32 port,
			struct shca_hw_port_attr *attr);
int shca_cmd_set_port(struct shca_dev *sdev, const struct net_device *ndev,
		      bool *link_up);
int shca_cmd_query_gid(struct shca_dev *sdev, u32 port, u32 index,
		       struct shca_hw_gid_entry *entry);
int shca_cmd_set_gid(struct shca_dev *sdev, u32 port, u32 index,
		     const struct shca_hw_gid_entry *entry);
int shca_cmd_query_pkey(struct shca_dev *sdev, u32 port, u32 index,
			u16 *pkey);
int shca_cmd_query_counters(struct shca_dev *sdev,
			    u64 counters[SHCA_CNT_NUM]);

/* Protection domains */
int shca_cmd_alloc_pd(struct shca_dev *sdev, u32 *pdn);
int shca_cmd_dealloc_pd(struct shca_dev *sdev, u32 pdn);
int shca_cmd_alloc_xrcd(struct shca_dev *sdev, u32 *xrcdn);
int shca_cmd_dealloc_xrcd(struct shca_dev *sdev, u32 xrcdn);

/* The event queue */
int shca_cmd_create_eq(struct shca_dev *sdev, u32 eqn,
		       struct shca_hw_eqe *ring, u32 log_depth);
int shca_cmd_destroy_eq(struct shca_dev *sdev, u32 eqn);

/* Completion queues */
int shca_cmd_create_cq(struct shca_dev *sdev,
		       const struct shca_hw_cq_create *params,
		       struct shca_hw_obj_id *id);
int shca_cmd_resize_cq(struct shca_dev *sdev, u32 cqn,
		       const struct shca_hw_cq_create *params);
int shca_cmd_modify_cq(struct shca_dev *sdev, u32 cqn, u16 count,
		       u16 period);
int shca_cmd_query_cq(struct shca_dev *sdev, u32 cqn,
		      struct shca_hw_cq_query *out);
int shca_cmd_destroy_cq(struct shca_dev *sdev, u32 cqn);

/* Shared receive queues */
int shca_cmd_create_srq(struct shca_dev *sdev,
			const struct shca_hw_srq_create *params,
			struct shca_hw_obj_id *id);
int shca_cmd_modify_srq(struct shca_dev *sdev, u32 srqn, u32 limit);
int shca_cmd_resize_srq(struct shca_dev *sdev, u32 srqn,
			const struct shca_hw_srq_resize *params,
			struct shca_hw_srq_copied *copied);
int shca_cmd_query_srq(struct shca_dev *sdev, u32 srqn,
		       struct shca_hw_srq_query *out);
int shca_cmd_destroy_srq(struct shca_dev *sdev, u32 srqn);

/* Queue pairs */
int shca_cmd_create_qp(struct shca_dev *sdev,
		       const struct shca_hw_qp_create *params,
		       struct shca_hw_obj_id *id);
int shca_cmd_modify_qp(struct shca_dev *sdev, u32 qpn,
		       const struct shca_hw_qp_attr *attr, u32 mask,
		       u32 *state);
int shca_cmd_query_qp(struct shca_dev *sdev, u32 qpn,
		      struct shca_hw_qp_query *out);
int shca_cmd_destroy_qp(struct shca_dev *sdev, u32 qpn);
int shca_cmd_attach_mcast(struct shca_dev *sdev, u32 qpn, const u8 *mgid);
int shca_cmd_detach_mcast(struct shca_dev *sdev, u32 qpn, const u8 *mgid);

/* The memory protection table */
int shca_cmd_alloc_mpt(struct shca_dev *sdev,
		       const struct shca_hw_mpt_alloc *params, u32 *key);
int shca_cmd_rereg_mpt(struct shca_dev *sdev,
		       const struct shca_hw_mpt_rereg *params);
int shca_cmd_write_mpt(struct shca_dev *sdev,
		       const struct shca_hw_mpt_write *params);
int shca_cmd_free_mpt(struct shca_dev *sdev, u32 key);
int shca_cmd_alloc_mw(struct shca_dev *sdev, u32 type, u32 pdn, u32 *key);

/* Device memory */
int shca_cmd_alloc_dm(struct shca_dev *sdev, u64 length, u32 log_align,
		      u64 *addr);
int shca_cmd_free_dm(struct shca_dev *sdev, u64 addr);
int shca_cmd_map_odp(struct shca_dev *sdev,
		     const struct shca_hw_odp_map *params);
int shca_cmd_invalidate_odp(struct shca_dev *sdev,
			    const struct shca_hw_odp_range *params);

#endif /* SHCA_CMD_H */
