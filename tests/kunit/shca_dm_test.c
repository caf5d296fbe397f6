// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: device memory (shca_dm).  The model's allocator (bounds,
 * exhaustion, alignment, bad addresses), FREE_DM refused while a DM MPT
 * entry maps the range, DM entries refused past the allocation's end, and
 * DM MRs as target and source of RDMA WRITE, READ and atomics, byte-exact,
 * with accesses past the MR's end refused and the memory untouched.
 */
#include <kunit/test.h>

#include "shca.h"
#include "shca_test.h"

/* A model of its own: ALLOC_DM with @length and @log_align. */
static enum shca_hw_status shca_dm_alloc(struct shca_hw *hw, u64 length,
					 u32 log_align, u64 *addr)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_ALLOC_DM,
		.in.dm = { .length = length, .log_align = log_align },
	};
	enum shca_hw_status status = shca_hw_exec(hw, &cmd);

	if (status == SHCA_HW_OK)
		*addr = cmd.out.dm_addr;
	return status;
}

static enum shca_hw_status shca_dm_free(struct shca_hw *hw, u64 addr)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_DM,
		.in.dm_addr = addr,
	};

	return shca_hw_exec(hw, &cmd);
}

/* A DM MPT entry in @hw's PD @pdn, mapping @len bytes at @off of @addr. */
static enum shca_hw_status shca_dm_mpt(struct kunit *test, struct shca_hw *hw,
				       u32 pdn, u64 addr, u64 off, u64 len,
				       u32 *key)
{
	struct shca_hw_cmd alloc = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = { .type = SHCA_MPT_DM, .pdn = pdn },
	};
	struct shca_hw_cmd write = { .opcode = SHCA_CMD_WRITE_MPT };

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &alloc));
	*key = alloc.out.num;
	write.in.mpt = (struct shca_hw_mpt_write) {
		.key = *key,
		.access = SHCA_ACCESS_LOCAL_WRITE,
		.length = len,
		.dm_addr = addr,
		.dm_offset = off,
	};
	return shca_hw_exec(hw, &write);
}

static void shca_dm_free_mpt(struct shca_hw *hw, u32 key)
{
	struct shca_hw_cmd cmd = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = key,
	};

	shca_hw_exec(hw, &cmd);
}

struct shca_dm_bad {
	const char *name;
	u64 length;
	u32 log_align;
};

static const struct shca_dm_bad shca_dm_bads[] = {
	{ "length_0", 0, 0 },
	{ "past_the_memory", (256 << 10) + 1, 0 },
	{ "u64_max", U64_MAX, 0 },
	{ "alignment_past_the_memory", 4096, 19 },
};

static void shca_dm_bad_desc(const struct shca_dm_bad *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_dm_bad, shca_dm_bads, shca_dm_bad_desc);

/* Refused with BAD_PARAM, and the whole memory is still free after. */
static void shca_test_dm_alloc_bounds(struct kunit *test)
{
	const struct shca_dm_bad *p = test->param_value;
	struct shca_hw *hw = shca_test_hw(test);
	const struct shca_hw_caps *caps = shca_hw_caps(hw);
	u64 addr = 1;

	KUNIT_ASSERT_EQ(test, 256ULL << 10, caps->max_dm_size);
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_PARAM,
			shca_dm_alloc(hw, p->length, p->log_align, &addr));
	KUNIT_EXPECT_EQ(test, 1, addr);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
			shca_dm_alloc(hw, caps->max_dm_size, 0, &addr));
	KUNIT_EXPECT_EQ(test, 0, addr);
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_dm_free(hw, addr));
}

/*
 * One unit at a time until the memory runs out: every unit once, then
 * NO_RESOURCES; a freed unit is the next one handed out, zeroed.
 */
static void shca_test_dm_exhaustion(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	const struct shca_hw_caps *caps = shca_hw_caps(hw);
	u64 unit = 1ULL << caps->dm_log_granule;
	u32 n = caps->max_dm_size / unit, i;
	u64 addr, again;
	u8 *p;

	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 1, 0, &addr));
		KUNIT_EXPECT_EQ(test, (u64)i * unit, addr);
	}
	KUNIT_EXPECT_EQ(test, SHCA_HW_NO_RESOURCES,
			shca_dm_alloc(hw, 1, 0, &addr));
	p = shca_hw_dm_ptr(hw, 5 * unit, unit);
	KUNIT_ASSERT_NOT_NULL(test, p);
	memset(p, 0xa5, unit);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_free(hw, 5 * unit));
	KUNIT_EXPECT_EQ(test, SHCA_HW_NO_RESOURCES,
			shca_dm_alloc(hw, unit + 1, 0, &again));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, unit, 0, &again));
	KUNIT_EXPECT_EQ(test, 5 * unit, again);
	KUNIT_EXPECT_NULL(test, memchr_inv(p, 0, unit));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_dm_free(hw, i * unit));
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK,
			shca_dm_alloc(hw, caps->max_dm_size, 0, &addr));
}

