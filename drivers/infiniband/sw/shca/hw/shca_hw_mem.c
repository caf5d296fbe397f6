// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the memory protection table and the device's view
 * of memory.
 *
 * A key is an MPT index shifted left by 8, plus an 8-bit tag the consumer
 * may change on each fast registration.  DMA entries translate kernel
 * addresses one to one (the device uses virtual DMA); PBL entries
 * translate through a page list; ODP entries through a page list of the
 * device's own whose pages come and go (shca_hw_odp.c).  Every access names a key and is checked
 * against the entry's protection domain, rights and bounds before a byte
 * moves.  Lookups hold a reference that FREE_MPT waits out; an access
 * also counts itself a user of the translation it checked against, and
 * REREG_MPT waits out the users of the translation it replaced, not those
 * that came after.  Memory windows
 * (shca_hw_mw.c) are entries too: a remote key may name one, and the
 * access then goes through the window to its region.  The entries
 * themselves, their references and what an access takes of one, are
 * shca_hw_mpt.c's, which this unit, the windows and ODP all use.
 */
#include <kunit/visibility.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "shca_hw_int.h"

/**
 * shca_hw_cmd_alloc_mpt() - run ALLOC_MPT
 * @hw: the device, its command mutex held
 * @cmd: the entry's type, PD and access in @cmd->in.mpt_alloc; its key
 *	is returned in @cmd->out.num
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_alloc_mpt(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	const struct shca_hw_mpt_alloc *in = &cmd->in.mpt_alloc;
	struct shca_hw_mpt *mpt;
	u32 index;
	int err;

	lockdep_assert_held(&hw->cmd_mutex);
	if ((in->type != SHCA_MPT_DMA && in->type != SHCA_MPT_PBL &&
	     in->type != SHCA_MPT_DM && in->type != SHCA_MPT_ODP) ||
	    !in->pdn || in->pdn > hw->caps->max_pd ||
	    (in->flags & ~SHCA_MPT_F_ALL) ||
	    ((in->flags & SHCA_MPT_F_FAST_REG) && in->type != SHCA_MPT_PBL) ||
	    (in->type == SHCA_MPT_ODP && !in->max_pages))
		return SHCA_HW_BAD_PARAM;
	mpt = kzalloc(sizeof(*mpt), GFP_KERNEL_ACCOUNT);
	if (!mpt)
		return SHCA_HW_NO_RESOURCES;
	if (in->type == SHCA_MPT_ODP) {
		mpt->odp = shca_hw_odp_alloc(in->max_pages);
		if (!mpt->odp) {
			kfree(mpt);
			return SHCA_HW_NO_RESOURCES;
		}
	}
	refcount_set(&mpt->ref, 1);
	spin_lock_init(&mpt->lock);
	mpt->type = in->type;
	mpt->fast_reg = in->flags & SHCA_MPT_F_FAST_REG;
	mpt->pdn = in->pdn;
	mpt->max_pages = in->max_pages;
	err = xa_alloc_cyclic_irq(&hw->mpts, &index, mpt,
				  XA_LIMIT(1, hw->caps->max_mr), &hw->next_mpt,
				  GFP_KERNEL);
	if (err < 0) {
		shca_hw_odp_free(mpt->odp);
		kfree(mpt);
		return SHCA_HW_NO_RESOURCES;
	}
	mpt->index = index;
	mpt->key = index << SHCA_HW_KEY_TAG_BITS | hw->mpt_tag++;
	cmd->out.num = mpt->key;
	return SHCA_HW_OK;
}

/* Whether a page list describes [iova, iova + length). */
static bool shca_hw_pbl_ok(struct shca_hw *hw, const u64 *pbl, u32 npages,
			   u32 page_shift, u64 iova, u64 length)
{
	return pbl && npages && page_shift >= SHCA_HW_MIN_PAGE_SHIFT &&
	       page_shift <= SHCA_HW_MAX_PAGE_SHIFT && length &&
	       length <= hw->caps->max_mr_size &&
	       (iova & ((1ULL << page_shift) - 1)) + length <=
	       (u64)npages << page_shift;
}

