// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: teardown races, with the windows held open (shca_teardown_race).
 *
 * The first cases stop a destroy or reset in a race window and do the
 * racing thing while it is stopped, so the race happens every run: the
 * neighbour's traffic and polling between the fence and the sweep, the
 * sweep beside a CQE the device has written but not published.  The
 * stress cases then run neighbours' traffic on a shared CQ from several
 * threads while victims are destroyed or reset in a loop, the windows
 * widened by random delays, and check every completion polled.
 *
 * Each case also proves that it raced: it reads the windows' pass
 * counters, and the stress cases hold some victims in the fence window
 * until the consumer has polled neighbour completions meanwhile, and
 * check that every destroyed victim's QPN was reissued at once.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/prandom.h>

#include "shca.h"
#include "shca_test.h"
#include "shca_teardown_test.h"

#define SHCA_RACE_HOLD_WAIT	(5 * HZ)

/* Destroy or reset a QP on a thread of its own, maybe held in @win. */
struct shca_race_async {
	struct ib_qp *qp;
	struct shca_hw_window *win;
	bool reset;
	int ret;
	struct completion done;
};

static int shca_race_teardown(struct ib_qp *qp, bool reset)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	if (reset)
		return ib_modify_qp(qp, &attr, IB_QP_STATE);
	return ib_destroy_qp(qp);
}

static int shca_race_async_fn(void *arg)
{
	struct shca_race_async *a = arg;

	a->ret = shca_race_teardown(a->qp, a->reset);
	/* All: the test and its cleanup both wait for it. */
	complete_all(&a->done);
	return 0;
}

/* On the way out, even after a failed assertion: let it finish. */
static void shca_race_async_wait(void *arg)
{
	struct shca_race_async *a = arg;

	shca_hw_window_release(a->win);
	wait_for_completion(&a->done);
}

static struct shca_race_async *shca_race_async(struct kunit *test,
					       struct ib_qp *qp, bool reset,
					       struct shca_hw_window *win)
{
	struct shca_race_async *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, a);
	a->qp = qp;
	a->win = win;
	a->reset = reset;
	init_completion(&a->done);
	t = kthread_run(shca_race_async_fn, a, "shca_race_async");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_race_async_wait,
							   a));
	return a;
}

struct shca_race_param {
	enum ib_qp_type type;
	bool reset;
	bool split;
};

static const struct shca_race_param shca_race_params[] = {
	{ IB_QPT_RC, false, false }, { IB_QPT_RC, true, false },
	{ IB_QPT_UD, false, false }, { IB_QPT_UD, true, false },
	{ IB_QPT_RC, false, true }, { IB_QPT_RC, true, true },
};

static void shca_race_param_desc(const struct shca_race_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s_%s",
		 p->type == IB_QPT_RC ? "rc" : "ud",
		 p->reset ? "reset" : "destroy",
		 p->split ? "split_cqs" : "shared_cq");
}

KUNIT_ARRAY_PARAM(shca_race, shca_race_params, shca_race_param_desc);

/*
 * Hold the victim between its fence and its sweep.  Meanwhile the
 * neighbour's traffic goes on and the consumer polls; when the sweep runs
 * it removes the victim's CQEs and nothing else.
 */
