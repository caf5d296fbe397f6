// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit helpers shared by the shca suites: netdevs and shca devices that
 * live as long as a test, a kernel verbs consumer - PDs, CQs, QPs
 * connected the way ULPs connect them, buffers and polling - MPT entries
 * made as reg_user_mr makes them, and hardware models of a test's own.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/rtnetlink.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

/* What a minimal Ethernet driver does with a packet: drop it. */
static netdev_tx_t shca_test_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops shca_test_netdev_ops = {
	.ndo_start_xmit = shca_test_xmit,
};

/**
 * shca_test_alloc_netdev() - an unregistered Ethernet netdev
 * @test: the test
 *
 * It has a random MAC and takes jumbo frames.
 *
 * Return: the netdev.
 */
struct net_device *shca_test_alloc_netdev(struct kunit *test)
{
	struct net_device *ndev = alloc_etherdev(0);

	KUNIT_ASSERT_NOT_NULL(test, ndev);
	eth_hw_addr_random(ndev);
	ndev->netdev_ops = &shca_test_netdev_ops;
	ndev->max_mtu = 9000;
	return ndev;
}

static void shca_test_free_netdev(void *ndev)
{
	struct net_device *dev = ndev;

	if (dev->reg_state == NETREG_REGISTERED)
		unregister_netdev(dev);
	free_netdev(dev);
}

/**
 * shca_test_netdev() - a registered, running Ethernet netdev
 * @test: the test; the netdev lives as long as it
 *
 * Return: the netdev.
 */
struct net_device *shca_test_netdev(struct kunit *test)
{
	struct net_device *ndev;
	int err;

	ndev = shca_test_alloc_netdev(test);
	err = register_netdev(ndev);
	if (err)
		free_netdev(ndev);
	KUNIT_ASSERT_EQ(test, 0, err);
	err = kunit_add_action_or_reset(test, shca_test_free_netdev, ndev);
	KUNIT_ASSERT_EQ(test, 0, err);
	rtnl_lock();
	err = dev_open(ndev, NULL);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, 0, err);
	return ndev;
}

static void shca_test_unregister(void *ibdev)
{
	ib_unregister_device_and_put(ibdev);
}

/**
 * shca_test_add() - create a shca device and hold it until the test ends
 * @test: the test
 * @name: the device name
 * @ndev: the netdev to bind it to
 *
 * Return: the device.
 */
struct ib_device *shca_test_add(struct kunit *test, const char *name,
				struct net_device *ndev)
{
	return shca_test_add_flags(test, name, ndev, 0);
}

/**
 * shca_test_add_flags() - shca_test_add(), with SHCA_DEV_F_* flags
 * @test: the test; the device is unregistered when it ends
 * @name: the device's name
 * @ndev: its netdev
 * @flags: SHCA_DEV_F_*
 *
 * Return: the device, referenced until the test ends.
 */
struct ib_device *shca_test_add_flags(struct kunit *test, const char *name,
				      struct net_device *ndev, u32 flags)
{
	struct ib_device *ibdev;
	int err;

	KUNIT_ASSERT_EQ(test, 0, shca_dev_add_flags(name, ndev, flags));
	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	err = kunit_add_action_or_reset(test, shca_test_unregister, ibdev);
	KUNIT_ASSERT_EQ(test, 0, err);
	return ibdev;
}

/**
 * shca_test_devices() - one or two shca devices for a test
 * @test: the test
 * @two: two devices on two netdevs, or one device used twice (loopback)
 * @a: set to the first device
 * @b: set to the second, or to @a
 */
void shca_test_devices(struct kunit *test, bool two, struct ib_device **a,
		       struct ib_device **b)
{
	*a = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	*b = two ? shca_test_add(test, SHCA_TEST_DEV2, shca_test_netdev(test)) :
		   *a;
}

/**
 * shca_test_shared_del() - remove a suite's shared device and its netdev
 * @sd: the suite's device; empty after, and empty is fine
 */
void shca_test_shared_del(struct shca_test_shared *sd)
{
	if (sd->dev)
		ib_unregister_device_and_put(sd->dev);
	/* Gone with its netdev, if it was made but never found. */
	if (sd->ndev)
		shca_test_free_netdev(sd->ndev);
	sd->dev = NULL;
	sd->ndev = NULL;
}

/**
 * shca_test_shared_dev() - a suite's shared device, made if need be
 * @test: the case asking
 * @sd: the suite's device
 * @flags: SHCA_DEV_F_* it must have been made with; a device made with
 *	others is removed and a new one made
 *
 * Return: the device, which lives until shca_test_shared_del().
 */
struct ib_device *shca_test_shared_dev(struct kunit *test,
				       struct shca_test_shared *sd, u32 flags)
{
	struct net_device *ndev;
	int err;

	if (sd->dev && sd->flags == flags)
		return sd->dev;
	shca_test_shared_del(sd);
	ndev = shca_test_alloc_netdev(test);
	err = register_netdev(ndev);
	if (err)
		free_netdev(ndev);
	KUNIT_ASSERT_EQ(test, 0, err);
	sd->ndev = ndev;
	rtnl_lock();
	err = dev_open(ndev, NULL);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_EQ(test, 0, shca_dev_add_flags(sd->name, ndev, flags));
	sd->dev = ib_device_get_by_name(sd->name, RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, sd->dev);
	sd->flags = flags;
	return sd->dev;
}

