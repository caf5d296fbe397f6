# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pyverbs over libshca: two RC QPs in loopback on one device exchange a
send and an RDMA write, through rdma-core's Python bindings.

Usage: pyverbs_smoke.py DEV GID_INDEX
"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR


def wait_wc(cq):
    for _ in range(5000):
        n, wcs = cq.poll()
        if n:
            return wcs[0]
        time.sleep(0.001)
    sys.exit('no completion')


def main():
    dev, gidx = sys.argv[1], int(sys.argv[2])
    ctx = Context(name=dev)
    print('device', dev, 'vendor', hex(ctx.query_device().vendor_id))
    pd = PD(ctx)
    cq = CQ(ctx, 32)
    access = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
              e.IBV_ACCESS_REMOTE_READ)
    mr = MR(pd, 8192, access)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                max_recv_sge=1)
    a, b = (QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                              cap=cap)) for _ in range(2))
    gid = ctx.query_gid(1, gidx)
    for qp, peer in ((a, b), (b, a)):
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = access
        attr.dest_qp_num = peer.qp_num
        attr.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=gidx),
                              is_global=1, port_num=1)
        attr.max_dest_rd_atomic = 1
        attr.max_rd_atomic = 1
        attr.min_rnr_timer = 1
        attr.timeout = 10
        attr.retry_cnt = 1
        attr.rnr_retry = 1
        qp.to_rts(attr)

    mr.write(b'pyverbs over shca', 17, 0)
    b.post_recv(RecvWR(wr_id=1, num_sge=1,
                       sg=[SGE(mr.buf + 4096, 64, mr.lkey)]))
    a.post_send(SendWR(wr_id=2, num_sge=1, sg=[SGE(mr.buf, 17, mr.lkey)]))
    got = {wait_wc(cq).wr_id, wait_wc(cq).wr_id}
    if got != {1, 2} or mr.read(17, 4096) != b'pyverbs over shca':
        sys.exit('send: completions %s, data %r' % (got, mr.read(17, 4096)))
    wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(mr.buf, 17, mr.lkey)])
    wr.set_wr_rdma(mr.rkey, mr.buf + 2048)
    a.post_send(wr)
    wc = wait_wc(cq)
    if wc.status != e.IBV_WC_SUCCESS or mr.read(17, 2048) != b'pyverbs over shca':
        sys.exit('RDMA write: status %d' % wc.status)
    print('pyverbs: send and RDMA write ok, QPs', a.qp_num, b.qp_num)


if __name__ == '__main__':
    main()
