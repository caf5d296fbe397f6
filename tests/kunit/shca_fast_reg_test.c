// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: fast registration as the kernel ULPs use it.  ib_map_mr_sg()
 * with 4 KiB pages (nvme-rdma, iser), PAGE_SIZE, and larger pages (64 KiB,
 * and 2 MiB as for huge pages), with an iova that starts inside the first
 * page and a length that ends inside the last, and pages that neighbour
 * each other in memory (which the device copies as one run) in order,
 * in two runs and backwards; IB_WR_REG_MR on a real QP;
 * then a peer's RDMA WRITE and READ through the rkey, and the owner's own
 * use of the lkey, must land exactly where the page list says, and no byte
 * outside the range may move.  Accesses outside the range, or after a
 * local invalidation, fail with the right completion status; the limits
 * query_device reports (page_size_cap, max_fast_reg_page_list_len, no
 * SG_GAPS) are exactly what the device takes.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_FR_CANARY		0xa5
/* Bytes one RDMA WRITE or READ of the tests moves at most. */
#define SHCA_FR_WIN		(SHCA_TEST_BUF / 4)
#define SHCA_FR_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ)

/*
 * The byte the tests write at offset @j of a registration: a function of
 * the offset alone, so a byte that lands anywhere else shows.
 */
static u8 shca_fr_byte(u64 j)
{
	return (u8)(j ^ (j >> 8) ^ (j >> 16)) + 1;
}

/**
 * struct shca_fr - a fast-registration MR over memory of its own
 * @test: the test
 * @dev: the device
 * @page_size: the page size it is mapped with
 * @order: the page order of each chunk
 * @nchunks: chunks, each @page_size bytes and aligned to it
 * @chunks: their kernel addresses
 * @block: the one allocation the chunks were carved from, or NULL when
 *	each is an allocation of its own
 * @block_order: its page order
 * @sgl: the scatterlist, one entry per chunk
 * @nents: entries ib_dma_map_sg() mapped, 0 before
 * @shadow: what the chunks must hold, side by side
 * @mr: the MR
 */
struct shca_fr {
	struct kunit *test;
	struct ib_device *dev;
	u32 page_size;
	unsigned int order;
	u32 nchunks;
	u8 **chunks;
	u8 *block;
	unsigned int block_order;
	struct scatterlist *sgl;
	int nents;
	u8 *shadow;
	struct ib_mr *mr;
};

static void shca_fr_free(void *arg)
{
	struct shca_fr *fr = arg;
	u32 i;

	if (!IS_ERR_OR_NULL(fr->mr))
		ib_dereg_mr(fr->mr);
	if (fr->nents)
		ib_dma_unmap_sg(fr->dev, fr->sgl, fr->nchunks,
				DMA_BIDIRECTIONAL);
	if (fr->block)
		free_pages((unsigned long)fr->block, fr->block_order);
	for (i = 0; i < fr->nchunks && !fr->block; i++)
		if (fr->chunks[i])
			free_pages((unsigned long)fr->chunks[i], fr->order);
	vfree(fr->shadow);
}

/*
 * @nchunks chunks of @page_size bytes, each filled with the canary and
 * DMA-mapped as one scatterlist entry (the last one @tail bytes short),
 * and an MR of @max_pages pages on @tq's PD.  Not mapped into the MR yet.
 * With @carve, the chunks are the pages of one allocation, chunk i its
 * page @carve[i]: pages in order make runs the device copies in one go.
 */