static void shca_test_comp(struct ib_cq *cq, void *ctx)
{
	struct shca_tq *tq = ctx;

	atomic_inc(&tq->comp_events);
}

static void shca_test_cq_event(struct ib_event *ev, void *ctx)
{
	struct shca_tq *tq = ctx;

	set_bit(ev->event, &tq->events);
}

static void shca_test_qp_event(struct ib_event *ev, void *ctx)
{
	struct shca_tq *tq = ctx;

	set_bit(ev->event, &tq->events);
}

static void shca_test_tq_fini(void *ctx)
{
	struct shca_tq *tq = ctx;

	if (!IS_ERR_OR_NULL(tq->ah))
		rdma_destroy_ah(tq->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(tq->qp))
		ib_destroy_qp(tq->qp);
	if (!IS_ERR_OR_NULL(tq->cq) && !tq->cq_shared)
		ib_destroy_cq(tq->cq);
	if (tq->buf && tq->addr)
		ib_dma_unmap_single(tq->dev, tq->addr, SHCA_TEST_BUF,
				    DMA_BIDIRECTIONAL);
	kfree(tq->buf);
	if (!IS_ERR_OR_NULL(tq->pd) && !tq->srq)
		ib_dealloc_pd(tq->pd);
}

static void shca_test_tq_setup(struct kunit *test, struct shca_tq *tq,
			       struct ib_device *dev, enum ib_qp_type type,
			       struct ib_srq *srq, int cq_depth,
			       struct ib_cq *scq, struct ib_cq *rcq, u32 wr)
{
	struct ib_cq_init_attr cq_attr = { .cqe = cq_depth };
	struct ib_qp_init_attr init = {
		.qp_type = type,
		.srq = srq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = wr,
			.max_recv_wr = srq ? 0 : wr,
			.max_send_sge = 4,
			.max_recv_sge = srq ? 0 : 4,
			.max_inline_data = 64,
		},
		.port_num = 1,
		.event_handler = shca_test_qp_event,
		.qp_context = tq,
	};
	int err;

	memset(tq, 0, sizeof(*tq));
	tq->test = test;
	tq->dev = dev;
	tq->srq = srq;
	tq->rnr_retry = 2;
	tq->retry_cnt = 2;
	err = kunit_add_action_or_reset(test, shca_test_tq_fini, tq);
	KUNIT_ASSERT_EQ(test, 0, err);
	/* A QP on an SRQ shares the SRQ's PD. */
	tq->pd = srq ? srq->pd : ib_alloc_pd(dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tq->pd));
	tq->lkey = tq->pd->local_dma_lkey;
	tq->rkey = tq->pd->unsafe_global_rkey;
	tq->buf = kzalloc(SHCA_TEST_BUF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tq->buf);
	tq->addr = ib_dma_map_single(dev, tq->buf, SHCA_TEST_BUF,
				     DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_FALSE(test, ib_dma_mapping_error(dev, tq->addr));
	if (scq) {
		tq->cq = scq;
		tq->rcq = rcq != scq ? rcq : NULL;
		tq->cq_shared = true;
	} else {
		tq->cq = ib_create_cq(dev, shca_test_comp, shca_test_cq_event,
				      tq, &cq_attr);
		KUNIT_ASSERT_FALSE(test, IS_ERR(tq->cq));
		rcq = tq->cq;
	}
	init.send_cq = tq->cq;
	init.recv_cq = rcq;
	tq->qp = ib_create_qp(tq->pd, &init);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(tq->qp), "create_qp: %ld",
			       PTR_ERR(tq->qp));
}

/**
 * shca_test_tq_init() - set up one end of a connection, with its own CQ
 * @test: the test; teardown is registered with it
 * @tq: the end, from shca_test_tq_new()
 * @dev: the device
 * @type: the QP type
 * @srq: an SRQ for the QP to receive from, or NULL
 * @cq_depth: CQEs the CQ must hold
 * @wr: work requests each queue must hold
 */
void shca_test_tq_init(struct kunit *test, struct shca_tq *tq,
		       struct ib_device *dev, enum ib_qp_type type,
		       struct ib_srq *srq, int cq_depth, u32 wr)
{
	shca_test_tq_setup(test, tq, dev, type, srq, cq_depth, NULL, NULL, wr);
}

/**
 * shca_test_tq_init_on() - set up one end of a connection on given CQs
 * @test: the test; teardown is registered with it
 * @tq: the end, from shca_test_tq_new()
 * @dev: the device
 * @type: the QP type
 * @srq: an SRQ for the QP to receive from, or NULL
 * @scq: the send CQ, from shca_test_cq_new(); it outlives the end
 * @rcq: the receive CQ; may be @scq
 * @wr: work requests each queue must hold
 */
