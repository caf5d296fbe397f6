// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the error semantics, completion queues, shared receive queues,
 * the GSI QP and the object verbs, through the real driver.  "Nothing
 * happened" is checked against the device's own counters and contexts,
 * which move synchronously with the event in question, never by waiting
 * and seeing.
 */
#include <kunit/test.h>
#include <rdma/ib_mad.h>

#include "shca.h"
#include "shca_test.h"

#define shca_wr_sge ib_sge
#include "shca_wqe.h"

#define SHCA_VT_REMOTE	8192

/* Two RC, UC or UD ends, on one device, connected. */
static void shca_vt_pair(struct kunit *test, struct shca_tq *a,
			 struct shca_tq *b, enum ib_qp_type type, u32 wr)
{
	struct ib_device *da, *db;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, type, NULL, 16, wr);
	shca_test_tq_init(test, b, db, type, NULL, 16, wr);
}

/* Wait until the device has executed every posted send (and its CQE). */
static void shca_vt_wait_idle(struct kunit *test, struct shca_tq *tq)
{
	unsigned long end = jiffies + 5 * HZ;

	while (!shca_test_sq_idle(tq)) {
		KUNIT_ASSERT_FALSE(test, time_after(jiffies, end));
		usleep_range(50, 200);
	}
}

/* Wait until a device counter reaches @value. */
static bool shca_vt_wait_counter(struct ib_device *dev,
				 enum shca_hw_counter counter, u64 value)
{
	unsigned long end = jiffies + 5 * HZ;

	while (shca_test_counter(dev, counter) < value) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
	return true;
}

static void shca_test_bad_lkey(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_sge bad = { .addr = 0, .length = 16, .lkey = 0xdead0000 };
	struct ib_sge good = { .length = 16 };
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED,
				  .sg_list = &good, .num_sge = 1 };
	struct ib_send_wr wr1 = { .wr_id = 1, .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED,
				  .sg_list = &bad, .num_sge = 1, .next = &wr2 };
	struct ib_wc wc;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	good.addr = a->addr;
	good.lkey = a->lkey;
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 64));
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(a->qp, &wr1, NULL));
	shca_test_expect(test, a, IB_WC_LOC_PROT_ERR, 1);
	shca_test_expect(test, a, IB_WC_WR_FLUSH_ERR, 2);
	KUNIT_EXPECT_EQ(test, 0, shca_test_wait_event(a,
						      IB_EVENT_QP_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
	/* The failed send never left: the peer's receive is untouched. */
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(b->cq, 1, &wc));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(b));
}

static void shca_test_bad_rkey(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 64));
	b->rkey = 0x77700;
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 1);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
	/* The responder saw the violation: error state, event, flush. */
	KUNIT_EXPECT_EQ(test, 0, shca_test_wait_event(b,
						      IB_EVENT_QP_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(b));
	shca_test_expect(test, b, IB_WC_WR_FLUSH_ERR, 9);
}

static void shca_test_remote_write_needs_right(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.qp_access_flags = IB_ACCESS_REMOTE_READ,
	};
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	/* The MR allows it; the QP no longer does. */
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE |
					      IB_QP_ACCESS_FLAGS));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 1);
	KUNIT_EXPECT_EQ(test, 0, shca_test_wait_event(b,
						      IB_EVENT_QP_ACCESS_ERR));
}

static void shca_test_rnr_retry_exceeded(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 naks;
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	a->rnr_retry = 2;
	shca_test_connect(test, a, b);
	naks = shca_test_counter(a->dev, SHCA_CNT_RNR_NAK);
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_RNR_RETRY_EXC_ERR, 1);
	/* The first try and two retries. */
	KUNIT_EXPECT_EQ(test, naks + 3,
			shca_test_counter(a->dev, SHCA_CNT_RNR_NAK));
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
}

static void shca_test_rnr_then_delivered(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 naks;
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	a->rnr_retry = 7;	/* forever */
	shca_test_connect(test, a, b);
	naks = shca_test_counter(a->dev, SHCA_CNT_RNR_NAK);
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	/* Post the receive only once the responder has said "not ready". */
	KUNIT_ASSERT_TRUE(test, shca_vt_wait_counter(a->dev, SHCA_CNT_RNR_NAK,
						     naks + 1));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 2, 0, 64));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	shca_test_expect(test, b, IB_WC_SUCCESS, 2);
}