static struct shca_fr *shca_fr_new(struct kunit *test, struct shca_tq *tq,
				   u32 page_size, u32 nchunks, u32 tail,
				   u32 max_pages, const u8 *carve)
{
	struct shca_fr *fr;
	u32 i;

	fr = kunit_kzalloc(test, sizeof(*fr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fr);
	fr->test = test;
	fr->dev = tq->dev;
	fr->page_size = page_size;
	fr->order = get_order(page_size);
	fr->nchunks = nchunks;
	fr->chunks = kunit_kcalloc(test, nchunks, sizeof(*fr->chunks),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fr->chunks);
	fr->sgl = kunit_kcalloc(test, nchunks, sizeof(*fr->sgl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fr->sgl);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, shca_fr_free, fr));
	fr->shadow = vmalloc((size_t)nchunks * page_size);
	KUNIT_ASSERT_NOT_NULL(test, fr->shadow);
	memset(fr->shadow, SHCA_FR_CANARY, (size_t)nchunks * page_size);

	sg_init_table(fr->sgl, nchunks);
	if (carve) {
		fr->block_order = get_order((size_t)nchunks * page_size);
		fr->block = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_NOWARN,
						   fr->block_order);
		KUNIT_ASSERT_NOT_NULL(test, fr->block);
	}
	for (i = 0; i < nchunks; i++) {
		if (carve)
			fr->chunks[i] = fr->block + (size_t)carve[i] * page_size;
		else
			fr->chunks[i] = (u8 *)__get_free_pages(GFP_KERNEL |
							       __GFP_NOWARN,
							       fr->order);
		KUNIT_ASSERT_NOT_NULL_MSG(test, fr->chunks[i],
					  "no %u-byte chunk", page_size);
		/* A chunk of the buddy allocator is aligned to its size. */
		KUNIT_ASSERT_EQ(test, 0UL,
				(uintptr_t)fr->chunks[i] & (page_size - 1));
		memset(fr->chunks[i], SHCA_FR_CANARY, page_size);
		sg_set_buf(&fr->sgl[i], fr->chunks[i],
			   i == nchunks - 1 ? page_size - tail : page_size);
	}
	fr->nents = ib_dma_map_sg(fr->dev, fr->sgl, nchunks,
				  DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(test, (int)nchunks, fr->nents);

	fr->mr = ib_alloc_mr(tq->pd, IB_MR_TYPE_MEM_REG, max_pages);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(fr->mr), "alloc_mr: %ld",
			       PTR_ERR(fr->mr));
	return fr;
}

/* Post IB_WR_REG_MR for @mr on @tq and return the completion's status. */
static enum ib_wc_status shca_fr_reg(struct kunit *test, struct shca_tq *tq,
				     struct ib_mr *mr, int access)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = 0xfa57,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = mr,
		.key = mr->rkey,
		.access = access,
	};
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr.wr, NULL));
	KUNIT_ASSERT_EQ(test, 1, shca_test_poll(tq, &wc, 1));
	KUNIT_EXPECT_EQ(test, 0xfa57ULL, wc.wr_id);
	if (wc.status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, IB_WC_REG_MR, wc.opcode);
	return wc.status;
}

/* LOCAL_INV of @key on @tq, which must succeed. */
static void shca_fr_local_inv(struct kunit *test, struct shca_tq *tq, u32 key)
{
	struct ib_send_wr wr = {
		.wr_id = 8,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};

	KUNIT_ASSERT_EQ(test, 0, ib_post_send(tq->qp, &wr, NULL));
	shca_test_expect(test, tq, IB_WC_SUCCESS, 8);
}

/* One signaled RDMA WRITE or READ of one SGE; returns ib_post_send()'s. */
static int shca_fr_post(struct shca_tq *tq, enum ib_wr_opcode opcode,
			u64 wr_id, u32 lkey, u64 laddr, u32 rkey, u64 raddr,
			u32 len)
{
	struct ib_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return ib_post_send(tq->qp, &wr.wr, NULL);
}

/* The chunks hold what the shadow says, byte for byte. */
static void shca_fr_check_memory(struct shca_fr *fr)
{
	struct kunit *test = fr->test;
	u32 i, x;

	for (i = 0; i < fr->nchunks; i++) {
		const u8 *want = fr->shadow + (size_t)i * fr->page_size;

		if (!memcmp(fr->chunks[i], want, fr->page_size))
			continue;
		for (x = 0; fr->chunks[i][x] == want[x]; x++)
			;
		KUNIT_FAIL(test, "chunk %u byte %u is %#x, not %#x", i, x,
			   fr->chunks[i][x], want[x]);
		return;
	}
}

/* Back to RTS after an error, both ends. */
static void shca_fr_reconnect(struct kunit *test, struct shca_tq *a,
			      struct shca_tq *b)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(a->qp, &attr, IB_QP_STATE));
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(b->qp, &attr, IB_QP_STATE));
	shca_test_connect(test, a, b);
}

