// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the execution engine and the fabric.
 *
 * Each QP has one turn on the device's execution units (a work item on an
 * unbound workqueue).  A doorbell queues the turn, or, from a process
 * posting to an idle QP, runs it in the process's context; either way one
 * runner at a time holds the QP's turn_mutex.  The turn takes send WQEs
 * in order, executes each to the end - local checks, routing, the peer's
 * responder, the reply - and completes it before taking the next.  Because
 * one WQE is finished before the next starts, a fenced WQE never has an
 * RDMA read or atomic of its own QP in flight ahead of it.
 *
 * The fabric is the list of every shca device in the kernel, cut into
 * segments: each port reports the segment it is cabled to.  A message is
 * routed by destination GID to the device on the sender's segment whose
 * GID table holds it, then by QPN to the QP; it never touches a netdev.  The responder side of a QP
 * runs under its resp_mutex, one inbound message at a time, so message
 * order per connection is the order of the sender's SQ.
 */
#include <asm/checksum.h>
#include <kunit/visibility.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "shca_hw_int.h"

/* Every device in the kernel, for routing. */
static LIST_HEAD(shca_fabric);
/* Guards shca_fabric. */
static DEFINE_RWLOCK(shca_fabric_lock);
/* Makes atomics atomic across every device's execution units. */
static DEFINE_SPINLOCK(shca_atomic_lock);

#define SHCA_HW_BUDGET		64
/* Payload bytes a doorbell's caller moves itself before it hands over. */
#define SHCA_HW_RUN_BYTES	8192
#define SHCA_HW_RNR_INFINITE	7
#define SHCA_HW_MAX_TIMEOUT_US	100000

/**
 * shca_hw_fabric_add() - connect a device to the fabric
 * @hw: the device
 */
void shca_hw_fabric_add(struct shca_hw *hw)
{
	write_lock(&shca_fabric_lock);
	list_add_tail(&hw->fabric_node, &shca_fabric);
	write_unlock(&shca_fabric_lock);
}

/**
 * shca_hw_fabric_del() - disconnect a device from the fabric
 * @hw: the device
 */
void shca_hw_fabric_del(struct shca_hw *hw)
{
	write_lock(&shca_fabric_lock);
	list_del_init(&hw->fabric_node);
	write_unlock(&shca_fabric_lock);
}

/* Where a message comes from, as the receiver's headers will say. */
struct shca_hw_src {
	u8 gid[SHCA_HW_GID_LEN];
	u8 net_type;
	u32 mtu;
	u64 segment;
};

/* The largest IB MTU whose packets, with RoCE headers, fit the link. */
static u32 shca_hw_link_mtu(u32 link_mtu)
{
	u32 mtu;

	for (mtu = 4096; mtu > 256; mtu >>= 1)
		if (mtu + 96 <= link_mtu)
			break;
	return mtu;
}

/* The sender's source GID and its encapsulation; false if unusable. */
static bool shca_hw_source(struct shca_hw *hw, const struct shca_hw_av *av,
			   struct shca_hw_src *src)
{
	static const u8 v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	const struct shca_hw_gid_entry *e;
	unsigned long flags;
	bool ok;

	if (av->sgid_index >= hw->caps->gid_tbl_len)
		return false;
	spin_lock_irqsave(&hw->lock, flags);
	e = &hw->gids[av->sgid_index];
	ok = hw->port.link_up && e->valid;
	if (ok) {
		memcpy(src->gid, e->gid, SHCA_HW_GID_LEN);
		src->mtu = shca_hw_link_mtu(hw->port.mtu);
		src->segment = hw->port.segment;
		if (e->type == SHCA_HW_GID_ROCE_V1)
			src->net_type = SHCA_NET_ROCE_V1;
		else if (!memcmp(e->gid, v4_prefix, sizeof(v4_prefix)))
			src->net_type = SHCA_NET_IPV4;
		else
			src->net_type = SHCA_NET_IPV6;
	}
	spin_unlock_irqrestore(&hw->lock, flags);
	return ok;
}

static bool shca_hw_owns_gid(struct shca_hw *hw, const u8 *gid, u64 segment)
{
	unsigned long flags;
	bool found = false;
	u32 i;

	spin_lock_irqsave(&hw->lock, flags);
	if (hw->port.link_up && hw->port.segment == segment) {
		for (i = 0; i < hw->caps->gid_tbl_len && !found; i++)
			found = hw->gids[i].valid &&
				!memcmp(hw->gids[i].gid, gid, SHCA_HW_GID_LEN);
	}
	spin_unlock_irqrestore(&hw->lock, flags);
	return found;
}

/* Find the QP on @segment a message is for, and hold it. */
static struct shca_hw_qp *shca_hw_route(const u8 *dgid, u32 dqpn,
					u64 segment)
{
	struct shca_hw_qp *qp = NULL;
	struct shca_hw *hw;

	read_lock(&shca_fabric_lock);
	list_for_each_entry(hw, &shca_fabric, fabric_node) {
		if (shca_hw_owns_gid(hw, dgid, segment)) {
			qp = shca_hw_qp_get(hw, dqpn & SHCA_HW_QPN_MASK);
			break;
		}
	}
	read_unlock(&shca_fabric_lock);
	return qp;
}

