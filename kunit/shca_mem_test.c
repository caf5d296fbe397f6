// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: what one process's objects may cost others.
 *
 * shca_remote_inv: a peer's SEND_WITH_INV invalidates a fast-registration
 * MR and nothing else (IBTA); every other key is refused with an Invalid
 * Request NAK, and the key keeps working.
 *
 * shca_cmd_stall: a destroy that waits out one object's access in flight
 * (held open in the mem_access window) holds up no other command of the
 * device.
 *
 * shca_limits: the QP context table keeps nothing for a QPN no QP holds,
 * however many QPNs cycle through it; the CQ limit is enforced.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_MT_WAIT		(5 * HZ)
#define SHCA_MT_KEY_OFF		(4 * PAGE_SIZE)

/* A fast-registration MR over one page of @tq's buffer, registered. */
static void shca_mt_free_mr(void *mr)
{
	ib_dereg_mr(mr);
}

static struct ib_mr *shca_mt_fast_reg(struct kunit *test, struct shca_tq *tq,
				      u32 offset, int access)
{
	struct ib_reg_wr wr = {};
	struct scatterlist sg;
	struct ib_mr *mr;
	int err;

	mr = ib_alloc_mr(tq->pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	err = kunit_add_action_or_reset(test, shca_mt_free_mr, mr);
	KUNIT_ASSERT_EQ(test, 0, err);
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = tq->addr + offset;
	sg_dma_len(&sg) = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, 1, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE));
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_id = 0xfa57;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = access;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr.wr, NULL));
	shca_test_expect(test, tq, IB_WC_SUCCESS, 0xfa57);
	return mr;
}

/**
 * struct shca_mt_mpt - an MPT entry made as reg_user_mr makes one
 * @sdev: the device
 * @key: its key
 * @pbl: its one-page page list
 * @freed: FREE_MPT already ran
 */
struct shca_mt_mpt {
	struct shca_dev *sdev;
	u32 key;
	u64 *pbl;
	bool freed;
};

static void shca_mt_mpt_free(void *arg)
{
	struct shca_mt_mpt *m = arg;
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = m->key,
	};

	if (!m->freed)
		shca_cmd_exec(m->sdev, &cmd);
}

static int shca_mt_mpt_write(struct shca_mt_mpt *m)
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

/*
 * A PBL entry written at once with WRITE_MPT, as reg_user_mr writes a
 * user MR's: one page of @tq's buffer at @offset, remote write allowed.
 */
static struct shca_mt_mpt *shca_mt_pbl_mpt(struct kunit *test,
					   struct shca_tq *tq, u32 offset)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = {
			.type = SHCA_MPT_PBL,
			.pdn = to_shca_pd(tq->pd)->pdn,
			.max_pages = 1,
		},
	};
	struct shca_mt_mpt *m;
	int err;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->pbl = kunit_kzalloc(test, sizeof(*m->pbl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->pbl);
	m->sdev = to_shca_dev(tq->dev);
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(m->sdev, &cmd));
	m->key = cmd.out.num;
	err = kunit_add_action_or_reset(test, shca_mt_mpt_free, m);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_EQ(test, 0, (tq->addr + offset) & ~PAGE_MASK);
	m->pbl[0] = tq->addr + offset;
	KUNIT_ASSERT_EQ(test, 0, shca_mt_mpt_write(m));
	return m;
}

/* An RDMA WRITE of @len bytes from @a's buffer through @rkey at @addr. */
static int shca_mt_write(struct shca_tq *a, u64 wr_id, u32 rkey, u64 addr,
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

/* Back to RTS after an error, both ends. */
static void shca_mt_reconnect(struct kunit *test, struct shca_tq *a,
			      struct shca_tq *b)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE));
	shca_test_connect(test, a, b);
}

/**
 * enum shca_ri_key - the key a SEND_WITH_INV names
 * @SHCA_RI_FAST_REG: a registered fast-registration MR of the responder's
 *	PD: the one kind a peer may invalidate
 * @SHCA_RI_USER_MR: an MR written with WRITE_MPT, as reg_user_mr writes
 * @SHCA_RI_DMA: the PD's DMA MR (its unsafe global rkey)
 * @SHCA_RI_OTHER_PD: a registered fast-registration MR of another PD
 * @SHCA_RI_INVALID: a fast-registration MR already invalidated
 * @SHCA_RI_UNKNOWN: a key no entry has
 */
enum shca_ri_key {
	SHCA_RI_FAST_REG,
	SHCA_RI_USER_MR,
	SHCA_RI_DMA,
	SHCA_RI_OTHER_PD,
	SHCA_RI_INVALID,
	SHCA_RI_UNKNOWN,
};

