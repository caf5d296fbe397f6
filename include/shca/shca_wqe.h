/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: writing WQEs, and what each QP type may ask for.
 *
 * One implementation for both sides of the user ABI: the kernel driver
 * writes its QPs' WQEs with it, and libshca a process's.  Each side maps
 * its work request opcode to a SHCA_WQE_* opcode and its QP type to a
 * SHCA_WQE_SVC_* bit, then asks the one table below what that QP may do.
 *
 * The includer names its scatter/gather element type, a struct with
 * members addr (u64), length (u32) and lkey (u32), by defining
 * shca_wr_sge before it includes this header (the kernel: ib_sge,
 * libshca: ibv_sge).  It needs memset(), memcpy() and offsetof().
 *
 * The kernel's IB_WR_* and libibverbs' IBV_WR_* opcodes carry the same
 * names: an includer that defines SHCA_WR_OPCODE(name) as its opcode of
 * that name gets shca_wr_opcode(), and with SHCA_WR_OPCODE_LOCAL_INV and
 * SHCA_WR_OPCODE_REG_MR defined too, the two opcodes only kernel QPs have.
 */
#ifndef SHCA_WQE_H
#define SHCA_WQE_H

#include <rdma/shca-abi.h>

#ifndef shca_wr_sge
#error "define shca_wr_sge as the includer's scatter/gather element type"
#endif

/**
 * enum shca_wqe_svc - a QP's transport service, as a bit of a set
 * @SHCA_WQE_SVC_RC: reliable connected
 * @SHCA_WQE_SVC_UC: unreliable connected
 * @SHCA_WQE_SVC_UD: unreliable datagram, and the GSI QP
 */
enum shca_wqe_svc {
	SHCA_WQE_SVC_RC = 1,
	SHCA_WQE_SVC_UC = 2,
	SHCA_WQE_SVC_UD = 4,
};

#define SHCA_WQE_SVC_CONN	(SHCA_WQE_SVC_RC | SHCA_WQE_SVC_UC)
#define SHCA_WQE_SVC_ALL	(SHCA_WQE_SVC_CONN | SHCA_WQE_SVC_UD)

/**
 * struct shca_wqe_op - what a send opcode is allowed
 * @svc: the SHCA_WQE_SVC_* of the QPs that take it
 * @inline_ok: it may carry its payload inline
 */
struct shca_wqe_op {
	__u8 svc;
	__u8 inline_ok;
};

/**
 * enum shca_wqe_err - why a work request cannot become a WQE
 * @SHCA_WQE_OK: it can
 * @SHCA_WQE_E_OPCODE: the QP does not take the opcode
 * @SHCA_WQE_E_SGE: more SGEs than the queue's maximum
 * @SHCA_WQE_E_INLINE: more inline bytes than the QP's maximum
 * @SHCA_WQE_E_AH: a datagram send without an address
 */
enum shca_wqe_err {
	SHCA_WQE_OK,
	SHCA_WQE_E_OPCODE,
	SHCA_WQE_E_SGE,
	SHCA_WQE_E_INLINE,
	SHCA_WQE_E_AH,
};

/* The row of @opcode in the table; NULL for an opcode the device lacks. */
static inline const struct shca_wqe_op *shca_wqe_op(__u32 opcode)
{
	static const struct shca_wqe_op ops[SHCA_WQE_NUM_OPCODES] = {
		[SHCA_WQE_SEND]		  = { SHCA_WQE_SVC_ALL, 1 },
		[SHCA_WQE_SEND_IMM]	  = { SHCA_WQE_SVC_ALL, 1 },
		[SHCA_WQE_SEND_INV]	  = { SHCA_WQE_SVC_CONN, 1 },
		[SHCA_WQE_RDMA_WRITE]	  = { SHCA_WQE_SVC_CONN, 1 },
		[SHCA_WQE_RDMA_WRITE_IMM] = { SHCA_WQE_SVC_CONN, 1 },
		[SHCA_WQE_RDMA_READ]	  = { SHCA_WQE_SVC_RC, 0 },
		[SHCA_WQE_ATOMIC_CS]	  = { SHCA_WQE_SVC_RC, 0 },
		[SHCA_WQE_ATOMIC_FA]	  = { SHCA_WQE_SVC_RC, 0 },
		[SHCA_WQE_LOCAL_INV]	  = { SHCA_WQE_SVC_CONN, 0 },
		[SHCA_WQE_REG_MR]	  = { SHCA_WQE_SVC_CONN, 0 },
		[SHCA_WQE_FLUSH]	  = { SHCA_WQE_SVC_RC, 0 },
		[SHCA_WQE_ATOMIC_WRITE]	  = { SHCA_WQE_SVC_RC, 0 },
		[SHCA_WQE_BIND_MW]	  = { SHCA_WQE_SVC_CONN, 0 },
	};

	return opcode < SHCA_WQE_NUM_OPCODES ? &ops[opcode] : (void *)0;
}

