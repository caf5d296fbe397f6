/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libshca: the rdma-core provider of shca devices.
 *
 * Lock order, outermost first: a CQ's lock (two CQs: lower CQN first),
 * the context's QP table lock, then an SQ, RQ or SRQ lock.
 */
#ifndef SHCA_PROVIDER_H
#define SHCA_PROVIDER_H

#include <pthread.h>
#include <stdint.h>
#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/shca-abi.h>

struct shca_device {
	struct verbs_device ibv_dev;
};

#define SHCA_QP_TABLE_SIZE	256

struct shca_context {
	struct verbs_context ibv_ctx;
	struct shca_alloc_ucontext_resp caps;
	pthread_mutex_t qp_lock;	/* guards qp_table */
	pthread_cond_t qp_gone;		/* a QP left qp_table */
	struct shca_qp *qp_table[SHCA_QP_TABLE_SIZE];
};

struct shca_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;	/* poll lock: ci, sweeps */
	struct shca_hw_cqe *ring;
	struct shca_hw_cq_dbrec *dbrec;
	uint32_t log_depth;
	uint32_t ci;
	uint32_t cqn;
	void *map;
	size_t map_len;
};

struct shca_wq {
	pthread_spinlock_t lock;	/* posting: pi, ring */
	void *ring;
	uint32_t log_depth;
	uint32_t pi;
	uint32_t ci;			/* written by polling, under a CQ lock */
	uint64_t *wrid;
};

struct shca_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;	/* posting and slot recycling */
	struct shca_hw_recv_wqe *slots;
	uint32_t *index_ring;
	struct shca_hw_srq_dbrec *dbrec;
	uint32_t log_depth;
	uint32_t pi;
	uint32_t max_sge;
	uint32_t *free_slots;
	uint32_t nr_free;
	uint64_t *wrid;
	void *map;
	size_t map_len;
};

struct shca_qp {
	struct verbs_qp vqp;
	struct shca_qp *next;		/* in the context's qp_table */
	enum ibv_qp_state state;
	struct shca_wq sq;
	struct shca_wq rq;
	struct shca_hw_qp_dbrec *dbrec;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	/* the ibv_wr_* batch in progress, under sq.lock */
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

#endif /* SHCA_PROVIDER_H */
