// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: memory windows in the model.  ib_core gives kernel consumers no
 * bind work request, so these tests allocate windows with ALLOC_MW and
 * write BIND_MW WQEs into a kernel QP's send ring themselves, as libshca
 * does into a process's; the peer then reaches the memory through the
 * window's key with ordinary RDMA work requests.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

/* Where in the target end's buffer the region's page is */
#define SHCA_MW_OFF		SHCA_TEST_KEY_OFF
#define SHCA_MW_RW		(SHCA_BIND_REMOTE_WRITE | SHCA_BIND_REMOTE_READ)
#define SHCA_MW_MR_ACCESS	(SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_MW_BIND | \
				 SHCA_ACCESS_REMOTE_WRITE)

/**
 * struct shca_mw_win - a window allocated for a test
 * @sdev: its device
 * @key: its key as allocated
 * @freed: FREE_MPT already ran
 */
struct shca_mw_win {
	struct shca_dev *sdev;
	u32 key;
	bool freed;
};

/* FREE_MPT of @key, as an errno. */
static int shca_mw_free_key(struct shca_dev *sdev, u32 key)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = key,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/* ALLOC_MW, as an errno; *@key is written only on success. */
static int shca_mw_alloc_cmd(struct shca_dev *sdev, u32 type, u32 pdn,
			     u32 *key)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_MW,
		.in.mw_alloc = { .type = type, .pdn = pdn },
	};
	int err = shca_cmd_exec(sdev, &cmd);

	if (!err)
		*key = cmd.out.num;
	return err;
}

static void shca_mw_win_free(void *arg)
{
	struct shca_mw_win *w = arg;

	if (!w->freed)
		shca_mw_free_key(w->sdev, w->key);
}

/* A window of @type in @pd, freed when the test ends unless freed before. */
static struct shca_mw_win *shca_mw_alloc(struct kunit *test, struct ib_pd *pd,
					 u32 type)
{
	struct shca_mw_win *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->sdev = to_shca_dev(pd->device);
	KUNIT_ASSERT_EQ(test, 0, shca_mw_alloc_cmd(w->sdev, type,
						   to_shca_pd(pd)->pdn,
						   &w->key));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_mw_win_free,
							   w));
	return w;
}

/* Give a region of shca_test_pbl_mpt() the rights @access. */
static int shca_mw_mr_access(struct shca_test_mpt *m, u32 access)
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

	return shca_cmd_exec(m->sdev, &cmd);
}

/* The key @key with the variant byte @tag. */
static u32 shca_mw_variant(u32 key, u8 tag)
{
	return (key & ~0xffU) | tag;
}

/* Write @w into @tq's send ring, as a driver does, and ring the doorbell. */
static void shca_mw_post(struct kunit *test, struct shca_tq *tq,
			 const struct shca_hw_send_wqe *w, u64 wr_id)
{
	struct shca_qp *qp = to_shca_qp(tq->qp);
	unsigned long flags;
	bool full;

	spin_lock_irqsave(&qp->sq_lock, flags);
	full = shca_wq_full(&qp->sq);
	if (!full) {
		memcpy(shca_wq_send_wqe(&qp->sq), w, sizeof(*w));
		shca_wq_produce(&qp->sq, wr_id);
		/* The WQE must be visible before the index that names it. */
		smp_store_release(&qp->dbrec->sq_pi, qp->sq.pi);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	KUNIT_ASSERT_FALSE(test, full);
	shca_hw_ring_sq(to_shca_dev(tq->dev)->hw, qp->qpn);
}

/* Bind window @mw_key as @new_key over [addr, addr + len) of @mr_key. */
static void shca_mw_bind(struct kunit *test, struct shca_tq *tq, u64 wr_id,
			 u32 mw_key, u32 new_key, u32 mr_key, u64 addr,
			 u64 len, u32 access)
{
	struct shca_hw_send_wqe w = {
		.opcode = SHCA_WQE_BIND_MW,
		.flags = SHCA_WQE_F_SIGNALED,
	};

	w.bind.mw_key = mw_key;
	w.bind.new_key = new_key;
	w.bind.mr_lkey = mr_key;
	w.bind.addr = addr;
	w.bind.length = len;
	w.bind.access = access;
	shca_mw_post(test, tq, &w, wr_id);
}

/* Post a signaled RDMA READ of @len bytes at @addr into @a's buffer. */
static int shca_mw_rdma_read(struct shca_tq *a, u64 wr_id, u32 rkey, u64 addr,
			     u32 len)
{
	struct ib_sge sge = { .addr = a->addr, .length = len, .lkey = a->lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = addr,
		.rkey = rkey,
	};

	return ib_post_send(a->qp, &wr.wr, NULL);
}

/* An RDMA WRITE of 64 bytes through @rkey at @addr completes with @status. */
static void shca_mw_write_expect(struct kunit *test, struct shca_tq *a,
				 u32 rkey, u64 addr, enum ib_wc_status status)
{
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 0x77, rkey, addr, 64));
	shca_test_expect(test, a, status, 0x77);
}