void shca_test_tq_init_on(struct kunit *test, struct shca_tq *tq,
			  struct ib_device *dev, enum ib_qp_type type,
			  struct ib_srq *srq, struct ib_cq *scq,
			  struct ib_cq *rcq, u32 wr)
{
	shca_test_tq_setup(test, tq, dev, type, srq, 0, scq, rcq, wr);
}

static void shca_test_cq_free(void *cq)
{
	ib_destroy_cq(cq);
}

/**
 * shca_test_cq_new_flags() - a CQ with creation flags that outlives every
 *	end created after it
 * @test: the test; the CQ is destroyed when it ends
 * @dev: the device
 * @depth: CQEs it must hold
 * @flags: IB_UVERBS_CQ_FLAGS_*
 *
 * Return: the CQ, polled directly.
 */
struct ib_cq *shca_test_cq_new_flags(struct kunit *test, struct ib_device *dev,
				     int depth, u32 flags)
{
	struct ib_cq_init_attr attr = { .cqe = depth, .flags = flags };
	struct ib_cq *cq;

	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_test_cq_free, cq));
	return cq;
}

/**
 * shca_test_wait_eq() - wait until an EQ holds what a test expects
 * @test: the test; it fails after SHCA_TEST_WAIT
 * @dev: the device
 * @eqn: the EQ
 * @held: EQEs written and not yet acknowledged
 * @owing: objects owing the EQ an event
 *
 * A CQE is visible a moment before its event is raised: a test that saw
 * one waits here for the EQ to catch up.
 */
void shca_test_wait_eq(struct kunit *test, struct ib_device *dev, u32 eqn,
		       u64 held, u32 owing)
{
	unsigned long end = jiffies + SHCA_TEST_WAIT;
	struct shca_hw_eq_state st;

	for (;;) {
		shca_hw_eq_query(to_shca_dev(dev)->hw, eqn, &st);
		if (st.written - st.acked == held && st.owing == owing)
			return;
		KUNIT_ASSERT_FALSE_MSG(test, time_after(jiffies, end),
				       "EQ %u holds %llu, %u owing; not %llu, %u",
				       eqn, st.written - st.acked, st.owing,
				       held, owing);
		usleep_range(50, 200);
	}
}

/**
 * shca_test_cq_new_on() - a CQ on a completion vector, with a handler, that
 *	outlives every end created after it
 * @test: the test; the CQ is destroyed when it ends
 * @dev: the device
 * @depth: CQEs it must hold
 * @vector: its completion vector
 * @handler: its completion handler, or NULL
 * @ctx: the handler's argument
 *
 * Return: the CQ.
 */
struct ib_cq *shca_test_cq_new_on(struct kunit *test, struct ib_device *dev,
				  int depth, u32 vector,
				  ib_comp_handler handler, void *ctx)
{
	struct ib_cq_init_attr attr = { .cqe = depth, .comp_vector = vector };
	struct ib_cq *cq;

	cq = ib_create_cq(dev, handler, NULL, ctx, &attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(cq), "create_cq on vector %u: %ld",
			       vector, PTR_ERR(cq));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_test_cq_free, cq));
	return cq;
}

/**
 * shca_test_cq_new() - a CQ that outlives every end created after it
 * @test: the test; the CQ is destroyed when it ends
 * @dev: the device
 * @depth: CQEs it must hold
 *
 * Return: the CQ, polled directly.
 */
struct ib_cq *shca_test_cq_new(struct kunit *test, struct ib_device *dev,
			       int depth)
{
	return shca_test_cq_new_flags(test, dev, depth, 0);
}

/**
 * shca_test_to_rts() - take a QP from RESET to RTS, connected to a peer
 * @tq: the QP's end
 * @peer: the other end; RC and UC QPs connect to its QP, UD QPs get an AH
 *	to it
 *
 * Return: 0 or the first error ib_modify_qp() returned.
 */
int shca_test_to_rts(struct shca_tq *tq, struct shca_tq *peer)
{
	const struct shca_ktest_conn conn = {
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_ATOMIC,
		.qkey = SHCA_TEST_QKEY,
		.psn = 1,
		.timeout = 4,
		.retry_cnt = tq->retry_cnt,
		.rnr_retry = tq->rnr_retry,
	};
	struct ib_ah *ah;
	int err;

	err = shca_ktest_qp_to_rts(tq->qp, peer->dev, peer->qp->qp_num, &conn);
	if (err || tq->qp->qp_type != IB_QPT_UD)
		return err;
	ah = shca_ktest_create_ah(tq->pd, peer->dev);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	tq->ah = ah;
	return 0;
}

/**
 * shca_test_connect() - bring both ends of a connection to RTS
 * @test: the test
 * @a: one end
 * @b: the other
 */
void shca_test_connect(struct kunit *test, struct shca_tq *a,
		       struct shca_tq *b)
{
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(a, b));
	if (a != b)
		KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(b, a));
}

#define SHCA_TEST_TIMEOUT_MS	5000

/**
 * shca_test_poll_cq() - poll a CQ until it gives @n completions
 * @cq: the CQ
 * @wc: room for @n
 * @n: how many to wait for, at most SHCA_TEST_TIMEOUT_MS
 *
 * Return: how many were polled, or a negative errno.
 */
