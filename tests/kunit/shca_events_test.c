// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: no event is lost.  The EQ is as deep as the device's objects
 * need; an object keeps at most one EQE per kind in it and owes, rather
 * than drops, an event that finds its slot taken or the EQ full; the
 * responder raises COMM_EST once per RTR visit.  The EQ is filled on
 * purpose by holding the interrupt handler (the eq_paused knob) and
 * lowering the EQ's limit, never by hoping the handler is slow.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <rdma/ib_cache.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_EVENTS_TIMEOUT		(5 * HZ)
#define SHCA_EVENTS_FILLERS		4
#define SHCA_EVENTS_MSGS		64

/**
 * struct shca_events_ctx - what a test's handlers counted
 * @comm_est: COMM_EST events seen on the watched QP
 * @other: any other affiliated event seen on it
 */
struct shca_events_ctx {
	atomic_t comm_est;
	atomic_t other;
};

static struct shca_dev *shca_events_sdev(struct ib_device *dev)
{
	return to_shca_dev(dev);
}

/* Let the handler go and the EQ limit back, whatever the test did. */
static void shca_events_restore(void *ctx)
{
	struct shca_dev *sdev = ctx;

	shca_hw_eq_set_limit(sdev->hw, 0);
	shca_eq_pause(sdev, false);
}

static void shca_events_hold(struct kunit *test, struct ib_device *dev)
{
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_events_restore,
						  shca_events_sdev(dev)));
}

/* Wait until the handler acknowledged every EQE and nothing is owed. */
static void shca_events_wait_drained(struct kunit *test, struct ib_device *dev)
{
	unsigned long end = jiffies + SHCA_EVENTS_TIMEOUT;
	struct shca_hw_eq_state st;

	for (;;) {
		shca_hw_eq_query(shca_events_sdev(dev)->hw, 0, &st);
		if (st.acked == st.written && !st.owing)
			return;
		KUNIT_ASSERT_FALSE_MSG(test, time_after(jiffies, end),
				       "EQ: %llu written, %llu acked, %u owing",
				       st.written, st.acked, st.owing);
		usleep_range(50, 200);
	}
}

/* Wait until a device counter reaches @value. */
static bool shca_events_wait_counter(struct ib_device *dev,
				     enum shca_hw_counter counter, u64 value)
{
	unsigned long end = jiffies + SHCA_EVENTS_TIMEOUT;

	while (shca_test_counter(dev, counter) < value) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
	return true;
}

static bool shca_events_wait_count(atomic_t *v, int n)
{
	unsigned long end = jiffies + SHCA_EVENTS_TIMEOUT;

	while (atomic_read(v) < n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
	return true;
}

/* A UD QP that sends to itself, on its own CQ with a completion handler. */
static struct shca_tq *shca_events_loop(struct kunit *test, struct ib_device *dev)
{
	struct shca_tq *tq = shca_test_tq_new(test);

	shca_test_tq_init(test, tq, dev, IB_QPT_UD, NULL, 64, 32);
	shca_test_connect(test, tq, tq);
	return tq;
}

/*
 * Arm the end's CQ, send once and wait for the send's CQE: the CQE raises
 * one completion event.
 */
static void shca_events_kick(struct kunit *test, struct shca_tq *tq, u64 wr_id)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, 0, ib_req_notify_cq(tq->cq, IB_CQ_NEXT_COMP));
	KUNIT_ASSERT_EQ(test, 0,
			shca_test_post_send(tq, tq, IB_WR_SEND, wr_id, 0, 0,
					    8, 0));
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
	KUNIT_EXPECT_EQ(test, wr_id, wc.wr_id);
}

static void shca_test_eq_sized_for_every_object(struct kunit *test)
{
	struct ib_device *dev = shca_test_add(test, SHCA_TEST_DEV,
					      shca_test_netdev(test));
	const struct shca_hw_caps *c = &shca_events_sdev(dev)->caps;
	struct shca_hw_eq_state st;
	u64 need;

	/* A completion and a CQ error per CQ, one per QP, SRQ and port. */
	need = 2ULL * c->max_cq + c->max_qp + c->max_srq + SHCA_HW_NUM_PORTS;
	shca_hw_eq_query(shca_events_sdev(dev)->hw, 0, &st);
	KUNIT_EXPECT_GE(test, (u64)st.depth, need);
	KUNIT_EXPECT_LT(test, (u64)st.depth, 2 * need);
	KUNIT_EXPECT_EQ(test, st.depth,
			1U << shca_hw_eq_log_depth(c));
}

/*
 * With the handler held, a CQ armed twice gets one EQE into the EQ; the
 * second event is owed and written once the first is acknowledged, so its
 * consumer is woken twice, not once.
 */
