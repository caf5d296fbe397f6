// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: shared receive queues, through the real driver, resize among them.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/scatterlist.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "shca.h"
#include "shca_test.h"

static void shca_test_srq_shared_by_two_qps(struct kunit *test)
{
	struct shca_tq *a1 = shca_test_tq_new(test);
	struct shca_tq *b1 = shca_test_tq_new(test);
	struct shca_tq *a2 = shca_test_tq_new(test);
	struct shca_tq *b2 = shca_test_tq_new(test);
	const struct ib_recv_wr *bad;
	struct ib_recv_wr rwr = {};
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	struct ib_wc wc[2];
	int i, err;

	shca_test_devices(test, true, &da, &db);
	s = shca_test_srq_new(test, db, 8, 0, 1);
	shca_test_tq_init(test, a1, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, a2, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b1, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_tq_init(test, b2, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a1, b1);
	shca_test_connect(test, a2, b2);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b1, 100 + i,
							     i * 256, 256));
	/* Receives on an SRQ QP go through the SRQ only. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_recv(b1->qp, &rwr, &bad));

	/* The SRQ hands its WQEs out in the order they were posted. */
	for (i = 0; i < 2; i++) {
		err = shca_test_post_send(a1, b1, IB_WR_SEND, i, 0, 0, 32, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
		shca_test_expect(test, a1, IB_WC_SUCCESS, i);
	}
	for (i = 0; i < 2; i++) {
		err = shca_test_post_send(a2, b2, IB_WR_SEND, i, 0, 0, 32, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
		shca_test_expect(test, a2, IB_WC_SUCCESS, i);
	}
	KUNIT_ASSERT_EQ(test, 2, shca_test_poll(b1, wc, 2));
	KUNIT_EXPECT_EQ(test, 100ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, 101ULL, wc[1].wr_id);
	KUNIT_EXPECT_PTR_EQ(test, b1->qp, wc[0].qp);
	KUNIT_ASSERT_EQ(test, 2, shca_test_poll(b2, wc, 2));
	KUNIT_EXPECT_EQ(test, 102ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, 103ULL, wc[1].wr_id);
	KUNIT_EXPECT_PTR_EQ(test, b2->qp, wc[0].qp);
}

/*
 * IBTA lets a QP receive from an SRQ of another protection domain: the
 * receive WQEs are checked against the SRQ's, remote accesses against the
 * QP's.
 */
static void shca_test_srq_of_another_pd_checks_receives_against_its_own(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_sge sge = { .length = 64 };
	struct ib_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.port_num = 1,
	};
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	struct ib_qp *qp;
	int err;

	shca_test_devices(test, true, &da, &db);
	s = shca_test_srq_new(test, db, 8, 0, 1);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	/* b's own PD, CQ and buffer, with a QP on the SRQ in its place. */
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	KUNIT_ASSERT_PTR_NE(test, b->pd, s->pd);
	init.srq = s->srq;
	init.send_cq = b->cq;
	init.recv_cq = b->cq;
	qp = ib_create_qp(b->pd, &init);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create_qp: %pe", qp);
	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(b->qp));
	b->qp = qp;
	shca_test_connect(test, a, b);

	/* A receive in the SRQ's PD takes a SEND. */
	sge.addr = b->addr;
	sge.lkey = s->pd->local_dma_lkey;
	rwr.wr_id = 100;
	KUNIT_ASSERT_EQ(test, 0, ib_post_srq_recv(s->srq, &rwr, NULL));
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 32, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	shca_test_expect(test, b, IB_WC_SUCCESS, 100);

	/* The QP's own PD grants the remote access. */
	err = shca_test_post_send(a, b, IB_WR_RDMA_WRITE, 2, 0, 64, 32, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);

	/* A receive naming the QP's PD, not the SRQ's, is refused. */
	sge.lkey = b->pd->local_dma_lkey;
	rwr.wr_id = 101;
	KUNIT_ASSERT_EQ(test, 0, ib_post_srq_recv(s->srq, &rwr, NULL));
	err = shca_test_post_send(a, b, IB_WR_SEND, 3, 0, 0, 32, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_REM_OP_ERR, 3);
	shca_test_expect(test, b, IB_WC_LOC_PROT_ERR, 101);
}

