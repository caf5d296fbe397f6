// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_soak: one traffic process of the soak (scripts/guest/soak.sh).
 *
 *   shca_soak DEV SEED ID SECONDS STATS
 *
 * Opens DEV (an shca device with an IPv4 GID at index 3) and runs, for
 * SECONDS or until SIGTERM, randomised traffic on six lanes in loopback.
 * A lane is a pair of QPs, one sending and one receiving: RC, UC or UD,
 * with a receive queue of its own or (two RC lanes) one shared SRQ, on two
 * CQs that the lanes share, some with the send and receive side on
 * different CQs.  One CQ runs in event mode.  RC lanes send, send with
 * immediate, write, write with immediate, read and fetch-and-add; UC lanes
 * the sends and writes; UD lanes the sends.
 *
 * Every completion is checked.  The wr_id names the process, the lane, the
 * lane's epoch and a sequence number, and so does the payload (and the
 * immediate data of a write with immediate): each expected completion must
 * come exactly once, in order on its lane, on the QP it names, with the
 * data it should carry.  Between the completions, at random:
 *
 * - a lane is destroyed (and its MR deregistered) or reset mid-traffic,
 *   with its completions unpolled on CQs its neighbours share; its epoch
 *   moves on, and a completion of the old epoch polled after the destroy
 *   or modify returned is an error;
 * - garbage goes into the rings of a QP pair kept for it on a shared CQ
 *   (an unknown opcode, bad SGEs, inline data too long, a send producer
 *   index out of range, a receive WQE with too many SGEs), and that QP must
 *   be in error within a bound, its neighbours untouched; or a throwaway
 *   CQ gets a random consumer index.
 *
 * The counters go to STATS ("name value" lines, replaced every quarter
 * second, so a process killed with SIGKILL leaves its figures).  Errors
 * are printed on stderr and counted.  Exit status: 0 clean, 3 the device
 * went away (rdma link delete, netdev deleted), 1 errors.  An error found
 * while the device is going away is the removal's, not an error.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca.h"
#include "shca_cq_sweep.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define GIDX		3
#define NLANES		6
#define WINDOW		16	/* sends in flight per lane */
#define SLOTS		32	/* payload slots per lane, > WINDOW */
#define SLOT_SZ		256
#define RQ_BUFS		64	/* receives a lane with its own RQ keeps */
#define RX_AHEAD	48	/* receive-consuming ops in flight, < RQ_BUFS */
#define SRQ_AHEAD	24	/* the same, per SRQ lane */
#define SRQ_BUFS	1024	/* SRQ buffers, reused round robin */
#define CQ_DEPTH	2048
#define QKEY		0x11111111
#define STALL_SEC	60	/* no completion for this long: lost */
#define GRH		40

#define M_SEND		0xa5ULL
#define M_RECV		0x5aULL
#define M_SRQ		0x5bULL
#define M_GARBAGE	0x66ULL
#define P_MAGIC		0x50414b53u

/* Per-lane buffer layout. */
#define OFF_SRC		0
#define OFF_RECV	(OFF_SRC + SLOTS * SLOT_SZ)
#define OFF_WRITE	(OFF_RECV + RQ_BUFS * SLOT_SZ)
#define OFF_RSRC	(OFF_WRITE + SLOTS * SLOT_SZ)
#define OFF_RDST	(OFF_RSRC + SLOTS * SLOT_SZ)
#define OFF_FA		(OFF_RDST + SLOTS * SLOT_SZ)
#define OFF_FARES	(OFF_FA + 64)
#define LANE_BUF	(OFF_FARES + SLOTS * 8 + 4096)

enum op { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_FA, NOPS };

/* The counters, written out as "name value" lines. */
struct stats {
	uint64_t op_send;
	uint64_t op_send_imm;
	uint64_t op_send_inline;
	uint64_t op_write;
	uint64_t op_write_imm;
	uint64_t op_read;
	uint64_t op_fetch_add;
	uint64_t op_recv_post;
	uint64_t op_srq_recv_post;
	uint64_t op_qp_create;
	uint64_t op_qp_destroy;
	uint64_t op_qp_reset;
	uint64_t op_cq_create;
	uint64_t op_cq_destroy;
	uint64_t op_srq_create;
	uint64_t op_srq_destroy;
	uint64_t op_mr_reg;
	uint64_t op_mr_dereg;
	uint64_t op_pd_alloc;
	uint64_t op_ctx_open;
	uint64_t op_quiet;
	uint64_t cq_events;
	uint64_t cqe_checked_send;
	uint64_t cqe_checked_recv;
	uint64_t cqe_garbage_qp;
	uint64_t cqe_swept_at_teardown;
	uint64_t cqe_unpolled_at_teardown;
	uint64_t cqe_neighbours_at_teardown;
	uint64_t fault_destroy_mid_traffic;
	uint64_t fault_reset_mid_traffic;
	uint64_t fault_garbage_opcode;
	uint64_t fault_garbage_sge;
	uint64_t fault_garbage_inline;
	uint64_t fault_garbage_sq_pi;
	uint64_t fault_garbage_recv_wqe;
	uint64_t fault_garbage_cq_ci;
	uint64_t errors;
};

static struct stats st;

