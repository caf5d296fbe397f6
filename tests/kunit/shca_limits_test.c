// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the QP context table keeps nothing for a QPN no QP holds, however
 * many QPNs cycle through it; the CQ limit is enforced.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_LIMITS_CYCLES		2048
#define SHCA_LIMITS_REISSUES	8
#define SHCA_LIMITS_FIRST_QPN	0x00300000

/* A QP with the smallest queues on @cq, or an ERR_PTR(). */
static struct ib_qp *shca_limits_qp(struct ib_pd *pd, struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ib_create_qp(pd, &init);
}

static void shca_limits_dealloc_pd(void *pd)
{
	ib_dealloc_pd(pd);
}

/*
 * Thousands of QPNs cycle through the device, and one QPN is reissued
 * again and again: every QP gets a generation no earlier holder of its
 * QPN had, and the device keeps state for the live QPs only.
 */
static void shca_test_qpn_cycles_keep_nothing(struct kunit *test)
{
	u32 gens[SHCA_LIMITS_REISSUES];
	struct ib_device *dev;
	struct shca_hw *hw;
	struct ib_cq *cq;
	struct ib_pd *pd;
	struct ib_qp *qp;
	u32 base, i, j;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	hw = to_shca_dev(dev)->hw;
	pd = ib_alloc_pd(dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_limits_dealloc_pd,
							   pd));
	cq = shca_test_cq_new(test, dev, 4);
	base = shca_hw_qpn_entries(hw);

	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(hw, SHCA_LIMITS_FIRST_QPN));
	for (i = 0; i < SHCA_LIMITS_CYCLES; i++) {
		qp = shca_limits_qp(pd, cq);
		KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
		KUNIT_ASSERT_EQ(test, SHCA_LIMITS_FIRST_QPN + i, qp->qp_num);
		KUNIT_ASSERT_EQ(test, base + 1, shca_hw_qpn_entries(hw));
		KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(qp));
	}
	KUNIT_EXPECT_EQ(test, base, shca_hw_qpn_entries(hw));

	for (i = 0; i < SHCA_LIMITS_REISSUES; i++) {
		KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(hw,
							      SHCA_LIMITS_FIRST_QPN));
		qp = shca_limits_qp(pd, cq);
		KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
		KUNIT_ASSERT_EQ(test, SHCA_LIMITS_FIRST_QPN, qp->qp_num);
		gens[i] = to_shca_qp(qp)->gen;
		KUNIT_EXPECT_NE(test, 0U, gens[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, gens[j], gens[i]);
		KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(qp));
	}
	KUNIT_EXPECT_EQ(test, base, shca_hw_qpn_entries(hw));
}

#define SHCA_LIMITS_MAX_CQS		70000

static void shca_limits_free_cqs(void *arg)
{
	struct ib_cq **cqs = arg;
	u32 i;

	for (i = 0; i < SHCA_LIMITS_MAX_CQS && cqs[i]; i++)
		ib_destroy_cq(cqs[i]);
	kvfree(cqs);
}

/*
 * CQs are created until the device refuses: it refuses at max_cq (the
 * device's own CQs included) with -ENOMEM, nothing else changes, and a
 * CQ destroyed makes room for one more.  A CQ deeper than max_cqe is
 * refused with -EINVAL.
 */
static void shca_test_cq_create_refused_past_max_cq_and_max_cqe(struct kunit *test)
{
	struct ib_cq_init_attr attr = { .cqe = 1 };
	struct ib_device *dev;
	struct ib_cq **cqs, *cq;
	u32 max, n;
	int err;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	max = to_shca_dev(dev)->caps.max_cq;
	KUNIT_ASSERT_EQ(test, max, (u32)dev->attrs.max_cq);
	KUNIT_ASSERT_LT(test, max, (u32)SHCA_LIMITS_MAX_CQS);
	cqs = kvcalloc(SHCA_LIMITS_MAX_CQS, sizeof(*cqs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cqs);
	err = kunit_add_action_or_reset(test, shca_limits_free_cqs, cqs);
	KUNIT_ASSERT_EQ(test, 0, err);

	for (n = 0; n < SHCA_LIMITS_MAX_CQS; n++) {
		cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
		if (IS_ERR(cq))
			break;
		cqs[n] = cq;
	}
	KUNIT_EXPECT_EQ(test, -ENOMEM, PTR_ERR_OR_ZERO(cq));
	/* ib_mad's CQs count too: a few, never more than a handful. */
	KUNIT_EXPECT_LE(test, n, max);
	KUNIT_EXPECT_GE(test, n + 8, max);

	KUNIT_ASSERT_GT(test, n, 0U);
	KUNIT_ASSERT_EQ(test, 0, ib_destroy_cq_user(cqs[n - 1], NULL));
	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	cqs[n - 1] = cq;

	attr.cqe = dev->attrs.max_cqe + 1;
	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(cq));
	if (!IS_ERR(cq))
		ib_destroy_cq(cq);
}

static struct kunit_case shca_limits_cases[] = {
	KUNIT_CASE_SLOW(shca_test_qpn_cycles_keep_nothing),
	KUNIT_CASE_SLOW(shca_test_cq_create_refused_past_max_cq_and_max_cqe),
	{}
};

static struct kunit_suite shca_limits_suite = {
	.name = "shca_limits",
	.test_cases = shca_limits_cases,
};

kunit_test_suite(shca_limits_suite);
