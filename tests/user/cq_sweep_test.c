// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CQ sweep of include/shca/shca_cq_sweep.h, in userspace: the code
 * libshca sweeps user CQs with, built as libshca builds it.  The same
 * synthetic rings as the kernel's shca_cq_sweep KUnit suite, random rings
 * against a reference, and a sweep beside a live writer thread that plays
 * the device.  Reports in KTAP: a version line, the plan, then "ok N NAME"
 * or "not ok N NAME" per case, a failure's reason on a "#" line before it.
 *
 * The rings are the vectors of include/test/shca_cq_sweep_vectors.h,
 * shared with the KUnit suite.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shca_cq_sweep.h"
#include "shca_cq_sweep_vectors.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define VICTIM		SHCA_SWEEP_VICTIM

static int failed;
static char why[256];

struct slots {
	uint32_t n;
	uint32_t slot[64];
};

static void take_slot(void *ctx, const struct shca_hw_cqe *cqe)
{
	struct slots *s = ctx;
	uint32_t slot = cqe->wqe_idx;

	if (s->n < 64)
		s->slot[s->n++] = slot;
}

/* Sweep one ring; 0 if everything the sweep promises holds. */
static int check(uint32_t log_depth, uint32_t ci, const char *pattern)
{
	uint32_t depth = 1U << log_depth, mask = depth - 1;
	uint32_t len = strlen(pattern), victims = 0, k = 0, j, n, idx;
	size_t body = sizeof(struct shca_hw_cqe) - 1;
	struct shca_hw_cqe ring[64], before[64], *slot;
	struct slots got = { 0 };
	uint32_t want[64];

	shca_sweep_fill(ring, log_depth, ci, pattern);
	memcpy(before, ring, depth * sizeof(*ring));
	for (j = 0; j < len; j++) {
		victims += shca_sweep_is_victim(pattern[j]);
		if (pattern[j] == 'S')
			want[k++] = j & mask;
	}
	n = shca_sweep_cq_ring(ring, log_depth, ci, VICTIM, take_slot, &got);
	if (n != victims) {
		snprintf(why, sizeof(why), "%s: removed %u of %u", pattern, n,
			 victims);
		return 1;
	}
	/* The sweep walks newest to oldest: slots come back in reverse. */
	if (got.n != k) {
		snprintf(why, sizeof(why), "%s: %u SRQ slots back, %u wanted",
			 pattern, got.n, k);
		return 1;
	}
	for (j = 0; j < k; j++) {
		if (got.slot[j] != want[k - 1 - j]) {
			snprintf(why, sizeof(why), "%s: SRQ slot %u", pattern,
				 j);
			return 1;
		}
	}
	k = 0;
	for (j = 0; j < len; j++) {
		if (shca_sweep_is_victim(pattern[j]))
			continue;
		idx = ci + n + k++;
		slot = &ring[idx & mask];
		if (memcmp(slot, &before[(ci + j) & mask], body) ||
		    slot->owner != !((idx >> log_depth) & 1)) {
			snprintf(why, sizeof(why), "%s: survivor %u", pattern,
				 j);
			return 1;
		}
	}
	for (j = 0; j < depth; j++) {
		idx = ci + n + j;
		if (!shca_cqe_published(ring, log_depth, idx))
			break;
	}
	if (j != len - victims) {
		snprintf(why, sizeof(why), "%s: %u valid after the sweep",
			 pattern, j);
		return 1;
	}
	for (j = len; j < depth; j++) {
		if (memcmp(&ring[(ci + j) & mask], &before[(ci + j) & mask],
			   sizeof(*ring))) {
			snprintf(why, sizeof(why), "%s: unpublished %u touched",
				 pattern, j);
			return 1;
		}
	}
	return 0;
}

