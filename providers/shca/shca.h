/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libshca: the rdma-core provider of shca devices.  The lock order is the
 * DOC section below.
 */

/**
 * DOC: Lock order of libshca
 *
 * Outermost first::
 *
 *   a CQ's lock                        two CQs (a QP's sweep): lower CQN
 *                                      first
 *   the context's QP table lock, or
 *   its XRC SRQ table lock
 *   an SQ, RQ or SRQ lock              posting; never nested
 *
 * The context's lazy lock is taken with none of these held: a post takes
 * it after dropping its SQ lock, a poll and an arm before taking the CQ's.
 *
 * An object created on a parent domain with a thread domain takes none of
 * its own locks (shca_lock()): the application promised one thread uses
 * it.
 */
#ifndef SHCA_PROVIDER_H
#define SHCA_PROVIDER_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <kernel-abi/shca-abi.h>

/*
 * The data path shared with the kernel (include/shca/).  A process has no
 * fast registration: no SHCA_WR_OPCODE_REG_MR; its local invalidations
 * and window binds are mapped in shca_post.c.
 */
#define shca_wr_sge		ibv_sge
#define SHCA_WR_OPCODE(name)	IBV_WR_##name
#include "shca_wq.h"
#include "shca_wqe.h"

/* CQE decoding shared with the kernel, onto libibverbs' names. */
#define SHCA_WC_OPCODE(name)	IBV_WC_##name
#define SHCA_WC_OPCODE_REG_MR	IBV_WC_BIND_MW
#define SHCA_WC_STATUS(name)	IBV_WC_##name
#define SHCA_WC_F_IMM		IBV_WC_WITH_IMM
#define SHCA_WC_F_INV		IBV_WC_WITH_INV
#define SHCA_WC_F_GRH		IBV_WC_GRH
#include "shca_cqe.h"

struct shca_device {
	struct verbs_device ibv_dev;
};

#define SHCA_QP_TABLE_SIZE	256
#define SHCA_XSRQ_TABLE_SIZE	64

/*
 * The resource types a parent domain's allocator is asked for, one per
 * buffer libshca allocates for an object (Documentation/userspace.rst).
 * The rings and doorbell records are the kernel's, mapped, never these.
 */
enum shca_res_type {
	SHCA_RES_TYPE_QP = 1,		/* struct shca_qp */
	SHCA_RES_TYPE_SQ_WRID,		/* a QP's send wr_id table */
	SHCA_RES_TYPE_RQ_WRID,		/* a QP's receive wr_id table */
	SHCA_RES_TYPE_CQ,		/* struct shca_cq */
	SHCA_RES_TYPE_SRQ,		/* struct shca_srq */
	SHCA_RES_TYPE_SRQ_FREE,		/* an SRQ's free slot stack */
	SHCA_RES_TYPE_SRQ_WRID,		/* an SRQ's wr_id table */
};

/* The alignment libshca asks a parent domain's allocator for. */
#define SHCA_MEM_ALIGN		64

/* A thread domain: only a promise, kept by the parent domains on it. */
struct shca_td {
	struct ibv_td ibv_td;
	int users;			/* atomic: parent domains on it */
};

/*
 * A protection domain, or a parent domain (@protection set): the kernel
 * knows only the PD, whose handle the parent domain carries so that every
 * command names it.  A parent domain's thread domain makes the QPs, CQs
 * and SRQs created on it lock-free; its allocator gives what libshca
 * allocates for them.
 */
struct shca_pd {
	struct ibv_pd ibv_pd;
	struct shca_pd *protection;	/* a parent domain's PD, else NULL */
	struct shca_td *td;		/* a parent domain's TD, or NULL */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	int users;			/* atomic: parent domains on a PD,
					 * QPs, CQs and SRQs on a parent
					 */
	uint32_t pdn;			/* an imported PD's number */
};

/*
 * The XRC SRQ table: XRC receive CQEs name their SRQ by number
 * (shca_cqe_xrc_srqn()), not by a QP of this process.
 */
