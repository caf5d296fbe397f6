// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_rate: the small-message rate of an RDMA device, through plain
 * libibverbs and nothing else.
 *
 *   verbs_rate DEV GID_INDEX COUNT SIZE QPS [THREADS]
 *
 * One process, QPS RC QPs on DEV each connected in loopback to a peer QP
 * on DEV, posting COUNT RDMA WRITEs of SIZE bytes per QP: one work request
 * per ibv_post_send(), every 16th signaled, up to 128 in flight per QP,
 * the QPs in turn, one CQ polled 16 completions at a time.  With THREADS
 * (default 1, a divisor of QPS) posting threads, each owns QPS / THREADS
 * of the QPs and a CQ of its own, and runs on a CPU of its own where the
 * process may use that many (the Nth thread on the Nth allowed CPU); the
 * clock runs from their common start to the last one's end.  Prints
 * "verbs_rate: MSGS msgs in SECONDS s: RATE Mpps", then "verbs_rate:
 * CPU US us/msg": the busy CPU time of every CPU (/proc/stat: this
 * process, the device's workers, interrupts) over the timed loop, per
 * message, or "nan" where /proc/stat cannot be read.
 *
 * make bench runs it on shca and on rdma_rxe beside perftest: it shows
 * what is left of a message's cost without perftest's own loop, which
 * under emulation costs more than the device.  Any device works; it
 * checks nothing but the completions' status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define RATE_DEPTH	128
#define RATE_SIGNAL	16
#define RATE_MAX_QPS	64

struct rate_qp {
	struct ibv_qp *qp;
	struct ibv_qp *peer;
	uint64_t posted;
	uint64_t done;
};

/* One posting thread: its QPs, its CQ, its CPU (-1: any). */
struct rate_thread {
	pthread_t tid;
	struct rate_qp *q;
	unsigned int nqp;
	struct ibv_cq *cq;
	int cpu;
};

/* What every thread shares, set before they start. */
static struct {
	pthread_barrier_t start;
	struct ibv_mr *mr;
	char *buf;
	uint64_t count;
	unsigned int size;
} rate;

