// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: an MR's entry in the device's memory protection table.
 *
 * Allocating, writing and freeing the entry behind an MR, for every kind
 * of MR: DMA, fast registration and pinned user MRs (shca_mr.c), ODP MRs
 * (shca_odp.c) and device memory MRs (shca_dm.c).  It issues commands and
 * calls no other file of the verbs layer.
 */
#include <rdma/ib_umem.h>

#include "shca.h"

/**
 * shca_mr_alloc() - an MR with a new, invalid MPT entry
 * @sdev: the device
 * @ibpd: its protection domain
 * @type: enum shca_hw_mpt_type
 * @max_pages: the page list it gets room for, for PBL entries; or 0
 * @flags: SHCA_MPT_F_*
 *
 * Return: the MR or an ERR_PTR(); free it with shca_mr_free().
 */
struct shca_mr *shca_mr_alloc(struct shca_dev *sdev, struct ib_pd *ibpd,
			      u32 type, u32 max_pages, u32 flags)
{
	struct shca_hw_mpt_alloc params = {
		.type = type,
		.pdn = to_shca_pd(ibpd)->pdn,
		.max_pages = max_pages,
		.flags = flags,
	};
	struct shca_mr *mr;
	u32 key;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = type;
	mr->max_pages = max_pages;
	if (max_pages) {
		mr->pages = kvcalloc(max_pages, sizeof(u64), GFP_KERNEL_ACCOUNT);
		if (!mr->pages) {
			kfree(mr);
			return ERR_PTR(-ENOMEM);
		}
	}
	err = shca_cmd_alloc_mpt(sdev, &params, &key);
	if (err) {
		kvfree(mr->pages);
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return mr;
}

/**
 * shca_mr_free() - free an MR and its MPT entry
 * @sdev: the device
 * @mr: the MR; the device waits out its accesses in flight
 */
void shca_mr_free(struct shca_dev *sdev, struct shca_mr *mr)
{
	shca_cmd_free_mpt(sdev, mr->ibmr.lkey);
	ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr);
}

/**
 * shca_mr_write() - make an MR's entry valid
 * @sdev: the device
 * @mr: the MR, its page list filled (an ODP MR's is the device's own)
 * @access: SHCA_ACCESS_* rights
 * @iova: its first address
 * @length: bytes
 * @page_shift: log2 of its page size
 *
 * Return: 0 or a negative errno.
 */
int shca_mr_write(struct shca_dev *sdev, struct shca_mr *mr, u32 access,
		  u64 iova, u64 length, u32 page_shift)
{
	struct shca_hw_mpt_write params = {
		.key = mr->ibmr.lkey,
		.access = access,
		.iova = iova,
		.length = length,
		.pbl = mr->type == SHCA_MPT_ODP ? NULL : mr->pages,
		.npages = mr->npages,
		.page_shift = page_shift,
	};

	return shca_cmd_write_mpt(sdev, &params);
}