struct shca_context {
	struct verbs_context ibv_ctx;
	struct shca_alloc_ucontext_resp caps;
	pthread_mutex_t qp_lock;	/* guards qp_table */
	pthread_cond_t qp_gone;		/* a QP left qp_table */
	struct shca_qp *qp_table[SHCA_QP_TABLE_SIZE];
	pthread_mutex_t xsrq_lock;	/* guards xsrq_table */
	struct shca_srq *xsrq_table[SHCA_XSRQ_TABLE_SIZE];
	int lazy_db;			/* QPs may leave send doorbells for
					 * later: SHCA_LAZY_DOORBELL is not 0
					 */
	pthread_mutex_t lazy_lock;	/* guards lazy_head, the QPs'
					 * lazy_next; held while ringing
					 */
	struct shca_qp *lazy_head;	/* QPs that left a doorbell for later */
	int lazy_nr;			/* atomic: QPs on lazy_head */
};

/*
 * A CQ, legacy or extended: both poll through shca_cq_take().  An
 * ibv_start_poll() batch holds the poll lock until ibv_end_poll(), and
 * the members below @ci are its state.
 */
struct shca_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;	/* poll lock: ci, sweeps */
	int single_threaded;		/* polls take no lock: one thread's CQ */
	struct shca_pd *pdom;		/* the parent domain it is on, or NULL */
	unsigned int custom;		/* BIT(type): from pdom's allocator */
	uint64_t wc_flags;		/* IBV_WC_EX_WITH_* it was created with */
	struct shca_hw_cqe *ring;
	struct shca_hw_cq_dbrec *dbrec;
	uint32_t log_depth;
	uint32_t ci;
	uint32_t cqn;
	int arm_dbrec;			/* arms by the record's arm word */
	uint32_t arm_word;		/* the last arm request stored */
	/* the ibv_start_poll() batch in progress, under the poll lock */
	uint32_t batch_ci;		/* ci at ibv_start_poll() */
	struct shca_qp *batch_qp;	/* the QP of the last CQE taken */
	struct shca_cqe_wc cur;		/* the completion read_* report */
	int64_t wallclock_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	void *map;
	size_t map_len;
};

struct shca_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;	/* posting and slot recycling */
	int single_threaded;		/* takes no lock: a thread domain's */
	struct shca_pd *pdom;		/* the parent domain it is on, or NULL */
	unsigned int custom;		/* BIT(type): from pdom's allocator */
	struct shca_hw_recv_wqe *slots;
	uint32_t *index_ring;
	struct shca_hw_srq_dbrec *dbrec;
	uint32_t log_depth;
	uint32_t pi;
	uint32_t max_sge;
	uint32_t *free_slots;
	uint32_t nr_free;
	__u64 *wrid;
	void *map;
	size_t map_len;
	uint32_t srqn;
	struct shca_srq *xnext;		/* an XRC SRQ's, in xsrq_table */
};

/*
 * A QP's send and receive queues are struct shca_wq (shca_wq.h): their
 * producer indices are written under sq_lock and rq_lock, their consumer
 * indices by polling, under a CQ lock.
 */
struct shca_qp {
	struct verbs_qp vqp;
	struct shca_qp *next;		/* in the context's qp_table */
	enum ibv_qp_state state;
	pthread_spinlock_t sq_lock;	/* posting: sq.pi, the ring */
	pthread_spinlock_t rq_lock;	/* posting: rq.pi, the ring */
	int single_threaded;		/* no sq_lock, rq_lock: a TD's QP */
	struct shca_pd *pdom;		/* the parent domain it is on, or NULL */
	unsigned int custom;		/* BIT(type): from pdom's allocator */
	struct shca_wq sq;
	struct shca_wq rq;
	struct shca_hw_qp_dbrec *dbrec;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	int xrc_created;		/* an XRC target QP this process made */
	int lazy;			/* may leave send doorbells for later */
	int deferred;			/* atomic: posts left unrung since the
					 * last send doorbell
					 */
	int lazy_listed;		/* atomic: on the context's lazy list */
	struct shca_qp *lazy_next;	/* there, under its lazy_lock */
	/* the ibv_wr_* batch in progress, under sq_lock */
	struct shca_hw_send_wqe *cur;
	uint32_t wr_start_pi;
	int wr_err;
	void *map;
	size_t map_len;
};

