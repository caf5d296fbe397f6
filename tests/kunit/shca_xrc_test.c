// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite shca_xrc: XRC domains, XRC SRQs, XRC initiator and target
 * QPs through ib_core, delivery to the SRQ a message names, the refusals,
 * and the sweep of one target QP's CQEs from a CQ it shares, also with the
 * target held between its fence and its sweep while a neighbour target's
 * traffic goes on and the consumer polls.
 *
 * Kernel work requests cannot name a remote SRQ (struct ib_send_wr has no
 * field for it), so the initiator's sends are written into its ring here,
 * as libshca writes a process's, and doorbelled.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "shca_test.h"
#include "shca_ktest_qp.h"

#define XRC_MSG		64
#define XRC_SRQ_WR	8

/*
 * One device, a PD, the CQ every XRC SRQ completes in, the CQ of every
 * initiator's sends, a buffer.
 */
struct xrc_env {
	struct kunit *test;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_cq *scq;
	u8 *buf;
	u64 addr;
};

static void xrc_dealloc_pd(void *pd)
{
	ib_dealloc_pd(pd);
}

static void xrc_unmap(void *arg)
{
	struct xrc_env *e = arg;

	ib_dma_unmap_single(e->dev, e->addr, SHCA_TEST_BUF, DMA_BIDIRECTIONAL);
	kfree(e->buf);
}

static struct xrc_env *xrc_env_new(struct kunit *test)
{
	struct xrc_env *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct ib_device *b;

	KUNIT_ASSERT_NOT_NULL(test, e);
	e->test = test;
	shca_test_devices(test, false, &e->dev, &b);
	e->cq = shca_test_cq_new(test, e->dev, 64);
	e->scq = shca_test_cq_new(test, e->dev, 64);
	e->pd = ib_alloc_pd(e->dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->pd));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, xrc_dealloc_pd, e->pd));
	e->buf = kzalloc(SHCA_TEST_BUF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->buf);
	e->addr = ib_dma_map_single(e->dev, e->buf, SHCA_TEST_BUF,
				    DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_FALSE(test, ib_dma_mapping_error(e->dev, e->addr));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, xrc_unmap, e));
	return e;
}

static struct ib_xrcd *xrc_xrcd(struct xrc_env *e)
{
	struct ib_xrcd *xrcd = ib_alloc_xrcd_user(e->dev, NULL, NULL);

	KUNIT_ASSERT_FALSE(e->test, IS_ERR(xrcd));
	return xrcd;
}

static struct ib_srq *xrc_srq(struct xrc_env *e, struct ib_xrcd *xrcd)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_XRC,
		.attr = { .max_wr = XRC_SRQ_WR, .max_sge = 1 },
		.ext.cq = e->cq,
		.ext.xrc.xrcd = xrcd,
	};
	struct ib_srq *srq = ib_create_srq(e->pd, &init);

	KUNIT_ASSERT_FALSE(e->test, IS_ERR(srq));
	return srq;
}

