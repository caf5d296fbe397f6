// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: RDMA FLUSH and atomic write in the model.  ib_core gives kernel
 * consumers no work request that carries a FLUSH's placement type and
 * level or an atomic write's value, so these tests write the WQEs into a
 * kernel QP's send ring themselves, as libshca does into a process's, and
 * ring the doorbell; the device then runs them like any other WQE.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

/* Where in the target end's buffer the test MR's page is */
#define SHCA_FLUSH_OFF		SHCA_TEST_KEY_OFF
#define SHCA_FLUSH_QP_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_FLUSH_GLOBAL | \
				 IB_ACCESS_FLUSH_PERSISTENT)

/* Give an MPT entry of shca_test_pbl_mpt() the access rights @access. */
static void shca_flush_mpt_access(struct kunit *test, struct shca_test_mpt *m,
				  u32 access)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_WRITE_MPT,
		.in.mpt = {
			.key = m->key,
			.access = access,
			.iova = m->pbl[0],
			.length = PAGE_SIZE,
			.pbl = m->pbl,
			.npages = 1,
			.page_shift = PAGE_SHIFT,
		},
	};

	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(m->sdev, &cmd));
}

/*
 * Write @n WQEs into @tq's send ring, as a driver does, and ring the
 * doorbell once for all of them.
 */
static void shca_flush_post(struct kunit *test, struct shca_tq *tq,
			    const struct shca_hw_send_wqe *w, u32 n)
{
	struct shca_qp *qp = to_shca_qp(tq->qp);
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (i = 0; i < n && !shca_wq_full(&qp->sq); i++) {
		memcpy(shca_wq_send_wqe(&qp->sq), &w[i], sizeof(w[i]));
		shca_wq_produce(&qp->sq, i + 1);
	}
	/* The WQEs must be visible before the index that names them. */
	smp_store_release(&qp->dbrec->sq_pi, qp->sq.pi);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	KUNIT_ASSERT_EQ(test, n, i);
	shca_hw_ring_sq(to_shca_dev(tq->dev)->hw, qp->qpn);
}

static void shca_flush_wqe(struct shca_hw_send_wqe *w, u32 rkey, u64 addr,
			   u64 len, u8 type, u8 level)
{
	memset(w, 0, sizeof(*w));
	w->opcode = SHCA_WQE_FLUSH;
	w->flags = SHCA_WQE_F_SIGNALED;
	w->flush.rkey = rkey;
	w->flush.remote_addr = addr;
	w->flush.length = len;
	w->flush.type = type;
	w->flush.level = level;
}

static void shca_flush_write_wqe(struct shca_hw_send_wqe *w,
				 struct shca_tq *a, u32 off, u32 len, u32 rkey,
				 u64 addr)
{
	memset(w, 0, sizeof(*w));
	w->opcode = SHCA_WQE_RDMA_WRITE;
	w->num_sge = 1;
	w->sge[0].addr = a->addr + off;
	w->sge[0].length = len;
	w->sge[0].lkey = a->lkey;
	w->rdma.rkey = rkey;
	w->rdma.remote_addr = addr;
}

/* An RC pair in RTS, @b granting @qp_access, and an MR of @b's. */
static struct shca_test_mpt *shca_flush_setup(struct kunit *test,
					      struct shca_tq *a,
					      struct shca_tq *b,
					      int qp_access, u32 mr_access)
{
	struct ib_qp_attr attr = { .qp_access_flags = qp_access };
	struct shca_test_mpt *m;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0,
			ib_modify_qp(b->qp, &attr, IB_QP_ACCESS_FLAGS));
	m = shca_test_pbl_mpt(test, b, SHCA_FLUSH_OFF);
	shca_flush_mpt_access(test, m, mr_access);
	return m;
}

static void shca_flush_expect(struct kunit *test, struct shca_tq *tq,
			      enum ib_wc_status status, enum ib_wc_opcode op,
			      u64 wr_id)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
	KUNIT_EXPECT_EQ_MSG(test, status, wc.status, "%s",
			    ib_wc_status_msg(wc.status));
	KUNIT_EXPECT_EQ(test, wr_id, wc.wr_id);
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, op, wc.opcode);
}

/**
 * struct shca_flush_order_case - a FLUSH behind RDMA WRITEs
 * @name: what it shows
 * @type: SHCA_FLUSH_* placement type
 * @level: SHCA_FLUSH_RANGE or SHCA_FLUSH_MR
 */
struct shca_flush_order_case {
	const char *name;
	u8 type;
	u8 level;
};