/**
 * shca_hw_cmd_write_mpt() - run WRITE_MPT
 * @hw: the device, its command mutex held
 * @cmd: the entry's key, translation and access in @cmd->in.mpt
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_write_mpt(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	const struct shca_hw_mpt_write *in = &cmd->in.mpt;
	enum shca_hw_status status = SHCA_HW_OK;
	struct shca_hw_mpt *mpt;

	lockdep_assert_held(&hw->cmd_mutex);
	if (in->access & ~SHCA_ACCESS_ALL)
		return SHCA_HW_BAD_PARAM;
	mpt = shca_hw_mpt_get(hw, in->key);
	if (!mpt)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irq(&mpt->lock);
	if (mpt->type == SHCA_MPT_MW)
		status = SHCA_HW_BAD_STATE;
	else if (mpt->type == SHCA_MPT_DM)
		status = shca_hw_dm_map(hw, mpt, in);
	/* A region of no bytes has no pages, and no access reaches it. */
	else if (mpt->type == SHCA_MPT_PBL &&
		 (in->npages > mpt->max_pages ||
		  ((in->length || in->npages) &&
		   !shca_hw_pbl_ok(hw, in->pbl, in->npages, in->page_shift,
				   in->iova, in->length))))
		status = SHCA_HW_BAD_PARAM;
	/* An ODP entry is written once: its page list has its geometry. */
	else if (mpt->type == SHCA_MPT_ODP &&
		 (mpt->valid || in->pbl || in->npages != mpt->max_pages ||
		  !shca_hw_pbl_ok(hw, shca_hw_odp_pages(mpt->odp),
				  in->npages, in->page_shift, in->iova,
				  in->length)))
		status = SHCA_HW_BAD_PARAM;
	if (status == SHCA_HW_OK) {
		mpt->key = in->key;
		mpt->access = in->access;
		mpt->iova = in->iova;
		mpt->length = in->length;
		mpt->pbl = mpt->odp ? shca_hw_odp_pages(mpt->odp) : in->pbl;
		mpt->npages = in->npages;
		mpt->page_shift = in->page_shift;
		mpt->valid = true;
	}
	spin_unlock_irq(&mpt->lock);
	shca_hw_mpt_put(mpt);
	return status;
}

/**
 * shca_hw_cmd_rereg_mpt() - run REREG_MPT
 * @hw: the device, its command mutex not held
 * @cmd: the entry and what changes in @cmd->in.mpt_rereg
 *
 * Rewrites a registered (not fast-registration) PBL entry in place: the key
 * stays.  Lookups after the rewrite see only the new entry; those that
 * took the old translation before it keep using that page list, so a new
 * translation is not done until they are: the command waits them out,
 * with the command mutex dropped, and the driver frees the old list
 * after.  Accesses that began after the rewrite count against the new
 * translation, so a peer that keeps accessing the region cannot hold the
 * command up.  One rewrite of the translation waits at a time: a second
 * while the first still waits is BUSY.  A pass held in the memory access
 * window holds it up too.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_rereg_mpt(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	const struct shca_hw_mpt_rereg *in = &cmd->in.mpt_rereg;
	enum shca_hw_status status = SHCA_HW_OK;
	bool trans = in->flags & SHCA_MPT_REREG_TRANSLATION;
	struct shca_hw_mpt *mpt;
	atomic_t *old = NULL;

	if (!in->flags || (in->flags & ~SHCA_MPT_REREG_ALL) ||
	    ((in->flags & SHCA_MPT_REREG_ACCESS) &&
	     (in->access & ~SHCA_ACCESS_ALL)) ||
	    ((in->flags & SHCA_MPT_REREG_PD) &&
	     (!in->pdn || in->pdn > hw->caps->max_pd)) ||
	    (trans && !shca_hw_pbl_ok(hw, in->pbl, in->npages, in->page_shift,
				      in->iova, in->length)))
		return SHCA_HW_BAD_PARAM;
	mutex_lock(&hw->cmd_mutex);
	mpt = shca_hw_mpt_get(hw, in->key);
	if (!mpt) {
		mutex_unlock(&hw->cmd_mutex);
		return SHCA_HW_BAD_INDEX;
	}
	spin_lock_irq(&mpt->lock);
	if (mpt->type != SHCA_MPT_PBL || mpt->fast_reg || !mpt->valid ||
	    mpt->key != in->key) {
		status = SHCA_HW_BAD_STATE;
	} else if (mpt->mws ||
		   (trans && atomic_read(&mpt->trans_users[!mpt->trans]))) {
		/*
		 * IBTA: a region with windows bound is not re-registered.
		 * Nor is a translation replaced while the one before it is
		 * still being waited out.
		 */
		status = SHCA_HW_BUSY;
	} else {
		if (in->flags & SHCA_MPT_REREG_PD)
			mpt->pdn = in->pdn;
		if (in->flags & SHCA_MPT_REREG_ACCESS)
			mpt->access = in->access;
		if (trans) {
			mpt->iova = in->iova;
			mpt->length = in->length;
			mpt->pbl = in->pbl;
			mpt->npages = in->npages;
			mpt->max_pages = in->npages;
			mpt->page_shift = in->page_shift;
			old = &mpt->trans_users[mpt->trans];
			mpt->trans = !mpt->trans;
		}
	}
	spin_unlock_irq(&mpt->lock);
	mutex_unlock(&hw->cmd_mutex);
	/* Only the accesses that checked against the old translation. */
	if (old)
		wait_var_event(old, !atomic_read(old));
	shca_hw_mpt_put(mpt);
	return status;
}

