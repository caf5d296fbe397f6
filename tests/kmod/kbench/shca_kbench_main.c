// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_kbench: in-kernel microbenchmarks for shca, driven by make bench.
 *
 * Each write of one command to /sys/kernel/debug/shca_kbench/run runs it
 * to the end; /sys/kernel/debug/shca_kbench/result then holds its result,
 * one line of key=value pairs.  A command that cannot run fails the write
 * with an errno (EINVAL for a malformed one, ENODEV for an unknown device,
 * EBUSY for a second "hold") and leaves no result.
 *
 *   sweep DEPTH ENTRIES SHARE REPS
 *	The CQ sweep that destroy_qp and modify_qp(RESET) run, on a ring of
 *	DEPTH CQEs (a power of two) holding ENTRIES published ones between
 *	the consumer and the producer index, SHARE percent of them the
 *	victim's, spread evenly.  The consumer index sits mid-ring so the
 *	entries wrap.  Times REPS sweeps (each on a freshly filled ring)
 *	under a spinlock with interrupts off, as the driver runs it, and
 *	checks each: exactly the victim's CQEs removed, the others kept in
 *	order.  The code timed is the driver's: include/shca/shca_cq_sweep.h.
 *
 *   destroy DEV NEIGHBOURS PERIOD_US MS [shared|own|burn NS]
 *	NEIGHBOURS UD QPs on DEV keep 8 sends each in flight, all completing
 *	on one CQ that a kernel thread busy-polls, reposting each completion.
 *	For MS milliseconds nothing else happens (the base rate); for the
 *	next MS a victim UD QP on the same CQ ("shared", the default) or on
 *	a CQ of its own ("own", the control: same work, no shared sweep) is
 *	created, brought to RTS, given 8 sends and destroyed, every
 *	PERIOD_US microseconds (or as fast as that goes).  Reports the
 *	destroy_qp latencies, the time a whole victim cycle takes (and its
 *	parts: create, to RTS, the posts), the
 *	neighbours' completion rate in both phases, and two checks that must
 *	stay zero: neighbour completions lost, reordered or failed, and
 *	victim completions polled after their QP's destroy_qp returned.
 *	"burn NS" is the control for any CPU load: in place of each victim
 *	cycle the same thread spins for NS nanoseconds (at most a period)
 *	and touches no device; its "latencies" are the spins.
 *
 *   hold DEV qp COUNT WR | hold DEV cq COUNT CQE
 *	Creates COUNT UD QPs (send and receive queues of WR each, one CQ)
 *	or COUNT CQs of CQE entries on DEV, and keeps them, so that the
 *	caller can read the memory they take from /proc/meminfo.
 *
 *   release
 *	Destroys what "hold" created.
 *
 *   copy BYTES MS
 *	The yardstick for bandwidth: the kernel's own memcpy() of BYTES
 *	(at most 1 MiB) from one page-aligned buffer to another, over and
 *	over for MS milliseconds on the CPU the command runs on, the way
 *	the device copies a message's payload.  Reports the copy rate in
 *	MB/s (10^6 bytes a second) and in MiB/s (2^20, perftest's MB);
 *	then, as long each, memmove()'s and a bare REP MOVSB's in MiB/s
 *	(x86 only; 0 elsewhere), which show what the CPU (or the
 *	emulator) charges for the string instruction the kernel's
 *	memmove() and clear_page() may take.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

/* The sweep shared by the driver and libshca, with the driver's acquire. */
#define shca_dp_load_acquire(p) smp_load_acquire(p)
#include "shca_cq_sweep.h"
#include "shca_ktest_qp.h"

MODULE_DESCRIPTION("In-kernel microbenchmarks for shca devices");
MODULE_LICENSE("Dual BSD/GPL");

#define KB_RESULT_LEN	512
#define KB_CMD_LEN	128
#define KB_MAX_DEPTH	BIT(20)
#define KB_MAX_REPS	100
#define KB_QKEY		0x4b42
#define KB_INFLIGHT	8
#define KB_MSG		8
#define KB_MAX_NEIGH	256
#define KB_MAX_MS	60000
#define KB_MAX_HOLD	4096
#define KB_MAX_LAT	BIT(17)
#define KB_VICTIM_QPN	0x00abcdef
#define KB_NEIGH_QPN	0x00000100
/* Victim work requests carry this bit and their QP's generation. */
#define KB_WR_VICTIM	BIT_ULL(63)

/* Serializes commands and guards the result and what "hold" keeps. */
static DEFINE_MUTEX(kb_lock);
static char kb_result[KB_RESULT_LEN];
static struct dentry *kb_debugfs;
/* Stands in for the CQ lock the driver sweeps under. */
static DEFINE_SPINLOCK(kb_sweep_lock);

/* Append to the result line of the command running. */
static __printf(1, 2) void kb_add_result(const char *fmt, ...)
{
	size_t len = strlen(kb_result);
	va_list args;

	lockdep_assert_held(&kb_lock);
	va_start(args, fmt);
	vsnprintf(kb_result + len, sizeof(kb_result) - len, fmt, args);
	va_end(args);
}

static int kb_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The sample at @pct percent of @n sorted samples. */
static u64 kb_pct(const u64 *v, u32 n, u32 pct)
{
	return n ? v[min_t(u64, (u64)n * pct / 100, n - 1)] : 0;
}

/* ---- sweep ---------------------------------------------------------- */

/* Whether entry @i of a fill with @share percent victims is the victim's. */
static bool kb_is_victim(u32 i, u32 share)
{
	return (u64)(i + 1) * share / 100 != (u64)i * share / 100;
}

/*
 * Lay out @entries published CQEs from @ci on, as the device writes them,
 * and mark every slot after them unpublished.  Entry i carries i in
 * byte_len, so the check can see the survivors' order.
 */
static u32 kb_sweep_fill(struct shca_hw_cqe *ring, u32 log_depth, u32 ci,
			 u32 entries, u32 share)
{
	u32 mask = (1U << log_depth) - 1, victims = 0, i, idx;
	struct shca_hw_cqe *cqe;
	u8 lap;

	for (i = 0; i <= mask; i++) {
		idx = ci + i;
		cqe = &ring[idx & mask];
		lap = (idx >> log_depth) & 1;
		memset(cqe, 0, sizeof(*cqe));
		if (i >= entries) {
			cqe->owner = lap;
			continue;
		}
		cqe->qpn = KB_NEIGH_QPN + (i & 7);
		if (kb_is_victim(i, share)) {
			cqe->qpn = KB_VICTIM_QPN;
			victims++;
		}
		cqe->opcode = SHCA_CQE_SEND;
		cqe->byte_len = i;
		cqe->owner = !lap;
	}
	return victims;
}

/* The survivors sit from @ci on, in their old order, none the victim's. */
static bool kb_sweep_check(const struct shca_hw_cqe *ring, u32 log_depth,
			   u32 ci, u32 survivors)
{
	u32 mask = (1U << log_depth) - 1, i;
	const struct shca_hw_cqe *cqe, *prev = NULL;

	for (i = 0; i < survivors; i++) {
		cqe = &ring[(ci + i) & mask];
		if (cqe->qpn == KB_VICTIM_QPN ||
		    !shca_cqe_published(ring, log_depth, ci + i) ||
		    (prev && cqe->byte_len <= prev->byte_len))
			return false;
		prev = cqe;
	}
	return true;
}

static int kb_sweep(u32 depth, u32 entries, u32 share, u32 reps)
{
	u32 log_depth, ci, victims = 0, removed, r;
	struct shca_hw_cqe *ring;
	unsigned long flags;
	u64 *ns, t0;
	int err = 0;

	if (depth < 2 || depth > KB_MAX_DEPTH || !is_power_of_2(depth) ||
	    entries > depth || share > 100 || !reps || reps > KB_MAX_REPS)
		return -EINVAL;
	log_depth = ilog2(depth);
	/* Mid-ring, in the second lap: the entries wrap past the end. */
	ci = depth + depth / 2 + 1;
	ring = vmalloc_array(depth, sizeof(*ring));
	ns = kcalloc(reps, sizeof(*ns), GFP_KERNEL);
	if (!ring || !ns) {
		err = -ENOMEM;
		goto out;
	}
	for (r = 0; r < reps; r++) {
		victims = kb_sweep_fill(ring, log_depth, ci, entries, share);
		spin_lock_irqsave(&kb_sweep_lock, flags);
		t0 = ktime_get_ns();
		removed = shca_sweep_cq_ring(ring, log_depth, ci, KB_VICTIM_QPN,
					     NULL, NULL);
		ns[r] = ktime_get_ns() - t0;
		spin_unlock_irqrestore(&kb_sweep_lock, flags);
		if (removed != victims ||
		    !kb_sweep_check(ring, log_depth, ci + removed,
				    entries - removed)) {
			err = -EIO;
			goto out;
		}
		cond_resched();
	}
	sort(ns, reps, sizeof(*ns), kb_cmp_u64, NULL);
	kb_add_result("sweep depth=%u entries=%u share=%u removed=%u reps=%u",
		      depth, entries, share, victims, reps);
	kb_add_result(" ns_min=%llu ns_median=%llu ps_per_entry=%llu\n",
		      ns[0], kb_pct(ns, reps, 50),
		      entries ? kb_pct(ns, reps, 50) * 1000 / entries : 0);
out:
	kfree(ns);
	vfree(ring);
	return err;
}

/* ---- the copy yardstick ---------------------------------------------- */

#define KB_MAX_COPY	SZ_1M

/* The routines the copy yardstick times. */
enum kb_copy_how {
	KB_MEMCPY,
	KB_MEMMOVE,
	KB_MOVSB,
};

static void kb_copy_once(enum kb_copy_how how, void *dst, const void *src,
			 size_t n)
{
	switch (how) {
	case KB_MEMCPY:
		memcpy(dst, src, n);
		break;
	case KB_MEMMOVE:
		memmove(dst, src, n);
		break;
	case KB_MOVSB:
#ifdef CONFIG_X86
		asm volatile("rep movsb"
			     : "+D" (dst), "+S" (src), "+c" (n) : : "memory");
#endif
		break;
	}
}

/*
 * @how's copy rate in MiB/s, copying for @ms; 0 where the routine is not
 * there, U64_MAX if it copied wrong.  Sets *@copies_out and *@ns_out if
 * given.
 */
static u64 kb_copy_rate(enum kb_copy_how how, void *dst, const void *src,
			u32 bytes, u32 ms, u64 *copies_out, u64 *ns_out)
{
	u64 t0, end, ns, copies = 0;

	if (how == KB_MOVSB && !IS_ENABLED(CONFIG_X86))
		return 0;
	memset(dst, 0, bytes);
	t0 = ktime_get_ns();
	end = t0 + (u64)ms * NSEC_PER_MSEC;
	do {
		kb_copy_once(how, dst, src, bytes);
		copies++;
		cond_resched();
	} while (ktime_get_ns() < end);
	ns = ktime_get_ns() - t0;
	if (memcmp(dst, src, bytes))
		return U64_MAX;
	if (copies_out) {
		*copies_out = copies;
		*ns_out = ns;
	}
	return div64_u64(copies * bytes * NSEC_PER_SEC, ns * SZ_1M);
}

static int kb_copy(u32 bytes, u32 ms)
{
	u64 copies, ns, mbps, mibps, memmove_mibps, movsb_mibps;
	void *src, *dst;
	int err = 0;

	if (!bytes || bytes > KB_MAX_COPY || !ms || ms > KB_MAX_MS)
		return -EINVAL;
	src = vmalloc(bytes);
	dst = vmalloc(bytes);
	if (!src || !dst) {
		err = -ENOMEM;
		goto out;
	}
	memset(src, 0x5a, bytes);
	mibps = kb_copy_rate(KB_MEMCPY, dst, src, bytes, ms, &copies, &ns);
	memmove_mibps = kb_copy_rate(KB_MEMMOVE, dst, src, bytes, ms, NULL,
				     NULL);
	movsb_mibps = kb_copy_rate(KB_MOVSB, dst, src, bytes, ms, NULL, NULL);
	if (mibps == U64_MAX || memmove_mibps == U64_MAX ||
	    movsb_mibps == U64_MAX) {
		err = -EIO;
		goto out;
	}
	mbps = div64_u64(copies * bytes * 1000, ns);
	kb_add_result("copy bytes=%u copies=%llu ns=%llu mbps=%llu mibps=%llu",
		      bytes, copies, ns, mbps, mibps);
	kb_add_result(" memmove_mibps=%llu movsb_mibps=%llu\n", memmove_mibps,
		      movsb_mibps);
out:
	vfree(dst);
	vfree(src);
	return err;
}

/* ---- destroy under load --------------------------------------------- */

struct kb_load {
	struct ib_device *dev;
	struct ib_pd *pd;
	/* Shared by the neighbours and the victims; only the poller polls. */
	struct ib_cq *cq;
	/* The sink's, never polled: the sink posts no receives. */
	struct ib_cq *sink_cq;
	/* The victims' in the control run, or the shared one. */
	struct ib_cq *victim_cq;
	struct ib_qp *sink;
	struct ib_ah *ah;
	u8 *buf;
	u64 dma;
	u32 nr;
	struct ib_qp **nb;
	/* Per neighbour: the next sequence number to post, and to complete. */
	u32 *post_seq;
	u32 *done_seq;
	struct task_struct *poller;
	/* Generation of the last victim whose destroy_qp has returned. */
	u32 destroyed;
	atomic64_t completions;
	atomic64_t victim_polled;
	/* Neighbour completions lost, reordered, failed or not reposted. */
	atomic64_t bad;
	/* Victim completions polled after their destroy_qp returned. */
	atomic64_t late;
};

static int kb_ud_to_rts(struct ib_qp *qp)
{
	static const struct shca_ktest_conn conn = { .qkey = KB_QKEY };

	return shca_ktest_qp_to_rts(qp, NULL, 0, &conn);
}

static struct ib_qp *kb_ud_qp(struct ib_pd *pd, struct ib_cq *scq,
			      struct ib_cq *rcq, u32 wr)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.send_cq = scq,
		.recv_cq = rcq,
		.port_num = 1,
	};

	return ib_create_qp(pd, &init);
}