static void report(const char *name, int bad)
{
	static unsigned int n;

	n++;
	if (bad) {
		printf("# %s: %s\n", name, why);
		printf("not ok %u %s\n", n, name);
		failed++;
	} else {
		printf("ok %u %s\n", n, name);
	}
	fflush(stdout);
}

static int random_rings(void)
{
	static const char letters[] = SHCA_SWEEP_RANDOM_LETTERS;
	char pattern[65];
	uint32_t i, ld, len, j;

	srandom(SHCA_SWEEP_RANDOM_SEED);
	for (i = 0; i < 5000; i++) {
		ld = 1 + random() % 6;
		len = random() % ((1U << ld) + 1);
		for (j = 0; j < len; j++)
			pattern[j] = letters[random() % (sizeof(letters) - 1)];
		pattern[len] = '\0';
		if (check(ld, (uint32_t)random() * 2654435761U, pattern))
			return 1;
	}
	return 0;
}

/*
 * Beside a live device: a writer thread publishes CQEs of a victim and
 * two neighbours in ring order, body first, owner byte last with release;
 * the victim is fenced (the writer stops writing for it) and then swept
 * while the writer goes on for the neighbours.  The consumer must then see
 * every neighbour CQE exactly once and in order, and no victim CQE.
 *
 * The race is held open, not hoped for: after a quarter of the CQEs the
 * consumer stops polling until the writer has filled the ring, so the
 * sweep always meets a full ring beside a writer that is still going, and
 * it must remove something.  A run that never swept fails, and so does
 * one that takes longer than LIVE_SECONDS (the writer is told to stop).
 */
#define LIVE_LOG	6
#define LIVE_TOTAL	200000
#define LIVE_SECONDS	60

struct live {
	struct shca_hw_cqe ring[1U << LIVE_LOG];
	uint32_t ci;			/* consumer index, shared with writer */
	int fenced;			/* no more victim CQEs, please */
	int fence_acked;		/* none is being written any more */
	int stop;			/* give up: the consumer timed out */
	uint32_t victims_written;
};

static void *live_writer(void *arg)
{
	struct live *l = arg;
	uint32_t depth = 1U << LIVE_LOG, pi = 0, seq[2] = { 0, 0 }, r = 1;
	struct shca_hw_cqe *c;
	int who;

	while (seq[0] + seq[1] < LIVE_TOTAL &&
	       !__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		r = r * 1103515245 + 12345;
		who = (r >> 16) % 3;
		if (__atomic_load_n(&l->fenced, __ATOMIC_ACQUIRE)) {
			/* The fence: between two CQE writes, never in one. */
			__atomic_store_n(&l->fence_acked, 1, __ATOMIC_RELEASE);
			if (who == 2)
				who = (r >> 20) & 1;
		}
		if (pi - __atomic_load_n(&l->ci, __ATOMIC_ACQUIRE) >= depth)
			continue;	/* full: the consumer catches up */
		c = &l->ring[pi & (depth - 1)];
		c->qpn = who == 2 ? VICTIM : 0x200 + who;
		c->wqe_idx = who == 2 ? 0 : seq[who] & 0xffff;
		c->byte_len = who == 2 ? 0 : seq[who];
		if (who == 2)
			l->victims_written++;
		else
			seq[who]++;
		__atomic_store_n(&c->owner, !((pi >> LIVE_LOG) & 1),
				 __ATOMIC_RELEASE);
		pi++;
	}
	return NULL;
}

static int live_expired(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > end->tv_sec ||
	       (now.tv_sec == end->tv_sec && now.tv_nsec >= end->tv_nsec);
}

