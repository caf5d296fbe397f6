/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: removing one QP's CQEs from a CQ ring.
 *
 * One implementation for both sides of the user ABI: the kernel driver
 * sweeps kernel CQs with it, and the rdma-core provider (libshca) sweeps
 * user CQs with it, each under its own poll lock, once the device has
 * fenced the QP.  It needs only the ring format of <rdma/shca-abi.h>,
 * memcpy() and the memory-ordering hooks of shca_dp_sync.h, which the
 * includer may define as for the rest of the data path (the owner byte is
 * loaded with shca_dp_load_acquire()); nothing else of either side's
 * environment.
 */
#ifndef SHCA_CQ_SWEEP_H
#define SHCA_CQ_SWEEP_H

#include <rdma/shca-abi.h>

#include "shca_dp_sync.h"

/*
 * Called for each removed receive CQE that names an SRQ slot
 * (@cqe->wqe_idx): the slot's WQE was consumed by a QP that is gone, and
 * goes back to the SRQ; for an XRC receive, the SRQ the CQE names
 * (shca_cqe_xrc_srqn()).
 */
typedef void (*shca_sweep_srq_fn)(void *ctx, const struct shca_hw_cqe *cqe);

/* Whether the device has published the CQE at index @idx. */
static inline int shca_cqe_published(const struct shca_hw_cqe *ring,
				     __u32 log_depth, __u32 idx)
{
	const struct shca_hw_cqe *cqe = &ring[idx & ((1U << log_depth) - 1)];

	return (shca_dp_load_acquire(&cqe->owner) & 1) !=
	       ((idx >> log_depth) & 1);
}

/* Whether @cqe completes a receive WQE taken from an SRQ slot. */
static inline int shca_cqe_is_srq_recv(const struct shca_hw_cqe *cqe)
{
	return (cqe->flags & SHCA_CQE_F_SRQ) &&
	       (cqe->opcode == SHCA_CQE_RECV ||
		cqe->opcode == SHCA_CQE_RECV_RDMA_IMM);
}

/*
 * A QP's send and receive CQs are locked together while it is swept, so
 * that no poller sees one swept and the other not: the one with the lower
 * CQN first (a CQ shared by both, once).  Whether the CQ numbered @cqn_b
 * is the one to lock first.
 */
static inline int shca_sweep_lock_b_first(__u32 cqn_a, __u32 cqn_b)
{
	return cqn_b < cqn_a;
}

/*
 * shca_sweep_cq_ring - remove one QP's CQEs from a CQ ring
 * @ring: the ring
 * @log_depth: log2 of its depth
 * @ci: the consumer index
 * @qpn: the QP whose CQEs go; the device writes none for it any more
 * @srq_fn: called with @srq_ctx for each removed SRQ receive; or NULL
 * @srq_ctx: passed to @srq_fn
 *
 * Looks only at the entries from @ci up to the first one the device has
 * not published.  They are the consumer's, so the device writes none of
 * them meanwhile, though it may be writing beyond them.  Walking from the
 * newest to the oldest, each surviving CQE moves up over the removed ones
 * before it: survivors keep their order and contents, each lands in a slot
 * that is already valid for its index so the owner bytes stay as they
 * are, and the holes end up at the old end, below the new consumer index.
 * One pass, no allocation: O(entries looked at).
 *
 * The caller holds its poll lock, adds the result to its consumer index
 * and then stores that in the doorbell record with release ordering, so
 * the moved CQEs are in place before the device may reuse a slot.
 *
 * Return: the number of CQEs removed.
 */
static inline __u32 shca_sweep_cq_ring(struct shca_hw_cqe *ring,
				       __u32 log_depth, __u32 ci, __u32 qpn,
				       shca_sweep_srq_fn srq_fn, void *srq_ctx)
{
	__u32 mask = (1U << log_depth) - 1;
	__u32 n = 0, removed = 0;
	struct shca_hw_cqe *cqe;

	/* Each acquire orders the body loads below after its owner byte. */
	while (n <= mask && shca_cqe_published(ring, log_depth, ci + n))
		n++;
	while (n--) {
		cqe = &ring[(ci + n) & mask];
		if (cqe->qpn == qpn) {
			if (srq_fn && shca_cqe_is_srq_recv(cqe))
				srq_fn(srq_ctx, cqe);
			removed++;
		} else if (removed) {
			memcpy(&ring[(ci + n + removed) & mask], cqe,
			       sizeof(*cqe) - sizeof(cqe->owner));
		}
	}
	return removed;
}

#endif /* SHCA_CQ_SWEEP_H */