/* An allocation starts on the alignment asked for, past a smaller one. */
static void shca_test_dm_alignment(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	u64 first, aligned, small;

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 100, 6, &first));
	KUNIT_EXPECT_EQ(test, 0, first);
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 64, 16, &aligned));
	KUNIT_EXPECT_EQ(test, 1ULL << 16, aligned);
	/* The hole before it is still there for an unaligned one. */
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 64, 0, &small));
	KUNIT_EXPECT_EQ(test, 1ULL << PAGE_SHIFT, small);
}

/* FREE_DM of what is not an allocation's start: BAD_INDEX, nothing freed. */
static void shca_test_dm_free_bad_address(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	u64 addr, other;

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
			shca_dm_alloc(hw, 2 * PAGE_SIZE, 0, &addr));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_INDEX, shca_dm_free(hw, addr + 4));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_INDEX,
			shca_dm_free(hw, addr + PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_INDEX,
			shca_dm_free(hw, 10 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_INDEX, shca_dm_free(hw, 256 << 10));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_INDEX, shca_dm_free(hw, U64_MAX));
	/* Still allocated: the next one comes after it. */
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 1, 0, &other));
	KUNIT_EXPECT_EQ(test, addr + 2 * PAGE_SIZE, other);
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_dm_free(hw, addr));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_INDEX, shca_dm_free(hw, addr));
}

/* FREE_DM is refused while an MPT entry maps the range, and works after. */
static void shca_test_dm_free_with_mr_busy(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd pd = { .opcode = SHCA_CMD_ALLOC_PD };
	u32 pdn = shca_test_hw_create(test, hw, &pd), key, key2;
	u64 addr;

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 256, 0, &addr));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
			shca_dm_mpt(test, hw, pdn, addr, 0, 128, &key));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
			shca_dm_mpt(test, hw, pdn, addr, 128, 128, &key2));
	KUNIT_EXPECT_EQ(test, SHCA_HW_BUSY, shca_dm_free(hw, addr));
	shca_dm_free_mpt(hw, key);
	KUNIT_EXPECT_EQ(test, SHCA_HW_BUSY, shca_dm_free(hw, addr));
	shca_dm_free_mpt(hw, key2);
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_dm_free(hw, addr));
}

struct shca_dm_bad_mpt {
	const char *name;
	u64 addr_delta;	/* added to the allocation's address */
	u64 offset;
	u64 length;
	u64 iova;
	enum shca_hw_status status;
};

static const struct shca_dm_bad_mpt shca_dm_bad_mpts[] = {
	{ "offset_past_the_end", 0, 101, 0, 0, SHCA_HW_BAD_PARAM },
	{ "length_past_the_end", 0, 0, 101, 0, SHCA_HW_BAD_PARAM },
	{ "range_past_the_end", 0, 4, 100, 0, SHCA_HW_BAD_PARAM },
	{ "length_wraps", 0, 8, U64_MAX - 4, 0, SHCA_HW_BAD_PARAM },
	{ "not_zero_based", 0, 0, 64, 4096, SHCA_HW_BAD_PARAM },
	{ "not_an_allocation", PAGE_SIZE, 0, 64, 0, SHCA_HW_BAD_INDEX },
	{ "inside_an_allocation", 4, 0, 64, 0, SHCA_HW_BAD_INDEX },
	{ "past_the_memory", 256 << 10, 0, 64, 0, SHCA_HW_BAD_INDEX },
};

static void shca_dm_bad_mpt_desc(const struct shca_dm_bad_mpt *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_dm_bad_mpt, shca_dm_bad_mpts, shca_dm_bad_mpt_desc);

/*
 * A DM entry outside its 100-byte allocation is refused with the right
 * status and takes no hold on it: FREE_DM works at once.
 */