/*
 * The entry leaves the table under the command mutex; from then on no
 * lookup finds it.  The accesses already in flight are waited out with
 * the mutex dropped: they hold this entry only, and the device's other
 * commands have no reason to wait for them.  A region with windows bound
 * to it stays (BUSY), as a CQ with QPs does; a window goes whether bound
 * or not, and lets go of its region once nothing uses it.
 */
static enum shca_hw_status shca_hw_free_mpt(struct shca_hw *hw, u32 key)
{
	struct shca_hw_mpt *mpt;
	bool busy;

	mutex_lock(&hw->cmd_mutex);
	mpt = xa_load(&hw->mpts, shca_hw_key_index(key));
	if (!mpt) {
		mutex_unlock(&hw->cmd_mutex);
		return SHCA_HW_BAD_INDEX;
	}
	spin_lock_irq(&mpt->lock);
	busy = mpt->mws;
	if (!busy)
		mpt->dying = true;
	spin_unlock_irq(&mpt->lock);
	if (!busy)
		xa_erase_irq(&hw->mpts, mpt->index);
	mutex_unlock(&hw->cmd_mutex);
	if (busy)
		return SHCA_HW_BUSY;
	shca_hw_mpt_put(mpt);
	wait_var_event(&mpt->ref, !refcount_read(&mpt->ref));
	if (mpt->type == SHCA_MPT_MW)
		shca_hw_mw_unbind(mpt);
	shca_hw_dm_unmap(mpt);
	shca_hw_odp_free(mpt->odp);
	kfree_rcu(mpt, rcu);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cmd_free_mpt() - run FREE_MPT
 * @hw: the device, its command mutex not held
 * @cmd: the entry's key in @cmd->in.mpt.key
 *
 * Return: the completion status; BUSY for a region with windows bound.
 */
enum shca_hw_status shca_hw_cmd_free_mpt(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd)
{
	return shca_hw_free_mpt(hw, cmd->in.mpt.key);
}

/**
 * shca_hw_mpt_fini() - free what is left of the MPT at power-off
 * @hw: the device
 *
 * Windows first: then no region has one bound.
 */
void shca_hw_mpt_fini(struct shca_hw *hw)
{
	struct shca_hw_mpt *mpt;
	unsigned long index;

	xa_for_each(&hw->mpts, index, mpt)
		if (mpt->type == SHCA_MPT_MW)
			shca_hw_free_mpt(hw, mpt->key);
	xa_for_each(&hw->mpts, index, mpt)
		shca_hw_free_mpt(hw, mpt->key);
}

/* What shca_hw_mpt_check() found. */
enum shca_hw_mpt_verdict {
	SHCA_HW_MPT_OK,
	SHCA_HW_MPT_DENIED,
	SHCA_HW_MPT_FAULT,
};

/*
 * Check an access and, if it is allowed, take the translation it used.
 * An ODP entry's access whose pages are not all present fills in @fault.
 * A window is not a region: shca_hw_mw_check() checks those.
 */
static enum shca_hw_mpt_verdict
shca_hw_mpt_check(struct shca_hw_mpt *mpt, u32 key, u32 pdn, u64 addr,
		  u64 len, u32 access, struct shca_hw_mem_seg *seg,
		  struct shca_hw_odp_fault *fault)
{
	enum shca_hw_mpt_verdict v = SHCA_HW_MPT_DENIED;
	bool write = access & (SHCA_ACCESS_LOCAL_WRITE |
			       SHCA_ACCESS_REMOTE_WRITE |
			       SHCA_ACCESS_REMOTE_ATOMIC);
	unsigned long flags;

