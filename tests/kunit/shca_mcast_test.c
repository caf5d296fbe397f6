// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: UD multicast.  The model's ATTACH_MCAST and DETACH_MCAST and the
 * bad input they refuse; then, through ib_core, a UD send to QPN 0xffffff
 * and a multicast GID: one copy to every member on one device and on two,
 * none to a member with another Q_Key, none to the sender, none after a
 * detach, a member without a receive dropping only its own copy; and a
 * destroyed or reset QP, and a QP that inherits its QPN, in no group.
 *
 * Delivery is synchronous in the sender's turn: every member's copy is
 * in its CQ before the sender's own completion is written.  So once the
 * sender's completion is polled, a member's empty CQ proves that no copy
 * came, and no test waits for something not to happen.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <net/if_inet6.h>

#include "shca.h"
#include "shca_test.h"

/* The group the traffic tests use: an IPv6 multicast address. */
static const u8 shca_mc_mgid[16] = { 0xff, 0x0e, [14] = 0x12, [15] = 0x34 };
/* The bytes a UD receive starts with, before the payload. */
#define SHCA_MC_GRH		40
#define SHCA_MC_LEN		64
#define SHCA_MC_OTHER_QKEY	0x22222222

/* --- model level: what ATTACH_MCAST and DETACH_MCAST accept ------------ */

#define SHCA_MC_NUD		9

/**
 * struct shca_mc_hw - a model with QPs of every type
 * @hw: the model
 * @ud: UD QPs, enough to fill a group and one more
 * @rc: an RC QP
 * @uc: a UC QP
 * @gsi: the GSI QP
 * @pdn: the PD they are in
 * @cqn: the CQ they use
 */
struct shca_mc_hw {
	struct shca_hw *hw;
	u32 ud[SHCA_MC_NUD];
	u32 rc;
	u32 uc;
	u32 gsi;
	u32 pdn;
	u32 cqn;
};

static u32 shca_mc_hw_qp(struct kunit *test, struct shca_hw *hw, u32 pdn,
			 u32 cqn, u32 type)
{
	struct shca_hw_cmd qp = { .opcode = SHCA_CMD_CREATE_QP };

	qp.in.qp.sq.ring = kunit_kzalloc(test, 4 * sizeof(struct shca_hw_send_wqe),
					 GFP_KERNEL);
	qp.in.qp.rq.ring = kunit_kzalloc(test, 4 * sizeof(struct shca_hw_recv_wqe),
					 GFP_KERNEL);
	qp.in.qp.dbrec = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, qp.in.qp.sq.ring && qp.in.qp.rq.ring &&
			  qp.in.qp.dbrec);
	qp.in.qp.type = type;
	qp.in.qp.pdn = pdn;
	qp.in.qp.send_cqn = cqn;
	qp.in.qp.recv_cqn = cqn;
	qp.in.qp.sq.log_depth = 2;
	qp.in.qp.rq.log_depth = 2;
	qp.in.qp.max_send_sge = 1;
	qp.in.qp.max_recv_sge = 1;
	return shca_test_hw_create(test, hw, &qp);
}

static void shca_mc_hw_init(struct kunit *test, struct shca_mc_hw *m)
{
	struct shca_hw_cmd pd = { .opcode = SHCA_CMD_ALLOC_PD };
	struct shca_hw_cmd cq = { .opcode = SHCA_CMD_CREATE_CQ };
	u32 pdn, cqn, i;

	m->hw = shca_test_hw(test);
	cq.in.cq.ring = kunit_kzalloc(test, 64 * sizeof(struct shca_hw_cqe),
				      GFP_KERNEL);
	cq.in.cq.dbrec = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, cq.in.cq.ring && cq.in.cq.dbrec);
	cq.in.cq.log_depth = 6;
	cqn = shca_test_hw_create(test, m->hw, &cq);
	pdn = shca_test_hw_create(test, m->hw, &pd);
	for (i = 0; i < SHCA_MC_NUD; i++)
		m->ud[i] = shca_mc_hw_qp(test, m->hw, pdn, cqn, SHCA_QPT_UD);
	m->rc = shca_mc_hw_qp(test, m->hw, pdn, cqn, SHCA_QPT_RC);
	m->uc = shca_mc_hw_qp(test, m->hw, pdn, cqn, SHCA_QPT_UC);
	m->gsi = shca_mc_hw_qp(test, m->hw, pdn, cqn, SHCA_QPT_GSI);
	m->pdn = pdn;
	m->cqn = cqn;
}

static enum shca_hw_status shca_mc_hw_cmd(struct shca_hw *hw, u32 opcode,
					  u32 qpn, const u8 *mgid)
{
	struct shca_hw_cmd cmd = { .opcode = opcode, .index = qpn };

	memcpy(cmd.in.mgid, mgid, sizeof(cmd.in.mgid));
	return shca_hw_exec(hw, &cmd);
}

/* Group @n of the many a test fills the table with: ff0e::1:<n>. */
static void shca_mc_nth_mgid(u8 *mgid, u32 n)
{
	memset(mgid, 0, 16);
	mgid[0] = 0xff;
	mgid[1] = 0x0e;
	mgid[13] = 1;
	mgid[14] = n >> 8;
	mgid[15] = n;
}

/**
 * enum shca_mc_prep - what a case does to the table before its command
 * @SHCA_MC_PREP_NONE: nothing
 * @SHCA_MC_PREP_ATTACHED: the QP is in the case's group
 * @SHCA_MC_PREP_LEFT: the QP was in the group and was detached
 * @SHCA_MC_PREP_OTHER: another QP is in the group, not the case's
 * @SHCA_MC_PREP_GROUP_FULL: the group has max_mcast_qp_attach other QPs
 * @SHCA_MC_PREP_TABLE_FULL: max_mcast_grp other groups are in use
 * @SHCA_MC_PREP_TOTAL_FULL: other groups hold max_total_mcast_qp_attach
 *	attachments
 */
enum shca_mc_prep {
	SHCA_MC_PREP_NONE,
	SHCA_MC_PREP_ATTACHED,
	SHCA_MC_PREP_LEFT,
	SHCA_MC_PREP_OTHER,
	SHCA_MC_PREP_GROUP_FULL,
	SHCA_MC_PREP_TABLE_FULL,
	SHCA_MC_PREP_TOTAL_FULL,
};

/* Which QP a case's command names. */
enum shca_mc_who { SHCA_MC_UD, SHCA_MC_RC, SHCA_MC_UC, SHCA_MC_GSI,
		   SHCA_MC_NOBODY };

