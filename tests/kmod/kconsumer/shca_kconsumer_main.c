// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_kconsumer: an in-kernel RDMA consumer for tests and the demo.
 *
 * It uses ib_core's public API only, the way a kernel ULP does: PDs,
 * CQs from ib_alloc_cq() polled by ib_core in the chosen context, QPs
 * connected by hand, fast-registration MRs, and work requests completed
 * through struct ib_cqe callbacks.  On load it runs RC, UC and UD traffic
 * between two devices (or one, in loopback) with every opcode each QP
 * type takes, checks every byte and every completion, and keeps its
 * objects until it is unloaded so that "rdma res" can show them.
 *
 *   insmod shca_kconsumer.ko dev_a=shca0 [dev_b=shca1] [iters=N]
 *	[poll=softirq|workqueue|unbound_workqueue]
 *
 * The verdict is in /sys/kernel/debug/shca_kconsumer/result, one line per
 * QP type: "rc PASS 112 0" (type, verdict, checks passed, checks failed).
 *
 * With teardown=N it then runs N teardown rounds on dev_a, each on one CQ
 * shared by two neighbour QPs (RC and UD) and a victim (RC, UC, UD in
 * turn), and adds a "teardown" line.  A round runs traffic on every QP and
 * destroys the victim, or resets it and reuses it, mid-traffic.  Every
 * neighbour completion must be delivered exactly once, in order.
 *
 * With a workqueue poller, the round first parks the poller in a
 * completion callback (the gate), so nothing is polled until the round
 * lets go: no completion of the victim's torn-down life may be delivered
 * at all.  A softirq poller cannot be parked, and a completion polled just
 * before the teardown returned may be delivered just after it; there the
 * round sends a marker after the teardown, and no completion of the
 * victim's torn-down life may come after the marker's.  (A CQE the sweep
 * missed would reach the driver's poll with no QP to name: the driver
 * counts it in "stray_cqes", which the integration test checks.)
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <rdma/ib_verbs.h>

#include "shca_ktest_qp.h"

MODULE_DESCRIPTION("In-kernel RDMA consumer that exercises shca devices");
MODULE_LICENSE("Dual BSD/GPL");

static char *dev_a = "shca0";
module_param(dev_a, charp, 0444);
MODULE_PARM_DESC(dev_a, "first RDMA device");
static char *dev_b = "";
module_param(dev_b, charp, 0444);
MODULE_PARM_DESC(dev_b, "second RDMA device; empty for loopback on dev_a");
static unsigned int iters = 8;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "rounds of every opcode");
static char *poll = "softirq";
module_param(poll, charp, 0444);
MODULE_PARM_DESC(poll, "CQ poll context: softirq, workqueue or unbound_workqueue");

static unsigned int teardown;
module_param(teardown, uint, 0444);
MODULE_PARM_DESC(teardown, "teardown rounds on dev_a after the traffic; 0 for none");

#define KC_BUF		(64 * 1024)
#define KC_LEN		2000
#define KC_UD_LEN	512
#define KC_REMOTE	(16 * 1024)
#define KC_QKEY		0x1234
#define KC_TIMEOUT	(5 * HZ)

/* One outstanding work request and how it completed. */
struct kc_wr {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

struct kc_end {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_ah *ah;
	struct ib_mr *mr;
	u8 *buf;
	u64 addr;
};

/*
 * @sw and @rw, the pair's send and receive work requests, live as long as
 * the module: a request that failed or timed out may still be posted, and
 * completes (flushed) when its QP is destroyed.
 */
struct kc_pair {
	enum ib_qp_type type;
	const char *name;
	struct kc_end a;
	struct kc_end b;
	struct kc_wr sw;
	struct kc_wr rw;
	unsigned int passed;
	unsigned int failed;
};

static struct kc_pair kc_pairs[] = {
	{ .type = IB_QPT_RC, .name = "rc" },
	{ .type = IB_QPT_UC, .name = "uc" },
	{ .type = IB_QPT_UD, .name = "ud" },
};

static struct dentry *kc_debugfs;

/* Count one check; say what failed. */
static __printf(3, 4) void kc_check(struct kc_pair *p, bool ok,
				    const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (ok) {
		p->passed++;
		return;
	}
	p->failed++;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	ibdev_err(p->a.dev, "shca_kconsumer: %s: %pV\n", p->name, &vaf);
	va_end(args);
}

static void kc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kc_wr *w = container_of(wc->wr_cqe, struct kc_wr, cqe);