/* Back to RTS after an error, both ends. */
static void shca_mw_reconnect(struct kunit *test, struct shca_tq *a,
			      struct shca_tq *b)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE));
	shca_test_connect(test, a, b);
}

/* A connected RC pair and a region of @b's with @mr_access. */
static struct shca_test_mpt *shca_mw_setup(struct kunit *test,
					   struct shca_tq *a,
					   struct shca_tq *b, u32 mr_access)
{
	struct shca_test_mpt *m;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	m = shca_test_pbl_mpt(test, b, SHCA_MW_OFF);
	KUNIT_ASSERT_EQ(test, 0, shca_mw_mr_access(m, mr_access));
	return m;
}

/**
 * enum shca_mw_bind_case - what a bind gets wrong, if anything
 * @SHCA_MW_BIND_OK: nothing
 * @SHCA_MW_BIND_NO_MW_BIND: the region lacks the MW bind right
 * @SHCA_MW_BIND_BEYOND: the range runs one byte past the region
 * @SHCA_MW_BIND_BEFORE: the range starts one byte before it
 * @SHCA_MW_BIND_NO_LOCAL_WRITE: remote write asked of a region without
 *	local write
 * @SHCA_MW_BIND_OTHER_PD: the window is of another protection domain
 * @SHCA_MW_BIND_OTHER_INDEX: the new key names another entry
 * @SHCA_MW_BIND_STALE_KEY: the WQE names the window by a variant it does
 *	not have
 * @SHCA_MW_BIND_BAD_RIGHTS: the window asks for a right windows do not
 *	have (the MR's MW bind bit, which no SHCA_BIND_* is)
 * @SHCA_MW_BIND_MR_IS_WINDOW: the "region" is another window
 * @SHCA_MW_BIND_REBIND_TYPE2: a bound type 2 window, bound again
 * @SHCA_MW_BIND_ANY_VARIANT: as @SHCA_MW_BIND_STALE_KEY; wrong for a type
 *	1 window, right for a type 2 one that is not bound
 * @SHCA_MW_BIND_ZERO_BASED: a zero-based bind; wrong for a type 1 window
 */
enum shca_mw_bind_case {
	SHCA_MW_BIND_OK,
	SHCA_MW_BIND_NO_MW_BIND,
	SHCA_MW_BIND_BEYOND,
	SHCA_MW_BIND_BEFORE,
	SHCA_MW_BIND_NO_LOCAL_WRITE,
	SHCA_MW_BIND_OTHER_PD,
	SHCA_MW_BIND_OTHER_INDEX,
	SHCA_MW_BIND_STALE_KEY,
	SHCA_MW_BIND_BAD_RIGHTS,
	SHCA_MW_BIND_MR_IS_WINDOW,
	SHCA_MW_BIND_REBIND_TYPE2,
	SHCA_MW_BIND_ANY_VARIANT,
	SHCA_MW_BIND_ZERO_BASED,
};

struct shca_mw_bind_param {
	const char *name;
	u32 type;
	enum shca_mw_bind_case c;
};