/**
 * struct shca_mc_input_case - one ATTACH_MCAST or DETACH_MCAST
 * @desc: what it is
 * @opcode: the command
 * @mgid: its GID
 * @who: the QP it names
 * @prep: the table before it
 * @status: what the device must answer
 */
struct shca_mc_input_case {
	const char *desc;
	u32 opcode;
	u8 mgid[16];
	enum shca_mc_who who;
	enum shca_mc_prep prep;
	enum shca_hw_status status;
};

#define SHCA_MC_V4(a, b, c, d)	{ [10] = 0xff, [11] = 0xff, [12] = a, \
				  [13] = b, [14] = c, [15] = d }
#define SHCA_MC_V6		{ 0xff, 0x0e, [15] = 7 }

static const struct shca_mc_input_case shca_mc_input_cases[] = {
	{ "attach ff0e::7", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6, SHCA_MC_UD,
	  SHCA_MC_PREP_NONE, SHCA_HW_OK },
	{ "attach ff02::1", SHCA_CMD_ATTACH_MCAST, { 0xff, 0x02, [15] = 1 },
	  SHCA_MC_UD, SHCA_MC_PREP_NONE, SHCA_HW_OK },
	{ "attach ::ffff:224.0.0.1", SHCA_CMD_ATTACH_MCAST,
	  SHCA_MC_V4(224, 0, 0, 1), SHCA_MC_UD, SHCA_MC_PREP_NONE, SHCA_HW_OK },
	{ "attach ::ffff:239.255.255.255", SHCA_CMD_ATTACH_MCAST,
	  SHCA_MC_V4(239, 255, 255, 255), SHCA_MC_UD, SHCA_MC_PREP_NONE,
	  SHCA_HW_OK },
	{ "attach to a group another QP is in", SHCA_CMD_ATTACH_MCAST,
	  SHCA_MC_V6, SHCA_MC_UD, SHCA_MC_PREP_OTHER, SHCA_HW_OK },
	{ "attach again after a detach", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6,
	  SHCA_MC_UD, SHCA_MC_PREP_LEFT, SHCA_HW_OK },
	{ "detach an attached QP", SHCA_CMD_DETACH_MCAST, SHCA_MC_V6,
	  SHCA_MC_UD, SHCA_MC_PREP_ATTACHED, SHCA_HW_OK },
	{ "attach the zero GID", SHCA_CMD_ATTACH_MCAST, {}, SHCA_MC_UD,
	  SHCA_MC_PREP_NONE, SHCA_HW_BAD_PARAM },
	{ "attach fe80::1", SHCA_CMD_ATTACH_MCAST, { 0xfe, 0x80, [15] = 1 },
	  SHCA_MC_UD, SHCA_MC_PREP_NONE, SHCA_HW_BAD_PARAM },
	{ "attach ::ffff:10.0.0.1", SHCA_CMD_ATTACH_MCAST,
	  SHCA_MC_V4(10, 0, 0, 1), SHCA_MC_UD, SHCA_MC_PREP_NONE,
	  SHCA_HW_BAD_PARAM },
	{ "attach ::ffff:240.0.0.1", SHCA_CMD_ATTACH_MCAST,
	  SHCA_MC_V4(240, 0, 0, 1), SHCA_MC_UD, SHCA_MC_PREP_NONE,
	  SHCA_HW_BAD_PARAM },
	{ "attach ::fffe:224.0.0.1", SHCA_CMD_ATTACH_MCAST,
	  { [10] = 0xff, [11] = 0xfe, [12] = 224, [15] = 1 }, SHCA_MC_UD,
	  SHCA_MC_PREP_NONE, SHCA_HW_BAD_PARAM },
	{ "detach from fe80::1", SHCA_CMD_DETACH_MCAST,
	  { 0xfe, 0x80, [15] = 1 }, SHCA_MC_UD, SHCA_MC_PREP_NONE,
	  SHCA_HW_BAD_PARAM },
	{ "attach an RC QP", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6, SHCA_MC_RC,
	  SHCA_MC_PREP_NONE, SHCA_HW_BAD_PARAM },
	{ "attach a UC QP", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6, SHCA_MC_UC,
	  SHCA_MC_PREP_NONE, SHCA_HW_BAD_PARAM },
	{ "attach the GSI QP", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6, SHCA_MC_GSI,
	  SHCA_MC_PREP_NONE, SHCA_HW_BAD_PARAM },
	{ "attach a QPN nobody holds", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6,
	  SHCA_MC_NOBODY, SHCA_MC_PREP_NONE, SHCA_HW_BAD_INDEX },
	{ "detach a QPN nobody holds", SHCA_CMD_DETACH_MCAST, SHCA_MC_V6,
	  SHCA_MC_NOBODY, SHCA_MC_PREP_NONE, SHCA_HW_BAD_INDEX },
	{ "attach a QP twice", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6, SHCA_MC_UD,
	  SHCA_MC_PREP_ATTACHED, SHCA_HW_EXISTS },
	{ "detach from a group that does not exist", SHCA_CMD_DETACH_MCAST,
	  SHCA_MC_V6, SHCA_MC_UD, SHCA_MC_PREP_NONE, SHCA_HW_NOT_FOUND },
	{ "detach from a group of other QPs", SHCA_CMD_DETACH_MCAST,
	  SHCA_MC_V6, SHCA_MC_UD, SHCA_MC_PREP_OTHER, SHCA_HW_NOT_FOUND },
	{ "detach twice", SHCA_CMD_DETACH_MCAST, SHCA_MC_V6, SHCA_MC_UD,
	  SHCA_MC_PREP_LEFT, SHCA_HW_NOT_FOUND },
	{ "attach to a full group", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6,
	  SHCA_MC_UD, SHCA_MC_PREP_GROUP_FULL, SHCA_HW_NO_RESOURCES },
	{ "attach a group to a full table", SHCA_CMD_ATTACH_MCAST, SHCA_MC_V6,
	  SHCA_MC_UD, SHCA_MC_PREP_TABLE_FULL, SHCA_HW_NO_RESOURCES },
	{ "attach past the device's attachments", SHCA_CMD_ATTACH_MCAST,
	  SHCA_MC_V6, SHCA_MC_UD, SHCA_MC_PREP_TOTAL_FULL,
	  SHCA_HW_NO_RESOURCES },
};

