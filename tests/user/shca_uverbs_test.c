// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_uverbs_test: what a process can do to shca, good and bad.
 *
 *   shca_uverbs_test DEV udata      wrong driver data sizes and fields
 *   shca_uverbs_test DEV mmap       bogus, stale and other processes' offsets
 *   shca_uverbs_test DEV rings      out-of-range values written into rings
 *   shca_uverbs_test DEV mr         remote access against MR bounds, rights
 *   shca_uverbs_test DEV flush      RDMA FLUSH and atomic write through
 *                                   the ibv_wr_* API, their access flags
 *                                   and capabilities, and bad arguments
 *   shca_uverbs_test DEV reset      posting to a QP in RESET
 *   shca_uverbs_test DEV teardown   destroy and reset with a shared CQ
 *   shca_uverbs_test DEV hold       set up traffic, say "ready", wait to die
 *   shca_uverbs_test DEV flood      flood QPs held in RTR, read events last
 *   shca_uverbs_test DEV memcg      rings charged to the memory cgroup
 *                                   $SHCA_CGROUP; creation past its
 *                                   memory.max fails with ENOMEM
 *   shca_uverbs_test DEV limits     QPs and CQs until the device refuses;
 *                                   prints "limits QPS CQS"
 *   shca_uverbs_test DEV mcast_limit  one process's share of the
 *                                   multicast table
 *   shca_uverbs_test DEV cqex       extended CQs: refused attributes, and
 *                                   every read_* field against ibv_poll_cq,
 *                                   timestamps against the device clock
 *   shca_uverbs_test DEV pdom       thread and parent domains (allocator
 *                                   calls, lock-free objects, EBUSY, bad
 *                                   input), ibv_import_device/pd/mr
 *   shca_uverbs_test DEV resize     CQ resize with unpolled CQEs and under
 *                                   a CQE write (debugfs cqe_publish window),
 *                                   SRQ resize, rereg_mr each way; bad input
 *   shca_uverbs_test DEV rereg_step one rereg of an MR's rights: prints 0
 *                                   or -errno (fault_cmd.sh's REREG_MPT)
 *   shca_uverbs_test DEV mw         memory windows: binds beyond the MR,
 *                                   of a foreign PD, without the MW bind
 *                                   right; a bad type; dealloc twice; an MR
 *                                   with a window bound is not deregistered
 *   shca_uverbs_test DEV mw_step    one ibv_alloc_mw(): prints 0 or -errno
 *                                   (fault_cmd.sh's ALLOC_MW)
 *   shca_uverbs_test DEV dm         device memory: bad sizes, copies and
 *                                   MR ranges past the end, a DM in use,
 *                                   foreign handles; DM MR traffic
 *   shca_uverbs_test DEV dm_step    one ibv_alloc_dm(): prints 0 or -errno
 *                                   (fault_cmd.sh's ALLOC_DM)
 *   shca_uverbs_test DEV xrc        XRC: missing and foreign parts, SRQ
 *                                   numbers of no SRQ or another domain,
 *                                   a domain and CQ in use; traffic
 *   shca_uverbs_test DEV doorbell   posts into a stopping turn held in the
 *                                   db_idle and db_recheck windows, and
 *                                   into a poller letting the QP go, held
 *                                   in poll_idle and poll_recheck: no
 *                                   system call while the turn runs or a
 *                                   poller holds the QP, and the WQE
 *                                   executed exactly once
 *   shca_uverbs_test DEV lazy       lazy doorbells: posts into the backstop's
 *                                   sweep held in the backstop_idle and
 *                                   backstop_recheck windows, left for later
 *                                   or rung, run exactly once; a poll or an
 *                                   arm rings what was left, so does the
 *                                   seventeenth post in a row; ping-pong
 *                                   and SHCA_LAZY_DOORBELL=0 ring each post
 *   shca_uverbs_test DEV xrcd_step  one ibv_open_xrcd(): prints 0 or -errno
 *                                   (fault_cmd.sh's ALLOC_XRCD)
 *   shca_uverbs_test DEV odp_step   one prefetch of an ODP MR: prints 0,
 *                                   -errno, or "none" without ODP
 *                                   (fault_cmd.sh's MAP_ODP)
 *   shca_uverbs_test DEV spoof      a QP on DEV's sibling (DEV with its
 *                                   last digit 1) that took a connected
 *                                   peer's QPN reaches nothing of it
 *   shca_uverbs_test DEV odp_cow    an ODP MR's own pages copied into
 *                                   each other through a self-connected
 *                                   QP, the target copy-on-write
 *   shca_uverbs_test DEV conform    what IBTA allows: regions at an iova
 *                                   of their own and zero-based, type 2
 *                                   windows zero-based and bound again
 *                                   with the consumer's key, a read-only
 *                                   window, a zero-length MR, local
 *                                   checks before remote ones, a UD
 *                                   datagram's traffic class in its GRH
 *   shca_uverbs_test DEV flood_cpu  a self-connected flood of large writes,
 *                                   polled without system calls: a spinner
 *                                   on the other CPU keeps its share
 *
 * DEV is an shca device with an IPv4 GID at index 3.  A test reports in
 * KTAP, as the kernel's selftests do: "KTAP version 1", then "ok N NAME"
 * or "not ok N NAME # why" for each case as it ends, then the plan,
 * "1..N", once it has run to its end (a report that stops short has none).
 * A test that cannot go on reports that as a failed case, "died".  The
 * exit status is 1 if any case failed, 0 if none (never a count, which
 * could wrap to 0 or read as a skip).  The _step tests and hold are tools
 * of other tests, not reports: they print what they say above.
 * Bad input must get an error (or an error completion) and nothing else:
 * the kernel log is checked for reports by the harness, and every run ends
 * by showing the device still carries traffic.
 *
 * It reaches under libshca (struct shca_qp and friends) to write into the
 * mapped rings directly, as a buggy or hostile process could.
 */
#define _GNU_SOURCE	/* sched_setaffinity() */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include "shca.h"
#include "shca_cq_sweep.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define GIDX	3
#define BUFSZ	65536

static int failures;
static int results;
static bool report;	/* the test reports in KTAP */
static pid_t report_pid;	/* the process that reports */
static const char *devname;

#define CHECK(cond, name, ...) check(!!(cond), name, __VA_ARGS__)

static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	results++;
	if (ok) {
		printf("ok %d %s\n", results, name);
		return;
	}
	failures++;
	printf("not ok %d %s # ", results, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* The end of a report: its plan, and 1 if any case failed. */
static void report_end(void)
{
	if (report)
		printf("1..%d\n", results);
	exit(failures ? 1 : 0);
}

/*
 * A test that cannot go on: in the reporting process, one more failed
 * case and the report's end; in a child, exit 100 for its parent to see.
 */
static void die(const char *what)
{
	int err = errno;

	fprintf(stderr, "shca_uverbs_test: %s: %s\n", what, strerror(err));
	if (getpid() != report_pid)
		exit(100);
	failures++;
	if (report)
		printf("not ok %d died # %s: %s\n", ++results, what,
		       strerror(err));
	report_end();
}

static struct ibv_context *open_dev(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die(devname);
	return ctx;
}

/* --- a connected RC pair in loopback ------------------------------------ */

struct pair {
	struct ibv_context *ctx;
	struct ibv_context *peer;	/* the peer's device; NULL: ctx's */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	char *buf;
};

static struct ibv_qp *new_qp(struct pair *p, struct ibv_cq *cq,
			     enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(p->pd, &init);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

/* RESET -> INIT -> RTR, connected to @dest_qpn, and no further. */
static int qp_to_rtr(struct pair *p, struct ibv_qp *qp, uint32_t dest_qpn)
{
	int rc = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   (rc ? IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC : 0),
	};
	union ibv_gid gid;

	if (ibv_query_gid(p->peer ? p->peer : p->ctx, 1, GIDX, &gid))
		return -1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = GIDX;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN |
			     (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER : 0));
}

static int qp_rtr_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 10, .retry_cnt = 1,
		.rnr_retry = 1, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (qp->qp_type == IBV_QPT_RC ?
			      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

/* RESET -> INIT -> RTR -> RTS, connected to @dest_qpn on this device. */
static int connect_qp(struct pair *p, struct ibv_qp *qp, uint32_t dest_qpn)
{
	return qp_to_rtr(p, qp, dest_qpn) || qp_rtr_to_rts(qp) ? -1 : 0;
}

static int reset_qp(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static void pair_open(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	p->ctx = open_dev();
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = ibv_create_cq(p->ctx, 256, NULL, NULL, 0);
	p->buf = aligned_alloc(4096, BUFSZ);
	if (!p->pd || !p->cq || !p->buf)
		die("pair resources");
	memset(p->buf, 0, BUFSZ);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!p->mr)
		die("ibv_reg_mr");
	p->a = new_qp(p, p->cq, IBV_QPT_RC);
	p->b = new_qp(p, p->cq, IBV_QPT_RC);
	if (connect_qp(p, p->a, p->b->qp_num) ||
	    connect_qp(p, p->b, p->a->qp_num))
		die("connect");
}

static void pair_close(struct pair *p)
{
	if (ibv_destroy_qp(p->a) || ibv_destroy_qp(p->b) ||
	    ibv_dereg_mr(p->mr) || ibv_destroy_cq(p->cq) ||
	    ibv_dealloc_pd(p->pd) || ibv_close_device(p->ctx))
		die("pair teardown");
	free(p->buf);
}

/* Poll until one completion arrives, for up to five seconds. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 500000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (i > 1000)
			usleep(10);
	}
	return 0;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *addr,
		     uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op,
		     struct ibv_mr *mr, void *addr, uint32_t len,
		     uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* The device still works: a send and an RDMA write, checked byte by byte. */
static void traffic_ok(const char *name)
{
	struct ibv_wc wc;
	struct pair p;
	int got = 0, i;

	pair_open(&p);
	snprintf(p.buf + 4096, 64, "shca says hello");
	post_recv(p.b, p.mr, p.buf + 8192, 64, 1);
	post_send(p.a, IBV_WR_SEND, p.mr, p.buf + 4096, 16, 0, 0, 2);
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf + 4096, 16,
		  (uintptr_t)p.buf + 12288, p.mr->rkey, 3);
	for (i = 0; i < 3 && poll_one(p.cq, &wc); i++)
		got += wc.status == IBV_WC_SUCCESS;
	CHECK(got == 3 && !strcmp(p.buf + 8192, "shca says hello") &&
	      !strcmp(p.buf + 12288, "shca says hello"), name,
	      "%d of 3 completions", got);
	pair_close(&p);
}

/*
 * One of the port's counters (rdma statistic), or ~0 if unreadable.
 * ib_core's sysfs keeps a read for 10 ms (RDMA_HW_STATS_DEFAULT_LIFESPAN):
 * wait that out, so that this read is the device's own.
 */
static unsigned long long hw_counter(const char *name)
{
	unsigned long long v = ~0ULL;
	char path[256];
	FILE *f;

	usleep(20000);

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", devname,
		 name);
	f = fopen(path, "r");
	if (!f)
		return v;
	if (fscanf(f, "%llu", &v) != 1)
		v = ~0ULL;
	fclose(f);
	return v;
}

/*
 * CPU time, in clock ticks, that every kworker thread has used so far:
 * the execution units run there, charged to no process.
 */
static long long kworker_ticks(void)
{
	unsigned long long ut, st;
	long long sum = 0;
	char path[300], buf[512], *p;
	struct dirent *d;
	DIR *proc;
	FILE *f;

	proc = opendir("/proc");
	if (!proc)
		die("/proc");
	while ((d = readdir(proc))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strchr(buf, '(') : NULL;
		fclose(f);
		if (!p || strncmp(p, "(kworker", 8))
			continue;
		p = strrchr(buf, ')');
		/* Fields 14 and 15, utime and stime, counted after the name. */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st) == 2)
			sum += ut + st;
	}
	closedir(proc);
	return sum;
}

/* --- udata -------------------------------------------------------------- */

/*
 * The driver data rules (Documentation/userspace.rst): a command may be
 * as short as the fields the kernel needs (an older provider's) or longer
 * with zeros beyond what it knows (a newer one's); a response buffer of
 * any size gets the response cut to it, and zeros past its end.
 */
#define FILL	0xa5
#define FILL32	0xa5a5a5a5U

struct cq_cmd {
	struct ibv_create_cq ibv_cmd;
	struct shca_create_cq_cmd drv;
	uint32_t extra[4];
};

struct cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct shca_create_cq_resp drv;
	uint32_t extra[4];
};

/* The response as the kernel knows it, without a newer provider's tail. */
#define CQ_RESP_SIZE	offsetof(struct cq_resp, extra)
/* The fewest driver data bytes a create command takes: its comp_mask. */
#define CREATE_CMD_MIN	(offsetof(struct shca_create_cq_cmd, comp_mask) + \
			 sizeof(uint32_t))

static int raw_cq(struct ibv_context *ctx, struct verbs_cq *vcq,
		  struct cq_cmd *cmd, size_t cmd_size, struct cq_resp *resp,
		  size_t resp_size)
{
	memset(vcq, 0, sizeof(*vcq));
	return ibv_cmd_create_cq(ctx, 16, NULL, 0, &vcq->cq, &cmd->ibv_cmd,
				 cmd_size, &resp->ibv_resp, resp_size);
}

/* How raw_get_context() sizes its driver data. */
enum {
	IN_NONE,		/* none, as libshca */
	IN_ZEROS,		/* 16 bytes of zeros: a newer provider's */
	IN_UNKNOWN,		/* 16 bytes, not all zero */
};

/*
 * GET_CONTEXT through write(2) on a fresh file: driver data checked.
 * @out_delta: bytes more (or fewer) of response buffer than the response.
 * Returns 0 or an errno; on success *@tail_zero says whether the bytes
 * past the response came back zero.
 */
static int raw_get_context(int in, int out_delta, int *tail_zero)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
		uint64_t drv[2];
	} req = {};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct shca_alloc_ucontext_resp drv;
		uint64_t extra[2];
	} resp;
	size_t resp_size = offsetof(typeof(resp), extra) + out_delta;
	char path[64], name[64];
	int fd, i, ret = -1;
	FILE *f;

	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/uverbs%d/ibdev", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, devname)) {
			fclose(f);
			break;
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", i);
	fd = open(path, O_RDWR);
	if (fd < 0)
		die(path);
	memset(&resp, FILL, sizeof(resp));
	req.hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	req.hdr.in_words = (sizeof(req.hdr) + sizeof(req.cmd) +
			    (in != IN_NONE ? sizeof(req.drv) : 0)) / 4;
	req.hdr.out_words = resp_size / 4;
	req.cmd.response = (uintptr_t)&resp;
	if (in == IN_UNKNOWN)
		req.drv[1] = 0xdeadbeef;
	if (write(fd, &req, req.hdr.in_words * 4) == req.hdr.in_words * 4)
		ret = 0;
	else
		ret = errno;
	close(fd);
	if (tail_zero)
		*tail_zero = out_delta > 0 && !resp.extra[0] &&
			     (out_delta <= 8 || !resp.extra[1]);
	return ret;
}