static void shca_test_sweep_in_fence_window_takes_only_the_victim(struct kunit *test)
{
	const struct shca_race_param *p = test->param_value;
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct shca_hw_window *win;
	struct shca_race_async *a;
	struct ib_cq *scq, *rcq;
	struct ib_device *dev;
	struct ib_wc wc[2];
	u64 swept, passes;

	dev = shca_teardown_bench(test, p->type, p->split, NULL, v, n, &scq, &rcq);
	shca_teardown_msgs(test, n, SHCA_TEARDOWN_N, 0, 3, NULL, 0);
	shca_teardown_wait(test, scq, rcq, 3);
	shca_teardown_msgs(test, v, SHCA_TEARDOWN_V, 0, 3, NULL, 0);
	shca_teardown_wait(test, scq, rcq, 6);
	swept = shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT);

	win = shca_test_window_arm(test, dev, SHCA_WIN_FENCE_SWEEP, v->qp->qp_num);
	passes = shca_hw_window_passes(win);
	a = shca_race_async(test, v->qp, p->reset, win);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win,
							 SHCA_RACE_HOLD_WAIT));
	/* Held by the victim's one pass, with its six CQEs still in. */
	KUNIT_EXPECT_EQ(test, passes + 1, (u64)shca_hw_window_passes(win));

	/* In the window: the victim is fenced, its CQEs still there. */
	shca_teardown_msgs(test, n, SHCA_TEARDOWN_N, 3, 3, NULL, 0);
	shca_teardown_wait(test, scq, rcq, 9);
	/* The consumer polls the neighbour's first message meanwhile. */
	if (scq == rcq) {
		KUNIT_ASSERT_EQ(test, 2, ib_poll_cq(scq, 2, wc));
	} else {
		KUNIT_ASSERT_EQ(test, 1, ib_poll_cq(scq, 1, &wc[0]));
		KUNIT_ASSERT_EQ(test, 1, ib_poll_cq(rcq, 1, &wc[1]));
	}
	shca_teardown_expect_stream(test, wc, 2, SHCA_TEARDOWN_N, false, 0, 1);
	shca_teardown_expect_stream(test, wc, 2, SHCA_TEARDOWN_N, true, 0, 1);
	KUNIT_EXPECT_FALSE(test, completion_done(&a->done));
	KUNIT_EXPECT_EQ(test, swept,
			shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT));

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&a->done,
							    SHCA_RACE_HOLD_WAIT));
	KUNIT_ASSERT_EQ(test, 0, a->ret);
	if (!p->reset)
		v->qp = NULL;
	KUNIT_EXPECT_EQ(test, swept + 6,
			shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT));
	shca_teardown_expect_neighbour(test, scq, rcq, 1, 5);
	KUNIT_EXPECT_EQ(test, passes + 1, (u64)shca_hw_window_passes(win));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

static const bool shca_race_reset_params[] = { false, true };

static void shca_race_reset_desc(const bool *reset, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *reset ? "reset" : "destroy");
}

KUNIT_ARRAY_PARAM(shca_race_reset, shca_race_reset_params, shca_race_reset_desc);

/*
 * Hold the neighbour's next CQE written but unpublished, and sweep the
 * victim beside it: the sweep stops at the unpublished entry, and the
 * entry, once published, is intact and in order.
 */
static void shca_test_sweep_stops_at_an_unpublished_cqe(struct kunit *test)
{
	const bool *reset = test->param_value;
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct shca_hw_window *win;
	struct ib_cq *cq, *rcq;
	struct ib_device *dev;
	struct ib_wc *wc;
	u64 swept, passes;
	u32 i;

	dev = shca_teardown_bench(test, IB_QPT_RC, false, NULL, v, n, &cq, &rcq);
	/* The neighbour's first CQEs sit below the victim's: they move. */
	shca_teardown_msgs(test, n, SHCA_TEARDOWN_N, 0, 1, cq, 2);
	shca_teardown_msgs(test, v, SHCA_TEARDOWN_V, 0, 3, cq, 8);
	swept = shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT);

	win = shca_test_window_arm(test, dev, SHCA_WIN_CQE_PUBLISH, n->qp->qp_num);
	passes = shca_hw_window_passes(win);
	shca_teardown_msgs(test, n, SHCA_TEARDOWN_N, 1, 1, NULL, 0);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win,
							 SHCA_RACE_HOLD_WAIT));
	/* Held by the first of the message's two CQEs. */
	KUNIT_EXPECT_EQ(test, passes + 1, (u64)shca_hw_window_passes(win));

	/* The sweep runs while the neighbour's receive CQE is half out. */
	KUNIT_ASSERT_EQ(test, 0, shca_race_teardown(v->qp, *reset));
	if (!*reset)
		v->qp = NULL;
	KUNIT_EXPECT_EQ(test, SHCA_HW_WIN_HELD, shca_hw_window_state(win));
	KUNIT_EXPECT_EQ(test, swept + 6,
			shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT));

	shca_hw_window_release(win);
	shca_test_wait_cqes(test, cq, 4);
	wc = shca_teardown_poll_all(test, cq, 4);
	shca_teardown_expect_stream(test, wc, 4, SHCA_TEARDOWN_N, false, 0, 2);
	shca_teardown_expect_stream(test, wc, 4, SHCA_TEARDOWN_N, true, 0, 2);
	for (i = 0; i < 4; i++)
		if (wc[i].opcode & IB_WC_RECV)
			KUNIT_EXPECT_EQ(test, 8, wc[i].byte_len);
	/* Then its send CQE went through the window too, not held. */
	KUNIT_EXPECT_EQ(test, passes + 2, (u64)shca_hw_window_passes(win));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

