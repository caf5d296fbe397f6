// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the hardware model's command interface, and the one place where
 * device status becomes an errno.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

static void shca_test_query_caps_returns_the_table(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_CAPS };
	const struct shca_hw_caps *caps = shca_hw_caps(hw);

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_MEMEQ(test, &cmd.out.caps, caps, sizeof(*caps));
	KUNIT_EXPECT_GT(test, caps->max_qp, 0U);
	KUNIT_EXPECT_GT(test, caps->gid_tbl_len, 0);
	KUNIT_EXPECT_EQ(test, caps->max_pkeys, 1);
}

/* Commands the device must refuse, and the status it refuses them with. */
struct shca_bad_cmd_case {
	const char *desc;
	struct shca_hw_cmd cmd;
	enum shca_hw_status status;
};

static const struct shca_bad_cmd_case shca_bad_cmd_cases[] = {
	{ "unknown opcode", { .opcode = SHCA_CMD_NUM_OPCODES },
	  SHCA_HW_BAD_OPCODE },
	{ "negative opcode", { .opcode = -1 }, SHCA_HW_BAD_OPCODE },
	{ "query port 0", { .opcode = SHCA_CMD_QUERY_PORT, .port = 0 },
	  SHCA_HW_BAD_PARAM },
	{ "query port 2", { .opcode = SHCA_CMD_QUERY_PORT, .port = 2 },
	  SHCA_HW_BAD_PARAM },
	{ "set port 0", { .opcode = SHCA_CMD_SET_PORT, .port = 0,
			  .in.port.mtu = 1024 }, SHCA_HW_BAD_PARAM },
	{ "set a GID on port 2",
	  { .opcode = SHCA_CMD_SET_GID, .port = 2, .index = 0 },
	  SHCA_HW_BAD_PARAM },
	{ "set port with tiny MTU",
	  { .opcode = SHCA_CMD_SET_PORT, .port = 1, .in.port.mtu = 255 },
	  SHCA_HW_BAD_PARAM },
	{ "GID index past the table",
	  { .opcode = SHCA_CMD_QUERY_GID, .port = 1, .index = 64 },
	  SHCA_HW_BAD_INDEX },
	{ "set GID past the table",
	  { .opcode = SHCA_CMD_SET_GID, .port = 1, .index = 1000 },
	  SHCA_HW_BAD_INDEX },
	{ "set GID of unknown type",
	  { .opcode = SHCA_CMD_SET_GID, .port = 1, .index = 0,
	    .in.gid = { .valid = true, .type = 7 } },
	  SHCA_HW_BAD_PARAM },
	{ "P_Key index past the table",
	  { .opcode = SHCA_CMD_QUERY_PKEY, .port = 1, .index = 1 },
	  SHCA_HW_BAD_INDEX },
	{ "P_Key on port 0", { .opcode = SHCA_CMD_QUERY_PKEY, .port = 0 },
	  SHCA_HW_BAD_PARAM },
	{ "dealloc PD 0", { .opcode = SHCA_CMD_DEALLOC_PD, .in.pdn = 0 },
	  SHCA_HW_BAD_INDEX },
	{ "dealloc PD past the table",
	  { .opcode = SHCA_CMD_DEALLOC_PD, .in.pdn = 1 << 20 },
	  SHCA_HW_BAD_INDEX },
	{ "EQ without a ring", { .opcode = SHCA_CMD_CREATE_EQ },
	  SHCA_HW_BAD_PARAM },
	{ "EQ past the vector table",
	  { .opcode = SHCA_CMD_CREATE_EQ, .index = SHCA_HW_MAX_EQS },
	  SHCA_HW_BAD_INDEX },
	{ "destroy an EQ past the vector table",
	  { .opcode = SHCA_CMD_DESTROY_EQ, .index = SHCA_HW_MAX_EQS },
	  SHCA_HW_BAD_INDEX },
	{ "CQ without a ring", { .opcode = SHCA_CMD_CREATE_CQ },
	  SHCA_HW_BAD_PARAM },
	{ "resize of a CQ without a ring", { .opcode = SHCA_CMD_RESIZE_CQ },
	  SHCA_HW_BAD_PARAM },
	{ "modify an unknown CQ", { .opcode = SHCA_CMD_MODIFY_CQ, .index = 9 },
	  SHCA_HW_BAD_INDEX },
	{ "query an unknown CQ", { .opcode = SHCA_CMD_QUERY_CQ, .index = 9 },
	  SHCA_HW_BAD_INDEX },
	{ "destroy an unknown CQ",
	  { .opcode = SHCA_CMD_DESTROY_CQ, .index = 9 }, SHCA_HW_BAD_INDEX },
	{ "SRQ without memory", { .opcode = SHCA_CMD_CREATE_SRQ },
	  SHCA_HW_BAD_PARAM },
	{ "modify an unknown SRQ",
	  { .opcode = SHCA_CMD_MODIFY_SRQ, .index = 9 }, SHCA_HW_BAD_INDEX },
	{ "destroy an unknown SRQ",
	  { .opcode = SHCA_CMD_DESTROY_SRQ, .index = 9 }, SHCA_HW_BAD_INDEX },
	{ "QP without queues", { .opcode = SHCA_CMD_CREATE_QP },
	  SHCA_HW_BAD_PARAM },
	{ "QP of unknown type",
	  { .opcode = SHCA_CMD_CREATE_QP, .in.qp.type = 9 },
	  SHCA_HW_BAD_PARAM },
	{ "modify an unknown QP",
	  { .opcode = SHCA_CMD_MODIFY_QP, .index = 77 }, SHCA_HW_BAD_INDEX },
	{ "modify to an unknown state",
	  { .opcode = SHCA_CMD_MODIFY_QP, .index = 77,
	    .mask = SHCA_QP_ATTR_STATE, .in.qp_attr.state = SHCA_QPS_NUM },
	  SHCA_HW_BAD_PARAM },
	{ "modify with unknown attribute bits",
	  { .opcode = SHCA_CMD_MODIFY_QP, .index = 77, .mask = BIT(20) },
	  SHCA_HW_BAD_PARAM },
	{ "modify with the first unknown attribute bit",
	  { .opcode = SHCA_CMD_MODIFY_QP, .index = 77,
	    .mask = SHCA_QP_ATTR_CUR_STATE << 1 }, SHCA_HW_BAD_PARAM },
	{ "modify from an unknown state",
	  { .opcode = SHCA_CMD_MODIFY_QP, .index = 77,
	    .mask = SHCA_QP_ATTR_CUR_STATE,
	    .in.qp_attr.cur_state = SHCA_QPS_NUM }, SHCA_HW_BAD_PARAM },
	{ "query an unknown QP", { .opcode = SHCA_CMD_QUERY_QP, .index = 77 },
	  SHCA_HW_BAD_INDEX },
	{ "destroy an unknown QP",
	  { .opcode = SHCA_CMD_DESTROY_QP, .index = 77 }, SHCA_HW_BAD_INDEX },
	{ "MPT of unknown type",
	  { .opcode = SHCA_CMD_ALLOC_MPT, .in.mpt_alloc = { .type = 5,
							   .pdn = 1 } },
	  SHCA_HW_BAD_PARAM },
	{ "MPT without a PD", { .opcode = SHCA_CMD_ALLOC_MPT },
	  SHCA_HW_BAD_PARAM },
	{ "write an unknown MPT entry",
	  { .opcode = SHCA_CMD_WRITE_MPT, .in.mpt.key = 0x500 },
	  SHCA_HW_BAD_INDEX },
	{ "write unknown access bits",
	  { .opcode = SHCA_CMD_WRITE_MPT, .in.mpt.access = BIT(9) },
	  SHCA_HW_BAD_PARAM },
	{ "free an unknown MPT entry",
	  { .opcode = SHCA_CMD_FREE_MPT, .in.mpt.key = 0x500 },
	  SHCA_HW_BAD_INDEX },
};

