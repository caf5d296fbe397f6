// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: the rdma-core provider of shca devices.
 *
 * The kernel creates each CQ, QP and SRQ with its rings and doorbell
 * record in one buffer and gives an mmap offset for it.  From then on the
 * data path is the process's own: posting writes WQEs into the mapped
 * ring and publishes the producer index in the doorbell record (sends
 * also ring the doorbell, a POST_SEND command with no work requests);
 * polling reads CQEs by owner bit and publishes the consumer index, with
 * no system call.
 *
 * Teardown keeps the kernel's guarantee: after the kernel's DESTROY_QP (or
 * a modify to RESET) returns, the device writes no more CQEs for the QP,
 * and the provider sweeps the QP's CQEs out of its CQs under their poll
 * locks with shca_sweep_cq_ring(), the very code the kernel sweeps kernel
 * CQs with.  No poll returns a completion of a destroyed QP, and a CQE of
 * another QP is never lost or changed.
 *
 * The provider is split by object: this file has the device, the context
 * (opened or imported), MRs and AHs; shca_domain.c has protection, thread
 * and parent domains and imports PDs and MRs; shca_cq.c polls and sweeps;
 * shca_qp.c and shca_srq.c create the queues, and shca_qp_table.c finds a
 * QP by number; shca_post.c posts work requests and shca_wr.c is the
 * ibv_wr_* send API; shca_mw.c builds window binds; shca_dm.c is device
 * memory.  WQE building, WQE completion, SRQ slots and CQE
 * decoding are the kernel's own code, in include/shca/.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include <infiniband/cmd_ioctl.h>

#include "shca.h"

static const struct verbs_match_ent shca_match_table[] = {
	/* The kernel reports no driver id: devices are known by name. */
	VERBS_NAME_MATCH("shca", NULL),
	{},
};

/* --- device, context --------------------------------------------------- */

static int shca_query_device(struct ibv_context *ibctx,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

/*
 * The device clock, which stamps every CQE, is the kernel's
 * CLOCK_MONOTONIC in nanoseconds (hca_core_clock 1000000 kHz): the
 * process reads it itself, no system call.
 */
static int shca_query_rt_values(struct ibv_context *ibctx,
				struct ibv_values_ex *values)
{
	uint32_t mask = values->comp_mask;

	if (mask & ~IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	values->comp_mask = 0;
	if (mask & IBV_VALUES_MASK_RAW_CLOCK) {
		struct timespec ts;

		if (clock_gettime(CLOCK_MONOTONIC, &ts))
			return errno;
		/*
		 * As providers give it: the raw count of device clock ticks
		 * in tv_nsec, tv_sec 0, so that it compares directly with
		 * ibv_wc_read_completion_ts().
		 */
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = ts.tv_sec * 1000000000LL + ts.tv_nsec;
		values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}

/* --- XRC domains: the kernel's objects, no driver data ----------------- */

struct ibv_xrcd *shca_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

int shca_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = to_vxrcd(ibxrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}

static int shca_query_port(struct ibv_context *ibctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

/*
 * IBV_ACCESS_ON_DEMAND passes through with the rest: the kernel registers
 * an on-demand paging MR, which pins nothing.
 */
static struct ibv_mr *shca_reg_mr(struct ibv_pd *pd, void *addr,
				  size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			   sizeof(cmd), &resp, sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * Prefetch of ODP MRs (IBV_ADVISE_MR_ADVICE_PREFETCH, _PREFETCH_WRITE,
 * _PREFETCH_NO_FAULT): the kernel does it all.
 */
static int shca_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			  uint32_t flags, struct ibv_sge *sg_list,
			  uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

static int shca_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/*
 * In place: the keys stay, the kernel rewrites the MR's MPT entry.  The
 * new translation's device address is its process address, as for
 * shca_reg_mr() through ibv_reg_mr().
 */
static int shca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			 void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

/* --- address handles --------------------------------------------------- */

static struct ibv_ah *shca_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp;
	struct shca_ah *ah;

	if (!attr->is_global) {
		/* RoCE: every address carries a GRH. */
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	if (ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp, sizeof(resp))) {
		free(ah);
		return NULL;
	}
	memcpy(ah->av.dgid, attr->grh.dgid.raw, sizeof(ah->av.dgid));
	ah->av.flow_label = attr->grh.flow_label;
	ah->av.sgid_index = attr->grh.sgid_index;
	ah->av.hop_limit = attr->grh.hop_limit;
	ah->av.traffic_class = attr->grh.traffic_class;
	ah->av.sl = attr->sl;
	return &ah->ibv_ah;
}

static int shca_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (!ret)
		free(to_sah(ibah));
	return ret;
}

/* --- multicast: the kernel keeps the groups ---------------------------- */

static int shca_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			     uint16_t lid)
{
	return ibv_cmd_attach_mcast(qp, gid, lid);
}

static int shca_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			     uint16_t lid)
{
	return ibv_cmd_detach_mcast(qp, gid, lid);
}

/* --- the provider ------------------------------------------------------ */

static void shca_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops shca_ctx_ops = {
	.advise_mr = shca_advise_mr,
	.alloc_dm = shca_alloc_dm,
	.alloc_mw = shca_alloc_mw,
	.alloc_parent_domain = shca_alloc_parent_domain,
	.alloc_pd = shca_alloc_pd,
	.alloc_td = shca_alloc_td,
	.attach_mcast = shca_attach_mcast,
	.bind_mw = shca_bind_mw,
	.close_xrcd = shca_close_xrcd,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq,
	.create_cq_ex = shca_create_cq_ex,
	.create_qp = shca_create_qp,
	.create_qp_ex = shca_create_qp_ex,
	.create_srq = shca_create_srq,
	.create_srq_ex = shca_create_srq_ex,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_td = shca_dealloc_td,
	.dereg_mr = shca_dereg_mr,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.destroy_srq = shca_destroy_srq,
	.detach_mcast = shca_detach_mcast,
	.free_context = shca_free_context,
	.free_dm = shca_free_dm,
	.get_srq_num = shca_get_srq_num,
	.import_dm = shca_import_dm,
	.import_mr = shca_import_mr,
	.import_pd = shca_import_pd,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.open_qp = shca_open_qp,
	.open_xrcd = shca_open_xrcd,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_device_ex = shca_query_device,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_rt_values = shca_query_rt_values,
	.query_srq = shca_query_srq,
	.reg_dm_mr = shca_reg_dm_mr,
	.reg_mr = shca_reg_mr,
	.req_notify_cq = shca_req_notify_cq,
	.rereg_mr = shca_rereg_mr,
	.resize_cq = shca_resize_cq,
	.unimport_dm = shca_unimport_dm,
	.unimport_mr = shca_unimport_mr,
	.unimport_pd = shca_unimport_pd,
};

/*
 * A context the kernel described in @caps: ready, or -1 with errno set
 * (the caller frees it).
 */
static int shca_context_init(struct shca_context *ctx,
			     const struct shca_alloc_ucontext_resp *caps)
{
	const char *lazy;

	if (caps->sq_wqe_size != sizeof(struct shca_hw_send_wqe) ||
	    caps->rq_wqe_size != sizeof(struct shca_hw_recv_wqe) ||
	    caps->cqe_size != sizeof(struct shca_hw_cqe)) {
		/* A kernel with other ring formats: not ours to drive. */
		verbs_err(&ctx->ibv_ctx,
			  "the kernel's WQEs (%u, %u bytes) or CQEs (%u) are not libshca's (%zu, %zu, %zu)\n",
			  caps->sq_wqe_size, caps->rq_wqe_size, caps->cqe_size,
			  sizeof(struct shca_hw_send_wqe),
			  sizeof(struct shca_hw_recv_wqe),
			  sizeof(struct shca_hw_cqe));
		errno = EPROTONOSUPPORT;
		return -1;
	}
	ctx->caps = *caps;
	lazy = getenv("SHCA_LAZY_DOORBELL");
	ctx->lazy_db = !lazy || strcmp(lazy, "0");
	pthread_mutex_init(&ctx->lazy_lock, NULL);
	pthread_mutex_init(&ctx->qp_lock, NULL);
	pthread_cond_init(&ctx->qp_gone, NULL);
	pthread_mutex_init(&ctx->xsrq_lock, NULL);
	verbs_set_ops(&ctx->ibv_ctx, &shca_ctx_ops);
	return 0;
}

static struct verbs_context *shca_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	struct shca_ucmd_get_context_resp resp = {};
	struct shca_ucmd_get_context cmd = {};
	struct shca_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp)) ||
	    shca_context_init(ctx, &resp.drv_payload)) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		return NULL;
	}
	return &ctx->ibv_ctx;
}