int shca_test_poll_cq(struct ib_cq *cq, struct ib_wc *wc, int n)
{
	unsigned long end = jiffies + msecs_to_jiffies(SHCA_TEST_TIMEOUT_MS);
	int got = 0, r;

	while (got < n) {
		r = ib_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got < n) {
			if (time_after(jiffies, end))
				break;
			usleep_range(50, 200);
		}
	}
	return got;
}

/**
 * shca_test_poll() - poll an end's CQ until it gives @n completions
 * @tq: the end
 * @wc: room for @n
 * @n: how many to wait for, at most SHCA_TEST_TIMEOUT_MS
 *
 * Return: how many were polled, or a negative errno.
 */
int shca_test_poll(struct shca_tq *tq, struct ib_wc *wc, int n)
{
	return shca_test_poll_cq(tq->cq, wc, n);
}

/**
 * shca_test_wait_cqes() - wait until a CQ holds @n unpolled CQEs
 * @test: the test; fails if they do not come in SHCA_TEST_TIMEOUT_MS
 * @cq: the CQ
 * @n: how many
 *
 * Reads the device's producer index, so nothing is polled.
 */
void shca_test_wait_cqes(struct kunit *test, struct ib_cq *cq, u32 n)
{
	unsigned long end = jiffies + msecs_to_jiffies(SHCA_TEST_TIMEOUT_MS);
	struct shca_hw_cq_query q;

	for (;;) {
		KUNIT_ASSERT_EQ(test, 0,
				shca_cmd_query_cq(to_shca_dev(cq->device),
						  to_shca_cq(cq)->cqn, &q));
		if (q.pi - q.ci >= n)
			return;
		KUNIT_ASSERT_FALSE_MSG(test, time_after(jiffies, end),
				       "CQ %u holds %u CQEs, not %u",
				       to_shca_cq(cq)->cqn, q.pi - q.ci, n);
		usleep_range(50, 200);
	}
}

/**
 * shca_test_drv_counter() - read one of the driver's counters
 * @dev: the device
 * @c: which
 *
 * Return: its value.
 */
u64 shca_test_drv_counter(struct ib_device *dev, enum shca_drv_counter c)
{
	return shca_drv_counter(to_shca_dev(dev), c);
}

/**
 * shca_test_wait_event() - wait for an affiliated event on the QP or CQ
 * @tq: the end
 * @event: the event
 *
 * Return: 0, or -ETIMEDOUT.
 */
int shca_test_wait_event(struct shca_tq *tq, enum ib_event_type event)
{
	unsigned long end = jiffies + msecs_to_jiffies(SHCA_TEST_TIMEOUT_MS);

	while (!test_bit(event, &tq->events)) {
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(50, 200);
	}
	return 0;
}

/**
 * shca_test_sq_idle() - has the device finished every posted send?
 * @tq: the end
 *
 * Return: true when the device's send consumer index caught up with the
 * producer index.
 */
bool shca_test_sq_idle(struct shca_tq *tq)
{
	struct shca_qp *qp = to_shca_qp(tq->qp);
	struct shca_hw_qp_query q;

	if (shca_cmd_query_qp(to_shca_dev(tq->dev), qp->qpn, &q))
		return false;
	return q.sq_pi == q.sq_ci;
}

/**
 * shca_test_qp_state() - the QP state the device holds
 * @tq: the end
 *
 * Return: the state, or -1 if the query failed.
 */
