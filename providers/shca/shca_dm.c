// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: device memory.
 *
 * ibv_alloc_dm() allocates part of the device's memory and maps it at the
 * offset the kernel returns in the driver attribute
 * SHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET; ibv_memcpy_to_dm() and
 * ibv_memcpy_from_dm() copy through that mapping, no system call.  Offsets
 * and lengths must be multiples of 4 bytes, as device memory is written in
 * words, and a copy must lie inside the allocation: else EINVAL, and
 * nothing moves.
 * ibv_reg_dm_mr() registers a zero-based MR on it; ibv_import_dm() maps a
 * DM of the context this one was imported from, found by its handle.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/cmd_ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "shca.h"

struct shca_dm {
	struct verbs_dm vdm;
	void *va;		/* the mapping */
	size_t map_len;		/* its length: the DM's, rounded to pages */
	uint64_t length;	/* the DM's length */
};

static struct shca_dm *to_sdm(struct ibv_dm *ibdm)
{
	return container_of(ibdm, struct shca_dm, vdm.dm);
}

/* Whether [offset, offset + length) is a copy the DM allows: in words. */
static int shca_dm_range_ok(struct shca_dm *dm, uint64_t offset,
			    size_t length)
{
	return !(offset & 3) && !(length & 3) && offset <= dm->length &&
	       length <= dm->length - offset;
}

static int shca_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct shca_dm *dm = to_sdm(ibdm);

	if (!shca_dm_range_ok(dm, dm_offset, length))
		return EINVAL;
	memcpy((char *)dm->va + dm_offset, host_addr, length);
	return 0;
}

static int shca_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct shca_dm *dm = to_sdm(ibdm);

	if (!shca_dm_range_ok(dm, dm_offset, length))
		return EINVAL;
	memcpy(host_addr, (char *)dm->va + dm_offset, length);
	return 0;
}

/* Map a DM of @length bytes at @offset and fill in what the copies use. */
static int shca_dm_map(struct ibv_context *ibctx, struct shca_dm *dm,
		       uint64_t offset, uint64_t length)
{
	size_t page = sysconf(_SC_PAGESIZE);

	dm->length = length;
	dm->map_len = (length + page - 1) & ~(page - 1);
	dm->va = shca_map(ibctx, offset, dm->map_len);
	if (!dm->va)
		return errno ? errno : ENOMEM;
	dm->vdm.dm.context = ibctx;
	dm->vdm.dm.memcpy_to_dm = shca_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = shca_memcpy_from_dm;
	return 0;
}

struct ibv_dm *shca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			       1);
	struct shca_dm *dm;
	uint64_t offset;
	int ret;

	if (attr->comp_mask || !attr->length) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_out(cmdb, SHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, &offset,
		      sizeof(offset));
	ret = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, cmdb);
	if (ret)
		goto err_free;
	ret = shca_dm_map(ibctx, dm, offset, attr->length);
	if (ret) {
		ibv_cmd_free_dm(&dm->vdm);
		goto err_free;
	}
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

/*
 * The kernel frees the DM first (it refuses while an MR is registered on
 * it, and then the mapping stays); the device takes the memory back when
 * the mapping goes.
 */
int shca_free_dm(struct ibv_dm *ibdm)
{
	struct shca_dm *dm = to_sdm(ibdm);
	int ret;

	ret = ibv_cmd_free_dm(&dm->vdm);
	if (ret)
		return ret;
	munmap(dm->va, dm->map_len);
	free(dm);
	return 0;
}

struct ibv_mr *shca_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_dm_mr(pd, &to_sdm(ibdm)->vdm, dm_offset, length,
				access, vmr, NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

struct ibv_dm *shca_import_dm(struct ibv_context *ibctx, uint32_t handle)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, SHCA_IB_METHOD_DM_QUERY,
			       3);
	uint64_t offset, length;
	struct shca_dm *dm;
	int ret;

	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_in_obj(cmdb, SHCA_IB_ATTR_QUERY_DM_REQ_HANDLE, handle);
	fill_attr_out(cmdb, SHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET, &offset,
		      sizeof(offset));
	fill_attr_out(cmdb, SHCA_IB_ATTR_QUERY_DM_RESP_LENGTH, &length,
		      sizeof(length));
	ret = execute_ioctl(ibctx, cmdb);
	if (ret)
		goto err_free;
	ret = shca_dm_map(ibctx, dm, offset, length);
	if (ret)
		goto err_free;
	dm->vdm.handle = handle;
	dm->vdm.dm.handle = handle;
	dm->vdm.dm.comp_mask = IBV_DM_MASK_HANDLE;
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

/* The kernel's DM stays, with the context that allocated it. */
void shca_unimport_dm(struct ibv_dm *ibdm)
{
	struct shca_dm *dm = to_sdm(ibdm);

	munmap(dm->va, dm->map_len);
	free(dm);
}