/*
 * ibv_import_device(): the context another process (or this one) opened
 * on @cmd_fd.  The kernel answers the query with the context's
 * struct shca_alloc_ucontext_resp.  The import's QP table, and so its
 * polling, is its own: a CQ polls in the context that created it.
 */
static struct verbs_context *shca_import_context(struct ibv_device *ibdev,
						 int cmd_fd)
{
	DECLARE_COMMAND_BUFFER_LINK(drv, UVERBS_OBJECT_DEVICE,
				    UVERBS_METHOD_QUERY_CONTEXT, 1, NULL);
	struct shca_alloc_ucontext_resp caps = {};
	struct shca_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	fill_attr_out_ptr(drv, SHCA_ATTR_QUERY_CONTEXT_RESP, &caps);
	ret = ibv_cmd_query_context(&ctx->ibv_ctx.context, drv);
	if (ret)
		errno = ret;
	if (ret || shca_context_init(ctx, &caps)) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		return NULL;
	}
	return &ctx->ibv_ctx;
}

static void shca_free_context(struct ibv_context *ibctx)
{
	struct shca_context *ctx = to_sctx(ibctx);

	pthread_cond_destroy(&ctx->qp_gone);
	pthread_mutex_destroy(&ctx->qp_lock);
	pthread_mutex_destroy(&ctx->xsrq_lock);
	pthread_mutex_destroy(&ctx->lazy_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *shca_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct shca_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->ibv_dev : NULL;
}

static void shca_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct shca_device, ibv_dev));
}

static const struct verbs_device_ops shca_dev_ops = {
	.name = "shca",
	.match_min_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_table = shca_match_table,
	.alloc_device = shca_device_alloc,
	.uninit_device = shca_uninit_device,
	.alloc_context = shca_alloc_context,
	.import_context = shca_import_context,
};

PROVIDER_DRIVER(shca, shca_dev_ops);
