// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: memory windows.
 *
 * A window is an MPT entry (SHCA_MPT_MW) that ALLOC_MW creates unbound.
 * A BIND_MW WQE, executed by the requester in send queue order, makes it
 * a range of a region with rights of its own and gives it a new key: the
 * same index, the variant byte the WQE names.  A remote key that names a
 * bound window is checked against the window's rights and range and then
 * translated by its region, whose translation it takes at the time of the
 * access, so an invalidated or re-registered region fails the access.
 *
 * Type 1 windows belong to their protection domain: any QP of it binds
 * them again, and a zero-length bind unbinds them; LOCAL_INV and
 * SEND_WITH_INV do not.  Type 2 windows (2B) are bound to a QP: only it
 * takes remote accesses and SEND_WITH_INV through them, a bound one is
 * not bound again before it is invalidated, and LOCAL_INV from a QP of
 * its protection domain, a SEND_WITH_INV arriving at its QP, or FREE_MPT
 * invalidates it.  A type 2 window may be zero-based: its addresses start
 * at 0, wherever in the region it lies.  A bind names a type 2 window
 * that is not bound by any key of its index, the consumer's choice of
 * the last bind's variant included.
 *
 * A bound window holds a reference to its region and counts in its mws:
 * FREE_MPT and REREG_MPT of the region are refused (BUSY) until no window
 * is bound to it.  A type 2 window bound to a QP carries SHCA_HW_MPT_QP_MARK
 * in the MPT table: when the QP is destroyed, its windows are invalidated
 * before its QPN can be handed out again, so a new QP of that number never
 * takes accesses through an old QP's window.
 *
 * Lock order: the command mutex, a window's lock, its region's lock, the
 * MPT table's lock.
 */
#include <linux/array_size.h>
#include <linux/slab.h>

#include "shca_hw_int.h"

/* The SHCA_BIND_* rights of a WQE the device knows, and its own bit for each */
static const struct {
	u32 bind;
	u32 access;
} shca_hw_mw_rights[] = {
	{ SHCA_BIND_REMOTE_WRITE, SHCA_ACCESS_REMOTE_WRITE },
	{ SHCA_BIND_REMOTE_READ, SHCA_ACCESS_REMOTE_READ },
	{ SHCA_BIND_REMOTE_ATOMIC, SHCA_ACCESS_REMOTE_ATOMIC },
	{ SHCA_BIND_FLUSH_GLOBAL, SHCA_ACCESS_FLUSH_GLOBAL },
	{ SHCA_BIND_FLUSH_PERSISTENT, SHCA_ACCESS_FLUSH_PERSISTENT },
	/* Local write means nothing for a window: accepted, dropped. */
	{ SHCA_BIND_LOCAL_WRITE, 0 },
	/* Not a right: shca_hw_mw_bind() reads it from the WQE. */
	{ SHCA_BIND_ZERO_BASED, 0 },
};

/* A bind's rights as SHCA_ACCESS_* bits; false for a right it lacks. */
static bool shca_hw_mw_access(u32 bind, u32 *access)
{
	u32 i;

	*access = 0;
	for (i = 0; i < ARRAY_SIZE(shca_hw_mw_rights); i++) {
		if (bind & shca_hw_mw_rights[i].bind) {
			*access |= shca_hw_mw_rights[i].access;
			bind &= ~shca_hw_mw_rights[i].bind;
		}
	}
	return !bind;
}

/**
 * shca_hw_cmd_alloc_mw() - run ALLOC_MW: a new, unbound window
 * @hw: the device, its command mutex held
 * @cmd: the command; its out.num gets the window's key
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_alloc_mw(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd)
{
	const struct shca_hw_mw_alloc *in = &cmd->in.mw_alloc;
	struct shca_hw_mpt *mw;
	u32 index;
	int err;

	lockdep_assert_held(&hw->cmd_mutex);
	if ((in->type != SHCA_MW_TYPE_1 && in->type != SHCA_MW_TYPE_2) ||
	    !in->pdn || in->pdn > hw->caps->max_pd)
		return SHCA_HW_BAD_PARAM;
	mw = kzalloc(sizeof(*mw), GFP_KERNEL_ACCOUNT);
	if (!mw)
		return SHCA_HW_NO_RESOURCES;
	refcount_set(&mw->ref, 1);
	spin_lock_init(&mw->lock);
	mw->type = SHCA_MPT_MW;
	mw->mw_type = in->type;
	mw->pdn = in->pdn;
	err = xa_alloc_cyclic_irq(&hw->mpts, &index, mw,
				  XA_LIMIT(1, hw->caps->max_mr), &hw->next_mpt,
				  GFP_KERNEL);
	if (err < 0) {
		kfree(mw);
		return SHCA_HW_NO_RESOURCES;
	}
	mw->index = index;
	mw->key = index << SHCA_HW_KEY_TAG_BITS | hw->mpt_tag++;
	cmd->out.num = mw->key;
	return SHCA_HW_OK;
}

/* Let go of the region, under the window's lock; returns it to put. */
static struct shca_hw_mpt *shca_hw_mw_detach(struct shca_hw_mpt *mw)
{
	struct shca_hw_mpt *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	mw->valid = false;
	mw->mr = NULL;
	mw->qpn = 0;
	if (mr) {
		spin_lock_nested(&mr->lock, SINGLE_DEPTH_NESTING);
		mr->mws--;
		spin_unlock(&mr->lock);
	}
	return mr;
}