static const struct shca_flush_order_case shca_flush_order_cases[] = {
	{ "global_range", SHCA_FLUSH_GLOBAL, SHCA_FLUSH_RANGE },
	{ "persistent_mr", SHCA_FLUSH_PERSISTENT, SHCA_FLUSH_MR },
	{ "both_range", SHCA_FLUSH_GLOBAL | SHCA_FLUSH_PERSISTENT,
	  SHCA_FLUSH_RANGE },
};

static void shca_flush_order_desc(const struct shca_flush_order_case *p,
				  char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_flush_order, shca_flush_order_cases,
		  shca_flush_order_desc);

static void shca_flush_window_reset(void *win)
{
	struct shca_hw_window *w = win;

	shca_hw_window_release(w);
	shca_hw_window_set_qpn(w, 0);
}

/* Unpolled CQEs on @tq's CQ, read from the device's indices. */
static u32 shca_flush_cqes(struct kunit *test, struct shca_tq *tq)
{
	struct shca_hw_cq_query q;

	KUNIT_EXPECT_EQ(test, 0, shca_cmd_query_cq(to_shca_dev(tq->dev),
						   to_shca_cq(tq->cq)->cqn,
						   &q));
	return q.pi - q.ci;
}

/*
 * Two unsignaled RDMA WRITEs, then a signaled FLUSH, behind one doorbell.
 * The first WRITE is held in the responder before it copies: the FLUSH
 * has not completed then, and when it does, both WRITEs' data is in the
 * target.
 */
static void shca_test_flush_completes_behind_writes(struct kunit *test)
{
	const struct shca_flush_order_case *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_send_wqe w[3];
	struct shca_hw_window *win;
	struct shca_test_mpt *m;
	int err;

	m = shca_flush_setup(test, a, b, SHCA_FLUSH_QP_ACCESS,
			     SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE |
			     SHCA_ACCESS_FLUSH_GLOBAL |
			     SHCA_ACCESS_FLUSH_PERSISTENT);
	memset(a->buf, 0x3c, 256);
	memset(a->buf + 256, 0xc3, 256);
	memset(b->buf + SHCA_FLUSH_OFF, 0, PAGE_SIZE);
	shca_flush_write_wqe(&w[0], a, 0, 256, m->key, m->pbl[0]);
	shca_flush_write_wqe(&w[1], a, 256, 256, m->key, m->pbl[0] + 256);
	shca_flush_wqe(&w[2], m->key, m->pbl[0], 512, p->type, p->level);

	win = shca_hw_window(to_shca_dev(b->dev)->hw, SHCA_WIN_MEM_ACCESS);
	err = kunit_add_action_or_reset(test, shca_flush_window_reset, win);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_hw_window_set_qpn(win, b->qp->qp_num);
	shca_hw_window_arm(win);
	shca_flush_post(test, a, w, 3);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_TEST_WAIT));
	/* The first WRITE has not copied; nothing may have completed. */
	KUNIT_EXPECT_EQ(test, 0, b->buf[SHCA_FLUSH_OFF]);
	KUNIT_EXPECT_EQ(test, 0, shca_flush_cqes(test, a));
	shca_hw_window_release(win);

	shca_flush_expect(test, a, IB_WC_SUCCESS, IB_WC_FLUSH, 3);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_FLUSH_OFF, 512);
	KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(a));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

/*
 * A WRITE that fails before a FLUSH: the FLUSH never reports success for
 * data that did not arrive; it is flushed with the QP.
 */
static void shca_test_flush_after_failed_write(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_send_wqe w[2];
	struct shca_test_mpt *m;

	m = shca_flush_setup(test, a, b, SHCA_FLUSH_QP_ACCESS,
			     SHCA_ACCESS_LOCAL_WRITE |
			     SHCA_ACCESS_FLUSH_GLOBAL);
	/* No remote write right on the MR: the WRITE fails. */
	shca_flush_write_wqe(&w[0], a, 0, 64, m->key, m->pbl[0]);
	shca_flush_wqe(&w[1], m->key, m->pbl[0], 64, SHCA_FLUSH_GLOBAL,
		       SHCA_FLUSH_RANGE);
	shca_flush_post(test, a, w, 2);
	shca_flush_expect(test, a, IB_WC_REM_ACCESS_ERR, 0, 1);
	shca_flush_expect(test, a, IB_WC_WR_FLUSH_ERR, 0, 2);
}

