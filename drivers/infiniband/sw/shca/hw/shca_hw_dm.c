// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the device memory.
 *
 * The device has caps->max_dm_size bytes of on-chip memory.  The model
 * keeps it in one physically contiguous, page-aligned block of kernel
 * memory, which the driver maps into processes like a BAR window.  The
 * memory is handed out in allocation units of 1 << caps->dm_log_granule
 * bytes (a page): ALLOC_DM finds a free run of units, FREE_DM gives it
 * back.  An address of device memory is a byte offset into the block.
 *
 * A DM MPT entry maps part of one allocation, zero-based: its address 0
 * is the allocation's byte dm_offset.  The requester and responder reach
 * it like any other entry; shca_hw_mem.c translates its addresses into
 * the block.  FREE_DM is refused (BUSY) while an entry maps the range;
 * the entry lets go of it after FREE_MPT has waited out its accesses.
 * The allocator's bitmap and range table change under the command mutex.
 */
#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "shca_hw_int.h"

static u32 shca_hw_dm_units(const struct shca_hw *hw)
{
	return hw->caps->max_dm_size >> hw->caps->dm_log_granule;
}

/**
 * shca_hw_dm_init() - power on the device memory
 * @hw: the device
 *
 * The memory starts zeroed.
 *
 * Return: 0 or -ENOMEM.
 */
int shca_hw_dm_init(struct shca_hw *hw)
{
	if (!hw->caps->max_dm_size)
		return 0;
	hw->dm = alloc_pages_exact(hw->caps->max_dm_size,
				   GFP_KERNEL | __GFP_ZERO);
	hw->dm_map = bitmap_zalloc(shca_hw_dm_units(hw), GFP_KERNEL);
	if (!hw->dm || !hw->dm_map)
		return -ENOMEM;
	return 0;
}

/**
 * shca_hw_dm_fini() - power off the device memory
 * @hw: the device; every MPT entry is gone already
 */
void shca_hw_dm_fini(struct shca_hw *hw)
{
	struct shca_hw_dm_range *r;
	unsigned long index;

	xa_for_each(&hw->dm_ranges, index, r) {
		xa_erase(&hw->dm_ranges, index);
		kfree(r);
	}
	xa_destroy(&hw->dm_ranges);
	bitmap_free(hw->dm_map);
	if (hw->dm)
		free_pages_exact(hw->dm, hw->caps->max_dm_size);
	hw->dm = NULL;
}

static struct shca_hw_dm_range *shca_hw_dm_find(struct shca_hw *hw, u64 addr)
{
	u64 unit = 1ULL << hw->caps->dm_log_granule;

	lockdep_assert_held(&hw->cmd_mutex);
	if (addr & (unit - 1) || addr >= hw->caps->max_dm_size)
		return NULL;
	return xa_load(&hw->dm_ranges, addr >> hw->caps->dm_log_granule);
}

/**
 * shca_hw_cmd_alloc_dm() - run ALLOC_DM
 * @hw: the device, its command mutex held
 * @cmd: the length and alignment in @cmd->in.dm; the allocation's device
 *	address is returned in @cmd->out.dm_addr
 *
 * A device without device memory (max_dm_size 0) has nothing to allocate.
 *
 * Return: the completion status: BAD_PARAM for a length of zero or
 * beyond the device memory, or an alignment beyond it; NO_RESOURCES when
 * no free run is long enough.
 */
enum shca_hw_status shca_hw_cmd_alloc_dm(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd)
{
	const struct shca_hw_dm_alloc *in = &cmd->in.dm;
	u32 shift = hw->caps->dm_log_granule;
	struct shca_hw_dm_range *r;
	unsigned long start;
	u32 units, align;

	lockdep_assert_held(&hw->cmd_mutex);
	if (!in->length || in->length > hw->caps->max_dm_size ||
	    in->log_align > ilog2(hw->caps->max_dm_size))
		return SHCA_HW_BAD_PARAM;
	units = DIV_ROUND_UP_ULL(in->length, 1ULL << shift);
	align = in->log_align > shift ? 1U << (in->log_align - shift) : 1;
	start = bitmap_find_next_zero_area(hw->dm_map, shca_hw_dm_units(hw),
					   0, units, align - 1);
	if (start >= shca_hw_dm_units(hw))
		return SHCA_HW_NO_RESOURCES;
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return SHCA_HW_NO_RESOURCES;
	r->start = start;
	r->units = units;
	r->length = in->length;
	atomic_set(&r->mrs, 0);
	if (xa_insert(&hw->dm_ranges, start, r, GFP_KERNEL_ACCOUNT)) {
		kfree(r);
		return SHCA_HW_NO_RESOURCES;
	}
	bitmap_set(hw->dm_map, start, units);
	/* A new owner never sees the last one's bytes. */
	memset(hw->dm + ((u64)start << shift), 0, (u64)units << shift);
	cmd->out.dm_addr = (u64)start << shift;
	return SHCA_HW_OK;
}