static void shca_mc_input_desc(const struct shca_mc_input_case *c,
			       char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(shca_mc_input, shca_mc_input_cases, shca_mc_input_desc);

/* The table as @prep says; the case's own QP is m->ud[0]. */
static void shca_mc_prepare(struct kunit *test, struct shca_mc_hw *m,
			    const struct shca_mc_input_case *c)
{
	const struct shca_hw_caps *caps = shca_hw_caps(m->hw);
	struct shca_hw *hw = m->hw;
	u32 per_group = caps->max_mcast_qp_attach;
	u8 mgid[16];
	u32 i, j;

	switch (c->prep) {
	case SHCA_MC_PREP_NONE:
		break;
	case SHCA_MC_PREP_ATTACHED:
	case SHCA_MC_PREP_LEFT:
		KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
				shca_mc_hw_cmd(hw, SHCA_CMD_ATTACH_MCAST,
					       m->ud[0], c->mgid));
		if (c->prep == SHCA_MC_PREP_LEFT)
			KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
					shca_mc_hw_cmd(hw, SHCA_CMD_DETACH_MCAST,
						       m->ud[0], c->mgid));
		break;
	case SHCA_MC_PREP_OTHER:
		KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
				shca_mc_hw_cmd(hw, SHCA_CMD_ATTACH_MCAST,
					       m->ud[1], c->mgid));
		break;
	case SHCA_MC_PREP_GROUP_FULL:
		KUNIT_ASSERT_LT(test, per_group, (u32)SHCA_MC_NUD);
		for (i = 1; i <= per_group; i++)
			KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
					shca_mc_hw_cmd(hw, SHCA_CMD_ATTACH_MCAST,
						       m->ud[i], c->mgid));
		break;
	case SHCA_MC_PREP_TABLE_FULL:
		for (i = 0; i < caps->max_mcast_grp; i++) {
			shca_mc_nth_mgid(mgid, i);
			KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
					shca_mc_hw_cmd(hw, SHCA_CMD_ATTACH_MCAST,
						       m->ud[1], mgid));
		}
		break;
	case SHCA_MC_PREP_TOTAL_FULL:
		/* Full groups of other QPs, the table itself not full. */
		KUNIT_ASSERT_EQ(test, 0U,
				caps->max_total_mcast_qp_attach % per_group);
		KUNIT_ASSERT_LT(test,
				caps->max_total_mcast_qp_attach / per_group,
				caps->max_mcast_grp);
		for (i = 0; i < caps->max_total_mcast_qp_attach / per_group;
		     i++) {
			shca_mc_nth_mgid(mgid, i);
			for (j = 1; j <= per_group; j++)
				KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
						shca_mc_hw_cmd(hw,
							       SHCA_CMD_ATTACH_MCAST,
							       m->ud[j], mgid));
		}
		break;
	}
}

static void shca_test_attach_and_detach_check_their_input(struct kunit *test)
{
	const struct shca_mc_input_case *c = test->param_value;
	struct shca_mc_hw m;
	u32 qpn, groups, mine;
	enum shca_hw_status st;
	bool ok;

	shca_mc_hw_init(test, &m);
	shca_mc_prepare(test, &m, c);
	switch (c->who) {
	case SHCA_MC_UD:
		qpn = m.ud[0];
		break;
	case SHCA_MC_RC:
		qpn = m.rc;
		break;
	case SHCA_MC_UC:
		qpn = m.uc;
		break;
	case SHCA_MC_GSI:
		qpn = m.gsi;
		break;
	default:
		qpn = 0xabcdef;
		break;
	}
	groups = shca_hw_mcast_groups(m.hw);
	mine = shca_hw_mcast_groups_of(m.hw, qpn);
	st = shca_mc_hw_cmd(m.hw, c->opcode, qpn, c->mgid);
	KUNIT_EXPECT_EQ(test, c->status, st);

	/* A refused command changes nothing; one that works, one entry. */
	ok = st == SHCA_HW_OK;
	if (c->opcode == SHCA_CMD_ATTACH_MCAST) {
		KUNIT_EXPECT_EQ(test, mine + ok,
				shca_hw_mcast_groups_of(m.hw, qpn));
		KUNIT_EXPECT_EQ(test, groups + (ok && c->prep != SHCA_MC_PREP_OTHER),
				shca_hw_mcast_groups(m.hw));
	} else {
		KUNIT_EXPECT_EQ(test, mine - ok,
				shca_hw_mcast_groups_of(m.hw, qpn));
		KUNIT_EXPECT_EQ(test, groups - ok, shca_hw_mcast_groups(m.hw));
	}
	/* The errno the driver makes of it, for kernel callers. */
	if (st == SHCA_HW_EXISTS)
		KUNIT_EXPECT_EQ(test, -EEXIST, shca_status_to_errno(st));
	if (st == SHCA_HW_NOT_FOUND)
		KUNIT_EXPECT_EQ(test, -ENOENT, shca_status_to_errno(st));
	if (st == SHCA_HW_NO_RESOURCES)
		KUNIT_EXPECT_EQ(test, -ENOMEM, shca_status_to_errno(st));
}

/* --- through ib_core ---------------------------------------------------- */

static void shca_test_mcast_caps_reach_query_device(struct kunit *test)
{
	struct ib_device *dev;
	const struct shca_hw_caps *caps;
	struct ib_device_attr attr;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	caps = &to_shca_dev(dev)->caps;
	KUNIT_ASSERT_EQ(test, 0, dev->ops.query_device(dev, &attr, NULL));
	KUNIT_EXPECT_GT(test, caps->max_mcast_grp, 0U);
	KUNIT_EXPECT_EQ(test, caps->max_mcast_grp, (u32)attr.max_mcast_grp);
	KUNIT_EXPECT_EQ(test, caps->max_mcast_qp_attach,
			(u32)attr.max_mcast_qp_attach);
	KUNIT_EXPECT_EQ(test, caps->max_total_mcast_qp_attach,
			(u32)attr.max_total_mcast_qp_attach);
	KUNIT_EXPECT_EQ(test, caps->max_mcast_grp,
			(u32)dev->attrs.max_mcast_grp);
}

/* A UD QP on @dev in RTS, with the tests' Q_Key. */
static struct shca_tq *shca_mc_qp(struct kunit *test, struct ib_device *dev)
{
	struct shca_tq *tq = shca_test_tq_new(test);

	shca_test_tq_init(test, tq, dev, IB_QPT_UD, NULL, 16, 8);
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(tq, tq));
	return tq;
}