/*
 * The peer @a writes the pattern for [@start, @start + @len) of the
 * registration through its rkey; the shadow follows.
 */
static void shca_fr_remote_write(struct shca_fr *fr, struct shca_tq *a,
				 u32 offset, u64 start, u32 len)
{
	struct kunit *test = fr->test;
	u32 i;

	for (i = 0; i < len; i++) {
		a->buf[i] = shca_fr_byte(start + i);
		fr->shadow[offset + start + i] = a->buf[i];
	}
	KUNIT_ASSERT_EQ(test, 0,
			shca_fr_post(a, IB_WR_RDMA_WRITE, 1, a->lkey, a->addr,
				     fr->mr->rkey, fr->mr->iova + start, len));
	shca_test_expect(test, a, IB_WC_SUCCESS, 1);
}

/* The pieces of a registration the tests move: its ends and its seams. */
struct shca_fr_win {
	u64 start;
	u32 len;
};

static u32 shca_fr_windows(const struct shca_fr *fr, u32 offset,
			   struct shca_fr_win *w, u32 max)
{
	u64 length = fr->mr->length, b;
	u32 n = 0, k;

	w[n].start = 0;
	w[n++].len = min_t(u64, SHCA_FR_WIN, length);
	for (k = 1; k < fr->nchunks && n < max - 1; k++) {
		b = (u64)k * fr->page_size - offset;
		w[n].start = b > SHCA_FR_WIN / 2 ? b - SHCA_FR_WIN / 2 : 0;
		w[n].len = min_t(u64, SHCA_FR_WIN, length - w[n].start);
		n++;
	}
	w[n].start = length > SHCA_FR_WIN ? length - SHCA_FR_WIN : 0;
	w[n].len = length - w[n].start;
	return n + 1;
}

/**
 * struct shca_fr_param - one layout of a registration
 * @name: the parameter's description
 * @page_shift: log2 of the page size given to ib_map_mr_sg()
 * @nchunks: pages of that size, each a scatterlist entry of its own
 * @offset: where in the first page the iova starts
 * @tail: bytes of the last page left out of the registration
 * @carve: NULL, or the pages of one allocation the chunks are, in the
 *	page list's order (see shca_fr_new())
 */
struct shca_fr_param {
	const char *name;
	u32 page_shift;
	u32 nchunks;
	u32 offset;
	u32 tail;
	const u8 *carve;
};

/*
 * Pages of one allocation: one run the device copies whole; two runs
 * with a break between them; and neighbours listed backwards, no run.
 */
static const u8 shca_fr_in_order[] = { 0, 1, 2, 3 };
static const u8 shca_fr_two_runs[] = { 2, 3, 0, 1 };
static const u8 shca_fr_backwards[] = { 3, 2, 1, 0 };

static const struct shca_fr_param shca_fr_params[] = {
	{ "4k_aligned", 12, 3, 0, 0 },
	{ "4k_offset_and_short_tail", 12, 4, 100, 1000 },
	{ "4k_two_bytes_across_a_page", 12, 2, 4095, 4095 },
	{ "page_size_offset", PAGE_SHIFT, 3, 512, 7 },
	{ "64k_offset_and_short_tail", 16, 3, 12345, 5000 },
	{ "2m_aligned", 21, 2, 0, 0 },
	{ "2m_offset_and_short_tail", 21, 3, SZ_4K + 17, SZ_64K + 3 },
	{ "4k_one_run_of_pages", 12, 4, 100, 1000, shca_fr_in_order },
	{ "4k_two_runs_of_pages", 12, 4, 0, 0, shca_fr_two_runs },
	{ "4k_neighbours_backwards", 12, 4, 4000, 0, shca_fr_backwards },
};

static void shca_fr_desc(const struct shca_fr_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_fr, shca_fr_params, shca_fr_desc);

/*
 * The owner @b maps its chunks with the parameter's page size and offset,
 * registers them with REG_MR, and the peer @a, on another device, writes
 * the registration's first and last bytes and every seam between pages
 * through the rkey: each byte lands at its place in its page and nothing
 * outside the registration changes.  The peer reads the same bytes back
 * through the rkey, and the owner sends them from the lkey to the peer.
 */
