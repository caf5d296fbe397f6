// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: posting work requests, through the real driver: the opcodes each
 * QP type refuses, the states that refuse posts, and the SGE and inline
 * limits, with bad_wr checked each time.
 */
#include <kunit/test.h>
#include <rdma/ib_mad.h>

#include "shca.h"
#include "shca_test.h"

/**
 * struct shca_bad_op - an opcode a QP type must refuse at post time
 * @type: the QP type
 * @op: the opcode
 */
struct shca_bad_op {
	enum ib_qp_type type;
	enum ib_wr_opcode op;
};

static const struct shca_bad_op shca_bad_ops[] = {
	{ IB_QPT_UC, IB_WR_RDMA_READ },
	{ IB_QPT_UC, IB_WR_ATOMIC_CMP_AND_SWP },
	{ IB_QPT_UC, IB_WR_ATOMIC_FETCH_AND_ADD },
	{ IB_QPT_UD, IB_WR_RDMA_WRITE },
	{ IB_QPT_UD, IB_WR_RDMA_WRITE_WITH_IMM },
	{ IB_QPT_UD, IB_WR_RDMA_READ },
	{ IB_QPT_UD, IB_WR_SEND_WITH_INV },
	{ IB_QPT_UD, IB_WR_LOCAL_INV },
	{ IB_QPT_UD, IB_WR_REG_MR },
	{ IB_QPT_RC, IB_WR_RDMA_READ_WITH_INV },
	{ IB_QPT_RC, IB_WR_MASKED_ATOMIC_CMP_AND_SWP },
	{ IB_QPT_RC, IB_WR_BIND_MW },
	{ IB_QPT_RC, IB_WR_LSO },
};

static void shca_bad_op_desc(const struct shca_bad_op *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_opcode_%d",
		 p->type == IB_QPT_RC ? "rc" : p->type == IB_QPT_UC ? "uc" :
		 "ud", p->op);
}

KUNIT_ARRAY_PARAM(shca_bad_op, shca_bad_ops, shca_bad_op_desc);

static void shca_test_bad_opcode_refused(struct kunit *test)
{
	const struct shca_bad_op *p = test->param_value;
	const struct ib_send_wr *bad = NULL;
	struct ib_ud_wr good = {}, wrong = {};
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_sge sge;

	shca_test_pair(test, a, b, p->type, 8);
	shca_test_connect(test, a, b);
	sge = (struct ib_sge){ .addr = a->addr, .length = 8, .lkey = a->lkey };
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 256));
	good.wr.wr_id = 1;
	good.wr.opcode = IB_WR_SEND;
	good.wr.send_flags = IB_SEND_SIGNALED;
	good.wr.sg_list = &sge;
	good.wr.num_sge = 1;
	good.wr.next = &wrong.wr;
	good.ah = a->ah;
	good.remote_qpn = b->qp->qp_num;
	good.remote_qkey = SHCA_TEST_QKEY;
	wrong = good;
	wrong.wr.wr_id = 2;
	wrong.wr.opcode = p->op;
	wrong.wr.next = NULL;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_send(a->qp, &good.wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, (const struct ib_send_wr *)&wrong.wr, bad);
	/* What came before the bad request was posted and runs. */
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_TRUE(test, shca_test_sq_idle(a));
}

static void shca_test_post_refused_before_its_state(struct kunit *test)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_test_post_recv(a, 1, 0, 8));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL, err);
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE |
					      IB_QP_PKEY_INDEX | IB_QP_PORT |
					      IB_QP_ACCESS_FLAGS));
	/* INIT takes receives but not sends. */
	KUNIT_EXPECT_EQ(test, 0, shca_test_post_recv(a, 1, 0, 8));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL, err);
}

static void shca_test_post_refused_past_sge_and_inline_limits(struct kunit *test)
{
	const struct ib_send_wr *bad_send;
	const struct ib_recv_wr *bad_recv;
	struct ib_sge sge[5];
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_INLINE,
		.sg_list = sge,
	};
	struct ib_recv_wr rwr = { .sg_list = sge, .num_sge = 5 };
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	for (i = 0; i < 5; i++)
		sge[i] = (struct ib_sge){ .addr = a->addr, .length = 13,
					  .lkey = a->lkey };
	/* Five SGEs on a QP made for four. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_recv(a->qp, &rwr, &bad_recv));
	KUNIT_EXPECT_PTR_EQ(test, (const struct ib_recv_wr *)&rwr, bad_recv);
	wr.num_sge = 5;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_send(a->qp, &wr, &bad_send));
	/* 65 inline bytes on a QP made for 64. */
	wr.num_sge = 4;
	sge[3].length = 26;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_send(a->qp, &wr, &bad_send));
	KUNIT_EXPECT_PTR_EQ(test, (const struct ib_send_wr *)&wr, bad_send);
	KUNIT_EXPECT_TRUE(test, shca_test_sq_idle(a));
}

static struct kunit_case shca_post_cases[] = {
	KUNIT_CASE_PARAM(shca_test_bad_opcode_refused, shca_bad_op_gen_params),
	KUNIT_CASE(shca_test_post_refused_before_its_state),
	KUNIT_CASE(shca_test_post_refused_past_sge_and_inline_limits),
	{}
};

static struct kunit_suite shca_post_suite = {
	.name = "shca_post",
	.test_cases = shca_post_cases,
};

kunit_test_suite(shca_post_suite);
