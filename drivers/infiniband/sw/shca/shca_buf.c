// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: memory the device reads and writes.
 *
 * Rings are page-aligned, zeroed vmalloc memory, charged to the memory
 * cgroup of the process that creates them (GFP_KERNEL_ACCOUNT), so that a
 * process's rings count against its memory.max like the rest of its
 * memory.  A process maps them page by page (shca_mmap()).  The doorbell
 * record of a ring gets a page of its own after it, so that it can be
 * mapped too.  A charge past the limit fails the allocation: no OOM kill,
 * no warning.
 *
 * A kernel QP's rings are never mapped: up to SHCA_BUF_SMALL bytes with
 * the record, they are plain pages (no vmap to set up, no TLB flush when
 * they go), which was most of what creating and destroying a small kernel
 * QP cost.  Larger ones stay vmalloc'd: no high-order allocation that a
 * fragmented machine could not satisfy.  Nor are they zeroed, but for the
 * doorbell record: the device reads a WQE only once the driver has
 * written it and moved the producer index past it, and the index starts
 * at 0 in the zeroed record.  Zeroing is a byte loop under the test
 * guests' CPU model (rep stosb, one byte per iteration), some 30 us for
 * a small QP's 12 KiB of rings.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "shca.h"

#define SHCA_BUF_SMALL	(4 * PAGE_SIZE)

/**
 * shca_buf_alloc() - allocate a ring and its doorbell record page
 * @ring_bytes: bytes of ring
 * @dbrec: set to the doorbell record page, right after the ring
 *
 * Return: the buffer, starting with the ring, or NULL.
 */
void *shca_buf_alloc(size_t ring_bytes, void **dbrec)
{
	size_t ring = PAGE_ALIGN(ring_bytes);
	void *buf;

	if (ring < ring_bytes || ring + PAGE_SIZE < ring)
		return NULL;
	buf = __vmalloc(ring + PAGE_SIZE, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
			__GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (buf)
		*dbrec = buf + ring;
	return buf;
}

/**
 * shca_buf_alloc_kernel() - allocate a kernel QP's rings, which nobody
 *	maps, and its doorbell record page
 * @ring_bytes: bytes of ring
 * @dbrec: set to the doorbell record page, right after the ring
 *
 * Like shca_buf_alloc(), but up to SHCA_BUF_SMALL bytes the memory comes
 * from kmalloc(), and only the QP's doorbell record is zeroed: for rings
 * only the kernel writes, each entry before the device reads it.
 * Page-aligned either way (kmalloc() aligns a power-of-two size to
 * itself, and hands larger ones to the page allocator).
 *
 * Return: the buffer, starting with the ring, or NULL.
 */
void *shca_buf_alloc_kernel(size_t ring_bytes, void **dbrec)
{
	size_t ring = PAGE_ALIGN(ring_bytes);
	gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NOWARN;
	void *buf;

	if (ring < ring_bytes || ring + PAGE_SIZE < ring)
		return NULL;
	if (ring + PAGE_SIZE > SHCA_BUF_SMALL) {
		buf = __vmalloc(ring + PAGE_SIZE, gfp | __GFP_RETRY_MAYFAIL);
	} else {
		buf = kmalloc(ring + PAGE_SIZE, gfp);
		if (buf && WARN_ON_ONCE(!PAGE_ALIGNED(buf))) {
			kfree(buf);
			return NULL;
		}
	}
	if (!buf)
		return NULL;
	*dbrec = buf + ring;
	memset(*dbrec, 0, sizeof(struct shca_hw_qp_dbrec));
	return buf;
}

/**
 * shca_buf_free() - free what shca_buf_alloc() or shca_buf_alloc_kernel()
 *	allocated
 * @buf: the buffer; NULL is allowed
 */
void shca_buf_free(void *buf)
{
	kvfree(buf);
}

/**
 * shca_buf_len() - bytes shca_buf_alloc() allocates for a ring
 * @ring_bytes: bytes of ring
 *
 * Return: the ring rounded up to pages, plus the doorbell record page.
 */
size_t shca_buf_len(size_t ring_bytes)
{
	return PAGE_ALIGN(ring_bytes) + PAGE_SIZE;
}