/* Whether a QP of service @svc (SHCA_WQE_SVC_*) takes @opcode. */
static inline int shca_wqe_op_ok(__u32 svc, __u32 opcode)
{
	const struct shca_wqe_op *op = shca_wqe_op(opcode);

	return op && (op->svc & svc);
}

/* Whether @opcode may carry its payload inline. */
static inline int shca_wqe_op_inline(__u32 opcode)
{
	const struct shca_wqe_op *op = shca_wqe_op(opcode);

	return op && op->inline_ok;
}

#ifdef SHCA_WR_OPCODE
/* The device's opcode for the includer's @op; SHCA_WQE_NUM_OPCODES if none. */
static inline __u32 shca_wr_opcode(int op)
{
	switch (op) {
	case SHCA_WR_OPCODE(SEND):
		return SHCA_WQE_SEND;
	case SHCA_WR_OPCODE(SEND_WITH_IMM):
		return SHCA_WQE_SEND_IMM;
	case SHCA_WR_OPCODE(SEND_WITH_INV):
		return SHCA_WQE_SEND_INV;
	case SHCA_WR_OPCODE(RDMA_WRITE):
		return SHCA_WQE_RDMA_WRITE;
	case SHCA_WR_OPCODE(RDMA_WRITE_WITH_IMM):
		return SHCA_WQE_RDMA_WRITE_IMM;
	case SHCA_WR_OPCODE(RDMA_READ):
		return SHCA_WQE_RDMA_READ;
	case SHCA_WR_OPCODE(ATOMIC_CMP_AND_SWP):
		return SHCA_WQE_ATOMIC_CS;
	case SHCA_WR_OPCODE(ATOMIC_FETCH_AND_ADD):
		return SHCA_WQE_ATOMIC_FA;
#if defined(SHCA_WR_OPCODE_LOCAL_INV) && defined(SHCA_WR_OPCODE_REG_MR)
	case SHCA_WR_OPCODE_LOCAL_INV:
		return SHCA_WQE_LOCAL_INV;
	case SHCA_WR_OPCODE_REG_MR:
		return SHCA_WQE_REG_MR;
#endif
	default:
		return SHCA_WQE_NUM_OPCODES;
	}
}
#endif

/* Start a send WQE: its header zeroed, then @opcode and @flags (SHCA_WQE_F_*). */
static inline void shca_wqe_start(struct shca_hw_send_wqe *w, __u8 opcode,
				  __u8 flags)
{
	memset(w, 0, offsetof(struct shca_hw_send_wqe, sge));
	w->opcode = opcode;
	w->flags = flags;
}

/* The remote side of an RDMA operation. */
static inline void shca_wqe_set_rdma(struct shca_hw_send_wqe *w,
				     __u64 remote_addr, __u32 rkey)
{
	w->rdma.remote_addr = remote_addr;
	w->rdma.rkey = rkey;
}

/* The remote side and the operands of an atomic. */
static inline void shca_wqe_set_atomic(struct shca_hw_send_wqe *w,
				       __u64 remote_addr, __u32 rkey,
				       __u64 compare_add, __u64 swap)
{
	shca_wqe_set_rdma(w, remote_addr, rkey);
	w->rdma.compare_add = compare_add;
	w->rdma.swap = swap;
}

