// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: on-demand paging MRs (IB_ACCESS_ON_DEMAND), explicit ones.
 *
 * An ODP MR pins nothing.  Its MPT entry is an ODP entry whose pages the
 * device finds absent until the driver maps them: on the device's page
 * fault (shca_odp_fault()), on a prefetch (shca_advise_mr()).  Mapping
 * goes through ib_umem_odp_map_dma_and_lock(), which faults the pages in
 * with hmm_range_fault() and returns with umem_mutex held; the driver
 * then hands the device the pages' addresses (MAP_ODP), the same kernel
 * addresses a pinned MR's page list holds.  The MMU notifier's invalidate
 * runs under umem_mutex too: INVALIDATE_ODP makes the pages absent and
 * waits out the device's accesses in flight before ib_core unmaps them.
 *
 * No implicit ODP (a whole address space as one MR): its child MRs would
 * need an MPT entry per chunk that the device creates on a fault, and this
 * device only pages within an entry the driver registered.
 *
 * Lifetime: an MR is found by key in sdev->odp_mrs, under sdev->odp_mutex
 * for a prefetch; a fault handler runs while the device holds the
 * faulting entry, which FREE_MPT waits for.  mr->odp_live, under
 * umem_mutex, says the entry may be given pages and must be invalidated.
 */
#include <rdma/ib_umem_odp.h>

#include "shca.h"

static u32 shca_odp_index(u32 key)
{
	return key >> 8;
}

/* Map pages [first, first + n) of @mr and hand them to the device. */
static int shca_odp_map(struct shca_dev *sdev, struct shca_mr *mr, u32 first,
			u32 n, bool write, bool fault)
{
	struct ib_umem_odp *odp = to_ib_umem_odp(mr->umem);
	u64 perm = ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
	u64 va = ib_umem_start(odp) + ((u64)first << odp->page_shift);
	struct shca_hw_odp_map params = {
		.key = mr->ibmr.lkey,
		.first = first,
		.npages = n,
		.pages = &mr->pages[first],
	};
	dma_addr_t d;
	int ret;
	u32 i;

	if (first >= mr->npages || n > mr->npages - first)
		return -EFAULT;
	ret = ib_umem_odp_map_dma_and_lock(odp, va, (u64)n << odp->page_shift,
					   perm, fault);
	if (ret < 0)
		return ret;
	/* umem_mutex is held: no invalidation until the device has them. */
	for (i = 0; i < n; i++) {
		d = odp->dma_list[first + i];
		mr->pages[first + i] = 0;
		if (!(d & ODP_READ_ALLOWED_BIT))
			continue;
		mr->pages[first + i] = (d & ODP_DMA_ADDR_MASK) |
				       SHCA_ODP_PAGE_READ;
		if (d & ODP_WRITE_ALLOWED_BIT)
			mr->pages[first + i] |= SHCA_ODP_PAGE_WRITE;
	}
	ret = mr->odp_live ? shca_cmd_map_odp(sdev, &params) : -ENOENT;
	mutex_unlock(&odp->umem_mutex);
	return ret;
}

/*
 * The device's page fault handler: it runs in the execution unit that
 * faulted, which waits for it.
 */
static int shca_odp_fault(void *ctx, const struct shca_hw_odp_fault *f)
{
	struct shca_dev *sdev = ctx;
	struct shca_mr *mr;
	int err;

	/* The device holds the entry: a dereg waits for this handler. */
	mr = xa_load(&sdev->odp_mrs, shca_odp_index(f->key));
	if (!mr || mr->ibmr.lkey != f->key)
		return -ENOENT;
	err = shca_odp_map(sdev, mr, f->first, f->npages, f->write, true);
	if (err)
		shca_dbg(sdev, "MR %#x: page fault at page %u (%u, %s) failed: %d\n",
			 f->key, f->first, f->npages, f->write ? "write" : "read",
			 err);
	return err;
}

