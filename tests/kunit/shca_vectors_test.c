// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: one completion vector per CPU.  The device has an EQ per online
 * CPU, each with a vector steered to its CPU, and get_vector_affinity
 * says which; a CQ's events go to the EQ of the vector it chose, and the
 * handler runs on that vector's CPU.  Each EQ keeps the event guarantees
 * on its own: filling one leaves the others their room, and every event
 * still arrives.  A vector whose CPU goes offline goes on delivering, on
 * another CPU, and comes back to its own when the CPU does.  (The sweep
 * across vectors is the teardown suite's: its split CQs are on the first
 * and the last vector.)
 */
#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_VEC_TIMEOUT	(5 * HZ)

/**
 * struct shca_vec_cq - a CQ on a chosen vector, and what its handler saw
 * @cq: the CQ
 * @tq: a UD QP on it that sends to itself
 * @events: completion events the handler ran for
 * @cpu: the CPU the handler last ran on
 */
struct shca_vec_cq {
	struct ib_cq *cq;
	struct shca_tq *tq;
	atomic_t events;
	int cpu;
};

static void shca_vec_comp(struct ib_cq *cq, void *ctx)
{
	struct shca_vec_cq *v = ctx;

	WRITE_ONCE(v->cpu, raw_smp_processor_id());
	/* The CPU is seen by whoever sees the count (atomic_read_acquire). */
	smp_mb__before_atomic();
	atomic_inc(&v->events);
}

/* A CQ on @vector, and a UD QP on it connected to itself. */
static struct shca_vec_cq *shca_vec_cq_new(struct kunit *test,
					   struct ib_device *dev, u32 vector)
{
	struct shca_vec_cq *v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, v);
	v->cpu = -1;
	v->cq = shca_test_cq_new_on(test, dev, 64, vector, shca_vec_comp, v);
	v->tq = shca_test_tq_new(test);
	shca_test_tq_init_on(test, v->tq, dev, IB_QPT_UD, NULL, v->cq, v->cq,
			     32);
	shca_test_connect(test, v->tq, v->tq);
	return v;
}

/* Arm the CQ, send once and poll the send's CQE: one completion event. */
static void shca_vec_kick(struct kunit *test, struct shca_vec_cq *v, u64 id)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, 0, ib_req_notify_cq(v->cq, IB_CQ_NEXT_COMP));
	KUNIT_ASSERT_EQ(test, 0,
			shca_test_post_send(v->tq, v->tq, IB_WR_SEND, id, 0, 0,
					    8, 0));
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(v->tq, &wc, 1));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
}

