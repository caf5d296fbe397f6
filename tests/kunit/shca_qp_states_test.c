// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: every QP state transition (shca_qp_states).
 *
 * For RC, UC, UD and GSI, each of the 7x7 (current, next) state pairs: a fresh
 * QP, connected to itself, is brought to the current state; the modify to
 * the next state is tried with its required attributes minus one (must
 * fail), with an attribute the transition does not take (must fail), with
 * the required ones (must succeed for a legal pair and leave the state
 * alone for an illegal one), and, on a second QP, with the required and
 * every optional attribute shca supports.  Then the side effects: ERR
 * flushes what is outstanding, RESET sweeps the QP's CQEs and empties its
 * queues, SQD raises the SQ drained event, RTS sends, INIT receives.
 *
 * The legal pairs and the attribute masks are the IBTA's (Vol. 1, 11.2.5
 * table 91), written out here independently of ib_core's table.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <rdma/ib_cache.h>

#include "shca.h"
#include "shca_test.h"
#include "shca_teardown_test.h"

#define SHCA_QP_STATES_TYPES	4
#define SHCA_QP_STATES_STATES	(IB_QPS_ERR + 1)
#define SHCA_QP_STATES_RECV_ID	0xe0e0
#define SHCA_QP_STATES_SEND_ID	0x5e5e

static const enum ib_qp_type shca_qp_states_types[SHCA_QP_STATES_TYPES] = {
	IB_QPT_RC, IB_QPT_UC, IB_QPT_UD, IB_QPT_GSI,
};

static const char * const shca_qp_states_type_names[SHCA_QP_STATES_TYPES] = {
	"rc", "uc", "ud", "gsi",
};

static const char * const shca_qp_states_state_names[SHCA_QP_STATES_STATES] = {
	"reset", "init", "rtr", "rts", "sqd", "sqe", "err",
};

/* A transition's attributes, per type (RC, UC, UD, GSI). */
struct shca_qp_states_masks {
	int req[SHCA_QP_STATES_TYPES];
	int opt[SHCA_QP_STATES_TYPES];
};

#define QS_PKI		IB_QP_PKEY_INDEX
#define QS_PORT		IB_QP_PORT
#define QS_ACC		IB_QP_ACCESS_FLAGS
#define QS_QKEY		IB_QP_QKEY
#define QS_CUR		IB_QP_CUR_STATE
#define QS_ALT		(IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE)
#define QS_RTR_UC	(IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
			 IB_QP_RQ_PSN)
#define QS_RTR_RC	(QS_RTR_UC | IB_QP_MAX_DEST_RD_ATOMIC | \
			 IB_QP_MIN_RNR_TIMER)
#define QS_RTS_RC	(IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | \
			 IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC)

