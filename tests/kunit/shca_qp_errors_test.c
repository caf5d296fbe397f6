// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the error semantics of QPs, through the real driver: protection
 * and access errors, RNR and transport retries, flushes, unsignaled work,
 * a full send queue, atomics, fence, a UD Q_Key mismatch, CQ overflow
 * and the SQ drained event.  "Nothing happened" is checked against the
 * device's own counters and contexts, which move synchronously with the
 * event in question, never by waiting and seeing.
 */
#include <kunit/test.h>
#include <linux/ktime.h>
#include <rdma/ib_mad.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_QP_ERRORS_REMOTE	8192

/* Wait until a device counter reaches @value. */
static bool shca_test_wait_counter(struct ib_device *dev,
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

static void shca_test_bad_lkey_fails_the_send_and_flushes_the_rest(struct kunit *test)
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

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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

static void shca_test_bad_rkey_puts_both_ends_in_error(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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

static void shca_test_rnr_retries_exhausted_fail_the_send(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 naks;
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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

/*
 * An RNR NAK asks the requester to wait the responder's timer, from
 * IBTA's table: each retry comes no sooner, and each is counted.
 */
static const u8 shca_rnr_timers[] = { 12, 16, 19 };

static void shca_rnr_timer_desc(const u8 *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "timer_%u", *t);
}

KUNIT_ARRAY_PARAM(shca_rnr_timer, shca_rnr_timers, shca_rnr_timer_desc);

static void shca_test_rnr_retries_wait_the_responders_timer(struct kunit *test)
{
	/* IBTA table 45, microseconds, for the timers above. */
	static const u32 usecs[32] = { [12] = 640, [16] = 2560, [19] = 7680 };
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	const u8 *timer = test->param_value;
	ktime_t start;
	u64 naks, excs;
	s64 took;
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	a->rnr_retry = 2;
	shca_test_connect(test, a, b);
	attr.min_rnr_timer = *timer;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE |
					      IB_QP_MIN_RNR_TIMER));
	naks = shca_test_counter(a->dev, SHCA_CNT_RNR_NAK);
	excs = shca_test_counter(a->dev, SHCA_CNT_RNR_EXC);
	start = ktime_get();
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_RNR_RETRY_EXC_ERR, 1);
	took = ktime_us_delta(ktime_get(), start);
	/* Two waits of the timer: a lower bound, whatever the machine. */
	KUNIT_EXPECT_GE_MSG(test, took, 2LL * usecs[*timer],
			    "timer %u: done after %lld us", *timer, took);
	KUNIT_EXPECT_EQ(test, naks + 3,
			shca_test_counter(a->dev, SHCA_CNT_RNR_NAK));
	KUNIT_EXPECT_EQ(test, excs + 1,
			shca_test_counter(a->dev, SHCA_CNT_RNR_EXC));
}

static void shca_test_rnr_retried_until_a_receive_is_posted(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 naks;
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	a->rnr_retry = 7;	/* forever */
	shca_test_connect(test, a, b);
	naks = shca_test_counter(a->dev, SHCA_CNT_RNR_NAK);
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	/* Post the receive only once the responder has said "not ready". */
	KUNIT_ASSERT_TRUE(test, shca_test_wait_counter(a->dev, SHCA_CNT_RNR_NAK,
						       naks + 1));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 2, 0, 64));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	shca_test_expect(test, b, IB_WC_SUCCESS, 2);
}

static void shca_test_transport_retries_exhausted_fail_the_send(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	a->retry_cnt = 1;
	/* The peer stays in RESET: nothing ever answers. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(a, b));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_RETRY_EXC_ERR, 1);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
}

static void shca_test_recv_too_small_fails_both_ends(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_wc wc;
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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

static void shca_test_error_state_flushes_posted_and_new_work(struct kunit *test)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i, err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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

static void shca_test_unsignaled_work_gives_no_completion(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_wc wc;
	int round, i, err;

	shca_test_pair(test, a, b, IB_QPT_RC, 4);
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

static void shca_test_full_send_queue_refuses_the_rest(struct kunit *test)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[5] = {};
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_sge sge;
	int i;

	shca_test_pair(test, a, b, IB_QPT_RC, 4);
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

static void shca_test_atomic_needs_alignment_and_the_right(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_tq *c = shca_test_tq_new(test), *d = shca_test_tq_new(test);
	int err;

	/* A misaligned target is an invalid request. */
	shca_test_pair(test, a, b, IB_QPT_RC, 4);
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

static void shca_test_fenced_send_waits_for_the_read(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_wc wc[2];
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	memset(b->buf + SHCA_QP_ERRORS_REMOTE, 0xab, 64);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 128));
	err = shca_test_post_send(a, b, IB_WR_RDMA_READ, 1, 256, SHCA_QP_ERRORS_REMOTE,
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
	KUNIT_EXPECT_MEMEQ(test, b->buf + SHCA_QP_ERRORS_REMOTE, b->buf, 64);
}

