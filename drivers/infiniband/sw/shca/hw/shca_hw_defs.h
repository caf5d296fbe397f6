/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca hardware model: the device ABI.
 *
 * Everything the driver and the model agree on lives here: the capability
 * table, the command opcodes with their typed parameter and result blocks,
 * and the status codes a command completes with.  Nothing in this file
 * knows about ib_core; the verbs layer translates.
 */
#ifndef SHCA_HW_DEFS_H
#define SHCA_HW_DEFS_H

#include <linux/types.h>

#define SHCA_HW_VENDOR_ID		0x5348	/* "SH" */
#define SHCA_HW_VENDOR_PART_ID		0x0001
#define SHCA_HW_HW_VERSION		1
#define SHCA_HW_FW_MAJOR		0
#define SHCA_HW_FW_MINOR		2
#define SHCA_HW_FW_SUBMINOR		0

#define SHCA_HW_NUM_PORTS		1
#define SHCA_HW_GID_LEN			16

/**
 * struct shca_hw_caps - what the device can do, in one table
 * @max_mr_size: largest memory region, in bytes
 * @page_size_cap: bitmap of supported page sizes
 * @max_qp: queue pairs in the QP context table
 * @max_qp_wr: work requests per send or receive queue
 * @max_send_sge: scatter/gather entries per send WQE
 * @max_recv_sge: scatter/gather entries per receive WQE
 * @max_sge_rd: scatter/gather entries per RDMA read
 * @max_cq: completion queues in the CQ context table
 * @max_cqe: CQEs per completion queue
 * @max_mr: memory regions
 * @max_pd: protection domains
 * @max_qp_rd_atom: outstanding RDMA reads and atomics per QP, as target
 * @max_qp_init_rd_atom: outstanding RDMA reads and atomics per QP, as initiator
 * @max_srq: shared receive queues
 * @max_srq_wr: work requests per SRQ
 * @max_srq_sge: scatter/gather entries per SRQ WQE
 * @max_ah: address handles
 * @max_fast_reg_page_list_len: pages in one fast registration
 * @max_inline_data: bytes of inline data per send WQE
 * @max_msg_sz: largest message, in bytes
 * @max_pkeys: entries in the P_Key table
 * @gid_tbl_len: entries in the GID table
 * @max_mtu: largest path MTU, in bytes
 * @local_ca_ack_delay: the ACK delay the device reports, as 4.096us * 2^n
 */
struct shca_hw_caps {
	u64 max_mr_size;
	u64 page_size_cap;
	u32 max_qp;
	u32 max_qp_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_sge_rd;
	u32 max_cq;
	u32 max_cqe;
	u32 max_mr;
	u32 max_pd;
	u32 max_qp_rd_atom;
	u32 max_qp_init_rd_atom;
	u32 max_srq;
	u32 max_srq_wr;
	u32 max_srq_sge;
	u32 max_ah;
	u32 max_fast_reg_page_list_len;
	u32 max_inline_data;
	u32 max_msg_sz;
	u16 max_pkeys;
	u16 gid_tbl_len;
	u32 max_mtu;
	u8 local_ca_ack_delay;
};

/**
 * enum shca_hw_status - how a device command completed
 * @SHCA_HW_OK: success
 * @SHCA_HW_BAD_OPCODE: the device does not know the command
 * @SHCA_HW_BAD_PARAM: a parameter is out of range
 * @SHCA_HW_BAD_INDEX: a table index is out of range
 * @SHCA_HW_NO_RESOURCES: a table is full
 * @SHCA_HW_BAD_STATE: the object is not in a state that allows the command
 * @SHCA_HW_BUSY: the object is still in use
 * @SHCA_HW_INJECTED: the command failed because a test asked it to
 * @SHCA_HW_NUM_STATUS: number of status codes
 */
enum shca_hw_status {
	SHCA_HW_OK,
	SHCA_HW_BAD_OPCODE,
	SHCA_HW_BAD_PARAM,
	SHCA_HW_BAD_INDEX,
	SHCA_HW_NO_RESOURCES,
	SHCA_HW_BAD_STATE,
	SHCA_HW_BUSY,
	SHCA_HW_INJECTED,
	SHCA_HW_NUM_STATUS,
};

/**
 * enum shca_hw_opcode - device commands
 * @SHCA_CMD_QUERY_CAPS: read the capability table
 * @SHCA_CMD_QUERY_PORT: read the port's link attributes
 * @SHCA_CMD_SET_PORT: tell the port about its link (the PHY's view)
 * @SHCA_CMD_SET_GID: write or clear one GID table entry
 * @SHCA_CMD_QUERY_GID: read one GID table entry
 * @SHCA_CMD_QUERY_PKEY: read one P_Key table entry
 * @SHCA_CMD_ALLOC_PD: allocate a protection domain number
 * @SHCA_CMD_DEALLOC_PD: release a protection domain number
 * @SHCA_CMD_NUM_OPCODES: number of opcodes
 */
enum shca_hw_opcode {
	SHCA_CMD_QUERY_CAPS,
	SHCA_CMD_QUERY_PORT,
	SHCA_CMD_SET_PORT,
	SHCA_CMD_SET_GID,
	SHCA_CMD_QUERY_GID,
	SHCA_CMD_QUERY_PKEY,
	SHCA_CMD_ALLOC_PD,
	SHCA_CMD_DEALLOC_PD,
	SHCA_CMD_NUM_OPCODES,
};

/**
 * enum shca_hw_gid_type - how a GID table entry is encapsulated
 * @SHCA_HW_GID_ROCE_V1: RoCE v1, Ethertype 0x8915
 * @SHCA_HW_GID_ROCE_V2: RoCE v2, UDP port 4791
 */
enum shca_hw_gid_type {
	SHCA_HW_GID_ROCE_V1,
	SHCA_HW_GID_ROCE_V2,
};

/**
 * struct shca_hw_port_attr - what the port reports of its link
 * @link_up: the link is up and carries traffic
 * @mtu: the link's MTU, in bytes
 * @mac: the port's Ethernet address
 */
struct shca_hw_port_attr {
	bool link_up;
	u32 mtu;
	u8 mac[6];
};

/**
 * struct shca_hw_gid_entry - one GID table entry
 * @valid: the entry is in use
 * @type: its encapsulation
 * @gid: the GID itself
 */
struct shca_hw_gid_entry {
	bool valid;
	enum shca_hw_gid_type type;
	u8 gid[SHCA_HW_GID_LEN];
};

/**
 * struct shca_hw_cmd - one device command with its parameters and result
 * @opcode: which command
 * @port: the port it addresses, from 1, where it addresses one
 * @index: the table index it addresses, where it addresses one
 * @in: parameters, by opcode
 * @in.port: for SET_PORT
 * @in.gid: for SET_GID; an entry with @valid clear empties the slot
 * @in.pdn: for DEALLOC_PD
 * @out: results, by opcode
 * @out.caps: for QUERY_CAPS
 * @out.port: for QUERY_PORT
 * @out.gid: for QUERY_GID
 * @out.pkey: for QUERY_PKEY
 * @out.pdn: for ALLOC_PD
 */
struct shca_hw_cmd {
	enum shca_hw_opcode opcode;
	u32 port;
	u32 index;
	union {
		struct shca_hw_port_attr port;
		struct shca_hw_gid_entry gid;
		u32 pdn;
	} in;
	union {
		struct shca_hw_caps caps;
		struct shca_hw_port_attr port;
		struct shca_hw_gid_entry gid;
		u16 pkey;
		u32 pdn;
	} out;
};

#endif /* SHCA_HW_DEFS_H */