/**
 * struct shca_flush_access_case - one FLUSH against one MR and QP
 * @name: what it shows
 * @qp_access: IB_ACCESS_* the responder QP grants
 * @mr_access: SHCA_ACCESS_* of the MR
 * @type: the FLUSH's placement type
 * @level: its selectivity level
 * @off: its start, from the MR's
 * @len: its length
 * @bad_key: name a key that does not exist
 * @status: the requester's completion
 */
struct shca_flush_access_case {
	const char *name;
	int qp_access;
	u32 mr_access;
	u8 type;
	u8 level;
	u64 off;
	u64 len;
	bool bad_key;
	enum ib_wc_status status;
};

#define SHCA_FA_MR_G	(SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_FLUSH_GLOBAL)
#define SHCA_FA_MR_P	(SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_FLUSH_PERSISTENT)
#define SHCA_FA_MR_GP	(SHCA_FA_MR_G | SHCA_ACCESS_FLUSH_PERSISTENT)
#define SHCA_FA_G	SHCA_FLUSH_GLOBAL
#define SHCA_FA_P	SHCA_FLUSH_PERSISTENT
#define SHCA_FA_R	SHCA_FLUSH_RANGE
#define SHCA_FA_M	SHCA_FLUSH_MR

static const struct shca_flush_access_case shca_flush_access_cases[] = {
	{ "global_on_global_mr", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_G,
	  SHCA_FA_G, SHCA_FA_R, 0, 64, false, IB_WC_SUCCESS },
	{ "persistent_on_global_mr", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_G,
	  SHCA_FA_P, SHCA_FA_R, 0, 64, false, IB_WC_REM_ACCESS_ERR },
	{ "global_on_persistent_mr", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_P,
	  SHCA_FA_G, SHCA_FA_R, 0, 64, false, IB_WC_REM_ACCESS_ERR },
	{ "both_on_persistent_mr", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_P,
	  SHCA_FA_G | SHCA_FA_P, SHCA_FA_M, 0, 0, false,
	  IB_WC_REM_ACCESS_ERR },
	{ "persistent_qp_lacks_it", IB_ACCESS_FLUSH_GLOBAL, SHCA_FA_MR_GP,
	  SHCA_FA_P, SHCA_FA_R, 0, 64, false, IB_WC_REM_ACCESS_ERR },
	{ "global_qp_lacks_it", IB_ACCESS_FLUSH_PERSISTENT, SHCA_FA_MR_GP,
	  SHCA_FA_G, SHCA_FA_M, 0, 0, false, IB_WC_REM_ACCESS_ERR },
	{ "range_past_mr", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  SHCA_FA_G, SHCA_FA_R, 64, PAGE_SIZE, false, IB_WC_REM_ACCESS_ERR },
	{ "range_before_mr", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  SHCA_FA_G, SHCA_FA_R, -64ULL, 64, false, IB_WC_REM_ACCESS_ERR },
	{ "mr_level_ignores_range", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  SHCA_FA_P, SHCA_FA_M, 1ULL << 40, 12345678, false, IB_WC_SUCCESS },
	{ "zero_length_range", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_G,
	  SHCA_FA_G, SHCA_FA_R, 0, 0, false, IB_WC_SUCCESS },
	{ "unknown_key_range", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  SHCA_FA_G, SHCA_FA_R, 0, 0, true, IB_WC_REM_ACCESS_ERR },
	{ "unknown_key_mr", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  SHCA_FA_G, SHCA_FA_M, 0, 0, true, IB_WC_REM_ACCESS_ERR },
	{ "no_type", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  0, SHCA_FA_R, 0, 64, false, IB_WC_LOC_QP_OP_ERR },
	{ "unknown_type", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  SHCA_FA_G | 4, SHCA_FA_R, 0, 64, false, IB_WC_LOC_QP_OP_ERR },
	{ "unknown_level", SHCA_FLUSH_QP_ACCESS, SHCA_FA_MR_GP,
	  SHCA_FA_G, 2, 0, 64, false, IB_WC_LOC_QP_OP_ERR },
};

static void shca_flush_access_desc(const struct shca_flush_access_case *p,
				   char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_flush_access, shca_flush_access_cases,
		  shca_flush_access_desc);

/*
 * The rights a FLUSH needs, on the responder QP and on the MR, for each
 * placement type it asks; the range of a range FLUSH; a key that exists.
 * A failure is a remote access error, which puts both QPs in error (IBTA
 * class C NAK); a malformed FLUSH fails locally.
 */
