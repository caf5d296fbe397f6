// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: memory the device reads and writes.
 *
 * Rings are page-aligned, zeroed vmalloc_user() memory so that they can be
 * mapped into a process; the doorbell record of a ring gets a page of its
 * own after it, for the same reason.
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
	buf = vmalloc_user(ring + PAGE_SIZE);
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