/**
 * struct shca_hw_msg - one message on the wire, as the responder sees it
 * @src_qp: the sending QP
 * @src: the sender's GID and encapsulation
 * @av: the address vector it was sent with
 * @wqe: the sender's WQE
 * @local: the sender's resolved local memory: the payload, or where a read
 *	or atomic result goes
 * @len: payload or read length
 * @qkey: the Q_Key it carries, for UD
 */
struct shca_hw_msg {
	struct shca_hw_qp *src_qp;
	struct shca_hw_src src;
	const struct shca_hw_av *av;
	const struct shca_hw_send_wqe *wqe;
	struct shca_hw_mem *local;
	u64 len;
	u32 qkey;
};

/* What the requester learns about its WQE. */
struct shca_hw_result {
	u8 status;
	u32 byte_len;
	bool rnr;
	u8 rnr_timer;
	bool no_ack;
};

/* Headers that lead a UD receive: a GRH, or an IPv4 header. */
static void shca_hw_build_grh(u8 *buf, const struct shca_hw_msg *m,
			      const u8 *dgid)
{
	memset(buf, 0, SHCA_HW_GRH_LEN);
	if (m->src.net_type == SHCA_NET_IPV4) {
		struct iphdr *ip = (struct iphdr *)(buf + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = m->av->traffic_class;
		ip->tot_len = htons(m->len + 20 + 8 + 12 + 4);
		ip->ttl = m->av->hop_limit ?: 64;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, m->src.gid + 12, 4);
		memcpy(&ip->daddr, dgid + 12, 4);
		ip->check = ip_fast_csum((u8 *)ip, ip->ihl);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)buf;
		__be32 vtf = cpu_to_be32(6U << 28 |
					 (u32)m->av->traffic_class << 20 |
					 (m->av->flow_label & 0xfffff));

		memcpy(ip6, &vtf, sizeof(vtf));
		ip6->payload_len = htons(m->len + 12 + 4);
		ip6->nexthdr = m->src.net_type == SHCA_NET_ROCE_V1 ?
			       0x1b : IPPROTO_UDP;
		ip6->hop_limit = m->av->hop_limit;
		memcpy(&ip6->saddr, m->src.gid, SHCA_HW_GID_LEN);
		memcpy(&ip6->daddr, dgid, SHCA_HW_GID_LEN);
	}
}

/* Take a receive WQE for an inbound message, from the RQ or the SRQ. */
static bool shca_hw_take_recv(struct shca_hw_qp *qp,
			      struct shca_hw_recv_wqe *wqe, u32 *idx)
{
	unsigned long flags;
	u32 pi, mask;

	if (qp->srq)
		return shca_hw_srq_pop(qp->srq, wqe, idx);

	mask = (1U << qp->rq.log_depth) - 1;
	spin_lock_irqsave(&qp->lock, flags);
	/* Pairs with the driver's release: the WQEs below pi are written. */
	pi = smp_load_acquire(&qp->dbrec->rq_pi);
	if (pi == qp->rq.ci || pi - qp->rq.ci > mask + 1) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	*idx = qp->rq.ci & mask;
	memcpy(wqe, (struct shca_hw_recv_wqe *)qp->rq.ring + *idx,
	       sizeof(*wqe));
	qp->rq.ci++;
	spin_unlock_irqrestore(&qp->lock, flags);
	return true;
}

/* A responder error: the QP goes to error, with an event if asked. */
static void shca_hw_resp_fail(struct shca_hw_qp *qp, int event)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	shca_hw_qp_to_err(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (event >= 0)
		shca_hw_qp_event(qp, event);
}

static bool shca_hw_resp_accepts(struct shca_hw_qp *qp,
				 const struct shca_hw_msg *m)
{
	u32 st = qp->attr.state;
	bool ud = qp->type == SHCA_QPT_UD || qp->type == SHCA_QPT_GSI;
	bool src_ud = m->src_qp->type == SHCA_QPT_UD ||
		      m->src_qp->type == SHCA_QPT_GSI;

	lockdep_assert_held(&qp->lock);
	if (qp->fenced || (st != SHCA_QPS_RTR && st != SHCA_QPS_RTS &&
			   st != SHCA_QPS_SQD && st != SHCA_QPS_SQE))
		return false;
	if (ud != src_ud || (!ud && qp->type != m->src_qp->type))
		return false;
	if (ud)
		return m->qkey == qp->attr.qkey;
	return qp->attr.dest_qpn == m->src_qp->qpn;
}

/*
 * Deliver a receive: scatter @payload (after a header for UD) into a
 * receive WQE and complete it.  Returns the status the requester sees.
 */