static void shca_test_srq_full_and_recycled(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	int i, err;

	shca_test_devices(test, false, &da, &db);
	s = shca_test_srq_new(test, db, 4, 0, 1);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a, b);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i, 0, 256));
	KUNIT_EXPECT_EQ(test, -ENOMEM, shca_test_post_recv(b, 4, 0, 256));
	/* A polled completion frees its slot for the next post. */
	err = shca_test_post_send(a, b, IB_WR_SEND, 9, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 9);
	KUNIT_EXPECT_EQ(test, -ENOMEM, shca_test_post_recv(b, 4, 0, 256));
	shca_test_expect(test, b, IB_WC_SUCCESS, 0);
	KUNIT_EXPECT_EQ(test, 0, shca_test_post_recv(b, 4, 0, 256));
}

static void shca_test_srq_limit_fires_once_and_disarms(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_srq_attr attr = { .srq_limit = 3 };
	unsigned long end = jiffies + 5 * HZ;
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	int i, err;

	shca_test_devices(test, false, &da, &db);
	s = shca_test_srq_new(test, db, 8, 0, 1);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a, b);
	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i, 0, 256));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_srq(s->srq, &attr, IB_SRQ_LIMIT));
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 3U, attr.srq_limit);
	/* Five posted, a limit of three: the third receive crosses it. */
	for (i = 0; i < 2; i++) {
		err = shca_test_post_send(a, b, IB_WR_SEND, i, 0, 0, 8, 0);
		KUNIT_ASSERT_EQ(test, 0, err);
		shca_test_expect(test, a, IB_WC_SUCCESS, i);
	}
	KUNIT_EXPECT_FALSE(test, test_bit(IB_EVENT_SRQ_LIMIT_REACHED,
					  &s->events));
	err = shca_test_post_send(a, b, IB_WR_SEND, 2, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	while (!test_bit(IB_EVENT_SRQ_LIMIT_REACHED, &s->events) &&
	       !time_after(jiffies, end))
		usleep_range(50, 200);
	KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_SRQ_LIMIT_REACHED,
					 &s->events));
	/* The limit disarms itself when it fires. */
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 0U, attr.srq_limit);
	/* Over the depth: refused, alone and with a resize. */
	attr.srq_limit = 9;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_srq(s->srq, &attr,
						     IB_SRQ_LIMIT));
	attr.max_wr = 8;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_srq(s->srq, &attr,
						     IB_SRQ_MAX_WR |
						     IB_SRQ_LIMIT));
	/* Armed again with a resize, it fires on the new depth. */
	attr.max_wr = 16;
	attr.srq_limit = 3;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_srq(s->srq, &attr,
					       IB_SRQ_MAX_WR | IB_SRQ_LIMIT));
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 16U, attr.max_wr);
	KUNIT_EXPECT_EQ(test, 3U, attr.srq_limit);
	/* A resize alone keeps the armed limit. */
	attr.max_wr = 32;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_srq(s->srq, &attr, IB_SRQ_MAX_WR));
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 32U, attr.max_wr);
	KUNIT_EXPECT_EQ(test, 3U, attr.srq_limit);
	clear_bit(IB_EVENT_SRQ_LIMIT_REACHED, &s->events);
	err = shca_test_post_send(a, b, IB_WR_SEND, 3, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 3);
	end = jiffies + 5 * HZ;
	while (!test_bit(IB_EVENT_SRQ_LIMIT_REACHED, &s->events) &&
	       !time_after(jiffies, end))
		usleep_range(50, 200);
	KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_SRQ_LIMIT_REACHED,
					 &s->events));
}