/* Wait for the handler's @n-th event; false on a timeout. */
static bool shca_vec_wait_events(struct shca_vec_cq *v, int n)
{
	unsigned long end = jiffies + SHCA_VEC_TIMEOUT;

	while (atomic_read_acquire(&v->events) < n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
	return true;
}

static int shca_vec_cpu(struct ib_device *dev, u32 vector)
{
	const struct cpumask *mask = ib_get_vector_affinity(dev, vector);

	return mask ? cpumask_first(mask) : -1;
}

/* EQEs written to every EQ of @dev but @except. */
static u64 shca_vec_written_elsewhere(struct ib_device *dev, u32 except)
{
	struct shca_hw_eq_state st;
	u64 n = 0;
	u32 i;

	for (i = 0; i < dev->num_comp_vectors; i++) {
		if (i == except)
			continue;
		shca_hw_eq_query(to_shca_dev(dev)->hw, i, &st);
		n += st.written;
	}
	return n;
}

static struct ib_device *shca_vec_dev(struct kunit *test)
{
	return shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
}

/*
 * As many vectors as CPUs online (the device has plenty), each steered to
 * a CPU of its own, the same one the device reports for its EQ; no vector
 * past them.
 */
static void shca_test_one_vector_per_online_cpu(struct kunit *test)
{
	struct ib_device *dev = shca_vec_dev(test);
	struct shca_hw_eq_state st;
	cpumask_var_t seen;
	u32 v;
	int cpu;

	KUNIT_ASSERT_TRUE(test, zalloc_cpumask_var(&seen, GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, (int)min_t(u32, num_online_cpus(), SHCA_HW_MAX_EQS),
			dev->num_comp_vectors);
	for (v = 0; v < dev->num_comp_vectors; v++) {
		const struct cpumask *mask = ib_get_vector_affinity(dev, v);

		KUNIT_ASSERT_NOT_NULL(test, mask);
		KUNIT_EXPECT_EQ(test, 1U, cpumask_weight(mask));
		cpu = cpumask_first(mask);
		KUNIT_EXPECT_TRUE(test, cpu_online(cpu));
		KUNIT_EXPECT_FALSE_MSG(test, cpumask_test_cpu(cpu, seen),
				       "vector %u shares CPU %d", v, cpu);
		cpumask_set_cpu(cpu, seen);
		shca_hw_eq_query(to_shca_dev(dev)->hw, v, &st);
		KUNIT_EXPECT_EQ(test, cpu, st.cpu);
		KUNIT_EXPECT_GT(test, st.depth, 0U);
	}
	free_cpumask_var(seen);
	KUNIT_EXPECT_NULL(test,
			  ib_get_vector_affinity(dev, dev->num_comp_vectors));
	KUNIT_EXPECT_NULL(test, ib_get_vector_affinity(dev, -1));
	shca_hw_eq_query(to_shca_dev(dev)->hw, dev->num_comp_vectors, &st);
	KUNIT_EXPECT_EQ(test, 0U, st.depth);
}

/* A CQ cannot choose a vector the device does not have. */
static void shca_test_cq_on_a_missing_vector_refused(struct kunit *test)
{
	struct ib_device *dev = shca_vec_dev(test);
	struct ib_cq_init_attr attr = {
		.cqe = 8, .comp_vector = dev->num_comp_vectors,
	};
	struct ib_cq *cq;

	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(cq));
	if (!IS_ERR(cq))
		ib_destroy_cq(cq);
}

/*
 * On every vector in turn: a CQ's completion event is written to its
 * vector's EQ, to no other, and its handler runs on the vector's CPU.
 */
static void shca_test_event_runs_on_its_vectors_cpu(struct kunit *test)
{
	struct ib_device *dev = shca_vec_dev(test);
	struct shca_hw_eq_state before, after;
	struct shca_vec_cq *v;
	u64 elsewhere;
	u32 vec;

	for (vec = 0; vec < dev->num_comp_vectors; vec++) {
		v = shca_vec_cq_new(test, dev, vec);
		shca_hw_eq_query(to_shca_dev(dev)->hw, vec, &before);
		elsewhere = shca_vec_written_elsewhere(dev, vec);
		shca_vec_kick(test, v, vec);
		KUNIT_ASSERT_TRUE_MSG(test, shca_vec_wait_events(v, 1),
				      "vector %u: no completion event", vec);
		shca_hw_eq_query(to_shca_dev(dev)->hw, vec, &after);
		KUNIT_EXPECT_EQ_MSG(test, before.written + 1, after.written,
				    "vector %u", vec);
		KUNIT_EXPECT_EQ_MSG(test, elsewhere,
				    shca_vec_written_elsewhere(dev, vec),
				    "vector %u's event went elsewhere", vec);
		KUNIT_EXPECT_EQ_MSG(test, shca_vec_cpu(dev, vec),
				    READ_ONCE(v->cpu), "vector %u", vec);
	}
}

static void shca_vec_restore(void *ctx)
{
	struct shca_dev *sdev = ctx;

	shca_hw_eq_set_limit(sdev->hw, 0);
	shca_eq_pause(sdev, false);
}

/*
 * Each EQ keeps its room and its guarantees on its own.  With the
 * handlers held and every EQ limited to one EQE, a CQ on the first vector
 * and one on the last each get their EQE in: one EQ's EQE does not count
 * against another's room.  A second CQ on the last vector then finds its
 * EQ full: an overflow, and an owed event, on that EQ alone.  Released,
 * every CQ gets exactly its one event.
 */
static void shca_test_full_eq_leaves_the_others_their_room(struct kunit *test)
{
	struct ib_device *dev = shca_vec_dev(test);
	struct shca_dev *sdev = to_shca_dev(dev);
	struct shca_vec_cq *a, *b, *c;
	u32 last = dev->num_comp_vectors - 1;
	u64 ovf;

	if (!last)
		kunit_skip(test, "one CPU online: one vector");
	a = shca_vec_cq_new(test, dev, 0);
	b = shca_vec_cq_new(test, dev, last);
	c = shca_vec_cq_new(test, dev, last);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_vec_restore,
						  sdev));
	shca_test_wait_eq(test, dev, 0, 0, 0);
	shca_test_wait_eq(test, dev, last, 0, 0);
	ovf = shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW);

	shca_eq_pause(sdev, true);
	shca_hw_eq_set_limit(sdev->hw, 1);
	shca_vec_kick(test, a, 1);
	shca_test_wait_eq(test, dev, 0, 1, 0);
	shca_vec_kick(test, b, 2);
	shca_test_wait_eq(test, dev, last, 1, 0);
	KUNIT_EXPECT_EQ(test, ovf,
			shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW));

	shca_vec_kick(test, c, 3);
	shca_test_wait_eq(test, dev, last, 1, 1);
	shca_test_wait_eq(test, dev, 0, 1, 0);
	KUNIT_EXPECT_EQ(test, ovf + 1,
			shca_test_counter(dev, SHCA_CNT_EQ_OVERFLOW));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&a->events) +
			atomic_read(&b->events) + atomic_read(&c->events));

	shca_eq_pause(sdev, false);
	KUNIT_EXPECT_TRUE(test, shca_vec_wait_events(a, 1));
	KUNIT_EXPECT_TRUE(test, shca_vec_wait_events(b, 1));
	KUNIT_EXPECT_TRUE_MSG(test, shca_vec_wait_events(c, 1),
			      "the owed event of the full EQ was lost");
	shca_test_wait_eq(test, dev, 0, 0, 0);
	shca_test_wait_eq(test, dev, last, 0, 0);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&a->events));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&b->events));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&c->events));
}