static int kb_send(struct kb_load *l, struct ib_qp *qp, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = l->dma,
		.length = KB_MSG,
		.lkey = l->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		},
		.ah = l->ah,
		.remote_qpn = l->sink->qp_num,
		.remote_qkey = KB_QKEY,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static int kb_neigh_send(struct kb_load *l, u32 i)
{
	return kb_send(l, l->nb[i], (u64)i << 32 | l->post_seq[i]++);
}

/* One polled completion; @destroyed was read before the poll. */
static void kb_load_wc(struct kb_load *l, const struct ib_wc *wc,
		       u32 destroyed)
{
	u32 i = upper_32_bits(wc->wr_id), seq = lower_32_bits(wc->wr_id);

	if (wc->wr_id & KB_WR_VICTIM) {
		if (seq <= destroyed)
			atomic64_inc(&l->late);
		else
			atomic64_inc(&l->victim_polled);
		return;
	}
	if (i >= l->nr || wc->status != IB_WC_SUCCESS ||
	    seq != l->done_seq[i]) {
		atomic64_inc(&l->bad);
		if (i >= l->nr)
			return;
	}
	l->done_seq[i] = seq + 1;
	atomic64_inc(&l->completions);
	if (kb_neigh_send(l, i))
		atomic64_inc(&l->bad);
}