/*
 * Whether @mr, its lock held, takes a window of @rights over
 * [addr, addr + len) for a QP of @pdn.  An ODP region takes none: an
 * access through a window finds its region's pages present, always.
 */
static bool shca_hw_mw_region_ok(const struct shca_hw_mpt *mr, u32 key,
				 u32 pdn, u64 addr, u64 len, u32 rights)
{
	return mr->type != SHCA_MPT_MW && mr->type != SHCA_MPT_ODP &&
	       mr->valid && !mr->dying &&
	       mr->key == key && mr->pdn == pdn &&
	       (mr->access & SHCA_ACCESS_MW_BIND) &&
	       (!(rights & (SHCA_ACCESS_REMOTE_WRITE |
			    SHCA_ACCESS_REMOTE_ATOMIC)) ||
		(mr->access & SHCA_ACCESS_LOCAL_WRITE)) &&
	       shca_hw_mpt_covers(mr, addr, len);
}

/**
 * shca_hw_mw_bind() - execute a BIND_MW WQE
 * @hw: the device
 * @pdn: the QP's protection domain
 * @qpn: the QP, which a type 2 window is bound to
 * @wqe: the WQE
 *
 * The window and the region must be of the QP's protection domain, the
 * region valid with SHCA_ACCESS_MW_BIND and covering the range, and a type
 * 2 window not bound already.  A zero-length bind of a type 1 window
 * unbinds it; either way the window takes the WQE's new key.
 *
 * Return: SHCA_CQE_OK, or SHCA_CQE_MW_BIND_ERR with nothing changed.
 */
u8 shca_hw_mw_bind(struct shca_hw *hw, u32 pdn, u32 qpn,
		   const struct shca_hw_send_wqe *wqe)
{
	bool zb = wqe->bind.access & SHCA_BIND_ZERO_BASED;
	struct shca_hw_mpt *mw, *mr = NULL, *old = NULL;
	u8 status = SHCA_CQE_MW_BIND_ERR;
	unsigned long flags;
	bool unbind, ok;
	u32 rights;

	if (shca_hw_key_index(wqe->bind.new_key) !=
	    shca_hw_key_index(wqe->bind.mw_key) ||
	    !shca_hw_mw_access(wqe->bind.access, &rights))
		return status;
	mw = shca_hw_mpt_get(hw, wqe->bind.mw_key);
	if (!mw)
		return status;
	/* IBTA o10-36.2.2: a type 1 window is never zero-based. */
	if (mw->type != SHCA_MPT_MW || (zb && mw->mw_type == SHCA_MW_TYPE_1))
		goto out;
	unbind = !wqe->bind.length && mw->mw_type == SHCA_MW_TYPE_1;
	if (!unbind) {
		/* On success, this reference becomes the window's. */
		mr = shca_hw_mpt_get(hw, wqe->bind.mr_lkey);
		if (!mr)
			goto out;
	}
	spin_lock_irqsave(&mw->lock, flags);
	if (mw->mw_type == SHCA_MW_TYPE_2 ? mw->valid :
	    mw->key != wqe->bind.mw_key)
		goto unlock;
	if (mw->pdn != pdn)
		goto unlock;
	if (mr) {
		spin_lock_nested(&mr->lock, SINGLE_DEPTH_NESTING);
		ok = shca_hw_mw_region_ok(mr, wqe->bind.mr_lkey, pdn,
					  wqe->bind.addr, wqe->bind.length,
					  rights);
		if (ok)
			mr->mws++;
		spin_unlock(&mr->lock);
		if (!ok)
			goto unlock;
	}
	old = shca_hw_mw_detach(mw);
	mw->key = wqe->bind.new_key;
	if (mr) {
		mw->mr = mr;
		mw->access = rights;
		mw->iova = zb ? 0 : wqe->bind.addr;
		mw->mr_addr = wqe->bind.addr;
		mw->length = wqe->bind.length;
		mw->qpn = mw->mw_type == SHCA_MW_TYPE_2 ? qpn : 0;
		mw->valid = true;
		mr = NULL;
		if (mw->qpn) {
			/* Interrupts are off: the table's lock is irqsafe. */
			xa_lock(&hw->mpts);
			__xa_set_mark(&hw->mpts, mw->index,
				      SHCA_HW_MPT_QP_MARK);
			xa_unlock(&hw->mpts);
		}
	}
	status = SHCA_CQE_OK;
unlock:
	spin_unlock_irqrestore(&mw->lock, flags);
out:
	if (old)
		shca_hw_mpt_put(old);
	if (mr)
		shca_hw_mpt_put(mr);
	shca_hw_mpt_put(mw);
	return status;
}

