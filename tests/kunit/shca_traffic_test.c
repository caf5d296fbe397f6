// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: traffic through the real driver, as a kernel ULP drives it.
 * Every opcode each QP type takes, in loopback on one device and between
 * two devices, checking the data that arrives and every completion field
 * a consumer reads.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <rdma/ib_cache.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_TRAFFIC_LEN		1000
#define SHCA_TRAFFIC_REMOTE		8192
#define SHCA_TRAFFIC_READ_DST	16384

/**
 * struct shca_traffic_case - one traffic test
 * @type: the QP type
 * @op: the opcode
 * @two: between two devices rather than in loopback
 * @inline_data: post the payload inline
 */
struct shca_traffic_case {
	enum ib_qp_type type;
	enum ib_wr_opcode op;
	bool two;
	bool inline_data;
};

static const struct shca_traffic_case shca_traffic_params[] = {
	{ .type = IB_QPT_RC, .op = IB_WR_SEND,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_SEND,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_SEND,
	  .two = false, .inline_data = true },
	{ .type = IB_QPT_RC, .op = IB_WR_SEND,
	  .two = true, .inline_data = true },
	{ .type = IB_QPT_RC, .op = IB_WR_SEND_WITH_IMM,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_SEND_WITH_IMM,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_SEND_WITH_INV,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_SEND_WITH_INV,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_WRITE,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_WRITE,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_WRITE,
	  .two = false, .inline_data = true },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_WRITE,
	  .two = true, .inline_data = true },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_WRITE_WITH_IMM,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_WRITE_WITH_IMM,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_READ,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_RDMA_READ,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_ATOMIC_CMP_AND_SWP,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_ATOMIC_CMP_AND_SWP,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_ATOMIC_FETCH_AND_ADD,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_ATOMIC_FETCH_AND_ADD,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_LOCAL_INV,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_LOCAL_INV,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_REG_MR,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_RC, .op = IB_WR_REG_MR,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_SEND,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_SEND,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_SEND_WITH_IMM,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_SEND_WITH_IMM,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_SEND_WITH_INV,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_SEND_WITH_INV,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_RDMA_WRITE,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_RDMA_WRITE,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_RDMA_WRITE,
	  .two = false, .inline_data = true },
	{ .type = IB_QPT_UC, .op = IB_WR_RDMA_WRITE,
	  .two = true, .inline_data = true },
	{ .type = IB_QPT_UC, .op = IB_WR_RDMA_WRITE_WITH_IMM,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_RDMA_WRITE_WITH_IMM,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_LOCAL_INV,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_LOCAL_INV,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_REG_MR,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UC, .op = IB_WR_REG_MR,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UD, .op = IB_WR_SEND,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UD, .op = IB_WR_SEND,
	  .two = true, .inline_data = false },
	{ .type = IB_QPT_UD, .op = IB_WR_SEND,
	  .two = false, .inline_data = true },
	{ .type = IB_QPT_UD, .op = IB_WR_SEND,
	  .two = true, .inline_data = true },
	{ .type = IB_QPT_UD, .op = IB_WR_SEND_WITH_IMM,
	  .two = false, .inline_data = false },
	{ .type = IB_QPT_UD, .op = IB_WR_SEND_WITH_IMM,
	  .two = true, .inline_data = false },
};

static void shca_traffic_desc(const struct shca_traffic_case *c, char *desc)
{
	static const char * const types[] = {
		[IB_QPT_RC] = "rc", [IB_QPT_UC] = "uc", [IB_QPT_UD] = "ud",
	};
	static const char * const ops[] = {
		[IB_WR_SEND] = "send",
		[IB_WR_SEND_WITH_IMM] = "send_imm",
		[IB_WR_SEND_WITH_INV] = "send_inv",
		[IB_WR_RDMA_WRITE] = "write",
		[IB_WR_RDMA_WRITE_WITH_IMM] = "write_imm",
		[IB_WR_RDMA_READ] = "read",
		[IB_WR_ATOMIC_CMP_AND_SWP] = "cmp_swap",
		[IB_WR_ATOMIC_FETCH_AND_ADD] = "fetch_add",
		[IB_WR_LOCAL_INV] = "local_inv",
		[IB_WR_REG_MR] = "reg_mr",
	};

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s%s_%s", types[c->type],
		 ops[c->op], c->inline_data ? "_inline" : "",
		 c->two ? "two_devices" : "loopback");
}

KUNIT_ARRAY_PARAM(shca_traffic, shca_traffic_params, shca_traffic_desc);

static void shca_fill(u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7;
}