static void test_udata(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	size_t core = sizeof(struct ibv_create_cq);
	struct cq_cmd cmd = {};
	struct cq_resp resp;
	struct verbs_cq vcq;
	int ret, zero;

	if (!pd || !cq)
		die("udata resources");
	ret = raw_get_context(IN_UNKNOWN, 0, NULL);
	CHECK(ret == EOPNOTSUPP, "get_context_unknown_trailing_data",
	      "got %s", strerror(ret));
	ret = raw_get_context(IN_ZEROS, 0, NULL);
	CHECK(ret == 0, "get_context_newer_provider_zeros", "got %s",
	      strerror(ret));
	/* An older provider's shorter response buffer gets what fits. */
	ret = raw_get_context(IN_NONE, -8, NULL);
	CHECK(ret == 0, "get_context_older_provider_short_response",
	      "got %s", strerror(ret));
	ret = raw_get_context(IN_NONE, 16, &zero);
	CHECK(ret == 0 && zero, "get_context_newer_provider_long_response",
	      "got %s, tail %s", strerror(ret), zero ? "zero" : "not zero");
	ret = raw_get_context(IN_NONE, 0, NULL);
	CHECK(ret == 0, "get_context_right_sizes", "got %s", strerror(ret));

	/* Commands: too short, the minimum, reserved and unknown bits. */
	ret = raw_cq(ctx, &vcq, &cmd, core, &resp, CQ_RESP_SIZE);
	CHECK(ret == EINVAL, "create_cq_no_driver_data", "got %s",
	      strerror(ret));
	ret = raw_cq(ctx, &vcq, &cmd, core + CREATE_CMD_MIN, &resp,
		     CQ_RESP_SIZE);
	CHECK(ret == 0 && resp.drv.mmap_len,
	      "create_cq_older_provider_minimum_command", "got %s",
	      strerror(ret));
	if (!ret)
		ibv_cmd_destroy_cq(&vcq.cq);
	cmd.drv.comp_mask = 1;
	ret = raw_cq(ctx, &vcq, &cmd, core + CREATE_CMD_MIN, &resp,
		     CQ_RESP_SIZE);
	CHECK(ret == EOPNOTSUPP, "create_cq_minimum_command_comp_mask_set",
	      "got %s", strerror(ret));
	cmd.drv.comp_mask = 0;
	cmd.drv.reserved = 1;
	ret = raw_cq(ctx, &vcq, &cmd, core + 8, &resp, CQ_RESP_SIZE);
	CHECK(ret == EOPNOTSUPP, "create_cq_reserved_set", "got %s",
	      strerror(ret));
	cmd.drv.reserved = 0;
	cmd.drv.comp_mask = 1;
	ret = raw_cq(ctx, &vcq, &cmd, core + 8, &resp, CQ_RESP_SIZE);
	CHECK(ret == EOPNOTSUPP, "create_cq_comp_mask_set", "got %s",
	      strerror(ret));
	cmd.drv.comp_mask = 0;
	cmd.extra[2] = 7;
	ret = raw_cq(ctx, &vcq, &cmd, sizeof(cmd), &resp, CQ_RESP_SIZE);
	CHECK(ret == EOPNOTSUPP, "create_cq_newer_provider_unknown_data",
	      "got %s", strerror(ret));
	cmd.extra[2] = 0;
	/* Zeros past the known fields are fine: a newer library's. */
	ret = raw_cq(ctx, &vcq, &cmd, sizeof(cmd), &resp, CQ_RESP_SIZE);
	CHECK(ret == 0 && resp.drv.log_depth >= 4 && resp.drv.mmap_len,
	      "create_cq_newer_provider_zeros", "got %s", strerror(ret));
	if (!ret)
		ibv_cmd_destroy_cq(&vcq.cq);

	/* Responses: an older provider's is cut, a newer one's zero-filled. */
	memset(&resp, FILL, sizeof(resp));
	ret = raw_cq(ctx, &vcq, &cmd, core + 8, &resp,
		     offsetof(struct cq_resp, drv.log_depth));
	CHECK(ret == 0 && resp.drv.mmap_len != FILL32 &&
	      resp.drv.cqn != FILL32 && resp.drv.log_depth == FILL32,
	      "create_cq_older_provider_short_response",
	      "got %s, cqn %#x, log_depth %#x", strerror(ret), resp.drv.cqn,
	      resp.drv.log_depth);
	if (!ret)
		ibv_cmd_destroy_cq(&vcq.cq);
	/* A provider from before the arm flag gets all it knows. */
	memset(&resp, FILL, sizeof(resp));
	ret = raw_cq(ctx, &vcq, &cmd, core + 8, &resp,
		     offsetof(struct cq_resp, drv.flags));
	CHECK(ret == 0 && resp.drv.log_depth >= 4 &&
	      resp.drv.log_depth != FILL32 && resp.drv.flags == FILL32,
	      "create_cq_provider_before_arm_flag",
	      "got %s, log_depth %#x, flags %#x", strerror(ret),
	      resp.drv.log_depth, resp.drv.flags);
	if (!ret)
		ibv_cmd_destroy_cq(&vcq.cq);
	memset(&resp, FILL, sizeof(resp));
	ret = raw_cq(ctx, &vcq, &cmd, core + 8, &resp, sizeof(resp));
	CHECK(ret == 0 && resp.drv.log_depth >= 4 && !resp.extra[0] &&
	      !resp.extra[3], "create_cq_newer_provider_long_response",
	      "got %s, extra %#x", strerror(ret), resp.extra[0]);
	if (!ret)
		ibv_cmd_destroy_cq(&vcq.cq);

	/* The same rules for QPs and SRQs. */
	{
		struct {
			struct ibv_create_qp ibv_cmd;
			struct shca_create_qp_cmd drv;
			uint32_t extra[2];
		} qcmd = {};
		struct {
			struct ib_uverbs_create_qp_resp ibv_resp;
			struct shca_create_qp_resp drv;
		} qresp;
		size_t qcore = sizeof(qcmd.ibv_cmd);
		struct ibv_qp_init_attr_ex attr = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { 8, 8, 1, 1, 0 },
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		};
		struct verbs_qp vqp = {};

		ret = ibv_cmd_create_qp_ex(ctx, &vqp, &attr, &qcmd.ibv_cmd,
					   qcore, &qresp.ibv_resp,
					   sizeof(qresp));
		CHECK(ret == EINVAL, "create_qp_no_driver_data", "got %s",
		      strerror(ret));
		ret = ibv_cmd_create_qp_ex(ctx, &vqp, &attr, &qcmd.ibv_cmd,
					   qcore + CREATE_CMD_MIN,
					   &qresp.ibv_resp, sizeof(qresp));
		CHECK(ret == 0, "create_qp_older_provider_minimum_command",
		      "got %s", strerror(ret));
		if (!ret)
			ibv_cmd_destroy_qp(&vqp.qp);
		qcmd.drv.reserved = 0x100;
		ret = ibv_cmd_create_qp_ex(ctx, &vqp, &attr, &qcmd.ibv_cmd,
					   qcore + 8, &qresp.ibv_resp,
					   sizeof(qresp));
		CHECK(ret == EOPNOTSUPP, "create_qp_reserved_set", "got %s",
		      strerror(ret));
		qcmd.drv.reserved = 0;
		qcmd.extra[1] = 1;
		ret = ibv_cmd_create_qp_ex(ctx, &vqp, &attr, &qcmd.ibv_cmd,
					   sizeof(qcmd), &qresp.ibv_resp,
					   sizeof(qresp));
		CHECK(ret == EOPNOTSUPP, "create_qp_newer_provider_unknown_data",
		      "got %s", strerror(ret));
		qcmd.extra[1] = 0;
		ret = ibv_cmd_create_qp_ex(ctx, &vqp, &attr, &qcmd.ibv_cmd,
					   sizeof(qcmd), &qresp.ibv_resp,
					   sizeof(qresp));
		CHECK(ret == 0, "create_qp_newer_provider_zeros", "got %s",
		      strerror(ret));
		if (!ret)
			ibv_cmd_destroy_qp(&vqp.qp);
		memset(&qresp, FILL, sizeof(qresp));
		ret = ibv_cmd_create_qp_ex(ctx, &vqp, &attr, &qcmd.ibv_cmd,
					   qcore + 8, &qresp.ibv_resp,
					   sizeof(qresp) - 8);
		CHECK(ret == 0 && qresp.drv.max_inline != FILL32 &&
		      qresp.drv.reserved2 == FILL32,
		      "create_qp_older_provider_short_response", "got %s",
		      strerror(ret));
		if (!ret)
			ibv_cmd_destroy_qp(&vqp.qp);
	}
	{
		struct {
			struct ibv_create_srq ibv_cmd;
			struct shca_create_srq_cmd drv;
		} scmd = {};
		struct {
			struct ib_uverbs_create_srq_resp ibv_resp;
			struct shca_create_srq_resp drv;
		} sresp;
		struct ibv_srq_init_attr attr = { .attr = { 16, 1, 0 } };
		struct verbs_srq vsrq = {};

		scmd.drv.comp_mask = 2;
		ret = ibv_cmd_create_srq(pd, &vsrq.srq, &attr, &scmd.ibv_cmd,
					 sizeof(scmd), &sresp.ibv_resp,
					 sizeof(sresp));
		CHECK(ret == EOPNOTSUPP, "create_srq_comp_mask_set", "got %s",
		      strerror(ret));
		scmd.drv.comp_mask = 0;
		ret = ibv_cmd_create_srq(pd, &vsrq.srq, &attr, &scmd.ibv_cmd,
					 sizeof(scmd) - 8, &sresp.ibv_resp,
					 sizeof(sresp));
		CHECK(ret == EINVAL, "create_srq_no_driver_data", "got %s",
		      strerror(ret));
		ret = ibv_cmd_create_srq(pd, &vsrq.srq, &attr, &scmd.ibv_cmd,
					 sizeof(scmd) - 8 + CREATE_CMD_MIN,
					 &sresp.ibv_resp, sizeof(sresp) - 8);
		CHECK(ret == 0, "create_srq_older_provider", "got %s",
		      strerror(ret));
		if (!ret)
			ibv_cmd_destroy_srq(&vsrq.srq);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

/* --- mmap --------------------------------------------------------------- */

static int try_map(int fd, uint64_t off, size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

static void test_mmap(void)
{
	struct ibv_context *ctx = open_dev();
	struct cq_cmd cmd = {};
	struct cq_resp resp;
	struct verbs_cq vcq;
	uint64_t off, child_off = 0;
	int fd = ctx->cmd_fd, ret, pipefd[2], gofd[2];
	size_t len;
	pid_t pid;
	char c;

	if (raw_cq(ctx, &vcq, &cmd, sizeof(cmd.ibv_cmd) + 8, &resp,
		   sizeof(resp)))
		die("raw CQ");
	off = resp.drv.mmap_offset;
	len = resp.drv.mmap_len;
	ret = try_map(fd, off, len, MAP_SHARED);
	CHECK(ret == 0, "mmap_own_offset", "got %s", strerror(ret));
	ret = try_map(fd, off, len, MAP_PRIVATE);
	CHECK(ret == EINVAL, "mmap_private", "got %s", strerror(ret));
	ret = try_map(fd, off, len + 4096, MAP_SHARED);
	CHECK(ret == EINVAL, "mmap_too_long", "got %s", strerror(ret));
	ret = try_map(fd, off, len - 4096, MAP_SHARED);
	CHECK(ret == EINVAL, "mmap_too_short", "got %s", strerror(ret));
	ret = try_map(fd, off + 4096, len - 4096, MAP_SHARED);
	CHECK(ret == EINVAL, "mmap_inside_a_buffer", "got %s", strerror(ret));
	ret = try_map(fd, 0x7654321000ULL, 4096, MAP_SHARED);
	CHECK(ret == EINVAL, "mmap_bogus_offset", "got %s", strerror(ret));
	ibv_cmd_destroy_cq(&vcq.cq);
	ret = try_map(fd, off, len, MAP_SHARED);
	CHECK(ret == EINVAL, "mmap_destroyed_object", "got %s",
	      strerror(ret));

	/* Another process's offset names nothing on this context. */
	if (pipe(pipefd) || pipe(gofd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		struct ibv_context *cctx = open_dev();
		struct verbs_cq cq[4];
		int i;

		for (i = 0; i < 4; i++)
			if (raw_cq(cctx, &cq[i], &cmd, sizeof(cmd.ibv_cmd) + 8,
				   &resp, sizeof(resp)))
				_exit(1);
		if (write(pipefd[1], &resp.drv.mmap_offset, 8) != 8 ||
		    read(gofd[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < 4; i++)
			ibv_cmd_destroy_cq(&cq[i].cq);
		ibv_close_device(cctx);
		_exit(0);
	}
	if (read(pipefd[0], &child_off, 8) != 8)
		die("child");
	ret = try_map(fd, child_off, resp.drv.mmap_len, MAP_SHARED);
	CHECK(ret == EINVAL, "mmap_other_process_offset", "offset %#llx: %s",
	      (unsigned long long)child_off, strerror(ret));
	if (write(gofd[1], "x", 1) != 1)
		die("child");
	waitpid(pid, &ret, 0);
	CHECK(WIFEXITED(ret) && !WEXITSTATUS(ret), "mmap_other_process_ran",
	      "child status %#x", ret);
	ibv_close_device(ctx);
}

/* --- rings -------------------------------------------------------------- */

static struct shca_qp *sqp(struct ibv_qp *qp)
{
	return container_of(qp, struct shca_qp, vqp.qp);
}

/* Write one raw send WQE at the producer index and ring the doorbell. */
static void raw_send(struct ibv_qp *qp, const struct shca_hw_send_wqe *w,
		     uint64_t wr_id)
{
	struct shca_qp *q = sqp(qp);
	uint32_t mask = (1U << q->sq.log_depth) - 1;
	struct ibv_send_wr *bad;

	memcpy((struct shca_hw_send_wqe *)q->sq.ring + (q->sq.pi & mask), w,
	       sizeof(*w));
	q->sq.wrid[q->sq.pi & mask] = wr_id;
	q->sq.pi++;
	__atomic_store_n(&q->dbrec->sq_pi, q->sq.pi, __ATOMIC_RELEASE);
	ibv_cmd_post_send(qp, NULL, &bad);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* A raw WQE must complete with @want, on a pair reset for each case. */
static void bad_wqe(struct pair *p, const char *name,
		    struct shca_hw_send_wqe *w, enum ibv_wc_status want)
{
	struct ibv_wc wc = {};
	int n;

	raw_send(p->a, w, 77);
	n = poll_one(p->cq, &wc);
	CHECK(n == 1 && wc.status == want && wc.wr_id == 77 &&
	      wc.qp_num == p->a->qp_num, name, "n %d status %s wr_id %llu",
	      n, ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
	/* The QP is in error now: start it over. */
	while (ibv_poll_cq(p->cq, 1, &wc) > 0)
		;
	if (reset_qp(p->a) || reset_qp(p->b) ||
	    connect_qp(p, p->a, p->b->qp_num) ||
	    connect_qp(p, p->b, p->a->qp_num))
		die("reconnect");
}

static void test_rings(void)
{
	struct shca_hw_send_wqe w;
	struct ibv_async_event ev;
	struct shca_qp *q;
	struct ibv_wc wc;
	struct pair p;
	int n;

	pair_open(&p);
	memset(&w, 0, sizeof(w));
	w.opcode = 99;
	w.flags = SHCA_WQE_F_SIGNALED;
	bad_wqe(&p, "ring_bad_opcode", &w, IBV_WC_LOC_QP_OP_ERR);

	memset(&w, 0, sizeof(w));
	w.opcode = SHCA_WQE_SEND;
	w.flags = SHCA_WQE_F_SIGNALED;
	w.num_sge = 200;
	bad_wqe(&p, "ring_too_many_sges", &w, IBV_WC_LOC_QP_OP_ERR);

	w.num_sge = 0;
	w.flags |= SHCA_WQE_F_INLINE;
	w.inline_len = 100000;
	bad_wqe(&p, "ring_inline_too_long", &w, IBV_WC_LOC_QP_OP_ERR);

	memset(&w, 0, sizeof(w));
	w.opcode = SHCA_WQE_SEND;
	w.flags = SHCA_WQE_F_SIGNALED;
	w.num_sge = 1;
	w.sge[0].addr = (uintptr_t)p.buf;
	w.sge[0].length = 64;
	w.sge[0].lkey = p.mr->lkey ^ 0x5a5a00;
	bad_wqe(&p, "ring_bad_lkey", &w, IBV_WC_LOC_PROT_ERR);

	w.sge[0].lkey = p.mr->lkey;
	w.sge[0].addr = (uintptr_t)p.buf + BUFSZ - 8;
	bad_wqe(&p, "ring_sge_past_the_mr", &w, IBV_WC_LOC_PROT_ERR);

	/* Fast registration names a kernel page list: never for a process. */
	memset(&w, 0, sizeof(w));
	w.opcode = SHCA_WQE_REG_MR;
	w.flags = SHCA_WQE_F_SIGNALED;
	w.reg.pbl = 0xffff888000000000ULL;
	w.reg.npages = 1;
	w.reg.page_shift = 12;
	w.reg.length = 4096;
	w.reg.key = p.mr->lkey;
	w.reg.access = 0xf;
	bad_wqe(&p, "ring_reg_mr_refused", &w, IBV_WC_LOC_QP_OP_ERR);

	/* A process's LOCAL_INV invalidates its memory windows, no MR. */
	memset(&w, 0, sizeof(w));
	w.opcode = SHCA_WQE_LOCAL_INV;
	w.flags = SHCA_WQE_F_SIGNALED;
	w.imm_inv = p.mr->lkey;
	bad_wqe(&p, "ring_local_inv_refused", &w, IBV_WC_LOC_PROT_ERR);

	/* A producer index the ring cannot hold: the QP fails, alone. */
	q = sqp(p.a);
	__atomic_store_n(&q->dbrec->sq_pi, q->sq.pi + 100000,
			 __ATOMIC_RELEASE);
	{
		struct ibv_send_wr *bad;

		ibv_cmd_post_send(p.a, NULL, &bad);
	}
	n = 0;
	while (n++ < 5000 && qp_state(p.a) != IBV_QPS_ERR)
		usleep(1000);
	CHECK(qp_state(p.a) == IBV_QPS_ERR, "ring_sq_pi_out_of_range",
	      "QP state %d", qp_state(p.a));
	{
		/* Earlier cases raised access errors: find the fatal one. */
		struct pollfd pfd = { p.ctx->async_fd, POLLIN, 0 };
		int fatal = 0;

		while (!fatal && poll(&pfd, 1, 5000) == 1 &&
		       !ibv_get_async_event(p.ctx, &ev)) {
			fatal = ev.event_type == IBV_EVENT_QP_FATAL &&
				ev.element.qp == p.a;
			ibv_ack_async_event(&ev);
		}
		CHECK(fatal, "ring_sq_pi_fatal_event", "no QP fatal event");
	}
	{
		/*
		 * Flushed, in ERR, its index still garbage: the QP costs
		 * the execution units nothing from now on.  Ten seconds of
		 * it use under 1% of a CPU in kworkers, and no turn looks
		 * for work it cannot find.
		 */
		unsigned long long rechecks = hw_counter("doorbell_rechecks");
		long long ticks = kworker_ticks();
		long hz = sysconf(_SC_CLK_TCK);

		sleep(10);
		rechecks = hw_counter("doorbell_rechecks") - rechecks;
		ticks = kworker_ticks() - ticks;
		CHECK(hw_counter("doorbell_rechecks") != ~0ULL && rechecks < 100,
		      "ring_sq_pi_garbage_no_busy_turn",
		      "%llu rechecks in 10 s", rechecks);
		CHECK(ticks * 100 < 10 * hz, "ring_sq_pi_garbage_costs_no_cpu",
		      "kworkers used %lld of %ld ticks in 10 s", ticks,
		      10 * hz);
	}
	q->sq.pi = 0;
	if (reset_qp(p.a) || reset_qp(p.b) ||
	    connect_qp(&p, p.a, p.b->qp_num) ||
	    connect_qp(&p, p.b, p.a->qp_num))
		die("reconnect");

	/* A receive WQE with too many SGEs fails the receive. */
	{
		struct shca_qp *r = sqp(p.b);
		struct shca_hw_recv_wqe *rw = r->rq.ring;

		memset(rw, 0, sizeof(*rw));
		rw->num_sge = 1000;
		r->rq.wrid[0] = 88;
		r->rq.pi = 1;
		__atomic_store_n(&r->dbrec->rq_pi, 1, __ATOMIC_RELEASE);
		post_send(p.a, IBV_WR_SEND, p.mr, p.buf, 8, 0, 0, 9);
		n = 0;
		while (poll_one(p.cq, &wc) && n < 4) {
			n++;
			if (wc.wr_id == 88)
				break;
		}
		CHECK(wc.wr_id == 88 && wc.status != IBV_WC_SUCCESS,
		      "ring_recv_too_many_sges", "wr_id %llu status %s",
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status));
	}
	pair_close(&p);
	traffic_ok("rings_device_still_works");
}

/* --- MR bounds and rights ----------------------------------------------- */

static void test_mr(void)
{
	struct ibv_mr *ro, *small;
	struct ibv_wc wc;
	struct pair p;
	char *rbuf;
	int n;

	pair_open(&p);
	rbuf = aligned_alloc(4096, 8192);
	ro = ibv_reg_mr(p.pd, rbuf, 8192, IBV_ACCESS_LOCAL_WRITE);
	small = ibv_reg_mr(p.pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!rbuf || !ro || !small)
		die("MRs");
	struct {
		const char *name;
		enum ibv_wr_opcode op;
		struct ibv_mr *mr;
		uint64_t off;
		uint32_t len;
	} cases[] = {
		{ "mr_write_without_remote_write", IBV_WR_RDMA_WRITE, ro, 0, 64 },
		{ "mr_read_without_remote_read", IBV_WR_RDMA_READ, ro, 0, 64 },
		{ "mr_atomic_without_remote_atomic",
		  IBV_WR_ATOMIC_FETCH_AND_ADD, ro, 0, 8 },
		{ "mr_write_past_the_end", IBV_WR_RDMA_WRITE, small, 4090, 64 },
		{ "mr_read_before_the_start", IBV_WR_RDMA_READ, small,
		  (uint64_t)-64, 64 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		post_send(p.a, cases[i].op, p.mr, p.buf, cases[i].len,
			  (uintptr_t)rbuf + cases[i].off, cases[i].mr->rkey,
			  i);
		n = poll_one(p.cq, &wc);
		CHECK(n == 1 && wc.status == IBV_WC_REM_ACCESS_ERR,
		      cases[i].name, "n %d status %s", n,
		      ibv_wc_status_str(wc.status));
		while (ibv_poll_cq(p.cq, 1, &wc) > 0)
			;
		if (reset_qp(p.a) || reset_qp(p.b) ||
		    connect_qp(&p, p.a, p.b->qp_num) ||
		    connect_qp(&p, p.b, p.a->qp_num))
			die("reconnect");
	}
	/* Inside the bounds with the rights: it works. */
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 64,
		  (uintptr_t)rbuf + 4096 - 64, small->rkey, 50);
	n = poll_one(p.cq, &wc);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS, "mr_write_at_the_end",
	      "n %d status %s", n, ibv_wc_status_str(wc.status));

	/*
	 * An MR named by an address of its own: at the same place in a page
	 * as the memory it is registered at, or refused.
	 */
	{
		int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		struct ibv_mr *mr;

		errno = 0;
		mr = ibv_reg_mr_iova(p.pd, rbuf, 4096,
				     (uintptr_t)rbuf + 100, access);
		CHECK(!mr && errno == EINVAL, "mr_iova_other_page_offset",
		      "%s", mr ? "registered" : strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
		mr = ibv_reg_mr_iova(p.pd, rbuf, 8192, 0x40000000, access);
		if (!mr)
			die("ibv_reg_mr_iova");
		memset(rbuf, 0, 8192);
		memcpy(p.buf, "by iova", 8);
		post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 8,
			  0x40000000 + 4100, mr->rkey, 51);
		n = poll_one(p.cq, &wc);
		CHECK(n == 1 && wc.status == IBV_WC_SUCCESS &&
		      !memcmp(rbuf + 4100, "by iova", 8), "mr_write_by_iova",
		      "n %d status %s", n, ibv_wc_status_str(wc.status));
		ibv_dereg_mr(mr);
	}
	ibv_dereg_mr(ro);
	ibv_dereg_mr(small);
	free(rbuf);
	pair_close(&p);
}

/* --- memory windows ---------------------------------------------------- */

#define MW_OPS	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_BIND_MW | \
		 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV)

static void mw_reconnect(struct pair *p)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(p->cq, 1, &wc) > 0)
		;
	if (reset_qp(p->a) || reset_qp(p->b) ||
	    connect_qp(p, p->a, p->b->qp_num) ||
	    connect_qp(p, p->b, p->a->qp_num))
		die("mw reconnect");
}

/* Post a type 2 bind on @qp; returns what ibv_post_send() said. */
static int mw_post_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey,
			struct ibv_mr *mr, void *addr, size_t len,
			unsigned int access, uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return ibv_post_send(qp, &wr, &bad);
}

/* The next completion is @wr_id's, with @status. */
static void mw_expect(struct ibv_cq *cq, enum ibv_wc_status status,
		      uint64_t wr_id, const char *name)
{
	struct ibv_wc wc;
	int n = poll_one(cq, &wc);

	CHECK(n == 1 && wc.status == status && wc.wr_id == wr_id, name,
	      "n %d status %s wr_id %llu", n,
	      n == 1 ? ibv_wc_status_str(wc.status) : "-",
	      n == 1 ? (unsigned long long)wc.wr_id : 0ULL);
}

static void test_mw(void)
{
	const unsigned int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *mr, *nobind, *foreign;
	struct ibv_mw *mw1, *mw2, copy;
	struct ibv_mw_bind bind = {};
	struct ibv_pd *pd2;
	struct pair p;
	uint32_t key;
	char *rbuf;
	int ret;

	pair_open(&p);
	rbuf = aligned_alloc(4096, 8192);
	pd2 = ibv_alloc_pd(p.ctx);
	if (!rbuf || !pd2)
		die("mw resources");
	mr = ibv_reg_mr(p.pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);
	nobind = ibv_reg_mr(p.pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	foreign = ibv_reg_mr(pd2, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_MW_BIND);
	if (!mr || !nobind || !foreign)
		die("mw MRs");

	errno = 0;
	mw1 = ibv_alloc_mw(p.pd, 3);
	CHECK(!mw1 && errno == EINVAL, "mw_alloc_bad_type", "%s",
	      mw1 ? "allocated" : strerror(errno));
	if (mw1)
		ibv_dealloc_mw(mw1);
	mw1 = ibv_alloc_mw(p.pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	if (!mw1 || !mw2)
		die("ibv_alloc_mw");

	/* Type 1, through ibv_bind_mw(): one byte past the MR. */
	bind.wr_id = 1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)rbuf;
	bind.bind_info.length = 4097;
	bind.bind_info.mw_access_flags = rw;
	ret = ibv_bind_mw(p.b, mw1, &bind);
	CHECK(!ret, "mw_bind_beyond_mr_posted", "%s", strerror(ret));
	mw_expect(p.cq, IBV_WC_MW_BIND_ERR, 1, "mw_bind_beyond_mr");
	mw_reconnect(&p);
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 64, (uintptr_t)rbuf,
		  mw1->rkey, 2);
	mw_expect(p.cq, IBV_WC_REM_ACCESS_ERR, 2, "mw_unbound_after_bad_bind");
	mw_reconnect(&p);

	/* An MR without the MW bind right, and an MR of another PD. */
	bind.wr_id = 3;
	bind.bind_info.mr = nobind;
	bind.bind_info.length = 4096;
	ret = ibv_bind_mw(p.b, mw1, &bind);
	CHECK(!ret, "mw_bind_no_mw_bind_posted", "%s", strerror(ret));
	mw_expect(p.cq, IBV_WC_MW_BIND_ERR, 3, "mw_bind_without_mw_bind_access");
	mw_reconnect(&p);
	ret = mw_post_bind(p.b, mw2, ibv_inc_rkey(mw2->rkey), foreign, rbuf,
			   4096, rw, 4);
	CHECK(!ret, "mw_bind_foreign_pd_posted", "%s", strerror(ret));
	mw_expect(p.cq, IBV_WC_MW_BIND_ERR, 4, "mw_bind_foreign_pd");
	mw_reconnect(&p);
	/* Rights a window cannot have: refused at the post. */
	ret = mw_post_bind(p.b, mw2, ibv_inc_rkey(mw2->rkey), mr, rbuf, 4096,
			   rw | IBV_ACCESS_MW_BIND, 5);
	CHECK(ret == EINVAL, "mw_bind_bad_rights", "post returned %d", ret);

	/* A good type 2 bind: the window works and holds the MR. */
	key = ibv_inc_rkey(mw2->rkey);
	ret = mw_post_bind(p.b, mw2, key, mr, rbuf + 1024, 1024, rw, 6);
	CHECK(!ret, "mw_bind_type2_posted", "%s", strerror(ret));
	mw_expect(p.cq, IBV_WC_SUCCESS, 6, "mw_bind_type2");
	memset(rbuf, 0, 4096);
	memset(p.buf, 0x5c, 64);
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 64,
		  (uintptr_t)rbuf + 1024, key, 7);
	mw_expect(p.cq, IBV_WC_SUCCESS, 7, "mw_write_through_type2");
	CHECK(!memcmp(rbuf + 1024, p.buf, 64), "mw_write_landed", "%s",
	      "bytes differ");
	ret = ibv_dereg_mr(mr);
	CHECK(ret == EBUSY, "mw_dereg_mr_with_window_bound", "%s",
	      ret ? strerror(ret) : "deregistered");
	if (!ret)
		die("MR gone under its window");
	/* A process invalidates its windows, never an MR. */
	{
		struct ibv_send_wr wr = {
			.wr_id = 8, .opcode = IBV_WR_LOCAL_INV,
			.send_flags = IBV_SEND_SIGNALED,
			.invalidate_rkey = mr->rkey,
		}, *bad;

		ret = ibv_post_send(p.b, &wr, &bad);
		CHECK(!ret, "mw_local_inv_mr_posted", "%s", strerror(ret));
		mw_expect(p.cq, IBV_WC_LOC_PROT_ERR, 8, "mw_local_inv_of_an_mr");
		mw_reconnect(&p);
		wr.wr_id = 9;
		wr.invalidate_rkey = key;
		ret = ibv_post_send(p.b, &wr, &bad);
		CHECK(!ret, "mw_local_inv_posted", "%s", strerror(ret));
		mw_expect(p.cq, IBV_WC_SUCCESS, 9, "mw_local_inv_of_a_window");
	}
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 64,
		  (uintptr_t)rbuf + 1024, key, 10);
	mw_expect(p.cq, IBV_WC_REM_ACCESS_ERR, 10, "mw_write_after_local_inv");
	mw_reconnect(&p);

	/* Dealloc twice: the second names a handle that is gone. */
	copy = *mw1;
	CHECK(!ibv_dealloc_mw(mw1), "mw_dealloc", "%s", strerror(errno));
	ret = ibv_cmd_dealloc_mw(&copy);
	CHECK(ret == EINVAL || ret == ENOENT, "mw_dealloc_twice",
	      "returned %d", ret);
	CHECK(!ibv_dealloc_mw(mw2), "mw_dealloc_type2", "%s", strerror(errno));
	CHECK(!ibv_dereg_mr(mr), "mw_dereg_mr_after_dealloc", "%s",
	      strerror(errno));
	if (ibv_dereg_mr(nobind) || ibv_dereg_mr(foreign) ||
	    ibv_dealloc_pd(pd2))
		die("mw teardown");
	free(rbuf);
	pair_close(&p);
	traffic_ok("mw_traffic_after");
}

/* --- conformance: what IBTA allows that a careful reading might refuse -- */

/* An RDMA WRITE of 64 bytes through @rkey at @raddr lands at @where. */
static void conform_write(struct pair *p, uint32_t rkey, uint64_t raddr,
			  char *where, const char *name)
{
	struct ibv_wc wc;
	int n;

	memset(where, 0, 64);
	memset(p->buf, 0x3c, 64);
	post_send(p->a, IBV_WR_RDMA_WRITE, p->mr, p->buf, 64, raddr, rkey, 1);
	n = poll_one(p->cq, &wc);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS &&
	      !memcmp(where, p->buf, 64), name, "n %d status %s", n,
	      n ? ibv_wc_status_str(wc.status) : "-");
	if (n == 1 && wc.status != IBV_WC_SUCCESS)
		mw_reconnect(p);
}

/* Regions addressed by an iova of their own, zero-based ones among them. */
static void conform_iova(struct pair *p, char *rbuf)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ;
	static const struct {
		const char *name;
		uint64_t iova;
	} c[] = {
		{ "conform_iova_mr_write", 0x7f0000000000ULL },
		{ "conform_zero_based_mr_write", 0 },
	};
	struct ibv_mr *mr;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		mr = ibv_reg_mr_iova(p->pd, rbuf, 8192, c[i].iova, acc);
		if (!mr) {
			CHECK(0, c[i].name, "ibv_reg_mr_iova: %s",
			      strerror(errno));
			continue;
		}
		/* The second page, 100 bytes in. */
		conform_write(p, mr->rkey, c[i].iova + 4196, rbuf + 4196,
			      c[i].name);
		if (ibv_dereg_mr(mr))
			die("ibv_dereg_mr");
	}
}

/*
 * Type 2 windows: zero-based, and bound again after an invalidation with
 * the key the consumer chose, while the ibv_mw still holds the key it was
 * allocated with (libibverbs changes it for ibv_bind_mw() alone).  Remote
 * read through a window needs only MW_BIND on its region.
 */
static void conform_mw(struct pair *p, char *rbuf)
{
	const unsigned int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_send_wr inv = {
		.wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_mr *mr, *ro;
	uint32_t key, key2;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	int ret, n;

	mr = ibv_reg_mr(p->pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);
	ro = ibv_reg_mr(p->pd, rbuf + 4096, 4096, IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
	if (!mr || !ro || !mw)
		die("conform mw resources");
	key = ibv_inc_rkey(mw->rkey);
	ret = mw_post_bind(p->b, mw, key, mr, rbuf + 1024, 1024,
			   rw | IBV_ACCESS_ZERO_BASED, 2);
	CHECK(!ret, "conform_mw_zero_based_bind_posted", "%s", strerror(ret));
	mw_expect(p->cq, IBV_WC_SUCCESS, 2, "conform_mw_zero_based_bind");
	conform_write(p, key, 64, rbuf + 1024 + 64,
		      "conform_mw_zero_based_write");

	inv.invalidate_rkey = key;
	ret = ibv_post_send(p->b, &inv, &bad);
	CHECK(!ret, "conform_mw_local_inv_posted", "%s", strerror(ret));
	mw_expect(p->cq, IBV_WC_SUCCESS, 3, "conform_mw_local_inv");
	key2 = ibv_inc_rkey(key);
	ret = mw_post_bind(p->b, mw, key2, mr, rbuf, 4096, rw, 4);
	CHECK(!ret, "conform_mw_rebind_posted", "%s", strerror(ret));
	mw_expect(p->cq, IBV_WC_SUCCESS, 4, "conform_mw_rebind_consumer_key");
	conform_write(p, key2, (uintptr_t)rbuf + 512, rbuf + 512,
		      "conform_mw_rebound_write");
	post_send(p->a, IBV_WR_RDMA_WRITE, p->mr, p->buf, 64,
		  (uintptr_t)rbuf + 512, key, 5);
	mw_expect(p->cq, IBV_WC_REM_ACCESS_ERR, 5, "conform_mw_old_key_refused");
	mw_reconnect(p);

	/* Read-only window over a region with MW_BIND alone. */
	inv.wr_id = 6;
	inv.invalidate_rkey = key2;
	ret = ibv_post_send(p->b, &inv, &bad);
	mw_expect(p->cq, IBV_WC_SUCCESS, 6, "conform_mw_local_inv_again");
	key = ibv_inc_rkey(key2);
	ret = mw_post_bind(p->b, mw, key, ro, rbuf + 4096, 4096,
			   IBV_ACCESS_REMOTE_READ, 7);
	mw_expect(p->cq, IBV_WC_SUCCESS, 7, "conform_mw_read_only_bind");
	memset(rbuf + 4096, 0x7e, 64);
	post_send(p->a, IBV_WR_RDMA_READ, p->mr, p->buf + 256, 64,
		  (uintptr_t)rbuf + 4096, key, 8);
	n = poll_one(p->cq, &wc);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS &&
	      !memcmp(p->buf + 256, rbuf + 4096, 64), "conform_mw_read_only_read",
	      "n %d status %s", n, n ? ibv_wc_status_str(wc.status) : "-");
	if (ibv_dealloc_mw(mw) || ibv_dereg_mr(mr) || ibv_dereg_mr(ro))
		die("conform mw teardown");
}

/* A zero-length region, and zero-byte operations through it. */
static void conform_zero_length_mr(struct pair *p, char *rbuf)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, 0, 0 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 20, .sg_list = &sge,
				   .num_sge = 1 }, *rbad;
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND,
	};
	struct ibv_wc wc;
	struct ibv_mr *mr;
	int i, n, ok = 1;

	mr = ibv_reg_mr(p->pd, rbuf, 0, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "conform_zero_length_mr", "%s", strerror(errno));
	if (!mr)
		return;
	CHECK(mr->length == 0, "conform_zero_length_mr_length", "%zu",
	      mr->length);
	sge.lkey = mr->lkey;
	wr.wr.rdma.remote_addr = (uintptr_t)rbuf;
	wr.wr.rdma.rkey = mr->rkey;
	if (ibv_post_recv(p->b, &rwr, &rbad))
		die("conform post_recv");
	for (i = 0; i < (int)ARRAY_SIZE(ops); i++) {
		wr.wr_id = 21 + i;
		wr.opcode = ops[i];
		if (ibv_post_send(p->a, &wr, &bad))
			die("conform post_send");
	}
	/* Three sends and the receive. */
	for (i = 0; i < 4; i++) {
		n = poll_one(p->cq, &wc);
		if (n != 1 || wc.status != IBV_WC_SUCCESS) {
			ok = 0;
			break;
		}
	}
	CHECK(ok, "conform_zero_length_mr_zero_byte_ops", "completion %d: %s",
	      i, n == 1 ? ibv_wc_status_str(wc.status) : "none");
	if (!ok)
		mw_reconnect(p);
	CHECK(!ibv_dereg_mr(mr), "conform_zero_length_mr_dereg", "%s",
	      strerror(errno));
}

