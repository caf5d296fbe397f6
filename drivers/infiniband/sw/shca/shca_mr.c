// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: memory regions.
 *
 * Every MR is an entry of the device's memory protection table.  DMA MRs
 * translate kernel addresses as they are (shca uses virtual DMA: a "DMA
 * address" is a kernel virtual address).  Fast-registration MRs get their
 * page list from map_mr_sg() and become valid when a REG_MR work request
 * executes.  User MRs pin the pages with ib_umem and hand the device their
 * page list at once; rereg rewrites their entry in place, keys kept.
 * ODP user MRs pin nothing (shca_odp.c).
 */
#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "shca.h"

/**
 * shca_get_dma_mr() - an MR covering all kernel memory
 * @ibpd: its protection domain
 * @access: IB_ACCESS_* rights
 *
 * Return: the MR or an ERR_PTR().
 */
struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	struct shca_mr *mr;
	int err;

	mr = shca_mr_alloc(sdev, ibpd, SHCA_MPT_DMA, 0, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = shca_mr_write(sdev, mr, shca_access_to_hw(access), 0, 0, 0);
	if (err) {
		shca_mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * shca_alloc_mr() - an MR for fast registration
 * @ibpd: its protection domain
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: the most pages it will map
 *
 * Return: the MR, invalid until a REG_MR work request registers it, or an
 * ERR_PTR().
 */
struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	struct shca_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG) {
		shca_dbg(sdev, "MR type %d not supported\n", type);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!max_num_sg || max_num_sg > sdev->caps.max_fast_reg_page_list_len) {
		shca_dbg(sdev, "bad fast registration length %u\n",
			 max_num_sg);
		return ERR_PTR(-EINVAL);
	}
	mr = shca_mr_alloc(sdev, ibpd, SHCA_MPT_PBL, max_num_sg,
			   SHCA_MPT_F_FAST_REG);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	return &mr->ibmr;
}

static int shca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct shca_mr *mr = to_shca_mr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

/**
 * shca_map_mr_sg() - fill a fast-registration MR's page list
 * @ibmr: the MR
 * @sg: the scatterlist, DMA-mapped
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry
 *
 * Return: the number of entries mapped.
 */
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	to_shca_mr(ibmr)->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, shca_set_page);
}

/* Fill @pages with the DMA address of each page of @umem; return them. */
static u32 shca_umem_pages(struct ib_umem *umem, u64 *pages)
{
	struct ib_block_iter biter;
	u32 n = 0;

	rdma_umem_for_each_dma_block(umem, &biter, PAGE_SIZE)
		pages[n++] = rdma_block_iter_dma_address(&biter);
	return n;
}

/**
 * shca_reg_user_mr() - register user memory
 * @ibpd: the protection domain
 * @start: the start of the memory in the process
 * @length: bytes
 * @virt: the address the MR's users will name it by
 * @access: IB_ACCESS_* rights
 * @udata: must carry nothing
 *
 * A zero-length MR (IBTA allows one) pins nothing and has no pages: its
 * keys pass zero-byte operations, which check no key, and no other.
 *
 * Return: the MR or an ERR_PTR().
 */
struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt, int access, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	struct ib_umem *umem;
	struct shca_mr *mr;
	size_t npages;
	int err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return ERR_PTR(err);
	if (access & IB_ACCESS_ON_DEMAND)
		return shca_odp_reg_user_mr(ibpd, start, length, virt, access);
	if (!length) {
		mr = shca_mr_alloc(sdev, ibpd, SHCA_MPT_PBL, 0, 0);
		if (IS_ERR(mr))
			return ERR_CAST(mr);
		mr->access = access;
		err = shca_mr_write(sdev, mr, shca_access_to_hw(access), virt,
				    0, PAGE_SHIFT);
		if (err) {
			shca_mr_free(sdev, mr);
			return ERR_PTR(err);
		}
		return &mr->ibmr;
	}
	if (length > sdev->caps.max_mr_size) {
		shca_dbg(sdev, "bad MR length %llu\n", length);
		return ERR_PTR(-EINVAL);
	}
	/*
	 * The device translates an address by its offset from the page that
	 * holds @virt: @virt and @start must sit at the same place in a page.
	 */
	if ((virt ^ start) & ~PAGE_MASK) {
		shca_dbg(sdev, "MR address %#llx and start %#llx in different page offsets\n",
			 virt, start);
		return ERR_PTR(-EINVAL);
	}
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	npages = ib_umem_num_dma_blocks(umem, PAGE_SIZE);
	if (npages > U32_MAX) {
		ib_umem_release(umem);
		return ERR_PTR(-EINVAL);
	}
	mr = shca_mr_alloc(sdev, ibpd, SHCA_MPT_PBL, npages, 0);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->access = access;
	mr->npages = shca_umem_pages(umem, mr->pages);
	err = shca_mr_write(sdev, mr, shca_access_to_hw(access), virt, length,
			    PAGE_SHIFT);
	if (err) {
		shca_mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* A user MR's new pinned pages and page list, for rereg. */
static int shca_mr_new_translation(struct shca_dev *sdev, struct shca_mr *mr,
				   u64 start, u64 length, int access,
				   struct shca_hw_mpt_rereg *params,
				   struct ib_umem **umem)
{
	size_t npages;
	u64 *pages;

	if (!length || length > sdev->caps.max_mr_size) {
		shca_dbg(sdev, "MR %#x: bad rereg length %llu\n",
			 mr->ibmr.lkey, length);
		return -EINVAL;
	}
	*umem = ib_umem_get(mr->ibmr.device, start, length, access);
	if (IS_ERR(*umem))
		return PTR_ERR(*umem);
	npages = ib_umem_num_dma_blocks(*umem, PAGE_SIZE);
	pages = npages <= U32_MAX ?
		kvcalloc(npages, sizeof(u64), GFP_KERNEL_ACCOUNT) : NULL;
	if (!pages) {
		ib_umem_release(*umem);
		return npages <= U32_MAX ? -ENOMEM : -EINVAL;
	}
	params->npages = shca_umem_pages(*umem, pages);
	params->pbl = pages;
	params->page_shift = PAGE_SHIFT;
	params->length = length;
	return 0;
}

/**
 * shca_rereg_user_mr() - change a user MR's translation, PD or rights
 * @ibmr: the MR
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS, any mix
 * @start: with IB_MR_REREG_TRANS, the new memory in the process
 * @length: its bytes
 * @virt: the address the MR's users will name it by
 * @access: with IB_MR_REREG_ACCESS, the new IB_ACCESS_* rights
 * @ibpd: the new protection domain (ib_core passes the old one without
 *	IB_MR_REREG_PD)
 * @udata: must carry nothing
 *
 * In place: the lkey and rkey stay, and the device rewrites the MR's MPT
 * entry (REREG_MPT).  A change of rights between read-only and writable
 * pins the pages again, writable or not, as a new translation of the same
 * memory does.  Accesses in flight finish on what they started with; a
 * new translation is in force, and the old pages unpinned, only after
 * them.  ib_core checks the flags, the rights' combinations and the PD's
 * handle before calling here.
 *
 * Return: NULL (the MR itself, changed), or an ERR_PTR(): -EINVAL for
 * bad lengths or a MR that is not a user MR; on failure nothing changed.
 */
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibmr->device);
	struct shca_mr *mr = to_shca_mr(ibmr);
	struct shca_hw_mpt_rereg params = { .key = ibmr->lkey };
	struct ib_umem *umem = NULL;
	int new_access, err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return ERR_PTR(err);
	if (!mr->umem) {
		shca_dbg(sdev, "MR %#x: not a user MR\n", ibmr->lkey);
		return ERR_PTR(-EINVAL);
	}
	if (mr->type == SHCA_MPT_ODP) {
		shca_dbg(sdev, "MR %#x: no rereg of an ODP MR\n", ibmr->lkey);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!flags || (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD |
				 IB_MR_REREG_ACCESS)))
		return ERR_PTR(-EOPNOTSUPP);
	new_access = flags & IB_MR_REREG_ACCESS ? access : mr->access;
	if (!(flags & IB_MR_REREG_TRANS) &&
	    ib_access_writable(new_access) != ib_access_writable(mr->access)) {
		/* The same memory, pinned for the new rights. */
		flags |= IB_MR_REREG_TRANS;
		start = mr->umem->address;
		length = mr->umem->length;
		virt = ibmr->iova;
	}
	if (flags & IB_MR_REREG_TRANS) {
		if ((virt ^ start) & ~PAGE_MASK) {
			shca_dbg(sdev, "MR %#x: address %#llx and start %#llx in different page offsets\n",
				 ibmr->lkey, virt, start);
			return ERR_PTR(-EINVAL);
		}
		err = shca_mr_new_translation(sdev, mr, start, length,
					      new_access, &params, &umem);
		if (err)
			return ERR_PTR(err);
		params.flags |= SHCA_MPT_REREG_TRANSLATION;
		params.iova = virt;
	}
	if (flags & IB_MR_REREG_PD) {
		params.flags |= SHCA_MPT_REREG_PD;
		params.pdn = to_shca_pd(ibpd)->pdn;
	}
	if (flags & IB_MR_REREG_ACCESS) {
		params.flags |= SHCA_MPT_REREG_ACCESS;
		params.access = shca_access_to_hw(new_access);
	}
	err = shca_cmd_rereg_mpt(sdev, &params);
	if (err) {
		shca_dbg(sdev, "MR %#x: rereg %#x refused: %d\n",
			 ibmr->lkey, flags, err);
		if (umem) {
			kvfree(params.pbl);
			ib_umem_release(umem);
		}
		return ERR_PTR(err);
	}
	mr->access = new_access;
	if (umem) {
		/* The device no longer uses the old pages. */
		ib_umem_release(mr->umem);
		kvfree(mr->pages);
		mr->umem = umem;
		mr->pages = (u64 *)params.pbl;
		mr->npages = params.npages;
		mr->max_pages = params.npages;
		/* ib_core sets these only for a rereg it asked for. */
		ibmr->iova = virt;
		ibmr->length = length;
	}
	return NULL;
}

/**
 * shca_dereg_mr() - deregister an MR
 * @ibmr: the MR
 * @udata: unused
 *
 * The device waits out any access in flight before the entry goes, and
 * refuses to release a region with memory windows bound to it; an ODP MR
 * (no window binds to one) is fenced first, its pages taken from the
 * device.
 *
 * Return: 0, or -EBUSY with the MR left as it was.
 */
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibmr->device);
	struct shca_mr *mr = to_shca_mr(ibmr);
	int err;

	if (mr->type == SHCA_MPT_ODP) {
		shca_odp_dereg(sdev, mr);
		shca_mr_free(sdev, mr);
		return 0;
	}
	err = shca_cmd_free_mpt(sdev, mr->ibmr.lkey);
	if (err == -EBUSY) {
		ibdev_dbg(&sdev->ibdev, "%s: MR %#x: memory windows bound\n",
			  __func__, mr->ibmr.lkey);
		return err;
	}
	ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr);
	return 0;
}