static void shca_test_dm_mpt_refused(struct kunit *test)
{
	const struct shca_dm_bad_mpt *p = test->param_value;
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd pd = { .opcode = SHCA_CMD_ALLOC_PD };
	u32 pdn = shca_test_hw_create(test, hw, &pd), key;
	struct shca_hw_cmd write = { .opcode = SHCA_CMD_WRITE_MPT };
	struct shca_hw_cmd alloc = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = { .type = SHCA_MPT_DM, .pdn = pdn },
	};
	u64 addr;

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 100, 0, &addr));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_hw_exec(hw, &alloc));
	key = alloc.out.num;
	write.in.mpt = (struct shca_hw_mpt_write) {
		.key = key,
		.access = SHCA_ACCESS_LOCAL_WRITE,
		.iova = p->iova,
		.length = p->length,
		.dm_addr = addr + p->addr_delta,
		.dm_offset = p->offset,
	};
	KUNIT_EXPECT_EQ(test, p->status, shca_hw_exec(hw, &write));
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_dm_free(hw, addr));
	shca_dm_free_mpt(hw, key);
}

/* A DM entry maps one range for its life: a second WRITE_MPT is refused. */
static void shca_test_dm_mpt_written_once(struct kunit *test)
{
	struct shca_hw *hw = shca_test_hw(test);
	struct shca_hw_cmd pd = { .opcode = SHCA_CMD_ALLOC_PD };
	u32 pdn = shca_test_hw_create(test, hw, &pd), key;
	struct shca_hw_cmd write = { .opcode = SHCA_CMD_WRITE_MPT };
	u64 addr;

	KUNIT_ASSERT_EQ(test, SHCA_HW_OK, shca_dm_alloc(hw, 100, 0, &addr));
	KUNIT_ASSERT_EQ(test, SHCA_HW_OK,
			shca_dm_mpt(test, hw, pdn, addr, 0, 64, &key));
	write.in.mpt = (struct shca_hw_mpt_write) {
		.key = key, .length = 64, .dm_addr = addr,
	};
	KUNIT_EXPECT_EQ(test, SHCA_HW_BAD_STATE, shca_hw_exec(hw, &write));
	shca_dm_free_mpt(hw, key);
	/* The refused write took no second hold. */
	KUNIT_EXPECT_EQ(test, SHCA_HW_OK, shca_dm_free(hw, addr));
}

/* --- DM MRs in traffic, through the driver's commands ------------------ */

#define SHCA_DM_LEN	512
/* The MR maps the allocation from here: its address 0. */
#define SHCA_DM_OFF	64

/**
 * struct shca_test_dm - a DM allocation and a DM MR on it, on one end
 * @sdev: the end's device
 * @addr: the allocation's device memory address
 * @key: the MR's key, zero-based at @addr + SHCA_DM_OFF
 * @mem: the MR's first byte, as the test reads the device memory
 */
struct shca_test_dm {
	struct shca_dev *sdev;
	u64 addr;
	u32 key;
	u8 *mem;
};

static void shca_test_dm_release(void *arg)
{
	struct shca_test_dm *dm = arg;
	struct shca_hw_cmd mpt = {
		.opcode = SHCA_CMD_FREE_MPT,
		.in.mpt.key = dm->key,
	};
	struct shca_hw_cmd free = {
		.opcode = SHCA_CMD_FREE_DM,
		.in.dm_addr = dm->addr,
	};

	shca_cmd_exec(dm->sdev, &mpt);
	shca_cmd_exec(dm->sdev, &free);
}

/* SHCA_DM_LEN bytes of @tq's device memory, an MR on all but the first 64. */
static struct shca_test_dm *shca_test_dm_new(struct kunit *test,
					     struct shca_tq *tq)
{
	struct shca_hw_cmd dma = {
		.opcode = SHCA_CMD_ALLOC_DM,
		.in.dm.length = SHCA_DM_LEN,
	};
	struct shca_hw_cmd alloc = {
		.opcode = SHCA_CMD_ALLOC_MPT,
		.in.mpt_alloc = {
			.type = SHCA_MPT_DM,
			.pdn = to_shca_pd(tq->pd)->pdn,
		},
	};
	struct shca_hw_cmd write = { .opcode = SHCA_CMD_WRITE_MPT };
	struct shca_test_dm *dm;

