// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the fabric's segments, through the real driver.  A device's port
 * reports its netdev's network namespace as its segment; two devices
 * whose ports report different segments do not reach each other (RC ends
 * in a transport retry error, UD is dropped and counted), and on one
 * segment they do.  The second segment is made by re-cabling a port with
 * SET_PORT, since a test cannot make a network namespace.
 */
#include <kunit/test.h>
#include <net/net_namespace.h>

#include "shca.h"
#include "shca_test.h"

/**
 * struct shca_fabric_case - one segment test
 * @type: the QP type
 * @apart: the two devices are on different segments
 */
struct shca_fabric_case {
	enum ib_qp_type type;
	bool apart;
};

static const struct shca_fabric_case shca_fabric_params[] = {
	{ .type = IB_QPT_RC, .apart = false },
	{ .type = IB_QPT_RC, .apart = true },
	{ .type = IB_QPT_UD, .apart = false },
	{ .type = IB_QPT_UD, .apart = true },
};

static void shca_fabric_desc(const struct shca_fabric_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s, %s",
		 c->type == IB_QPT_RC ? "RC" : "UD",
		 c->apart ? "two segments" : "one segment");
}

KUNIT_ARRAY_PARAM(shca_fabric, shca_fabric_params, shca_fabric_desc);

static u64 shca_fabric_segment(struct kunit *test, struct ib_device *dev)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_PORT, .port = 1 };

	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(to_shca_dev(dev), &cmd));
	return cmd.out.port.segment;
}

/* Cable @dev's port to @segment; the rest of what it reports stays. */
static void shca_fabric_cable(struct kunit *test, struct ib_device *dev,
			      u64 segment)
{
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_PORT, .port = 1 };

	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(to_shca_dev(dev), &cmd));
	cmd.in.port = cmd.out.port;
	cmd.in.port.segment = segment;
	cmd.opcode = SHCA_CMD_SET_PORT;
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(to_shca_dev(dev), &cmd));
	KUNIT_ASSERT_EQ(test, segment, shca_fabric_segment(test, dev));
}

static void shca_test_traffic_passes_only_within_a_segment(struct kunit *test)
{
	const struct shca_fabric_case *c = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_device *da, *db;
	u64 dropped, rx;
	int err;

	shca_test_devices(test, true, &da, &db);
	shca_test_tq_init(test, a, da, c->type, NULL, 16, 8);
	shca_test_tq_init(test, b, db, c->type, NULL, 16, 8);
	a->retry_cnt = 1;
	shca_test_connect(test, a, b);
	/* Both netdevs are in init_net: one segment, init_net's cookie. */
	KUNIT_EXPECT_EQ(test, init_net.net_cookie, shca_fabric_segment(test, da));
	KUNIT_EXPECT_EQ(test, init_net.net_cookie, shca_fabric_segment(test, db));
	if (c->apart)
		shca_fabric_cable(test, db, init_net.net_cookie + 1);

	dropped = shca_test_counter(da, SHCA_CNT_DROPPED);
	rx = shca_test_counter(db, SHCA_CNT_RX_BYTES);
	/* Room for the 40-byte header a UD receive starts with. */
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(b, 2, 0, 128));
	err = shca_test_post_send(a, b, IB_WR_SEND, 1, 0, 0, 64, 0);
	KUNIT_ASSERT_EQ(test, 0, err);
	if (!c->apart) {
		shca_test_expect(test, a, IB_WC_SUCCESS, 1);
		shca_test_expect(test, b, IB_WC_SUCCESS, 2);
		return;
	}
	if (c->type == IB_QPT_RC) {
		shca_test_expect(test, a, IB_WC_RETRY_EXC_ERR, 1);
		KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(a));
	} else {
		shca_test_expect(test, a, IB_WC_SUCCESS, 1);
		KUNIT_EXPECT_EQ(test, dropped + 1,
				shca_test_counter(da, SHCA_CNT_DROPPED));
	}
	/* The send has completed: had it arrived, b would have counted it. */
	KUNIT_EXPECT_EQ(test, rx, shca_test_counter(db, SHCA_CNT_RX_BYTES));
}

static struct kunit_case shca_fabric_cases[] = {
	KUNIT_CASE_PARAM(shca_test_traffic_passes_only_within_a_segment, shca_fabric_gen_params),
	{}
};

static struct kunit_suite shca_fabric_suite = {
	.name = "shca_fabric",
	.test_cases = shca_fabric_cases,
};

kunit_test_suite(shca_fabric_suite);