static void shca_bad_cmd_desc(const struct shca_bad_cmd_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_bad_cmd, shca_bad_cmd_cases, shca_bad_cmd_desc);

static void shca_test_bad_command_is_refused(struct kunit *test)
{
	const struct shca_bad_cmd_case *c = test->param_value;
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd cmd = c->cmd;
	struct shca_hw_cmd probe = { .opcode = SHCA_CMD_QUERY_GID, .port = 1 };

	KUNIT_EXPECT_EQ(test, c->status, shca_hw_exec(hw, &cmd));
	/* ...and harms nothing: the GID table is still empty. */
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &probe));
	KUNIT_EXPECT_FALSE(test, probe.out.gid.valid);
}

static void shca_test_gid_table_set_query_clear(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	u16 last = shca_hw_caps(hw)->gid_tbl_len - 1;
	struct shca_hw_cmd set = {
		.opcode = SHCA_CMD_SET_GID, .port = 1, .index = last,
		.in.gid = { .valid = true, .type = SHCA_HW_GID_ROCE_V2,
			    .gid = { 0xfe, 0x80, [15] = 0x42 } },
	};
	struct shca_hw_cmd get = {
		.opcode = SHCA_CMD_QUERY_GID, .port = 1, .index = last,
	};
	struct shca_hw_cmd clear = {
		.opcode = SHCA_CMD_SET_GID, .port = 1, .index = last,
	};

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &set));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &get));
	KUNIT_EXPECT_TRUE(test, get.out.gid.valid);
	KUNIT_EXPECT_EQ(test, SHCA_HW_GID_ROCE_V2, get.out.gid.type);
	KUNIT_EXPECT_MEMEQ(test, set.in.gid.gid, get.out.gid.gid,
			   SHCA_HW_GID_LEN);

	/* Its neighbour is untouched. */
	get.index = last - 1;
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &get));
	KUNIT_EXPECT_FALSE(test, get.out.gid.valid);

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &clear));
	get.index = last;
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &get));
	KUNIT_EXPECT_FALSE(test, get.out.gid.valid);
}

