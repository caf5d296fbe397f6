// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: on-demand paging.
 *
 * An ODP entry of the memory protection table has a page list of the
 * device's own, in the same form as a PBL entry's (the kernel address of
 * each page), plus the rights the driver granted on each page: none (the
 * page is absent), read, or read and write.  The entry starts with every
 * page absent.  An access that needs a page it finds absent, or writes a
 * page it may only read, raises a page fault to the driver's handler
 * (shca_hw_set_odp_handler()) and waits for the answer, holding no page of
 * any entry's: the handler makes the pages present with MAP_ODP and the
 * access checks again, or the handler fails and so does the access.  A
 * responder, whose requester holds pages for the same message, raises its
 * faults to the requester instead (struct shca_hw_odp_defer), which
 * answers them once it holds nothing (shca_hw_odp_answer()).
 * INVALIDATE_ODP makes pages absent and waits out the accesses that found
 * pages present before it, so that when it returns the device uses none
 * of the pages it named; the next access to them faults again.  A
 * prefetch is MAP_ODP before any access asked.
 *
 * Neither command takes the command mutex: the driver issues them from
 * its fault handler and its MMU notifier, and the latter may run under
 * memory reclaim, under any command.  Lock order: shca_hw_mpt.lock, a
 * leaf, guards the rights; nothing is held while a fault is handled or
 * an invalidation waits.
 */
#include <kunit/visibility.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "shca_hw_int.h"

/**
 * struct shca_hw_odp - the paging state of an ODP entry
 * @npages: pages in its page list
 * @pages: the kernel address of each page, as a PBL entry's list
 * @rights: SHCA_ODP_PAGE_* of each page, 0 when absent; under
 *	shca_hw_mpt.lock
 * @users: resolved segments holding pages of the entry present: accesses
 *	in flight, which INVALIDATE_ODP waits out
 */
struct shca_hw_odp {
	u32 npages;
	u64 *pages;
	u8 *rights;
	atomic_t users;
};

/**
 * shca_hw_odp_alloc() - paging state for a new ODP entry, every page absent
 * @npages: pages in its page list
 *
 * Return: the state, or NULL.
 */
struct shca_hw_odp *shca_hw_odp_alloc(u32 npages)
{
	struct shca_hw_odp *odp;

	if (!npages)
		return NULL;
	odp = kzalloc(sizeof(*odp), GFP_KERNEL_ACCOUNT);
	if (!odp)
		return NULL;
	odp->npages = npages;
	odp->pages = kvcalloc(npages, sizeof(*odp->pages), GFP_KERNEL_ACCOUNT);
	odp->rights = kvcalloc(npages, sizeof(*odp->rights),
			       GFP_KERNEL_ACCOUNT);
	if (!odp->pages || !odp->rights) {
		shca_hw_odp_free(odp);
		return NULL;
	}
	atomic_set(&odp->users, 0);
	return odp;
}

/**
 * shca_hw_odp_free() - free an ODP entry's paging state
 * @odp: the state, with no user left; NULL is allowed
 */
void shca_hw_odp_free(struct shca_hw_odp *odp)
{
	if (!odp)
		return;
	WARN_ON_ONCE(atomic_read(&odp->users));
	kvfree(odp->pages);
	kvfree(odp->rights);
	kfree(odp);
}

/**
 * shca_hw_odp_pages() - an ODP entry's page list
 * @odp: the state
 *
 * Return: the list, as a resolved segment translates through it.
 */
const u64 *shca_hw_odp_pages(struct shca_hw_odp *odp)
{
	return odp->pages;
}

/**
 * shca_hw_odp_check() - whether an access finds its pages present
 * @mpt: the ODP entry, its bounds already checked
 * @addr: the access's first address
 * @len: its bytes, not zero
 * @write: the access writes
 * @fault: when a page is missing, filled in with the fault to raise
 *
 * When the pages are present, the caller becomes a user of the entry's
 * pages until shca_hw_odp_put().
 *
 * Return: true when every page is present with the rights needed.
 */