struct shca_traffic {
	struct kunit *test;
	const struct shca_traffic_case *c;
	struct shca_tq a;
	struct shca_tq b;
	struct ib_wc wc[4];
};

/* The cases' devices: the first, and the second of two-device cases. */
static struct shca_test_shared shca_traffic_devs[2] = {
	{ .name = SHCA_TEST_DEV }, { .name = SHCA_TEST_DEV2 },
};

static void shca_traffic_setup(struct kunit *test, struct shca_traffic *t,
			       const struct shca_traffic_case *c)
{
	struct ib_device *da, *db;

	t->test = test;
	t->c = c;
	da = shca_test_shared_dev(test, &shca_traffic_devs[0], 0);
	db = c->two ? shca_test_shared_dev(test, &shca_traffic_devs[1], 0) : da;
	shca_test_tq_init(test, &t->a, da, c->type, NULL, 16, 8);
	shca_test_tq_init(test, &t->b, db, c->type, NULL, 16, 8);
	shca_test_connect(test, &t->a, &t->b);
}

/* Poll exactly one completion and check its status, opcode and wr_id. */
static struct ib_wc *shca_traffic_one(struct shca_traffic *t, struct shca_tq *tq,
				      enum ib_wc_status status,
				      enum ib_wc_opcode opcode, u64 wr_id)
{
	struct kunit *test = t->test;
	struct ib_wc *wc = &t->wc[0];

	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, wc, 1));
	KUNIT_EXPECT_EQ_MSG(test, status, wc->status, "%s",
			    ib_wc_status_msg(wc->status));
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, opcode, wc->opcode);
	KUNIT_EXPECT_EQ(test, wr_id, wc->wr_id);
	KUNIT_EXPECT_PTR_EQ(test, tq->qp, wc->qp);
	return wc;
}

static void shca_traffic_send(struct shca_traffic *t)
{
	const struct shca_traffic_case *c = t->c;
	struct kunit *test = t->test;
	bool ud = c->type == IB_QPT_UD;
	u32 len = c->inline_data ? 48 : ud ? 512 : SHCA_TRAFFIC_LEN;
	u32 hdr = ud ? 40 : 0;
	union ib_gid sgid, dgid, want;
	struct ib_wc *wc;
	int err;

	shca_fill(t->a.buf, len, 3);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(&t->b, 7, 0, 4096));
	err = shca_test_post_send(&t->a, &t->b, c->op, 5, 0, 0, len,
				  c->inline_data ? IB_SEND_INLINE : 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_SEND, 5);
	wc = shca_traffic_one(t, &t->b, IB_WC_SUCCESS, IB_WC_RECV, 7);
	KUNIT_EXPECT_EQ(test, len + hdr, wc->byte_len);
	KUNIT_EXPECT_MEMEQ(test, t->a.buf, t->b.buf + hdr, len);
	if (c->op == IB_WR_SEND_WITH_IMM) {
		KUNIT_EXPECT_TRUE(test, wc->wc_flags & IB_WC_WITH_IMM);
		KUNIT_EXPECT_EQ(test, SHCA_TEST_IMM,
				be32_to_cpu(wc->ex.imm_data));
	} else {
		KUNIT_EXPECT_FALSE(test, wc->wc_flags & IB_WC_WITH_IMM);
	}
	if (!ud) {
		KUNIT_EXPECT_FALSE(test, wc->wc_flags & IB_WC_GRH);
		return;
	}
	KUNIT_EXPECT_EQ(test, t->a.qp->qp_num, wc->src_qp);
	KUNIT_EXPECT_TRUE(test, wc->wc_flags & IB_WC_GRH);
	KUNIT_EXPECT_TRUE(test, wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE);
	/* The default RoCE v2 GID is IPv6 link-local: an IPv6 header. */
	KUNIT_EXPECT_EQ(test, RDMA_NETWORK_IPV6, wc->network_hdr_type);
	/* ib_core reads the sender and receiver back from the header. */
	err = ib_get_gids_from_rdma_hdr((union rdma_network_hdr *)t->b.buf,
					wc->network_hdr_type, &sgid, &dgid);
	KUNIT_ASSERT_EQ(test, 0, err);
	err = rdma_query_gid(t->a.dev, 1, SHCA_TEST_SGID, &want);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_MEMEQ(test, want.raw, sgid.raw, sizeof(sgid.raw));
	err = rdma_query_gid(t->b.dev, 1, SHCA_TEST_SGID, &want);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_MEMEQ(test, want.raw, dgid.raw, sizeof(dgid.raw));
}

