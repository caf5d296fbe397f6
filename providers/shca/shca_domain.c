// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: protection domains, thread domains, parent domains, and the
 * import of another process's (or this one's other context's) PDs and MRs.
 *
 * The kernel knows protection domains only.  A thread domain is a
 * promise, and a parent domain a PD with two things added: the promise
 * (its thread domain), which makes the QPs, CQs and SRQs created on it
 * take none of their own locks, and an allocator, which gives the memory
 * libshca allocates for them (shca_mem_alloc()).  A parent domain carries
 * its PD's handle, so every kernel command made on it names the PD.
 *
 * References, each refusing a deallocation with EBUSY while held: a
 * parent domain holds its PD and its thread domain; a QP, CQ or SRQ
 * created on a parent domain holds the parent domain, whose allocator it
 * frees its memory with.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/cmd_ioctl.h>

#include "shca.h"

static void shca_get(int *users)
{
	__atomic_add_fetch(users, 1, __ATOMIC_RELAXED);
}

static void shca_put(int *users)
{
	__atomic_sub_fetch(users, 1, __ATOMIC_RELEASE);
}

static int shca_busy(int *users)
{
	return __atomic_load_n(users, __ATOMIC_ACQUIRE) != 0;
}

struct ibv_pd *shca_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct shca_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibv_pd;
}

/*
 * A parent domain goes only when no QP, CQ or SRQ is on it, and gives its
 * references back; a PD only when no parent domain is on it.
 */
int shca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct shca_pd *pd = to_spd(ibpd);
	int ret;

	if (shca_busy(&pd->users))
		return EBUSY;
	if (pd->protection) {
		shca_put(&pd->protection->users);
		if (pd->td)
			shca_put(&pd->td->users);
		free(pd);
		return 0;
	}
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (!ret)
		free(pd);
	return ret;
}

struct ibv_td *shca_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr)
{
	struct shca_td *td;

	if (!attr || attr->comp_mask) {
		errno = attr ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibv_td.context = ibctx;
	return &td->ibv_td;
}

int shca_dealloc_td(struct ibv_td *ibtd)
{
	struct shca_td *td = to_std(ibtd);

	if (shca_busy(&td->users))
		return EBUSY;
	free(td);
	return 0;
}

#define SHCA_PDOM_MASK	(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | \
			 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

/* The checks of ibv_alloc_parent_domain(): 0 or an errno. */
static int shca_pdom_attr_ok(struct ibv_context *ibctx,
			     const struct ibv_parent_domain_init_attr *attr)
{
	if (!attr || !attr->pd)
		return EINVAL;
	if (attr->comp_mask & ~SHCA_PDOM_MASK)
		return EOPNOTSUPP;
	/* A PD of this context, not itself a parent domain. */
	if (attr->pd->context != ibctx || to_spd(attr->pd)->protection)
		return EINVAL;
	if (attr->td && attr->td->context != ibctx)
		return EINVAL;
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free))
		return EINVAL;
	return 0;
}

struct ibv_pd *shca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr)
{
	struct shca_pd *pdom;
	int ret;

