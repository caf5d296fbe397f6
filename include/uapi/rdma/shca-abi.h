/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * shca: the user ABI.
 *
 * Two parts.  The verbs driver data that travels with the uverbs commands
 * (struct shca_*_cmd in, struct shca_*_resp out), and the formats of the
 * rings and doorbell records, which the device and a process share: the
 * kernel maps a user QP's, CQ's and SRQ's rings into the process, the
 * provider library (libshca) writes WQEs and reads CQEs in them itself,
 * and the device reads and writes them as it does a kernel consumer's.
 *
 * Rules of the driver data, so that either side can grow:
 *  - A command may be shorter than its struct, down to the end of the last
 *    field the kernel needs (for the create commands, comp_mask); fields
 *    not passed read as zero.  Shorter than that: EINVAL.
 *  - A command may be longer than the kernel's struct if every byte beyond
 *    is zero; else EOPNOTSUPP, so an older kernel refuses a newer
 *    provider's request it does not know instead of ignoring it.
 *  - Reserved fields must be zero, and comp_mask may hold only the bits
 *    the kernel knows (none so far); else EOPNOTSUPP.
 *  - A response is cut to the provider's buffer if that is shorter; if it
 *    is longer, the bytes past the response are zeroed.
 *  - Fields are only ever added at the end of a struct or in place of a
 *    reserved field, and one whose zero is a meaningful value comes with
 *    a comp_mask bit that says it is there.
 * Commands that define no driver data (PD, MR, AH, modify) take none: any
 * input or output buffer is EINVAL.
 *
 * Rings have a power-of-two number of fixed-size entries and free-running
 * 32-bit producer and consumer indices; entry i lives in slot
 * i & (depth - 1).  Each object's memory is one mapping, at the offset its
 * create response gives, valid only on the file descriptor (the uverbs
 * context) that created the object; its doorbell record has a page of its
 * own at the end.
 */
#ifndef SHCA_ABI_USER_H
#define SHCA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

#define SHCA_UVERBS_ABI_VERSION		1

/*
 * Device memory.  The generic DM_ALLOC method of UVERBS_OBJECT_DM carries
 * one driver attribute, the offset to mmap() the allocation at on the
 * context's fd; the mapping is the allocation's length rounded up to
 * pages, and the allocation starts at its first byte.  The driver method
 * SHCA_IB_METHOD_DM_QUERY returns the same offset and the length of an
 * existing DM, for an imported context (ibv_import_dm()).
 */
/* The first attribute and method id of the driver's namespace */
#define SHCA_IB_ID_DRIVER_NS		(1U << UVERBS_ID_NS_SHIFT)

/* Driver attributes of UVERBS_METHOD_DM_ALLOC */
enum shca_ib_dm_alloc_attrs {
	SHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = SHCA_IB_ID_DRIVER_NS,
};

/* Driver methods of UVERBS_OBJECT_DM */
enum shca_ib_dm_methods {
	SHCA_IB_METHOD_DM_QUERY = SHCA_IB_ID_DRIVER_NS,
};

/* Attributes of SHCA_IB_METHOD_DM_QUERY */
enum shca_ib_dm_query_attrs {
	SHCA_IB_ATTR_QUERY_DM_REQ_HANDLE = SHCA_IB_ID_DRIVER_NS,
	SHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
	SHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
};

/*
 * The driver's additions to the ioctl methods, for a process that imports
 * a context (ibv_import_device()) or a PD (ibv_import_pd()) another one
 * opened on the same file:
 *  - UVERBS_METHOD_QUERY_CONTEXT answers, in SHCA_ATTR_QUERY_CONTEXT_RESP,
 *    the struct shca_alloc_ucontext_resp the context was opened with;
 *  - SHCA_METHOD_PD_QUERY on a PD handle of the file answers the PD's
 *    number in SHCA_ATTR_QUERY_PD_RESP_PDN (a __u32); a handle that names
 *    no PD of the file is refused.
 */