static u32 shca_race_sq_ci(struct kunit *test, struct shca_tq *tq)
{
	struct shca_hw_qp_query q;

	KUNIT_EXPECT_EQ(test, 0, shca_cmd_query_qp(to_shca_dev(tq->dev),
						   tq->qp->qp_num, &q));
	return q.sq_ci;
}

/* A paused engine executes nothing; each single step, one WQE. */
static void shca_test_paused_engine_runs_one_wqe_per_step(struct kunit *test)
{
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct ib_cq *cq, *rcq;
	struct ib_device *dev;
	struct shca_hw *hw;
	struct ib_wc *wc;
	u32 i;

	dev = shca_teardown_bench(test, IB_QPT_RC, false, NULL, v, n, &cq, &rcq);
	hw = to_shca_dev(dev)->hw;
	shca_teardown_pause(test, dev);
	shca_teardown_msgs(test, n, SHCA_TEARDOWN_N, 0, 3, NULL, 0);
	KUNIT_EXPECT_EQ(test, 0, shca_race_sq_ci(test, n));
	for (i = 1; i <= 2; i++) {
		shca_hw_engine_single_step(hw, 1);
		shca_test_wait_cqes(test, cq, 2 * i);
		KUNIT_EXPECT_EQ(test, 0, shca_hw_engine_steps_left(hw));
		KUNIT_EXPECT_EQ(test, i, shca_race_sq_ci(test, n));
	}
	shca_hw_engine_pause(hw, false);
	shca_test_wait_cqes(test, cq, 6);
	wc = shca_teardown_poll_all(test, cq, 6);
	shca_teardown_expect_stream(test, wc, 6, SHCA_TEARDOWN_N, false, 0, 3);
	shca_teardown_expect_stream(test, wc, 6, SHCA_TEARDOWN_N, true, 0, 3);
}

/* The stress cases. */
#define SHCA_STRESS_NEIGHBOURS	3
#define SHCA_STRESS_INFLIGHT	6
#define SHCA_STRESS_VICTIM_MSGS	4
#define SHCA_STRESS_MAX_EPOCHS	2048
#define SHCA_STRESS_MIN_EPOCHS	40
#define SHCA_STRESS_SECONDS		4
#define SHCA_STRESS_TAG_N0		10
/* Every so many epochs the victim is held in the fence window ... */
#define SHCA_STRESS_HOLD_EVERY	4
/* ... until the consumer has polled this many neighbour completions. */
#define SHCA_STRESS_HOLD_POLLS	6

/* Whether @epoch's victim is held in the fence window (not when paused). */
static bool shca_stress_held_epoch(u32 epoch)
{
	return epoch % SHCA_STRESS_HOLD_EVERY == 2 && epoch % 5 != 0;
}

struct shca_stress;

/**
 * struct shca_stress_producer - one neighbour's producer thread
 * @st: the stress test
 * @i: which neighbour
 */
struct shca_stress_producer {
	struct shca_stress *st;
	int i;
};

/**
 * struct shca_stress - a shared CQ under fire
 * @test: the test
 * @dev: the device
 * @cq: the CQ every QP shares
 * @reset: victims are reset and reused, not destroyed and recreated
 * @n: the neighbours, each connected to itself
 * @prod: their producers' arguments
 * @v: the victim end; its QP changes every epoch when destroying
 * @victim_qp: the victim QP of each epoch, compared, never dereferenced
 * @posted: messages each neighbour's producer has posted
 * @received: receive completions of each neighbour polled
 * @next_send: the send sequence number due next, per neighbour
 * @done_epoch: the last epoch whose destroy or reset has returned
 * @seen: which victim completions were polled, by epoch, kind and sequence
 * @epochs: victims torn down
 * @reissued: victims whose QP got the previous victim's QPN back at once
 *	(destroy), or kept it (reset)
 * @hold_epoch: the epoch whose victim is armed or held in the fence window
 * @held: epochs whose victim was armed to be held in the fence window
 * @raced: held victims the consumer polled neighbour completions beside,
 *	and released before their teardown returned
 * @hold_polled: @polled when the consumer found the current victim held
 * @polled: neighbour completions polled
 * @victim_polled: victim completions polled (before their teardown returned)
 * @victims_done: the victim thread has finished
 * @stop: every thread stops
 * @wait: producers wait here for room
 * @threads_done: counts down as threads finish
 * @failed: the first failure a thread saw, or empty
 */