static const struct {
	const char *name;
	size_t off;
} stat_tab[] = {
	{ "op_send", offsetof(struct stats, op_send) },
	{ "op_send_imm", offsetof(struct stats, op_send_imm) },
	{ "op_send_inline", offsetof(struct stats, op_send_inline) },
	{ "op_write", offsetof(struct stats, op_write) },
	{ "op_write_imm", offsetof(struct stats, op_write_imm) },
	{ "op_read", offsetof(struct stats, op_read) },
	{ "op_fetch_add", offsetof(struct stats, op_fetch_add) },
	{ "op_recv_post", offsetof(struct stats, op_recv_post) },
	{ "op_srq_recv_post", offsetof(struct stats, op_srq_recv_post) },
	{ "op_qp_create", offsetof(struct stats, op_qp_create) },
	{ "op_qp_destroy", offsetof(struct stats, op_qp_destroy) },
	{ "op_qp_reset", offsetof(struct stats, op_qp_reset) },
	{ "op_cq_create", offsetof(struct stats, op_cq_create) },
	{ "op_cq_destroy", offsetof(struct stats, op_cq_destroy) },
	{ "op_srq_create", offsetof(struct stats, op_srq_create) },
	{ "op_srq_destroy", offsetof(struct stats, op_srq_destroy) },
	{ "op_mr_reg", offsetof(struct stats, op_mr_reg) },
	{ "op_mr_dereg", offsetof(struct stats, op_mr_dereg) },
	{ "op_pd_alloc", offsetof(struct stats, op_pd_alloc) },
	{ "op_ctx_open", offsetof(struct stats, op_ctx_open) },
	{ "op_quiet", offsetof(struct stats, op_quiet) },
	{ "cq_events", offsetof(struct stats, cq_events) },
	{ "cqe_checked_send", offsetof(struct stats, cqe_checked_send) },
	{ "cqe_checked_recv", offsetof(struct stats, cqe_checked_recv) },
	{ "cqe_garbage_qp", offsetof(struct stats, cqe_garbage_qp) },
	{ "cqe_swept_at_teardown", offsetof(struct stats, cqe_swept_at_teardown) },
	{ "cqe_unpolled_at_teardown", offsetof(struct stats, cqe_unpolled_at_teardown) },
	{ "cqe_neighbours_at_teardown", offsetof(struct stats, cqe_neighbours_at_teardown) },
	{ "fault_destroy_mid_traffic", offsetof(struct stats, fault_destroy_mid_traffic) },
	{ "fault_reset_mid_traffic", offsetof(struct stats, fault_reset_mid_traffic) },
	{ "fault_garbage_opcode", offsetof(struct stats, fault_garbage_opcode) },
	{ "fault_garbage_sge", offsetof(struct stats, fault_garbage_sge) },
	{ "fault_garbage_inline", offsetof(struct stats, fault_garbage_inline) },
	{ "fault_garbage_sq_pi", offsetof(struct stats, fault_garbage_sq_pi) },
	{ "fault_garbage_recv_wqe", offsetof(struct stats, fault_garbage_recv_wqe) },
	{ "fault_garbage_cq_ci", offsetof(struct stats, fault_garbage_cq_ci) },
	{ "errors", offsetof(struct stats, errors) },
};

struct hdr {
	uint32_t magic;
	uint8_t worker, lane, epoch, op;
	uint32_t seq, rseq, len;
};

struct lane {
	enum ibv_qp_type type;
	int srq;			/* receives from the SRQ */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *tx, *rx;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	char *buf;
	uint8_t epoch;
	uint32_t seq, done;		/* sends posted, sends completed */
	uint32_t rseq, rnext;		/* receive-consuming sends, received */
	uint64_t fa_next;		/* what the next fetch-and-add returns */
	struct { uint8_t op; uint32_t len; uint64_t fa; } rec[SLOTS];
};

static const char *devname;
static unsigned int me;
static const char *stats_path;
static sig_atomic_t stopping;	/* set by SIGTERM */
static int fatal_seen;
static uint64_t rng;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *chan;
static struct ibv_cq *cq[2];
static struct ibv_srq *srq;
static struct ibv_mr *srq_mr;
static char *srq_buf;
static uint32_t srq_next;
static union ibv_gid gid;
static struct lane lanes[NLANES];

/* The pair garbage goes to, on cq[0] beside the lanes. */
static struct {
	struct ibv_qp *tx, *rx;
	struct ibv_mr *mr;
	char *buf;
	int armed;			/* garbage written, QP not yet reset */
} g;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t rndn(uint32_t n)
{
	return rnd() % n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void write_stats(void)
{
	char tmp[512], line[96];
	size_t i;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", stats_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	for (i = 0; i < ARRAY_SIZE(stat_tab); i++) {
		uint64_t v;
		int n;

		memcpy(&v, (char *)&st + stat_tab[i].off, sizeof(v));
		n = snprintf(line, sizeof(line), "%s %llu\n", stat_tab[i].name,
			     (unsigned long long)v);

		if (write(fd, line, n) != n)
			break;
	}
	close(fd);
	rename(tmp, stats_path);
}

static void finish(int status)
{
	write_stats();
	exit(status);
}

static void read_async(void)
{
	struct pollfd pfd = { ctx->async_fd, POLLIN, 0 };
	struct ibv_async_event ev;
	int i;

	while (poll(&pfd, 1, 0) == 1 && !ibv_get_async_event(ctx, &ev)) {
		switch (ev.event_type) {
		case IBV_EVENT_DEVICE_FATAL:
			fatal_seen = 1;
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			for (i = 0; i < NLANES; i++)
				if (ev.element.qp == lanes[i].tx ||
				    ev.element.qp == lanes[i].rx) {
					fprintf(stderr,
						"soak %u: error: lane %d QP %u got error event %s\n",
						me, i, ev.element.qp->qp_num,
						ibv_event_type_str(ev.event_type));
					st.errors++;
				}
			break;
		case IBV_EVENT_CQ_ERR:
			if (ev.element.cq == cq[0] || ev.element.cq == cq[1]) {
				fprintf(stderr, "soak %u: error: CQ error event\n",
					me);
				st.errors++;
			}
			break;
		default:
			break;
		}
		ibv_ack_async_event(&ev);
	}
}

/* The device went away under the process: stop, that is no error. */
static int device_gone(void)
{
	struct ibv_port_attr pa;

	if (fatal_seen)
		return 1;
	read_async();
	return fatal_seen || ibv_query_port(ctx, 1, &pa) != 0;
}

static void gone_or_die(const char *what)
{
	int e = errno;

	if (device_gone())
		finish(3);
	fprintf(stderr, "soak %u: error: %s: %s\n", me, what, strerror(e));
	st.errors++;
	finish(1);
}

static void wrong(const char *fmt, ...)
{
	va_list ap;

	if (device_gone())
		finish(3);
	fprintf(stderr, "soak %u: error: ", me);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	st.errors++;
	if (st.errors > 20)
		finish(1);
}

/* --- objects ------------------------------------------------------------ */

static struct ibv_mr *reg(void *buf, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC);

	if (!mr)
		gone_or_die("ibv_reg_mr");
	st.op_mr_reg++;
	return mr;
}

static void dereg(struct ibv_mr *mr)
{
	errno = ibv_dereg_mr(mr);
	if (errno)
		gone_or_die("ibv_dereg_mr");
	st.op_mr_dereg++;
}