enum ib_qp_state shca_test_qp_state(struct shca_tq *tq)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(tq->qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/**
 * shca_test_post_recv() - post one receive of part of the buffer
 * @tq: the end
 * @wr_id: its work request ID
 * @offset: where in @tq->buf
 * @len: bytes
 *
 * Return: what ib_post_recv() or ib_post_srq_recv() returned.
 */
int shca_test_post_recv(struct shca_tq *tq, u64 wr_id, u32 offset, u32 len)
{
	struct ib_sge sge = {
		.addr = tq->addr + offset,
		.length = len,
		.lkey = tq->lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };

	if (tq->srq)
		return ib_post_srq_recv(tq->srq, &wr, NULL);
	return ib_post_recv(tq->qp, &wr, NULL);
}

/**
 * shca_test_post_send() - post one signaled work request
 * @tq: the end
 * @peer: the other end, whose buffer RDMA and atomics target
 * @opcode: what to post
 * @wr_id: its work request ID
 * @offset: where in @tq->buf the local data is
 * @remote_offset: where in @peer->buf the target is
 * @len: bytes
 * @flags: send flags besides IB_SEND_SIGNALED; SHCA_TEST_UNSIGNALED
 *	leaves that out
 *
 * Return: what ib_post_send() returned.
 */
int shca_test_post_send(struct shca_tq *tq, struct shca_tq *peer,
			enum ib_wr_opcode opcode, u64 wr_id, u32 offset,
			u32 remote_offset, u32 len, int flags)
{
	struct ib_sge sge = {
		.addr = tq->addr + offset,
		.length = len,
		.lkey = tq->lkey,
	};
	struct ib_atomic_wr atomic = {};
	struct ib_rdma_wr rdma = {};
	struct ib_ud_wr ud = {};
	struct ib_send_wr *wr;

	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		rdma.remote_addr = peer->addr + remote_offset;
		rdma.rkey = peer->rkey;
		wr = &rdma.wr;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		atomic.remote_addr = peer->addr + remote_offset;
		atomic.rkey = peer->rkey;
		wr = &atomic.wr;
		break;
	default:
		if (tq->qp->qp_type == IB_QPT_UD ||
		    tq->qp->qp_type == IB_QPT_GSI) {
			ud.ah = tq->ah;
			ud.remote_qpn = peer->qp->qp_num;
			ud.remote_qkey = SHCA_TEST_QKEY;
			wr = &ud.wr;
		} else {
			wr = &rdma.wr;
		}
		break;
	}
	wr->wr_id = wr_id;
	wr->opcode = opcode;
	if (opcode == IB_WR_SEND_WITH_IMM ||
	    opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		wr->ex.imm_data = cpu_to_be32(SHCA_TEST_IMM);
	wr->send_flags = flags & SHCA_TEST_UNSIGNALED ?
			 flags & ~SHCA_TEST_UNSIGNALED :
			 IB_SEND_SIGNALED | flags;
	wr->sg_list = &sge;
	wr->num_sge = len || opcode != IB_WR_SEND ? 1 : 0;
	return ib_post_send(tq->qp, wr, NULL);
}

/**
 * shca_test_counter() - read one of a device's counters
 * @dev: the device
 * @counter: which
 *
 * Return: its value, or U64_MAX if the device did not answer.
 */
u64 shca_test_counter(struct ib_device *dev, enum shca_hw_counter counter)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_COUNTERS };

	if (shca_cmd_exec(to_shca_dev(dev), &cmd))
		return U64_MAX;
	return cmd.out.counters[counter];
}

static void shca_test_srq_event(struct ib_event *ev, void *ctx)
{
	struct shca_test_srq *s = ctx;

	set_bit(ev->event, &s->events);
}

static void shca_test_srq_free(void *ctx)
{
	struct shca_test_srq *s = ctx;

	if (!IS_ERR_OR_NULL(s->srq))
		ib_destroy_srq(s->srq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
}

/**
 * shca_test_srq_new() - an SRQ on a PD of its own, until the test ends
 * @test: the test
 * @dev: the device
 * @wr: its depth; the depth granted must be the same
 * @limit: its limit, or 0
 * @sge: SGEs per WQE
 *
 * Return: the SRQ, its PD, and the events its handler will see.
 */
struct shca_test_srq *shca_test_srq_new(struct kunit *test,
					struct ib_device *dev, u32 wr,
					u32 limit, u32 sge)
{
	struct shca_test_srq *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct ib_srq_init_attr init = {
		.event_handler = shca_test_srq_event,
		.srq_context = s,
		.attr = { .max_wr = wr, .max_sge = sge, .srq_limit = limit },
		.srq_type = IB_SRQT_BASIC,
	};
	int err;

	KUNIT_ASSERT_NOT_NULL(test, s);
	err = kunit_add_action_or_reset(test, shca_test_srq_free, s);
	KUNIT_ASSERT_EQ(test, 0, err);
	s->pd = ib_alloc_pd(dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_FALSE(test, IS_ERR(s->pd));
	s->srq = ib_create_srq(s->pd, &init);
	KUNIT_ASSERT_FALSE(test, IS_ERR(s->srq));
	KUNIT_EXPECT_EQ(test, wr, init.attr.max_wr);
	return s;
}

/**
 * shca_test_tq_new() - memory for one end, freed when the test ends
 * @test: the test
 *
 * Ends must outlive the test function: their teardown runs as a KUnit
 * action after it returns.
 *
 * Return: the zeroed end.
 */
struct shca_tq *shca_test_tq_new(struct kunit *test)
{
	struct shca_tq *tq = kunit_kzalloc(test, sizeof(*tq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tq);
	return tq;
}

/**
 * shca_test_expect() - poll one completion and check its status and wr_id
 * @test: the test
 * @tq: the end whose CQ to poll
 * @status: the status it must have
 * @wr_id: the work request it must complete
 */
void shca_test_expect(struct kunit *test, struct shca_tq *tq,
		      enum ib_wc_status status, u64 wr_id)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
	KUNIT_EXPECT_EQ_MSG(test, status, wc.status, "%s",
			    ib_wc_status_msg(wc.status));
	KUNIT_EXPECT_EQ(test, wr_id, wc.wr_id);
}

/**
 * shca_test_pair() - two ends of one QP type on one device, in RESET
 * @test: the test; teardown is registered with it
 * @a: one end, from shca_test_tq_new()
 * @b: the other
 * @type: RC, UC or UD
 * @wr: work requests each queue must hold
 *
 * Each end has a CQ of 16 CQEs; shca_test_connect() connects them.
 */
void shca_test_pair(struct kunit *test, struct shca_tq *a, struct shca_tq *b,
		    enum ib_qp_type type, u32 wr)
{
	struct ib_device *da, *db;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, type, NULL, 16, wr);
	shca_test_tq_init(test, b, db, type, NULL, 16, wr);
}

static void shca_test_mpt_free(void *arg)
{
	struct shca_test_mpt *m = arg;
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = m->key,
	};

	if (!m->freed)
		shca_cmd_exec(m->sdev, &cmd);
}