static struct ib_qp *xrc_qp(struct xrc_env *e, enum ib_qp_type type,
			    struct ib_xrcd *xrcd)
{
	struct ib_qp_init_attr init = {
		.qp_type = type,
		.send_cq = type == IB_QPT_XRC_INI ? e->scq : NULL,
		.xrcd = xrcd,
		.cap = { .max_send_wr = type == IB_QPT_XRC_INI ? 8 : 0,
			 .max_send_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE(e->test, IS_ERR(qp));
	return qp;
}

/* RESET to RTR (a target) or RTS (an initiator), connected to @peer. */
static int xrc_connect(struct xrc_env *e, struct ib_qp *qp, u32 peer)
{
	bool ini = qp->qp_type == IB_QPT_XRC_INI;
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = ini ? 0 : IB_ACCESS_REMOTE_WRITE,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	err = shca_ktest_av(e->dev, e->dev, &a.ah_attr);
	if (err)
		return err;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = peer;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   (ini ? 0 : IB_QP_MAX_DEST_RD_ATOMIC |
			    IB_QP_MIN_RNR_TIMER));
	if (err || !ini)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 4;
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 4;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static int xrc_post_recv(struct xrc_env *e, struct ib_srq *srq, u64 wr_id,
			 u32 off)
{
	struct ib_sge sge = { .addr = e->addr + off, .length = XRC_MSG,
			      .lkey = e->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_srq_recv(srq, &wr, NULL);
}

/* A signaled SEND to remote XRC SRQ @srqn, written as a process writes it. */
static void xrc_send(struct xrc_env *e, struct ib_qp *ini, u32 srqn,
		     u64 wr_id, u32 off)
{
	struct shca_qp *qp = to_shca_qp(ini);
	struct shca_hw_send_wqe *w;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	KUNIT_ASSERT_FALSE(e->test, shca_wq_full(&qp->sq));
	w = shca_wq_send_wqe(&qp->sq);
	memset(w, 0, sizeof(*w));
	w->opcode = SHCA_WQE_SEND;
	w->flags = SHCA_WQE_F_SIGNALED;
	w->num_sge = 1;
	w->xrc_srqn = srqn;
	w->sge[0].addr = e->addr + off;
	w->sge[0].length = XRC_MSG;
	w->sge[0].lkey = e->pd->local_dma_lkey;
	shca_wq_produce(&qp->sq, wr_id);
	/* The WQE must be visible before the index that names it. */
	smp_store_release(&qp->dbrec->sq_pi, qp->sq.pi);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	shca_hw_ring_sq(to_shca_dev(ini->device)->hw, qp->qpn);
}

/* Poll @n completions off @cq. */
static void xrc_poll(struct xrc_env *e, struct ib_cq *cq, struct ib_wc *wc,
		     int n)
{
	KUNIT_ASSERT_EQ(e->test, n, shca_test_poll_cq(cq, wc, n));
}

static void shca_test_xrc_ebusy(struct kunit *test)
{
	struct xrc_env *e = xrc_env_new(test);
	struct ib_xrcd *xrcd = xrc_xrcd(e);
	struct ib_srq *srq = xrc_srq(e, xrcd);
	struct ib_qp *tgt;

	/* The driver's own refusals, under ib_core's usecnt checks. */
	KUNIT_EXPECT_EQ(test, -EBUSY, e->dev->ops.dealloc_xrcd(xrcd, NULL));
	KUNIT_EXPECT_EQ(test, -EBUSY, e->dev->ops.destroy_cq(e->cq, NULL));
	ib_destroy_srq(srq);
	tgt = xrc_qp(e, IB_QPT_XRC_TGT, xrcd);
	KUNIT_EXPECT_EQ(test, -EBUSY, e->dev->ops.dealloc_xrcd(xrcd, NULL));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(tgt));
	KUNIT_EXPECT_EQ(test, 0, ib_dealloc_xrcd_user(xrcd, NULL));
}

static void shca_test_xrc_bad_create(struct kunit *test)
{
	struct xrc_env *e = xrc_env_new(test);
	struct ib_xrcd *xrcd = xrc_xrcd(e);
	struct ib_qp_init_attr ini = {
		.qp_type = IB_QPT_XRC_INI, .send_cq = e->cq, .recv_cq = e->cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 }, .port_num = 1,
	};
	struct ib_qp_init_attr tgt = {
		.qp_type = IB_QPT_XRC_TGT, .port_num = 1,
	};
	struct ib_qp *qp;

	/* An initiator receives nothing; a target needs a domain. */
	qp = ib_create_qp(e->pd, &ini);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(qp));
	qp = ib_create_qp(e->pd, &tgt);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(qp));
	KUNIT_EXPECT_EQ(test, 0, ib_dealloc_xrcd_user(xrcd, NULL));
}