static struct ibv_qp *new_qp(enum ibv_qp_type type, struct ibv_cq *scq,
			     struct ibv_cq *rcq, struct ibv_srq *s)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq, .recv_cq = rcq, .srq = s, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = s ? 0 : RQ_BUFS,
			 .max_send_sge = 4, .max_recv_sge = s ? 0 : 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		gone_or_die("ibv_create_qp");
	st.op_qp_create++;
	return qp;
}

static void destroy_qp(struct ibv_qp *qp)
{
	errno = ibv_destroy_qp(qp);
	if (errno)
		gone_or_die("ibv_destroy_qp");
	st.op_qp_destroy++;
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	errno = ibv_modify_qp(qp, a, mask);
	if (errno)
		gone_or_die("ibv_modify_qp");
}

static void reset_qp(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	modify(qp, &a, IBV_QP_STATE);
	st.op_qp_reset++;
}

/* RESET -> INIT -> RTR -> RTS, talking to @dest on this device. */
static void connect_qp(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	enum ibv_qp_type t = qp->qp_type;

	if (t == IBV_QPT_UD) {
		a.qkey = QKEY;
		modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
		       IBV_QP_PORT | IBV_QP_QKEY);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		modify(qp, &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		return;
	}
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (t == IBV_QPT_RC)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = GIDX;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (t == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	} else {
		modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	if (t == IBV_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
		       IBV_QP_MAX_QP_RD_ATOMIC);
	} else {
		modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		gone_or_die("ibv_query_qp");
	return a.qp_state;
}

/* --- posting ------------------------------------------------------------ */

static uint64_t send_id(int l, uint32_t seq)
{
	return M_SEND << 56 | (uint64_t)(me & 0xff) << 48 |
	       (uint64_t)l << 40 | (uint64_t)lanes[l].epoch << 32 | seq;
}

static uint32_t imm_of(int l, uint32_t rseq)
{
	return (uint32_t)l << 28 | (uint32_t)lanes[l].epoch << 20 |
	       (rseq & 0xfffff);
}

static void fill(char *p, int l, uint8_t op, uint32_t seq, uint32_t rseq,
		 uint32_t len)
{
	struct hdr h = { P_MAGIC, me & 0xff, l, lanes[l].epoch, op, seq, rseq,
			 len };
	uint32_t i;

	memcpy(p, &h, sizeof(h));
	for (i = sizeof(h); i < len; i++)
		p[i] = (char)(seq * 31 + i * 7 + l);
}

/* Whether @p holds what fill() wrote for the given values. */
static int filled(const char *p, int l, uint8_t epoch, uint8_t op,
		  uint32_t seq, uint32_t rseq, uint32_t len)
{
	struct hdr h;
	uint32_t i;

	memcpy(&h, p, sizeof(h));
	if (h.magic != P_MAGIC || h.worker != (me & 0xff) || h.lane != l ||
	    h.epoch != epoch || h.op != op || h.seq != seq ||
	    h.rseq != rseq || h.len != len)
		return 0;
	for (i = sizeof(h); i < len; i++)
		if (p[i] != (char)(seq * 31 + i * 7 + l))
			return 0;
	return 1;
}

static void post_lane_recv(int l, uint32_t buf)
{
	struct lane *ln = &lanes[l];
	struct ibv_sge sge = { (uintptr_t)ln->buf + OFF_RECV + buf * SLOT_SZ,
			       SLOT_SZ, ln->mr->lkey };
	struct ibv_recv_wr wr = {
		.wr_id = M_RECV << 56 | (uint64_t)(me & 0xff) << 48 |
			 (uint64_t)l << 40 | (uint64_t)ln->epoch << 32 | buf,
		.sg_list = &sge, .num_sge = 1,
	}, *bad;

	errno = ibv_post_recv(ln->rx, &wr, &bad);
	if (errno)
		gone_or_die("ibv_post_recv");
	st.op_recv_post++;
}

static uint32_t srq_posted(void)
{
	struct shca_srq *s = container_of(srq, struct shca_srq, vsrq.srq);
	uint32_t n;

	pthread_spin_lock(&s->lock);
	n = (1U << s->log_depth) - s->nr_free;
	pthread_spin_unlock(&s->lock);
	return n;
}

static void srq_top_up(void)
{
	struct shca_srq *s = container_of(srq, struct shca_srq, vsrq.srq);
	uint32_t want = (1U << s->log_depth) - 8;

	while (srq_posted() < want) {
		uint32_t b = srq_next++ % SRQ_BUFS;
		struct ibv_sge sge = { (uintptr_t)srq_buf + b * SLOT_SZ,
				       SLOT_SZ, srq_mr->lkey };
		struct ibv_recv_wr wr = {
			.wr_id = M_SRQ << 56 | (uint64_t)(me & 0xff) << 48 | b,
			.sg_list = &sge, .num_sge = 1,
		}, *bad;

		errno = ibv_post_srq_recv(srq, &wr, &bad);
		if (errno)
			gone_or_die("ibv_post_srq_recv");
		st.op_srq_recv_post++;
	}
}

static int can_post(int l)
{
	struct lane *ln = &lanes[l];

	return ln->seq - ln->done < WINDOW;
}

static void post_one(int l)
{
	struct lane *ln = &lanes[l];
	uint32_t seq = ln->seq, slot = seq % SLOTS;
	uint32_t len = sizeof(struct hdr) + rndn(180);
	struct ibv_sge sge = { 0, len, ln->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = send_id(l, seq), .sg_list = &sge,
				  .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int consumes, ahead = ln->srq ? SRQ_AHEAD : RX_AHEAD;
	enum op op;
	char *p;

	switch (ln->type) {
	case IBV_QPT_RC:
		op = rndn(NOPS);
		break;
	case IBV_QPT_UC:
		op = rndn(OP_WRITE_IMM + 1);
		break;
	default:
		op = rndn(OP_SEND_IMM + 1);
		break;
	}
	consumes = op == OP_SEND || op == OP_SEND_IMM || op == OP_WRITE_IMM;
	if (consumes && ln->rseq - ln->rnext >= (uint32_t)ahead)
		op = ln->type == IBV_QPT_UD ? NOPS : OP_WRITE;
	if (op == NOPS)
		return;		/* a UD lane waits for its receiver */
	consumes = op == OP_SEND || op == OP_SEND_IMM || op == OP_WRITE_IMM;

	ln->rec[slot].op = op;
	ln->rec[slot].len = len;
	switch (op) {
	case OP_SEND:
	case OP_SEND_IMM:
		p = ln->buf + OFF_SRC + slot * SLOT_SZ;
		fill(p, l, op, seq, ln->rseq, len);
		sge.addr = (uintptr_t)p;
		wr.opcode = op == OP_SEND ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
		if (op == OP_SEND_IMM)
			wr.imm_data = htonl(imm_of(l, ln->rseq));
		if (len <= 64 && rndn(2)) {
			wr.send_flags |= IBV_SEND_INLINE;
			st.op_send_inline++;
		}
		if (ln->type == IBV_QPT_UD) {
			wr.wr.ud.ah = ln->ah;
			wr.wr.ud.remote_qpn = ln->rx->qp_num;
			wr.wr.ud.remote_qkey = QKEY;
		}
		if (op == OP_SEND)
			st.op_send++;
		else
			st.op_send_imm++;
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		p = ln->buf + OFF_SRC + slot * SLOT_SZ;
		fill(p, l, op, seq, ln->rseq, len);
		sge.addr = (uintptr_t)p;
		memset(ln->buf + OFF_WRITE + slot * SLOT_SZ, 0, SLOT_SZ);
		wr.opcode = op == OP_WRITE ? IBV_WR_RDMA_WRITE :
					     IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = (uintptr_t)ln->buf + OFF_WRITE +
					 slot * SLOT_SZ;
		wr.wr.rdma.rkey = ln->mr->rkey;
		if (op == OP_WRITE_IMM) {
			wr.imm_data = htonl(imm_of(l, ln->rseq));
			st.op_write_imm++;
		} else {
			st.op_write++;
		}
		break;
	case OP_READ:
		fill(ln->buf + OFF_RSRC + slot * SLOT_SZ, l, op, seq, 0, len);
		memset(ln->buf + OFF_RDST + slot * SLOT_SZ, 0, SLOT_SZ);
		sge.addr = (uintptr_t)ln->buf + OFF_RDST + slot * SLOT_SZ;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)ln->buf + OFF_RSRC +
					 slot * SLOT_SZ;
		wr.wr.rdma.rkey = ln->mr->rkey;
		st.op_read++;
		break;
	default:
		sge.addr = (uintptr_t)ln->buf + OFF_FARES + slot * 8;
		sge.length = 8;
		ln->rec[slot].len = 8;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = (uintptr_t)ln->buf + OFF_FA;
		wr.wr.atomic.rkey = ln->mr->rkey;
		wr.wr.atomic.compare_add = 1;
		ln->rec[slot].fa = ln->fa_next++;
		st.op_fetch_add++;
		break;
	}
	errno = ibv_post_send(ln->tx, &wr, &bad);
	if (errno)
		gone_or_die("ibv_post_send");
	ln->seq++;
	if (consumes)
		ln->rseq++;
}

/* --- checking ----------------------------------------------------------- */

static const enum ibv_wc_opcode wc_op[NOPS] = {
	IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ, IBV_WC_FETCH_ADD,
};

static void check_send(struct ibv_wc *wc)
{
	unsigned int l = wc->wr_id >> 40 & 0xff;
	uint8_t epoch = wc->wr_id >> 32 & 0xff;
	uint32_t seq = wc->wr_id & 0xffffffff, slot;
	struct lane *ln;
	uint64_t v;

	if ((wc->wr_id >> 48 & 0xff) != (me & 0xff) || l >= NLANES) {
		wrong("send completion with a foreign wr_id %#llx on QP %u",
		      (unsigned long long)wc->wr_id, wc->qp_num);
		return;
	}
	ln = &lanes[l];
	if (epoch != ln->epoch) {
		wrong("lane %u: QP %u: send of epoch %u polled after teardown (now %u)",
		      l, wc->qp_num, epoch, ln->epoch);
		return;
	}
	if (wc->qp_num != ln->tx->qp_num) {
		wrong("lane %u: send %u completed on QP %u, posted on QP %u",
		      l, seq, wc->qp_num, ln->tx->qp_num);
		return;
	}
	if (seq != ln->done) {
		wrong("lane %u: send completion %u, expected %u (%s)", l, seq,
		      ln->done, seq < ln->done ? "twice" : "one lost");
		return;
	}
	slot = seq % SLOTS;
	if (wc->status != IBV_WC_SUCCESS ||
	    wc->opcode != wc_op[ln->rec[slot].op]) {
		wrong("lane %u: send %u: status %s opcode %d, expected success opcode %d",
		      l, seq, ibv_wc_status_str(wc->status), wc->opcode,
		      wc_op[ln->rec[slot].op]);
		ln->done++;
		return;
	}
	ln->done++;
	st.cqe_checked_send++;
	switch (ln->rec[slot].op) {
	case OP_READ:
		if (wc->byte_len != ln->rec[slot].len ||
		    !filled(ln->buf + OFF_RDST + slot * SLOT_SZ, l, ln->epoch,
			    OP_READ, seq, 0, ln->rec[slot].len))
			wrong("lane %u: read %u brought the wrong data", l, seq);
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		/* An RC write's completion says the data is placed. */
		if (ln->type == IBV_QPT_RC &&
		    !filled(ln->buf + OFF_WRITE + slot * SLOT_SZ, l, ln->epoch,
			    ln->rec[slot].op, seq,
			    ((struct hdr *)(ln->buf + OFF_SRC +
					    slot * SLOT_SZ))->rseq,
			    ln->rec[slot].len))
			wrong("lane %u: write %u placed the wrong data", l, seq);
		break;
	case OP_FA:
		memcpy(&v, ln->buf + OFF_FARES + slot * 8, 8);
		if (v != ln->rec[slot].fa)
			wrong("lane %u: fetch-and-add %u returned %llu, expected %llu",
			      l, seq, (unsigned long long)v,
			      (unsigned long long)ln->rec[slot].fa);
		break;
	default:
		break;
	}
}

/* A receive for lane @l with the given epoch and receive sequence. */
static void check_recv_lane(struct ibv_wc *wc, unsigned int l, uint8_t epoch,
			    uint32_t rseq, const char *data)
{
	struct lane *ln;
	uint32_t off = 0;
	int imm_ok;
	struct hdr h;

	if (l >= NLANES) {
		wrong("receive for lane %u on QP %u", l, wc->qp_num);
		return;
	}
	ln = &lanes[l];
	if (epoch != ln->epoch) {
		wrong("lane %u: QP %u: receive of epoch %u polled after teardown (now %u)",
		      l, wc->qp_num, epoch, ln->epoch);
		return;
	}
	if (wc->qp_num != ln->rx->qp_num) {
		wrong("lane %u: receive %u completed on QP %u, expected QP %u",
		      l, rseq, wc->qp_num, ln->rx->qp_num);
		return;
	}
	if (ln->type == IBV_QPT_UD && wc->src_qp != ln->tx->qp_num)
		wrong("lane %u: UD receive from QP %u, sent by QP %u", l,
		      wc->src_qp, ln->tx->qp_num);
	if (rseq != (ln->rnext & 0xfffff)) {
		wrong("lane %u: receive %u, expected %u (%s)", l, rseq,
		      ln->rnext & 0xfffff,
		      rseq < (ln->rnext & 0xfffff) ? "twice" : "one lost");
		return;
	}
	ln->rnext++;
	st.cqe_checked_recv++;
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		return;		/* the data is checked at the sender */
	if (ln->type == IBV_QPT_UD)
		off = GRH;
	memcpy(&h, data + off, sizeof(h));
	imm_ok = !!(wc->wc_flags & IBV_WC_WITH_IMM);
	if (h.op != OP_SEND_IMM)
		imm_ok = !imm_ok;
	if (h.magic != P_MAGIC || wc->byte_len != off + h.len ||
	    !filled(data + off, l, epoch, h.op, h.seq, rseq, h.len) ||
	    !imm_ok)
		wrong("lane %u: receive %u: wrong data or length (%u bytes)",
		      l, rseq, wc->byte_len);
	else if (h.op == OP_SEND_IMM && ntohl(wc->imm_data) != imm_of(l, rseq))
		wrong("lane %u: receive %u: wrong immediate %#x", l, rseq,
		      ntohl(wc->imm_data));
}

static void check_recv(struct ibv_wc *wc, int from_srq)
{
	uint32_t b = wc->wr_id & 0xffffffff, imm;
	unsigned int l = wc->wr_id >> 40 & 0xff;
	uint8_t epoch = wc->wr_id >> 32 & 0xff;
	const char *data;
	struct hdr h;

	if ((wc->wr_id >> 48 & 0xff) != (me & 0xff) ||
	    b >= (from_srq ? SRQ_BUFS : RQ_BUFS)) {
		wrong("receive with a foreign wr_id %#llx on QP %u",
		      (unsigned long long)wc->wr_id, wc->qp_num);
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		wrong("receive on QP %u: status %s", wc->qp_num,
		      ibv_wc_status_str(wc->status));
		return;
	}
	if (from_srq)
		data = srq_buf + b * SLOT_SZ;
	else if (l < NLANES)
		data = lanes[l].buf + OFF_RECV + b * SLOT_SZ;
	else
		data = NULL;
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		imm = ntohl(wc->imm_data);
		if (!from_srq && (imm >> 28 != l ||
				  (uint8_t)(imm >> 20) != epoch)) {
			wrong("lane %u: a write's immediate %#x names another lane",
			      l, imm);
			return;
		}
		check_recv_lane(wc, imm >> 28, imm >> 20 & 0xff,
				imm & 0xfffff, data);
	} else if (wc->opcode == IBV_WC_RECV && data) {
		if (!from_srq && lanes[l].type == IBV_QPT_UD)
			memcpy(&h, data + GRH, sizeof(h));
		else
			memcpy(&h, data, sizeof(h));
		if (h.magic != P_MAGIC || (!from_srq && (h.lane != l ||
							 h.epoch != epoch))) {
			wrong("receive on QP %u (lane %u epoch %u) holds another's payload",
			      wc->qp_num, l, epoch);
			return;
		}
		check_recv_lane(wc, h.lane, h.epoch, h.rseq & 0xfffff, data);
	} else {
		wrong("receive on QP %u: opcode %d", wc->qp_num, wc->opcode);
		return;
	}
	if (!from_srq && l < NLANES && epoch == lanes[l].epoch)
		post_lane_recv(l, b);
}