struct shca_ah {
	struct ibv_ah ibv_ah;
	struct shca_hw_av av;
};

/*
 * Commands with the driver data of <rdma/shca-abi.h> after the core's:
 * struct shca_ucmd_NAME and struct shca_ucmd_NAME_resp, the driver's
 * fields in each reached by name (rdma-core checks the layout).
 */
DECLARE_DRV_CMD(shca_ucmd_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, shca_alloc_ucontext_resp);
DECLARE_DRV_CMD(shca_ucmd_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		shca_create_cq_cmd, shca_create_cq_resp);
DECLARE_DRV_CMD(shca_ucmd_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		shca_create_cq_cmd, shca_create_cq_resp);
DECLARE_DRV_CMD(shca_ucmd_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		shca_resize_cq_cmd, shca_resize_cq_resp);
DECLARE_DRV_CMD(shca_ucmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		shca_create_qp_cmd, shca_create_qp_resp);
DECLARE_DRV_CMD(shca_ucmd_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		shca_create_srq_cmd, shca_create_srq_resp);
DECLARE_DRV_CMD(shca_ucmd_create_xsrq, IB_USER_VERBS_CMD_CREATE_XSRQ,
		shca_create_srq_cmd, shca_create_srq_resp);
DECLARE_DRV_CMD(shca_ucmd_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		shca_modify_srq_cmd, empty);

static inline struct shca_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct shca_context, ibv_ctx.context);
}

static inline struct shca_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibv_pd);
}

static inline struct shca_td *to_std(struct ibv_td *ibtd)
{
	return container_of(ibtd, struct shca_td, ibv_td);
}

/* A lock of an object, which one of a thread domain does without. */
static inline void shca_lock(int single_threaded, pthread_spinlock_t *lock)
{
	if (!single_threaded)
		pthread_spin_lock(lock);
}

static inline void shca_unlock(int single_threaded, pthread_spinlock_t *lock)
{
	if (!single_threaded)
		pthread_spin_unlock(lock);
}

static inline struct shca_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, vcq.cq);
}

static inline struct shca_cq *cqx_to_scq(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct shca_cq, vcq.cq_ex);
}

static inline struct shca_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, vqp.qp);
}

static inline struct shca_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct shca_qp, vqp.qp_ex);
}

static inline struct shca_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, vsrq.srq);
}

static inline struct verbs_xrcd *to_vxrcd(struct ibv_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct verbs_xrcd, xrcd);
}

static inline struct shca_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibv_ah);
}

static inline uint32_t load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Whether the QP's state lets it send. */
static inline int shca_can_send(struct shca_qp *qp)
{
	enum ibv_qp_state s = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);

	return s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_RTR;
}

/* The send WQE at the producer index; NULL if the queue is full. */
static inline struct shca_hw_send_wqe *shca_sq_next(struct shca_qp *qp)
{
	return shca_wq_full(&qp->sq) ? NULL : shca_wq_send_wqe(&qp->sq);
}

static inline uint8_t shca_wqe_flags(unsigned int send_flags)
{
	return (send_flags & IBV_SEND_SIGNALED ? SHCA_WQE_F_SIGNALED : 0) |
	       (send_flags & IBV_SEND_SOLICITED ? SHCA_WQE_F_SOLICITED : 0) |
	       (send_flags & IBV_SEND_FENCE ? SHCA_WQE_F_FENCE : 0);
}

/* The transport service of a QP type, for shca_wqe_op_ok(). */
static inline uint32_t shca_qp_svc(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		return SHCA_WQE_SVC_RC;
	case IBV_QPT_UC:
		return SHCA_WQE_SVC_UC;
	default:
		return SHCA_WQE_SVC_UD;
	}
}

/*
 * Map an object's buffer at the offset its create response named.  A
 * failure is the kernel's or the process's limits', and is logged.
 */