/* Legal pairs and their masks; a pair not listed is illegal. */
static const struct shca_qp_states_masks *shca_qp_states_table(enum ib_qp_state cur,
							       enum ib_qp_state next)
{
	static const struct shca_qp_states_masks none = {};
	static const struct shca_qp_states_masks reset_init = {
		.req = { QS_PKI | QS_PORT | QS_ACC, QS_PKI | QS_PORT | QS_ACC,
			 QS_PKI | QS_PORT | QS_QKEY, QS_PKI | QS_QKEY },
	};
	static const struct shca_qp_states_masks init_init = {
		.opt = { QS_PKI | QS_PORT | QS_ACC, QS_PKI | QS_PORT | QS_ACC,
			 QS_PKI | QS_PORT | QS_QKEY, QS_PKI | QS_QKEY },
	};
	static const struct shca_qp_states_masks init_rtr = {
		.req = { QS_RTR_RC, QS_RTR_UC, 0, 0 },
		.opt = { QS_ALT | QS_ACC | QS_PKI, QS_ALT | QS_ACC | QS_PKI,
			 QS_PKI | QS_QKEY, QS_PKI | QS_QKEY },
	};
	static const struct shca_qp_states_masks rtr_rts = {
		.req = { QS_RTS_RC, IB_QP_SQ_PSN, IB_QP_SQ_PSN, IB_QP_SQ_PSN },
		.opt = { QS_CUR | QS_ALT | QS_ACC | IB_QP_MIN_RNR_TIMER,
			 QS_CUR | QS_ALT | QS_ACC, QS_CUR | QS_QKEY,
			 QS_CUR | QS_QKEY },
	};
	static const struct shca_qp_states_masks rts_rts = {
		.opt = { QS_CUR | QS_ALT | QS_ACC | IB_QP_MIN_RNR_TIMER,
			 QS_CUR | QS_ALT | QS_ACC, QS_CUR | QS_QKEY,
			 QS_CUR | QS_QKEY },
	};
	static const struct shca_qp_states_masks to_sqd = {
		.opt = { IB_QP_EN_SQD_ASYNC_NOTIFY, IB_QP_EN_SQD_ASYNC_NOTIFY,
			 IB_QP_EN_SQD_ASYNC_NOTIFY, IB_QP_EN_SQD_ASYNC_NOTIFY },
	};
	static const struct shca_qp_states_masks sqd_sqd = {
		.opt = { QS_PORT | IB_QP_AV | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			 IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC |
			 IB_QP_MAX_DEST_RD_ATOMIC | QS_ALT | QS_ACC | QS_PKI |
			 IB_QP_MIN_RNR_TIMER,
			 IB_QP_AV | QS_ALT | QS_ACC | QS_PKI,
			 QS_PKI | QS_QKEY, QS_PKI | QS_QKEY },
	};
	static const struct shca_qp_states_masks sqe_rts = {
		.opt = { 0, QS_CUR | QS_ACC, QS_CUR | QS_QKEY,
			 QS_CUR | QS_QKEY },
	};

	if (next == IB_QPS_RESET)
		return &none;
	if (next == IB_QPS_ERR)
		return cur == IB_QPS_RESET ? NULL : &none;
	switch (cur) {
	case IB_QPS_RESET:
		return next == IB_QPS_INIT ? &reset_init : NULL;
	case IB_QPS_INIT:
		return next == IB_QPS_INIT ? &init_init :
		       next == IB_QPS_RTR ? &init_rtr : NULL;
	case IB_QPS_RTR:
		return next == IB_QPS_RTS ? &rtr_rts : NULL;
	case IB_QPS_RTS:
		return next == IB_QPS_RTS ? &rts_rts :
		       next == IB_QPS_SQD ? &to_sqd : NULL;
	case IB_QPS_SQD:
		return next == IB_QPS_RTS ? &rts_rts :
		       next == IB_QPS_SQD ? &sqd_sqd : NULL;
	case IB_QPS_SQE:
		return next == IB_QPS_RTS ? &sqe_rts : NULL;
	default:
		return NULL;
	}
}

struct shca_qp_states_param {
	int type;
	enum ib_qp_state cur;
	enum ib_qp_state next;
};

static struct shca_qp_states_param
	shca_qp_states_params[SHCA_QP_STATES_TYPES * SHCA_QP_STATES_STATES *
			      SHCA_QP_STATES_STATES];

static const void *shca_qp_states_gen_params(const void *prev, char *desc)
{
	const struct shca_qp_states_param *p = prev;
	int i;

	if (!p) {
		for (i = 0; i < ARRAY_SIZE(shca_qp_states_params); i++) {
			shca_qp_states_params[i].type = i / (SHCA_QP_STATES_STATES *
							     SHCA_QP_STATES_STATES);
			shca_qp_states_params[i].cur = i / SHCA_QP_STATES_STATES %
						SHCA_QP_STATES_STATES;
			shca_qp_states_params[i].next = i % SHCA_QP_STATES_STATES;
		}
		p = shca_qp_states_params;
	} else {
		p++;
	}
	if (p >= shca_qp_states_params + ARRAY_SIZE(shca_qp_states_params))
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s_to_%s",
		 shca_qp_states_type_names[p->type], shca_qp_states_state_names[p->cur],
		 shca_qp_states_state_names[p->next]);
	return p;
}

