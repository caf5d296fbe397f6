// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: REREG_MPT, the model's rewrite of a registered MR's entry in
 * place (shca_mr_rereg).  Each way (PD, rights, translation, all three)
 * keeps the key and takes effect for the next access through it; bad
 * parameters change nothing.  A new translation waits for the accesses
 * that took the old one, and only for those.
 */
#include <kunit/test.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_REREG_OLD		SHCA_TEST_KEY_OFF
#define SHCA_REREG_NEW		(SHCA_TEST_KEY_OFF + 2 * PAGE_SIZE)

static int shca_rereg_key(struct shca_dev *sdev,
			  const struct shca_hw_mpt_rereg *in)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_REREG_MPT,
		.in.mpt_rereg = *in,
	};

	return shca_cmd_exec(sdev, &cmd);
}

/* REREG_MPT of @m's entry, as shca_rereg_user_mr() issues it. */
static int shca_rereg(struct shca_test_mpt *m,
		      const struct shca_hw_mpt_rereg *in)
{
	struct shca_hw_mpt_rereg r = *in;

	r.key = m->key;
	return shca_rereg_key(m->sdev, &r);
}

/* An RDMA WRITE of 64 bytes of 0x5a through @key at @b's buffer + @off. */
static enum ib_wc_status shca_rereg_write(struct kunit *test,
					  struct shca_tq *a, struct shca_tq *b,
					  u32 key, u32 off, u64 wr_id)
{
	struct ib_wc wc = {};
	unsigned long end = jiffies + SHCA_TEST_WAIT;

	memset(a->buf, 0x5a, 64);
	KUNIT_EXPECT_EQ(test, 0, shca_test_rdma_write(a, wr_id, key,
						      b->addr + off, 64));
	while (!shca_test_poll(a, &wc, 1) && !time_after(jiffies, end))
		usleep_range(50, 200);
	KUNIT_EXPECT_EQ(test, wr_id, wc.wr_id);
	return wc.status;
}

static void shca_rereg_pd_free(void *pd)
{
	ib_dealloc_pd(pd);
}

struct shca_rereg_param {
	const char *name;
	u32 flags;
	/* The write through the old translation and rights must fail. */
	bool old_refused;
	/* The write through the new translation must succeed. */
	bool new_works;
};

static const struct shca_rereg_param shca_rereg_params[] = {
	{ "pd", SHCA_MPT_REREG_PD, true, false },
	{ "access", SHCA_MPT_REREG_ACCESS, true, false },
	{ "translation", SHCA_MPT_REREG_TRANSLATION, true, true },
	{ "all", SHCA_MPT_REREG_ALL, true, true },
};

static void shca_rereg_desc(const struct shca_rereg_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rereg, shca_rereg_params, shca_rereg_desc);

/*
 * One page of b's buffer, remote write allowed, rewritten one way: the
 * key stays.  PD alone moves it to a PD of its own, so a's writes are
 * refused; rights alone take remote write away; a new translation makes
 * a new page the MR's and the old one unreachable; all three together
 * keep the PD (the same number) and give the rights back, so the new page
 * works and the old does not.
 */
static void shca_test_rereg_mpt_each_way(struct kunit *test)
{
	const struct shca_rereg_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_mpt_rereg in = { .flags = p->flags };
	struct shca_test_mpt *m;
	struct ib_pd *other;
	u64 *pbl;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	/* Before the entry, so that it goes after the entry (actions). */
	other = ib_alloc_pd(b->dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_rereg_pd_free,
							   other));
	m = shca_test_pbl_mpt(test, b, SHCA_REREG_OLD);
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS,
			shca_rereg_write(test, a, b, m->key, SHCA_REREG_OLD, 1));
	in.pdn = p->flags == SHCA_MPT_REREG_ALL ? to_shca_pd(b->pd)->pdn :
		 to_shca_pd(other)->pdn;
	in.access = p->flags == SHCA_MPT_REREG_ALL ?
		    SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE :
		    SHCA_ACCESS_LOCAL_WRITE;
	pbl = kunit_kzalloc(test, sizeof(*pbl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pbl);
	pbl[0] = b->addr + SHCA_REREG_NEW;
	in.pbl = pbl;
	in.npages = 1;
	in.page_shift = PAGE_SHIFT;
	in.iova = pbl[0];
	in.length = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, 0, shca_rereg(m, &in));

	memset(b->buf + SHCA_REREG_NEW, 0, 64);
	if (p->new_works) {
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
				shca_rereg_write(test, a, b, m->key,
						 SHCA_REREG_NEW, 2));
		KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_REREG_NEW, 64);
	}
	/* Last: a refused write takes the QPs to ERR. */
	memset(b->buf + SHCA_REREG_OLD, 0, 64);
	if (p->old_refused) {
		KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR,
				shca_rereg_write(test, a, b, m->key,
						 SHCA_REREG_OLD, 3));
		KUNIT_EXPECT_EQ(test, 0, memchr_inv(b->buf + SHCA_REREG_OLD,
						    0, 64) != NULL);
	}
}