	dm = kunit_kzalloc(test, sizeof(*dm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dm);
	dm->sdev = to_shca_dev(tq->dev);
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(dm->sdev, &dma));
	dm->addr = dma.out.dm_addr;
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(dm->sdev, &alloc));
	dm->key = alloc.out.num;
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   shca_test_dm_release,
							   dm));
	write.in.mpt = (struct shca_hw_mpt_write) {
		.key = dm->key,
		.access = SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE |
			  SHCA_ACCESS_REMOTE_READ | SHCA_ACCESS_REMOTE_ATOMIC,
		.length = SHCA_DM_LEN - SHCA_DM_OFF,
		.dm_addr = dm->addr,
		.dm_offset = SHCA_DM_OFF,
	};
	KUNIT_ASSERT_EQ(test, 0, shca_cmd_exec(dm->sdev, &write));
	dm->mem = shca_hw_dm_ptr(dm->sdev->hw, dm->addr + SHCA_DM_OFF,
				 SHCA_DM_LEN - SHCA_DM_OFF);
	KUNIT_ASSERT_NOT_NULL(test, dm->mem);
	return dm;
}

/* Post one signaled RDMA or atomic WR and wait for its completion. */
static enum ib_wc_status shca_test_dm_op(struct kunit *test,
					 struct shca_tq *tq,
					 enum ib_wr_opcode opcode,
					 u64 laddr, u32 lkey, u32 len,
					 u64 raddr, u32 rkey, u64 add, u64 swap)
{
	struct ib_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ib_atomic_wr atomic = {
		.remote_addr = raddr,
		.rkey = rkey,
		.compare_add = add,
		.swap = swap,
	};
	struct ib_rdma_wr rdma = { .remote_addr = raddr, .rkey = rkey };
	struct ib_send_wr *wr = &rdma.wr;
	struct ib_wc wc = {};

	if (opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
		wr = &atomic.wr;
	wr->wr_id = opcode;
	wr->opcode = opcode;
	wr->send_flags = IB_SEND_SIGNALED;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	KUNIT_EXPECT_EQ(test, 0, ib_post_send(tq->qp, wr, NULL));
	KUNIT_EXPECT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
	KUNIT_EXPECT_EQ(test, (u64)opcode, wc.wr_id);
	return wc.status;
}

static void shca_test_dm_fill(u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7;
}

/*
 * b's DM MR as the target of a's RDMA WRITE and the source of its RDMA
 * READ, a's own DM MR as the source of a WRITE into b's buffer: every byte
 * lands where it should and none beside it.
 */
static void shca_test_dm_rdma_in_and_out(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u32 len = SHCA_DM_LEN - SHCA_DM_OFF - 64;
	struct shca_test_dm *bdm, *adm;
	u8 *before;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	bdm = shca_test_dm_new(test, b);
	adm = shca_test_dm_new(test, a);
	before = shca_hw_dm_ptr(bdm->sdev->hw, bdm->addr, SHCA_DM_OFF);
	KUNIT_ASSERT_NOT_NULL(test, before);

	/* WRITE a's buffer into b's DM at MR address 32. */
	shca_test_dm_fill(a->buf, len, 3);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			shca_test_dm_op(test, a, IB_WR_RDMA_WRITE, a->addr,
					a->lkey, len, 32, bdm->key, 0, 0));
	KUNIT_EXPECT_MEMEQ(test, bdm->mem + 32, a->buf, len);
	KUNIT_EXPECT_NULL(test, memchr_inv(bdm->mem, 0, 32));
	KUNIT_EXPECT_NULL(test, memchr_inv(before, 0, SHCA_DM_OFF));

	/* READ it back into another part of a's buffer. */
	memset(a->buf + PAGE_SIZE, 0, len);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			shca_test_dm_op(test, a, IB_WR_RDMA_READ,
					a->addr + PAGE_SIZE, a->lkey, len, 32,
					bdm->key, 0, 0));
	KUNIT_EXPECT_MEMEQ(test, a->buf + PAGE_SIZE, a->buf, len);

	/* a's DM as the local source of a WRITE into b's buffer. */
	shca_test_dm_fill(adm->mem, len, 11);
	memset(b->buf, 0, len + 8);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			shca_test_dm_op(test, a, IB_WR_RDMA_WRITE, 0, adm->key,
					len, b->addr, b->rkey, 0, 0));
	KUNIT_EXPECT_MEMEQ(test, b->buf, adm->mem, len);
	KUNIT_EXPECT_NULL(test, memchr_inv(b->buf + len, 0, 8));
}

