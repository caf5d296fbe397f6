// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the model's own QP state machine (shca_hw_qp_states).
 *
 * MODIFY_QP straight to the hardware model, with no ib_core and no verbs
 * layer in the way, for RC, UC, UD and GSI QPs and each of the 7x7
 * (current, next) state pairs, illegal ones included.  A fresh QP in a
 * fresh model is brought to the current state as a device would be: by
 * commands, and SQE by a send that fails.  The modify carries a Q_Key
 * too: a legal one must take the state and the attribute, an illegal one
 * must be refused with BAD_STATE and change neither.
 *
 * The expected answers are written out below from the IBTA specification
 * (Vol. 1, 10.3.1, the QP state diagram, and 11.2.5, Modify QP), not taken
 * from the model's table, nor from ib_core's, which differs from both on
 * RESET to ERR (see Documentation/model.rst).
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_HW_QP_STATES_TYPES		4
#define SHCA_HW_QP_STATES_QKEY		0x5eed
#define SHCA_HW_QP_STATES_WAIT_MS		5000

static const u32 shca_hw_qp_states_types[SHCA_HW_QP_STATES_TYPES] = {
	SHCA_QPT_RC, SHCA_QPT_UC, SHCA_QPT_UD, SHCA_QPT_GSI,
};

static const char * const shca_hw_qp_states_type_names[SHCA_HW_QP_STATES_TYPES] = {
	"rc", "uc", "ud", "gsi",
};

static const char * const shca_hw_qp_states_state_names[SHCA_QPS_NUM] = {
	"reset", "init", "rtr", "rts", "sqd", "sqe", "err",
};

/*
 * What IBTA lets Modify QP do, by current state (rows) and next state
 * (columns, in the order RESET INIT RTR RTS SQD SQE ERR); 'x' is legal.
 * Any state may go to RESET and to ERR.  Only the device enters SQE, and
 * only a UC or UD QP (GSI is one): an RC QP goes to ERR on a send error,
 * so it has no SQE row.  INIT, RTS and SQD may be modified in place; RTR
 * may not.
 */
static const char * const shca_hw_qp_states_ibta[SHCA_QPS_NUM] = {
	/*		    R I R R S S E
	 *		    S N T T Q Q R
	 *		    T I R S D E R
	 */
	[SHCA_QPS_RESET] = "xx....x",
	[SHCA_QPS_INIT]  = "xxx...x",
	[SHCA_QPS_RTR]   = "x..x..x",
	[SHCA_QPS_RTS]   = "x..xx.x",
	[SHCA_QPS_SQD]   = "x..xx.x",
	[SHCA_QPS_SQE]   = "x..x..x",
	[SHCA_QPS_ERR]   = "x.....x",
};

static bool shca_hw_qp_states_legal(u32 cur, u32 next)
{
	return shca_hw_qp_states_ibta[cur][next] == 'x';
}

static void shca_hw_qp_states_hw_free(void *hw)
{
	shca_hw_destroy(hw);
}

static struct shca_hw *shca_hw_qp_states_hw(struct kunit *test)
{
	struct shca_hw *hw = shca_hw_create();

	KUNIT_ASSERT_NOT_NULL(test, hw);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_hw_qp_states_hw_free,
							   hw));
	return hw;
}

/**
 * struct shca_hw_qp_states_qp - a QP of some type on a CQ of four CQEs, in a model
 * @hw: the model
 * @ring: the CQ's ring
 * @sq: the QP's send ring, four WQEs
 * @db: the QP's doorbell record
 * @qpn: the QP's number
 * @gen: its generation, as CREATE_QP handed it back
 */
struct shca_hw_qp_states_qp {
	struct shca_hw *hw;
	struct shca_hw_cqe *ring;
	struct shca_hw_send_wqe *sq;
	struct shca_hw_qp_dbrec *db;
	u32 qpn;
	u32 gen;
};

static u32 shca_hw_qp_states_create(struct kunit *test, struct shca_hw *hw,
				    struct shca_hw_cmd *cmd)
{
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, cmd));
	return cmd->opcode == SHCA_CMD_ALLOC_PD ? cmd->out.pdn : cmd->out.num;
}