/*
 * A READ or an atomic whose lkey and rkey are both bad, or an unaligned
 * atomic with a bad lkey, fails on the requester's local check first:
 * IBV_WC_LOC_PROT_ERR, and the peer sees nothing.
 */
static void conform_local_first(struct pair *p)
{
	static const struct {
		const char *name;
		enum ibv_wr_opcode op;
		uint64_t off;
	} c[] = {
		{ "conform_read_bad_lkey_and_rkey", IBV_WR_RDMA_READ, 0 },
		{ "conform_atomic_bad_lkey_and_rkey",
		  IBV_WR_ATOMIC_FETCH_AND_ADD, 0 },
		{ "conform_atomic_unaligned_bad_lkey",
		  IBV_WR_ATOMIC_FETCH_AND_ADD, 4 },
	};
	struct ibv_mr bad = *p->mr;
	struct ibv_wc wc;
	size_t i;
	int n;

	bad.lkey ^= 0x5a5a00;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		post_send(p->a, c[i].op, &bad, p->buf, 8,
			  (uintptr_t)p->buf + 4096 + c[i].off,
			  c[i].off ? p->mr->rkey : p->mr->rkey ^ 0x5a5a00,
			  40 + i);
		n = poll_one(p->cq, &wc);
		CHECK(n == 1 && wc.status == IBV_WC_LOC_PROT_ERR, c[i].name,
		      "n %d status %s", n,
		      n ? ibv_wc_status_str(wc.status) : "-");
		mw_reconnect(p);
	}
}

/* A UD datagram's GRH: the IPv4 header carries the AH's traffic class. */
static void conform_ud_tos(struct pair *p, char *rbuf)
{
	struct ibv_qp_init_attr init = {
		.send_cq = p->cq, .recv_cq = p->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x1234 };
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = GIDX, .hop_limit = 9,
			 .traffic_class = 252 },
	};
	struct ibv_send_wr wr = { .wr_id = 30, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .num_sge = 1 }, *bad;
	struct ibv_sge sge = { (uintptr_t)p->buf, 32, p->mr->lkey };
	struct ibv_qp *tx, *rx;
	struct ibv_wc wc[2];
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	int n = 0, i;

	tx = ibv_create_qp(p->pd, &init);
	rx = ibv_create_qp(p->pd, &init);
	mr = ibv_reg_mr(p->pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!tx || !rx || !mr || ibv_query_gid(p->ctx, 1, GIDX, &aha.grh.dgid))
		die("conform ud resources");
	for (i = 0; i < 2; i++) {
		struct ibv_qp *qp = i ? rx : tx;

		a.qp_state = IBV_QPS_INIT;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_QKEY))
			die("conform ud init");
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			die("conform ud rtr");
		a.qp_state = IBV_QPS_RTS;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
			die("conform ud rts");
	}
	ah = ibv_create_ah(p->pd, &aha);
	if (!ah)
		die("conform ud ah");
	memset(rbuf, 0, 128);
	if (post_recv(rx, mr, rbuf, 40 + 32, 31))
		die("conform ud recv");
	wr.sg_list = &sge;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = rx->qp_num;
	wr.wr.ud.remote_qkey = 0x1234;
	if (ibv_post_send(tx, &wr, &bad))
		die("conform ud send");
	while (n < 2 && poll_one(p->cq, &wc[n]))
		n++;
	CHECK(n == 2 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[1].status == IBV_WC_SUCCESS, "conform_ud_send", "n %d", n);
	/* RoCE v2 over IPv4: the header is the GRH's last 20 bytes. */
	CHECK((unsigned char)rbuf[20] == 0x45 &&
	      (unsigned char)rbuf[21] == 252 && (unsigned char)rbuf[28] == 9,
	      "conform_ud_ipv4_tos_and_ttl", "version/ihl %#x tos %u ttl %u",
	      (unsigned char)rbuf[20], (unsigned char)rbuf[21],
	      (unsigned char)rbuf[28]);
	if (ibv_destroy_ah(ah) || ibv_destroy_qp(tx) || ibv_destroy_qp(rx) ||
	    ibv_dereg_mr(mr))
		die("conform ud teardown");
}

static void test_conform(void)
{
	struct pair p;
	char *rbuf;

	pair_open(&p);
	rbuf = aligned_alloc(4096, 8192);
	if (!rbuf)
		die("conform buffer");
	conform_iova(&p, rbuf);
	conform_mw(&p, rbuf);
	conform_zero_length_mr(&p, rbuf);
	conform_local_first(&p);
	conform_ud_tos(&p, rbuf);
	free(rbuf);
	pair_close(&p);
	traffic_ok("conform_traffic_after");
}

/*
 * One ibv_alloc_mw(); prints "0", or minus the errno.  For fault_cmd.sh,
 * whose verb for ALLOC_MW it is.
 */
static void test_mw_step(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mw *mw;

	if (!pd)
		die("mw_step resources");
	errno = 0;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	printf("%d\n", mw ? 0 : -errno);
	if ((mw && ibv_dealloc_mw(mw)) || ibv_dealloc_pd(pd) ||
	    ibv_close_device(ctx))
		die("mw_step teardown");
}

/* --- RDMA FLUSH and atomic write --------------------------------------- */

#define FLUSH_OPS	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_FLUSH | \
			 IBV_QP_EX_WITH_ATOMIC_WRITE)
#define FLUSH_QP_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT)

static struct ibv_qp *new_qp_ex(struct pair *p, enum ibv_qp_type type,
				uint64_t ops)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = p->cq, .recv_cq = p->cq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = p->pd, .send_ops_flags = ops,
	};

	return ibv_create_qp_ex(p->ctx, &init);
}

/* A QP of @type asking for @ops must be refused with EOPNOTSUPP. */
static void qp_ex_refused(struct pair *p, enum ibv_qp_type type, uint64_t ops,
			  const char *name)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = new_qp_ex(p, type, ops);
	CHECK(!qp && errno == EOPNOTSUPP, name, "%s",
	      qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
}

/* Post one signaled FLUSH; returns what wr_complete said. */
static int post_flush(struct ibv_qp *qp, uint32_t rkey, uint64_t addr,
		      size_t len, uint8_t type, uint8_t level, uint64_t wr_id)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(qpx, rkey, addr, len, type, level);
	return ibv_wr_complete(qpx);
}

static int post_atomic_write(struct ibv_qp *qp, uint32_t rkey, uint64_t addr,
			     const void *value, uint64_t wr_id)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, rkey, addr, value);
	return ibv_wr_complete(qpx);
}

static void flush_reconnect(struct pair *p)
{
	struct ibv_qp_attr a = { .qp_access_flags = FLUSH_QP_ACCESS };
	struct ibv_wc wc;

	while (ibv_poll_cq(p->cq, 1, &wc) > 0)
		;
	if (reset_qp(p->a) || reset_qp(p->b) ||
	    connect_qp(p, p->a, p->b->qp_num) ||
	    connect_qp(p, p->b, p->a->qp_num) ||
	    ibv_modify_qp(p->b, &a, IBV_QP_ACCESS_FLAGS))
		die("flush reconnect");
}

static void test_flush(void)
{
	static const uint8_t value[8] = { 0xa1, 0xb2, 0xc3, 0xd4,
					  0xe5, 0xf6, 0x07, 0x18 };
	struct ibv_device_attr_ex dev = {};
	struct ibv_qp_init_attr init;
	struct ibv_mr *gmr, *pmr;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	struct pair p;
	char *rbuf;
	int n, ret;

	pair_open(&p);
	ret = ibv_query_device_ex(p.ctx, NULL, &dev);
	CHECK(!ret && (dev.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_GLOBAL) &&
	      (dev.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_PERSISTENT) &&
	      (dev.device_cap_flags_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE),
	      "flush_device_caps", "ret %d caps %#llx", ret,
	      (unsigned long long)dev.device_cap_flags_ex);

	/* Only RC has them. */
	qp_ex_refused(&p, IBV_QPT_UC, IBV_QP_EX_WITH_FLUSH, "flush_not_on_uc");
	qp_ex_refused(&p, IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_WRITE,
		      "atomic_write_not_on_ud");

	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	p.a = new_qp_ex(&p, IBV_QPT_RC, FLUSH_OPS);
	p.b = new_qp_ex(&p, IBV_QPT_RC, FLUSH_OPS);
	if (!p.a || !p.b)
		die("ibv_create_qp_ex with FLUSH and ATOMIC_WRITE");
	flush_reconnect(&p);
	ret = ibv_query_qp(p.b, &qa, IBV_QP_ACCESS_FLAGS, &init);
	CHECK(!ret && qa.qp_access_flags == FLUSH_QP_ACCESS,
	      "flush_qp_access_flags", "ret %d access %#x", ret,
	      qa.qp_access_flags);

	rbuf = aligned_alloc(4096, 8192);
	if (!rbuf)
		die("rbuf");
	memset(rbuf, 0, 8192);
	gmr = ibv_reg_mr(p.pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL |
			 IBV_ACCESS_RELAXED_ORDERING);
	pmr = ibv_reg_mr(p.pd, rbuf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_FLUSH_PERSISTENT);
	CHECK(gmr && pmr, "flush_reg_mr_access", "%s", strerror(errno));
	if (!gmr || !pmr)
		die("flush MRs");

	/* A write, then a FLUSH of what it wrote, global, then the MR. */
	memcpy(p.buf, "flushed!", 8);
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 8, (uintptr_t)rbuf,
		  gmr->rkey, 1);
	n = poll_one(p.cq, &wc);
	ret = post_flush(p.a, gmr->rkey, (uintptr_t)rbuf, 8, IBV_FLUSH_GLOBAL,
			 IBV_FLUSH_RANGE, 2);
	n += poll_one(p.cq, &wc);
	CHECK(!ret && n == 2 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_FLUSH && wc.wr_id == 2 &&
	      !memcmp(rbuf, "flushed!", 8), "flush_global_range",
	      "ret %d n %d status %s opcode %d", ret, n,
	      ibv_wc_status_str(wc.status), wc.opcode);
	ret = post_flush(p.a, pmr->rkey, 0, 0, IBV_FLUSH_PERSISTENT,
			 IBV_FLUSH_MR, 3);
	n = poll_one(p.cq, &wc);
	CHECK(!ret && n == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_FLUSH, "flush_persistent_mr",
	      "ret %d n %d status %s", ret, n, ibv_wc_status_str(wc.status));

	/* The MR lacks the placement type: a remote access error. */
	ret = post_flush(p.a, gmr->rkey, (uintptr_t)rbuf, 8,
			 IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE, 4);
	n = poll_one(p.cq, &wc);
	CHECK(!ret && n == 1 && wc.status == IBV_WC_REM_ACCESS_ERR,
	      "flush_type_not_granted", "ret %d n %d status %s", ret, n,
	      ibv_wc_status_str(wc.status));
	flush_reconnect(&p);
	ret = post_flush(p.a, gmr->rkey, (uintptr_t)rbuf + 4000, 200,
			 IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE, 5);
	n = poll_one(p.cq, &wc);
	CHECK(!ret && n == 1 && wc.status == IBV_WC_REM_ACCESS_ERR,
	      "flush_range_past_mr", "ret %d n %d status %s", ret, n,
	      ibv_wc_status_str(wc.status));
	flush_reconnect(&p);

	/*
	 * Bad arguments: refused at wr_complete, nothing posted (the next
	 * completion is the atomic write's).
	 */
	ret = post_flush(p.a, gmr->rkey, (uintptr_t)rbuf, 8, 0,
			 IBV_FLUSH_RANGE, 6);
	CHECK(ret == EINVAL, "flush_no_type", "ret %d", ret);
	ret = post_flush(p.a, gmr->rkey, (uintptr_t)rbuf, 8, 0x80,
			 IBV_FLUSH_RANGE, 7);
	CHECK(ret == EINVAL, "flush_unknown_type", "ret %d", ret);
	ret = post_flush(p.a, gmr->rkey, (uintptr_t)rbuf, 8, IBV_FLUSH_GLOBAL,
			 9, 8);
	CHECK(ret == EINVAL, "flush_unknown_level", "ret %d", ret);

	/* Atomic write: 8 aligned bytes with the remote write right. */
	ret = post_atomic_write(p.a, gmr->rkey, (uintptr_t)rbuf + 64, value,
				9);
	n = poll_one(p.cq, &wc);
	CHECK(!ret && n == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 9 &&
	      !memcmp(rbuf + 64, value, 8), "atomic_write",
	      "ret %d n %d status %s opcode %d", ret, n,
	      ibv_wc_status_str(wc.status), wc.opcode);
	ret = post_atomic_write(p.a, gmr->rkey, (uintptr_t)rbuf + 68, value,
				10);
	n = poll_one(p.cq, &wc);
	CHECK(!ret && n == 1 && wc.status == IBV_WC_REM_INV_REQ_ERR &&
	      !rbuf[72], "atomic_write_misaligned", "ret %d n %d status %s",
	      ret, n, ibv_wc_status_str(wc.status));
	flush_reconnect(&p);
	ret = post_atomic_write(p.a, pmr->rkey, (uintptr_t)rbuf + 4096, value,
				11);
	n = poll_one(p.cq, &wc);
	CHECK(!ret && n == 1 && wc.status == IBV_WC_REM_ACCESS_ERR &&
	      !rbuf[4096], "atomic_write_without_remote_write",
	      "ret %d n %d status %s", ret, n, ibv_wc_status_str(wc.status));

	ibv_dereg_mr(gmr);
	ibv_dereg_mr(pmr);
	free(rbuf);
	pair_close(&p);
	traffic_ok("flush_device_works_after");
}

/*
 * Where ib_core predates FLUSH and ATOMIC WRITE (6.1), the device offers
 * neither: no capability, no QP takes them, no MR gets their rights, and
 * the rest of the QP still works.
 */
static void test_flush_absent(void)
{
	struct ibv_device_attr_ex dev = {};
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct pair p;
	char *buf;
	int ret, ok;

	pair_open(&p);
	ret = ibv_query_device_ex(p.ctx, NULL, &dev);
	CHECK(!ret && !(dev.device_cap_flags_ex &
			(IB_UVERBS_DEVICE_FLUSH_GLOBAL |
			 IB_UVERBS_DEVICE_FLUSH_PERSISTENT |
			 IB_UVERBS_DEVICE_ATOMIC_WRITE)),
	      "flush_absent_no_caps", "ret %d caps %#llx", ret,
	      (unsigned long long)dev.device_cap_flags_ex);

	qp_ex_refused(&p, IBV_QPT_RC, IBV_QP_EX_WITH_FLUSH, "flush_absent_no_qp");
	qp_ex_refused(&p, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE,
		      "atomic_write_absent_no_qp");

	buf = aligned_alloc(4096, 4096);
	if (!buf)
		die("buf");
	errno = 0;
	mr = ibv_reg_mr(p.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_FLUSH_GLOBAL);
	CHECK(!mr && errno == EINVAL, "flush_absent_no_mr_right", "%s",
	      mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);

	/* The other extended operations are there, and traffic flows. */
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	p.a = new_qp_ex(&p, IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_SEND);
	p.b = new_qp_ex(&p, IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_SEND);
	CHECK(p.a && p.b, "flush_absent_other_ops", "%s", strerror(errno));
	if (!p.a || !p.b)
		die("ibv_create_qp_ex with WRITE and SEND");
	if (connect_qp(&p, p.a, p.b->qp_num) ||
	    connect_qp(&p, p.b, p.a->qp_num))
		die("connect");
	memcpy(p.buf, "absent!", 8);
	if (post_recv(p.b, p.mr, p.buf + 64, 8, 2) ||
	    post_send(p.a, IBV_WR_SEND, p.mr, p.buf, 8, 0, 0, 1))
		die("post");
	ret = poll_one(p.cq, &wc);
	ok = ret == 1 && wc.status == IBV_WC_SUCCESS;
	ret += poll_one(p.cq, &wc);
	CHECK(ok && ret == 2 && wc.status == IBV_WC_SUCCESS &&
	      !memcmp(p.buf + 64, "absent!", 8),
	      "flush_absent_traffic_flows", "n %d status %s", ret,
	      ibv_wc_status_str(wc.status));
	free(buf);
	pair_close(&p);
}

/* --- posting in RESET --------------------------------------------------- */

static void test_reset(void)
{
	struct shca_hw_send_wqe w = { .opcode = SHCA_WQE_SEND,
				      .flags = SHCA_WQE_F_SIGNALED };
	struct ibv_send_wr *bad;
	struct shca_qp *q;
	struct ibv_wc wc;
	struct pair p;
	int ret;

	pair_open(&p);
	if (reset_qp(p.a))
		die("reset");
	ret = post_send(p.a, IBV_WR_SEND, p.mr, p.buf, 8, 0, 0, 1);
	CHECK(ret == EINVAL, "reset_post_send", "got %s", strerror(ret));
	ret = post_recv(p.a, p.mr, p.buf, 8, 1);
	CHECK(ret == EINVAL, "reset_post_recv", "got %s", strerror(ret));
	/* Around the library: the kernel refuses the doorbell. */
	q = sqp(p.a);
	memcpy(q->sq.ring, &w, sizeof(w));
	q->sq.wrid[0] = 666;
	q->sq.pi = 1;
	__atomic_store_n(&q->dbrec->sq_pi, 1, __ATOMIC_RELEASE);
	ret = ibv_cmd_post_send(p.a, NULL, &bad);
	CHECK(ret == EINVAL, "reset_doorbell", "got %s", strerror(ret));
	/*
	 * And what was written meanwhile never runs: leaving RESET, the
	 * device starts after it, so the first completion is the next send.
	 */
	if (connect_qp(&p, p.a, p.b->qp_num))
		die("connect");
	post_recv(p.b, p.mr, p.buf, 64, 2);
	post_send(p.a, IBV_WR_SEND, p.mr, p.buf, 8, 0, 0, 1);
	ret = poll_one(p.cq, &wc);
	if (ret && wc.qp_num != p.a->qp_num)
		ret = poll_one(p.cq, &wc);
	CHECK(ret == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS,
	      "reset_leftovers_never_run", "first completion wr_id %llu %s",
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	while (ibv_poll_cq(p.cq, 1, &wc) > 0)
		;

	/* In ERR, a receive posted is flushed at once. */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		if (ibv_modify_qp(p.b, &a, IBV_QP_STATE))
			die("to ERR");
	}
	ret = post_recv(p.b, p.mr, p.buf, 64, 42);
	CHECK(ret == 0, "err_post_recv", "got %s", strerror(ret));
	ret = poll_one(p.cq, &wc);
	CHECK(ret == 1 && wc.wr_id == 42 && wc.status == IBV_WC_WR_FLUSH_ERR,
	      "err_post_recv_flushed", "n %d wr_id %llu %s", ret,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));

	/* The kernel takes no work requests and polls no CQ of a process. */
	{
		struct ibv_sge sge = { (uintptr_t)p.buf, 8, p.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = &sge,
					  .num_sge = 1 }, *rbad;

		ret = ibv_cmd_post_recv(p.a, &wr, &rbad);
		CHECK(ret == EINVAL, "kernel_post_recv_with_wrs", "got %s",
		      strerror(ret));
		errno = 0;
		ret = ibv_cmd_poll_cq(p.cq, 1, &wc);
		CHECK(ret < 0, "kernel_poll_cq", "got %d (%s)", ret,
		      strerror(errno));
	}
	pair_close(&p);
}

/* CQEs published and not yet polled, as the mapped ring shows them. */
static uint32_t cq_pending(struct ibv_cq *ibcq)
{
	struct shca_cq *cq = container_of(ibcq, struct shca_cq, vcq.cq);
	uint32_t n = 0;

	pthread_spin_lock(&cq->lock);
	while (n < (1U << cq->log_depth) &&
	       shca_cqe_published(cq->ring, cq->log_depth, cq->ci + n))
		n++;
	pthread_spin_unlock(&cq->lock);
	return n;
}

/* --- resizes -------------------------------------------------------------- */

/* Write @val to the debugfs file windows/cqe_publish/@knob of the device. */
/* Write @val into the debugfs knob @knob of race window @win. */
static int window_write(const char *win, const char *knob, unsigned int val)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/kernel/debug/shca/%s/windows/%s/%s",
		 devname, win, knob);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%u\n", val) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* Whether a pass stops in race window @win within five seconds. */
static int window_stopped(const char *win)
{
	char path[256];
	unsigned int v = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/sys/kernel/debug/shca/%s/windows/%s/hold",
		 devname, win);
	for (i = 0; i < 5000; i++) {
		f = fopen(path, "r");
		if (!f)
			return 0;
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
		/* 2: a pass is stopped in the window. */
		if (v == 2)
			return 1;
		usleep(1000);
	}
	return 0;
}

/* Write @val into the device's own debugfs knob @knob. */
static int dev_knob_write(const char *knob, unsigned int val)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/kernel/debug/shca/%s/%s", devname,
		 knob);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%u\n", val) < 0;
	return fclose(f) || ret ? -1 : 0;
}

static int window_set(const char *knob, unsigned int val)
{
	return window_write("cqe_publish", knob, val);
}

static int window_held(void)
{
	return window_stopped("cqe_publish");
}

/* Poll @n completions; they must be successes with wr_ids @first on. */
static int poll_in_order(struct ibv_cq *cq, int n, uint64_t first)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++)
		if (!poll_one(cq, &wc) || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != first + i)
			return 0;
	return ibv_poll_cq(cq, 1, &wc) == 0;
}

static void *post_write6(void *arg)
{
	struct pair *p = arg;

	post_send(p->a, IBV_WR_RDMA_WRITE, p->mr, p->buf, 64,
		  (uintptr_t)p->buf + 4096, p->mr->rkey, 6);
	return NULL;
}

struct resize_cmd {
	struct ibv_resize_cq ibv_cmd;
	struct shca_resize_cq_cmd drv;
};

struct resize_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct shca_resize_cq_resp drv;
};

/*
 * A process's CQ resized with unpolled CQEs in it: they survive, in order,
 * growing and shrinking; too small is EINVAL and changes nothing; a CQE the
 * device is publishing as the ring moves (held in the cqe_publish window)
 * lands in the new ring; bad driver data is refused.
 */
