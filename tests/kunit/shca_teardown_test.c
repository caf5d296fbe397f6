// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: teardown through the real driver (shca_teardown) - destroy and
 * RESET sweep a shared CQ, flush first, give SRQ WQEs back, destroy_cq is
 * refused while associated, a reissued QPN inherits nothing - and with the
 * race windows held open (shca_teardown_race).
 *
 * Every QP here is connected to itself, so one message is a receive CQE
 * and a send CQE of the same QP.  Work request IDs carry a tag (which QP),
 * an epoch (which life of it) and a sequence number.
 */
#include <kunit/test.h>
#include <linux/kthread.h>

#include "shca.h"
#include "shca_test.h"
#include "shca_teardown_test.h"

/**
 * shca_teardown_msg() - send one message from a QP to itself
 * @tq: the end, connected to itself
 * @wr_id: the ID of both the receive and the send
 *
 * Return: 0 or the errno of the post that failed.
 */
int shca_teardown_msg(struct shca_tq *tq, u64 wr_id)
{
	int err = 0;

	if (!tq->srq)
		err = shca_test_post_recv(tq, wr_id, 1024, 64);
	if (!err)
		err = shca_test_post_send(tq, tq, IB_WR_SEND, wr_id, 0, 0, 8, 0);
	return err;
}

/**
 * shca_teardown_msgs() - send messages from a QP to itself, wait for their CQEs
 * @test: the test
 * @tq: the end, connected to itself
 * @tag: the tag of their IDs; the epoch is 0
 * @first: the first sequence number
 * @count: how many messages
 * @cq: a CQ to wait on, or NULL not to wait
 * @cqes: how many unpolled CQEs @cq must then hold
 */
void shca_teardown_msgs(struct kunit *test, struct shca_tq *tq, u32 tag, u32 first,
			u32 count, struct ib_cq *cq, u32 cqes)
{
	u32 i;

	for (i = first; i < first + count; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_teardown_msg(tq, SHCA_TEARDOWN_ID(tag, 0, i)));
	if (cq)
		shca_test_wait_cqes(test, cq, cqes);
}

/**
 * shca_teardown_wait() - wait until messages have both their CQEs in the rings
 * @test: the test
 * @scq: the send CQ
 * @rcq: the receive CQ, maybe @scq
 * @msgs: how many messages
 */
void shca_teardown_wait(struct kunit *test, struct ib_cq *scq, struct ib_cq *rcq,
			u32 msgs)
{
	if (scq == rcq) {
		shca_test_wait_cqes(test, scq, 2 * msgs);
	} else {
		shca_test_wait_cqes(test, scq, msgs);
		shca_test_wait_cqes(test, rcq, msgs);
	}
}

/**
 * shca_teardown_poll_all() - poll exactly @n completions, then make sure no more
 * @test: the test
 * @cq: the CQ
 * @n: how many are due
 *
 * Return: the completions, in the order polled.
 */
struct ib_wc *shca_teardown_poll_all(struct kunit *test, struct ib_cq *cq, int n)
{
	struct ib_wc *wc = kunit_kcalloc(test, n + 1, sizeof(*wc), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, wc);
	KUNIT_EXPECT_EQ(test, n, shca_test_poll_cq(cq, wc, n));
	KUNIT_EXPECT_EQ_MSG(test, 0, ib_poll_cq(cq, 1, wc + n),
			    "one completion too many: wr_id %#llx",
			    wc[n].wr_id);
	return wc;
}

/**
 * shca_teardown_expect_stream() - check one QP's sends or receives in a poll
 * @test: the test
 * @wc: the completions polled
 * @n: how many
 * @tag: the QP's tag
 * @recv: receives, not sends
 * @first: the first sequence number due
 * @count: how many are due: each exactly once, in order, successful
 */
void shca_teardown_expect_stream(struct kunit *test, const struct ib_wc *wc, int n,
				 u32 tag, bool recv, u32 first, u32 count)
{
	u32 next = first;
	int i;

	for (i = 0; i < n; i++) {
		if (SHCA_TEARDOWN_TAG(wc[i].wr_id) != tag ||
		    !!(wc[i].opcode & IB_WC_RECV) != recv)
			continue;
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[i].status);
		KUNIT_EXPECT_EQ_MSG(test, next, SHCA_TEARDOWN_SEQ(wc[i].wr_id),
				    "tag %u %s out of order", tag,
				    recv ? "receive" : "send");
		next++;
	}
	KUNIT_EXPECT_EQ_MSG(test, first + count, next, "tag %u %s", tag,
			    recv ? "receives" : "sends");
}

