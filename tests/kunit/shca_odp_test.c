// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: on-demand paging in the model (shca_odp).  The test is the
 * driver: it registers the device's page fault handler and answers
 * faults with MAP_ODP, or fails them, through the model's own interface,
 * and invalidates with INVALIDATE_ODP.  An ODP entry's "process" memory
 * is a range of an end's kernel buffer, named by its kernel addresses.
 */
#include <kunit/test.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_ODP_OFF		SHCA_TEST_KEY_OFF
#define SHCA_ODP_PAGES		4

/* The test's side of the device's page faults. */
struct shca_odp_t {
	struct shca_dev *sdev;
	struct shca_tq peer;
	u32 key;
	u64 base;
	bool fail;
	bool read_only;
	atomic_t faults;
	struct shca_hw_odp_fault last;
	int map_ret;
};

static int shca_odp_cmd(struct shca_dev *sdev, struct shca_hw_cmd *cmd)
{
	return shca_cmd_exec(sdev, cmd);
}

/* MAP_ODP of pages [first, first + n) to the buffer, as a driver would. */
static int shca_odp_t_map(struct shca_odp_t *t, u32 first, u32 n, bool write)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MAP_ODP,
		.in.odp_map = { .key = t->key, .first = first, .npages = n },
	};
	u64 pages[SHCA_ODP_PAGES];
	u32 i;

	if (n > SHCA_ODP_PAGES)
		return -EINVAL;
	for (i = 0; i < n; i++)
		pages[i] = (t->base + (u64)(first + i) * PAGE_SIZE) |
			   SHCA_ODP_PAGE_READ |
			   (write ? SHCA_ODP_PAGE_WRITE : 0);
	cmd.in.odp_map.pages = pages;
	return shca_odp_cmd(t->sdev, &cmd);
}

static int shca_odp_t_invalidate(struct shca_odp_t *t, u32 first, u32 n)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_INVALIDATE_ODP,
		.in.odp_range = { .key = t->key, .first = first, .npages = n },
	};

	return shca_odp_cmd(t->sdev, &cmd);
}

static int shca_odp_t_fault(void *ctx, const struct shca_hw_odp_fault *f)
{
	struct shca_odp_t *t = ctx;

	t->last = *f;
	atomic_inc(&t->faults);
	if (t->fail)
		return -EFAULT;
	t->map_ret = shca_odp_t_map(t, f->first, f->npages,
				    f->write || !t->read_only);
	return t->map_ret;
}

static void shca_odp_t_unhandle(void *arg)
{
	struct shca_odp_t *t = arg;

	shca_hw_set_odp_handler(t->sdev->hw, NULL, NULL);
}

static void shca_odp_t_free(void *arg)
{
	struct shca_odp_t *t = arg;
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = t->key,
	};

	shca_odp_cmd(t->sdev, &cmd);
}

/*
 * An ODP entry over SHCA_ODP_PAGES pages of @tq's buffer, every page
 * absent, with the test as its device's fault handler; @peer, for
 * shca_test_post_send(), names it.
 */
static struct shca_odp_t *shca_odp_t_new(struct kunit *test,
					 struct shca_tq *tq)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = {
			.type = SHCA_MPT_ODP,
			.pdn = to_shca_pd(tq->pd)->pdn,
			.max_pages = SHCA_ODP_PAGES,
		},
	};
	struct shca_odp_t *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->sdev = to_shca_dev(tq->dev);
	t->base = tq->addr + SHCA_ODP_OFF;
	KUNIT_ASSERT_EQ(test, 0, t->base & ~PAGE_MASK);
	atomic_set(&t->faults, 0);
	KUNIT_ASSERT_EQ(test, 0, shca_odp_cmd(t->sdev, &cmd));
	t->key = cmd.out.num;
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_odp_t_free, t));
	cmd = (struct shca_hw_cmd) {
		.opcode = SHCA_CMD_WRITE_MPT,
		.in.mpt = {
			.key = t->key,
			.access = SHCA_ACCESS_LOCAL_WRITE |
				  SHCA_ACCESS_REMOTE_WRITE |
				  SHCA_ACCESS_REMOTE_READ |
				  SHCA_ACCESS_REMOTE_ATOMIC,
			.iova = t->base,
			.length = SHCA_ODP_PAGES * PAGE_SIZE,
			.npages = SHCA_ODP_PAGES,
			.page_shift = PAGE_SHIFT,
		},
	};
	KUNIT_ASSERT_EQ(test, 0, shca_odp_cmd(t->sdev, &cmd));
	shca_hw_set_odp_handler(t->sdev->hw, shca_odp_t_fault, t);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_odp_t_unhandle,
							   t));
	t->peer = *tq;
	t->peer.rkey = t->key;
	t->peer.lkey = t->key;
	t->peer.addr = t->base;
	return t;
}

