/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: a work queue's and an SRQ's indices, as the consumer keeps them.
 *
 * One implementation for both sides of the user ABI: the kernel driver
 * keeps its QPs' and SRQs' queues with it, and libshca a process's.  Each
 * side serialises posting with its own lock and completing with its poll
 * lock; the two meet only at the consumer index, which completing moves
 * with release ordering once it has read the slot's wr_id, and posting
 * reads with acquire ordering before it reuses a slot.  It needs the
 * types of <rdma/shca-abi.h> and the hooks of shca_dp_sync.h.
 */
#ifndef SHCA_WQ_H
#define SHCA_WQ_H

#include <rdma/shca-abi.h>

#include "shca_dp_sync.h"

/**
 * struct shca_wq - the consumer's side of a send or receive queue
 * @ring: the WQEs
 * @log_depth: log2 of the depth
 * @pi: producer index; written under the posting lock
 * @ci: consumer index: WQEs whose completion was polled, or implied;
 *	written under the poll lock
 * @wrid: the consumer's wr_id of each slot
 */
struct shca_wq {
	void *ring;
	__u32 log_depth;
	__u32 pi;
	__u32 ci;
	__u64 *wrid;
};

/*
 * The log2 of the depth of a queue for @wr work requests: a power of two,
 * two entries at least (the device's smallest ring).
 */
static inline __u32 shca_wq_log_depth(__u32 wr)
{
	__u32 log = 1;

	while (log < 31 && (1U << log) < wr)
		log++;
	return log;
}

/* An empty queue of 2^@log_depth WQEs at @ring, their wr_ids in @wrid. */
static inline void shca_wq_init(struct shca_wq *wq, void *ring,
				__u32 log_depth, __u64 *wrid)
{
	wq->ring = ring;
	wq->log_depth = log_depth;
	wq->wrid = wrid;
	wq->pi = 0;
	wq->ci = 0;
}

/* The slot of index @idx. */
static inline __u32 shca_wq_slot(const struct shca_wq *wq, __u32 idx)
{
	return idx & ((1U << wq->log_depth) - 1);
}

/*
 * Whether the queue has no free slot.  The acquire pairs with the release
 * of shca_wq_retire(): the slot's wr_id was read before it is reused.
 */
static inline int shca_wq_full(const struct shca_wq *wq)
{
	return wq->pi - shca_dp_load_acquire(&wq->ci) >= (1U << wq->log_depth);
}

/* The send WQE at the producer index. */
static inline struct shca_hw_send_wqe *shca_wq_send_wqe(const struct shca_wq *wq)
{
	return (struct shca_hw_send_wqe *)wq->ring + shca_wq_slot(wq, wq->pi);
}

/* The receive WQE at the producer index. */
static inline struct shca_hw_recv_wqe *shca_wq_recv_wqe(const struct shca_wq *wq)
{
	return (struct shca_hw_recv_wqe *)wq->ring + shca_wq_slot(wq, wq->pi);
}

/*
 * The WQE at the producer index is written: note its wr_id and move the
 * producer index past it.  The caller publishes the index in the doorbell
 * record, with release ordering, when its batch is done.
 */
static inline void shca_wq_produce(struct shca_wq *wq, __u64 wr_id)
{
	wq->wrid[shca_wq_slot(wq, wq->pi)] = wr_id;
	shca_dp_write_once(&wq->pi, wq->pi + 1);
}

/*
 * shca_wq_retire - complete the WQE at index @idx
 * @wq: the queue
 * @idx: the WQE index a CQE names (its low bits suffice)
 * @wr_id: set to the WQE's wr_id
 *
 * A CQE completes its WQE and every unsignaled one before it.  The wr_id
 * is read before the consumer index moves: once it moves, a poster on
 * another thread may reuse the slot.  A CQE that names no outstanding WQE
 * (left from before a RESET) is refused.
 *
 * Return: 1, or 0 if @idx names no outstanding WQE.
 */
static inline int shca_wq_retire(struct shca_wq *wq, __u32 idx, __u64 *wr_id)
{
	__u32 dist = shca_wq_slot(wq, idx - wq->ci);

	if (dist >= shca_dp_read_once(&wq->pi) - wq->ci)
		return 0;
	*wr_id = wq->wrid[shca_wq_slot(wq, idx)];
	/* Pairs with the poster's acquire: the slot is free only now. */
	shca_dp_store_release(&wq->ci, wq->ci + dist + 1);
	return 1;
}

/*
 * Lazy send doorbells (struct shca_hw_qp_dbrec): a post may leave the
 * doorbell for later while at least SHCA_LAZY_MIN_OUTSTANDING WQEs are
 * posted and not yet completed, so a poll, which rings, is coming; and
 * it rings at least every SHCA_LAZY_MAX_DEFERRED posts, or every half
 * queue on a smaller one.
 */
#define SHCA_LAZY_MIN_OUTSTANDING	4
#define SHCA_LAZY_MAX_DEFERRED		16

/*
 * Whether a send doorbell of @wq asks the device to arm its backstop (the
 * doorbell record's lazy word): only when a later post may be left for
 * later, so that a ping-pong, one WQE outstanding at a time, arms nothing
 * and pays for no sweep.
 */