static void shca_test_port_reports_what_was_set(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd set = {
		.opcode = SHCA_CMD_SET_PORT, .port = 1,
		.in.port = { .link_up = true, .mtu = 9000,
			     .mac = { 2, 0, 0, 0, 0, 9 } },
	};
	struct shca_hw_cmd get = { .opcode = SHCA_CMD_QUERY_PORT, .port = 1 };

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &get));
	KUNIT_EXPECT_FALSE(test, get.out.port.link_up);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &set));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &get));
	KUNIT_EXPECT_TRUE(test, get.out.port.link_up);
	KUNIT_EXPECT_EQ(test, 9000U, get.out.port.mtu);
	KUNIT_EXPECT_MEMEQ(test, set.in.port.mac, get.out.port.mac, 6);
}

static void shca_test_pkey_table_holds_default(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_PKEY, .port = 1 };

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 0xffff, cmd.out.pkey);
}

static void shca_test_pd_numbers_are_unique_and_reused(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd a = { .opcode = SHCA_CMD_ALLOC_PD };
	struct shca_hw_cmd b = { .opcode = SHCA_CMD_ALLOC_PD };
	struct shca_hw_cmd c = { .opcode = SHCA_CMD_ALLOC_PD };
	struct shca_hw_cmd free = { .opcode = SHCA_CMD_DEALLOC_PD };

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &a));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &b));
	KUNIT_EXPECT_NE(test, 0U, a.out.pdn);
	KUNIT_EXPECT_NE(test, a.out.pdn, b.out.pdn);

	free.in.pdn = a.out.pdn;
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &free));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &c));
	KUNIT_EXPECT_EQ(test, a.out.pdn, c.out.pdn);

	free.in.pdn = b.out.pdn;
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &free));
	free.in.pdn = c.out.pdn;
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &free));
}

/*
 * Race windows cost nothing until a test watches one: taking a window's
 * handle patches the passes in, once per window however often it is
 * taken, and destroying the device lets its watched windows go.
 */