/* A fresh model with a QP of @type in it, in RESET. */
static void shca_hw_qp_states_qp_new(struct kunit *test, u32 type, struct shca_hw_qp_states_qp *q)
{
	struct shca_hw_cmd pd = { .opcode = SHCA_CMD_ALLOC_PD };
	struct shca_hw_cmd cq = { .opcode = SHCA_CMD_CREATE_CQ };
	struct shca_hw_cmd qp = { .opcode = SHCA_CMD_CREATE_QP };

	/*
	 * The rings first: KUnit releases in reverse order, so the model
	 * (and the engine's flush of a QP moved to ERR) is gone before the
	 * memory it reads.
	 */
	q->ring = kunit_kzalloc(test, 4 * sizeof(*q->ring), GFP_KERNEL);
	q->sq = kunit_kzalloc(test, 4 * sizeof(*q->sq), GFP_KERNEL);
	q->db = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	cq.in.cq.dbrec = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	qp.in.qp.rq.ring = kunit_kzalloc(test,
					 4 * sizeof(struct shca_hw_recv_wqe),
					 GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, q->ring && q->sq && q->db && cq.in.cq.dbrec &&
			  qp.in.qp.rq.ring);
	q->hw = shca_hw_qp_states_hw(test);
	cq.in.cq.ring = q->ring;
	cq.in.cq.log_depth = 2;
	qp.in.qp.type = type;
	qp.in.qp.pdn = shca_hw_qp_states_create(test, q->hw, &pd);
	qp.in.qp.send_cqn = shca_hw_qp_states_create(test, q->hw, &cq);
	qp.in.qp.recv_cqn = qp.in.qp.send_cqn;
	qp.in.qp.sq.ring = q->sq;
	qp.in.qp.sq.log_depth = 2;
	qp.in.qp.rq.log_depth = 2;
	qp.in.qp.dbrec = q->db;
	qp.in.qp.max_send_sge = 1;
	qp.in.qp.sig_all = true;
	q->qpn = shca_hw_qp_states_create(test, q->hw, &qp);
	q->gen = qp.out.id.gen;
	if (type == SHCA_QPT_GSI)
		KUNIT_ASSERT_EQ(test, (u32)SHCA_HW_GSI_QPN, q->qpn);
}

static enum shca_hw_status shca_hw_qp_states_modify(struct shca_hw_qp_states_qp *q, u32 mask,
						    u32 state, u32 qkey)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MODIFY_QP,
		.index = q->qpn,
		.mask = mask,
		.in.qp_attr = { .state = state, .qkey = qkey },
	};

	return shca_hw_exec(q->hw, &cmd);
}

static struct shca_hw_qp_attr shca_hw_qp_states_query(struct kunit *test,
						      struct shca_hw_qp_states_qp *q)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_QUERY_QP,
		.index = q->qpn,
	};

	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(q->hw, &cmd));
	return cmd.out.qp.attr;
}

static void shca_hw_qp_states_step(struct kunit *test, struct shca_hw_qp_states_qp *q, u32 next)
{
	KUNIT_ASSERT_EQ_MSG(test, SHCA_HW_OK,
			    shca_hw_qp_states_modify(q, SHCA_QP_ATTR_STATE, next, 0),
			    "to %s", shca_hw_qp_states_state_names[next]);
}

/* Post a send whose local key names no MR, and ring no doorbell. */
static void shca_hw_qp_states_post_bad_send(struct shca_hw_qp_states_qp *q)
{
	q->sq[0] = (struct shca_hw_send_wqe){
		.opcode = SHCA_WQE_SEND,
		.flags = SHCA_WQE_F_SIGNALED,
		.num_sge = 1,
		.sge[0] = { .addr = 0x10000, .length = 8, .lkey = 0x12345 },
	};
	/* The WQE is written before the index that names it. */
	smp_store_release(&q->db->sq_pi, 1);
}

/*
 * A send whose local key names no MR fails at once: an RC QP goes to ERR,
 * the others to SQE.  Wait until the device has moved the QP and written
 * the error CQE, which comes just after.
 */
