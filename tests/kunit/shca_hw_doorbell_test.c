// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: a process's send doorbell on an idle QP, and the backstop of lazy
 * doorbells, at model level.
 *
 * The backstop cases play a lazy driver against the model: they store a
 * WQE's producer index, issue a full barrier and read the doorbell
 * record's backstop word, and ring only when it is clear.  The held cases
 * stop the backstop's sweep in each of its two windows (backstop_idle:
 * the word still set; backstop_recheck: cleared, the index not yet read
 * again) and post into it: the WQE is left unrung or rung, as the window
 * says, and it runs exactly once, never stranded.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

/**
 * struct shca_doorbell_run_case - a process's send doorbell on an idle QP
 * @name: the case's name
 * @bytes: the payload of the one WQE posted
 * @paused: the device is paused, with one single step to give
 * @in_caller: the doorbell's caller executes the WQE before it returns
 */
struct shca_doorbell_run_case {
	const char *name;
	u32 bytes;
	bool paused;
	bool in_caller;
};

static const struct shca_doorbell_run_case shca_doorbell_run_cases[] = {
	{ "small", 64, false, true },
	{ "small_paused", 64, true, true },
	{ "large", 65536, false, false },
	{ "large_paused", 65536, true, false },
};

static void shca_doorbell_run_desc(const struct shca_doorbell_run_case *c,
				   char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_doorbell_run, shca_doorbell_run_cases,
		  shca_doorbell_run_desc);

/*
 * A process's send doorbell on a QP whose turn is neither running nor
 * queued runs the turn in the caller: a small WQE's CQE is on the ring
 * before the doorbell returns, and a paused device's single step is spent
 * on it.  A WQE with more payload than the caller may move goes to an
 * execution unit, and on a paused device it gets there with the single
 * step still unspent, or it would never run.  The WQE is a send whose
 * local key names no MR: it completes at once, in error, with no peer.
 */
static void shca_test_doorbell_runs_small_wqes_in_the_caller(struct kunit *test)
{
	const struct shca_doorbell_run_case *c = test->param_value;
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_test_hw_qp t;
	struct shca_hw_cmd cmd;
	u64 runs, prev;
	int i;

	if (c->paused)
		shca_hw_engine_pause(hw, true);
	shca_test_hw_qp_new(test, hw, false, &t);
	shca_test_hw_qp_rts(test, hw, t.qpn);
	if (c->paused)
		shca_hw_engine_single_step(hw, 1);

	/*
	 * The commands and the single step queued turns of the QP's.  Ring
	 * the empty queue until its caller runs the turn, which it does once
	 * none is queued; with no WQE to take, that turn spends no step.
	 */
	prev = shca_test_hw_counter(test, hw, SHCA_CNT_DOORBELL_RUNS);
	runs = prev;
	for (i = 0; i < 5000; i++) {
		shca_hw_ring_sq_run(hw, t.qpn);
		runs = shca_test_hw_counter(test, hw, SHCA_CNT_DOORBELL_RUNS);
		if (runs != prev)
			break;
		usleep_range(1000, 2000);
	}
	KUNIT_ASSERT_EQ_MSG(test, prev + 1, runs, "the engine never idled");
	KUNIT_ASSERT_EQ(test, c->paused ? 1U : 0U,
			shca_hw_engine_steps_left(hw));

	t.sq[0] = (struct shca_hw_send_wqe){
		.opcode = SHCA_WQE_SEND,
		.flags = SHCA_WQE_F_SIGNALED,
		.num_sge = 1,
		.sge[0] = { .addr = 0x10000, .length = c->bytes,
			    .lkey = 0x12345 },
	};
	/* The WQE is written before the index that names it. */
	smp_store_release(&t.db->sq_pi, 1);
	shca_hw_ring_sq_run(hw, t.qpn);
	KUNIT_EXPECT_EQ(test, runs + 1,
			shca_test_hw_counter(test, hw, SHCA_CNT_DOORBELL_RUNS));
	if (c->in_caller)
		KUNIT_EXPECT_EQ_MSG(test, 1, READ_ONCE(t.ring[0].owner),
				    "the doorbell's caller did not run the WQE");

	/* Otherwise an execution unit's turn: wait for the owner byte. */
	for (i = 0; i < 5000 && !smp_load_acquire(&t.ring[0].owner); i++)
		usleep_range(1000, 2000);
	KUNIT_ASSERT_EQ_MSG(test, 1, t.ring[0].owner, "the WQE never ran");
	KUNIT_EXPECT_EQ(test, t.qpn, t.ring[0].qpn);
	KUNIT_EXPECT_EQ(test, SHCA_CQE_LOC_PROT_ERR, t.ring[0].status);
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_engine_steps_left(hw));

	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_QP,
				    .index = t.qpn };
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_CQ,
				    .index = t.cqn };
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
}