struct shca_stress {
	struct kunit *test;
	struct ib_device *dev;
	struct ib_cq *cq;
	bool reset;
	struct shca_tq *n[SHCA_STRESS_NEIGHBOURS];
	struct shca_stress_producer prod[SHCA_STRESS_NEIGHBOURS];
	struct shca_tq *v;
	struct ib_qp *victim_qp[SHCA_STRESS_MAX_EPOCHS];
	atomic_t posted[SHCA_STRESS_NEIGHBOURS];
	atomic_t received[SHCA_STRESS_NEIGHBOURS];
	u32 next_send[SHCA_STRESS_NEIGHBOURS];
	atomic_t done_epoch;
	DECLARE_BITMAP(seen, SHCA_STRESS_MAX_EPOCHS * 2 * SHCA_STRESS_VICTIM_MSGS);
	u32 epochs;
	u32 reissued;
	u32 hold_epoch;
	u32 held;
	u32 raced;
	u64 hold_polled;
	u64 polled;
	u64 victim_polled;
	bool victims_done;
	bool stop;
	wait_queue_head_t wait;
	atomic_t threads_done;
	char failed[160];
};

static DEFINE_SPINLOCK(shca_stress_fail_lock);

static __printf(2, 3) void shca_stress_fail(struct shca_stress *st,
					    const char *fmt, ...)
{
	unsigned long flags;
	va_list args;

	spin_lock_irqsave(&shca_stress_fail_lock, flags);
	if (!st->failed[0]) {
		va_start(args, fmt);
		vsnprintf(st->failed, sizeof(st->failed), fmt, args);
		va_end(args);
	}
	spin_unlock_irqrestore(&shca_stress_fail_lock, flags);
	WRITE_ONCE(st->stop, true);
	wake_up_all(&st->wait);
}

/* A neighbour's producer: keeps SHCA_STRESS_INFLIGHT messages in flight. */
static int shca_stress_produce(void *arg)
{
	struct shca_stress_producer *p = arg;
	struct shca_stress *st = p->st;
	struct shca_tq *tq = st->n[p->i];
	int i = p->i, err;
	u32 seq;

	while (!READ_ONCE(st->stop)) {
		wait_event_timeout(st->wait, READ_ONCE(st->stop) ||
				   atomic_read(&st->posted[i]) -
				   atomic_read(&st->received[i]) <
				   SHCA_STRESS_INFLIGHT, HZ / 10);
		if (READ_ONCE(st->stop))
			break;
		seq = atomic_read(&st->posted[i]);
		if (seq - atomic_read(&st->received[i]) >= SHCA_STRESS_INFLIGHT)
			continue;
		err = shca_teardown_msg(tq, SHCA_TEARDOWN_ID(SHCA_STRESS_TAG_N0 + i, 0, seq));
		if (err) {
			shca_stress_fail(st, "neighbour %d: post failed: %d", i,
					 err);
			break;
		}
		atomic_inc(&st->posted[i]);
	}
	atomic_inc(&st->threads_done);
	wake_up_all(&st->wait);
	return 0;
}

static int shca_stress_new_victim(struct shca_stress *st, u32 reuse_qpn)
{
	struct shca_tq *v = st->v;
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = st->cq,
		.recv_cq = st->cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.port_num = 1,
	};
	struct ib_qp *qp;
	int err;

	/* Have the device reissue the last victim's QPN at once. */
	if (reuse_qpn) {
		err = shca_hw_set_next_qpn(to_shca_dev(st->dev)->hw,
					   reuse_qpn);
		if (err)
			return err;
	}
	qp = ib_create_qp(v->pd, &init);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	v->qp = qp;
	if (!reuse_qpn)
		return 0;
	if (qp->qp_num != reuse_qpn) {
		shca_stress_fail(st, "QPN %u not reissued: the new victim got %u",
				 reuse_qpn, qp->qp_num);
		return -EBADSLT;
	}
	st->reissued++;
	return 0;
}

