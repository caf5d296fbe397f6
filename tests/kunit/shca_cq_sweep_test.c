// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the CQ sweep on synthetic rings (shca_cq_sweep).
 *
 * The rings are the vectors of include/test/shca_cq_sweep_vectors.h,
 * shared with the userspace test tests/user/cq_sweep_test.c.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/sort.h>

#include "shca.h"
#include "shca_test.h"
#include "shca_cq_sweep_vectors.h"

static int shca_sweep_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return (x > y) - (x < y);
}

/* Sweep one ring and check everything the sweep promises. */
static void shca_sweep_check(struct kunit *test, u32 log_depth, u32 ci,
			     const char *pattern)
{
	u32 depth = 1U << log_depth, mask = depth - 1;
	u32 len = strlen(pattern), victims = 0, k = 0, j, n, idx;
	size_t body = offsetof(struct shca_hw_cqe, owner);
	struct shca_hw_cqe *ring, *before, *slot;
	u32 *want_slots;
	struct shca_srq *srq;

	ring = kunit_kcalloc(test, depth, sizeof(*ring), GFP_KERNEL);
	before = kunit_kcalloc(test, depth, sizeof(*ring), GFP_KERNEL);
	want_slots = kunit_kcalloc(test, depth, sizeof(u32), GFP_KERNEL);
	srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, ring && before && want_slots && srq);
	/* The SRQ the victim receives from, all of it posted. */
	spin_lock_init(&srq->lock);
	srq->log_depth = log_depth;
	srq->free_slots = kunit_kcalloc(test, depth, sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, srq->free_slots);

	shca_sweep_fill(ring, log_depth, ci, pattern);
	memcpy(before, ring, depth * sizeof(*ring));
	for (j = 0; j < len; j++) {
		if (shca_sweep_is_victim(pattern[j]))
			victims++;
		if (pattern[j] == 'S')
			want_slots[k++] = j;
	}

	n = shca_cq_sweep_ring(ring, log_depth, ci, SHCA_SWEEP_VICTIM, srq);
	KUNIT_EXPECT_EQ_MSG(test, victims, n, "ring %s at ci %u", pattern, ci);

	/* Exactly the victim's SRQ receives went back to the SRQ. */
	KUNIT_EXPECT_EQ(test, k, srq->nr_free);
	if (k == srq->nr_free) {
		sort(srq->free_slots, k, sizeof(u32), shca_sweep_cmp_u32, NULL);
		for (j = 0; j < k; j++)
			KUNIT_EXPECT_EQ(test, want_slots[j] & mask,
					srq->free_slots[j]);
	}

	/* The survivors, in order, intact and valid, from the new ci on. */
	k = 0;
	for (j = 0; j < len; j++) {
		if (shca_sweep_is_victim(pattern[j]))
			continue;
		idx = ci + n + k++;
		slot = &ring[idx & mask];
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    memcmp(slot, &before[(ci + j) & mask], body),
				    "ring %s: survivor %u moved wrong", pattern,
				    j);
		KUNIT_EXPECT_EQ_MSG(test, (u8)!((idx >> log_depth) & 1),
				    slot->owner, "ring %s: owner of %u",
				    pattern, idx);
	}
	/* A consumer starting at the new ci sees the survivors, then stops. */
	for (j = 0; j < depth; j++) {
		idx = ci + n + j;
		if (ring[idx & mask].owner == ((idx >> log_depth) & 1))
			break;
	}
	KUNIT_EXPECT_EQ_MSG(test, len - victims, j, "ring %s", pattern);

	/* Nothing the device has not published was touched. */
	for (j = len; j < depth; j++)
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    memcmp(&ring[(ci + j) & mask],
					   &before[(ci + j) & mask],
					   sizeof(*ring)),
				    "ring %s: unpublished slot %u changed",
				    pattern, j);
}

static void shca_sweep_param_desc(const struct shca_sweep_vector *p,
				  char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", p->name);
}

KUNIT_ARRAY_PARAM(shca_sweep, shca_sweep_vectors, shca_sweep_param_desc);

static void shca_test_sweep_removes_exactly_the_victims_cqes(struct kunit *test)
{
	const struct shca_sweep_vector *p = test->param_value;

	shca_sweep_check(test, p->log_depth, p->ci, p->pattern);
}

/*
 * Random rings against the reference (keep the neighbours, in order): every
 * depth from 2 to 64, every fill level, random consumer indices.
 */
static void shca_test_sweep_matches_the_reference_on_random_rings(struct kunit *test)
{
	static const char letters[] = SHCA_SWEEP_RANDOM_LETTERS;
	struct rnd_state rnd;
	char *pattern;
	u32 i, ld, len, j;

	pattern = kunit_kzalloc(test, 65, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pattern);
	prandom_seed_state(&rnd, SHCA_SWEEP_RANDOM_SEED);
	for (i = 0; i < 400; i++) {
		ld = 1 + prandom_u32_state(&rnd) % 6;
		len = prandom_u32_state(&rnd) % ((1U << ld) + 1);
		for (j = 0; j < len; j++)
			pattern[j] = letters[prandom_u32_state(&rnd) %
					     (sizeof(letters) - 1)];
		pattern[len] = '\0';
		shca_sweep_check(test, ld, prandom_u32_state(&rnd), pattern);
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "failed at iteration %u", i);
			return;
		}
	}
	kunit_info(test, "%u random rings swept", i);
}

static struct kunit_case shca_cq_sweep_cases[] = {
	KUNIT_CASE_PARAM(shca_test_sweep_removes_exactly_the_victims_cqes, shca_sweep_gen_params),
	KUNIT_CASE(shca_test_sweep_matches_the_reference_on_random_rings),
	{}
};

static struct kunit_suite shca_cq_sweep_suite = {
	.name = "shca_cq_sweep",
	.test_cases = shca_cq_sweep_cases,
};

kunit_test_suites(&shca_cq_sweep_suite);