enum shca_query_context_attrs {
	SHCA_ATTR_QUERY_CONTEXT_RESP = SHCA_IB_ID_DRIVER_NS,
};

enum shca_pd_methods {
	SHCA_METHOD_PD_QUERY = SHCA_IB_ID_DRIVER_NS,
};

enum shca_query_pd_attrs {
	SHCA_ATTR_QUERY_PD_HANDLE = SHCA_IB_ID_DRIVER_NS,
	SHCA_ATTR_QUERY_PD_RESP_PDN,
};

/**
 * struct shca_alloc_ucontext_resp - what a new context learns of the device
 * @sq_wqe_size: bytes per send WQE (struct shca_hw_send_wqe)
 * @rq_wqe_size: bytes per receive WQE (struct shca_hw_recv_wqe)
 * @cqe_size: bytes per CQE (struct shca_hw_cqe)
 * @max_inline: inline bytes a send WQE can carry
 * @max_sge: scatter/gather entries a WQE can carry
 * @reserved: zero
 */
struct shca_alloc_ucontext_resp {
	__u32 sq_wqe_size;
	__u32 rq_wqe_size;
	__u32 cqe_size;
	__u32 max_inline;
	__u32 max_sge;
	__u32 reserved;
};

/**
 * struct shca_create_cq_cmd - driver data of CREATE_CQ
 * @comp_mask: which optional fields follow; none are defined, so zero.
 *	The kernel takes a command as short as this field.
 * @reserved: zero
 */
struct shca_create_cq_cmd {
	__u32 comp_mask;
	__u32 reserved;
};

/**
 * struct shca_create_cq_resp - where a new CQ's ring is
 * @mmap_offset: offset to mmap() the CQ's memory at, on the context's fd
 * @mmap_len: bytes of that mapping: the ring, then the doorbell record
 * @dbrec_offset: where struct shca_hw_cq_dbrec is, from the mapping's start
 * @cqn: the CQ number
 * @log_depth: log2 of the ring's number of CQEs
 * @flags: SHCA_CQ_RESP_F_*; a kernel that does not write it leaves zero
 * @reserved: zero
 */
struct shca_create_cq_resp {
	__aligned_u64 mmap_offset;
	__u32 mmap_len;
	__u32 dbrec_offset;
	__u32 cqn;
	__u32 log_depth;
	__u32 flags;
	__u32 reserved;
};

/* The device reads the arm request from the doorbell record's arm word. */
#define SHCA_CQ_RESP_F_ARM_DBREC	(1U << 0)

/**
 * struct shca_resize_cq_cmd - driver data of RESIZE_CQ
 * @comp_mask: zero, as for struct shca_create_cq_cmd
 * @reserved: zero
 *
 * The provider holds its CQ's poll lock across the command and stores its
 * consumer index in the doorbell record first: the device moves the CQEs
 * from that index to the producer's into the new ring.
 */
struct shca_resize_cq_cmd {
	__u32 comp_mask;
	__u32 reserved;
};

/**
 * struct shca_resize_cq_resp - where a resized CQ's new ring is
 * @mmap_offset: offset to mmap() the new ring and doorbell record at
 * @mmap_len: bytes of that mapping
 * @dbrec_offset: where the new struct shca_hw_cq_dbrec is
 * @log_depth: log2 of the new ring's number of CQEs
 * @reserved: zero
 *
 * The unpolled CQEs are at the start of the new ring, in order, and the
 * consumer index starts over at zero.  The old mapping's offset no longer
 * maps; the provider unmaps the old ring.
 */
struct shca_resize_cq_resp {
	__aligned_u64 mmap_offset;
	__u32 mmap_len;
	__u32 dbrec_offset;
	__u32 log_depth;
	__u32 reserved;
};

/**
 * struct shca_create_qp_cmd - driver data of CREATE_QP
 * @comp_mask: zero, as for struct shca_create_cq_cmd
 * @reserved: zero
 */
struct shca_create_qp_cmd {
	__u32 comp_mask;
	__u32 reserved;
};