/* The victims: one epoch after another, each torn down mid-traffic. */
static int shca_stress_victims(void *arg)
{
	struct shca_stress *st = arg;
	struct shca_hw *hw = to_shca_dev(st->dev)->hw;
	struct shca_hw_window *fence, *publish;
	unsigned long end = jiffies + SHCA_STRESS_SECONDS * HZ;
	struct rnd_state rnd;
	u32 epoch, seq, qpn = 0;
	bool paused;
	int err = 0;

	fence = shca_hw_window(hw, SHCA_WIN_FENCE_SWEEP);
	publish = shca_hw_window(hw, SHCA_WIN_CQE_PUBLISH);
	prandom_seed_state(&rnd, 0xdead5eed);
	for (epoch = 1; epoch < SHCA_STRESS_MAX_EPOCHS && !READ_ONCE(st->stop) &&
	     (time_before(jiffies, end) || epoch <= SHCA_STRESS_MIN_EPOCHS);
	     epoch++) {
		if (!st->v->qp) {
			err = shca_stress_new_victim(st, qpn);
			if (err)
				break;
		}
		err = shca_test_to_rts(st->v, st->v);
		if (err)
			break;
		if (st->reset && qpn) {
			/* Reset and reused: the same QP, the same number. */
			if (st->v->qp->qp_num != qpn) {
				shca_stress_fail(st, "reset victim %u came back as %u",
						 qpn, st->v->qp->qp_num);
				err = -EBADSLT;
				break;
			}
			st->reissued++;
		}
		qpn = st->v->qp->qp_num;
		st->victim_qp[epoch] = st->v->qp;

		/* Widen the windows, differently each epoch. */
		shca_hw_window_set_delay(fence, prandom_u32_state(&rnd) % 400);
		shca_hw_window_set_delay(publish, epoch % 3 ? 0 : 20);
		paused = epoch % 5 == 0;
		if (paused)
			shca_hw_engine_pause(hw, true);
		for (seq = 0; seq < SHCA_STRESS_VICTIM_MSGS && !err; seq++)
			err = shca_teardown_msg(st->v, SHCA_TEARDOWN_ID(SHCA_TEARDOWN_V, epoch,
									seq));
		if (!err && prandom_u32_state(&rnd) % 2)
			usleep_range(10, 200);
		if (!err && shca_stress_held_epoch(epoch)) {
			/* The consumer releases it; see shca_stress_hold(). */
			WRITE_ONCE(st->hold_epoch, epoch);
			st->held++;
			shca_hw_window_arm(fence);
		}
		if (!err)
			err = shca_race_teardown(st->v->qp, st->reset);
		if (paused)
			shca_hw_engine_pause(hw, false);
		if (err)
			break;
		if (!st->reset)
			st->v->qp = NULL;
		/* Every completion of this epoch polled from now on is a bug. */
		atomic_set_release(&st->done_epoch, epoch);
		st->epochs = epoch;
	}
	if (err)
		shca_stress_fail(st, "victim epoch %u: %d", epoch, err);
	shca_hw_window_set_delay(fence, 0);
	shca_hw_window_set_delay(publish, 0);
	WRITE_ONCE(st->victims_done, true);
	atomic_inc(&st->threads_done);
	wake_up_all(&st->wait);
	return 0;
}

static void shca_stress_check(struct shca_stress *st, const struct ib_wc *wc,
			      u32 done)
{
	u32 tag = SHCA_TEARDOWN_TAG(wc->wr_id), seq = SHCA_TEARDOWN_SEQ(wc->wr_id);
	u32 epoch = SHCA_TEARDOWN_EPOCH(wc->wr_id), i, bit;
	bool recv = wc->opcode & IB_WC_RECV;

	if (tag == SHCA_TEARDOWN_V) {
		st->victim_polled++;
		if (epoch <= done) {
			shca_stress_fail(st,
					 "victim %#llx polled after epoch %u's teardown returned",
					 wc->wr_id, done);
			return;
		}
		if (epoch >= SHCA_STRESS_MAX_EPOCHS || seq >= SHCA_STRESS_VICTIM_MSGS ||
		    wc->qp != st->victim_qp[epoch]) {
			shca_stress_fail(st, "victim %#llx given to the wrong QP",
					 wc->wr_id);
			return;
		}
		bit = (epoch * 2 + recv) * SHCA_STRESS_VICTIM_MSGS + seq;
		if (test_and_set_bit(bit, st->seen))
			shca_stress_fail(st, "victim %#llx polled twice", wc->wr_id);
		return;
	}
	i = tag - SHCA_STRESS_TAG_N0;
	if (i >= SHCA_STRESS_NEIGHBOURS || wc->qp != st->n[i]->qp ||
	    wc->status != IB_WC_SUCCESS) {
		shca_stress_fail(st, "bad completion %#llx status %d", wc->wr_id,
				 wc->status);
		return;
	}
	st->polled++;
	if (recv) {
		if (seq != atomic_read(&st->received[i]))
			shca_stress_fail(st, "neighbour %u: receive %u, not %u",
					 i, seq, atomic_read(&st->received[i]));
		atomic_inc(&st->received[i]);
		wake_up_all(&st->wait);
	} else {
		if (seq != st->next_send[i])
			shca_stress_fail(st, "neighbour %u: send %u, not %u", i,
					 seq, st->next_send[i]);
		st->next_send[i]++;
	}
}