static void shca_test_reg_mr_lands_every_byte_where_the_page_list_says(struct kunit *test)
{
	const struct shca_fr_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	u32 page_size = 1U << p->page_shift, offset = p->offset, n, i, k;
	unsigned int sg_offset = offset;
	struct shca_fr_win w[8];
	struct ib_device *da, *db;
	struct shca_fr *fr;
	u64 length;

	shca_test_devices(test, true, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	fr = shca_fr_new(test, b, page_size, p->nchunks, p->tail, p->nchunks,
			 p->carve);

	KUNIT_ASSERT_EQ(test, (int)p->nchunks,
			ib_map_mr_sg(fr->mr, fr->sgl, fr->nents, &sg_offset,
				     page_size));
	length = (u64)p->nchunks * page_size - offset - p->tail;
	KUNIT_EXPECT_EQ(test, (u64)(uintptr_t)fr->chunks[0] + offset,
			fr->mr->iova);
	KUNIT_ASSERT_EQ(test, length, fr->mr->length);
	KUNIT_EXPECT_EQ(test, page_size, fr->mr->page_size);
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS,
			shca_fr_reg(test, b, fr->mr, SHCA_FR_ACCESS));

	n = shca_fr_windows(fr, offset, w, ARRAY_SIZE(w));
	for (k = 0; k < n; k++)
		shca_fr_remote_write(fr, a, offset, w[k].start, w[k].len);
	shca_fr_check_memory(fr);

	for (k = 0; k < n; k++) {
		/* Read back through the rkey. */
		memset(a->buf, 0, w[k].len);
		KUNIT_ASSERT_EQ(test, 0,
				shca_fr_post(a, IB_WR_RDMA_READ, 2, a->lkey,
					     a->addr, fr->mr->rkey,
					     fr->mr->iova + w[k].start,
					     w[k].len));
		shca_test_expect(test, a, IB_WC_SUCCESS, 2);
		for (i = 0; i < w[k].len; i++)
			if (a->buf[i] != shca_fr_byte(w[k].start + i))
				break;
		KUNIT_EXPECT_EQ_MSG(test, w[k].len, i,
				    "read at %llu: byte %u differs",
				    w[k].start, i);

		/* Written by the owner from its lkey into the peer's buffer. */
		memset(a->buf, 0, w[k].len);
		KUNIT_ASSERT_EQ(test, 0,
				shca_fr_post(b, IB_WR_RDMA_WRITE, 3,
					     fr->mr->lkey,
					     fr->mr->iova + w[k].start,
					     a->rkey, a->addr, w[k].len));
		shca_test_expect(test, b, IB_WC_SUCCESS, 3);
		for (i = 0; i < w[k].len; i++)
			if (a->buf[i] != shca_fr_byte(w[k].start + i))
				break;
		KUNIT_EXPECT_EQ_MSG(test, w[k].len, i,
				    "lkey at %llu: byte %u differs",
				    w[k].start, i);
	}
	shca_fr_check_memory(fr);
}

/**
 * enum shca_fr_bad - an access a registration must refuse
 * @SHCA_FR_WRITE_BEFORE: a peer's write starting one byte before the iova
 * @SHCA_FR_WRITE_PAST_END: a peer's write of the last byte and one more
 * @SHCA_FR_WRITE_TOO_LONG: a peer's write from the iova, one byte longer
 *	than the registration
 * @SHCA_FR_READ_PAST_END: a peer's read of the byte after the end
 * @SHCA_FR_LOCAL_PAST_END: the owner's own SGE of the last byte and one
 *	more, through the lkey
 * @SHCA_FR_WRITE_NO_RIGHT: a peer's write into a registration that allows
 *	remote reads only
 * @SHCA_FR_WRITE_AFTER_INV: a peer's write after a LOCAL_INV of the key
 */