/**
 * shca_teardown_expect_none() - check that no completion of a QP was polled
 * @test: the test
 * @wc: the completions polled
 * @n: how many
 * @tag: the QP's tag
 */
void shca_teardown_expect_none(struct kunit *test, const struct ib_wc *wc, int n,
			       u32 tag)
{
	int i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_NE_MSG(test, tag, SHCA_TEARDOWN_TAG(wc[i].wr_id),
				    "completion %#llx of a swept QP",
				    wc[i].wr_id);
}

static const char * const shca_teardown_type_names[] = {
	[IB_QPT_RC] = "rc", [IB_QPT_UC] = "uc", [IB_QPT_UD] = "ud",
};

/* Which QP type, and whether the send and receive CQs are separate. */
struct shca_teardown_param {
	enum ib_qp_type type;
	bool split;
};

static const struct shca_teardown_param shca_teardown_params[] = {
	{ IB_QPT_RC, false }, { IB_QPT_RC, true },
	{ IB_QPT_UC, false }, { IB_QPT_UC, true },
	{ IB_QPT_UD, false }, { IB_QPT_UD, true },
};

static void shca_teardown_param_desc(const struct shca_teardown_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s",
		 shca_teardown_type_names[p->type], p->split ? "split_cqs" :
		 "shared_cq");
}

KUNIT_ARRAY_PARAM(shca_teardown, shca_teardown_params, shca_teardown_param_desc);

/**
 * shca_teardown_bench() - a device with a victim and a neighbour on shared CQs
 * @test: the test
 * @type: the QP type of both
 * @split: separate send and receive CQs, on different completion vectors
 *	where the device has more than one
 * @srq: an SRQ both receive from, or NULL
 * @v: the victim, connected to itself
 * @n: the neighbour, connected to itself
 * @scq: set to the send CQ
 * @rcq: set to the receive CQ (@scq unless @split)
 *
 * Return: the device.
 */
struct ib_device *shca_teardown_bench(struct kunit *test, enum ib_qp_type type,
				      bool split, struct ib_srq *srq,
				      struct shca_tq *v, struct shca_tq *n,
				      struct ib_cq **scq, struct ib_cq **rcq)
{
	struct ib_device *dev = srq ? srq->device : NULL, *unused;

	if (!dev)
		shca_test_devices(test, false, &dev, &unused);
	*scq = shca_test_cq_new(test, dev, 256);
	/*
	 * Split CQs sit on the first and the last completion vector: a
	 * victim's CQEs are swept from two vectors' CQs.
	 */
	*rcq = split ? shca_test_cq_new_on(test, dev, 256,
					   dev->num_comp_vectors - 1,
					   NULL, NULL) : *scq;
	shca_test_tq_init_on(test, v, dev, type, srq, *scq, *rcq, 16);
	shca_test_tq_init_on(test, n, dev, type, srq, *scq, *rcq, 16);
	shca_test_connect(test, v, v);
	shca_test_connect(test, n, n);
	return dev;
}

/* Interleave @count messages of @v and @n, each in the rings before the next. */
static void shca_teardown_interleave(struct kunit *test, struct shca_tq *v,
				     struct shca_tq *n, struct ib_cq *scq,
				     struct ib_cq *rcq, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		KUNIT_ASSERT_EQ(test, 0, shca_teardown_msg(n, SHCA_TEARDOWN_ID(SHCA_TEARDOWN_N,
									       0, i)));
		shca_teardown_wait(test, scq, rcq, 2 * i + 1);
		KUNIT_ASSERT_EQ(test, 0, shca_teardown_msg(v, SHCA_TEARDOWN_ID(SHCA_TEARDOWN_V,
									       0, i)));
		shca_teardown_wait(test, scq, rcq, 2 * i + 2);
	}
}

/**
 * shca_teardown_expect_neighbour() - poll the neighbour's messages, and no more
 * @test: the test
 * @scq: the send CQ
 * @rcq: the receive CQ, maybe @scq
 * @first: the first sequence number due
 * @count: how many messages: each exactly once, in order; nothing of the
 *	victim, nothing more
 */
void shca_teardown_expect_neighbour(struct kunit *test, struct ib_cq *scq,
				    struct ib_cq *rcq, u32 first, u32 count)
{
	struct ib_wc *wc;

