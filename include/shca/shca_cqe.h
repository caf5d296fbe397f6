/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: what a CQE says, and which work request it completes.
 *
 * One implementation for both sides of the user ABI: the kernel driver
 * polls kernel CQs with it and libshca a process's.  shca_cqe_complete()
 * turns a CQE into struct shca_cqe_wc, a work completion in neither
 * side's types, and retires the WQEs it completes; each side then copies
 * that into its ib_wc or ibv_wc.
 *
 * The kernel's IB_WC_* and libibverbs' IBV_WC_* opcodes, statuses and
 * flags carry the same names, so the includer maps them by defining,
 * before it includes this header:
 *   SHCA_WC_OPCODE(name)	its opcode of that name (SEND, RDMA_WRITE,
 *				RDMA_READ, COMP_SWAP, FETCH_ADD, LOCAL_INV,
 *				RECV, RECV_RDMA_WITH_IMM, FLUSH,
 *				ATOMIC_WRITE, BIND_MW)
 *   SHCA_WC_OPCODE_REG_MR	its opcode for a fast registration
 *   SHCA_WC_STATUS(name)	its status of that name (SUCCESS, LOC_LEN_ERR,
 *				..., GENERAL_ERR)
 *   SHCA_WC_F_IMM, SHCA_WC_F_INV, SHCA_WC_F_GRH
 *				its flags for immediate data, an invalidated
 *				key and a GRH (0 for one it sets itself)
 */
#ifndef SHCA_CQE_H
#define SHCA_CQE_H

#include <rdma/shca-abi.h>

#include "shca_wq.h"

/* The XRC SRQ an XRC receive CQE (SHCA_CQE_F_XRC) names. */
static inline __u32 shca_cqe_xrc_srqn(const struct shca_hw_cqe *cqe)
{
	return cqe->net_type | (__u32)cqe->sl << 8;
}

#if !defined(SHCA_WC_OPCODE) || !defined(SHCA_WC_OPCODE_REG_MR) || \
	!defined(SHCA_WC_STATUS) || !defined(SHCA_WC_F_IMM) || \
	!defined(SHCA_WC_F_INV) || !defined(SHCA_WC_F_GRH)
#error "define the SHCA_WC_* mapping before including shca_cqe.h"
#endif

/**
 * struct shca_cqe_wc - a work completion, in neither side's types
 * @wr_id: the completed work request's
 * @status: the includer's SHCA_WC_STATUS()
 * @opcode: the includer's SHCA_WC_OPCODE()
 * @vendor_err: the device's status, for an error
 * @byte_len: bytes received or transferred
 * @qpn: the QP the CQE is for
 * @src_qp: a datagram receive's source QP
 * @imm_inv: immediate data (SHCA_WC_F_IMM) or the invalidated key
 *	(SHCA_WC_F_INV)
 * @wc_flags: the includer's SHCA_WC_F_*
 * @sl: a datagram receive's service level
 * @net_type: enum shca_hw_net_type, with a GRH
 * @timestamp: the completion time, in device clock ticks
 */
struct shca_cqe_wc {
	__u64 wr_id;
	int status;
	int opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 qpn;
	__u32 src_qp;
	__u32 imm_inv;
	int wc_flags;
	__u8 sl;
	__u8 net_type;
	__u64 timestamp;
};

/*
 * Called for a receive CQE that names an SRQ slot: returns the slot's
 * wr_id and gives the slot back to the SRQ (shca_srq_slot_wr_id(),
 * shca_srq_slot_put()), under the SRQ's lock.
 */
typedef __u64 (*shca_cqe_srq_take_fn)(void *srq, __u32 slot);

/* Whether @cqe completes a receive. */
static inline int shca_cqe_is_recv(const struct shca_hw_cqe *cqe)
{
	return cqe->opcode == SHCA_CQE_RECV ||
	       cqe->opcode == SHCA_CQE_RECV_RDMA_IMM;
}

/* The completion time the device stamped @cqe with (little-endian bytes). */
static inline __u64 shca_cqe_timestamp(const struct shca_hw_cqe *cqe)
{
	__u64 ts = 0;
	int i;

	for (i = sizeof(cqe->timestamp) - 1; i >= 0; i--)
		ts = ts << 8 | cqe->timestamp[i];
	return ts;
}