/* A signaled UD SEND of @len bytes of @a's buffer to @b's QP. */
static void shca_ud_send_wr(struct shca_tq *a, struct shca_tq *b,
			    struct ib_ud_wr *wr, struct ib_sge *sge, u32 len,
			    u32 qkey)
{
	*sge = (struct ib_sge){ .addr = a->addr, .length = len,
				.lkey = a->lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = IB_WR_SEND;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->ah = a->ah;
	wr->remote_qpn = b->qp->qp_num;
	wr->remote_qkey = qkey;
}

static void shca_test_ud_wrong_qkey_dropped(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_sge sge;
	struct ib_ud_wr wr;
	struct ib_wc wc;
	u64 dropped;

	shca_test_pair(test, a, b, IB_QPT_UD, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 256));
	shca_ud_send_wr(a, b, &wr, &sge, 32, 0x999);
	wr.wr.wr_id = 1;
	dropped = shca_test_counter(a->dev, SHCA_CNT_DROPPED);
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(a->qp, &wr.wr, NULL));
	/* UD sends complete whether or not anyone takes them. */
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, dropped + 1,
			shca_test_counter(a->dev, SHCA_CNT_DROPPED));
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(b->cq, 1, &wc));
}

/*
 * A datagram longer than the receive WQE is dropped and counted, and the
 * WQE stays for the next datagram.  That one's GRH carries the traffic
 * class and flow label of the sender's address handle.
 */
static void shca_test_ud_datagram_too_long_leaves_the_receive(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct rdma_ah_attr av;
	struct ib_sge sge;
	struct ib_ud_wr wr;
	struct ib_wc wc;
	u64 dropped;
	__be32 vtf;

	shca_test_pair(test, a, b, IB_QPT_UD, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_ktest_av(a->dev, b->dev, &av));
	rdma_ah_set_grh(&av, &av.grh.dgid, 0x12345, SHCA_TEST_SGID, 64, 0xfc);
	rdma_destroy_ah(a->ah, RDMA_DESTROY_AH_SLEEPABLE);
	a->ah = rdma_create_ah(a->pd, &av, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->ah));
	/* Room for the GRH and 24 bytes. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 9, 0, 64));
	shca_ud_send_wr(a, b, &wr, &sge, 100, SHCA_TEST_QKEY);
	dropped = shca_test_counter(a->dev, SHCA_CNT_DROPPED);
	wr.wr.wr_id = 1;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(a->qp, &wr.wr, NULL));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, dropped + 1,
			shca_test_counter(a->dev, SHCA_CNT_DROPPED));
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(b->cq, 1, &wc));

	/* The receive takes the next datagram that fits. */
	memset(b->buf, 0, 64);
	sge.length = 24;
	wr.wr.wr_id = 2;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(a->qp, &wr.wr, NULL));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(b, &wc, 1));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
	KUNIT_EXPECT_EQ(test, 9ULL, wc.wr_id);
	KUNIT_EXPECT_EQ(test, 40U + 24, wc.byte_len);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_GRH);
	/* An IPv6 header: version, traffic class, flow label. */
	memcpy(&vtf, b->buf, sizeof(vtf));
	KUNIT_EXPECT_EQ(test, 6U << 28 | 0xfcU << 20 | 0x12345,
			be32_to_cpu(vtf));
}

static void shca_test_cq_overflow_raises_cq_err(struct kunit *test)
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

static void shca_test_sqd_raises_sq_drained_and_resumes(struct kunit *test)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_SQD,
		.en_sqd_async_notify = 1,
	};
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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

static struct kunit_case shca_qp_errors_cases[] = {
	KUNIT_CASE(shca_test_bad_lkey_fails_the_send_and_flushes_the_rest),
	KUNIT_CASE(shca_test_bad_rkey_puts_both_ends_in_error),
	KUNIT_CASE(shca_test_remote_write_needs_right),
	KUNIT_CASE(shca_test_rnr_retries_exhausted_fail_the_send),
	KUNIT_CASE_PARAM(shca_test_rnr_retries_wait_the_responders_timer,
			 shca_rnr_timer_gen_params),
	KUNIT_CASE(shca_test_rnr_retried_until_a_receive_is_posted),
	KUNIT_CASE(shca_test_transport_retries_exhausted_fail_the_send),
	KUNIT_CASE(shca_test_recv_too_small_fails_both_ends),
	KUNIT_CASE(shca_test_error_state_flushes_posted_and_new_work),
	KUNIT_CASE(shca_test_unsignaled_work_gives_no_completion),
	KUNIT_CASE(shca_test_full_send_queue_refuses_the_rest),
	KUNIT_CASE(shca_test_atomic_needs_alignment_and_the_right),
	KUNIT_CASE(shca_test_fenced_send_waits_for_the_read),
	KUNIT_CASE(shca_test_ud_wrong_qkey_dropped),
	KUNIT_CASE(shca_test_ud_datagram_too_long_leaves_the_receive),
	KUNIT_CASE(shca_test_cq_overflow_raises_cq_err),
	KUNIT_CASE(shca_test_sqd_raises_sq_drained_and_resumes),
	{}
};

static struct kunit_suite shca_qp_errors_suite = {
	.name = "shca_qp_errors",
	.test_cases = shca_qp_errors_cases,
};

kunit_test_suite(shca_qp_errors_suite);