/* Wait until the backstop's sweep cleared a QP's word. */
static bool shca_test_backstop_swept(struct shca_test_hw_qp *t)
{
	int i;

	for (i = 0; i < 5000 && READ_ONCE(t->db->backstop); i++)
		usleep_range(1000, 2000);
	return !READ_ONCE(t->db->backstop);
}

/**
 * struct shca_backstop_arm_case - what one send doorbell arms
 * @name: the case's name
 * @lazy: the doorbell record says the driver is lazy
 * @period_us: the backstop's period; 0 turns it off
 * @arms: whether the doorbell arms the backstop
 */
struct shca_backstop_arm_case {
	const char *name;
	bool lazy;
	u32 period_us;
	bool arms;
};

static const struct shca_backstop_arm_case shca_backstop_arm_cases[] = {
	{ "lazy", true, 100, true },
	{ "lazy_short_period", true, 1, true },
	{ "not_lazy", false, 100, false },
	{ "backstop_off", true, 0, false },
};

static void shca_backstop_arm_desc(const struct shca_backstop_arm_case *c,
				   char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_backstop_arm, shca_backstop_arm_cases,
		  shca_backstop_arm_desc);

/*
 * A send doorbell arms the backstop only for a QP whose record says lazy,
 * and only while the backstop has a period; the sweep then clears the
 * word again, and with no WQE left unrung it queues no turn.
 */
static void shca_test_backstop_arms_only_lazy_qps(struct kunit *test)
{
	const struct shca_backstop_arm_case *c = test->param_value;
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_test_hw_qp t;
	u64 arms, kicks;

	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_backstop_us(hw, c->period_us));
	shca_test_hw_qp_new(test, hw, true, &t);
	shca_test_hw_qp_rts(test, hw, t.qpn);
	WRITE_ONCE(t.db->lazy, c->lazy);
	arms = shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_ARMS);
	kicks = shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_KICKS);
	shca_hw_ring_sq_run(hw, t.qpn);
	KUNIT_EXPECT_EQ(test, arms + c->arms,
			shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_ARMS));
	if (!c->arms) {
		KUNIT_EXPECT_EQ(test, 0U, READ_ONCE(t.db->backstop));
		return;
	}
	KUNIT_EXPECT_TRUE_MSG(test, shca_test_backstop_swept(&t),
			      "the backstop never swept the QP");
	shca_hw_engine_flush(hw);
	KUNIT_EXPECT_EQ(test, kicks,
			shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_KICKS));
}

/**
 * struct shca_backstop_hold_case - a lazy post into the backstop's sweep
 * @name: the case's name
 * @window: where the sweep is held
 * @deferred: the post finds the word set and leaves the doorbell
 */
struct shca_backstop_hold_case {
	const char *name;
	enum shca_hw_window_id window;
	bool deferred;
};

static const struct shca_backstop_hold_case shca_backstop_hold_cases[] = {
	/* The sweep takes the WQE on itself: nobody rang for it. */
	{ "idle", SHCA_WIN_BACKSTOP_IDLE, true },
	/* The post rang, and ran the WQE; the sweep finds nothing. */
	{ "recheck", SHCA_WIN_BACKSTOP_RECHECK, false },
};

static void shca_backstop_hold_desc(const struct shca_backstop_hold_case *c,
				    char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_backstop_hold, shca_backstop_hold_cases,
		  shca_backstop_hold_desc);

/*
 * A lazy driver posts while the backstop's sweep is held in the case's
 * window.  In backstop_idle the word is still set: the post leaves the
 * doorbell, nothing runs the WQE while the sweep is held, and once it is
 * released the sweep finds the WQE and queues the QP's turn.  In
 * backstop_recheck the word is clear: the post rings and runs the WQE,
 * and the released sweep finds nothing left.  Either way the WQE has
 * exactly one CQE.
 */