/* Connected RC ends a and b, b's buffer under an ODP entry. */
static struct shca_odp_t *shca_odp_setup(struct kunit *test,
					 struct shca_tq *a, struct shca_tq *b)
{
	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	return shca_odp_t_new(test, b);
}

struct shca_odp_op {
	const char *name;
	enum ib_wr_opcode opcode;
	/* Whether the access to the ODP memory writes it. */
	bool write;
	/* The ODP memory is the requester's own (the responder's if not). */
	bool local;
};

static const struct shca_odp_op shca_odp_ops[] = {
	{ "rdma_write", IB_WR_RDMA_WRITE, true, false },
	{ "rdma_read", IB_WR_RDMA_READ, false, false },
	{ "fetch_add", IB_WR_ATOMIC_FETCH_AND_ADD, true, false },
	{ "recv", IB_WR_SEND, true, false },
	{ "send", IB_WR_SEND, false, true },
	{ "rdma_read_into", IB_WR_RDMA_READ, true, true },
};

static void shca_odp_op_desc(const struct shca_odp_op *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_odp_op, shca_odp_ops, shca_odp_op_desc);

/*
 * Post @p's operation of @len bytes at the start of the ODP memory.  The
 * responder's ODP memory is @t's (on b); the requester's is a's, named
 * by @la.
 */
static void shca_odp_post(struct kunit *test, const struct shca_odp_op *p,
			  struct shca_tq *a, struct shca_tq *b,
			  struct shca_odp_t *t, struct shca_tq *la, u64 wr_id,
			  u32 len)
{
	struct shca_tq *req = p->local ? la : a;
	struct shca_tq *resp = p->local ? b : &t->peer;

	if (p->opcode == IB_WR_SEND)
		KUNIT_ASSERT_EQ(test, 0,
				shca_test_post_recv(resp, wr_id, 0, len));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(req, resp, p->opcode,
						     wr_id, 0, 0, len, 0));
}

/*
 * The first access to an absent page faults to the driver, for the pages
 * it needs, read or write as the operation is; the driver maps them, the
 * access resumes and completes with the data moved.  The next access
 * finds the pages present: no fault.
 */
static void shca_test_odp_fault_resume(struct kunit *test)
{
	const struct shca_odp_op *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u32 len = p->opcode == IB_WR_ATOMIC_FETCH_AND_ADD ? 8 : PAGE_SIZE + 64;
	struct shca_odp_t *t, *la = NULL;
	u8 *odp_mem, *other;

	t = shca_odp_setup(test, a, b);
	if (p->local) {
		/* The requester's memory is ODP: an entry on a's side. */
		la = shca_odp_t_new(test, a);
		t = la;
	}
	odp_mem = (u8 *)(uintptr_t)t->base;
	other = p->local ? b->buf : a->buf;
	memset(odp_mem, 0x11, 2 * PAGE_SIZE);
	memset(other, 0x22, 2 * PAGE_SIZE);
	*(u64 *)other = 5;
	*(u64 *)odp_mem = 7;

	shca_odp_post(test, p, a, b, t, la ? &la->peer : NULL, 1, len);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	if (p->opcode == IB_WR_SEND)
		shca_test_expect(test, b, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));
	KUNIT_EXPECT_EQ(test, t->key, t->last.key);
	KUNIT_EXPECT_EQ(test, 0, t->last.first);
	KUNIT_EXPECT_EQ(test, len > PAGE_SIZE ? 2 : 1, t->last.npages);
	KUNIT_EXPECT_EQ(test, p->write, t->last.write);
	KUNIT_EXPECT_EQ(test, 0, t->map_ret);
	if (p->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		/* Adds 0 (shca_test_post_send()): the original comes back. */
		KUNIT_EXPECT_EQ(test, 7ULL, *(u64 *)odp_mem);
		KUNIT_EXPECT_EQ(test, 7ULL, *(u64 *)a->buf);
	} else if (p->write) {
		KUNIT_EXPECT_MEMEQ(test, odp_mem, other, len);
	} else {
		KUNIT_EXPECT_MEMEQ(test, other, odp_mem, len);
	}

	/* Present now: the same access again does not fault. */
	shca_odp_post(test, p, a, b, t, la ? &la->peer : NULL, 2, len);
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	if (p->opcode == IB_WR_SEND)
		shca_test_expect(test, b, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));
}

