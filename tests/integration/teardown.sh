#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown through ib_core's public API: shca_kconsumer's teardown rounds
# (neighbours' traffic on a shared CQ from ib_alloc_cq(), a victim
# destroyed or reset and reused mid-traffic) in every poll context.  No
# completion of a torn-down victim may be delivered, every neighbour
# completion exactly once and in order; the driver must sweep, and must
# never meet a CQE it cannot place (stray_cqes stays 0).
. "$(dirname "$0")/../lib.sh"

kc=$SHCA_BUILD/kconsumer/shca_kconsumer.ko
result=/sys/kernel/debug/shca_kconsumer/result

mkdummy shca_d0
rdma link add shca0 type shca netdev shca_d0

# stat NAME: one of shca0's counters.
stat() {
	rdma statistic show link shca0/1 | tr ' ' '\n' |
		awk -v n="$1" 'p { print; exit } $0 == n { p = 1 }'
}

swept0=$(stat swept_cqes)
for ctx in softirq workqueue unbound_workqueue; do
	insmod "$kc" dev_a=shca0 iters=1 teardown=12 poll=$ctx
	cat $result
	grep -q "^teardown PASS" $result ||
		fail "$ctx: $(grep "^teardown" $result); $(dmesg | grep shca_kconsumer | tail -5)"
	rmmod shca_kconsumer
done
swept=$(stat swept_cqes)
stray=$(stat stray_cqes)
echo "swept_cqes $swept0 -> $swept, stray_cqes $stray"
[ "$swept" -gt "$swept0" ] || fail "nothing was swept"
[ "$stray" -eq 0 ] || fail "$stray CQEs the driver could not place"
# The CQs and QPs are gone; only ib_mad's remain.
grep -q "type RC" <<<"$(rdma res show qp link shca0)" && fail "QP left behind"
echo ok