static int is_garbage_qp(uint32_t qpn)
{
	return g.tx && (qpn == g.tx->qp_num || qpn == g.rx->qp_num);
}

static double last_progress;

static int poll_cq(struct ibv_cq *c)
{
	struct ibv_wc wc[16];
	int n, i, total = 0;

	do {
		n = ibv_poll_cq(c, 16, wc);
		if (n < 0)
			gone_or_die("ibv_poll_cq");
		for (i = 0; i < n; i++) {
			if (is_garbage_qp(wc[i].qp_num)) {
				if (!g.armed)
					wrong("garbage QP %u completed after its reset returned",
					      wc[i].qp_num);
				st.cqe_garbage_qp++;
				continue;
			}
			switch (wc[i].wr_id >> 56) {
			case M_SEND:
				check_send(&wc[i]);
				break;
			case M_RECV:
				check_recv(&wc[i], 0);
				break;
			case M_SRQ:
				check_recv(&wc[i], 1);
				break;
			default:
				wrong("completion on QP %u with wr_id %#llx, status %s",
				      wc[i].qp_num,
				      (unsigned long long)wc[i].wr_id,
				      ibv_wc_status_str(wc[i].status));
			}
		}
		total += n;
	} while (n == 16);
	if (total)
		last_progress = now();
	return total;
}