static const struct shca_mw_bind_param shca_mw_bind_params[] = {
	{ "type1_ok", SHCA_MW_TYPE_1, SHCA_MW_BIND_OK },
	{ "type2_ok", SHCA_MW_TYPE_2, SHCA_MW_BIND_OK },
	{ "type1_no_mw_bind", SHCA_MW_TYPE_1, SHCA_MW_BIND_NO_MW_BIND },
	{ "type2_no_mw_bind", SHCA_MW_TYPE_2, SHCA_MW_BIND_NO_MW_BIND },
	{ "type1_beyond_mr", SHCA_MW_TYPE_1, SHCA_MW_BIND_BEYOND },
	{ "type2_beyond_mr", SHCA_MW_TYPE_2, SHCA_MW_BIND_BEYOND },
	{ "type2_before_mr", SHCA_MW_TYPE_2, SHCA_MW_BIND_BEFORE },
	{ "type2_write_without_local_write", SHCA_MW_TYPE_2,
	  SHCA_MW_BIND_NO_LOCAL_WRITE },
	{ "type1_other_pd", SHCA_MW_TYPE_1, SHCA_MW_BIND_OTHER_PD },
	{ "type2_other_pd", SHCA_MW_TYPE_2, SHCA_MW_BIND_OTHER_PD },
	{ "type2_other_index", SHCA_MW_TYPE_2, SHCA_MW_BIND_OTHER_INDEX },
	{ "type1_stale_key", SHCA_MW_TYPE_1, SHCA_MW_BIND_STALE_KEY },
	{ "type2_bad_rights", SHCA_MW_TYPE_2, SHCA_MW_BIND_BAD_RIGHTS },
	{ "type2_mr_is_window", SHCA_MW_TYPE_2, SHCA_MW_BIND_MR_IS_WINDOW },
	{ "type2_rebind_bound", SHCA_MW_TYPE_2, SHCA_MW_BIND_REBIND_TYPE2 },
	/* An unbound type 2 window is named by its index alone. */
	{ "type2_unbound_any_variant", SHCA_MW_TYPE_2,
	  SHCA_MW_BIND_ANY_VARIANT },
	{ "type1_zero_based", SHCA_MW_TYPE_1, SHCA_MW_BIND_ZERO_BASED },
	{ "type2_zero_based", SHCA_MW_TYPE_2, SHCA_MW_BIND_ZERO_BASED },
};

static void shca_mw_bind_desc(const struct shca_mw_bind_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_mw_bind, shca_mw_bind_params, shca_mw_bind_desc);

/*
 * One bind, right or wrong in one way.  A right one completes and the
 * peer writes through the new key into the region's page; a wrong one
 * completes with IB_WC_MW_BIND_ERR, puts the QP in error, and leaves the
 * window unbound: its key reaches nothing and the region can be released.
 */