/**
 * struct shca_create_qp_resp - where a new QP's rings are
 * @mmap_offset: offset to mmap() the QP's memory at
 * @mmap_len: bytes of that mapping: send ring, receive ring (unless the
 *	QP takes receives from an SRQ), doorbell record
 * @rq_offset: where the receive ring starts; the send ring starts at 0
 * @dbrec_offset: where struct shca_hw_qp_dbrec is
 * @sq_log_depth: log2 of the send ring's number of WQEs
 * @rq_log_depth: log2 of the receive ring's, or 0 with an SRQ
 * @max_send_sge: SGEs a send WQE may use
 * @max_recv_sge: SGEs a receive WQE may use
 * @max_inline: inline bytes a send WQE may carry
 * @flags: SHCA_QP_RESP_F_*; a kernel that does not write it leaves zero
 * @reserved2: zero
 */
struct shca_create_qp_resp {
	__aligned_u64 mmap_offset;
	__u32 mmap_len;
	__u32 rq_offset;
	__u32 dbrec_offset;
	__u32 sq_log_depth;
	__u32 rq_log_depth;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline;
	__u32 flags;
	__u32 reserved2;
};

/*
 * The device serves lazy send doorbells: it reads the doorbell record's
 * lazy word, and writes its backstop word (struct shca_hw_qp_dbrec).
 */
#define SHCA_QP_RESP_F_LAZY_DB		(1U << 0)

/**
 * struct shca_create_srq_cmd - driver data of CREATE_SRQ
 * @comp_mask: zero, as for struct shca_create_cq_cmd
 * @reserved: zero
 */
struct shca_create_srq_cmd {
	__u32 comp_mask;
	__u32 reserved;
};

/**
 * struct shca_create_srq_resp - where a new SRQ's rings are
 * @mmap_offset: offset to mmap() the SRQ's memory at
 * @mmap_len: bytes of that mapping: WQE slots, index ring, doorbell record
 * @index_offset: where the index ring (__u32 slot numbers) starts; the
 *	slots (struct shca_hw_recv_wqe) start at 0
 * @dbrec_offset: where struct shca_hw_srq_dbrec is
 * @srqn: the SRQ number
 * @log_depth: log2 of the number of slots, and of index ring entries
 * @max_sge: SGEs a WQE may use
 * @reserved: zero
 * @reserved2: zero
 */
struct shca_create_srq_resp {
	__aligned_u64 mmap_offset;
	__u32 mmap_len;
	__u32 index_offset;
	__u32 dbrec_offset;
	__u32 srqn;
	__u32 log_depth;
	__u32 max_sge;
	__u32 reserved;
	__u32 reserved2;
};

/**
 * struct shca_modify_srq_cmd - driver data of MODIFY_SRQ
 * @resp_addr: for a resize (IBV_SRQ_MAX_WR), the address of a
 *	struct shca_modify_srq_resp in the process, which the kernel fills
 *	(the command has no response of its own); otherwise unused
 * @comp_mask: zero, as for struct shca_create_cq_cmd
 * @reserved: zero
 *
 * Optional for a limit alone; a resize of a process's SRQ needs it.  The
 * provider holds its SRQ's posting lock across the command and checks its
 * own slots first: the kernel moves the posted WQEs, slot numbers kept, so
 * a shrink needs every slot in use (posted, or completed and not yet
 * polled) below the new depth.
 */
struct shca_modify_srq_cmd {
	__aligned_u64 resp_addr;
	__u32 comp_mask;
	__u32 reserved;
};

/**
 * struct shca_modify_srq_resp - where a resized SRQ's new memory is
 * @mmap_offset: offset to mmap() the new slots, index ring and doorbell
 *	record at
 * @mmap_len: bytes of that mapping
 * @index_offset: where the index ring starts
 * @dbrec_offset: where the new struct shca_hw_srq_dbrec is; its producer
 *	index is the old one
 * @log_depth: log2 of the new number of slots
 * @reserved: zero
 * @reserved2: zero
 *
 * Written before the SRQ moves: the provider uses it only if the command
 * succeeds.  Posted WQEs are in the same slots and at the same index ring
 * indices of the new memory; the old mapping's offset no longer maps.
 */