static void test_resize_cq(void)
{
	struct resize_resp resp = {};
	struct resize_cmd cmd = {};
	pthread_t poster;
	struct ibv_wc wc;
	struct pair p;
	int i, err, cqe, held;

	pair_open(&p);
	for (i = 1; i <= 5; i++)
		post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 64,
			  (uintptr_t)p.buf + 4096, p.mr->rkey, i);
	for (i = 0; i < 5000 && cq_pending(p.cq) < 5; i++)
		usleep(1000);
	cqe = p.cq->cqe;
	err = ibv_resize_cq(p.cq, 2);
	CHECK(err == EINVAL && p.cq->cqe == cqe && cq_pending(p.cq) == 5,
	      "resize_cq_below_unpolled", "err %d cqe %d pending %u", err,
	      p.cq->cqe, cq_pending(p.cq));
	err = ibv_resize_cq(p.cq, 5);
	CHECK(!err && p.cq->cqe >= 5 && p.cq->cqe < cqe &&
	      cq_pending(p.cq) == 5, "resize_cq_shrink_keeps_cqes",
	      "err %d cqe %d pending %u", err, p.cq->cqe, cq_pending(p.cq));
	err = ibv_resize_cq(p.cq, 1000);
	CHECK(!err && p.cq->cqe >= 1000 && cq_pending(p.cq) == 5,
	      "resize_cq_grow_keeps_cqes", "err %d cqe %d pending %u", err,
	      p.cq->cqe, cq_pending(p.cq));
	CHECK(poll_in_order(p.cq, 5, 1), "resize_cq_cqes_in_order",
	      "lost, reordered or failed completions");

	/*
	 * Hold the device between a CQE's body and its owner byte.  The
	 * doorbell runs an idle QP's turn in the caller, which the window
	 * stops: post from a thread of its own.
	 */
	held = !window_set("qpn", p.a->qp_num) && !window_set("hold", 1);
	if (pthread_create(&poster, NULL, post_write6, &p))
		die("pthread_create");
	held = held && window_held();
	err = ibv_resize_cq(p.cq, 16);
	window_set("hold", 0);
	window_set("qpn", 0);
	pthread_join(poster, NULL);
	CHECK(held && !err && poll_in_order(p.cq, 1, 6),
	      "resize_cq_under_a_cqe_write", "held %d err %d", held, err);

	/* Bad input: depths and driver data. */
	CHECK(ibv_resize_cq(p.cq, 0) == EINVAL, "resize_cq_zero", "accepted");
	CHECK(ibv_resize_cq(p.cq, INT32_MAX) == EINVAL, "resize_cq_huge",
	      "accepted");
	cmd.drv.comp_mask = 1;
	err = ibv_cmd_resize_cq(p.cq, 32, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	CHECK(err == EOPNOTSUPP, "resize_cq_unknown_comp_mask", "err %d", err);
	cmd.drv.comp_mask = 0;
	cmd.drv.reserved = 1;
	err = ibv_cmd_resize_cq(p.cq, 32, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	CHECK(err == EOPNOTSUPP, "resize_cq_reserved", "err %d", err);
	cmd.drv.reserved = 0;
	err = ibv_cmd_resize_cq(p.cq, 32, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp.ibv_resp));
	CHECK(err == EINVAL, "resize_cq_short_response", "err %d", err);
	err = ibv_cmd_resize_cq(p.cq, 32, &cmd.ibv_cmd, sizeof(cmd.ibv_cmd),
				&resp.ibv_resp, sizeof(resp));
	CHECK(err == EINVAL, "resize_cq_no_driver_data", "err %d", err);
	/* None of those moved the ring: it still carries traffic. */
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 64,
		  (uintptr_t)p.buf + 4096, p.mr->rkey, 7);
	CHECK(poll_one(p.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 7, "resize_cq_still_works", "no completion");
	pair_close(&p);
}

struct modify_srq_cmd {
	struct ibv_modify_srq ibv_cmd;
	struct shca_modify_srq_cmd drv;
};

static int post_srq(struct ibv_srq *srq, struct pair *p, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)p->buf + 8192, 64, p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static uint32_t srq_max_wr(struct ibv_srq *srq)
{
	struct ibv_srq_attr a = {};

	return ibv_query_srq(srq, &a) ? 0 : a.max_wr;
}

/*
 * A process's SRQ resized: posted receives and completed ones not yet
 * polled survive, in order; a shrink below them is EINVAL and changes
 * nothing; bad depths and driver data are refused.
 */
static void test_resize_srq(void)
{
	struct ibv_srq_init_attr sinit = { .attr = { .max_wr = 4,
						     .max_sge = 1 } };
	struct ibv_device_attr dattr;
	struct modify_srq_cmd cmd = {};
	struct ibv_srq_attr a = {};
	struct ibv_qp_init_attr qinit = {};
	struct ibv_qp *qa, *qb;
	struct ibv_srq *srq;
	struct ibv_cq *rcq;
	struct ibv_wc wc;
	struct pair p;
	int i, err, ok;

	pair_open(&p);
	if (ibv_query_device(p.ctx, &dattr))
		die("ibv_query_device");
	srq = ibv_create_srq(p.pd, &sinit);
	rcq = ibv_create_cq(p.ctx, 64, NULL, NULL, 0);
	if (!srq || !rcq)
		die("SRQ resources");
	qinit.send_cq = rcq;
	qinit.recv_cq = rcq;
	qinit.srq = srq;
	qinit.qp_type = IBV_QPT_RC;
	qinit.cap.max_send_wr = 16;
	qinit.cap.max_send_sge = 1;
	qb = ibv_create_qp(p.pd, &qinit);
	qa = new_qp(&p, p.cq, IBV_QPT_RC);
	if (!qb || connect_qp(&p, qa, qb->qp_num) ||
	    connect_qp(&p, qb, qa->qp_num))
		die("SRQ QPs");
	for (i = 0; i < 4; i++)
		post_srq(srq, &p, 100 + i);
	post_send(qa, IBV_WR_SEND, p.mr, p.buf, 16, 0, 0, 1);
	ok = poll_one(p.cq, &wc) && wc.status == IBV_WC_SUCCESS;
	/* Four slots in use: three posted, one completed and not polled. */
	a.max_wr = 2;
	err = ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
	CHECK(ok && err == EINVAL && srq_max_wr(srq) == 4,
	      "resize_srq_below_in_use", "err %d max_wr %u", err,
	      srq_max_wr(srq));
	a.max_wr = 12;
	err = ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
	CHECK(!err && srq_max_wr(srq) == 16, "resize_srq_grow",
	      "err %d max_wr %u", err, srq_max_wr(srq));
	for (i = 4, err = 0; i < 16; i++)
		err |= post_srq(srq, &p, 100 + i);
	CHECK(!err && post_srq(srq, &p, 116) == ENOMEM,
	      "resize_srq_grown_takes_more", "posting failed");
	for (i = 1, ok = 1; i < 16; i++) {
		post_send(qa, IBV_WR_SEND, p.mr, p.buf, 16, 0, 0, 1 + i);
		ok &= poll_one(p.cq, &wc) && wc.status == IBV_WC_SUCCESS;
	}
	for (i = 0; i < 16; i++)
		ok &= poll_one(rcq, &wc) && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == 100 + (uint64_t)i;
	CHECK(ok, "resize_srq_receives_in_order", "lost or reordered");
	a.max_wr = 2;
	err = ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
	CHECK(!err && srq_max_wr(srq) == 2, "resize_srq_shrink",
	      "err %d max_wr %u", err, srq_max_wr(srq));
	post_srq(srq, &p, 200);
	post_send(qa, IBV_WR_SEND, p.mr, p.buf, 16, 0, 0, 50);
	ok = poll_one(p.cq, &wc) && wc.status == IBV_WC_SUCCESS;
	CHECK(ok && poll_one(rcq, &wc) && wc.wr_id == 200,
	      "resize_srq_shrunk_works", "no receive");

	/* Bad input. */
	a.max_wr = 0;
	CHECK(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR) == EINVAL,
	      "resize_srq_zero", "accepted");
	a.max_wr = dattr.max_srq_wr + 1;
	CHECK(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR) == EINVAL,
	      "resize_srq_over_max", "accepted");
	a.max_wr = 8;
	a.srq_limit = 9;
	CHECK(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT) ==
	      EINVAL, "resize_srq_limit_over_depth", "accepted");
	a.srq_limit = 0;
	cmd.drv.comp_mask = 1;
	err = ibv_cmd_modify_srq(srq, &a, IBV_SRQ_MAX_WR, &cmd.ibv_cmd,
				 sizeof(cmd));
	CHECK(err == EOPNOTSUPP, "resize_srq_unknown_comp_mask", "err %d",
	      err);
	cmd.drv.comp_mask = 0;
	err = ibv_cmd_modify_srq(srq, &a, IBV_SRQ_MAX_WR, &cmd.ibv_cmd,
				 sizeof(cmd));
	CHECK(err == EINVAL, "resize_srq_no_response_address", "err %d", err);
	err = ibv_cmd_modify_srq(srq, &a, IBV_SRQ_MAX_WR, &cmd.ibv_cmd,
				 sizeof(cmd.ibv_cmd));
	CHECK(err == EINVAL, "resize_srq_no_driver_data", "err %d", err);
	CHECK(srq_max_wr(srq) == 2, "resize_srq_bad_input_changes_nothing",
	      "max_wr %u", srq_max_wr(srq));
	if (ibv_destroy_qp(qa) || ibv_destroy_qp(qb) ||
	    ibv_destroy_srq(srq) || ibv_destroy_cq(rcq))
		die("SRQ teardown");
	pair_close(&p);
}

static void reconnect(struct pair *p)
{
	if (reset_qp(p->a) || reset_qp(p->b) ||
	    connect_qp(p, p->a, p->b->qp_num) ||
	    connect_qp(p, p->b, p->a->qp_num))
		die("reconnect");
}

/* An RDMA WRITE of 64 bytes through @mr at @addr: its status. */
static int rereg_write(struct pair *p, struct ibv_mr *mr, char *addr,
		       uint64_t wr_id)
{
	struct ibv_wc wc = {};

	memset(p->buf, (int)wr_id, 64);
	memset(addr, 0, 64);
	post_send(p->a, IBV_WR_RDMA_WRITE, p->mr, p->buf, 64,
		  (uintptr_t)addr, mr->rkey, wr_id);
	if (!poll_one(p->cq, &wc) || wc.wr_id != wr_id)
		return -1;
	if (wc.status == IBV_WC_SUCCESS && memcmp(addr, p->buf, 64))
		return -2;
	return wc.status;
}

#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

/*
 * ibv_rereg_mr each way and all together, keys kept; bad input refused
 * with nothing changed.
 */
static void test_rereg(void)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	struct ibv_pd fake, *pd2;
	uint32_t lkey, rkey;
	char *r1, *r2;
	struct ibv_mr *mr;
	struct pair p;
	int st, err;

	pair_open(&p);
	r1 = aligned_alloc(4096, 8192);
	r2 = aligned_alloc(4096, 4096);
	pd2 = ibv_alloc_pd(p.ctx);
	if (!r1 || !r2 || !pd2)
		die("rereg resources");
	mr = ibv_reg_mr(p.pd, r1, 8192, RW);
	if (!mr)
		die("ibv_reg_mr");
	lkey = mr->lkey;
	rkey = mr->rkey;
	CHECK(rereg_write(&p, mr, r1, 1) == IBV_WC_SUCCESS, "rereg_before",
	      "write failed");

	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	st = rereg_write(&p, mr, r1, 2);
	CHECK(!err && st == IBV_WC_REM_ACCESS_ERR, "rereg_access_revoked",
	      "err %d status %d", err, st);
	reconnect(&p);
	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW);
	st = rereg_write(&p, mr, r1 + 4096, 3);
	CHECK(!err && st == IBV_WC_SUCCESS, "rereg_access_granted",
	      "err %d status %d", err, st);

	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, r2,
			   4096, 0);
	st = rereg_write(&p, mr, r2, 4);
	CHECK(!err && st == IBV_WC_SUCCESS && mr->addr == r2,
	      "rereg_translation_new", "err %d status %d", err, st);
	st = rereg_write(&p, mr, r1, 5);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "rereg_translation_old_gone",
	      "status %d", st);
	reconnect(&p);

	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	st = rereg_write(&p, mr, r2, 6);
	CHECK(!err && st == IBV_WC_REM_ACCESS_ERR, "rereg_pd_other",
	      "err %d status %d", err, st);
	reconnect(&p);
	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, p.pd, NULL, 0, 0);
	st = rereg_write(&p, mr, r2, 7);
	CHECK(!err && st == IBV_WC_SUCCESS, "rereg_pd_back",
	      "err %d status %d", err, st);

	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
			   pd2, r1, 8192, RW | IBV_ACCESS_REMOTE_READ);
	if (!err)
		err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, p.pd, NULL, 0,
				   0);
	st = rereg_write(&p, mr, r1 + 4096, 8);
	CHECK(!err && st == IBV_WC_SUCCESS && mr->lkey == lkey &&
	      mr->rkey == rkey, "rereg_all_keys_kept",
	      "err %d status %d keys %#x/%#x", err, st, mr->lkey, mr->rkey);

	/* Bad input: refused, and the MR works as before. */
	errno = 0;
	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE);
	CHECK(err && errno == EINVAL, "rereg_remote_write_without_local",
	      "err %d errno %d", err, errno);
	err = ibv_cmd_rereg_mr(verbs_get_mr(mr), 1 << 5, NULL, 0, 0, 0,
			       NULL, &cmd, sizeof(cmd), &resp, sizeof(resp));
	CHECK(err == EOPNOTSUPP, "rereg_unknown_flag", "err %d", err);
	err = ibv_cmd_rereg_mr(verbs_get_mr(mr), 0, NULL, 0, 0, 0, NULL,
			       &cmd, sizeof(cmd), &resp, sizeof(resp));
	CHECK(err == EINVAL, "rereg_no_flags", "err %d", err);
	memset(&fake, 0, sizeof(fake));
	fake.context = p.ctx;
	fake.handle = 0x7fff0000;
	err = ibv_cmd_rereg_mr(verbs_get_mr(mr), IBV_REREG_MR_CHANGE_PD, NULL,
			       0, 0, 0, &fake, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	/* ib_core's answer for a handle its context does not hold. */
	CHECK(err == ENOENT, "rereg_unknown_pd", "err %d", err);
	err = ibv_cmd_rereg_mr(verbs_get_mr(mr),
			       IBV_REREG_MR_CHANGE_TRANSLATION, r1, 0,
			       (uintptr_t)r1, 0, NULL, &cmd, sizeof(cmd),
			       &resp, sizeof(resp));
	CHECK(err == EINVAL, "rereg_zero_length", "err %d", err);
	err = ibv_cmd_rereg_mr(verbs_get_mr(mr),
			       IBV_REREG_MR_CHANGE_TRANSLATION, r1, 4096,
			       (uintptr_t)r1 + 8, 0, NULL, &cmd, sizeof(cmd),
			       &resp, sizeof(resp));
	CHECK(err == EINVAL, "rereg_page_offsets_differ", "err %d", err);
	st = rereg_write(&p, mr, r1, 9);
	CHECK(st == IBV_WC_SUCCESS, "rereg_bad_input_changes_nothing",
	      "status %d", st);
	if (ibv_dereg_mr(mr) || ibv_dealloc_pd(pd2))
		die("rereg teardown");
	free(r1);
	free(r2);
	pair_close(&p);
}

/*
 * One ibv_rereg_mr() of an MR's rights; prints "0", or minus the errno.
 * For fault_cmd.sh, whose verb for REREG_MPT it is.
 */
static void test_rereg_step(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;
	int err;

	if (!pd || !buf)
		die("rereg_step resources");
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	errno = 0;
	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   RW);
	printf("%d\n", err ? -errno : 0);
	if (ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		die("rereg_step teardown");
	free(buf);
}

/* --- device memory ------------------------------------------------------ */

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, size_t len,
			       uint32_t log_align, uint32_t comp_mask)
{
	struct ibv_alloc_dm_attr attr = {
		.length = len, .log_align_req = log_align,
		.comp_mask = comp_mask,
	};

	errno = 0;
	return ibv_alloc_dm(ctx, &attr);
}

#define DM_ACCESS	(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/*
 * Bad sizes, copies and MR ranges past a DM's end, a DM in use, foreign
 * handles: each gets its error and changes nothing; a DM MR then carries
 * an RDMA WRITE byte-exact, and one past its end is refused.
 */
static void test_dm(void)
{
	struct ibv_device_attr_ex dev;
	struct ibv_context *other;
	struct ibv_dm *dm, *all, *odm;
	struct ibv_mr *mr, *bad;
	uint32_t word = 0x5a5a5a5a;
	struct ibv_pd *opd;
	char rd[128];
	struct ibv_wc wc;
	struct pair p;
	size_t max;
	int r;

	pair_open(&p);
	if (ibv_query_device_ex(p.ctx, NULL, &dev))
		die("ibv_query_device_ex");
	max = dev.max_dm_size;
	CHECK(max >= 65536, "dm_max_dm_size", "max_dm_size %zu", max);

	CHECK(!dm_alloc(p.ctx, 0, 0, 0) && errno == EINVAL, "dm_size_0",
	      "errno %d", errno);
	CHECK(!dm_alloc(p.ctx, max + 1, 0, 0) && errno == EINVAL,
	      "dm_size_over_max", "errno %d", errno);
	CHECK(!dm_alloc(p.ctx, SIZE_MAX, 0, 0) && errno == EINVAL,
	      "dm_size_huge", "errno %d", errno);
	CHECK(!dm_alloc(p.ctx, 64, 40, 0) && errno == EINVAL,
	      "dm_alignment_over_max", "errno %d", errno);
	CHECK(!dm_alloc(p.ctx, 64, 0, 1) && errno == EINVAL,
	      "dm_unknown_comp_mask", "errno %d", errno);
	/* All of it, then one more byte: over what is left. */
	all = dm_alloc(p.ctx, max, 0, 0);
	CHECK(all, "dm_all_of_it", "errno %d", errno);
	CHECK(!dm_alloc(p.ctx, 4, 0, 0) && errno == ENOMEM,
	      "dm_over_what_is_left", "errno %d", errno);
	CHECK(all && !ibv_free_dm(all), "dm_free_all", "errno %d", errno);

	dm = dm_alloc(p.ctx, 100, 0, 0);
	if (!dm)
		die("ibv_alloc_dm");
	CHECK(ibv_memcpy_to_dm(dm, 100, &word, 4) == EINVAL,
	      "dm_copy_to_past_the_end", "");
	CHECK(ibv_memcpy_to_dm(dm, 96, rd, 8) == EINVAL,
	      "dm_copy_to_across_the_end", "");
	CHECK(ibv_memcpy_to_dm(dm, 2, &word, 4) == EINVAL,
	      "dm_copy_to_unaligned", "");
	CHECK(ibv_memcpy_from_dm(rd, dm, UINT64_MAX - 3, 8) == EINVAL,
	      "dm_copy_from_wrapping", "");
	CHECK(ibv_memcpy_to_dm(dm, 96, &word, 4) == 0 &&
	      ibv_memcpy_from_dm(rd, dm, 96, 4) == 0 && !memcmp(rd, &word, 4),
	      "dm_copy_last_word", "");

	errno = 0;
	bad = ibv_reg_dm_mr(p.pd, dm, 0, 104, DM_ACCESS);
	CHECK(!bad && errno == EINVAL, "dm_mr_past_the_end", "errno %d", errno);
	errno = 0;
	bad = ibv_reg_dm_mr(p.pd, dm, 104, 0, DM_ACCESS);
	CHECK(!bad && errno == EINVAL, "dm_mr_offset_past_the_end",
	      "errno %d", errno);
	errno = 0;
	bad = ibv_reg_dm_mr(p.pd, dm, 0, 64, DM_ACCESS & ~IBV_ACCESS_ZERO_BASED);
	CHECK(!bad && errno == EINVAL, "dm_mr_not_zero_based", "errno %d",
	      errno);
	errno = 0;
	bad = ibv_reg_dm_mr(p.pd, dm, 0, 64, DM_ACCESS | IBV_ACCESS_MW_BIND);
	CHECK(!bad && errno, "dm_mr_bad_access", "errno %d", errno);
	/* Atomics need 8-byte aligned memory: a zero-based MR at byte 4. */
	errno = 0;
	bad = ibv_reg_dm_mr(p.pd, dm, 4, 64, DM_ACCESS |
			    IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(!bad && errno == EINVAL, "dm_mr_atomic_misaligned", "errno %d",
	      errno);
	bad = ibv_reg_dm_mr(p.pd, dm, 8, 64, DM_ACCESS |
			    IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(bad, "dm_mr_atomic_aligned", "errno %d", errno);
	if (bad && ibv_dereg_mr(bad))
		die("ibv_dereg_mr");

	/* Foreign handles: another context's PD, and another's DM. */
	other = open_dev();
	opd = ibv_alloc_pd(other);
	if (!opd)
		die("ibv_alloc_pd");
	errno = 0;
	bad = ibv_reg_dm_mr(opd, dm, 0, 64, DM_ACCESS);
	CHECK(!bad && errno, "dm_mr_foreign_dm", "errno %d", errno);
	odm = dm_alloc(other, 64, 0, 0);
	if (!odm)
		die("ibv_alloc_dm other");
	errno = 0;
	CHECK(!ibv_import_dm(other, dm->handle + 1000) && errno,
	      "dm_import_no_such_handle", "errno %d", errno);

	mr = ibv_reg_dm_mr(p.pd, dm, 32, 64, DM_ACCESS);
	CHECK(mr, "dm_mr", "errno %d", errno);
	if (!mr)
		die("ibv_reg_dm_mr");
	r = ibv_free_dm(dm);
	CHECK(r == EBUSY, "dm_free_with_mr_busy", "returned %d", r);

	/* The MR's address 0 is the DM's byte 32. */
	memset(p.buf + 4096, 0xc3, 64);
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf + 4096, 64, 0,
		  mr->rkey, 1);
	memset(rd, 0, sizeof(rd));
	CHECK(poll_one(p.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      !ibv_memcpy_from_dm(rd, dm, 0, 100) &&
	      !memchr(rd + 32, 0, 64) && !memcmp(rd + 32, p.buf + 4096, 64) &&
	      !rd[0] && !rd[31], "dm_rdma_write", "status %d", wc.status);
	post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf + 4096, 8, 60,
		  mr->rkey, 2);
	CHECK(poll_one(p.cq, &wc) && wc.status == IBV_WC_REM_ACCESS_ERR &&
	      !ibv_memcpy_from_dm(rd + 100, dm, 96, 4) &&
	      !memcmp(rd + 100, &word, 4), "dm_rdma_write_past_the_end",
	      "status %d", wc.status);

	CHECK(!ibv_dereg_mr(mr) && !ibv_free_dm(dm), "dm_free_after_mr", "");
	CHECK(!ibv_free_dm(odm) && !ibv_dealloc_pd(opd) &&
	      !ibv_close_device(other), "dm_other_context_teardown", "");
	pair_close(&p);
	traffic_ok("dm_device_works_after");
}

/*
 * One ibv_alloc_dm(); prints "0", or minus the errno.  For fault_cmd.sh,
 * whose verb for ALLOC_DM it is.
 */
static void test_dm_step(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_dm *dm = dm_alloc(ctx, 4096, 0, 0);

	printf("%d\n", dm ? 0 : -errno);
	if ((dm && ibv_free_dm(dm)) || ibv_close_device(ctx))
		die("dm_step teardown");
}

/* fault_cmd.sh's ALLOC_XRCD: one ibv_open_xrcd(); prints 0 or -errno. */
/* --- doorbell suppression ------------------------------------------------ */

struct db_post {
	struct pair *p;
	uint64_t wr_id;
};

/* A 64-byte RDMA WRITE from a to b, from a thread of its own. */
static void *db_post_fn(void *arg)
{
	struct db_post *d = arg;
	struct pair *p = d->p;

	if (post_send(p->a, IBV_WR_RDMA_WRITE, p->mr, p->buf, 64,
		      (uintptr_t)p->buf + 8192, p->mr->rkey, d->wr_id))
		die("db post");
	return NULL;
}

/*
 * A post into a stopping turn.  The first WRITE's doorbell runs the
 * idle QP's turn in the posting thread, which the window stops after
 * the WRITE; then this thread posts a second one.  In db_idle the turn
 * still says it runs: the second post makes no system call, and once
 * released the turn finds the WQE itself (doorbell_rechecks).  In
 * db_recheck it no longer does: the post rings, and the WQE runs once.
 * The poller's windows are the same two: the turn hands the QP to a
 * poller, which stops in poll_idle or poll_recheck when it lets the QP go.
 */
static void db_hold_case(struct pair *p, const char *win, uint64_t id)
{
	struct db_post d = { p, id };
	unsigned long long rings, rechecks, after;
	int idle = !!strstr(win, "idle");
	struct ibv_wc wc;
	pthread_t poster;
	int held, first, second, none;
	char name[64];

	held = !window_write(win, "qpn", p->a->qp_num) &&
	       !window_write(win, "hold", 1);
	if (pthread_create(&poster, NULL, db_post_fn, &d))
		die("pthread_create");
	held = held && window_stopped(win);
	first = poll_one(p->cq, &wc) && wc.wr_id == id &&
		wc.status == IBV_WC_SUCCESS;
	rings = hw_counter("doorbells");
	rechecks = hw_counter("doorbell_rechecks");
	if (post_send(p->a, IBV_WR_RDMA_WRITE, p->mr, p->buf, 64,
		      (uintptr_t)p->buf + 8192, p->mr->rkey, id + 1))
		die("db post 2");
	/* Held: nothing ran it yet. */
	none = !ibv_poll_cq(p->cq, 1, &wc);
	snprintf(name, sizeof(name), "%s_post_%s", win,
		 idle ? "skips_the_doorbell" : "rings");
	CHECK(held && hw_counter("doorbells") == rings + !idle, name,
	      "held %d, doorbells %llu -> %llu", held, rings,
	      hw_counter("doorbells"));
	window_write(win, "hold", 0);
	window_write(win, "qpn", 0);
	pthread_join(poster, NULL);
	second = poll_one(p->cq, &wc) && wc.wr_id == id + 1 &&
		 wc.status == IBV_WC_SUCCESS && !ibv_poll_cq(p->cq, 1, &wc);
	snprintf(name, sizeof(name), "%s_wqe_runs_once", win);
	/*
	 * In db_recheck the doorbell queued a turn; the stopping one finds
	 * the WQE too unless that turn is still queued (then it leaves it):
	 * a worker that already started waits for the turn_mutex instead.
	 * Either way the WQE runs once.
	 */
	after = hw_counter("doorbell_rechecks");
	CHECK(first && none && second &&
	      (idle ? after == rechecks + 1 : after - rechecks <= 1), name,
	      "first %d none %d second %d rechecks %llu -> %llu", first, none,
	      second, rechecks, after);
}

static void test_doorbell(void)
{
	struct pair p;

	pair_open(&p);
	/* A turn passes the db windows only when no poller takes its QP. */
	if (dev_knob_write("poll_us", 0))
		die("poll_us");
	db_hold_case(&p, "db_idle", 1);
	db_hold_case(&p, "db_recheck", 3);
	/* No poller is passed over: the QP goes to one. */
	if (dev_knob_write("poll_us", 50) || dev_knob_write("poll_shun_us", 0))
		die("poll_us");
	db_hold_case(&p, "poll_idle", 5);
	db_hold_case(&p, "poll_recheck", 7);
	/* Back to the defaults: pollers off, a busy one passed over 1 ms. */
	if (dev_knob_write("poll_us", 0) || dev_knob_write("poll_shun_us", 1000))
		die("poll_shun_us");
	pair_close(&p);
	traffic_ok("db_device_works_after");
}

/* --- lazy doorbells ------------------------------------------------------ */

/*
 * WRITE number @k from a to b: 64 bytes of the byte k + 1, from
 * buf + 64 * k to buf + 16384 + 64 * k; its wr_id is k.
 */
static void lazy_write(struct pair *p, unsigned int k)
{
	memset(p->buf + 64 * k, (int)(k + 1), 64);
	if (post_send(p->a, IBV_WR_RDMA_WRITE, p->mr, p->buf + 64 * k, 64,
		      (uintptr_t)p->buf + 16384 + 64 * k, p->mr->rkey, k))
		die("lazy post");
}

/* Whether WRITE @k's bytes are at b (no poll: a poll would ring). */
static int lazy_landed(struct pair *p, unsigned int k)
{
	unsigned char *last = (unsigned char *)p->buf + 16384 + 64 * k + 63;

	return __atomic_load_n(last, __ATOMIC_ACQUIRE) ==
	       (unsigned char)(k + 1);
}

/* Wait up to five seconds for WRITE @k's bytes, without polling. */
static int lazy_lands(struct pair *p, unsigned int k)
{
	int i;

	for (i = 0; i < 5000 && !lazy_landed(p, k); i++)
		usleep(1000);
	return lazy_landed(p, k);
}

/* Poll WRITEs @first to @last, in order, and then nothing more. */
static int lazy_completes(struct pair *p, unsigned int first,
			  unsigned int last)
{
	struct ibv_wc wc;
	unsigned int k;

	for (k = first; k <= last; k++)
		if (!poll_one(p->cq, &wc) || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != k)
			return 0;
	return ibv_poll_cq(p->cq, 1, &wc) == 0;
}

/*
 * A pair whose a QP's backstop sweep is held in @win: WRITEs 0 to 2,
 * posted at once, rang one doorbell, which armed the backstop, and the
 * sweep stopped there.  With three outstanding, every later post finds
 * enough to be left for later, if the word says so.
 */
static int lazy_held(struct pair *p, const char *win)
{
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[3];
	unsigned int k;
	int held;

	pair_open(p);
	held = !window_write(win, "qpn", p->a->qp_num) &&
	       !window_write(win, "hold", 1);
	/* One doorbell: another would arm the backstop again. */
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < 3; k++) {
		memset(p->buf + 64 * k, (int)(k + 1), 64);
		sge[k] = (struct ibv_sge){ (uintptr_t)p->buf + 64 * k, 64,
					   p->mr->lkey };
		wr[k].wr_id = k;
		wr[k].sg_list = &sge[k];
		wr[k].num_sge = 1;
		wr[k].opcode = IBV_WR_RDMA_WRITE;
		wr[k].send_flags = IBV_SEND_SIGNALED;
		wr[k].wr.rdma.remote_addr = (uintptr_t)p->buf + 16384 + 64 * k;
		wr[k].wr.rdma.rkey = p->mr->rkey;
		wr[k].next = k < 2 ? &wr[k + 1] : NULL;
	}
	if (ibv_post_send(p->a, wr, &bad))
		die("lazy post");
	held = held && window_stopped(win);
	return held && lazy_lands(p, 2);
}