static void shca_test_retry_exceeded(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	a->retry_cnt = 1;
	/* The peer stays in RESET: nothing ever answers. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(a, b));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_RETRY_EXC_ERR, 1);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
}

static void shca_test_recv_too_small(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_wc wc;
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 2, 0, 16));
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 100, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_REM_INV_REQ_ERR, 1);
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(b, &wc, 1));
	KUNIT_EXPECT_EQ(test, IB_WC_LOC_LEN_ERR, wc.status);
	KUNIT_EXPECT_EQ(test, 2ULL, wc.wr_id);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(b));
}

static void shca_test_flush_on_error(struct kunit *test)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i, err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	for (i = 1; i <= 3; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i, 0, 64));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE));
	for (i = 1; i <= 3; i++)
		shca_test_expect(test, b, IB_WC_WR_FLUSH_ERR, i);
	/* Work posted in ERR is flushed too. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 4, 0, 64));
	shca_test_expect(test, b, IB_WC_WR_FLUSH_ERR, 4);
	err = shca_test_post_send(b, a, IB_WR_RDMA_WRITE, 5, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, b, IB_WC_WR_FLUSH_ERR, 5);
}

static void shca_test_unsignaled(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_wc wc;
	int round, i, err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 4);
	shca_test_connect(test, a, b);
	/* Three unsignaled writes and a signaled one fill the queue. */
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 4; i++) {
			err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE,
						  round * 4 + i, 0, 0, 8,
						  i == 3 ? 0 :
						  SHCA_TEST_UNSIGNALED);
			KUNIT_ASSERT_EQ(test, 0, err);
		}
		shca_test_expect(test, a, IB_WC_SUCCESS, round * 4 + 3);
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	}
}

static void shca_test_queue_full(struct kunit *test)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[5] = {};
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_sge sge;
	int i;

	shca_vt_pair(test, a, b, IB_QPT_RC, 4);
	shca_test_connect(test, a, b);
	sge = (struct ib_sge){ .addr = a->addr, .length = 8, .lkey = a->lkey };
	for (i = 0; i < 5; i++) {
		wr[i].wr.wr_id = i;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 4 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = b->addr;
		wr[i].rkey = b->rkey;
	}
	KUNIT_EXPECT_EQ(test, -ENOMEM, ib_post_send(a->qp, &wr[0].wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, (const struct ib_send_wr *)&wr[4].wr, bad);
	for (i = 0; i < 4; i++)
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
}

static void shca_test_atomic_checks(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_tq *c = shca_test_tq_new(test), *d = shca_test_tq_new(test);
	int err;

	/* A misaligned target is an invalid request. */
	shca_vt_pair(test, a, b, IB_QPT_RC, 4);
	shca_test_connect(test, a, b);
	err = shca_test_post_send(a, b, IB_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 3,
				  8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_REM_INV_REQ_ERR, 1);

	/* The PD's global rkey carries no atomic right. */
	shca_test_tq_init(test, c, a->dev, IB_QPT_RC, NULL, 16, 4);
	shca_test_tq_init(test, d, a->dev, IB_QPT_RC, NULL, 16, 4);
	shca_test_connect(test, c, d);
	err = shca_test_post_send(c, d, IB_WR_ATOMIC_CMP_AND_SWP, 2, 0, 8,
				  8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, c, IB_WC_REM_ACCESS_ERR, 2);
}

static void shca_test_fence(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_wc wc[2];
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	memset(b->buf + SHCA_VT_REMOTE, 0xab, 64);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 128));
	err = shca_test_post_send(a, b, IB_WR_RDMA_READ, 1, 256, SHCA_VT_REMOTE,
				  64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	/* The fenced send waits for the read: it sends what was read. */
	err = shca_test_post_send(a, b, IB_WR_SEND, 2, 256, 0, 64,
				  IB_SEND_FENCE);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_EQ(test, 2, shca_test_poll(a, wc, 2));
	KUNIT_EXPECT_EQ(test, 1ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_RDMA_READ, wc[0].opcode);
	KUNIT_EXPECT_EQ(test, 2ULL, wc[1].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_SEND, wc[1].opcode);
	shca_test_expect(test, b, IB_WC_SUCCESS, 9);
	KUNIT_EXPECT_MEMEQ(test, b->buf + SHCA_VT_REMOTE, b->buf, 64);
}