struct shca_modify_srq_resp {
	__aligned_u64 mmap_offset;
	__u32 mmap_len;
	__u32 index_offset;
	__u32 dbrec_offset;
	__u32 log_depth;
	__u32 reserved;
	__u32 reserved2;
};

/*
 * The rings.  A send WQE is posted by writing it at the send ring's
 * producer index, storing the new index in the doorbell record (after the
 * WQE, with release ordering) and ringing the doorbell: a POST_SEND
 * command with no work requests.  A receive WQE needs no doorbell: the
 * device reads the receive producer index when a message arrives.  SRQ
 * WQEs go into a free slot, and the slot's number into the index ring.
 * A CQE is valid when its owner bit matches the consumer's pass over the
 * ring; the consumer frees CQEs by storing its index in the CQ's doorbell
 * record.  The device checks every index and field it reads: a bad one
 * fails the work request or the QP, never more.
 */
#define SHCA_HW_GID_LEN			16
#define SHCA_HW_MAX_SGE			16
#define SHCA_HW_MAX_INLINE		256
#define SHCA_HW_GRH_LEN			40
#define SHCA_HW_QKEY_PRIVILEGED		0x80000000U
/**
 * struct shca_hw_sge - one scatter/gather element
 * @addr: address, in the MR's address space
 * @length: bytes
 * @lkey: the local key of the MR that covers it
 */
struct shca_hw_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/**
 * enum shca_hw_wqe_opcode - what a send WQE asks for
 * @SHCA_WQE_SEND: send
 * @SHCA_WQE_SEND_IMM: send with immediate data
 * @SHCA_WQE_SEND_INV: send and invalidate a remote key
 * @SHCA_WQE_RDMA_WRITE: RDMA write
 * @SHCA_WQE_RDMA_WRITE_IMM: RDMA write with immediate data
 * @SHCA_WQE_RDMA_READ: RDMA read
 * @SHCA_WQE_ATOMIC_CS: 64-bit compare and swap
 * @SHCA_WQE_ATOMIC_FA: 64-bit fetch and add
 * @SHCA_WQE_LOCAL_INV: invalidate a local key
 * @SHCA_WQE_REG_MR: fast-register a memory region
 * @SHCA_WQE_FLUSH: RDMA FLUSH: make earlier writes to a remote region
 *	global or persistent (@flush)
 * @SHCA_WQE_ATOMIC_WRITE: write 8 bytes (@rdma.swap) to a remote
 *	8-byte aligned address as one access
 * @SHCA_WQE_BIND_MW: bind a memory window to a range of an MR (@bind);
 *	for type 1 windows too, which the provider binds with this WQE
 * @SHCA_WQE_NUM_OPCODES: number of opcodes
 */
enum shca_hw_wqe_opcode {
	SHCA_WQE_SEND,
	SHCA_WQE_SEND_IMM,
	SHCA_WQE_SEND_INV,
	SHCA_WQE_RDMA_WRITE,
	SHCA_WQE_RDMA_WRITE_IMM,
	SHCA_WQE_RDMA_READ,
	SHCA_WQE_ATOMIC_CS,
	SHCA_WQE_ATOMIC_FA,
	SHCA_WQE_LOCAL_INV,
	SHCA_WQE_REG_MR,
	SHCA_WQE_FLUSH,
	SHCA_WQE_ATOMIC_WRITE,
	SHCA_WQE_BIND_MW,
	SHCA_WQE_NUM_OPCODES,
};

#define SHCA_WQE_F_SIGNALED	(1U << 0)
#define SHCA_WQE_F_SOLICITED	(1U << 1)
#define SHCA_WQE_F_FENCE	(1U << 2)
#define SHCA_WQE_F_INLINE	(1U << 3)