/**
 * shca_hw_mw_check() - check a remote access through a window
 * @mw: the window, referenced
 * @key: the remote key
 * @pdn: the responder QP's protection domain
 * @qpn: the responder QP
 * @addr: the start address, in the window's address space
 * @len: bytes
 * @whole: the window's whole range, whatever @addr and @len say (FLUSH)
 * @access: the rights needed
 * @seg: filled in with the region's translation and a reference to the
 *	region when the access is allowed; NULL when only the check matters
 *
 * Return: true when the window, bound, allows the access and its region
 * still covers the window's range.
 */
bool shca_hw_mw_check(struct shca_hw_mpt *mw, u32 key, u32 pdn, u32 qpn,
		      u64 addr, u64 len, bool whole, u32 access,
		      struct shca_hw_mem_seg *seg)
{
	struct shca_hw_mpt *mr;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&mw->lock, flags);
	ok = mw->valid && mw->key == key && mw->pdn == pdn &&
	     (mw->mw_type == SHCA_MW_TYPE_1 || mw->qpn == qpn) &&
	     (mw->access & access) == access &&
	     (whole || (addr >= mw->iova && len <= mw->length &&
			addr - mw->iova <= mw->length - len));
	if (ok) {
		mr = mw->mr;
		spin_lock_nested(&mr->lock, SINGLE_DEPTH_NESTING);
		ok = mr->valid &&
		     shca_hw_mpt_covers(mr, mw->mr_addr, mw->length);
		if (ok && seg) {
			/* The window's reference keeps the region alive. */
			refcount_inc(&mr->ref);
			shca_hw_mpt_seg(mr, mw->mr_addr + (addr - mw->iova),
					len, seg);
		}
		spin_unlock(&mr->lock);
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	return ok;
}

/**
 * shca_hw_mw_invalidate() - LOCAL_INV or SEND_WITH_INV of a window
 * @mw: the window, referenced
 * @key: the key to invalidate
 * @pdn: the protection domain of the QP asking
 * @qpn: the QP asking; for @remote, the responder the message arrived at
 * @remote: SEND_WITH_INV: the window must be bound to @qpn
 *
 * Only a bound type 2 window can be invalidated.
 *
 * Return: true when the window was bound with @key and now is not.
 */
bool shca_hw_mw_invalidate(struct shca_hw_mpt *mw, u32 pdn, u32 qpn, u32 key,
			   bool remote)
{
	struct shca_hw_mpt *mr = NULL;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&mw->lock, flags);
	ok = mw->mw_type == SHCA_MW_TYPE_2 && mw->valid && mw->key == key &&
	     mw->pdn == pdn && (!remote || mw->qpn == qpn);
	if (ok)
		mr = shca_hw_mw_detach(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	if (mr)
		shca_hw_mpt_put(mr);
	return ok;
}

/**
 * shca_hw_mw_qp_gone() - invalidate the type 2 windows bound to a QP
 * @hw: the device, its command mutex held
 * @qpn: the QP, fenced: it binds no window and takes no access now
 *
 * Called before the QPN is free again.  The command mutex keeps every
 * entry this finds in the table: only FREE_MPT, under it, takes one out.
 * A mark left on a window invalidated some other way goes too.
 */
void shca_hw_mw_qp_gone(struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_mpt *mw, *mr;
	unsigned long index;
	bool stale;

	lockdep_assert_held(&hw->cmd_mutex);
	xa_for_each_marked(&hw->mpts, index, mw, SHCA_HW_MPT_QP_MARK) {
		mr = NULL;
		spin_lock_irq(&mw->lock);
		stale = !mw->valid || mw->qpn == qpn;
		if (mw->valid && mw->qpn == qpn)
			mr = shca_hw_mw_detach(mw);
		if (stale) {
			xa_lock(&hw->mpts);
			__xa_clear_mark(&hw->mpts, index, SHCA_HW_MPT_QP_MARK);
			xa_unlock(&hw->mpts);
		}
		spin_unlock_irq(&mw->lock);
		if (mr)
			shca_hw_mpt_put(mr);
	}
}

/**
 * shca_hw_mw_unbind() - let a window that leaves the table go of its region
 * @mw: the window, no longer in the table and unused
 */
void shca_hw_mw_unbind(struct shca_hw_mpt *mw)
{
	struct shca_hw_mpt *mr;
	unsigned long flags;

	spin_lock_irqsave(&mw->lock, flags);
	mr = shca_hw_mw_detach(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	if (mr)
		shca_hw_mpt_put(mr);
}
