#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Userspace QPs get the kernel QPs' teardown guarantee: libshca sweeps a
# destroyed or reset QP's CQEs from a shared CQ, after the kernel's fence,
# with the kernel's own sweep code.  The CQ is full and unpolled at each
# teardown; exactly the victim pair's CQEs leave it, no victim completion
# is polled afterwards, every neighbour completion comes exactly once and
# in order, and a reissued QPN inherits nothing.  Then a process killed
# with live QPs and traffic in flight leaves nothing behind.
# shca-timeout: 600
# make check runs it on the debug kernel and on 6.1, where ib_uverbs'
# disassociation differs; make check-long on the stock 6.12 kernel too.
# shca-check-kernels: debug stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"

timeout 120 "$t" shca0 teardown | tee "$SHCA_OUT/uverbs-teardown.txt" ||
	fail "$(grep '^not ok' "$SHCA_OUT/uverbs-teardown.txt")"
ktap_check "$SHCA_OUT/uverbs-teardown.txt"

# hold: start a process with live QPs, MRs and work in flight on shca0.
hold() {
	coproc HOLD { exec "$t" shca0 hold; }
	read -r -t 60 line <&"${HOLD[0]}" || fail "hold: no answer"
	[ "$line" = ready ] || fail "hold: said '$line'"
	grep -q shca_uverbs <<<"$(rdma res show qp link shca0)" ||
		fail "hold: its QPs are not in rdma res"
}
trap '[ -z "${HOLD_PID:-}" ] || kill -9 $HOLD_PID 2>/dev/null' EXIT

# kill -9 with live objects, a few times over.
for _ in 1 2 3; do
	hold
	kill -9 "$HOLD_PID"
	wait "$HOLD_PID" 2>/dev/null || true
	wait_for bash -c "! rdma res show qp | grep -q shca_uverbs" ||
		fail "QPs of a killed process remain"
	wait_for bash -c "! rdma res show mr | grep -q shca_uverbs" ||
		fail "MRs of a killed process remain"
done
# The device is whole.
"$t" shca0 reset > "$SHCA_OUT/uverbs-reset-after-kills.txt" 2>&1
ktap_check "$SHCA_OUT/uverbs-reset-after-kills.txt" reset_leftovers_never_run

# The device removed under a live process: ib_core takes the process's
# objects away and the removal does not wait for it to exit.
hold
rdma link delete shca0
wait_for bash -c "! rdma dev show shca0 >/dev/null 2>&1" ||
	fail "shca0 is still there with a process using it"
kill -0 "$HOLD_PID" || fail "hold died with the device"
kill -9 "$HOLD_PID"
wait "$HOLD_PID" 2>/dev/null || true
rdma link add shca0 type shca netdev shca_d0
# Its output to a file, not a pipe: under pipefail, grep -q stopping at
# the first match would kill the writer with SIGPIPE and fail the test.
"$t" shca0 reset > "$SHCA_OUT/uverbs-reset-after-readd.txt" 2>&1 ||
	fail "a re-added device does not work: $(grep -v '^ok' "$SHCA_OUT/uverbs-reset-after-readd.txt")"
ktap_check "$SHCA_OUT/uverbs-reset-after-readd.txt" reset_leftovers_never_run
echo ok
