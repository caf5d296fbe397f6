// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the adaptive pollers (shca_hw_poll).
 *
 * The pollers are off by default; each case turns them on.  A kernel
 * RDMA WRITE's doorbell queues its QP's turn on an execution unit, which
 * runs it and, finding the send queue empty, hands the QP to its own
 * CPU's poller with sq_running left set; the device passes no poller
 * over (poll_shun_us 0), so the QP always goes.  The driver then
 * skips the doorbell of every post (db_skipped).  The held cases stop
 * the poller as it lets the QP go, in each of its two windows (poll_idle:
 * sq_running still set; poll_recheck: cleared, the index not yet read
 * again), and post into it: the post skips the doorbell or rings, as the
 * window says, and each WRITE completes exactly once, never stranded.
 * A destroy sends the datagrams a poller left unsent, and flushes RC
 * work.
 */
#include <kunit/test.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_POLL_MSG		64
#define SHCA_POLL_WAIT		(5 * HZ)

static void shca_test_poll_shun_default(void *hw)
{
	shca_hw_set_poll_shun_us(hw, 1000);
}

/*
 * A connected RC pair, @id armed for a's QP (the poller that takes it
 * stops there when it lets it go), and WRITE 0, whose turn hands the QP
 * to a poller.
 */
static struct shca_hw_window *shca_test_poll_start(struct kunit *test,
						   struct shca_tq *a,
						   struct shca_tq *b,
						   enum shca_hw_window_id id)
{
	struct shca_hw_window *win;
	struct shca_hw *hw;
	u64 adopts;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	hw = to_shca_dev(a->dev)->hw;
	shca_test_poll_set(test, hw, SHCA_HW_POLL_MAX_US);
	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_poll_shun_us(hw, 0));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  shca_test_poll_shun_default,
						  hw));
	win = shca_test_window_arm(test, a->dev, id, a->qp->qp_num);
	adopts = shca_test_counter(a->dev, SHCA_CNT_POLL_ADOPTS);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 0, b->rkey, b->addr,
						      SHCA_POLL_MSG));
	shca_test_expect(test, a, IB_WC_SUCCESS, 0);
	KUNIT_EXPECT_EQ(test, adopts + 1,
			shca_test_counter(a->dev, SHCA_CNT_POLL_ADOPTS));
	return win;
}

/*
 * While a poller holds the QP, posts ring no doorbell, and every WRITE
 * completes once: a pass of the poller runs it, or, if the poller was
 * already letting the QP go, its second look does.  Nothing else could:
 * nobody rang.  The window keeps sq_running set until the test lets it.
 */
static void shca_test_poll_serves_posts_without_doorbells(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 doorbells, skipped, served;
	struct shca_hw_window *win;
	struct ib_wc wc;
	int i;

	win = shca_test_poll_start(test, a, b, SHCA_WIN_POLL_IDLE);
	doorbells = shca_test_counter(a->dev, SHCA_CNT_DOORBELLS);
	skipped = shca_test_drv_counter(a->dev, SHCA_DRV_CNT_DB_SKIPPED);
	served = shca_test_counter(a->dev, SHCA_CNT_POLL_TURNS) +
		 shca_test_counter(a->dev, SHCA_CNT_DB_RECHECKS);
	for (i = 1; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_rdma_write(a, i, b->rkey,
						     b->addr + i * SHCA_POLL_MSG,
						     SHCA_POLL_MSG));
	KUNIT_EXPECT_EQ(test, skipped + 3,
			shca_test_drv_counter(a->dev, SHCA_DRV_CNT_DB_SKIPPED));

	/* At the latest, the poller lets the QP go when it idles. */
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_POLL_WAIT));
	shca_hw_window_release(win);
	for (i = 1; i < 4; i++)
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	KUNIT_EXPECT_EQ(test, doorbells,
			shca_test_counter(a->dev, SHCA_CNT_DOORBELLS));
	KUNIT_EXPECT_LT(test, served,
			shca_test_counter(a->dev, SHCA_CNT_POLL_TURNS) +
			shca_test_counter(a->dev, SHCA_CNT_DB_RECHECKS));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

/**
 * struct shca_poll_hold_case - a post into a poller letting its QP go
 * @name: the case's name
 * @window: where the poller is held
 * @skipped: the post finds sq_running set and skips the doorbell
 */