static int live_sweep(void)
{
	struct live *l = calloc(1, sizeof(*l));
	uint32_t next[2] = { 0, 0 }, polled = 0, victims_after = 0, n;
	struct shca_hw_cqe *c;
	struct timespec end;
	unsigned int spins = 0;
	int swept = 0, bad = 0;
	pthread_t t;

	if (!l)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += LIVE_SECONDS;
	if (pthread_create(&t, NULL, live_writer, l)) {
		free(l);
		snprintf(why, sizeof(why), "no writer thread");
		return 1;
	}
	while (next[0] + next[1] < LIVE_TOTAL) {
		if (!(++spins & 0xfff) && live_expired(&end)) {
			snprintf(why, sizeof(why),
				 "timed out after %d s: %u of %u neighbour CQEs, %s",
				 LIVE_SECONDS, next[0] + next[1], LIVE_TOTAL,
				 swept ? "swept" : "not swept");
			bad = 1;
			break;
		}
		if (!swept && polled > LIVE_TOTAL / 4) {
			/* Hold: no polling until the writer fills the ring. */
			if (!shca_cqe_published(l->ring, LIVE_LOG,
						l->ci + (1U << LIVE_LOG) - 1))
				continue;
			__atomic_store_n(&l->fenced, 1, __ATOMIC_RELEASE);
			/* A fence waits out the device's write in flight. */
			while (!__atomic_load_n(&l->fence_acked,
						__ATOMIC_ACQUIRE) &&
			       !live_expired(&end))
				;
			if (!__atomic_load_n(&l->fence_acked,
					     __ATOMIC_ACQUIRE)) {
				snprintf(why, sizeof(why),
					 "the writer never acknowledged the fence");
				bad = 1;
				break;
			}
			n = shca_sweep_cq_ring(l->ring, LIVE_LOG, l->ci, VICTIM,
					       NULL, NULL);
			__atomic_store_n(&l->ci, l->ci + n, __ATOMIC_RELEASE);
			swept = n;
			if (!n) {
				snprintf(why, sizeof(why),
					 "nothing swept from a full ring");
				bad = 1;
				break;
			}
			continue;
		}
		if (!shca_cqe_published(l->ring, LIVE_LOG, l->ci))
			continue;
		c = &l->ring[l->ci & ((1U << LIVE_LOG) - 1)];
		if (c->qpn == VICTIM) {
			victims_after += !!swept;
		} else if (c->qpn == 0x200 || c->qpn == 0x201) {
			if (c->byte_len != next[c->qpn - 0x200]) {
				snprintf(why, sizeof(why),
					 "neighbour %u: CQE %u, expected %u",
					 c->qpn - 0x200, c->byte_len,
					 next[c->qpn - 0x200]);
				bad = 1;
				break;
			}
			next[c->qpn - 0x200]++;
		}
		polled++;
		__atomic_store_n(&l->ci, l->ci + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	free(l);
	if (bad)
		return 1;
	printf("# %d victim CQEs swept from a full ring beside the writer\n",
	       swept);
	if (!swept) {
		snprintf(why, sizeof(why), "the sweep never ran");
		return 1;
	}
	if (victims_after) {
		snprintf(why, sizeof(why), "%u victim CQEs after the sweep",
			 victims_after);
		return 1;
	}
	return 0;
}

int main(void)
{
	const struct shca_sweep_vector *v;
	char name[64];
	size_t i;

	printf("KTAP version 1\n1..%zu\n", ARRAY_SIZE(shca_sweep_vectors) + 3);
	snprintf(why, sizeof(why), "a CQE is %zu bytes, its owner byte at %zu",
		 sizeof(struct shca_hw_cqe),
		 offsetof(struct shca_hw_cqe, owner));
	report("cqe_layout", sizeof(struct shca_hw_cqe) != 32 ||
	       offsetof(struct shca_hw_cqe, owner) != 31);
	for (i = 0; i < ARRAY_SIZE(shca_sweep_vectors); i++) {
		v = &shca_sweep_vectors[i];
		snprintf(name, sizeof(name), "ring_%s", v->name);
		report(name, check(v->log_depth, v->ci, v->pattern));
	}
	report("random_rings", random_rings());
	report("beside_a_live_writer", live_sweep());
	return failed ? 1 : 0;
}
