#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: everything, on every kernel.
#
#   check.sh            rdma-core with libshca and the userspace unit
#                       tests; KUnit and integration tests on the debug
#                       kernel, with lint beside them; integration tests
#                       on Debian's stock 6.12 kernel and on its default
#                       6.1 kernel; the package tests
#   check.sh --kunit    KUnit only (debug kernel)
#   check.sh --itest    integration tests only (every kernel, or KERNEL)
#   check.sh --pkg      the package tests only (scripts/pkg-test.sh): make
#                       debs, lintian, the packages installed on a Debian
#                       12 system, which then boots on 6.1 and on 6.12
#   check.sh --long     make check-long, the second tier: on every kernel
#                       the integration tests make check leaves out there
#                       and the long variants of others (SHCA_LONG=1,
#                       scripts/guest/run-tests.sh), then the 30-minute
#                       soak on the debug kernel (scripts/soak.sh;
#                       SOAK_SECONDS sets it)
#
# Environment: SUITE=GLOB picks KUnit suites (default: all), TEST=GLOB
# picks integration tests by file name (default: all; an extended glob,
# so TEST='@(soak_short|teardown)' picks two), KERNEL=debug|stock|
# stock61 (or a space-separated list) picks the kernels the integration
# tests run on (default: all three; stock61 is Debian 12's default 6.1
# kernel).  SHCA_LONG=1 with --itest runs the long tier's part of them,
# as in SHCA_LONG=1 KERNEL=stock TEST=user_odp make itest.
#
# Every test program reports in KTAP, and scripts/ktap.sh reads them all:
# a report short of its plan, or malformed, is a failure.
#
# Every skip must be one that tests/skips/KERNEL expects, for its reason:
# a skip no manifest lists is a failure, and so is a listed one that ran
# (scripts/skips.sh).
#
# Ends with a table of its phases and their minutes (each guest's KUnit
# run, its integration tests and its slowest tests among them, from the
# durations the guest records), then "N passed, N failed, N skipped", and
# exits non-zero on any failure, including a kernel report (BUG, WARNING,
# KASAN, UBSAN, lockdep, kmemleak, hung task) in any guest.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/skips.sh"

do_lint=1 do_kunit=1 do_itest=1 do_pkg=1 do_soak=0
long=0
case "${1:-}" in
--kunit) do_lint=0 do_itest=0 do_pkg=0 ;;
--itest) do_lint=0 do_kunit=0 do_pkg=0 long=${SHCA_LONG:-0} ;;
--pkg) do_lint=0 do_kunit=0 do_itest=0 do_pkg=1 ;;
--long) do_lint=0 do_kunit=0 do_pkg=0 do_soak=1 long=1 ;;
"") ;;
*) shca_die "check.sh: unknown argument $1" ;;
esac
export SHCA_LONG=$long
suite=${SUITE:-*}
itest=${TEST:-*}
kernels=${KERNEL:-$SHCA_KERNELS}
for k in $kernels; do
	shca_kernel_ok "$k" || shca_die "check.sh: no kernel named '$k' ($SHCA_KERNELS)"
done

passed=0 failed=0 skipped=0
failures=()

skips_load

record() {
	local j_name j_status

	skip_judge "$@"
	case "$j_status" in
	PASS) passed=$((passed + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)); failures+=("$j_name") ;;
	esac
	printf '%-4s %s\n' "$j_status" "${j_name}${3:+ # SKIP $3}"
}


# minutes SECONDS: in minutes, to a tenth.
minutes() {
	printf '%d.%d' $(($1 / 60)) $((($1 % 60) / 6))
}

# phase NAME: NAME begins and the phase before it ends; "" ends the last.
phases=() phase_name='' phase_t0=$(date +%s)
phase() {
	local now
	now=$(date +%s)
	if [ -n "$phase_name" ]; then
		phases+=("$(printf '%-34s %6s' "$phase_name" \
			"$(minutes $((now - phase_t0)))")")
	fi
	phase_name=$1 phase_t0=$now
}

# kunit_slowest LOG: the three slowest KUnit suites of a console log, as
# "SECONDS NAME", from the kernel's timestamps on each suite's first line
# ("# Subtest: NAME") and its result ("ok N NAME").
kunit_slowest() {
	[ -f "$1" ] || return 0
	sed 's/\x1b\[[0-9;]*m//g; s/\r$//' "$1" | awk '
		{ i = index($0, "]")
		  if (substr($0, 1, 1) != "[" || i == 0) next
		  t = substr($0, 2, i - 2) + 0; rest = substr($0, i + 2) }
		rest ~ /^    # Subtest: / { n = split(rest, w, " "); t0[w[n]] = t }
		rest ~ /^(not )?ok [0-9]+ / { n = split(rest, w, " ")
		  name = w[1] == "not" ? w[4] : w[3]
		  if (name in t0) printf "%d %s\n", t - t0[name], name }' |
		sort -nr | head -n 3
}