/*
 * The consumer's side of a held epoch: once the victim's teardown is held
 * in the fence window, go on polling until SHCA_STRESS_HOLD_POLLS neighbour
 * completions have come meanwhile, then release it.  The teardown must
 * not have returned before that.
 */
static void shca_stress_hold(struct shca_stress *st, struct shca_hw_window *fence)
{
	u32 epoch = READ_ONCE(st->hold_epoch);

	if (!epoch || shca_hw_window_state(fence) != SHCA_HW_WIN_HELD)
		return;
	if (!st->hold_polled) {
		st->hold_polled = st->polled + 1;
		return;
	}
	if (st->polled + 1 - st->hold_polled < SHCA_STRESS_HOLD_POLLS)
		return;
	if ((u32)atomic_read(&st->done_epoch) >= epoch)
		shca_stress_fail(st, "victim %u's teardown returned while held",
				 epoch);
	else
		st->raced++;
	st->hold_polled = 0;
	WRITE_ONCE(st->hold_epoch, 0);
	shca_hw_window_release(fence);
}

static bool shca_stress_drained(struct shca_stress *st)
{
	int i;

	for (i = 0; i < SHCA_STRESS_NEIGHBOURS; i++)
		if (atomic_read(&st->received[i]) !=
		    atomic_read(&st->posted[i]) ||
		    st->next_send[i] != atomic_read(&st->posted[i]))
			return false;
	return true;
}

static void shca_stress_stop(void *arg)
{
	struct shca_stress *st = arg;

	WRITE_ONCE(st->stop, true);
	wake_up_all(&st->wait);
	/* A victim the consumer left held goes on. */
	shca_hw_window_release(shca_hw_window(to_shca_dev(st->dev)->hw,
					      SHCA_WIN_FENCE_SWEEP));
	wait_event(st->wait, atomic_read(&st->threads_done) ==
		   SHCA_STRESS_NEIGHBOURS + 1);
}