/**
 * shca_hw_cmd_free_dm() - run FREE_DM
 * @hw: the device, its command mutex held
 * @cmd: the allocation's device address in @cmd->in.dm_addr
 *
 * Return: the completion status: BAD_INDEX for an address no allocation
 * starts at, BUSY while an MPT entry maps the allocation.
 */
enum shca_hw_status shca_hw_cmd_free_dm(struct shca_hw *hw,
					struct shca_hw_cmd *cmd)
{
	struct shca_hw_dm_range *r;

	lockdep_assert_held(&hw->cmd_mutex);
	r = shca_hw_dm_find(hw, cmd->in.dm_addr);
	if (!r)
		return SHCA_HW_BAD_INDEX;
	if (atomic_read(&r->mrs))
		return SHCA_HW_BUSY;
	xa_erase(&hw->dm_ranges, r->start);
	bitmap_clear(hw->dm_map, r->start, r->units);
	kfree(r);
	return SHCA_HW_OK;
}

/**
 * shca_hw_dm_map() - point a DM MPT entry at part of an allocation
 * @hw: the device
 * @mpt: the entry, of type SHCA_MPT_DM, its lock held
 * @in: the WRITE_MPT parameters
 *
 * WRITE_MPT calls it under the command mutex.  The entry is zero-based:
 * @in->iova must be 0, and [@in->dm_offset, @in->dm_offset +
 * @in->length) must lie inside the allocation at @in->dm_addr.  An entry
 * maps one range for its life; an empty one (@in->length 0) is allowed,
 * and lets no byte through.
 *
 * Return: SHCA_HW_OK, BAD_PARAM for a range outside the allocation or a
 * nonzero iova, BAD_INDEX for an address no allocation starts at,
 * BAD_STATE for an entry already written.
 */
enum shca_hw_status shca_hw_dm_map(struct shca_hw *hw,
				   struct shca_hw_mpt *mpt,
				   const struct shca_hw_mpt_write *in)
{
	struct shca_hw_dm_range *r;

	lockdep_assert_held(&hw->cmd_mutex);
	lockdep_assert_held(&mpt->lock);
	if (mpt->dm)
		return SHCA_HW_BAD_STATE;
	if (in->iova)
		return SHCA_HW_BAD_PARAM;
	r = shca_hw_dm_find(hw, in->dm_addr);
	if (!r)
		return SHCA_HW_BAD_INDEX;
	if (in->dm_offset > r->length || in->length > r->length - in->dm_offset)
		return SHCA_HW_BAD_PARAM;
	/*
	 * The entry is zero-based: an atomic at an aligned address of it
	 * must be an aligned access of the memory, as atomics need.
	 */
	if ((in->access & SHCA_ACCESS_REMOTE_ATOMIC) &&
	    ((in->dm_addr + in->dm_offset) & 7))
		return SHCA_HW_BAD_PARAM;
	atomic_inc(&r->mrs);
	mpt->dm = r;
	mpt->dm_kaddr = hw->dm + in->dm_addr + in->dm_offset;
	return SHCA_HW_OK;
}

/**
 * shca_hw_dm_unmap() - let a freed DM MPT entry's allocation go
 * @mpt: the entry, out of the table, with no access in flight
 *
 * From here FREE_DM may release the range.
 */
void shca_hw_dm_unmap(struct shca_hw_mpt *mpt)
{
	if (mpt->dm)
		atomic_dec(&mpt->dm->mrs);
	mpt->dm = NULL;
}

/**
 * shca_hw_dm_pfn() - where the device memory window is, for mapping
 * @hw: the device
 * @addr: a device memory address, on a page boundary
 *
 * The device memory is a window the driver maps into a process, like a
 * BAR: it is physically contiguous, so a range of it is a range of page
 * frames.
 *
 * Return: the page frame of @addr, or 0 when the device has no device
 * memory or @addr is past its end.
 */
unsigned long shca_hw_dm_pfn(struct shca_hw *hw, u64 addr)
{
	if (!hw->dm || addr >= hw->caps->max_dm_size)
		return 0;
	return page_to_pfn(virt_to_page(hw->dm + addr));
}

/**
 * shca_hw_dm_ptr() - a test's view of the device memory
 * @hw: the device
 * @addr: a device memory address
 * @len: bytes wanted from there
 *
 * Return: the kernel address of @addr, or NULL when [@addr, @addr + @len)
 * is not all device memory.
 */
void *shca_hw_dm_ptr(struct shca_hw *hw, u64 addr, u64 len)
{
	if (!hw->dm || addr > hw->caps->max_dm_size ||
	    len > hw->caps->max_dm_size - addr)
		return NULL;
	return hw->dm + addr;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_dm_ptr);
