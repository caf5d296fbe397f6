// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the entries of the memory protection table.
 *
 * An entry is found by key and held by reference (FREE_MPT waits the
 * references out); an access checked against a region takes a segment of
 * it, which keeps the translation it checked against.  The memory unit
 * (shca_hw_mem.c: the table's commands and the device's accesses), the
 * memory windows and on-demand paging all build on these; this unit calls
 * none of them.
 *
 * Lock order: the table's xarray lock, a leaf; an entry's lock is the
 * caller's (shca_hw_mpt.lock, see shca_hw_int.h).
 */
#include <linux/lockdep.h>
#include <linux/refcount.h>
#include <linux/wait_bit.h>

#include "shca_hw_int.h"

/**
 * shca_hw_mpt_get() - look up an entry by key and hold it
 * @hw: the device
 * @key: the key; only its index is looked at
 *
 * Return: the entry, referenced, or NULL.
 */
struct shca_hw_mpt *shca_hw_mpt_get(struct shca_hw *hw, u32 key)
{
	struct shca_hw_mpt *mpt;

	/* The entry is freed after a grace period (kfree_rcu()). */
	rcu_read_lock();
	mpt = xa_load(&hw->mpts, shca_hw_key_index(key));
	if (mpt && !refcount_inc_not_zero(&mpt->ref))
		mpt = NULL;
	rcu_read_unlock();
	return mpt;
}

/**
 * shca_hw_mpt_put() - drop a reference shca_hw_mpt_get() took
 * @mpt: the entry
 */
void shca_hw_mpt_put(struct shca_hw_mpt *mpt)
{
	if (refcount_dec_and_test(&mpt->ref))
		wake_up_var(&mpt->ref);
}

/**
 * shca_hw_mpt_covers() - does [addr, addr + len) lie inside a region?
 * @mpt: the region's entry, its lock held
 * @addr: the start
 * @len: bytes
 *
 * Return: true if it does.
 */
bool shca_hw_mpt_covers(const struct shca_hw_mpt *mpt, u64 addr, u64 len)
{
	if (mpt->type == SHCA_MPT_DMA)
		return addr + len >= addr;
	/*
	 * A DM entry is zero-based: iova 0, its length the range's.  A
	 * region of no bytes covers nothing, not even an empty range.
	 */
	return mpt->length && addr >= mpt->iova && len <= mpt->length &&
	       addr - mpt->iova <= mpt->length - len;
}

/**
 * shca_hw_mpt_seg() - describe a checked access to an entry as a segment
 * @mpt: the entry (a region, not a window); the caller's reference passes
 *	to @seg, and so does its use of an ODP entry's pages
 * @addr: start, in the entry's address space
 * @len: bytes
 * @seg: the segment to fill
 *
 * The segment keeps the translation as it is now, so a re-registration
 * after the check cannot move it.
 */
void shca_hw_mpt_seg(struct shca_hw_mpt *mpt, u64 addr, u64 len,
		     struct shca_hw_mem_seg *seg)
{
	lockdep_assert_held(&mpt->lock);
	seg->mpt = mpt;
	seg->odp = mpt->odp;
	seg->trans = mpt->trans;
	atomic_inc(&mpt->trans_users[seg->trans]);
	seg->addr = addr;
	seg->len = len;
	seg->pbl = mpt->type == SHCA_MPT_PBL || mpt->type == SHCA_MPT_ODP ?
		   mpt->pbl : NULL;
	/* Device memory is contiguous: a kernel address at once. */
	if (mpt->type == SHCA_MPT_DM)
		seg->addr = (uintptr_t)(mpt->dm_kaddr + addr);
	seg->iova = mpt->iova;
	seg->page_shift = mpt->page_shift;
}