static int kb_poller(void *data)
{
	struct kb_load *l = data;
	struct ib_wc wc[16];
	u32 destroyed;
	int n, i;

	while (!kthread_should_stop()) {
		/* Whatever was destroyed before this poll is swept. */
		destroyed = smp_load_acquire(&l->destroyed);
		n = ib_poll_cq(l->cq, ARRAY_SIZE(wc), wc);
		for (i = 0; i < n; i++)
			kb_load_wc(l, &wc[i], destroyed);
		if (n <= 0)
			cond_resched();
	}
	return 0;
}

static void kb_load_fini(struct kb_load *l)
{
	u32 i;

	if (l->poller)
		kthread_stop(l->poller);
	for (i = 0; l->nb && i < l->nr; i++)
		if (!IS_ERR_OR_NULL(l->nb[i]))
			ib_destroy_qp(l->nb[i]);
	if (!IS_ERR_OR_NULL(l->ah))
		rdma_destroy_ah(l->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(l->sink))
		ib_destroy_qp(l->sink);
	if (!IS_ERR_OR_NULL(l->sink_cq))
		ib_free_cq(l->sink_cq);
	if (l->victim_cq != l->cq && !IS_ERR_OR_NULL(l->victim_cq))
		ib_free_cq(l->victim_cq);
	if (!IS_ERR_OR_NULL(l->cq))
		ib_free_cq(l->cq);
	if (l->buf) {
		ib_dma_unmap_single(l->dev, l->dma, PAGE_SIZE, DMA_TO_DEVICE);
		kfree(l->buf);
	}
	if (!IS_ERR_OR_NULL(l->pd))
		ib_dealloc_pd(l->pd);
	kfree(l->nb);
	kfree(l->post_seq);
	kfree(l->done_seq);
}