/**
 * shca_test_mpt_write() - write an MPT entry's page list with WRITE_MPT
 * @m: the entry, from shca_test_pbl_mpt()
 *
 * Return: what the command returned, as an errno.
 */
int shca_test_mpt_write(struct shca_test_mpt *m)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_WRITE_MPT,
		.in.mpt = {
			.key = m->key,
			.access = SHCA_ACCESS_LOCAL_WRITE |
				  SHCA_ACCESS_REMOTE_WRITE,
			.iova = m->pbl[0],
			.length = PAGE_SIZE,
			.pbl = m->pbl,
			.npages = 1,
			.page_shift = PAGE_SHIFT,
		},
	};

	return shca_cmd_exec(m->sdev, &cmd);
}

/**
 * shca_test_pbl_mpt() - an MPT entry as reg_user_mr makes a user MR's
 * @test: the test; FREE_MPT is registered with it
 * @tq: the end whose PD and buffer it covers
 * @offset: where in @tq's buffer its one page is, page aligned
 *
 * A PBL entry written at once with WRITE_MPT, remote write allowed.
 *
 * Return: the entry.
 */
struct shca_test_mpt *shca_test_pbl_mpt(struct kunit *test, struct shca_tq *tq,
					u32 offset)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = {
			.type = SHCA_MPT_PBL,
			.pdn = to_shca_pd(tq->pd)->pdn,
			.max_pages = 1,
		},
	};
	struct shca_test_mpt *m;
	int err;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->pbl = kunit_kzalloc(test, sizeof(*m->pbl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->pbl);
	m->sdev = to_shca_dev(tq->dev);
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(m->sdev, &cmd));
	m->key = cmd.out.num;
	err = kunit_add_action_or_reset(test, shca_test_mpt_free, m);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_EQ(test, 0, (tq->addr + offset) & ~PAGE_MASK);
	m->pbl[0] = tq->addr + offset;
	KUNIT_ASSERT_EQ(test, 0, shca_test_mpt_write(m));
	return m;
}

/**
 * shca_test_rdma_write() - post a signaled RDMA WRITE from an end's buffer
 * @a: the end
 * @wr_id: the work request's ID
 * @rkey: the remote key
 * @addr: the remote address
 * @len: bytes, from the start of @a's buffer
 *
 * Return: what ib_post_send() returned.
 */
int shca_test_rdma_write(struct shca_tq *a, u64 wr_id, u32 rkey, u64 addr,
			 u32 len)
{
	struct ib_sge sge = {
		.addr = a->addr,
		.length = len,
		.lkey = a->lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = addr,
		.rkey = rkey,
	};

	return ib_post_send(a->qp, &wr.wr, NULL);
}

static void shca_test_hw_free(void *hw)
{
	shca_hw_destroy(hw);
}

/**
 * shca_test_hw() - a hardware model of its own, for model-level tests
 * @test: the test; the model is destroyed when it ends
 *
 * Return: the model.
 */
struct shca_hw *shca_test_hw(struct kunit *test)
{
	struct shca_hw *hw = shca_hw_create();
	int err;

	KUNIT_ASSERT_NOT_NULL(test, hw);
	err = kunit_add_action_or_reset(test, shca_test_hw_free, hw);
	KUNIT_ASSERT_EQ(test, 0, err);
	return hw;
}

/**
 * shca_test_hw_create() - run a create command that must succeed
 * @test: the test
 * @hw: the model
 * @cmd: the command: ALLOC_PD or a CREATE_*
 *
 * Return: the new object's number.
 */
u32 shca_test_hw_create(struct kunit *test, struct shca_hw *hw,
			struct shca_hw_cmd *cmd)
{
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, cmd));
	return cmd->opcode == SHCA_CMD_ALLOC_PD ? cmd->out.pdn : cmd->out.num;
}

/**
 * shca_test_hw_qp_new() - create a CQ and an RC QP on it, in a model
 * @test: the test
 * @hw: the model
 * @user: the QP is a process's
 * @t: filled in; the QP is in RESET
 */
void shca_test_hw_qp_new(struct kunit *test, struct shca_hw *hw, bool user,
			 struct shca_test_hw_qp *t)
{
	struct shca_hw_cmd pd = { .opcode = SHCA_CMD_ALLOC_PD };
	struct shca_hw_cmd cq = { .opcode = SHCA_CMD_CREATE_CQ };
	struct shca_hw_cmd qp = { .opcode = SHCA_CMD_CREATE_QP };