static void shca_test_xrc_delivery(struct kunit *test)
{
	struct xrc_env *e = xrc_env_new(test);
	struct ib_xrcd *xrcd = xrc_xrcd(e), *other = xrc_xrcd(e);
	struct ib_srq *srq = xrc_srq(e, xrcd), *foreign = xrc_srq(e, other);
	struct ib_qp *tgt = xrc_qp(e, IB_QPT_XRC_TGT, xrcd);
	struct ib_qp *ini = xrc_qp(e, IB_QPT_XRC_INI, NULL);
	struct ib_wc wc[2];

	KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, tgt, ini->qp_num));
	KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, ini, tgt->qp_num));
	KUNIT_ASSERT_EQ(test, 0, xrc_post_recv(e, srq, 77, 1024));
	KUNIT_ASSERT_EQ(test, 0, xrc_post_recv(e, foreign, 88, 2048));
	memset(e->buf, 0x5a, XRC_MSG);
	xrc_send(e, ini, srq->ext.xrc.srq_num, 1, 0);
	xrc_poll(e, e->scq, wc, 1);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[0].status);
	KUNIT_EXPECT_EQ(test, 1ULL, wc[0].wr_id);
	/* Completed on the SRQ's CQ, for the target QP. */
	xrc_poll(e, e->cq, wc, 1);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[0].status);
	KUNIT_EXPECT_EQ(test, IB_WC_RECV, wc[0].opcode);
	KUNIT_EXPECT_EQ(test, 77ULL, wc[0].wr_id);
	KUNIT_EXPECT_PTR_EQ(test, tgt, wc[0].qp);
	KUNIT_EXPECT_EQ(test, ini->qp_num, wc[0].src_qp);
	KUNIT_EXPECT_EQ(test, (u32)XRC_MSG, wc[0].byte_len);
	KUNIT_EXPECT_EQ(test, 0x5a, e->buf[1024 + XRC_MSG - 1]);
	KUNIT_EXPECT_EQ(test, 0, e->buf[2048]);

	/* An SRQ of another domain: an Invalid Request NAK. */
	xrc_send(e, ini, foreign->ext.xrc.srq_num, 2, 0);
	xrc_poll(e, e->scq, wc, 1);
	KUNIT_EXPECT_EQ(test, 2ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_REM_INV_REQ_ERR, wc[0].status);
	KUNIT_EXPECT_EQ(test, 0, e->buf[2048]);

	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(ini));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(tgt));
	ib_destroy_srq(foreign);
	ib_destroy_srq(srq);
	KUNIT_EXPECT_EQ(test, 0, ib_dealloc_xrcd_user(other, NULL));
	KUNIT_EXPECT_EQ(test, 0, ib_dealloc_xrcd_user(xrcd, NULL));
}

/* Two target QPs deliver into one SRQ; destroying one sweeps only its CQE. */
static void shca_test_xrc_sweep(struct kunit *test)
{
	struct xrc_env *e = xrc_env_new(test);
	struct ib_xrcd *xrcd = xrc_xrcd(e);
	struct ib_srq *srq = xrc_srq(e, xrcd);
	struct ib_qp *tgt[2], *ini[2];
	struct shca_srq *ssrq = to_shca_srq(srq);
	struct ib_wc wc[4];
	u32 free_before;
	int i;

	for (i = 0; i < 2; i++) {
		tgt[i] = xrc_qp(e, IB_QPT_XRC_TGT, xrcd);
		ini[i] = xrc_qp(e, IB_QPT_XRC_INI, NULL);
	}
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, tgt[i], ini[i]->qp_num));
		KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, ini[i], tgt[i]->qp_num));
		KUNIT_ASSERT_EQ(test, 0, xrc_post_recv(e, srq, 10 + i, 1024));
	}
	free_before = ssrq->nr_free;
	/*
	 * One after the other, so that target 0 takes the first WQE; once
	 * both are acknowledged, both receives are queued, unpolled.
	 */
	for (i = 0; i < 2; i++) {
		xrc_send(e, ini[i], srq->ext.xrc.srq_num, i, 0);
		xrc_poll(e, e->scq, wc, 1);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[0].status);
	}
	shca_test_wait_cqes(test, e->cq, 2);
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(tgt[0]));
	/* The victim's receive went, and its slot came back. */
	KUNIT_EXPECT_EQ(test, free_before + 1, ssrq->nr_free);
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll_cq(e->cq, wc, 1));
	KUNIT_EXPECT_PTR_EQ(test, tgt[1], wc[0].qp);
	KUNIT_EXPECT_EQ(test, 11ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(e->cq, 4, wc));
	KUNIT_EXPECT_EQ(test, 0ULL,
			shca_test_drv_counter(e->dev, SHCA_DRV_CNT_STRAY));
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(ini[i]));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(tgt[1]));
	ib_destroy_srq(srq);
	KUNIT_EXPECT_EQ(test, 0, ib_dealloc_xrcd_user(xrcd, NULL));
}