/* The AH every sender uses: to the sink, on the same port. */
static int kb_load_ah(struct kb_load *l)
{
	l->ah = shca_ktest_create_ah(l->pd, l->dev);
	return PTR_ERR_OR_ZERO(l->ah);
}

static int kb_load_init(struct kb_load *l, struct ib_device *dev, u32 nr,
			bool shared)
{
	int err;
	u32 i, k;

	l->dev = dev;
	l->nr = nr;
	l->nb = kcalloc(nr, sizeof(*l->nb), GFP_KERNEL);
	l->post_seq = kcalloc(nr, sizeof(*l->post_seq), GFP_KERNEL);
	l->done_seq = kcalloc(nr, sizeof(*l->done_seq), GFP_KERNEL);
	l->buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!l->nb || !l->post_seq || !l->done_seq || !l->buf)
		return -ENOMEM;
	l->dma = ib_dma_map_single(dev, l->buf, PAGE_SIZE, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, l->dma)) {
		kfree(l->buf);
		l->buf = NULL;
		return -ENOMEM;
	}
	l->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(l->pd))
		return PTR_ERR(l->pd);
	l->cq = ib_alloc_cq(dev, NULL, (nr + 1) * KB_INFLIGHT * 2, 0,
			    IB_POLL_DIRECT);
	if (IS_ERR(l->cq))
		return PTR_ERR(l->cq);
	l->sink_cq = ib_alloc_cq(dev, NULL, 1, 0, IB_POLL_DIRECT);
	if (IS_ERR(l->sink_cq))
		return PTR_ERR(l->sink_cq);
	l->victim_cq = shared ? l->cq :
		ib_alloc_cq(dev, NULL, KB_INFLIGHT * 2, 0, IB_POLL_DIRECT);
	if (IS_ERR(l->victim_cq))
		return PTR_ERR(l->victim_cq);
	l->sink = kb_ud_qp(l->pd, l->sink_cq, l->sink_cq, 1);
	if (IS_ERR(l->sink))
		return PTR_ERR(l->sink);
	err = kb_ud_to_rts(l->sink);
	if (!err)
		err = kb_load_ah(l);
	for (i = 0; !err && i < nr; i++) {
		l->nb[i] = kb_ud_qp(l->pd, l->cq, l->cq, KB_INFLIGHT);
		if (IS_ERR(l->nb[i]))
			return PTR_ERR(l->nb[i]);
		err = kb_ud_to_rts(l->nb[i]);
		for (k = 0; !err && k < KB_INFLIGHT; k++)
			err = kb_neigh_send(l, i);
	}
	return err;
}

