#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The race tests, the soak and the userspace tests mean something only
# with real parallelism: the guest must run every vCPU vm.sh gives it (two),
# the debug kernel included (its CPUs come from ACPI's MADT).
# make check runs it on the debug kernel only: it drives the model and
# shca's own code, the same on every kernel; make check-long runs it on
# the stock kernels too.
# shca-check-kernels: debug
. "$(dirname "$0")/../lib.sh"

online=$(cat /sys/devices/system/cpu/online)
n=$(nproc)
echo "CPUs online: $online ($n)"
[ "$n" -ge 2 ] || fail "only $n CPU online ($online); the guest has 2 vCPUs"

# Two CPUs that really run at once: each of two busy loops pinned to its
# own CPU must get most of a CPU's time over the same second.
for c in 0 1; do
	taskset -c "$c" bash -c 'end=$((SECONDS + 2)); while [ $SECONDS -lt $end ]; do :; done' &
done
before=$(awk '/^cpu[01] / { print $2 + $4 }' /proc/stat | paste -sd' ')
wait
after=$(awk '/^cpu[01] / { print $2 + $4 }' /proc/stat | paste -sd' ')
read -r b0 b1 <<< "$before"
read -r a0 a1 <<< "$after"
hz=$(getconf CLK_TCK)
echo "busy ticks: cpu0 $((a0 - b0)), cpu1 $((a1 - b1)) (of about $((2 * hz)))"
[ $((a0 - b0)) -ge "$hz" ] || fail "cpu0 was not busy"
[ $((a1 - b1)) -ge "$hz" ] || fail "cpu1 was not busy"
echo ok
