// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: bringing a kernel QP up through ib_core's API (shca_ktest_qp.h).
 *
 * Built into each module that includes it, so its functions are neither
 * exported nor static; each module links its own copy.
 */
#include <linux/etherdevice.h>
#include <linux/rcupdate.h>
#include <rdma/ib_cache.h>

#include "shca_ktest_qp.h"

/**
 * shca_ktest_av() - the address vector of a RoCE path to a peer device
 * @dev: the device the path starts at (port 1)
 * @peer: the device it goes to (port 1); may be @dev, for loopback
 * @ah: filled in
 *
 * The destination is @peer's GID SHCA_KTEST_SGID, and the source GID has
 * the same index on @dev.  ib_core resolves the destination MAC only for a
 * QP of a process; a kernel caller must hand in a resolved AV, so the MAC
 * is that of the netdev behind @peer's GID.
 *
 * Return: 0, or a negative errno if @peer has no such GID or it has no
 * netdev.
 */
int shca_ktest_av(struct ib_device *dev, struct ib_device *peer,
		  struct rdma_ah_attr *ah)
{
	const struct ib_gid_attr *gid;
	struct net_device *ndev;
	union ib_gid dgid;
	int err = 0;

	gid = rdma_get_gid_attr(peer, 1, SHCA_KTEST_SGID);
	if (IS_ERR(gid))
		return PTR_ERR(gid);
	dgid = gid->gid;
	memset(ah, 0, sizeof(*ah));
	ah->type = rdma_ah_find_type(dev, 1);
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, &dgid, 0, SHCA_KTEST_SGID, 64, 0);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(gid);
	if (IS_ERR(ndev))
		err = PTR_ERR(ndev);
	else
		ether_addr_copy(ah->roce.dmac, ndev->dev_addr);
	rcu_read_unlock();
	rdma_put_gid_attr(gid);
	return err;
}

/**
 * shca_ktest_create_ah() - an address handle for UD sends to a peer device
 * @pd: the PD of the QPs that will use it
 * @peer: the device it leads to; may be @pd's own
 *
 * Return: the AH, or an ERR_PTR().
 */
struct ib_ah *shca_ktest_create_ah(struct ib_pd *pd, struct ib_device *peer)
{
	struct rdma_ah_attr ah;
	int err;

	err = shca_ktest_av(pd->device, peer, &ah);
	if (err)
		return ERR_PTR(err);
	return rdma_create_ah(pd, &ah, RDMA_CREATE_AH_SLEEPABLE);
}

/**
 * shca_ktest_qp_init() - RESET to INIT, on port 1 and P_Key index 0
 * @qp: the QP
 * @c: its access rights (RC, UC) or Q_Key (UD)
 *
 * Return: 0, or what ib_modify_qp() returned.
 */
int shca_ktest_qp_init(struct ib_qp *qp, const struct shca_ktest_conn *c)
{
	bool ud = qp->qp_type == IB_QPT_UD;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = c->access,
		.qkey = c->qkey,
	};

	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT |
			    (ud ? IB_QP_QKEY : IB_QP_ACCESS_FLAGS));
}

/**
 * shca_ktest_qp_rtr() - INIT to RTR, an RC or UC QP connected to a peer QP
 * @qp: the QP
 * @peer: the peer QP's device; unused for UD
 * @peer_qpn: the peer QP's number; unused for UD
 * @c: the first PSN it expects
 *
 * RC and UC QPs get the address vector of shca_ktest_av() and an MTU of
 * 1024; an RC QP takes 4 RDMA READs and atomics at a time and asks for the
 * shortest RNR timer.  A UD QP only changes state.
 *
 * Return: 0, or a negative errno.
 */
int shca_ktest_qp_rtr(struct ib_qp *qp, struct ib_device *peer, u32 peer_qpn,
		      const struct shca_ktest_conn *c)
{
	bool rc = qp->qp_type == IB_QPT_RC;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int err;

	if (qp->qp_type == IB_QPT_UD)
		return ib_modify_qp(qp, &attr, IB_QP_STATE);
	err = shca_ktest_av(qp->device, peer, &attr.ah_attr);
	if (err)
		return err;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = peer_qpn;
	attr.rq_psn = c->psn;
	attr.max_dest_rd_atomic = 4;
	attr.min_rnr_timer = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			    IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			    (rc ? IB_QP_MAX_DEST_RD_ATOMIC |
			     IB_QP_MIN_RNR_TIMER : 0));
}

/**
 * shca_ktest_qp_rts() - RTR to RTS
 * @qp: the QP
 * @c: its first PSN, and for RC its timeout and retries
 *
 * An RC QP issues 4 RDMA READs and atomics at a time.
 *
 * Return: 0, or what ib_modify_qp() returned.
 */
int shca_ktest_qp_rts(struct ib_qp *qp, const struct shca_ktest_conn *c)
{
	bool rc = qp->qp_type == IB_QPT_RC;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.sq_psn = c->psn,
		.timeout = c->timeout,
		.retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry,
		.max_rd_atomic = 4,
	};

	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    (rc ? IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			     IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC : 0));
}

/**
 * shca_ktest_qp_to_rts() - RESET to RTS, connected to a peer QP
 * @qp: the QP
 * @peer: the peer QP's device (RC, UC); unused for UD
 * @peer_qpn: the peer QP's number (RC, UC); unused for UD
 * @c: how it is connected
 *
 * shca_ktest_qp_init(), shca_ktest_qp_rtr() and shca_ktest_qp_rts() in
 * turn.  A UD QP sends through an AH of shca_ktest_create_ah().
 *
 * Return: 0, or the first error.
 */
int shca_ktest_qp_to_rts(struct ib_qp *qp, struct ib_device *peer,
			 u32 peer_qpn, const struct shca_ktest_conn *c)
{
	int err;

	err = shca_ktest_qp_init(qp, c);
	if (!err)
		err = shca_ktest_qp_rtr(qp, peer, peer_qpn, c);
	if (!err)
		err = shca_ktest_qp_rts(qp, c);
	return err;
}