static void lazy_release(struct pair *p, const char *win)
{
	window_write(win, "hold", 0);
	window_write(win, "qpn", 0);
	pair_close(p);
}

/*
 * The sweep held before it clears the word: the fourth WRITE is left for
 * later, with no system call, and nothing runs it while the sweep is
 * held.  Released, the sweep finds it and queues the QP's turn: it lands
 * without a poll or a doorbell, and completes once.
 */
static void lazy_idle_case(void)
{
	unsigned long long rings, kicks;
	int held, unrun, landed;
	struct pair p;

	held = lazy_held(&p, "backstop_idle");
	rings = hw_counter("doorbells");
	kicks = hw_counter("backstop_kicks");
	lazy_write(&p, 3);
	unrun = !lazy_landed(&p, 3);
	CHECK(held && unrun && hw_counter("doorbells") == rings,
	      "lazy_idle_post_left_for_the_backstop",
	      "held %d, unrun %d, doorbells %llu -> %llu", held, unrun, rings,
	      hw_counter("doorbells"));
	window_write("backstop_idle", "hold", 0);
	landed = lazy_lands(&p, 3);
	CHECK(landed && hw_counter("doorbells") == rings &&
	      hw_counter("backstop_kicks") == kicks + 1 &&
	      lazy_completes(&p, 0, 3), "lazy_idle_backstop_runs_it_once",
	      "landed %d, doorbells %llu -> %llu, kicks %llu -> %llu", landed,
	      rings, hw_counter("doorbells"), kicks,
	      hw_counter("backstop_kicks"));
	lazy_release(&p, "backstop_idle");
}

/*
 * The sweep held after it cleared the word: the fourth WRITE rings, runs
 * at once, and completes once.
 */
static void lazy_recheck_case(void)
{
	unsigned long long rings;
	int held, landed;
	struct pair p;

	held = lazy_held(&p, "backstop_recheck");
	rings = hw_counter("doorbells");
	lazy_write(&p, 3);
	landed = lazy_lands(&p, 3);
	CHECK(held && landed && hw_counter("doorbells") == rings + 1,
	      "lazy_recheck_post_rings", "held %d, landed %d, doorbells %llu -> %llu",
	      held, landed, rings, hw_counter("doorbells"));
	window_write("backstop_recheck", "hold", 0);
	CHECK(lazy_completes(&p, 0, 3), "lazy_recheck_wqe_runs_once",
	      "the four WRITEs did not complete once each, in order");
	lazy_release(&p, "backstop_recheck");
}

/*
 * With the sweep held and the word set, a poll of any CQ of the context,
 * or an arm, rings what was left: the WRITE runs with no backstop.
 */
static void lazy_ring_case(int arm)
{
	unsigned long long rings;
	struct ibv_cq *other;
	struct ibv_wc wc;
	int held, unrun, landed;
	struct pair p;

	held = lazy_held(&p, "backstop_idle");
	other = ibv_create_cq(p.ctx, 4, NULL, NULL, 0);
	if (!other)
		die("ibv_create_cq");
	rings = hw_counter("doorbells");
	lazy_write(&p, 3);
	unrun = !lazy_landed(&p, 3);
	if (arm ? ibv_req_notify_cq(other, 0) : ibv_poll_cq(other, 1, &wc))
		die("lazy ring");
	/* The sweep is still held: only that doorbell can run it. */
	landed = lazy_lands(&p, 3);
	CHECK(held && unrun && landed && hw_counter("doorbells") == rings + 1,
	      arm ? "lazy_arm_rings_what_was_left" :
		    "lazy_poll_rings_what_was_left",
	      "held %d, unrun %d, landed %d, doorbells %llu -> %llu", held,
	      unrun, landed, rings, hw_counter("doorbells"));
	window_write("backstop_idle", "hold", 0);
	if (ibv_destroy_cq(other))
		die("ibv_destroy_cq");
	CHECK(lazy_completes(&p, 0, 3),
	      arm ? "lazy_arm_wqe_runs_once" : "lazy_poll_wqe_runs_once",
	      "the four WRITEs did not complete once each, in order");
	lazy_release(&p, "backstop_idle");
}

/*
 * Posts left for later in a row: the seventeenth rings, and runs all of
 * them.
 */
static void lazy_burst_case(void)
{
	unsigned long long rings, mid;
	unsigned int k;
	int held, unrun = 1, landed = 1;
	struct pair p;

	held = lazy_held(&p, "backstop_idle");
	rings = hw_counter("doorbells");
	for (k = 3; k < 19; k++)
		lazy_write(&p, k);
	for (k = 3; k < 19; k++)
		unrun &= !lazy_landed(&p, k);
	mid = hw_counter("doorbells");
	lazy_write(&p, 19);
	for (k = 3; k < 20; k++)
		landed &= lazy_lands(&p, k);
	CHECK(held && unrun && landed && mid == rings &&
	      hw_counter("doorbells") == rings + 1,
	      "lazy_seventeenth_post_rings",
	      "held %d, unrun %d, landed %d, doorbells %llu, %llu, %llu",
	      held, unrun, landed, rings, mid, hw_counter("doorbells"));
	window_write("backstop_idle", "hold", 0);
	CHECK(lazy_completes(&p, 0, 19), "lazy_burst_runs_once",
	      "the twenty WRITEs did not complete once each, in order");
	lazy_release(&p, "backstop_idle");
}

/*
 * Ping-pong: each WRITE polled before the next is posted keeps fewer
 * than four outstanding, so every post rings at once, and none arms the
 * backstop (its sweeps would cost a ping-pong CPU time); with
 * SHCA_LAZY_DOORBELL=0 every post rings, and none arms it either.
 */
static void lazy_rings_case(int off)
{
	unsigned long long rings, arms;
	struct ibv_wc wc;
	unsigned int k;
	int ok = 1;
	struct pair p;

	if (off && setenv("SHCA_LAZY_DOORBELL", "0", 1))
		die("setenv");
	pair_open(&p);
	if (off)
		unsetenv("SHCA_LAZY_DOORBELL");
	rings = hw_counter("doorbells");
	arms = hw_counter("backstop_arms");
	for (k = 0; k < 8; k++) {
		lazy_write(&p, k);
		ok &= lazy_lands(&p, k);
		if (!off)
			ok &= poll_one(p.cq, &wc) && wc.wr_id == k;
	}
	CHECK(ok && hw_counter("doorbells") == rings + 8 &&
	      hw_counter("backstop_arms") == arms,
	      off ? "lazy_off_every_post_rings" :
		    "lazy_ping_pong_rings_and_arms_nothing",
	      "ok %d, doorbells %llu -> %llu, arms %llu -> %llu", ok, rings,
	      hw_counter("doorbells"), arms, hw_counter("backstop_arms"));
	if (off)
		CHECK(lazy_completes(&p, 0, 7), "lazy_off_wqes_run_once",
		      "the eight WRITEs did not complete once each, in order");
	pair_close(&p);
}

static void test_lazy(void)
{
	/* A poller holding the QP would leave nothing to defer: off. */
	if (dev_knob_write("poll_us", 0))
		die("poll_us");
	lazy_idle_case();
	lazy_recheck_case();
	lazy_ring_case(0);
	lazy_ring_case(1);
	lazy_burst_case();
	lazy_rings_case(0);
	lazy_rings_case(1);
	traffic_ok("lazy_device_works_after");
}

/* --- CQ arm in the doorbell record --------------------------------------- */

/* A CQ event on @ch within @ms milliseconds, for @cq, acknowledged. */
static int cq_event_within(struct ibv_comp_channel *ch, struct ibv_cq *cq,
			   int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int flags;

	flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		die("fcntl");
	if (poll(&pfd, 1, ms) != 1)
		return 0;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return 0;
	ibv_ack_cq_events(ev_cq, 1);
	return ev_cq == cq;
}

struct arm_post {
	struct pair *p;
	struct ibv_qp *qp;
	uint64_t wr_id;
};

static void *arm_post_fn(void *arg)
{
	struct arm_post *d = arg;

	if (post_send(d->qp, IBV_WR_RDMA_WRITE, d->p->mr, d->p->buf, 64,
		      (uintptr_t)d->p->buf + 8192, d->p->mr->rkey, d->wr_id))
		die("arm post");
	return NULL;
}

/*
 * Every completion vector wakes its CQ's channel: the device has one per
 * CPU, and a CQ on each, armed, gets its event for a WRITE's CQE.
 */
static void cq_arm_vectors(struct pair *p, struct ibv_comp_channel *ch)
{
	struct arm_post d = { p, NULL, 0 };
	int v, n = p->ctx->num_comp_vectors, woke = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct ibv_qp *qb;
	struct ibv_cq *cq;
	struct ibv_wc wc;

	CHECK(n >= 1 && n == (cpus < 64 ? cpus : 64),
	      "cq_arm_one_vector_per_cpu", "%d vectors, %ld CPUs", n, cpus);
	for (v = 0; v < n; v++) {
		cq = ibv_create_cq(p->ctx, 16, NULL, ch, v);
		if (!cq)
			die("cq_arm: a CQ on a vector");
		d.qp = new_qp(p, cq, IBV_QPT_RC);
		qb = new_qp(p, p->cq, IBV_QPT_RC);
		if (connect_qp(p, d.qp, qb->qp_num) ||
		    connect_qp(p, qb, d.qp->qp_num))
			die("cq_arm: connect on a vector");
		d.wr_id = 100 + v;
		if (ibv_req_notify_cq(cq, 0))
			die("cq_arm: arm on a vector");
		arm_post_fn(&d);
		woke += cq_event_within(ch, cq, 5000) && poll_one(cq, &wc) &&
			wc.wr_id == d.wr_id && wc.status == IBV_WC_SUCCESS;
		if (ibv_destroy_qp(d.qp) || ibv_destroy_qp(qb) ||
		    ibv_destroy_cq(cq))
			die("cq_arm: teardown on a vector");
	}
	CHECK(woke == n, "cq_arm_every_vector_wakes", "%d of %d vectors woke",
	      woke, n);
	CHECK(!ibv_create_cq(p->ctx, 16, NULL, ch, n) && errno == EINVAL,
	      "cq_arm_no_cq_past_the_vectors", "errno %d", errno);
}

/*
 * ibv_req_notify_cq() stores a request in the CQ's doorbell record: no
 * system call (the device's doorbell counter stands still), and the next
 * CQE raises the event (cq_dbrec_arms counts the request).  Then the
 * window: the device holds after publishing a WRITE's CQE, before it
 * reads the record; the process arms into it and its poll finds the CQE;
 * once released, the event comes too, exactly once.
 */
static void test_cq_arm(void)
{
	unsigned long long rings, arms;
	struct ibv_comp_channel *ch;
	struct arm_post d;
	struct ibv_qp *qa, *qb;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	pthread_t poster;
	int held, found, early, ev, none;
	struct pair p;

	pair_open(&p);
	ch = ibv_create_comp_channel(p.ctx);
	cq = ch ? ibv_create_cq(p.ctx, 16, NULL, ch, 0) : NULL;
	if (!cq)
		die("cq_arm: channel and CQ");
	qa = new_qp(&p, cq, IBV_QPT_RC);
	qb = new_qp(&p, p.cq, IBV_QPT_RC);
	if (connect_qp(&p, qa, qb->qp_num) || connect_qp(&p, qb, qa->qp_num))
		die("cq_arm: connect");
	d = (struct arm_post){ &p, qa, 1 };

	rings = hw_counter("doorbells");
	arms = hw_counter("cq_dbrec_arms");
	CHECK(!ibv_req_notify_cq(cq, 0) && hw_counter("doorbells") == rings,
	      "cq_arm_rings_no_doorbell", "doorbells %llu -> %llu", rings,
	      hw_counter("doorbells"));
	arm_post_fn(&d);
	ev = cq_event_within(ch, cq, 5000);
	found = poll_one(cq, &wc) && wc.wr_id == 1 &&
		wc.status == IBV_WC_SUCCESS;
	CHECK(ev && found && hw_counter("cq_dbrec_arms") == arms + 1,
	      "cq_arm_next_cqe_raises_the_event",
	      "event %d, CQE %d, arms %llu -> %llu", ev, found, arms,
	      hw_counter("cq_dbrec_arms"));

	/*
	 * Armed for the next CQE, then for solicited ones before any CQE:
	 * still armed for the next, so an unsolicited WRITE's CQE wakes.
	 */
	d.wr_id = 5;
	CHECK(!ibv_req_notify_cq(cq, 0) && !ibv_req_notify_cq(cq, 1),
	      "cq_arm_next_then_solicited", "errno %d", errno);
	arm_post_fn(&d);
	ev = cq_event_within(ch, cq, 5000);
	found = poll_one(cq, &wc) && wc.wr_id == 5;
	CHECK(ev && found, "cq_arm_solicited_keeps_next",
	      "event %d, CQE %d", ev, found);

	held = !window_write("cq_arm", "qpn", qa->qp_num) &&
	       !window_write("cq_arm", "hold", 1);
	d.wr_id = 2;
	if (pthread_create(&poster, NULL, arm_post_fn, &d))
		die("pthread_create");
	held = held && window_stopped("cq_arm");
	CHECK(held && !ibv_req_notify_cq(cq, 0), "cq_arm_into_the_window",
	      "held %d", held);
	found = poll_one(cq, &wc) && wc.wr_id == 2 &&
		wc.status == IBV_WC_SUCCESS;
	early = cq_event_within(ch, cq, 50);
	window_write("cq_arm", "hold", 0);
	window_write("cq_arm", "qpn", 0);
	pthread_join(poster, NULL);
	ev = cq_event_within(ch, cq, 5000);
	none = !cq_event_within(ch, cq, 100) && !ibv_poll_cq(cq, 1, &wc);
	CHECK(found && !early && ev && none, "cq_arm_window_polls_then_wakes",
	      "CQE %d, early event %d, event %d, nothing more %d", found,
	      early, ev, none);

	if (ibv_destroy_qp(qa) || ibv_destroy_qp(qb) || ibv_destroy_cq(cq))
		die("cq_arm teardown");
	cq_arm_vectors(&p, ch);
	if (ibv_destroy_comp_channel(ch))
		die("cq_arm teardown");
	pair_close(&p);
	traffic_ok("cq_arm_device_works_after");
}

/* --- XRC ---------------------------------------------------------------- */

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};

	return ibv_open_xrcd(ctx, &a);
}

/* An XRC SRQ; @mask drops init attributes from the comp_mask. */
static struct ibv_srq *xsrq_new(struct ibv_context *ctx, struct ibv_pd *pd,
				struct ibv_xrcd *xrcd, struct ibv_cq *cq,
				uint32_t max_wr, uint32_t mask)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = max_wr, .max_sge = 1 },
		.comp_mask = (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			      IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ) &
			     ~mask,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd, .cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

/* An XRC initiator on @cq, or (@xrcd set) a target of @xrcd. */
static struct ibv_qp *xrc_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_cq *cq, struct ibv_xrcd *xrcd,
			     struct ibv_srq *srq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq, .recv_cq = cq,
		.srq = srq, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};

	if (xrcd) {
		memset(&a, 0, sizeof(a));
		a.qp_type = IBV_QPT_XRC_RECV;
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = xrcd;
	}
	return ibv_create_qp_ex(ctx, &a);
}

/* An XRC QP from RESET to RTS (initiator) or RTR (target), to @dest. */
static int xrc_connect(struct ibv_context *ctx, struct ibv_qp *qp,
		       uint32_t dest)
{
	int tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	union ibv_gid gid;

	if (ibv_query_gid(ctx, 1, GIDX, &gid) ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = GIDX;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC |
			   IBV_QP_MIN_RNR_TIMER : 0)))
		return -1;
	if (tgt)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 10;
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* An XRC send of @len bytes at @addr to SRQ @srqn; its completion status. */
static int xrc_send(struct ibv_qp *ini, struct ibv_cq *cq, struct ibv_mr *mr,
		    void *addr, uint32_t len, uint32_t srqn, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (ibv_post_send(ini, &wr, &bad))
		return -1;
	if (!poll_one(cq, &wc) || wc.wr_id != wr_id)
		return -2;
	return wc.status;
}

/*
 * XRC: creation with missing or foreign parts, an SRQ number of no SRQ
 * or of another domain, an XRC domain and CQ in use; traffic through the
 * target to the right SRQ, whose CQ names the target and the initiator.
 */
static void test_xrc(void)
{
	struct ibv_context *ctx = open_dev(), *other = open_dev();
	struct ibv_srq *srq, *srq2, *bsrq, *bad;
	struct ibv_xrcd *xrcd, *xrcd2, *oxrcd;
	struct ibv_cq *cq, *scq, *ocq;
	struct ibv_srq_init_attr battr = { .attr = { .max_wr = 4,
						     .max_sge = 1 } };
	struct ibv_qp_open_attr oattr = {};
	struct ibv_qp *ini, *tgt, *q;
	uint32_t srqn, srqn2, num;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	char *buf;
	int st;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ocq = ibv_create_cq(other, 16, NULL, NULL, 0);
	xrcd = xrcd_open(ctx);
	xrcd2 = xrcd_open(ctx);
	oxrcd = xrcd_open(other);
	buf = aligned_alloc(4096, BUFSZ);
	if (!pd || !cq || !scq || !ocq || !xrcd || !xrcd2 || !oxrcd || !buf)
		die("xrc resources");
	memset(buf, 0, BUFSZ);
	mr = ibv_reg_mr(pd, buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("xrc mr");

	errno = 0;
	bad = xsrq_new(ctx, pd, xrcd, scq, 16, IBV_SRQ_INIT_ATTR_CQ);
	CHECK(!bad && errno == EINVAL, "xrc_srq_without_cq", "errno %d", errno);
	errno = 0;
	bad = xsrq_new(ctx, pd, xrcd, ocq, 16, 0);
	CHECK(!bad && errno == EINVAL, "xrc_srq_foreign_cq", "errno %d", errno);
	errno = 0;
	bad = xsrq_new(ctx, pd, oxrcd, scq, 16, 0);
	CHECK(!bad && errno == EINVAL, "xrc_srq_foreign_xrcd", "errno %d",
	      errno);
	errno = 0;
	bad = xsrq_new(ctx, pd, xrcd, scq, 1U << 31, 0);
	CHECK(!bad && errno == EINVAL, "xrc_srq_too_deep", "errno %d", errno);
	errno = 0;
	q = xrc_qp(ctx, pd, cq, oxrcd, NULL);
	CHECK(!q && errno == EINVAL, "xrc_tgt_foreign_xrcd", "errno %d", errno);
	errno = 0;
	q = xrc_qp(ctx, pd, ocq, NULL, NULL);
	CHECK(!q && errno == EINVAL, "xrc_ini_foreign_cq", "errno %d", errno);
	bsrq = ibv_create_srq(pd, &battr);
	if (!bsrq)
		die("basic srq");
	errno = 0;
	q = xrc_qp(ctx, pd, cq, NULL, bsrq);
	CHECK(!q && errno == EINVAL, "xrc_ini_with_srq", "errno %d", errno);
	CHECK(ibv_get_srq_num(bsrq, &num) == EINVAL, "xrc_srq_num_of_basic",
	      "not refused");

	srq = xsrq_new(ctx, pd, xrcd, scq, 16, 0);
	srq2 = xsrq_new(ctx, pd, xrcd2, scq, 16, 0);
	tgt = xrc_qp(ctx, pd, NULL, xrcd, NULL);
	ini = xrc_qp(ctx, pd, cq, NULL, NULL);
	if (!srq || !srq2 || !tgt || !ini || ibv_get_srq_num(srq, &srqn) ||
	    ibv_get_srq_num(srq2, &srqn2))
		die("xrc objects");
	if (xrc_connect(ctx, tgt, ini->qp_num) ||
	    xrc_connect(ctx, ini, tgt->qp_num))
		die("xrc connect");
	st = ibv_close_xrcd(xrcd);
	CHECK(st == EBUSY, "xrc_close_xrcd_in_use", "%d", st);
	st = ibv_destroy_cq(scq);
	CHECK(st == EBUSY, "xrc_destroy_srq_cq", "%d", st);

	sge = (struct ibv_sge){ (uintptr_t)buf + 8192, 64, mr->lkey };
	rwr.wr_id = 7;
	if (ibv_post_srq_recv(srq, &rwr, &rbad))
		die("xrc post_srq_recv");
	snprintf(buf, 64, "through the target");
	st = xrc_send(ini, cq, mr, buf, 19, srqn, 1);
	CHECK(st == IBV_WC_SUCCESS && poll_one(scq, &wc) &&
	      wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 &&
	      wc.qp_num == tgt->qp_num && wc.src_qp == ini->qp_num &&
	      !strcmp(buf + 8192, "through the target"), "xrc_traffic",
	      "send %d, recv %d wr_id %llu qpn %u/%u src %u/%u", st,
	      wc.status, (unsigned long long)wc.wr_id, wc.qp_num,
	      tgt->qp_num, wc.src_qp, ini->qp_num);

	/* No SRQ of that number; then one of the other domain. */
	st = xrc_send(ini, cq, mr, buf, 19, srqn2 + 1000, 2);
	CHECK(st == IBV_WC_REM_INV_REQ_ERR, "xrc_srqn_of_no_srq", "%d", st);
	if (reset_qp(ini) || reset_qp(tgt) ||
	    xrc_connect(ctx, tgt, ini->qp_num) ||
	    xrc_connect(ctx, ini, tgt->qp_num))
		die("xrc reconnect");
	sge.addr = (uintptr_t)buf + 12288;
	rwr.wr_id = 8;
	if (ibv_post_srq_recv(srq2, &rwr, &rbad))
		die("xrc post_srq_recv 2");
	st = xrc_send(ini, cq, mr, buf, 19, srqn2, 3);
	CHECK(st == IBV_WC_REM_INV_REQ_ERR && !ibv_poll_cq(scq, 1, &wc) &&
	      !buf[12288], "xrc_srqn_of_other_domain", "%d", st);

	errno = 0;
	oattr.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			  IBV_QP_OPEN_ATTR_TYPE;
	oattr.qp_num = tgt->qp_num;
	oattr.xrcd = xrcd2;
	oattr.qp_type = IBV_QPT_XRC_RECV;
	q = ibv_open_qp(ctx, &oattr);
	CHECK(!q && errno, "xrc_open_qp_other_domain", "errno %d", errno);
	oattr.xrcd = xrcd;
	q = ibv_open_qp(ctx, &oattr);
	CHECK(q && q->qp_num == tgt->qp_num && !ibv_destroy_qp(q),
	      "xrc_open_qp", "%s", strerror(errno));

	CHECK(!ibv_destroy_qp(ini) && !ibv_destroy_qp(tgt) &&
	      !ibv_destroy_srq(srq) && !ibv_destroy_srq(srq2) &&
	      !ibv_destroy_srq(bsrq) && !ibv_close_xrcd(xrcd) &&
	      !ibv_close_xrcd(xrcd2) && !ibv_destroy_cq(scq) &&
	      !ibv_destroy_cq(cq), "xrc_teardown", "%s", strerror(errno));
	if (ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) || ibv_close_xrcd(oxrcd) ||
	    ibv_destroy_cq(ocq) || ibv_close_device(other) ||
	    ibv_close_device(ctx))
		die("xrc teardown");
	free(buf);
	traffic_ok("xrc_device_works_after");
}

