#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The device limits a process could otherwise turn into gigabytes are
# module parameters, each described by modinfo.  Loaded with small ones,
# the device reports them (and takes the adaptive pollers' window, at
# most 50 us, from poll_us), and a process creating QPs and CQs until the
# device refuses gets ENOMEM exactly at the limit (the device's own GSI
# objects included), address handles up to max_ah, multicast attachments
# up to max_mcast_per_process for each process, and the device still
# carries traffic afterwards.
# make check runs it on the stock kernels: what it proves is the limits a
# process meets, and ib_core's pinned-memory accounting, which 6.1 does
# differently, not memory safety, which the debug kernel's tests of the
# same paths watch; make check-long on the debug kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"
ko=$SHCA_BUILD/drivers/infiniband/sw/shca/shca.ko

for p in max_qp max_qp_wr max_cq max_cqe max_srq max_ah \
	max_mcast_per_process poll_us; do
	grep -q "^$p:[^:]*[a-z].*(uint)$" <<<"$(modinfo -F parm "$ko")" ||
		fail "modinfo does not describe $p: $(modinfo -F parm "$ko")"
done
[ "$(cat /sys/module/shca/parameters/max_cq)" = 1024 ] ||
	fail "max_cq defaults to $(cat /sys/module/shca/parameters/max_cq)"

rmmod shca
insmod "$ko" max_qp=24 max_cq=12 max_cqe=1023 max_srq=3 max_ah=20 \
	max_mcast_per_process=4 poll_us=99
[ "$(cat /sys/module/shca/parameters/max_qp)" = 24 ] || fail "max_qp not set"
two_devices
# The pollers' window is the parameter's, at most 50 us: the rest of the
# test runs with the pollers on.
[ "$(cat /sys/kernel/debug/shca/shca0/poll_us)" = 50 ] ||
	fail "poll_us=99 gave shca0 poll_us $(cat /sys/kernel/debug/shca/shca0/poll_us)"
caps=$(ibv_devinfo -v -d shca0)
for want in 'max_qp:\s*24$' 'max_cq:\s*12$' 'max_cqe:\s*1023$' \
	'max_srq:\s*3$' 'max_ah:\s*20$'; do
	grep -qP "^\s*$want" <<<"$caps" || fail "ibv_devinfo lacks $want"
done

qps=$(rdma res show qp link shca0 | grep -c lqpn || true)
cqs=$(rdma res show cq dev shca0 | grep -c '^dev shca0 ' || true)
out=$SHCA_OUT/uverbs-limits.txt
timeout 120 "$t" shca0 limits > "$out" 2>&1 || fail "$(grep -v '^ok' "$out")"
cat "$out"
read -r _ nq nc na < <(grep '^limits ' "$out")
[ $((nq + qps)) -eq 24 ] || fail "$nq QPs beside the device's $qps; max_qp is 24"
[ $((nc + cqs)) -eq 12 ] || fail "$nc CQs beside the device's $cqs; max_cq is 12"
# The kernel holds no address handle while nothing sends a MAD.
[ "$na" -eq 20 ] || fail "$na AHs; max_ah is 20"
ktap_check "$out" limits_device_works_after

# Each process gets max_mcast_per_process attachments, no more.
out=$SHCA_OUT/uverbs-mcast-limit.txt
timeout 120 "$t" shca0 mcast_limit > "$out" 2>&1 || fail "$(grep -v '^ok' "$out")"
cat "$out"
ktap_check "$out" mcast_limit_counts_all_the_process_qps \
	mcast_limit_is_per_process mcast_limit_repeat_attach_takes_none \
	mcast_limit_detach_returns_one mcast_limit_still_enforced \
	mcast_limit_detach_returns_all mcast_limit_device_works_after
echo ok
