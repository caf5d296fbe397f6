// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the route a QP's turn caches (shca_route_cache), through the
 * real driver.  A QP's messages after its first to a destination take no
 * fabric lookup (route_lookups stays, but for route changes seen), and
 * the QP within the device is still looked up by QPN.  Every change a
 * route depends on, at either end (the GID table, the port's link, its
 * cabling), is seen by the very next message, and undoing it is too.  A
 * change made while a turn is held between finding its source and
 * finding its destination (the "route" window) is seen by that message.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_ROUTE_WAIT		(5 * HZ)
#define SHCA_ROUTE_MSG		64
#define SHCA_ROUTE_WARM		8

/**
 * enum shca_route_change - what a case changes between two messages
 * @SHCA_ROUTE_GIDS: every GID table entry is cleared
 * @SHCA_ROUTE_LINK: the port's link goes down
 * @SHCA_ROUTE_CABLE: the port is cabled to another segment
 */
enum shca_route_change {
	SHCA_ROUTE_GIDS,
	SHCA_ROUTE_LINK,
	SHCA_ROUTE_CABLE,
};

/**
 * struct shca_route_case - one change, at one end
 * @change: what changes
 * @at_source: at the sending device; else at the receiving one
 */
struct shca_route_case {
	enum shca_route_change change;
	bool at_source;
};

static const struct shca_route_case shca_route_params[] = {
	{ SHCA_ROUTE_GIDS, false },
	{ SHCA_ROUTE_LINK, false },
	{ SHCA_ROUTE_CABLE, false },
	{ SHCA_ROUTE_GIDS, true },
	{ SHCA_ROUTE_LINK, true },
	{ SHCA_ROUTE_CABLE, true },
};

static void shca_route_desc(const struct shca_route_case *c, char *desc)
{
	static const char * const what[] = {
		[SHCA_ROUTE_GIDS] = "GIDs cleared",
		[SHCA_ROUTE_LINK] = "link down",
		[SHCA_ROUTE_CABLE] = "recabled",
	};

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s at the %s", what[c->change],
		 c->at_source ? "source" : "destination");
}

KUNIT_ARRAY_PARAM(shca_route, shca_route_params, shca_route_desc);

/**
 * struct shca_route_pair - a UD sender and its receiver
 * @a: the sender
 * @b: the receiver
 * @next_recv: the wr_id of @b's oldest receive still posted
 * @next_id: the next wr_id to use
 */
struct shca_route_pair {
	struct shca_tq *a;
	struct shca_tq *b;
	u64 next_recv;
	u64 next_id;
};

/**
 * struct shca_route_saved - a device's port and GID table, to put back
 * @dev: the device
 * @port: its port, as it was
 * @gids: its GID table, as it was
 * @n: entries in @gids
 */
struct shca_route_saved {
	struct ib_device *dev;
	struct shca_hw_port_attr port;
	struct shca_hw_gid_entry *gids;
	u32 n;
};

static void shca_route_pair_new(struct kunit *test, struct shca_route_pair *p)
{
	struct ib_device *da, *db;

	p->a = shca_test_tq_new(test);
	p->b = shca_test_tq_new(test);
	shca_test_devices(test, true, &da, &db);
	shca_test_tq_init(test, p->a, da, IB_QPT_UD, NULL, 32, 16);
	shca_test_tq_init(test, p->b, db, IB_QPT_UD, NULL, 32, 16);
	shca_test_connect(test, p->a, p->b);
	p->next_recv = 1000;
	p->next_id = 1000;
}

/*
 * Post a receive at @to, then a send from @p->a: did it arrive?
 * @next_recv is the wr_id of @to's oldest receive still posted.
 */
static bool shca_route_send_to(struct kunit *test, struct shca_route_pair *p,
			       struct shca_tq *to, u64 *next_recv)
{
	u64 id = p->next_id++, dropped, rx;
	struct ib_wc wc;

	dropped = shca_test_counter(p->a->dev, SHCA_CNT_DROPPED);
	rx = shca_test_counter(to->dev, SHCA_CNT_RX_BYTES);
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(to, id, 0, 128));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(p->a, to, IB_WR_SEND, id,
						     0, 0, SHCA_ROUTE_MSG, 0));
	shca_test_expect(test, p->a, IB_WC_SUCCESS, id);
	if (shca_test_counter(p->a->dev, SHCA_CNT_DROPPED) == dropped + 1) {
		/* Dropped at the sender: nothing reached the receiver. */
		KUNIT_EXPECT_EQ(test, rx,
				shca_test_counter(to->dev, SHCA_CNT_RX_BYTES));
		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(to->cq, 1, &wc));
		return false;
	}
	/* The send completes after delivery: the receive is done. */
	KUNIT_EXPECT_EQ(test, 1, ib_poll_cq(to->cq, 1, &wc));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc.status);
	KUNIT_EXPECT_EQ(test, *next_recv, wc.wr_id);
	KUNIT_EXPECT_EQ(test, to->qp->qp_num, wc.qp->qp_num);
	(*next_recv)++;
	return true;
}