static void test_xrcd_step(void)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_context *ctx = open_dev();
	struct ibv_xrcd *xrcd;

	errno = 0;
	xrcd = ibv_open_xrcd(ctx, &attr);
	printf("%d\n", xrcd ? 0 : -errno);
	if ((xrcd && ibv_close_xrcd(xrcd)) || ibv_close_device(ctx))
		die("xrcd_step teardown");
}

/*
 * fault_cmd.sh's MAP_ODP: an ODP MR, then one prefetch of it that reports
 * a failure to map (IBV_ADVISE_MR_FLAG_FLUSH); prints 0 or -errno, or
 * "none" for a device without on-demand paging.
 */
static void test_odp_step(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr_ex attr = {};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_sge sge;
	struct ibv_mr *mr;
	void *buf;
	int ret;

	if (!pd || ibv_query_device_ex(ctx, NULL, &attr))
		die("odp_step resources");
	if (!(attr.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		printf("none\n");
		if (ibv_dealloc_pd(pd) || ibv_close_device(ctx))
			die("odp_step teardown");
		return;
	}
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("odp_step mmap");
	mr = ibv_reg_mr(pd, buf, 4096,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	if (!mr)
		die("odp_step reg_mr");
	sge.addr = (uintptr_t)buf;
	sge.length = 4096;
	sge.lkey = mr->lkey;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	printf("%d\n", ret > 0 ? -ret : ret);
	if (ibv_dereg_mr(mr) || munmap(buf, 4096) || ibv_dealloc_pd(pd) ||
	    ibv_close_device(ctx))
		die("odp_step teardown");
}

/*
 * ODP self copy-on-write: one process, one ODP MR over two pages, an RC
 * QP connected to itself; page 0 written, page 1 only read (the zero
 * page) or shared with a forked child.  A message from page 0 into page 1
 * makes the responder fault page 1 for write: the fault breaks the
 * copy-on-write, whose MMU notifier invalidates the MR while the
 * requester is sending from page 0.  It must complete with the data, in
 * a bounded time.  Each variant runs in a child, which the parent gives
 * up on after ODP_COW_SECS: a device that deadlocks leaves the child
 * stuck in the kernel (and the harness's hung task check fails the run),
 * but the report still ends.
 */
#define ODP_COW_SECS	20

enum odp_cow_kind { COW_ZERO_WRITE, COW_ZERO_SEND, COW_FORK_WRITE };

static int odp_cow_run(enum odp_cow_kind kind)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct pair p = { .ctx = ctx, .pd = pd, .cq = cq };
	size_t pg = sysconf(_SC_PAGESIZE);
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char *mem;
	pid_t child = 0;
	int i, got = 0;
	char sum = 0;

	mem = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pd || !cq || mem == MAP_FAILED)
		return 2;
	memset(mem, 0x77, 64);
	for (i = 0; i < 64; i++)
		sum += mem[pg + i];	/* page 1: the zero page, read only */
	if (kind == COW_FORK_WRITE) {
		mem[pg] = 1;
		child = fork();
		if (child == 0) {
			pause();
			_exit(0);
		}
		if (child < 0)
			return 2;
	}
	mr = ibv_reg_mr(pd, mem, 2 * pg, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	qp = mr ? new_qp(&p, cq, IBV_QPT_RC) : NULL;
	if (!qp || connect_qp(&p, qp, qp->qp_num))
		return 2;
	if (kind == COW_ZERO_SEND &&
	    post_recv(qp, mr, mem + pg, 64, 1))
		return 2;
	if (post_send(qp, kind == COW_ZERO_SEND ? IBV_WR_SEND :
		      IBV_WR_RDMA_WRITE, mr, mem, 64,
		      (uintptr_t)mem + pg, mr->rkey, 2))
		return 2;
	for (i = 0; i < (kind == COW_ZERO_SEND ? 2 : 1); i++)
		got += poll_one(cq, &wc) && wc.status == IBV_WC_SUCCESS;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (got != (kind == COW_ZERO_SEND ? 2 : 1) ||
	    memcmp(mem, mem + pg, 64) || sum)
		return 1;
	if (ibv_destroy_qp(qp) || ibv_dereg_mr(mr) || ibv_destroy_cq(cq) ||
	    ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		return 2;
	return 0;
}

static void test_odp_cow(void)
{
	static const struct {
		const char *name;
		enum odp_cow_kind kind;
	} cases[] = {
		{ "odp_self_cow_zero_page_write", COW_ZERO_WRITE },
		{ "odp_self_cow_zero_page_send", COW_ZERO_SEND },
		{ "odp_self_cow_after_fork_write", COW_FORK_WRITE },
	};
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr_ex attr = {};
	int status, fds[2], rc;
	const char *why;
	unsigned int i;
	pid_t pid;
	char r;

	if (ibv_query_device_ex(ctx, NULL, &attr))
		die("odp_cow query");
	ibv_close_device(ctx);
	CHECK(attr.odp_caps.general_caps & IBV_ODP_SUPPORT &&
	      attr.odp_caps.per_transport_caps.rc_odp_caps &
	      IBV_ODP_SUPPORT_WRITE, "odp_cow_device_pages_on_demand",
	      "caps %#x", attr.odp_caps.general_caps);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (pipe(fds))
			die("pipe");
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			close(fds[0]);
			r = odp_cow_run(cases[i].kind);
			if (write(fds[1], &r, 1) != 1)
				_exit(3);
			_exit(0);
		}
		close(fds[1]);
		{
			struct pollfd pfd = { fds[0], POLLIN, 0 };

			rc = poll(&pfd, 1, ODP_COW_SECS * 1000);
		}
		r = 3;
		if (rc == 1 && read(fds[0], &r, 1) != 1)
			r = 3;
		close(fds[0]);
		why = "setup failed";
		if (rc != 1)
			why = "no answer in time: the device is stuck";
		else if (r == 1)
			why = "wrong data or completion";
		CHECK(rc == 1 && r == 0, cases[i].name, "%s", why);
		if (rc == 1)
			waitpid(pid, &status, 0);
	}
	traffic_ok("odp_cow_device_works_after");
}

/*
 * Spoofing: a and b talk on shca0.  On shca1 a QP c takes a's QPN (the
 * device's QPN cursor moved there through debugfs, where a process would
 * create and destroy QPs until it had it) and connects to b.  Its RDMA
 * WRITE and SEND reach nothing of b's: an RC spoofer runs out of retries,
 * a UC one hears nothing; b's memory is untouched, b's receive is still
 * there for a, and shca0 counts what it refused.
 */
static void spoof_one(enum ibv_qp_type type)
{
	const char *t = type == IBV_QPT_RC ? "rc" : "uc";
	struct pair p, s = {};
	char path[128], name[64];
	unsigned long long rejected;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;
	FILE *f;
	int i, n;

	pair_open(&p);
	a = new_qp(&p, p.cq, type);
	b = new_qp(&p, p.cq, type);
	if (connect_qp(&p, a, b->qp_num) || connect_qp(&p, b, a->qp_num))
		die("spoof connect");
	snprintf(name, sizeof(name), "%s", devname);
	name[strlen(name) - 1] = '1';
	snprintf(path, sizeof(path), "/sys/kernel/debug/shca/%s/next_qpn",
		 name);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%u\n", a->qp_num) < 0 || fclose(f))
		die(path);
	{
		const char *mine = devname;

		devname = name;
		s.ctx = open_dev();
		devname = mine;
	}
	s.peer = p.ctx;
	s.pd = ibv_alloc_pd(s.ctx);
	s.cq = ibv_create_cq(s.ctx, 16, NULL, NULL, 0);
	s.buf = aligned_alloc(4096, 4096);
	if (!s.pd || !s.cq || !s.buf)
		die("spoof resources");
	memset(s.buf, 0x5f, 4096);
	s.mr = ibv_reg_mr(s.pd, s.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	s.a = new_qp(&s, s.cq, type);
	if (!s.mr || connect_qp(&s, s.a, b->qp_num))
		die("spoof QP");
	snprintf(path, sizeof(path), "spoof_%s_has_the_peers_qpn", t);
	CHECK(s.a->qp_num == a->qp_num, path, "QPN %#x, not %#x",
	      s.a->qp_num, a->qp_num);

	memset(p.buf, 0x11, 8192);
	rejected = hw_counter("rx_rejected");
	post_recv(b, p.mr, p.buf + 4096, 64, 7);
	post_send(s.a, IBV_WR_RDMA_WRITE, s.mr, s.buf, 256,
		  (uintptr_t)p.buf, p.mr->rkey, 1);
	post_send(s.a, IBV_WR_SEND, s.mr, s.buf, 64, 0, 0, 2);
	for (i = n = 0; i < 2 && poll_one(s.cq, &wc); i++)
		n += type == IBV_QPT_RC ?
		     wc.status == IBV_WC_RETRY_EXC_ERR ||
		     wc.status == IBV_WC_WR_FLUSH_ERR :
		     wc.status == IBV_WC_SUCCESS;
	snprintf(path, sizeof(path), "spoof_%s_sender_hears_no_answer", t);
	CHECK(n == 2, path, "%d of 2 completions as expected", n);
	for (i = 0; i < 8192 && p.buf[i] == 0x11; i++)
		;
	snprintf(path, sizeof(path), "spoof_%s_reaches_no_byte", t);
	CHECK(i == 8192 && !ibv_poll_cq(p.cq, 1, &wc), path,
	      "byte %d written, or a completion on the victim", i);
	snprintf(path, sizeof(path), "spoof_%s_counted", t);
	CHECK(rejected != ~0ULL && hw_counter("rx_rejected") >= rejected + 2,
	      path, "rx_rejected %llu -> %llu", rejected,
	      hw_counter("rx_rejected"));

	/* The real peer's SEND takes the receive the spoofer could not. */
	snprintf(p.buf, 64, "from the peer");
	post_send(a, IBV_WR_SEND, p.mr, p.buf, 14, 0, 0, 3);
	for (i = n = 0; i < 2 && poll_one(p.cq, &wc); i++)
		n += wc.status == IBV_WC_SUCCESS &&
		     (wc.wr_id == 3 || wc.wr_id == 7);
	snprintf(path, sizeof(path), "spoof_%s_peer_still_heard", t);
	CHECK(n == 2 && !strcmp(p.buf + 4096, "from the peer"), path,
	      "%d of 2 completions", n);

	if (ibv_destroy_qp(s.a) || ibv_dereg_mr(s.mr) ||
	    ibv_destroy_cq(s.cq) || ibv_dealloc_pd(s.pd) ||
	    ibv_close_device(s.ctx) || ibv_destroy_qp(a) || ibv_destroy_qp(b))
		die("spoof teardown");
	free(s.buf);
	pair_close(&p);
}

static void test_spoof(void)
{
	spoof_one(IBV_QPT_RC);
	spoof_one(IBV_QPT_UC);
	traffic_ok("spoof_device_works_after");
}

static void test_resize(void)
{
	test_resize_cq();
	test_resize_srq();
	test_rereg();
	traffic_ok("resize_traffic_after");
}

/* --- teardown with a shared CQ ------------------------------------------ */

#define NEIGHBOURS	3
#define ROUNDS		8
#define DEPTH		32

/*
 * Neighbour pairs and a victim pair share one CQ.  Each round queues sends
 * on all of them, lets the CQ fill without polling, then destroys (or
 * resets) the victim and polls everything: no completion may name the
 * victim, and each neighbour's completions arrive exactly once, in order.
 * The victim's QPN is then reissued at once (debugfs next_qpn) to a fresh
 * QP, which must not inherit a completion.
 */
static void test_teardown(void)
{
	char knob[128];
	struct ibv_qp *tx[NEIGHBOURS + 1], *rx[NEIGHBOURS + 1];
	uint64_t next[NEIGHBOURS] = { 0 }, sent[NEIGHBOURS] = { 0 };
	int r, i, k, n, bad = 0, swept_ok = 1, reuse_ok = 1, full_ok = 1;
	uint32_t victim_qpn;
	struct ibv_wc wc[16];
	struct pair p;
	FILE *f;

	pair_open(&p);
	for (i = 0; i <= NEIGHBOURS; i++) {
		tx[i] = new_qp(&p, p.cq, IBV_QPT_RC);
		rx[i] = new_qp(&p, p.cq, IBV_QPT_RC);
		if (connect_qp(&p, tx[i], rx[i]->qp_num) ||
		    connect_qp(&p, rx[i], tx[i]->qp_num))
			die("connect");
	}
	for (r = 0; r < ROUNDS; r++) {
		for (k = 0; k < 4; k++) {
			for (i = 0; i <= NEIGHBOURS; i++) {
				post_recv(rx[i], p.mr, p.buf, 64,
					  ((uint64_t)i << 32) | 0xffffffffu);
				post_send(tx[i], IBV_WR_SEND, p.mr, p.buf, 8,
					  0, 0, i < NEIGHBOURS ?
					  ((uint64_t)i << 32) | sent[i]++ :
					  0xdead0000 + k);
			}
		}
		/* Every CQE in the ring, unpolled: 4 sends, 4 receives each. */
		for (k = 0; k < 5000 &&
		     cq_pending(p.cq) < 8 * (NEIGHBOURS + 1); k++)
			usleep(1000);
		full_ok &= cq_pending(p.cq) == 8 * (NEIGHBOURS + 1);
		victim_qpn = tx[NEIGHBOURS]->qp_num;
		if (r & 1) {
			if (reset_qp(tx[NEIGHBOURS]) ||
			    reset_qp(rx[NEIGHBOURS]))
				die("victim reset");
		} else {
			if (ibv_destroy_qp(tx[NEIGHBOURS]))
				die("victim destroy");
			/* Hand its QPN to the next QP created. */
			snprintf(knob, sizeof(knob),
				 "/sys/kernel/debug/shca/%s/next_qpn", devname);
			f = fopen(knob, "w");
			if (f) {
				fprintf(f, "%u\n", victim_qpn);
				fclose(f);
			}
			tx[NEIGHBOURS] = new_qp(&p, p.cq, IBV_QPT_RC);
			reuse_ok &= tx[NEIGHBOURS]->qp_num == victim_qpn;
			if (reset_qp(rx[NEIGHBOURS]))
				die("victim peer reset");
		}
		/* Exactly the victim pair's eight went from the ring. */
		swept_ok &= cq_pending(p.cq) == 8 * NEIGHBOURS;
		/* Drain: the victim and its peer must be silent now. */
		do {
			n = ibv_poll_cq(p.cq, 16, wc);
			for (k = 0; k < n; k++) {
				i = wc[k].wr_id >> 32;
				if (wc[k].qp_num == rx[NEIGHBOURS]->qp_num) {
					swept_ok = 0;
					continue;
				}
				if ((wc[k].wr_id & 0xffffffff) == 0xffffffff)
					continue;	/* a receive */
				if (wc[k].qp_num == victim_qpn ||
				    (wc[k].wr_id & 0xffff0000) == 0xdead0000) {
					swept_ok = 0;
					continue;
				}
				if (wc[k].status != IBV_WC_SUCCESS ||
				    i >= NEIGHBOURS ||
				    (wc[k].wr_id & 0xffffffff) != next[i])
					bad++;
				else
					next[i]++;
			}
		} while (n > 0);
		if (connect_qp(&p, tx[NEIGHBOURS], rx[NEIGHBOURS]->qp_num) ||
		    connect_qp(&p, rx[NEIGHBOURS], tx[NEIGHBOURS]->qp_num))
			die("victim reconnect");
	}
	for (i = 0; i < NEIGHBOURS; i++)
		bad += next[i] != sent[i];
	CHECK(full_ok, "teardown_cq_filled_unpolled",
	      "the CQ never held every CQE before a teardown");
	CHECK(swept_ok, "teardown_no_victim_completion",
	      "a victim completion was polled after its teardown");
	CHECK(!bad, "teardown_neighbours_exactly_once_in_order",
	      "%d neighbour completions lost, doubled or out of order", bad);
	CHECK(reuse_ok, "teardown_reissued_qpn", "the QPN was not reissued");
	for (i = 0; i <= NEIGHBOURS; i++) {
		ibv_destroy_qp(tx[i]);
		ibv_destroy_qp(rx[i]);
	}
	pair_close(&p);
}

/* --- flood: unread async events stay bounded --------------------------- */

#define FLOOD_MSGS	20000
#define FLOOD_BATCH	32

/* Poll @n completions; count those that failed. */
static int poll_n(struct ibv_cq *cq, int n, int *failed)
{
	struct ibv_wc wc;
	int got = 0;

	while (got < n && poll_one(cq, &wc)) {
		got++;
		*failed += wc.status != IBV_WC_SUCCESS;
	}
	return got;
}

/*
 * Zero-length sends from @tx to @rx, in batches; an RC receiver gets a
 * receive for each (a UC one drops them).  Returns the messages sent.
 */
static int flood(struct pair *p, struct ibv_qp *tx, struct ibv_qp *rx,
		 int *failed)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	int rc = rx->qp_type == IBV_QPT_RC, sent = 0, i, n;

	while (sent < FLOOD_MSGS) {
		n = 0;
		for (i = 0; i < FLOOD_BATCH; i++) {
			if (rc && ibv_post_recv(rx, &rwr, &rbad))
				break;
			wr.wr_id = sent + i;
			if (ibv_post_send(tx, &wr, &bad))
				break;
			n++;
		}
		if (!n || poll_n(p->cq, n * (rc ? 2 : 1), failed) !=
		    n * (rc ? 2 : 1))
			break;
		sent += n;
	}
	return sent;
}

/*
 * Wait until the device's EQs are drained: every EQE handled, none owed.
 * debugfs eq has a row per EQ after two header lines: its number, CPU,
 * depth, EQEs written and acked, and objects owing it an event.
 */
static int eq_drained(void)
{
	unsigned long long written, acked;
	unsigned int eqn, depth, owing;
	char path[128], line[128];
	int i, cpu, rows, busy;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/shca/%s/eq", devname);
	for (i = 0; i < 500; i++) {
		f = fopen(path, "r");
		if (!f)
			return 0;
		rows = 0;
		busy = 0;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%u %d %u %llu %llu %u", &eqn, &cpu,
				   &depth, &written, &acked, &owing) != 6)
				continue;
			rows++;
			busy += written != acked || owing;
		}
		fclose(f);
		if (rows && !busy)
			return 1;
		usleep(10000);
	}
	return 0;
}

/*
 * A process floods its own UC and RC QPs held in RTR, and reads no async
 * event meanwhile: each receiver gets one COMM_EST for its RTR visit, not
 * one per message, so what the kernel queues for the process stays
 * bounded.  Then the receivers go to RTS and the device still works.
 */
static void test_flood(void)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_UC, IBV_QPT_RC };
	struct ibv_qp *tx[2], *rx[2];
	int comm_est[2] = { 0 }, other = 0, sent[2], failed = 0, i, fl;
	struct ibv_async_event ev;
	struct pair p;

	pair_open(&p);
	for (i = 0; i < 2; i++) {
		tx[i] = new_qp(&p, p.cq, types[i]);
		rx[i] = new_qp(&p, p.cq, types[i]);
		if (qp_to_rtr(&p, rx[i], tx[i]->qp_num) ||
		    qp_to_rtr(&p, tx[i], rx[i]->qp_num) || qp_rtr_to_rts(tx[i]))
			die("flood connect");
		sent[i] = flood(&p, tx[i], rx[i], &failed);
	}
	CHECK(sent[0] == FLOOD_MSGS && sent[1] == FLOOD_MSGS && !failed,
	      "flood_sent", "uc %d rc %d of %d, %d failed", sent[0], sent[1],
	      FLOOD_MSGS, failed);
	CHECK(eq_drained(), "flood_eq_drained",
	      "the device's EQ did not drain");

	/* Now read everything queued for the process, without waiting. */
	fl = fcntl(p.ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(p.ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		die("async fd");
	while (!ibv_get_async_event(p.ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_COMM_EST &&
		    ev.element.qp == rx[0])
			comm_est[0]++;
		else if (ev.event_type == IBV_EVENT_COMM_EST &&
			 ev.element.qp == rx[1])
			comm_est[1]++;
		else
			other++;
		ibv_ack_async_event(&ev);
	}
	CHECK(comm_est[0] == 1 && comm_est[1] == 1 && !other,
	      "flood_events_bounded",
	      "COMM_EST uc %d rc %d, %d other events, for %d messages each",
	      comm_est[0], comm_est[1], other, FLOOD_MSGS);

	/* The receivers move on, and traffic flows between the pairs. */
	for (i = 0; i < 2; i++) {
		if (qp_rtr_to_rts(rx[i]))
			die("flood rts");
		failed = 0;
		post_recv(rx[i], p.mr, p.buf, 64, 1);
		post_send(tx[i], IBV_WR_SEND, p.mr, p.buf + 4096, 16, 0, 0, 2);
		CHECK(poll_n(p.cq, 2, &failed) == 2 && !failed,
		      types[i] == IBV_QPT_UC ? "flood_uc_then_traffic" :
		      "flood_rc_then_traffic", "%d failed", failed);
		ibv_destroy_qp(tx[i]);
		ibv_destroy_qp(rx[i]);
	}
	pair_close(&p);
	traffic_ok("flood_device_still_works");
}

/* --- hold: live QPs with traffic for a kill ----------------------------- */

static void test_hold(void)
{
	struct pair p;
	int i;

	pair_open(&p);
	for (i = 0; i < 32; i++) {
		post_recv(p.b, p.mr, p.buf, 64, i);
		post_send(p.a, IBV_WR_SEND, p.mr, p.buf, 8, 0, 0, i);
		post_send(p.a, IBV_WR_RDMA_WRITE, p.mr, p.buf, 4096,
			  (uintptr_t)p.buf + 8192, p.mr->rkey, i);
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* --- memcg: rings are charged to the creating process's cgroup -------- */

#define MEMCG_OBJS	8
#define MEMCG_SLACK	(1024 * 1024)	/* per-CPU charge caches, page tables */
#define MEMCG_MAX_CQS	4096

static unsigned long long cg_read(const char *file)
{
	const char *dir = getenv("SHCA_CGROUP");
	unsigned long long v = 0;
	char path[512];
	FILE *f;

	if (!dir)
		die("SHCA_CGROUP is not set");
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		die(path);
	if (fscanf(f, "%llu", &v) != 1)
		v = ~0ULL;	/* "max" */
	fclose(f);
	return v;
}

static int cq_depth_log(int cqe)
{
	int log = 0;

	while ((1 << log) < cqe + 1)
		log++;
	return log;
}

/*
 * Eight big CQs and one QP with deep queues: memory.current grows by
 * their rings and falls back when they go.  Then CQs until the cgroup's
 * memory.max: the one past it fails with ENOMEM, the process goes on, and
 * the device still carries traffic afterwards.
 */
static void test_memcg(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr attr;
	struct ibv_cq *cqs[MEMCG_MAX_CQS], *cq;
	unsigned long long m0, m1, m2, max, ring, want;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4096, .max_recv_wr = 4096,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	int cqe, i, n, err;

	/* Nothing of the process may be reclaimed from under it. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		die("mlockall");
	pd = ibv_alloc_pd(ctx);
	if (!pd || ibv_query_device(ctx, &attr))
		die("pd");
	cqe = attr.max_cqe < 65535 ? attr.max_cqe : 65535;
	ring = (unsigned long long)sizeof(struct shca_hw_cqe) <<
	       cq_depth_log(cqe);

	m0 = cg_read("memory.current");
	for (i = 0; i < MEMCG_OBJS; i++) {
		cqs[i] = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
		if (!cqs[i])
			die("ibv_create_cq");
	}
	m1 = cg_read("memory.current");
	want = MEMCG_OBJS * ring;
	CHECK(m1 >= m0 + want - MEMCG_SLACK && m1 <= m0 + want + 2 * MEMCG_SLACK,
	      "memcg_cq_rings_charged",
	      "%d CQs of %llu-byte rings: memory.current %llu -> %llu",
	      MEMCG_OBJS, ring, m0, m1);
	for (i = 0; i < MEMCG_OBJS; i++)
		if (ibv_destroy_cq(cqs[i]))
			die("ibv_destroy_cq");
	m2 = cg_read("memory.current");
	CHECK(m2 + want - MEMCG_SLACK <= m1, "memcg_cq_rings_uncharged",
	      "memory.current %llu -> %llu after the CQs went", m1, m2);

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	init.send_cq = cq;
	init.recv_cq = cq;
	m0 = cg_read("memory.current");
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		die("ibv_create_qp");
	m1 = cg_read("memory.current");
	want = 4096ULL * (sizeof(struct shca_hw_send_wqe) +
			  sizeof(struct shca_hw_recv_wqe));
	CHECK(m1 >= m0 + want - MEMCG_SLACK && m1 <= m0 + want + 2 * MEMCG_SLACK,
	      "memcg_qp_rings_charged",
	      "a QP of %llu bytes of rings: memory.current %llu -> %llu",
	      want, m0, m1);
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq))
		die("qp teardown");

	/* Up to the limit, and one past it. */
	max = cg_read("memory.max");
	m0 = cg_read("memory.current");
	errno = 0;
	for (n = 0; n < MEMCG_MAX_CQS; n++) {
		cqs[n] = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
		if (!cqs[n])
			break;
	}
	err = errno;
	m1 = cg_read("memory.current");
	CHECK(n < MEMCG_MAX_CQS && err == ENOMEM, "memcg_limit_enomem",
	      "%d CQs created, then %s", n, strerror(err));
	CHECK(max != ~0ULL && m1 <= max && (unsigned long long)n * ring <= max,
	      "memcg_limit_held", "memory.current %llu, memory.max %llu, %d CQs",
	      m1, max, n);
	CHECK(max != ~0ULL && (unsigned long long)(n + 2) * ring + m0 >= max,
	      "memcg_limit_reached",
	      "refused at %d CQs of %llu bytes from %llu with memory.max %llu",
	      n, ring, m0, max);
	for (i = 0; i < n; i++)
		if (ibv_destroy_cq(cqs[i]))
			die("ibv_destroy_cq");
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	munlockall();
	traffic_ok("memcg_device_works_after");
}

/* --- limits: QPs and CQs until the device refuses --------------------- */

#define LIMIT_MAX	70000

static void test_limits(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1, .grh.sgid_index = GIDX,
		.grh.hop_limit = 64,
	};
	static struct ibv_qp *qps[LIMIT_MAX];
	static struct ibv_cq *cqs[LIMIT_MAX];
	static struct ibv_ah *ahs[LIMIT_MAX];
	int nq, nc, na, qerr, cerr, aerr, i;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!pd || !cq)
		die("pd and cq");
	init.send_cq = cq;
	init.recv_cq = cq;
	errno = 0;
	for (nq = 0; nq < LIMIT_MAX; nq++) {
		qps[nq] = ibv_create_qp(pd, &init);
		if (!qps[nq])
			break;
	}
	qerr = errno;
	errno = 0;
	for (nc = 0; nc < LIMIT_MAX; nc++) {
		cqs[nc] = ibv_create_cq(ctx, 1, NULL, NULL, 0);
		if (!cqs[nc])
			break;
	}
	cerr = errno;
	if (ibv_query_gid(ctx, 1, GIDX, &aha.grh.dgid))
		die("ibv_query_gid");
	errno = 0;
	for (na = 0; na < LIMIT_MAX; na++) {
		ahs[na] = ibv_create_ah(pd, &aha);
		if (!ahs[na])
			break;
	}
	aerr = errno;
	CHECK(na < LIMIT_MAX && aerr == ENOMEM, "limits_ah_enomem",
	      "%d AHs, then %s", na, strerror(aerr));
	/* One freed is one more to create. */
	if (na) {
		if (ibv_destroy_ah(ahs[na - 1]))
			die("ibv_destroy_ah");
		ahs[na - 1] = ibv_create_ah(pd, &aha);
		CHECK(ahs[na - 1], "limits_ah_freed_is_reusable", "%s",
		      strerror(errno));
		if (!ahs[na - 1])
			na--;
	}
	CHECK(nq < LIMIT_MAX && qerr == ENOMEM, "limits_qp_enomem",
	      "%d QPs, then %s", nq, strerror(qerr));
	CHECK(nc < LIMIT_MAX && cerr == ENOMEM, "limits_cq_enomem",
	      "%d CQs, then %s", nc, strerror(cerr));
	/* The CQ made first counts: it is one of the device's CQs. */
	printf("limits %d %d %d\n", nq, nc + 1, na);
	for (i = 0; i < na; i++)
		if (ibv_destroy_ah(ahs[i]))
			die("ibv_destroy_ah");
	for (i = 0; i < nq; i++)
		if (ibv_destroy_qp(qps[i]))
			die("ibv_destroy_qp");
	for (i = 0; i < nc; i++)
		if (ibv_destroy_cq(cqs[i]))
			die("ibv_destroy_cq");
	if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd))
		die("teardown");
	ibv_close_device(ctx);
	traffic_ok("limits_device_works_after");
}

