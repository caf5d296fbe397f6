/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca hardware model: the device ABI.
 *
 * Everything the driver and the model agree on lives here: the capability
 * table, the command opcodes with their typed parameter and result blocks,
 * and the status codes a command completes with.  The ring formats, which
 * processes see as they are, are in <rdma/shca-abi.h>.  Nothing here
 * knows about ib_core; the verbs layer translates.
 */
#ifndef SHCA_HW_DEFS_H
#define SHCA_HW_DEFS_H

#include <linux/bits.h>
#include <linux/types.h>
#include <rdma/shca-abi.h>

#define SHCA_HW_VENDOR_ID		0x5348	/* "SH" */
#define SHCA_HW_VENDOR_PART_ID		0x0001
#define SHCA_HW_HW_VERSION		1
#define SHCA_HW_FW_MAJOR		0
#define SHCA_HW_FW_MINOR		2
#define SHCA_HW_FW_SUBMINOR		0

#define SHCA_HW_NUM_PORTS		1

/*
 * Event queues, each with its MSI-X vector: the size of the device's
 * vector table.  EQ 0 takes the affiliated and port events besides the
 * completion events of its CQs.
 */
#define SHCA_HW_MAX_EQS			64

/*
 * The page sizes an MPT entry's page list may use (WRITE_MPT and a REG_MR
 * WQE): 4 KiB to 1 GiB, every power of two between.
 */
#define SHCA_HW_MIN_PAGE_SHIFT		12
#define SHCA_HW_MAX_PAGE_SHIFT		30

/**
 * struct shca_hw_caps - what the device can do, in one table
 * @max_mr_size: largest memory region, in bytes
 * @page_size_cap: bitmap of the page sizes an MPT entry takes, from
 *	SHCA_HW_MIN_PAGE_SHIFT to SHCA_HW_MAX_PAGE_SHIFT
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
 * @max_xrcd: XRC domains
 * @max_ah: address handles
 * @max_fast_reg_page_list_len: pages in one fast registration
 * @max_inline_data: bytes of inline data per send WQE
 * @max_msg_sz: largest message, in bytes
 * @max_pkeys: entries in the P_Key table
 * @gid_tbl_len: entries in the GID table
 * @max_mtu: largest path MTU, in bytes
 * @local_ca_ack_delay: the ACK delay the device reports, as 4.096us * 2^n
 * @max_mcast_grp: multicast groups in the group table
 * @max_mcast_qp_attach: QPs attached to one multicast group
 * @max_total_mcast_qp_attach: QP attachments over all groups
 * @core_clock_khz: the rate of the free-running device clock, in kHz;
 *	every CQE carries its completion time on it
 * @timestamp_mask: the bits of that clock, and of a CQE's timestamp,
 *	that count; the clock wraps to zero past it
 * @max_dm_size: bytes of on-chip device memory; 0 for none
 * @dm_log_granule: log2 of its allocation unit: every ALLOC_DM starts on
 *	and is rounded up to one
 * @max_eq: event queues, each with its own interrupt vector
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
	u32 max_xrcd;
	u32 max_ah;
	u32 max_fast_reg_page_list_len;
	u32 max_inline_data;
	u32 max_msg_sz;
	u16 max_pkeys;
	u16 gid_tbl_len;
	u32 max_mtu;
	u8 local_ca_ack_delay;
	u32 max_mcast_grp;
	u32 max_mcast_qp_attach;
	u32 max_total_mcast_qp_attach;
	u32 core_clock_khz;
	u64 timestamp_mask;
	u64 max_dm_size;
	u32 dm_log_granule;
	u32 max_eq;
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
 * @SHCA_HW_EXISTS: the entry the command would add is already there
 * @SHCA_HW_NOT_FOUND: the entry the command would remove is not there
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
	SHCA_HW_EXISTS,
	SHCA_HW_NOT_FOUND,
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
 * @SHCA_CMD_CREATE_EQ: hand the device the ring of the event queue cmd->index
 * @SHCA_CMD_DESTROY_EQ: take the event queue cmd->index back; BUSY while a CQ
 *	has it for its completion vector
 * @SHCA_CMD_CREATE_CQ: create a completion queue context
 * @SHCA_CMD_RESIZE_CQ: move a CQ to a new ring, keeping its live CQEs
 * @SHCA_CMD_MODIFY_CQ: set a CQ's interrupt moderation
 * @SHCA_CMD_QUERY_CQ: read a CQ context
 * @SHCA_CMD_DESTROY_CQ: destroy a CQ context; refused while associated
 * @SHCA_CMD_CREATE_SRQ: create a shared receive queue context
 * @SHCA_CMD_MODIFY_SRQ: set an SRQ's limit
 * @SHCA_CMD_QUERY_SRQ: read an SRQ context
 * @SHCA_CMD_DESTROY_SRQ: destroy an SRQ context; refused while associated
 * @SHCA_CMD_CREATE_QP: create a queue pair context
 * @SHCA_CMD_MODIFY_QP: change a QP's state and attributes
 * @SHCA_CMD_QUERY_QP: read a QP context
 * @SHCA_CMD_DESTROY_QP: fence a QP and destroy its context
 * @SHCA_CMD_ALLOC_MPT: allocate a memory protection table entry
 * @SHCA_CMD_WRITE_MPT: make an MPT entry valid with a translation
 * @SHCA_CMD_FREE_MPT: release an MPT entry, waiting out its users
 * @SHCA_CMD_QUERY_COUNTERS: read the device's counters
 * @SHCA_CMD_ATTACH_MCAST: attach a UD QP to a multicast group
 * @SHCA_CMD_DETACH_MCAST: detach a UD QP from a multicast group
 * @SHCA_CMD_RESIZE_SRQ: move an SRQ to new slots and index ring, keeping
 *	its posted WQEs
 * @SHCA_CMD_REREG_MPT: rewrite a valid MPT entry's protection domain,
 *	rights or translation, its key kept
 * @SHCA_CMD_ALLOC_MW: allocate an MPT entry for a memory window, unbound;
 *	FREE_MPT releases it
 * @SHCA_CMD_ALLOC_DM: allocate a range of the device memory
 * @SHCA_CMD_FREE_DM: release a range of the device memory; refused while
 *	an MPT entry maps it
 * @SHCA_CMD_MAP_ODP: resume from a page fault or prefetch: make pages of
 *	an ODP entry present, with the rights the driver grants each
 * @SHCA_CMD_INVALIDATE_ODP: make pages of an ODP entry absent and wait
 *	out the accesses in flight that may be using them
 * @SHCA_CMD_ALLOC_XRCD: allocate an XRC domain number
 * @SHCA_CMD_DEALLOC_XRCD: release an XRC domain number; refused while an
 *	XRC SRQ or an XRC target QP belongs to it
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
	SHCA_CMD_CREATE_EQ,
	SHCA_CMD_DESTROY_EQ,
	SHCA_CMD_CREATE_CQ,
	SHCA_CMD_RESIZE_CQ,
	SHCA_CMD_MODIFY_CQ,
	SHCA_CMD_QUERY_CQ,
	SHCA_CMD_DESTROY_CQ,
	SHCA_CMD_CREATE_SRQ,
	SHCA_CMD_MODIFY_SRQ,
	SHCA_CMD_QUERY_SRQ,
	SHCA_CMD_DESTROY_SRQ,
	SHCA_CMD_CREATE_QP,
	SHCA_CMD_MODIFY_QP,
	SHCA_CMD_QUERY_QP,
	SHCA_CMD_DESTROY_QP,
	SHCA_CMD_ALLOC_MPT,
	SHCA_CMD_WRITE_MPT,
	SHCA_CMD_FREE_MPT,
	SHCA_CMD_QUERY_COUNTERS,
	SHCA_CMD_ATTACH_MCAST,
	SHCA_CMD_DETACH_MCAST,
	SHCA_CMD_RESIZE_SRQ,
	SHCA_CMD_REREG_MPT,
	SHCA_CMD_ALLOC_MW,
	SHCA_CMD_ALLOC_DM,
	SHCA_CMD_FREE_DM,
	SHCA_CMD_MAP_ODP,
	SHCA_CMD_INVALIDATE_ODP,
	SHCA_CMD_ALLOC_XRCD,
	SHCA_CMD_DEALLOC_XRCD,
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
 * @segment: the fabric segment the port is cabled to: an opaque cookie of
 *	the driver's choosing; a message passes only between ports on one
 *	segment
 */