static void shca_test_teardown_stress_keeps_every_neighbour_completion(struct kunit *test)
{
	const bool *reset = test->param_value;
	struct shca_stress *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	struct ib_device *dev, *unused;
	struct shca_hw_window *fence, *publish;
	u64 swept, stray, fence_passes, publish_passes;
	unsigned long drain_end = 0;
	struct task_struct *t;
	struct rnd_state rnd;
	struct ib_wc wc[16];
	u32 done, held, e;
	int i, got;

	KUNIT_ASSERT_NOT_NULL(test, st);
	st->test = test;
	st->reset = *reset;
	init_waitqueue_head(&st->wait);
	shca_test_devices(test, false, &dev, &unused);
	st->dev = dev;
	st->cq = shca_test_cq_new(test, dev, 1024);
	for (i = 0; i < SHCA_STRESS_NEIGHBOURS; i++) {
		st->n[i] = shca_test_tq_new(test);
		shca_test_tq_init_on(test, st->n[i], dev, IB_QPT_RC, NULL,
				     st->cq, st->cq, 16);
		shca_test_connect(test, st->n[i], st->n[i]);
	}
	st->v = shca_test_tq_new(test);
	shca_test_tq_init_on(test, st->v, dev, IB_QPT_RC, NULL, st->cq,
			     st->cq, 8);
	swept = shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT);
	stray = shca_test_drv_counter(dev, SHCA_DRV_CNT_STRAY);
	fence = shca_hw_window(to_shca_dev(dev)->hw, SHCA_WIN_FENCE_SWEEP);
	publish = shca_hw_window(to_shca_dev(dev)->hw, SHCA_WIN_CQE_PUBLISH);
	fence_passes = shca_hw_window_passes(fence);
	publish_passes = shca_hw_window_passes(publish);

	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, shca_stress_stop,
							   st));
	for (i = 0; i < SHCA_STRESS_NEIGHBOURS; i++) {
		st->prod[i].st = st;
		st->prod[i].i = i;
		t = kthread_run(shca_stress_produce, &st->prod[i], "shca_stress_n%d",
				i);
		if (IS_ERR(t))
			atomic_inc(&st->threads_done);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	t = kthread_run(shca_stress_victims, st, "shca_stress_victims");
	if (IS_ERR(t))
		atomic_inc(&st->threads_done);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));

	/* The consumer: now and then slow, so CQEs wait for the sweep. */
	prandom_seed_state(&rnd, 0xc0ffee);
	for (;;) {
		if (!(prandom_u32_state(&rnd) % 8))
			usleep_range(100, 1000);
		shca_stress_hold(st, fence);
		/* Read before polling: what it polls came after this. */
		done = atomic_read_acquire(&st->done_epoch);
		got = ib_poll_cq(st->cq, ARRAY_SIZE(wc), wc);
		KUNIT_ASSERT_GE(test, got, 0);
		for (i = 0; i < got; i++)
			shca_stress_check(st, &wc[i], done);
		if (got)
			continue;
		/* The victims are done: the producers stop, the rest drains. */
		if (READ_ONCE(st->victims_done) && !READ_ONCE(st->stop)) {
			WRITE_ONCE(st->stop, true);
			wake_up_all(&st->wait);
		}
		if (atomic_read(&st->threads_done) == SHCA_STRESS_NEIGHBOURS + 1) {
			if (shca_stress_drained(st))
				break;
			if (!drain_end) {
				drain_end = jiffies + 10 * HZ;
			} else if (time_after(jiffies, drain_end)) {
				shca_stress_fail(st, "neighbour completions lost");
				break;
			}
		}
		usleep_range(20, 100);
	}

	kunit_info(test, "%u victims %s, %u held while %u+ neighbour completions were polled, %u QPNs reissued; %llu neighbour and %llu victim completions polled; %llu CQEs swept",
		   st->epochs, st->reset ? "reset" : "destroyed", st->raced,
		   SHCA_STRESS_HOLD_POLLS, st->reissued, st->polled,
		   st->victim_polled,
		   shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT) - swept);
	KUNIT_EXPECT_STREQ(test, "", st->failed);
	/*
	 * The race, proven rather than hoped for.  Every teardown went
	 * through the fence window once; every CQE through the publish
	 * window.  The epochs that were to be held were, each beside
	 * neighbour completions polled meanwhile, and released by the
	 * consumer, not by the window's timeout.  Every victim after the
	 * first had its predecessor's QPN.
	 */
	for (held = 0, e = 1; e <= st->epochs; e++)
		held += shca_stress_held_epoch(e);
	KUNIT_EXPECT_GT(test, held, 0U);
	KUNIT_EXPECT_EQ(test, held, st->held);
	KUNIT_EXPECT_EQ(test, held, st->raced);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(fence));
	KUNIT_EXPECT_EQ(test, fence_passes + st->epochs,
			(u64)shca_hw_window_passes(fence));
	KUNIT_EXPECT_GE(test,
			(u64)shca_hw_window_passes(publish) - publish_passes,
			st->polled + st->victim_polled);
	KUNIT_EXPECT_EQ(test, st->epochs - 1, st->reissued);
	KUNIT_EXPECT_GT(test, shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT),
			swept);
	KUNIT_EXPECT_EQ(test, stray,
			shca_test_drv_counter(dev, SHCA_DRV_CNT_STRAY));
}

static struct kunit_case shca_teardown_race_cases[] = {
	KUNIT_CASE_PARAM(shca_test_sweep_in_fence_window_takes_only_the_victim,
			 shca_race_gen_params),
	KUNIT_CASE_PARAM(shca_test_sweep_stops_at_an_unpublished_cqe,
			 shca_race_reset_gen_params),
	KUNIT_CASE(shca_test_paused_engine_runs_one_wqe_per_step),
	KUNIT_CASE_PARAM_ATTR(shca_test_teardown_stress_keeps_every_neighbour_completion,
			      shca_race_reset_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite shca_teardown_race_suite = {
	.name = "shca_teardown_race",
	.test_cases = shca_teardown_race_cases,
};

kunit_test_suites(&shca_teardown_race_suite);