enum shca_fr_bad {
	SHCA_FR_WRITE_BEFORE,
	SHCA_FR_WRITE_PAST_END,
	SHCA_FR_WRITE_TOO_LONG,
	SHCA_FR_READ_PAST_END,
	SHCA_FR_LOCAL_PAST_END,
	SHCA_FR_WRITE_NO_RIGHT,
	SHCA_FR_WRITE_AFTER_INV,
};

struct shca_fr_bad_param {
	const char *name;
	enum shca_fr_bad bad;
};

static const struct shca_fr_bad_param shca_fr_bad_params[] = {
	{ "write_before_iova", SHCA_FR_WRITE_BEFORE },
	{ "write_past_end", SHCA_FR_WRITE_PAST_END },
	{ "write_one_byte_too_long", SHCA_FR_WRITE_TOO_LONG },
	{ "read_past_end", SHCA_FR_READ_PAST_END },
	{ "local_sge_past_end", SHCA_FR_LOCAL_PAST_END },
	{ "write_without_remote_write", SHCA_FR_WRITE_NO_RIGHT },
	{ "write_after_local_inv", SHCA_FR_WRITE_AFTER_INV },
};

static void shca_fr_bad_desc(const struct shca_fr_bad_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_fr_bad, shca_fr_bad_params, shca_fr_bad_desc);

/*
 * Three 4 KiB pages registered from byte 100 of the first to 1000 bytes
 * before the end of the last.  Each access that strays outside that range,
 * or lacks the right, or comes after a local invalidation, fails with the
 * status the IBTA gives it (Remote Access Error at the peer, Local
 * Protection Error for the owner's own SGE) and moves no byte; the QP is
 * in ERR.  Except after the invalidation, the registration is untouched:
 * once the QPs are reconnected an access inside it works.
 */
static void shca_test_reg_mr_refuses_what_is_outside_it(struct kunit *test)
{
	const struct shca_fr_bad_param *p = test->param_value;
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	int access = SHCA_FR_ACCESS;
	unsigned int sg_offset = 100;
	struct shca_tq *who = a;
	enum ib_wc_status want = IB_WC_REM_ACCESS_ERR;
	struct ib_device *da, *db;
	struct shca_fr *fr;
	u64 iova, end;
	int err;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	fr = shca_fr_new(test, b, SZ_4K, 3, 1000, 3, NULL);
	KUNIT_ASSERT_EQ(test, 3, ib_map_mr_sg(fr->mr, fr->sgl, fr->nents,
					      &sg_offset, SZ_4K));
	if (p->bad == SHCA_FR_WRITE_NO_RIGHT)
		access &= ~IB_ACCESS_REMOTE_WRITE;
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS, shca_fr_reg(test, b, fr->mr,
							 access));
	iova = fr->mr->iova;
	end = iova + fr->mr->length;
	KUNIT_ASSERT_EQ(test, 3ULL * SZ_4K - 1100, fr->mr->length);
	memset(a->buf, 0x3c, 64);

	switch (p->bad) {
	case SHCA_FR_WRITE_BEFORE:
		err = shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				   fr->mr->rkey, iova - 1, 2);
		break;
	case SHCA_FR_WRITE_PAST_END:
		err = shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				   fr->mr->rkey, end - 1, 2);
		break;
	case SHCA_FR_WRITE_TOO_LONG:
		err = shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				   fr->mr->rkey, iova, fr->mr->length + 1);
		break;
	case SHCA_FR_READ_PAST_END:
		err = shca_fr_post(a, IB_WR_RDMA_READ, 9, a->lkey, a->addr,
				   fr->mr->rkey, end, 1);
		break;
	case SHCA_FR_LOCAL_PAST_END:
		/* The owner reads its own bytes to put them in a's buffer. */
		who = b;
		want = IB_WC_LOC_PROT_ERR;
		err = shca_fr_post(b, IB_WR_RDMA_WRITE, 9, fr->mr->lkey,
				   end - 1, a->rkey, a->addr, 2);
		break;
	case SHCA_FR_WRITE_NO_RIGHT:
		err = shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				   fr->mr->rkey, iova, 64);
		break;
	default:
		shca_fr_local_inv(test, b, fr->mr->rkey);
		err = shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				   fr->mr->rkey, iova, 64);
		break;
	}
	KUNIT_ASSERT_EQ(test, 0, err);
	shca_test_expect(test, who, want, 9);
	KUNIT_EXPECT_EQ(test, IB_QPS_ERR, shca_test_qp_state(who));
	shca_fr_check_memory(fr);
	if (p->bad == SHCA_FR_WRITE_AFTER_INV)
		return;

	/* The registration itself is as it was. */
	shca_fr_reconnect(test, a, b);
	if (p->bad == SHCA_FR_WRITE_NO_RIGHT) {
		KUNIT_ASSERT_EQ(test, 0,
				shca_fr_post(a, IB_WR_RDMA_READ, 10, a->lkey,
					     a->addr, fr->mr->rkey, iova, 64));
		shca_test_expect(test, a, IB_WC_SUCCESS, 10);
		KUNIT_EXPECT_MEMEQ(test, a->buf, fr->shadow + 100, 64);
		return;
	}
	shca_fr_remote_write(fr, a, 100, fr->mr->length - 64, 64);
	shca_fr_check_memory(fr);
}