static bool shca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct shca_mr *mr = odp->private;
	u64 start, end, size = 1ULL << odp->page_shift;
	struct shca_hw_odp_range params;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(odp), range->start);
	end = min_t(u64, ib_umem_end(odp), range->end);
	if (mr && mr->odp_live && start < end) {
		params.key = mr->ibmr.lkey;
		params.first = (start - ib_umem_start(odp)) >> odp->page_shift;
		params.npages = DIV_ROUND_UP(end - ib_umem_start(odp), size) -
				params.first;
		/* The device is done with the pages before they go. */
		shca_cmd_invalidate_odp(to_shca_dev(mr->ibmr.device), &params);
	}
	if (start < end)
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops shca_odp_mni_ops = {
	.invalidate = shca_odp_invalidate,
};

/**
 * shca_odp_init() - connect a new device's page fault handler
 * @sdev: the device, its model created; it goes with the model
 */
void shca_odp_init(struct shca_dev *sdev)
{
	shca_hw_set_odp_handler(sdev->hw, shca_odp_fault, sdev);
}

/**
 * shca_odp_caps() - fill in what the device pages on demand
 * @attr: the device attributes
 */
void shca_odp_caps(struct ib_device_attr *attr)
{
	static const struct {
		u32 hw;
		u32 ib;
	} map[] = {
		{ SHCA_ODP_CAP_SEND, IB_ODP_SUPPORT_SEND },
		{ SHCA_ODP_CAP_RECV, IB_ODP_SUPPORT_RECV },
		{ SHCA_ODP_CAP_WRITE, IB_ODP_SUPPORT_WRITE },
		{ SHCA_ODP_CAP_READ, IB_ODP_SUPPORT_READ },
		{ SHCA_ODP_CAP_ATOMIC, IB_ODP_SUPPORT_ATOMIC },
		{ SHCA_ODP_CAP_SRQ_RECV, IB_ODP_SUPPORT_SRQ_RECV },
	};
	u32 i;

	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	/* Explicit ODP only: no IB_ODP_SUPPORT_IMPLICIT (see above). */
	attr->odp_caps.general_caps = IB_ODP_SUPPORT;
	for (i = 0; i < ARRAY_SIZE(map); i++) {
		if (SHCA_ODP_RC_CAPS & map[i].hw)
			attr->odp_caps.per_transport_caps.rc_odp_caps |=
				map[i].ib;
		if (SHCA_ODP_UD_CAPS & map[i].hw)
			attr->odp_caps.per_transport_caps.ud_odp_caps |=
				map[i].ib;
	}
}

/**
 * shca_odp_reg_user_mr() - register user memory for on-demand paging
 * @ibpd: the protection domain
 * @start: the start of the memory in the process
 * @length: bytes
 * @virt: the address the MR's users will name it by
 * @access: IB_ACCESS_* rights, IB_ACCESS_ON_DEMAND among them
 *
 * Return: the MR, every page absent, or an ERR_PTR().
 */
struct ib_mr *shca_odp_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 virt, int access)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	struct ib_umem_odp *odp;
	struct shca_mr *mr;
	size_t npages;
	int err;

	if (!length || length > sdev->caps.max_mr_size) {
		/* An implicit MR (length U64_MAX) lands here too. */
		shca_dbg(sdev, "bad ODP MR length %#llx\n", length);
		return ERR_PTR(-EINVAL);
	}
	odp = ib_umem_odp_get(ibpd->device, start, length, access,
			      &shca_odp_mni_ops);
	if (IS_ERR(odp))
		return ERR_CAST(odp);
	if ((virt ^ start) & ((1ULL << odp->page_shift) - 1)) {
		shca_dbg(sdev, "ODP MR address %#llx and start %#llx in different page offsets\n",
			 virt, start);
		err = -EINVAL;
		goto err_umem;
	}
	npages = ib_umem_odp_num_pages(odp);
	if (npages > U32_MAX) {
		err = -EINVAL;
		goto err_umem;
	}
	mr = shca_mr_alloc(sdev, ibpd, SHCA_MPT_ODP, npages, 0);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto err_umem;
	}
	/*
	 * Before anything can find the MR: a page fault may come as soon
	 * as the entry is valid, and the handler maps through the umem.
	 * From here shca_mr_free() releases it.
	 */
	mr->umem = &odp->umem;
	mr->npages = npages;
	mr->access = access;
	err = shca_mr_write(sdev, mr, shca_access_to_hw(access), virt, length,
			    odp->page_shift);
	if (err)
		goto err_mr;
	err = xa_insert(&sdev->odp_mrs, shca_odp_index(mr->ibmr.lkey), mr,
			GFP_KERNEL);
	if (err)
		goto err_mr;
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mr->odp_live = true;
	mutex_unlock(&odp->umem_mutex);
	return &mr->ibmr;

