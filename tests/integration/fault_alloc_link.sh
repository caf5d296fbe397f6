#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "rdma link add" with each allocation shca makes on its way to
# registering the device failed in turn (failslab and fail_page_alloc
# through fail-nth, filtered to shca's text): ib_alloc_device(), the
# model, its workqueue and event queue, the netdev binding.  Every failing
# step must be a clean error that leaves no device, no debugfs directory
# and no hold on the netdev.  The loop stops at the first fault that lands
# in the debugfs files (whose failures are ignored, by design) or in
# ib_register_device(), each injected fault's stack being in the kernel
# log.  Then the first allocations inside ib_register_device() fail, one
# at a time, to check shca's undoing of a registration that failed.  make
# check fails shca's 1st allocation and every third after it (the 4th,
# the 7th, ...: FAULT_STRIDE), make check-long every one.
# shca-timeout: 600
# shca-long: every allocation, not every third
# Debian builds no fault injection: the debug kernel's config has it.
# shca-kernels: debug
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fault_lib.sh"

fault_need
mkdummy shca_d0
fault_setup
# Each injected fault's stack goes to the kernel log.
fault_set "$FS/verbose" 2
fault_set "$FP/verbose" 2

failed=0 tolerated=0 errnos=''

# link_step N WHAT: one "rdma link add" with fail-nth N; sets rc, inj, out
# and where (debugfs, register or shca: what the faulted stack shows).
link_step() {
	local n=$1 trace

	echo "fault_alloc_link: $2 step $n" > /dev/kmsg
	fault_injected; before_slab=$slab before_page=$page
	rc=0
	# fail-nth is the task's own, and survives the exec: the netlink
	# request is handled in rdma's task.
	out=$(echo "$n" > /proc/self/task/$BASHPID/fail-nth &&
	      exec rdma link add shca0 type shca netdev shca_d0 2>&1) || rc=$?
	fault_injected
	slab=$((slab - before_slab)) page=$((page - before_page))
	inj=$((slab + page))
	[ $inj -le 1 ] || fail "$2 step $n: $inj faults injected"
	where=''
	if [ $inj -eq 1 ]; then
		trace=$(dmesg | sed -n "/fault_alloc_link: $2 step $n\$/,\$p")
		case $trace in
		*shca_debugfs_add_dev*) where=debugfs ;;
		*ib_register_device*) where=register ;;
		*) where=shca ;;
		esac
	fi
	if [ $rc -ne 0 ]; then
		[ $inj -eq 1 ] || fail "$2 step $n: link add failed with no fault injected: $out"
		echo "$2 step $n: failed ($where, $([ $slab -eq 1 ] && echo slab || echo page)): $out"
		failed=$((failed + 1))
		errnos+="${out##*: }"$'\n'
		[ ! -e /sys/class/infiniband/shca0 ] ||
			fail "$2 step $n: shca0 exists after a failed link add"
		[ ! -e /sys/kernel/debug/shca/shca0 ] ||
			fail "$2 step $n: debugfs directory left behind"
		[ -z "$(ls /sys/class/infiniband)" ] ||
			fail "$2 step $n: devices left: $(ls /sys/class/infiniband)"
		return
	fi
	if [ $inj -eq 1 ]; then
		# The allocation had a fallback, or its failure is ignored.
		echo "$2 step $n: fault tolerated ($where, $([ $slab -eq 1 ] && echo slab || echo page))"
		tolerated=$((tolerated + 1))
		rdma link delete shca0 || fail "$2 step $n: link delete"
	fi
}

shca_steps=0
for ((n = 1; n <= 200; n += FAULT_STRIDE)); do
	link_step "$n" shca
	[ $inj -eq 1 ] || break
	[ "$where" = shca ] || break
	shca_steps=$((shca_steps + 1))
done
[ $inj -eq 1 ] || [ $rc -eq 0 ] || fail "no step reached the registration"
if [ $inj -eq 0 ]; then
	echo "shca step $n: no fault left to inject; link add succeeded"
	rdma link delete shca0
fi
stop_where=${where:-none} stop_step=$n
# ib_alloc_device() and the model allocate in shca's text, surely: no
# fault failing a step means the filter no longer matches it.
[ "$failed" -ge 1 ] || fail "no fault failed a link add: is the filter still shca's text?"

# Now inside ib_register_device(): its first allocations, one at a time.
reg=$(ksym_range ib_register_device)
[ -n "$reg" ] || fail "no ib_register_device in kallsyms"
for a in "$FS" "$FP"; do
	fault_set "$a/require-start" "${reg% *}"
	fault_set "$a/require-end" "${reg#* }"
done
for n in 1 2 3 4; do
	link_step "$n" register
	[ $inj -eq 1 ] || fail "register step $n: no fault injected"
done
fault_restore

# A device comes up and works: its port is up and ib_core holds its PD.
rdma link add shca0 type shca netdev shca_d0
wait_for grep -q ACTIVE /sys/class/infiniband/shca0/ports/1/state ||
	fail "shca0 port not ACTIVE"
[ -n "$(res_summary shca0)" ] || fail "shca0 not in rdma res"
rdma link delete shca0
# The netdev has no reference left (unregister would wait for it).
timeout 60 ip link del shca_d0 || fail "shca_d0 cannot be deleted"

echo "link add: $shca_steps of shca's allocations failed in turn" \
	"($FAULT_WHICH) before the registration (then $stop_where at step" \
	"$stop_step), 4 inside it: $failed clean errors, $tolerated tolerated"
echo "errors seen: $(echo -n "$errnos" | sort | uniq -c | tr -s ' \n' ' ;')"
echo ok
