// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: a destroy that waits out one object's access in flight (held
 * open in the mem_access window) holds up no other command of the device.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>

#include "shca.h"
#include "shca_test.h"

/**
 * struct shca_cmd_stall_async - a destroy and a bystander, each on a worker
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
struct shca_cmd_stall_async {
	struct shca_dev *sdev;
	struct ib_device *dev;
	u32 key;
	struct shca_test_mpt *mpt;
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

static void shca_cmd_stall_destroy_fn(struct work_struct *work)
{
	struct shca_cmd_stall_async *s = container_of(work, struct shca_cmd_stall_async,
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
static bool shca_cmd_stall_gone(struct shca_cmd_stall_async *s)
{
	struct shca_hw_qp_query q;

	if (s->free_mpt)
		return shca_test_mpt_write(s->mpt) == -EINVAL;
	if (s->reset)
		return !shca_cmd_query_qp(s->sdev, s->key, &q) &&
		       q.attr.state == SHCA_QPS_RESET;
	return shca_cmd_query_qp(s->sdev, s->key, &q) == -EINVAL;
}

static void shca_cmd_stall_other_fn(struct work_struct *work)
{
	struct shca_cmd_stall_async *s = container_of(work, struct shca_cmd_stall_async,
						      other);
	struct ib_cq_init_attr attr = { .cqe = 16 };
	unsigned long end = jiffies + 2 * SHCA_TEST_WAIT;
	struct ib_cq *cq;

	s->other_ret = -ETIMEDOUT;
	while (!shca_cmd_stall_gone(s)) {
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

static void shca_cmd_stall_wait(void *arg)
{
	struct shca_cmd_stall_async *s = arg;

	flush_work(&s->other);
	flush_work(&s->destroy);
}

struct shca_cmd_stall_param {
	const char *name;
	bool free_mpt;
	bool reset;
};

static const struct shca_cmd_stall_param shca_cmd_stall_params[] = {
	{ "free_mpt", true, false },
	{ "destroy_qp", false, false },
	{ "reset_qp", false, true },
};

static void shca_cmd_stall_desc(const struct shca_cmd_stall_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_cmd_stall, shca_cmd_stall_params, shca_cmd_stall_desc);

static void shca_cmd_stall_window_reset(void *win)
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
	const struct shca_cmd_stall_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_hw_window *win;
	struct shca_cmd_stall_async *s;
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
	s->mpt = shca_test_pbl_mpt(test, b, SHCA_TEST_KEY_OFF);
	s->key = p->free_mpt ? s->mpt->key : b->qp->qp_num;
	s->qp = b->qp;
	INIT_WORK(&s->destroy, shca_cmd_stall_destroy_fn);
	INIT_WORK(&s->other, shca_cmd_stall_other_fn);
	init_completion(&s->destroy_done);
	init_completion(&s->other_done);
	/* Cleanup runs backwards: the window opens before the workers end. */
	err = kunit_add_action_or_reset(test, shca_cmd_stall_wait, s);
	KUNIT_ASSERT_EQ(test, 0, err);

	win = shca_hw_window(hw, SHCA_WIN_MEM_ACCESS);
	err = kunit_add_action_or_reset(test, shca_cmd_stall_window_reset, win);
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_hw_window_set_qpn(win, b->qp->qp_num);
	shca_hw_window_arm(win);

	memset(a->buf, 0x7e, PAGE_SIZE);
	err = shca_test_rdma_write(a, 1, s->mpt->key, s->mpt->pbl[0], PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_TEST_WAIT));

	if (p->free_mpt)
		s->mpt->freed = true;
	else if (!p->reset)
		b->qp = NULL;
	queue_work(system_unbound_wq, &s->destroy);
	queue_work(system_unbound_wq, &s->other);

	/* The access is still held; the bystander must finish anyway. */
	if (!wait_for_completion_timeout(&s->other_done, 3 * SHCA_TEST_WAIT))
		KUNIT_FAIL(test, "the device's other commands waited");
	KUNIT_EXPECT_EQ(test, SHCA_HW_WIN_HELD, shca_hw_window_state(win));
	KUNIT_EXPECT_TRUE(test, s->destroy_pending);
	KUNIT_EXPECT_EQ(test, 0, s->other_ret);

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&s->destroy_done,
							    SHCA_TEST_WAIT));
	KUNIT_EXPECT_EQ(test, 0, s->destroy_ret);
	/* The access that was in flight finished before the destroy did. */
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_MEMEQ(test, a->buf, b->buf + SHCA_TEST_KEY_OFF, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
}

static struct kunit_case shca_cmd_stall_cases[] = {
	KUNIT_CASE_PARAM(shca_test_destroy_waits_alone, shca_cmd_stall_gen_params),
	{}
};

static struct kunit_suite shca_cmd_stall_suite = {
	.name = "shca_cmd_stall",
	.test_cases = shca_cmd_stall_cases,
};

kunit_test_suite(shca_cmd_stall_suite);