err_mr:
	shca_mr_free(sdev, mr);
	return ERR_PTR(err);
err_umem:
	ib_umem_odp_release(odp);
	return ERR_PTR(err);
}

/**
 * shca_odp_dereg() - fence an ODP MR before it is freed
 * @sdev: the device
 * @mr: the MR
 *
 * No prefetch finds it after this, the device has no page of it and
 * takes none: a fault in flight finds it dead and fails.  The caller
 * frees the MPT entry, which waits out those faults, then the umem.
 */
void shca_odp_dereg(struct shca_dev *sdev, struct shca_mr *mr)
{
	struct ib_umem_odp *odp = to_ib_umem_odp(mr->umem);
	struct shca_hw_odp_range all = {
		.key = mr->ibmr.lkey,
		.npages = mr->npages,
	};

	mutex_lock(&sdev->odp_mutex);
	xa_erase(&sdev->odp_mrs, shca_odp_index(mr->ibmr.lkey));
	mutex_unlock(&sdev->odp_mutex);
	mutex_lock(&odp->umem_mutex);
	mr->odp_live = false;
	shca_cmd_invalidate_odp(sdev, &all);
	mutex_unlock(&odp->umem_mutex);
}

/**
 * shca_advise_mr() - prefetch pages of ODP MRs
 * @ibpd: the protection domain the MRs must belong to
 * @advice: IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH (for reading),
 *	_PREFETCH_WRITE, or _PREFETCH_NO_FAULT (only the pages already in
 *	memory, with the rights the process has on them now)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: report a failure to map
 * @sg_list: the ranges, by lkey
 * @num_sge: their number
 * @attrs: unused
 *
 * The prefetch runs to its end before the call returns, with the flag or
 * without: without it, ib_core allows an earlier return, and a failure
 * to map (not a bad lkey or range) is not reported.
 *
 * Return: 0 or a negative errno.
 */
int shca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct ib_umem_odp *odp;
	struct shca_mr *mr;
	u64 start, end;
	int err = 0;
	u32 i, first;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	mutex_lock(&sdev->odp_mutex);
	for (i = 0; i < num_sge && !err; i++) {
		mr = xa_load(&sdev->odp_mrs, shca_odp_index(sg_list[i].lkey));
		if (!mr || mr->ibmr.lkey != sg_list[i].lkey ||
		    mr->ibmr.pd != ibpd) {
			shca_dbg(sdev, "advise_mr: lkey %#x is no ODP MR of this PD\n",
				 sg_list[i].lkey);
			err = -EINVAL;
			break;
		}
		if (!sg_list[i].length)
			continue;
		if (write && !ib_access_writable(mr->access)) {
			shca_dbg(sdev, "advise_mr: MR %#x is not writable\n",
				 mr->ibmr.lkey);
			err = -EPERM;
			break;
		}
		odp = to_ib_umem_odp(mr->umem);
		start = sg_list[i].addr;
		end = start + sg_list[i].length;
		if (start < mr->ibmr.iova || end < start ||
		    end > mr->ibmr.iova + mr->ibmr.length) {
			shca_dbg(sdev, "advise_mr: range %#llx+%#x outside MR %#x\n",
				 sg_list[i].addr, sg_list[i].length,
				 mr->ibmr.lkey);
			err = -EINVAL;
			break;
		}
		/* Page indices count from the page holding the iova. */
		start = start - mr->ibmr.iova +
			(mr->ibmr.iova & ((1ULL << odp->page_shift) - 1));
		end = start + sg_list[i].length - 1;
		first = start >> odp->page_shift;
		err = shca_odp_map(sdev, mr, first,
				   (end >> odp->page_shift) - first + 1, write,
				   fault);
		if (err && !(flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH)) {
			shca_dbg(sdev, "advise_mr: MR %#x: prefetch: %d\n",
				 mr->ibmr.lkey, err);
			err = 0;
		}
	}
	mutex_unlock(&sdev->odp_mutex);
	return err;
}