/* --- mcast_limit: one process's share of the multicast table ----------- */

static struct ibv_qp *mcast_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp UD");
	return qp;
}

/* Group @i: ff0e::5ca:i. */
static union ibv_gid mcast_gid(unsigned int i)
{
	union ibv_gid g = { .raw = { 0xff, 0x0e } };

	g.raw[12] = 0x05;
	g.raw[13] = 0xca;
	g.raw[14] = i >> 8;
	g.raw[15] = i;
	return g;
}

/* Attach @qp to groups @first.. until refused; the number attached. */
static unsigned int mcast_fill(struct ibv_qp *qp, unsigned int first,
			       unsigned int max, int *err)
{
	unsigned int n;
	union ibv_gid g;

	for (n = 0; n < max; n++) {
		g = mcast_gid(first + n);
		*err = ibv_attach_mcast(qp, &g, 0);
		if (*err)
			break;
	}
	return n;
}

static unsigned int mcast_param(void)
{
	FILE *f = fopen("/sys/module/shca/parameters/max_mcast_per_process",
			"r");
	unsigned int v;

	if (!f || fscanf(f, "%u", &v) != 1)
		die("max_mcast_per_process");
	fclose(f);
	return v;
}

static void test_mcast_limit(void)
{
	struct ibv_context *ctx = open_dev();
	unsigned int max = mcast_param(), n, m;
	struct ibv_qp *a, *b, *c;
	union ibv_gid g;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int err, status;
	pid_t pid;

	if (max < 2 || max > 32)
		die("max_mcast_per_process should be 2..32 for this test");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!pd || !cq)
		die("pd and cq");
	a = mcast_qp(pd, cq);
	b = mcast_qp(pd, cq);
	/* Two QPs of one process share its limit. */
	n = mcast_fill(a, 0, max - 1, &err);
	m = mcast_fill(b, 100, 64, &err);
	CHECK(n == max - 1 && m == 1 && err == ENOMEM,
	      "mcast_limit_counts_all_the_process_qps",
	      "%u and %u of %u attached, then %s", n, m, max, strerror(err));

	/* Another process has a limit of its own, on the same groups too. */
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		struct ibv_context *cctx = open_dev();
		struct ibv_pd *cpd = ibv_alloc_pd(cctx);
		struct ibv_cq *ccq = ibv_create_cq(cctx, 4, NULL, NULL, 0);
		struct ibv_qp *cqp;

		if (!cpd || !ccq)
			_exit(3);
		cqp = mcast_qp(cpd, ccq);
		n = mcast_fill(cqp, 0, 64, &err);
		_exit(n == max && err == ENOMEM ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
	      "mcast_limit_is_per_process", "child status %#x", status);

	/* A repeated attach takes none (ib_core answers it); a detach gives one back. */
	g = mcast_gid(0);
	err = ibv_attach_mcast(a, &g, 0);
	CHECK(!err, "mcast_limit_repeat_attach_takes_none", "%s",
	      strerror(err));
	if (ibv_detach_mcast(a, &g, 0))
		die("ibv_detach_mcast");
	g = mcast_gid(101);
	err = ibv_attach_mcast(b, &g, 0);
	CHECK(!err, "mcast_limit_detach_returns_one", "%s", strerror(err));
	g = mcast_gid(102);
	err = ibv_attach_mcast(b, &g, 0);
	CHECK(err == ENOMEM, "mcast_limit_still_enforced", "%s",
	      strerror(err));

	/*
	 * Detached, the groups are all given back: a new QP takes them all.
	 * (ib_core refuses to destroy a QP that is still in a group.)
	 */
	for (n = 1; n < max - 1; n++) {
		g = mcast_gid(n);
		if (ibv_detach_mcast(a, &g, 0))
			die("ibv_detach_mcast");
	}
	for (n = 100; n < 102; n++) {
		g = mcast_gid(n);
		if (ibv_detach_mcast(b, &g, 0))
			die("ibv_detach_mcast");
	}
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b))
		die("ibv_destroy_qp");
	c = mcast_qp(pd, cq);
	n = mcast_fill(c, 200, 64, &err);
	CHECK(n == max && err == ENOMEM, "mcast_limit_detach_returns_all",
	      "%u of %u attached, then %s", n, max, strerror(err));
	for (m = 0; m < n; m++) {
		g = mcast_gid(200 + m);
		if (ibv_detach_mcast(c, &g, 0))
			die("ibv_detach_mcast");
	}
	if (ibv_destroy_qp(c) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd))
		die("teardown");
	ibv_close_device(ctx);
	traffic_ok("mcast_limit_device_works_after");
}

/* --- extended CQs --------------------------------------------------------- */

/* A completion, as either poll API reports it. */
struct cqx_wc {
	uint64_t wr_id;
	int status, opcode, wc_flags;
	uint32_t vendor_err, byte_len, imm, qp_num, src_qp, slid;
	uint8_t sl, dlid_path_bits;
	uint64_t ts, wallclock;
};

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + t->tv_nsec;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return ns_of(&t);
}

static struct ibv_cq_ex *new_cqx(struct ibv_context *ctx, uint64_t wc_flags,
				 uint32_t mask, uint32_t flags, uint32_t cqe,
				 uint32_t vector)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe, .comp_vector = vector, .wc_flags = wc_flags,
		.comp_mask = mask, .flags = flags,
	};

	errno = 0;
	return ibv_create_cq_ex(ctx, &a);
}

static void cqx_refused(struct ibv_context *ctx, const char *name, int want,
			uint64_t wc_flags, uint32_t mask, uint32_t flags,
			uint32_t cqe, uint32_t vector)
{
	struct ibv_cq_ex *cq = new_cqx(ctx, wc_flags, mask, flags, cqe, vector);
	int err = errno;

	CHECK(!cq && err == want, name, "got %s, want %s",
	      cq ? "a CQ" : strerror(err), strerror(want));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

#define CQX_ALL_FLAGS	(IBV_WC_STANDARD_FLAGS | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define CQX_OPS		5	/* work requests per round, each signaled */
#define CQX_DONE	(CQX_OPS + 3)	/* and the three that take receives */
#define CQX_WCS		(CQX_DONE + 1)	/* and a flushed receive */

/* Poll @n completions with ibv_poll_cq(). */
static int cqx_poll_legacy(struct ibv_cq *cq, struct ibv_qp *a,
			   struct cqx_wc *out, int n)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++) {
		if (!poll_one(cq, &wc))
			return i;
		out[i] = (struct cqx_wc){
			.wr_id = wc.wr_id, .status = wc.status,
			.opcode = wc.opcode, .wc_flags = wc.wc_flags,
			.vendor_err = wc.vendor_err, .byte_len = wc.byte_len,
			.imm = wc.wc_flags & IBV_WC_WITH_INV ?
			       wc.invalidated_rkey : be32toh(wc.imm_data),
			.qp_num = wc.qp_num == a->qp_num ? 1 : 2,
			.src_qp = wc.src_qp, .slid = wc.slid, .sl = wc.sl,
			.dlid_path_bits = wc.dlid_path_bits,
		};
	}
	return n;
}

static void cqx_read(struct ibv_cq_ex *cq, struct ibv_qp *a, struct cqx_wc *w)
{
	*w = (struct cqx_wc){
		.wr_id = cq->wr_id, .status = cq->status,
		.opcode = ibv_wc_read_opcode(cq),
		.wc_flags = ibv_wc_read_wc_flags(cq),
		.vendor_err = ibv_wc_read_vendor_err(cq),
		.byte_len = ibv_wc_read_byte_len(cq),
		.qp_num = ibv_wc_read_qp_num(cq) == a->qp_num ? 1 : 2,
		.src_qp = ibv_wc_read_src_qp(cq),
		.slid = ibv_wc_read_slid(cq), .sl = ibv_wc_read_sl(cq),
		.dlid_path_bits = ibv_wc_read_dlid_path_bits(cq),
		.ts = ibv_wc_read_completion_ts(cq),
		.wallclock = ibv_wc_read_completion_wallclock_ns(cq),
	};
	w->imm = w->wc_flags & IBV_WC_WITH_INV ?
		 ibv_wc_read_invalidated_rkey(cq) :
		 be32toh(ibv_wc_read_imm_data(cq));
}

/* Poll @n completions with ibv_start_poll(), in batches of up to four. */
static int cqx_poll_ex(struct ibv_cq_ex *cq, struct ibv_qp *a,
		       struct cqx_wc *out, int n)
{
	struct ibv_poll_cq_attr attr = {};
	int got = 0, spins = 0, in_batch, ret;

	while (got < n && spins < 500000) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			if (++spins > 1000)
				usleep(10);
			continue;
		}
		if (ret)
			return -ret;
		in_batch = 0;
		do {
			cqx_read(cq, a, &out[got++]);
			in_batch++;
		} while (got < n && in_batch < 4 && !ibv_next_poll(cq));
		ibv_end_poll(cq);
	}
	return got;
}

/*
 * One round of traffic between two new QPs on @cq: a send with immediate,
 * an RDMA write with immediate, a read, a fetch-and-add and a send, then
 * a receive flushed by moving b to ERR.
 */
static void cqx_round(struct pair *p, struct ibv_cq *cq)
{
	static const enum ibv_wr_opcode ops[CQX_OPS] = {
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND,
	};
	struct ibv_sge sge = { (uintptr_t)p->buf, 64, p->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int i;

	p->a = new_qp(p, cq, IBV_QPT_RC);
	p->b = new_qp(p, cq, IBV_QPT_RC);
	if (connect_qp(p, p->a, p->b->qp_num) ||
	    connect_qp(p, p->b, p->a->qp_num))
		die("connect");
	for (i = 0; i < 3; i++)
		if (post_recv(p->b, p->mr, p->buf + 8192 + 256 * i, 256,
			      100 + i))
			die("post_recv");
	for (i = 0; i < CQX_OPS; i++) {
		wr.wr_id = i + 1;
		wr.opcode = ops[i];
		wr.imm_data = htobe32(0x5ca1ab1e + i);
		sge.length = ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 64;
		if (ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = (uintptr_t)p->buf + 16384;
			wr.wr.atomic.rkey = p->mr->rkey;
			wr.wr.atomic.compare_add = 1;
		} else {
			wr.wr.rdma.remote_addr = (uintptr_t)p->buf + 20480;
			wr.wr.rdma.rkey = p->mr->rkey;
		}
		if (ibv_post_send(p->a, &wr, &bad))
			die("ibv_post_send");
	}
}

/* A receive for b, flushed by moving b to ERR. */
static void cqx_round_end(struct pair *p)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	if (post_recv(p->b, p->mr, p->buf + 12288, 64, 200) ||
	    ibv_modify_qp(p->b, &err, IBV_QP_STATE))
		die("flush");
}

/*
 * The two QPs' completions interleave on the CQ as the device's timing
 * has it: match them by wr_id, unique in a round.
 */
static void cqx_compare(const char *name, const struct cqx_wc *l,
			const struct cqx_wc *xs, int n)
{
	const struct cqx_wc *x;
	int i, j, bad = -1;

	for (i = 0; i < n && bad < 0; i++) {
		for (j = 0; j < n && xs[j].wr_id != l[i].wr_id; j++)
			;
		x = j < n ? &xs[j] : NULL;
		if (!x || l[i].status != x->status ||
		    l[i].opcode != x->opcode ||
		    l[i].wc_flags != x->wc_flags ||
		    l[i].vendor_err != x->vendor_err ||
		    (l[i].status == IBV_WC_SUCCESS &&
		     l[i].byte_len != x->byte_len) ||
		    l[i].imm != x->imm || l[i].qp_num != x->qp_num ||
		    l[i].src_qp != x->src_qp || l[i].slid != x->slid ||
		    l[i].sl != x->sl ||
		    l[i].dlid_path_bits != x->dlid_path_bits)
			bad = i;
	}
	x = bad < 0 || j == n ? NULL : &xs[j];
	CHECK(bad < 0, name,
	      "wr_id %llu: %s; status %d/%d opcode %d/%d flags %#x/%#x len %u/%u imm %#x/%#x qp %u/%u",
	      bad < 0 ? 0ULL : (unsigned long long)l[bad].wr_id,
	      x ? "differs" : "missing", bad < 0 ? 0 : l[bad].status,
	      x ? x->status : 0, bad < 0 ? 0 : l[bad].opcode,
	      x ? x->opcode : 0, bad < 0 ? 0 : l[bad].wc_flags,
	      x ? x->wc_flags : 0, bad < 0 ? 0 : l[bad].byte_len,
	      x ? x->byte_len : 0, bad < 0 ? 0 : l[bad].imm, x ? x->imm : 0,
	      bad < 0 ? 0 : l[bad].qp_num, x ? x->qp_num : 0);
}

/*
 * The same traffic twice on one extended CQ: polled with ibv_poll_cq(),
 * then with ibv_start_poll(); every read_* field must equal the legacy
 * one, and the timestamps lie between two ibv_query_rt_values_ex() reads,
 * in order, with the wallclock ones between two CLOCK_REALTIME reads.
 */
static void cqx_traffic(struct ibv_context *ctx, const char *tag,
			uint32_t flags)
{
	struct cqx_wc legacy[CQX_WCS], ex[CQX_WCS];
	struct ibv_values_ex v0 = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_values_ex v1 = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t real0, real1, prev;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	char name[64];
	struct pair p;
	int n, i, ok;

	memset(&p, 0, sizeof(p));
	p.ctx = ctx;
	p.pd = ibv_alloc_pd(ctx);
	p.buf = aligned_alloc(4096, BUFSZ);
	if (!p.pd || !p.buf)
		die("cqex resources");
	memset(p.buf, 0, BUFSZ);
	p.mr = ibv_reg_mr(p.pd, p.buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	cqx = new_cqx(ctx, CQX_ALL_FLAGS, flags ? IBV_CQ_INIT_ATTR_MASK_FLAGS : 0,
		      flags, 64, 0);
	snprintf(name, sizeof(name), "cqex_%s_create", tag);
	CHECK(cqx && p.mr, name, "%s", strerror(errno));
	if (!cqx || !p.mr)
		return;
	cq = ibv_cq_ex_to_cq(cqx);

	cqx_round(&p, cq);
	n = cqx_poll_legacy(cq, p.a, legacy, CQX_DONE);
	cqx_round_end(&p);
	n += cqx_poll_legacy(cq, p.a, legacy + n, 1);
	snprintf(name, sizeof(name), "cqex_%s_poll_cq", tag);
	CHECK(n == CQX_WCS, name, "%d completions of %d", n, CQX_WCS);
	if (ibv_destroy_qp(p.a) || ibv_destroy_qp(p.b))
		die("ibv_destroy_qp");

	ibv_query_rt_values_ex(ctx, &v0);
	real0 = now_ns(CLOCK_REALTIME);
	cqx_round(&p, cq);
	n = cqx_poll_ex(cqx, p.a, ex, CQX_DONE);
	cqx_round_end(&p);
	if (n == CQX_DONE)
		n += cqx_poll_ex(cqx, p.a, ex + n, 1);
	real1 = now_ns(CLOCK_REALTIME);
	ibv_query_rt_values_ex(ctx, &v1);
	snprintf(name, sizeof(name), "cqex_%s_start_poll", tag);
	CHECK(n == CQX_WCS, name, "%d completions of %d", n, CQX_WCS);
	if (n == CQX_WCS) {
		snprintf(name, sizeof(name), "cqex_%s_fields_match_poll_cq",
			 tag);
		cqx_compare(name, legacy, ex, n);
		prev = ns_of(&v0.raw_clock);
		ok = -1;
		for (i = 0; i < n && ok < 0; i++) {
			if (ex[i].ts < prev || ex[i].ts > ns_of(&v1.raw_clock))
				ok = i;
			prev = ex[i].ts;
		}
		snprintf(name, sizeof(name), "cqex_%s_timestamps_in_order",
			 tag);
		CHECK(ok < 0, name, "CQE %d at %llu, clock %llu..%llu", ok,
		      ok < 0 ? 0ULL : (unsigned long long)ex[ok].ts,
		      (unsigned long long)ns_of(&v0.raw_clock),
		      (unsigned long long)ns_of(&v1.raw_clock));
		ok = -1;
		for (i = 0; i < n && ok < 0; i++)
			/*
			 * Converted with an offset read at start_poll, in
			 * two clock reads: allow a millisecond between them.
			 */
			if (ex[i].wallclock + 1000000 < real0 ||
			    ex[i].wallclock > real1 + 1000000)
				ok = i;
		snprintf(name, sizeof(name), "cqex_%s_wallclock", tag);
		CHECK(ok < 0, name, "CQE %d at %llu, wallclock %llu..%llu", ok,
		      ok < 0 ? 0ULL : (unsigned long long)ex[ok].wallclock,
		      (unsigned long long)real0, (unsigned long long)real1);
	}
	if (ibv_destroy_qp(p.a) || ibv_destroy_qp(p.b) ||
	    ibv_destroy_cq(cq) || ibv_dereg_mr(p.mr) || ibv_dealloc_pd(p.pd))
		die("cqex teardown");
	free(p.buf);
}

static void test_cqex(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RESERVED };
	struct ibv_poll_cq_attr pattr = { .comp_mask = 1 };
	struct ibv_device_attr_ex attr;
	struct ibv_cq_ex *cq;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	CHECK(!ret && attr.hca_core_clock == 1000000 &&
	      attr.completion_timestamp_mask == ~0ULL, "cqex_device_clock",
	      "ret %d clock %llu kHz mask %#llx", ret,
	      (unsigned long long)attr.hca_core_clock,
	      (unsigned long long)attr.completion_timestamp_mask);
	ret = ibv_query_rt_values_ex(ctx, &v);
	CHECK(ret == EINVAL, "cqex_rt_values_unknown_mask", "got %s",
	      strerror(ret));

	cqx_refused(ctx, "cqex_cvlan", EOPNOTSUPP, IBV_WC_EX_WITH_CVLAN, 0, 0,
		    16, 0);
	cqx_refused(ctx, "cqex_flow_tag", EOPNOTSUPP, IBV_WC_EX_WITH_FLOW_TAG,
		    0, 0, 16, 0);
	cqx_refused(ctx, "cqex_tm_info", EOPNOTSUPP, IBV_WC_EX_WITH_TM_INFO, 0,
		    0, 16, 0);
	cqx_refused(ctx, "cqex_unknown_wc_flag", EOPNOTSUPP, 1ULL << 40, 0, 0,
		    16, 0);
	cqx_refused(ctx, "cqex_no_parent_domain", EINVAL, 0,
		    IBV_CQ_INIT_ATTR_MASK_PD, 0, 16, 0);
	cqx_refused(ctx, "cqex_unknown_comp_mask", EOPNOTSUPP, 0, 1U << 20, 0,
		    16, 0);
	cqx_refused(ctx, "cqex_ignore_overrun", EOPNOTSUPP, 0,
		    IBV_CQ_INIT_ATTR_MASK_FLAGS,
		    IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, 16, 0);
	cqx_refused(ctx, "cqex_unknown_flag", EOPNOTSUPP, 0,
		    IBV_CQ_INIT_ATTR_MASK_FLAGS, 1U << 12, 16, 0);
	cqx_refused(ctx, "cqex_zero_cqe", EINVAL, 0, 0, 0, 0, 0);
	cqx_refused(ctx, "cqex_too_many_cqe", EINVAL, 0, 0, 0,
		    attr.orig_attr.max_cqe + 1, 0);
	cqx_refused(ctx, "cqex_bad_vector", EINVAL, 0, 0, 0, 16,
		    ctx->num_comp_vectors);

	cq = new_cqx(ctx, CQX_ALL_FLAGS, 0, 0, 16, 0);
	CHECK(cq, "cqex_all_flags", "%s", strerror(errno));
	if (cq) {
		ret = ibv_start_poll(cq, &pattr);
		CHECK(ret == EINVAL, "cqex_start_poll_comp_mask", "got %s",
		      strerror(ret));
		/* Nothing was locked: an empty start_poll works after it. */
		pattr.comp_mask = 0;
		ret = ibv_start_poll(cq, &pattr);
		CHECK(ret == ENOENT, "cqex_start_poll_empty", "got %s",
		      strerror(ret));
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}

	cqx_traffic(ctx, "locked", 0);
	cqx_traffic(ctx, "single_threaded", IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	ibv_close_device(ctx);
	traffic_ok("cqex_device_works_after");
}

/* --- thread domains, parent domains, import ------------------------------ */

/*
 * A parent domain's allocator that records what libshca asks of it: every
 * call, the resource types seen, the memory outstanding.  In @mode
 * PDOM_DEFAULT it answers IBV_ALLOCATOR_USE_DEFAULT, PDOM_NULL fails,
 * PDOM_MISALIGN gives memory one byte off the alignment asked.
 */
enum { PDOM_OWN, PDOM_DEFAULT, PDOM_NULL, PDOM_MISALIGN };

struct pdom_log {
	int mode;
	int allocs, frees, live, bad_align, wrong_ctx;
	unsigned int types;		/* BIT(resource_type) of every alloc */
	void *last[16];			/* by resource type, the latest */
};

static void *pdom_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			size_t alignment, uint64_t type)
{
	struct pdom_log *l = pd_context;
	void *p;

	l->allocs++;
	if (type < 16)
		l->types |= 1U << type;
	if (!alignment || alignment & (alignment - 1))
		l->bad_align++;
	switch (l->mode) {
	case PDOM_DEFAULT:
		return IBV_ALLOCATOR_USE_DEFAULT;
	case PDOM_NULL:
		return NULL;
	}
	if (posix_memalign(&p, alignment * 2, size + alignment))
		return NULL;
	l->live++;
	if (l->mode == PDOM_MISALIGN)
		p = (char *)p + 1;
	memset(p, 0x5a, size);		/* libshca must zero it itself */
	if (type < 16)
		l->last[type] = p;
	return p;
}

static void pdom_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		      uint64_t type)
{
	struct pdom_log *l = pd_context;

	l->frees++;
	l->live--;
	if (l->mode == PDOM_MISALIGN)
		ptr = (char *)ptr - 1;
	free(ptr);
}

static struct ibv_pd *new_pdom(struct ibv_context *ctx, struct ibv_pd *pd,
			       struct ibv_td *td, struct pdom_log *l)
{
	struct ibv_parent_domain_init_attr a = {
		.pd = pd, .td = td, .alloc = pdom_alloc, .free = pdom_free,
		.pd_context = l,
		.comp_mask = l ? IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT : 0,
	};