static void shca_srq_eq_resume(void *sdev)
{
	shca_eq_pause(sdev, false);
}

/* Until @dev's interrupt handler has acknowledged every EQE written. */
static bool shca_srq_eq_drained(struct ib_device *dev)
{
	unsigned long end = jiffies + 5 * HZ;
	struct shca_hw_eq_state st;

	do {
		shca_hw_eq_query(to_shca_dev(dev)->hw, 0, &st);
		if (st.written == st.acked && !st.owing)
			return true;
		usleep_range(50, 200);
	} while (!time_after(jiffies, end));
	return false;
}

/*
 * An SRQ's limit event is in the EQ, not yet handled, when the SRQ is
 * destroyed and a new one takes its number: the new SRQ's consumer hears
 * nothing of it.  The event carries the SRQ's generation, which the new
 * one does not have.
 */
static void shca_test_srq_event_of_a_destroyed_srq_reaches_no_new_one(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_srq_attr attr = { .srq_limit = 2 };
	struct shca_test_srq *s, *next;
	struct shca_hw_eq_state st;
	struct ib_device *da, *db;
	unsigned long end;
	u32 srqn;
	int i;

	shca_test_devices(test, false, &da, &db);
	s = shca_test_srq_new(test, db, 8, 0, 1);
	srqn = to_shca_srq(s->srq)->srqn;
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a, b);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i, 0, 256));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_srq(s->srq, &attr, IB_SRQ_LIMIT));
	KUNIT_ASSERT_TRUE(test, shca_srq_eq_drained(db));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_srq_eq_resume,
							   to_shca_dev(db)));
	shca_eq_pause(to_shca_dev(db), true);
	shca_hw_eq_query(to_shca_dev(db)->hw, 0, &st);

	/* One of two taken: under the limit, the event goes to the EQ. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, b, IB_WR_SEND, 1, 0,
						     0, 8, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	end = jiffies + 5 * HZ;
	do {
		usleep_range(50, 200);
		shca_hw_eq_query(to_shca_dev(db)->hw, 0, &st);
	} while (st.written == st.acked && !time_after(jiffies, end));
	KUNIT_ASSERT_EQ(test, st.acked + 1, st.written);

	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(b->qp));
	b->qp = NULL;
	ib_destroy_srq(s->srq);
	s->srq = NULL;
	next = shca_test_srq_new(test, db, 8, 0, 1);
	KUNIT_ASSERT_EQ(test, srqn, to_shca_srq(next->srq)->srqn);

	shca_eq_pause(to_shca_dev(db), false);
	KUNIT_ASSERT_TRUE(test, shca_srq_eq_drained(db));
	KUNIT_EXPECT_EQ(test, 0UL, next->events);
}

/*
 * IB_SRQ_MAX_WR keeps every posted receive and every completed one not yet
 * polled: growing lets more be posted, a shrink below the slots in use is
 * refused with nothing changed, and one that fits works once they are
 * polled.
 */
