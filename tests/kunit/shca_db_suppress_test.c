// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: doorbell suppression (shca_db_suppress).
 *
 * While a QP's turn executes send WQEs, the doorbell record's sq_running
 * says so and a kernel post rings no doorbell; before the turn stops it
 * clears sq_running, issues a barrier and reads the producer index once
 * more.  The held cases stop a turn in each of the two windows of that
 * stop (db_idle: about to clear sq_running; db_recheck: cleared, not yet
 * looked again) and post into it: the post skips the doorbell or rings,
 * as the window says, and the WQE is executed exactly once, never
 * stranded.  The stress case runs posting threads on their own QPs with
 * both windows widened by delays, and counts the WQEs that never
 * completed: there must be none, and the counters must show that posts
 * skipped doorbells and that stopping turns found their WQEs.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/prandom.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_DB_HOLD_WAIT	(5 * HZ)
#define SHCA_DB_MSG		64
#define SHCA_DB_THREADS		4
#define SHCA_DB_WQES		1500
/* Outstanding WQEs a poster keeps below: its CQ holds 16 CQEs. */
#define SHCA_DB_OUTSTANDING	12
#define SHCA_DB_STALL_MS	5000

/* The counters a post into a stopping turn moves. */
struct shca_db_counts {
	u64 doorbells;
	u64 skipped;
	u64 rechecks;
};

static void shca_db_counts(struct ib_device *dev, struct shca_db_counts *c)
{
	c->doorbells = shca_test_counter(dev, SHCA_CNT_DOORBELLS);
	c->skipped = shca_test_drv_counter(dev, SHCA_DRV_CNT_DB_SKIPPED);
	c->rechecks = shca_test_counter(dev, SHCA_CNT_DB_RECHECKS);
}

/**
 * struct shca_db_hold_case - a post into a stopping turn
 * @name: the case's name
 * @window: where the turn is held
 * @fail_first: the WQE the turn executed fails, so it stops in ERR and
 *	the WQE posted into the window is flushed
 * @skipped: the post sees the turn running and rings no doorbell
 * @rechecks: stopping turns that found the WQE on their second look
 */
struct shca_db_hold_case {
	const char *name;
	enum shca_hw_window_id window;
	bool fail_first;
	bool skipped;
	u64 rechecks;
};

static const struct shca_db_hold_case shca_db_hold_cases[] = {
	/* The turn takes the WQE on itself: nobody rang for it. */
	{ "idle", SHCA_WIN_DB_IDLE, false, true, 1 },
	/*
	 * The post rang: the queued turn takes it, the stopping one leaves
	 * it (a kernel QP's turn is the work item itself, so the one the
	 * doorbell queued cannot start before the held one ends).
	 */
	{ "recheck", SHCA_WIN_DB_RECHECK, false, false, 0 },
	/* Stopping in ERR: the WQE is flushed by the turn its error queued. */
	{ "idle_err", SHCA_WIN_DB_IDLE, true, true, 0 },
	{ "recheck_err", SHCA_WIN_DB_RECHECK, true, false, 0 },
};

static void shca_db_hold_desc(const struct shca_db_hold_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_db_hold, shca_db_hold_cases, shca_db_hold_desc);

/*
 * An RDMA WRITE executes (or fails on a bad rkey), and the turn stops in
 * the case's window.  A second WRITE posted meanwhile skips the doorbell
 * or rings it, as the window says; it has not run while the turn is
 * held, and once released it completes exactly once: done, or flushed
 * behind the failure.
 */