#define XRC_HOLD_WAIT	(5 * HZ)

/* A destroy or reset of a target QP on a thread of its own. */
struct xrc_async {
	struct ib_qp *qp;
	struct shca_hw_window *win;
	bool reset;
	int ret;
	struct completion done;
};

static int xrc_async_fn(void *arg)
{
	struct xrc_async *a = arg;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	a->ret = a->reset ? ib_modify_qp(a->qp, &attr, IB_QP_STATE) :
			    ib_destroy_qp(a->qp);
	complete_all(&a->done);
	return 0;
}

/* On the way out, even after a failed assertion: let it finish. */
static void xrc_async_wait(void *arg)
{
	struct xrc_async *a = arg;

	shca_hw_window_release(a->win);
	wait_for_completion(&a->done);
	shca_hw_window_set_qpn(a->win, 0);
}

static const bool xrc_race_reset[] = { false, true };

static void xrc_race_desc(const bool *reset, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", *reset ? "reset" : "destroy");
}

KUNIT_ARRAY_PARAM(xrc_race, xrc_race_reset, xrc_race_desc);

/* Send from @ini to @srqn and wait until it is acknowledged. */
static void xrc_send_acked(struct xrc_env *e, struct ib_qp *ini, u32 srqn,
			   u64 wr_id)
{
	struct ib_wc wc;

	xrc_send(e, ini, srqn, wr_id, 0);
	xrc_poll(e, e->scq, &wc, 1);
	KUNIT_EXPECT_EQ(e->test, IB_WC_SUCCESS, wc.status);
	KUNIT_EXPECT_EQ(e->test, wr_id, wc.wr_id);
}

/*
 * Two targets deliver into one SRQ and its CQ.  The victim's destroy (or
 * reset) is held between its fence and its sweep: meanwhile the
 * neighbour receives another message and the consumer polls the
 * neighbour's first, and nothing is swept.  Released, the sweep removes
 * the victim's two CQEs and returns their slots to the SRQ; the
 * neighbour's second CQE is still there, whole.
 */
