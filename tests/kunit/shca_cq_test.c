// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: completion queues, through the real driver: arming for the next
 * and for solicited completions, missed events, resize with live CQEs
 * (also under a CQE the device is still writing, and held between the
 * chunks of its copy),
 * interrupt moderation and refused attributes.
 */
#include <kunit/test.h>
#include <rdma/ib_mad.h>

#include "shca.h"
#include "shca_test.h"

/* Wait until the device has executed every posted send (and its CQE). */
static void shca_test_wait_idle(struct kunit *test, struct shca_tq *tq)
{
	unsigned long end = jiffies + 5 * HZ;

	while (!shca_test_sq_idle(tq)) {
		KUNIT_ASSERT_FALSE(test, time_after(jiffies, end));
		usleep_range(50, 200);
	}
}

static u32 shca_test_cq_armed(struct shca_tq *tq)
{
	struct shca_hw_cq_query q = {};

	shca_cmd_query_cq(to_shca_dev(tq->dev), to_shca_cq(tq->cq)->cqn, &q);
	return q.armed;
}

static bool shca_test_wait_comp(struct shca_tq *tq, int n)
{
	unsigned long end = jiffies + 5 * HZ;

	while (atomic_read(&tq->comp_events) < n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
	return true;
}

static void shca_test_notify_next_fires_once_per_arm(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 eqes;
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP));
	KUNIT_EXPECT_EQ(test, (u32)SHCA_CQ_ARM_NEXT, shca_test_cq_armed(a));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_TRUE(test, shca_test_wait_comp(a, 1));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	/* Not re-armed: the next completion raises no event. */
	eqes = shca_test_counter(a->dev, SHCA_CNT_EQES);
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 2, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, eqes, shca_test_counter(a->dev, SHCA_CNT_EQES));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&a->comp_events));
}

static void shca_test_notify_solicited_ignores_unsolicited(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 eqes;
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
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
	KUNIT_EXPECT_EQ(test, (u32)SHCA_CQ_ARM_SOLICITED, shca_test_cq_armed(b));
	err = shca_test_post_send(a, b, IB_WR_SEND, 4, 0, 0, 8,
				  IB_SEND_SOLICITED);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_TRUE(test, shca_test_wait_comp(b, 1));
	shca_test_expect(test, b, IB_WC_SUCCESS, 2);
}

static void shca_test_notify_reports_missed_events(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 1, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_wait_idle(test, a);
	KUNIT_EXPECT_EQ(test, 1, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP |
						  IB_CQ_REPORT_MISSED_EVENTS));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 0, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP |
						  IB_CQ_REPORT_MISSED_EVENTS));
}

/* A connected RC pair, and three RDMA writes of @a's unpolled in its CQ. */
static void shca_test_three_unpolled(struct kunit *test, struct shca_tq *a,
				     struct shca_tq *b)
{
	int i, err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	for (i = 1; i <= 3; i++) {
		err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, i, 0, 0,
					  8, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
	}
	shca_test_wait_idle(test, a);
}

static void shca_test_resize_keeps_cqes(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i, err;

	shca_test_three_unpolled(test, a, b);
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

/*
 * Hold the device between a CQE's body and its owner byte, resize the CQ
 * under it (first too small, then to a ring the held CQE fills exactly),
 * and let it go: the held CQE lands in the new ring after the three moved
 * ones, nothing is lost, and the CQ goes on working.
 */
static void shca_test_resize_in_cqe_publish_window(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_window *win;
	int i, err, cqe;
	u64 passes;

	shca_test_three_unpolled(test, a, b);
	cqe = a->cq->cqe;
	win = shca_test_window_hold(test, a->dev, SHCA_WIN_CQE_PUBLISH,
				    a->qp->qp_num);
	passes = shca_hw_window_passes(win);
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 4, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, 5 * HZ));
	KUNIT_EXPECT_EQ(test, passes + 1, shca_hw_window_passes(win));

	/* Three unpolled: a ring of two is refused, the CQ unchanged. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_resize_cq(a->cq, 1));
	KUNIT_EXPECT_EQ(test, cqe, a->cq->cqe);
	KUNIT_ASSERT_EQ(test, 0, ib_resize_cq(a->cq, 3));
	KUNIT_EXPECT_EQ(test, 3, a->cq->cqe);
	shca_hw_window_release(win);
	for (i = 1; i <= 4; i++)
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
	KUNIT_EXPECT_EQ(test, 0ULL,
			shca_test_counter(a->dev, SHCA_CNT_CQ_OVERFLOW));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 5, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 5);
}

/* An ib_resize_cq() run in a work item, for a test that holds it. */
struct shca_test_resize {
	struct work_struct work;
	struct ib_cq *cq;
	int cqe;
	int ret;
	struct completion done;
};

