// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the object verbs - QP create, modify and query, address handles
 * and memory regions - through the real driver.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/scatterlist.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "shca.h"
#include "shca_test.h"

static void shca_test_query_qp_returns_what_was_set(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	struct ib_device *da, *db;
	union ib_gid dgid;

	shca_test_devices(test, true, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(a->qp, &attr, IB_QP_STATE, &init));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, attr.qp_state);
	KUNIT_EXPECT_EQ(test, b->qp->qp_num, attr.dest_qp_num);
	KUNIT_EXPECT_EQ(test, IB_MTU_1024, attr.path_mtu);
	KUNIT_EXPECT_EQ(test, 4, attr.timeout);
	KUNIT_EXPECT_EQ(test, 2, attr.retry_cnt);
	KUNIT_EXPECT_EQ(test, 2, attr.rnr_retry);
	KUNIT_EXPECT_EQ(test, 4, attr.max_rd_atomic);
	KUNIT_EXPECT_EQ(test, 4, attr.max_dest_rd_atomic);
	KUNIT_EXPECT_EQ(test, 1U, attr.sq_psn);
	KUNIT_EXPECT_TRUE(test, attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC);
	KUNIT_EXPECT_EQ(test, 8U, attr.cap.max_send_wr);
	KUNIT_EXPECT_EQ(test, 4U, attr.cap.max_send_sge);
	KUNIT_EXPECT_EQ(test, 64U, attr.cap.max_inline_data);
	KUNIT_EXPECT_EQ(test, SHCA_TEST_SGID,
			rdma_ah_read_grh(&attr.ah_attr)->sgid_index);
	KUNIT_ASSERT_EQ(test, 0, rdma_query_gid(db, 1, SHCA_TEST_SGID, &dgid));
	KUNIT_EXPECT_MEMEQ(test, dgid.raw,
			   rdma_ah_read_grh(&attr.ah_attr)->dgid.raw, 16);
	KUNIT_EXPECT_PTR_EQ(test, a->cq, init.send_cq);
	KUNIT_EXPECT_EQ(test, IB_QPT_RC, init.qp_type);
}

static void shca_test_illegal_modify_refused_and_changes_nothing(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_qp_attr attr = { .port_num = 1 };
	struct ib_device *da, *db;
	int err;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	attr.qp_state = IB_QPS_RTR;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_qp(a->qp, &attr,
						    IB_QP_STATE));
	attr.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_qp(a->qp, &attr,
						    IB_QP_STATE));
	/* RESET to INIT needs its attributes. */
	attr.qp_state = IB_QPS_INIT;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_qp(a->qp, &attr,
						    IB_QP_STATE));
	/* The P_Key table has one entry. */
	attr.pkey_index = 1;
	err = ib_modify_qp(a->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	KUNIT_EXPECT_EQ(test, -EINVAL, err);
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, shca_test_qp_state(a));
	attr.pkey_index = 0;
	err = ib_modify_qp(a->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	KUNIT_ASSERT_EQ(test, 0, err);
	/* INIT to RTS skips RTR. */
	attr.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_qp(a->qp, &attr,
						    IB_QP_STATE));
	/* A current state that is not the current state. */
	attr.qp_state = IB_QPS_ERR;
	attr.cur_qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_qp(a->qp, &attr,
						    IB_QP_STATE |
						    IB_QP_CUR_STATE));
	KUNIT_EXPECT_EQ(test, IB_QPS_INIT, shca_test_qp_state(a));
	/* Back to RESET and up again: the QP is reusable. */
	attr.qp_state = IB_QPS_RESET;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	shca_test_connect(test, a, b);
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
}

/**
 * struct shca_bad_qp - QP creation attributes the device refuses
 * @name: what is wrong
 * @type: QP type
 * @cap: queue sizes
 * @flags: create flags
 * @err: the errno expected
 */
struct shca_bad_qp {
	const char *name;
	enum ib_qp_type type;
	struct ib_qp_cap cap;
	u32 flags;
	int err;
};

#define SHCA_CAP(sw, rw, ss, rs, il) \
	{ .max_send_wr = sw, .max_recv_wr = rw, .max_send_sge = ss, \
	  .max_recv_sge = rs, .max_inline_data = il }

static const struct shca_bad_qp shca_bad_qps[] = {
	{ "send_wr_over_max", IB_QPT_RC, SHCA_CAP(1 << 15, 8, 1, 1, 0), 0,
	  -EINVAL },
	{ "send_sge_over_max", IB_QPT_UC, SHCA_CAP(8, 8, 17, 1, 0), 0,
	  -EINVAL },
	{ "recv_sge_over_max", IB_QPT_UD, SHCA_CAP(8, 8, 1, 17, 0), 0,
	  -EINVAL },
	{ "inline_over_max", IB_QPT_RC, SHCA_CAP(8, 8, 1, 1, 257), 0,
	  -EINVAL },
	{ "raw_packet", IB_QPT_RAW_PACKET, SHCA_CAP(8, 8, 1, 1, 0), 0,
	  -EOPNOTSUPP },
	{ "create_flags", IB_QPT_RC, SHCA_CAP(8, 8, 1, 1, 0),
	  IB_QP_CREATE_SCATTER_FCS, -EOPNOTSUPP },
};