static void shca_test_windows_patched_in_only_while_watched(struct kunit *test)
{
	int base = static_key_count(&shca_hw_windows_watched.key);
	struct shca_hw *hw = shca_hw_create();

	KUNIT_ASSERT_NOT_NULL(test, hw);
	KUNIT_EXPECT_EQ(test, base,
			static_key_count(&shca_hw_windows_watched.key));
	shca_hw_window(hw, SHCA_WIN_DB_IDLE);
	KUNIT_EXPECT_EQ(test, base + 1,
			static_key_count(&shca_hw_windows_watched.key));
	KUNIT_EXPECT_TRUE(test,
			  static_branch_unlikely(&shca_hw_windows_watched));
	shca_hw_window(hw, SHCA_WIN_DB_IDLE);
	shca_hw_window(hw, SHCA_WIN_CQE_PUBLISH);
	KUNIT_EXPECT_EQ(test, base + 2,
			static_key_count(&shca_hw_windows_watched.key));
	shca_hw_destroy(hw);
	KUNIT_EXPECT_EQ(test, base,
			static_key_count(&shca_hw_windows_watched.key));
}

static void shca_test_injected_failure_fires_once(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd cmd = { .opcode = SHCA_CMD_QUERY_CAPS };
	struct shca_hw_cmd other = { .opcode = SHCA_CMD_QUERY_PORT, .port = 1 };

	KUNIT_EXPECT_EQ(test, -1, shca_hw_injected_cmd_failure(hw));
	KUNIT_ASSERT_EQ(test, 0,
			shca_hw_inject_cmd_failure(hw, SHCA_CMD_QUERY_CAPS));
	KUNIT_EXPECT_EQ(test, SHCA_CMD_QUERY_CAPS,
			shca_hw_injected_cmd_failure(hw));

	/* Another opcode does not consume it. */
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &other));
	KUNIT_EXPECT_EQ(test, SHCA_HW_INJECTED, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, -1, shca_hw_injected_cmd_failure(hw));
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 2ULL,
			shca_hw_cmd_count(hw, SHCA_CMD_QUERY_CAPS));

	/* Releasing commands and unknown opcodes cannot be armed. */
	KUNIT_EXPECT_EQ(test, -EINVAL,
			shca_hw_inject_cmd_failure(hw, SHCA_CMD_DEALLOC_PD));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			shca_hw_inject_cmd_failure(hw, SHCA_CMD_NUM_OPCODES));
	KUNIT_EXPECT_EQ(test, -1, shca_hw_injected_cmd_failure(hw));

	/* A pending injection can be cancelled. */
	KUNIT_ASSERT_EQ(test, 0,
			shca_hw_inject_cmd_failure(hw, SHCA_CMD_QUERY_CAPS));
	KUNIT_ASSERT_EQ(test, 0, shca_hw_inject_cmd_failure(hw, -1));
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
}

/* The opcodes that release a resource: none can be armed to fail. */
static const enum shca_hw_opcode shca_releasing_opcodes[] = {
	SHCA_CMD_DEALLOC_PD, SHCA_CMD_DESTROY_EQ, SHCA_CMD_DESTROY_CQ,
	SHCA_CMD_DESTROY_SRQ, SHCA_CMD_DESTROY_QP, SHCA_CMD_FREE_MPT,
	SHCA_CMD_DETACH_MCAST, SHCA_CMD_FREE_DM, SHCA_CMD_INVALIDATE_ODP,
	SHCA_CMD_DEALLOC_XRCD,
};

static bool shca_releases(int opcode)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(shca_releasing_opcodes); i++)
		if (shca_releasing_opcodes[i] == opcode)
			return true;
	return false;
}

/*
 * The command table has a row for every opcode: a name of its own, and
 * the releasing commands (only they) refuse an injected failure.
 */