static void shca_test_srq_resize_keeps_receives(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_srq_attr attr = {};
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	int i, err;

	shca_test_devices(test, false, &da, &db);
	s = shca_test_srq_new(test, db, 4, 0, 1);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a, b);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i, i * 256,
							     256));
	/* One consumed, not polled: four slots in use. */
	err = shca_test_post_send(a, b, IB_WR_SEND, 100, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 100);

	attr.max_wr = 2;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_srq(s->srq, &attr,
						     IB_SRQ_MAX_WR));
	attr.max_wr = db->attrs.max_srq_wr + 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_srq(s->srq, &attr,
						     IB_SRQ_MAX_WR));
	attr.max_wr = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_srq(s->srq, &attr,
						     IB_SRQ_MAX_WR));
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 4U, attr.max_wr);
	KUNIT_EXPECT_EQ(test, -ENOMEM, shca_test_post_recv(b, 4, 0, 256));

	attr.max_wr = 12;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_srq(s->srq, &attr, IB_SRQ_MAX_WR));
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 16U, attr.max_wr);
	for (i = 4; i < 16; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i, 0, 256));
	KUNIT_EXPECT_EQ(test, -ENOMEM, shca_test_post_recv(b, 16, 0, 256));
	/* In posting order, the one consumed before the move first. */
	for (i = 1; i < 16; i++) {
		err = shca_test_post_send(a, b, IB_WR_SEND, 100 + i, 0, 0, 8,
					  0);
		KUNIT_ASSERT_EQ(test, 0, err);
		shca_test_expect(test, a, IB_WC_SUCCESS, 100 + i);
	}
	for (i = 0; i < 16; i++)
		shca_test_expect(test, b, IB_WC_SUCCESS, i);

	/* All polled: a shrink fits. */
	attr.max_wr = 2;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_srq(s->srq, &attr, IB_SRQ_MAX_WR));
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 2U, attr.max_wr);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 20 + i, 0,
							     256));
	KUNIT_EXPECT_EQ(test, -ENOMEM, shca_test_post_recv(b, 22, 0, 256));
	err = shca_test_post_send(a, b, IB_WR_SEND, 200, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 200);
	shca_test_expect(test, b, IB_WC_SUCCESS, 20);
}

/* An ib_modify_srq() resize run in a work item, for a test that holds it. */
struct shca_test_srq_resize {
	struct work_struct work;
	struct ib_srq *srq;
	u32 max_wr;
	int ret;
	struct completion done;
};

static void shca_test_srq_resize_fn(struct work_struct *work)
{
	struct shca_test_srq_resize *r =
		container_of(work, struct shca_test_srq_resize, work);
	struct ib_srq_attr attr = { .max_wr = r->max_wr };

	r->ret = ib_modify_srq(r->srq, &attr, IB_SRQ_MAX_WR);
	complete(&r->done);
}

/* Receive @i takes 8 bytes at its own offset of b's buffer. */
#define SHCA_TEST_RECV_AT(i)	(((i) % 8) * 256)

/* A SEND of 8 bytes of @i, received by receive @i where it should be. */
static void shca_test_srq_send_and_receive(struct kunit *test,
					   struct shca_tq *a, struct shca_tq *b,
					   u32 i)
{
	int err;

	memset(a->buf, i & 0xff, 8);
	memset(b->buf + SHCA_TEST_RECV_AT(i), 0, 8);
	err = shca_test_post_send(a, b, IB_WR_SEND, 1000 + i, 0, 0, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1000 + i);
	shca_test_expect(test, b, IB_WC_SUCCESS, i);
	KUNIT_EXPECT_MEMEQ(test, b->buf + SHCA_TEST_RECV_AT(i), a->buf, 8);
}

/*
 * Hold RESIZE_SRQ between the chunks of its copy (the srq_resize window),
 * 300 receives posted and 256 of them copied: no lock of the SRQ is held.
 * Meanwhile a SEND takes receive 0 from the old memory; its slot, already
 * copied, is polled and posted again with receive 300, at another offset,
 * and receive 301 is posted after it.  Once the resize is done, receives 1
 * to 301 take SENDs in the order they were posted, each where it was told
 * to put them: the slot posted again was copied again.
 */