/*
 * The driver fails the fault: the WQE completes in error, a remote access
 * error for the responder's memory, a local protection error for the
 * requester's, and not a byte of the ODP memory moved.
 */
static void shca_test_odp_fault_fails(struct kunit *test)
{
	const struct shca_odp_op *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u32 len = p->opcode == IB_WR_ATOMIC_FETCH_AND_ADD ? 8 : 64;
	struct shca_odp_t *t, *la = NULL;
	enum ib_wc_status want;
	u8 *odp_mem;

	t = shca_odp_setup(test, a, b);
	if (p->local) {
		la = shca_odp_t_new(test, a);
		t = la;
	}
	t->fail = true;
	odp_mem = (u8 *)(uintptr_t)t->base;
	memset(odp_mem, 0x11, PAGE_SIZE);
	memset(p->local ? b->buf : a->buf, 0x22, PAGE_SIZE);

	shca_odp_post(test, p, a, b, t, la ? &la->peer : NULL, 1, len);
	want = p->local ? IB_WC_LOC_PROT_ERR :
	       p->opcode == IB_WR_SEND ? IB_WC_REM_OP_ERR : IB_WC_REM_ACCESS_ERR;
	shca_test_expect(test, a, want, 1);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));
	KUNIT_EXPECT_NULL(test, memchr_inv(odp_mem, 0x11, PAGE_SIZE));
}

/*
 * A page mapped for reading only faults again when an access writes it,
 * for write; a read of it does not.
 */
static void shca_test_odp_read_only_page_faults_for_write(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_odp_t *t = shca_odp_setup(test, a, b);

	t->read_only = true;
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_READ, 1, 0, 0,
						     64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));
	KUNIT_EXPECT_FALSE(test, t->last.write);

	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_READ, 2, 0, 0,
						     64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));

	memset(a->buf, 0x33, 64);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_WRITE, 3, 0, 0,
						     64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 3);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&t->faults));
	KUNIT_EXPECT_TRUE(test, t->last.write);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_ODP_OFF, 64);
}

/*
 * A prefetch (MAP_ODP before any access) leaves nothing to fault; after
 * INVALIDATE_ODP of one page, an access to that page faults again, for
 * that page only, and one to the other pages does not.
 */
static void shca_test_odp_refault_after_invalidate(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_odp_t *t = shca_odp_setup(test, a, b);

	KUNIT_ASSERT_EQ(test, 0, shca_odp_t_map(t, 0, SHCA_ODP_PAGES, true));
	memset(a->buf, 0x44, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_WRITE, 1, 0,
						     PAGE_SIZE, 64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&t->faults));

	KUNIT_ASSERT_EQ(test, 0, shca_odp_t_invalidate(t, 1, 1));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_WRITE, 2, 0,
						     2 * PAGE_SIZE, 64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&t->faults));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_WRITE, 3, 0,
						     PAGE_SIZE + 8, 64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 3);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));
	KUNIT_EXPECT_EQ(test, 1, t->last.first);
	KUNIT_EXPECT_EQ(test, 1, t->last.npages);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_ODP_OFF + PAGE_SIZE + 8,
			   64);
}

/* Both ends' memory ODP, on one device: one handler answers for both. */
struct shca_odp_both {
	struct shca_odp_t *req;
	struct shca_odp_t *resp;
	/* Pages of the requester's entry held when the responder faulted. */
	int users_seen;
	int inval_ret;
	atomic_t req_faults;
	atomic_t resp_faults;
};

/*
 * The responder's fault is answered as a copy-on-write break in a process
 * owning both buffers would answer it: the MMU notifier first invalidates
 * the requester's pages, and waits for whoever holds them.  It looks
 * first: a wait for a hold of its own caller would never end.
 */
static int shca_odp_both_fault(void *ctx, const struct shca_hw_odp_fault *f)
{
	struct shca_odp_both *s = ctx;

	if (f->key == s->req->key) {
		atomic_inc(&s->req_faults);
		return shca_odp_t_map(s->req, f->first, f->npages, true);
	}
	atomic_inc(&s->resp_faults);
	s->users_seen = shca_hw_odp_users(s->req->sdev->hw, s->req->key);
	if (s->users_seen)
		return -EDEADLK;
	s->inval_ret = shca_odp_t_invalidate(s->req, 0, SHCA_ODP_PAGES);
	return shca_odp_t_map(s->resp, f->first, f->npages, true);
}