static void shca_test_db_post_into_stopping_turn(struct kunit *test)
{
	const struct shca_db_hold_case *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_db_counts before, after;
	struct shca_hw_window *win;
	struct ib_wc wc;
	u64 passes;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	win = shca_test_window_arm(test, a->dev, p->window, a->qp->qp_num);
	passes = shca_hw_window_passes(win);
	KUNIT_ASSERT_EQ(test, 0,
			shca_test_rdma_write(a, 1, p->fail_first ? 0 : b->rkey,
					     b->addr, SHCA_DB_MSG));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win,
							 SHCA_DB_HOLD_WAIT));
	KUNIT_EXPECT_EQ(test, passes + 1, shca_hw_window_passes(win));
	shca_test_expect(test, a, p->fail_first ? IB_WC_REM_ACCESS_ERR :
			 IB_WC_SUCCESS, 1);

	shca_db_counts(a->dev, &before);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 2, b->rkey,
						      b->addr + SHCA_DB_MSG,
						      SHCA_DB_MSG));
	shca_db_counts(a->dev, &after);
	KUNIT_EXPECT_EQ(test, before.skipped + p->skipped, after.skipped);
	KUNIT_EXPECT_EQ(test, before.doorbells + !p->skipped, after.doorbells);
	/* Held: nothing ran it. */
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));

	shca_hw_window_release(win);
	shca_test_expect(test, a, p->fail_first ? IB_WC_WR_FLUSH_ERR :
			 IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
	shca_db_counts(a->dev, &after);
	KUNIT_EXPECT_EQ(test, before.rechecks + p->rechecks, after.rechecks);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

/*
 * While a turn executes, the kernel posts ring nothing: a WRITE held in
 * the responder (mem_access window) keeps the turn running, three more
 * WRITEs posted meanwhile skip their doorbells, and all four complete
 * in order once it is released.
 */
static void shca_test_db_running_turn_takes_posts(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_db_counts before, after;
	struct shca_hw_window *win;
	int i;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	win = shca_test_window_arm(test, a->dev, SHCA_WIN_MEM_ACCESS, b->qp->qp_num);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 0, b->rkey, b->addr,
						      SHCA_DB_MSG));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win,
							 SHCA_DB_HOLD_WAIT));
	shca_db_counts(a->dev, &before);
	for (i = 1; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_rdma_write(a, i, b->rkey, b->addr,
						     SHCA_DB_MSG));
	shca_db_counts(a->dev, &after);
	KUNIT_EXPECT_EQ(test, before.skipped + 3, after.skipped);
	KUNIT_EXPECT_EQ(test, before.doorbells, after.doorbells);
	shca_hw_window_release(win);
	for (i = 0; i < 4; i++)
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
}

/* One posting thread's QP pair and tally. */
struct shca_db_poster {
	struct shca_tq *a;
	struct shca_tq *b;
	u32 posted;
	u32 completed;
	u32 errors;
	struct completion done;
};

/*
 * Post SHCA_DB_WQES WRITEs in bursts of random size, polling between
 * them; then wait for the rest.  Gives up when nothing completes for
 * SHCA_DB_STALL_MS: what is still outstanding then is stranded.
 */
static int shca_db_poster_fn(void *arg)
{
	struct shca_db_poster *ps = arg;
	unsigned long last = jiffies;
	struct ib_wc wc[8];
	u32 burst, i;
	int n;

	while (ps->completed < SHCA_DB_WQES) {
		burst = 1 + get_random_u32_below(6);
		for (i = 0; i < burst && ps->posted < SHCA_DB_WQES &&
		     ps->posted - ps->completed < SHCA_DB_OUTSTANDING; i++) {
			if (shca_test_rdma_write(ps->a, ps->posted, ps->b->rkey,
						 ps->b->addr, SHCA_DB_MSG)) {
				ps->errors++;
				goto out;
			}
			ps->posted++;
		}
		n = ib_poll_cq(ps->a->cq, ARRAY_SIZE(wc), wc);
		for (i = 0; i < max(n, 0); i++)
			if (wc[i].status != IB_WC_SUCCESS ||
			    wc[i].wr_id != ps->completed + i)
				ps->errors++;
		if (n > 0) {
			ps->completed += n;
			last = jiffies;
		} else if (time_after(jiffies, last +
				      msecs_to_jiffies(SHCA_DB_STALL_MS))) {
			break;
		} else if (!get_random_u32_below(4)) {
			/* Now and then let the turn stop before posting. */
			usleep_range(20, 60);
		} else {
			cond_resched();
		}
	}
out:
	complete(&ps->done);
	return 0;
}

