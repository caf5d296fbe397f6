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

#define shca_wr_sge ib_sge
#include "shca_wqe.h"

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

/**
 * struct shca_wqe_rule - what the IBTA lets each QP type ask of an opcode
 * @opcode: the device's opcode
 * @rc: an RC QP takes it
 * @uc: a UC QP takes it
 * @ud: a UD (or GSI) QP takes it
 * @inl: it may carry its payload inline
 */
struct shca_wqe_rule {
	u8 opcode;
	bool rc, uc, ud, inl;
};

static const struct shca_wqe_rule shca_wqe_rules[] = {
	{ SHCA_WQE_SEND,	   true, true, true, true },
	{ SHCA_WQE_SEND_IMM,	   true, true, true, true },
	{ SHCA_WQE_SEND_INV,	   true, true, false, true },
	{ SHCA_WQE_RDMA_WRITE,	   true, true, false, true },
	{ SHCA_WQE_RDMA_WRITE_IMM, true, true, false, true },
	{ SHCA_WQE_RDMA_READ,	   true, false, false, false },
	{ SHCA_WQE_ATOMIC_CS,	   true, false, false, false },
	{ SHCA_WQE_ATOMIC_FA,	   true, false, false, false },
	{ SHCA_WQE_LOCAL_INV,	   true, true, false, false },
	{ SHCA_WQE_REG_MR,	   true, true, false, false },
	{ SHCA_WQE_FLUSH,	   true, false, false, false },
	{ SHCA_WQE_ATOMIC_WRITE,   true, false, false, false },
	/* Past the last opcode: nothing takes it. */
	{ SHCA_WQE_NUM_OPCODES,	   false, false, false, false },
};

static void shca_wqe_rule_desc(const struct shca_wqe_rule *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "wqe_opcode_%u", p->opcode);
}

KUNIT_ARRAY_PARAM(shca_wqe_rule, shca_wqe_rules, shca_wqe_rule_desc);

/*
 * The table of include/shca/shca_wqe.h, which the kernel and libshca
 * both post by, against the rules written out here.
 */
static void shca_test_wqe_table_follows_the_ibta(struct kunit *test)
{
	const struct shca_wqe_rule *p = test->param_value;

	KUNIT_EXPECT_EQ(test, p->rc,
			!!shca_wqe_op_ok(SHCA_WQE_SVC_RC, p->opcode));
	KUNIT_EXPECT_EQ(test, p->uc,
			!!shca_wqe_op_ok(SHCA_WQE_SVC_UC, p->opcode));
	KUNIT_EXPECT_EQ(test, p->ud,
			!!shca_wqe_op_ok(SHCA_WQE_SVC_UD, p->opcode));
	KUNIT_EXPECT_EQ(test, p->inl, !!shca_wqe_op_inline(p->opcode));
}

/**
 * struct shca_retire_case - a CQE retiring WQEs of a queue of 8
 * @name: what it shows
 * @pi: the producer index
 * @ci: the consumer index before
 * @idx: the WQE index the CQE names
 * @ok: whether it names an outstanding WQE
 * @ci_after: the consumer index after
 */
struct shca_retire_case {
	const char *name;
	u32 pi, ci, idx;
	bool ok;
	u32 ci_after;
};

static const struct shca_retire_case shca_retire_cases[] = {
	{ "oldest", 5, 2, 2, true, 3 },
	{ "unsignaled_before_it", 5, 2, 4, true, 5 },
	{ "across_the_wrap", 10, 6, 9, true, 10 },
	{ "index_wraps_16_bits", 0x10002, 0xfffe, 0x1, true, 0x10002 },
	{ "not_yet_posted", 5, 2, 5, false, 2 },
	{ "already_retired", 5, 2, 1, false, 2 },
	{ "empty_queue", 3, 3, 3, false, 3 },
};

static void shca_retire_desc(const struct shca_retire_case *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_retire, shca_retire_cases, shca_retire_desc);

/*
 * shca_wq_retire() of include/shca/shca_wq.h, which both sides complete
 * WQEs by: the wr_id of the named slot, and a consumer index past it, or
 * nothing at all for a CQE that names no outstanding WQE.
 */
static void shca_test_wq_retire_takes_what_is_outstanding(struct kunit *test)
{
	const struct shca_retire_case *p = test->param_value;
	u64 wrid[8], wr_id = ~0ULL;
	struct shca_wq wq = {
		.log_depth = 3,
		.pi = p->pi,
		.ci = p->ci,
		.wrid = wrid,
	};
	unsigned int i;
	bool ok;

	for (i = 0; i < ARRAY_SIZE(wrid); i++)
		wrid[i] = 100 + i;
	ok = shca_wq_retire(&wq, p->idx & 0xffff, &wr_id);
	KUNIT_EXPECT_EQ(test, p->ok, ok);
	KUNIT_EXPECT_EQ(test, p->ci_after, wq.ci);
	KUNIT_EXPECT_EQ(test, p->ok ? 100 + (p->idx & 7) : ~0ULL, wr_id);
}

static struct kunit_case shca_post_cases[] = {
	KUNIT_CASE_PARAM(shca_test_bad_opcode_refused, shca_bad_op_gen_params),
	KUNIT_CASE(shca_test_post_refused_before_its_state),
	KUNIT_CASE(shca_test_post_refused_past_sge_and_inline_limits),
	KUNIT_CASE_PARAM(shca_test_wqe_table_follows_the_ibta,
			 shca_wqe_rule_gen_params),
	KUNIT_CASE_PARAM(shca_test_wq_retire_takes_what_is_outstanding,
			 shca_retire_gen_params),
	{}
};

static struct kunit_suite shca_post_suite = {
	.name = "shca_post",
	.test_cases = shca_post_cases,
};

kunit_test_suite(shca_post_suite);