# guest_phases KERNEL: what the guest's durations file says took its time:
# KUnit and its three slowest suites, the integration tests, and the three
# slowest of them.
guest_phases() {
	local f=$SHCA_TOP/out/vm-$1/durations name s tests=0 n=0 slow
	[ -f "$f" ] || return 0
	while read -r name s; do
		if [ "$name" = kunit ]; then
			phases+=("$(printf '  %-32s %6s' KUnit "$(minutes "$s")")")
			while read -r s name; do
				phases+=("$(printf '    %-30s %6s' "$name" "$(minutes "$s")")")
			done < <(kunit_slowest "$SHCA_TOP/out/vm-$1/console.log")
		else
			tests=$((tests + s)) n=$((n + 1))
		fi
	done < "$f"
	[ $n -gt 0 ] || return 0
	phases+=("$(printf '  %-32s %6s' "integration tests ($n)" "$(minutes $tests)")")
	slow=$(grep -v '^kunit ' "$f" | sort -k2,2nr | head -n 3)
	while read -r name s; do
		[ -z "$name" ] ||
			phases+=("$(printf '    %-30s %6s' "$name" "$(minutes "$s")")")
	done <<<"$slow"
}

finish() {
	phase ""
	if [ ${#phases[@]} -gt 0 ]; then
		echo
		printf '%-34s %6s\n' phase minutes
		printf '%s\n' "${phases[@]}"
		printf '%-34s %6s\n' total "$(minutes $(($(date +%s) - start)))"
	fi
	echo
	if [ ${#failures[@]} -gt 0 ]; then
		echo "failed:"
		printf '  %s\n' "${failures[@]}"
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

start=$(date +%s)
phase "packages and kernels"
shca_need_pkgs build-essential bc bison flex libelf-dev libssl-dev cpio \
	kmod ccache sparse qemu-system-x86 busybox-static iproute2 xz-utils \
	gcc-12 pahole python3 linux-source-6.12 gnuplot-nox bsdextrautils \
	fio nvme-cli nfs-kernel-server nfs-common

# The kernels: built or fetched once, then cached.  The debug kernel is
# lint's (sparse builds against it) and KUnit's, and the package test
# needs neither.
if { [ $do_lint -eq 1 ] || [ $do_kunit -eq 1 ] ||
     { [ $do_itest -eq 1 ] && [[ " $kernels " == *" debug "* ]]; }; } &&
   ! "$SHCA_TOP/scripts/build-kernel.sh" >/dev/null; then
	record "build: debug kernel" FAIL
	finish
fi
for k in stock stock61; do
	if { [ $do_pkg -eq 1 ] ||
	     { [ $do_itest -eq 1 ] && [[ " $kernels " == *" $k "* ]]; }; } &&
	   ! "$SHCA_TOP/scripts/fetch-stock.sh" $k >/dev/null; then
		record "fetch: $k kernel" FAIL
		finish
	fi
done

mkdir -p "$SHCA_TOP/out"

# The userspace side: rdma-core with libshca and the userspace tests; the
# CQ sweep libshca shares with the kernel is unit-tested here, on the host.
if [ $do_lint -eq 1 ] || [ $do_itest -eq 1 ] || [ $do_pkg -eq 1 ]; then
	phase "userspace build"
	if "$SHCA_TOP/scripts/build-user.sh" > "$SHCA_TOP/out/build-user.log" 2>&1; then
		record "build: rdma-core with libshca, userspace tests" PASS
		"$SHCA_TOP/out/user/cq_sweep_test" > "$SHCA_TOP/out/cq_sweep.ktap" 2>&1
		ktap_parse "user: cq_sweep " "$SHCA_TOP/out/cq_sweep.ktap" $?
	else
		tail -n 30 "$SHCA_TOP/out/build-user.log"
		record "build: rdma-core with libshca, userspace tests" FAIL
		finish
	fi
fi

# The parsers prove themselves on broken reports (host side): this one of
# every KTAP report, the KUnit report's, and the judge of skips; in make
# check, not in the quick loops of make kunit and make itest.
if [ $do_lint -eq 1 ]; then
	phase "host: the parsers' self-tests"
	for t in ktap kunit_results skips ktap_check bench_report; do
		"$SHCA_TOP/tests/host/$t.sh" > "$SHCA_TOP/out/host-$t.ktap" 2>&1
		ktap_parse "host: ${t//_/-} " "$SHCA_TOP/out/host-$t.ktap" $?
	done
fi

# The host's work runs in the background, at the lowest priority, while
# the debug guest runs: its KUnit run keeps one vCPU busy and leaves a
# core idle, and the background takes only what the guest leaves.  That
# work is lint (which builds the module under sparse in a directory of
# its own), the stock kernels' modules, the packages and the package
# test's host steps (DKMS in a chroot, make install); each records its
# exit status in out/, for lint_results(), build() and pkg_results().
prebuild_pid=
prebuild() {
	local k
	if [ $do_lint -eq 1 ]; then
		t0=$(date +%s)
		"$SHCA_TOP/scripts/lint.sh" > "$SHCA_TOP/out/lint.ktap" 2>&1
		echo $? > "$SHCA_TOP/out/lint.rc"
		echo $(($(date +%s) - t0)) > "$SHCA_TOP/out/lint.secs"
	fi
	for k in stock stock61; do
		[ $do_itest -eq 1 ] && [[ " $kernels " == *" $k "* ]] || continue
		"$SHCA_TOP/scripts/build-module.sh" $k >/dev/null \
			2>"$SHCA_TOP/out/build-$k.err"
		echo $? > "$SHCA_TOP/out/build-$k.rc"
	done
	if [ $do_pkg -eq 1 ]; then
		"$SHCA_TOP/scripts/build-debs.sh" > "$SHCA_TOP/out/debs.dir" \
			2> "$SHCA_TOP/out/debs.err"
		echo $? > "$SHCA_TOP/out/debs.rc"
		[ "$(cat "$SHCA_TOP/out/debs.rc")" != 0 ] || pkg_install
	fi
}
rm -f "$SHCA_TOP"/out/build-*.rc "$SHCA_TOP/out/debs.rc" "$SHCA_TOP/out/lint.rc" \
	"$SHCA_TOP/out/pkg-install.rc"

# pkg_install: the package test's host steps, on the packages the
# background built (or, with none, on its own).
pkg_install() {
	local debs='' t0
	[ "$(cat "$SHCA_TOP/out/debs.rc" 2>/dev/null)" != 0 ] ||
		debs=$(cat "$SHCA_TOP/out/debs.dir")
	t0=$(date +%s)
	SHCA_DEBS=$debs "$SHCA_TOP/scripts/pkg-test.sh" --install \
		> "$SHCA_TOP/out/pkg-install.ktap" 2> "$SHCA_TOP/out/pkg-install.log"
	echo $? > "$SHCA_TOP/out/pkg-install.rc"
	echo $(($(date +%s) - t0)) > "$SHCA_TOP/out/pkg-install.secs"
}

# lint_results: what lint reported.  Each of its checks must report, and
# its exit status must agree: a lint that could not run is a failure, not
# silence.
lint_results() {
	local rc
	rc=$(cat "$SHCA_TOP/out/lint.rc" 2>/dev/null) || rc=1
	phases+=("$(printf '%-34s %6s' "lint (beside the debug guest)" \
		"$(minutes "$(cat "$SHCA_TOP/out/lint.secs" 2>/dev/null || echo 0)")")")
	if ! ktap_parse "lint: " "$SHCA_TOP/out/lint.ktap" "$rc"; then
		grep -v -E '^(KTAP version|1\.\.|(not )?ok )' \
			"$SHCA_TOP/out/lint.ktap" | head -n 60
	fi
}

# background_wait: the background's work is done; lint's results count.
background_wait() {
	[ -n "$prebuild_pid" ] || return 0
	wait "$prebuild_pid"
	prebuild_pid=
	[ $do_lint -eq 0 ] || lint_results
}

build() {
	local rc
	background_wait
	if [ -f "$SHCA_TOP/out/build-$1.rc" ]; then
		rc=$(cat "$SHCA_TOP/out/build-$1.rc")
		rm -f "$SHCA_TOP/out/build-$1.rc"
	else
		"$SHCA_TOP/scripts/build-module.sh" "$1" >/dev/null \
			2>"$SHCA_TOP/out/build-$1.err"
		rc=$?
	fi
	if [ "$rc" -eq 0 ]; then
		record "build: shca.ko for the $1 kernel" PASS
	else
		cat "$SHCA_TOP/out/build-$1.err"
		record "build: shca.ko for the $1 kernel" FAIL
		finish
	fi
}

# Count what one guest run reported.  $1: kernel, $2: the vm.sh status,
# $3: whether it ran integration tests.
collect() {
	local k=$1 vrc=$2 out=$SHCA_TOP/out/vm-$1
	if [ "$3" -eq 1 ]; then
		ktap_parse "itest/$k: " "$out/results"
	fi
	# rdma-core's own suite (tests/integration/rdma_core_suite.sh)
	# reports each of its cases: each one counts.
	if [ "$3" -eq 1 ] && [ -f "$out/rdma-core.ktap" ]; then
		ktap_parse "rdma-core/$k: " "$out/rdma-core.ktap"
		# A part of the suite leaves the manifest's other skips
		# untaken: only a whole run can find a stale line.
		[ ! -f "$out/rdma-core.part" ] || unset "skip_ran[$k/rdma-core]"
	fi
	if [ $do_kunit -eq 1 ] && [ "$k" = debug ]; then
		"$SHCA_TOP/scripts/kunit-results.sh" --suite "$suite" \
			"$out/console.log" > "$out/kunit-results.ktap"
		ktap_parse "kunit: " "$out/kunit-results.ktap" $?
	fi
	if [ -f "$out/splat" ]; then
		record "vm/$k: kernel reports (see above)" FAIL
	elif [ "$vrc" -ne 0 ]; then
		record "vm/$k: guest run" FAIL
	fi
}

for k in $SHCA_KERNELS; do
	args=() it=0
	if [ $do_kunit -eq 1 ] && [ $k = debug ]; then
		args+=(--kunit "$suite")
	fi
	if [ $do_itest -eq 1 ] && [[ " $kernels " == *" $k "* ]]; then
		args+=(--integration "$itest")
		it=1
	fi
	[ ${#args[@]} -gt 0 ] || continue
	phase "guest $k: build, boot, tests"
	build $k
	if [ $k = debug ]; then
		(renice -n 19 -p $BASHPID >/dev/null; prebuild) &
		prebuild_pid=$!
	fi
	# The SMP debug guest runs KUnit and the tests of shca's own code,
	# the short soak among them, under KASAN: give it 70 minutes (the
	# long tier's, with the whole of rdma-core's suite, too).  Its
	# integration tests run with the adaptive pollers on (poll_us 50),
	# the other guests' with the defaults (off), unless SHCA_MODPARAMS
	# says otherwise for all of them.
	mp=${SHCA_MODPARAMS-}
	[ "$k" != debug ] || mp=${SHCA_MODPARAMS-poll_us=50}
	# The debug guest's memory is what its tests need, and no more:
	# kmemleak's scans read every page's struct page and take time in
	# proportion (3 GiB, 25 s a scan; 1 GiB, 7 s).  KUnit alone needs
	# 1 GiB, the integration tests 1.5; the long tier keeps 3.
	mem=3072
	if [ $k = debug ] && [ "$SHCA_LONG" != 1 ]; then
		mem=1536
		[ $it -eq 1 ] || mem=1024
	fi
	SHCA_MODPARAMS=$mp "$SHCA_TOP/scripts/vm.sh" --kernel $k --timeout 4200 \
		--mem $mem scripts/guest/run-tests.sh "${args[@]}"
	collect $k $? $it
	phase ""
	guest_phases $k
done

# The packages, as a Debian 12 user installs them; each guest's checks
# count one by one.
if [ $do_pkg -eq 1 ]; then
	phase "package test"
	background_wait
	if [ -f "$SHCA_TOP/out/pkg-install.rc" ]; then
		phases+=("$(printf '%-34s %6s' "package host steps (background)" \
			"$(minutes "$(cat "$SHCA_TOP/out/pkg-install.secs")")")")
	else
		pkg_install
	fi
	if ! ktap_parse "pkg: " "$SHCA_TOP/out/pkg-install.ktap" \
		"$(cat "$SHCA_TOP/out/pkg-install.rc")"; then
		tail -n 30 "$SHCA_TOP/out/pkg-install.log"
	fi
	"$SHCA_TOP/scripts/pkg-test.sh" --boot > "$SHCA_TOP/out/pkg.ktap" 2> "$SHCA_TOP/out/pkg.log"
	prc=$?
	if ! ktap_parse "pkg: " "$SHCA_TOP/out/pkg.ktap" $prc; then
		tail -n 30 "$SHCA_TOP/out/pkg.log"
	fi
	for r in "$SHCA_TOP"/out/pkg-*/results; do
		[ -f "$r" ] || continue
		d=$(dirname "$r")
		ktap_parse "pkg/${d##*/pkg-}: " "$r"
		[ ! -f "$d/splat" ] || record "pkg/${d##*/pkg-}: kernel reports" FAIL
	done
fi

# The long tier's soak: its own guest, the report printed as it ends.
if [ $do_soak -eq 1 ]; then
	phase "soak (${SOAK_SECONDS:-1800} s)"
	if "$SHCA_TOP/scripts/soak.sh"; then
		record "soak: debug kernel" PASS
	else
		record "soak: debug kernel" FAIL
	fi
fi

background_wait

# A manifest line no skip took is stale, but only a run of every test
# can tell: make check-long runs a part of them on each kernel.
[ "$SHCA_LONG" = 1 ] || skips_unused "$suite" "$itest"
shca_log "make check took $(( $(date +%s) - start ))s"
finish