static bool shca_route_send(struct kunit *test, struct shca_route_pair *p)
{
	return shca_route_send_to(test, p, p->b, &p->next_recv);
}

static void shca_route_save(struct kunit *test, struct ib_device *dev,
			    struct shca_route_saved *s)
{
	struct shca_dev *sdev = to_shca_dev(dev);
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_PORT, .port = 1 };
	u32 i;

	s->dev = dev;
	s->n = shca_hw_caps(sdev->hw)->gid_tbl_len;
	s->gids = kunit_kcalloc(test, s->n, sizeof(*s->gids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->gids);
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(sdev, &cmd));
	s->port = cmd.out.port;
	for (i = 0; i < s->n; i++) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.opcode = SHCA_CMD_QUERY_GID;
		cmd.port = 1;
		cmd.index = i;
		KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(sdev, &cmd));
		s->gids[i] = cmd.out.gid;
	}
}

static void shca_route_set_port(struct kunit *test,
				const struct shca_route_saved *s,
				const struct shca_hw_port_attr *port)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_SET_PORT,
		.port = 1,
		.in.port = *port,
	};

	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(to_shca_dev(s->dev), &cmd));
}

/* Clear every valid GID table entry, or put them back. */
static void shca_route_set_gids(struct kunit *test,
				const struct shca_route_saved *s, bool clear)
{
	struct shca_hw_cmd cmd;
	u32 i, valid = 0;

	for (i = 0; i < s->n; i++) {
		if (!s->gids[i].valid)
			continue;
		valid++;
		memset(&cmd, 0, sizeof(cmd));
		cmd.opcode = SHCA_CMD_SET_GID;
		cmd.port = 1;
		cmd.index = i;
		if (!clear)
			cmd.in.gid = s->gids[i];
		KUNIT_ASSERT_EQ(test, 0,
				shca_cmd_exec(to_shca_dev(s->dev), &cmd));
	}
	KUNIT_ASSERT_GT(test, valid, 0);
}

static void shca_route_apply(struct kunit *test, enum shca_route_change what,
			     const struct shca_route_saved *s, bool undo)
{
	struct shca_hw_port_attr port = s->port;

	switch (what) {
	case SHCA_ROUTE_GIDS:
		shca_route_set_gids(test, s, !undo);
		return;
	case SHCA_ROUTE_LINK:
		port.link_up = undo;
		break;
	case SHCA_ROUTE_CABLE:
		if (!undo)
			port.segment++;
		break;
	}
	shca_route_set_port(test, s, &port);
}

/*
 * Warm a route, then make each change a route depends on between two
 * messages: the next message is dropped, and after the change is undone
 * the next one arrives.  While nothing changes, messages take the cached
 * route: no more lookups than route changes seen, where looking up every
 * message would take one each.
 */
static void shca_test_route_follows_change(struct kunit *test)
{
	const struct shca_route_case *c = test->param_value;
	struct shca_route_pair p;
	struct shca_route_saved s;
	u64 lookups;
	u32 gen;
	int i;

	shca_route_pair_new(test, &p);
	shca_route_save(test, c->at_source ? p.a->dev : p.b->dev, &s);
	KUNIT_ASSERT_TRUE(test, s.port.link_up);

	KUNIT_ASSERT_TRUE(test, shca_route_send(test, &p));
	lookups = shca_test_counter(p.a->dev, SHCA_CNT_ROUTE_LOOKUPS);
	gen = shca_hw_fabric_generation();
	for (i = 0; i < SHCA_ROUTE_WARM; i++)
		KUNIT_ASSERT_TRUE(test, shca_route_send(test, &p));
	KUNIT_EXPECT_LE(test,
			shca_test_counter(p.a->dev, SHCA_CNT_ROUTE_LOOKUPS) -
			lookups, (u64)(shca_hw_fabric_generation() - gen));

	shca_route_apply(test, c->change, &s, false);
	KUNIT_EXPECT_FALSE(test, shca_route_send(test, &p));
	KUNIT_EXPECT_FALSE(test, shca_route_send(test, &p));
	shca_route_apply(test, c->change, &s, true);
	KUNIT_EXPECT_TRUE(test, shca_route_send(test, &p));
	KUNIT_EXPECT_TRUE(test, shca_route_send(test, &p));
}