struct shca_ri_param {
	const char *name;
	enum shca_ri_key key;
};

static const struct shca_ri_param shca_ri_params[] = {
	{ "fast_reg", SHCA_RI_FAST_REG },
	{ "user_mr", SHCA_RI_USER_MR },
	{ "dma_mr", SHCA_RI_DMA },
	{ "other_pd", SHCA_RI_OTHER_PD },
	{ "already_invalid", SHCA_RI_INVALID },
	{ "unknown_key", SHCA_RI_UNKNOWN },
};

static void shca_ri_desc(const struct shca_ri_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_ri, shca_ri_params, shca_ri_desc);

static void shca_ri_local_inv(struct kunit *test, struct shca_tq *tq,
			      u32 key)
{
	struct ib_send_wr wr = {
		.wr_id = 0x11,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};

	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr, NULL));
	shca_test_expect(test, tq, IB_WC_SUCCESS, 0x11);
}

/*
 * A peer sends with invalidate of each kind of key.  Only a valid
 * fast-registration MR of the responder's PD is invalidated.  Any other
 * key gets the sender an Invalid Request NAK (IB_WC_REM_INV_REQ_ERR),
 * completes the responder's receive with the same status, moves its QP
 * to ERR with IB_EVENT_QP_REQ_ERR, and leaves the key as it was: a valid
 * key still takes a write.
 */
static void shca_test_remote_inv(struct kunit *test)
{
	const struct shca_ri_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_tq *c = NULL, *owner;
	struct ib_send_wr wr = {
		.wr_id = 2,
		.opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	u64 addr = 0;
	struct ib_mr *mr;
	struct ib_wc wc;
	struct ib_device *dev;
	u32 key;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	shca_test_tq_init(test, a, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	owner = b;

	switch (p->key) {
	case SHCA_RI_FAST_REG:
	case SHCA_RI_INVALID:
		mr = shca_mt_fast_reg(test, b, SHCA_MT_KEY_OFF,
				      IB_ACCESS_LOCAL_WRITE |
				      IB_ACCESS_REMOTE_WRITE);
		key = mr->rkey;
		addr = mr->iova;
		if (p->key == SHCA_RI_INVALID)
			shca_ri_local_inv(test, b, key);
		break;
	case SHCA_RI_USER_MR:
		key = shca_mt_pbl_mpt(test, b, SHCA_MT_KEY_OFF)->key;
		addr = b->addr + SHCA_MT_KEY_OFF;
		break;
	case SHCA_RI_DMA:
		key = b->rkey;
		addr = b->addr + SHCA_MT_KEY_OFF;
		break;
	case SHCA_RI_OTHER_PD:
		/* c has a PD of its own, on a QP connected to itself. */
		c = shca_test_tq_new(test);
		shca_test_tq_init(test, c, dev, IB_QPT_RC, NULL, 16, 8);
		shca_test_connect(test, c, c);
		mr = shca_mt_fast_reg(test, c, SHCA_MT_KEY_OFF,
				      IB_ACCESS_LOCAL_WRITE |
				      IB_ACCESS_REMOTE_WRITE);
		key = mr->rkey;
		addr = mr->iova;
		owner = c;
		break;
	default:
		key = 0x00fffe00;
		break;
	}

	wr.ex.invalidate_rkey = key;
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 3, 0, 4096));
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(a->qp, &wr, NULL));
	if (p->key == SHCA_RI_FAST_REG) {
		shca_test_expect(test, a, IB_WC_SUCCESS, 2);
		KUNIT_ASSERT_EQ(test, 1, shca_test_poll(b, &wc, 1));
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
		KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
		KUNIT_EXPECT_EQ(test, key, wc.ex.invalidate_rkey);
		/* Invalid now: a write through it is refused. */
		KUNIT_ASSERT_EQ(test, 0, shca_mt_write(a, 4, key, addr, 64));
		shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 4);
		return;
	}

	shca_test_expect(test, a, IB_WC_REM_INV_REQ_ERR, 2);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(b, &wc, 1));
	KUNIT_EXPECT_EQ_MSG(test, IB_WC_REM_INV_REQ_ERR, wc.status, "%s",
			    ib_wc_status_msg(wc.status));
	KUNIT_EXPECT_EQ(test, 3ULL, wc.wr_id);
	KUNIT_EXPECT_FALSE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(b));
	KUNIT_EXPECT_EQ(test, 0, shca_test_wait_event(b, IB_EVENT_QP_REQ_ERR));
	KUNIT_EXPECT_FALSE(test, test_bit(IB_EVENT_QP_ACCESS_ERR, &b->events));

	if (p->key == SHCA_RI_INVALID || p->key == SHCA_RI_UNKNOWN)
		return;
	/* The key was left alone: its owner's peer still writes through it. */
	memset(a->buf, 0x5c, 64);
	if (owner == b) {
		shca_mt_reconnect(test, a, b);
		KUNIT_ASSERT_EQ(test, 0, shca_mt_write(a, 5, key, addr, 64));
		shca_test_expect(test, a, IB_WC_SUCCESS, 5);
	} else {
		memset(c->buf, 0x5c, 64);
		KUNIT_ASSERT_EQ(test, 0, shca_mt_write(c, 5, key, addr, 64));
		shca_test_expect(test, c, IB_WC_SUCCESS, 5);
	}
	KUNIT_EXPECT_MEMEQ(test, a->buf, owner->buf + SHCA_MT_KEY_OFF, 64);
}