	w->wc = *wc;
	complete(&w->done);
}

static void kc_wr_init(struct kc_wr *w)
{
	w->cqe.done = kc_done;
	init_completion(&w->done);
	memset(&w->wc, 0, sizeof(w->wc));
}

/* Wait for @w; false (and a failed check) if it never completes. */
static bool kc_wait(struct kc_pair *p, struct kc_wr *w, const char *what)
{
	bool ok = wait_for_completion_timeout(&w->done, KC_TIMEOUT);

	kc_check(p, ok, "%s: no completion", what);
	if (ok)
		kc_check(p, w->wc.status == IB_WC_SUCCESS, "%s: %s", what,
			 ib_wc_status_msg(w->wc.status));
	return ok && w->wc.status == IB_WC_SUCCESS;
}

static enum ib_poll_context kc_poll_ctx(void)
{
	if (!strcmp(poll, "workqueue"))
		return IB_POLL_WORKQUEUE;
	if (!strcmp(poll, "unbound_workqueue"))
		return IB_POLL_UNBOUND_WORKQUEUE;
	return IB_POLL_SOFTIRQ;
}

static void kc_end_fini(struct kc_end *e)
{
	if (!IS_ERR_OR_NULL(e->ah))
		rdma_destroy_ah(e->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(e->mr))
		ib_dereg_mr(e->mr);
	if (!IS_ERR_OR_NULL(e->qp))
		ib_destroy_qp(e->qp);
	if (!IS_ERR_OR_NULL(e->cq))
		ib_free_cq(e->cq);
	if (e->buf) {
		ib_dma_unmap_single(e->dev, e->addr, KC_BUF, DMA_BIDIRECTIONAL);
		kfree(e->buf);
	}
	if (!IS_ERR_OR_NULL(e->pd))
		ib_dealloc_pd(e->pd);
	memset(e, 0, sizeof(*e));
}

/* With @cq, the end's QP uses it and the end does not own it. */
static int kc_end_init_on(struct kc_end *e, struct ib_device *dev,
			  enum ib_qp_type type, struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.qp_type = type,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.port_num = 1,
	};

	e->dev = dev;
	e->pd = ib_alloc_pd(dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(e->pd))
		return PTR_ERR(e->pd);
	e->buf = kzalloc(KC_BUF, GFP_KERNEL);
	if (!e->buf)
		return -ENOMEM;
	e->addr = ib_dma_map_single(dev, e->buf, KC_BUF, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, e->addr)) {
		kfree(e->buf);
		e->buf = NULL;
		return -ENOMEM;
	}
	if (!cq) {
		e->cq = ib_alloc_cq(dev, NULL, 64, 0, kc_poll_ctx());
		if (IS_ERR(e->cq))
			return PTR_ERR(e->cq);
		cq = e->cq;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	e->qp = ib_create_qp(e->pd, &init);
	if (IS_ERR(e->qp))
		return PTR_ERR(e->qp);
	return 0;
}

static int kc_end_init(struct kc_end *e, struct ib_device *dev,
		       enum ib_qp_type type)
{
	return kc_end_init_on(e, dev, type, NULL);
}

/* RESET to RTS, connected to @peer (RC, UC) or with an AH to it (UD). */
static int kc_to_rts(struct kc_end *e, struct kc_end *peer)
{
	static const struct shca_ktest_conn conn = {
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_ATOMIC,
		.qkey = KC_QKEY,
		.timeout = 10,
		.retry_cnt = 7,
		.rnr_retry = 7,
	};
	int err;

	err = shca_ktest_qp_to_rts(e->qp, peer->dev, peer->qp->qp_num, &conn);
	if (err || e->qp->qp_type != IB_QPT_UD)
		return err;
	e->ah = shca_ktest_create_ah(e->pd, peer->dev);
	return PTR_ERR_OR_ZERO(e->ah);
}