static void shca_test_mw_bind_checks(struct kunit *test)
{
	const struct shca_mw_bind_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u32 mr_access = SHCA_MW_MR_ACCESS, access = SHCA_MW_RW;
	struct shca_mw_win *w, *other;
	struct shca_test_mpt *m;
	u32 mw_key, new_key, mr_key, probe;
	u64 addr, base, len = PAGE_SIZE;
	bool ok = p->c == SHCA_MW_BIND_OK ||
		  (p->type == SHCA_MW_TYPE_2 &&
		   (p->c == SHCA_MW_BIND_ANY_VARIANT ||
		    p->c == SHCA_MW_BIND_ZERO_BASED));

	if (p->c == SHCA_MW_BIND_NO_MW_BIND)
		mr_access &= ~SHCA_ACCESS_MW_BIND;
	if (p->c == SHCA_MW_BIND_NO_LOCAL_WRITE)
		mr_access &= ~SHCA_ACCESS_LOCAL_WRITE;
	m = shca_mw_setup(test, a, b, mr_access);
	w = shca_mw_alloc(test, p->c == SHCA_MW_BIND_OTHER_PD ? a->pd : b->pd,
			  p->type);
	mw_key = w->key;
	new_key = shca_mw_variant(w->key, 0x5a);
	mr_key = m->key;
	addr = m->pbl[0];
	switch (p->c) {
	case SHCA_MW_BIND_BEYOND:
		len = PAGE_SIZE + 1;
		break;
	case SHCA_MW_BIND_BEFORE:
		addr--;
		break;
	case SHCA_MW_BIND_OTHER_INDEX:
		new_key = m->key;
		break;
	case SHCA_MW_BIND_STALE_KEY:
	case SHCA_MW_BIND_ANY_VARIANT:
		mw_key = shca_mw_variant(w->key, (w->key & 0xff) ^ 1);
		break;
	case SHCA_MW_BIND_ZERO_BASED:
		access |= SHCA_BIND_ZERO_BASED;
		break;
	case SHCA_MW_BIND_BAD_RIGHTS:
		access |= SHCA_ACCESS_MW_BIND;
		break;
	case SHCA_MW_BIND_MR_IS_WINDOW:
		other = shca_mw_alloc(test, b->pd, SHCA_MW_TYPE_1);
		mr_key = other->key;
		break;
	case SHCA_MW_BIND_REBIND_TYPE2:
		shca_mw_bind(test, b, 1, mw_key, new_key, mr_key, addr, len,
			     access);
		shca_test_expect(test, b, IB_WC_SUCCESS, 1);
		mw_key = new_key;
		new_key = shca_mw_variant(w->key, 0x6b);
		break;
	default:
		break;
	}
	/* A key that, bound, would reach the window: not the region's. */
	probe = p->c == SHCA_MW_BIND_OTHER_INDEX ? w->key : new_key;
	memset(a->buf, 0xa5, 64);
	shca_mw_bind(test, b, 2, mw_key, new_key, mr_key, addr, len, access);
	shca_test_expect(test, b, ok ? IB_WC_SUCCESS : IB_WC_MW_BIND_ERR, 2);
	if (!ok) {
		KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(b));
		shca_mw_reconnect(test, a, b);
		if (p->c == SHCA_MW_BIND_REBIND_TYPE2) {
			/* The first bind stands. */
			shca_mw_write_expect(test, a, mw_key, m->pbl[0],
					     IB_WC_SUCCESS);
			return;
		}
		shca_mw_write_expect(test, a, probe, m->pbl[0],
				     IB_WC_REM_ACCESS_ERR);
		/* No window holds the region. */
		KUNIT_EXPECT_EQ(test, 0, shca_mw_free_key(m->sdev, m->key));
		m->freed = true;
		return;
	}
	/* A zero-based window's addresses start at 0. */
	base = p->c == SHCA_MW_BIND_ZERO_BASED ? 0 : m->pbl[0];
	shca_mw_write_expect(test, a, new_key, base + PAGE_SIZE - 64,
			     IB_WC_SUCCESS);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_MW_OFF + PAGE_SIZE - 64,
			   64);
	/* The key the window was allocated with is gone. */
	shca_mw_write_expect(test, a, w->key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
}

/*
 * A window's rights and range are its own: a read-only window over part
 * of a writable region takes reads inside it, and refuses writes, and
 * reads outside it, with IB_WC_REM_ACCESS_ERR.  An RDMA READ target needs
 * no local write on the region.
 */
static void shca_test_mw_rights_and_range(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_test_mpt *m;
	struct shca_mw_win *w;
	u32 key;

	m = shca_mw_setup(test, a, b, SHCA_ACCESS_MW_BIND |
			  SHCA_ACCESS_REMOTE_WRITE);
	w = shca_mw_alloc(test, b->pd, SHCA_MW_TYPE_1);
	key = shca_mw_variant(w->key, 0x11);
	shca_mw_bind(test, b, 1, w->key, key, m->key, m->pbl[0] + 256, 512,
		     SHCA_BIND_REMOTE_READ);
	shca_test_expect(test, b, IB_WC_SUCCESS, 1);

	memset(b->buf + SHCA_MW_OFF + 256, 0x3c, 512);
	memset(a->buf, 0, 512);
	KUNIT_ASSERT_EQ(test, 0, shca_mw_rdma_read(a, 2, key, m->pbl[0] + 256,
						   512));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_MW_OFF + 256, 512);

	KUNIT_ASSERT_EQ(test, 0, shca_mw_rdma_read(a, 3, key, m->pbl[0] + 255,
						   64));
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 3);
	shca_mw_reconnect(test, a, b);
	KUNIT_ASSERT_EQ(test, 0, shca_mw_rdma_read(a, 4, key,
						   m->pbl[0] + 768 - 63, 64));
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 4);
	shca_mw_reconnect(test, a, b);
	shca_mw_write_expect(test, a, key, m->pbl[0] + 256,
			     IB_WC_REM_ACCESS_ERR);
	/* The region's own key still writes: its rights are unchanged. */
	shca_mw_reconnect(test, a, b);
	shca_mw_write_expect(test, a, m->key, m->pbl[0], IB_WC_SUCCESS);
}