/* Where a victim cycle's time goes, summed over the cycles. */
struct kb_cycle {
	u64 total;
	u64 create;
	u64 to_rts;
	u64 post;
};

/*
 * The control's cycle: take the CPU for @burn_ns, as a victim cycle takes
 * it, without a device in sight.
 */
static void kb_burn(u64 burn_ns, u64 *ns, struct kb_cycle *cyc)
{
	u64 start = ktime_get_ns(), now;

	do {
		cpu_relax();
		now = ktime_get_ns();
	} while (now - start < burn_ns);
	*ns = now - start;
	cyc->total += *ns;
}

/*
 * Create a victim, give it traffic, destroy it: @ns is the destroy_qp
 * latency; @cyc sums the cycle's parts.
 */
static int kb_victim(struct kb_load *l, u32 gen, u64 *ns, struct kb_cycle *cyc)
{
	u64 t0, t1, start = ktime_get_ns();
	struct ib_qp *qp;
	int err;
	u32 k;

	qp = kb_ud_qp(l->pd, l->victim_cq, l->victim_cq, KB_INFLIGHT);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	t0 = ktime_get_ns();
	cyc->create += t0 - start;
	err = kb_ud_to_rts(qp);
	t1 = ktime_get_ns();
	cyc->to_rts += t1 - t0;
	for (k = 0; !err && k < KB_INFLIGHT; k++)
		err = kb_send(l, qp, KB_WR_VICTIM | gen);
	t0 = ktime_get_ns();
	cyc->post += t0 - t1;
	ib_destroy_qp(qp);
	*ns = ktime_get_ns() - t0;
	cyc->total += ktime_get_ns() - start;
	/* Its CQEs are swept: the poller may not see one from here on. */
	smp_store_release(&l->destroyed, gen);
	return err;
}

