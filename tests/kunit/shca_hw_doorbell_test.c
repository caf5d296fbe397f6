// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: a process's send doorbell on an idle QP, at model level.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

/* One of the model's counters, read with a command. */
static u64 shca_test_hw_counter(struct kunit *test, struct shca_hw *hw,
				enum shca_hw_counter counter)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_COUNTERS };

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	return cmd.out.counters[counter];
}

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
	u32 state;
	int i;

	if (c->paused)
		shca_hw_engine_pause(hw, true);
	shca_test_hw_qp_new(test, hw, false, &t);
	for (state = SHCA_QPS_INIT; state <= SHCA_QPS_RTS; state++) {
		cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_MODIFY_QP,
					    .index = t.qpn,
					    .mask = SHCA_QP_ATTR_STATE,
					    .in.qp_attr.state = state };
		KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	}
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

static struct kunit_case shca_hw_doorbell_cases[] = {
	KUNIT_CASE_PARAM(shca_test_doorbell_runs_small_wqes_in_the_caller,
			 shca_doorbell_run_gen_params),
	{}
};

static struct kunit_suite shca_hw_doorbell_suite = {
	.name = "shca_hw_doorbell",
	.test_cases = shca_hw_doorbell_cases,
};

kunit_test_suite(shca_hw_doorbell_suite);
