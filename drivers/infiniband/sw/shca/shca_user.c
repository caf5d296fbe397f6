// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: what a process sees of the device.
 *
 * A process opens a context, creates CQs, QPs and SRQs through the uverbs
 * commands with the driver data of <rdma/shca-abi.h>, and maps each one's
 * rings and doorbell record (one shca_buf_alloc() buffer) at the offset its
 * create response names.  The offsets are rdma_user_mmap entries of the
 * creating context: another context's offset, or one of a destroyed
 * object, does not map.  A mapping keeps its pages after the object is
 * destroyed; the device no longer writes them.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#define UVERBS_MODULE_NAME shca
#include <rdma/uverbs_named_ioctl.h>

#include "shca.h"

/**
 * shca_udata_cmd() - read a command's driver data, forward-compatibly
 * @sdev: the device
 * @udata: what the process passed
 * @cmd: filled in; the fields the process did not pass read as zero
 * @size: size of @cmd, the command as this kernel knows it
 * @min_len: the fewest bytes this kernel takes: offsetofend() of the last
 *	field it needs
 *
 * An older provider may pass less than @size, down to @min_len: the fields
 * it did not pass are zero.  A newer one may pass more, as long as every
 * byte beyond @size is zero: a field this kernel does not know must be
 * left unset.
 *
 * Return: 0, -EINVAL when the process passed less than @min_len bytes,
 * -EOPNOTSUPP when it passed more than @size and the bytes beyond are not
 * zero, or -EFAULT.
 */
int shca_udata_cmd(struct shca_dev *sdev, struct ib_udata *udata, void *cmd,
		   size_t size, size_t min_len)
{
	if (udata->inlen < min_len) {
		shca_dbg(sdev, "driver data of %zu bytes, at least %zu expected\n",
			 udata->inlen, min_len);
		return -EINVAL;
	}
	if (udata->inlen > size &&
	    !ib_is_udata_cleared(udata, size, udata->inlen - size)) {
		shca_dbg(sdev, "unknown driver data after %zu bytes\n", size);
		return -EOPNOTSUPP;
	}
	if (!size)
		return 0;
	memset(cmd, 0, size);
	return ib_copy_from_udata(cmd, udata, min(size, udata->inlen)) ?
	       -EFAULT : 0;
}

/* Create commands: comp_mask bits this kernel knows (none yet). */
#define SHCA_CREATE_CMD_COMP_MASK_KNOWN	0U

/**
 * shca_udata_create_cmd() - read and check a create command's driver data
 * @sdev: the device
 * @udata: what the process passed
 * @what: "CQ", "QP" or "SRQ", for the debug message
 * @min_len: the fewest bytes the caller takes, as for shca_udata_cmd()
 *
 * struct shca_create_cq_cmd, shca_create_qp_cmd and shca_create_srq_cmd
 * are alike so far: a comp_mask, no bit of which is defined, and a
 * reserved word that must be zero.  A comp_mask bit this kernel does not
 * know is refused, so a provider learns that the kernel is older than the
 * feature it asked for.
 *
 * Return: 0, -EOPNOTSUPP for an unknown comp_mask bit or a reserved bit
 * set, or what shca_udata_cmd() returns.
 */
int shca_udata_create_cmd(struct shca_dev *sdev, struct ib_udata *udata,
			  const char *what, size_t min_len)
{
	struct shca_create_cq_cmd ucmd;
	int err;

	BUILD_BUG_ON(sizeof(struct shca_create_qp_cmd) != sizeof(ucmd) ||
		     sizeof(struct shca_create_srq_cmd) != sizeof(ucmd));
	BUILD_BUG_ON(offsetof(struct shca_create_qp_cmd, reserved) !=
		     offsetof(struct shca_create_cq_cmd, reserved) ||
		     offsetof(struct shca_create_srq_cmd, reserved) !=
		     offsetof(struct shca_create_cq_cmd, reserved));
	err = shca_udata_cmd(sdev, udata, &ucmd, sizeof(ucmd), min_len);
	if (err)
		return err;
	if ((ucmd.comp_mask & ~SHCA_CREATE_CMD_COMP_MASK_KNOWN) ||
	    ucmd.reserved) {
		shca_dbg(sdev, "%s: comp_mask %#x, reserved %#x\n", what,
			 ucmd.comp_mask, ucmd.reserved);
		return -EOPNOTSUPP;
	}
	return 0;
}