/**
 * enum shca_mw_inv_how - how a bound type 2 window loses its binding
 * @SHCA_MW_INV_LOCAL: LOCAL_INV on the QP that bound it
 * @SHCA_MW_INV_REMOTE: a peer's SEND_WITH_INV, arriving at that QP
 * @SHCA_MW_INV_DEALLOC: FREE_MPT of the window, bound
 */
enum shca_mw_inv_how {
	SHCA_MW_INV_LOCAL,
	SHCA_MW_INV_REMOTE,
	SHCA_MW_INV_DEALLOC,
};

struct shca_mw_inv_param {
	const char *name;
	enum shca_mw_inv_how how;
};

static const struct shca_mw_inv_param shca_mw_inv_params[] = {
	{ "local_inv", SHCA_MW_INV_LOCAL },
	{ "send_with_inv", SHCA_MW_INV_REMOTE },
	{ "dealloc", SHCA_MW_INV_DEALLOC },
};

static void shca_mw_inv_desc(const struct shca_mw_inv_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_mw_inv, shca_mw_inv_params, shca_mw_inv_desc);

/*
 * A type 2 window takes a write, is invalidated one way, and then refuses
 * the next write with IB_WC_REM_ACCESS_ERR; the region is free to go.
 * Invalidated, not deallocated, it binds again.
 */
static void shca_test_mw_type2_invalidate(struct kunit *test)
{
	const struct shca_mw_inv_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_send_wqe inv = { .flags = SHCA_WQE_F_SIGNALED };
	struct shca_test_mpt *m;
	struct shca_mw_win *w;
	struct ib_wc wc;
	u32 key, key2;

	m = shca_mw_setup(test, a, b, SHCA_MW_MR_ACCESS);
	w = shca_mw_alloc(test, b->pd, SHCA_MW_TYPE_2);
	key = shca_mw_variant(w->key, 0x21);
	shca_mw_bind(test, b, 1, w->key, key, m->key, m->pbl[0], PAGE_SIZE,
		     SHCA_MW_RW);
	shca_test_expect(test, b, IB_WC_SUCCESS, 1);
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_SUCCESS);
	/* A bound window holds its region. */
	KUNIT_EXPECT_EQ(test, -EBUSY, shca_mw_free_key(m->sdev, m->key));

	switch (p->how) {
	case SHCA_MW_INV_LOCAL:
		inv.opcode = SHCA_WQE_LOCAL_INV;
		inv.imm_inv = key;
		shca_mw_post(test, b, &inv, 2);
		shca_test_expect(test, b, IB_WC_SUCCESS, 2);
		break;
	case SHCA_MW_INV_REMOTE:
		KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 3, 0, 64));
		inv.opcode = SHCA_WQE_SEND_INV;
		inv.imm_inv = key;
		shca_mw_post(test, a, &inv, 2);
		shca_test_expect(test, a, IB_WC_SUCCESS, 2);
		KUNIT_ASSERT_EQ(test, 1, shca_test_poll(b, &wc, 1));
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
		KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
		KUNIT_EXPECT_EQ(test, key, wc.ex.invalidate_rkey);
		break;
	case SHCA_MW_INV_DEALLOC:
		KUNIT_EXPECT_EQ(test, 0, shca_mw_free_key(w->sdev, w->key));
		w->freed = true;
		break;
	}
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
	shca_mw_reconnect(test, a, b);
	if (p->how != SHCA_MW_INV_DEALLOC) {
		/* Invalid again, the window binds again, with a new variant. */
		key2 = shca_mw_variant(w->key, 0x22);
		shca_mw_bind(test, b, 4, key, key2, m->key, m->pbl[0], 64,
			     SHCA_MW_RW);
		shca_test_expect(test, b, IB_WC_SUCCESS, 4);
		shca_mw_write_expect(test, a, key2, m->pbl[0], IB_WC_SUCCESS);
		shca_mw_write_expect(test, a, key, m->pbl[0],
				     IB_WC_REM_ACCESS_ERR);
		KUNIT_ASSERT_EQ(test, 0, shca_mw_free_key(w->sdev, w->key));
		w->freed = true;
	}
	KUNIT_EXPECT_EQ(test, 0, shca_mw_free_key(m->sdev, m->key));
	m->freed = true;
}