static void shca_traffic_write(struct shca_traffic *t)
{
	const struct shca_traffic_case *c = t->c;
	struct kunit *test = t->test;
	u32 len = c->inline_data ? 60 : SHCA_TRAFFIC_LEN;
	struct ib_wc *wc;
	int err;

	shca_fill(t->a.buf, len, 11);
	if (c->op == IB_WR_RDMA_WRITE_WITH_IMM)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(&t->b, 9, 0, 16));
	err = shca_test_post_send(&t->a, &t->b, c->op, 6, 0, SHCA_TRAFFIC_REMOTE,
				  len, c->inline_data ? IB_SEND_INLINE : 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 6);
	KUNIT_EXPECT_MEMEQ(test, t->a.buf, t->b.buf + SHCA_TRAFFIC_REMOTE, len);
	if (c->op != IB_WR_RDMA_WRITE_WITH_IMM) {
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(t->b.cq, 1, t->wc));
		return;
	}
	wc = shca_traffic_one(t, &t->b, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM, 9);
	KUNIT_EXPECT_EQ(test, len, wc->byte_len);
	KUNIT_EXPECT_TRUE(test, wc->wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, SHCA_TEST_IMM, be32_to_cpu(wc->ex.imm_data));
}

static void shca_traffic_read(struct shca_traffic *t)
{
	struct kunit *test = t->test;
	int err;

	shca_fill(t->b.buf + SHCA_TRAFFIC_REMOTE, SHCA_TRAFFIC_LEN, 21);
	err = shca_test_post_send(&t->a, &t->b, IB_WR_RDMA_READ, 8,
				  SHCA_TRAFFIC_READ_DST, SHCA_TRAFFIC_REMOTE,
				  SHCA_TRAFFIC_LEN, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_RDMA_READ, 8);
	KUNIT_EXPECT_MEMEQ(test, t->b.buf + SHCA_TRAFFIC_REMOTE,
			   t->a.buf + SHCA_TRAFFIC_READ_DST, SHCA_TRAFFIC_LEN);
}

static void shca_traffic_free_mr(void *mr)
{
	ib_dereg_mr(mr);
}

/*
 * A fast-registration MR over two pages of @tq's buffer, in the order
 * given, registered by a REG_MR work request on @tq's own QP.
 */
static struct ib_mr *shca_traffic_fast_reg(struct shca_traffic *t, struct shca_tq *tq,
					   u32 first, u32 second, int access)
{
	struct kunit *test = t->test;
	struct scatterlist sg[2];
	struct ib_reg_wr wr = {};
	struct ib_mr *mr;
	int err;

	mr = ib_alloc_mr(tq->pd, IB_MR_TYPE_MEM_REG, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	err = kunit_add_action_or_reset(test, shca_traffic_free_mr, mr);
	KUNIT_ASSERT_EQ(test, 0, err);
	sg_init_table(sg, 2);
	sg_dma_address(&sg[0]) = tq->addr + first;
	sg_dma_len(&sg[0]) = PAGE_SIZE;
	sg_dma_address(&sg[1]) = tq->addr + second;
	sg_dma_len(&sg[1]) = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, 2, ib_map_mr_sg(mr, sg, 2, NULL, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, 2 * PAGE_SIZE, mr->length);

	ib_update_fast_reg_key(mr, 0x5a);
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_id = 0xfa57;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = access;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr.wr, NULL));
	shca_traffic_one(t, tq, IB_WC_SUCCESS, IB_WC_REG_MR, 0xfa57);
	return mr;
}

static int shca_traffic_atomic(struct shca_traffic *t, struct ib_mr *mr,
			       enum ib_wr_opcode op, u64 compare_add, u64 swap)
{
	struct ib_sge sge = {
		.addr = t->a.addr + SHCA_TRAFFIC_READ_DST,
		.length = 8,
		.lkey = t->a.lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = op,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = mr->iova,
		.rkey = mr->rkey,
		.compare_add = compare_add,
		.swap = swap,
	};

	return ib_post_send(t->a.qp, &wr.wr, NULL);
}