static int shca_mc_attach(struct shca_tq *tq)
{
	union ib_gid gid;

	memcpy(gid.raw, shca_mc_mgid, sizeof(gid.raw));
	return ib_attach_mcast(tq->qp, &gid, 0);
}

static int shca_mc_detach(struct shca_tq *tq)
{
	union ib_gid gid;

	memcpy(gid.raw, shca_mc_mgid, sizeof(gid.raw));
	return ib_detach_mcast(tq->qp, &gid, 0);
}

static void shca_mc_ah_free(void *ah)
{
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/* An AH to the group, for @tq's PD. */
static struct ib_ah *shca_mc_ah(struct kunit *test, struct shca_tq *tq)
{
	struct rdma_ah_attr attr = {};
	union ib_gid dgid;
	struct ib_ah *ah;

	memcpy(dgid.raw, shca_mc_mgid, sizeof(dgid.raw));
	attr.type = rdma_ah_find_type(tq->dev, 1);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &dgid, 0, SHCA_TEST_SGID, 64, 0);
	ipv6_eth_mc_map((struct in6_addr *)dgid.raw, attr.roce.dmac);
	ah = rdma_create_ah(tq->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_mc_ah_free, ah));
	return ah;
}

/* Post a send of SHCA_MC_LEN bytes of @tag from @tq to the group. */
static u64 shca_mc_post_send(struct kunit *test, struct shca_tq *tq,
			     struct ib_ah *ah, u8 tag, u32 qkey)
{
	struct ib_sge sge = {
		.addr = tq->addr + SHCA_TEST_BUF / 2,
		.length = SHCA_MC_LEN,
		.lkey = tq->lkey,
	};
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = 0x5e00 | tag,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.ah = ah,
		.remote_qpn = SHCA_HW_MCAST_QPN,
		.remote_qkey = qkey,
	};

	memset(tq->buf + SHCA_TEST_BUF / 2, tag, SHCA_MC_LEN);
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr.wr, NULL));
	return wr.wr.wr_id;
}

/*
 * Send SHCA_MC_LEN bytes of @tag from @tq to the group, with @qkey, and
 * poll the send's completion.
 */
static void shca_mc_send(struct kunit *test, struct shca_tq *tq,
			 struct ib_ah *ah, u8 tag, u32 qkey)
{
	u64 wr_id = shca_mc_post_send(test, tq, ah, tag, qkey);
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
	KUNIT_ASSERT_EQ(test, IB_WC_SEND, wc.opcode);
	KUNIT_ASSERT_EQ_MSG(test, IB_WC_SUCCESS, wc.status, "%s",
			    ib_wc_status_msg(wc.status));
	KUNIT_EXPECT_EQ(test, wr_id, wc.wr_id);
}

/* Post a receive for one copy, at the start of @tq's buffer. */
static void shca_mc_post_recv(struct kunit *test, struct shca_tq *tq, u64 id)
{
	memset(tq->buf, 0, SHCA_MC_GRH + SHCA_MC_LEN);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(tq, id, 0,
						     SHCA_MC_GRH + SHCA_MC_LEN));
}

/* @tq received the copy of @tag from @from, into receive @id. */
static void shca_mc_expect_copy(struct kunit *test, struct shca_tq *tq,
				struct shca_tq *from, u64 id, u8 tag)
{
	struct ib_wc wc;
	u32 i;

	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
	KUNIT_EXPECT_EQ_MSG(test, IB_WC_SUCCESS, wc.status, "%s",
			    ib_wc_status_msg(wc.status));
	KUNIT_EXPECT_EQ(test, IB_WC_RECV, wc.opcode);
	KUNIT_EXPECT_EQ(test, id, wc.wr_id);
	KUNIT_EXPECT_EQ(test, (u32)(SHCA_MC_GRH + SHCA_MC_LEN), wc.byte_len);
	KUNIT_EXPECT_EQ(test, from->qp->qp_num, wc.src_qp);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_GRH);
	/* The GRH's destination is the group. */
	KUNIT_EXPECT_MEMEQ(test, tq->buf + 24, shca_mc_mgid, 16);
	for (i = 0; i < SHCA_MC_LEN; i++)
		if (tq->buf[SHCA_MC_GRH + i] != tag)
			break;
	KUNIT_EXPECT_EQ_MSG(test, (u32)SHCA_MC_LEN, i,
			    "payload byte %u is %#x, not %#x", i,
			    tq->buf[SHCA_MC_GRH + i], tag);
}

/* Nothing came to @tq: its sender's completion was polled already. */
static void shca_mc_expect_nothing(struct kunit *test, struct shca_tq *tq)
{
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(tq->cq, 1, &wc));
}

static u64 shca_mc_rx(struct ib_device *a, struct ib_device *b)
{
	u64 rx = shca_test_counter(a, SHCA_CNT_MCAST_RX);

	if (b != a)
		rx += shca_test_counter(b, SHCA_CNT_MCAST_RX);
	return rx;
}

static const bool shca_mc_two_params[] = { false, true };

static void shca_mc_two_desc(const bool *two, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *two ? "two devices" : "one device");
}

KUNIT_ARRAY_PARAM(shca_mc_two, shca_mc_two_params, shca_mc_two_desc);

#define SHCA_MC_MEMBERS	4

static void shca_test_mcast_delivers_one_copy_to_each_member(struct kunit *test)
{
	bool two = *(const bool *)test->param_value;
	struct shca_tq *member[SHCA_MC_MEMBERS], *sender;
	struct ib_device *da, *db;
	u64 tx, rx;
	struct ib_ah *ah;
	int i;

	shca_test_devices(test, two, &da, &db);
	sender = shca_mc_qp(test, da);
	/* Half the members on the sender's device, half on the other. */
	for (i = 0; i < SHCA_MC_MEMBERS; i++) {
		member[i] = shca_mc_qp(test, i % 2 ? db : da);
		KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(member[i]));
		/* Room for two copies: a second one would show. */
		shca_mc_post_recv(test, member[i], 100 + i);
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_post_recv(member[i], 200 + i,
						    SHCA_TEST_BUF / 4, 256));
	}
	KUNIT_EXPECT_EQ(test, 1U, shca_hw_mcast_groups(to_shca_dev(da)->hw));
	ah = shca_mc_ah(test, sender);
	tx = shca_test_counter(da, SHCA_CNT_MCAST_TX);
	rx = shca_mc_rx(da, db);

	shca_mc_send(test, sender, ah, 0xa1, SHCA_TEST_QKEY);
	for (i = 0; i < SHCA_MC_MEMBERS; i++) {
		shca_mc_expect_copy(test, member[i], sender, 100 + i, 0xa1);
		shca_mc_expect_nothing(test, member[i]);
	}
	KUNIT_EXPECT_EQ(test, tx + 1, shca_test_counter(da, SHCA_CNT_MCAST_TX));
	KUNIT_EXPECT_EQ(test, rx + SHCA_MC_MEMBERS, shca_mc_rx(da, db));
	for (i = 0; i < SHCA_MC_MEMBERS; i++)
		KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(member[i]));
}