/* Decode @cqe into @wc, all but @wc->wr_id. */
static inline void shca_cqe_decode(const struct shca_hw_cqe *cqe,
				   struct shca_cqe_wc *wc)
{
	static const int opcodes[SHCA_CQE_BIND_MW + 1] = {
		[SHCA_CQE_SEND]		 = SHCA_WC_OPCODE(SEND),
		[SHCA_CQE_RDMA_WRITE]	 = SHCA_WC_OPCODE(RDMA_WRITE),
		[SHCA_CQE_RDMA_READ]	 = SHCA_WC_OPCODE(RDMA_READ),
		[SHCA_CQE_ATOMIC_CS]	 = SHCA_WC_OPCODE(COMP_SWAP),
		[SHCA_CQE_ATOMIC_FA]	 = SHCA_WC_OPCODE(FETCH_ADD),
		[SHCA_CQE_LOCAL_INV]	 = SHCA_WC_OPCODE(LOCAL_INV),
		[SHCA_CQE_REG_MR]	 = SHCA_WC_OPCODE_REG_MR,
		[SHCA_CQE_RECV]		 = SHCA_WC_OPCODE(RECV),
		[SHCA_CQE_RECV_RDMA_IMM] = SHCA_WC_OPCODE(RECV_RDMA_WITH_IMM),
		[SHCA_CQE_FLUSH]	 = SHCA_WC_OPCODE(FLUSH),
		[SHCA_CQE_ATOMIC_WRITE]	 = SHCA_WC_OPCODE(ATOMIC_WRITE),
		[SHCA_CQE_BIND_MW]	 = SHCA_WC_OPCODE(BIND_MW),
	};
	static const int statuses[SHCA_CQE_NUM_STATUS] = {
		[SHCA_CQE_OK]		      = SHCA_WC_STATUS(SUCCESS),
		[SHCA_CQE_LOC_LEN_ERR]	      = SHCA_WC_STATUS(LOC_LEN_ERR),
		[SHCA_CQE_LOC_QP_OP_ERR]      = SHCA_WC_STATUS(LOC_QP_OP_ERR),
		[SHCA_CQE_LOC_PROT_ERR]	      = SHCA_WC_STATUS(LOC_PROT_ERR),
		[SHCA_CQE_WR_FLUSH_ERR]	      = SHCA_WC_STATUS(WR_FLUSH_ERR),
		[SHCA_CQE_MW_BIND_ERR]	      = SHCA_WC_STATUS(MW_BIND_ERR),
		[SHCA_CQE_REM_INV_REQ_ERR]    = SHCA_WC_STATUS(REM_INV_REQ_ERR),
		[SHCA_CQE_REM_ACCESS_ERR]     = SHCA_WC_STATUS(REM_ACCESS_ERR),
		[SHCA_CQE_REM_OP_ERR]	      = SHCA_WC_STATUS(REM_OP_ERR),
		[SHCA_CQE_RETRY_EXC_ERR]      = SHCA_WC_STATUS(RETRY_EXC_ERR),
		[SHCA_CQE_RNR_RETRY_EXC_ERR]  = SHCA_WC_STATUS(RNR_RETRY_EXC_ERR),
	};

	wc->status = cqe->status < SHCA_CQE_NUM_STATUS ?
		     statuses[cqe->status] : SHCA_WC_STATUS(GENERAL_ERR);
	wc->opcode = cqe->opcode <= SHCA_CQE_BIND_MW ?
		     opcodes[cqe->opcode] : SHCA_WC_OPCODE(SEND);
	wc->vendor_err = wc->status == SHCA_WC_STATUS(SUCCESS) ? 0 :
			 cqe->status;
	wc->byte_len = cqe->byte_len;
	wc->qpn = cqe->qpn;
	wc->src_qp = cqe->src_qp;
	wc->imm_inv = cqe->imm_inv;
	/* An XRC receive has the SRQ number where these would be. */
	wc->sl = cqe->flags & SHCA_CQE_F_XRC ? 0 : cqe->sl;
	wc->net_type = cqe->flags & SHCA_CQE_F_XRC ? 0 : cqe->net_type;
	wc->timestamp = shca_cqe_timestamp(cqe);
	wc->wc_flags = (cqe->flags & SHCA_CQE_F_IMM ? SHCA_WC_F_IMM : 0) |
		       (cqe->flags & SHCA_CQE_F_INV ? SHCA_WC_F_INV : 0) |
		       (cqe->flags & SHCA_CQE_F_GRH ? SHCA_WC_F_GRH : 0);
}

/*
 * Fill @wc, an ib_wc or an ibv_wc, with the members of @c that both name
 * alike, and zeroes; the includer sets the QP, immediate data and
 * invalidated key.
 */
#define shca_cqe_wc_copy(wc, c)					\
	do {							\
		typeof(wc) shca_wc_ = (wc);			\
		const struct shca_cqe_wc *shca_c_ = (c);	\
								\
		memset(shca_wc_, 0, sizeof(*shca_wc_));		\
		shca_wc_->wr_id = shca_c_->wr_id;		\
		shca_wc_->status = shca_c_->status;		\
		shca_wc_->opcode = shca_c_->opcode;		\
		shca_wc_->vendor_err = shca_c_->vendor_err;	\
		shca_wc_->byte_len = shca_c_->byte_len;		\
		shca_wc_->src_qp = shca_c_->src_qp;		\
		shca_wc_->wc_flags = shca_c_->wc_flags;		\
		shca_wc_->sl = shca_c_->sl;			\
	} while (0)

/*
 * shca_cqe_complete - decode a CQE and retire the work it completes
 * @cqe: the CQE, read after its owner byte (acquire)
 * @sq: its QP's send queue
 * @rq: its QP's receive queue; unused with an SRQ
 * @srq_take: with an SRQ, takes the wr_id of a slot and frees the slot;
 *	NULL without one
 * @srq: passed to @srq_take
 * @wc: the work completion
 *
 * The caller holds its poll lock.  A receive CQE of another life of the
 * QP may say SRQ when the QP has none, or the other way round: it names
 * nothing, like a CQE of no outstanding WQE.
 *
 * Return: 1 with @wc complete, or 0 for a CQE that names nothing.
 */
static inline int shca_cqe_complete(const struct shca_hw_cqe *cqe,
				    struct shca_wq *sq, struct shca_wq *rq,
				    shca_cqe_srq_take_fn srq_take, void *srq,
				    struct shca_cqe_wc *wc)
{
	int srq_cqe = !!(cqe->flags & SHCA_CQE_F_SRQ);

	shca_cqe_decode(cqe, wc);
	if (!shca_cqe_is_recv(cqe))
		return shca_wq_retire(sq, cqe->wqe_idx, &wc->wr_id);
	if (srq_cqe != !!srq_take)
		return 0;
	if (!srq_cqe)
		return shca_wq_retire(rq, cqe->wqe_idx, &wc->wr_id);
	wc->wr_id = srq_take(srq, cqe->wqe_idx);
	return 1;
}

#endif /* SHCA_CQE_H */