/* Every attribute, valid for a QP connected to itself. */
static void shca_qp_states_attr(struct shca_tq *tq, enum ib_qp_state cur,
				enum ib_qp_state next, struct ib_qp_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = next;
	attr->cur_qp_state = cur;
	attr->pkey_index = 0;
	attr->port_num = 1;
	attr->qkey = SHCA_TEST_QKEY;
	attr->qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	attr->path_mtu = IB_MTU_1024;
	attr->dest_qp_num = tq->qp->qp_num;
	attr->rq_psn = 1;
	attr->sq_psn = 1;
	attr->max_dest_rd_atomic = 4;
	attr->max_rd_atomic = 4;
	attr->min_rnr_timer = 1;
	attr->timeout = 4;
	attr->retry_cnt = 2;
	attr->rnr_retry = 2;
	attr->en_sqd_async_notify = 1;
	shca_ktest_av(tq->dev, tq->dev, &attr->ah_attr);
}

static int shca_qp_states_modify(struct shca_tq *tq, enum ib_qp_state cur,
				 enum ib_qp_state next, int mask)
{
	struct ib_qp_attr attr;

	shca_qp_states_attr(tq, cur, next, &attr);
	return ib_modify_qp(tq->qp, &attr, IB_QP_STATE | mask);
}

static int shca_qp_states_type_index(enum ib_qp_type type)
{
	int i;

	for (i = 0; i < SHCA_QP_STATES_TYPES - 1; i++)
		if (shca_qp_states_types[i] == type)
			break;
	return i;
}

static bool shca_qp_states_ud(struct shca_tq *tq)
{
	return tq->qp->qp_type == IB_QPT_UD || tq->qp->qp_type == IB_QPT_GSI;
}

/* The required attributes of a legal transition of @tq's type. */
static int shca_qp_states_req(struct shca_tq *tq, enum ib_qp_state cur,
			      enum ib_qp_state next)
{
	int type = shca_qp_states_type_index(tq->qp->qp_type);

	return shca_qp_states_table(cur, next)->req[type];
}

static void shca_qp_states_step(struct kunit *test, struct shca_tq *tq,
				enum ib_qp_state cur, enum ib_qp_state next)
{
	KUNIT_ASSERT_EQ_MSG(test, 0, shca_qp_states_modify(tq, cur, next,
							   shca_qp_states_req(tq, cur, next)),
			    "%s -> %s", shca_qp_states_state_names[cur],
			    shca_qp_states_state_names[next]);
}

/* An AH to the QP itself, for UD sends. */
static void shca_qp_states_ah(struct kunit *test, struct shca_tq *tq)
{
	struct ib_qp_attr attr;

	if (!shca_qp_states_ud(tq) || tq->ah)
		return;
	shca_qp_states_attr(tq, IB_QPS_RTS, IB_QPS_RTS, &attr);
	tq->ah = rdma_create_ah(tq->pd, &attr.ah_attr,
				RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tq->ah));
}

/* A send with a bad lkey, which fails locally. */
static void shca_qp_states_bad_send(struct kunit *test, struct shca_tq *tq)
{
	struct ib_sge sge = { .addr = tq->addr, .length = 8, .lkey = 0xdead };
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.ah = tq->ah,
		.remote_qpn = tq->qp->qp_num,
		.remote_qkey = SHCA_TEST_QKEY,
	};

	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr.wr, NULL));
	shca_test_expect(test, tq, IB_WC_LOC_PROT_ERR, 1);
}

/* Bring a fresh QP to @state the way a consumer would. */
static void shca_qp_states_reach(struct kunit *test, struct shca_tq *tq,
				 enum ib_qp_state state)
{
	struct ib_wc wc;