static int poll_all(void)
{
	int n = poll_cq(cq[0]) + poll_cq(cq[1]);

	srq_top_up();
	read_async();
	if (fatal_seen)
		finish(3);
	return n;
}

/* cq[1] runs in event mode: wait for its event when there is nothing to do. */
static void wait_event(int ms)
{
	struct pollfd pfd = { chan->fd, POLLIN, 0 };
	struct ibv_cq *ecq;
	void *ectx;

	if (ibv_req_notify_cq(cq[1], 0))
		gone_or_die("ibv_req_notify_cq");
	if (poll_all())
		return;
	if (poll(&pfd, 1, ms) == 1 && !ibv_get_cq_event(chan, &ecq, &ectx)) {
		ibv_ack_cq_events(ecq, 1);
		st.cq_events++;
	}
}

/* CQEs published and not yet polled, as the mapped ring shows them. */
static uint32_t cq_pending(struct ibv_cq *ibcq)
{
	struct shca_cq *c = container_of(ibcq, struct shca_cq, vcq.cq);
	uint32_t n = 0;

	pthread_spin_lock(&c->lock);
	while (n < (1U << c->log_depth) &&
	       shca_cqe_published(c->ring, c->log_depth, c->ci + n))
		n++;
	pthread_spin_unlock(&c->lock);
	return n;
}