	spin_lock_irqsave(&mpt->lock, flags);
	if (mpt->type == SHCA_MPT_MW || !mpt->valid || mpt->key != key ||
	    mpt->pdn != pdn || (mpt->access & access) != access ||
	    !shca_hw_mpt_covers(mpt, addr, len))
		goto out;
	v = SHCA_HW_MPT_FAULT;
	if (mpt->odp && !shca_hw_odp_check(mpt, addr, len, write, fault))
		goto out;
	v = SHCA_HW_MPT_OK;
	shca_hw_mpt_seg(mpt, addr, len, seg);
out:
	spin_unlock_irqrestore(&mpt->lock, flags);
	return v;
}

/*
 * An access found pages of an ODP entry absent, and holds no page of it.
 * Without @defer, the caller holds no other memory either: it waits for
 * the driver's answer, up to SHCA_HW_ODP_MAX_FAULTS times an access.
 * With it, the requester holds memory for the same message: the fault is
 * raised to the requester, unless @defer denies it.  Returns true when the
 * access checks again.
 */
static bool shca_hw_mem_fault(struct shca_hw *hw,
			      const struct shca_hw_odp_fault *fault,
			      struct shca_hw_odp_defer *defer, u32 *faults)
{
	if (!defer)
		return ++*faults <= SHCA_HW_ODP_MAX_FAULTS &&
		       shca_hw_odp_fault(hw, fault);
	if (!defer->deny) {
		defer->raised = true;
		defer->fault = *fault;
	}
	return false;
}

/**
 * shca_hw_mem_resolve() - check a local scatter/gather list and hold its MRs
 * @hw: the device
 * @pdn: the QP's protection domain
 * @sge: the list
 * @n: its length
 * @access: rights needed beyond local read: SHCA_ACCESS_LOCAL_WRITE or 0
 * @defer: NULL for the requester's own list: a page fault on an ODP entry
 *	releases what the list holds, waits for the driver's answer and
 *	starts over, holding only a reference on the faulting entry.  The
 *	responder's list passes its message's: a fault is raised to the
 *	requester instead (struct shca_hw_odp_defer).
 * @mem: filled in; release it with shca_hw_mem_release()
 *
 * May sleep, for a fault.
 *
 * Return: SHCA_CQE_OK, or SHCA_CQE_LOC_PROT_ERR with nothing held; when
 * @defer was raised, the error is not counted: the access did not fail.
 */
enum shca_hw_cqe_status shca_hw_mem_resolve(struct shca_hw *hw, u32 pdn,
					    const struct shca_hw_sge *sge,
					    u32 n, u32 access,
					    struct shca_hw_odp_defer *defer,
					    struct shca_hw_mem *mem)
{
	struct shca_hw_odp_fault fault;
	enum shca_hw_mpt_verdict v;
	struct shca_hw_mpt *mpt;
	u32 i, faults = 0;

again:
	mem->n = 0;
	mem->total = 0;
	for (i = 0; i < n; i++) {
		if (!sge[i].length)
			continue;
		mpt = shca_hw_mpt_get(hw, sge[i].lkey);
		if (!mpt)
			goto err;
		v = shca_hw_mpt_check(mpt, sge[i].lkey, pdn, sge[i].addr,
				      sge[i].length, access,
				      &mem->seg[mem->n], &fault);
		if (v != SHCA_HW_MPT_OK) {
			shca_hw_mem_release(mem);
			/*
			 * The entry stays referenced while the driver
			 * handles the fault: FREE_MPT waits for it.
			 */
			if (v == SHCA_HW_MPT_FAULT &&
			    shca_hw_mem_fault(hw, &fault, defer, &faults)) {
				shca_hw_mpt_put(mpt);
				goto again;
			}
			shca_hw_mpt_put(mpt);
			if (defer && defer->raised)
				return SHCA_CQE_LOC_PROT_ERR;
			goto err;
		}
		mem->n++;
		mem->total += sge[i].length;
	}
	return SHCA_CQE_OK;
err:
	shca_hw_mem_release(mem);
	shca_hw_count(hw, SHCA_CNT_LOC_PROT_ERR);
	return SHCA_CQE_LOC_PROT_ERR;
}

/**
 * shca_hw_mem_resolve_remote() - check a remote access and hold its MR
 * @hw: the device that owns the memory
 * @pdn: the responder QP's protection domain
 * @qpn: the responder QP, which a type 2 window must be bound to
 * @qp_access: the rights the responder QP grants
 * @rkey: the remote key
 * @addr: the start address
 * @len: bytes
 * @access: the SHCA_ACCESS_REMOTE_* right needed
 * @defer: where a page fault on an ODP entry is raised to the requester,
 *	as for shca_hw_mem_resolve()
 * @mem: filled in; release it with shca_hw_mem_release()
 *
 * Return: true when the access is allowed; false when it is not, or when
 * @defer was raised (then the error is not counted).
 */
bool shca_hw_mem_resolve_remote(struct shca_hw *hw, u32 pdn, u32 qpn,
				u32 qp_access, u32 rkey, u64 addr, u64 len,
				u32 access, struct shca_hw_odp_defer *defer,
				struct shca_hw_mem *mem)
{
	struct shca_hw_odp_fault fault;
	enum shca_hw_mpt_verdict v;
	struct shca_hw_mpt *mpt;
	bool ok;
	u32 faults = 0;