static void shca_test_mcast_qkey_mismatch_drops_the_copy(struct kunit *test)
{
	struct shca_tq *sender, *good, *bad;
	struct ib_qp_attr attr = { .qkey = SHCA_MC_OTHER_QKEY };
	struct ib_device *da, *db;
	struct ib_ah *ah;
	u64 dropped;

	shca_test_devices(test, true, &da, &db);
	sender = shca_mc_qp(test, da);
	good = shca_mc_qp(test, db);
	bad = shca_mc_qp(test, db);
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(bad->qp, &attr, IB_QP_QKEY));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(good));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(bad));
	shca_mc_post_recv(test, good, 1);
	shca_mc_post_recv(test, bad, 2);
	ah = shca_mc_ah(test, sender);
	dropped = shca_test_counter(db, SHCA_CNT_DROPPED);

	shca_mc_send(test, sender, ah, 0xb2, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, good, sender, 1, 0xb2);
	shca_mc_expect_nothing(test, bad);
	KUNIT_EXPECT_EQ(test, dropped + 1,
			shca_test_counter(db, SHCA_CNT_DROPPED));

	/* With the other Q_Key, the other member. */
	shca_mc_post_recv(test, good, 3);
	shca_mc_send(test, sender, ah, 0xb3, SHCA_MC_OTHER_QKEY);
	shca_mc_expect_copy(test, bad, sender, 2, 0xb3);
	shca_mc_expect_nothing(test, good);
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(good));
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(bad));
}

static void shca_test_mcast_member_without_a_receive_blocks_nobody(struct kunit *test)
{
	struct shca_tq *sender, *empty, *full;
	struct ib_device *da, *db;
	struct ib_ah *ah;
	u64 dropped;

	shca_test_devices(test, true, &da, &db);
	sender = shca_mc_qp(test, da);
	empty = shca_mc_qp(test, db);
	full = shca_mc_qp(test, db);
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(empty));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(full));
	shca_mc_post_recv(test, full, 1);
	ah = shca_mc_ah(test, sender);
	dropped = shca_test_counter(db, SHCA_CNT_DROPPED);

	shca_mc_send(test, sender, ah, 0xc1, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, full, sender, 1, 0xc1);
	KUNIT_EXPECT_EQ(test, dropped + 1,
			shca_test_counter(db, SHCA_CNT_DROPPED));

	/* The copy was dropped, not kept: a receive now gets the next one. */
	shca_mc_post_recv(test, empty, 2);
	shca_mc_post_recv(test, full, 3);
	shca_mc_send(test, sender, ah, 0xc2, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, empty, sender, 2, 0xc2);
	shca_mc_expect_nothing(test, empty);
	shca_mc_expect_copy(test, full, sender, 3, 0xc2);
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(empty));
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(full));
}

static void shca_test_mcast_sender_gets_no_copy_of_its_own(struct kunit *test)
{
	struct shca_tq *sender, *other;
	struct ib_device *da, *db;
	struct ib_ah *ah;

	shca_test_devices(test, false, &da, &db);
	sender = shca_mc_qp(test, da);
	other = shca_mc_qp(test, da);
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(sender));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(other));
	shca_mc_post_recv(test, sender, 1);
	shca_mc_post_recv(test, other, 2);
	ah = shca_mc_ah(test, sender);

	/* shca_mc_send() polls exactly the send's completion. */
	shca_mc_send(test, sender, ah, 0xd1, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, other, sender, 2, 0xd1);
	shca_mc_expect_nothing(test, sender);

	/* Its receive is still there, for the other member's message. */
	shca_mc_send(test, other, shca_mc_ah(test, other), 0xd2,
		     SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, sender, other, 1, 0xd2);
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(sender));
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(other));
}

static void shca_test_mcast_detach_stops_delivery(struct kunit *test)
{
	struct shca_tq *sender, *leaver, *stayer;
	struct ib_device *da, *db;
	struct ib_ah *ah;

	shca_test_devices(test, true, &da, &db);
	sender = shca_mc_qp(test, da);
	leaver = shca_mc_qp(test, db);
	stayer = shca_mc_qp(test, db);
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(leaver));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(stayer));
	ah = shca_mc_ah(test, sender);
	shca_mc_post_recv(test, leaver, 1);
	shca_mc_post_recv(test, stayer, 2);
	shca_mc_send(test, sender, ah, 0xe1, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, leaver, sender, 1, 0xe1);
	shca_mc_expect_copy(test, stayer, sender, 2, 0xe1);

	KUNIT_ASSERT_EQ(test, 0, shca_mc_detach(leaver));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_mcast_groups_of(to_shca_dev(db)->hw,
							  leaver->qp->qp_num));
	/* A second detach: the QP is not in the group. */
	KUNIT_EXPECT_EQ(test, -ENOENT, shca_mc_detach(leaver));
	shca_mc_post_recv(test, leaver, 3);
	shca_mc_post_recv(test, stayer, 4);
	shca_mc_send(test, sender, ah, 0xe2, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, stayer, sender, 4, 0xe2);
	shca_mc_expect_nothing(test, leaver);
	/* And a second attach, of the one still in. */
	KUNIT_EXPECT_EQ(test, -EEXIST, shca_mc_attach(stayer));
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(stayer));
}

static int shca_mc_stall_detach(void *member)
{
	return shca_mc_detach(member);
}

/* The member is out of the group table: its detach is waiting. */
static bool shca_mc_stall_left(void *member)
{
	struct shca_tq *tq = member;

	return !shca_hw_mcast_groups_of(to_shca_dev(tq->dev)->hw,
					tq->qp->qp_num);
}

/*
 * A member's responder is held in the middle of taking in a copy (its
 * receive CQE in the cqe_publish window).  A detach must wait for it, so
 * that no copy is taken in once the detach returns; meanwhile the
 * device's other commands (a CQ created and destroyed) complete.  With
 * the wait under the device-wide command mutex they would wait too.
 */