static void shca_test_flush_access(struct kunit *test)
{
	const struct shca_flush_access_case *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_send_wqe w;
	struct shca_test_mpt *m;
	u64 remote_err;

	m = shca_flush_setup(test, a, b, p->qp_access, p->mr_access);
	remote_err = shca_test_counter(b->dev, SHCA_CNT_REM_ACCESS_ERR);
	shca_flush_wqe(&w, p->bad_key ? m->key ^ 1 : m->key,
		       m->pbl[0] + p->off, p->len, p->type, p->level);
	shca_flush_post(test, a, &w, 1);
	shca_flush_expect(test, a, p->status, IB_WC_FLUSH, 1);
	if (p->status == IB_WC_SUCCESS) {
		KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(a));
		KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(b));
		return;
	}
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
	if (p->status == IB_WC_REM_ACCESS_ERR) {
		KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(b));
		KUNIT_EXPECT_EQ(test, remote_err + 1,
				shca_test_counter(b->dev,
						  SHCA_CNT_REM_ACCESS_ERR));
	} else {
		KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(b));
	}
}

/**
 * struct shca_atomic_write_case - one atomic write
 * @name: what it shows
 * @mr_access: SHCA_ACCESS_* of the target MR
 * @off: the target, from the MR's start
 * @sges: SGEs the WQE names (an atomic write takes none)
 * @status: the requester's completion
 */
struct shca_atomic_write_case {
	const char *name;
	u32 mr_access;
	u64 off;
	u8 sges;
	enum ib_wc_status status;
};

static const struct shca_atomic_write_case shca_atomic_write_cases[] = {
	{ "aligned", SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE,
	  64, 0, IB_WC_SUCCESS },
	{ "last_word", SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE,
	  PAGE_SIZE - 8, 0, IB_WC_SUCCESS },
	{ "misaligned", SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE,
	  68, 0, IB_WC_REM_INV_REQ_ERR },
	{ "past_mr", SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE,
	  PAGE_SIZE, 0, IB_WC_REM_ACCESS_ERR },
	{ "atomic_right_is_not_enough",
	  SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_ATOMIC,
	  64, 0, IB_WC_REM_ACCESS_ERR },
	{ "with_sge", SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE,
	  64, 1, IB_WC_LOC_QP_OP_ERR },
};

static void shca_atomic_write_desc(const struct shca_atomic_write_case *p,
				   char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_atomic_write, shca_atomic_write_cases,
		  shca_atomic_write_desc);

/*
 * An atomic write stores its 8 bytes, as the WQE holds them, at an 8-byte
 * aligned address the MR's remote write right covers; anything else fails
 * and leaves the target alone.
 */