	mem->n = 0;
	mem->total = 0;
	if ((qp_access & access) != access)
		goto err;
	if (!len)
		return true;
again:
	mpt = shca_hw_mpt_get(hw, rkey);
	if (!mpt)
		goto err;
	if (mpt->type == SHCA_MPT_MW) {
		/* The segment holds the window's region, not the window. */
		ok = shca_hw_mw_check(mpt, rkey, pdn, qpn, addr, len, false,
				      access, &mem->seg[0]);
		shca_hw_mpt_put(mpt);
		if (!ok)
			goto err;
		goto done;
	}
	v = shca_hw_mpt_check(mpt, rkey, pdn, addr, len, access,
			      &mem->seg[0], &fault);
	if (v != SHCA_HW_MPT_OK) {
		/* Referenced while the driver handles the fault. */
		if (v == SHCA_HW_MPT_FAULT &&
		    shca_hw_mem_fault(hw, &fault, defer, &faults)) {
			shca_hw_mpt_put(mpt);
			goto again;
		}
		shca_hw_mpt_put(mpt);
		if (defer && defer->raised)
			return false;
		goto err;
	}
done:
	mem->n = 1;
	mem->total = len;
	return true;
err:
	shca_hw_count(hw, SHCA_CNT_REM_ACCESS_ERR);
	return false;
}

/**
 * shca_hw_mem_hold() - take a remote access as a responder does, and keep it
 * @hw: the device that owns the memory
 * @pdn: the protection domain the access is made in
 * @rkey: the remote key
 * @addr: the start address
 * @len: bytes, not zero
 * @access: the SHCA_ACCESS_REMOTE_* right needed
 *
 * For tests: an access in flight for as long as they hold it, counted
 * against the translation it checked as a message's would be.
 *
 * Return: the access, to end with shca_hw_mem_unhold(), or NULL when it
 * is not allowed.
 */
struct shca_hw_mem *shca_hw_mem_hold(struct shca_hw *hw, u32 pdn, u32 rkey,
				     u64 addr, u64 len, u32 access)
{
	struct shca_hw_mem *mem = kzalloc(sizeof(*mem), GFP_KERNEL);

	if (mem && len &&
	    shca_hw_mem_resolve_remote(hw, pdn, 0, access, rkey, addr, len,
				       access, NULL, mem))
		return mem;
	kfree(mem);
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_mem_hold);

/**
 * shca_hw_mem_unhold() - end an access shca_hw_mem_hold() took
 * @mem: the access, or NULL
 */
void shca_hw_mem_unhold(struct shca_hw_mem *mem)
{
	if (!mem)
		return;
	shca_hw_mem_release(mem);
	kfree(mem);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_mem_unhold);

/**
 * shca_hw_mem_flush() - check an RDMA FLUSH's target and carry it out
 * @hw: the device that owns the memory
 * @pdn: the responder QP's protection domain
 * @qpn: the responder QP, which a type 2 window must be bound to
 * @qp_access: the rights the responder QP grants
 * @rkey: the remote key
 * @addr: the start address, for a range
 * @len: bytes, for a range; zero names no bytes, but the key is checked
 * @whole: the memory region level: the key's whole region, whatever
 *	@addr and @len say
 * @access: SHCA_ACCESS_FLUSH_GLOBAL and/or SHCA_ACCESS_FLUSH_PERSISTENT,
 *	as the placement type asks
 *
 * The model's memory is the target's memory: every RDMA WRITE and atomic
 * before the FLUSH on its QP was stored into it, by the responder, before
 * the FLUSH started (the requester runs one WQE to its end before the
 * next).  What is left to do is a full barrier, after which those stores
 * are visible to every CPU and every later access through any key.
 * Persistence goes no further than that: the memory is ordinary RAM.
 *
 * Return: true when the key, the rights and the range allow the FLUSH.
 */
bool shca_hw_mem_flush(struct shca_hw *hw, u32 pdn, u32 qpn, u32 qp_access,
		       u32 rkey, u64 addr, u64 len, bool whole, u32 access)
{
	struct shca_hw_mpt *mpt;
	unsigned long flags;
	bool ok;

	if ((qp_access & access) != access)
		goto err;
	mpt = shca_hw_mpt_get(hw, rkey);
	if (!mpt)
		goto err;
	if (mpt->type == SHCA_MPT_MW) {
		ok = shca_hw_mw_check(mpt, rkey, pdn, qpn, addr, len, whole,
				      access, NULL);
	} else {
		spin_lock_irqsave(&mpt->lock, flags);
		ok = mpt->valid && mpt->key == rkey && mpt->pdn == pdn &&
		     (mpt->access & access) == access &&
		     (whole || shca_hw_mpt_covers(mpt, addr, len));
		spin_unlock_irqrestore(&mpt->lock, flags);
	}
	shca_hw_mpt_put(mpt);
	if (!ok)
		goto err;
	/* Pairs with whatever a reader of the memory orders its loads by. */
	smp_mb();
	return true;
err:
	shca_hw_count(hw, SHCA_CNT_REM_ACCESS_ERR);
	return false;
}

/**
 * shca_hw_mem_inline() - describe an inline payload as memory
 * @mem: filled in
 * @buf: the payload
 * @len: its length
 */
void shca_hw_mem_inline(struct shca_hw_mem *mem, const void *buf, u32 len)
{
	mem->n = len ? 1 : 0;
	mem->total = len;
	mem->seg[0].mpt = NULL;
	mem->seg[0].odp = NULL;
	mem->seg[0].addr = (uintptr_t)buf;
	mem->seg[0].len = len;
	mem->seg[0].pbl = NULL;
}

/**
 * shca_hw_mem_release() - drop the MRs a resolved list holds
 * @mem: the list
 */
void shca_hw_mem_release(struct shca_hw_mem *mem)
{
	u32 i;

	for (i = 0; i < mem->n; i++) {
		struct shca_hw_mem_seg *s = &mem->seg[i];

		if (s->odp)
			shca_hw_odp_put(s->odp);
		if (!s->mpt)
			continue;
		/* The last user of a replaced translation frees REREG_MPT. */
		if (atomic_dec_and_test(&s->mpt->trans_users[s->trans]))
			wake_up_var(&s->mpt->trans_users[s->trans]);
		shca_hw_mpt_put(s->mpt);
	}
	mem->n = 0;
	mem->total = 0;
}

/*
 * Translate @len bytes at @addr of a resolved segment, with the translation
 * it was checked against: returns the kernel address and shortens *@len to
 * what is contiguous there.  Pages that follow each other in the kernel's
 * map are one run, up to SHCA_HW_COPY_YIELD bytes: one copy moves it, and
 * no walk goes further than a copy takes.  @len must not reach past the
 * segment.
 */
static u8 *shca_hw_seg_translate(const struct shca_hw_mem_seg *s, u64 addr,
				 u64 *len)
{
	u64 page_size, off, in_page, run, idx;

	if (!s->pbl)
		return (u8 *)(uintptr_t)addr;
	page_size = 1ULL << s->page_shift;
	off = (s->iova & (page_size - 1)) + (addr - s->iova);
	in_page = off & (page_size - 1);
	idx = off >> s->page_shift;
	run = page_size - in_page;
	while (run < *len && run < SHCA_HW_COPY_YIELD &&
	       s->pbl[idx + 1] == s->pbl[idx] + page_size) {
		idx++;
		run += page_size;
	}
	*len = min(*len, run);
	return (u8 *)(uintptr_t)(s->pbl[off >> s->page_shift] + in_page);
}

/* Walks a resolved list: which segment, and how far into it. */
struct shca_hw_mem_cursor {
	struct shca_hw_mem *mem;
	u32 seg;
	u64 off;
};

static void shca_hw_cursor_seek(struct shca_hw_mem_cursor *c, u64 off)
{
	c->seg = 0;
	c->off = off;
	while (c->seg < c->mem->n && c->off >= c->mem->seg[c->seg].len) {
		c->off -= c->mem->seg[c->seg].len;
		c->seg++;
	}
}

/* The next contiguous piece, at most @max bytes. */
static u8 *shca_hw_cursor_next(struct shca_hw_mem_cursor *c, u64 *max)
{
	struct shca_hw_mem_seg *s = &c->mem->seg[c->seg];
	u64 len = min_t(u64, *max, s->len - c->off);
	u8 *p = shca_hw_seg_translate(s, s->addr + c->off, &len);

	*max = len;
	return p;
}

static void shca_hw_cursor_advance(struct shca_hw_mem_cursor *c, u64 len)
{
	c->off += len;
	if (c->off == c->mem->seg[c->seg].len) {
		c->seg++;
		c->off = 0;
	}
}

/*
 * One contiguous piece.  memcpy() where the two do not overlap: it is the
 * kernel's fastest copy, and memmove() may take a string instruction that
 * a CPU without fast short REP MOVSB (or an emulator) runs byte by byte.
 * A message between two places of one buffer may overlap itself: there,
 * memmove().
 */
static void shca_hw_copy_piece(u8 *dp, const u8 *sp, u64 n)
{
	if (dp + n <= sp || sp + n <= dp)
		memcpy(dp, sp, n);
	else
		memmove(dp, sp, n);
}

/**
 * shca_hw_mem_copy() - move bytes between two resolved lists
 * @dst: the destination
 * @dst_off: where in @dst to start
 * @src: the source, from its start
 * @len: bytes; both lists must be long enough
 *
 * May sleep: the execution units call it with no spinlock held.
 */
void shca_hw_mem_copy(struct shca_hw_mem *dst, u64 dst_off,
		      struct shca_hw_mem *src, u64 len)
{
	struct shca_hw_mem_cursor d = { .mem = dst };
	struct shca_hw_mem_cursor s = { .mem = src };
	u64 n, m, since = 0;
	u8 *dp, *sp;