	t->ring = kunit_kzalloc(test, 4 * sizeof(*t->ring), GFP_KERNEL);
	t->sq = kunit_kzalloc(test, 4 * sizeof(*t->sq), GFP_KERNEL);
	t->db = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	cq.in.cq.dbrec = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	qp.in.qp.rq.ring = kunit_kzalloc(test,
					 4 * sizeof(struct shca_hw_recv_wqe),
					 GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, t->ring && t->sq && t->db && cq.in.cq.dbrec &&
			  qp.in.qp.rq.ring);
	cq.in.cq.ring = t->ring;
	cq.in.cq.log_depth = 2;
	t->cqn = shca_test_hw_create(test, hw, &cq);
	qp.in.qp.type = SHCA_QPT_RC;
	qp.in.qp.pdn = shca_test_hw_create(test, hw, &pd);
	qp.in.qp.send_cqn = t->cqn;
	qp.in.qp.recv_cqn = t->cqn;
	qp.in.qp.sq.ring = t->sq;
	qp.in.qp.sq.log_depth = 2;
	qp.in.qp.rq.log_depth = 2;
	qp.in.qp.dbrec = t->db;
	qp.in.qp.max_send_sge = 1;
	qp.in.qp.sig_all = true;
	qp.in.qp.user = user;
	t->qpn = shca_test_hw_create(test, hw, &qp);
}

/**
 * shca_test_hw_counter() - one of a model's counters, read with a command
 * @test: the test
 * @hw: the model
 * @counter: which
 *
 * Return: its value.
 */
u64 shca_test_hw_counter(struct kunit *test, struct shca_hw *hw,
			 enum shca_hw_counter counter)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_COUNTERS };

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	return cmd.out.counters[counter];
}

/**
 * shca_test_hw_qp_rts() - take a model QP from RESET to RTS
 * @test: the test
 * @hw: the model
 * @qpn: the QP
 */
void shca_test_hw_qp_rts(struct kunit *test, struct shca_hw *hw, u32 qpn)
{
	struct shca_hw_cmd cmd;
	u32 state;

	for (state = SHCA_QPS_INIT; state <= SHCA_QPS_RTS; state++) {
		cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_MODIFY_QP,
					    .index = qpn,
					    .mask = SHCA_QP_ATTR_STATE,
					    .in.qp_attr.state = state };
		KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	}
}

/**
 * shca_test_hw_post_bad_send() - write a send WQE whose local key names no
 *	MR, and publish it: it completes at once, in error
 * @t: the QP of shca_test_hw_qp_new()
 * @idx: its producer index; the ring holds four
 */
void shca_test_hw_post_bad_send(struct shca_test_hw_qp *t, u32 idx)
{
	t->sq[idx & 3] = (struct shca_hw_send_wqe){
		.opcode = SHCA_WQE_SEND,
		.flags = SHCA_WQE_F_SIGNALED,
		.num_sge = 1,
		.sge[0] = { .addr = 0x10000, .length = 64, .lkey = 0x12345 },
	};
	/* The WQE is written before the index that names it. */
	smp_store_release(&t->db->sq_pi, idx + 1);
}

/**
 * shca_test_hw_cqe_written() - wait for the owner byte of a CQE
 * @t: the QP of shca_test_hw_qp_new()
 * @idx: the CQE, of the four of the ring's first lap
 *
 * Return: true once the device wrote it, false after five seconds.
 */
bool shca_test_hw_cqe_written(struct shca_test_hw_qp *t, u32 idx)
{
	int i;

	for (i = 0; i < 5000; i++) {
		/* Pairs with the device's release of the owner byte. */
		if (smp_load_acquire(&t->ring[idx].owner))
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

static void shca_test_poll_default(void *hw)
{
	shca_hw_set_poll_us(hw, SHCA_HW_POLL_DEFAULT_US);
}

/**
 * shca_test_poll_off() - turn a model's adaptive pollers off for a test
 * @test: the test; the pollers are back to the default when it ends
 * @hw: the model
 *
 * For tests of a stopping turn's own second look (the db_idle and
 * db_recheck windows), which a turn passes only when no poller takes its
 * QP: they hold whatever the default is.
 */
void shca_test_poll_off(struct kunit *test, struct shca_hw *hw)
{
	shca_test_poll_set(test, hw, 0);
}

/**
 * shca_test_poll_set() - set a model's pollers' idle window for a test
 * @test: the test; the pollers are back to the default when it ends
 * @hw: the model
 * @us: the window; 0 turns them off
 */
void shca_test_poll_set(struct kunit *test, struct shca_hw *hw, u32 us)
{
	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_poll_us(hw, us));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_poll_default,
							   hw));
}

/**
 * shca_test_window_reset() - release a race window and clear its knobs
 * @win: the window (a kunit action's argument)
 */
void shca_test_window_reset(void *win)
{
	shca_hw_window_release(win);
	shca_hw_window_set_qpn(win, 0);
	shca_hw_window_set_delay(win, 0);
}

/**
 * shca_test_window_arm() - arm a device's race window for one QP
 * @test: the test; the window is released and cleared when it ends
 * @dev: the device
 * @id: the window
 * @qpn: the QP whose next pass stops there, once its turn is idle
 *
 * Return: the window.
 */
