// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: a destroy that waits out one object's access in flight (held
 * open in the mem_access window) holds up no other command of the device.
 */
#include <kunit/test.h>
#include <linux/scatterlist.h>

#include "shca.h"
#include "shca_test.h"

/**
 * struct shca_cmd_stall_obj - what the destroy names
 * @sdev: the device
 * @key: for FREE_MPT, the entry the destroy frees; else the QP's number
 * @mpt: that entry
 * @qp: for DESTROY_QP or a modify to RESET, the QP it names
 * @free_mpt: the destroy is FREE_MPT, not DESTROY_QP
 * @reset: the "destroy" is a modify of @qp to RESET, which fences it
 */
struct shca_cmd_stall_obj {
	struct shca_dev *sdev;
	u32 key;
	struct shca_test_mpt *mpt;
	struct ib_qp *qp;
	bool free_mpt;
	bool reset;
};

static int shca_cmd_stall_destroy(void *arg)
{
	struct shca_cmd_stall_obj *o = arg;
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = o->key,
	};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	if (o->free_mpt)
		return shca_cmd_exec(o->sdev, &cmd);
	if (o->reset)
		return ib_modify_qp(o->qp, &attr, IB_QP_STATE);
	return ib_destroy_qp(o->qp);
}

/*
 * Is the destroy's object out of the table yet (or the QP in RESET, its
 * fence under way)?  Asking is itself a command of the device: WRITE_MPT
 * with the entry's own translation, or QUERY_QP.
 */
static bool shca_cmd_stall_gone(void *arg)
{
	struct shca_cmd_stall_obj *o = arg;
	struct shca_hw_qp_query q;

	if (o->free_mpt)
		return shca_test_mpt_write(o->mpt) == -EINVAL;
	if (o->reset)
		return !shca_cmd_query_qp(o->sdev, o->key, &q) &&
		       q.attr.state == SHCA_QPS_RESET;
	return shca_cmd_query_qp(o->sdev, o->key, &q) == -EINVAL;
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
	struct shca_cmd_stall_obj *o;
	struct shca_hw_window *win;
	struct shca_test_stall *s;
	struct ib_device *dev;
	int err;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	shca_test_tq_init(test, a, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);

	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	o->sdev = to_shca_dev(dev);
	o->free_mpt = p->free_mpt;
	o->reset = p->reset;
	o->mpt = shca_test_pbl_mpt(test, b, SHCA_TEST_KEY_OFF);
	o->key = p->free_mpt ? o->mpt->key : b->qp->qp_num;
	o->qp = b->qp;
	s = shca_test_stall_new(test, dev, shca_cmd_stall_destroy,
				shca_cmd_stall_gone, o);
	win = shca_test_window_arm(test, dev, SHCA_WIN_MEM_ACCESS,
				   b->qp->qp_num);

	memset(a->buf, 0x7e, PAGE_SIZE);
	err = shca_test_rdma_write(a, 1, o->mpt->key, o->mpt->pbl[0], PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_TEST_WAIT));

	if (p->free_mpt)
		o->mpt->freed = true;
	else if (!p->reset)
		b->qp = NULL;
	shca_test_stall_run(s);

	/* The access is still held; the bystander must finish anyway. */
	shca_test_stall_expect_alone(test, s);
	KUNIT_EXPECT_EQ(test, SHCA_HW_WIN_HELD, shca_hw_window_state(win));

	shca_hw_window_release(win);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&s->cmd_done,
							    SHCA_TEST_WAIT));
	KUNIT_EXPECT_EQ(test, 0, s->cmd_ret);
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
