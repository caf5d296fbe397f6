/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * KUnit helpers shared by the teardown suites.
 */
#ifndef SHCA_TEARDOWN_TEST_H
#define SHCA_TEARDOWN_TEST_H

#include "shca_test.h"

/* A work request ID: tag (which QP), epoch (which life), sequence. */
#define SHCA_TEARDOWN_ID(tag, epoch, seq) \
	(((u64)(tag) << 48) | ((u64)(epoch) << 24) | (seq))
#define SHCA_TEARDOWN_TAG(id)		((u32)((id) >> 48))
#define SHCA_TEARDOWN_EPOCH(id)	((u32)((id) >> 24) & 0xffffff)
#define SHCA_TEARDOWN_SEQ(id)		((u32)(id) & 0xffffff)

/* Tags of the victim and of the neighbour. */
#define SHCA_TEARDOWN_V		1
#define SHCA_TEARDOWN_N		2

int shca_teardown_msg(struct shca_tq *tq, u64 wr_id);
void shca_teardown_msgs(struct kunit *test, struct shca_tq *tq, u32 tag, u32 first,
			u32 count, struct ib_cq *cq, u32 cqes);
struct ib_wc *shca_teardown_poll_all(struct kunit *test, struct ib_cq *cq, int n);
void shca_teardown_expect_stream(struct kunit *test, const struct ib_wc *wc, int n,
				 u32 tag, bool recv, u32 first, u32 count);
void shca_teardown_expect_none(struct kunit *test, const struct ib_wc *wc, int n,
			       u32 tag);
struct ib_device *shca_teardown_bench(struct kunit *test, enum ib_qp_type type,
				      bool split, struct ib_srq *srq,
				      struct shca_tq *v, struct shca_tq *n,
				      struct ib_cq **scq, struct ib_cq **rcq);
void shca_teardown_pause(struct kunit *test, struct ib_device *dev);
void shca_teardown_wait(struct kunit *test, struct ib_cq *scq, struct ib_cq *rcq,
			u32 msgs);
void shca_teardown_expect_neighbour(struct kunit *test, struct ib_cq *scq,
				    struct ib_cq *rcq, u32 first, u32 count);

#endif /* SHCA_TEARDOWN_TEST_H */