static u8 shca_hw_resp_recv(struct shca_hw_qp *qp, const struct shca_hw_msg *m,
			    struct shca_hw_mem *payload, u64 write_len,
			    struct shca_hw_result *res)
{
	struct shca_hw_cqe cqe = { .qpn = qp->qpn, .opcode = SHCA_CQE_RECV };
	const struct shca_hw_send_wqe *w = m->wqe;
	bool ud = qp->type == SHCA_QPT_UD || qp->type == SHCA_QPT_GSI;
	bool rc = qp->type == SHCA_QPT_RC;
	struct shca_hw_recv_wqe rwqe;
	struct shca_hw_mem dst;
	u8 hdr[SHCA_HW_GRH_LEN];
	u64 need;
	u32 idx;
	u8 reply = SHCA_CQE_OK;

	if (!shca_hw_take_recv(qp, &rwqe, &idx)) {
		if (rc) {
			shca_hw_count(qp->hw, SHCA_CNT_RNR_NAK);
			res->rnr = true;
			res->rnr_timer = qp->attr.min_rnr_timer;
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
		}
		return SHCA_CQE_OK;
	}
	shca_hw_count(qp->hw, SHCA_CNT_RECV_WQES);
	cqe.wqe_idx = idx;
	if (qp->srq)
		cqe.flags |= SHCA_CQE_F_SRQ;
	if (w->opcode == SHCA_WQE_RDMA_WRITE_IMM)
		cqe.opcode = SHCA_CQE_RECV_RDMA_IMM;
	if (w->opcode == SHCA_WQE_SEND_IMM ||
	    w->opcode == SHCA_WQE_RDMA_WRITE_IMM) {
		cqe.flags |= SHCA_CQE_F_IMM;
		cqe.imm_inv = w->imm_inv;
	}

	if (rwqe.num_sge > (qp->srq ? qp->srq->max_sge : qp->max_recv_sge)) {
		cqe.status = SHCA_CQE_LOC_QP_OP_ERR;
		reply = SHCA_CQE_REM_OP_ERR;
		goto complete;
	}
	cqe.status = shca_hw_mem_resolve(qp->hw, qp->pdn, rwqe.sge,
					 rwqe.num_sge, SHCA_ACCESS_LOCAL_WRITE,
					 &dst);
	if (cqe.status != SHCA_CQE_OK) {
		reply = SHCA_CQE_REM_OP_ERR;
		goto complete;
	}

	need = (ud ? SHCA_HW_GRH_LEN : 0) + (payload ? m->len : 0);
	if (need > dst.total) {
		shca_hw_count(qp->hw, SHCA_CNT_LEN_ERR);
		cqe.status = SHCA_CQE_LOC_LEN_ERR;
		reply = SHCA_CQE_REM_INV_REQ_ERR;
		shca_hw_mem_release(&dst);
		goto complete;
	}
	if (ud) {
		shca_hw_build_grh(hdr, m, m->av->dgid);
		shca_hw_mem_write(&dst, 0, hdr, sizeof(hdr));
		cqe.flags |= SHCA_CQE_F_GRH;
		cqe.net_type = m->src.net_type;
		cqe.src_qp = m->src_qp->qpn;
		cqe.sl = m->av->sl;
	}
	if (payload) {
		shca_hw_mem_copy(&dst, ud ? SHCA_HW_GRH_LEN : 0, payload,
				 m->len);
		cqe.byte_len = need;
	} else {
		cqe.byte_len = write_len;
	}
	shca_hw_mem_release(&dst);
	shca_hw_count_add(qp->hw, SHCA_CNT_RX_BYTES, m->len);

	if (w->opcode == SHCA_WQE_SEND_INV) {
		if (shca_hw_mpt_invalidate(qp->hw, qp->pdn, w->imm_inv, true)) {
			cqe.flags |= SHCA_CQE_F_INV;
			cqe.imm_inv = w->imm_inv;
		} else {
			/* IBTA class J: an Invalid Request NAK. */
			cqe.status = SHCA_CQE_REM_INV_REQ_ERR;
			reply = SHCA_CQE_REM_INV_REQ_ERR;
		}
	}

complete:
	if (cqe.status != SHCA_CQE_OK)
		cqe.byte_len = 0;
	shca_hw_cq_write(qp->rcq, &cqe, w->flags & SHCA_WQE_F_SOLICITED);
	if (cqe.status != SHCA_CQE_OK && !ud)
		shca_hw_resp_fail(qp, cqe.status == SHCA_CQE_LOC_PROT_ERR ?
				  SHCA_EV_QP_ACCESS_ERR : SHCA_EV_QP_REQ_ERR);
	return ud ? SHCA_CQE_OK : reply;
}