/* Fetch-and-add and compare-and-swap on a word of b's DM MR. */
static void shca_test_dm_atomics(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_test_dm *bdm;
	u64 *word, *fetched = NULL;
	int i;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	bdm = shca_test_dm_new(test, b);
	word = (u64 *)(bdm->mem + 8);
	fetched = (u64 *)a->buf;
	*word = 1000;
	for (i = 0; i < 5; i++) {
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
				shca_test_dm_op(test, a,
						IB_WR_ATOMIC_FETCH_AND_ADD,
						a->addr, a->lkey, 8, 8,
						bdm->key, 3, 0));
		KUNIT_EXPECT_EQ(test, 1000ULL + 3 * i, *fetched);
	}
	KUNIT_EXPECT_EQ(test, 1015ULL, *word);
	/* A compare that fails leaves the word; one that matches swaps. */
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			shca_test_dm_op(test, a, IB_WR_ATOMIC_CMP_AND_SWP,
					a->addr, a->lkey, 8, 8, bdm->key,
					7, 42));
	KUNIT_EXPECT_EQ(test, 1015ULL, *fetched);
	KUNIT_EXPECT_EQ(test, 1015ULL, *word);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS,
			shca_test_dm_op(test, a, IB_WR_ATOMIC_CMP_AND_SWP,
					a->addr, a->lkey, 8, 8, bdm->key,
					1015, 42));
	KUNIT_EXPECT_EQ(test, 1015ULL, *fetched);
	KUNIT_EXPECT_EQ(test, 42ULL, *word);
	KUNIT_EXPECT_NULL(test, memchr_inv(bdm->mem, 0, 8));
}

struct shca_dm_past {
	const char *name;
	enum ib_wr_opcode opcode;
	u64 raddr;
	u32 len;
};

static const struct shca_dm_past shca_dm_pasts[] = {
	{ "write_one_byte_past", IB_WR_RDMA_WRITE,
	  SHCA_DM_LEN - SHCA_DM_OFF - 63, 64 },
	{ "write_at_the_end", IB_WR_RDMA_WRITE, SHCA_DM_LEN - SHCA_DM_OFF, 4 },
	{ "write_far_past", IB_WR_RDMA_WRITE, 1ULL << 20, 4 },
	{ "read_one_byte_past", IB_WR_RDMA_READ,
	  SHCA_DM_LEN - SHCA_DM_OFF - 3, 4 },
	{ "atomic_at_the_end", IB_WR_ATOMIC_FETCH_AND_ADD,
	  SHCA_DM_LEN - SHCA_DM_OFF, 8 },
};

static void shca_dm_past_desc(const struct shca_dm_past *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_dm_past, shca_dm_pasts, shca_dm_past_desc);

/*
 * Past the DM MR's end: a remote access error, and not a byte of the
 * device memory changes, the allocation's bytes before the MR and after
 * it included.
 */
static void shca_test_dm_past_the_end(struct kunit *test)
{
	const struct shca_dm_past *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct shca_test_dm *bdm;
	u8 *all;

	shca_test_pair(test, a, b, IB_QPT_RC, 8);
	shca_test_connect(test, a, b);
	bdm = shca_test_dm_new(test, b);
	all = shca_hw_dm_ptr(bdm->sdev->hw, bdm->addr, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, all);
	memset(a->buf, 0x77, p->len);
	KUNIT_EXPECT_EQ(test, IB_WC_REM_ACCESS_ERR,
			shca_test_dm_op(test, a, p->opcode, a->addr, a->lkey,
					p->len, p->raddr, bdm->key, 1, 0));
	KUNIT_EXPECT_NULL(test, memchr_inv(all, 0, PAGE_SIZE));
}

static struct kunit_case shca_dm_cases[] = {
	KUNIT_CASE_PARAM(shca_test_dm_alloc_bounds, shca_dm_bad_gen_params),
	KUNIT_CASE(shca_test_dm_exhaustion),
	KUNIT_CASE(shca_test_dm_alignment),
	KUNIT_CASE(shca_test_dm_free_bad_address),
	KUNIT_CASE(shca_test_dm_free_with_mr_busy),
	KUNIT_CASE_PARAM(shca_test_dm_mpt_refused, shca_dm_bad_mpt_gen_params),
	KUNIT_CASE(shca_test_dm_mpt_written_once),
	KUNIT_CASE(shca_test_dm_rdma_in_and_out),
	KUNIT_CASE(shca_test_dm_atomics),
	KUNIT_CASE_PARAM(shca_test_dm_past_the_end, shca_dm_past_gen_params),
	{}
};

static struct kunit_suite shca_dm_suite = {
	.name = "shca_dm",
	.test_cases = shca_dm_cases,
};

kunit_test_suite(shca_dm_suite);