struct shca_rereg_bad {
	const char *name;
	struct shca_hw_mpt_rereg in;
};

static const struct shca_rereg_bad shca_rereg_bads[] = {
	{ "no_flags", { .flags = 0 } },
	{ "unknown_flag", { .flags = BIT(7) } },
	{ "unknown_rights", { .flags = SHCA_MPT_REREG_ACCESS,
			      .access = BIT(30) } },
	{ "pd_0", { .flags = SHCA_MPT_REREG_PD, .pdn = 0 } },
	{ "no_page_list", { .flags = SHCA_MPT_REREG_TRANSLATION,
			    .npages = 1, .page_shift = PAGE_SHIFT,
			    .length = 64 } },
	{ "no_pages", { .flags = SHCA_MPT_REREG_TRANSLATION,
			.pbl = (const u64 *)shca_rereg_bads,
			.page_shift = PAGE_SHIFT, .length = 64 } },
	{ "length_past_the_pages", { .flags = SHCA_MPT_REREG_TRANSLATION,
				     .pbl = (const u64 *)shca_rereg_bads,
				     .npages = 1, .page_shift = PAGE_SHIFT,
				     .length = PAGE_SIZE + 1 } },
	{ "zero_length", { .flags = SHCA_MPT_REREG_TRANSLATION,
			   .pbl = (const u64 *)shca_rereg_bads, .npages = 1,
			   .page_shift = PAGE_SHIFT } },
};

static void shca_rereg_bad_desc(const struct shca_rereg_bad *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rereg_bad, shca_rereg_bads, shca_rereg_bad_desc);

/* Refused with -EINVAL, and the entry works as before. */
static void shca_test_rereg_mpt_refused(struct kunit *test)
{
	const struct shca_rereg_bad *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_test_mpt *m;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	m = shca_test_pbl_mpt(test, b, SHCA_REREG_OLD);
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_rereg(m, &p->in));
	memset(b->buf + SHCA_REREG_OLD, 0, 64);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			shca_rereg_write(test, a, b, m->key, SHCA_REREG_OLD, 1));
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_REREG_OLD, 64);
}

/* Only a valid registered entry is rewritten; a fast-registration one not. */
static void shca_test_rereg_mpt_needs_a_registered_entry(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_mpt_rereg in = { .flags = SHCA_MPT_REREG_ACCESS };
	struct shca_test_mpt *m;
	struct ib_mr *fr;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	m = shca_test_pbl_mpt(test, b, SHCA_REREG_OLD);
	fr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_FALSE(test, IS_ERR(fr));
	in.key = fr->lkey;
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_rereg_key(m->sdev, &in));
	ib_dereg_mr(fr);
	/* A stale key: the entry's tag moved on. */
	in.key = m->key ^ 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_rereg_key(m->sdev, &in));
	in.key = 0x00fffe00;
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_rereg_key(m->sdev, &in));
}

/**
 * struct shca_rereg_async - a REREG_MPT of a new translation on a worker
 * @m: the entry
 * @in: the rewrite
 * @work: runs it
 * @ret: what it returned
 * @done: completed when it returned
 * @later: an access taken after the rewrite, held until the test ends
 */
struct shca_rereg_async {
	struct shca_test_mpt *m;
	struct shca_hw_mpt_rereg in;
	struct work_struct work;
	int ret;
	struct completion done;
	struct shca_hw_mem *later;
};

static void shca_rereg_async_fn(struct work_struct *work)
{
	struct shca_rereg_async *r = container_of(work, struct shca_rereg_async,
						  work);

	r->ret = shca_rereg(r->m, &r->in);
	complete(&r->done);
}

