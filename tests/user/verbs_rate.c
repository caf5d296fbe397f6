// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_rate: the small-message rate of an RDMA device, through plain
 * libibverbs and nothing else.
 *
 *   verbs_rate DEV GID_INDEX COUNT SIZE QPS
 *
 * One process, QPS RC QPs on DEV each connected in loopback to a peer QP
 * on DEV, posting COUNT RDMA WRITEs of SIZE bytes per QP: one work request
 * per ibv_post_send(), every 16th signaled, up to 128 in flight per QP,
 * the QPs in turn, one CQ polled 16 completions at a time.  Prints
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
#include <errno.h>
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

int main(int argc, char **argv)
{
	struct rate_qp q[RATE_MAX_QPS];
	struct ibv_context *ctx;
	struct ibv_cq *cq, *rcq;
	struct ibv_wc wc[16];
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	union ibv_gid gid;
	uint64_t count, done = 0;
	unsigned int size, nqp, i;
	int gidx, n, err;
	double t0, t, b0, b1;
	char *buf;

	if (argc != 6) {
		fprintf(stderr, "usage: verbs_rate DEV GID_INDEX COUNT SIZE QPS\n");
		return 2;
	}
	gidx = atoi(argv[2]);
	count = strtoull(argv[3], NULL, 0);
	size = atoi(argv[4]);
	nqp = atoi(argv[5]);
	if (!count || count % RATE_SIGNAL || !size || !nqp ||
	    nqp > RATE_MAX_QPS) {
		fprintf(stderr, "verbs_rate: need COUNT %% %d == 0, SIZE > 0, 1 <= QPS <= %d\n",
			RATE_SIGNAL, RATE_MAX_QPS);
		return 2;
	}

	ctx = open_dev(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	buf = calloc(2, size);
	if (!buf)
		die("calloc", ENOMEM);
	mr = ibv_reg_mr(pd, buf, 2 * size, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno);
	cq = ibv_create_cq(ctx, nqp * RATE_DEPTH, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 2 * nqp, NULL, NULL, 0);
	if (!cq || !rcq)
		die("ibv_create_cq", errno);
	err = ibv_query_gid(ctx, 1, gidx, &gid);
	if (err)
		die("ibv_query_gid", err);
	for (i = 0; i < nqp; i++) {
		memset(&q[i], 0, sizeof(q[i]));
		q[i].qp = new_qp(pd, cq, rcq);
		q[i].peer = new_qp(pd, rcq, rcq);
		connect_qp(q[i].qp, q[i].peer->qp_num, &gid, gidx);
		connect_qp(q[i].peer, q[i].qp->qp_num, &gid, gidx);
	}

	b0 = busy_ticks();
	t0 = now();
	while (done < count * nqp) {
		for (i = 0; i < nqp; i++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf,
				.length = size,
				.lkey = mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = i,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.wr.rdma.remote_addr = (uintptr_t)buf + size,
				.wr.rdma.rkey = mr->rkey,
			}, *bad;

			while (q[i].posted < count &&
			       q[i].posted - q[i].done < RATE_DEPTH) {
				wr.send_flags = q[i].posted % RATE_SIGNAL ==
						RATE_SIGNAL - 1 ?
						IBV_SEND_SIGNALED : 0;
				err = ibv_post_send(q[i].qp, &wr, &bad);
				if (err)
					die("ibv_post_send", err);
				q[i].posted++;
			}
		}
		n = ibv_poll_cq(cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		while (n--) {
			if (wc[n].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "verbs_rate: completion status %s\n",
					ibv_wc_status_str(wc[n].status));
				return 1;
			}
			q[wc[n].wr_id].done += RATE_SIGNAL;
			done += RATE_SIGNAL;
		}
	}
	t = now() - t0;
	b1 = busy_ticks();
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
	ibv_destroy_cq(cq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(mr);
	free(buf);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
