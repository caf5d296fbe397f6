/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the verbs layer's view of a device.
 *
 * The lock order is the DOC section below.
 */

/**
 * DOC: Lock order of the driver
 *
 * Outermost first, with what each lock guards::
 *
 *   rtnl_lock                         the netdev notifier (shca_main.c)
 *   ib_device.unregistration_lock     ib_core's, around dealloc_driver
 *   shca_dev_list_lock                the driver's devices (shca_main.c)
 *   shca_xrcd.lock                    a domain's SRQs; an XRC target
 *                                     QP's sweep walks them
 *   shca_srq.resize_mutex             across a resize; the SRQ's
 *                                     posting lock under it
 *   shca_cq.resize_mutex              across a resize; a QP's two CQs at
 *                                     once (its sweep): lower CQN first
 *   shca_cq.lock                      poll lock; a QP's two CQs at once:
 *                                     lower CQN first
 *   shca_dev.qps xarray lock,         taken under the poll locks by the
 *   shca_srq.lock                     sweep
 *   shca_qp.sq_lock, shca_qp.rq_lock, posting; never nested
 *   shca_srq.lock
 *   shca_qp.mcast_mutex               a QP's attach, detach and reset
 *   shca_dev.mcast_quota_lock         the per-process multicast counts
 *   shca_dev.odp_mutex                ODP MRs found for a prefetch
 *   ib_umem_odp.umem_mutex            ib_core's: an ODP MR's pages
 *   the model's locks                 leaves for the driver (see the
 *                                     model's lock order)
 *
 * ib_core's rtnl and device locks are never taken under
 * shca_dev_list_lock: neither ib_register_device() nor
 * ib_unregister_device() is called under it. Object lookups from the
 * interrupt handler take the xarray lock only. The driver holds no lock of
 * its own across a device command except a CQ's resize_mutex around
 * RESIZE_CQ, an SRQ's resize_mutex around the steps of RESIZE_SRQ and the
 * SRQ's posting lock around its switch step, which never sleeps, and
 * umem_mutex around MAP_ODP and INVALIDATE_ODP.
 */
#ifndef SHCA_H
#define SHCA_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "hw/shca_hw.h"
#include "shca_cmd.h"
#include "shca_compat.h"

/*
 * The data path shared with libshca (include/shca/), with the kernel's
 * memory ordering; struct shca_wq comes from there.
 */
#define shca_dp_load_acquire(p)		smp_load_acquire(p)	/* pairs with the release below */
#define shca_dp_store_release(p, v)	smp_store_release(p, v)	/* pairs with the acquire above */
#define shca_dp_read_once(p)		READ_ONCE(*(p))
#define shca_dp_write_once(p, v)	WRITE_ONCE(*(p), v)
#include "shca_wq.h"

/* CQE decoding shared with libshca, onto ib_core's names. */
#define SHCA_WC_OPCODE(name)	IB_WC_##name
#define SHCA_WC_OPCODE_REG_MR	IB_WC_REG_MR
#define SHCA_WC_STATUS(name)	IB_WC_##name
#define SHCA_WC_F_IMM		IB_WC_WITH_IMM
#define SHCA_WC_F_INV		IB_WC_WITH_INVALIDATE
#define SHCA_WC_F_GRH		0	/* shca_poll_cq() sets it, with the type */
#include "shca_cqe.h"

/**
 * enum shca_drv_counter - what the driver counts, after the device's own
 * counters in "rdma statistic"
 * @SHCA_DRV_CNT_SWEPT: CQEs a QP's destroy or reset removed from its CQs
 * @SHCA_DRV_CNT_STRAY: CQEs polled that named no live QP or no outstanding
 *	work; skipped, and always 0 unless the device misbehaves
 * @SHCA_DRV_CNT_DB_SKIPPED: kernel send doorbells not rung: the QP's turn
 *	was running and takes the new WQEs on itself
 * @SHCA_DRV_CNT_NUM: number of counters
 */