static void shca_test_ud_wrong_qkey_dropped(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_sge sge;
	struct ib_ud_wr wr = {};
	struct ib_wc wc;
	u64 dropped;

	shca_vt_pair(test, a, b, IB_QPT_UD, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 256));
	sge = (struct ib_sge){ .addr = a->addr, .length = 32, .lkey = a->lkey };
	wr.wr.wr_id = 1;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = a->ah;
	wr.remote_qpn = b->qp->qp_num;
	wr.remote_qkey = 0x999;
	dropped = shca_test_counter(a->dev, SHCA_CNT_DROPPED);
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(a->qp, &wr.wr, NULL));
	/* UD sends complete whether or not anyone takes them. */
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, dropped + 1,
			shca_test_counter(a->dev, SHCA_CNT_DROPPED));
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(b->cq, 1, &wc));
}

static void shca_test_cq_overflow(struct kunit *test)
{
	struct ib_device *da, *db;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i, err;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 1, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	for (i = 0; i < 3; i++) {
		err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, i, 0, 0,
					  8, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
	}
	KUNIT_EXPECT_EQ(test, 0, shca_test_wait_event(a, IB_EVENT_CQ_ERR));
	KUNIT_EXPECT_LE(test, 1ULL,
			shca_test_counter(da, SHCA_CNT_CQ_OVERFLOW));
}

static void shca_test_sqd_drained(struct kunit *test)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_SQD,
		.en_sqd_async_notify = 1,
	};
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE |
					      IB_QP_EN_SQD_ASYNC_NOTIFY));
	KUNIT_EXPECT_EQ(test, 0, shca_test_wait_event(a,
						      IB_EVENT_SQ_DRAINED));
	KUNIT_EXPECT_EQ(test, IB_QPS_SQD, shca_test_qp_state(a));
	attr.qp_state = IB_QPS_RTS;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
}

static struct kunit_case shca_qp_error_cases[] = {
	KUNIT_CASE(shca_test_bad_lkey),
	KUNIT_CASE(shca_test_bad_rkey),
	KUNIT_CASE(shca_test_remote_write_needs_right),
	KUNIT_CASE(shca_test_rnr_retry_exceeded),
	KUNIT_CASE(shca_test_rnr_then_delivered),
	KUNIT_CASE(shca_test_retry_exceeded),
	KUNIT_CASE(shca_test_recv_too_small),
	KUNIT_CASE(shca_test_flush_on_error),
	KUNIT_CASE(shca_test_unsignaled),
	KUNIT_CASE(shca_test_queue_full),
	KUNIT_CASE(shca_test_atomic_checks),
	KUNIT_CASE(shca_test_fence),
	KUNIT_CASE(shca_test_ud_wrong_qkey_dropped),
	KUNIT_CASE(shca_test_cq_overflow),
	KUNIT_CASE(shca_test_sqd_drained),
	{}
};

static struct kunit_suite shca_qp_error_suite = {
	.name = "shca_qp_errors",
	.test_cases = shca_qp_error_cases,
};

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

	shca_vt_pair(test, a, b, p->type, 8);
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

static void shca_test_post_needs_state(struct kunit *test)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
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

static void shca_test_post_limits(struct kunit *test)
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

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
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
	KUNIT_CASE(shca_test_post_needs_state),
	KUNIT_CASE(shca_test_post_limits),
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

static u32 shca_vt_cq_armed(struct shca_tq *tq)
{
	struct shca_hw_cq_query q = {};

	shca_cmd_query_cq(to_shca_dev(tq->dev), to_shca_cq(tq->cq)->cqn, &q);
	return q.armed;
}