/* The responder: handle one inbound message on @qp. */
static u8 shca_hw_respond(struct shca_hw_qp *qp, struct shca_hw_msg *m,
			  struct shca_hw_result *res)
{
	const struct shca_hw_send_wqe *w = m->wqe;
	bool rc = qp->type == SHCA_QPT_RC;
	struct shca_hw_mem remote;
	unsigned long flags;
	u32 need = 0;
	bool comm_est;
	u64 orig, *p;
	u8 status = SHCA_CQE_OK;

	mutex_lock(&qp->resp_mutex);
	spin_lock_irqsave(&qp->lock, flags);
	if (!shca_hw_resp_accepts(qp, m)) {
		spin_unlock_irqrestore(&qp->lock, flags);
		mutex_unlock(&qp->resp_mutex);
		if (m->src_qp->type == SHCA_QPT_RC)
			res->no_ack = true;
		else
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
		return SHCA_CQE_OK;
	}
	/* Once per RTR visit: the first message is what establishes it. */
	comm_est = qp->attr.state == SHCA_QPS_RTR && !qp->comm_est_sent &&
		   qp->type != SHCA_QPT_UD && qp->type != SHCA_QPT_GSI;
	if (comm_est)
		qp->comm_est_sent = true;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (comm_est)
		shca_hw_qp_event(qp, SHCA_EV_COMM_EST);

	switch (w->opcode) {
	case SHCA_WQE_SEND:
	case SHCA_WQE_SEND_IMM:
	case SHCA_WQE_SEND_INV:
		status = shca_hw_resp_recv(qp, m, m->local, 0, res);
		break;
	case SHCA_WQE_RDMA_WRITE:
	case SHCA_WQE_RDMA_WRITE_IMM:
		need = SHCA_ACCESS_REMOTE_WRITE;
		if (!shca_hw_mem_resolve_remote(qp->hw, qp->pdn, qp->attr.access,
						w->rdma.rkey,
						w->rdma.remote_addr, m->len,
						need, &remote))
			break;
		shca_hw_window_pass(&qp->hw->windows[SHCA_WIN_MEM_ACCESS],
				    qp->qpn);
		shca_hw_mem_copy(&remote, 0, m->local, m->len);
		shca_hw_mem_release(&remote);
		shca_hw_count_add(qp->hw, SHCA_CNT_RX_BYTES, m->len);
		need = 0;
		if (w->opcode == SHCA_WQE_RDMA_WRITE_IMM)
			status = shca_hw_resp_recv(qp, m, NULL, m->len, res);
		break;
	case SHCA_WQE_RDMA_READ:
		need = SHCA_ACCESS_REMOTE_READ;
		if (!shca_hw_mem_resolve_remote(qp->hw, qp->pdn, qp->attr.access,
						w->rdma.rkey,
						w->rdma.remote_addr, m->len,
						need, &remote))
			break;
		shca_hw_mem_copy(m->local, 0, &remote, m->len);
		shca_hw_mem_release(&remote);
		need = 0;
		break;
	case SHCA_WQE_ATOMIC_CS:
	case SHCA_WQE_ATOMIC_FA:
		if (w->rdma.remote_addr & 7) {
			status = SHCA_CQE_REM_INV_REQ_ERR;
			shca_hw_resp_fail(qp, SHCA_EV_QP_REQ_ERR);
			break;
		}
		need = SHCA_ACCESS_REMOTE_ATOMIC;
		if (!shca_hw_mem_resolve_remote(qp->hw, qp->pdn, qp->attr.access,
						w->rdma.rkey,
						w->rdma.remote_addr, 8, need,
						&remote))
			break;
		need = 0;
		p = shca_hw_mem_ptr(&remote, 0, 8);
		if (!p) {
			shca_hw_mem_release(&remote);
			status = SHCA_CQE_REM_INV_REQ_ERR;
			shca_hw_resp_fail(qp, SHCA_EV_QP_REQ_ERR);
			break;
		}
		spin_lock_irqsave(&shca_atomic_lock, flags);
		orig = READ_ONCE(*p);
		if (w->opcode == SHCA_WQE_ATOMIC_FA)
			WRITE_ONCE(*p, orig + w->rdma.compare_add);
		else if (orig == w->rdma.compare_add)
			WRITE_ONCE(*p, w->rdma.swap);
		spin_unlock_irqrestore(&shca_atomic_lock, flags);
		shca_hw_mem_release(&remote);
		shca_hw_mem_write(m->local, 0, &orig, sizeof(orig));
		break;
	default:
		status = SHCA_CQE_REM_INV_REQ_ERR;
		break;
	}

	if (need) {
		/* A remote access check failed. */
		if (rc) {
			status = SHCA_CQE_REM_ACCESS_ERR;
			shca_hw_resp_fail(qp, SHCA_EV_QP_ACCESS_ERR);
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_DROPPED);
		}
	}
	mutex_unlock(&qp->resp_mutex);
	return rc ? status : SHCA_CQE_OK;
}