enum shca_drv_counter {
	SHCA_DRV_CNT_SWEPT,
	SHCA_DRV_CNT_STRAY,
	SHCA_DRV_CNT_DB_SKIPPED,
	SHCA_DRV_CNT_NUM,
};

/**
 * struct shca_drv_counters - one CPU's share of the driver's counters
 * @c: by enum shca_drv_counter
 */
struct shca_drv_counters {
	u64 c[SHCA_DRV_CNT_NUM];
};

/*
 * Device flags.  SHCA_DEV_F_NO_MAD: the port does not advertise the MAD
 * and CM capabilities, so ib_mad leaves the GSI QP to whoever creates it
 * (KUnit, to test that QP type like any other).
 */
#define SHCA_DEV_F_NO_MAD	BIT(0)

/**
 * struct shca_eq - one event queue and its vector's handler
 * @sdev: the device
 * @ring: the EQE ring
 * @eqn: the EQ's number, which is also its completion vector's
 * @cpu: the CPU its vector is steered to: get_vector_affinity's answer
 * @ci: its consumer index; only the vector's handler moves it
 */
struct shca_eq {
	struct shca_dev *sdev;
	struct shca_hw_eqe *ring;
	u32 eqn;
	int cpu;
	u32 ci;
};

/**
 * struct shca_dev - one shca device, bound to one netdev
 * @ibdev: the ib_core device; first, as ib_alloc_device() requires
 * @hw: the modeled HCA behind it
 * @caps: the device's capability table, read once at probe
 * @flags: SHCA_DEV_F_*
 * @ndev: the netdev the port is bound to; a reference is held on it
 * @ndev_tracker: tracks that reference
 * @list: entry in the driver's device list, under shca_dev_list_lock, from
 *	creation until its teardown has returned
 * @dead: dealloc_driver has run; under shca_dev_list_lock
 * @debugfs: the device's debugfs directory
 * @eqs: the event queues, one per completion vector, or NULL before they
 *	exist
 * @num_eqs: how many: the device's completion vectors
 * @eq_log_depth: log2 of each one's depth
 * @eq_paused: a test knob: the interrupt handlers wait before they drain
 * @eq_delay_us: a test knob: the handlers sleep this long per EQE
 * @eq_wait: woken when @eq_paused is cleared
 * @cqs: CQs by number, for completion and CQ events
 * @qps: QPs by number, for polling and QP events
 * @srqs: SRQs by number, for SRQ events
 * @qpn_wait: woken when a destroyed QP leaves @qps, for a create that got
 *	its QPN back from the device before the destroy had swept
 * @drv_counters: the driver's counters, per CPU (shca_drv_count(),
 *	shca_drv_counter())
 * @odp_mrs: ODP MRs by MPT index, for the page fault handler and prefetch
 * @odp_mutex: a prefetch holds it, so an ODP MR it found stays; a dereg
 *	takes it to remove the MR from @odp_mrs
 * @nr_ah: address handles that exist; never more than @caps.max_ah
 * @mcast_quota_lock: guards @mcast_quotas and their counts
 * @mcast_quotas: the multicast attachments each process's QPs hold, struct
 *	shca_mcast_quota by node; an entry lives while its count is not 0
 */
struct shca_dev {
	struct ib_device ibdev;
	struct shca_hw *hw;
	struct shca_hw_caps caps;
	u32 flags;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	bool dead;
	struct dentry *debugfs;
	struct shca_eq *eqs;
	u32 num_eqs;
	u32 eq_log_depth;
	bool eq_paused;
	u32 eq_delay_us;
	wait_queue_head_t eq_wait;
	struct xarray cqs;
	struct xarray qps;
	struct xarray srqs;
	wait_queue_head_t qpn_wait;
	struct shca_drv_counters __percpu *drv_counters;
	struct xarray odp_mrs;
	struct mutex odp_mutex;	/* holds ODP MRs found for a prefetch */
	atomic_t nr_ah;
	struct mutex mcast_quota_lock;	/* @mcast_quotas and their counts */
	struct list_head mcast_quotas;
};

