// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: what "rdma res" and "rdma statistic" show.
 *
 * Object attributes come from the device (QUERY_CQ, QUERY_QP, QUERY_SRQ),
 * not from the driver's own bookkeeping, so they show what the hardware
 * model holds.  Each object's attributes go in one nested
 * RDMA_NLDEV_ATTR_DRIVER table, which "rdma res show -dd" prints.  The
 * port counters are the device's counters, then the driver's.
 */
#include <net/netlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "shca.h"

#define SHCA_NUM_STATS	(SHCA_CNT_NUM + SHCA_DRV_CNT_NUM)

static const char * const shca_drv_counter_names[SHCA_DRV_CNT_NUM] = {
	[SHCA_DRV_CNT_SWEPT]	= "swept_cqes",
	[SHCA_DRV_CNT_STRAY]	= "stray_cqes",
	[SHCA_DRV_CNT_DB_SKIPPED] = "doorbells_skipped",
};

/*
 * The port counters: the device's, named by the device and filled in at
 * module load, then the driver's.
 */
static struct rdma_stat_desc shca_stat_descs[SHCA_NUM_STATS];

/**
 * shca_res_init() - name the port counters
 */
void shca_res_init(void)
{
	int i;

	for (i = 0; i < SHCA_CNT_NUM; i++)
		shca_stat_descs[i].name = shca_hw_counter_name(i);
	for (i = 0; i < SHCA_DRV_CNT_NUM; i++)
		shca_stat_descs[SHCA_CNT_NUM + i].name =
			shca_drv_counter_names[i];
}

/**
 * shca_alloc_hw_port_stats() - the port's counter table
 * @ibdev: the device
 * @port_num: the port
 *
 * Return: the table, or NULL.
 */
struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num)
{
	return rdma_alloc_hw_stats_struct(shca_stat_descs, SHCA_NUM_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * shca_get_hw_stats() - read the device's counters
 * @ibdev: the device
 * @stats: the table to fill
 * @port: the port
 * @index: unused: all counters are read at once
 *
 * Return: the number of counters, or a negative errno.
 */
int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	u64 counters[SHCA_CNT_NUM];
	int err, i;

	err = shca_cmd_query_counters(sdev, counters);
	if (err)
		return err;
	for (i = 0; i < SHCA_CNT_NUM; i++)
		stats->value[i] = counters[i];
	for (i = 0; i < SHCA_DRV_CNT_NUM; i++)
		stats->value[SHCA_CNT_NUM + i] = shca_drv_counter(sdev, i);
	return SHCA_NUM_STATS;
}

/**
 * shca_fill_res_cq_entry() - driver attributes of a CQ for "rdma res"
 * @msg: the netlink message
 * @ibcq: the CQ
 *
 * Return: 0 or a negative errno.
 */
int shca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_hw_cq_query q;
	struct nlattr *table;
	int err;

	err = shca_cmd_query_cq(to_shca_dev(ibcq->device), cq->cqn, &q);
	if (err)
		return err;
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "cqn", cq->cqn) ||
	    rdma_nl_put_driver_u32(msg, "depth", 1U << q.log_depth) ||
	    rdma_nl_put_driver_u32(msg, "pi", q.pi) ||
	    rdma_nl_put_driver_u32(msg, "ci", q.ci) ||
	    rdma_nl_put_driver_string(msg, "armed",
				      q.armed == SHCA_CQ_ARM_NEXT ? "next" :
				      q.armed == SHCA_CQ_ARM_SOLICITED ?
				      "solicited" : "no") ||
	    rdma_nl_put_driver_u32(msg, "assoc", q.assoc) ||
	    rdma_nl_put_driver_u32(msg, "overflowed", q.overflowed))
		goto err;
	nla_nest_end(msg, table);
	return 0;
err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

static const char * const shca_state_names[SHCA_QPS_NUM] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

/**
 * shca_fill_res_qp_entry() - driver attributes of a QP for "rdma res"
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * Return: 0 or a negative errno.
 */
int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_hw_qp_query q;
	struct nlattr *table;
	int err;

	err = shca_cmd_query_qp(to_shca_dev(ibqp->device), qp->qpn, &q);
	if (err)
		return err;
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "hw_state",
				      q.attr.state < SHCA_QPS_NUM ?
				      shca_state_names[q.attr.state] : "?") ||
	    rdma_nl_put_driver_u32(msg, "gen", q.gen) ||
	    rdma_nl_put_driver_u32(msg, "sq_head", q.sq_pi) ||
	    rdma_nl_put_driver_u32(msg, "sq_tail", q.sq_ci) ||
	    rdma_nl_put_driver_u32(msg, "rq_head", q.rq_pi) ||
	    rdma_nl_put_driver_u32(msg, "rq_tail", q.rq_ci))
		goto err;
	/* An XRC target QP: the domain whose XRC SRQs it delivers to. */
	if (qp->xrcd && rdma_nl_put_driver_u32(msg, "xrcdn", qp->xrcd->xrcdn))
		goto err;
	nla_nest_end(msg, table);
	return 0;
err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/**
 * shca_fill_res_mr_entry() - driver attributes of an MR for "rdma res"
 * @msg: the netlink message
 * @ibmr: the MR
 *
 * Return: 0 or a negative errno.
 */
int shca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct shca_mr *mr = to_shca_mr(ibmr);
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "type", mr->type == SHCA_MPT_DMA ?
				      "dma" : mr->umem ? "user" : "fast_reg") ||
	    rdma_nl_put_driver_u32(msg, "npages", mr->npages) ||
	    rdma_nl_put_driver_u32(msg, "max_pages", mr->max_pages)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/**
 * shca_fill_res_srq_entry() - driver attributes of an SRQ for "rdma res"
 * @msg: the netlink message
 * @ibsrq: the SRQ
 *
 * Return: 0 or a negative errno.
 */
int shca_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	struct shca_hw_srq_query q;
	struct nlattr *table;
	int err;

	err = shca_cmd_query_srq(to_shca_dev(ibsrq->device), srq->srqn, &q);
	if (err)
		return err;
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "srqn", srq->srqn) ||
	    rdma_nl_put_driver_u32(msg, "depth", 1U << srq->log_depth) ||
	    rdma_nl_put_driver_u32(msg, "pi", q.pi) ||
	    rdma_nl_put_driver_u32(msg, "ci", q.ci) ||
	    rdma_nl_put_driver_u32(msg, "limit", q.limit) ||
	    rdma_nl_put_driver_u32(msg, "assoc", q.assoc)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