static bool shca_hw_opcode_ok(const struct shca_hw_qp *qp, u32 opcode)
{
	/* A process's WQEs cannot name kernel memory. */
	if (qp->user && (opcode == SHCA_WQE_LOCAL_INV ||
			 opcode == SHCA_WQE_REG_MR))
		return false;
	switch (qp->type) {
	case SHCA_QPT_UD:
	case SHCA_QPT_GSI:
		return opcode == SHCA_WQE_SEND || opcode == SHCA_WQE_SEND_IMM;
	case SHCA_QPT_UC:
		return opcode == SHCA_WQE_SEND || opcode == SHCA_WQE_SEND_IMM ||
		       opcode == SHCA_WQE_SEND_INV ||
		       opcode == SHCA_WQE_RDMA_WRITE ||
		       opcode == SHCA_WQE_RDMA_WRITE_IMM ||
		       opcode == SHCA_WQE_LOCAL_INV ||
		       opcode == SHCA_WQE_REG_MR;
	case SHCA_QPT_RC:
		return opcode < SHCA_WQE_NUM_OPCODES;
	default:
		return false;
	}
}

/* Execute one send WQE from start to finish.  No QP lock is held. */
static void shca_hw_execute(struct shca_hw_qp *qp,
			    const struct shca_hw_send_wqe *w,
			    const struct shca_hw_qp_attr *attr,
			    struct shca_hw_result *res)
{
	struct shca_hw *hw = qp->hw;
	bool ud = qp->type == SHCA_QPT_UD || qp->type == SHCA_QPT_GSI;
	bool atomic = w->opcode == SHCA_WQE_ATOMIC_CS ||
		      w->opcode == SHCA_WQE_ATOMIC_FA;
	struct shca_hw_msg m = { .src_qp = qp, .wqe = w };
	struct shca_hw_mem local;
	struct shca_hw_qp *dqp;
	u32 access = 0;
	bool routable;

	if (!shca_hw_opcode_ok(qp, w->opcode) ||
	    ((w->flags & SHCA_WQE_F_INLINE) &&
	     (w->inline_len > qp->max_inline || w->opcode > SHCA_WQE_RDMA_WRITE_IMM)) ||
	    (!(w->flags & SHCA_WQE_F_INLINE) && w->num_sge > qp->max_send_sge)) {
		res->status = SHCA_CQE_LOC_QP_OP_ERR;
		return;
	}
	if (w->opcode == SHCA_WQE_LOCAL_INV) {
		if (!shca_hw_mpt_invalidate(hw, qp->pdn, w->imm_inv, false)) {
			shca_hw_count(hw, SHCA_CNT_LOC_PROT_ERR);
			res->status = SHCA_CQE_LOC_PROT_ERR;
		}
		return;
	}
	if (w->opcode == SHCA_WQE_REG_MR) {
		if (!shca_hw_mpt_fast_reg(hw, qp->pdn, w))
			res->status = SHCA_CQE_MW_BIND_ERR;
		return;
	}

	if (w->flags & SHCA_WQE_F_INLINE) {
		/* @w is the engine's own copy of the WQE. */
		shca_hw_mem_inline(&local, w->inline_data, w->inline_len);
	} else {
		if (w->opcode == SHCA_WQE_RDMA_READ || atomic)
			access = SHCA_ACCESS_LOCAL_WRITE;
		res->status = shca_hw_mem_resolve(hw, qp->pdn, w->sge,
						  w->num_sge, access, &local);
		if (res->status != SHCA_CQE_OK)
			return;
	}
	m.local = &local;
	m.len = local.total;
	m.av = ud ? &w->ud.av : &attr->av;
	m.qkey = w->ud.remote_qkey & SHCA_HW_QKEY_PRIVILEGED ?
		 attr->qkey : w->ud.remote_qkey;
	routable = shca_hw_source(hw, m.av, &m.src);
	if ((atomic && m.len != 8) || m.len > hw->caps->max_msg_sz ||
	    (ud && routable && m.len > m.src.mtu)) {
		shca_hw_count(hw, SHCA_CNT_LEN_ERR);
		res->status = SHCA_CQE_LOC_LEN_ERR;
		goto out;
	}

	dqp = NULL;
	if (routable)
		dqp = shca_hw_route(m.av->dgid,
				    ud ? w->ud.remote_qpn : attr->dest_qpn,
				    m.src.segment);
	if (!dqp) {
		if (qp->type == SHCA_QPT_RC)
			res->no_ack = true;
		else
			shca_hw_count(hw, SHCA_CNT_DROPPED);
		goto out;
	}
	res->status = shca_hw_respond(dqp, &m, res);
	shca_hw_qp_put(dqp);
	if (res->status == SHCA_CQE_OK && !res->rnr && !res->no_ack) {
		res->byte_len = m.len;
		shca_hw_count_add(hw, SHCA_CNT_TX_BYTES, m.len);
	}
out:
	shca_hw_mem_release(&local);
}