static void shca_test_cq_has_one_eqe_in_the_eq(struct kunit *test)
{
	struct ib_device *dev = shca_test_add(test, SHCA_TEST_DEV,
					      shca_test_netdev(test));
	struct shca_tq *tq = shca_events_loop(test, dev);
	u64 eqes, ovf;

	shca_events_hold(test, dev);
	shca_events_wait_drained(test, dev);
	eqes = shca_test_counter(dev, SHCA_CNT_EQES);
	ovf = shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW);

	shca_eq_pause(shca_events_sdev(dev), true);
	shca_events_kick(test, tq, 1);
	shca_test_wait_eq(test, dev, 0, 1, 0);
	shca_events_kick(test, tq, 2);
	shca_test_wait_eq(test, dev, 0, 1, 1);
	KUNIT_EXPECT_EQ(test, eqes + 1, shca_test_counter(dev, SHCA_CNT_EQES));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&tq->comp_events));

	shca_eq_pause(shca_events_sdev(dev), false);
	KUNIT_EXPECT_TRUE(test, shca_events_wait_count(&tq->comp_events, 2));
	shca_events_wait_drained(test, dev);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&tq->comp_events));
	KUNIT_EXPECT_EQ(test, eqes + 2, shca_test_counter(dev, SHCA_CNT_EQES));
	/* A taken slot is not an overflow. */
	KUNIT_EXPECT_EQ(test, ovf,
			shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW));
}

/*
 * Fill the EQ on purpose: hold the handler, let the EQ take only
 * SHCA_EVENTS_FILLERS more EQEs, and have that many other CQs fill it.  The
 * consumer's completion event then finds the EQ full: it is counted as an
 * overflow, and still reaches the consumer once the handler runs again.
 * The consumer keeps getting its wakeups after that.
 */
static void shca_test_eq_overrun_keeps_wakeups(struct kunit *test)
{
	struct ib_device *dev = shca_test_add(test, SHCA_TEST_DEV,
					      shca_test_netdev(test));
	struct shca_tq *fill[SHCA_EVENTS_FILLERS], *tq;
	struct shca_hw_eq_state st;
	u64 eqes, ovf;
	int i;

	for (i = 0; i < SHCA_EVENTS_FILLERS; i++)
		fill[i] = shca_events_loop(test, dev);
	tq = shca_events_loop(test, dev);
	shca_events_hold(test, dev);
	shca_events_wait_drained(test, dev);
	eqes = shca_test_counter(dev, SHCA_CNT_EQES);
	ovf = shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW);

	shca_eq_pause(shca_events_sdev(dev), true);
	shca_hw_eq_set_limit(shca_events_sdev(dev)->hw, SHCA_EVENTS_FILLERS);
	for (i = 0; i < SHCA_EVENTS_FILLERS; i++)
		shca_events_kick(test, fill[i], 100 + i);
	shca_test_wait_eq(test, dev, 0, SHCA_EVENTS_FILLERS, 0);
	KUNIT_ASSERT_EQ(test, ovf,
			shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW));

	/* The EQ is full: the consumer's event cannot be written. */
	shca_events_kick(test, tq, 1);
	KUNIT_ASSERT_TRUE(test, shca_events_wait_counter(dev, SHCA_CNT_EQ_OVERFLOW,
							 ovf + 1));
	KUNIT_EXPECT_EQ(test, eqes + SHCA_EVENTS_FILLERS,
			shca_test_counter(dev, SHCA_CNT_EQES));
	shca_hw_eq_query(shca_events_sdev(dev)->hw, 0, &st);
	KUNIT_EXPECT_EQ(test, 1, st.owing);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&tq->comp_events));

	shca_eq_pause(shca_events_sdev(dev), false);
	KUNIT_EXPECT_TRUE_MSG(test, shca_events_wait_count(&tq->comp_events, 1),
			      "the consumer's wakeup was lost");
	shca_events_wait_drained(test, dev);
	for (i = 0; i < SHCA_EVENTS_FILLERS; i++)
		KUNIT_EXPECT_EQ(test, 1, atomic_read(&fill[i]->comp_events));

	/* Still limited, but drained: the wakeups keep coming. */
	for (i = 2; i <= 4; i++) {
		shca_events_kick(test, tq, i);
		KUNIT_EXPECT_TRUE(test, shca_events_wait_count(&tq->comp_events, i));
	}
	shca_events_wait_drained(test, dev);
	KUNIT_EXPECT_EQ(test, 4, atomic_read(&tq->comp_events));
	KUNIT_EXPECT_EQ(test, ovf + 1,
			shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW));
}