/*
 * Type 1 windows are the protection domain's: LOCAL_INV fails with
 * IB_WC_LOC_PROT_ERR and a peer's SEND_WITH_INV with an Invalid Request
 * NAK, the window staying bound through both; a zero-length bind unbinds
 * it.
 */
static void shca_test_mw_type1_rules(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_send_wqe inv = { .flags = SHCA_WQE_F_SIGNALED };
	struct shca_test_mpt *m;
	struct shca_mw_win *w;
	u32 key, key2;

	m = shca_mw_setup(test, a, b, SHCA_MW_MR_ACCESS);
	w = shca_mw_alloc(test, b->pd, SHCA_MW_TYPE_1);
	key = shca_mw_variant(w->key, 0x31);
	shca_mw_bind(test, b, 1, w->key, key, m->key, m->pbl[0], PAGE_SIZE,
		     SHCA_MW_RW);
	shca_test_expect(test, b, IB_WC_SUCCESS, 1);

	inv.opcode = SHCA_WQE_LOCAL_INV;
	inv.imm_inv = key;
	shca_mw_post(test, b, &inv, 2);
	shca_test_expect(test, b, IB_WC_LOC_PROT_ERR, 2);
	shca_mw_reconnect(test, a, b);
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_SUCCESS);

	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 3, 0, 64));
	inv.opcode = SHCA_WQE_SEND_INV;
	shca_mw_post(test, a, &inv, 3);
	shca_test_expect(test, a, IB_WC_REM_INV_REQ_ERR, 3);
	shca_mw_reconnect(test, a, b);
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_SUCCESS);

	/* A type 1 window rebinds while bound, and a zero length unbinds. */
	key2 = shca_mw_variant(w->key, 0x32);
	shca_mw_bind(test, b, 4, key, key2, m->key, m->pbl[0], 128,
		     SHCA_MW_RW);
	shca_test_expect(test, b, IB_WC_SUCCESS, 4);
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
	shca_mw_reconnect(test, a, b);
	shca_mw_write_expect(test, a, key2, m->pbl[0], IB_WC_SUCCESS);
	shca_mw_bind(test, b, 5, key2, key, 0, 0, 0, 0);
	shca_test_expect(test, b, IB_WC_SUCCESS, 5);
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, 0, shca_mw_free_key(m->sdev, m->key));
	m->freed = true;
}

/*
 * A type 2 window is its QP's: two QPs of one protection domain (on one
 * SRQ), the window bound by the first.  A write arriving at the second
 * fails with IB_WC_REM_ACCESS_ERR, and a SEND_WITH_INV arriving there
 * with an Invalid Request NAK; the window still works through the first.
 * A LOCAL_INV asks only for the domain: the second QP's invalidates it.
 */