struct shca_hw_port_attr {
	bool link_up;
	u32 mtu;
	u8 mac[6];
	u64 segment;
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

/*
 * Rings.  The formats of the entries and doorbell records are in
 * <rdma/shca-abi.h>: a process reads and writes them too.  The driver
 * allocates ring memory and doorbell records and hands their addresses to
 * the device at create time.
 */
#define SHCA_HW_MAX_LOG_DEPTH		20
#define SHCA_HW_QPN_MASK		0xffffff
#define SHCA_HW_GSI_QPN			1
#define SHCA_HW_FIRST_QPN		2
/* The destination QPN of a UD send to a multicast group */
#define SHCA_HW_MCAST_QPN		0xffffff
/* The last QPN a QP gets: the multicast QPN is nobody's */
#define SHCA_HW_LAST_QPN		(SHCA_HW_MCAST_QPN - 1)

/* MR and QP access rights, as the device checks them */
#define SHCA_ACCESS_LOCAL_WRITE		BIT(0)
#define SHCA_ACCESS_REMOTE_WRITE	BIT(1)
#define SHCA_ACCESS_REMOTE_READ		BIT(2)
#define SHCA_ACCESS_REMOTE_ATOMIC	BIT(3)
/* RDMA FLUSH of placement type global, and persistent */
#define SHCA_ACCESS_FLUSH_GLOBAL	BIT(4)
#define SHCA_ACCESS_FLUSH_PERSISTENT	BIT(5)
/* An MR's: memory windows may be bound to it */
#define SHCA_ACCESS_MW_BIND		BIT(6)
#define SHCA_ACCESS_ALL			GENMASK(6, 0)

/**
 * enum shca_hw_eqe_type - what an event queue entry reports
 * @SHCA_EQE_COMP: a completion event on CQ @obj
 * @SHCA_EQE_QP: an affiliated event on QP @obj of generation @gen
 * @SHCA_EQE_CQ: an affiliated event on CQ @obj
 * @SHCA_EQE_SRQ: an affiliated event on SRQ @obj
 * @SHCA_EQE_PORT: an unaffiliated event on port @obj
 */
enum shca_hw_eqe_type {
	SHCA_EQE_COMP,
	SHCA_EQE_QP,
	SHCA_EQE_CQ,
	SHCA_EQE_SRQ,
	SHCA_EQE_PORT,
};

/**
 * enum shca_hw_event - affiliated asynchronous events
 * @SHCA_EV_COMM_EST: a QP in RTR received its first packet
 * @SHCA_EV_SQ_DRAINED: a QP in SQD has no send in flight any more
 * @SHCA_EV_QP_FATAL: a work queue failed
 * @SHCA_EV_QP_REQ_ERR: the QP received an invalid request
 * @SHCA_EV_QP_ACCESS_ERR: an access violation put the QP in error
 * @SHCA_EV_QP_LAST_WQE: an SRQ-attached QP in error consumes no more WQEs
 * @SHCA_EV_CQ_ERR: a CQ overflowed
 * @SHCA_EV_SRQ_LIMIT: an SRQ fell below its limit
 * @SHCA_EV_PORT_ACTIVE: the port's link came up
 * @SHCA_EV_PORT_ERR: the port's link went down
 */
enum shca_hw_event {
	SHCA_EV_COMM_EST,
	SHCA_EV_SQ_DRAINED,
	SHCA_EV_QP_FATAL,
	SHCA_EV_QP_REQ_ERR,
	SHCA_EV_QP_ACCESS_ERR,
	SHCA_EV_QP_LAST_WQE,
	SHCA_EV_CQ_ERR,
	SHCA_EV_SRQ_LIMIT,
	SHCA_EV_PORT_ACTIVE,
	SHCA_EV_PORT_ERR,
};

/**
 * struct shca_hw_obj_id - what CREATE_CQ and CREATE_SRQ hand back
 * @num: the new object's number
 * @gen: its generation: never 0, never one an earlier object of the
 *	device had, so its events tell it from an earlier holder of @num
 */
struct shca_hw_obj_id {
	u32 num;
	u32 gen;
};

/**
 * struct shca_hw_eqe - one event queue entry, 16 bytes
 * @type: enum shca_hw_eqe_type
 * @event: enum shca_hw_event, for affiliated and port events
 * @rsvd: zero
 * @owner: bit 0 is the phase, as in struct shca_hw_cqe
 * @obj: the CQ, QP or SRQ number, or the port
 * @gen: the object's generation, for CQ, QP and SRQ events: an event of
 *	an object destroyed since, whose number a new one took, carries the
 *	old one's
 * @rsvd2: zero
 */
struct shca_hw_eqe {
	u8 type;
	u8 event;
	u8 rsvd;
	u8 owner;
	u32 obj;
	u32 gen;
	u32 rsvd2;
};

/**
 * enum shca_hw_qp_type - transport service of a QP
 * @SHCA_QPT_RC: reliable connected
 * @SHCA_QPT_UC: unreliable connected
 * @SHCA_QPT_UD: unreliable datagram
 * @SHCA_QPT_GSI: the general services QP, QP1
 * @SHCA_QPT_XRC_INI: XRC initiator: reliable, send side only; each send
 *	WQE names the remote XRC SRQ (@xrc_srqn)
 * @SHCA_QPT_XRC_TGT: XRC target: reliable, receive side only, in an XRC
 *	domain; a message goes to the XRC SRQ it names
 */
enum shca_hw_qp_type {
	SHCA_QPT_RC,
	SHCA_QPT_UC,
	SHCA_QPT_UD,
	SHCA_QPT_GSI,
	SHCA_QPT_XRC_INI,
	SHCA_QPT_XRC_TGT,
};

/**
 * enum shca_hw_qp_state - QP states, as IBTA defines them
 * @SHCA_QPS_RESET: reset
 * @SHCA_QPS_INIT: initialised
 * @SHCA_QPS_RTR: ready to receive
 * @SHCA_QPS_RTS: ready to send
 * @SHCA_QPS_SQD: send queue drain
 * @SHCA_QPS_SQE: send queue error
 * @SHCA_QPS_ERR: error
 * @SHCA_QPS_NUM: number of states
 */
enum shca_hw_qp_state {
	SHCA_QPS_RESET,
	SHCA_QPS_INIT,
	SHCA_QPS_RTR,
	SHCA_QPS_RTS,
	SHCA_QPS_SQD,
	SHCA_QPS_SQE,
	SHCA_QPS_ERR,
	SHCA_QPS_NUM,
};

/* Which fields of struct shca_hw_qp_attr a MODIFY_QP writes */
#define SHCA_QP_ATTR_STATE		BIT(0)
#define SHCA_QP_ATTR_ACCESS		BIT(1)
#define SHCA_QP_ATTR_QKEY		BIT(2)
#define SHCA_QP_ATTR_AV			BIT(3)
#define SHCA_QP_ATTR_DEST_QPN		BIT(4)
#define SHCA_QP_ATTR_RQ_PSN		BIT(5)
#define SHCA_QP_ATTR_SQ_PSN		BIT(6)
#define SHCA_QP_ATTR_MTU		BIT(7)
#define SHCA_QP_ATTR_TIMEOUT		BIT(8)
#define SHCA_QP_ATTR_RETRY_CNT		BIT(9)
#define SHCA_QP_ATTR_RNR_RETRY		BIT(10)
#define SHCA_QP_ATTR_MIN_RNR_TIMER	BIT(11)
#define SHCA_QP_ATTR_MAX_RD_ATOMIC	BIT(12)
#define SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC	BIT(13)
#define SHCA_QP_ATTR_PKEY_INDEX		BIT(14)
#define SHCA_QP_ATTR_SQD_NOTIFY		BIT(15)
/*
 * Not an attribute but a condition: refuse the modify with BAD_STATE
 * unless the QP is in @cur_state.  A driver that caches the state sends
 * it, and reads the state afresh only when the device has moved the QP
 * on its own (to SQE or ERR) and refuses.
 */
#define SHCA_QP_ATTR_CUR_STATE		BIT(16)

/**
 * struct shca_hw_qp_attr - the modifiable part of a QP context
 * @state: enum shca_hw_qp_state
 * @access: SHCA_ACCESS_* rights a remote peer has on this QP
 * @qkey: Q_Key, for UD and GSI
 * @av: the primary path, for RC and UC
 * @dest_qpn: the connected peer's QP, for RC and UC
 * @rq_psn: the PSN the responder expects next (24 bits): set by a modify,
 *	then moved on by every message it takes, by the message's packets
 * @sq_psn: the PSN the requester sends next (24 bits), likewise
 * @mtu: path MTU, in bytes
 * @timeout: local ACK timeout, as 4.096us * 2^n; 0 waits forever
 * @retry_cnt: transport retries
 * @rnr_retry: RNR retries; 7 retries forever
 * @min_rnr_timer: the RNR NAK timer this QP asks its peers to wait
 * @max_rd_atomic: reads and atomics in flight, as initiator
 * @max_dest_rd_atomic: reads and atomics in flight, as target
 * @pkey_index: P_Key table entry
 * @sqd_notify: raise SQ drained on entering SQD
 * @cur_state: for MODIFY_QP with SHCA_QP_ATTR_CUR_STATE, the state the
 *	QP must be in; no part of the QP context, and QUERY_QP leaves it 0
 */
struct shca_hw_qp_attr {
	u32 state;
	u32 cur_state;
	u32 access;
	u32 qkey;
	struct shca_hw_av av;
	u32 dest_qpn;
	u32 rq_psn;
	u32 sq_psn;
	u32 mtu;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u16 pkey_index;
	bool sqd_notify;
};

/**
 * struct shca_hw_wq_desc - one work queue's memory, as the driver gave it
 * @ring: the entries
 * @log_depth: log2 of the number of entries; the queue is absent when
 *	@ring is NULL
 */
struct shca_hw_wq_desc {
	void *ring;
	u32 log_depth;
};

/**
 * struct shca_hw_qp_create - CREATE_QP parameters
 * @type: enum shca_hw_qp_type
 * @pdn: protection domain; 0 for an XRC target QP
 * @send_cqn: CQ for send completions; 0 for an XRC target QP
 * @recv_cqn: CQ for receive completions; 0 for XRC QPs
 * @srqn: SRQ the QP receives from, or 0 for its own receive queue; 0 for
 *	XRC QPs
 * @xrcdn: the XRC domain of an XRC target QP; 0 otherwise
 * @sq: the send queue; absent for an XRC target QP
 * @rq: the receive queue; ignored with an SRQ, absent for XRC QPs
 * @dbrec: the doorbell record
 * @max_send_sge: SGEs allowed per send WQE
 * @max_recv_sge: SGEs allowed per receive WQE
 * @max_inline: inline bytes allowed per send WQE
 * @sig_all: every send WQE completes, signaled or not
 * @user: the rings are mapped into a process, which writes the WQEs: they
 *	may not fast-register or invalidate (a REG_MR WQE names a kernel
 *	address)
 */
struct shca_hw_qp_create {
	u32 type;
	u32 pdn;
	u32 send_cqn;
	u32 recv_cqn;
	u32 srqn;
	u32 xrcdn;
	struct shca_hw_wq_desc sq;
	struct shca_hw_wq_desc rq;
	struct shca_hw_qp_dbrec *dbrec;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	bool sig_all;
	bool user;
};

/**
 * struct shca_hw_qp_query - QUERY_QP results
 * @attr: the modifiable attributes
 * @type: enum shca_hw_qp_type
 * @gen: the QP's generation: no earlier holder of its QPN had it
 * @sq_pi: send queue producer index, as last doorbelled
 * @sq_ci: send queue consumer index: WQEs the engine finished
 * @rq_pi: receive queue producer index
 * @rq_ci: receive queue consumer index
 */
struct shca_hw_qp_query {
	struct shca_hw_qp_attr attr;
	u32 type;
	u32 gen;
	u32 sq_pi;
	u32 sq_ci;
	u32 rq_pi;
	u32 rq_ci;
};

/* CREATE_CQ: stamp each CQE with the device clock as it is written. */
#define SHCA_HW_CQ_F_TIMESTAMP	BIT(0)

/**
 * struct shca_hw_cq_create - CREATE_CQ and RESIZE_CQ parameters
 * @ring: the CQE ring, zeroed
 * @log_depth: log2 of its number of CQEs
 * @dbrec: the doorbell record
 * @flags: SHCA_HW_CQ_F_*, for CREATE_CQ; RESIZE_CQ keeps the CQ's own
 * @eqn: its completion vector: the EQ its events go to, below
 *	caps.max_eq, for CREATE_CQ; RESIZE_CQ keeps the CQ's own
 */
struct shca_hw_cq_create {
	struct shca_hw_cqe *ring;
	u32 log_depth;
	struct shca_hw_cq_dbrec *dbrec;
	u32 flags;
	u32 eqn;
};

/**
 * struct shca_hw_cq_query - QUERY_CQ results
 * @log_depth: log2 of the number of CQEs
 * @pi: producer index
 * @ci: consumer index, as the doorbell record says
 * @armed: 0, or SHCA_CQ_ARM_NEXT or SHCA_CQ_ARM_SOLICITED
 * @assoc: QPs and SRQs that point at the CQ
 * @overflowed: the CQ overflowed and is in error
 * @moder_count: CQEs per event under moderation
 * @moder_period: microseconds an event may wait under moderation
 */
struct shca_hw_cq_query {
	u32 log_depth;
	u32 pi;
	u32 ci;
	u32 armed;
	u32 assoc;
	bool overflowed;
	u16 moder_count;
	u16 moder_period;
};

#define SHCA_CQ_ARM_NEXT	1
#define SHCA_CQ_ARM_SOLICITED	2

/**
 * struct shca_hw_srq_create - CREATE_SRQ parameters
 * @pdn: protection domain
 * @slots: the WQE slots
 * @index_ring: the ring of slot numbers the driver posts
 * @log_depth: log2 of the number of slots and ring entries
 * @dbrec: the doorbell record
 * @max_sge: SGEs allowed per WQE
 * @limit: the limit; 0 leaves the limit event disarmed; for RESIZE_SRQ,
 *	SHCA_HW_SRQ_LIMIT_KEEP keeps the armed one
 * @xrcdn: for an XRC SRQ, its XRC domain; 0 for an ordinary SRQ
 * @cqn: for an XRC SRQ, the CQ its receive completions go to
 */
struct shca_hw_srq_create {
	u32 pdn;
	struct shca_hw_recv_wqe *slots;
	u32 *index_ring;
	u32 log_depth;
	struct shca_hw_srq_dbrec *dbrec;
	u32 max_sge;
	u32 limit;
	u32 xrcdn;
	u32 cqn;
};

/* RESIZE_SRQ's limit that leaves the armed limit as it is. */
#define SHCA_HW_SRQ_LIMIT_KEEP	U32_MAX

/**
 * enum shca_hw_srq_resize_step - the steps of RESIZE_SRQ
 * @SHCA_SRQ_RESIZE_START: copy the posted WQEs, from the consumer index,
 *	into the new memory; sleeps, and holds the SRQ only a chunk at a
 *	time, so the driver goes on posting and the responder taking
 * @SHCA_SRQ_RESIZE_COPY: the same, from where an earlier step stopped
 * @SHCA_SRQ_RESIZE_SWITCH: copy what was posted since the last copy step,
 *	at most a chunk (BUSY if more), and move the SRQ to the new memory;
 *	never sleeps: the driver holds its posting lock across it
 */
enum shca_hw_srq_resize_step {
	SHCA_SRQ_RESIZE_START,
	SHCA_SRQ_RESIZE_COPY,
	SHCA_SRQ_RESIZE_SWITCH,
};

/**
 * struct shca_hw_srq_copied - how far RESIZE_SRQ's copy got
 * @next: the first ring index not copied
 * @bad: the last ring index copied that names a slot past the new depth
 *	(that WQE is not copied; the switch is refused if it is still posted)
 * @has_bad: @bad is set
 */
struct shca_hw_srq_copied {
	u32 next;
	u32 bad;
	bool has_bad;
};

/**
 * struct shca_hw_srq_resize - RESIZE_SRQ parameters
 * @mem: the new slots, index ring, doorbell record and depth, and the
 *	limit to arm with them (or SHCA_HW_SRQ_LIMIT_KEEP); its pdn, max_sge,
 *	xrcdn and cqn are unused
 * @step: which step
 * @copied: for COPY and SWITCH, what the step before returned
 *
 * The driver runs the steps of one resize of an SRQ at a time, and gives
 * each the same @mem: START, any number of COPY, then SWITCH, which
 * it repeats after another COPY while it is BUSY.  A failed step changes
 * nothing; the driver then frees the new memory.
 */
struct shca_hw_srq_resize {
	struct shca_hw_srq_create mem;
	enum shca_hw_srq_resize_step step;
	struct shca_hw_srq_copied copied;
};

/**
 * struct shca_hw_srq_query - QUERY_SRQ results
 * @limit: the armed limit, or 0
 * @pi: producer index
 * @ci: consumer index
 * @assoc: QPs attached
 */
struct shca_hw_srq_query {
	u32 limit;
	u32 pi;
	u32 ci;
	u32 assoc;
};

/**
 * enum shca_hw_mpt_type - what an MPT entry translates
 * @SHCA_MPT_DMA: kernel addresses, as they are
 * @SHCA_MPT_PBL: a page list; written by WRITE_MPT or by a REG_MR WQE
 * @SHCA_MPT_MW: a memory window (ALLOC_MW): a range of another entry,
 *	with rights of its own, that a BIND_MW WQE sets
 * @SHCA_MPT_DM: a range of one device memory allocation, zero-based:
 *	address 0 is its first byte; written by WRITE_MPT
 * @SHCA_MPT_ODP: an on-demand paging page list, the device's own, whose
 *	pages are absent until MAP_ODP makes them present; an access to an
 *	absent page raises a page fault to the driver (shca_hw_odp.c)
 */
enum shca_hw_mpt_type {
	SHCA_MPT_DMA,
	SHCA_MPT_PBL,
	SHCA_MPT_DM,
	SHCA_MPT_ODP,
	SHCA_MPT_MW = 16,
};

/**
 * enum shca_hw_mw_type - the kind of a memory window
 * @SHCA_MW_TYPE_1: bound to its protection domain; any BIND_MW of a QP of
 *	that domain rebinds it, and a zero-length one unbinds it; it cannot
 *	be invalidated by LOCAL_INV or SEND_WITH_INV
 * @SHCA_MW_TYPE_2: bound to the QP whose BIND_MW bound it, and usable only
 *	through that QP; LOCAL_INV and a peer's SEND_WITH_INV invalidate it
 *	(type 2B)
 */
enum shca_hw_mw_type {
	SHCA_MW_TYPE_1 = 1,
	SHCA_MW_TYPE_2 = 2,
};

/**
 * struct shca_hw_mw_alloc - ALLOC_MW parameters
 * @type: enum shca_hw_mw_type
 * @pdn: protection domain
 */
struct shca_hw_mw_alloc {
	u32 type;
	u32 pdn;
};

/*
 * ALLOC_MPT flags.  SHCA_MPT_F_FAST_REG: a PBL entry for fast registration,
 * the only kind a peer's SEND_WITH_INV may invalidate (IBTA: remote
 * invalidation is for fast-registration MRs and memory windows).
 */
#define SHCA_MPT_F_FAST_REG	BIT(0)
#define SHCA_MPT_F_ALL		SHCA_MPT_F_FAST_REG

/**
 * struct shca_hw_mpt_alloc - ALLOC_MPT parameters
 * @type: enum shca_hw_mpt_type
 * @pdn: protection domain
 * @max_pages: for PBL entries, the longest page list it will take; for
 *	ODP entries, the pages of the device's page list
 * @flags: SHCA_MPT_F_*
 */
struct shca_hw_mpt_alloc {
	u32 type;
	u32 pdn;
	u32 max_pages;
	u32 flags;
};

/**
 * struct shca_hw_mpt_write - WRITE_MPT parameters
 * @key: the entry, and its new key
 * @access: SHCA_ACCESS_*
 * @iova: first address, for PBL entries
 * @length: bytes, for PBL entries
 * @pbl: kernel address of the page list, for PBL entries
 * @npages: pages in the list
 * @page_shift: log2 of the page size
 * @dm_addr: for DM entries, the device memory address of the allocation,
 *	as ALLOC_DM returned it
 * @dm_offset: for DM entries, where in the allocation the entry's
 *	address 0 is; @iova must be 0 and @length fit the allocation
 */
struct shca_hw_mpt_write {
	u32 key;
	u32 access;
	u64 iova;
	u64 length;
	const u64 *pbl;
	u32 npages;
	u32 page_shift;
	u64 dm_addr;
	u64 dm_offset;
};

/**
 * struct shca_hw_dm_alloc - ALLOC_DM parameters
 * @length: bytes; rounded up to the allocation unit
 * @log_align: log2 of the alignment the range needs; the allocation unit
 *	is the least it gets
 */
struct shca_hw_dm_alloc {
	u64 length;
	u32 log_align;
};

/*
 * REREG_MPT: what changes.  SHCA_MPT_REREG_PD: the protection domain;
 * SHCA_MPT_REREG_ACCESS: the rights; SHCA_MPT_REREG_TRANSLATION: the
 * address, length and page list.
 */
#define SHCA_MPT_REREG_PD		BIT(0)
#define SHCA_MPT_REREG_ACCESS		BIT(1)
#define SHCA_MPT_REREG_TRANSLATION	BIT(2)
#define SHCA_MPT_REREG_ALL		(SHCA_MPT_REREG_PD | \
					 SHCA_MPT_REREG_ACCESS | \
					 SHCA_MPT_REREG_TRANSLATION)