	shca_hw_cursor_seek(&d, dst_off);
	shca_hw_cursor_seek(&s, 0);
	while (len) {
		n = len;
		dp = shca_hw_cursor_next(&d, &n);
		m = n;
		sp = shca_hw_cursor_next(&s, &m);
		shca_hw_copy_piece(dp, sp, m);
		shca_hw_cursor_advance(&d, m);
		shca_hw_cursor_advance(&s, m);
		len -= m;
		/* A message may be 2 GiB: the copy yields now and then. */
		since += m;
		if (since >= SHCA_HW_COPY_YIELD) {
			since = 0;
			cond_resched();
		}
	}
}

/**
 * shca_hw_mem_write() - copy a small kernel buffer into a resolved list
 * @dst: the destination
 * @dst_off: where in @dst to start
 * @buf: the bytes
 * @len: how many; @dst must be long enough
 */
void shca_hw_mem_write(struct shca_hw_mem *dst, u64 dst_off,
		       const void *buf, u32 len)
{
	struct shca_hw_mem_cursor d = { .mem = dst };
	const u8 *sp = buf;
	u64 n;
	u8 *dp;

	shca_hw_cursor_seek(&d, dst_off);
	while (len) {
		n = len;
		dp = shca_hw_cursor_next(&d, &n);
		memcpy(dp, sp, n);
		shca_hw_cursor_advance(&d, n);
		sp += n;
		len -= n;
	}
}

/**
 * shca_hw_mem_ptr() - a kernel pointer to a small piece of a resolved list
 * @mem: the list
 * @off: where in it
 * @len: bytes that must be contiguous
 *
 * Return: the pointer, or NULL when the bytes are not contiguous.
 */
void *shca_hw_mem_ptr(struct shca_hw_mem *mem, u64 off, u32 len)
{
	struct shca_hw_mem_cursor c = { .mem = mem };
	u64 n = len;
	u8 *p;

	shca_hw_cursor_seek(&c, off);
	if (c.seg >= mem->n)
		return NULL;
	p = shca_hw_cursor_next(&c, &n);
	return n == len ? p : NULL;
}

/**
 * shca_hw_mpt_invalidate() - invalidate a key, locally or on a peer's behalf
 * @hw: the device that owns the key
 * @pdn: the protection domain of the QP asking
 * @qpn: the QP asking, locally or as the peer's responder
 * @key: the key
 * @flags: SHCA_HW_INV_REMOTE: a peer asks (send with invalidate): only
 *	fast-registration entries and type 2 windows bound to @qpn qualify,
 *	as the IBTA allows; locally, any PBL entry or type 2 window does.
 *	SHCA_HW_INV_MW_ONLY: only a type 2 window does.
 *
 * Return: true when the key was valid and is now invalid.
 */
bool shca_hw_mpt_invalidate(struct shca_hw *hw, u32 pdn, u32 qpn, u32 key,
			    u32 flags)
{
	struct shca_hw_mpt *mpt = shca_hw_mpt_get(hw, key);
	bool remote = flags & SHCA_HW_INV_REMOTE;
	unsigned long irqflags;
	bool ok;

	if (!mpt)
		return false;
	if (mpt->type == SHCA_MPT_MW) {
		ok = shca_hw_mw_invalidate(mpt, pdn, qpn, key, remote);
		shca_hw_mpt_put(mpt);
		return ok;
	}
	spin_lock_irqsave(&mpt->lock, irqflags);
	ok = mpt->type == SHCA_MPT_PBL && mpt->valid && mpt->key == key &&
	     mpt->pdn == pdn && (!remote || mpt->fast_reg) &&
	     !(flags & SHCA_HW_INV_MW_ONLY);
	if (ok)
		mpt->valid = false;
	spin_unlock_irqrestore(&mpt->lock, irqflags);
	shca_hw_mpt_put(mpt);
	return ok;
}

/**
 * shca_hw_mpt_fast_reg() - execute a REG_MR WQE
 * @hw: the device
 * @pdn: the QP's protection domain
 * @wqe: the WQE
 *
 * Return: true when the entry is now valid with the WQE's translation.
 */
bool shca_hw_mpt_fast_reg(struct shca_hw *hw, u32 pdn,
			  const struct shca_hw_send_wqe *wqe)
{
	struct shca_hw_mpt *mpt = shca_hw_mpt_get(hw, wqe->reg.key);
	u32 shift = wqe->reg.page_shift;
	unsigned long flags;
	bool ok;

	if (!mpt)
		return false;
	spin_lock_irqsave(&mpt->lock, flags);
	ok = mpt->type == SHCA_MPT_PBL && !mpt->valid && mpt->pdn == pdn &&
	     !(wqe->reg.access & ~SHCA_ACCESS_ALL) && wqe->reg.pbl &&
	     wqe->reg.npages && wqe->reg.npages <= mpt->max_pages &&
	     shift >= SHCA_HW_MIN_PAGE_SHIFT &&
	     shift <= SHCA_HW_MAX_PAGE_SHIFT &&
	     wqe->reg.length <= hw->caps->max_mr_size &&
	     (wqe->reg.iova & ((1ULL << shift) - 1)) + wqe->reg.length <=
	     (u64)wqe->reg.npages << shift;
	if (ok) {
		mpt->key = wqe->reg.key;
		mpt->access = wqe->reg.access;
		mpt->iova = wqe->reg.iova;
		mpt->length = wqe->reg.length;
		mpt->pbl = (const u64 *)(uintptr_t)wqe->reg.pbl;
		mpt->npages = wqe->reg.npages;
		mpt->page_shift = shift;
		mpt->valid = true;
	}
	spin_unlock_irqrestore(&mpt->lock, flags);
	shca_hw_mpt_put(mpt);
	return ok;
}