/* A fast-registration MR over one page of @e's buffer, for atomics. */
static int kc_fast_reg(struct kc_pair *p, struct kc_end *e)
{
	struct scatterlist sg;
	struct ib_reg_wr wr = {};
	struct kc_wr *w = &p->sw;
	int err;

	e->mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(e->mr))
		return PTR_ERR(e->mr);
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = e->addr + KC_REMOTE;
	sg_dma_len(&sg) = PAGE_SIZE;
	if (ib_map_mr_sg(e->mr, &sg, 1, NULL, PAGE_SIZE) != 1)
		return -EINVAL;
	kc_wr_init(w);
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_cqe = &w->cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = e->mr;
	wr.key = e->mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	err = ib_post_send(e->qp, &wr.wr, NULL);
	if (err)
		return err;
	return kc_wait(p, w, "reg_mr") ? 0 : -EIO;
}

static void kc_fill(u8 *buf, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		buf[i] = seed * 31 + i;
}

static int kc_post_recv(struct kc_end *e, struct kc_wr *w, u32 len)
{
	struct ib_sge sge = {
		.addr = e->addr,
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &w->cqe, .sg_list = &sge,
				 .num_sge = 1 };

	kc_wr_init(w);
	return ib_post_recv(e->qp, &wr, NULL);
}

/* One send (with or without immediate data) from a to b. */
static void kc_send(struct kc_pair *p, u32 seed, bool imm)
{
	bool ud = p->type == IB_QPT_UD;
	u32 len = ud ? KC_UD_LEN : KC_LEN, hdr = ud ? 40 : 0;
	struct ib_sge sge = {
		.addr = p->a.addr + KC_BUF / 2,
		.length = len,
		.lkey = p->a.pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {};
	struct kc_wr *sw = &p->sw, *rw = &p->rw;

	kc_fill(p->a.buf + KC_BUF / 2, len, seed);
	if (kc_post_recv(&p->b, rw, KC_BUF / 2)) {
		kc_check(p, false, "post_recv failed");
		return;
	}
	kc_wr_init(sw);
	wr.wr.wr_cqe = &sw->cqe;
	wr.wr.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	wr.wr.ex.imm_data = cpu_to_be32(seed);
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = p->a.ah;
	wr.remote_qpn = p->b.qp->qp_num;
	wr.remote_qkey = KC_QKEY;
	kc_check(p, !ib_post_send(p->a.qp, &wr.wr, NULL), "post_send failed");
	if (!kc_wait(p, sw, "send") || !kc_wait(p, rw, "recv"))
		return;
	kc_check(p, rw->wc.byte_len == len + hdr, "recv length %u",
		 rw->wc.byte_len);
	kc_check(p, !memcmp(p->a.buf + KC_BUF / 2, p->b.buf + hdr, len),
		 "received data differs");
	kc_check(p, !!(rw->wc.wc_flags & IB_WC_WITH_IMM) == imm &&
		 (!imm || be32_to_cpu(rw->wc.ex.imm_data) == seed),
		 "immediate data");
	if (ud)
		kc_check(p, rw->wc.src_qp == p->a.qp->qp_num &&
			 (rw->wc.wc_flags & IB_WC_GRH), "UD source");
}

/* An RDMA write (with or without immediate data) or read from a to b. */
static void kc_rdma(struct kc_pair *p, enum ib_wr_opcode op, u32 seed)
{
	struct ib_sge sge = {
		.addr = p->a.addr + KC_BUF / 2,
		.length = KC_LEN,
		.lkey = p->a.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .opcode = op, .send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge, .num_sge = 1,
			.ex.imm_data = cpu_to_be32(seed) },
		.remote_addr = p->b.addr,
		.rkey = p->b.pd->unsafe_global_rkey,
	};
	bool read = op == IB_WR_RDMA_READ;
	bool imm = op == IB_WR_RDMA_WRITE_WITH_IMM;
	struct kc_wr *sw = &p->sw, *rw = &p->rw;

	kc_fill(read ? p->b.buf : p->a.buf + KC_BUF / 2, KC_LEN, seed);
	if (imm && kc_post_recv(&p->b, rw, 0)) {
		kc_check(p, false, "post_recv failed");
		return;
	}
	kc_wr_init(sw);
	wr.wr.wr_cqe = &sw->cqe;
	kc_check(p, !ib_post_send(p->a.qp, &wr.wr, NULL), "post_send failed");
	if (!kc_wait(p, sw, read ? "read" : "write"))
		return;
	kc_check(p, !memcmp(p->a.buf + KC_BUF / 2, p->b.buf, KC_LEN),
		 "%s data differs", read ? "read" : "written");
	if (imm && kc_wait(p, rw, "write_imm recv"))
		kc_check(p, rw->wc.opcode == IB_WC_RECV_RDMA_WITH_IMM &&
			 be32_to_cpu(rw->wc.ex.imm_data) == seed &&
			 rw->wc.byte_len == KC_LEN, "write with immediate");
}