static void shca_test_srq_resize_copies_with_the_srq_live(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_test_srq_resize *r = kunit_kzalloc(test, sizeof(*r),
						       GFP_KERNEL);
	struct ib_srq_attr attr = {};
	struct shca_hw_window *win;
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	struct shca_srq *srq;
	bool held;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	shca_test_devices(test, false, &da, &db);
	s = shca_test_srq_new(test, db, 512, 0, 1);
	srq = to_shca_srq(s->srq);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a, b);
	for (i = 0; i < 300; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, i,
							     SHCA_TEST_RECV_AT(i),
							     8));
	win = shca_test_window_hold(test, db, SHCA_WIN_SRQ_RESIZE, srq->srqn);
	r->srq = s->srq;
	r->max_wr = 1024;
	init_completion(&r->done);
	INIT_WORK(&r->work, shca_test_srq_resize_fn);
	queue_work(system_unbound_wq, &r->work);
	held = shca_hw_window_wait_held(win, 5 * HZ);
	KUNIT_EXPECT_TRUE(test, held);
	if (held) {
		shca_test_srq_send_and_receive(test, a, b, 0);
		KUNIT_EXPECT_EQ(test, 0, shca_test_post_recv(b, 300,
							     SHCA_TEST_RECV_AT(300),
							     8));
		KUNIT_EXPECT_EQ(test, 0, shca_test_post_recv(b, 301,
							     SHCA_TEST_RECV_AT(301),
							     8));
		/* Receive 300 is in slot 0, which receive 0 had. */
		KUNIT_EXPECT_EQ(test, 0U, READ_ONCE(srq->index_ring[300 % 512]));
		KUNIT_EXPECT_FALSE(test, completion_done(&r->done));
	}
	shca_hw_window_release(win);
	wait_for_completion(&r->done);
	KUNIT_ASSERT_EQ(test, 0, r->ret);
	KUNIT_ASSERT_EQ(test, 0, ib_query_srq(s->srq, &attr));
	KUNIT_EXPECT_EQ(test, 1024U, attr.max_wr);
	for (i = 1; i <= 301; i++)
		shca_test_srq_send_and_receive(test, a, b, i);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

static void shca_test_kvfree(void *p)
{
	kvfree(p);
}

/* An SRQ's memory as a driver gives it to the device, freed by the test. */
static struct shca_hw_srq_create
shca_test_srq_mem(struct kunit *test, u32 log_depth)
{
	u32 depth = 1U << log_depth;
	struct shca_hw_srq_create m = { .log_depth = log_depth, .max_sge = 1 };
	void *p;

	p = kvcalloc(depth, sizeof(*m.slots) + sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_kvfree,
							   p));
	m.slots = p;
	m.index_ring = p + sizeof(*m.slots) * depth;
	m.dbrec = kunit_kzalloc(test, sizeof(*m.dbrec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.dbrec);
	return m;
}

/* Post ring indices @from to @to, index i in slot @slot(i), marked i. */
static void shca_test_srq_mem_post(const struct shca_hw_srq_create *m,
				   u32 from, u32 to, u32 (*slot)(u32 i))
{
	u32 mask = (1U << m->log_depth) - 1;
	u32 i;

	for (i = from; i < to; i++) {
		m->slots[slot(i)].num_sge = 1;
		m->slots[slot(i)].sge[0].addr = i;
		m->index_ring[i & mask] = slot(i);
	}
	/* The driver's release: the device reads the WQEs after the index. */
	smp_store_release(&m->dbrec->pi, to);
}

static u32 shca_test_slot_is_index(u32 i)
{
	return i;
}

static struct shca_hw_cmd shca_test_resize_step(u32 srqn,
						const struct shca_hw_srq_create *m,
						enum shca_hw_srq_resize_step step,
						const struct shca_hw_cmd *last)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_RESIZE_SRQ,
		.index = srqn,
		.in.srq_resize = { .mem = *m, .step = step },
	};

	cmd.in.srq_resize.mem.limit = SHCA_HW_SRQ_LIMIT_KEEP;
	if (last)
		cmd.in.srq_resize.copied = last->out.srq_copied;
	return cmd;
}

static u32 shca_test_hw_srq_pi(struct kunit *test, struct shca_hw *hw,
			       u32 srqn)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_SRQ,
				   .index = srqn };

	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	return cmd.out.srq.pi;
}

static u32 shca_test_hw_srq_new(struct kunit *test, struct shca_hw *hw,
				const struct shca_hw_srq_create *m)
{
	struct shca_hw_cmd pd = { .opcode = SHCA_CMD_ALLOC_PD };
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_CREATE_SRQ,
				   .in.srq = *m };

	cmd.in.srq.pdn = shca_test_hw_create(test, hw, &pd);
	return shca_test_hw_create(test, hw, &cmd);
}