static void shca_test_command_table_describes_every_opcode(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	const char *name;
	int op, other;

	for (op = 0; op < SHCA_CMD_NUM_OPCODES; op++) {
		name = shca_hw_opcode_name(op);
		KUNIT_EXPECT_STRNEQ_MSG(test, name, "UNKNOWN", "opcode %d", op);
		for (other = 0; other < op; other++)
			KUNIT_EXPECT_STRNEQ(test, name,
					    shca_hw_opcode_name(other));
		KUNIT_EXPECT_EQ_MSG(test, shca_releases(op) ? -EINVAL : 0,
				    shca_hw_inject_cmd_failure(hw, op),
				    "%s", name);
	}
	KUNIT_EXPECT_EQ(test, 0, shca_hw_inject_cmd_failure(hw, -1));
	KUNIT_EXPECT_STREQ(test, "DESTROY_QP",
			   shca_hw_opcode_name(SHCA_CMD_DESTROY_QP));
	KUNIT_EXPECT_STREQ(test, "DEALLOC_XRCD",
			   shca_hw_opcode_name(SHCA_CMD_DEALLOC_XRCD));
	KUNIT_EXPECT_STREQ(test, "UNKNOWN",
			   shca_hw_opcode_name(SHCA_CMD_NUM_OPCODES));
}

struct shca_errno_case {
	enum shca_hw_status status;
	int err;
};

static const struct shca_errno_case shca_errno_cases[] = {
	{ SHCA_HW_OK, 0 },
	{ SHCA_HW_BAD_OPCODE, -EOPNOTSUPP },
	{ SHCA_HW_BAD_PARAM, -EINVAL },
	{ SHCA_HW_BAD_INDEX, -EINVAL },
	{ SHCA_HW_NO_RESOURCES, -ENOMEM },
	{ SHCA_HW_BAD_STATE, -EINVAL },
	{ SHCA_HW_BUSY, -EBUSY },
	{ SHCA_HW_INJECTED, -EIO },
	{ SHCA_HW_EXISTS, -EEXIST },
	{ SHCA_HW_NOT_FOUND, -ENOENT },
	{ SHCA_HW_NUM_STATUS, -EIO },
	{ -1, -EIO },
};

static void shca_errno_desc(const struct shca_errno_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "status %d -> %d", c->status,
		 c->err);
}

KUNIT_ARRAY_PARAM(shca_errno, shca_errno_cases, shca_errno_desc);

static void shca_test_status_becomes_errno(struct kunit *test)
{
	const struct shca_errno_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, c->err, shca_status_to_errno(c->status));
}

/*
 * The device keeps its own count of what points at a CQ, and refuses to
 * destroy it while the count is not zero; its state machine refuses
 * transitions IBTA does not allow.
 */
static void shca_test_busy_cq_and_bad_transition_refused(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_test_hw_qp t;
	struct shca_hw_cmd cmd = {};
	u32 cqn, qpn;

	shca_test_hw_qp_new(test, hw, false, &t);
	cqn = t.cqn;
	qpn = t.qpn;
	KUNIT_EXPECT_GE(test, qpn, (u32)SHCA_HW_FIRST_QPN);

	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_QUERY_CQ, .index = cqn };
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	KUNIT_EXPECT_EQ(test, 2U, cmd.out.cq.assoc);
	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_CQ,
				    .index = cqn };
	KUNIT_EXPECT_EQ(test, SHCA_HW_BUSY, shca_hw_exec(hw, &cmd));

	/* RESET to RTS skips two states. */
	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_MODIFY_QP,
				    .index = qpn, .mask = SHCA_QP_ATTR_STATE,
				    .in.qp_attr.state = SHCA_QPS_RTS };
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_STATE, shca_hw_exec(hw, &cmd));
	cmd.in.qp_attr.state = SHCA_QPS_INIT;
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));

	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_QP,
				    .index = qpn };
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_CQ,
				    .index = cqn };
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
}

/* Run a copy of @tmpl in @c: the template can be run again. */
static enum shca_hw_status shca_hw_cmd_run(struct shca_hw *hw,
					   struct shca_hw_cmd *c,
					   const struct shca_hw_cmd *tmpl)
{
	*c = *tmpl;
	return shca_hw_exec(hw, c);
}