/**
 * struct shca_ucontext - a process's context on the device
 * @ibuc: ib_core's part
 */
struct shca_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct shca_mmap_entry - a ring buffer or device memory a process may map
 * @rdma_entry: ib_core's part: the offset, valid on one context only
 * @buf: the buffer, from shca_buf_alloc(); the entry's, freed with it;
 *	NULL for device memory
 * @dm: the entry maps a device memory allocation (shca_dm.c), which it
 *	owns: the allocation is freed with the entry, once no mapping of
 *	it is left
 * @dm_addr: the allocation's device memory address
 * @dm_length: its length in bytes
 */
struct shca_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *buf;
	bool dm;
	u64 dm_addr;
	u64 dm_length;
};

/**
 * struct shca_dm - a process's allocation of device memory
 * @ibdm: the ib_core object
 * @entry: its mmap entry, which owns the allocation in the device
 */
struct shca_dm {
	struct ib_dm ibdm;
	struct shca_mmap_entry *entry;
};

/**
 * struct shca_xrcd - an XRC domain
 * @ibxrcd: the ib_core object; first
 * @xrcdn: the device's number for it
 * @lock: guards @srqs
 * @srqs: its XRC SRQs, by &shca_srq.xrc_node: the CQs an XRC target QP
 *	of the domain may have completions in
 */
struct shca_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
	struct mutex lock;	/* guards srqs */
	struct list_head srqs;
};

/**
 * struct shca_pd - a protection domain
 * @ibpd: the ib_core object; first, as INIT_RDMA_OBJ_SIZE requires
 * @pdn: the device's number for it
 */
struct shca_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/**
 * struct shca_ah - an address handle
 * @ibah: the ib_core object; first
 * @av: the address vector, as the device reads it from UD WQEs
 */
struct shca_ah {
	struct ib_ah ibah;
	struct shca_hw_av av;
};

/**
 * struct shca_cq - a completion queue
 * @ibcq: the ib_core object; first
 * @cqn: the device's number for it
 * @gen: the generation the device gave it: an event that carries another
 *	is an earlier CQ's of the same number
 * @lock: the poll lock: guards @ring, @log_depth, @ci, @dbrec, @buf,
 *	@resizing and @missed
 * @resize_mutex: held by a resize across its command, and by a sweep of
 *	a kernel CQ, which must not rewrite CQEs the resize is copying
 * @resizing: a resize is copying the ring: polls find nothing meanwhile
 * @missed: a poll or an arm found the CQ resizing; the resize calls the
 *	completion handler when it is done
 * @ring: the CQE ring
 * @log_depth: log2 of its depth
 * @ci: consumer index
 * @dbrec: the doorbell record the device reads @ci from
 * @buf: the memory of @ring and @dbrec
 * @mmap: for a process's object, its buffer's mmap entry, which owns the
 *	buffer; else NULL
 * @user: a process's object: the process owns the rings and indices
 * @ref: held by the interrupt handler while it calls into the consumer
 * @free: completed when @ref drops to zero
 */
struct shca_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 gen;
	spinlock_t lock;	/* poll lock: ring, ci, resizing */
	struct mutex resize_mutex;	/* a resize against a sweep */
	bool resizing;
	bool missed;
	struct shca_hw_cqe *ring;
	u32 log_depth;
	u32 ci;
	struct shca_hw_cq_dbrec *dbrec;
	void *buf;
	struct rdma_user_mmap_entry *mmap;
	bool user;
	refcount_t ref;
	struct completion free;
};