/* Cleanup: the later access ends, then the REREG_MPT is waited for. */
static void shca_rereg_async_end(void *arg)
{
	struct shca_rereg_async *r = arg;

	shca_hw_mem_unhold(r->later);
	flush_work(&r->work);
}

/*
 * a's RDMA WRITE through the old translation is held in the mem_access
 * window; a REREG_MPT of a new one must wait for it.  Once the rewrite is
 * visible, an access through the new translation starts and stays in
 * flight, as a peer streaming READs keeps one.  When the old write ends,
 * the REREG_MPT must return, the later access still held: waiting on
 * every reference, it waited for that one too, and a stream of them held
 * it for ever.  Then a second rewrite while the first one waits is BUSY.
 */
static void shca_test_rereg_waits_only_for_the_old_translation(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	unsigned long end = jiffies + SHCA_TEST_WAIT;
	struct shca_hw_window *win;
	struct shca_rereg_async *r;
	struct shca_hw *hw;
	u32 pdn;
	u64 *pbl;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	hw = to_shca_dev(b->dev)->hw;
	pdn = to_shca_pd(b->pd)->pdn;
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	pbl = kunit_kzalloc(test, sizeof(*pbl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, pbl);
	r->m = shca_test_pbl_mpt(test, b, SHCA_REREG_OLD);
	pbl[0] = b->addr + SHCA_REREG_NEW;
	r->in = (struct shca_hw_mpt_rereg) {
		.flags = SHCA_MPT_REREG_TRANSLATION,
		.pbl = pbl,
		.npages = 1,
		.page_shift = PAGE_SHIFT,
		.iova = pbl[0],
		.length = PAGE_SIZE,
	};
	INIT_WORK(&r->work, shca_rereg_async_fn);
	init_completion(&r->done);

	/* Cleanup runs backwards: the window opens before the worker ends. */
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_rereg_async_end,
							   r));
	win = shca_test_window_arm(test, b->dev, SHCA_WIN_MEM_ACCESS,
				   b->qp->qp_num);
	memset(a->buf, 0x3c, 64);
	KUNIT_ASSERT_EQ(test, 0, shca_test_rdma_write(a, 1, r->m->key,
						      r->m->pbl[0], 64));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_TEST_WAIT));
	queue_work(system_unbound_wq, &r->work);

	/* The new translation is visible once an access through it works. */
	while (!(r->later = shca_hw_mem_hold(hw, pdn, r->m->key, pbl[0], 64,
					     SHCA_ACCESS_REMOTE_WRITE))) {
		KUNIT_ASSERT_FALSE_MSG(test, time_after(jiffies, end),
				       "the new translation never showed");
		usleep_range(50, 200);
	}
	KUNIT_EXPECT_FALSE(test, completion_done(&r->done));
	/* The old translation is still in use: another rewrite waits its turn. */
	KUNIT_EXPECT_EQ(test, -EBUSY, shca_rereg(r->m, &r->in));

	shca_hw_window_release(win);
	if (!wait_for_completion_timeout(&r->done, SHCA_TEST_WAIT))
		KUNIT_FAIL(test, "REREG_MPT waited for an access it did not replace");
	KUNIT_EXPECT_EQ(test, 0, r->ret);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	/* The held write finished through the page it had checked. */
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_REREG_OLD, 64);
	shca_hw_mem_unhold(r->later);
	r->later = NULL;
	/* With nothing left of the old one, the next rewrite is taken. */
	KUNIT_EXPECT_EQ(test, 0, shca_rereg(r->m, &r->in));
}

static struct kunit_case shca_mr_rereg_cases[] = {
	KUNIT_CASE_PARAM(shca_test_rereg_mpt_each_way, shca_rereg_gen_params),
	KUNIT_CASE_PARAM(shca_test_rereg_mpt_refused, shca_rereg_bad_gen_params),
	KUNIT_CASE(shca_test_rereg_mpt_needs_a_registered_entry),
	KUNIT_CASE(shca_test_rereg_waits_only_for_the_old_translation),
	{}
};

static struct kunit_suite shca_mr_rereg_suite = {
	.name = "shca_mr_rereg",
	.test_cases = shca_mr_rereg_cases,
};

kunit_test_suite(shca_mr_rereg_suite);