static void shca_traffic_atomics(struct shca_traffic *t)
{
	u64 *target = (u64 *)(t->b.buf + SHCA_TRAFFIC_REMOTE);
	u64 *result = (u64 *)(t->a.buf + SHCA_TRAFFIC_READ_DST);
	bool cs = t->c->op == IB_WR_ATOMIC_CMP_AND_SWP;
	struct kunit *test = t->test;
	enum ib_wc_opcode wc_op;
	struct ib_mr *mr;
	int err;

	wc_op = cs ? IB_WC_COMP_SWAP : IB_WC_FETCH_ADD;
	/* The PD's global rkey has no atomic right; this MR has. */
	mr = shca_traffic_fast_reg(t, &t->b, SHCA_TRAFFIC_REMOTE,
				   SHCA_TRAFFIC_REMOTE + PAGE_SIZE,
				   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC);
	*target = 100;
	/* The first compare matches, the second does not. */
	err = shca_traffic_atomic(t, mr, t->c->op, cs ? 100 : 23, 555);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, wc_op, t->c->op);
	KUNIT_EXPECT_EQ(test, 100ULL, *result);
	KUNIT_EXPECT_EQ(test, cs ? 555ULL : 123ULL, *target);
	err = shca_traffic_atomic(t, mr, t->c->op, cs ? 100 : 1, 777);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, wc_op, t->c->op);
	KUNIT_EXPECT_EQ(test, cs ? 555ULL : 123ULL, *result);
	KUNIT_EXPECT_EQ(test, cs ? 555ULL : 124ULL, *target);
}

/* A page-spanning write through a registered MR whose pages are shuffled. */
static void shca_traffic_reg_mr(struct shca_traffic *t)
{
	struct kunit *test = t->test;
	struct ib_sge sge = {
		.addr = t->a.addr,
		.length = 2 * PAGE_SIZE,
		.lkey = t->a.lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
	};
	struct ib_mr *mr;

	mr = shca_traffic_fast_reg(t, &t->b, 8 * PAGE_SIZE, 2 * PAGE_SIZE,
				   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	shca_fill(t->a.buf, 2 * PAGE_SIZE, 31);
	wr.remote_addr = mr->iova;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(t->a.qp, &wr.wr, NULL));
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 1);
	KUNIT_EXPECT_MEMEQ(test, t->a.buf, t->b.buf + 8 * PAGE_SIZE,
			   PAGE_SIZE);
	KUNIT_EXPECT_MEMEQ(test, t->a.buf + PAGE_SIZE,
			   t->b.buf + 2 * PAGE_SIZE, PAGE_SIZE);
}

/* Send with invalidate: the responder's MR is invalid afterwards. */
static void shca_traffic_send_inv(struct shca_traffic *t)
{
	struct kunit *test = t->test;
	struct ib_sge sge = {
		.addr = t->a.addr,
		.length = 64,
		.lkey = t->a.lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 2,
		.opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_wc *wc;
	struct ib_mr *mr;
	int err;

	mr = shca_traffic_fast_reg(t, &t->b, 4 * PAGE_SIZE, 5 * PAGE_SIZE,
				   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	wr.ex.invalidate_rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(&t->b, 3, 0, 4096));
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(t->a.qp, &wr, NULL));
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_SEND, 2);
	wc = shca_traffic_one(t, &t->b, IB_WC_SUCCESS, IB_WC_RECV, 3);
	KUNIT_EXPECT_TRUE(test, wc->wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, mr->rkey, wc->ex.invalidate_rkey);

	if (t->c->type != IB_QPT_RC)
		return;
	/* The key is gone: a write through it is a remote access error. */
	t->b.rkey = mr->rkey;
	err = shca_test_post_send(&t->a, &t->b, IB_WR_RDMA_WRITE, 4, 0, 0,
				  64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_traffic_one(t, &t->a, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE, 4);
}

/*
 * The device moved the sender to ERR (RC) or SQE (UC) on its own, behind
 * the state the verbs layer last set (RTS).  A modify is judged against
 * the state the QP is in: ERR to RTS is refused, and so is a current
 * state named RTS; SQE to RTS works, with SQE named as the current state
 * (on one device) or with none named (on two), and the QP sends again.
 */
static void shca_traffic_after_the_device_moved_it(struct shca_traffic *t)
{
	struct kunit *test = t->test;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS,
				   .cur_qp_state = IB_QPS_RTS };
	int mask = IB_QP_STATE | IB_QP_CUR_STATE;
	int err;

	if (t->c->type == IB_QPT_RC) {
		KUNIT_EXPECT_EQ(test, -EINVAL,
				ib_modify_qp(t->a.qp, &attr, IB_QP_STATE));
		KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(&t->a));
		return;
	}
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_modify_qp(t->a.qp, &attr, mask));
	KUNIT_EXPECT_EQ(test, IB_QPS_SQE, shca_test_qp_state(&t->a));
	attr.cur_qp_state = IB_QPS_SQE;
	if (t->c->two)
		mask = IB_QP_STATE;
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(t->a.qp, &attr, mask));
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(&t->a));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(&t->b, 24, 0, 4096));
	err = shca_test_post_send(&t->a, &t->b, IB_WR_SEND, 23, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_SEND, 23);
	shca_traffic_one(t, &t->b, IB_WC_SUCCESS, IB_WC_RECV, 24);
}