	if (scq == rcq) {
		wc = shca_teardown_poll_all(test, scq, 2 * count);
		shca_teardown_expect_stream(test, wc, 2 * count, SHCA_TEARDOWN_N, false,
					    first, count);
		shca_teardown_expect_stream(test, wc, 2 * count, SHCA_TEARDOWN_N, true,
					    first, count);
		shca_teardown_expect_none(test, wc, 2 * count, SHCA_TEARDOWN_V);
		return;
	}
	wc = shca_teardown_poll_all(test, scq, count);
	shca_teardown_expect_stream(test, wc, count, SHCA_TEARDOWN_N, false, first, count);
	shca_teardown_expect_none(test, wc, count, SHCA_TEARDOWN_V);
	wc = shca_teardown_poll_all(test, rcq, count);
	shca_teardown_expect_stream(test, wc, count, SHCA_TEARDOWN_N, true, first, count);
	shca_teardown_expect_none(test, wc, count, SHCA_TEARDOWN_V);
}

static void shca_test_destroy_sweeps_only_the_victim(struct kunit *test)
{
	const struct shca_teardown_param *p = test->param_value;
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct ib_cq *scq, *rcq;
	struct ib_device *dev;
	u64 swept;

	dev = shca_teardown_bench(test, p->type, p->split, NULL, v, n, &scq, &rcq);
	shca_teardown_interleave(test, v, n, scq, rcq, 4);
	swept = shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT);

	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(v->qp));
	v->qp = NULL;
	KUNIT_EXPECT_EQ(test, swept + 8,
			shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT));
	shca_teardown_expect_neighbour(test, scq, rcq, 0, 4);
	KUNIT_EXPECT_EQ(test, 0, shca_test_drv_counter(dev, SHCA_DRV_CNT_STRAY));
}

static void shca_teardown_resume(void *hw)
{
	shca_hw_engine_pause(hw, false);
}

/**
 * shca_teardown_pause() - pause a device's execution units until the test ends
 * @test: the test
 * @dev: the device
 */
void shca_teardown_pause(struct kunit *test, struct ib_device *dev)
{
	struct shca_hw *hw = to_shca_dev(dev)->hw;

	shca_hw_engine_pause(hw, true);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_teardown_resume, hw));
}

/* Outstanding work is flushed by destroy, and the flush CQEs swept. */
static void shca_test_destroy_flushes_then_sweeps(struct kunit *test)
{
	const struct shca_teardown_param *p = test->param_value;
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct ib_cq *scq, *rcq;
	struct ib_device *dev;
	u64 swept, flushed;

	dev = shca_teardown_bench(test, p->type, p->split, NULL, v, n, &scq, &rcq);
	shca_teardown_msgs(test, n, SHCA_TEARDOWN_N, 0, 2, NULL, 0);
	shca_teardown_wait(test, scq, rcq, 2);
	shca_teardown_pause(test, dev);
	shca_teardown_msgs(test, v, SHCA_TEARDOWN_V, 0, 3, NULL, 0);
	shca_teardown_msgs(test, n, SHCA_TEARDOWN_N, 2, 2, NULL, 0);
	swept = shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT);
	flushed = shca_test_counter(dev, SHCA_CNT_FLUSHED);

	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(v->qp));
	v->qp = NULL;
	KUNIT_EXPECT_EQ(test, flushed + 6,
			shca_test_counter(dev, SHCA_CNT_FLUSHED));
	KUNIT_EXPECT_EQ(test, swept + 6,
			shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT));
	/* The neighbour's held-back work runs once the engine does. */
	shca_hw_engine_pause(to_shca_dev(dev)->hw, false);
	shca_teardown_wait(test, scq, rcq, 4);
	shca_teardown_expect_neighbour(test, scq, rcq, 0, 4);
}