/**
 * shca_udata_resp() - write a command's driver response, forward-compatibly
 * @sdev: the device
 * @udata: what the process passed
 * @resp: the response
 * @len: its size, the response as this kernel knows it
 *
 * An older provider's buffer may be shorter than @len: it gets the
 * response cut to its buffer, the fields it knows.  A newer one's may be
 * longer: the bytes beyond @len are zeroed, so a field this kernel does
 * not know reads as zero.
 *
 * Return: 0 or -EFAULT.
 */
int shca_udata_resp(struct shca_dev *sdev, struct ib_udata *udata,
		    void *resp, size_t len)
{
	if (udata->outlen < len)
		shca_dbg(sdev, "response of %zu bytes cut to %zu\n", len,
			 udata->outlen);
	if (ib_copy_to_udata(udata, resp, min(len, udata->outlen)))
		return -EFAULT;
	if (udata->outlen > len &&
	    clear_user(udata->outbuf + len, udata->outlen - len))
		return -EFAULT;
	return 0;
}

/* What a context learns of the device, at open and at import alike. */
static void shca_ucontext_resp(struct shca_dev *sdev,
			       struct shca_alloc_ucontext_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->sq_wqe_size = sizeof(struct shca_hw_send_wqe);
	resp->rq_wqe_size = sizeof(struct shca_hw_recv_wqe);
	resp->cqe_size = sizeof(struct shca_hw_cqe);
	resp->max_inline = sdev->caps.max_inline_data;
	resp->max_sge = SHCA_HW_MAX_SGE;
}

/**
 * shca_alloc_ucontext() - open a process's context
 * @ibuc: the object ib_core allocated
 * @udata: no input; the response is struct shca_alloc_ucontext_resp
 *
 * Return: 0 or a negative errno.
 */
int shca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibuc->device);
	struct shca_alloc_ucontext_resp resp;
	int err;

	err = shca_udata_cmd(sdev, udata, NULL, 0, 0);
	if (err)
		return err;
	shca_ucontext_resp(sdev, &resp);
	return shca_udata_resp(sdev, udata, &resp, sizeof(resp));
}

/**
 * shca_query_ucontext() - what an imported context learns of the device
 * @ibuc: the context, opened by shca_alloc_ucontext()
 * @attrs: UVERBS_METHOD_QUERY_CONTEXT's attributes; the driver's is
 *	SHCA_ATTR_QUERY_CONTEXT_RESP
 *
 * The same struct shca_alloc_ucontext_resp the context was opened with,
 * cut to the process's buffer or zero-filled past its end.
 *
 * Return: 0 or a negative errno.
 */
int shca_query_ucontext(struct ib_ucontext *ibuc,
			struct uverbs_attr_bundle *attrs)
{
	struct shca_alloc_ucontext_resp resp;

	shca_ucontext_resp(to_shca_dev(ibuc->device), &resp);
	return uverbs_copy_to_struct_or_zero(attrs,
					     SHCA_ATTR_QUERY_CONTEXT_RESP,
					     &resp, sizeof(resp));
}

/* SHCA_METHOD_PD_QUERY: a PD handle of this file, for ibv_import_pd(). */
static int UVERBS_HANDLER(SHCA_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd = uverbs_attr_get_obj(attrs,
						 SHCA_ATTR_QUERY_PD_HANDLE);
	struct shca_pd *pd = container_of(ibpd, struct shca_pd, ibpd);

	return uverbs_copy_to(attrs, SHCA_ATTR_QUERY_PD_RESP_PDN, &pd->pdn,
			      sizeof(pd->pdn));
}

DECLARE_UVERBS_NAMED_METHOD(SHCA_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(SHCA_ATTR_QUERY_PD_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SHCA_ATTR_QUERY_PD_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY));

ADD_UVERBS_METHODS(shca_pd_methods, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(SHCA_METHOD_PD_QUERY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(shca_query_context_attrs, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(SHCA_ATTR_QUERY_CONTEXT_RESP,
						 UVERBS_ATTR_STRUCT(struct shca_alloc_ucontext_resp,
								    max_sge),
						 UA_MANDATORY));

/* The driver's ioctl additions (<rdma/shca-abi.h>), for ibdev.driver_def. */
const struct uapi_definition shca_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE,
				&shca_query_context_attrs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &shca_pd_methods),
	UAPI_DEF_CHAIN(shca_dm_uapi_defs),
	{},
};