static struct kunit_case shca_remote_inv_cases[] = {
	KUNIT_CASE_PARAM(shca_test_remote_inv, shca_ri_gen_params),
	{}
};

static struct kunit_suite shca_remote_inv_suite = {
	.name = "shca_remote_inv",
	.test_cases = shca_remote_inv_cases,
};

/**
 * struct shca_cs_async - a destroy and a bystander, each on a worker
 * @sdev: the device
 * @dev: the same, as ib_core knows it
 * @key: for FREE_MPT, the entry the destroy frees
 * @mpt: that entry
 * @qp: for DESTROY_QP or a modify to RESET, the QP it names
 * @free_mpt: the destroy is FREE_MPT, not DESTROY_QP
 * @reset: the "destroy" is a modify of @qp to RESET, which fences it
 * @destroy: runs the destroy
 * @destroy_ret: what it returned
 * @destroy_done: completed when it returned
 * @other: runs the bystander: it waits until the destroy has taken its
 *	object out of the table, then creates and destroys a CQ
 * @other_ret: what the bystander's commands returned
 * @other_done: completed when it finished
 * @destroy_pending: the destroy had not returned when the bystander did
 */
struct shca_cs_async {
	struct shca_dev *sdev;
	struct ib_device *dev;
	u32 key;
	struct shca_mt_mpt *mpt;
	struct ib_qp *qp;
	bool free_mpt;
	bool reset;
	struct work_struct destroy;
	int destroy_ret;
	struct completion destroy_done;
	struct work_struct other;
	int other_ret;
	struct completion other_done;
	bool destroy_pending;
};

static void shca_cs_destroy_fn(struct work_struct *work)
{
	struct shca_cs_async *s = container_of(work, struct shca_cs_async,
					       destroy);
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = s->key,
	};

	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	if (s->free_mpt)
		s->destroy_ret = shca_cmd_exec(s->sdev, &cmd);
	else if (s->reset)
		s->destroy_ret = ib_modify_qp(s->qp, &attr, IB_QP_STATE);
	else
		s->destroy_ret = ib_destroy_qp(s->qp);
	complete(&s->destroy_done);
}

/*
 * Is the destroy's object out of the table yet (or the QP in RESET, its
 * fence under way)?  Asking is itself a command of the device: WRITE_MPT
 * with the entry's own translation, or QUERY_QP.
 */
static bool shca_cs_gone(struct shca_cs_async *s)
{
	struct shca_hw_qp_query q;

	if (s->free_mpt)
		return shca_mt_mpt_write(s->mpt) == -EINVAL;
	if (s->reset)
		return !shca_cmd_query_qp(s->sdev, s->key, &q) &&
		       q.attr.state == SHCA_QPS_RESET;
	return shca_cmd_query_qp(s->sdev, s->key, &q) == -EINVAL;
}

static void shca_cs_other_fn(struct work_struct *work)
{
	struct shca_cs_async *s = container_of(work, struct shca_cs_async,
					       other);
	struct ib_cq_init_attr attr = { .cqe = 16 };
	unsigned long end = jiffies + 2 * SHCA_MT_WAIT;
	struct ib_cq *cq;

	s->other_ret = -ETIMEDOUT;
	while (!shca_cs_gone(s)) {
		if (time_after(jiffies, end))
			goto out;
		usleep_range(100, 200);
	}
	cq = ib_create_cq(s->dev, NULL, NULL, NULL, &attr);
	s->other_ret = PTR_ERR_OR_ZERO(cq);
	if (!IS_ERR(cq))
		s->other_ret = ib_destroy_cq_user(cq, NULL);
out:
	s->destroy_pending = !completion_done(&s->destroy_done);
	complete(&s->other_done);
}