/*
 * The copy steps copy all that is posted; a switch copies what was posted
 * since, at most a chunk (256 WQEs), with the SRQ's lock held.  Past that
 * it is BUSY and leaves the SRQ in its old memory; the driver copies
 * again.  After the switch the new memory holds every WQE, in its slot,
 * and the new doorbell record the producer index.
 */
static void shca_test_srq_resize_switch_copies_at_most_a_chunk(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_srq_create old = shca_test_srq_mem(test, 9);
	struct shca_hw_srq_create new = shca_test_srq_mem(test, 10);
	struct shca_hw_cmd cmd, copy;
	u32 srqn, i;

	srqn = shca_test_hw_srq_new(test, hw, &old);
	shca_test_srq_mem_post(&old, 0, 100, shca_test_slot_is_index);
	copy = shca_test_resize_step(srqn, &new, SHCA_SRQ_RESIZE_START, NULL);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &copy));
	KUNIT_EXPECT_EQ(test, 100U, copy.out.srq_copied.next);
	KUNIT_EXPECT_FALSE(test, copy.out.srq_copied.has_bad);

	/* 300 more: more than the switch copies. */
	shca_test_srq_mem_post(&old, 100, 400, shca_test_slot_is_index);
	cmd = shca_test_resize_step(srqn, &new, SHCA_SRQ_RESIZE_SWITCH, &copy);
	KUNIT_EXPECT_EQ(test, SHCA_HW_BUSY, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 0U, READ_ONCE(new.dbrec->pi));
	KUNIT_EXPECT_EQ(test, 400U, shca_test_hw_srq_pi(test, hw, srqn));

	cmd = shca_test_resize_step(srqn, &new, SHCA_SRQ_RESIZE_COPY, &copy);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 400U, cmd.out.srq_copied.next);
	copy = cmd;

	/* Ten more: the switch copies them. */
	shca_test_srq_mem_post(&old, 400, 410, shca_test_slot_is_index);
	cmd = shca_test_resize_step(srqn, &new, SHCA_SRQ_RESIZE_SWITCH, &copy);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 410U, READ_ONCE(new.dbrec->pi));
	KUNIT_EXPECT_EQ(test, 410U, shca_test_hw_srq_pi(test, hw, srqn));
	for (i = 0; i < 410; i++) {
		KUNIT_EXPECT_EQ(test, i, new.index_ring[i]);
		KUNIT_EXPECT_EQ(test, (u64)i, new.slots[i].sge[0].addr);
	}
}

/* Receive 0 in slot 6, receive 1 in slot 1. */
static u32 shca_test_slot_6_then_1(u32 i)
{
	return i ? 1 : 6;
}

/*
 * Slot numbers are kept, so a shrink to four WQEs is refused while one is
 * posted in slot 6, though only two are posted; the SRQ is left as it
 * was, and a resize that keeps slot 6 works.
 */
