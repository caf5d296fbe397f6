# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""An on-demand paging MR under a process that changes its memory: RDMA
writes and reads through an ODP MR over an anonymous mapping, across an
munmap and a fresh mapping at the same address, an madvise(DONTNEED) and a
fork(), each time checking that the device reads and writes the pages the
process has there now (never the old ones, never the child's copy).

Usage: odp_remap.py DEV GID_INDEX ROUNDS
"""
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mem_alloc import (MAP_ANONYMOUS_, MAP_FIXED_, MAP_PRIVATE_,
                               madvise, mmap, munmap, read, write)
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

PAGE = os.sysconf('SC_PAGE_SIZE')
NPAGES = 4
LEN = NPAGES * PAGE


def wait_wc(cq, what):
    for _ in range(20000):
        n, wcs = cq.poll()
        if n:
            if wcs[0].status != e.IBV_WC_SUCCESS:
                sys.exit('%s: completion status %d' % (what, wcs[0].status))
            return
        time.sleep(0.0005)
    sys.exit('%s: no completion' % what)


class Pair:
    def __init__(self, dev, gidx):
        self.ctx = Context(name=dev)
        caps = self.ctx.query_device_ex().odp_caps
        need = e.IBV_ODP_SUPPORT_WRITE | e.IBV_ODP_SUPPORT_READ
        if not caps.general_caps & e.IBV_ODP_SUPPORT or \
           caps.rc_odp_caps & need != need:
            sys.exit('%s reports no RC ODP for RDMA write and read' % dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 32)
        self.access = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
                       e.IBV_ACCESS_REMOTE_READ)
        self.src = MR(self.pd, LEN, self.access)
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1,
                    max_recv_sge=1)
        self.a, self.b = (QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC,
                                                 scq=self.cq, rcq=self.cq,
                                                 cap=cap)) for _ in range(2))
        gid = self.ctx.query_gid(1, gidx)
        for qp, peer in ((self.a, self.b), (self.b, self.a)):
            attr = QPAttr(port_num=1)
            attr.qp_access_flags = self.access
            attr.dest_qp_num = peer.qp_num
            attr.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=gidx),
                                  is_global=1, port_num=1)
            attr.max_dest_rd_atomic = 1
            attr.max_rd_atomic = 1
            attr.min_rnr_timer = 1
            attr.timeout = 14
            attr.retry_cnt = 1
            attr.rnr_retry = 1
            qp.to_rts(attr)

    def rdma(self, opcode, odp, off, length, what):
        """RDMA WRITE src -> odp, or READ odp -> src, at @off of both."""
        wr = SendWR(wr_id=1, opcode=opcode, num_sge=1,
                    sg=[SGE(self.src.buf + off, length, self.src.lkey)])
        wr.set_wr_rdma(odp.rkey, odp.buf + off)
        self.a.post_send(wr)
        wait_wc(self.cq, what)


def pattern(tag, length):
    return bytes((tag + i) & 0xff for i in range(length))


def expect(got, want, what):
    if got != want:
        sys.exit('%s: stale or wrong data (first bytes %r, wanted %r)' %
                 (what, got[:8], want[:8]))


def one_round(p, r):
    buf = mmap(length=LEN, flags=MAP_ANONYMOUS_ | MAP_PRIVATE_)
    odp = MR(p.pd, LEN, p.access | e.IBV_ACCESS_ON_DEMAND, address=buf)

    # Faulted in by the device's writes: every page.
    p.src.write(pattern(r, LEN), LEN, 0)
    p.rdma(e.IBV_WR_RDMA_WRITE, odp, 0, LEN, 'first write')
    expect(read(buf, LEN, 0), pattern(r, LEN), 'first write')

    # New zero pages at the same address: the device must read them.
    munmap(buf, LEN)
    if mmap(addr=buf, length=LEN,
            flags=MAP_ANONYMOUS_ | MAP_PRIVATE_ | MAP_FIXED_) != buf:
        sys.exit('MAP_FIXED moved')
    p.rdma(e.IBV_WR_RDMA_READ, odp, 0, LEN, 'read after remap')
    expect(p.src.read(LEN, 0), bytes(LEN), 'read after remap')
    write(buf, pattern(r + 1, PAGE), PAGE, PAGE)
    p.rdma(e.IBV_WR_RDMA_READ, odp, PAGE, PAGE, 'read of a page written')
    expect(p.src.read(PAGE, PAGE), pattern(r + 1, PAGE),
           'read of a page written')

    # Pages dropped: zero again, then written by the device.
    madvise(buf, LEN)
    p.rdma(e.IBV_WR_RDMA_READ, odp, 0, LEN, 'read after DONTNEED')
    expect(p.src.read(LEN, 0), bytes(LEN), 'read after DONTNEED')
    p.src.write(pattern(r + 2, LEN), LEN, 0)
    p.rdma(e.IBV_WR_RDMA_WRITE, odp, 0, LEN, 'write after DONTNEED')
    expect(read(buf, LEN, 0), pattern(r + 2, LEN), 'write after DONTNEED')

    # fork(): the parent's pages turn copy-on-write; the device's write
    # lands in the parent's memory, never in the child's copy.
    rfd, wfd = os.pipe()
    rfd2, wfd2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(wfd)
        os.close(rfd2)
        os.read(rfd, 1)
        ok = read(buf, LEN, 0) == pattern(r + 2, LEN)
        os.write(wfd2, b'y' if ok else b'n')
        os._exit(0)
    os.close(rfd)
    os.close(wfd2)
    p.src.write(pattern(r + 3, LEN), LEN, 0)
    p.rdma(e.IBV_WR_RDMA_WRITE, odp, 0, LEN, 'write after fork')
    expect(read(buf, LEN, 0), pattern(r + 3, LEN), 'write after fork')
    os.write(wfd, b'x')
    child = os.read(rfd2, 1)
    os.waitpid(pid, 0)
    os.close(wfd)
    os.close(rfd2)
    if child != b'y':
        sys.exit("the device's write reached the child's copy")

    odp.close()
    munmap(buf, LEN)


def main():
    dev, gidx, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    p = Pair(dev, gidx)
    for r in range(rounds):
        one_round(p, r)
    print('odp_remap: %d rounds of remap, DONTNEED and fork ok' % rounds)


if __name__ == '__main__':
    main()