/*
 * Before a fault: every lane's window filled, nothing polled, so that the
 * victim's completions and its neighbours' sit side by side in the CQs.
 */
static void burst(void)
{
	int i;

	for (i = 0; i < NLANES; i++)
		while (can_post(i) && lanes[i].seq - lanes[i].done < WINDOW) {
			uint32_t before = lanes[i].seq;

			post_one(i);
			if (lanes[i].seq == before)
				break;
		}
}

/* --- lanes -------------------------------------------------------------- */

static void lane_up(int l, int fresh)
{
	struct lane *ln = &lanes[l];
	uint32_t i;

	if (fresh) {
		ln->mr = reg(ln->buf, LANE_BUF);
		ln->tx = new_qp(ln->type, ln->scq, ln->scq, NULL);
		ln->rx = new_qp(ln->type, ln->rcq, ln->rcq,
				ln->srq ? srq : NULL);
	}
	connect_qp(ln->tx, ln->rx->qp_num);
	connect_qp(ln->rx, ln->tx->qp_num);
	ln->seq = 0;
	ln->done = 0;
	ln->rseq = 0;
	ln->rnext = 0;
	memcpy(&ln->fa_next, ln->buf + OFF_FA, 8);
	if (!ln->srq)
		for (i = 0; i < RQ_BUFS; i++)
			post_lane_recv(l, i);
}

/* Destroy or reset a lane with its completions unpolled. */
static void lane_teardown(int l, int destroy)
{
	struct lane *ln = &lanes[l];
	uint32_t unpolled = cq_pending(cq[0]) + cq_pending(cq[1]);
	uint32_t mine = (ln->seq - ln->done) + (ln->rseq - ln->rnext);

	st.cqe_swept_at_teardown += mine;
	st.cqe_unpolled_at_teardown += unpolled;
	if (unpolled > mine)
		st.cqe_neighbours_at_teardown += unpolled - mine;
	if (destroy) {
		destroy_qp(ln->tx);
		destroy_qp(ln->rx);
		dereg(ln->mr);
		st.fault_destroy_mid_traffic++;
	} else {
		reset_qp(ln->tx);
		reset_qp(ln->rx);
		st.fault_reset_mid_traffic++;
	}
	ln->epoch++;
	lane_up(l, destroy);
}

/* --- garbage ------------------------------------------------------------ */

static struct shca_qp *sqp(struct ibv_qp *qp)
{
	return container_of(qp, struct shca_qp, vqp.qp);
}

static void garbage_up(void)
{
	connect_qp(g.tx, g.rx->qp_num);
	connect_qp(g.rx, g.tx->qp_num);
	g.armed = 0;
}

static void ring_send_doorbell(struct ibv_qp *qp)
{
	struct ibv_send_wr *bad;

	/* The kernel may refuse it (the QP already failed): that is fine. */
	ibv_cmd_post_send(qp, NULL, &bad);
}

static void raw_send(struct ibv_qp *qp, const struct shca_hw_send_wqe *w)
{
	struct shca_qp *q = sqp(qp);
	uint32_t mask = (1U << q->sq.log_depth) - 1;

	pthread_spin_lock(&q->sq_lock);
	memcpy((struct shca_hw_send_wqe *)q->sq.ring + (q->sq.pi & mask), w,
	       sizeof(*w));
	q->sq.wrid[q->sq.pi & mask] = M_GARBAGE << 56;
	q->sq.pi++;
	__atomic_store_n(&q->dbrec->sq_pi, q->sq.pi, __ATOMIC_RELEASE);
	pthread_spin_unlock(&q->sq_lock);
	ring_send_doorbell(qp);
}

static uint32_t foreign_key(void)
{
	uint32_t k;
	int i, mine;

	do {
		k = rnd();
		mine = k == g.mr->lkey || k == srq_mr->lkey;
		for (i = 0; i < NLANES; i++)
			mine |= k == lanes[i].mr->lkey;
	} while (mine);
	return k;
}

/* A throwaway CQ and pair; the CQ's doorbell record gets a random index. */
static void garbage_cq_ci(void)
{
	struct shca_cq *c;
	struct ibv_qp *a, *b;
	struct ibv_cq *t;
	int i;

	t = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!t)
		gone_or_die("ibv_create_cq");
	st.op_cq_create++;
	a = new_qp(IBV_QPT_RC, t, t, NULL);
	b = new_qp(IBV_QPT_RC, t, t, NULL);
	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);
	c = container_of(t, struct shca_cq, vcq.cq);
	__atomic_store_n(&c->dbrec->ci, (uint32_t)rnd(), __ATOMIC_RELEASE);
	for (i = 0; i < 24; i++) {
		struct ibv_sge sge = { (uintptr_t)g.buf, 8, g.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = M_GARBAGE << 56,
					   .sg_list = &sge, .num_sge = 1 };
		struct ibv_send_wr swr = { .wr_id = M_GARBAGE << 56,
					   .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED };
		struct ibv_recv_wr *rbad;
		struct ibv_send_wr *sbad;

		/* Either may be refused once a QP failed. */
		ibv_post_recv(b, &rwr, &rbad);
		ibv_post_send(a, &swr, &sbad);
	}
	poll_all();
	destroy_qp(a);
	destroy_qp(b);
	errno = ibv_destroy_cq(t);
	if (errno)
		gone_or_die("ibv_destroy_cq of the garbage CQ");
	st.op_cq_destroy++;
	st.fault_garbage_cq_ci++;
}

