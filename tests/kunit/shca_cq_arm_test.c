// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: arming a CQ through its doorbell record (shca_cq_arm).
 *
 * A process arms a CQ by storing a new request number in the doorbell
 * record's arm word and issuing a full barrier, with no system call; the
 * device reads the word after each CQE it publishes and its own barrier.
 * These cases store the word the way libshca does, on a kernel CQ whose
 * record is the same memory layout.  The words case checks what each
 * value arms; the window case holds the device between publishing a CQE
 * and reading the word (cq_arm) and arms into it: the poll that follows
 * the arm finds the CQE, and the event still comes once the device reads
 * the word.  The race case arms and polls against a stream of CQEs and
 * counts the arms after which neither a CQE nor an event ever came.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/random.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_ARM_WAIT		(5 * HZ)
#define SHCA_ARM_MSG		64
#define SHCA_ARM_ROUNDS		400

/* Store an arm word as libshca does: the store, then a full barrier. */
static void shca_arm_store(struct shca_tq *tq, u32 word)
{
	WRITE_ONCE(to_shca_cq(tq->cq)->dbrec->arm, word);
	/* Order the arm store before any later read of the CQ ring. */
	smp_mb();
}

static u32 shca_arm_word(u32 sn, u32 how)
{
	return sn << SHCA_CQ_DBREC_ARM_SN_SHIFT | how;
}

/* Wait until the device has raised and the handler run @n events. */
static bool shca_arm_wait_events(struct shca_tq *tq, int n)
{
	unsigned long end = jiffies + SHCA_ARM_WAIT;

	while (atomic_read(&tq->comp_events) < n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
	return true;
}

/* Wait until every EQE is handled and no object owes an event. */
static void shca_arm_wait_drained(struct kunit *test, struct shca_tq *tq)
{
	unsigned long end = jiffies + SHCA_ARM_WAIT;
	struct shca_hw_eq_state st;

	for (;;) {
		shca_hw_eq_query(to_shca_dev(tq->dev)->hw, 0, &st);
		if (st.acked == st.written && !st.owing)
			return;
		KUNIT_ASSERT_FALSE(test, time_after(jiffies, end));
		usleep_range(50, 200);
	}
}

/*
 * The CQ's arm state, once the writer of the CQE just polled is done with
 * it: the device takes the word and raises the event under the CQ's lock,
 * which QUERY_CQ takes too.  Then every event raised is handled.
 */
static u32 shca_arm_settle(struct kunit *test, struct shca_tq *tq)
{
	struct shca_hw_cq_query q;

	KUNIT_ASSERT_EQ(test, 0, shca_cmd_query_cq(to_shca_dev(tq->dev),
						   to_shca_cq(tq->cq)->cqn, &q));
	shca_arm_wait_drained(test, tq);
	return q.armed;
}

/**
 * struct shca_arm_case - arm words stored before one RDMA WRITE completes
 * @name: the case's name
 * @words: the words stored one after the other (request number, how)
 * @nwords: how many
 * @taken: arm requests the device takes at the CQE
 * @event: the CQE raises a completion event
 * @armed: the CQ's arm state after the CQE
 */
struct shca_arm_case {
	const char *name;
	u32 words[2];
	int nwords;
	u64 taken;
	bool event;
	u32 armed;
};

static const struct shca_arm_case shca_arm_cases[] = {
	{ "next", { (1 << SHCA_CQ_DBREC_ARM_SN_SHIFT) | SHCA_CQ_DBREC_ARM_NEXT },
	  1, 1, true },
	/* A send CQE is not solicited: armed, no event. */
	{ "solicited",
	  { (1 << SHCA_CQ_DBREC_ARM_SN_SHIFT) | SHCA_CQ_DBREC_ARM_SOLICITED },
	  1, 1, false, SHCA_CQ_ARM_SOLICITED },
	/* Both ways named: next, the wider. */
	{ "both", { (1 << SHCA_CQ_DBREC_ARM_SN_SHIFT) | 3 }, 1, 1, true },
	/* A new number naming no way of arming is taken and arms nothing. */
	{ "neither", { 1 << SHCA_CQ_DBREC_ARM_SN_SHIFT }, 1, 1, false },
	/* Two requests before a CQE are one arm. */
	{ "twice", { (1 << SHCA_CQ_DBREC_ARM_SN_SHIFT) | SHCA_CQ_DBREC_ARM_NEXT,
		     (2 << SHCA_CQ_DBREC_ARM_SN_SHIFT) | SHCA_CQ_DBREC_ARM_NEXT },
	  2, 1, true },
	/* Any value is harmless. */
	{ "garbage", { 0xffffffff }, 1, 1, true },
};

static void shca_arm_desc(const struct shca_arm_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_arm, shca_arm_cases, shca_arm_desc);

/*
 * The words are stored, one RDMA WRITE completes: the device takes the
 * request, raises the event or not as the word says, and no ARM_CQ
 * doorbell was rung.  The same word again is no new request: the next
 * CQE raises nothing.
 */
static void shca_test_cq_arm_words(struct kunit *test)
{
	const struct shca_arm_case *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u64 taken;
	int i;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	taken = shca_test_counter(a->dev, SHCA_CNT_CQ_DBREC_ARMS);
	for (i = 0; i < p->nwords; i++)
		shca_arm_store(a, p->words[i]);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 1, b->rkey, b->addr,
						      SHCA_ARM_MSG));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, p->armed, shca_arm_settle(test, a));
	KUNIT_EXPECT_EQ(test, taken + p->taken,
			shca_test_counter(a->dev, SHCA_CNT_CQ_DBREC_ARMS));
	KUNIT_EXPECT_EQ(test, (int)p->event, atomic_read(&a->comp_events));
	KUNIT_EXPECT_EQ(test, p->words[p->nwords - 1],
			READ_ONCE(to_shca_cq(a->cq)->dbrec->arm_taken));

	/* No new number: no new request. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 2, b->rkey, b->addr,
						      SHCA_ARM_MSG));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, p->armed, shca_arm_settle(test, a));
	KUNIT_EXPECT_EQ(test, taken + p->taken,
			shca_test_counter(a->dev, SHCA_CNT_CQ_DBREC_ARMS));
	KUNIT_EXPECT_EQ(test, (int)p->event, atomic_read(&a->comp_events));
}

/*
 * The device is held after publishing a WRITE's CQE, before it reads the
 * arm word.  An arm stored now is followed by a poll that finds the CQE
 * (what a process does after arming), and once the device goes on it
 * takes the request and raises the event: no arm is lost either way.
 */