/* The SRQ WQEs the victim's swept receives name go back to the SRQ. */
static void shca_test_destroy_returns_srq_wqes(struct kunit *test)
{
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct ib_device *dev, *unused;
	struct ib_cq *scq, *rcq;
	struct shca_srq *ssrq;
	struct ib_srq *srq;
	struct ib_wc *wc;
	u32 i;
	int j;

	shca_test_devices(test, false, &dev, &unused);
	srq = shca_test_srq_new(test, dev, 8, 0, 1)->srq;
	ssrq = to_shca_srq(srq);
	shca_teardown_bench(test, IB_QPT_RC, false, srq, v, n, &scq, &rcq);
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(n, 100 + i,
							     1024 + 64 * i,
							     64));
	KUNIT_EXPECT_EQ(test, 0, ssrq->nr_free);
	shca_teardown_interleave(test, v, n, scq, rcq, 3);

	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(v->qp));
	v->qp = NULL;
	KUNIT_EXPECT_EQ(test, 3, ssrq->nr_free);

	/* The neighbour's six completions; its receives name SRQ WQEs. */
	wc = shca_teardown_poll_all(test, scq, 6);
	shca_teardown_expect_stream(test, wc, 6, SHCA_TEARDOWN_N, false, 0, 3);
	for (j = 0; j < 6; j++)
		KUNIT_EXPECT_PTR_EQ(test, n->qp, wc[j].qp);
	KUNIT_EXPECT_EQ(test, 6, ssrq->nr_free);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ(test, 0, shca_test_post_recv(n, 200 + i, 1024,
							     64));
	KUNIT_EXPECT_EQ(test, -ENOMEM, shca_test_post_recv(n, 300, 1024, 64));
}

/* A QP reset for reuse starts with no CQE of its past in any CQ. */
static void shca_test_reset_sweeps_and_restarts(struct kunit *test)
{
	const struct shca_teardown_param *p = test->param_value;
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct shca_qp *sv;
	struct ib_cq *scq, *rcq;
	struct ib_device *dev;
	struct ib_wc *wc;
	u64 swept;
	u32 i;

	dev = shca_teardown_bench(test, p->type, p->split, NULL, v, n, &scq, &rcq);
	sv = to_shca_qp(v->qp);
	shca_teardown_interleave(test, v, n, scq, rcq, 3);
	/* And a receive still outstanding: RESET drops it, unflushed. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(v, 999, 1024, 64));
	swept = shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT);

	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(v->qp, &attr, IB_QP_STATE));
	KUNIT_EXPECT_EQ(test, swept + 6,
			shca_test_drv_counter(dev, SHCA_DRV_CNT_SWEPT));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, shca_test_qp_state(v));
	KUNIT_EXPECT_EQ(test, 0, sv->sq.pi);
	KUNIT_EXPECT_EQ(test, 0, sv->rq.pi);
	shca_teardown_expect_neighbour(test, scq, rcq, 0, 3);

	if (v->ah) {
		rdma_destroy_ah(v->ah, RDMA_DESTROY_AH_SLEEPABLE);
		v->ah = NULL;
	}
	shca_test_connect(test, v, v);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, shca_teardown_msg(v, SHCA_TEARDOWN_ID(SHCA_TEARDOWN_V,
									       1, i)));
	shca_teardown_wait(test, scq, rcq, 2);
	wc = shca_teardown_poll_all(test, scq, scq == rcq ? 4 : 2);
	shca_teardown_expect_stream(test, wc, scq == rcq ? 4 : 2, SHCA_TEARDOWN_V, false,
				    0, 2);
	for (i = 0; i < (scq == rcq ? 4 : 2); i++)
		KUNIT_EXPECT_EQ(test, 1, SHCA_TEARDOWN_EPOCH(wc[i].wr_id));
	KUNIT_EXPECT_EQ(test, 0, shca_test_drv_counter(dev, SHCA_DRV_CNT_STRAY));
}

struct shca_teardown_cq_holder {
	struct ib_cq *cq;
};

static void shca_teardown_cq_holder_free(void *ctx)
{
	struct shca_teardown_cq_holder *h = ctx;

	if (h->cq)
		ib_destroy_cq(h->cq);
}

static u32 shca_teardown_assoc(struct kunit *test, struct ib_cq *cq)
{
	struct shca_hw_cq_query q;

	KUNIT_EXPECT_EQ(test, 0, shca_cmd_query_cq(to_shca_dev(cq->device),
						   to_shca_cq(cq)->cqn, &q));
	return q.assoc;
}

/*
 * Create, resize with CQEs in it, refuse to destroy while a QP points at
 * it (the device's own association count, not ib_core's), then destroy.
 */
static void shca_test_destroy_cq_refused_while_a_qp_uses_it(struct kunit *test)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 8 };
	struct shca_tq *v = shca_test_tq_new(test);
	struct shca_teardown_cq_holder *h;
	struct ib_device *dev, *unused;
	struct ib_wc *wc;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	shca_test_devices(test, false, &dev, &unused);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_teardown_cq_holder_free,
							   h));
	h->cq = ib_create_cq(dev, NULL, NULL, NULL, &cq_attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(h->cq));
	KUNIT_EXPECT_EQ(test, 0, shca_teardown_assoc(test, h->cq));

	shca_test_tq_init_on(test, v, dev, IB_QPT_RC, NULL, h->cq, h->cq, 4);
	KUNIT_EXPECT_EQ(test, 2, shca_teardown_assoc(test, h->cq));
	KUNIT_EXPECT_EQ(test, -EBUSY, dev->ops.destroy_cq(h->cq, NULL));

	shca_test_connect(test, v, v);
	shca_teardown_msgs(test, v, SHCA_TEARDOWN_V, 0, 3, h->cq, 6);
	KUNIT_ASSERT_EQ(test, 0, ib_resize_cq(h->cq, 32));
	KUNIT_EXPECT_EQ(test, 63, h->cq->cqe);
	wc = shca_teardown_poll_all(test, h->cq, 6);
	shca_teardown_expect_stream(test, wc, 6, SHCA_TEARDOWN_V, false, 0, 3);
	shca_teardown_expect_stream(test, wc, 6, SHCA_TEARDOWN_V, true, 0, 3);

	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(v->qp));
	v->qp = NULL;
	KUNIT_EXPECT_EQ(test, 0, shca_teardown_assoc(test, h->cq));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_cq_user(h->cq, NULL));
	h->cq = NULL;
}