static void inject_garbage(void)
{
	struct shca_hw_send_wqe w;
	struct ibv_qp *target = g.tx;
	uint32_t max_sge = 4, i;
	static unsigned int round;
	double t0;
	/* Each kind in turn, from a place of the process's own. */
	int kind = (me + round++) % 6;

	if (kind == 5) {
		garbage_cq_ci();
		return;
	}
	for (i = 0; i < sizeof(w); i += 8) {
		uint64_t r = rnd();

		memcpy((char *)&w + i, &r, sizeof(w) - i < 8 ?
		       sizeof(w) - i : 8);
	}
	g.armed = 1;
	switch (kind) {
	case 0:
		w.opcode = SHCA_WQE_NUM_OPCODES +
			   rndn(256 - SHCA_WQE_NUM_OPCODES);
		raw_send(g.tx, &w);
		st.fault_garbage_opcode++;
		break;
	case 1:
		w.opcode = rndn(2) ? SHCA_WQE_SEND : SHCA_WQE_RDMA_WRITE;
		w.flags = (w.flags & ~SHCA_WQE_F_INLINE) | SHCA_WQE_F_SIGNALED;
		w.num_sge = 1 + rndn(rndn(2) ? max_sge : 255);
		w.sge[0].length |= 1;
		w.sge[0].lkey = foreign_key();
		raw_send(g.tx, &w);
		st.fault_garbage_sge++;
		break;
	case 2:
		w.opcode = SHCA_WQE_SEND;
		w.flags |= SHCA_WQE_F_INLINE | SHCA_WQE_F_SIGNALED;
		w.inline_len = 65 + rndn(1 << 20);
		raw_send(g.tx, &w);
		st.fault_garbage_inline++;
		break;
	case 3: {
		struct shca_qp *q = sqp(g.tx);

		__atomic_store_n(&q->dbrec->sq_pi,
				 q->sq.pi + (1U << q->sq.log_depth) + 1 +
				 rndn(1 << 30), __ATOMIC_RELEASE);
		ring_send_doorbell(g.tx);
		st.fault_garbage_sq_pi++;
		break;
	}
	default: {
		struct shca_qp *r = sqp(g.rx);
		struct shca_hw_recv_wqe *rw = r->rq.ring;
		uint32_t mask = (1U << r->rq.log_depth) - 1;
		struct ibv_sge sge = { (uintptr_t)g.buf, 8, g.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = M_GARBAGE << 56,
					  .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		pthread_spin_lock(&r->rq_lock);
		memcpy(&rw[r->rq.pi & mask], &w, sizeof(*rw));
		rw[r->rq.pi & mask].num_sge = SHCA_HW_MAX_SGE + 1 +
					      rndn(1 << 20);
		r->rq.wrid[r->rq.pi & mask] = M_GARBAGE << 56;
		r->rq.pi++;
		__atomic_store_n(&r->dbrec->rq_pi, r->rq.pi, __ATOMIC_RELEASE);
		pthread_spin_unlock(&r->rq_lock);
		errno = ibv_post_send(g.tx, &wr, &bad);
		if (errno)
			gone_or_die("ibv_post_send on the garbage pair");
		target = g.rx;
		st.fault_garbage_recv_wqe++;
		break;
	}
	}
	/* The device flags the QP, and only it; the lanes keep going. */
	t0 = now();
	while (qp_state(target) != IBV_QPS_ERR) {
		if (now() - t0 > STALL_SEC) {
			wrong("garbage of kind %d: QP %u not in error after %ds",
			      kind, target->qp_num, STALL_SEC);
			break;
		}
		if (!poll_all())
			usleep(1000);
	}
	poll_all();
	reset_qp(g.tx);
	reset_qp(g.rx);
	garbage_up();
}

/* --- main --------------------------------------------------------------- */

static void on_term(int sig)
{
	stopping = 1;
}

static void setup(void)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC,
						  IBV_QPT_UD };
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 127,
						  .max_sge = 1 } };
	int i;

	if (!list)
		gone_or_die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		/* Removed before we opened it: not an error. */
		fprintf(stderr, "soak %u: %s is not there\n", me, devname);
		finish(3);
	}
	st.op_ctx_open++;
	if (ibv_query_gid(ctx, 1, GIDX, &gid))
		gone_or_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		gone_or_die("ibv_alloc_pd");
	st.op_pd_alloc++;
	chan = ibv_create_comp_channel(ctx);
	if (!chan)
		gone_or_die("ibv_create_comp_channel");
	cq[0] = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	cq[1] = ibv_create_cq(ctx, CQ_DEPTH, NULL, chan, 0);
	if (!cq[0] || !cq[1])
		gone_or_die("ibv_create_cq");
	st.op_cq_create += 2;
	srq = ibv_create_srq(pd, &sa);
	if (!srq)
		gone_or_die("ibv_create_srq");
	st.op_srq_create++;
	srq_buf = aligned_alloc(4096, SRQ_BUFS * SLOT_SZ);
	g.buf = aligned_alloc(4096, 4096);
	if (!srq_buf || !g.buf)
		gone_or_die("memory");
	memset(srq_buf, 0, SRQ_BUFS * SLOT_SZ);
	memset(g.buf, 0, 4096);
	srq_mr = reg(srq_buf, SRQ_BUFS * SLOT_SZ);
	g.mr = reg(g.buf, 4096);

	/*
	 * Lanes 0-2 one of each type, 3 and 4 RC on the SRQ, 5 at random;
	 * odd lanes send on one CQ and receive on the other.
	 */
	for (i = 0; i < NLANES; i++) {
		struct lane *ln = &lanes[i];

		ln->type = i < 3 ? types[i] : i < 5 ? IBV_QPT_RC :
			   types[rndn(3)];
		ln->srq = i == 3 || i == 4;
		ln->scq = cq[i % 2];
		ln->rcq = cq[(i / 2 + i) % 2];
		ln->epoch = rnd();
		ln->buf = aligned_alloc(4096, LANE_BUF);
		if (!ln->buf)
			gone_or_die("memory");
		memset(ln->buf, 0, LANE_BUF);
		lane_up(i, 1);
		if (ln->type == IBV_QPT_UD) {
			struct ibv_ah_attr ah = {
				.is_global = 1, .port_num = 1,
				.grh = { .dgid = gid, .sgid_index = GIDX,
					 .hop_limit = 1 },
			};

			ln->ah = ibv_create_ah(pd, &ah);
			if (!ln->ah)
				gone_or_die("ibv_create_ah");
		}
	}
	g.tx = new_qp(IBV_QPT_RC, cq[0], cq[0], NULL);
	g.rx = new_qp(IBV_QPT_RC, cq[0], cq[0], NULL);
	garbage_up();
	srq_top_up();
}