/* A window's rights (@bind.access), the device's SHCA_ACCESS_* bits */
#define SHCA_BIND_LOCAL_WRITE		(1U << 0)
#define SHCA_BIND_REMOTE_WRITE		(1U << 1)
#define SHCA_BIND_REMOTE_READ		(1U << 2)
#define SHCA_BIND_REMOTE_ATOMIC		(1U << 3)
#define SHCA_BIND_FLUSH_GLOBAL		(1U << 4)
#define SHCA_BIND_FLUSH_PERSISTENT	(1U << 5)
/*
 * A type 2 window addressed from 0, not from its bind's address; not a
 * right, so not one of the SHCA_ACCESS_* bits (bit 6 is MW bind)
 */
#define SHCA_BIND_ZERO_BASED		(1U << 7)

/* A FLUSH's placement type (@flush.type): either or both */
#define SHCA_FLUSH_GLOBAL	(1U << 0)
#define SHCA_FLUSH_PERSISTENT	(1U << 1)
/* A FLUSH's selectivity level (@flush.level) */
#define SHCA_FLUSH_RANGE	0
#define SHCA_FLUSH_MR		1

/**
 * struct shca_hw_av - an address vector: where a packet goes
 * @dgid: destination GID
 * @flow_label: IPv6 flow label
 * @sgid_index: source GID table entry
 * @hop_limit: hop limit or TTL
 * @traffic_class: traffic class
 * @sl: service level
 */
struct shca_hw_av {
	__u8 dgid[SHCA_HW_GID_LEN];
	__u32 flow_label;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 sl;
};

/**
 * struct shca_hw_send_wqe - one send queue entry
 * @opcode: enum shca_hw_wqe_opcode
 * @flags: SHCA_WQE_F_*
 * @num_sge: entries used in @sge, unless inline
 * @rsvd: zero
 * @imm_inv: immediate data as the consumer gave it, or the key to invalidate
 * @inline_len: bytes in @inline_data
 * @xrc_srqn: for an XRC initiator QP, the remote XRC SRQ the message is
 *	for, carried in the packet's XRC extended header; zero otherwise
 * @rdma: RDMA and atomic operations
 * @rdma.remote_addr: target address, in the remote MR's address space
 * @rdma.rkey: the remote key
 * @rdma.rsvd: zero
 * @rdma.compare_add: compare value, or the addend
 * @rdma.swap: swap value, or the 8 bytes an atomic write stores, in
 *	memory order
 * @flush: RDMA FLUSH; no data, so no SGEs
 * @flush.remote_addr: first address, in the remote MR's address space
 * @flush.rkey: the remote key
 * @flush.type: SHCA_FLUSH_GLOBAL and/or SHCA_FLUSH_PERSISTENT
 * @flush.level: SHCA_FLUSH_RANGE, or SHCA_FLUSH_MR: the key's whole
 *	region, @flush.remote_addr and @flush.length unused
 * @flush.rsvd: zero
 * @flush.length: bytes, for SHCA_FLUSH_RANGE
 * @ud: UD and GSI sends
 * @ud.av: the destination
 * @ud.remote_qpn: destination QP
 * @ud.remote_qkey: Q_Key; one with the high bit set means the QP's own
 * @reg: fast registration
 * @reg.iova: first address of the region
 * @reg.length: bytes
 * @reg.pbl: kernel address of the page list (__u64 per page); REG_MR is
 *	for kernel QPs only
 * @reg.key: the key to register; its index names the MPT entry
 * @reg.access: SHCA_ACCESS_*
 * @reg.npages: pages in the list
 * @reg.page_shift: log2 of the page size
 * @bind: a memory window bind; no data, so no SGEs
 * @bind.addr: the window's first address, in the MR's address space
 * @bind.length: the window's bytes; zero unbinds a type 1 window
 * @bind.mw_key: names the window: its current key, or for a type 2
 *	window not bound, any key of its index (a consumer that chose the
 *	key of the last bind need not tell the library)
 * @bind.new_key: its key once bound: the same index (the upper 24 bits),
 *	the variant byte (the lower 8) the consumer's choice
 * @bind.mr_lkey: the MR the window is a range of; it needs
 *	SHCA_ACCESS_MW_BIND, and SHCA_ACCESS_LOCAL_WRITE for a window with
 *	remote write or atomic rights
 * @bind.access: the window's rights, SHCA_BIND_*: remote read, write,
 *	atomic and FLUSH; local write is accepted and ignored; a type 2
 *	window may be zero-based
 * @sge: scatter/gather list
 * @inline_data: the payload itself
 */