/**
 * struct shca_hw_mpt_rereg - REREG_MPT parameters
 * @key: the entry's key, which stays
 * @flags: SHCA_MPT_REREG_*: which of the fields below apply
 * @pdn: the new protection domain
 * @access: the new SHCA_ACCESS_* rights
 * @iova: the new first address
 * @length: the new length in bytes
 * @pbl: kernel address of the new page list
 * @npages: pages in it
 * @page_shift: log2 of its page size
 */
struct shca_hw_mpt_rereg {
	u32 key;
	u32 flags;
	u32 pdn;
	u32 access;
	u64 iova;
	u64 length;
	const u64 *pbl;
	u32 npages;
	u32 page_shift;
};

/*
 * On-demand paging: what the device pages on demand, by transport and
 * operation (every access to memory goes through the same translation,
 * so every one of them may fault).
 */
#define SHCA_ODP_CAP_SEND	BIT(0)
#define SHCA_ODP_CAP_RECV	BIT(1)
#define SHCA_ODP_CAP_WRITE	BIT(2)
#define SHCA_ODP_CAP_READ	BIT(3)
#define SHCA_ODP_CAP_ATOMIC	BIT(4)
#define SHCA_ODP_CAP_SRQ_RECV	BIT(5)
#define SHCA_ODP_RC_CAPS	(SHCA_ODP_CAP_SEND | SHCA_ODP_CAP_RECV | \
				 SHCA_ODP_CAP_WRITE | SHCA_ODP_CAP_READ | \
				 SHCA_ODP_CAP_ATOMIC | SHCA_ODP_CAP_SRQ_RECV)