static void shca_test_srq_resize_refuses_a_posted_slot_past_the_depth(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_srq_create old = shca_test_srq_mem(test, 3);
	struct shca_hw_srq_create small = shca_test_srq_mem(test, 2);
	struct shca_hw_srq_create same = shca_test_srq_mem(test, 3);
	struct shca_hw_cmd cmd, copy;
	u32 srqn;

	srqn = shca_test_hw_srq_new(test, hw, &old);
	shca_test_srq_mem_post(&old, 0, 2, shca_test_slot_6_then_1);
	copy = shca_test_resize_step(srqn, &small, SHCA_SRQ_RESIZE_START,
				     NULL);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &copy));
	KUNIT_EXPECT_TRUE(test, copy.out.srq_copied.has_bad);
	KUNIT_EXPECT_EQ(test, 0U, copy.out.srq_copied.bad);
	cmd = shca_test_resize_step(srqn, &small, SHCA_SRQ_RESIZE_SWITCH,
				    &copy);
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_PARAM, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 0U, READ_ONCE(small.dbrec->pi));

	copy = shca_test_resize_step(srqn, &same, SHCA_SRQ_RESIZE_START, NULL);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &copy));
	KUNIT_EXPECT_FALSE(test, copy.out.srq_copied.has_bad);
	cmd = shca_test_resize_step(srqn, &same, SHCA_SRQ_RESIZE_SWITCH, &copy);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 2U, READ_ONCE(same.dbrec->pi));
	KUNIT_EXPECT_EQ(test, 6U, same.index_ring[0]);
	KUNIT_EXPECT_EQ(test, 0ULL, same.slots[6].sge[0].addr);
	KUNIT_EXPECT_EQ(test, 1U, same.index_ring[1]);
	KUNIT_EXPECT_EQ(test, 1ULL, same.slots[1].sge[0].addr);
}

/* The SRQ's SGE limit, not the QP's, governs what its WQEs may hold. */
static void shca_test_srq_scatters_over_sges(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	const struct ib_recv_wr *bad;
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	struct ib_sge sge[2];
	struct ib_recv_wr wr = { .wr_id = 5, .sg_list = sge, .num_sge = 2 };
	int err, i;

	shca_test_devices(test, false, &da, &db);
	s = shca_test_srq_new(test, db, 8, 0, 2);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a, b);
	sge[0] = (struct ib_sge){ .addr = b->addr + 4096, .length = 100,
				  .lkey = b->lkey };
	sge[1] = (struct ib_sge){ .addr = b->addr + 8192, .length = 400,
				  .lkey = b->lkey };
	KUNIT_ASSERT_EQ(test, 0, ib_post_srq_recv(s->srq, &wr, &bad));
	for (i = 0; i < 300; i++)
		a->buf[i] = i * 3;
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 300, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	shca_test_expect(test, b, IB_WC_SUCCESS, 5);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + 4096, 100);
	KUNIT_EXPECT_MEMEQ(test, a->buf + 100, b->buf + 8192, 200);
}

static void shca_test_srq_qp_error_raises_last_wqe_reached(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_device *da, *db;
	struct shca_test_srq *s;
	int err;

	shca_test_devices(test, false, &da, &db);
	s = shca_test_srq_new(test, db, 8, 0, 1);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 1, 0, 256));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE));
	err = shca_test_wait_event(b, IB_EVENT_QP_LAST_WQE_REACHED);
	KUNIT_EXPECT_EQ(test, 0, err);
	/* The SRQ's WQEs are not the QP's to flush. */
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(b->cq, 1, &(struct ib_wc){}));
}

static struct kunit_case shca_srq_cases[] = {
	KUNIT_CASE(shca_test_srq_shared_by_two_qps),
	KUNIT_CASE(shca_test_srq_of_another_pd_checks_receives_against_its_own),
	KUNIT_CASE(shca_test_srq_full_and_recycled),
	KUNIT_CASE(shca_test_srq_limit_fires_once_and_disarms),
	KUNIT_CASE(shca_test_srq_event_of_a_destroyed_srq_reaches_no_new_one),
	KUNIT_CASE(shca_test_srq_resize_keeps_receives),
	KUNIT_CASE(shca_test_srq_resize_copies_with_the_srq_live),
	KUNIT_CASE(shca_test_srq_resize_switch_copies_at_most_a_chunk),
	KUNIT_CASE(shca_test_srq_resize_refuses_a_posted_slot_past_the_depth),
	KUNIT_CASE(shca_test_srq_scatters_over_sges),
	KUNIT_CASE(shca_test_srq_qp_error_raises_last_wqe_reached),
	{}
};

static struct kunit_suite shca_srq_suite = {
	.name = "shca_srq",
	.test_cases = shca_srq_cases,
};

kunit_test_suite(shca_srq_suite);