struct shca_poll_hold_case {
	const char *name;
	enum shca_hw_window_id window;
	bool skipped;
};

static const struct shca_poll_hold_case shca_poll_hold_cases[] = {
	/* The poller's second look takes the WRITE: nobody rang for it. */
	{ "idle", SHCA_WIN_POLL_IDLE, true },
	/* The post rang; the turn it queued waits for the poller. */
	{ "recheck", SHCA_WIN_POLL_RECHECK, false },
};

static void shca_poll_hold_desc(const struct shca_poll_hold_case *c,
				char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_poll_hold, shca_poll_hold_cases, shca_poll_hold_desc);

/*
 * The poller lets the QP go (it idled) and is held in the case's window,
 * holding the QP's turn.  In poll_idle sq_running is still set: the post
 * skips the doorbell, nothing runs the WRITE while the poller is held,
 * and its second look finds it and queues the QP's turn
 * (doorbell_rechecks +1).  In poll_recheck it is clear: the post rings,
 * and the turn it queues waits for the poller.  Either way the WRITE
 * completes exactly once.
 */
static void shca_test_poll_post_into_release(struct kunit *test)
{
	const struct shca_poll_hold_case *c = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 doorbells, skipped, rechecks, after;
	struct shca_hw_window *win;
	struct ib_wc wc;

	win = shca_test_poll_start(test, a, b, c->window);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_POLL_WAIT));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_poll_held(to_shca_dev(a->dev)->hw));
	doorbells = shca_test_counter(a->dev, SHCA_CNT_DOORBELLS);
	skipped = shca_test_drv_counter(a->dev, SHCA_DRV_CNT_DB_SKIPPED);
	rechecks = shca_test_counter(a->dev, SHCA_CNT_DB_RECHECKS);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 1, b->rkey,
						      b->addr + SHCA_POLL_MSG,
						      SHCA_POLL_MSG));
	KUNIT_EXPECT_EQ(test, skipped + c->skipped,
			shca_test_drv_counter(a->dev, SHCA_DRV_CNT_DB_SKIPPED));
	KUNIT_EXPECT_EQ(test, doorbells + !c->skipped,
			shca_test_counter(a->dev, SHCA_CNT_DOORBELLS));
	/* Held: nothing ran it. */
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));

	shca_hw_window_release(win);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	after = shca_test_counter(a->dev, SHCA_CNT_DB_RECHECKS);
	/*
	 * In poll_recheck the poller looks too, unless the rung turn is
	 * still queued: an execution unit that started it waits for the
	 * turn_mutex instead.  It finds the WRITE or leaves it; it runs once.
	 */
	if (c->skipped)
		KUNIT_EXPECT_EQ(test, rechecks + 1, after);
	else
		KUNIT_EXPECT_LE(test, after - rechecks, 1ULL);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

/**
 * struct shca_poll_destroy - a destroy of a QP, run beside the test
 * @qp: the QP
 * @work: runs it
 * @ret: what ib_destroy_qp() returned
 * @done: completed when it returned
 */
struct shca_poll_destroy {
	struct ib_qp *qp;
	struct work_struct work;
	int ret;
	struct completion done;
};

static void shca_poll_destroy_fn(struct work_struct *work)
{
	struct shca_poll_destroy *d = container_of(work,
						   struct shca_poll_destroy,
						   work);

	d->ret = ib_destroy_qp(d->qp);
	complete(&d->done);
}

/*
 * A poller is one more holder of the QP's turn.  Held in poll_idle with
 * a WRITE posted and unrung, it still holds the QP when a destroy
 * begins: nothing completes the WRITE until the poller is released.
 * Then the destroy ends, sweeping the QP's CQEs, and no poller holds the
 * QP any more (KASAN would see a poller that kept it).
 */
