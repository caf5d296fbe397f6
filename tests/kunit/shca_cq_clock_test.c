// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the device clock and the completion timestamp of every CQE.
 *
 * The model stamps each CQE of a CQ created with
 * IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION with its free-running clock as
 * it publishes it.  These cases read the stamps straight from the rings,
 * before the CQEs are polled: every kind of CQE (each opcode, fast
 * registration and local invalidation, a remote error, send and receive
 * flushes) carries one taken between the post and the poll, within the
 * clock's mask, and a CQ's stamps never go back in ring order.  A CQ
 * created without the flag gets CQEs with no stamp.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/timekeeping.h>
#include <linux/unaligned.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_TEST_OPS	3	/* work requests per case, for the ordering */

/* The device clock of the device @tq is on. */
static u64 shca_test_clock(struct shca_tq *tq)
{
	return shca_hw_read_clock(to_shca_dev(tq->dev)->hw);
}

/*
 * Two RC ends on one device, each on a CQ of its own that asks for
 * completion timestamps.
 */
static void shca_test_clock_pair(struct kunit *test, struct shca_tq *a,
				 struct shca_tq *b)
{
	struct ib_device *dev, *unused;
	struct ib_cq *acq, *bcq;

	shca_test_devices(test, false, &dev, &unused);
	acq = shca_test_cq_new_flags(test, dev, 16,
				     IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION);
	bcq = shca_test_cq_new_flags(test, dev, 16,
				     IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION);
	shca_test_tq_init_on(test, a, dev, IB_QPT_RC, NULL, acq, acq, 8);
	shca_test_tq_init_on(test, b, dev, IB_QPT_RC, NULL, bcq, bcq, 8);
}

/*
 * Wait for @n unpolled CQEs on @ibcq and check their stamps: each in
 * [@lo, the clock now], within the mask, none before the one ahead of it.
 * Then poll them, expecting @status.  Returns the last stamp.
 */
static u64 shca_test_check_stamps(struct kunit *test, struct shca_tq *tq,
				  struct ib_cq *ibcq, u32 n, u64 lo,
				  enum ib_wc_status status)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	u64 mask = to_shca_dev(tq->dev)->caps.timestamp_mask;
	u64 prev = lo, ts = 0, hi;
	struct ib_wc wc;
	unsigned long flags;
	u32 i;

	shca_test_wait_cqes(test, ibcq, n);
	hi = shca_test_clock(tq);
	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < n; i++) {
		ts = get_unaligned_le64(cq->ring[(cq->ci + i) &
					((1U << cq->log_depth) - 1)].timestamp);
		KUNIT_EXPECT_EQ_MSG(test, 0ULL, ts & ~mask, "CQE %u", i);
		KUNIT_EXPECT_GE_MSG(test, ts, prev, "CQE %u goes back", i);
		KUNIT_EXPECT_LE_MSG(test, ts, hi, "CQE %u is late", i);
		prev = ts;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, 1, shca_test_poll_cq(ibcq, &wc, 1));
		KUNIT_EXPECT_EQ(test, status, wc.status);
	}
	return ts;
}

/**
 * struct shca_test_clock_op - one kind of work for the CQE stamp case
 * @name: the case's name
 * @opcode: what the requester posts
 * @recv: it consumes a receive at the responder
 */
struct shca_test_clock_op {
	const char *name;
	enum ib_wr_opcode opcode;
	bool recv;
};

static const struct shca_test_clock_op shca_test_clock_ops[] = {
	{ "send", IB_WR_SEND, true },
	{ "send_imm", IB_WR_SEND_WITH_IMM, true },
	{ "write", IB_WR_RDMA_WRITE, false },
	{ "write_imm", IB_WR_RDMA_WRITE_WITH_IMM, true },
	{ "read", IB_WR_RDMA_READ, false },
};