/* Where the victims' CQEs go, or no victims at all. */
enum kb_mode {
	KB_SHARED,
	KB_OWN,
	KB_BURN,
};

static const char *const kb_mode_names[] = {
	[KB_SHARED]	= "shared",
	[KB_OWN]	= "own",
	[KB_BURN]	= "burn",
};

static int kb_destroy(struct ib_device *dev, u32 nr, u32 period_us, u32 ms,
		      enum kb_mode mode, u64 burn_ns)
{
	u64 base, loaded, t0, t_end, next, now, *lat;
	struct kb_cycle cyc = {};
	struct kb_load l = {};
	u32 n = 0, gen = 0;
	int err;

	if (!nr || nr > KB_MAX_NEIGH || !period_us || period_us > USEC_PER_SEC ||
	    !ms || ms > KB_MAX_MS ||
	    (mode == KB_BURN && !burn_ns) || (mode != KB_BURN && burn_ns) ||
	    burn_ns > (u64)period_us * NSEC_PER_USEC)
		return -EINVAL;
	lat = kvcalloc(KB_MAX_LAT, sizeof(*lat), GFP_KERNEL);
	if (!lat)
		return -ENOMEM;
	err = kb_load_init(&l, dev, nr, mode != KB_OWN);
	if (err)
		goto out;
	l.poller = kthread_run(kb_poller, &l, "shca_kbench");
	if (IS_ERR(l.poller)) {
		err = PTR_ERR(l.poller);
		l.poller = NULL;
		goto out;
	}

	/* The base rate: the neighbours alone. */
	msleep(ms);
	base = atomic64_read(&l.completions);

	/* The loaded rate: a victim destroyed every period. */
	t0 = ktime_get_ns();
	t_end = t0 + (u64)ms * NSEC_PER_MSEC;
	next = t0;
	while ((now = ktime_get_ns()) < t_end && n < KB_MAX_LAT) {
		if (now < next) {
			fsleep(div_u64(next - now, NSEC_PER_USEC));
			continue;
		}
		next += (u64)period_us * NSEC_PER_USEC;
		if (mode == KB_BURN) {
			kb_burn(burn_ns, &lat[n++], &cyc);
			continue;
		}
		err = kb_victim(&l, ++gen, &lat[n++], &cyc);
		if (err)
			break;
	}
	loaded = atomic64_read(&l.completions) - base;
	t_end = ktime_get_ns();
	kthread_stop(l.poller);
	l.poller = NULL;
	if (err)
		goto out;

	base = div64_u64(base * MSEC_PER_SEC, ms);
	loaded = div64_u64(loaded * NSEC_PER_SEC, t_end - t0);
	sort(lat, n, sizeof(*lat), kb_cmp_u64, NULL);
	kb_add_result("destroy cq=%s neighbours=%u period_us=%u ms=%u",
		      kb_mode_names[mode], nr, period_us, ms);
	kb_add_result(" destroys=%u destroys_per_s=%llu cycle_ns=%llu", n,
		      div64_u64((u64)n * NSEC_PER_SEC, t_end - t0),
		      n ? div64_u64(cyc.total, n) : 0);
	kb_add_result(" create_ns=%llu to_rts_ns=%llu post_ns=%llu",
		      n ? div64_u64(cyc.create, n) : 0,
		      n ? div64_u64(cyc.to_rts, n) : 0,
		      n ? div64_u64(cyc.post, n) : 0);
	kb_add_result(" lat_ns_median=%llu lat_ns_p99=%llu lat_ns_max=%llu",
		      kb_pct(lat, n, 50), kb_pct(lat, n, 99),
		      n ? lat[n - 1] : 0);
	kb_add_result(" base_per_s=%llu loaded_per_s=%llu drop_permille=%lld",
		      base, loaded,
		      base ? div64_s64(((s64)base - (s64)loaded) * 1000,
				       (s64)base) : 0);
	kb_add_result(" victim_polled=%lld bad=%lld late=%lld\n",
		      atomic64_read(&l.victim_polled),
		      atomic64_read(&l.bad), atomic64_read(&l.late));
out:
	kb_load_fini(&l);
	kvfree(lat);
	return err;
}