struct shca_hw_window *shca_test_window_arm(struct kunit *test,
					    struct ib_device *dev,
					    enum shca_hw_window_id id, u32 qpn)
{
	struct shca_hw *hw = to_shca_dev(dev)->hw;
	unsigned long end = jiffies + SHCA_TEST_WAIT;

	/* A turn a poller takes over never passes the doorbell windows. */
	if (id == SHCA_WIN_DB_IDLE || id == SHCA_WIN_DB_RECHECK)
		shca_test_poll_off(test, hw);
	/*
	 * The QP's last state change queued an empty turn: let it stop
	 * before the window is armed, or it would be the pass held.
	 */
	while (!shca_hw_qp_turn_idle(hw, qpn)) {
		KUNIT_ASSERT_FALSE_MSG(test, time_after(jiffies, end),
				       "QP %#x's turn never went idle", qpn);
		usleep_range(50, 200);
	}

	return shca_test_window_hold(test, dev, id, qpn);
}

/**
 * shca_test_window_hold() - arm a device's race window for one key
 * @test: the test; the window is released and cleared when it ends
 * @dev: the device
 * @id: the window
 * @key: what the window is passed for (a QPN, or a CQN for cq_resize)
 *
 * Return: the window.
 */
struct shca_hw_window *shca_test_window_hold(struct kunit *test,
					     struct ib_device *dev,
					     enum shca_hw_window_id id, u32 key)
{
	struct shca_hw_window *win = shca_hw_window(to_shca_dev(dev)->hw, id);

	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_window_reset,
							   win));
	shca_hw_window_set_qpn(win, key);
	shca_hw_window_arm(win);
	return win;
}

static void shca_test_stall_cmd_fn(struct work_struct *work)
{
	struct shca_test_stall *s = container_of(work, struct shca_test_stall,
						 cmd_work);

	s->cmd_ret = s->cmd(s->arg);
	complete(&s->cmd_done);
}

static void shca_test_stall_other_fn(struct work_struct *work)
{
	struct shca_test_stall *s = container_of(work, struct shca_test_stall,
						 other_work);
	struct ib_cq_init_attr attr = { .cqe = 16 };
	unsigned long end = jiffies + 2 * SHCA_TEST_WAIT;
	struct ib_cq *cq;

	s->other_ret = -ETIMEDOUT;
	while (!s->waiting(s->arg)) {
		if (time_after(jiffies, end))
			goto out;
		usleep_range(100, 200);
	}
	cq = ib_create_cq(s->dev, NULL, NULL, NULL, &attr);
	s->other_ret = PTR_ERR_OR_ZERO(cq);
	if (!IS_ERR(cq))
		s->other_ret = ib_destroy_cq_user(cq, NULL);
out:
	s->cmd_pending = !completion_done(&s->cmd_done);
	complete(&s->other_done);
}

static void shca_test_stall_flush(void *arg)
{
	struct shca_test_stall *s = arg;

	flush_work(&s->other_work);
	flush_work(&s->cmd_work);
}

/**
 * shca_test_stall_new() - a command that waits and a bystander, not started
 * @test: the test; both workers are waited for when it ends
 * @dev: the device the bystander uses
 * @cmd: the command
 * @waiting: whether @cmd has reached its wait
 * @arg: for @cmd and @waiting
 *
 * Cleanup runs backwards: arm the window that holds @cmd's wait after
 * this, so that it opens before the workers are waited for.
 *
 * Return: the pair, for shca_test_stall_run().
 */
struct shca_test_stall *shca_test_stall_new(struct kunit *test,
					    struct ib_device *dev,
					    int (*cmd)(void *arg),
					    bool (*waiting)(void *arg),
					    void *arg)
{
	struct shca_test_stall *s = kunit_kzalloc(test, sizeof(*s),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->dev = dev;
	s->cmd = cmd;
	s->waiting = waiting;
	s->arg = arg;
	INIT_WORK(&s->cmd_work, shca_test_stall_cmd_fn);
	INIT_WORK(&s->other_work, shca_test_stall_other_fn);
	init_completion(&s->cmd_done);
	init_completion(&s->other_done);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_stall_flush,
							   s));
	return s;
}

/**
 * shca_test_stall_run() - start the command and the bystander
 * @s: the pair
 */
void shca_test_stall_run(struct shca_test_stall *s)
{
	queue_work(system_unbound_wq, &s->cmd_work);
	queue_work(system_unbound_wq, &s->other_work);
}

/**
 * shca_test_stall_expect_alone() - the bystander finished, the command not
 * @test: the test
 * @s: the pair, running, the command held in its wait
 *
 * With the command's wait under the device-wide command mutex, the
 * bystander's commands would wait too.
 */
void shca_test_stall_expect_alone(struct kunit *test,
				  struct shca_test_stall *s)
{
	if (!wait_for_completion_timeout(&s->other_done, 3 * SHCA_TEST_WAIT))
		KUNIT_FAIL(test, "the device's other commands waited");
	KUNIT_EXPECT_TRUE(test, s->cmd_pending);
	KUNIT_EXPECT_EQ(test, 0, s->other_ret);
}