	errno = 0;
	return ibv_alloc_parent_domain(ctx, &a);
}

static void pdom_refused(struct ibv_context *ctx, const char *name, int want,
			 struct ibv_parent_domain_init_attr *a)
{
	struct ibv_pd *pd;

	errno = 0;
	pd = ibv_alloc_parent_domain(ctx, a);
	CHECK(!pd && errno == want, name, "got %s, want %s",
	      pd ? "a parent domain" : strerror(errno), strerror(want));
	if (pd)
		ibv_dealloc_pd(pd);
}

static void test_pdom_bad_input(struct ibv_context *ctx,
				struct ibv_context *other)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *opd = ibv_alloc_pd(other);
	struct ibv_td_init_attr tda = { .comp_mask = 1 };
	struct ibv_td *otd, *td;
	struct ibv_pd *pdom;
	struct ibv_parent_domain_init_attr a;

	if (!pd || !opd)
		die("ibv_alloc_pd");
	td = ibv_alloc_td(ctx, &tda);
	CHECK(!td && errno == EOPNOTSUPP, "pdom_td_unknown_comp_mask",
	      "got %s", td ? "a TD" : strerror(errno));
	tda.comp_mask = 0;
	otd = ibv_alloc_td(other, &tda);
	if (!otd)
		die("ibv_alloc_td");

	memset(&a, 0, sizeof(a));
	pdom_refused(ctx, "pdom_null_pd", EINVAL, &a);
	a.pd = opd;
	pdom_refused(ctx, "pdom_foreign_pd", EINVAL, &a);
	a.pd = pd;
	a.td = otd;
	pdom_refused(ctx, "pdom_foreign_td", EINVAL, &a);
	a.td = NULL;
	a.comp_mask = 1U << 7;
	pdom_refused(ctx, "pdom_unknown_comp_mask", EOPNOTSUPP, &a);
	a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	a.free = pdom_free;
	pdom_refused(ctx, "pdom_allocators_without_alloc", EINVAL, &a);
	a.comp_mask = 0;
	pdom = ibv_alloc_parent_domain(ctx, &a);
	if (!pdom)
		die("ibv_alloc_parent_domain");
	a.pd = pdom;
	pdom_refused(ctx, "pdom_of_a_parent_domain", EINVAL, &a);

	/* Creates that name a parent domain they cannot use. */
	{
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
			.parent_domain = pd,
		};
		struct ibv_cq_ex *cq;
		struct ibv_pd *opdom;

		cq = ibv_create_cq_ex(ctx, &ca);
		CHECK(!cq && errno == EINVAL, "pdom_cqex_plain_pd", "got %s",
		      cq ? "a CQ" : strerror(errno));
		if (cq)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		ca.parent_domain = NULL;
		cq = ibv_create_cq_ex(ctx, &ca);
		CHECK(!cq && errno == EINVAL, "pdom_cqex_null_pd", "got %s",
		      cq ? "a CQ" : strerror(errno));
		if (cq)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		opdom = new_pdom(other, opd, NULL, NULL);
		if (!opdom)
			die("ibv_alloc_parent_domain");
		ca.parent_domain = opdom;
		cq = ibv_create_cq_ex(ctx, &ca);
		CHECK(!cq && errno == EINVAL, "pdom_cqex_foreign_parent",
		      "got %s", cq ? "a CQ" : strerror(errno));
		if (cq)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		ibv_dealloc_pd(opdom);
	}
	{
		struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		struct ibv_qp_init_attr_ex qa = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			/* Not PD alone, which ibv_create_qp() on its
			 * own context would take.
			 */
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = IBV_QP_EX_WITH_SEND, .pd = opd,
		};
		struct ibv_qp *qp;

		if (!cq)
			die("ibv_create_cq");
		qp = ibv_create_qp_ex(ctx, &qa);
		CHECK(!qp && errno == EINVAL, "pdom_qp_foreign_pd", "got %s",
		      qp ? "a QP" : strerror(errno));
		if (qp)
			ibv_destroy_qp(qp);
		ibv_destroy_cq(cq);
	}
	if (ibv_dealloc_pd(pdom) || ibv_dealloc_td(otd) ||
	    ibv_dealloc_pd(pd) || ibv_dealloc_pd(opd))
		die("pdom bad input teardown");
}

/*
 * RC traffic on one parent domain: an extended CQ (IBV_CQ_INIT_ATTR_MASK_PD),
 * two QPs and an SRQ on it, an MR and an AH on it; a send through the SRQ
 * and an RDMA write.  Returns the completions that succeeded, of 3.
 */
struct pdom_objs {
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_ah *ah;
	struct pair p;
};

static int pdom_objs_open(struct pdom_objs *o, struct ibv_context *ctx,
			  struct ibv_pd *pdom)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pdom,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = GIDX, .hop_limit = 1 },
	};

	memset(o, 0, sizeof(*o));
	o->p.ctx = ctx;
	o->p.pd = pdom;
	o->cqx = ibv_create_cq_ex(ctx, &ca);
	if (!o->cqx)
		return -1;
	o->cq = ibv_cq_ex_to_cq(o->cqx);
	o->p.cq = o->cq;
	o->srq = ibv_create_srq(pdom, &sa);
	if (!o->srq)
		return -1;
	qa.send_cq = o->cq;
	qa.recv_cq = o->cq;
	o->p.a = ibv_create_qp(pdom, &qa);
	qa.srq = o->srq;
	o->p.b = ibv_create_qp(pdom, &qa);
	if (!o->p.a || !o->p.b)
		return -1;
	if (ibv_query_gid(ctx, 1, GIDX, &aha.grh.dgid))
		return -1;
	o->ah = ibv_create_ah(pdom, &aha);
	o->p.buf = aligned_alloc(4096, BUFSZ);
	if (!o->ah || !o->p.buf)
		return -1;
	memset(o->p.buf, 0, BUFSZ);
	o->p.mr = ibv_reg_mr(pdom, o->p.buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE);
	if (!o->p.mr)
		return -1;
	return connect_qp(&o->p, o->p.a, o->p.b->qp_num) ||
	       connect_qp(&o->p, o->p.b, o->p.a->qp_num) ? -1 : 0;
}

static int pdom_traffic(struct pdom_objs *o)
{
	struct ibv_sge sge = { (uintptr_t)o->p.buf + 8192, 64, o->p.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct ibv_wc wc;
	int got = 0, i;

	snprintf(o->p.buf + 4096, 64, "parent domain");
	if (ibv_post_srq_recv(o->srq, &rwr, &bad))
		return 0;
	post_send(o->p.a, IBV_WR_SEND, o->p.mr, o->p.buf + 4096, 14, 0, 0, 2);
	post_send(o->p.a, IBV_WR_RDMA_WRITE, o->p.mr, o->p.buf + 4096, 14,
		  (uintptr_t)o->p.buf + 12288, o->p.mr->rkey, 3);
	for (i = 0; i < 3 && poll_one(o->cq, &wc); i++)
		got += wc.status == IBV_WC_SUCCESS;
	if (strcmp(o->p.buf + 8192, "parent domain") ||
	    strcmp(o->p.buf + 12288, "parent domain"))
		return 0;
	return got;
}

static int pdom_objs_close(struct pdom_objs *o)
{
	int ret = 0;

	if (o->p.a)
		ret |= ibv_destroy_qp(o->p.a);
	if (o->p.b)
		ret |= ibv_destroy_qp(o->p.b);
	if (o->srq)
		ret |= ibv_destroy_srq(o->srq);
	if (o->cq)
		ret |= ibv_destroy_cq(o->cq);
	if (o->ah)
		ret |= ibv_destroy_ah(o->ah);
	if (o->p.mr)
		ret |= ibv_dereg_mr(o->p.mr);
	free(o->p.buf);
	return ret;
}

#define PDOM_TYPES	((1U << SHCA_RES_TYPE_QP) | (1U << SHCA_RES_TYPE_SQ_WRID) | \
			 (1U << SHCA_RES_TYPE_RQ_WRID) | (1U << SHCA_RES_TYPE_CQ) | \
			 (1U << SHCA_RES_TYPE_SRQ) | \
			 (1U << SHCA_RES_TYPE_SRQ_FREE) | \
			 (1U << SHCA_RES_TYPE_SRQ_WRID))

/* A parent domain with a TD and an allocator: lifecycle and traffic. */
static void test_pdom_lifecycle(struct ibv_context *ctx)
{
	struct ibv_td_init_attr tda = {};
	struct pdom_log log = { .mode = PDOM_OWN };
	struct ibv_pd *pd, *pdom;
	struct pdom_objs o;
	struct ibv_td *td;
	int ret, got;

	pd = ibv_alloc_pd(ctx);
	td = ibv_alloc_td(ctx, &tda);
	if (!pd || !td)
		die("pd, td");
	pdom = new_pdom(ctx, pd, td, &log);
	CHECK(pdom, "pdom_alloc", "%s", strerror(errno));
	if (!pdom)
		return;
	CHECK(pdom->handle == pd->handle, "pdom_names_its_pd",
	      "handle %u, PD's %u", pdom->handle, pd->handle);
	ret = ibv_dealloc_td(td);
	CHECK(ret == EBUSY, "pdom_td_busy", "got %s", strerror(ret));
	ret = ibv_dealloc_pd(pd);
	CHECK(ret == EBUSY, "pdom_pd_busy", "got %s", strerror(ret));

	ret = pdom_objs_open(&o, ctx, pdom);
	CHECK(!ret, "pdom_objects", "%s", strerror(errno));
	if (!ret) {
		CHECK((log.types & PDOM_TYPES) == PDOM_TYPES &&
		      !(log.types & ~PDOM_TYPES) && !log.bad_align,
		      "pdom_allocator_asked",
		      "types %#x, want %#x; %d bad alignments", log.types,
		      PDOM_TYPES, log.bad_align);
		CHECK((void *)sqp(o.p.b) == log.last[SHCA_RES_TYPE_QP] &&
		      (void *)sqp(o.p.b)->sq.wrid ==
		      log.last[SHCA_RES_TYPE_SQ_WRID] &&
		      (void *)cqx_to_scq(o.cqx) == log.last[SHCA_RES_TYPE_CQ] &&
		      (void *)to_ssrq(o.srq) == log.last[SHCA_RES_TYPE_SRQ] &&
		      (void *)to_ssrq(o.srq)->wrid ==
		      log.last[SHCA_RES_TYPE_SRQ_WRID],
		      "pdom_allocator_used", "objects not in its memory");
		CHECK(sqp(o.p.a)->single_threaded &&
		      sqp(o.p.b)->single_threaded &&
		      cqx_to_scq(o.cqx)->single_threaded &&
		      to_ssrq(o.srq)->single_threaded, "pdom_td_lock_free",
		      "QP %d/%d CQ %d SRQ %d", sqp(o.p.a)->single_threaded,
		      sqp(o.p.b)->single_threaded,
		      cqx_to_scq(o.cqx)->single_threaded,
		      to_ssrq(o.srq)->single_threaded);
		got = pdom_traffic(&o);
		CHECK(got == 3, "pdom_traffic", "%d of 3 completions", got);
		{
			struct ibv_srq_attr sra = { .max_wr = 64 };
			int allocs = log.allocs;

			ret = ibv_modify_srq(o.srq, &sra, IBV_SRQ_MAX_WR);
			CHECK(!ret && log.allocs == allocs + 2 &&
			      (void *)to_ssrq(o.srq)->wrid ==
			      log.last[SHCA_RES_TYPE_SRQ_WRID],
			      "pdom_srq_resize_allocates", "ret %s, %d allocs",
			      strerror(ret), log.allocs - allocs);
		}
		ret = ibv_dealloc_pd(pdom);
		CHECK(ret == EBUSY, "pdom_busy_with_objects", "got %s",
		      strerror(ret));
	}
	ret = pdom_objs_close(&o);
	CHECK(!ret && log.live == 0 && log.frees == log.allocs,
	      "pdom_allocator_freed", "ret %d; %d allocs, %d frees", ret,
	      log.allocs, log.frees);
	ret = ibv_dealloc_pd(pdom);
	CHECK(!ret, "pdom_dealloc", "got %s", strerror(ret));
	ret = ibv_dealloc_td(td);
	CHECK(!ret, "pdom_td_dealloc", "got %s", strerror(ret));
	ret = ibv_dealloc_pd(pd);
	CHECK(!ret, "pdom_pd_dealloc", "got %s", strerror(ret));
}

/* Allocators that defer, fail, misalign; a parent domain without a TD. */
static void test_pdom_allocators(struct ibv_context *ctx)
{
	static const struct {
		const char *name, *free_name;
		int mode, err;
	} modes[] = {
		{ "pdom_alloc_use_default", "pdom_default_not_freed",
		  PDOM_DEFAULT, 0 },
		{ "pdom_alloc_fails", "pdom_failed_not_freed", PDOM_NULL,
		  ENOMEM },
		{ "pdom_alloc_misaligned", "pdom_misaligned_freed",
		  PDOM_MISALIGN, EINVAL },
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pdom;
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct pdom_log log;
	struct ibv_qp *qp;
	size_t i;

	if (!pd || !cq)
		die("pd, cq");
	qa.send_cq = cq;
	qa.recv_cq = cq;
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		memset(&log, 0, sizeof(log));
		log.mode = modes[i].mode;
		pdom = new_pdom(ctx, pd, NULL, &log);
		if (!pdom)
			die("ibv_alloc_parent_domain");
		errno = 0;
		qp = ibv_create_qp(pdom, &qa);
		if (modes[i].err)
			CHECK(!qp && errno == modes[i].err && log.allocs &&
			      log.live == 0, modes[i].name,
			      "got %s, %d allocs, %d live",
			      qp ? "a QP" : strerror(errno), log.allocs,
			      log.live);
		else
			CHECK(qp && log.allocs == 3 && !log.frees &&
			      !sqp(qp)->single_threaded, modes[i].name,
			      "got %s, %d allocs, %d frees, locked %d",
			      qp ? "a QP" : strerror(errno), log.allocs,
			      log.frees, qp ? !sqp(qp)->single_threaded : -1);
		if (qp)
			ibv_destroy_qp(qp);
		CHECK(log.frees == (modes[i].mode == PDOM_MISALIGN),
		      modes[i].free_name, "%d frees", log.frees);
		if (ibv_dealloc_pd(pdom))
			die("ibv_dealloc_pd");
	}
	/* No allocators at all: a parent domain is its PD. */
	pdom = new_pdom(ctx, pd, NULL, NULL);
	qp = pdom ? ibv_create_qp(pdom, &qa) : NULL;
	CHECK(qp && qp->pd == pdom && !sqp(qp)->single_threaded,
	      "pdom_without_allocators", "%s", strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	if ((pdom && ibv_dealloc_pd(pdom)) || ibv_destroy_cq(cq) ||
	    ibv_dealloc_pd(pd))
		die("pdom allocators teardown");
}

/*
 * ibv_import_device() on a dup of the context's fd, ibv_import_pd() and
 * ibv_import_mr() of its objects; traffic in the imported context on the
 * imported PD and MR.
 */
static void test_import(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *ipd, *bad;
	struct ibv_context *ictx;
	struct ibv_mr *mr, *imr, *badmr;
	struct ibv_wc wc;
	struct pair p;
	int pipefd[2], got = 0, i;
	char *buf = aligned_alloc(4096, BUFSZ);

	if (!pd || !buf)
		die("pd, buf");
	memset(buf, 0, BUFSZ);
	mr = ibv_reg_mr(pd, buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	if (pipe(pipefd))
		die("pipe");
	errno = 0;
	ictx = ibv_import_device(pipefd[0]);
	CHECK(!ictx && errno == EINVAL, "import_device_not_a_device",
	      "got %s", ictx ? "a context" : strerror(errno));
	close(pipefd[0]);
	close(pipefd[1]);

	ictx = ibv_import_device(dup(ctx->cmd_fd));
	CHECK(ictx, "import_device", "%s", strerror(errno));
	if (!ictx)
		goto out;
	CHECK(to_sctx(ictx)->caps.sq_wqe_size ==
	      to_sctx(ctx)->caps.sq_wqe_size &&
	      to_sctx(ictx)->caps.max_inline == to_sctx(ctx)->caps.max_inline &&
	      to_sctx(ictx)->caps.max_sge == to_sctx(ctx)->caps.max_sge &&
	      ictx->num_comp_vectors == ctx->num_comp_vectors,
	      "import_device_caps", "the imported context's caps differ");
	errno = 0;
	bad = ibv_import_pd(ictx, pd->handle + 1000);
	CHECK(!bad && errno, "import_pd_bad_handle", "got %s",
	      bad ? "a PD" : "no errno");
	if (bad)
		ibv_unimport_pd(bad);
	ipd = ibv_import_pd(ictx, pd->handle);
	CHECK(ipd && ipd->handle == pd->handle &&
	      to_spd(ipd)->pdn, "import_pd", "%s", strerror(errno));
	if (!ipd)
		goto out_ctx;
	errno = 0;
	badmr = ibv_import_mr(ipd, mr->handle + 1000);
	CHECK(!badmr && errno, "import_mr_bad_handle", "got %s",
	      badmr ? "an MR" : "no errno");
	if (badmr)
		ibv_unimport_mr(badmr);
	imr = ibv_import_mr(ipd, mr->handle);
	CHECK(imr && imr->lkey == mr->lkey && imr->rkey == mr->rkey &&
	      imr->length == mr->length, "import_mr", "%s", strerror(errno));
	if (!imr)
		goto out_pd;

	/* The imported context's own CQ and QPs, on the imported PD. */
	memset(&p, 0, sizeof(p));
	p.ctx = ictx;
	p.pd = ipd;
	p.cq = ibv_create_cq(ictx, 16, NULL, NULL, 0);
	if (!p.cq)
		die("ibv_create_cq");
	p.a = new_qp(&p, p.cq, IBV_QPT_RC);
	p.b = new_qp(&p, p.cq, IBV_QPT_RC);
	if (connect_qp(&p, p.a, p.b->qp_num) ||
	    connect_qp(&p, p.b, p.a->qp_num))
		die("connect");
	snprintf(buf + 4096, 64, "imported");
	post_recv(p.b, imr, buf + 8192, 64, 1);
	post_send(p.a, IBV_WR_SEND, imr, buf + 4096, 9, 0, 0, 2);
	post_send(p.a, IBV_WR_RDMA_WRITE, imr, buf + 4096, 9,
		  (uintptr_t)buf + 12288, imr->rkey, 3);
	for (i = 0; i < 3 && poll_one(p.cq, &wc); i++)
		got += wc.status == IBV_WC_SUCCESS;
	CHECK(got == 3 && !strcmp(buf + 8192, "imported") &&
	      !strcmp(buf + 12288, "imported"), "import_traffic",
	      "%d of 3 completions", got);
	if (ibv_destroy_qp(p.a) || ibv_destroy_qp(p.b) ||
	    ibv_destroy_cq(p.cq))
		die("import teardown");
	ibv_unimport_mr(imr);
out_pd:
	ibv_unimport_pd(ipd);
out_ctx:
	CHECK(!ibv_close_device(ictx), "import_close", "%s", strerror(errno));
out:
	/* The original context's objects are untouched by the import. */
	CHECK(!ibv_dereg_mr(mr) && !ibv_dealloc_pd(pd), "import_originals",
	      "%s", strerror(errno));
	free(buf);
}

static void test_pdom(void)
{
	struct ibv_context *ctx = open_dev(), *other = open_dev();

	test_pdom_bad_input(ctx, other);
	test_pdom_lifecycle(ctx);
	test_pdom_allocators(ctx);
	test_import(ctx);
	ibv_close_device(other);
	ibv_close_device(ctx);
	traffic_ok("pdom_device_works_after");
}

/* --- flood_cpu: a flood that makes no system call leaves a CPU usable -- */

#define FLOOD_SECS	10
#define FLOOD_MSG	(16U << 20)
#define FLOOD_DEPTH	4

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/*
 * A QP connected to itself keeps FLOOD_DEPTH RDMA writes of 16 MiB in
 * flight for FLOOD_SECS, polling without a system call, pinned to CPU 0;
 * the device copies them on its execution units.  A process spinning on
 * CPU 1 meanwhile must get at least 40% of it: the engine yields (a turn
 * has a budget, a copy yields page by page) rather than holding a CPU.
 */
static void test_flood_cpu(void)
{
	long hz = sysconf(_SC_CLK_TCK), ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int fds[2], status, got = 0, bad = 0, inflight = 0, pct = -1;
	uint64_t t0, n = 0;
	long long ticks;
	struct ibv_wc wc;
	struct pair p;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	pid_t pid;

	CHECK(ncpu >= 2, "flood_cpu_two_cpus", "%ld CPUs", ncpu);
	if (ncpu < 2)
		return;
	memset(&p, 0, sizeof(p));
	p.ctx = open_dev();
	p.pd = ibv_alloc_pd(p.ctx);
	p.cq = ibv_create_cq(p.ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, 2 * FLOOD_MSG);
	if (!p.pd || !p.cq || !buf)
		die("flood resources");
	memset(buf, 0x5a, FLOOD_MSG);
	memset(buf + FLOOD_MSG, 0, FLOOD_MSG);
	mr = ibv_reg_mr(p.pd, buf, 2 * FLOOD_MSG, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	qp = new_qp(&p, p.cq, IBV_QPT_RC);
	if (connect_qp(&p, qp, qp->qp_num))
		die("connect");

	if (pipe(fds))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		uint64_t w0, c0;

		pin_to_cpu(1);
		w0 = now_ns(CLOCK_MONOTONIC);
		c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
		while (now_ns(CLOCK_MONOTONIC) - w0 < FLOOD_SECS * 1000000000ULL)
			;
		pct = (now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) * 100 /
		      (now_ns(CLOCK_MONOTONIC) - w0);
		_exit(write(fds[1], &pct, sizeof(pct)) == sizeof(pct) ? 0 : 1);
	}
	close(fds[1]);
	pin_to_cpu(0);
	ticks = kworker_ticks();
	t0 = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_MONOTONIC) - t0 < FLOOD_SECS * 1000000000ULL ||
	       inflight) {
		if (inflight < FLOOD_DEPTH &&
		    now_ns(CLOCK_MONOTONIC) - t0 < FLOOD_SECS * 1000000000ULL) {
			if (post_send(qp, IBV_WR_RDMA_WRITE, mr, buf, FLOOD_MSG,
				      (uintptr_t)buf + FLOOD_MSG, mr->rkey,
				      ++n))
				die("ibv_post_send");
			inflight++;
			continue;
		}
		if (now_ns(CLOCK_MONOTONIC) - t0 > 6 * FLOOD_SECS * 1000000000ULL)
			die("the flood's writes did not complete");
		if (ibv_poll_cq(p.cq, 1, &wc) != 1)
			continue;
		inflight--;
		got++;
		bad += wc.status != IBV_WC_SUCCESS;
	}
	ticks = kworker_ticks() - ticks;
	if (read(fds[0], &pct, sizeof(pct)) != sizeof(pct))
		pct = -1;
	close(fds[0]);
	waitpid(pid, &status, 0);
	CHECK(got && !bad && !memcmp(buf, buf + FLOOD_MSG, FLOOD_MSG),
	      "flood_cpu_writes_complete", "%d writes of 16 MiB, %d failed",
	      got, bad);
	/* The figures, for the log, whatever the verdict. */
	printf("# flood_cpu: %d writes of 16 MiB in %d s, kworkers %lld ticks of %ld\n",
	       got, FLOOD_SECS, ticks, FLOOD_SECS * hz);
	CHECK(pct >= 40, "flood_cpu_other_cpu_usable",
	      "a spinner on CPU 1 got %d%% of it", pct);
	printf("# flood_cpu: the spinner on CPU 1 got %d%% of it\n", pct);
	if (ibv_destroy_qp(qp) || ibv_dereg_mr(mr) || ibv_destroy_cq(p.cq) ||
	    ibv_dealloc_pd(p.pd) || ibv_close_device(p.ctx))
		die("flood teardown");
	free(buf);
	traffic_ok("flood_cpu_device_works_after");
}

int main(int argc, char **argv)
{
	/* The tools of other tests, which print no report. */
	static const char *const tools[] = {
		"hold", "rereg_step", "mw_step", "dm_step", "xrcd_step",
		"odp_step",
	};
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{ "udata", test_udata }, { "mmap", test_mmap },
		{ "rings", test_rings }, { "mr", test_mr },
		{ "flush", test_flush },
		{ "flush_absent", test_flush_absent },
		{ "reset", test_reset }, { "teardown", test_teardown },
		{ "hold", test_hold }, { "flood", test_flood },
		{ "memcg", test_memcg }, { "limits", test_limits },
		{ "mcast_limit", test_mcast_limit },
		{ "cqex", test_cqex }, { "pdom", test_pdom },
		{ "resize", test_resize }, { "rereg_step", test_rereg_step },
		{ "mw", test_mw }, { "mw_step", test_mw_step },
		{ "dm", test_dm }, { "dm_step", test_dm_step },
		{ "xrc", test_xrc }, { "xrcd_step", test_xrcd_step },
		{ "doorbell", test_doorbell }, { "cq_arm", test_cq_arm },
		{ "lazy", test_lazy },
		{ "odp_step", test_odp_step }, { "odp_cow", test_odp_cow },
		{ "spoof", test_spoof }, { "conform", test_conform },
		{ "flood_cpu", test_flood_cpu },
	};
	size_t i, j;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV TEST\n", argv[0]);
		return 2;
	}
	devname = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	report_pid = getpid();
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (strcmp(argv[2], tests[i].name))
			continue;
		report = true;
		for (j = 0; j < ARRAY_SIZE(tools); j++)
			report &= !!strcmp(argv[2], tools[j]);
		if (report)
			printf("KTAP version 1\n");
		tests[i].fn();
		report_end();
	}
	fprintf(stderr, "no test %s\n", argv[2]);
	return 2;
}
