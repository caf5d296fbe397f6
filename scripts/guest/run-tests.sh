#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test run inside the guest.
#
#   run-tests.sh [--kunit GLOB] [--integration GLOB]
#
# --kunit loads shca_kunit.ko with KUnit's filter_glob set to GLOB ("*"
# for every suite); KUnit prints its KTAP report to the kernel log, which
# the host parses.  --integration runs tests/integration/GLOB.sh, each
# under a timeout (300 s, or what a "# shca-timeout: N" line in the test
# asks), and appends "shca-test: NAME PASS|FAIL|SKIP" to
# $SHCA_OUT/results.  A test exits 0 to pass and 77 to skip.
. "$SHCA_TOP/scripts/guest/lib.sh"

kunit=
itest=
while [ $# -gt 0 ]; do
	case "$1" in
	--kunit) kunit=$2; shift 2 ;;
	--integration) itest=$2; shift 2 ;;
	*) echo "run-tests.sh: unknown argument $1"; exit 2 ;;
	esac
done

: > "$SHCA_OUT/results"
shca_guest_load || { echo "run-tests.sh: cannot load shca"; exit 1; }

if [ -n "$kunit" ]; then
	if [ ! -w /sys/module/kunit/parameters/filter_glob ]; then
		echo "run-tests.sh: this kernel has no KUnit"
		exit 1
	fi
	# No newline: KUnit would take it as part of the glob.
	printf %s "$kunit" > /sys/module/kunit/parameters/filter_glob
	echo "shca-kunit: begin" > /dev/kmsg
	insmod "$SHCA_BUILD/kunit/shca_kunit.ko" ||
		{ echo "run-tests.sh: cannot load shca_kunit"; exit 1; }
	rmmod shca_kunit
	echo "shca-kunit: end" > /dev/kmsg
fi

result() {
	echo "shca-test: $1 $2" | tee -a "$SHCA_OUT/results" > /dev/kmsg
}

if [ -n "$itest" ]; then
	# A glob that names no test is a mistake, not a green run.
	compgen -G "$SHCA_TOP/tests/integration/$itest.sh" > /dev/null ||
		result "no-test-matches:$itest" FAIL
	for t in "$SHCA_TOP"/tests/integration/$itest.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		echo "shca-test: start $name" > /dev/kmsg
		shca_guest_load
		limit=$(sed -n 's/^# shca-timeout: \([0-9]\+\)$/\1/p' "$t")
		timeout -k 10 "${limit:-300}" bash "$t" > "$SHCA_OUT/itest-$name.log" 2>&1
		rc=$?
		case $rc in
		0) result "$name" PASS ;;
		77) result "$name" SKIP ;;
		*) result "$name" FAIL
		   echo "--- $name (exit $rc) ---"
		   tail -n 30 "$SHCA_OUT/itest-$name.log" ;;
		esac
		# Leave the next test a clean slate: unloading shca removes
		# every device a test left behind, and unloading rdma_rxe
		# every rxe device (the bench compares against rxe).
		shca_guest_unload || result "$name-unload" FAIL
		if grep -q '^rdma_rxe ' /proc/modules; then
			rmmod rdma_rxe || result "$name-rxe-unload" FAIL
		fi
		ip link del shca_d0 2>/dev/null
		ip link del shca_d1 2>/dev/null
	done
fi
exit 0