/*
 * An RDMA WRITE from one ODP MR into another, every page absent: the
 * requester faults its source in, the responder finds its target absent
 * and raises the fault to the requester, which answers it holding no page
 * of its own; so the invalidation the fault sets off completes, the
 * source faults in again, and the write lands whole.
 */
static void shca_test_odp_responder_fault_holds_no_page(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_odp_both *s;
	u32 len = PAGE_SIZE + 64;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->resp = shca_odp_setup(test, a, b);
	s->req = shca_odp_t_new(test, a);
	KUNIT_ASSERT_PTR_EQ(test, s->req->sdev, s->resp->sdev);
	shca_hw_set_odp_handler(s->req->sdev->hw, shca_odp_both_fault, s);
	memset((void *)(uintptr_t)s->req->base, 0x66, len);
	memset((void *)(uintptr_t)s->resp->base, 0x11, len);

	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(&s->req->peer,
						     &s->resp->peer,
						     IB_WR_RDMA_WRITE, 1, 0,
						     0, len, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 0, s->users_seen);
	KUNIT_EXPECT_EQ(test, 0, s->inval_ret);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&s->resp_faults));
	/* Faulted in, taken away by the invalidation, faulted in again. */
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&s->req_faults));
	KUNIT_EXPECT_MEMEQ(test, (void *)(uintptr_t)s->resp->base,
			   (void *)(uintptr_t)s->req->base, len);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_odp_users(s->req->sdev->hw,
						   s->req->key));
}

struct shca_odp_inval {
	struct shca_odp_t *t;
	struct work_struct work;
	struct completion done;
	int ret;
};

static void shca_odp_inval_fn(struct work_struct *work)
{
	struct shca_odp_inval *s = container_of(work, struct shca_odp_inval,
						work);

	s->ret = shca_odp_t_invalidate(s->t, 0, SHCA_ODP_PAGES);
	complete(&s->done);
}

static void shca_odp_inval_wait(void *arg)
{
	struct shca_odp_inval *s = arg;

	flush_work(&s->work);
}

static void shca_odp_window_reset(void *arg)
{
	shca_hw_window_release(arg);
}

/*
 * An RDMA WRITE held in the memory access window has found its pages
 * present: INVALIDATE_ODP does not return while it is held, and returns
 * once it is done; the write completed with its data, and the next one
 * faults again.
 */
static void shca_test_odp_invalidate_waits_for_access(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_odp_t *t = shca_odp_setup(test, a, b);
	struct shca_hw_window *win;
	struct shca_odp_inval *s;
	u64 invals;
	unsigned long end;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->t = t;
	INIT_WORK(&s->work, shca_odp_inval_fn);
	init_completion(&s->done);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_odp_inval_wait,
							   s));
	KUNIT_ASSERT_EQ(test, 0, shca_odp_t_map(t, 0, SHCA_ODP_PAGES, true));

	win = shca_hw_window(t->sdev->hw, SHCA_WIN_MEM_ACCESS);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_odp_window_reset,
							   win));
	shca_hw_window_set_qpn(win, b->qp->qp_num);
	shca_hw_window_arm(win);
	memset(a->buf, 0x55, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_WRITE, 1, 0, 0,
						     PAGE_SIZE, 0));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_TEST_WAIT));

	invals = shca_test_counter(b->dev, SHCA_CNT_ODP_INVALIDATIONS);
	queue_work(system_unbound_wq, &s->work);
	/* The invalidation has begun... */
	end = jiffies + SHCA_TEST_WAIT;
	while (shca_test_counter(b->dev, SHCA_CNT_ODP_INVALIDATIONS) == invals &&
	       !time_after(jiffies, end))
		usleep_range(100, 200);
	KUNIT_ASSERT_EQ(test, invals + 1,
			shca_test_counter(b->dev, SHCA_CNT_ODP_INVALIDATIONS));
	/* ...and does not end while the access is held. */
	KUNIT_EXPECT_FALSE(test, wait_for_completion_timeout(&s->done, HZ / 5));
	KUNIT_EXPECT_EQ(test, SHCA_HW_WIN_HELD, shca_hw_window_state(win));

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&s->done,
							    SHCA_TEST_WAIT));
	KUNIT_EXPECT_EQ(test, 0, s->ret);
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_ODP_OFF, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&t->faults));

	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_WRITE, 2, 0, 0,
						     64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

struct shca_odp_bad {
	const char *name;
	u32 first;
	u32 npages;
	u64 page;
	bool pbl_key;
};

