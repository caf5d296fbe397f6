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
		shca_hw_eq_query(to_shca_dev(dev)->hw, &st);
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
	shca_hw_eq_query(to_shca_dev(db)->hw, &st);

	/* One of two taken: under the limit, the event goes to the EQ. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, b, IB_WR_SEND, 1, 0,
						     0, 8, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	end = jiffies + 5 * HZ;
	do {
		usleep_range(50, 200);
		shca_hw_eq_query(to_shca_dev(db)->hw, &st);
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
	KUNIT_CASE(shca_test_srq_scatters_over_sges),
	KUNIT_CASE(shca_test_srq_qp_error_raises_last_wqe_reached),
	{}
};

static struct kunit_suite shca_srq_suite = {
	.name = "shca_srq",
	.test_cases = shca_srq_cases,
};

kunit_test_suite(shca_srq_suite);
