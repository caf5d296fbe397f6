/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the test vectors of the CQ sweep (include/shca/shca_cq_sweep.h).
 *
 * One table for both of the sweep's tests: the shca_cq_sweep KUnit suite
 * (kunit/shca_cq_sweep_test.c) and the userspace test built as libshca is
 * (tests/user/cq_sweep_test.c).  Test code only; rdma-core never sees it.
 *
 * A ring is a pattern, one letter per published CQE from the consumer
 * index on: 'V' is the victim's, 'S' the victim's receive on its SRQ, 'R'
 * its receive without one, lower case a neighbour's ('s' a neighbour's SRQ
 * receive).  Every slot past the pattern holds a CQE body the device has
 * not published, half of them the victim's, which the sweep must neither
 * remove nor touch.
 *
 * The includer provides <rdma/shca-abi.h>, strlen() and memset().
 */
#ifndef SHCA_CQ_SWEEP_VECTORS_H
#define SHCA_CQ_SWEEP_VECTORS_H

/* The victim's QPN, and the QPN of the neighbours' unpublished CQEs. */
#define SHCA_SWEEP_VICTIM	0x123
#define SHCA_SWEEP_UNPUBLISHED	0x2ff

/* The letters random rings are drawn from, and the seed they start at. */
#define SHCA_SWEEP_RANDOM_LETTERS	"VVabcSsR"
#define SHCA_SWEEP_RANDOM_SEED		0x5ca1ab1e

/**
 * struct shca_sweep_vector - one synthetic ring
 * @name: the case's name
 * @log_depth: log2 of the ring's depth
 * @ci: the consumer index
 * @pattern: the published CQEs, as described at the top of the file
 */
struct shca_sweep_vector {
	const char *name;
	__u32 log_depth;
	__u32 ci;
	const char *pattern;
};

static const struct shca_sweep_vector shca_sweep_vectors[] = {
	{ "empty",		3, 0,		"" },
	{ "none",		3, 0,		"abab" },
	{ "head",		3, 0,		"Vab" },
	{ "middle",		3, 0,		"aVb" },
	{ "tail",		3, 0,		"abV" },
	{ "all",		3, 0,		"VVVV" },
	{ "head_run",		3, 2,		"VVVab" },
	{ "wrap",		3, 45,		"aVbVcV" },
	{ "full",		3, 3,		"aVVbcVdV" },
	{ "full_all",		2, 6,		"VVVV" },
	{ "full_none",		2, 6,		"abcd" },
	{ "interleaved",	5, 20,		"aVbVcVdVeVfVgVhVaVbVcVdV" },
	{ "index_wrap",		2, 0xfffffffe,	"aVbV" },
	{ "one_slot",		1, 1,		"V" },
	{ "two_full",		1, 7,		"aV" },
	{ "srq",		3, 5,		"SaSRsVbS" },
	{ "srq_neighbour_only",	3, 0,		"ssa" },
};

/* Whether a pattern's letter is one of the victim's CQEs. */
static inline int shca_sweep_is_victim(char c)
{
	return c == 'V' || c == 'S' || c == 'R';
}

/**
 * shca_sweep_fill() - write the ring a pattern describes
 * @ring: the ring, 1 << @log_depth CQEs
 * @log_depth: log2 of its depth
 * @ci: the consumer index the pattern starts at
 * @pattern: the published CQEs, at most 1 << @log_depth of them
 *
 * Each CQE's body tells its slot's offset from @ci (wqe_idx, byte_len,
 * imm_inv and status), so a CQE moved to the wrong place is seen.
 */
static inline void shca_sweep_fill(struct shca_hw_cqe *ring, __u32 log_depth,
				   __u32 ci, const char *pattern)
{
	__u32 depth = 1U << log_depth, len = strlen(pattern), j, idx;
	struct shca_hw_cqe *c;

	for (j = 0; j < depth; j++) {
		idx = ci + j;
		c = &ring[idx & (depth - 1)];
		memset(c, 0, sizeof(*c));
		c->wqe_idx = j;
		c->byte_len = 1000 + j;
		c->imm_inv = 0xabc00000 | j;
		c->status = j % 3;
		c->opcode = SHCA_CQE_SEND;
		if (j >= len) {
			/* Not published: the owner byte says "not yet". */
			c->qpn = j & 1 ? SHCA_SWEEP_VICTIM :
				 SHCA_SWEEP_UNPUBLISHED;
			c->owner = (idx >> log_depth) & 1;
			continue;
		}
		c->owner = !((idx >> log_depth) & 1);
		c->qpn = shca_sweep_is_victim(pattern[j]) ? SHCA_SWEEP_VICTIM :
			 0x200 + pattern[j];
		if (pattern[j] == 'S' || pattern[j] == 'R' ||
		    pattern[j] == 's')
			c->opcode = SHCA_CQE_RECV;
		if (pattern[j] == 'S' || pattern[j] == 's')
			c->flags = SHCA_CQE_F_SRQ;
	}
}

#endif /* SHCA_CQ_SWEEP_VECTORS_H */