bool shca_hw_odp_check(struct shca_hw_mpt *mpt, u64 addr, u64 len,
		       bool write, struct shca_hw_odp_fault *fault)
{
	struct shca_hw_odp *odp = mpt->odp;
	u8 need = write ? SHCA_ODP_PAGE_WRITE : SHCA_ODP_PAGE_READ;
	u64 mask = (1ULL << mpt->page_shift) - 1;
	u64 off = (mpt->iova & mask) + (addr - mpt->iova);
	u32 first = off >> mpt->page_shift;
	u32 last = (off + len - 1) >> mpt->page_shift;
	u32 i;

	lockdep_assert_held(&mpt->lock);
	for (i = first; i <= last; i++) {
		if ((odp->rights[i] & need) == need)
			continue;
		fault->key = mpt->key;
		fault->first = i;
		fault->npages = last - i + 1;
		fault->write = write;
		return false;
	}
	atomic_inc(&odp->users);
	return true;
}

/**
 * shca_hw_odp_put() - an access in flight is done with an entry's pages
 * @odp: the entry's state
 */
void shca_hw_odp_put(struct shca_hw_odp *odp)
{
	if (atomic_dec_and_test(&odp->users))
		wake_up_var(&odp->users);
}

/**
 * shca_hw_set_odp_handler() - connect the driver's page fault handler
 * @hw: the device
 * @fn: the handler, or NULL to disconnect it: faults then fail
 * @ctx: its argument
 *
 * The driver disconnects it only when no ODP entry is left.
 */
void shca_hw_set_odp_handler(struct shca_hw *hw, shca_hw_odp_fault_fn fn,
			     void *ctx)
{
	WRITE_ONCE(hw->odp_ctx, ctx);
	/* The context before the handler, for shca_hw_odp_fault(). */
	smp_store_release(&hw->odp_handler, fn);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_set_odp_handler);

/**
 * shca_hw_odp_fault() - raise a page fault to the driver and wait for it
 * @hw: the device
 * @f: the fault
 *
 * The caller holds no lock but its execution unit's mutexes, a reference
 * on the faulting entry (so FREE_MPT waits for the handler) and no page of
 * that entry.
 *
 * Return: true when the driver answered with the pages: the access checks
 * again.
 */
bool shca_hw_odp_fault(struct shca_hw *hw, const struct shca_hw_odp_fault *f)
{
	/* Pairs with shca_hw_set_odp_handler(): the context is set. */
	shca_hw_odp_fault_fn fn = smp_load_acquire(&hw->odp_handler);

	might_sleep();
	shca_hw_count(hw, SHCA_CNT_ODP_FAULTS);
	if (!fn)
		return false;
	return !fn(READ_ONCE(hw->odp_ctx), f);
}

/* The ODP entry a command or a fault names, referenced, or NULL. */
static struct shca_hw_mpt *shca_hw_odp_entry(struct shca_hw *hw, u32 key)
{
	struct shca_hw_mpt *mpt = shca_hw_mpt_get(hw, key);

	if (mpt && (mpt->type != SHCA_MPT_ODP || mpt->key != key)) {
		shca_hw_mpt_put(mpt);
		return NULL;
	}
	return mpt;
}

/**
 * shca_hw_odp_answer() - answer a page fault a responder raised
 * @hw: the responder's device
 * @f: the fault (struct shca_hw_odp_defer)
 *
 * The requester calls it holding no memory of the message.  The entry may
 * have gone since the responder looked: then the fault fails.  It is held
 * while the driver handles the fault, as shca_hw_odp_fault() asks.
 *
 * Return: true when the driver answered with the pages.
 */
bool shca_hw_odp_answer(struct shca_hw *hw, const struct shca_hw_odp_fault *f)
{
	struct shca_hw_mpt *mpt = shca_hw_odp_entry(hw, f->key);
	bool answered;

	if (!mpt)
		return false;
	answered = shca_hw_odp_fault(hw, f);
	shca_hw_mpt_put(mpt);
	return answered;
}

