#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A completion event is never lost, even when the EQ overruns.  The EQ is
# made to count as full at one unacknowledged EQE (debugfs eq_limit) and
# the interrupt handler is slowed to a millisecond per EQE (eq_delay_us),
# so the requester's and the responder's completion events of one message
# cannot both fit.  The in-kernel consumer, whose CQs ib_core polls only
# when woken, must still finish every round of RC, UC and UD traffic, in
# loopback and between two devices; and the overruns must have happened
# (err_eq_overflow in "rdma statistic"), so the test did race.
# make check runs it on the debug kernel only: it drives the model and
# shca's own code, the same on every kernel; make check-long runs it on
# the stock kernels too.
# shca-check-kernels: debug
. "$(dirname "$0")/../lib.sh"

kc=$SHCA_BUILD/tests/kmod/kconsumer/shca_kconsumer.ko
result=/sys/kernel/debug/shca_kconsumer/result
dbg=/sys/kernel/debug/shca

mkdummy shca_d0
mkdummy shca_d1
rdma link add shca0 type shca netdev shca_d0
rdma link add shca1 type shca netdev shca_d1

# overflows DEV: the device's err_eq_overflow counter.
overflows() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk 'p { print; exit } $1 == "err_eq_overflow" { p = 1 }'
}

# eqs_owe_nothing DEV: no object owes any of the device's EQs an event.
eqs_owe_nothing() {
	awk 'NR > 2 && $6 != 0 { bad = 1 } END { exit bad }' $dbg/"$1"/eq
}

# Bad values are refused and change nothing.
echo 100001 > $dbg/shca0/eq_delay_us 2>/dev/null &&
	fail "eq_delay_us took 100001"
echo 2 > $dbg/shca0/eq_paused 2>/dev/null && fail "eq_paused took 2"
[ "$(cat $dbg/shca0/eq_delay_us)" = 0 ] || fail "eq_delay_us changed"
# An EQ, with its vector, per CPU.
[ "$(shca_vectors shca0)" -eq "$(nproc)" ] || fail "eq: $(cat $dbg/shca0/eq)"

for d in shca0 shca1; do
	echo 1 > $dbg/$d/eq_limit
	echo 1000 > $dbg/$d/eq_delay_us
done
before=$(overflows shca0)

for b in "" shca1; do
	insmod "$kc" dev_a=shca0 ${b:+dev_b=$b} iters=2 poll=workqueue
	cat $result
	for t in rc uc ud; do
		grep -q "^$t PASS" $result ||
			fail "$t traffic ${b:+to $b }with the EQ overrun: $(grep "^$t" $result)"
	done
	rmmod shca_kconsumer
done

after=$(overflows shca0)
echo "err_eq_overflow on shca0: $before -> $after"
[ "$after" -gt "$before" ] || fail "the EQ never overran; the test proved nothing"

# Knobs back: the EQ drains, nothing is owed.
for d in shca0 shca1; do
	echo 0 > $dbg/$d/eq_limit
	echo 0 > $dbg/$d/eq_delay_us
	wait_for eqs_owe_nothing $d || fail "$d: $(cat $dbg/$d/eq)"
done
echo ok