static void shca_cs_wait(void *arg)
{
	struct shca_cs_async *s = arg;

	flush_work(&s->other);
	flush_work(&s->destroy);
}

struct shca_cs_param {
	const char *name;
	bool free_mpt;
	bool reset;
};

static const struct shca_cs_param shca_cs_params[] = {
	{ "free_mpt", true, false },
	{ "destroy_qp", false, false },
	{ "reset_qp", false, true },
};

static void shca_cs_desc(const struct shca_cs_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_cs, shca_cs_params, shca_cs_desc);

static void shca_cs_window_reset(void *win)
{
	struct shca_hw_window *w = win;

	shca_hw_window_release(w);
	shca_hw_window_set_qpn(w, 0);
}

/*
 * An RDMA WRITE's responder is held in the mem_access window, holding the
 * target entry and its QP.  FREE_MPT of that entry, DESTROY_QP of that QP,
 * or a modify of it to RESET must wait for it; meanwhile another thread's
 * commands on the device (a query of the object, then a CQ created and
 * destroyed) complete.  With the wait under the device-wide command mutex
 * they would wait too.
 */
static void shca_test_destroy_waits_alone(struct kunit *test)
{
	const struct shca_cs_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_window *win;
	struct shca_cs_async *s;
	struct ib_device *dev;
	struct shca_hw *hw;
	int err;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	hw = to_shca_dev(dev)->hw;
	shca_test_tq_init(test, a, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->sdev = to_shca_dev(dev);
	s->dev = dev;
	s->free_mpt = p->free_mpt;
	s->reset = p->reset;
	s->mpt = shca_mt_pbl_mpt(test, b, SHCA_MT_KEY_OFF);
	s->key = p->free_mpt ? s->mpt->key : b->qp->qp_num;
	s->qp = b->qp;
	INIT_WORK(&s->destroy, shca_cs_destroy_fn);
	INIT_WORK(&s->other, shca_cs_other_fn);
	init_completion(&s->destroy_done);
	init_completion(&s->other_done);
	/* Cleanup runs backwards: the window opens before the workers end. */
	err = kunit_add_action_or_reset(test, shca_cs_wait, s);
	KUNIT_ASSERT_EQ(test, 0, err);

	win = shca_hw_window(hw, SHCA_WIN_MEM_ACCESS);
	err = kunit_add_action_or_reset(test, shca_cs_window_reset, win);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_hw_window_set_qpn(win, b->qp->qp_num);
	shca_hw_window_arm(win);

	memset(a->buf, 0x7e, PAGE_SIZE);
	err = shca_mt_write(a, 1, s->mpt->key, s->mpt->pbl[0], PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_MT_WAIT));

	if (p->free_mpt)
		s->mpt->freed = true;
	else if (!p->reset)
		b->qp = NULL;
	queue_work(system_unbound_wq, &s->destroy);
	queue_work(system_unbound_wq, &s->other);

	/* The access is still held; the bystander must finish anyway. */
	if (!wait_for_completion_timeout(&s->other_done, 3 * SHCA_MT_WAIT))
		KUNIT_FAIL(test, "the device's other commands waited");
	KUNIT_EXPECT_EQ(test, SHCA_HW_WIN_HELD, shca_hw_window_state(win));
	KUNIT_EXPECT_TRUE(test, s->destroy_pending);
	KUNIT_EXPECT_EQ(test, 0, s->other_ret);

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&s->destroy_done,
							    SHCA_MT_WAIT));
	KUNIT_EXPECT_EQ(test, 0, s->destroy_ret);
	/* The access that was in flight finished before the destroy did. */
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_MT_KEY_OFF, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

static struct kunit_case shca_cmd_stall_cases[] = {
	KUNIT_CASE_PARAM(shca_test_destroy_waits_alone, shca_cs_gen_params),
	{}
};

static struct kunit_suite shca_cmd_stall_suite = {
	.name = "shca_cmd_stall",
	.test_cases = shca_cmd_stall_cases,
};

#define SHCA_LT_CYCLES		2048
#define SHCA_LT_REISSUES	8
#define SHCA_LT_FIRST_QPN	0x00300000

/* A QP with the smallest queues on @cq, or an ERR_PTR(). */
static struct ib_qp *shca_lt_qp(struct ib_pd *pd, struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ib_create_qp(pd, &init);
}

static void shca_lt_dealloc_pd(void *pd)
{
	ib_dealloc_pd(pd);
}

