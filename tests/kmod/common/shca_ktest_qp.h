/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: bringing a kernel QP up through ib_core's API, the way a ULP does.
 *
 * One implementation for the three kernel modules that drive shca as a
 * consumer: the KUnit suites (kunit/), the in-kernel consumer
 * (kconsumer/) and the microbenchmarks (kbench/).  Each builds
 * lib/shca_ktest_qp.c into itself (see their Kbuild files), so no module
 * depends on another.  Nothing here is shca's own: only ib_core's public
 * API, on port 1 of any RoCE device.
 */
#ifndef SHCA_KTEST_QP_H
#define SHCA_KTEST_QP_H

#include <rdma/ib_verbs.h>

/* The source GID index every connection uses: the RoCE v2 default GID. */
#define SHCA_KTEST_SGID		1

/**
 * struct shca_ktest_conn - how a QP is connected
 * @access: the remote access rights of an RC or UC QP
 * @qkey: the Q_Key of a UD QP
 * @psn: the first PSN, sent and expected
 * @timeout: RC: the local ACK timeout (4.096 us << @timeout)
 * @retry_cnt: RC: transport retries
 * @rnr_retry: RC: RNR retries (7: without end)
 */
struct shca_ktest_conn {
	int access;
	u32 qkey;
	u32 psn;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
};

int shca_ktest_av(struct ib_device *dev, struct ib_device *peer,
		  struct rdma_ah_attr *ah);
struct ib_ah *shca_ktest_create_ah(struct ib_pd *pd, struct ib_device *peer);
int shca_ktest_qp_init(struct ib_qp *qp, const struct shca_ktest_conn *c);
int shca_ktest_qp_rtr(struct ib_qp *qp, struct ib_device *peer, u32 peer_qpn,
		      const struct shca_ktest_conn *c);
int shca_ktest_qp_rts(struct ib_qp *qp, const struct shca_ktest_conn *c);
int shca_ktest_qp_to_rts(struct ib_qp *qp, struct ib_device *peer,
			 u32 peer_qpn, const struct shca_ktest_conn *c);

#endif /* SHCA_KTEST_QP_H */