/**
 * shca_dealloc_ucontext() - close a process's context
 * @ibuc: the context; every object of it is gone already
 */
void shca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * shca_disassociate_ucontext() - cut a context off a device going away
 * @ibuc: the context; ib_core has destroyed its objects
 *
 * Having it lets a device be removed (rdma link delete, the netdev going)
 * while processes still have it open: ib_core destroys their objects and
 * reports a fatal device event, instead of waiting for them to exit.
 * Nothing is left to cut: the device no longer writes the rings, and the
 * pages still mapped are plain memory the mappings keep alive.
 */
void shca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * shca_mmap_insert() - give a process's object buffer an mmap offset
 * @udata: the create command's driver data, which names the context
 * @buf: the buffer, from shca_buf_alloc()
 * @len: its length, from shca_buf_len()
 * @offset: set to the offset to map it at
 *
 * On success the entry owns @buf: release both with shca_buf_release().
 *
 * Return: the entry, or an ERR_PTR().
 */
struct rdma_user_mmap_entry *shca_mmap_insert(struct ib_udata *udata,
					      void *buf, size_t len,
					      u64 *offset)
{
	struct shca_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct shca_ucontext, ibuc);
	struct shca_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->buf = buf;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &e->rdma_entry, len);
	if (err) {
		kfree(e);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&e->rdma_entry);
	return &e->rdma_entry;
}

/* Map @len bytes of vmalloc memory at @buf, page by page. */
static int shca_mmap_pages(struct vm_area_struct *vma, void *buf, size_t len)
{
	unsigned long off;
	int err;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (off = 0; off < len; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(buf + off));
		if (err)
			return err;
	}
	return 0;
}

/**
 * shca_mmap() - map an object's buffer into the process
 * @ibuc: the context the mmap() came through
 * @vma: the mapping; shared, starting at an offset of this context, as
 *	long as the buffer
 *
 * Return: 0, or -EINVAL for an offset this context does not own, a wrong
 * length or a private mapping.
 */
int shca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct shca_dev *sdev = to_shca_dev(ibuc->device);
	struct rdma_user_mmap_entry *e;
	int err;

	if (!(vma->vm_flags & VM_SHARED)) {
		shca_dbg(sdev, "private mapping at offset %#lx\n",
			 vma->vm_pgoff << PAGE_SHIFT);
		return -EINVAL;
	}
	e = rdma_user_mmap_entry_get(ibuc, vma);
	if (!e) {
		shca_dbg(sdev, "no buffer of %lu bytes at offset %#lx\n",
			 vma->vm_end - vma->vm_start,
			 vma->vm_pgoff << PAGE_SHIFT);
		return -EINVAL;
	}
	if (to_shca_mmap_entry(e)->dm)
		err = shca_dm_mmap(ibuc, vma, to_shca_mmap_entry(e));
	else
		err = shca_mmap_pages(vma, to_shca_mmap_entry(e)->buf,
				      vma->vm_end - vma->vm_start);
	rdma_user_mmap_entry_put(e);
	return err;
}

/**
 * shca_mmap_free() - free an mmap entry nobody refers to any more, with
 * its buffer
 * @rdma_entry: the entry
 *
 * The pages of a mapping the process still holds outlive the buffer until
 * it unmaps them.
 */
void shca_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct shca_mmap_entry *e = to_shca_mmap_entry(rdma_entry);

	if (e->dm) {
		shca_dm_mmap_free(e);
		return;
	}
	shca_buf_free(e->buf);
	kfree(e);
}

/**
 * shca_buf_release() - let an object's buffer go, once the device is done
 * with it
 * @buf: the buffer, from shca_buf_alloc()
 * @mmap: its mmap entry, if it has one, which owns it; or NULL
 *
 * With an entry, the entry leaves the context (its offset no longer maps)
 * and the buffer is freed when no mmap() in progress holds the entry any
 * more; without one, the buffer is freed now.
 */
void shca_buf_release(void *buf, struct rdma_user_mmap_entry *mmap)
{
	if (mmap)
		rdma_user_mmap_entry_remove(mmap);
	else
		shca_buf_free(buf);
}