struct shca_hw_send_wqe {
	__u8 opcode;
	__u8 flags;
	__u8 num_sge;
	__u8 rsvd;
	__u32 imm_inv;
	__u32 inline_len;
	__u32 xrc_srqn;
	union {
		struct {
			__u64 remote_addr;
			__u32 rkey;
			__u32 rsvd;
			__u64 compare_add;
			__u64 swap;
		} rdma;
		struct {
			__u64 remote_addr;
			__u32 rkey;
			__u8 type;
			__u8 level;
			__u16 rsvd;
			__u64 length;
		} flush;
		struct {
			struct shca_hw_av av;
			__u32 remote_qpn;
			__u32 remote_qkey;
		} ud;
		struct {
			__u64 iova;
			__u64 length;
			__u64 pbl;
			__u32 key;
			__u32 access;
			__u32 npages;
			__u32 page_shift;
		} reg;
		struct {
			__u64 addr;
			__u64 length;
			__u32 mw_key;
			__u32 new_key;
			__u32 mr_lkey;
			__u32 access;
		} bind;
	};
	union {
		struct shca_hw_sge sge[SHCA_HW_MAX_SGE];
		__u8 inline_data[SHCA_HW_MAX_INLINE];
	};
};

/**
 * struct shca_hw_recv_wqe - one receive queue or SRQ entry
 * @num_sge: entries used in @sge
 * @rsvd: zero
 * @sge: scatter list
 */
struct shca_hw_recv_wqe {
	__u32 num_sge;
	__u32 rsvd[3];
	struct shca_hw_sge sge[SHCA_HW_MAX_SGE];
};

/**
 * enum shca_hw_cqe_opcode - what a CQE completes
 * @SHCA_CQE_SEND: a send
 * @SHCA_CQE_RDMA_WRITE: an RDMA write
 * @SHCA_CQE_RDMA_READ: an RDMA read
 * @SHCA_CQE_ATOMIC_CS: a compare and swap
 * @SHCA_CQE_ATOMIC_FA: a fetch and add
 * @SHCA_CQE_LOCAL_INV: a local invalidation
 * @SHCA_CQE_REG_MR: a fast registration
 * @SHCA_CQE_RECV: a received send
 * @SHCA_CQE_RECV_RDMA_IMM: a received RDMA write with immediate
 * @SHCA_CQE_FLUSH: an RDMA FLUSH
 * @SHCA_CQE_ATOMIC_WRITE: an atomic write
 * @SHCA_CQE_BIND_MW: a memory window bind
 */
enum shca_hw_cqe_opcode {
	SHCA_CQE_SEND,
	SHCA_CQE_RDMA_WRITE,
	SHCA_CQE_RDMA_READ,
	SHCA_CQE_ATOMIC_CS,
	SHCA_CQE_ATOMIC_FA,
	SHCA_CQE_LOCAL_INV,
	SHCA_CQE_REG_MR,
	SHCA_CQE_RECV,
	SHCA_CQE_RECV_RDMA_IMM,
	SHCA_CQE_FLUSH,
	SHCA_CQE_ATOMIC_WRITE,
	SHCA_CQE_BIND_MW,
};