#define SHCA_ODP_UD_CAPS	(SHCA_ODP_CAP_SEND | SHCA_ODP_CAP_RECV | \
				 SHCA_ODP_CAP_SRQ_RECV)

/*
 * MAP_ODP page entries: the kernel address of the page (aligned to the
 * entry's page size) with the rights granted in the low bits, or 0 to
 * leave a page as it is.
 */
#define SHCA_ODP_PAGE_READ	BIT_ULL(0)
#define SHCA_ODP_PAGE_WRITE	BIT_ULL(1)
#define SHCA_ODP_PAGE_RIGHTS	(SHCA_ODP_PAGE_READ | SHCA_ODP_PAGE_WRITE)

/**
 * struct shca_hw_odp_map - MAP_ODP parameters
 * @key: the ODP entry's key
 * @first: the first page, counted from the page that holds the entry's
 *	first address
 * @npages: pages in @pages
 * @pages: one entry per page, SHCA_ODP_PAGE_* rights in the low bits
 */
struct shca_hw_odp_map {
	u32 key;
	u32 first;
	u32 npages;
	const u64 *pages;
};

/**
 * struct shca_hw_odp_range - INVALIDATE_ODP parameters
 * @key: the ODP entry's key
 * @first: the first page, as for MAP_ODP
 * @npages: pages; the range is cut to the entry's page list
 */