/* Run @opcode on the object @index, with no parameters. */
static enum shca_hw_status shca_hw_cmd_on(struct shca_hw *hw,
					  struct shca_hw_cmd *c,
					  enum shca_hw_opcode opcode, u32 index)
{
	*c = (struct shca_hw_cmd){ .opcode = opcode, .index = index };
	return shca_hw_exec(hw, c);
}

/*
 * A CQ names its completion vector, and the vector must be one the
 * device has; an EQ is created once, and cannot be destroyed while a CQ
 * has it for its vector.
 */
static void shca_test_eq_stays_while_a_cq_has_its_vector(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	u32 last = shca_hw_caps(hw)->max_eq - 1, cqn;
	struct shca_hw_cmd *eq, *cq, *c;

	/* Commands are large: off the stack. */
	eq = kunit_kcalloc(test, 3, sizeof(*eq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, eq);
	cq = eq + 1;
	c = eq + 2;
	eq->opcode = SHCA_CMD_CREATE_EQ;
	eq->index = last;
	eq->in.eq.log_depth = 4;
	eq->in.eq.ring = kunit_kcalloc(test, 16, sizeof(*eq->in.eq.ring),
				       GFP_KERNEL);
	cq->opcode = SHCA_CMD_CREATE_CQ;
	cq->in.cq.ring = kunit_kcalloc(test, 4, sizeof(*cq->in.cq.ring),
				       GFP_KERNEL);
	cq->in.cq.dbrec = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, eq->in.eq.ring && cq->in.cq.ring &&
			  cq->in.cq.dbrec);
	cq->in.cq.log_depth = 2;

	KUNIT_EXPECT_EQ(test, (u32)SHCA_HW_MAX_EQS, shca_hw_caps(hw)->max_eq);
	cq->in.cq.eqn = last + 1;
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_PARAM, shca_hw_cmd_run(hw, c, cq));

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_cmd_run(hw, c, eq));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_STATE, shca_hw_cmd_run(hw, c, eq));
	cq->in.cq.eqn = last;
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_cmd_run(hw, c, cq));
	cqn = c->out.id.num;
	KUNIT_EXPECT_EQ(test, SHCA_HW_BUSY,
			shca_hw_cmd_on(hw, c, SHCA_CMD_DESTROY_EQ, last));
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK,
			shca_hw_cmd_on(hw, c, SHCA_CMD_DESTROY_CQ, cqn));
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK,
			shca_hw_cmd_on(hw, c, SHCA_CMD_DESTROY_EQ, last));
	/* Destroyed, it can be created again. */
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_cmd_run(hw, c, eq));
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK,
			shca_hw_cmd_on(hw, c, SHCA_CMD_DESTROY_EQ, last));
}

/**
 * struct shca_user_wqe_case - a WQE that names memory by kernel address
 * @name: the case's name
 * @user: the QP's rings are a process's
 * @opcode: SHCA_WQE_REG_MR or SHCA_WQE_LOCAL_INV
 * @status: for a user QP, the completion: REG_MR is refused outright; a
 *	LOCAL_INV may name a memory window only, and this key names none
 */
struct shca_user_wqe_case {
	const char *name;
	bool user;
	u8 opcode;
	u8 status;
};

static const struct shca_user_wqe_case shca_user_wqe_cases[] = {
	{ "kernel_reg_mr",	false,	SHCA_WQE_REG_MR },
	{ "kernel_local_inv",	false,	SHCA_WQE_LOCAL_INV },
	{ "user_reg_mr",	true,	SHCA_WQE_REG_MR, SHCA_CQE_LOC_QP_OP_ERR },
	{ "user_local_inv",	true,	SHCA_WQE_LOCAL_INV,
	  SHCA_CQE_LOC_PROT_ERR },
};