/**
 * enum shca_hw_cqe_status - how a work request completed
 * @SHCA_CQE_OK: success
 * @SHCA_CQE_LOC_LEN_ERR: a local buffer was too small
 * @SHCA_CQE_LOC_QP_OP_ERR: the WQE was malformed for its queue
 * @SHCA_CQE_LOC_PROT_ERR: a local key or access check failed
 * @SHCA_CQE_WR_FLUSH_ERR: flushed: the QP was in error
 * @SHCA_CQE_MW_BIND_ERR: a fast registration or a window bind failed
 * @SHCA_CQE_REM_INV_REQ_ERR: the responder found the request invalid
 * @SHCA_CQE_REM_ACCESS_ERR: a remote key or access check failed
 * @SHCA_CQE_REM_OP_ERR: the responder could not complete the request
 * @SHCA_CQE_RETRY_EXC_ERR: transport retries exhausted
 * @SHCA_CQE_RNR_RETRY_EXC_ERR: receiver-not-ready retries exhausted
 * @SHCA_CQE_NUM_STATUS: number of statuses
 */
enum shca_hw_cqe_status {
	SHCA_CQE_OK,
	SHCA_CQE_LOC_LEN_ERR,
	SHCA_CQE_LOC_QP_OP_ERR,
	SHCA_CQE_LOC_PROT_ERR,
	SHCA_CQE_WR_FLUSH_ERR,
	SHCA_CQE_MW_BIND_ERR,
	SHCA_CQE_REM_INV_REQ_ERR,
	SHCA_CQE_REM_ACCESS_ERR,
	SHCA_CQE_REM_OP_ERR,
	SHCA_CQE_RETRY_EXC_ERR,
	SHCA_CQE_RNR_RETRY_EXC_ERR,
	SHCA_CQE_NUM_STATUS,
};

#define SHCA_CQE_F_IMM		(1U << 0)	/* @imm_inv holds immediate data */
#define SHCA_CQE_F_INV		(1U << 1)	/* @imm_inv holds the invalidated key */
#define SHCA_CQE_F_GRH		(1U << 2)	/* a 40-byte header leads the data */
#define SHCA_CQE_F_SRQ		(1U << 3)	/* @wqe_idx names an SRQ slot */
/*
 * An XRC receive: @qpn is the XRC target QP, @src_qp the initiator, and
 * the XRC SRQ whose slot @wqe_idx names is in @net_type (its low 8 bits)
 * and @sl (its high 8 bits); SRQ numbers are below 65536.
 */
#define SHCA_CQE_F_XRC		(1U << 4)

/**
 * enum shca_hw_net_type - the network header a UD receive carries
 * @SHCA_NET_ROCE_V1: RoCE v1: an IB GRH
 * @SHCA_NET_IPV4: RoCE v2 over IPv4: an IPv4 header in the last 20 bytes
 * @SHCA_NET_IPV6: RoCE v2 over IPv6: an IPv6 header
 */
enum shca_hw_net_type {
	SHCA_NET_ROCE_V1,
	SHCA_NET_IPV4,
	SHCA_NET_IPV6,
};

/**
 * struct shca_hw_cqe - one completion queue entry, 32 bytes
 * @qpn: the QP the completion belongs to
 * @wqe_idx: the WQE's slot: in the SQ, the RQ, or the SRQ if SHCA_CQE_F_SRQ
 * @opcode: enum shca_hw_cqe_opcode
 * @status: enum shca_hw_cqe_status
 * @byte_len: bytes transferred, for receives and reads
 * @imm_inv: immediate data or invalidated key, as @flags say
 * @src_qp: the sender's QP, for UD and XRC receives
 * @flags: SHCA_CQE_F_*
 * @net_type: enum shca_hw_net_type, with SHCA_CQE_F_GRH; with
 *	SHCA_CQE_F_XRC, the low byte of the XRC SRQ's number
 * @sl: service level; with SHCA_CQE_F_XRC, the high byte of the XRC
 *	SRQ's number
 * @timestamp: when the device wrote the CQE, on its free-running clock,
 *	which counts the nanoseconds of the kernel's CLOCK_MONOTONIC
 *	(query_device: hca_core_clock 1000000 kHz, all 64 bits in the
 *	completion timestamp mask); little-endian and unaligned, in the
 *	bytes the first ABI reserved, so that the CQE stays 32 bytes with
 *	the owner byte last.  Only on a CQ created with
 *	IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (libibverbs asks for it for
 *	an extended CQ with a timestamp in its wc_flags); 0 on others
 * @owner: bit 0 is the phase: the device writes 1 on its first pass over
 *	the ring, 0 on the second, and so on; a CQE whose phase does not
 *	match the consumer's pass is not valid yet
 */