struct shca_hw_odp_range {
	u32 key;
	u32 first;
	u32 npages;
};

/**
 * struct shca_hw_odp_fault - a page fault the device raises to the driver
 * @key: the ODP entry's key
 * @first: the first absent page the access needs, as for MAP_ODP
 * @npages: pages from there to the end of the access
 * @write: the access writes, so the pages must be writable
 */
struct shca_hw_odp_fault {
	u32 key;
	u32 first;
	u32 npages;
	bool write;
};

/**
 * enum shca_hw_counter - what the device counts
 * @SHCA_CNT_DOORBELLS: doorbells rung
 * @SHCA_CNT_DOORBELL_RUNS: send doorbells whose caller ran the QP's turn
 * @SHCA_CNT_WQES: send WQEs executed
 * @SHCA_CNT_RECV_WQES: receive WQEs consumed
 * @SHCA_CNT_CQES: CQEs written
 * @SHCA_CNT_EQES: EQEs written
 * @SHCA_CNT_INTERRUPTS: interrupts raised
 * @SHCA_CNT_TX_BYTES: payload bytes sent
 * @SHCA_CNT_RX_BYTES: payload bytes received
 * @SHCA_CNT_FLUSHED: WQEs flushed
 * @SHCA_CNT_LOC_PROT_ERR: local protection errors
 * @SHCA_CNT_REM_ACCESS_ERR: remote access errors
 * @SHCA_CNT_LEN_ERR: length errors
 * @SHCA_CNT_RNR_NAK: receiver-not-ready NAKs
 * @SHCA_CNT_RNR_EXC: RNR retries exhausted
 * @SHCA_CNT_RETRY_EXC: transport retries exhausted
 * @SHCA_CNT_DROPPED: unreliable packets dropped
 * @SHCA_CNT_CQ_OVERFLOW: CQ overflows
 * @SHCA_CNT_EQ_OVERFLOW: EQ overflows
 * @SHCA_CNT_MCAST_TX: UD sends to a multicast group
 * @SHCA_CNT_MCAST_RX: multicast copies received into a receive WQE
 * @SHCA_CNT_ODP_FAULTS: page faults raised on ODP entries
 * @SHCA_CNT_ODP_INVALIDATIONS: INVALIDATE_ODP commands run
 * @SHCA_CNT_DB_RECHECKS: send WQEs a stopping turn found when it looked at
 *	the producer index once more, after clearing sq_running: posted by
 *	a driver that saw the turn running and rang no doorbell
 * @SHCA_CNT_CQ_DBREC_ARMS: CQ arm requests the device took from a doorbell
 *	record's arm word, with no doorbell
 * @SHCA_CNT_ROUTE_LOOKUPS: routes the requester looked up in the fabric:
 *	a QP's first message to a destination, or its first after the
 *	fabric changed; its other messages take the QP's cached route
 * @SHCA_CNT_RX_REJECTED: messages a connected QP (RC, UC, XRC target)
 *	dropped because they did not come from its peer (the source GID
 *	and QPN of its path) or, for RC and XRC, not with the PSN it expects
 * @SHCA_CNT_BACKSTOP_ARMS: send doorbells that armed a lazy QP's backstop
 * @SHCA_CNT_BACKSTOP_KICKS: turns the backstop queued for send WQEs a lazy
 *	driver left unrung
 * @SHCA_CNT_POLL_ADOPTS: QPs a turn handed to an adaptive poller, with
 *	sq_running left set, when it found their send queue empty
 * @SHCA_CNT_POLL_TURNS: turns a poller ran for WQEs posted with no
 *	doorbell while it held the QP
 * @SHCA_CNT_DESTROY_SENDS: turns a destroy ran to send the datagrams a UD
 *	QP had posted and no turn had sent yet
 * @SHCA_CNT_NUM: number of counters
 */