/**
 * struct shca_qp - a queue pair
 * @ibqp: the ib_core object; first
 * @qpn: the device's number for it
 * @gen: the generation of @qpn the device gave it
 * @state: the state as of the last modify; posting checks it
 * @sq_lock: serialises posting sends
 * @rq_lock: serialises posting receives
 * @sq: the send queue
 * @rq: the receive queue, unless the QP uses an SRQ
 * @dbrec: the doorbell record
 * @buf: the memory of both rings and @dbrec
 * @mmap: for a process's object, its buffer's mmap entry, which owns the
 *	buffer; else NULL
 * @user: a process's object: the process owns the rings and indices
 * @xrcd: an XRC target QP's domain, as created (a kernel consumer's QP
 *	has no ib_qp.xrcd)
 * @max_send_sge: SGEs per send
 * @max_recv_sge: SGEs per receive
 * @max_inline: inline bytes per send
 * @ref: held by the interrupt handler while it calls into the consumer
 * @free: completed when @ref drops to zero
 * @mcast_mutex: serialises the QP's attach and detach verbs, and a modify
 *	to RESET against them
 * @mcast: the multicast groups ib_core counts the QP in, struct
 *	shca_mcast by @node
 * @owner: for a process's QP, the thread group that created it, charged
 *	for the QP's multicast attachments; NULL for the kernel's
 */
struct shca_qp {
	struct ib_qp ibqp;
	u32 qpn;
	u32 gen;
	enum ib_qp_state state;
	spinlock_t sq_lock;	/* posting sends */
	spinlock_t rq_lock;	/* posting receives */
	struct shca_wq sq;
	struct shca_wq rq;
	struct shca_hw_qp_dbrec *dbrec;
	void *buf;
	struct rdma_user_mmap_entry *mmap;
	bool user;
	struct shca_xrcd *xrcd;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	refcount_t ref;
	struct completion free;
	struct mutex mcast_mutex;	/* attach, detach, reset */
	struct list_head mcast;
	struct pid *owner;
};

/**
 * struct shca_mcast - a multicast group a QP was attached to
 * @node: on &shca_qp.mcast
 * @mgid: the group
 * @users: attachments ib_core counted (in the QP's usecnt) and no detach
 *	has undone yet
 * @attached: the device has the QP in the group; a RESET takes it out
 *	of every group, and the detach that ib_core still owes then only
 *	drops the entry
 */
struct shca_mcast {
	struct list_head node;
	u8 mgid[SHCA_HW_GID_LEN];
	u32 users;
	bool attached;
};

/**
 * struct shca_srq - a shared receive queue
 * @ibsrq: the ib_core object; first
 * @srqn: the device's number for it
 * @gen: the generation the device gave it: an event that carries another
 *	is an earlier SRQ's of the same number
 * @lock: guards @pi, the free slot stack and @wrid
 * @resize_mutex: held across a resize, whose copy steps sleep: one at a
 *	time
 * @slots: the WQE slots
 * @index_ring: the ring of posted slot numbers
 * @log_depth: log2 of the depth
 * @pi: producer index of @index_ring
 * @dbrec: the doorbell record
 * @buf: the memory of all three
 * @mmap: for a process's object, its buffer's mmap entry, which owns the
 *	buffer; else NULL
 * @user: a process's object: the process owns the rings and indices
 * @free_slots: stack of slot numbers not posted
 * @nr_free: entries on @free_slots
 * @wrid: the consumer's wr_id of each slot
 * @max_sge: SGEs per WQE
 * @ref: held by the interrupt handler while it calls into the consumer,
 *	and by a poll that completes an XRC receive of the SRQ
 * @free: completed when @ref drops to zero
 * @xrc_node: an XRC SRQ's entry on &shca_xrcd.srqs
 */
struct shca_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	u32 gen;
	spinlock_t lock;	/* posting and slot recycling */
	struct mutex resize_mutex;	/* one resize at a time */
	struct shca_hw_recv_wqe *slots;
	u32 *index_ring;
	u32 log_depth;
	u32 pi;
	struct shca_hw_srq_dbrec *dbrec;
	void *buf;
	struct rdma_user_mmap_entry *mmap;
	bool user;
	u32 *free_slots;
	u32 nr_free;
	u64 *wrid;
	u32 max_sge;
	refcount_t ref;
	struct completion free;
	struct list_head xrc_node;
};