static void shca_test_poll_destroy_waits_for_poller(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_poll_destroy d = {};
	struct shca_hw_window *win;
	struct ib_wc wc;

	win = shca_test_poll_start(test, a, b, SHCA_WIN_POLL_IDLE);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_POLL_WAIT));
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 1, b->rkey,
						      b->addr + SHCA_POLL_MSG,
						      SHCA_POLL_MSG));
	d.qp = a->qp;
	init_completion(&d.done);
	INIT_WORK_ONSTACK(&d.work, shca_poll_destroy_fn);
	queue_work(system_unbound_wq, &d.work);
	/* Held: whatever the destroy has done so far, no CQE. */
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	shca_hw_window_release(win);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&d.done,
							    2 * SHCA_POLL_WAIT));
	flush_work(&d.work);
	destroy_work_on_stack(&d.work);
	KUNIT_ASSERT_EQ(test, 0, d.ret);
	a->qp = NULL;
	/* Its CQE, whichever wrote it, went with it. */
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_poll_held(to_shca_dev(a->dev)->hw));
}

/**
 * struct shca_poll_left_case - a send a poller left, at a destroy
 * @name: the case's name
 * @type: the QP's type
 * @sent: the destroy sends it (a datagram), or flushes it (RC)
 */
struct shca_poll_left_case {
	const char *name;
	enum ib_qp_type type;
	bool sent;
};

static const struct shca_poll_left_case shca_poll_left_cases[] = {
	{ "ud_sent", IB_QPT_UD, true },
	{ "rc_flushed", IB_QPT_RC, false },
};

static void shca_poll_left_desc(const struct shca_poll_left_case *c,
				char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_poll_left, shca_poll_left_cases, shca_poll_left_desc);

/*
 * A post whose doorbell was left out because the QP's record said a turn
 * had it (sq_running, set here as a poller that has not reached the QP
 * yet leaves it), and then the QP's destroy.  Nothing ran the WQE before
 * the destroy began.  A datagram is sent by the destroy
 * (destroy_sends +1), and its receiver gets it; an RC WRITE is flushed,
 * and the peer's memory sees nothing.
 */
static void shca_test_poll_destroy_sends_what_was_left(struct kunit *test)
{
	const struct shca_poll_left_case *c = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 skipped, sends, rx;
	struct ib_wc wc;

	shca_test_pair(test, a, b, c->type, 8);
	shca_test_connect(test, a, b);
	/* Room for the 40-byte header a UD receive starts with. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 2, 0, 128));
	skipped = shca_test_drv_counter(a->dev, SHCA_DRV_CNT_DB_SKIPPED);
	sends = shca_test_counter(a->dev, SHCA_CNT_DESTROY_SENDS);
	rx = shca_test_counter(b->dev, SHCA_CNT_RX_BYTES);
	WRITE_ONCE(to_shca_qp(a->qp)->dbrec->sq_running, 1);
	KUNIT_ASSERT_EQ(test, 0,
			shca_test_post_send(a, b, c->type == IB_QPT_UD ?
					    IB_WR_SEND : IB_WR_RDMA_WRITE,
					    1, 0, 0, SHCA_POLL_MSG, 0));
	KUNIT_EXPECT_EQ(test, skipped + 1,
			shca_test_drv_counter(a->dev, SHCA_DRV_CNT_DB_SKIPPED));
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));

	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(a->qp));
	a->qp = NULL;
	KUNIT_EXPECT_EQ(test, sends + c->sent,
			shca_test_counter(a->dev, SHCA_CNT_DESTROY_SENDS));
	if (c->sent) {
		shca_test_expect(test, b, IB_WC_SUCCESS, 2);
	} else {
		KUNIT_EXPECT_EQ(test, rx,
				shca_test_counter(b->dev, SHCA_CNT_RX_BYTES));
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(b->cq, 1, &wc));
	}
	/* Whatever the destroy completed for the QP went with it. */
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
}

static struct kunit_case shca_hw_poll_cases[] = {
	KUNIT_CASE(shca_test_poll_serves_posts_without_doorbells),
	KUNIT_CASE_PARAM(shca_test_poll_post_into_release,
			 shca_poll_hold_gen_params),
	KUNIT_CASE(shca_test_poll_destroy_waits_for_poller),
	KUNIT_CASE_PARAM(shca_test_poll_destroy_sends_what_was_left,
			 shca_poll_left_gen_params),
	{}
};

static struct kunit_suite shca_hw_poll_suite = {
	.name = "shca_hw_poll",
	.test_cases = shca_hw_poll_cases,
};

kunit_test_suite(shca_hw_poll_suite);