static u32 shca_hw_qp_states_failed_send(struct kunit *test, struct shca_hw_qp_states_qp *q)
{
	u32 state = SHCA_QPS_RTS;
	u8 owner;
	int i;

	shca_hw_qp_states_post_bad_send(q);
	shca_hw_ring_sq(q->hw, q->qpn);
	for (i = 0; i < SHCA_HW_QP_STATES_WAIT_MS; i++) {
		state = shca_hw_qp_states_query(test, q).state;
		/* Pairs with the device's release: the CQE body is in. */
		owner = smp_load_acquire(&q->ring[0].owner);
		if (state != SHCA_QPS_RTS && owner)
			break;
		usleep_range(1000, 2000);
	}
	KUNIT_ASSERT_EQ_MSG(test, 1, q->ring[0].owner, "no CQE");
	KUNIT_EXPECT_EQ(test, SHCA_CQE_LOC_PROT_ERR, q->ring[0].status);
	return state;
}

/* Bring the QP from RESET to @state the way a device gets there. */
static void shca_hw_qp_states_reach(struct kunit *test, struct shca_hw_qp_states_qp *q, u32 state)
{
	static const u32 path[] = { SHCA_QPS_INIT, SHCA_QPS_RTR, SHCA_QPS_RTS };
	unsigned int i;

	if (state == SHCA_QPS_RESET)
		return;
	for (i = 0; i < ARRAY_SIZE(path); i++) {
		shca_hw_qp_states_step(test, q, path[i]);
		if (path[i] == state)
			return;
	}
	if (state == SHCA_QPS_SQE)
		KUNIT_ASSERT_EQ(test, (u32)SHCA_QPS_SQE,
				shca_hw_qp_states_failed_send(test, q));
	else
		shca_hw_qp_states_step(test, q, state);
}

/**
 * struct shca_hw_qp_states_param - one (type, current, next) of the state machine
 * @type: index into shca_hw_qp_states_types
 * @cur: the state the QP is brought to
 * @next: the state the modify asks for
 */
struct shca_hw_qp_states_param {
	int type;
	u32 cur;
	u32 next;
};

static struct shca_hw_qp_states_param
	shca_hw_qp_states_params[SHCA_HW_QP_STATES_TYPES * SHCA_QPS_NUM *
				 SHCA_QPS_NUM];

/* Every triple, but RC from SQE: no RC QP is ever in SQE (see below). */
static const void *shca_hw_qp_states_gen_params(const void *prev, char *desc)
{
	const struct shca_hw_qp_states_param *p = prev;
	int i;

	if (!p) {
		for (i = 0; i < ARRAY_SIZE(shca_hw_qp_states_params); i++) {
			shca_hw_qp_states_params[i].type = i / (SHCA_QPS_NUM *
								SHCA_QPS_NUM);
			shca_hw_qp_states_params[i].cur = i / SHCA_QPS_NUM % SHCA_QPS_NUM;
			shca_hw_qp_states_params[i].next = i % SHCA_QPS_NUM;
		}
		p = shca_hw_qp_states_params;
	} else {
		p++;
	}
	while (p < shca_hw_qp_states_params + ARRAY_SIZE(shca_hw_qp_states_params) &&
	       shca_hw_qp_states_types[p->type] == SHCA_QPT_RC &&
	       p->cur == SHCA_QPS_SQE)
		p++;
	if (p >= shca_hw_qp_states_params + ARRAY_SIZE(shca_hw_qp_states_params))
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s_to_%s",
		 shca_hw_qp_states_type_names[p->type], shca_hw_qp_states_state_names[p->cur],
		 shca_hw_qp_states_state_names[p->next]);
	return p;
}

/*
 * One modify, from a QP in the current state to the next, with a new
 * Q_Key: as IBTA says, or refused with nothing changed.
 */