static void shca_events_qp_event(struct ib_event *ev, void *ctx)
{
	struct shca_tq *tq = ctx;
	struct shca_events_ctx *c = tq->test->priv;

	if (ev->event == IB_EVENT_COMM_EST)
		atomic_inc(&c->comm_est);
	else
		atomic_inc(&c->other);
}

/* RESET -> INIT -> RTR, connected to @peer, and no further. */
static int shca_events_to_rtr(struct shca_tq *tq, struct shca_tq *peer)
{
	const struct shca_ktest_conn conn = {
		.access = IB_ACCESS_REMOTE_WRITE,
		.psn = 1,
	};
	int err;

	err = shca_ktest_qp_init(tq->qp, &conn);
	if (err)
		return err;
	return shca_ktest_qp_rtr(tq->qp, peer->dev, peer->qp->qp_num, &conn);
}

static int shca_events_rtr_to_rts(struct shca_tq *tq)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.sq_psn = 1,
		.timeout = 4,
		.retry_cnt = 2,
		.rnr_retry = 2,
		.max_rd_atomic = 4,
	};

	return ib_modify_qp(tq->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    (tq->qp->qp_type == IB_QPT_RC ?
			     IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			     IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC : 0));
}

static int shca_events_reset(struct shca_tq *tq)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	return ib_modify_qp(tq->qp, &attr, IB_QP_STATE);
}

/* @n zero-length sends from @a to @b, all received and completed. */
static void shca_events_flood(struct kunit *test, struct shca_tq *a,
			      struct shca_tq *b, int n)
{
	struct ib_wc *wc = kunit_kcalloc(test, n, sizeof(*wc), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, wc);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i, 0, 64));
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_post_send(a, b, IB_WR_SEND, i, 0, 0,
						    0, 0));
	KUNIT_ASSERT_EQ(test, n, shca_test_poll(a, wc, n));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[i].status);
	KUNIT_ASSERT_EQ(test, n, shca_test_poll(b, wc, n));
}

static const enum ib_qp_type shca_events_types[] = { IB_QPT_RC, IB_QPT_UC };

static void shca_events_type_desc(const enum ib_qp_type *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *t == IB_QPT_RC ? "rc" : "uc");
}

KUNIT_ARRAY_PARAM(shca_events_type, shca_events_types, shca_events_type_desc);

/*
 * Many messages to a QP held in RTR raise one COMM_EST, not one each; a
 * new RTR visit raises one more, and RTS raises none.
 */
static void shca_test_comm_est_once_per_rtr_visit(struct kunit *test)
{
	const enum ib_qp_type *type = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_events_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct ib_device *dev;
	int visit;

	KUNIT_ASSERT_NOT_NULL(test, c);
	test->priv = c;
	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	shca_test_tq_init(test, a, dev, *type, NULL, SHCA_EVENTS_MSGS + 8,
			  SHCA_EVENTS_MSGS);
	shca_test_tq_init(test, b, dev, *type, NULL, SHCA_EVENTS_MSGS + 8,
			  SHCA_EVENTS_MSGS);
	b->qp->registered_event_handler = shca_events_qp_event;

	for (visit = 1; visit <= 2; visit++) {
		if (visit > 1) {
			KUNIT_ASSERT_EQ(test, 0, shca_events_reset(a));
			KUNIT_ASSERT_EQ(test, 0, shca_events_reset(b));
		}
		KUNIT_ASSERT_EQ(test, 0, shca_events_to_rtr(b, a));
		KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(a, b));
		shca_events_flood(test, a, b, SHCA_EVENTS_MSGS);
		/* Every COMM_EST was raised before its message completed. */
		shca_events_wait_drained(test, dev);
		KUNIT_EXPECT_EQ(test, visit, atomic_read(&c->comm_est));
	}

	/* In RTS, none. */
	KUNIT_ASSERT_EQ(test, 0, shca_events_rtr_to_rts(b));
	shca_events_flood(test, a, b, SHCA_EVENTS_MSGS);
	shca_events_wait_drained(test, dev);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&c->comm_est));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&c->other));
}

static struct kunit_case shca_events_cases[] = {
	KUNIT_CASE(shca_test_eq_sized_for_every_object),
	KUNIT_CASE(shca_test_cq_has_one_eqe_in_the_eq),
	KUNIT_CASE(shca_test_eq_overrun_keeps_wakeups),
	KUNIT_CASE_PARAM(shca_test_comm_est_once_per_rtr_visit,
			 shca_events_type_gen_params),
	{}
};

static struct kunit_suite shca_events_suite = {
	.name = "shca_events",
	.test_cases = shca_events_cases,
};

kunit_test_suites(&shca_events_suite);