	ret = shca_pdom_attr_ok(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pdom = calloc(1, sizeof(*pdom));
	if (!pdom)
		return NULL;
	pdom->ibv_pd.context = ibctx;
	pdom->ibv_pd.handle = attr->pd->handle;
	pdom->protection = to_spd(attr->pd);
	shca_get(&pdom->protection->users);
	if (attr->td) {
		pdom->td = to_std(attr->td);
		shca_get(&pdom->td->users);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;
	return &pdom->ibv_pd;
}

/**
 * shca_pdom_get() - the parent domain an object is created on
 * @ibctx: the context the object is created in
 * @ibpd: the PD the application named, or NULL
 * @err: 0, or EINVAL for a PD of another context
 *
 * Return: @ibpd's parent domain, held until shca_pdom_put(), or NULL for
 * no PD, a protection domain or an error.
 */
struct shca_pd *shca_pdom_get(struct ibv_context *ibctx, struct ibv_pd *ibpd,
			      int *err)
{
	struct shca_pd *pd;

	*err = 0;
	if (!ibpd)
		return NULL;
	if (ibpd->context != ibctx) {
		*err = EINVAL;
		return NULL;
	}
	pd = to_spd(ibpd);
	if (!pd->protection)
		return NULL;
	shca_get(&pd->users);
	return pd;
}

/**
 * shca_pdom_put() - an object on a parent domain is gone
 * @pdom: what shca_pdom_get() returned; NULL does nothing
 */
void shca_pdom_put(struct shca_pd *pdom)
{
	if (pdom)
		shca_put(&pdom->users);
}

/**
 * shca_mem_alloc() - zeroed memory for an object, from its parent domain
 * @pdom: the object's parent domain, or NULL
 * @size: bytes
 * @type: what the memory is for, the allocator's resource_type
 * @custom: BIT(@type) is set if the parent domain's allocator gave it
 *
 * A parent domain's allocator is asked for @size bytes aligned to
 * SHCA_MEM_ALIGN; if it answers IBV_ALLOCATOR_USE_DEFAULT, or the parent
 * domain has none, libshca's own allocator (calloc) gives it.  Memory not
 * aligned as asked is handed back to the allocator's free: EINVAL.
 *
 * Return: the memory, or NULL with errno set.
 */
void *shca_mem_alloc(struct shca_pd *pdom, size_t size,
		     enum shca_res_type type, unsigned int *custom)
{
	void *p;

	*custom &= ~(1U << type);
	if (pdom && pdom->alloc) {
		p = pdom->alloc(&pdom->ibv_pd, pdom->pd_context, size,
				SHCA_MEM_ALIGN, type);
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			if (!p) {
				errno = ENOMEM;
				return NULL;
			}
			if ((uintptr_t)p % SHCA_MEM_ALIGN) {
				pdom->free(&pdom->ibv_pd, pdom->pd_context, p,
					   type);
				errno = EINVAL;
				return NULL;
			}
			memset(p, 0, size);
			*custom |= 1U << type;
			return p;
		}
	}
	return calloc(1, size);
}

/**
 * shca_mem_free() - free what shca_mem_alloc() gave
 * @pdom: the parent domain it was allocated on, or NULL
 * @ptr: the memory, or NULL
 * @type: the type it was allocated as
 * @custom: the bits shca_mem_alloc() set
 */
void shca_mem_free(struct shca_pd *pdom, void *ptr, enum shca_res_type type,
		   unsigned int custom)
{
	if (!ptr)
		return;
	if (custom & (1U << type))
		pdom->free(&pdom->ibv_pd, pdom->pd_context, ptr, type);
	else
		free(ptr);
}

/*
 * Import: the handle must name a PD of the file (SHCA_METHOD_PD_QUERY),
 * and the imported PD is this context's object for it until
 * ibv_unimport_pd(); ibv_dealloc_pd() on it frees the kernel's PD.
 */
struct ibv_pd *shca_import_pd(struct ibv_context *ibctx, uint32_t handle)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_PD, SHCA_METHOD_PD_QUERY, 2);
	struct shca_pd *pd;
	uint32_t pdn;
	int ret;

	fill_attr_in_obj(cmd, SHCA_ATTR_QUERY_PD_HANDLE, handle);
	fill_attr_out_ptr(cmd, SHCA_ATTR_QUERY_PD_RESP_PDN, &pdn);
	ret = execute_ioctl(ibctx, cmd);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = handle;
	pd->pdn = pdn;
	return &pd->ibv_pd;
}

/* The kernel's PD stays; a parent domain on it must be gone first. */
void shca_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_spd(ibpd));
}

struct ibv_mr *shca_import_mr(struct ibv_pd *ibpd, uint32_t handle)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_query_mr(ibpd, vmr, handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

void shca_unimport_mr(struct ibv_mr *ibmr)
{
	free(container_of(ibmr, struct verbs_mr, ibv_mr));
}