/* Local invalidate: the requester's own MR stops working for it. */
static void shca_traffic_local_inv(struct shca_traffic *t)
{
	struct kunit *test = t->test;
	struct ib_sge sge = { .length = 64 };
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_send_wr inv = {
		.wr_id = 21,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_mr *mr;

	mr = shca_traffic_fast_reg(t, &t->a, 0, PAGE_SIZE, IB_ACCESS_LOCAL_WRITE);
	sge.addr = mr->iova;
	sge.lkey = mr->lkey;
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(&t->b, 1, 0, 4096));
	wr.wr_id = 20;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(t->a.qp, &wr, NULL));
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_SEND, 20);
	shca_traffic_one(t, &t->b, IB_WC_SUCCESS, IB_WC_RECV, 1);

	inv.ex.invalidate_rkey = mr->lkey;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(t->a.qp, &inv, NULL));
	shca_traffic_one(t, &t->a, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 21);

	wr.wr_id = 22;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(t->a.qp, &wr, NULL));
	shca_traffic_one(t, &t->a, IB_WC_LOC_PROT_ERR, IB_WC_SEND, 22);
	KUNIT_EXPECT_EQ(test, t->c->type == IB_QPT_RC ? IB_QPS_ERR :
			IB_QPS_SQE, shca_test_qp_state(&t->a));
	shca_traffic_after_the_device_moved_it(t);
}

static void shca_test_opcode_delivers_data_and_completion(struct kunit *test)
{
	const struct shca_traffic_case *c = test->param_value;
	struct shca_traffic *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	shca_traffic_setup(test, t, c);

	switch (c->op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		shca_traffic_send(t);
		break;
	case IB_WR_SEND_WITH_INV:
		shca_traffic_send_inv(t);
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		shca_traffic_write(t);
		break;
	case IB_WR_RDMA_READ:
		shca_traffic_read(t);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		shca_traffic_atomics(t);
		break;
	case IB_WR_LOCAL_INV:
		shca_traffic_local_inv(t);
		break;
	case IB_WR_REG_MR:
		shca_traffic_reg_mr(t);
		break;
	default:
		KUNIT_FAIL(test, "no test for opcode %d", c->op);
	}
}

/*
 * An RDMA WRITE from a buffer into itself, the two ranges overlapping,
 * forwards and backwards, within one run of memory (the PD's DMA keys):
 * the bytes arrive as they were before the write began, as memmove()
 * would move them.
 */
static void shca_test_write_over_its_own_source_lands_as_memmove(struct kunit *test)
{
	static const struct { u32 from, to; } moves[] = {
		{ 0, 1000 }, { 1000, 0 }, { 100, 4196 },
	};
	const u32 len = 3 * SZ_4K, span = len + SZ_8K;
	struct shca_tq *a = shca_test_tq_new(test);
	struct ib_device *dev;
	u8 *want;
	u32 i, k;

	dev = shca_test_shared_dev(test, &shca_traffic_devs[0], 0);
	shca_test_tq_init(test, a, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, a);
	want = kunit_kmalloc(test, span, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	for (k = 0; k < ARRAY_SIZE(moves); k++) {
		for (i = 0; i < span; i++)
			a->buf[i] = (u8)(i * 7 + k + 1);
		memcpy(want, a->buf, span);
		memmove(want + moves[k].to, want + moves[k].from, len);
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_post_send(a, a, IB_WR_RDMA_WRITE, k,
						    moves[k].from, moves[k].to,
						    len, 0));
		shca_test_expect(test, a, IB_WC_SUCCESS, k);
		KUNIT_EXPECT_MEMEQ_MSG(test, a->buf, want, span,
				       "from %u to %u", moves[k].from,
				       moves[k].to);
	}
}

static struct kunit_case shca_traffic_cases[] = {
	KUNIT_CASE_PARAM(shca_test_opcode_delivers_data_and_completion, shca_traffic_gen_params),
	KUNIT_CASE(shca_test_write_over_its_own_source_lands_as_memmove),
	{}
};

static void shca_traffic_exit(struct kunit_suite *suite)
{
	shca_test_shared_del(&shca_traffic_devs[0]);
	shca_test_shared_del(&shca_traffic_devs[1]);
}

static struct kunit_suite shca_traffic_suite = {
	.name = "shca_traffic",
	.suite_exit = shca_traffic_exit,
	.test_cases = shca_traffic_cases,
};

kunit_test_suite(shca_traffic_suite);