enum shca_hw_counter {
	SHCA_CNT_DOORBELLS,
	SHCA_CNT_DOORBELL_RUNS,
	SHCA_CNT_WQES,
	SHCA_CNT_RECV_WQES,
	SHCA_CNT_CQES,
	SHCA_CNT_EQES,
	SHCA_CNT_INTERRUPTS,
	SHCA_CNT_TX_BYTES,
	SHCA_CNT_RX_BYTES,
	SHCA_CNT_FLUSHED,
	SHCA_CNT_LOC_PROT_ERR,
	SHCA_CNT_REM_ACCESS_ERR,
	SHCA_CNT_LEN_ERR,
	SHCA_CNT_RNR_NAK,
	SHCA_CNT_RNR_EXC,
	SHCA_CNT_RETRY_EXC,
	SHCA_CNT_DROPPED,
	SHCA_CNT_CQ_OVERFLOW,
	SHCA_CNT_EQ_OVERFLOW,
	SHCA_CNT_MCAST_TX,
	SHCA_CNT_MCAST_RX,
	SHCA_CNT_ODP_FAULTS,
	SHCA_CNT_ODP_INVALIDATIONS,
	SHCA_CNT_DB_RECHECKS,
	SHCA_CNT_CQ_DBREC_ARMS,
	SHCA_CNT_ROUTE_LOOKUPS,
	SHCA_CNT_RX_REJECTED,
	SHCA_CNT_BACKSTOP_ARMS,
	SHCA_CNT_BACKSTOP_KICKS,
	SHCA_CNT_POLL_ADOPTS,
	SHCA_CNT_POLL_TURNS,
	SHCA_CNT_DESTROY_SENDS,
	SHCA_CNT_NUM,
};