static void shca_test_atomic_write(struct kunit *test)
{
	const struct shca_atomic_write_case *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	static const u8 value[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	u8 *target, before[8];
	struct shca_hw_send_wqe w = {};
	struct shca_test_mpt *m;

	m = shca_flush_setup(test, a, b, SHCA_FLUSH_QP_ACCESS, p->mr_access);
	memset(b->buf + SHCA_FLUSH_OFF, 0xee, PAGE_SIZE + 8);
	target = b->buf + SHCA_FLUSH_OFF + min_t(u64, p->off, PAGE_SIZE - 8);
	memcpy(before, target, sizeof(before));
	w.opcode = SHCA_WQE_ATOMIC_WRITE;
	w.flags = SHCA_WQE_F_SIGNALED;
	w.rdma.rkey = m->key;
	w.rdma.remote_addr = m->pbl[0] + p->off;
	memcpy(&w.rdma.swap, value, sizeof(value));
	if (p->sges) {
		w.num_sge = 1;
		w.sge[0].addr = a->addr;
		w.sge[0].length = 8;
		w.sge[0].lkey = a->lkey;
	}
	shca_flush_post(test, a, &w, 1);
	shca_flush_expect(test, a, p->status, IB_WC_ATOMIC_WRITE, 1);
	if (p->status == IB_WC_SUCCESS) {
		KUNIT_EXPECT_MEMEQ(test, value, target, sizeof(value));
		KUNIT_EXPECT_EQ(test, IB_QPS_RTS, shca_test_qp_state(b));
	} else {
		KUNIT_EXPECT_MEMEQ(test, before, target, sizeof(before));
		KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
	}
	/* Nothing around the word changed. */
	KUNIT_EXPECT_EQ(test, 0xee, b->buf[SHCA_FLUSH_OFF + PAGE_SIZE]);
	KUNIT_EXPECT_EQ(test, 0xee, b->buf[SHCA_FLUSH_OFF + 63]);
	KUNIT_EXPECT_EQ(test, 0xee, b->buf[SHCA_FLUSH_OFF + 72]);
}

/**
 * struct shca_flush_qpt_case - a FLUSH or atomic write on a QP without them
 * @name: what it shows
 * @type: UC or UD
 * @opcode: SHCA_WQE_FLUSH or SHCA_WQE_ATOMIC_WRITE
 */
struct shca_flush_qpt_case {
	const char *name;
	enum ib_qp_type type;
	u8 opcode;
};

static const struct shca_flush_qpt_case shca_flush_qpt_cases[] = {
	{ "uc_flush", IB_QPT_UC, SHCA_WQE_FLUSH },
	{ "uc_atomic_write", IB_QPT_UC, SHCA_WQE_ATOMIC_WRITE },
	{ "ud_flush", IB_QPT_UD, SHCA_WQE_FLUSH },
	{ "ud_atomic_write", IB_QPT_UD, SHCA_WQE_ATOMIC_WRITE },
};

static void shca_flush_qpt_desc(const struct shca_flush_qpt_case *p,
				char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_flush_qpt, shca_flush_qpt_cases, shca_flush_qpt_desc);

/*
 * Only RC has FLUSH and atomic write: on UC and UD the WQE fails locally
 * (the send queue goes to SQE), the target memory is untouched, and the
 * kernel's post_send refuses both opcodes outright, having no work
 * request that could carry their operands.
 */
static void shca_test_flush_only_on_rc(struct kunit *test)
{
	const struct shca_flush_qpt_case *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_FLUSH, .send_flags = IB_SEND_SIGNALED },
	};
	struct shca_hw_send_wqe w = {};
	const struct ib_send_wr *bad;

	shca_test_pair(test, a, b, p->type, 8);
	shca_test_connect(test, a, b);
	memset(b->buf, 0x55, 64);
	w.opcode = p->opcode;
	w.flags = SHCA_WQE_F_SIGNALED;
	w.rdma.rkey = b->rkey;
	w.rdma.remote_addr = b->addr;
	w.flush.type = SHCA_FLUSH_GLOBAL;
	w.flush.length = 64;
	w.rdma.swap = 0x1122334455667788ULL;
	shca_flush_post(test, a, &w, 1);
	shca_flush_expect(test, a, IB_WC_LOC_QP_OP_ERR, 0, 1);
	KUNIT_EXPECT_EQ(test, IB_QPS_SQE, shca_test_qp_state(a));
	KUNIT_EXPECT_EQ(test, 0x55, b->buf[0]);
	KUNIT_EXPECT_EQ(test, 0x55, b->buf[7]);

	wr.wr.opcode = p->opcode == SHCA_WQE_FLUSH ? IB_WR_FLUSH :
		       IB_WR_ATOMIC_WRITE;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_send(a->qp, &wr.wr, &bad));
}

/* Neither can a kernel RC QP post them through ib_post_send(). */
static void shca_test_flush_kernel_post_refused(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_FLUSH, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0,
	};
	const struct ib_send_wr *bad = NULL;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	wr.rkey = b->rkey;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_send(a->qp, &wr.wr, &bad));
	KUNIT_EXPECT_PTR_EQ(test, &wr.wr, bad);
	wr.wr.opcode = IB_WR_ATOMIC_WRITE;
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_post_send(a->qp, &wr.wr, &bad));
	/* The QP is unharmed: an RDMA WRITE still goes through. */
	memset(a->buf, 0x42, 32);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 9, b->rkey, b->addr,
						      32));
	shca_test_expect(test, a, IB_WC_SUCCESS, 9);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf, 32);
}

static struct kunit_case shca_flush_cases[] = {
	KUNIT_CASE_PARAM(shca_test_flush_completes_behind_writes,
			 shca_flush_order_gen_params),
	KUNIT_CASE(shca_test_flush_after_failed_write),
	KUNIT_CASE_PARAM(shca_test_flush_access, shca_flush_access_gen_params),
	KUNIT_CASE_PARAM(shca_test_atomic_write, shca_atomic_write_gen_params),
	KUNIT_CASE_PARAM(shca_test_flush_only_on_rc, shca_flush_qpt_gen_params),
	KUNIT_CASE(shca_test_flush_kernel_post_refused),
	{}
};

static struct kunit_suite shca_flush_suite = {
	.name = "shca_flush",
	.test_cases = shca_flush_cases,
};

kunit_test_suite(shca_flush_suite);