static const u8 shca_hw_cqe_opcode[SHCA_WQE_NUM_OPCODES] = {
	[SHCA_WQE_SEND]			= SHCA_CQE_SEND,
	[SHCA_WQE_SEND_IMM]		= SHCA_CQE_SEND,
	[SHCA_WQE_SEND_INV]		= SHCA_CQE_SEND,
	[SHCA_WQE_RDMA_WRITE]		= SHCA_CQE_RDMA_WRITE,
	[SHCA_WQE_RDMA_WRITE_IMM]	= SHCA_CQE_RDMA_WRITE,
	[SHCA_WQE_RDMA_READ]		= SHCA_CQE_RDMA_READ,
	[SHCA_WQE_ATOMIC_CS]		= SHCA_CQE_ATOMIC_CS,
	[SHCA_WQE_ATOMIC_FA]		= SHCA_CQE_ATOMIC_FA,
	[SHCA_WQE_LOCAL_INV]		= SHCA_CQE_LOCAL_INV,
	[SHCA_WQE_REG_MR]		= SHCA_CQE_REG_MR,
};

/* Microseconds an RNR NAK timer value asks for (IBTA table 45). */
static u32 shca_hw_rnr_usecs(u8 timer)
{
	static const u32 usecs[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return usecs[timer & 31];
}

static u32 shca_hw_timeout_usecs(u8 timeout)
{
	if (!timeout || timeout > 14)
		return SHCA_HW_MAX_TIMEOUT_US;
	return min_t(u32, (4096U << timeout) / 1000, SHCA_HW_MAX_TIMEOUT_US);
}

/**
 * shca_hw_qp_flush() - complete a QP's outstanding WQEs with a flush error
 * @qp: the QP, in ERR or SQE
 * @rq: flush the receive queue too, not only the send queue
 *
 * For a QP on an SRQ, flushing the receive side raises the last WQE
 * reached event, once.
 */
void shca_hw_qp_flush(struct shca_hw_qp *qp, bool rq)
{
	struct shca_hw_cqe cqe = { .qpn = qp->qpn,
				   .status = SHCA_CQE_WR_FLUSH_ERR };
	const struct shca_hw_send_wqe *sq = qp->sq.ring;
	u32 smask = (1U << qp->sq.log_depth) - 1;
	u32 rmask = (1U << qp->rq.log_depth) - 1;
	u32 sq_first = 0, sq_n = 0, rq_first = 0, rq_n = 0, pi, i;
	bool last_wqe = false;
	unsigned long flags;

	mutex_lock(&qp->resp_mutex);
	spin_lock_irqsave(&qp->lock, flags);
	if (!qp->fenced) {
		/* Pairs with the driver's release: WQEs below pi are written. */
		pi = smp_load_acquire(&qp->dbrec->sq_pi);
		if (pi - qp->sq.ci <= smask + 1) {
			sq_first = qp->sq.ci;
			sq_n = pi - sq_first;
			qp->sq.ci = pi;
		}
		if (rq && !qp->srq) {
			/* As above, for the receive queue. */
			pi = smp_load_acquire(&qp->dbrec->rq_pi);
			if (pi - qp->rq.ci <= rmask + 1) {
				rq_first = qp->rq.ci;
				rq_n = pi - rq_first;
				qp->rq.ci = pi;
			}
		}
		if (rq && qp->srq && !qp->last_wqe_sent) {
			qp->last_wqe_sent = true;
			last_wqe = true;
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);

	/*
	 * Writing a CQE may sleep, so it happens unlocked.  The WQEs stay the
	 * device's until their CQEs are out: the driver cannot reuse their
	 * slots meanwhile, and a fence waits for the responder mutex.
	 */
	for (i = 0; i < sq_n; i++) {
		cqe.wqe_idx = (sq_first + i) & smask;
		cqe.opcode = shca_hw_cqe_opcode[sq[cqe.wqe_idx].opcode %
						SHCA_WQE_NUM_OPCODES];
		shca_hw_cq_write(qp->scq, &cqe, false);
	}
	cqe.opcode = SHCA_CQE_RECV;
	for (i = 0; i < rq_n; i++) {
		cqe.wqe_idx = (rq_first + i) & rmask;
		shca_hw_cq_write(qp->rcq, &cqe, false);
	}
	mutex_unlock(&qp->resp_mutex);
	shca_hw_count_add(qp->hw, SHCA_CNT_FLUSHED, sq_n + rq_n);
	if (last_wqe)
		shca_hw_qp_event(qp, SHCA_EV_QP_LAST_WQE);
}

/* Whether shca_hw_qp_flush() would find anything to do. */
static bool shca_hw_flush_pending(struct shca_hw_qp *qp, bool rq)
{
	lockdep_assert_held(&qp->lock);
	if (READ_ONCE(qp->dbrec->sq_pi) != qp->sq.ci)
		return true;
	if (!rq)
		return false;
	if (qp->srq)
		return !qp->last_wqe_sent;
	return READ_ONCE(qp->dbrec->rq_pi) != qp->rq.ci;
}

/*
 * Whether the execution units may take a WQE now: always, unless paused;
 * while paused, only as many as single-stepping allows.
 */
static bool shca_hw_engine_may_run(struct shca_hw *hw)
{
	if (!READ_ONCE(hw->engine_paused))
		return true;
	return atomic_dec_if_positive(&hw->engine_steps) >= 0;
}

/* Give every QP a turn, for work held back while paused. */
static void shca_hw_engine_kick_all(struct shca_hw *hw)
{
	struct shca_hw_qp *qp;
	unsigned long index, flags;

	/* Under the table lock, a QP found is not yet being freed. */
	xa_lock_irqsave(&hw->qps, flags);
	xa_for_each(&hw->qps, index, qp)
		queue_delayed_work(hw->engine_wq, &qp->engine, 0);
	xa_unlock_irqrestore(&hw->qps, flags);
}

/**
 * shca_hw_engine_pause() - stop or restart the execution units
 * @hw: the device
 * @pause: stop them
 *
 * A paused device executes no WQE and flushes nothing; doorbells are
 * remembered.  Commands still run: destroying a QP still flushes it.
 * Restarting also drops any single steps left.
 */
void shca_hw_engine_pause(struct shca_hw *hw, bool pause)
{
	WRITE_ONCE(hw->engine_paused, pause);
	if (!pause) {
		atomic_set(&hw->engine_steps, 0);
		shca_hw_engine_kick_all(hw);
	}
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_pause);

/**
 * shca_hw_engine_paused() - whether the execution units are paused
 * @hw: the device
 *
 * Return: true if paused.
 */
bool shca_hw_engine_paused(struct shca_hw *hw)
{
	return READ_ONCE(hw->engine_paused);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_paused);

/**
 * shca_hw_engine_single_step() - let a paused device run a few steps
 * @hw: the device
 * @steps: how many more WQEs (or whole-QP flushes) it may run
 *
 * A WQE's step includes the peer's responder and both completions.
 */
void shca_hw_engine_single_step(struct shca_hw *hw, u32 steps)
{
	atomic_add(steps, &hw->engine_steps);
	shca_hw_engine_kick_all(hw);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_single_step);

/**
 * shca_hw_engine_steps_left() - single steps not yet taken
 * @hw: the device
 *
 * Return: the number of steps.
 */
u32 shca_hw_engine_steps_left(struct shca_hw *hw)
{
	return atomic_read(&hw->engine_steps);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_engine_steps_left);

/* Payload bytes a send WQE moves, as far as its fields can say. */
static u64 shca_hw_wqe_bytes(const struct shca_hw_send_wqe *w)
{
	u64 bytes = 0;
	u32 i;

	if (w->flags & SHCA_WQE_F_INLINE)
		return w->inline_len;
	/* Too many SGEs: execution rejects the WQE, at no cost. */
	for (i = 0; i < w->num_sge && i < ARRAY_SIZE(w->sge); i++)
		bytes += w->sge[i].length;
	return bytes;
}

/*
 * One step of a QP's turn: execute the WQE at the head of the SQ.  With
 * @bytes_left (a doorbell's caller running the turn), a WQE that moves
 * more payload than that is left for an execution unit, and @handover
 * says so.  Returns false when there is nothing more to do for now.
 */
static bool shca_hw_engine_step(struct shca_hw_qp *qp, u64 *bytes_left,
				bool *handover)
{
	struct shca_hw_cqe cqe = { .qpn = qp->qpn };
	struct shca_hw_result res = {};
	struct shca_hw_qp_attr attr;
	struct shca_hw_send_wqe w;
	unsigned long flags;
	u32 mask = (1U << qp->sq.log_depth) - 1;
	u32 pi, state, delay = 0;
	bool event = false, flush, signaled;
	u64 bytes = 0;

	spin_lock_irqsave(&qp->lock, flags);
	state = qp->attr.state;
	if (qp->fenced || state == SHCA_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	if (state == SHCA_QPS_ERR || state == SHCA_QPS_SQE) {
		flush = shca_hw_flush_pending(qp, state == SHCA_QPS_ERR);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (flush && shca_hw_engine_may_run(qp->hw))
			shca_hw_qp_flush(qp, state == SHCA_QPS_ERR);
		return false;
	}
	/* Pairs with the driver's release: the WQEs below pi are written. */
	pi = smp_load_acquire(&qp->dbrec->sq_pi);
	if (state == SHCA_QPS_SQD && qp->attr.sqd_notify &&
	    !qp->sqd_notified) {
		qp->sqd_notified = true;
		event = true;
	}
	if (state != SHCA_QPS_RTS || pi == qp->sq.ci) {
		spin_unlock_irqrestore(&qp->lock, flags);
		if (event)
			shca_hw_qp_event(qp, SHCA_EV_SQ_DRAINED);
		return false;
	}
	if (pi - qp->sq.ci > mask + 1) {
		/* The driver wrote a producer index the ring cannot hold. */
		shca_hw_qp_to_err(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		shca_hw_qp_event(qp, SHCA_EV_QP_FATAL);
		return false;
	}
	memcpy(&w, (struct shca_hw_send_wqe *)qp->sq.ring + (qp->sq.ci & mask),
	       sizeof(w));
	/*
	 * A WQE the caller leaves to an execution unit is handed over before
	 * it can take a paused device's single step: the unit needs the step.
	 */
	if (bytes_left) {
		bytes = shca_hw_wqe_bytes(&w);
		if (bytes > *bytes_left) {
			spin_unlock_irqrestore(&qp->lock, flags);
			*handover = true;
			return false;
		}
	}
	if (!shca_hw_engine_may_run(qp->hw)) {
		/* Paused: shca_hw_engine_pause() kicks the QP again. */
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	if (bytes_left)
		*bytes_left -= bytes;
	attr = qp->attr;
	spin_unlock_irqrestore(&qp->lock, flags);

	shca_hw_execute(qp, &w, &attr, &res);

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->fenced || qp->attr.state == SHCA_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	if (res.rnr) {
		if (attr.rnr_retry == SHCA_HW_RNR_INFINITE || qp->rnr_left) {
			if (attr.rnr_retry != SHCA_HW_RNR_INFINITE)
				qp->rnr_left--;
			delay = shca_hw_rnr_usecs(res.rnr_timer);
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_RNR_EXC);
			res.status = SHCA_CQE_RNR_RETRY_EXC_ERR;
		}
	} else if (res.no_ack) {
		if (qp->retry_left) {
			qp->retry_left--;
			delay = shca_hw_timeout_usecs(attr.timeout);
		} else {
			shca_hw_count(qp->hw, SHCA_CNT_RETRY_EXC);
			res.status = SHCA_CQE_RETRY_EXC_ERR;
		}
	}
	if (delay) {
		queue_delayed_work(qp->hw->engine_wq, &qp->engine,
				   usecs_to_jiffies(delay));
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}

	shca_hw_count(qp->hw, SHCA_CNT_WQES);
	cqe.wqe_idx = qp->sq.ci & mask;
	cqe.opcode = shca_hw_cqe_opcode[w.opcode % SHCA_WQE_NUM_OPCODES];
	cqe.status = res.status;
	cqe.byte_len = res.byte_len;
	qp->sq.ci++;
	qp->rnr_left = qp->attr.rnr_retry;
	qp->retry_left = qp->attr.retry_cnt;
	signaled = res.status != SHCA_CQE_OK || qp->sig_all ||
		   (w.flags & SHCA_WQE_F_SIGNALED);
	event = false;
	if (res.status != SHCA_CQE_OK) {
		if (qp->type == SHCA_QPT_RC) {
			shca_hw_qp_to_err(qp);
		} else if (qp->attr.state == SHCA_QPS_RTS) {
			qp->attr.state = SHCA_QPS_SQE;
			mod_delayed_work(qp->hw->engine_wq, &qp->engine, 0);
		}
		event = res.status == SHCA_CQE_LOC_PROT_ERR;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	/*
	 * Unlocked, as writing a CQE may sleep.  This is the QP's own turn, so
	 * a flush the error queued comes after it, and a fence waits for it.
	 */
	if (signaled)
		shca_hw_cq_write(qp->scq, &cqe, false);
	if (event)
		shca_hw_qp_event(qp, SHCA_EV_QP_ACCESS_ERR);
	return res.status == SHCA_CQE_OK;
}

/**
 * shca_hw_engine_turn() - run a QP's turn
 * @qp: the QP, its turn_mutex held
 * @caller: run by a doorbell's caller, not by an execution unit: it moves
 *	no more than SHCA_HW_RUN_BYTES of payload, so that large transfers
 *	still overlap with the process that posts them
 *
 * Runs up to a budget of WQEs.
 *
 * Return: true if work is left (the budget ran out, or the caller handed
 * over): the turn goes back in the queue, yielding the unit to other QPs.
 */
bool shca_hw_engine_turn(struct shca_hw_qp *qp, bool caller)
{
	u64 bytes = SHCA_HW_RUN_BYTES;
	bool handover = false;
	int budget;

	lockdep_assert_held(&qp->turn_mutex);
	for (budget = SHCA_HW_BUDGET; budget; budget--)
		if (!shca_hw_engine_step(qp, caller ? &bytes : NULL, &handover))
			return handover;
	return true;
}

/**
 * shca_hw_engine_run() - a QP's turn on an execution unit
 * @work: the QP's engine work
 */
void shca_hw_engine_run(struct work_struct *work)
{
	struct shca_hw_qp *qp = container_of(to_delayed_work(work),
					     struct shca_hw_qp, engine);
	bool more;

	mutex_lock(&qp->turn_mutex);
	more = shca_hw_engine_turn(qp, false);
	mutex_unlock(&qp->turn_mutex);
	if (more)
		queue_delayed_work(qp->hw->engine_wq, &qp->engine, 0);
}
