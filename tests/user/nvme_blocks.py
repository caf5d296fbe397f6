# SPDX-License-Identifier: GPL-2.0
"""Acknowledged writes, and the check that each of them is really stored.

Usage:
  nvme_blocks.py write DISK BASE BLOCKS WRITERS RECORD READY MAX_SECONDS
  nvme_blocks.py check DISK BASE BLOCKS RECORD...

write: WRITERS threads, each with a file descriptor of its own on DISK
(O_DIRECT | O_DSYNC), write 4 KiB blocks one at a time: writer k owns
blocks BASE + k, BASE + k + WRITERS, ... of the region of BLOCKS blocks
from block BASE, and writes them in turn, round and round.  Its n-th write
puts a pattern naming the block and n in the block, so every block written
is distinct from every other and from every earlier write of it.  A write
counts as acknowledged when pwrite() returned the whole block.  Once each
writer has had 20 writes acknowledged, READY is created.  A writer stops at
its first error (which it records with its errno) or after MAX_SECONDS
("done").  RECORD then gets, per writer, "ack BLOCK N" for the last
acknowledged write of each block, and "failed BLOCK N ERRNO" or "done".

check: reads the region back (O_DIRECT) and checks it against the
RECORDs: a block whose last acknowledged write was n must hold n's
pattern, except the one block of each writer's failed write, which may
hold that write's pattern instead (the device may have stored it before
the error); a block no write was acknowledged for must hold zeros (the
namespace is fresh), or the failed write's pattern.  Any other content is
an acknowledged write lost, or garbage, and fails.  Prints a summary;
exits 1 on any mismatch, 2 on bad usage or an I/O error.
"""
import mmap
import os
import struct
import sys
import threading
import time

BS = 4096
MAGIC = b'SHCAnvme'


def pattern(block, n):
    """The content of BLOCK after its writer's N-th write."""
    head = struct.pack('<8sQQQ', MAGIC, block, n, block ^ (n << 20))
    return head * (BS // len(head))


class Writer(threading.Thread):
    def __init__(self, disk, base, blocks, k, count, deadline):
        super().__init__()
        self.fd = os.open(disk, os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
        self.mine = list(range(base + k, base + blocks, count))
        self.deadline = deadline
        self.acked = 0
        self.last = {}
        self.failed = None
        self.buf = mmap.mmap(-1, BS)

    def run(self):
        n = 0
        while time.monotonic() < self.deadline:
            block = self.mine[n % len(self.mine)]
            n += 1
            self.buf[:] = pattern(block, n)
            try:
                done = os.pwrite(self.fd, self.buf, block * BS)
            except OSError as e:
                self.failed = (block, n, e.errno)
                break
            if done != BS:
                self.failed = (block, n, 0)
                break
            self.last[block] = n
            self.acked += 1
        os.close(self.fd)


def write(disk, base, blocks, count, record, ready, seconds):
    deadline = time.monotonic() + seconds
    writers = [Writer(disk, base, blocks, k, count, deadline)
               for k in range(count)]
    for w in writers:
        w.start()
    while any(w.is_alive() for w in writers):
        if ready and all(w.acked >= 20 for w in writers):
            open(ready, 'w').close()
            ready = None
        time.sleep(0.05)
    with open(record, 'w') as f:
        for k, w in enumerate(writers):
            for block, n in sorted(w.last.items()):
                f.write('ack %d %d\n' % (block, n))
            if w.failed:
                f.write('failed %d %d %d\n' % w.failed)
            else:
                f.write('done\n')
            print('writer %d: %d writes acknowledged, %s' %
                  (k, w.acked, 'error %s (errno %d) at block %d write %d' %
                   (os.strerror(w.failed[2]), w.failed[2], w.failed[0],
                    w.failed[1]) if w.failed else 'no error'))
    return 0


def check(disk, base, blocks, records):
    want = {}
    maybe = {}
    for rec in records:
        with open(rec) as f:
            for line in f:
                w = line.split()
                if w[0] == 'ack':
                    want[int(w[1])] = int(w[2])
                elif w[0] == 'failed':
                    maybe[int(w[1])] = int(w[2])
    for block in list(want) + list(maybe):
        if not base <= block < base + blocks:
            print('record names block %d, outside the region' % block)
            return 2
    fd = os.open(disk, os.O_RDONLY | os.O_DIRECT)
    chunk = 64
    buf = mmap.mmap(-1, chunk * BS)
    zero = bytes(BS)
    bad = 0
    stored = 0
    for first in range(base, base + blocks, chunk):
        n = min(chunk, base + blocks - first)
        got = os.preadv(fd, [memoryview(buf)[:n * BS]], first * BS)
        if got != n * BS:
            print('short read at block %d' % first)
            return 2
        for i in range(n):
            block = first + i
            data = buf[i * BS:(i + 1) * BS]
            ok = [pattern(block, want[block])] if block in want else [zero]
            if block in maybe:
                ok.append(pattern(block, maybe[block]))
            if data in ok:
                stored += block in want
                continue
            bad += 1
            if bad <= 5:
                head = struct.unpack('<8sQQQ', data[:32])
                print('block %d: expected write %s, found %s' %
                      (block, want.get(block, 'none (zeros)'),
                       'write %d of block %d' % (head[2], head[1])
                       if head[0] == MAGIC else 'other data'))
    os.close(fd)
    print('%d acknowledged writes checked, %d stored, %d blocks wrong; '
          '%d failed writes' % (len(want), stored, bad, len(maybe)))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 9 and argv[1] == 'write':
        return write(argv[2], int(argv[3]), int(argv[4]), int(argv[5]),
                     argv[6], argv[7], float(argv[8]))
    if len(argv) >= 6 and argv[1] == 'check':
        return check(argv[2], int(argv[3]), int(argv[4]), argv[5:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