/**
 * shca_hw_cmd_map_odp() - run MAP_ODP
 * @hw: the device
 * @cmd: the entry and the pages it is given in @cmd->in.odp_map
 *
 * Never the command mutex: the driver issues it from its page fault
 * handler, which may run under any command's allocation.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_map_odp(struct shca_hw *hw,
					struct shca_hw_cmd *cmd)
{
	const struct shca_hw_odp_map *in = &cmd->in.odp_map;
	struct shca_hw_odp *odp;
	struct shca_hw_mpt *mpt;
	u64 mask, addr;
	u32 i;

	mpt = shca_hw_odp_entry(hw, in->key);
	if (!mpt)
		return SHCA_HW_BAD_INDEX;
	odp = mpt->odp;
	mask = (1ULL << mpt->page_shift) - 1;
	if (!in->pages || !in->npages || in->first >= odp->npages ||
	    in->npages > odp->npages - in->first)
		goto bad;
	for (i = 0; i < in->npages; i++) {
		addr = in->pages[i] & ~SHCA_ODP_PAGE_RIGHTS;
		if (in->pages[i] &&
		    (!addr || (addr & mask) ||
		     !(in->pages[i] & SHCA_ODP_PAGE_READ)))
			goto bad;
	}
	spin_lock_irq(&mpt->lock);
	for (i = 0; i < in->npages; i++) {
		if (!in->pages[i])
			continue;
		odp->pages[in->first + i] = in->pages[i] & ~SHCA_ODP_PAGE_RIGHTS;
		odp->rights[in->first + i] = in->pages[i] & SHCA_ODP_PAGE_RIGHTS;
	}
	spin_unlock_irq(&mpt->lock);
	shca_hw_mpt_put(mpt);
	return SHCA_HW_OK;
bad:
	shca_hw_mpt_put(mpt);
	return SHCA_HW_BAD_PARAM;
}

/**
 * shca_hw_cmd_invalidate_odp() - run INVALIDATE_ODP
 * @hw: the device
 * @cmd: the entry and the pages it loses in @cmd->in.odp_range
 *
 * Never the command mutex: the driver issues it from its MMU notifier,
 * which may run under any command's allocation.  Waits out the accesses
 * in flight that hold pages of the entry.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_invalidate_odp(struct shca_hw *hw,
					       struct shca_hw_cmd *cmd)
{
	const struct shca_hw_odp_range *in = &cmd->in.odp_range;
	struct shca_hw_odp *odp;
	struct shca_hw_mpt *mpt;
	u32 i, end;

	shca_hw_count(hw, SHCA_CNT_ODP_INVALIDATIONS);
	mpt = shca_hw_odp_entry(hw, in->key);
	if (!mpt)
		return SHCA_HW_BAD_INDEX;
	odp = mpt->odp;
	end = in->first < odp->npages ?
	      in->first + min(in->npages, odp->npages - in->first) : 0;
	spin_lock_irq(&mpt->lock);
	for (i = in->first; i < end; i++)
		odp->rights[i] = 0;
	spin_unlock_irq(&mpt->lock);
	/*
	 * An access that found pages present did so under the lock, before
	 * the loop above, and counted itself then: waiting out every user,
	 * of these pages or others, waits out the ones that matter.
	 */
	wait_var_event(&odp->users, !atomic_read(&odp->users));
	shca_hw_mpt_put(mpt);
	return SHCA_HW_OK;
}

/**
 * shca_hw_odp_users() - accesses in flight holding pages of an ODP entry
 * @hw: the device
 * @key: the entry's key
 *
 * Return: the count INVALIDATE_ODP would wait out now, or -ENOENT.
 */
int shca_hw_odp_users(struct shca_hw *hw, u32 key)
{
	struct shca_hw_mpt *mpt = shca_hw_odp_entry(hw, key);
	int users;

	if (!mpt)
		return -ENOENT;
	users = atomic_read(&mpt->odp->users);
	shca_hw_mpt_put(mpt);
	return users;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_odp_users);