static void kc_atomic(struct kc_pair *p, enum ib_wr_opcode op, u32 seed)
{
	u64 *target = (u64 *)(p->b.buf + KC_REMOTE);
	u64 *result = (u64 *)(p->a.buf + KC_BUF / 2);
	struct ib_sge sge = {
		.addr = p->a.addr + KC_BUF / 2,
		.length = 8,
		.lkey = p->a.pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = { .opcode = op, .send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge, .num_sge = 1 },
		.remote_addr = p->b.mr->iova,
		.rkey = p->b.mr->rkey,
		.compare_add = op == IB_WR_ATOMIC_CMP_AND_SWP ? seed : 5,
		.swap = seed * 2,
	};
	struct kc_wr *sw = &p->sw;

	*target = seed;
	kc_wr_init(sw);
	wr.wr.wr_cqe = &sw->cqe;
	kc_check(p, !ib_post_send(p->a.qp, &wr.wr, NULL), "post_send failed");
	if (!kc_wait(p, sw, "atomic"))
		return;
	kc_check(p, *result == seed, "atomic returned %llu", *result);
	kc_check(p, *target == (op == IB_WR_ATOMIC_CMP_AND_SWP ? seed * 2 :
				seed + 5), "atomic left %llu", *target);
}

static void kc_run(struct kc_pair *p, struct ib_device *da,
		   struct ib_device *db)
{
	bool rc = p->type == IB_QPT_RC, ud = p->type == IB_QPT_UD;
	u32 i;
	int err;

	err = kc_end_init(&p->a, da, p->type);
	if (!err)
		err = kc_end_init(&p->b, db, p->type);
	if (!err)
		err = kc_to_rts(&p->a, &p->b);
	if (!err)
		err = kc_to_rts(&p->b, &p->a);
	if (!err && rc)
		err = kc_fast_reg(p, &p->b);
	kc_check(p, !err, "setup failed: %d", err);
	if (err)
		return;
	for (i = 1; i <= iters; i++) {
		kc_send(p, i, false);
		kc_send(p, i, true);
		if (ud)
			continue;
		kc_rdma(p, IB_WR_RDMA_WRITE, i);
		kc_rdma(p, IB_WR_RDMA_WRITE_WITH_IMM, i);
		if (!rc)
			continue;
		kc_rdma(p, IB_WR_RDMA_READ, i);
		kc_atomic(p, IB_WR_ATOMIC_CMP_AND_SWP, i);
		kc_atomic(p, IB_WR_ATOMIC_FETCH_AND_ADD, i);
	}
	ibdev_info(da, "shca_kconsumer: %s %s: %u checks passed, %u failed\n",
		   p->name, p->failed ? "FAIL" : "PASS", p->passed, p->failed);
}

#define KC_TD_NEIGH	2
#define KC_TD_MSGS	6
#define KC_TD_GATE_MS	15000

/* One teardown work request: which QP, send or receive, which message. */
struct kc_td_wr {
	struct ib_cqe cqe;
	u8 qp;
	u8 recv;
	u8 life;
	u8 seq;
	atomic_t hits;
};

/**
 * struct kc_td - the teardown rounds
 * @res: their checks, reported as "teardown"
 * @cq: the CQ every QP of a round shares
 * @n: the neighbours, each connected to itself
 * @v: the victim, connected to itself
 * @gated: the poller can be parked (a workqueue poller)
 * @gate: the RDMA write whose completion parks the poller, or marks the
 *	end of a teardown
 * @parked: the poller is in the gate, or past the marker
 * @open: the gate may open
 * @opened: the gate opened when told to, not on its own
 * @nw: the neighbours' work requests of the round
 * @vw: the victim's, for its first and its second life
 * @spare: a receive the victim posts after its first life's messages,
 *	which no send consumes: every teardown has work to flush or discard
 * @next: the next sequence number due per neighbour, sends and receives,
 *	in the round
 * @pending: neighbour completions not yet delivered
 * @wait: woken when @pending reaches zero
 * @dead_life: the victim's life that was torn down (0: none yet)
 * @late: victim completions of a torn-down life delivered
 * @disorder: neighbour completions of the round delivered out of order
 *	or failed
 */
