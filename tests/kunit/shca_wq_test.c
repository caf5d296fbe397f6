// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the queue arithmetic the kernel and libshca share
 * (include/shca/shca_wq.h): queue depths, a queue starting over, and an
 * SRQ's slots moved to a new depth.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

struct shca_log_depth_case {
	u32 wr;
	u32 log;
};

static const struct shca_log_depth_case shca_log_depth_cases[] = {
	{ 0, 1 }, { 1, 1 }, { 2, 1 }, { 3, 2 }, { 4, 2 }, { 5, 3 },
	{ 4096, 12 }, { 4097, 13 }, { 1U << 30, 30 }, { U32_MAX, 31 },
};

static void shca_log_depth_desc(const struct shca_log_depth_case *c,
				char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u work requests", c->wr);
}

KUNIT_ARRAY_PARAM(shca_log_depth, shca_log_depth_cases, shca_log_depth_desc);

/* A queue is the smallest power of two that holds the requests, 2 at least. */
static void shca_test_wq_depth_is_the_smallest_power_of_two(struct kunit *test)
{
	const struct shca_log_depth_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, c->log, shca_wq_log_depth(c->wr));
}

/* After a reset the queue is empty, and so is the index the device reads. */
static void shca_test_wq_reset_empties_queue_and_doorbell(struct kunit *test)
{
	u64 wrid[4] = {};
	struct shca_hw_send_wqe ring[4];
	struct shca_wq wq;
	u32 dbrec_pi = 3, i;
	u64 wr_id;

	shca_wq_init(&wq, ring, 2, wrid);
	for (i = 0; i < 4; i++)
		shca_wq_produce(&wq, 100 + i);
	KUNIT_EXPECT_TRUE(test, shca_wq_full(&wq));
	KUNIT_EXPECT_EQ(test, 1, shca_wq_retire(&wq, 1, &wr_id));
	KUNIT_EXPECT_EQ(test, 101ULL, wr_id);
	shca_wq_reset(&wq, &dbrec_pi);
	KUNIT_EXPECT_EQ(test, 0U, wq.pi);
	KUNIT_EXPECT_EQ(test, 0U, wq.ci);
	KUNIT_EXPECT_EQ(test, 0U, dbrec_pi);
	KUNIT_EXPECT_FALSE(test, shca_wq_full(&wq));
	/* A CQE left from before the reset names nothing outstanding. */
	KUNIT_EXPECT_EQ(test, 0, shca_wq_retire(&wq, 2, &wr_id));
}

/*
 * An SRQ's slots at a new depth: @in_use slots of 2^@log are posted or
 * not yet polled, the rest free; the move to 2^@new_log must keep them,
 * or refuse.
 */
struct shca_slots_case {
	const char *desc;
	u32 log;
	u32 new_log;
	u32 in_use[4];
	u32 n_in_use;
	bool ok;
};

static const struct shca_slots_case shca_slots_cases[] = {
	{ "grow, slots in use kept", 2, 3, { 0, 3 }, 2, true },
	{ "grow an idle SRQ", 2, 4, {}, 0, true },
	{ "shrink, slots in use below the depth", 3, 2, { 1, 2 }, 2, true },
	{ "shrink past a slot in use", 3, 2, { 1, 5 }, 2, false },
	{ "shrink past the last slot", 3, 1, { 7 }, 1, false },
	{ "same depth", 2, 2, { 0, 1, 2, 3 }, 4, true },
};

static void shca_slots_desc(const struct shca_slots_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_slots, shca_slots_cases, shca_slots_desc);

static bool shca_slot_in_use(const struct shca_slots_case *c, u32 slot)
{
	u32 i;

	for (i = 0; i < c->n_in_use; i++)
		if (c->in_use[i] == slot)
			return true;
	return false;
}

static void shca_test_srq_slots_resize_keeps_slots_in_use(struct kunit *test)
{
	const struct shca_slots_case *c = test->param_value;
	u32 depth = 1U << c->log, new_depth = 1U << c->new_log;
	u32 *free_slots, *new_free, nr_free = 0, new_nr = U32_MAX, i;
	u64 *wrid, *new_wrid;
	bool *seen;

	free_slots = kunit_kcalloc(test, depth, sizeof(u32), GFP_KERNEL);
	wrid = kunit_kcalloc(test, depth, sizeof(u64), GFP_KERNEL);
	new_free = kunit_kcalloc(test, new_depth, sizeof(u32), GFP_KERNEL);
	new_wrid = kunit_kcalloc(test, new_depth, sizeof(u64), GFP_KERNEL);
	seen = kunit_kcalloc(test, new_depth, sizeof(bool), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, free_slots && wrid && new_free && new_wrid &&
			  seen);
	for (i = 0; i < depth; i++) {
		wrid[i] = 1000 + i;
		if (!shca_slot_in_use(c, i))
			free_slots[nr_free++] = i;
	}

	if (!c->ok) {
		KUNIT_EXPECT_EQ(test, -1,
				shca_srq_slots_resize(free_slots, nr_free, wrid,
						      c->log, c->new_log,
						      new_free, &new_nr,
						      new_wrid));
		KUNIT_EXPECT_EQ(test, U32_MAX, new_nr);
		return;
	}
	KUNIT_ASSERT_EQ(test, 0,
			shca_srq_slots_resize(free_slots, nr_free, wrid,
					      c->log, c->new_log, new_free,
					      &new_nr, new_wrid));
	/* Every slot of the new depth is free but those in use, once each. */
	KUNIT_EXPECT_EQ(test, new_depth - c->n_in_use, new_nr);
	for (i = 0; i < new_nr; i++) {
		KUNIT_ASSERT_LT(test, new_free[i], new_depth);
		KUNIT_EXPECT_FALSE(test, seen[new_free[i]]);
		KUNIT_EXPECT_FALSE(test, shca_slot_in_use(c, new_free[i]));
		seen[new_free[i]] = true;
	}
	/* The wr_ids of the slots both depths have are kept. */
	for (i = 0; i < min(depth, new_depth); i++)
		KUNIT_EXPECT_EQ(test, 1000ULL + i, new_wrid[i]);
}

static struct kunit_case shca_wq_cases[] = {
	KUNIT_CASE_PARAM(shca_test_wq_depth_is_the_smallest_power_of_two,
			 shca_log_depth_gen_params),
	KUNIT_CASE(shca_test_wq_reset_empties_queue_and_doorbell),
	KUNIT_CASE_PARAM(shca_test_srq_slots_resize_keeps_slots_in_use,
			 shca_slots_gen_params),
	{}
};

static struct kunit_suite shca_wq_suite = {
	.name = "shca_wq",
	.test_cases = shca_wq_cases,
};

kunit_test_suite(shca_wq_suite);