static void shca_test_xrc_sweep_in_fence_window(struct kunit *test)
{
	const bool *reset = test->param_value;
	struct xrc_env *e = xrc_env_new(test);
	struct ib_xrcd *xrcd = xrc_xrcd(e);
	struct ib_srq *srq = xrc_srq(e, xrcd);
	struct shca_srq *ssrq = to_shca_srq(srq);
	struct ib_qp *tgt[2], *ini[2];
	u32 srqn = srq->ext.xrc.srq_num;
	struct shca_hw_window *win;
	struct task_struct *t;
	struct xrc_async *a;
	u64 swept, passes;
	u32 nr_free;
	struct ib_wc wc[2];
	int i;

	for (i = 0; i < 2; i++) {
		tgt[i] = xrc_qp(e, IB_QPT_XRC_TGT, xrcd);
		ini[i] = xrc_qp(e, IB_QPT_XRC_INI, NULL);
		KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, tgt[i], ini[i]->qp_num));
		KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, ini[i], tgt[i]->qp_num));
	}
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0, xrc_post_recv(e, srq, 10 + i, 1024));
	/* Neighbour, victim, victim: receives 10, 11 and 12. */
	xrc_send_acked(e, ini[1], srqn, 1);
	xrc_send_acked(e, ini[0], srqn, 2);
	xrc_send_acked(e, ini[0], srqn, 3);
	shca_test_wait_cqes(test, e->cq, 3);
	swept = shca_test_drv_counter(e->dev, SHCA_DRV_CNT_SWEPT);

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	a->qp = tgt[0];
	a->reset = *reset;
	a->win = shca_hw_window(to_shca_dev(e->dev)->hw, SHCA_WIN_FENCE_SWEEP);
	win = a->win;
	init_completion(&a->done);
	shca_hw_window_set_qpn(win, tgt[0]->qp_num);
	passes = shca_hw_window_passes(win);
	shca_hw_window_arm(win);
	t = kthread_run(xrc_async_fn, a, "shca_xrc_race");
	if (IS_ERR(t)) {
		shca_hw_window_release(win);
		shca_hw_window_set_qpn(win, 0);
		KUNIT_FAIL_AND_ABORT(test, "no thread: %ld", PTR_ERR(t));
	}
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, xrc_async_wait,
							   a));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, XRC_HOLD_WAIT));
	KUNIT_EXPECT_EQ(test, passes + 1, shca_hw_window_passes(win));

	/* In the window: the neighbour's traffic and the consumer go on. */
	xrc_send_acked(e, ini[1], srqn, 4);
	shca_test_wait_cqes(test, e->cq, 4);
	KUNIT_ASSERT_EQ(test, 1, ib_poll_cq(e->cq, 1, wc));
	KUNIT_EXPECT_PTR_EQ(test, tgt[1], wc[0].qp);
	KUNIT_EXPECT_EQ(test, 10ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[0].status);
	KUNIT_EXPECT_FALSE(test, completion_done(&a->done));
	KUNIT_EXPECT_EQ(test, swept,
			shca_test_drv_counter(e->dev, SHCA_DRV_CNT_SWEPT));
	nr_free = READ_ONCE(ssrq->nr_free);

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&a->done,
							    XRC_HOLD_WAIT));
	KUNIT_ASSERT_EQ(test, 0, a->ret);
	KUNIT_EXPECT_EQ(test, swept + 2,
			shca_test_drv_counter(e->dev, SHCA_DRV_CNT_SWEPT));
	KUNIT_EXPECT_EQ(test, nr_free + 2, READ_ONCE(ssrq->nr_free));
	/* The neighbour's second message, and nothing of the victim. */
	KUNIT_ASSERT_EQ(test, 1, ib_poll_cq(e->cq, 2, wc));
	KUNIT_EXPECT_PTR_EQ(test, tgt[1], wc[0].qp);
	KUNIT_EXPECT_EQ(test, 13ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[0].status);
	KUNIT_EXPECT_EQ(test, ini[1]->qp_num, wc[0].src_qp);
	KUNIT_EXPECT_EQ(test, 0ULL,
			shca_test_drv_counter(e->dev, SHCA_DRV_CNT_STRAY));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));

	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(ini[i]));
	if (*reset)
		KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(tgt[0]));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(tgt[1]));
	ib_destroy_srq(srq);
	KUNIT_EXPECT_EQ(test, 0, ib_dealloc_xrcd_user(xrcd, NULL));
}

/**
 * struct xrc_stall_obj - the XRC SRQ a destroy names
 * @sdev: its device
 * @srq: the SRQ
 * @srqn: its number
 */
