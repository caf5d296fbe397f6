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

# Two CPUs that really run at once: two busy loops pinned one to each CPU
# over the same two seconds must together get more than one CPU's time
# (more than the window's ticks), each at least a quarter of it.  The
# host's other work (make check builds and installs packages beside this
# guest) can take a vCPU's thread away for a while, and a tick the vCPU
# did not run is not counted: up to three windows are measured, and one
# that shows it is enough.
hz=$(getconf CLK_TCK)
window() {
	local c b0 b1 a0 a1 before after
	for c in 0 1; do
		taskset -c "$c" bash -c 'end=$((SECONDS + 2)); while [ $SECONDS -lt $end ]; do :; done' &
	done
	before=$(awk '/^cpu[01] / { print $2 + $4 }' /proc/stat | paste -sd' ')
	wait
	after=$(awk '/^cpu[01] / { print $2 + $4 }' /proc/stat | paste -sd' ')
	read -r b0 b1 <<< "$before"
	read -r a0 a1 <<< "$after"
	d0=$((a0 - b0)) d1=$((a1 - b1))
	echo "busy ticks: cpu0 $d0, cpu1 $d1 (of about $((2 * hz)) each)"
	[ "$d0" -ge $((hz / 2)) ] && [ "$d1" -ge $((hz / 2)) ] &&
		[ $((d0 + d1)) -gt $((2 * hz)) ]
}
for try in 1 2 3; do
	if window; then
		echo ok
		exit 0
	fi
	echo "window $try: not both CPUs at once"
done
fail "two busy loops never got more than one CPU's time together"