/**
 * struct shca_hw_cmd - one device command with its parameters and result
 * @opcode: which command
 * @port: the port it addresses, from 1, where it addresses one
 * @index: the table index or object number it addresses, where it
 *	addresses one (the QPN, for ATTACH_MCAST and DETACH_MCAST)
 * @mask: for MODIFY_QP, which attributes to write (SHCA_QP_ATTR_*)
 * @in: parameters, by opcode
 * @in.port: for SET_PORT
 * @in.gid: for SET_GID; an entry with @valid clear empties the slot
 * @in.pdn: for DEALLOC_PD
 * @in.xrcdn: for DEALLOC_XRCD
 * @in.eq: for CREATE_EQ
 * @in.cq: for CREATE_CQ and RESIZE_CQ
 * @in.moder: for MODIFY_CQ
 * @in.moder.count: CQEs per event
 * @in.moder.period: microseconds an event may wait
 * @in.srq: for CREATE_SRQ
 * @in.srq_resize: for RESIZE_SRQ
 * @in.srq_limit: for MODIFY_SRQ
 * @in.qp: for CREATE_QP
 * @in.qp_attr: for MODIFY_QP
 * @in.mpt_alloc: for ALLOC_MPT
 * @in.mpt: for WRITE_MPT
 * @in.mpt_rereg: for REREG_MPT
 * @in.mw_alloc: for ALLOC_MW
 * @in.dm: for ALLOC_DM
 * @in.dm_addr: for FREE_DM: the allocation's address
 * @in.odp_map: for MAP_ODP
 * @in.odp_range: for INVALIDATE_ODP
 * @in.mgid: for ATTACH_MCAST and DETACH_MCAST: the group's GID, an IPv6
 *	multicast address (ff00::/8) or an IPv4-mapped one (224.0.0.0/4)
 * @out: results, by opcode
 * @out.caps: for QUERY_CAPS
 * @out.port: for QUERY_PORT
 * @out.gid: for QUERY_GID
 * @out.pkey: for QUERY_PKEY
 * @out.pdn: for ALLOC_PD
 * @out.num: the new object's number, for CREATE_CQ, CREATE_SRQ,
 *	CREATE_QP and ALLOC_XRCD, or the new key, for ALLOC_MPT and ALLOC_MW
 * @out.id: the new object's number and generation, for CREATE_CQ,
 *	CREATE_SRQ and CREATE_QP (@out.id.num is @out.num)
 * @out.qp_state: for MODIFY_QP, the QP's state once the command ran: the
 *	new state if it succeeded, the state it stayed in if it was refused
 *	for a transition or a SHCA_QP_ATTR_CUR_STATE the QP is not in
 * @out.cq: for QUERY_CQ
 * @out.srq: for QUERY_SRQ
 * @out.srq_copied: for RESIZE_SRQ's START and COPY steps
 * @out.qp: for QUERY_QP
 * @out.counters: for QUERY_COUNTERS
 * @out.dm_addr: for ALLOC_DM: the new allocation's device memory address
 */