/*
 * The page sizes query_device reports are exactly those REG_MR takes:
 * a one-page registration with each power of two from 2 KiB to 2 GiB
 * succeeds if and only if page_size_cap has its bit.  (REG_MR touches no
 * byte of the memory, so the page may be one no test could allocate: an
 * address aligned to every size tried, which no access ever uses.)  The
 * smallest size is 4 KiB, which SRP takes as its page size.
 */
static void shca_test_page_size_cap_is_what_reg_mr_takes(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test);
	const u64 addr = 1ULL << 40;
	struct scatterlist sg;
	struct ib_device *dev;
	enum ib_wc_status st;
	struct ib_mr *mr;
	u32 shift, size;
	u64 cap;

	dev = shca_test_add(test, SHCA_TEST_DEV, shca_test_netdev(test));
	shca_test_tq_init(test, a, dev, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, a);
	cap = dev->attrs.page_size_cap;
	KUNIT_EXPECT_EQ(test, shca_hw_caps(to_shca_dev(dev)->hw)->page_size_cap,
			cap);
	KUNIT_EXPECT_EQ(test, 12UL, __ffs64(cap));

	for (shift = 11; shift <= 31; shift++) {
		size = 1U << shift;
		mr = ib_alloc_mr(a->pd, IB_MR_TYPE_MEM_REG, 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
		sg_init_table(&sg, 1);
		sg_dma_address(&sg) = addr;
		sg_dma_len(&sg) = size;
		KUNIT_EXPECT_EQ(test, 1, ib_map_mr_sg(mr, &sg, 1, NULL, size));
		st = shca_fr_reg(test, a, mr, IB_ACCESS_LOCAL_WRITE);
		ib_dereg_mr(mr);
		if (cap & size) {
			KUNIT_EXPECT_EQ_MSG(test, IB_WC_SUCCESS, st,
					    "page size %#x: %s", size,
					    ib_wc_status_msg(st));
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, IB_WC_MW_BIND_ERR, st,
				    "page size %#x outside page_size_cap %#llx",
				    size, cap);
		shca_fr_reconnect(test, a, a);
	}
}

/*
 * max_fast_reg_page_list_len is the limit, exactly: an MR of that many
 * pages is allocated and one of a page more refused; ib_map_mr_sg() maps
 * that many pages of a list one page longer and stops; the full MR
 * registers, and a peer's write reaches its last byte and no further.
 */
