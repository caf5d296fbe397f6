// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: device memory.
 *
 * A process allocates part of the device's on-chip memory (ALLOC_DM), maps
 * it at the offset the driver attribute SHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET
 * returns, reads and writes it there, and registers MRs on it (zero-based:
 * an MR's address 0 is its byte dm_offset of the allocation), which QPs use
 * like any other as source and target of sends, RDMA and atomics.
 *
 * The allocation belongs to its mmap entry: deallocating the DM removes the
 * entry from the context (its offset no longer maps), and the device's
 * range is released (FREE_DM) only when no mapping of it is left, so
 * memory a process still maps is never handed to another one.  ib_core
 * refuses to deallocate a DM an MR is registered on; the device refuses
 * FREE_DM while an MPT entry maps the range.
 */
#define UVERBS_MODULE_NAME shca_ib

#include <linux/mm.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>

#include "shca.h"

/* What a DM MR may grant: the rest (windows, flush, ODP) it cannot. */
#define SHCA_DM_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ZERO_BASED | \
				 IB_ACCESS_RELAXED_ORDERING)

/**
 * shca_alloc_dm() - allocate device memory for a process
 * @ibdev: the device
 * @ibuc: the process's context
 * @attr: the length and log2 of the alignment asked for
 * @attrs: the method's attributes: the mmap offset goes back in
 *	SHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET
 *
 * Return: the DM, or ERR_PTR(-EINVAL) for a length of zero or beyond
 * max_dm_size or an alignment beyond it, ERR_PTR(-ENOMEM) when the
 * device memory left has no room, or another ERR_PTR().
 */
struct ib_dm *shca_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	struct shca_mmap_entry *e;
	struct shca_dm *dm;
	u64 offset;
	int err;

	if (!attr->length || attr->length > sdev->caps.max_dm_size) {
		shca_dbg(sdev, "DM of %llu bytes, the device has %llu\n",
			 attr->length, sdev->caps.max_dm_size);
		return ERR_PTR(-EINVAL);
	}
	if (attr->flags) {
		shca_dbg(sdev, "DM flags %#x\n", attr->flags);
		return ERR_PTR(-EOPNOTSUPP);
	}
	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!dm || !e) {
		err = -ENOMEM;
		goto err_free;
	}
	e->dm = true;
	e->dm_length = attr->length;
	err = shca_cmd_alloc_dm(sdev, attr->length, attr->alignment,
				&e->dm_addr);
	if (err)
		goto err_free;
	err = rdma_user_mmap_entry_insert(ibuc, &e->rdma_entry, attr->length);
	if (err) {
		shca_cmd_free_dm(sdev, e->dm_addr);
		goto err_free;
	}
	dm->entry = e;
	offset = rdma_user_mmap_get_offset(&e->rdma_entry);
	err = uverbs_copy_to(attrs, SHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err) {
		/* The entry frees the range, and itself, in shca_mmap_free(). */
		rdma_user_mmap_entry_remove(&e->rdma_entry);
		kfree(dm);
		return ERR_PTR(err);
	}
	return &dm->ibdm;

err_free:
	kfree(e);
	kfree(dm);
	return ERR_PTR(err);
}

/**
 * shca_dealloc_dm() - let a process's device memory go
 * @ibdm: the DM; ib_core has checked that no MR is registered on it
 * @attrs: unused
 *
 * The offset stops mapping now; the range goes back to the device once
 * the process has unmapped it.
 *
 * Return: 0.
 */
int shca_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct shca_dm *dm = to_shca_dm(ibdm);

	rdma_user_mmap_entry_remove(&dm->entry->rdma_entry);
	kfree(dm);
	return 0;
}

/**
 * shca_dm_mmap() - map a device memory allocation into a process
 * @ibuc: the context
 * @vma: the mapping, shared and as long as the entry
 * @e: the entry, referenced by the caller
 *
 * Return: 0 or a negative errno.
 */
int shca_dm_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma,
		 struct shca_mmap_entry *e)
{
	struct shca_dev *sdev = to_shca_dev(ibuc->device);
	unsigned long pfn = shca_hw_dm_pfn(sdev->hw, e->dm_addr);

	if (!pfn)
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return rdma_user_mmap_io(ibuc, vma, pfn, vma->vm_end - vma->vm_start,
				 vma->vm_page_prot, &e->rdma_entry);
}

