// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fault_step: one userspace create on an shca device, step by step with
 * its Nth allocation failed.
 *
 *   fault_step DEV OBJ
 *
 * OBJ is ctx, pd, mr, ah, cq, qp_rc, qp_uc, qp_ud, qp_srq or srq.  What
 * OBJ is created on (the context, a PD, a CQ, an SRQ, a buffer already
 * touched) is made first, and the program prints "OBJ 0 err 0 injected 0".
 * Then, for each line "step N" on stdin (N greater than the last step's):
 * the thread writes N to its own fail-nth, does the one create, reads
 * fail-nth back (0: the Nth allocation was failed; see the kernel's
 * fault-injection documentation) and clears it, and prints "OBJ N err E
 * injected I" (E the errno, 0 for success; I 1 if the fault was
 * injected).  It holds what it made until the next line on stdin, so that
 * the caller can look at "rdma res", then destroys the new object.  With
 * the failslab and fail_page_alloc stack filters set to shca's text, only
 * allocations made under shca count.
 *
 * When stdin says "stop" (or ends), it destroys the last new object,
 * prints "OBJ done", and waits for one more line (or the end) with only
 * what it made first, so that the caller can check that no step left
 * anything behind; then it exits.
 *
 * Exit status: 0, or 100 when the setup or a teardown failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BUFSZ	65536

static void die(const char *what)
{
	fprintf(stderr, "fault_step: %s: %s\n", what, strerror(errno));
	exit(100);
}

static char fail_nth_path[64];

static void set_fail_nth(unsigned int n)
{
	char s[16];
	int fd, len;

	fd = open(fail_nth_path, O_WRONLY);
	if (fd < 0)
		die(fail_nth_path);
	len = snprintf(s, sizeof(s), "%u", n);
	if (write(fd, s, len) != len)
		die(fail_nth_path);
	close(fd);
}

static unsigned int get_fail_nth(void)
{
	char s[16] = "";
	int fd;

	fd = open(fail_nth_path, O_RDONLY);
	if (fd < 0 || read(fd, s, sizeof(s) - 1) <= 0)
		die(fail_nth_path);
	close(fd);
	return strtoul(s, NULL, 10);
}

static struct ibv_device *find_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	errno = ENODEV;
	die(name);
	return NULL;
}

struct step {
	const char *obj;
	struct ibv_device *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_ah_attr ah_attr;
	char *buf;
};

/* What one create made, to be destroyed before the next. */
struct made {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
};

static void setup(struct step *s)
{
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	s->buf = aligned_alloc(4096, BUFSZ);
	if (!s->buf)
		die("aligned_alloc");
	/* Touched: pinning it must not have to fault pages in. */
	memset(s->buf, 0, BUFSZ);
	if (!strcmp(s->obj, "ctx"))
		return;
	s->ctx = ibv_open_device(s->dev);
	if (!s->ctx)
		die("ibv_open_device");
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	if (!s->pd || !s->cq)
		die("PD and CQ");
	if (!strcmp(s->obj, "qp_srq")) {
		s->srq = ibv_create_srq(s->pd, &sinit);
		if (!s->srq)
			die("ibv_create_srq");
	}
	if (!strcmp(s->obj, "ah")) {
		s->ah_attr.is_global = 1;
		s->ah_attr.port_num = 1;
		s->ah_attr.grh.hop_limit = 1;
		if (ibv_query_gid(s->ctx, 1, 0, &s->ah_attr.grh.dgid))
			die("ibv_query_gid");
	}
}

/* The one create; returns the object, or NULL with errno set. */
static void *create(struct step *s, struct made *m)
{
	struct ibv_qp_init_attr qinit = {
		.qp_type = IBV_QPT_RC,
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	const char *obj = s->obj;

	if (!strcmp(obj, "ctx"))
		return m->ctx = ibv_open_device(s->dev);
	if (!strcmp(obj, "pd"))
		return m->pd = ibv_alloc_pd(s->ctx);
	if (!strcmp(obj, "mr"))
		return m->mr = ibv_reg_mr(s->pd, s->buf, BUFSZ,
					  IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_WRITE);
	if (!strcmp(obj, "ah"))
		return m->ah = ibv_create_ah(s->pd, &s->ah_attr);
	if (!strcmp(obj, "cq"))
		return m->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	if (!strcmp(obj, "srq"))
		return m->srq = ibv_create_srq(s->pd, &sinit);
	if (!strcmp(obj, "qp_uc"))
		qinit.qp_type = IBV_QPT_UC;
	else if (!strcmp(obj, "qp_ud"))
		qinit.qp_type = IBV_QPT_UD;
	else if (!strcmp(obj, "qp_srq"))
		qinit.srq = s->srq;
	else if (strcmp(obj, "qp_rc"))
		return NULL;
	return m->qp = ibv_create_qp(s->pd, &qinit);
}

static void destroy(struct made *m)
{
	if ((m->qp && ibv_destroy_qp(m->qp)) ||
	    (m->srq && ibv_destroy_srq(m->srq)) ||
	    (m->cq && ibv_destroy_cq(m->cq)) ||
	    (m->ah && ibv_destroy_ah(m->ah)) ||
	    (m->mr && ibv_dereg_mr(m->mr)) ||
	    (m->pd && ibv_dealloc_pd(m->pd)) ||
	    (m->ctx && ibv_close_device(m->ctx)))
		die("teardown");
	memset(m, 0, sizeof(*m));
}

/*
 * Wait for the caller: the step it asks for after step @last ("step N"),
 * or 0 for "stop", the end of stdin or a step out of order.
 */
static unsigned int go_on(unsigned int last)
{
	unsigned int n;
	char line[32];

	if (!fgets(line, sizeof(line), stdin))
		return 0;
	if (sscanf(line, "step %u", &n) == 1 && n > last)
		return n;
	return 0;
}

int main(int argc, char **argv)
{
	static const char * const objs[] = {
		"ctx", "pd", "mr", "ah", "cq", "qp_rc", "qp_uc", "qp_ud",
		"qp_srq", "srq",
	};
	struct step s = {};
	struct made m = {};
	unsigned int n, left, i;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: fault_step DEV OBJ\n");
		return 100;
	}
	s.obj = argv[2];
	for (i = 0; i < ARRAY_SIZE(objs); i++)
		if (!strcmp(s.obj, objs[i]))
			break;
	if (i == ARRAY_SIZE(objs)) {
		errno = EINVAL;
		die(s.obj);
	}
	snprintf(fail_nth_path, sizeof(fail_nth_path),
		 "/proc/self/task/%ld/fail-nth", (long)syscall(SYS_gettid));
	s.dev = find_dev(argv[1]);
	setup(&s);
	printf("%s 0 err 0 injected 0\n", s.obj);
	fflush(stdout);

	for (n = go_on(0); n; n = go_on(n)) {
		destroy(&m);
		set_fail_nth(n);
		errno = 0;
		err = create(&s, &m) ? 0 : errno ?: 99;
		left = get_fail_nth();
		if (left)
			set_fail_nth(0);
		printf("%s %u err %d injected %d\n", s.obj, n, err, !left);
		fflush(stdout);
	}
	/* Back to what the loop started with, for the caller to look at. */
	destroy(&m);
	printf("%s done\n", s.obj);
	fflush(stdout);
	go_on(0);
	if ((s.srq && ibv_destroy_srq(s.srq)) ||
	    (s.cq && ibv_destroy_cq(s.cq)) ||
	    (s.pd && ibv_dealloc_pd(s.pd)) ||
	    (s.ctx && ibv_close_device(s.ctx)))
		die("teardown");
	free(s.buf);
	return 0;
}
