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
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "shca.h"

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
 * shca_buf_free() - free what shca_buf_alloc() allocated
 * @buf: the buffer; NULL is allowed
 */
void shca_buf_free(void *buf)
{
	vfree(buf);
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