static inline int shca_sq_wants_backstop(const struct shca_wq *wq)
{
	return shca_dp_read_once(&wq->pi) - shca_dp_load_acquire(&wq->ci) >=
	       SHCA_LAZY_MIN_OUTSTANDING - 1;
}

/*
 * Whether a post to @wq may leave the send doorbell for later: the
 * device's backstop is armed (@backstop, the doorbell record's word, read
 * after a full barrier that follows the producer index's store), and
 * @deferred posts were left since the last doorbell.
 */
static inline int shca_sq_may_defer(const struct shca_wq *wq,
				    __u32 backstop, __u32 deferred)
{
	__u32 posted = shca_dp_read_once(&wq->pi) -
		       shca_dp_load_acquire(&wq->ci);
	__u32 most = (1U << wq->log_depth) / 2;

	if (most > SHCA_LAZY_MAX_DEFERRED)
		most = SHCA_LAZY_MAX_DEFERRED;
	return backstop && posted >= SHCA_LAZY_MIN_OUTSTANDING &&
	       deferred < most;
}

/*
 * Start the queue over, as after a RESET, and @dbrec_pi, the producer
 * index the doorbell record shows the device.  The caller holds the
 * posting lock.
 */
static inline void shca_wq_reset(struct shca_wq *wq, __u32 *dbrec_pi)
{
	shca_dp_write_once(&wq->pi, 0);
	shca_dp_store_release(&wq->ci, 0);
	shca_dp_store_release(dbrec_pi, 0);
}

/*
 * An SRQ's slots.  Posting pops a free slot off a stack, fills it and
 * puts its number on the index ring the device reads in order; a receive
 * CQE names the slot, which polling (or a sweep) pushes back.  Completions
 * come back in any order across QPs, so slots are recycled one by one,
 * never by index arithmetic.  Each side keeps the stack and the wr_ids in
 * its own SRQ object, under its SRQ lock.
 */

/* Fill @free_slots with every slot of a ring of 2^@log_depth; return it. */
static inline __u32 shca_srq_slots_init(__u32 *free_slots, __u32 log_depth)
{
	__u32 depth = 1U << log_depth, i;

	for (i = 0; i < depth; i++)
		free_slots[i] = depth - 1 - i;
	return depth;
}

/*
 * Push @slot, which a CQE named, back on the free stack.  The device
 * checked the slot it read, but a CQE is only as good as the ring it sits
 * in: the slot number is masked, and a full stack takes nothing.
 */
static inline void shca_srq_slot_put(__u32 *free_slots, __u32 *nr_free,
				     __u32 log_depth, __u32 slot)
{
	if (*nr_free < (1U << log_depth))
		free_slots[(*nr_free)++] = slot & ((1U << log_depth) - 1);
}

/* The free slot posting fills next; the caller checked *@nr_free. */
static inline __u32 shca_srq_slot_next(const __u32 *free_slots, __u32 nr_free)
{
	return free_slots[nr_free - 1];
}

/*
 * Post the top free slot, which the caller has filled: note its wr_id,
 * pop it and put its number on the index ring at *@pi.  The caller
 * publishes *@pi with release ordering when its batch is done.
 */
static inline void shca_srq_slot_post(__u32 *free_slots, __u32 *nr_free,
				      __u32 *index_ring, __u32 *pi,
				      __u32 log_depth, __u64 *wrid,
				      __u64 wr_id)
{
	__u32 slot = free_slots[--*nr_free];

	wrid[slot] = wr_id;
	shca_dp_write_once(&index_ring[*pi & ((1U << log_depth) - 1)], slot);
	(*pi)++;
}

/*
 * The free stack and wr_ids of an SRQ of 2^@log_depth slots, @nr_free of
 * them free in @free_slots, moved to 2^@new_log slots: @new_free and
 * @new_wrid, with room for that many, and *@new_nr.  Slot numbers are
 * kept, so every slot in use (posted, or completed and not yet polled)
 * must be below the new depth.  Returns 0, or -1 (nothing is written that
 * the SRQ uses) if one is not.
 */
static inline int shca_srq_slots_resize(const __u32 *free_slots,
					__u32 nr_free, const __u64 *wrid,
					__u32 log_depth, __u32 new_log,
					__u32 *new_free, __u32 *new_nr,
					__u64 *new_wrid)
{
	__u32 old_depth = 1U << log_depth, depth = 1U << new_log;
	__u32 i, slot, above = 0, n = 0;

	for (i = depth; i-- > old_depth;)
		new_free[n++] = i;
	for (i = 0; i < nr_free; i++) {
		slot = free_slots[i];
		if (slot >= depth)
			above++;
		else if (n < depth)
			new_free[n++] = slot;
	}
	if (depth < old_depth && above != old_depth - depth)
		return -1;
	for (i = 0; i < depth && i < old_depth; i++)
		new_wrid[i] = wrid[i];
	*new_nr = n;
	return 0;
}

/* The wr_id of the SRQ slot a receive CQE named. */
static inline __u64 shca_srq_slot_wr_id(const __u64 *wrid, __u32 log_depth,
					__u32 slot)
{
	return wrid[slot & ((1U << log_depth) - 1)];
}

#endif /* SHCA_WQ_H */