static void shca_test_resize_fn(struct work_struct *work)
{
	struct shca_test_resize *r = container_of(work, struct shca_test_resize,
						  work);

	r->ret = ib_resize_cq(r->cq, r->cqe);
	complete(&r->done);
}

/*
 * Hold RESIZE_CQ between the chunks of its copy (the cq_resize window):
 * the CQ stays live, no lock of it held and interrupts on.  A poll finds
 * nothing, an arm that asks about missed events is told of none, and the
 * device writes a fourth CQE into the old ring meanwhile.  Once the
 * resize is done, the completion handler is called for the poll that
 * found nothing, with no arm to raise an event, and the four come out of
 * the new ring in order.
 */
static void shca_test_resize_copies_with_the_cq_live(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_test_resize *r = kunit_kzalloc(test, sizeof(*r),
						   GFP_KERNEL);
	unsigned long end = jiffies + 5 * HZ;
	struct shca_hw_window *win;
	struct ib_wc wc;
	int i, err, events;
	bool held, idle;

	KUNIT_ASSERT_NOT_NULL(test, r);
	shca_test_three_unpolled(test, a, b);
	win = shca_test_window_hold(test, a->dev, SHCA_WIN_CQ_RESIZE,
				    to_shca_cq(a->cq)->cqn);
	events = atomic_read(&a->comp_events);
	r->cq = a->cq;
	r->cqe = 100;
	init_completion(&r->done);
	INIT_WORK(&r->work, shca_test_resize_fn);
	queue_work(system_unbound_wq, &r->work);
	held = shca_hw_window_wait_held(win, 5 * HZ);
	KUNIT_EXPECT_TRUE(test, held);
	if (held) {
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
		KUNIT_EXPECT_EQ(test, 0,
				ib_req_notify_cq(a->cq, IB_CQ_SOLICITED |
						 IB_CQ_REPORT_MISSED_EVENTS));
		err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 4, 0, 0, 8,
					  0);
		KUNIT_EXPECT_EQ(test, 0, err);
		while (!(idle = shca_test_sq_idle(a)) &&
		       time_before(jiffies, end))
			usleep_range(50, 200);
		/* The device wrote the CQE while the copy was held. */
		KUNIT_EXPECT_TRUE(test, idle);
		KUNIT_EXPECT_FALSE(test, completion_done(&r->done));
		KUNIT_EXPECT_EQ(test, events, atomic_read(&a->comp_events));
	}
	shca_hw_window_release(win);
	wait_for_completion(&r->done);
	KUNIT_ASSERT_EQ(test, 0, r->ret);
	KUNIT_EXPECT_EQ(test, 127, a->cq->cqe);
	KUNIT_EXPECT_EQ(test, events + 1, atomic_read(&a->comp_events));
	for (i = 1; i <= 4; i++)
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
	KUNIT_EXPECT_EQ(test, 0ULL,
			shca_test_counter(a->dev, SHCA_CNT_CQ_OVERFLOW));
}

static void shca_test_moderation_holds_the_event_until_count(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int i, err;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_cq_moderation(a->cq, 3, 0));
	KUNIT_ASSERT_EQ(test, 0, ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP));
	for (i = 1; i <= 2; i++) {
		err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, i, 0, 0,
					  8, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
	}
	shca_test_wait_idle(test, a);
	/* Two CQEs of three: still armed, no event yet. */
	KUNIT_EXPECT_EQ(test, (u32)SHCA_CQ_ARM_NEXT, shca_test_cq_armed(a));
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 3, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_TRUE(test, shca_test_wait_comp(a, 1));
	KUNIT_EXPECT_EQ(test, 0U, shca_test_cq_armed(a));
}

static void shca_test_create_cq_refuses_bad_attrs(struct kunit *test)
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
	attr.comp_vector = da->num_comp_vectors;
	cq = ib_create_cq(da, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(cq));
}

static struct kunit_case shca_cq_cases[] = {
	KUNIT_CASE(shca_test_notify_next_fires_once_per_arm),
	KUNIT_CASE(shca_test_notify_solicited_ignores_unsolicited),
	KUNIT_CASE(shca_test_notify_reports_missed_events),
	KUNIT_CASE(shca_test_resize_keeps_cqes),
	KUNIT_CASE(shca_test_resize_in_cqe_publish_window),
	KUNIT_CASE(shca_test_resize_copies_with_the_cq_live),
	KUNIT_CASE(shca_test_moderation_holds_the_event_until_count),
	KUNIT_CASE(shca_test_create_cq_refuses_bad_attrs),
	{}
};

static struct kunit_suite shca_cq_suite = {
	.name = "shca_cq",
	.test_cases = shca_cq_cases,
};

kunit_test_suite(shca_cq_suite);