struct shca_hw_cmd {
	enum shca_hw_opcode opcode;
	u32 port;
	u32 index;
	u32 mask;
	union {
		struct shca_hw_port_attr port;
		struct shca_hw_gid_entry gid;
		u32 pdn;
		u32 xrcdn;
		struct {
			struct shca_hw_eqe *ring;
			u32 log_depth;
		} eq;
		struct shca_hw_cq_create cq;
		struct {
			u16 count;
			u16 period;
		} moder;
		struct shca_hw_srq_create srq;
		struct shca_hw_srq_resize srq_resize;
		u32 srq_limit;
		struct shca_hw_qp_create qp;
		struct shca_hw_qp_attr qp_attr;
		struct shca_hw_mpt_alloc mpt_alloc;
		struct shca_hw_mpt_write mpt;
		struct shca_hw_mpt_rereg mpt_rereg;
		struct shca_hw_dm_alloc dm;
		u64 dm_addr;
		struct shca_hw_mw_alloc mw_alloc;
		struct shca_hw_odp_map odp_map;
		struct shca_hw_odp_range odp_range;
		u8 mgid[SHCA_HW_GID_LEN];
	} in;
	union {
		struct shca_hw_caps caps;
		struct shca_hw_port_attr port;
		struct shca_hw_gid_entry gid;
		u16 pkey;
		u32 pdn;
		u32 num;
		struct shca_hw_obj_id id;
		struct shca_hw_cq_query cq;
		struct shca_hw_srq_query srq;
		struct shca_hw_srq_copied srq_copied;
		struct shca_hw_qp_query qp;
		u32 qp_state;
		u64 counters[SHCA_CNT_NUM];
		u64 dm_addr;
	} out;
};

#endif /* SHCA_HW_DEFS_H */