/*
 * A memory window bind: the window @mw_key becomes @new_key over
 * [addr, addr + length) of the MR @mr_lkey, with @access (SHCA_BIND_*).
 */
static inline void shca_wqe_set_bind(struct shca_hw_send_wqe *w,
				     __u32 mw_key, __u32 new_key,
				     __u32 mr_lkey, __u64 addr, __u64 length,
				     __u32 access)
{
	w->bind.mw_key = mw_key;
	w->bind.new_key = new_key;
	w->bind.mr_lkey = mr_lkey;
	w->bind.addr = addr;
	w->bind.length = length;
	w->bind.access = access;
}

/* The destination of a datagram send. */
static inline void shca_wqe_set_ud(struct shca_hw_send_wqe *w,
				   const struct shca_hw_av *av,
				   __u32 remote_qpn, __u32 remote_qkey)
{
	w->ud.av = *av;
	w->ud.remote_qpn = remote_qpn;
	w->ud.remote_qkey = remote_qkey;
}

/* Copy @n SGEs into @dst, which has room for @max_sge. */
static inline enum shca_wqe_err shca_sges_fill(struct shca_hw_sge *dst,
					       const struct shca_wr_sge *sg,
					       __u32 n, __u32 max_sge)
{
	__u32 i;

	if (n > max_sge)
		return SHCA_WQE_E_SGE;
	for (i = 0; i < n; i++) {
		dst[i].addr = sg[i].addr;
		dst[i].length = sg[i].length;
		dst[i].lkey = sg[i].lkey;
	}
	return SHCA_WQE_OK;
}

/* The WQE's data as a list of @n SGEs, at most @max_sge. */
static inline enum shca_wqe_err
shca_wqe_fill_sges(struct shca_hw_send_wqe *w, const struct shca_wr_sge *sg,
		   __u32 n, __u32 max_sge)
{
	enum shca_wqe_err err = shca_sges_fill(w->sge, sg, n, max_sge);

	if (!err)
		w->num_sge = n;
	return err;
}

/*
 * The WQE's data copied inline from the @n buffers @sg names (their
 * addresses are the poster's own), at most @max_inline bytes in all.
 */
static inline enum shca_wqe_err
shca_wqe_fill_inline(struct shca_hw_send_wqe *w, const struct shca_wr_sge *sg,
		     __u32 n, __u32 max_inline)
{
	__u32 i, len = 0;

	for (i = 0; i < n; i++) {
		if (sg[i].length > max_inline - len)
			return SHCA_WQE_E_INLINE;
		memcpy(w->inline_data + len,
		       (const void *)(uintptr_t)sg[i].addr, sg[i].length);
		len += sg[i].length;
	}
	w->inline_len = len;
	w->flags |= SHCA_WQE_F_INLINE;
	return SHCA_WQE_OK;
}

/*
 * The data of a started WQE: inline when the poster asked for it (@inl)
 * and the opcode may carry it, else as SGEs.
 */
static inline enum shca_wqe_err
shca_wqe_fill_data(struct shca_hw_send_wqe *w, int inl,
		   const struct shca_wr_sge *sg, __u32 n, __u32 max_sge,
		   __u32 max_inline)
{
	if (inl && shca_wqe_op_inline(w->opcode))
		return shca_wqe_fill_inline(w, sg, n, max_inline);
	return shca_wqe_fill_sges(w, sg, n, max_sge);
}

/* A receive WQE (a receive queue's or an SRQ slot's) of @n SGEs. */
static inline enum shca_wqe_err
shca_recv_wqe_fill(struct shca_hw_recv_wqe *w, const struct shca_wr_sge *sg,
		   __u32 n, __u32 max_sge)
{
	enum shca_wqe_err err = shca_sges_fill(w->sge, sg, n, max_sge);

	if (!err)
		w->num_sge = n;
	return err;
}

#endif /* SHCA_WQE_H */
