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
# asks), and reports them in KTAP in $SHCA_OUT/results: the version line,
# the plan (one result per test), then "ok N NAME", "ok N NAME # SKIP" or
# "not ok N NAME" as each test ends (a guest that dies leaves a report
# short of its plan).  A test exits 0 to pass and 77 to skip, after
# saying why on a line "SKIP: why" (tests/lib.sh's skip()), which becomes
# the result's reason; it fails too if shca cannot be unloaded after it.
# A test with a "# shca-kernels: K..." line runs on those kernels only
# (debug, stock, stock61) and is skipped on the others, saying so; a name
# there that is no kernel's fails the test everywhere.  One with a
# "# shca-check-kernels: K..." line runs in make check on those of its
# kernels only, and is skipped on the rest with the reason "runs on this
# kernel in make check-long": make check's time goes where a kernel's
# differences are, and make check-long runs it everywhere.  make check
# holds every skip against tests/skips/KERNEL.
#
# With SHCA_LONG=1 (make check-long, passed on by vm.sh) the run is the
# long tier's: only the tests make check left out on this kernel, and the
# tests with a "# shca-long: WHAT" line, which do more there (WHAT says
# what: every step of a fault loop, the whole of a suite); the tests read
# SHCA_LONG themselves.  Each result also goes to the kernel log as
# "shca-test: NAME PASS|FAIL|SKIP".  How long KUnit and each test took, in
# seconds, goes to $SHCA_OUT/durations ("kunit N", "NAME N"), for the
# phase table make check prints.
. "$SHCA_TOP/scripts/guest/lib.sh"
# A GLOB may be an extended one: --integration '@(fault_*|soak_short)'.
shopt -s extglob

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
: > "$SHCA_OUT/durations"
shca_guest_load || { echo "run-tests.sh: cannot load shca"; exit 1; }

if [ -n "$kunit" ]; then
	if [ ! -w /sys/module/kunit/parameters/filter_glob ]; then
		echo "run-tests.sh: this kernel has no KUnit"
		exit 1
	fi
	# No newline: KUnit would take it as part of the glob.
	printf %s "$kunit" > /sys/module/kunit/parameters/filter_glob
	# KUnit's cases set what they need from the defaults: shca without
	# SHCA_MODPARAMS, which are for the integration tests.
	if [ -n "${SHCA_MODPARAMS:-}" ]; then
		shca_guest_unload && SHCA_MODPARAMS='' shca_guest_load ||
			{ echo "run-tests.sh: cannot reload shca"; exit 1; }
	fi
	t0=$(date +%s)
	echo "shca-kunit: begin" > /dev/kmsg
	insmod "$SHCA_BUILD/tests/kunit/shca_kunit.ko" ||
		{ echo "run-tests.sh: cannot load shca_kunit"; exit 1; }
	rmmod shca_kunit
	echo "shca-kunit: end" > /dev/kmsg
	[ -z "${SHCA_MODPARAMS:-}" ] || shca_guest_unload ||
		{ echo "run-tests.sh: cannot unload shca"; exit 1; }
	echo "kunit $(($(date +%s) - t0))" >> "$SHCA_OUT/durations"
fi

# header FILE: FILE's header lines, the comments before its first
# command, into h_kernels ("# shca-kernels: K..."), h_check
# ("# shca-check-kernels:"), h_long ("# shca-long: WHAT") and h_timeout
# ("# shca-timeout: N").  Bash
# alone, no fork: under KASAN and TCG a fork costs a fraction of a
# second, and every test's header is read.
header() {
	local line
	h_kernels='' h_check='' h_long='' h_timeout=''
	while IFS= read -r line; do
		case $line in
		"# shca-kernels: "*) h_kernels=${line#*: } ;;
		"# shca-check-kernels: "*) h_check=${line#*: } ;;
		"# shca-long: "*) h_long=${line#*: } ;;
		"# shca-timeout: "*) h_timeout=${line#*: } ;;
		"#"* | "") ;;
		*) break ;;
		esac
	done < "$1"
	[[ $h_timeout =~ ^[0-9]+$ ]] || h_timeout=300
}