static void die(const char *what, int err)
{
	fprintf(stderr, "verbs_rate: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die(name, ENODEV);
	return ctx;
}

static struct ibv_qp *new_qp(struct ibv_pd *pd, struct ibv_cq *scq,
			     struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = RATE_DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

/* RESET to RTS, connected to @dqpn on the same port, by GID @gidx. */
static void connect_qp(struct ibv_qp *qp, uint32_t dqpn,
		       const union ibv_gid *gid, int gidx)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		die("modify to INIT", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		die("modify to RTR", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die("modify to RTS", err);
}

/* Busy ticks (USER_HZ) of all CPUs since boot, or -1. */
static double busy_ticks(void)
{
	unsigned long long v[8] = {};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return -1;
	/* user, nice, system, irq, softirq, steal: not idle or iowait */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Post and poll one thread's QPs until each has completed rate.count. */
static void *rate_run(void *arg)
{
	struct rate_thread *th = arg;
	uint64_t done = 0, count = rate.count;
	struct ibv_wc wc[16];
	unsigned int i;
	int n, err;

	if (th->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(th->cpu, &set);
		err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (err)
			die("pthread_setaffinity_np", err);
	}
	pthread_barrier_wait(&rate.start);
	while (done < count * th->nqp) {
		for (i = 0; i < th->nqp; i++) {
			struct rate_qp *q = &th->q[i];
			struct ibv_sge sge = {
				.addr = (uintptr_t)rate.buf,
				.length = rate.size,
				.lkey = rate.mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = i,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.wr.rdma.remote_addr = (uintptr_t)rate.buf +
						       rate.size,
				.wr.rdma.rkey = rate.mr->rkey,
			}, *bad;

			while (q->posted < count &&
			       q->posted - q->done < RATE_DEPTH) {
				wr.send_flags = q->posted % RATE_SIGNAL ==
						RATE_SIGNAL - 1 ?
						IBV_SEND_SIGNALED : 0;
				err = ibv_post_send(q->qp, &wr, &bad);
				if (err)
					die("ibv_post_send", err);
				q->posted++;
			}
		}
		n = ibv_poll_cq(th->cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		while (n--) {
			if (wc[n].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "verbs_rate: completion status %s\n",
					ibv_wc_status_str(wc[n].status));
				exit(1);
			}
			th->q[wc[n].wr_id].done += RATE_SIGNAL;
			done += RATE_SIGNAL;
		}
	}
	return NULL;
}

/* The Nth CPU this process may run on, or -1 when it may use fewer. */
static int nth_cpu(unsigned int nth)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && !nth--)
			return cpu;
	return -1;
}

int main(int argc, char **argv)
{
	struct rate_thread th[RATE_MAX_QPS];
	struct rate_qp q[RATE_MAX_QPS];
	unsigned int nqp, nth, i, per;
	struct ibv_context *ctx;
	struct ibv_cq *rcq;
	struct ibv_pd *pd;
	union ibv_gid gid;
	double t0, t, b0, b1;
	uint64_t done;
	int gidx, err;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: verbs_rate DEV GID_INDEX COUNT SIZE QPS [THREADS]\n");
		return 2;
	}
	gidx = atoi(argv[2]);
	rate.count = strtoull(argv[3], NULL, 0);
	rate.size = atoi(argv[4]);
	nqp = atoi(argv[5]);
	nth = argc == 7 ? atoi(argv[6]) : 1;
	if (!rate.count || rate.count % RATE_SIGNAL || !rate.size || !nqp ||
	    nqp > RATE_MAX_QPS || !nth || nqp % nth) {
		fprintf(stderr, "verbs_rate: need COUNT %% %d == 0, SIZE > 0, 1 <= QPS <= %d,\n",
			RATE_SIGNAL, RATE_MAX_QPS);
		fprintf(stderr, "verbs_rate: and THREADS dividing QPS\n");
		return 2;
	}
	per = nqp / nth;

	ctx = open_dev(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	rate.buf = calloc(2, rate.size);
	if (!rate.buf)
		die("calloc", ENOMEM);
	rate.mr = ibv_reg_mr(pd, rate.buf, 2 * rate.size,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!rate.mr)
		die("ibv_reg_mr", errno);
	rcq = ibv_create_cq(ctx, 2 * nqp, NULL, NULL, 0);
	if (!rcq)
		die("ibv_create_cq", errno);
	err = ibv_query_gid(ctx, 1, gidx, &gid);
	if (err)
		die("ibv_query_gid", err);
	for (i = 0; i < nth; i++) {
		th[i].q = &q[i * per];
		th[i].nqp = per;
		th[i].cpu = nth > 1 ? nth_cpu(i) : -1;
		th[i].cq = ibv_create_cq(ctx, per * RATE_DEPTH, NULL, NULL, 0);
		if (!th[i].cq)
			die("ibv_create_cq", errno);
	}
	for (i = 0; i < nqp; i++) {
		memset(&q[i], 0, sizeof(q[i]));
		q[i].qp = new_qp(pd, th[i / per].cq, rcq);
		q[i].peer = new_qp(pd, rcq, rcq);
		connect_qp(q[i].qp, q[i].peer->qp_num, &gid, gidx);
		connect_qp(q[i].peer, q[i].qp->qp_num, &gid, gidx);
	}

	err = pthread_barrier_init(&rate.start, NULL, nth + 1);
	if (err)
		die("pthread_barrier_init", err);
	for (i = 0; i < nth; i++) {
		err = pthread_create(&th[i].tid, NULL, rate_run, &th[i]);
		if (err)
			die("pthread_create", err);
	}
	b0 = busy_ticks();
	t0 = now();
	pthread_barrier_wait(&rate.start);
	for (i = 0; i < nth; i++)
		pthread_join(th[i].tid, NULL);
	t = now() - t0;
	b1 = busy_ticks();
	done = rate.count * nqp;
	printf("verbs_rate: %llu msgs in %.3f s: %.6f Mpps\n",
	       (unsigned long long)done, t, done / t / 1e6);
	if (b0 < 0 || b1 < 0)
		printf("verbs_rate: CPU nan us/msg\n");
	else
		printf("verbs_rate: CPU %.3f us/msg\n",
		       (b1 - b0) * 1e6 / sysconf(_SC_CLK_TCK) / done);

	for (i = 0; i < nqp; i++) {
		ibv_destroy_qp(q[i].qp);
		ibv_destroy_qp(q[i].peer);
	}
	for (i = 0; i < nth; i++)
		ibv_destroy_cq(th[i].cq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(rate.mr);
	free(rate.buf);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
