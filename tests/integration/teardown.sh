#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown through ib_core's public API: shca_kconsumer's teardown rounds
# (neighbours' traffic on a shared CQ from ib_alloc_cq(), a victim
# destroyed or reset and reused mid-traffic) in every poll context.  No
# completion of a torn-down victim may be delivered, every neighbour
# completion exactly once and in order; the driver must sweep, and must
# never meet a CQE it cannot place (stray_cqes stays 0).  Every round
# leaves the victim a receive no send consumes, so every teardown has
# work to flush; each round's own line must say it passed.  With the
# poller parked, nothing of the victim's torn-down life is delivered at
# all; a softirq poller may deliver the spare's flush completion once,
# before the marker, if it polls between the flush and the sweep.
# make check runs it on the debug kernel and on 6.1, where ib_core's CQ
# pool and poll contexts differs; make check-long on the stock 6.12 kernel
# too.
# shca-check-kernels: debug stock61
. "$(dirname "$0")/../lib.sh"

kc=$SHCA_BUILD/tests/kmod/kconsumer/shca_kconsumer.ko
result=/sys/kernel/debug/shca_kconsumer/result

mkdummy shca_d0
rdma link add shca0 type shca netdev shca_d0

# stat NAME: one of shca0's counters.
stat() {
	rdma statistic show link shca0/1 | tr ' ' '\n' |
		awk -v n="$1" 'p { print; exit } $0 == n { p = 1 }'
}

# rounds: the round lines of shca_kconsumer in the kernel log so far.
rounds() {
	dmesg | grep 'shca_kconsumer: round [0-9]*: ' || true
}
good='; neighbours. 24 completions each once, in order; 0 of the victim.s after that, spare '
swept0=$(stat swept_cqes)
for ctx in softirq workqueue unbound_workqueue; do
	n0=$(rounds | wc -l)
	s0=$(stat swept_cqes)
	insmod "$kc" dev_a=shca0 iters=1 teardown=12 poll=$ctx
	cat $result
	grep -q "^teardown PASS" $result ||
		fail "$ctx: $(grep "^teardown" $result); $(dmesg | grep shca_kconsumer | tail -5)"
	rmmod shca_kconsumer
	lines=$(rounds | tail -n +$((n0 + 1)))
	[ "$(grep -c . <<<"$lines")" -eq 12 ] ||
		fail "$ctx: $(grep -c . <<<"$lines") round lines, not 12"
	spare=0
	[ "$ctx" = softirq ] && spare='[01]'
	bad=$(grep -v -- "$good$spare\$" <<<"$lines" || true)
	[ -z "$bad" ] || fail "$ctx: $bad"
	# Parked, the poller leaves the sweep every CQE of the victim's: at
	# least the spare receive's flush in each of the six rounds that
	# destroy it (a RESET discards the outstanding work uncompleted).
	[ "$ctx" = softirq ] || [ $(($(stat swept_cqes) - s0)) -ge 6 ] ||
		fail "$ctx: $(($(stat swept_cqes) - s0)) CQEs swept in 12 rounds"
done
swept=$(stat swept_cqes)
stray=$(stat stray_cqes)
echo "swept_cqes $swept0 -> $swept, stray_cqes $stray"
[ "$swept" -gt "$swept0" ] || fail "nothing was swept"
[ "$stray" -eq 0 ] || fail "$stray CQEs the driver could not place"
# The CQs and QPs are gone; only ib_mad's remain.
grep -q "type RC" <<<"$(rdma res show qp link shca0)" && fail "QP left behind"
echo ok