/*
 * Thousands of QPNs cycle through the device, and one QPN is reissued
 * again and again: every QP gets a generation no earlier holder of its
 * QPN had, and the device keeps state for the live QPs only.
 */
static void shca_test_qpn_cycles_keep_nothing(struct kunit *test)
{
	u32 gens[SHCA_LT_REISSUES];
	struct ib_device *dev;
	struct shca_hw *hw;
	struct ib_cq *cq;
	struct ib_pd *pd;
	struct ib_qp *qp;
	u32 base, i, j;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	hw = to_shca_dev(dev)->hw;
	pd = ib_alloc_pd(dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_lt_dealloc_pd,
							   pd));
	cq = shca_test_cq_new(test, dev, 4);
	base = shca_hw_qpn_entries(hw);

	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(hw, SHCA_LT_FIRST_QPN));
	for (i = 0; i < SHCA_LT_CYCLES; i++) {
		qp = shca_lt_qp(pd, cq);
		KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
		KUNIT_ASSERT_EQ(test, SHCA_LT_FIRST_QPN + i, qp->qp_num);
		KUNIT_ASSERT_EQ(test, base + 1, shca_hw_qpn_entries(hw));
		KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(qp));
	}
	KUNIT_EXPECT_EQ(test, base, shca_hw_qpn_entries(hw));

	for (i = 0; i < SHCA_LT_REISSUES; i++) {
		KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(hw,
							      SHCA_LT_FIRST_QPN));
		qp = shca_lt_qp(pd, cq);
		KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
		KUNIT_ASSERT_EQ(test, SHCA_LT_FIRST_QPN, qp->qp_num);
		gens[i] = to_shca_qp(qp)->gen;
		KUNIT_EXPECT_NE(test, 0U, gens[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, gens[j], gens[i]);
		KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(qp));
	}
	KUNIT_EXPECT_EQ(test, base, shca_hw_qpn_entries(hw));
}

#define SHCA_LT_MAX_CQS		70000

static void shca_lt_free_cqs(void *arg)
{
	struct ib_cq **cqs = arg;
	u32 i;

	for (i = 0; i < SHCA_LT_MAX_CQS && cqs[i]; i++)
		ib_destroy_cq(cqs[i]);
	kvfree(cqs);
}

/*
 * CQs are created until the device refuses: it refuses at max_cq (the
 * device's own CQs included) with -ENOMEM, nothing else changes, and a
 * CQ destroyed makes room for one more.  A CQ deeper than max_cqe is
 * refused with -EINVAL.
 */
static void shca_test_cq_limit(struct kunit *test)
{
	struct ib_cq_init_attr attr = { .cqe = 1 };
	struct ib_device *dev;
	struct ib_cq **cqs, *cq;
	u32 max, n;
	int err;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	max = to_shca_dev(dev)->caps.max_cq;
	KUNIT_ASSERT_EQ(test, max, (u32)dev->attrs.max_cq);
	KUNIT_ASSERT_LT(test, max, (u32)SHCA_LT_MAX_CQS);
	cqs = kvcalloc(SHCA_LT_MAX_CQS, sizeof(*cqs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cqs);
	err = kunit_add_action_or_reset(test, shca_lt_free_cqs, cqs);
	KUNIT_ASSERT_EQ(test, 0, err);

	for (n = 0; n < SHCA_LT_MAX_CQS; n++) {
		cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
		if (IS_ERR(cq))
			break;
		cqs[n] = cq;
	}
	KUNIT_EXPECT_EQ(test, -ENOMEM, PTR_ERR_OR_ZERO(cq));
	/* ib_mad's CQs count too: a few, never more than a handful. */
	KUNIT_EXPECT_LE(test, n, max);
	KUNIT_EXPECT_GE(test, n + 8, max);

	KUNIT_ASSERT_GT(test, n, 0U);
	KUNIT_ASSERT_EQ(test, 0, ib_destroy_cq_user(cqs[n - 1], NULL));
	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	cqs[n - 1] = cq;

	attr.cqe = dev->attrs.max_cqe + 1;
	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(cq));
	if (!IS_ERR(cq))
		ib_destroy_cq(cq);
}

static struct kunit_case shca_limits_cases[] = {
	KUNIT_CASE_SLOW(shca_test_qpn_cycles_keep_nothing),
	KUNIT_CASE_SLOW(shca_test_cq_limit),
	{}
};

static struct kunit_suite shca_limits_suite = {
	.name = "shca_limits",
	.test_cases = shca_limits_cases,
};

kunit_test_suites(&shca_remote_inv_suite, &shca_cmd_stall_suite,
		  &shca_limits_suite);