static void shca_user_wqe_desc(const struct shca_user_wqe_case *c,
			       char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(shca_user_wqe, shca_user_wqe_cases, shca_user_wqe_desc);

/*
 * A process writes its QPs' WQEs itself, so the device refuses a user QP
 * the WQEs that carry kernel addresses (a REG_MR page list) before looking
 * at anything else in them, and lets its LOCAL_INV invalidate only memory
 * windows; a kernel QP's are executed.  One WQE on an RTS QP, through the doorbell,
 * and its CQE read off the ring.
 */
static void shca_test_user_qp_wqe_refused(struct kunit *test)
{
	const struct shca_user_wqe_case *c = test->param_value;
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd cmd = {};
	struct shca_hw_send_wqe *sq;
	struct shca_hw_qp_dbrec *db;
	struct shca_test_hw_qp t;
	struct shca_hw_cqe *ring;
	u32 cqn, qpn;
	u64 *pbl;
	int i;

	pbl = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pbl);
	shca_test_hw_qp_new(test, hw, c->user, &t);
	ring = t.ring;
	sq = t.sq;
	db = t.db;
	cqn = t.cqn;
	qpn = t.qpn;
	shca_test_hw_qp_rts(test, hw, qpn);

	sq[0].opcode = c->opcode;
	sq[0].flags = SHCA_WQE_F_SIGNALED;
	sq[0].imm_inv = 0x12345;
	sq[0].reg.pbl = (u64)(uintptr_t)pbl;
	sq[0].reg.npages = 1;
	sq[0].reg.page_shift = PAGE_SHIFT;
	sq[0].reg.length = PAGE_SIZE;
	sq[0].reg.key = 0x12345;
	/* The WQE is written before the index that names it. */
	smp_store_release(&db->sq_pi, 1);
	shca_hw_ring_sq(hw, qpn);

	/* The engine runs in a workqueue: wait for the CQE's owner byte. */
	for (i = 0; i < 5000 && !smp_load_acquire(&ring[0].owner); i++)
		usleep_range(1000, 2000);
	KUNIT_ASSERT_EQ_MSG(test, 1, ring[0].owner, "no CQE");
	KUNIT_EXPECT_EQ(test, qpn, ring[0].qpn);
	if (c->user)
		KUNIT_EXPECT_EQ(test, c->status, ring[0].status);
	else
		KUNIT_EXPECT_NE(test, SHCA_CQE_LOC_QP_OP_ERR, ring[0].status);

	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_QP,
				    .index = qpn };
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
	cmd = (struct shca_hw_cmd){ .opcode = SHCA_CMD_DESTROY_CQ,
				    .index = cqn };
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &cmd));
}

static struct kunit_case shca_hw_cmd_cases[] = {
	KUNIT_CASE(shca_test_query_caps_returns_the_table),
	KUNIT_CASE_PARAM(shca_test_bad_command_is_refused,
			 shca_bad_cmd_gen_params),
	KUNIT_CASE(shca_test_gid_table_set_query_clear),
	KUNIT_CASE(shca_test_port_reports_what_was_set),
	KUNIT_CASE(shca_test_pkey_table_holds_default),
	KUNIT_CASE(shca_test_pd_numbers_are_unique_and_reused),
	KUNIT_CASE(shca_test_injected_failure_fires_once),
	KUNIT_CASE(shca_test_windows_patched_in_only_while_watched),
	KUNIT_CASE(shca_test_command_table_describes_every_opcode),
	KUNIT_CASE(shca_test_busy_cq_and_bad_transition_refused),
	KUNIT_CASE(shca_test_eq_stays_while_a_cq_has_its_vector),
	KUNIT_CASE_PARAM(shca_test_user_qp_wqe_refused,
			 shca_user_wqe_gen_params),
	KUNIT_CASE_PARAM(shca_test_status_becomes_errno,
			 shca_errno_gen_params),
	{}
};

static struct kunit_suite shca_hw_cmd_suite = {
	.name = "shca_hw_cmd",
	.test_cases = shca_hw_cmd_cases,
};

kunit_test_suite(shca_hw_cmd_suite);