static void shca_vec_cpu_up(void *ctx)
{
	unsigned int cpu = (uintptr_t)ctx;

	if (!cpu_online(cpu))
		add_cpu(cpu);
}

/*
 * The last vector's CPU goes offline: the vector keeps its affinity, and
 * its events still arrive, handled on a CPU that is online.  When the CPU
 * comes back, so does the vector's handler.
 */
static void shca_test_vector_outlives_its_cpu(struct kunit *test)
{
	struct ib_device *dev = shca_vec_dev(test);
	u32 last = dev->num_comp_vectors - 1;
	struct shca_vec_cq *v;
	int cpu;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || !last)
		kunit_skip(test, "no CPU that can go offline");
	cpu = shca_vec_cpu(dev, last);
	KUNIT_ASSERT_GE(test, cpu, 0);
	v = shca_vec_cq_new(test, dev, last);
	shca_vec_kick(test, v, 1);
	KUNIT_ASSERT_TRUE(test, shca_vec_wait_events(v, 1));
	KUNIT_EXPECT_EQ(test, cpu, READ_ONCE(v->cpu));

	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_vec_cpu_up,
						  (void *)(uintptr_t)cpu));
	KUNIT_ASSERT_EQ(test, 0, remove_cpu(cpu));
	shca_vec_kick(test, v, 2);
	KUNIT_ASSERT_TRUE_MSG(test, shca_vec_wait_events(v, 2),
			      "the event was lost with CPU %d offline", cpu);
	KUNIT_EXPECT_NE(test, cpu, READ_ONCE(v->cpu));
	KUNIT_EXPECT_EQ(test, cpu, shca_vec_cpu(dev, last));

	KUNIT_ASSERT_EQ(test, 0, add_cpu(cpu));
	shca_vec_kick(test, v, 3);
	KUNIT_ASSERT_TRUE(test, shca_vec_wait_events(v, 3));
	KUNIT_EXPECT_EQ(test, cpu, READ_ONCE(v->cpu));
}

static struct kunit_case shca_vectors_cases[] = {
	KUNIT_CASE(shca_test_one_vector_per_online_cpu),
	KUNIT_CASE(shca_test_cq_on_a_missing_vector_refused),
	KUNIT_CASE(shca_test_event_runs_on_its_vectors_cpu),
	KUNIT_CASE(shca_test_full_eq_leaves_the_others_their_room),
	KUNIT_CASE(shca_test_vector_outlives_its_cpu),
	{}
};

static struct kunit_suite shca_vectors_suite = {
	.name = "shca_vectors",
	.test_cases = shca_vectors_cases,
};

kunit_test_suites(&shca_vectors_suite);