static void shca_test_mcast_detach_waits_for_its_copy_alone(struct kunit *test)
{
	struct shca_tq *sender, *member;
	struct shca_hw_window *win;
	struct shca_test_stall *s;
	struct ib_device *da, *db;
	struct ib_wc wc;
	u64 wr_id;

	shca_test_devices(test, true, &da, &db);
	sender = shca_mc_qp(test, da);
	member = shca_mc_qp(test, db);
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(member));
	s = shca_test_stall_new(test, db, shca_mc_stall_detach,
				shca_mc_stall_left, member);
	win = shca_test_window_arm(test, db, SHCA_WIN_CQE_PUBLISH,
				   member->qp->qp_num);
	shca_mc_post_recv(test, member, 1);
	wr_id = shca_mc_post_send(test, sender, shca_mc_ah(test, sender), 0xf1,
				  SHCA_TEST_QKEY);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_TEST_WAIT));

	shca_test_stall_run(s);
	shca_test_stall_expect_alone(test, s);
	KUNIT_EXPECT_EQ(test, SHCA_HW_WIN_HELD, shca_hw_window_state(win));

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&s->cmd_done,
							    SHCA_TEST_WAIT));
	KUNIT_EXPECT_EQ(test, 0, s->cmd_ret);
	/* The copy in flight was taken in whole; the send completed. */
	shca_mc_expect_copy(test, member, sender, 1, 0xf1);
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(sender, &wc, 1));
	KUNIT_EXPECT_EQ(test, wr_id, wc.wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

static void shca_mc_reset(struct kunit *test, struct shca_tq *tq)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(tq->qp, &attr, IB_QP_STATE));
	/* shca_test_to_rts() makes the end a new AH. */
	rdma_destroy_ah(tq->ah, RDMA_DESTROY_AH_SLEEPABLE);
	tq->ah = NULL;
}

/* Back from RESET to RTS, as a ULP reuses a QP. */
static void shca_mc_reuse(struct kunit *test, struct shca_tq *tq)
{
	shca_mc_reset(test, tq);
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(tq, tq));
}

static enum ib_qp_state shca_mc_state(struct kunit *test, struct shca_tq *tq)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	KUNIT_ASSERT_EQ(test, 0, ib_query_qp(tq->qp, &attr, IB_QP_STATE,
					     &init));
	return attr.qp_state;
}

/*
 * A QP reset through ib_core, which counts its attachment: in RESET the
 * device has it in no group, and back in RTS it is in the group again and
 * receives its copies, as its consumer (which uverbs would never let
 * attach a second time) expects.
 */
static void shca_test_mcast_reset_and_back_keeps_the_consumers_groups(struct kunit *test)
{
	struct shca_tq *sender, *reset, *other;
	struct ib_device *da, *db;
	struct shca_hw *hw;
	struct ib_ah *ah;

	shca_test_devices(test, true, &da, &db);
	hw = to_shca_dev(db)->hw;
	sender = shca_mc_qp(test, da);
	reset = shca_mc_qp(test, db);
	other = shca_mc_qp(test, db);
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(reset));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(other));
	KUNIT_ASSERT_EQ(test, 1U, shca_hw_mcast_groups_of(hw, reset->qp->qp_num));
	/* ib_core refuses to destroy an attached QP. */
	KUNIT_EXPECT_EQ(test, -EBUSY, ib_destroy_qp(reset->qp));

	shca_mc_reset(test, reset);
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_mcast_groups_of(hw, reset->qp->qp_num));
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(reset, reset));
	KUNIT_EXPECT_EQ(test, 1U, shca_hw_mcast_groups_of(hw, reset->qp->qp_num));
	ah = shca_mc_ah(test, sender);
	shca_mc_post_recv(test, reset, 1);
	shca_mc_post_recv(test, other, 2);
	shca_mc_send(test, sender, ah, 0xf1, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, reset, sender, 1, 0xf1);
	shca_mc_expect_copy(test, other, sender, 2, 0xf1);

	/* One attachment, one detach, as before the RESET. */
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(reset));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_mcast_groups_of(hw, reset->qp->qp_num));
	KUNIT_EXPECT_EQ(test, -ENOENT, shca_mc_detach(reset));
	shca_mc_post_recv(test, reset, 3);
	shca_mc_post_recv(test, other, 4);
	shca_mc_send(test, sender, ah, 0xf2, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, other, sender, 4, 0xf2);
	shca_mc_expect_nothing(test, reset);
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(other));
	KUNIT_EXPECT_EQ(test, 0, ib_destroy_qp(reset->qp));
	reset->qp = NULL;
}

/* Which command of the way out of RESET fails. */
static const int shca_mc_restore_fail_params[] = {
	SHCA_CMD_ATTACH_MCAST, SHCA_CMD_MODIFY_QP,
};

static void shca_mc_restore_fail_desc(const int *opcode, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s fails",
		 *opcode == SHCA_CMD_ATTACH_MCAST ? "ATTACH_MCAST" :
		 "MODIFY_QP");
}

KUNIT_ARRAY_PARAM(shca_mc_restore_fail, shca_mc_restore_fail_params,
		  shca_mc_restore_fail_desc);

/*
 * The way out of RESET fails, in the attach that restores a group or in
 * the modify after it: the modify returns the errno, the QP is still in
 * RESET and in no group, and the next try restores everything.
 */