static void shca_test_max_fast_reg_page_list_len_is_the_limit(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_device *da, *db;
	struct scatterlist *sgl;
	struct shca_fr *fr;
	u32 max, i;
	u8 *base;
	struct ib_mr *mr;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	max = db->attrs.max_fast_reg_page_list_len;
	KUNIT_ASSERT_EQ(test,
			shca_hw_caps(to_shca_dev(db)->hw)->max_fast_reg_page_list_len,
			max);

	mr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG, max + 1);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(mr));
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);

	/* One chunk of max + 1 pages, as max + 1 entries of 4 KiB. */
	fr = shca_fr_new(test, b, roundup_pow_of_two((max + 1) * SZ_4K), 1, 0,
			 max, NULL);
	base = fr->chunks[0];
	ib_dma_unmap_sg(db, fr->sgl, 1, DMA_BIDIRECTIONAL);
	fr->nents = 0;
	sgl = kunit_kcalloc(test, max + 1, sizeof(*sgl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sgl);
	sg_init_table(sgl, max + 1);
	for (i = 0; i <= max; i++)
		sg_set_buf(&sgl[i], base + i * SZ_4K, SZ_4K);
	KUNIT_ASSERT_EQ(test, (int)max + 1,
			ib_dma_map_sg(db, sgl, max + 1, DMA_BIDIRECTIONAL));

	KUNIT_EXPECT_EQ(test, (int)max,
			ib_map_mr_sg(fr->mr, sgl, max + 1, NULL, SZ_4K));
	KUNIT_EXPECT_EQ(test, (u64)max * SZ_4K, fr->mr->length);
	KUNIT_ASSERT_EQ(test, (int)max,
			ib_map_mr_sg(fr->mr, sgl, max, NULL, SZ_4K));
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS,
			shca_fr_reg(test, b, fr->mr, SHCA_FR_ACCESS));

	shca_fr_remote_write(fr, a, 0, fr->mr->length - 64, 64);
	shca_fr_check_memory(fr);
	KUNIT_ASSERT_EQ(test, 0,
			shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				     fr->mr->rkey, fr->mr->iova + fr->mr->length,
				     1));
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 9);
	shca_fr_check_memory(fr);
	ib_dma_unmap_sg(db, sgl, max + 1, DMA_BIDIRECTIONAL);
}

/*
 * shca has no SG_GAPS registration, and says so: the flag is not set and
 * alloc_mr refuses the type.  ib_map_mr_sg() of a list with a gap maps the
 * entries before the gap and returns fewer than it was given, as a ULP
 * without IBK_SG_GAPS_REG expects; only that prefix is registered.
 */
static void shca_test_map_mr_sg_stops_at_a_gap(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	struct ib_device *da, *db;
	struct shca_fr *fr;
	struct ib_mr *mr;

	shca_test_devices(test, false, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	KUNIT_EXPECT_FALSE(test, db->attrs.kernel_cap_flags & IBK_SG_GAPS_REG);
	mr = ib_alloc_mr(b->pd, IB_MR_TYPE_SG_GAPS, 4);
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, PTR_ERR_OR_ZERO(mr));
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);

	/* Pages A, B, C; B's entry ends in its middle: a gap before C. */
	fr = shca_fr_new(test, b, SZ_4K, 3, 0, 3, NULL);
	ib_dma_unmap_sg(db, fr->sgl, 3, DMA_BIDIRECTIONAL);
	sg_set_buf(&fr->sgl[1], fr->chunks[1], SZ_2K);
	KUNIT_ASSERT_EQ(test, 3, ib_dma_map_sg(db, fr->sgl, 3,
					       DMA_BIDIRECTIONAL));
	KUNIT_EXPECT_EQ(test, 2, ib_map_mr_sg(fr->mr, fr->sgl, 3, NULL, SZ_4K));
	KUNIT_ASSERT_EQ(test, (u64)SZ_4K + SZ_2K, fr->mr->length);
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS,
			shca_fr_reg(test, b, fr->mr, SHCA_FR_ACCESS));
	shca_fr_remote_write(fr, a, 0, fr->mr->length - 64, 64);
	shca_fr_check_memory(fr);
	/* Past the prefix is not registered: C stays as it was. */
	KUNIT_ASSERT_EQ(test, 0,
			shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				     fr->mr->rkey, fr->mr->iova + fr->mr->length,
				     64));
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 9);
	shca_fr_check_memory(fr);
	shca_fr_reconnect(test, a, b);

	/* B's entry starting in its middle is a gap too: A alone maps. */
	ib_dma_unmap_sg(db, fr->sgl, 3, DMA_BIDIRECTIONAL);
	sg_set_buf(&fr->sgl[1], fr->chunks[1] + SZ_2K, SZ_2K);
	KUNIT_ASSERT_EQ(test, 3, ib_dma_map_sg(db, fr->sgl, 3,
					       DMA_BIDIRECTIONAL));
	shca_fr_local_inv(test, b, fr->mr->rkey);
	KUNIT_EXPECT_EQ(test, 1, ib_map_mr_sg(fr->mr, fr->sgl, 3, NULL, SZ_4K));
	KUNIT_ASSERT_EQ(test, (u64)SZ_4K, fr->mr->length);
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS,
			shca_fr_reg(test, b, fr->mr, SHCA_FR_ACCESS));
	shca_fr_remote_write(fr, a, 0, 0, SZ_4K);
	shca_fr_check_memory(fr);
}