/**
 * struct shca_mr - a memory region
 * @ibmr: the ib_core object; first
 * @type: enum shca_hw_mpt_type
 * @pages: the page list, for fast registration and user MRs
 * @npages: pages in @pages
 * @max_pages: its capacity
 * @umem: the pinned user memory, for user MRs
 * @access: the IB_ACCESS_* rights of a user MR, for rereg
 * @odp_live: an ODP MR's entry may be given pages, and is invalidated
 *	with them; under the ODP umem's umem_mutex
 */
struct shca_mr {
	struct ib_mr ibmr;
	u32 type;
	u64 *pages;
	u32 npages;
	u32 max_pages;
	struct ib_umem *umem;
	int access;
	bool odp_live;
};

/**
 * struct shca_mw - a memory window
 * @ibmw: the ib_core object; first, as INIT_RDMA_OBJ_SIZE requires.  Its
 *	rkey is the key ALLOC_MW gave; the process's provider tracks the
 *	key each bind gives it
 */
struct shca_mw {
	struct ib_mw ibmw;
};

static inline struct shca_dev *to_shca_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct shca_dev, ibdev);
}

/* Count @n of @c on this CPU: no cache line the other CPUs write. */
static inline void shca_drv_count(struct shca_dev *sdev,
				  enum shca_drv_counter c, u64 n)
{
	this_cpu_add(sdev->drv_counters->c[c], n);
}

/* The sum of @c over every CPU. */
static inline u64 shca_drv_counter(struct shca_dev *sdev,
				   enum shca_drv_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sdev->drv_counters, cpu)->c[c];
	return sum;
}

static inline struct shca_ucontext *
to_shca_ucontext(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct shca_ucontext, ibuc);
}

static inline struct shca_mmap_entry *
to_shca_mmap_entry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct shca_mmap_entry, rdma_entry);
}

static inline struct shca_dm *to_shca_dm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct shca_dm, ibdm);
}

static inline struct shca_xrcd *to_shca_xrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct shca_xrcd, ibxrcd);
}

static inline struct shca_pd *to_shca_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibpd);
}

static inline struct shca_ah *to_shca_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibah);
}

static inline struct shca_cq *to_shca_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, ibcq);
}

static inline struct shca_qp *to_shca_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, ibqp);
}

static inline struct shca_srq *to_shca_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, ibsrq);
}

static inline struct shca_mr *to_shca_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct shca_mr, ibmr);
}

#define shca_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

/*
 * Per-object debug messages, for the user mistakes an object's verbs
 * refuse: each names the object, so no message types "QP %u:" by hand.
 */