	if (state == IB_QPS_RESET)
		return;
	shca_qp_states_step(test, tq, IB_QPS_RESET, IB_QPS_INIT);
	if (state == IB_QPS_INIT)
		return;
	shca_qp_states_step(test, tq, IB_QPS_INIT, IB_QPS_RTR);
	if (state == IB_QPS_RTR)
		return;
	shca_qp_states_step(test, tq, IB_QPS_RTR, IB_QPS_RTS);
	shca_qp_states_ah(test, tq);
	switch (state) {
	case IB_QPS_SQD:
		KUNIT_ASSERT_EQ(test, 0, shca_qp_states_modify(tq, IB_QPS_RTS,
							       IB_QPS_SQD, 0));
		break;
	case IB_QPS_SQE:
		/* A local send error: UC and UD go to SQE. */
		shca_qp_states_bad_send(test, tq);
		break;
	case IB_QPS_ERR:
		KUNIT_ASSERT_EQ(test, 0, shca_qp_states_modify(tq, IB_QPS_RTS,
							       IB_QPS_ERR, 0));
		break;
	default:
		break;
	}
	KUNIT_ASSERT_EQ(test, state, shca_test_qp_state(tq));
	KUNIT_ASSERT_EQ(test, 0, ib_poll_cq(tq->cq, 1, &wc));
}

/* An attribute the transition takes neither as required nor optional. */
static int shca_qp_states_stray_attr(int allowed)
{
	static const int candidates[] = {
		IB_QP_QKEY, IB_QP_DEST_QPN, IB_QP_SQ_PSN, IB_QP_RQ_PSN,
		IB_QP_PATH_MTU, IB_QP_ACCESS_FLAGS,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(candidates); i++)
		if (!(candidates[i] & allowed))
			return candidates[i];
	return 0;
}

static void shca_qp_states_side_effects(struct kunit *test, struct shca_tq *tq,
					enum ib_qp_state cur, enum ib_qp_state next,
					bool notify)
{
	struct ib_wc wc;
	int err;

	switch (next) {
	case IB_QPS_ERR:
		/* The receive posted before the modify is flushed. */
		KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, wc.status);
		KUNIT_EXPECT_EQ(test, SHCA_QP_STATES_RECV_ID, wc.wr_id);
		break;
	case IB_QPS_RESET:
		/* Nothing of its past in the CQ; both queues empty. */
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(tq->cq, 1, &wc));
		KUNIT_EXPECT_EQ(test, 0, to_shca_qp(tq->qp)->sq.pi);
		KUNIT_EXPECT_EQ(test, 0, to_shca_qp(tq->qp)->rq.pi);
		KUNIT_EXPECT_EQ(test, -EINVAL,
				shca_test_post_recv(tq, 1, 0, 8));
		break;
	case IB_QPS_SQD:
		if (notify && cur == IB_QPS_RTS) {
			err = shca_test_wait_event(tq, IB_EVENT_SQ_DRAINED);
			KUNIT_EXPECT_EQ(test, 0, err);
		}
		/* Sends wait in SQD; the receive waits too. */
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(tq->cq, 1, &wc));
		break;
	case IB_QPS_RTS:
		/* It sends: the posted receive takes it. */
		shca_qp_states_ah(test, tq);
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(tq, tq, IB_WR_SEND,
							     SHCA_QP_STATES_SEND_ID,
							     0, 0, 8, 0));
		KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
		KUNIT_EXPECT_EQ(test, SHCA_QP_STATES_RECV_ID, wc.wr_id);
		KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
		KUNIT_EXPECT_EQ(test, SHCA_QP_STATES_SEND_ID, wc.wr_id);
		break;
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		/* Receives are taken, sends are not. */
		KUNIT_EXPECT_EQ(test, -EINVAL,
				shca_test_post_send(tq, tq, IB_WR_SEND, 2, 0,
						    0, 8, 0));
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(tq->cq, 1, &wc));
		break;
	default:
		break;
	}
}

/* The cases' device: RC, UC and UD share one, GSI has its own. */
static struct shca_test_shared shca_qp_states_dev = { .name = SHCA_TEST_DEV };

/* A case's device, and the QP of its last try. */
struct shca_qp_states_ctx {
	struct ib_device *dev;
	struct shca_tq *last;
};