/*
 * After LOCAL_INV the key is refused; the ULPs' way to use the MR again,
 * a new key with ib_update_fast_reg_key() and a new REG_MR, works, and the
 * old key stays refused.
 */
static void shca_test_local_inv_then_reg_with_a_new_key(struct kunit *test)
{
	struct shca_tq *a = shca_test_tq_new(test), *b = shca_test_tq_new(test);
	unsigned int sg_offset = 256;
	struct ib_device *da, *db;
	struct shca_fr *fr;
	u32 old;

	shca_test_devices(test, true, &da, &db);
	shca_test_tq_init(test, a, da, IB_QPT_RC, NULL, 16, 8);
	shca_test_tq_init(test, b, db, IB_QPT_RC, NULL, 16, 8);
	shca_test_connect(test, a, b);
	fr = shca_fr_new(test, b, SZ_4K, 2, 0, 2, NULL);
	KUNIT_ASSERT_EQ(test, 2, ib_map_mr_sg(fr->mr, fr->sgl, fr->nents,
					      &sg_offset, SZ_4K));
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS,
			shca_fr_reg(test, b, fr->mr, SHCA_FR_ACCESS));
	shca_fr_remote_write(fr, a, 256, 0, 128);

	old = fr->mr->rkey;
	shca_fr_local_inv(test, b, old);
	memset(a->buf, 0x77, 64);
	KUNIT_ASSERT_EQ(test, 0,
			shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				     old, fr->mr->iova, 64));
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 9);
	shca_fr_check_memory(fr);
	shca_fr_reconnect(test, a, b);

	ib_update_fast_reg_key(fr->mr, ib_inc_rkey(old) & 0xff);
	KUNIT_ASSERT_NE(test, old, fr->mr->rkey);
	sg_offset = 256;
	KUNIT_ASSERT_EQ(test, 2, ib_map_mr_sg(fr->mr, fr->sgl, fr->nents,
					      &sg_offset, SZ_4K));
	KUNIT_ASSERT_EQ(test, IB_WC_SUCCESS,
			shca_fr_reg(test, b, fr->mr, SHCA_FR_ACCESS));
	shca_fr_remote_write(fr, a, 256, 4000, 200);
	shca_fr_check_memory(fr);
	KUNIT_ASSERT_EQ(test, 0,
			shca_fr_post(a, IB_WR_RDMA_WRITE, 9, a->lkey, a->addr,
				     old, fr->mr->iova, 64));
	shca_test_expect(test, a, IB_WC_REM_ACCESS_ERR, 9);
	shca_fr_check_memory(fr);
}

static struct kunit_case shca_fast_reg_cases[] = {
	KUNIT_CASE_PARAM(shca_test_reg_mr_lands_every_byte_where_the_page_list_says,
			 shca_fr_gen_params),
	KUNIT_CASE_PARAM(shca_test_reg_mr_refuses_what_is_outside_it,
			 shca_fr_bad_gen_params),
	KUNIT_CASE(shca_test_page_size_cap_is_what_reg_mr_takes),
	KUNIT_CASE(shca_test_max_fast_reg_page_list_len_is_the_limit),
	KUNIT_CASE(shca_test_map_mr_sg_stops_at_a_gap),
	KUNIT_CASE(shca_test_local_inv_then_reg_with_a_new_key),
	{}
};

static struct kunit_suite shca_fast_reg_suite = {
	.name = "shca_fast_reg",
	.test_cases = shca_fast_reg_cases,
};

kunit_test_suite(shca_fast_reg_suite);