/* ---- hold ------------------------------------------------------------ */

/* What "hold" keeps until "release" or until its device goes. */
static struct {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_cq **cqs;
	struct ib_qp **qps;
	u32 nr;
} kb_held;

static void kb_release(void)
{
	u32 i;

	lockdep_assert_held(&kb_lock);
	for (i = 0; i < kb_held.nr; i++) {
		if (kb_held.qps && !IS_ERR_OR_NULL(kb_held.qps[i]))
			ib_destroy_qp(kb_held.qps[i]);
		if (kb_held.cqs && !IS_ERR_OR_NULL(kb_held.cqs[i]))
			ib_destroy_cq(kb_held.cqs[i]);
	}
	if (!IS_ERR_OR_NULL(kb_held.cq))
		ib_free_cq(kb_held.cq);
	if (!IS_ERR_OR_NULL(kb_held.pd))
		ib_dealloc_pd(kb_held.pd);
	kvfree(kb_held.qps);
	kvfree(kb_held.cqs);
	memset(&kb_held, 0, sizeof(kb_held));
}

static int kb_hold(struct ib_device *dev, const char *what, u32 count,
		   u32 size)
{
	struct ib_cq_init_attr attr = { .cqe = size };
	bool qp = !strcmp(what, "qp");
	u32 i;

	lockdep_assert_held(&kb_lock);
	if ((!qp && strcmp(what, "cq")) || !count || count > KB_MAX_HOLD ||
	    !size)
		return -EINVAL;
	if (kb_held.dev)
		return -EBUSY;
	kb_held.dev = dev;
	if (qp) {
		kb_held.qps = kvcalloc(count, sizeof(*kb_held.qps), GFP_KERNEL);
		if (!kb_held.qps)
			goto nomem;
		kb_held.pd = ib_alloc_pd(dev, 0);
		if (IS_ERR(kb_held.pd))
			goto err;
		kb_held.cq = ib_alloc_cq(dev, NULL, 1, 0, IB_POLL_DIRECT);
		if (IS_ERR(kb_held.cq))
			goto err;
	} else {
		kb_held.cqs = kvcalloc(count, sizeof(*kb_held.cqs), GFP_KERNEL);
		if (!kb_held.cqs)
			goto nomem;
	}
	for (i = 0; i < count; i++) {
		kb_held.nr = i + 1;
		if (qp) {
			kb_held.qps[i] = kb_ud_qp(kb_held.pd, kb_held.cq,
						  kb_held.cq, size);
			if (IS_ERR(kb_held.qps[i]))
				goto err;
		} else {
			kb_held.cqs[i] = ib_create_cq(dev, NULL, NULL, NULL,
						      &attr);
			if (IS_ERR(kb_held.cqs[i]))
				goto err;
		}
		cond_resched();
	}
	kb_add_result("hold %s=%u size=%u\n", what, count, size);
	return 0;
err:
	ibdev_warn(dev, "shca_kbench: hold %s %u %u failed at %u\n", what,
		   count, size, kb_held.nr);
	kb_release();
	return -EIO;
nomem:
	kb_release();
	return -ENOMEM;
}

/* ---- commands -------------------------------------------------------- */

/* Parse @n unsigned numbers from @argv. */
static int kb_nums(char **argv, u32 *v, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = kstrtou32(argv[i], 0, &v[i]);
		if (err)
			return err;
	}
	return 0;
}