struct xrc_stall_obj {
	struct shca_dev *sdev;
	struct ib_srq *srq;
	u32 srqn;
};

static int xrc_stall_destroy(void *arg)
{
	struct xrc_stall_obj *o = arg;

	ib_destroy_srq(o->srq);
	return 0;
}

/* Asking is itself a command: QUERY_SRQ, until there is no SRQ. */
static bool xrc_stall_gone(void *arg)
{
	struct xrc_stall_obj *o = arg;
	struct shca_hw_cmd query = {
		.opcode = SHCA_CMD_QUERY_SRQ,
		.index = o->srqn,
	};

	return shca_cmd_exec(o->sdev, &query) != 0;
}

/*
 * A message on an XRC SRQ holds the SRQ until it is done; it is held in
 * the middle (its receive CQE in the cqe_publish window).  DESTROY_SRQ
 * takes the SRQ out of the table and waits for it; meanwhile the device's
 * other commands (a query, a CQ created and destroyed) complete.  With the
 * wait under the device-wide command mutex they would wait too.
 */
static void shca_test_xrc_destroy_srq_waits_alone(struct kunit *test)
{
	struct xrc_env *e = xrc_env_new(test);
	struct ib_xrcd *xrcd = xrc_xrcd(e);
	struct ib_srq *srq = xrc_srq(e, xrcd);
	struct ib_qp *tgt = xrc_qp(e, IB_QPT_XRC_TGT, xrcd);
	struct ib_qp *ini = xrc_qp(e, IB_QPT_XRC_INI, NULL);
	struct shca_hw_window *win;
	struct xrc_stall_obj *o;
	struct shca_test_stall *s;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, tgt, ini->qp_num));
	KUNIT_ASSERT_EQ(test, 0, xrc_connect(e, ini, tgt->qp_num));
	KUNIT_ASSERT_EQ(test, 0, xrc_post_recv(e, srq, 1, 1024));
	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	o->sdev = to_shca_dev(e->dev);
	o->srq = srq;
	o->srqn = to_shca_srq(srq)->srqn;
	s = shca_test_stall_new(test, e->dev, xrc_stall_destroy, xrc_stall_gone,
				o);
	win = shca_test_window_arm(test, e->dev, SHCA_WIN_CQE_PUBLISH,
				   tgt->qp_num);
	memset(e->buf, 0x3c, XRC_MSG);
	xrc_send(e, ini, o->srqn, 1, 0);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_TEST_WAIT));

	shca_test_stall_run(s);
	shca_test_stall_expect_alone(test, s);
	KUNIT_EXPECT_EQ(test, SHCA_HW_WIN_HELD, shca_hw_window_state(win));

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&s->cmd_done,
							    SHCA_TEST_WAIT));
	KUNIT_EXPECT_EQ(test, 0, s->cmd_ret);
	/* The message in flight was taken whole before the SRQ went. */
	xrc_poll(e, e->scq, &wc, 1);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
	KUNIT_EXPECT_EQ(test, 0x3c, e->buf[1024 + XRC_MSG - 1]);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(ini));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(tgt));
	KUNIT_EXPECT_EQ(test, 0, ib_dealloc_xrcd_user(xrcd, NULL));
}

static struct kunit_case shca_xrc_cases[] = {
	KUNIT_CASE(shca_test_xrc_ebusy),
	KUNIT_CASE(shca_test_xrc_bad_create),
	KUNIT_CASE(shca_test_xrc_delivery),
	KUNIT_CASE(shca_test_xrc_sweep),
	KUNIT_CASE(shca_test_xrc_destroy_srq_waits_alone),
	KUNIT_CASE_PARAM(shca_test_xrc_sweep_in_fence_window,
			 xrc_race_gen_params),
	{}
};

static struct kunit_suite shca_xrc_suite = {
	.name = "shca_xrc",
	.test_cases = shca_xrc_cases,
};

kunit_test_suite(shca_xrc_suite);