# on KERNELS: whether this guest's kernel is among KERNELS (all if empty).
on() {
	[ -z "$1" ] || [[ " $1 " == *" $SHCA_KERNEL "* ]]
}

# in_long_tier: whether make check-long runs the test header() read on
# this kernel: make check left it out here, or it has a long variant.
in_long_tier() {
	on "$h_kernels" || return 1
	[ -n "$h_long" ] || ! on "$h_check"
}

# result NAME PASS|FAIL|SKIP [WHY]: the next KTAP result.
n=0
result() {
	local line
	n=$((n + 1))
	case $2 in
	PASS) line="ok $n $1" ;;
	SKIP) line="ok $n $1 # SKIP${3:+ $3}" ;;
	*) line="not ok $n $1" ;;
	esac
	[ -z "${3:-}" ] || [ "$2" = SKIP ] || echo "# $1: $3" >> "$SHCA_OUT/results"
	echo "$line" >> "$SHCA_OUT/results"
	echo "shca-test: $1 $2" > /dev/kmsg
}

if [ -n "$itest" ]; then
	tests=()
	for t in "$SHCA_TOP"/tests/integration/$itest.sh; do
		[ -f "$t" ] || continue
		header "$t"
		[ "${SHCA_LONG:-0}" = 1 ] && ! in_long_tier && continue
		tests+=("$t")
	done
	echo "KTAP version 1" > "$SHCA_OUT/results"
	# A glob that names no test is a mistake, not a green run.
	if [ ${#tests[@]} -eq 0 ]; then
		echo "1..1" >> "$SHCA_OUT/results"
		result "no-test-matches:$itest" FAIL
	else
		echo "1..${#tests[@]}" >> "$SHCA_OUT/results"
	fi
	for t in "${tests[@]}"; do
		name=${t##*/}
		name=${name%.sh}
		header "$t"
		unknown=
		for k in $h_kernels $h_check; do
			[[ " debug stock stock61 " == *" $k "* ]] ||
				unknown+=" $k"
		done
		if [ -n "$unknown" ]; then
			result "$name" FAIL "no kernel named$unknown in its kernels lines"
			continue
		fi
		if ! on "$h_kernels"; then
			result "$name" SKIP "runs on the $h_kernels kernel only"
			continue
		fi
		if [ "${SHCA_LONG:-0}" != 1 ] && ! on "$h_check"; then
			result "$name" SKIP "runs on this kernel in make check-long"
			continue
		fi
		echo "shca-test: start $name" > /dev/kmsg
		shca_guest_load
		t0=$(date +%s)
		timeout -k 10 "$h_timeout" bash "$t" > "$SHCA_OUT/itest-$name.log" 2>&1
		rc=$?
		echo "$name $(($(date +%s) - t0))" >> "$SHCA_OUT/durations"
		if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
			echo "--- $name (exit $rc) ---"
			tail -n 30 "$SHCA_OUT/itest-$name.log"
		fi
		# Leave the next test a clean slate: unloading shca removes
		# every device a test left behind, and unloading rdma_rxe
		# every rxe device (the bench compares against rxe).  A test
		# after which either stays loaded fails.
		why=
		shca_guest_unload || why="shca could not be unloaded after it"
		if shca_guest_loaded rdma_rxe && ! rmmod rdma_rxe; then
			why="${why:+$why; }rdma_rxe could not be unloaded after it"
		fi
		for d in shca_d0 shca_d1; do
			[ ! -e /sys/class/net/$d ] || ip link del $d
		done
		if [ -n "$why" ]; then
			result "$name" FAIL "$why"
		elif [ $rc -eq 0 ]; then
			result "$name" PASS
		elif [ $rc -eq 77 ]; then
			why=$(sed -n 's/^SKIP: //p' "$SHCA_OUT/itest-$name.log" |
				tail -n 1)
			result "$name" SKIP "${why:-it gave no reason}"
		else
			result "$name" FAIL "exit status $rc"
		fi
	done
fi
exit 0