struct shca_hw_cqe {
	__u32 qpn;
	__u16 wqe_idx;
	__u8 opcode;
	__u8 status;
	__u32 byte_len;
	__u32 imm_inv;
	__u32 src_qp;
	__u8 flags;
	__u8 net_type;
	__u8 sl;
	__u8 timestamp[8];
	__u8 owner;
};

/**
 * struct shca_hw_cq_dbrec - a CQ's doorbell record, written by the driver
 * @ci: consumer index: entries below it are free for the device
 * @arm: the arm doorbell in memory, where the device says so
 *	(SHCA_CQ_RESP_F_ARM_DBREC): a request sequence number shifted left
 *	by SHCA_CQ_DBREC_ARM_SN_SHIFT, or'ed with SHCA_CQ_DBREC_ARM_NEXT or
 *	SHCA_CQ_DBREC_ARM_SOLICITED.  The device takes a value unlike the
 *	last one it took as one arm request.  It reads @arm after it has
 *	published a CQE and issued a full memory barrier, so a driver that
 *	stores @arm, issues a full barrier and then polls the CQ either finds
 *	that CQE or gets its event; any value is harmless.
 * @arm_taken: written by the device: the @arm value it took last.  A
 *	driver whose last request armed for the next CQE and is not taken
 *	yet keeps SHCA_CQ_DBREC_ARM_NEXT in a solicited-only request, since
 *	arming for solicited CQEs never narrows an armed CQ.
 */
struct shca_hw_cq_dbrec {
	__u32 ci;
	__u32 arm;
	__u32 arm_taken;
};

#define SHCA_CQ_DBREC_ARM_NEXT		1
#define SHCA_CQ_DBREC_ARM_SOLICITED	2
#define SHCA_CQ_DBREC_ARM_SN_SHIFT	2

/**
 * struct shca_hw_qp_dbrec - a QP's doorbell record
 * @sq_pi: send queue producer index, written by the driver
 * @rq_pi: receive queue producer index, written by the driver
 * @sq_running: written by the device: nonzero while a turn of the QP is
 *	executing send WQEs, or a poller of the device holds the QP, and
 *	will read @sq_pi again before it stops or lets the QP go.  A
 *	driver that stores @sq_pi, then a full memory barrier, then finds
 *	@sq_running set may skip the send doorbell: the device clears it,
 *	issues a full barrier and reads @sq_pi once more before it stops.
 *	Zero (ring) is always safe; the device never reads it for a decision.
 * @lazy: written by the driver, where the device serves lazy doorbells
 *	(SHCA_QP_RESP_F_LAZY_DB): nonzero if it may leave later send
 *	doorbells unrung while @backstop is set.  A send doorbell that finds
 *	@lazy set arms the device's backstop for the QP; the device reads it
 *	at each send doorbell, so a driver may set it only while it streams.
 * @backstop: written by the device: nonzero while the QP's backstop is
 *	armed.  Within the backstop's period (at most 100 microseconds) the
 *	device clears it, issues a full barrier and reads @sq_pi, and runs
 *	the QP's turn if WQEs are there.  A driver that stores @sq_pi, then
 *	a full barrier, then finds @backstop set may leave the doorbell for
 *	later: the WQE runs at the latest when the backstop fires.  Like
 *	@sq_running, the device never reads it for a decision.
 */
struct shca_hw_qp_dbrec {
	__u32 sq_pi;
	__u32 rq_pi;
	__u32 sq_running;
	__u32 lazy;
	__u32 backstop;
};

/**
 * struct shca_hw_srq_dbrec - an SRQ's doorbell record
 * @pi: producer index of the SRQ's index ring
 */
struct shca_hw_srq_dbrec {
	__u32 pi;
};

#endif /* SHCA_ABI_USER_H */