static void shca_test_hw_modify_qp_follows_ibta_diagram(struct kunit *test)
{
	const struct shca_hw_qp_states_param *p = test->param_value;
	bool legal = shca_hw_qp_states_legal(p->cur, p->next);
	struct shca_hw_qp_attr before, after;
	struct shca_hw_qp_states_qp q;

	shca_hw_qp_states_qp_new(test, shca_hw_qp_states_types[p->type], &q);
	shca_hw_qp_states_reach(test, &q, p->cur);
	before = shca_hw_qp_states_query(test, &q);
	KUNIT_ASSERT_EQ(test, p->cur, before.state);

	KUNIT_EXPECT_EQ_MSG(test, legal ? SHCA_HW_OK : SHCA_HW_BAD_STATE,
			    shca_hw_qp_states_modify(&q, SHCA_QP_ATTR_STATE |
						     SHCA_QP_ATTR_QKEY, p->next,
						     before.qkey ^ SHCA_HW_QP_STATES_QKEY),
			    "IBTA: %s -> %s is %s", shca_hw_qp_states_state_names[p->cur],
			    shca_hw_qp_states_state_names[p->next],
			    legal ? "legal" : "illegal");
	after = shca_hw_qp_states_query(test, &q);
	KUNIT_EXPECT_EQ(test, legal ? p->next : p->cur, after.state);
	KUNIT_EXPECT_EQ(test, legal ? before.qkey ^ SHCA_HW_QP_STATES_QKEY : before.qkey,
			after.qkey);
}

/*
 * Why RC has no SQE row: the send error that takes a UC or UD QP to SQE
 * takes an RC QP to ERR.
 */
static void shca_test_hw_rc_send_error_goes_to_err(struct kunit *test)
{
	struct shca_hw_qp_states_qp q;

	shca_hw_qp_states_qp_new(test, SHCA_QPT_RC, &q);
	shca_hw_qp_states_reach(test, &q, SHCA_QPS_RTS);
	KUNIT_EXPECT_EQ(test, (u32)SHCA_QPS_ERR, shca_hw_qp_states_failed_send(test, &q));
}

/* CREATE_QP hands back the generation QUERY_QP reads: no query needed. */
static void shca_test_hw_create_qp_hands_back_its_generation(struct kunit *test)
{
	struct shca_hw_qp_states_qp q;
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_QP };

	shca_hw_qp_states_qp_new(test, SHCA_QPT_RC, &q);
	cmd.index = q.qpn;
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(q.hw, &cmd));
	KUNIT_EXPECT_EQ(test, cmd.out.qp.gen, q.gen);
}

/*
 * A modify that names the state the QP was in before the device moved it
 * on its own (RC to ERR, UD to SQE, on a failed send) is refused, changes
 * nothing and says which state the QP is in; naming that one, it goes
 * through.  This is what lets the verbs layer cache the state.
 */
static void shca_test_hw_modify_from_a_state_left_is_refused(struct kunit *test)
{
	static const u32 types[] = { SHCA_QPT_RC, SHCA_QPT_UD };
	struct shca_hw_qp_attr before, after;
	struct shca_hw_qp_states_qp q;
	struct shca_hw_cmd cmd;
	unsigned int i;
	u32 moved;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		shca_hw_qp_states_qp_new(test, types[i], &q);
		shca_hw_qp_states_reach(test, &q, SHCA_QPS_RTS);
		moved = shca_hw_qp_states_failed_send(test, &q);
		before = shca_hw_qp_states_query(test, &q);
		cmd = (struct shca_hw_cmd){
			.opcode = SHCA_CMD_MODIFY_QP,
			.index = q.qpn,
			.mask = SHCA_QP_ATTR_STATE | SHCA_QP_ATTR_QKEY |
				SHCA_QP_ATTR_CUR_STATE,
			.in.qp_attr = { .state = SHCA_QPS_ERR,
					.cur_state = SHCA_QPS_RTS,
					.qkey = before.qkey ^ SHCA_HW_QP_STATES_QKEY },
		};
		KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_STATE, shca_hw_exec(q.hw, &cmd));
		KUNIT_EXPECT_EQ(test, moved, cmd.out.qp_state);
		after = shca_hw_qp_states_query(test, &q);
		KUNIT_EXPECT_EQ(test, moved, after.state);
		KUNIT_EXPECT_EQ(test, before.qkey, after.qkey);

		cmd.in.qp_attr.cur_state = moved;
		KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(q.hw, &cmd));
		KUNIT_EXPECT_EQ(test, (u32)SHCA_QPS_ERR, cmd.out.qp_state);
		after = shca_hw_qp_states_query(test, &q);
		KUNIT_EXPECT_EQ(test, (u32)SHCA_QPS_ERR, after.state);
		KUNIT_EXPECT_EQ(test, before.qkey ^ SHCA_HW_QP_STATES_QKEY, after.qkey);
	}
}