/* The victims' mode of a destroy command, and the spin of a burn. */
static int kb_destroy_mode(int argc, char **argv, enum kb_mode *mode,
			   u64 *burn_ns)
{
	int m;

	*mode = KB_SHARED;
	*burn_ns = 0;
	if (argc == 5)
		return 0;
	m = match_string(kb_mode_names, ARRAY_SIZE(kb_mode_names), argv[5]);
	if (m < 0 || argc != (m == KB_BURN ? 7 : 6))
		return -EINVAL;
	*mode = m;
	return m == KB_BURN ? kstrtou64(argv[6], 0, burn_ns) : 0;
}

static int kb_run_dev(const char *name, int argc, char **argv)
{
	enum kb_mode mode = KB_SHARED;
	struct ib_device *dev;
	u64 burn_ns = 0;
	u32 v[3];
	int err;

	lockdep_assert_held(&kb_lock);
	if (!strcmp(argv[0], "destroy") && argc >= 5 && argc <= 7)
		err = kb_destroy_mode(argc, argv, &mode, &burn_ns) ?:
		      kb_nums(argv + 2, v, 3);
	else if (!strcmp(argv[0], "hold") && argc == 5)
		err = kb_nums(argv + 3, v, 2);
	else
		return -EINVAL;
	if (err)
		return err;
	dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		return -ENODEV;
	if (argv[0][0] == 'd')
		err = kb_destroy(dev, v[0], v[1], v[2], mode, burn_ns);
	else
		err = kb_hold(dev, argv[2], v[0], v[1]);
	ib_device_put(dev);
	return err;
}

static int kb_run(int argc, char **argv)
{
	u32 v[4];
	int err;

	lockdep_assert_held(&kb_lock);
	kb_result[0] = '\0';
	if (!strcmp(argv[0], "sweep") && argc == 5) {
		err = kb_nums(argv + 1, v, 4);
		return err ?: kb_sweep(v[0], v[1], v[2], v[3]);
	}
	if (!strcmp(argv[0], "copy") && argc == 3) {
		err = kb_nums(argv + 1, v, 2);
		return err ?: kb_copy(v[0], v[1]);
	}
	if (!strcmp(argv[0], "release") && argc == 1) {
		kb_release();
		kb_add_result("release\n");
		return 0;
	}
	if (argc < 2)
		return -EINVAL;
	return kb_run_dev(argv[1], argc, argv);
}

static ssize_t kb_run_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[KB_CMD_LEN], **argv;
	int argc, err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	argv = argv_split(GFP_KERNEL, buf, &argc);
	if (!argv)
		return -ENOMEM;
	err = -EINVAL;
	if (argc > 0) {
		mutex_lock(&kb_lock);
		err = kb_run(argc, argv);
		mutex_unlock(&kb_lock);
	}
	argv_free(argv);
	return err ?: len;
}

static const struct file_operations kb_run_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kb_run_write,
};

static ssize_t kb_result_read(struct file *file, char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char buf[KB_RESULT_LEN];

	mutex_lock(&kb_lock);
	strscpy(buf, kb_result, sizeof(buf));
	mutex_unlock(&kb_lock);
	return simple_read_from_buffer(ubuf, len, ppos, buf, strlen(buf));
}

static const struct file_operations kb_result_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kb_result_read,
	.llseek = default_llseek,
};

/* A device going away takes what "hold" keeps on it. */
static int kb_add(struct ib_device *dev)
{
	return 0;
}

static void kb_remove(struct ib_device *dev, void *data)
{
	mutex_lock(&kb_lock);
	if (kb_held.dev == dev)
		kb_release();
	mutex_unlock(&kb_lock);
}

static struct ib_client kb_client = {
	.name = "shca_kbench",
	.add = kb_add,
	.remove = kb_remove,
};

static int __init kb_init(void)
{
	int err;

	err = ib_register_client(&kb_client);
	if (err)
		return err;
	kb_debugfs = debugfs_create_dir("shca_kbench", NULL);
	debugfs_create_file("run", 0200, kb_debugfs, NULL, &kb_run_fops);
	debugfs_create_file("result", 0400, kb_debugfs, NULL, &kb_result_fops);
	return 0;
}

static void __exit kb_exit(void)
{
	debugfs_remove_recursive(kb_debugfs);
	ib_unregister_client(&kb_client);
	mutex_lock(&kb_lock);
	kb_release();
	mutex_unlock(&kb_lock);
}

module_init(kb_init);
module_exit(kb_exit);