/*
 * One cached route, two QPs behind its GID: every message still reaches
 * the QP its WQE names, and the second QP costs no lookup of its device.
 */
static void shca_test_route_qpn_looked_up_each_time(struct kunit *test)
{
	struct shca_tq *c = shca_test_tq_new(test);
	struct shca_route_pair p;
	u64 lookups, c_next;
	u32 gen;
	int i;

	shca_route_pair_new(test, &p);
	shca_test_tq_init(test, c, p.b->dev, IB_QPT_UD, NULL, 32, 16);
	KUNIT_ASSERT_EQ(test, 0, shca_test_to_rts(c, p.a));

	KUNIT_ASSERT_TRUE(test, shca_route_send(test, &p));
	lookups = shca_test_counter(p.a->dev, SHCA_CNT_ROUTE_LOOKUPS);
	gen = shca_hw_fabric_generation();
	/* One wr_id sequence: c's receives, in order, are every other. */
	for (i = 0; i < SHCA_ROUTE_WARM; i++) {
		if (i & 1) {
			c_next = p.next_id;
			KUNIT_EXPECT_TRUE(test, shca_route_send_to(test, &p, c,
								   &c_next));
		} else {
			p.next_recv = p.next_id;
			KUNIT_EXPECT_TRUE(test, shca_route_send(test, &p));
		}
	}
	KUNIT_EXPECT_LE(test,
			shca_test_counter(p.a->dev, SHCA_CNT_ROUTE_LOOKUPS) -
			lookups, (u64)(shca_hw_fabric_generation() - gen));
}

/*
 * Hold a turn in the route window (it has its source, from the cached
 * route, and has not looked up the destination's device), change the
 * destination's GID table, let it go: the message sees the change.  With
 * @gone the GIDs are cleared in the window after a good route was cached,
 * and the message is dropped; without, a route to nowhere was cached and
 * the GIDs come back in the window, and the message arrives.
 */
static void shca_test_route_change_in_window(struct kunit *test)
{
	const bool *gone = test->param_value;
	struct shca_route_pair p;
	struct shca_route_saved s;
	struct shca_hw_window *win;
	u64 id;

	shca_route_pair_new(test, &p);
	shca_route_save(test, p.b->dev, &s);
	if (!*gone)
		shca_route_set_gids(test, &s, true);
	KUNIT_ASSERT_EQ(test, *gone, shca_route_send(test, &p));
	/* Cached: the same again. */
	KUNIT_ASSERT_EQ(test, *gone, shca_route_send(test, &p));

	win = shca_test_window_arm(test, p.a->dev, SHCA_WIN_ROUTE,
				   p.a->qp->qp_num);
	id = p.next_id++;
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_recv(p.b, id, 0, 128));
	KUNIT_ASSERT_EQ(test, 0, shca_test_post_send(p.a, p.b, IB_WR_SEND, id,
						     0, 0, SHCA_ROUTE_MSG, 0));
	KUNIT_ASSERT_TRUE(test, shca_hw_window_wait_held(win, SHCA_ROUTE_WAIT));
	shca_route_set_gids(test, &s, *gone);
	shca_hw_window_release(win);
	shca_test_expect(test, p.a, IB_WC_SUCCESS, id);
	KUNIT_EXPECT_EQ(test, 0, shca_hw_window_timeouts(win));
	if (*gone) {
		struct ib_wc wc;

		KUNIT_EXPECT_EQ(test, 0, ib_poll_cq(p.b->cq, 1, &wc));
		shca_route_set_gids(test, &s, false);
	} else {
		/* Every receive posted so far, the first two unused. */
		shca_test_expect(test, p.b, IB_WC_SUCCESS, p.next_recv);
		p.next_recv++;
	}
	KUNIT_EXPECT_TRUE(test, shca_route_send(test, &p));
}

static const bool shca_route_gone_params[] = { true, false };

static void shca_route_gone_desc(const bool *gone, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *gone ? "GIDs cleared in the window" :
			 "GIDs back in the window");
}

KUNIT_ARRAY_PARAM(shca_route_gone, shca_route_gone_params,
		  shca_route_gone_desc);

static struct kunit_case shca_route_cache_cases[] = {
	KUNIT_CASE_PARAM(shca_test_route_follows_change, shca_route_gen_params),
	KUNIT_CASE(shca_test_route_qpn_looked_up_each_time),
	KUNIT_CASE_PARAM(shca_test_route_change_in_window,
			 shca_route_gone_gen_params),
	{}
};

static struct kunit_suite shca_route_cache_suite = {
	.name = "shca_route_cache",
	.test_cases = shca_route_cache_cases,
};

kunit_test_suite(shca_route_cache_suite);