static int drained(void)
{
	int i;

	for (i = 0; i < NLANES; i++)
		if (lanes[i].done != lanes[i].seq ||
		    lanes[i].rnext != lanes[i].rseq)
			return 0;
	return 1;
}

static void stall_report(void)
{
	int i;

	for (i = 0; i < NLANES; i++)
		if (lanes[i].done != lanes[i].seq ||
		    lanes[i].rnext != lanes[i].rseq)
			wrong("lane %d (QPs %u/%u): stalled %ds: sends %u of %u, receives %u of %u",
			      i, lanes[i].tx->qp_num, lanes[i].rx->qp_num,
			      STALL_SEC, lanes[i].done, lanes[i].seq,
			      lanes[i].rnext, lanes[i].rseq);
}

static void teardown_all(void)
{
	int i;

	destroy_qp(g.tx);
	destroy_qp(g.rx);
	for (i = 0; i < NLANES; i++) {
		destroy_qp(lanes[i].tx);
		destroy_qp(lanes[i].rx);
		dereg(lanes[i].mr);
		if (lanes[i].ah && ibv_destroy_ah(lanes[i].ah))
			gone_or_die("ibv_destroy_ah");
	}
	errno = ibv_destroy_srq(srq);
	if (errno)
		gone_or_die("ibv_destroy_srq");
	st.op_srq_destroy++;
	dereg(srq_mr);
	dereg(g.mr);
	for (i = 0; i < 2; i++) {
		errno = ibv_destroy_cq(cq[i]);
		if (errno)
			gone_or_die("ibv_destroy_cq");
		st.op_cq_destroy++;
	}
	if (ibv_destroy_comp_channel(chan) || ibv_dealloc_pd(pd) ||
	    ibv_close_device(ctx))
		gone_or_die("closing");
}

/* Drain: take every completion expected, sleeping on cq[1]'s event. */
static void drain_on_events(void)
{
	while (!stopping && !drained()) {
		if (!poll_all())
			wait_event(50);
		if (now() - last_progress > STALL_SEC) {
			stall_report();
			finish(1);
		}
	}
	last_progress = now();
}

/*
 * Every few seconds the process posts nothing until every completion it
 * expects is in, sleeping on cq[1]'s event whenever a poll finds nothing.
 * Then, cq[1] armed, it sends once on a lane whose sends complete there:
 * that completion must raise the event, within ten seconds.  So the
 * event path carries completions, not busy polling alone.
 */
static void quiet(void)
{
	struct pollfd pfd = { chan->fd, POLLIN, 0 };
	struct ibv_cq *ecq;
	void *ectx;
	int l;

	st.op_quiet++;
	drain_on_events();
	for (l = 0; l < NLANES; l++)
		if (lanes[l].scq == cq[1] && can_post(l))
			break;
	if (stopping || l == NLANES)
		return;
	if (ibv_req_notify_cq(cq[1], 0))
		gone_or_die("ibv_req_notify_cq");
	post_one(l);
	if (poll(&pfd, 1, 10000) == 1 && !ibv_get_cq_event(chan, &ecq, &ectx)) {
		ibv_ack_cq_events(ecq, 1);
		st.cq_events++;
	} else {
		wrong("lane %d: no completion event on its armed CQ in 10 s", l);
	}
	drain_on_events();
}

int main(int argc, char **argv)
{
	double end, next_fault, next_stats, next_quiet;
	unsigned int faults = 0;
	struct sigaction sa = { .sa_handler = on_term };
	int i, n;

	if (argc != 6) {
		fprintf(stderr, "usage: %s DEV SEED ID SECONDS STATS\n",
			argv[0]);
		return 2;
	}
	devname = argv[1];
	me = strtoul(argv[3], NULL, 0);
	rng = strtoull(argv[2], NULL, 0) * 0x9e3779b97f4a7c15ULL + me + 1;
	end = now() + strtod(argv[4], NULL);
	stats_path = argv[5];
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stderr, NULL, _IOLBF, 0);

	setup();
	if (getenv("SHCA_SOAK_SELFTEST")) {
		/*
		 * Prove the checker: forget one expected send completion.
		 * The next one must be reported as out of sequence.
		 */
		burst();
		lanes[0].done++;
	}
	last_progress = now();
	next_stats = last_progress;
	next_fault = now() + 0.2 + rndn(1000) / 1000.0;
	next_quiet = now() + 1 + rndn(2000) / 1000.0;
	while (!stopping && now() < end) {
		n = 0;
		for (i = 0; i < NLANES; i++) {
			int k = rndn(4);

			while (k-- && can_post(i)) {
				post_one(i);
				n++;
			}
		}
		if (!poll_all() && !n)
			wait_event(10);
		if (now() >= next_fault) {
			burst();
			/* A process's first fault is garbage: all kinds get their turn. */
			switch (faults++ ? rndn(3) : 2) {
			case 0:
				lane_teardown(rndn(NLANES), 1);
				break;
			case 1:
				lane_teardown(rndn(NLANES), 0);
				break;
			default:
				inject_garbage();
				break;
			}
			next_fault = now() + 0.2 + rndn(1500) / 1000.0;
		}
		if (now() >= next_quiet) {
			quiet();
			next_quiet = now() + 1 + rndn(3000) / 1000.0;
		}
		if (now() >= next_stats) {
			write_stats();
			next_stats = now() + 0.25;
		}
		if (drained()) {
			last_progress = now();
		} else if (now() - last_progress > STALL_SEC) {
			stall_report();
			finish(1);
		}
	}
	/* Every completion still expected must come. */
	while (!drained()) {
		if (!poll_all())
			wait_event(10);
		if (now() - last_progress > STALL_SEC) {
			stall_report();
			finish(1);
		}
	}
	teardown_all();
	finish(st.errors ? 1 : 0);
	return 0;
}