/**
 * shca_dm_mmap_free() - give a device memory range back to the device
 * @e: the entry: removed, and no mapping of it left
 */
void shca_dm_mmap_free(struct shca_mmap_entry *e)
{
	struct shca_dev *sdev = to_shca_dev(e->rdma_entry.ucontext->device);
	int err;

	err = shca_cmd_free_dm(sdev, e->dm_addr);
	if (err)
		ibdev_err_ratelimited(&sdev->ibdev,
				      "FREE_DM of %#llx failed: %d\n",
				      e->dm_addr, err);
	kfree(e);
}

/**
 * shca_reg_dm_mr() - register an MR on device memory
 * @ibpd: its protection domain
 * @ibdm: the DM
 * @attr: the offset into the DM, the length and the IB_ACCESS_* rights;
 *	IB_ZERO_BASED is required: the MR's address 0 is the DM's byte
 *	@attr->offset
 * @attrs: unused
 *
 * Return: the MR, or ERR_PTR(-EINVAL) for a range past the DM's end or
 * rights without IB_ZERO_BASED, ERR_PTR(-EOPNOTSUPP) for a right a DM MR
 * cannot have (memory window binding, flush, on-demand paging), or
 * another ERR_PTR().
 */
struct ib_mr *shca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	struct shca_mmap_entry *e = to_shca_dm(ibdm)->entry;
	struct shca_hw_mpt_write params = {
		.access = shca_access_to_hw(attr->access_flags),
		.length = attr->length,
		.dm_addr = e->dm_addr,
		.dm_offset = attr->offset,
	};
	struct shca_mr *mr;
	int err;

	if (!(attr->access_flags & IB_ZERO_BASED)) {
		shca_dbg(sdev, "DM MR without IB_ZERO_BASED\n");
		return ERR_PTR(-EINVAL);
	}
	if (attr->access_flags & ~SHCA_DM_MR_ACCESS) {
		shca_dbg(sdev, "DM MR access %#x\n", attr->access_flags);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (attr->offset > e->dm_length ||
	    attr->length > e->dm_length - attr->offset) {
		shca_dbg(sdev, "DM MR of %llu bytes at %llu, the DM has %llu\n",
			 attr->length, attr->offset, e->dm_length);
		return ERR_PTR(-EINVAL);
	}
	if ((attr->access_flags & IB_ACCESS_REMOTE_ATOMIC) &&
	    ((e->dm_addr + attr->offset) & 7)) {
		shca_dbg(sdev, "DM MR with atomic access at offset %llu, not 8-byte aligned\n",
			 attr->offset);
		return ERR_PTR(-EINVAL);
	}
	mr = shca_mr_alloc(sdev, ibpd, SHCA_MPT_DM, 0, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	params.key = mr->ibmr.lkey;
	err = shca_cmd_write_mpt(sdev, &params);
	if (err) {
		shca_mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	mr->access = attr->access_flags;
	mr->ibmr.iova = 0;
	mr->ibmr.length = attr->length;
	return &mr->ibmr;
}

static int
UVERBS_HANDLER(SHCA_IB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm =
		uverbs_attr_get_obj(attrs, SHCA_IB_ATTR_QUERY_DM_REQ_HANDLE);
	struct shca_mmap_entry *e;
	u64 offset;
	int err;

	if (IS_ERR(ibdm))
		return PTR_ERR(ibdm);
	e = to_shca_dm(ibdm)->entry;
	offset = rdma_user_mmap_get_offset(&e->rdma_entry);
	err = uverbs_copy_to(attrs, SHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err)
		return err;
	return uverbs_copy_to(attrs, SHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
			      &e->dm_length, sizeof(e->dm_length));
}

DECLARE_UVERBS_NAMED_METHOD(SHCA_IB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(SHCA_IB_ATTR_QUERY_DM_REQ_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(shca_ib_dm_alloc, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(SHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(UVERBS_OBJECT_DM,
			      &UVERBS_METHOD(SHCA_IB_METHOD_DM_QUERY));

/* The driver's additions to the uverbs API: device memory's. */
const struct uapi_definition shca_dm_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &shca_ib_dm_alloc),
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(UVERBS_OBJECT_DM),
	{},
};