struct kc_td {
	struct kc_pair res;
	struct ib_cq *cq;
	struct kc_end n[KC_TD_NEIGH];
	struct kc_end v;
	bool gated;
	struct kc_td_wr gate;
	struct completion parked;
	struct completion open;
	bool opened;
	struct kc_td_wr nw[KC_TD_NEIGH][KC_TD_MSGS][2];
	struct kc_td_wr vw[2][KC_TD_MSGS][2];
	struct kc_td_wr spare;
	u32 next[KC_TD_NEIGH][2];
	atomic_t pending;
	wait_queue_head_t wait;
	u8 dead_life;
	atomic_t late;
	atomic_t disorder;
};

static struct kc_td kc_td = { .res = { .name = "teardown" } };

static void kc_td_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kc_td_wr *w = container_of(wc->wr_cqe, struct kc_td_wr, cqe);
	struct kc_td *td = &kc_td;

	atomic_inc(&w->hits);
	if (w->qp == KC_TD_NEIGH) {
		if (w->life == READ_ONCE(td->dead_life))
			atomic_inc(&td->late);
		return;
	}
	if (wc->status != IB_WC_SUCCESS || w->seq != td->next[w->qp][w->recv])
		atomic_inc(&td->disorder);
	td->next[w->qp][w->recv] = w->seq + 1;
	if (atomic_dec_and_test(&td->pending))
		wake_up_all(&td->wait);
}

/* The gate: park the (workqueue) poller until the round opens it. */
static void kc_td_gate_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kc_td *td = &kc_td;

	complete(&td->parked);
	wait_for_completion_timeout(&td->open, msecs_to_jiffies(KC_TD_GATE_MS));
	td->opened = completion_done(&td->open);
}

/* The marker: every CQE polled after this one came after the teardown. */
static void kc_td_marker_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kc_td *td = &kc_td;

	WRITE_ONCE(td->dead_life, 1);
	complete(&td->parked);
}

static void kc_td_wr_init(struct kc_td_wr *w,
			  void (*done)(struct ib_cq *cq, struct ib_wc *wc),
			  u8 qp, u8 recv, u8 life, u8 seq)
{
	w->cqe.done = done;
	w->qp = qp;
	w->recv = recv;
	w->life = life;
	w->seq = seq;
	atomic_set(&w->hits, 0);
}

