// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: a connected QP takes messages from its peer only (shca_conn).
 * The peer is the source GID and the QPN of the QP's path; an RC QP also
 * takes only the PSN it expects next, and PSNs move on by each message's
 * packets, across the 24-bit wrap.  A spoofer on another device that has
 * obtained the peer's QPN (the test moves its device's QPN cursor there)
 * reaches nothing, and its message counts in rx_rejected.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_CONN_LEN	256

struct shca_conn_type {
	const char *name;
	enum ib_qp_type type;
};

static const struct shca_conn_type shca_conn_types[] = {
	{ "rc", IB_QPT_RC },
	{ "uc", IB_QPT_UC },
};

static void shca_conn_type_desc(const struct shca_conn_type *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_conn_type, shca_conn_types, shca_conn_type_desc);

/*
 * Victim b on db, connected to its peer a on da.  Spoofer c on db takes
 * a's QPN (db's QPN cursor moved to it) and connects to b: its messages
 * carry the right QPN from the wrong GID.  c's RDMA WRITE into b's buffer
 * never lands; an RC spoofer runs out of retries, a UC one hears nothing.
 * The real peer's traffic is untouched.
 */
static void shca_test_conn_rejects_a_sender_on_another_device(struct kunit *test)
{
	const struct shca_conn_type *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_tq *c = shca_test_tq_new(test);
	struct ib_device *da, *db;
	u64 rejected;

	shca_test_devices(test, true, &da, &db);
	/* A QPN that db has not handed out, for a. */
	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(to_shca_dev(da)->hw,
						      0x100));
	shca_test_tq_init(test, a, da, p->type, NULL, 16, 8);
	shca_test_tq_init(test, b, db, p->type, NULL, 16, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(to_shca_dev(db)->hw,
						      a->qp->qp_num));
	c->retry_cnt = 0;
	shca_test_tq_init(test, c, db, p->type, NULL, 16, 8);
	KUNIT_ASSERT_EQ(test, a->qp->qp_num, c->qp->qp_num);
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(c, b));

	rejected = shca_test_counter(db, SHCA_CNT_RX_REJECTED);
	memset(b->buf, 0x11, SHCA_CONN_LEN);
	memset(c->buf, 0x5f, SHCA_CONN_LEN);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(c, b, IB_WR_RDMA_WRITE,
						     1, 0, 0, SHCA_CONN_LEN,
						     0));
	shca_test_expect(test, c, p->type == IB_QPT_RC ?
			 IB_WC_RETRY_EXC_ERR : IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(b->buf, 0x11, SHCA_CONN_LEN));
	KUNIT_EXPECT_LT(test, rejected,
			shca_test_counter(db, SHCA_CNT_RX_REJECTED));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(b));

	/* The peer itself still gets through. */
	memset(a->buf, 0x2a, SHCA_CONN_LEN);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, b, IB_WR_RDMA_WRITE,
						     2, 0, 0, SHCA_CONN_LEN,
						     0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_MEMEQ(test, b->buf, a->buf, SHCA_CONN_LEN);
}

/* An RC pair whose ends start at PSNs @a_psn (a sends) and @b_psn. */
static void shca_conn_rc(struct kunit *test, struct shca_tq *a,
			 struct shca_tq *b, u32 a_psn, u32 b_psn)
{
	struct shca_ktest_conn conn = {
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
		.timeout = 4,
	};
	struct ib_device *da, *db;

	shca_test_devices(test, true, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	conn.psn = a_psn;
	KUNIT_ASSERT_EQ(test, 0, shca_ktest_qp_to_rts(a->qp, db,
						      b->qp->qp_num, &conn));
	conn.psn = b_psn;
	KUNIT_ASSERT_EQ(test, 0, shca_ktest_qp_to_rts(b->qp, da,
						      a->qp->qp_num, &conn));
}

static u32 shca_conn_psn(struct kunit *test, struct shca_tq *tq, bool sq)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(tq->qp, &attr, IB_QP_SQ_PSN |
					     IB_QP_RQ_PSN, &init));
	return sq ? attr.sq_psn : attr.rq_psn;
}

/*
 * a sends from PSN 5 where b expects 1: the message is not b's peer's
 * next one, so b drops it, counted, and a runs out of retries.
 */
static void shca_test_conn_rejects_an_unexpected_psn(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 rejected;

	shca_conn_rc(test, a, b, 5, 1);
	rejected = shca_test_counter(b->dev, SHCA_CNT_RX_REJECTED);
	memset(b->buf, 0x11, SHCA_CONN_LEN);
	memset(a->buf, 0x5f, SHCA_CONN_LEN);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, b, IB_WR_RDMA_WRITE,
						     1, 0, 0, SHCA_CONN_LEN,
						     0));
	shca_test_expect(test, a, IB_WC_RETRY_EXC_ERR, 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(b->buf, 0x11, SHCA_CONN_LEN));
	KUNIT_EXPECT_LT(test, rejected,
			shca_test_counter(b->dev, SHCA_CNT_RX_REJECTED));
	KUNIT_EXPECT_EQ(test, 1U, shca_conn_psn(test, b, false));
}

/*
 * Both ends start just below the 24-bit wrap.  Each message takes its
 * packets' PSNs at the path MTU (1024: a 2500-byte WRITE takes three, a
 * READ of as much its response's three, a SEND of 8 bytes one): the
 * sender's next PSN and the receiver's expected one move on alike, wrap
 * to 0, and every message is taken.
 */
static void shca_test_conn_psns_move_by_packets_and_wrap(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u32 start = 0xfffffe, psn;

	shca_conn_rc(test, a, b, start, start);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, b, IB_WR_RDMA_WRITE,
						     1, 0, 0, 2500, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	psn = (start + 3) & 0xffffff;
	KUNIT_EXPECT_EQ(test, psn, shca_conn_psn(test, a, true));
	KUNIT_EXPECT_EQ(test, psn, shca_conn_psn(test, b, false));

	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, b, IB_WR_RDMA_READ,
						     2, 0, 0, 2500, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 3, 0, 64));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, b, IB_WR_SEND, 3, 0,
						     0, 8, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 3);
	shca_test_expect(test, b, IB_WC_SUCCESS, 3);
	psn = (psn + 3 + 1) & 0xffffff;
	KUNIT_EXPECT_EQ(test, psn, shca_conn_psn(test, a, true));
	KUNIT_EXPECT_EQ(test, psn, shca_conn_psn(test, b, false));
	/* b sent nothing: its own next PSN is where it started. */
	KUNIT_EXPECT_EQ(test, start, shca_conn_psn(test, b, true));
}

static struct kunit_case shca_conn_cases[] = {
	KUNIT_CASE_PARAM(shca_test_conn_rejects_a_sender_on_another_device,
			 shca_conn_type_gen_params),
	KUNIT_CASE(shca_test_conn_rejects_an_unexpected_psn),
	KUNIT_CASE(shca_test_conn_psns_move_by_packets_and_wrap),
	{}
};

static struct kunit_suite shca_conn_suite = {
	.name = "shca_conn",
	.test_cases = shca_conn_cases,
};

kunit_test_suite(shca_conn_suite);