static bool shca_vt_wait_comp(struct shca_tq *tq, int n)
{
	unsigned long end = jiffies + 5 * HZ;

	while (atomic_read(&tq->comp_events) < n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
	return true;
}

static void shca_test_notify_next(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 eqes;
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP));
	KUNIT_EXPECT_EQ(test, (u32)SHCA_CQ_ARM_NEXT, shca_vt_cq_armed(a));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_TRUE(test, shca_vt_wait_comp(a, 1));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	/* Not re-armed: the next completion raises no event. */
	eqes = shca_test_counter(a->dev, SHCA_CNT_EQES);
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 2, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, eqes, shca_test_counter(a->dev, SHCA_CNT_EQES));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&a->comp_events));
}

static void shca_test_notify_solicited(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 eqes;
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, ib_req_notify_cq(b->cq, IB_CQ_SOLICITED));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 1, 0, 64));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 2, 0, 64));
	eqes = shca_test_counter(b->dev, SHCA_CNT_EQES);
	err = shca_test_post_send(a, b, IB_WR_SEND, 3, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, b, IB_WC_SUCCESS, 1);
	/* An unsolicited receive leaves the CQ armed and silent. */
	KUNIT_EXPECT_EQ(test, eqes, shca_test_counter(b->dev, SHCA_CNT_EQES));
	KUNIT_EXPECT_EQ(test, (u32)SHCA_CQ_ARM_SOLICITED, shca_vt_cq_armed(b));
	err = shca_test_post_send(a, b, IB_WR_SEND, 4, 0, 0, 8,
				  IB_SEND_SOLICITED);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_TRUE(test, shca_vt_wait_comp(b, 1));
	shca_test_expect(test, b, IB_WC_SUCCESS, 2);
}

static void shca_test_missed_events(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_vt_wait_idle(test, a);
	KUNIT_EXPECT_EQ(test, 1, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP |
						  IB_CQ_REPORT_MISSED_EVENTS));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 0, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP |
						  IB_CQ_REPORT_MISSED_EVENTS));
}

static void shca_test_resize_keeps_cqes(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i, err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	for (i = 1; i <= 3; i++) {
		err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, i, 0, 0,
					  8, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
	}
	shca_vt_wait_idle(test, a);
	/* Too small for what is waiting in the ring. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_resize_cq(a->cq, 1));
	KUNIT_ASSERT_EQ(test, 0, ib_resize_cq(a->cq, 100));
	KUNIT_EXPECT_EQ(test, 127, a->cq->cqe);
	for (i = 1; i <= 3; i++)
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 4, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 4);
}

static void shca_test_moderation(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i, err;

	shca_vt_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_cq_moderation(a->cq, 3, 0));
	KUNIT_ASSERT_EQ(test, 0, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP));
	for (i = 1; i <= 2; i++) {
		err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, i, 0, 0,
					  8, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
	}
	shca_vt_wait_idle(test, a);
	/* Two CQEs of three: still armed, no event yet. */
	KUNIT_EXPECT_EQ(test, (u32)SHCA_CQ_ARM_NEXT, shca_vt_cq_armed(a));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 3, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_TRUE(test, shca_vt_wait_comp(a, 1));
	KUNIT_EXPECT_EQ(test, 0U, shca_vt_cq_armed(a));
}

static void shca_test_cq_bad_attrs(struct kunit *test)
{
	struct ib_device *da, *db;
	struct ib_cq_init_attr attr = { .cqe = 0 };
	struct ib_cq *cq;

	shca_test_devices(test, false, &da, &db);
	cq = ib_create_cq(da, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(cq));
	attr.cqe = da->attrs.max_cqe + 1;
	cq = ib_create_cq(da, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(cq));
	attr.cqe = 8;
	attr.comp_vector = 3;
	cq = ib_create_cq(da, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(cq));
}

static struct kunit_case shca_cq_cases[] = {
	KUNIT_CASE(shca_test_notify_next),
	KUNIT_CASE(shca_test_notify_solicited),
	KUNIT_CASE(shca_test_missed_events),
	KUNIT_CASE(shca_test_resize_keeps_cqes),
	KUNIT_CASE(shca_test_moderation),
	KUNIT_CASE(shca_test_cq_bad_attrs),
	{}
};

static struct kunit_suite shca_cq_suite = {
	.name = "shca_cq",
	.test_cases = shca_cq_cases,
};

kunit_test_suites(&shca_qp_error_suite, &shca_post_suite, &shca_cq_suite);