static void shca_test_mcast_failed_restore_leaves_the_qp_in_reset(struct kunit *test)
{
	int opcode = *(const int *)test->param_value;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = SHCA_TEST_QKEY,
	};
	struct shca_tq *sender, *member;
	struct ib_device *da, *db;
	struct shca_hw *hw;
	u8 mgid2[16];
	union ib_gid gid2;

	shca_test_devices(test, true, &da, &db);
	hw = to_shca_dev(db)->hw;
	sender = shca_mc_qp(test, da);
	member = shca_mc_qp(test, db);
	shca_mc_nth_mgid(mgid2, 2);
	memcpy(gid2.raw, mgid2, sizeof(gid2.raw));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(member));
	KUNIT_ASSERT_EQ(test, 0, ib_attach_mcast(member->qp, &gid2, 0));
	shca_mc_reset(test, member);
	KUNIT_ASSERT_EQ(test, 0U,
			shca_hw_mcast_groups_of(hw, member->qp->qp_num));

	KUNIT_ASSERT_EQ(test, 0, shca_hw_inject_cmd_failure(hw, opcode));
	KUNIT_EXPECT_EQ(test, -EIO,
			ib_modify_qp(member->qp, &attr,
				     IB_QP_STATE | IB_QP_PKEY_INDEX |
				     IB_QP_PORT | IB_QP_QKEY));
	KUNIT_EXPECT_EQ(test, -1, shca_hw_injected_cmd_failure(hw));
	KUNIT_EXPECT_EQ(test, IB_QPS_RESET, shca_mc_state(test, member));
	KUNIT_EXPECT_EQ(test, 0U,
			shca_hw_mcast_groups_of(hw, member->qp->qp_num));

	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(member, member));
	KUNIT_EXPECT_EQ(test, 2U,
			shca_hw_mcast_groups_of(hw, member->qp->qp_num));
	shca_mc_post_recv(test, member, 1);
	shca_mc_send(test, sender, shca_mc_ah(test, sender), 0x81,
		     SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, member, sender, 1, 0x81);
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(member));
	KUNIT_EXPECT_EQ(test, 0, ib_detach_mcast(member->qp, &gid2, 0));
	KUNIT_EXPECT_EQ(test, 0U,
			shca_hw_mcast_groups_of(hw, member->qp->qp_num));
}

static const bool shca_mc_destroy_params[] = { false, true };

static void shca_mc_destroy_desc(const bool *destroy, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *destroy ? "destroyed, QPN reissued" : "reset");
}

KUNIT_ARRAY_PARAM(shca_mc_destroy, shca_mc_destroy_params,
		  shca_mc_destroy_desc);

/*
 * A QP attached by the device command alone, which ib_core does not know
 * of, so nothing keeps it from destroying the QP: the device must drop
 * the membership on destroy or reset by itself.  A QP that gets the
 * destroyed QP's number, or the reset QP brought back to RTS, receives
 * nothing of the group.
 */
static void shca_test_mcast_torn_down_qp_leaves_every_group(struct kunit *test)
{
	bool destroy = *(const bool *)test->param_value;
	struct shca_tq *sender, *victim, *other;
	struct ib_device *da, *db;
	struct shca_dev *sdev;
	struct ib_ah *ah;
	u32 qpn;

	shca_test_devices(test, true, &da, &db);
	sdev = to_shca_dev(db);
	sender = shca_mc_qp(test, da);
	victim = shca_mc_qp(test, db);
	other = shca_mc_qp(test, db);
	qpn = victim->qp->qp_num;
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_attach_mcast(sdev, qpn, shca_mc_mgid));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(other));
	KUNIT_ASSERT_EQ(test, 1U, shca_hw_mcast_groups_of(sdev->hw, qpn));

	if (destroy) {
		KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(victim->qp));
		victim->qp = NULL;
		KUNIT_EXPECT_EQ(test, 0U, shca_hw_mcast_groups_of(sdev->hw, qpn));
		KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(sdev->hw, qpn));
		victim = shca_mc_qp(test, db);
		KUNIT_ASSERT_EQ(test, qpn, victim->qp->qp_num);
	} else {
		shca_mc_reuse(test, victim);
	}
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_mcast_groups_of(sdev->hw, qpn));
	KUNIT_EXPECT_EQ(test, 1U, shca_hw_mcast_groups(sdev->hw));

	ah = shca_mc_ah(test, sender);
	shca_mc_post_recv(test, victim, 1);
	shca_mc_post_recv(test, other, 2);
	shca_mc_send(test, sender, ah, 0x91, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, other, sender, 2, 0x91);
	shca_mc_expect_nothing(test, victim);
	/* The device has nothing to detach. */
	KUNIT_EXPECT_EQ(test, -ENOENT,
			shca_cmd_detach_mcast(sdev, qpn, shca_mc_mgid));
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(other));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_mcast_groups(sdev->hw));
}

/**
 * enum shca_mc_meanwhile - what happens to a member while a copy for it
 * is held between collect and delivery
 * @SHCA_MC_DETACHED: its consumer detaches it
 * @SHCA_MC_RESET: it is reset and brought back to RTS (attached by the
 *	device command alone, so nothing attaches it again)
 * @SHCA_MC_REISSUED: it is destroyed, and a new QP that gets its QPN
 *	joins the group
 */
enum shca_mc_meanwhile {
	SHCA_MC_DETACHED,
	SHCA_MC_RESET,
	SHCA_MC_REISSUED,
};

static const enum shca_mc_meanwhile shca_mc_meanwhile_params[] = {
	SHCA_MC_DETACHED, SHCA_MC_RESET, SHCA_MC_REISSUED,
};

static void shca_mc_meanwhile_desc(const enum shca_mc_meanwhile *w,
				   char *desc)
{
	static const char * const names[] = {
		[SHCA_MC_DETACHED] = "detached",
		[SHCA_MC_RESET] = "reset and back in RTS",
		[SHCA_MC_REISSUED] = "destroyed, QPN reissued and joined",
	};

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", names[*w]);
}

KUNIT_ARRAY_PARAM(shca_mc_meanwhile, shca_mc_meanwhile_params,
		  shca_mc_meanwhile_desc);

static void shca_mc_window_reset(void *win)
{
	shca_hw_window_release(win);
	shca_hw_window_set_qpn(win, 0);
}

/*
 * A send to the group is held in the sender's mcast_deliver window,
 * after the members were collected and before the victim is looked up
 * and handed its copy.  Meanwhile the victim leaves the group, and when
 * the send goes on, a receive is waiting on a QP with the victim's QPN,
 * in RTS, with the group's Q_Key: the copy is not taken in.  The other
 * member gets its copy, and the next send reaches exactly the members
 * of the group as it is by then.
 */