/*
 * A modify queues a turn only when it gives the QP work.  Every turn
 * that stops passes the db_idle window, so its passes count the turns:
 * none on the way from RESET to RTS, to SQD without the drained event
 * and back, with nothing posted; one for SQD with the event to raise;
 * and a WQE posted (with no doorbell) before RTS runs once RTS is
 * reached.
 */
static void shca_test_hw_modify_kicks_a_turn_only_for_work(struct kunit *test)
{
	struct shca_hw_qp_states_qp q, w;
	struct shca_hw_window *win;
	struct shca_hw_cmd cmd;
	u64 passes;

	shca_hw_qp_states_qp_new(test, SHCA_QPT_UD, &q);
	win = shca_hw_window(q.hw, SHCA_WIN_DB_IDLE);
	shca_hw_window_set_qpn(win, q.qpn);
	passes = shca_hw_window_passes(win);
	shca_hw_qp_states_reach(test, &q, SHCA_QPS_RTS);
	shca_hw_qp_states_step(test, &q, SHCA_QPS_SQD);
	shca_hw_qp_states_step(test, &q, SHCA_QPS_RTS);
	shca_hw_engine_flush(q.hw);
	KUNIT_EXPECT_EQ(test, passes, shca_hw_window_passes(win));

	cmd = (struct shca_hw_cmd){
		.opcode = SHCA_CMD_MODIFY_QP,
		.index = q.qpn,
		.mask = SHCA_QP_ATTR_STATE | SHCA_QP_ATTR_SQD_NOTIFY,
		.in.qp_attr = { .state = SHCA_QPS_SQD, .sqd_notify = true },
	};
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(q.hw, &cmd));
	shca_hw_engine_flush(q.hw);
	KUNIT_EXPECT_EQ(test, passes + 1, shca_hw_window_passes(win));

	shca_hw_qp_states_qp_new(test, SHCA_QPT_UD, &w);
	/* The turn that runs the WQE stops in db_idle: no poller takes it. */
	shca_test_poll_off(test, w.hw);
	win = shca_hw_window(w.hw, SHCA_WIN_DB_IDLE);
	shca_hw_window_set_qpn(win, w.qpn);
	shca_hw_qp_states_reach(test, &w, SHCA_QPS_RTR);
	shca_hw_qp_states_post_bad_send(&w);
	passes = shca_hw_window_passes(win);
	shca_hw_qp_states_step(test, &w, SHCA_QPS_RTS);
	shca_hw_engine_flush(w.hw);
	KUNIT_EXPECT_LT(test, passes, shca_hw_window_passes(win));
	/* Pairs with the device's release: the CQE body is in. */
	KUNIT_EXPECT_EQ(test, 1, smp_load_acquire(&w.ring[0].owner));
	KUNIT_EXPECT_EQ(test, SHCA_CQE_LOC_PROT_ERR, w.ring[0].status);
}

static struct kunit_case shca_hw_qp_states_cases[] = {
	KUNIT_CASE_PARAM(shca_test_hw_modify_qp_follows_ibta_diagram, shca_hw_qp_states_gen_params),
	KUNIT_CASE(shca_test_hw_rc_send_error_goes_to_err),
	KUNIT_CASE(shca_test_hw_create_qp_hands_back_its_generation),
	KUNIT_CASE(shca_test_hw_modify_from_a_state_left_is_refused),
	KUNIT_CASE(shca_test_hw_modify_kicks_a_turn_only_for_work),
	{}
};

static struct kunit_suite shca_hw_qp_states_suite = {
	.name = "shca_hw_qp_states",
	.test_cases = shca_hw_qp_states_cases,
};

kunit_test_suites(&shca_hw_qp_states_suite);