static void shca_test_cq_arm_into_window(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_window *win;
	struct ib_wc wc;
	u64 taken;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	win = shca_test_window_arm(test, a->dev, SHCA_WIN_CQ_ARM,
				   a->qp->qp_num);
	taken = shca_test_counter(a->dev, SHCA_CNT_CQ_DBREC_ARMS);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 1, b->rkey, b->addr,
						      SHCA_ARM_MSG));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_ARM_WAIT));

	shca_arm_store(a, shca_arm_word(1, SHCA_CQ_DBREC_ARM_NEXT));
	KUNIT_ASSERT_EQ(test, 1, ib_poll_cq(a->cq, 1, &wc));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
	KUNIT_EXPECT_EQ(test, 1ULL, wc.wr_id);
	KUNIT_EXPECT_EQ(test, taken,
			shca_test_counter(a->dev, SHCA_CNT_CQ_DBREC_ARMS));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&a->comp_events));

	shca_hw_window_release(win);
	KUNIT_EXPECT_TRUE(test, shca_arm_wait_events(a, 1));
	shca_arm_wait_drained(test, a);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&a->comp_events));
	KUNIT_EXPECT_EQ(test, taken + 1,
			shca_test_counter(a->dev, SHCA_CNT_CQ_DBREC_ARMS));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

/*
 * Arm and poll against CQEs in flight, the way an event-driven consumer
 * does: store a new arm word, poll, and, having found nothing, wait for
 * the event or the CQE.  An arm after which neither ever comes is a lost
 * wakeup; there must be none, and the CQEs must all arrive.  Each path is
 * taken on purpose a third of the rounds: the CQE in the ring before the
 * arm (found by the poll), the arm stored and the poll empty before the
 * WRITE is posted (woken by the event); in the last third the arm lands
 * a random moment after the post, before, during or after the CQE.
 */
static void shca_test_cq_arm_race(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u32 round, lost = 0, polled = 0, woken = 0;
	unsigned long end;
	struct ib_wc wc;
	int ev, n;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	for (round = 1; round <= SHCA_ARM_ROUNDS; round++) {
		ev = atomic_read(&a->comp_events);
		if (round % 3 == 1) {
			/* Armed on an empty CQ: only the event can wake. */
			shca_arm_store(a, shca_arm_word(round,
							SHCA_CQ_DBREC_ARM_NEXT));
			KUNIT_ASSERT_EQ(test, 0, ib_poll_cq(a->cq, 1, &wc));
		}
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_rdma_write(a, round, b->rkey, b->addr,
						     SHCA_ARM_MSG));
		if (round % 3 == 2)
			shca_test_wait_cqes(test, a->cq, 1);
		else if (round % 3 == 0)
			udelay(get_random_u32_below(40));
		if (round % 3 != 1) {
			ev = atomic_read(&a->comp_events);
			shca_arm_store(a, shca_arm_word(round,
							SHCA_CQ_DBREC_ARM_NEXT));
		}
		n = round % 3 == 1 ? 0 : ib_poll_cq(a->cq, 1, &wc);
		if (n == 1) {
			polled++;
		} else {
			end = jiffies + SHCA_ARM_WAIT;
			while (atomic_read(&a->comp_events) == ev &&
			       !time_after(jiffies, end))
				usleep_range(20, 100);
			if (atomic_read(&a->comp_events) == ev)
				lost++;
			else
				woken++;
			shca_test_wait_cqes(test, a->cq, 1);
			n = ib_poll_cq(a->cq, 1, &wc);
		}
		KUNIT_ASSERT_EQ(test, 1, n);
		KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS, wc.status);
		KUNIT_ASSERT_EQ(test, (u64)round, wc.wr_id);
	}
	kunit_info(test, "%u rounds: %u polled after the arm, %u woken by the event, %u lost\n",
		   SHCA_ARM_ROUNDS, polled, woken, lost);
	KUNIT_EXPECT_EQ(test, 0U, lost);
	KUNIT_EXPECT_EQ(test, (u32)SHCA_ARM_ROUNDS, polled + woken);
	/* Each path at least in the rounds that take it on purpose. */
	KUNIT_EXPECT_GE(test, polled, (u32)SHCA_ARM_ROUNDS / 3);
	KUNIT_EXPECT_GE(test, woken, (u32)SHCA_ARM_ROUNDS / 3);
}

static struct kunit_case shca_cq_arm_cases[] = {
	KUNIT_CASE_PARAM(shca_test_cq_arm_words, shca_arm_gen_params),
	KUNIT_CASE(shca_test_cq_arm_into_window),
	KUNIT_CASE(shca_test_cq_arm_race),
	{}
};

static struct kunit_suite shca_cq_arm_suite = {
	.name = "shca_cq_arm",
	.test_cases = shca_cq_arm_cases,
};

kunit_test_suite(shca_cq_arm_suite);