/* A QPN reissued at once gets no completion of its previous owner. */
static void shca_test_reissued_qpn_inherits_nothing(struct kunit *test)
{
	const struct shca_teardown_param *p = test->param_value;
	struct shca_tq *v = shca_test_tq_new(test), *n = shca_test_tq_new(test);
	struct shca_tq *w = shca_test_tq_new(test);
	struct ib_cq *scq, *rcq;
	struct ib_device *dev;
	struct ib_wc *wc;
	u32 qpn, gen;
	int i;

	dev = shca_teardown_bench(test, p->type, p->split, NULL, v, n, &scq, &rcq);
	shca_teardown_interleave(test, v, n, scq, rcq, 3);
	qpn = v->qp->qp_num;
	gen = to_shca_qp(v->qp)->gen;
	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(v->qp));
	v->qp = NULL;

	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(to_shca_dev(dev)->hw,
						      qpn));
	shca_test_tq_init_on(test, w, dev, p->type, NULL, scq, rcq, 16);
	KUNIT_ASSERT_EQ(test, qpn, w->qp->qp_num);
	KUNIT_EXPECT_NE(test, gen, to_shca_qp(w->qp)->gen);
	shca_test_connect(test, w, w);
	KUNIT_ASSERT_EQ(test, 0, shca_teardown_msg(w, SHCA_TEARDOWN_ID(SHCA_TEARDOWN_V, 1, 0)));

	/* The neighbour's six, and the new owner's own two; nothing old. */
	shca_teardown_wait(test, scq, rcq, 4);
	wc = shca_teardown_poll_all(test, scq, scq == rcq ? 8 : 4);
	for (i = 0; i < (scq == rcq ? 8 : 4); i++) {
		if (SHCA_TEARDOWN_TAG(wc[i].wr_id) != SHCA_TEARDOWN_V)
			continue;
		KUNIT_EXPECT_EQ(test, 1, SHCA_TEARDOWN_EPOCH(wc[i].wr_id));
		KUNIT_EXPECT_PTR_EQ(test, w->qp, wc[i].qp);
	}
	shca_teardown_expect_stream(test, wc, scq == rcq ? 8 : 4, SHCA_TEARDOWN_N, false,
				    0, 3);
}

static struct kunit_case shca_teardown_cases[] = {
	KUNIT_CASE_PARAM(shca_test_destroy_sweeps_only_the_victim,
			 shca_teardown_gen_params),
	KUNIT_CASE_PARAM(shca_test_destroy_flushes_then_sweeps,
			 shca_teardown_gen_params),
	KUNIT_CASE(shca_test_destroy_returns_srq_wqes),
	KUNIT_CASE_PARAM(shca_test_reset_sweeps_and_restarts,
			 shca_teardown_gen_params),
	KUNIT_CASE(shca_test_destroy_cq_refused_while_a_qp_uses_it),
	KUNIT_CASE_PARAM(shca_test_reissued_qpn_inherits_nothing,
			 shca_teardown_gen_params),
	{}
};

static struct kunit_suite shca_teardown_suite = {
	.name = "shca_teardown",
	.test_cases = shca_teardown_cases,
};

kunit_test_suites(&shca_teardown_suite);
