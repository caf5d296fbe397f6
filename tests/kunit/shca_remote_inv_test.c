// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: a peer's SEND_WITH_INV invalidates a fast-registration MR and
 * nothing else (IBTA); every other key is refused with an Invalid Request
 * NAK, and the key keeps working.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

/* A fast-registration MR over one page of @tq's buffer, registered. */
static void shca_remote_inv_free_mr(void *mr)
{
	ib_dereg_mr(mr);
}

static struct ib_mr *shca_remote_inv_fast_reg(struct kunit *test, struct shca_tq *tq,
					      u32 offset, int access)
{
	struct ib_reg_wr wr = {};
	struct scatterlist sg;
	struct ib_mr *mr;
	int err;

	mr = ib_alloc_mr(tq->pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	err = kunit_add_action_or_reset(test, shca_remote_inv_free_mr, mr);
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

/* Back to RTS after an error, both ends. */
static void shca_remote_inv_reconnect(struct kunit *test, struct shca_tq *a,
				      struct shca_tq *b)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE));
	shca_test_connect(test, a, b);
}

/**
 * enum shca_remote_inv_key - the key a SEND_WITH_INV names
 * @SHCA_REMOTE_INV_FAST_REG: a registered fast-registration MR of the responder's
 *	PD: the one kind a peer may invalidate
 * @SHCA_REMOTE_INV_USER_MR: an MR written with WRITE_MPT, as reg_user_mr writes
 * @SHCA_REMOTE_INV_DMA: the PD's DMA MR (its unsafe global rkey)
 * @SHCA_REMOTE_INV_OTHER_PD: a registered fast-registration MR of another PD
 * @SHCA_REMOTE_INV_INVALID: a fast-registration MR already invalidated
 * @SHCA_REMOTE_INV_UNKNOWN: a key no entry has
 */
enum shca_remote_inv_key {
	SHCA_REMOTE_INV_FAST_REG,
	SHCA_REMOTE_INV_USER_MR,
	SHCA_REMOTE_INV_DMA,
	SHCA_REMOTE_INV_OTHER_PD,
	SHCA_REMOTE_INV_INVALID,
	SHCA_REMOTE_INV_UNKNOWN,
};

struct shca_remote_inv_param {
	const char *name;
	enum shca_remote_inv_key key;
};

static const struct shca_remote_inv_param shca_remote_inv_params[] = {
	{ "fast_reg", SHCA_REMOTE_INV_FAST_REG },
	{ "user_mr", SHCA_REMOTE_INV_USER_MR },
	{ "dma_mr", SHCA_REMOTE_INV_DMA },
	{ "other_pd", SHCA_REMOTE_INV_OTHER_PD },
	{ "already_invalid", SHCA_REMOTE_INV_INVALID },
	{ "unknown_key", SHCA_REMOTE_INV_UNKNOWN },
};

static void shca_remote_inv_desc(const struct shca_remote_inv_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_remote_inv, shca_remote_inv_params, shca_remote_inv_desc);

static void shca_remote_inv_local_inv(struct kunit *test, struct shca_tq *tq,
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
static void shca_test_send_with_inv_takes_only_fast_reg_mrs(struct kunit *test)
{
	const struct shca_remote_inv_param *p = test->param_value;
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
	case SHCA_REMOTE_INV_FAST_REG:
	case SHCA_REMOTE_INV_INVALID:
		mr = shca_remote_inv_fast_reg(test, b, SHCA_TEST_KEY_OFF,
					      IB_ACCESS_LOCAL_WRITE |
					      IB_ACCESS_REMOTE_WRITE);
		key = mr->rkey;
		addr = mr->iova;
		if (p->key == SHCA_REMOTE_INV_INVALID)
			shca_remote_inv_local_inv(test, b, key);
		break;
	case SHCA_REMOTE_INV_USER_MR:
		key = shca_test_pbl_mpt(test, b, SHCA_TEST_KEY_OFF)->key;
		addr = b->addr + SHCA_TEST_KEY_OFF;
		break;
	case SHCA_REMOTE_INV_DMA:
		key = b->rkey;
		addr = b->addr + SHCA_TEST_KEY_OFF;
		break;
	case SHCA_REMOTE_INV_OTHER_PD:
		/* c has a PD of its own, on a QP connected to itself. */
		c = shca_test_tq_new(test);
		shca_test_tq_init(test, c, dev, IB_QPT_RC, NULL, 16, 8);
		shca_test_connect(test, c, c);
		mr = shca_remote_inv_fast_reg(test, c, SHCA_TEST_KEY_OFF,
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
	if (p->key == SHCA_REMOTE_INV_FAST_REG) {
		shca_test_expect(test, a, IB_WC_SUCCESS, 2);
		KUNIT_ASSERT_EQ(test, 1, shca_test_poll(b, &wc, 1));
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
		KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
		KUNIT_EXPECT_EQ(test, key, wc.ex.invalidate_rkey);
		/* Invalid now: a write through it is refused. */
		KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 4, key, addr, 64));
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

	if (p->key == SHCA_REMOTE_INV_INVALID || p->key == SHCA_REMOTE_INV_UNKNOWN)
		return;
	/* The key was left alone: its owner's peer still writes through it. */
	memset(a->buf, 0x5c, 64);
	if (owner == b) {
		shca_remote_inv_reconnect(test, a, b);
		KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 5, key, addr, 64));
		shca_test_expect(test, a, IB_WC_SUCCESS, 5);
	} else {
		memset(c->buf, 0x5c, 64);
		KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(c, 5, key, addr, 64));
		shca_test_expect(test, c, IB_WC_SUCCESS, 5);
	}
	KUNIT_EXPECT_MEMEQ(test, a->buf, owner->buf + SHCA_TEST_KEY_OFF, 64);
}

static struct kunit_case shca_remote_inv_cases[] = {
	KUNIT_CASE_PARAM(shca_test_send_with_inv_takes_only_fast_reg_mrs,
			 shca_remote_inv_gen_params),
	{}
};

static struct kunit_suite shca_remote_inv_suite = {
	.name = "shca_remote_inv",
	.test_cases = shca_remote_inv_cases,
};

kunit_test_suite(shca_remote_inv_suite);