/* One message from @e to itself: a receive, then a send. */
static int kc_td_msg(struct kc_end *e, struct kc_td_wr *w)
{
	struct ib_sge rsge = {
		.addr = e->addr,
		.length = KC_BUF / 2,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_sge ssge = {
		.addr = e->addr + KC_BUF / 2,
		.length = 64,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .wr_cqe = &w[1].cqe, .sg_list = &rsge,
				  .num_sge = 1 };
	struct ib_ud_wr swr = {
		.wr = { .wr_cqe = &w[0].cqe, .opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &ssge,
			.num_sge = 1 },
		.ah = e->ah,
		.remote_qpn = e->qp->qp_num,
		.remote_qkey = KC_QKEY,
	};
	int err;

	err = ib_post_recv(e->qp, &rwr, NULL);
	return err ?: ib_post_send(e->qp, &swr.wr, NULL);
}

/* A receive of @e's that no send will consume. */
static int kc_td_spare(struct kc_end *e, struct kc_td_wr *w)
{
	struct ib_sge sge = {
		.addr = e->addr,
		.length = KC_BUF / 2,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &w->cqe, .sg_list = &sge,
				 .num_sge = 1 };

	kc_td_wr_init(w, kc_td_done, KC_TD_NEIGH, 1, 1, KC_TD_MSGS);
	return ib_post_recv(e->qp, &wr, NULL);
}

static int kc_td_gate(struct kc_td *td,
		      void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct kc_end *e = &td->n[0];
	struct ib_sge sge = {
		.addr = e->addr + KC_BUF / 2,
		.length = 8,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_cqe = &td->gate.cqe, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = e->addr,
		.rkey = e->pd->unsafe_global_rkey,
	};

	reinit_completion(&td->parked);
	reinit_completion(&td->open);
	td->opened = false;
	td->gate.cqe.done = done;
	return ib_post_send(e->qp, &wr.wr, NULL);
}

static void kc_td_end_fini(struct kc_end *e)
{
	e->cq = NULL;	/* the round's CQ is not the end's */
	kc_end_fini(e);
}

static const enum ib_qp_type kc_td_types[] = { IB_QPT_RC, IB_QPT_UC,
					       IB_QPT_UD };

/* One round; returns an errno only for what keeps the round from running. */
static int kc_td_round(struct kc_td *td, struct ib_device *dev, u32 round)
{
	struct kc_pair *p = &td->res;
	bool reset = round % 2 == 0;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	int err, i, j;

	err = kc_end_init_on(&td->v, dev, kc_td_types[round % 3], td->cq);
	if (!err)
		err = kc_to_rts(&td->v, &td->v);
	if (err)
		return err;
	td->dead_life = 0;
	atomic_set(&td->late, 0);
	atomic_set(&td->disorder, 0);
	memset(td->next, 0, sizeof(td->next));
	atomic_set(&td->pending, KC_TD_NEIGH * KC_TD_MSGS * 2);

	if (td->gated) {
		err = kc_td_gate(td, kc_td_gate_done);
		if (err)
			return err;
		if (!wait_for_completion_timeout(&td->parked, KC_TIMEOUT))
			return -ETIMEDOUT;
	}

	/* Traffic on every QP, and, if parked, nothing is delivered. */
	for (i = 0; i < KC_TD_MSGS && !err; i++) {
		for (j = 0; j < KC_TD_NEIGH && !err; j++) {
			kc_td_wr_init(&td->nw[j][i][0], kc_td_done, j, 0, 0, i);
			kc_td_wr_init(&td->nw[j][i][1], kc_td_done, j, 1, 0, i);
			err = kc_td_msg(&td->n[j], td->nw[j][i]);
		}
		kc_td_wr_init(&td->vw[0][i][0], kc_td_done, KC_TD_NEIGH, 0, 1,
			      i);
		kc_td_wr_init(&td->vw[0][i][1], kc_td_done, KC_TD_NEIGH, 1, 1,
			      i);
		if (!err)
			err = kc_td_msg(&td->v, td->vw[0][i]);
	}
	if (!err)
		err = kc_td_spare(&td->v, &td->spare);
	kc_check(p, !err, "round %u: post failed: %d", round, err);
	/* Let some of it execute; how much does not matter. */
	usleep_range(200, 1000);

	if (reset) {
		err = ib_modify_qp(td->v.qp, &attr, IB_QP_STATE);
		kc_check(p, !err, "round %u: reset failed: %d", round, err);
		if (td->gated)
			WRITE_ONCE(td->dead_life, 1);
		if (td->v.ah)
			rdma_destroy_ah(td->v.ah, RDMA_DESTROY_AH_SLEEPABLE);
		td->v.ah = NULL;
		err = kc_to_rts(&td->v, &td->v);
		kc_check(p, !err, "round %u: reuse failed: %d", round, err);
		/* The second life's message is delivered once the gate opens. */
		kc_td_wr_init(&td->vw[1][0][0], kc_td_done, KC_TD_NEIGH, 0, 2,
			      0);
		kc_td_wr_init(&td->vw[1][0][1], kc_td_done, KC_TD_NEIGH, 1, 2,
			      0);
		if (!err)
			kc_check(p, !kc_td_msg(&td->v, td->vw[1][0]),
				 "round %u: post after reset failed", round);
	} else {
		kc_td_end_fini(&td->v);
		if (td->gated)
			WRITE_ONCE(td->dead_life, 1);
	}

	if (td->gated) {
		complete_all(&td->open);
	} else {
		err = kc_td_gate(td, kc_td_marker_done);
		kc_check(p, !err && wait_for_completion_timeout(&td->parked,
								KC_TIMEOUT),
			 "round %u: the marker never came", round);
	}
	kc_check(p, wait_event_timeout(td->wait, !atomic_read(&td->pending),
				       KC_TIMEOUT),
		 "round %u: %d neighbour completions never came", round,
		 atomic_read(&td->pending));
	kc_check(p, !td->gated || td->opened,
		 "round %u: the gate opened on its own", round);
	if (reset) {
		for (i = 0; i < 2; i++) {
			unsigned long end = jiffies + KC_TIMEOUT;

			while (!atomic_read(&td->vw[1][0][i].hits) &&
			       time_before(jiffies, end))
				usleep_range(100, 200);
			kc_check(p, atomic_read(&td->vw[1][0][i].hits) == 1,
				 "round %u: second life's completion", round);
		}
		kc_td_end_fini(&td->v);
	}
	kc_check(p, !atomic_read(&td->late),
		 "round %u: %d completions of a torn-down victim delivered",
		 round, atomic_read(&td->late));
	/*
	 * Parked, the poller cannot take the spare's flush completion before
	 * the sweep does; a softirq poller may, before the marker's, once.
	 */
	kc_check(p, atomic_read(&td->spare.hits) <= !td->gated,
		 "round %u: the spare receive, flushed by the teardown, was delivered %d times",
		 round, atomic_read(&td->spare.hits));
	kc_check(p, !atomic_read(&td->disorder),
		 "round %u: %d neighbour completions out of order or failed",
		 round, atomic_read(&td->disorder));
	ibdev_info(dev, "shca_kconsumer: round %u: %s victim %s mid-traffic; neighbours' %u completions %s; %d of the victim's after that, spare %d\n",
		   round, kc_td_types[round % 3] == IB_QPT_RC ? "RC" :
		   kc_td_types[round % 3] == IB_QPT_UC ? "UC" : "UD",
		   reset ? "reset and reused" : "destroyed",
		   KC_TD_NEIGH * KC_TD_MSGS * 2,
		   atomic_read(&td->disorder) ? "NOT in order" :
		   "each once, in order", atomic_read(&td->late),
		   atomic_read(&td->spare.hits));
	for (i = 0; i < KC_TD_MSGS; i++)
		for (j = 0; j < KC_TD_NEIGH; j++)
			kc_check(p, atomic_read(&td->nw[j][i][0].hits) == 1 &&
				 atomic_read(&td->nw[j][i][1].hits) == 1,
				 "round %u: neighbour %d message %d delivered %d/%d times",
				 round, j, i, atomic_read(&td->nw[j][i][0].hits),
				 atomic_read(&td->nw[j][i][1].hits));
	return 0;
}

/* A CQ a QP points at cannot be destroyed; once the QP is gone, it can. */
static void kc_td_destroy_cq(struct kc_td *td, struct ib_device *dev)
{
	struct ib_cq_init_attr attr = { .cqe = 8 };
	struct kc_pair *p = &td->res;
	struct kc_end e = {};
	struct ib_cq *cq;
	int err;

	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	if (IS_ERR(cq)) {
		kc_check(p, false, "create_cq: %ld", PTR_ERR(cq));
		return;
	}
	err = kc_end_init_on(&e, dev, IB_QPT_RC, cq);
	kc_check(p, !err, "QP on the CQ: %d", err);
	if (!err) {
		err = ib_destroy_cq_user(cq, NULL);
		ibdev_info(dev, "shca_kconsumer: destroy_cq with a QP on it: %d\n",
			   err);
		kc_check(p, err == -EBUSY, "destroy_cq of a busy CQ: %d", err);
	}
	kc_td_end_fini(&e);
	err = ib_destroy_cq_user(cq, NULL);
	ibdev_info(dev, "shca_kconsumer: destroy_cq once the QP is gone: %d\n",
		   err);
	kc_check(p, !err, "destroy_cq of an idle CQ: %d", err);
}

static void kc_td_release(struct kc_td *td)
{
	int i;

	kc_td_end_fini(&td->v);
	for (i = 0; i < KC_TD_NEIGH; i++)
		kc_td_end_fini(&td->n[i]);
	if (!IS_ERR_OR_NULL(td->cq))
		ib_free_cq(td->cq);
	td->cq = NULL;
}

static void kc_td_run(struct kc_td *td, struct ib_device *dev)
{
	struct kc_pair *p = &td->res;
	u32 round;
	int err = 0, i;

	p->a.dev = dev;
	td->gated = kc_poll_ctx() != IB_POLL_SOFTIRQ;
	init_completion(&td->parked);
	init_completion(&td->open);
	init_waitqueue_head(&td->wait);
	td->cq = ib_alloc_cq(dev, NULL, 512, 0, kc_poll_ctx());
	if (IS_ERR(td->cq))
		err = PTR_ERR(td->cq);
	for (i = 0; i < KC_TD_NEIGH && !err; i++) {
		err = kc_end_init_on(&td->n[i], dev,
				     i ? IB_QPT_UD : IB_QPT_RC, td->cq);
		if (!err)
			err = kc_to_rts(&td->n[i], &td->n[i]);
	}
	kc_check(p, !err, "setup failed: %d", err);
	if (!err)
		kc_td_destroy_cq(td, dev);
	for (round = 1; round <= teardown && !err; round++) {
		err = kc_td_round(td, dev, round);
		kc_check(p, !err, "round %u: %d", round, err);
	}
	kc_td_release(td);
	ibdev_info(dev, "shca_kconsumer: teardown %s: %u rounds (%s), %u checks passed, %u failed\n",
		   p->failed ? "FAIL" : "PASS", teardown,
		   td->gated ? "poller parked" : "marker", p->passed,
		   p->failed);
}

static void kc_result_line(struct seq_file *m, const struct kc_pair *p)
{
	seq_printf(m, "%s %s %u %u\n", p->name,
		   p->failed || !p->passed ? "FAIL" : "PASS", p->passed,
		   p->failed);
}

static int kc_result_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(kc_pairs); i++)
		kc_result_line(m, &kc_pairs[i]);
	if (teardown)
		kc_result_line(m, &kc_td.res);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kc_result);

