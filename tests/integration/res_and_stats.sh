#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An in-kernel consumer (shca_kconsumer.ko, ib_core's public API only) runs
# RC, UC and UD traffic with every opcode between two shca devices, and in
# loopback on one; "rdma res" then shows its objects with the device's own
# attributes, and "rdma statistic" shows the device's counters moving.
# make check runs it on the stock kernels: what it proves is what rdma res
# and rdma statistic show through ib_core's restrack, which 6.1 does
# differently, not memory safety, which the debug kernel's tests of the
# same paths watch; make check-long on the debug kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

kc=$SHCA_BUILD/tests/kmod/kconsumer/shca_kconsumer.ko
result=/sys/kernel/debug/shca_kconsumer/result

mkdummy shca_d0
mkdummy shca_d1
rdma link add shca0 type shca netdev shca_d0
rdma link add shca1 type shca netdev shca_d1

# counters DEV: "rdma statistic show link DEV/1", which reads
# "link DEV/1 name value name value ...", as "name value" lines.
counters() {
	rdma statistic show link "$1/1" | tr ' ' '\n' | tail -n +3 | paste -d' ' - -
}

# value NAME LINES: one counter out of what counters printed.
value() {
	echo "$2" | awk -v n="$1" '$1 == n { print $2; f = 1 } END { exit !f }'
}

# The device's counters, then the driver's; every one is listed.
before0=$(counters shca0)
before1=$(counters shca1)
for c in doorbells doorbell_runs send_wqes recv_wqes cqes_written eqes_written \
	 interrupts tx_bytes rx_bytes flushed_wqes \
	 err_local_protection err_remote_access err_length rnr_naks \
	 err_rnr_retry_exceeded err_retry_exceeded dropped_packets \
	 err_cq_overflow err_eq_overflow doorbell_rechecks cq_dbrec_arms \
	 route_lookups rx_rejected backstop_arms backstop_kicks \
	 poll_adopts poll_turns destroy_sends \
	 swept_cqes stray_cqes \
	 doorbells_skipped; do
	value $c "$before0" >/dev/null || fail "no counter $c: $before0"
done

insmod "$kc" dev_a=shca0 dev_b=shca1 iters=4 poll=softirq
cat $result
for t in rc uc ud; do
	grep -q "^$t PASS" $result || fail "$t traffic: $(grep "^$t" $result)"
done

# Requester and responder counters moved by what the consumer did.
after0=$(counters shca0)
after1=$(counters shca1)
moved() {
	[ "$(value "$2" "$4")" -ge $(($(value "$2" "$3") + $5)) ] ||
		fail "$1 $2: $(value "$2" "$3") -> $(value "$2" "$4")"
}
moved shca0 send_wqes "$before0" "$after0" 1
moved shca0 doorbells "$before0" "$after0" 1
moved shca0 tx_bytes "$before0" "$after0" $((4 * 2000))
moved shca1 recv_wqes "$before1" "$after1" 1
moved shca1 rx_bytes "$before1" "$after1" $((4 * 2000))
moved shca1 cqes_written "$before1" "$after1" 1
moved shca1 eqes_written "$before1" "$after1" 1
moved shca1 interrupts "$before1" "$after1" 1
for c in err_local_protection err_remote_access err_length \
	 err_cq_overflow stray_cqes; do
	[ "$(value $c "$after0")" -eq 0 ] || fail "shca0 $c: $after0"
done

# rdma res: the consumer's QPs (and ib_mad's GSI QP) with driver attributes,
# which iproute2 prints with a "drv_" prefix.
qps=$(rdma res show qp link shca0 -dd)
echo "$qps"
for t in RC UC UD GSI; do
	grep -q "type $t" <<<"$qps" || fail "no $t QP on shca0"
done
awk '/type RC/ && /drv_hw_state RTS/ { f = 1 } END { exit !f }' <<<"$qps" || fail "RC QP state"
for a in sq_head sq_tail rq_head rq_tail gen; do
	grep -q " drv_$a " <<<"$qps" || fail "QP attribute $a missing"
done
# Every send the device took from the RC QP's ring, it finished.
read -r head tail < <(echo "$qps" | grep "type RC" | head -1 |
	sed -E 's/.*drv_sq_head ([0-9]+) drv_sq_tail ([0-9]+).*/\1 \2/')
[ "$head" -gt 0 ] && [ "$head" = "$tail" ] || fail "RC SQ head $head tail $tail"

cqs=$(rdma res show cq dev shca1 -dd)
echo "$cqs"
for a in depth pi ci armed assoc; do
	grep -q " drv_$a " <<<"$cqs" || fail "CQ attribute $a missing"
done
# (iproute2 6.1 names ib_core's poll contexts off by one; match on comm.)
kcq=$(echo "$cqs" | grep "comm \[shca_kconsumer\]") ||
	fail "consumer CQs not listed"
# ib_core polled them all: each consumer CQ's ci caught up with its pi.
echo "$kcq" |
	sed -E 's/.* drv_pi ([0-9]+) drv_ci ([0-9]+) .*/\1 \2/' |
	while read -r pi ci; do
		[ "$pi" = "$ci" ] || fail "CQ pi $pi ci $ci"
	done
# One QP uses each consumer CQ as its send and its receive CQ.
grep -q "drv_assoc 2" <<<"$kcq" || fail "CQ association count"

mrs=$(rdma res show mr dev shca1 -dd)
echo "$mrs"
grep -q "drv_type fast_reg" <<<"$mrs" || fail "fast registration MR not listed"
grep -q shca_kconsumer <<<"$(rdma res show pd dev shca0)" || fail "consumer PD not listed"

# Unloading the consumer frees everything but ib_mad's objects.
rmmod shca_kconsumer
qps=$(rdma res show qp link shca0)
grep -q "type RC" <<<"$qps" && fail "RC QP left behind: $qps"
grep -q "type GSI" <<<"$qps" || fail "GSI QP gone"

# Loopback on one device, in a workqueue poll context.
insmod "$kc" dev_a=shca1 iters=2 poll=workqueue
cat $result
for t in rc uc ud; do
	grep -q "^$t PASS" $result || fail "loopback $t: $(grep "^$t" $result)"
done
grep -q "comm \[shca_kconsumer\]" <<<"$(rdma res show cq dev shca1)" ||
	fail "loopback CQs not listed"
# Deleting the device under the consumer: it lets go as an ib_client must.
rdma link delete shca1
wait_for bash -c "! rdma dev | grep -q shca1" || fail "shca1 not removed"
rmmod shca_kconsumer
echo ok