#define shca_qp_dbg(qp, fmt, ...)					\
do {									\
	const struct shca_qp *qp_ = (qp);				\
									\
	ibdev_dbg(qp_->ibqp.device, "%s: QP %u: " fmt, __func__,	\
		  qp_->qpn, ##__VA_ARGS__);				\
} while (0)
#define shca_cq_dbg(cq, fmt, ...)					\
do {									\
	const struct shca_cq *cq_ = (cq);				\
									\
	ibdev_dbg(cq_->ibcq.device, "%s: CQ %u: " fmt, __func__,	\
		  cq_->cqn, ##__VA_ARGS__);				\
} while (0)
#define shca_srq_dbg(srq, fmt, ...)					\
do {									\
	const struct shca_srq *srq_ = (srq);				\
									\
	ibdev_dbg(srq_->ibsrq.device, "%s: SRQ %u: " fmt, __func__,	\
		  srq_->srqn, ##__VA_ARGS__);				\
} while (0)

/**
 * shca_access_to_hw() - the device's access bits for IB_ACCESS_* flags
 * @ib_access: the flags
 *
 * Return: SHCA_ACCESS_* bits; flags the device does not check are dropped,
 * IB_ACCESS_RELAXED_ORDERING among them: the model places every access in
 * order, which relaxed ordering allows.
 */
static inline u32 shca_access_to_hw(int ib_access)
{
	return (ib_access & IB_ACCESS_LOCAL_WRITE ? SHCA_ACCESS_LOCAL_WRITE : 0) |
	       (ib_access & IB_ACCESS_REMOTE_WRITE ?
		SHCA_ACCESS_REMOTE_WRITE : 0) |
	       (ib_access & IB_ACCESS_REMOTE_READ ? SHCA_ACCESS_REMOTE_READ : 0) |
	       (ib_access & IB_ACCESS_REMOTE_ATOMIC ?
		SHCA_ACCESS_REMOTE_ATOMIC : 0) |
	       (ib_access & IB_ACCESS_FLUSH_GLOBAL ?
		SHCA_ACCESS_FLUSH_GLOBAL : 0) |
	       (ib_access & IB_ACCESS_FLUSH_PERSISTENT ?
		SHCA_ACCESS_FLUSH_PERSISTENT : 0) |
	       (ib_access & IB_ACCESS_MW_BIND ? SHCA_ACCESS_MW_BIND : 0);
}

/* shca_verbs.c */
int shca_check_no_udata(struct shca_dev *sdev, struct ib_udata *udata);
int shca_add_gid(const struct ib_gid_attr *attr, void **context);
int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int shca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
void shca_xrc_sweep_tgt(struct shca_qp *qp, bool forget);
int shca_del_gid(const struct ib_gid_attr *attr, void **context);
void shca_get_dev_fw_str(struct ib_device *ibdev, char *str);
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev,
					 u32 port_num);
struct net_device *shca_get_netdev(struct ib_device *ibdev, u32 port_num);
int shca_get_port_immutable(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_immutable *immutable);
int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int shca_query_gid(struct ib_device *ibdev, u32 port_num, int index,
		   union ib_gid *gid);
int shca_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
		    u16 *pkey);
int shca_query_port(struct ib_device *ibdev, u32 port_num,
		    struct ib_port_attr *attr);

/* shca_eq.c */
int shca_eq_create(struct shca_dev *sdev);
void shca_eq_destroy(struct shca_dev *sdev);
void shca_eq_pause(struct shca_dev *sdev, bool pause);
const struct cpumask *shca_get_vector_affinity(struct ib_device *ibdev,
					       int comp_vector);

/* shca_buf.c */
void *shca_buf_alloc(size_t ring_bytes, void **dbrec);
void *shca_buf_alloc_kernel(size_t ring_bytes, void **dbrec);
size_t shca_buf_len(size_t ring_bytes);
void shca_buf_free(void *buf);

/* shca_user.c: what processes see */
int shca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void shca_dealloc_ucontext(struct ib_ucontext *ibuc);
int shca_query_ucontext(struct ib_ucontext *ibuc,
			struct uverbs_attr_bundle *attrs);
extern const struct uapi_definition shca_uapi_defs[];
void shca_disassociate_ucontext(struct ib_ucontext *ibuc);
int shca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void shca_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
void shca_buf_release(void *buf, struct rdma_user_mmap_entry *mmap);
int shca_udata_cmd(struct shca_dev *sdev, struct ib_udata *udata, void *cmd,
		   size_t size, size_t min_len);
int shca_udata_create_cmd(struct shca_dev *sdev, struct ib_udata *udata,
			  const char *what, size_t min_len);
int shca_udata_resp(struct shca_dev *sdev, struct ib_udata *udata,
		    void *resp, size_t len);
struct rdma_user_mmap_entry *shca_mmap_insert(struct ib_udata *udata,
					      void *buf, size_t len,
					      u64 *offset);

/* shca_cq.c (shca_create_cq() is declared in shca_compat.h) */
int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int shca_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period);
int shca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
void shca_cq_sweep_qp(struct shca_qp *qp, bool forget);
void shca_cq_sweep_one(struct shca_cq *cq, u32 qpn,
		       void (*fn)(void *ctx, const struct shca_hw_cqe *cqe),
		       void *ctx);