static inline void *shca_map(struct ibv_context *ibctx, uint64_t offset,
			     size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ibctx->cmd_fd, offset);

	if (p != MAP_FAILED)
		return p;
	verbs_err(verbs_get_ctx(ibctx), "mmap of %zu bytes at %#llx: %s\n",
		  len, (unsigned long long)offset, strerror(errno));
	return NULL;
}

/* shca_domain.c */
struct ibv_pd *shca_alloc_pd(struct ibv_context *ibctx);
int shca_dealloc_pd(struct ibv_pd *ibpd);
struct ibv_td *shca_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr);
int shca_dealloc_td(struct ibv_td *ibtd);
struct ibv_pd *shca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr);
struct ibv_pd *shca_import_pd(struct ibv_context *ibctx, uint32_t handle);
void shca_unimport_pd(struct ibv_pd *ibpd);
struct ibv_mr *shca_import_mr(struct ibv_pd *ibpd, uint32_t handle);
void shca_unimport_mr(struct ibv_mr *ibmr);
struct shca_pd *shca_pdom_get(struct ibv_context *ibctx, struct ibv_pd *ibpd,
			      int *err);
void shca_pdom_put(struct shca_pd *pdom);
void *shca_mem_alloc(struct shca_pd *pdom, size_t size,
		     enum shca_res_type type, unsigned int *custom);
void shca_mem_free(struct shca_pd *pdom, void *ptr, enum shca_res_type type,
		   unsigned int custom);

/* shca_cq.c */
struct ibv_cq *shca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
int shca_destroy_cq(struct ibv_cq *ibcq);
int shca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int shca_resize_cq(struct ibv_cq *ibcq, int cqe);
int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited);
void shca_qp_sweep(struct shca_qp *qp, int forget);
void shca_xrc_tgt_sweep(struct shca_context *ctx, struct verbs_xrcd *xrcd,
			uint32_t qpn);

/* shca_qp_table.c */
struct shca_qp *shca_qp_lookup(struct shca_context *ctx, uint32_t qpn);
void shca_qp_insert(struct shca_context *ctx, struct shca_qp *qp);
void shca_qp_remove(struct shca_context *ctx, struct shca_qp *qp);

/* shca_qp.c */
struct ibv_qp *shca_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr);
struct ibv_qp *shca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init);
int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask);
int shca_destroy_qp(struct ibv_qp *ibqp);
struct ibv_qp *shca_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr);

/* shca_srq.c */
struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int mask);
int shca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int shca_destroy_srq(struct ibv_srq *ibsrq);
struct ibv_srq *shca_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr);
int shca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
struct shca_srq *shca_xsrq_lookup(struct shca_context *ctx, uint32_t srqn);
struct ibv_xrcd *shca_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr);
int shca_close_xrcd(struct ibv_xrcd *ibxrcd);
void shca_srq_put_slot(void *ctx, const struct shca_hw_cqe *cqe);
__u64 shca_srq_take_slot(void *ctx, uint32_t slot);

/* shca_mw.c */
struct ibv_mw *shca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int shca_dealloc_mw(struct ibv_mw *mw);
int shca_wqe_bind(struct shca_hw_send_wqe *w, struct ibv_mw *mw,
		  uint32_t rkey, const struct ibv_mw_bind_info *info);

/* shca_post.c */
int shca_ring_sq(struct shca_qp *qp);
void shca_ring_deferred(struct shca_qp *qp);
void shca_ring_lazy(struct shca_context *ctx);
void shca_lazy_forget(struct shca_qp *qp);
int shca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/* shca_wr.c */
void shca_set_wr_ops(struct shca_qp *qp);

/* shca_dm.c */
struct ibv_dm *shca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr);
int shca_free_dm(struct ibv_dm *ibdm);
struct ibv_mr *shca_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access);
struct ibv_dm *shca_import_dm(struct ibv_context *ibctx, uint32_t handle);
void shca_unimport_dm(struct ibv_dm *ibdm);

#endif /* SHCA_PROVIDER_H */