static void shca_test_mcast_membership_counts_at_delivery(struct kunit *test)
{
	enum shca_mc_meanwhile what =
		*(const enum shca_mc_meanwhile *)test->param_value;
	struct shca_tq *sender, *victim, *other;
	struct ib_device *da, *db;
	struct shca_hw_window *win;
	struct shca_dev *sdev;
	struct ib_sge sge;
	struct ib_ud_wr wr = {};
	struct ib_ah *ah;
	struct ib_wc wc;
	u64 dropped;
	u32 qpn;

	shca_test_devices(test, true, &da, &db);
	sdev = to_shca_dev(db);
	sender = shca_mc_qp(test, da);
	victim = shca_mc_qp(test, db);
	other = shca_mc_qp(test, db);
	qpn = victim->qp->qp_num;
	if (what == SHCA_MC_DETACHED)
		KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(victim));
	else
		KUNIT_ASSERT_EQ(test, 0, shca_cmd_attach_mcast(sdev, qpn,
							       shca_mc_mgid));
	KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(other));
	shca_mc_post_recv(test, other, 1);
	ah = shca_mc_ah(test, sender);

	win = shca_hw_window(to_shca_dev(da)->hw, SHCA_WIN_MCAST_DELIVER);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_mc_window_reset,
							   win));
	shca_hw_window_set_qpn(win, qpn);
	shca_hw_window_arm(win);
	sge.addr = sender->addr + SHCA_TEST_BUF / 2;
	sge.length = SHCA_MC_LEN;
	sge.lkey = sender->lkey;
	wr.wr.wr_id = 0x7100;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = ah;
	wr.remote_qpn = SHCA_HW_MCAST_QPN;
	wr.remote_qkey = SHCA_TEST_QKEY;
	memset(sender->buf + SHCA_TEST_BUF / 2, 0x71, SHCA_MC_LEN);
	/* Kernel sends run on the engine: this thread goes on. */
	KUNIT_ASSERT_EQ(test, 0, ib_post_send(sender->qp, &wr.wr, NULL));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, 5 * HZ));

	switch (what) {
	case SHCA_MC_DETACHED:
		KUNIT_ASSERT_EQ(test, 0, shca_mc_detach(victim));
		break;
	case SHCA_MC_RESET:
		shca_mc_reuse(test, victim);
		break;
	case SHCA_MC_REISSUED:
		/* The held send holds no reference: the destroy finishes. */
		KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(victim->qp));
		victim->qp = NULL;
		KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(sdev->hw, qpn));
		victim = shca_mc_qp(test, db);
		KUNIT_ASSERT_EQ(test, qpn, victim->qp->qp_num);
		KUNIT_ASSERT_EQ(test, 0, shca_mc_attach(victim));
		break;
	}
	KUNIT_EXPECT_EQ(test, what == SHCA_MC_REISSUED ? 1U : 0U,
			shca_hw_mcast_groups_of(sdev->hw, qpn));
	shca_mc_post_recv(test, victim, 2);
	dropped = shca_test_counter(db, SHCA_CNT_DROPPED) +
		  shca_test_counter(da, SHCA_CNT_DROPPED);
	shca_hw_window_release(win);

	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(sender, &wc, 1));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
	KUNIT_EXPECT_EQ(test, 0x7100ULL, wc.wr_id);
	shca_mc_expect_copy(test, other, sender, 1, 0x71);
	shca_mc_expect_nothing(test, victim);
	KUNIT_EXPECT_EQ(test, dropped + 1,
			shca_test_counter(db, SHCA_CNT_DROPPED) +
			shca_test_counter(da, SHCA_CNT_DROPPED));

	/* The receive is still there: the next send fills it if a member. */
	shca_mc_post_recv(test, other, 3);
	shca_mc_send(test, sender, ah, 0x72, SHCA_TEST_QKEY);
	shca_mc_expect_copy(test, other, sender, 3, 0x72);
	if (what == SHCA_MC_REISSUED) {
		shca_mc_expect_copy(test, victim, sender, 2, 0x72);
		KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(victim));
	} else {
		shca_mc_expect_nothing(test, victim);
	}
	KUNIT_EXPECT_EQ(test, 0, shca_mc_detach(other));
	KUNIT_EXPECT_EQ(test, 0U, shca_hw_mcast_groups(sdev->hw));
}

/* The multicast QPN is nobody's: the allocator and the knob skip it. */
static void shca_test_mcast_qpn_is_never_handed_out(struct kunit *test)
{
	struct shca_mc_hw m;
	u32 a, b;

	shca_mc_hw_init(test, &m);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			shca_hw_set_next_qpn(m.hw, SHCA_HW_MCAST_QPN));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			shca_hw_set_next_qpn(m.hw, SHCA_HW_MCAST_QPN + 1));
	KUNIT_ASSERT_EQ(test, 0,
			shca_hw_set_next_qpn(m.hw, SHCA_HW_MCAST_QPN - 1));
	a = shca_mc_hw_qp(test, m.hw, m.pdn, m.cqn, SHCA_QPT_UD);
	b = shca_mc_hw_qp(test, m.hw, m.pdn, m.cqn, SHCA_QPT_UD);
	KUNIT_EXPECT_EQ(test, (u32)SHCA_HW_MCAST_QPN - 1, a);
	KUNIT_EXPECT_NE(test, (u32)SHCA_HW_MCAST_QPN, b);
	/* The search wrapped to the bottom. */
	KUNIT_EXPECT_GE(test, b, (u32)SHCA_HW_FIRST_QPN);
	KUNIT_EXPECT_LT(test, b, a);
}

static struct kunit_case shca_mcast_cases[] = {
	KUNIT_CASE_PARAM(shca_test_attach_and_detach_check_their_input,
			 shca_mc_input_gen_params),
	KUNIT_CASE(shca_test_mcast_caps_reach_query_device),
	KUNIT_CASE_PARAM(shca_test_mcast_delivers_one_copy_to_each_member,
			 shca_mc_two_gen_params),
	KUNIT_CASE(shca_test_mcast_qkey_mismatch_drops_the_copy),
	KUNIT_CASE(shca_test_mcast_member_without_a_receive_blocks_nobody),
	KUNIT_CASE(shca_test_mcast_sender_gets_no_copy_of_its_own),
	KUNIT_CASE(shca_test_mcast_detach_stops_delivery),
	KUNIT_CASE(shca_test_mcast_detach_waits_for_its_copy_alone),
	KUNIT_CASE(shca_test_mcast_reset_and_back_keeps_the_consumers_groups),
	KUNIT_CASE_PARAM(shca_test_mcast_failed_restore_leaves_the_qp_in_reset,
			 shca_mc_restore_fail_gen_params),
	KUNIT_CASE_PARAM(shca_test_mcast_torn_down_qp_leaves_every_group,
			 shca_mc_destroy_gen_params),
	KUNIT_CASE_PARAM(shca_test_mcast_membership_counts_at_delivery,
			 shca_mc_meanwhile_gen_params),
	KUNIT_CASE(shca_test_mcast_qpn_is_never_handed_out),
	{}
};

static struct kunit_suite shca_mcast_suite = {
	.name = "shca_mcast",
	.test_cases = shca_mcast_cases,
};

kunit_test_suite(shca_mcast_suite);