static void shca_test_mw_type2_wrong_qp(struct kunit *test)
{
	struct shca_tq *a1 = shca_test_tq_new(test), *b1 = shca_test_tq_new(test);
	struct shca_tq *a2 = shca_test_tq_new(test), *b2 = shca_test_tq_new(test);
	struct shca_hw_send_wqe inv = { .flags = SHCA_WQE_F_SIGNALED };
	struct shca_test_srq *s;
	struct shca_test_mpt *m;
	struct shca_mw_win *w;
	struct ib_device *dev;
	u32 key;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	s = shca_test_srq_new(test, dev, 8, 0, 1);
	shca_test_tq_init(test, a1, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b1, dev, IB_QPT_RC, s->srq, 16, 8);
	shca_test_tq_init(test, a2, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b2, dev, IB_QPT_RC, s->srq, 16, 8);
	shca_test_connect(test, a1, b1);
	shca_test_connect(test, a2, b2);
	KUNIT_ASSERT_PTR_EQ(test, b1->pd, b2->pd);
	m = shca_test_pbl_mpt(test, b1, SHCA_MW_OFF);
	KUNIT_ASSERT_EQ(test, 0, shca_mw_mr_access(m, SHCA_MW_MR_ACCESS));
	w = shca_mw_alloc(test, b1->pd, SHCA_MW_TYPE_2);
	key = shca_mw_variant(w->key, 0x41);
	shca_mw_bind(test, b1, 1, w->key, key, m->key, m->pbl[0], PAGE_SIZE,
		     SHCA_MW_RW);
	shca_test_expect(test, b1, IB_WC_SUCCESS, 1);

	shca_mw_write_expect(test, a2, key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
	shca_mw_write_expect(test, a1, key, m->pbl[0], IB_WC_SUCCESS);
	/* A peer's invalidation must arrive at the window's QP too. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b2, 2, 0, 64));
	shca_mw_reconnect(test, a2, b2);
	inv.opcode = SHCA_WQE_SEND_INV;
	inv.imm_inv = key;
	shca_mw_post(test, a2, &inv, 3);
	shca_test_expect(test, a2, IB_WC_REM_INV_REQ_ERR, 3);
	shca_mw_write_expect(test, a1, key, m->pbl[0], IB_WC_SUCCESS);
	/* The domain's other QP invalidates it locally. */
	shca_mw_reconnect(test, a2, b2);
	inv.opcode = SHCA_WQE_LOCAL_INV;
	shca_mw_post(test, b2, &inv, 4);
	shca_test_expect(test, b2, IB_WC_SUCCESS, 4);
	shca_mw_write_expect(test, a1, key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
}

/*
 * A region with a window bound is not released (-EBUSY) nor
 * re-registered, and keeps working; once the window is released, bound,
 * the region goes.
 */
static void shca_test_mw_dereg_mr_busy(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_cmd rereg = { .opcode = SHCA_CMD_REREG_MPT };
	struct shca_test_mpt *m;
	struct shca_mw_win *w;
	u32 key;

	m = shca_mw_setup(test, a, b, SHCA_MW_MR_ACCESS);
	w = shca_mw_alloc(test, b->pd, SHCA_MW_TYPE_1);
	key = shca_mw_variant(w->key, 0x51);
	shca_mw_bind(test, b, 1, w->key, key, m->key, m->pbl[0], PAGE_SIZE,
		     SHCA_MW_RW);
	shca_test_expect(test, b, IB_WC_SUCCESS, 1);

	KUNIT_EXPECT_EQ(test, -EBUSY, shca_mw_free_key(m->sdev, m->key));
	rereg.in.mpt_rereg.key = m->key;
	rereg.in.mpt_rereg.flags = SHCA_MPT_REREG_ACCESS;
	rereg.in.mpt_rereg.access = SHCA_ACCESS_LOCAL_WRITE;
	KUNIT_EXPECT_EQ(test, -EBUSY, shca_cmd_exec(m->sdev, &rereg));
	shca_mw_write_expect(test, a, m->key, m->pbl[0], IB_WC_SUCCESS);
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_SUCCESS);

	KUNIT_EXPECT_EQ(test, 0, shca_mw_free_key(w->sdev, w->key));
	w->freed = true;
	shca_mw_write_expect(test, a, key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, 0, shca_mw_free_key(m->sdev, m->key));
	m->freed = true;
}

/*
 * A type 2 window goes with its QP: destroying the QP invalidates the
 * window and lets go of its region, and a QP handed the same QPN at once,
 * of the same protection domain, takes no access through the old key.
 */
static void shca_test_mw_type2_qp_destroyed(struct kunit *test)
{
	struct shca_tq *a1 = shca_test_tq_new(test), *b1 = shca_test_tq_new(test);
	struct shca_tq *a2 = shca_test_tq_new(test), *b2 = shca_test_tq_new(test);
	struct shca_test_srq *s;
	struct shca_test_mpt *m;
	struct shca_mw_win *w;
	struct ib_device *dev;
	u32 key, qpn;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	s = shca_test_srq_new(test, dev, 8, 0, 1);
	shca_test_tq_init(test, a1, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b1, dev, IB_QPT_RC, s->srq, 16, 8);
	shca_test_tq_init(test, a2, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a1, b1);
	m = shca_test_pbl_mpt(test, b1, SHCA_MW_OFF);
	KUNIT_ASSERT_EQ(test, 0, shca_mw_mr_access(m, SHCA_MW_MR_ACCESS));
	w = shca_mw_alloc(test, b1->pd, SHCA_MW_TYPE_2);
	key = shca_mw_variant(w->key, 0x61);
	shca_mw_bind(test, b1, 1, w->key, key, m->key, m->pbl[0], PAGE_SIZE,
		     SHCA_MW_RW);
	shca_test_expect(test, b1, IB_WC_SUCCESS, 1);
	shca_mw_write_expect(test, a1, key, m->pbl[0], IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, -EBUSY, shca_mw_free_key(m->sdev, m->key));

	qpn = b1->qp->qp_num;
	KUNIT_ASSERT_EQ(test, 0, ib_destroy_qp(b1->qp));
	b1->qp = NULL;
	KUNIT_ASSERT_EQ(test, 0, shca_hw_set_next_qpn(m->sdev->hw, qpn));
	shca_test_tq_init(test, b2, dev, IB_QPT_RC, s->srq, 16, 8);
	KUNIT_ASSERT_EQ(test, qpn, b2->qp->qp_num);
	KUNIT_ASSERT_PTR_EQ(test, b1->pd, b2->pd);
	shca_test_connect(test, a2, b2);
	shca_mw_write_expect(test, a2, m->key, m->pbl[0], IB_WC_SUCCESS);
	shca_mw_write_expect(test, a2, key, m->pbl[0], IB_WC_REM_ACCESS_ERR);
	/* No window holds the region now. */
	KUNIT_EXPECT_EQ(test, 0, shca_mw_free_key(m->sdev, m->key));
	m->freed = true;
}

/* ALLOC_MW refuses a type it does not know, and a PD out of range. */
static void shca_test_mw_alloc_bad_input(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_dev *sdev;
	u32 pdn, key = 0;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	sdev = to_shca_dev(a->dev);
	pdn = to_shca_pd(a->pd)->pdn;
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_mw_alloc_cmd(sdev, 0, pdn, &key));
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_mw_alloc_cmd(sdev, 3, pdn, &key));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			shca_mw_alloc_cmd(sdev, SHCA_MW_TYPE_1, 0, &key));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			shca_mw_alloc_cmd(sdev, SHCA_MW_TYPE_2, U32_MAX, &key));
	KUNIT_EXPECT_EQ(test, 0, key);
}

static struct kunit_case shca_mw_cases[] = {
	KUNIT_CASE_PARAM(shca_test_mw_bind_checks, shca_mw_bind_gen_params),
	KUNIT_CASE(shca_test_mw_rights_and_range),
	KUNIT_CASE_PARAM(shca_test_mw_type2_invalidate, shca_mw_inv_gen_params),
	KUNIT_CASE(shca_test_mw_type1_rules),
	KUNIT_CASE(shca_test_mw_type2_wrong_qp),
	KUNIT_CASE(shca_test_mw_dereg_mr_busy),
	KUNIT_CASE(shca_test_mw_type2_qp_destroyed),
	KUNIT_CASE(shca_test_mw_alloc_bad_input),
	{}
};

static struct kunit_suite shca_mw_suite = {
	.name = "shca_mw",
	.test_cases = shca_mw_cases,
};

kunit_test_suite(shca_mw_suite);