static void shca_bad_qp_desc(const struct shca_bad_qp *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_bad_qp, shca_bad_qps, shca_bad_qp_desc);

static void shca_test_create_qp_refused(struct kunit *test)
{
	const struct shca_bad_qp *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test);
	struct ib_device *da, *db;
	struct ib_qp_init_attr init = {};
	struct ib_qp *qp;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	init.qp_type = p->type;
	init.cap = p->cap;
	init.create_flags = p->flags;
	init.send_cq = a->cq;
	init.recv_cq = a->cq;
	init.port_num = 1;
	qp = ib_create_qp(a->pd, &init);
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	KUNIT_EXPECT_EQ(test, p->err, PTR_ERR_OR_ZERO(qp));
}

/*
 * IBTA lets a QP ask for no send or no receive work requests: it gets the
 * smallest ring, and its caps say how many it may post.
 */
static void shca_test_qp_of_no_send_or_receive_wr_is_created(struct kunit *test)
{
	static const struct ib_qp_cap caps[] = {
		SHCA_CAP(0, 8, 1, 1, 0), SHCA_CAP(8, 0, 1, 1, 0),
		SHCA_CAP(0, 0, 0, 0, 0),
	};
	struct shca_tq *a = shca_test_tq_new(test);
	struct ib_qp_init_attr init = {};
	struct ib_device *da, *db;
	struct ib_qp *qp;
	int i;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	for (i = 0; i < ARRAY_SIZE(caps); i++) {
		init.qp_type = IB_QPT_RC;
		init.cap = caps[i];
		init.send_cq = a->cq;
		init.recv_cq = a->cq;
		qp = ib_create_qp(a->pd, &init);
		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "caps %d: %pe", i, qp);
		KUNIT_EXPECT_GE(test, init.cap.max_send_wr, caps[i].max_send_wr);
		KUNIT_EXPECT_GE(test, init.cap.max_recv_wr, caps[i].max_recv_wr);
		KUNIT_EXPECT_NE(test, 0U, init.cap.max_send_wr);
		KUNIT_EXPECT_NE(test, 0U, init.cap.max_recv_wr);
		KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(qp));
	}
}

static void shca_test_ib_mad_brings_gsi_qp_to_rts(struct kunit *test)
{
	struct ib_device *da, *db;
	struct shca_hw_qp_query q;

	shca_test_devices(test, false, &da, &db);
	/* ib_mad created QP1 at registration and brought it to RTS. */
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_query_qp(to_shca_dev(da),
						   SHCA_HW_GSI_QPN, &q));
	KUNIT_EXPECT_EQ(test, (u32)SHCA_QPT_GSI, q.type);
	KUNIT_EXPECT_EQ(test, (u32)SHCA_QPS_RTS, q.attr.state);
	KUNIT_EXPECT_EQ(test, (u32)IB_QP1_QKEY, q.attr.qkey);
}

static void shca_test_freed_qpn_is_not_the_next_one(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test);
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.cap = SHCA_CAP(4, 4, 1, 1, 0),
	};
	struct ib_device *da, *db;
	struct ib_qp *qp;
	u32 first;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	init.send_cq = a->cq;
	init.recv_cq = a->cq;
	qp = ib_create_qp(a->pd, &init);
	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	first = qp->qp_num;
	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(qp));
	qp = ib_create_qp(a->pd, &init);
	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	/* Cyclic allocation: the freed number is not the next one out. */
	KUNIT_EXPECT_NE(test, first, qp->qp_num);
	KUNIT_EXPECT_LE(test, qp->qp_num, 0xffffffU);
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(qp));
}