static void shca_test_backstop_post_into_sweep(struct kunit *test)
{
	const struct shca_backstop_hold_case *c = test->param_value;
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_window *win = shca_hw_window(hw, c->window);
	struct shca_test_hw_qp t;
	u64 kicks, doorbells;
	u32 backstop;

	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_window_reset,
							   win));
	shca_test_hw_qp_new(test, hw, true, &t);
	shca_test_hw_qp_rts(test, hw, t.qpn);
	WRITE_ONCE(t.db->lazy, 1);
	shca_hw_window_set_qpn(win, t.qpn);
	shca_hw_window_arm(win);
	/* The doorbell arms the backstop; its sweep stops in the window. */
	shca_hw_ring_sq_run(hw, t.qpn);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, 5 * HZ));

	kicks = shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_KICKS);
	doorbells = shca_test_hw_counter(test, hw, SHCA_CNT_DOORBELLS);
	shca_test_hw_post_bad_send(&t, 0);
	/* Pairs with the sweep's barrier between the word and sq_pi. */
	smp_mb();
	backstop = READ_ONCE(t.db->backstop);
	KUNIT_EXPECT_EQ(test, c->deferred, !!backstop);
	if (!backstop) {
		shca_hw_ring_sq_run(hw, t.qpn);
		KUNIT_EXPECT_TRUE(test, shca_test_hw_cqe_written(&t, 0));
	} else {
		/* Held: nothing ran it. */
		KUNIT_EXPECT_EQ(test, 0, READ_ONCE(t.ring[0].owner));
	}

	shca_hw_window_release(win);
	KUNIT_EXPECT_TRUE_MSG(test, shca_test_hw_cqe_written(&t, 0),
			      "the WQE was stranded");
	/* The sweep, and any turn it queued, are done. */
	shca_hw_engine_flush(hw);
	shca_hw_engine_flush(hw);
	KUNIT_EXPECT_EQ(test, t.qpn, t.ring[0].qpn);
	KUNIT_EXPECT_EQ(test, SHCA_CQE_LOC_PROT_ERR, t.ring[0].status);
	KUNIT_EXPECT_EQ(test, 0, READ_ONCE(t.ring[1].owner));
	KUNIT_EXPECT_EQ(test, kicks + c->deferred,
			shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_KICKS));
	KUNIT_EXPECT_EQ(test, doorbells + !c->deferred,
			shca_test_hw_counter(test, hw, SHCA_CNT_DOORBELLS));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
	/*
	 * The post's doorbell armed the backstop again: its sweep reads the
	 * record, which the test frees before the model goes.
	 */
	KUNIT_EXPECT_TRUE(test, shca_test_backstop_swept(&t));
	shca_hw_engine_flush(hw);
}

/*
 * A lazy QP destroyed while its backstop is armed leaves the armed list.
 * A sweep is held on another QP meanwhile, so the destroyed QP is still
 * armed, with a WQE nobody rang for, when it goes: the list is empty
 * after the destroy, and the sweep that comes next serves only the live
 * QP, queueing no turn for the WQE of the one destroyed.
 */
static void shca_test_backstop_forgets_destroyed_qp(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_window *win = shca_hw_window(hw, SHCA_WIN_BACKSTOP_IDLE);
	struct shca_test_hw_qp gone, live, held;
	struct shca_hw_cmd cmd;
	u64 kicks;

	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_window_reset,
							   win));
	shca_test_hw_qp_new(test, hw, true, &gone);
	shca_test_hw_qp_new(test, hw, true, &live);
	shca_test_hw_qp_new(test, hw, true, &held);
	shca_test_hw_qp_rts(test, hw, gone.qpn);
	shca_test_hw_qp_rts(test, hw, live.qpn);
	shca_test_hw_qp_rts(test, hw, held.qpn);
	WRITE_ONCE(gone.db->lazy, 1);
	WRITE_ONCE(live.db->lazy, 1);
	WRITE_ONCE(held.db->lazy, 1);
	shca_hw_window_set_qpn(win, held.qpn);
	shca_hw_window_arm(win);
	shca_hw_ring_sq_run(hw, held.qpn);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, 5 * HZ));
	/* The held sweep took its QP off the list. */
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_backstop_armed(hw));

	/* Armed behind the held sweep, with a WQE nobody rang for. */
	shca_hw_ring_sq_run(hw, gone.qpn);
	KUNIT_EXPECT_EQ(test, 1U, READ_ONCE(gone.db->backstop));
	KUNIT_EXPECT_EQ(test, 1U, shca_hw_backstop_armed(hw));
	shca_test_hw_post_bad_send(&gone, 0);
	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_QP,
				    .index = gone.qpn };
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_backstop_armed(hw));

	kicks = shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_KICKS);
	shca_hw_ring_sq_run(hw, live.qpn);
	KUNIT_EXPECT_EQ(test, 1U, shca_hw_backstop_armed(hw));
	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE_MSG(test, shca_test_backstop_swept(&live),
			      "the backstop never swept the live QP");
	KUNIT_EXPECT_TRUE(test, shca_test_backstop_swept(&held));
	shca_hw_engine_flush(hw);
	KUNIT_EXPECT_EQ(test, kicks,
			shca_test_hw_counter(test, hw, SHCA_CNT_BACKSTOP_KICKS));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_backstop_armed(hw));
}

static struct kunit_case shca_hw_doorbell_cases[] = {
	KUNIT_CASE_PARAM(shca_test_doorbell_runs_small_wqes_in_the_caller,
			 shca_doorbell_run_gen_params),
	KUNIT_CASE_PARAM(shca_test_backstop_arms_only_lazy_qps,
			 shca_backstop_arm_gen_params),
	KUNIT_CASE_PARAM(shca_test_backstop_post_into_sweep,
			 shca_backstop_hold_gen_params),
	KUNIT_CASE(shca_test_backstop_forgets_destroyed_qp),
	{}
};

static struct kunit_suite shca_hw_doorbell_suite = {
	.name = "shca_hw_doorbell",
	.test_cases = shca_hw_doorbell_cases,
};

kunit_test_suite(shca_hw_doorbell_suite);
