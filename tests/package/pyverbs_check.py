#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Debian's python3-pyverbs on an shca device: open it, query it, and
bring an RC QP to RTS against a second one on the same device, then send
one message between them and see its completion on both sides."""
import sys

from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE
import pyverbs.enums as e


def main(name):
    ctx = Context(name=name)
    attr = ctx.query_device()
    port = ctx.query_port(1)
    assert port.state == e.IBV_PORT_ACTIVE, port.state
    gid = ctx.query_gid(1, 3)
    print(f"{name}: max_qp {attr.max_qp}, gid[3] {gid}")
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    qps = [QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
           for _ in range(2)]
    # pyverbs 44's QPAttr takes only the states as arguments: the rest
    # are attributes.
    for me, peer in ((qps[0], qps[1]), (qps[1], qps[0])):
        qa = QPAttr(qp_state=e.IBV_QPS_INIT)
        qa.port_num = 1
        qa.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE
        me.to_init(qa)
        gr = GlobalRoute(dgid=gid, sgid_index=3)
        qa = QPAttr(qp_state=e.IBV_QPS_RTR)
        qa.path_mtu = e.IBV_MTU_1024
        qa.max_dest_rd_atomic = 1
        qa.min_rnr_timer = 12
        qa.dest_qp_num = peer.qp_num
        qa.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        me.to_rtr(qa)
        qa = QPAttr(qp_state=e.IBV_QPS_RTS)
        qa.timeout = 14
        qa.retry_cnt = 7
        qa.rnr_retry = 7
        qa.max_rd_atomic = 1
        me.to_rts(qa)
    sge = SGE(mr.buf, 64, mr.lkey)
    qps[1].post_recv(RecvWR(wr_id=2, num_sge=1, sg=[sge]))
    qps[0].post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                            sg=[sge], send_flags=e.IBV_SEND_SIGNALED))
    seen = {}
    for _ in range(100000):
        n, wcs = cq.poll(2)
        for wc in wcs[:n]:
            seen[wc.wr_id] = wc.status
        if len(seen) == 2:
            break
    assert seen == {1: e.IBV_WC_SUCCESS, 2: e.IBV_WC_SUCCESS}, seen
    print("send and receive completed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