static void shca_test_clock_op_desc(const struct shca_test_clock_op *op,
				    char *desc)
{
	strscpy(desc, op->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_test_clock_op, shca_test_clock_ops,
		  shca_test_clock_op_desc);

/* Each opcode's send CQEs, and its receive CQEs, are stamped in order. */
static void shca_test_cqe_stamped_per_opcode(struct kunit *test)
{
	const struct shca_test_clock_op *op = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 t0, last;
	int i;

	shca_test_clock_pair(test, a, b);
	shca_test_connect(test, a, b);
	for (i = 0; op->recv && i < SHCA_TEST_OPS; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 100 + i, 0, 64));
	t0 = shca_test_clock(a);
	for (i = 0; i < SHCA_TEST_OPS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_post_send(a, b, op->opcode, i, 0,
						    8 * i, 8, 0));
	last = shca_test_check_stamps(test, a, a->cq, SHCA_TEST_OPS, t0,
				      IB_WC_SUCCESS);
	if (op->recv)
		shca_test_check_stamps(test, b, b->cq, SHCA_TEST_OPS, t0,
				       IB_WC_SUCCESS);
	/* The next CQE on a's CQ comes no earlier than the last one. */
	KUNIT_ASSERT_EQ(test, 0,
			shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 9, 0, 0, 8,
					    0));
	shca_test_check_stamps(test, a, a->cq, 1, last, IB_WC_SUCCESS);
}

static void shca_test_clock_free_mr(void *mr)
{
	ib_dereg_mr(mr);
}

/* Post a signaled REG_MR or LOCAL_INV of @mr on @tq's QP. */
static void shca_test_clock_mr_wr(struct kunit *test, struct shca_tq *tq,
				  struct ib_mr *mr, enum ib_wr_opcode opcode)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = opcode,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = mr,
		.key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	};

	if (opcode == IB_WR_LOCAL_INV)
		wr.wr.ex.invalidate_rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr.wr, NULL));
}

/*
 * A fast registration, atomics through the MR it made (the PD's global
 * rkey has no atomic right) and a local invalidation: stamped alike.
 */
static void shca_test_cqe_stamped_on_fast_reg_and_atomics(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct scatterlist sg;
	struct ib_mr *mr;
	u64 t0, last;
	u32 rkey;
	int i, err;

	shca_test_clock_pair(test, a, b);
	shca_test_connect(test, a, b);
	mr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	err = kunit_add_action_or_reset(test, shca_test_clock_free_mr, mr);
	KUNIT_ASSERT_EQ(test, 0, err);
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = b->addr;
	sg_dma_len(&sg) = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, 1, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE));

	t0 = shca_test_clock(b);
	shca_test_clock_mr_wr(test, b, mr, IB_WR_REG_MR);
	last = shca_test_check_stamps(test, b, b->cq, 1, t0, IB_WC_SUCCESS);

	/* shca_test_post_send() aims at the peer's rkey: the MR's, here. */
	rkey = b->rkey;
	b->rkey = mr->rkey;
	t0 = shca_test_clock(a);
	for (i = 0; i < SHCA_TEST_OPS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_post_send(a, b, i & 1 ?
						    IB_WR_ATOMIC_FETCH_AND_ADD :
						    IB_WR_ATOMIC_CMP_AND_SWP,
						    i, 0, 8 * i, 8, 0));
	b->rkey = rkey;
	shca_test_check_stamps(test, a, a->cq, SHCA_TEST_OPS, t0,
			       IB_WC_SUCCESS);

	shca_test_clock_mr_wr(test, b, mr, IB_WR_LOCAL_INV);
	shca_test_check_stamps(test, b, b->cq, 1, last, IB_WC_SUCCESS);
}

/* An error CQE, and the flushes after it on both sides, carry stamps. */
static void shca_test_cqe_stamped_on_errors_and_flushes(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	u64 t0, last;
	int i;

	shca_test_clock_pair(test, a, b);
	shca_test_connect(test, a, b);
	t0 = shca_test_clock(a);
	/* A bad rkey: a remote access error, and both QPs go to ERR. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 1, 0x77700, b->addr,
						      8));
	last = shca_test_check_stamps(test, a, a->cq, 1, t0,
				      IB_WC_REM_ACCESS_ERR);
	for (i = 0; i < SHCA_TEST_OPS; i++)
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_post_send(a, b, IB_WR_RDMA_WRITE,
						    2 + i, 0, 0, 8, 0));
	shca_test_check_stamps(test, a, a->cq, SHCA_TEST_OPS, last,
			       IB_WC_WR_FLUSH_ERR);

	/* Receives posted to the QP in ERR, and moved to ERR again: flushed. */
	t0 = shca_test_clock(b);
	for (i = 0; i < SHCA_TEST_OPS; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 10 + i, 0, 64));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE));
	shca_test_check_stamps(test, b, b->cq, SHCA_TEST_OPS, t0,
			       IB_WC_WR_FLUSH_ERR);
}