#if IS_ENABLED(CONFIG_KUNIT)
u32 shca_cq_sweep_ring(struct shca_hw_cqe *ring, u32 log_depth, u32 ci,
		       u32 qpn, struct shca_srq *srq);
#endif

/* shca_qp.c */
int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);

/* shca_srq.c */
int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
void shca_srq_free_slot(struct shca_srq *srq, u32 slot);
u64 shca_srq_take_slot(void *ctx, u32 slot);
void shca_xrc_srq_add(struct shca_srq *srq);
void shca_xrc_srq_del(struct shca_srq *srq);
struct shca_srq *shca_xrc_srq_get(struct shca_dev *sdev, u32 srqn);
void shca_xrc_srq_put(struct shca_srq *srq);

/* shca_mr.c */
struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* shca_mw.c */
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int shca_dealloc_mw(struct ib_mw *ibmw);
struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access);
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt, int access, struct ib_udata *udata);

/* shca_mpt.c */
struct shca_mr *shca_mr_alloc(struct shca_dev *sdev, struct ib_pd *ibpd,
			      u32 type, u32 max_pages, u32 flags);
void shca_mr_free(struct shca_dev *sdev, struct shca_mr *mr);
int shca_mr_write(struct shca_dev *sdev, struct shca_mr *mr, u32 access,
		  u64 iova, u64 length, u32 page_shift);

/* shca_odp.c: on-demand paging, where ib_core has it */
#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
int shca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs);
void shca_odp_caps(struct ib_device_attr *attr);
void shca_odp_dereg(struct shca_dev *sdev, struct shca_mr *mr);
void shca_odp_init(struct shca_dev *sdev);
struct ib_mr *shca_odp_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 virt, int access);
#else
/* Without it ib_core refuses IB_ACCESS_ON_DEMAND: no ODP MR ever exists. */
static inline void shca_odp_caps(struct ib_device_attr *attr)
{
}

static inline void shca_odp_dereg(struct shca_dev *sdev, struct shca_mr *mr)
{
}

static inline void shca_odp_init(struct shca_dev *sdev)
{
}

static inline struct ib_mr *shca_odp_reg_user_mr(struct ib_pd *ibpd,
						 u64 start, u64 length,
						 u64 virt, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}
#endif

/* shca_dm.c */
struct ib_dm *shca_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs);
int shca_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
int shca_dm_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma,
		 struct shca_mmap_entry *e);
void shca_dm_mmap_free(struct shca_mmap_entry *e);
struct ib_mr *shca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs);
extern const struct uapi_definition shca_dm_uapi_defs[];

/* shca_ah.c */
void shca_av_from_ah_attr(struct shca_hw_av *av,
			  const struct rdma_ah_attr *attr);
int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata);
int shca_destroy_ah(struct ib_ah *ibah, u32 flags);
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);

/* shca_res.c */
void shca_res_init(void);
struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num);
int shca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int shca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
/* shca_fill_res_srq_entry() is declared in shca_compat.h. */
int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

/* shca_main.c */
int shca_dev_add(const char *name, struct net_device *ndev);
#if IS_ENABLED(CONFIG_KUNIT)
int shca_dev_add_flags(const char *name, struct net_device *ndev, u32 flags);
#endif

/* shca_debugfs.c */
void shca_debugfs_init(atomic_t *teardowns);
void shca_debugfs_exit(void);
void shca_debugfs_add_dev(struct shca_dev *sdev, const char *name);
void shca_debugfs_del_dev(struct shca_dev *sdev);
void shca_debugfs_teardown_delay(void);

#endif /* SHCA_H */