/*
 * SHCA_DB_THREADS threads post to a QP each while every stop of a turn
 * is slowed in both windows.  No WQE may be stranded or complete out of
 * order, posts must have skipped doorbells, and stopping turns must have
 * found WQEs nobody rang for: the race was run, many times.
 */
static void shca_test_db_stress_strands_nothing(struct kunit *test)
{
	struct shca_db_poster *ps;
	struct shca_db_counts before, after;
	struct shca_hw_window *idle, *recheck;
	struct ib_device *dev;
	struct task_struct *t;
	u32 stranded = 0, errors = 0;
	int i;

	ps = kunit_kcalloc(test, SHCA_DB_THREADS, sizeof(*ps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	for (i = 0; i < SHCA_DB_THREADS; i++) {
		ps[i].a = shca_test_tq_new(test);
		ps[i].b = shca_test_tq_new(test);
		shca_test_tq_init(test, ps[i].a, dev, IB_QPT_RC, NULL, 16, 16);
		shca_test_tq_init(test, ps[i].b, dev, IB_QPT_RC, NULL, 16, 16);
		shca_test_connect(test, ps[i].a, ps[i].b);
		init_completion(&ps[i].done);
	}
	idle = shca_hw_window(to_shca_dev(dev)->hw, SHCA_WIN_DB_IDLE);
	recheck = shca_hw_window(to_shca_dev(dev)->hw, SHCA_WIN_DB_RECHECK);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_window_reset,
							   idle));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_window_reset,
							   recheck));
	shca_hw_window_set_delay(idle, 30);
	shca_hw_window_set_delay(recheck, 10);
	shca_db_counts(dev, &before);

	for (i = 0; i < SHCA_DB_THREADS; i++) {
		t = kthread_run(shca_db_poster_fn, &ps[i], "shca_db_post%d", i);
		if (IS_ERR(t)) {
			/* Those started still run: wait for them below. */
			KUNIT_FAIL(test, "no thread: %ld", PTR_ERR(t));
			complete(&ps[i].done);
		}
	}
	for (i = 0; i < SHCA_DB_THREADS; i++) {
		wait_for_completion(&ps[i].done);
		stranded += ps[i].posted - ps[i].completed;
		errors += ps[i].errors;
	}
	shca_db_counts(dev, &after);
	kunit_info(test, "%u WQEs, %llu doorbells, %llu skipped, %llu found by the second look\n",
		   SHCA_DB_THREADS * SHCA_DB_WQES,
		   after.doorbells - before.doorbells,
		   after.skipped - before.skipped,
		   after.rechecks - before.rechecks);
	KUNIT_EXPECT_EQ(test, 0, stranded);
	KUNIT_EXPECT_EQ(test, 0, errors);
	for (i = 0; i < SHCA_DB_THREADS; i++)
		KUNIT_EXPECT_EQ(test, SHCA_DB_WQES, ps[i].completed);
	KUNIT_EXPECT_GT(test, after.skipped, before.skipped);
	KUNIT_EXPECT_GT(test, after.rechecks, before.rechecks);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(idle));
}

static struct kunit_case shca_db_suppress_cases[] = {
	KUNIT_CASE_PARAM(shca_test_db_post_into_stopping_turn,
			 shca_db_hold_gen_params),
	KUNIT_CASE(shca_test_db_running_turn_takes_posts),
	KUNIT_CASE_SLOW(shca_test_db_stress_strands_nothing),
	{}
};

static struct kunit_suite shca_db_suppress_suite = {
	.name = "shca_db_suppress",
	.test_cases = shca_db_suppress_cases,
};

kunit_test_suite(shca_db_suppress_suite);