/*
 * The clock is CLOCK_MONOTONIC in nanoseconds, which is what query_device
 * says of it and what libshca reads for ibv_query_rt_values_ex().
 */
static void shca_test_clock_is_monotonic_ns(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_device_attr attr;
	u64 before, clock, after;

	shca_test_clock_pair(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, a->dev->ops.query_device(a->dev, &attr, NULL));
	KUNIT_EXPECT_EQ(test, 1000000ULL, attr.hca_core_clock);
	KUNIT_EXPECT_EQ(test, U64_MAX, attr.timestamp_mask);
	KUNIT_EXPECT_EQ(test, attr.hca_core_clock, a->dev->attrs.hca_core_clock);
	KUNIT_EXPECT_EQ(test, attr.timestamp_mask, a->dev->attrs.timestamp_mask);
	before = ktime_get_ns();
	clock = shca_test_clock(a);
	after = ktime_get_ns();
	KUNIT_EXPECT_LE(test, before, clock);
	KUNIT_EXPECT_LE(test, clock, after);
}

/*
 * A CQ that did not ask for timestamps gets CQEs without one, sends and
 * receives alike.
 */
static void shca_test_cqe_unstamped_without_the_flag(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_cqe *cqe;
	struct shca_cq *cq;
	unsigned long flags;
	u32 i;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 100, 0, 64));
	KUNIT_ASSERT_EQ(test, 0,
			shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 8, 0));
	shca_test_wait_cqes(test, a->cq, 1);
	shca_test_wait_cqes(test, b->cq, 1);
	for (i = 0; i < 2; i++) {
		cq = to_shca_cq(i ? b->cq : a->cq);
		spin_lock_irqsave(&cq->lock, flags);
		cqe = &cq->ring[cq->ci & ((1U << cq->log_depth) - 1)];
		KUNIT_EXPECT_EQ_MSG(test, 0ULL,
				    get_unaligned_le64(cqe->timestamp),
				    "%s CQE", i ? "receive" : "send");
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	shca_test_expect(test, b, IB_WC_SUCCESS, 100);
}

/* A CQ may ask for completion timestamps; other creation flags fail. */
static void shca_test_create_cq_flags(struct kunit *test)
{
	struct ib_cq_init_attr attr = {
		.cqe = 8,
		.flags = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
	};
	struct ib_device *da, *db;
	struct ib_cq *cq;

	shca_test_devices(test, false, &da, &db);
	cq = ib_create_cq(da, NULL, NULL, NULL, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	ib_destroy_cq(cq);
	attr.flags = IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN;
	cq = ib_create_cq(da, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, PTR_ERR_OR_ZERO(cq));
	attr.flags = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION | BIT(7);
	cq = ib_create_cq(da, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, PTR_ERR_OR_ZERO(cq));
}

static struct kunit_case shca_cq_clock_cases[] = {
	KUNIT_CASE_PARAM(shca_test_cqe_stamped_per_opcode,
			 shca_test_clock_op_gen_params),
	KUNIT_CASE(shca_test_cqe_stamped_on_fast_reg_and_atomics),
	KUNIT_CASE(shca_test_cqe_stamped_on_errors_and_flushes),
	KUNIT_CASE(shca_test_clock_is_monotonic_ns),
	KUNIT_CASE(shca_test_cqe_unstamped_without_the_flag),
	KUNIT_CASE(shca_test_create_cq_flags),
	{}
};

static struct kunit_suite shca_cq_clock_suite = {
	.name = "shca_cq_clock",
	.test_cases = shca_cq_clock_cases,
};

kunit_test_suite(shca_cq_clock_suite);