static void shca_test_query_ah_returns_what_was_set(struct kunit *test)
{
	struct rdma_ah_attr attr = {}, back = {};
	struct ib_device *da, *db;
	struct ib_pd *pd;
	struct ib_ah *ah;
	union ib_gid dgid;

	shca_test_devices(test, true, &da, &db);
	pd = ib_alloc_pd(da, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	KUNIT_ASSERT_EQ(test, 0, rdma_query_gid(db, 1, SHCA_TEST_SGID, &dgid));
	attr.type = rdma_ah_find_type(da, 1);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_sl(&attr, 3);
	rdma_ah_set_grh(&attr, &dgid, 0x12345, SHCA_TEST_SGID, 17, 0x28);
	eth_broadcast_addr(attr.roce.dmac);
	/* Address handles are made from atomic context too. */
	ah = rdma_create_ah(pd, &attr, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	KUNIT_EXPECT_EQ(test, 0, rdma_query_ah(ah, &back));
	KUNIT_EXPECT_MEMEQ(test, dgid.raw, rdma_ah_read_grh(&back)->dgid.raw,
			   16);
	KUNIT_EXPECT_EQ(test, 0x12345U, rdma_ah_read_grh(&back)->flow_label);
	KUNIT_EXPECT_EQ(test, 17, rdma_ah_read_grh(&back)->hop_limit);
	KUNIT_EXPECT_EQ(test, 0x28, rdma_ah_read_grh(&back)->traffic_class);
	KUNIT_EXPECT_EQ(test, 3, rdma_ah_get_sl(&back));
	rdma_destroy_ah_attr(&back);
	rdma_destroy_ah(ah, 0);
	ib_dealloc_pd(pd);
}

static void shca_test_fast_reg_mr_maps_at_most_its_pages(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test);
	struct ib_device *da, *db;
	struct scatterlist sg[3];
	struct ib_mr *mr;
	int i;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	mr = ib_alloc_mr(a->pd, IB_MR_TYPE_MEM_REG,
			 da->attrs.max_fast_reg_page_list_len + 1);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(mr));
	mr = ib_alloc_mr(a->pd, IB_MR_TYPE_MEM_REG, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	sg_init_table(sg, 3);
	for (i = 0; i < 3; i++) {
		sg_dma_address(&sg[i]) = a->addr + i * 2 * PAGE_SIZE;
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	/* Three discontiguous pages do not fit a list of two. */
	KUNIT_EXPECT_EQ(test, 2, ib_map_mr_sg(mr, sg, 3, NULL, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, 0, ib_dereg_mr(mr));
}

static void shca_test_user_mr_of_no_bytes_taken_too_long_refused(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test);
	struct ib_device *da, *db;
	struct ib_mr *mr;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	/* Zero bytes: IBTA allows it, and nothing is pinned. */
	mr = da->ops.reg_user_mr(a->pd, 0x10000, 0, 0x10000,
				 IB_ACCESS_LOCAL_WRITE, NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mr), "%pe", mr);
	KUNIT_EXPECT_NULL(test, to_shca_mr(mr)->umem);
	mr->device = da;
	mr->pd = a->pd;
	KUNIT_EXPECT_EQ(test, 0, da->ops.dereg_mr(mr, NULL));
	/* Refused before any page is pinned. */
	mr = da->ops.reg_user_mr(a->pd, 0x10000, da->attrs.max_mr_size + 1,
				 0x10000, IB_ACCESS_LOCAL_WRITE, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(mr));
}

static void shca_test_port_netdev_is_the_bound_netdev(struct kunit *test)
{
	struct net_device *ndev = shca_test_netdev(test);
	struct ib_device *dev = shca_test_add(test, SHCA_TEST_DEV, ndev);
	struct net_device *got = ib_device_get_netdev(dev, 1);

	KUNIT_EXPECT_PTR_EQ(test, ndev, got);
	if (got)
		dev_put(got);
}

/*
 * Flushed CQEs left unpolled when a QP is reset do not complete anything
 * of its next life: polling skips them and posting still has the whole
 * queue.
 */
static void shca_test_reset_leaves_no_stale_completion(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long end = jiffies + 5 * HZ;
	struct ib_device *da, *db;
	struct shca_hw_cq_query q;
	struct ib_wc wc;
	int err, i;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 4);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 4);
	shca_test_connect(test, a, b);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(a, 10 + i, 0, 8));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	/* Wait for the four flush CQEs to be in the ring, unpolled. */
	do {
		err = shca_cmd_query_cq(to_shca_dev(da),
					to_shca_cq(a->cq)->cqn, &q);
		KUNIT_ASSERT_EQ(test, 0, err);
		KUNIT_ASSERT_FALSE(test, time_after(jiffies, end));
		usleep_range(50, 200);
	} while (q.pi - q.ci < 4);

	attr.qp_state = IB_QPS_RESET;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(a, b));
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	for (i = 0; i < 4; i++) {
		err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, i, 0, 0, 8,
					  0);
		KUNIT_ASSERT_EQ(test, 0, err);
	}
	for (i = 0; i < 4; i++)
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
}

static struct kunit_case shca_objects_cases[] = {
	KUNIT_CASE(shca_test_query_qp_returns_what_was_set),
	KUNIT_CASE(shca_test_illegal_modify_refused_and_changes_nothing),
	KUNIT_CASE(shca_test_reset_leaves_no_stale_completion),
	KUNIT_CASE_PARAM(shca_test_create_qp_refused, shca_bad_qp_gen_params),
	KUNIT_CASE(shca_test_qp_of_no_send_or_receive_wr_is_created),
	KUNIT_CASE(shca_test_ib_mad_brings_gsi_qp_to_rts),
	KUNIT_CASE(shca_test_freed_qpn_is_not_the_next_one),
	KUNIT_CASE(shca_test_query_ah_returns_what_was_set),
	KUNIT_CASE(shca_test_fast_reg_mr_maps_at_most_its_pages),
	KUNIT_CASE(shca_test_user_mr_of_no_bytes_taken_too_long_refused),
	KUNIT_CASE(shca_test_port_netdev_is_the_bound_netdev),
	{}
};

static struct kunit_suite shca_objects_suite = {
	.name = "shca_objects",
	.test_cases = shca_objects_cases,
};

kunit_test_suite(shca_objects_suite);