/* Try @cur -> @next on a fresh QP; check the state and the effects. */
static void shca_qp_states_try(struct kunit *test, const struct shca_qp_states_param *p,
			       int extra, bool optional)
{
	const struct shca_qp_states_masks *m = shca_qp_states_table(p->cur, p->next);
	struct shca_tq *tq = shca_test_tq_new(test);
	struct shca_qp_states_ctx *ctx = test->priv;
	int req, opt, stray, err;

	if (!ctx->dev) {
		/* ib_mad must not own the GSI QP of the device under test. */
		ctx->dev = shca_test_shared_dev(test, &shca_qp_states_dev,
						shca_qp_states_types[p->type] ==
						IB_QPT_GSI ? SHCA_DEV_F_NO_MAD :
						0);
	}
	/* One GSI QP per device: the last try's goes first. */
	if (ctx->last && ctx->last->qp) {
		KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(ctx->last->qp));
		ctx->last->qp = NULL;
	}
	ctx->last = tq;
	shca_test_tq_init(test, tq, ctx->dev, shca_qp_states_types[p->type], NULL,
			  16, 4);
	if (p->cur == IB_QPS_SQE && shca_qp_states_types[p->type] == IB_QPT_RC) {
		/* RC never enters SQE: a send error takes it to ERR. */
		shca_qp_states_reach(test, tq, IB_QPS_RTS);
		shca_qp_states_bad_send(test, tq);
		KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(tq));
		return;
	}
	shca_qp_states_reach(test, tq, p->cur);
	if (p->cur != IB_QPS_RESET)
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(tq,
							     SHCA_QP_STATES_RECV_ID,
							     1024, 64));

	if (!m) {
		/* Illegal whatever the attributes; nothing changes. */
		err = shca_qp_states_modify(tq, p->cur, p->next, extra);
		KUNIT_EXPECT_EQ(test, -EINVAL, err);
		KUNIT_EXPECT_EQ(test, p->cur, shca_test_qp_state(tq));
		return;
	}
	req = m->req[p->type];
	opt = m->opt[p->type] & ~QS_ALT;
	if (!optional) {
		if (req) {
			err = shca_qp_states_modify(tq, p->cur, p->next,
						    req & (req - 1));
			KUNIT_EXPECT_EQ_MSG(test, -EINVAL, err,
					    "a required attribute missing");
			KUNIT_EXPECT_EQ(test, p->cur, shca_test_qp_state(tq));
		}
		stray = shca_qp_states_stray_attr(req | m->opt[p->type]);
		if (stray) {
			err = shca_qp_states_modify(tq, p->cur, p->next, req | stray);
			KUNIT_EXPECT_EQ_MSG(test, -EINVAL, err,
					    "attribute %#x not taken", stray);
			KUNIT_EXPECT_EQ(test, p->cur, shca_test_qp_state(tq));
		}
		opt = 0;
	}
	err = shca_qp_states_modify(tq, p->cur, p->next, req | opt);
	KUNIT_ASSERT_EQ_MSG(test, 0, err, "mask %#x", req | opt);
	KUNIT_EXPECT_EQ(test, p->next, shca_test_qp_state(tq));
	shca_qp_states_side_effects(test, tq, p->cur, p->next,
				    opt & IB_QP_EN_SQD_ASYNC_NOTIFY);
}

static void shca_test_modify_qp_takes_exactly_ibta_attributes(struct kunit *test)
{
	const struct shca_qp_states_param *p = test->param_value;

	test->priv = kunit_kzalloc(test, sizeof(struct shca_qp_states_ctx),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, test->priv);
	shca_qp_states_try(test, p, 0, false);
	if (test->status == KUNIT_FAILURE)
		return;
	if (shca_qp_states_table(p->cur, p->next))
		shca_qp_states_try(test, p, 0, true);
	else
		/* Not even with every attribute the device knows. */
		shca_qp_states_try(test, p, QS_RTS_RC | QS_RTR_RC | QS_PKI | QS_ACC,
				   false);
}

static struct kunit_case shca_qp_states_cases[] = {
	KUNIT_CASE_PARAM(shca_test_modify_qp_takes_exactly_ibta_attributes,
			 shca_qp_states_gen_params),
	{}
};

static void shca_qp_states_exit(struct kunit_suite *suite)
{
	shca_test_shared_del(&shca_qp_states_dev);
}

static struct kunit_suite shca_qp_states_suite = {
	.name = "shca_qp_states",
	.suite_exit = shca_qp_states_exit,
	.test_cases = shca_qp_states_cases,
};

kunit_test_suites(&shca_qp_states_suite);