static const struct shca_odp_bad shca_odp_bads[] = {
	{ "past_the_end", SHCA_ODP_PAGES - 1, 2, SHCA_ODP_PAGE_READ },
	{ "first_past_the_end", SHCA_ODP_PAGES, 1, SHCA_ODP_PAGE_READ },
	{ "no_pages", 0, 0, SHCA_ODP_PAGE_READ },
	{ "unaligned", 0, 1, SHCA_ODP_PAGE_READ | 0x40 },
	{ "write_without_read", 0, 1, SHCA_ODP_PAGE_WRITE },
	{ "not_an_odp_key", 0, 1, SHCA_ODP_PAGE_READ, true },
};

static void shca_odp_bad_desc(const struct shca_odp_bad *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_odp_bad, shca_odp_bads, shca_odp_bad_desc);

/*
 * A bad MAP_ODP is refused with -EINVAL and maps nothing: the next access
 * still faults.  INVALIDATE_ODP of a key that is no ODP entry is refused
 * too.
 */
static void shca_test_odp_bad_map_refused(struct kunit *test)
{
	const struct shca_odp_bad *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_odp_t *t = shca_odp_setup(test, a, b);
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_MAP_ODP,
		.in.odp_map = {
			.key = t->key,
			.first = p->first,
			.npages = p->npages,
		},
	};
	struct shca_hw_cmd inval = {
		.opcode = SHCA_CMD_INVALIDATE_ODP,
		.in.odp_range.npages = 1,
	};
	u64 pages[2] = { t->base | p->page, (t->base + PAGE_SIZE) | p->page };
	struct shca_test_mpt *m;

	if (p->pbl_key) {
		m = shca_test_pbl_mpt(test, b, 0);
		cmd.in.odp_map.key = m->key;
		inval.in.odp_range.key = m->key;
		KUNIT_EXPECT_EQ(test, -EINVAL, shca_odp_cmd(t->sdev, &inval));
	}
	cmd.in.odp_map.pages = pages;
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_odp_cmd(t->sdev, &cmd));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(a, &t->peer,
						     IB_WR_RDMA_WRITE, 1, 0,
						     (SHCA_ODP_PAGES - 1) *
						     PAGE_SIZE, 64, 0));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&t->faults));
}

/*
 * An ODP entry takes a page count and no page list, and is written once:
 * ALLOC_MPT of none and a WRITE_MPT with a list, or a second one, are
 * refused.
 */
static void shca_test_odp_bad_entry_refused(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_odp_t *t = shca_odp_setup(test, a, b);
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = {
			.type = SHCA_MPT_ODP,
			.pdn = to_shca_pd(b->pd)->pdn,
		},
	};
	u64 pbl = t->base;

	KUNIT_EXPECT_EQ(test, -EINVAL, shca_odp_cmd(t->sdev, &cmd));
	cmd = (struct shca_hw_cmd) {
		.opcode = SHCA_CMD_WRITE_MPT,
		.in.mpt = {
			.key = t->key,
			.access = SHCA_ACCESS_LOCAL_WRITE,
			.iova = t->base,
			.length = PAGE_SIZE,
			.npages = SHCA_ODP_PAGES,
			.page_shift = PAGE_SHIFT,
		},
	};
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_odp_cmd(t->sdev, &cmd));
	cmd.in.mpt.pbl = &pbl;
	KUNIT_EXPECT_EQ(test, -EINVAL, shca_odp_cmd(t->sdev, &cmd));
}

static struct kunit_case shca_odp_cases[] = {
	KUNIT_CASE_PARAM(shca_test_odp_fault_resume, shca_odp_op_gen_params),
	KUNIT_CASE_PARAM(shca_test_odp_fault_fails, shca_odp_op_gen_params),
	KUNIT_CASE(shca_test_odp_read_only_page_faults_for_write),
	KUNIT_CASE(shca_test_odp_refault_after_invalidate),
	KUNIT_CASE(shca_test_odp_responder_fault_holds_no_page),
	KUNIT_CASE(shca_test_odp_invalidate_waits_for_access),
	KUNIT_CASE_PARAM(shca_test_odp_bad_map_refused,
			 shca_odp_bad_gen_params),
	KUNIT_CASE(shca_test_odp_bad_entry_refused),
	{}
};

static struct kunit_suite shca_odp_suite = {
	.name = "shca_odp",
	.test_cases = shca_odp_cases,
};

kunit_test_suite(shca_odp_suite);