/*
 * The devices the objects live on.  No reference is held between load and
 * unload: like any ULP, the module is an ib_client, and it lets go of its
 * objects when ib_core removes either device.
 */
static struct ib_device *kc_da, *kc_db;
/* Serialises releasing the objects: device removal against unload. */
static DEFINE_MUTEX(kc_lock);

static void kc_release(void)
{
	int i;

	mutex_lock(&kc_lock);
	for (i = 0; i < ARRAY_SIZE(kc_pairs); i++) {
		kc_end_fini(&kc_pairs[i].a);
		kc_end_fini(&kc_pairs[i].b);
	}
	kc_da = NULL;
	kc_db = NULL;
	mutex_unlock(&kc_lock);
}

static int kc_add(struct ib_device *dev)
{
	return 0;
}

static void kc_remove(struct ib_device *dev, void *data)
{
	if (dev == READ_ONCE(kc_da) || dev == READ_ONCE(kc_db))
		kc_release();
}

static struct ib_client kc_client = {
	.name = "shca_kconsumer",
	.add = kc_add,
	.remove = kc_remove,
};

static int __init kc_init(void)
{
	struct ib_device *da, *db;
	int err, i;

	err = ib_register_client(&kc_client);
	if (err)
		return err;
	da = ib_device_get_by_name(dev_a, RDMA_DRIVER_UNKNOWN);
	db = ib_device_get_by_name(*dev_b ? dev_b : dev_a,
				   RDMA_DRIVER_UNKNOWN);
	if (!da || !db) {
		if (da)
			ib_device_put(da);
		if (db)
			ib_device_put(db);
		ib_unregister_client(&kc_client);
		return -ENODEV;
	}
	mutex_lock(&kc_lock);
	kc_da = da;
	kc_db = db;
	for (i = 0; i < ARRAY_SIZE(kc_pairs); i++)
		kc_run(&kc_pairs[i], da, db);
	if (teardown)
		kc_td_run(&kc_td, da);
	mutex_unlock(&kc_lock);
	ib_device_put(db);
	ib_device_put(da);
	kc_debugfs = debugfs_create_dir("shca_kconsumer", NULL);
	debugfs_create_file("result", 0444, kc_debugfs, NULL, &kc_result_fops);
	return 0;
}

static void __exit kc_exit(void)
{
	debugfs_remove_recursive(kc_debugfs);
	ib_unregister_client(&kc_client);
	kc_release();
}

module_init(kc_init);
module_exit(kc_exit);
