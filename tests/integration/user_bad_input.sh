#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input from a process gets an error and nothing else: wrong driver
# data sizes and fields, bogus, stale and other processes' mmap offsets,
# out-of-range values written into the mapped rings, remote accesses
# outside an MR's bounds or rights, RDMA FLUSH and atomic write against
# the rights they need and with bad arguments, memory window binds beyond
# the MR, of a foreign PD or without the bind right, and a window's MR
# refusing deregistration, posting to a QP in RESET;
# extended CQs (refused attributes, both poll APIs alike, completion
# timestamps); device memory (bad sizes, copies and MR ranges past a DM's
# end, a DM in use, foreign handles); XRC (missing and foreign parts, SRQ
# numbers of no SRQ or of another domain, a domain and CQ in use); thread
# and parent domains (allocator calls, lock-free objects, EBUSY, foreign
# and bad arguments) and imported contexts, PDs and MRs.  The harness fails the run on any kernel report;
# each case ends with traffic flowing.
# make check runs it on the debug kernel and on 6.1, whose ib_core has no
# RDMA FLUSH (flush_absent runs there in place of flush); make check-long
# on the stock 6.12 kernel too.
# shca-check-kernels: debug stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"

# FLUSH and ATOMIC WRITE came with ib_core 6.2: before it, the device
# must offer neither and refuse both.
flush=flush
! kernel_before 6.2 || flush=flush_absent
failed=0
for c in udata mmap rings mr mw $flush reset cqex pdom resize dm xrc spoof; do
	echo "--- $c"
	timeout 120 "$t" shca0 $c | tee "$SHCA_OUT/uverbs-$c.txt" || failed=1
done
[ $failed -eq 0 ] || fail "$(grep -h '^not ok' "$SHCA_OUT"/uverbs-*.txt)"
for c in udata mmap rings mr mw $flush reset cqex pdom resize dm xrc spoof; do
	ktap_check "$SHCA_OUT/uverbs-$c.txt"
done
# Nothing of the processes' is left.
grep -q shca_uverbs <<<"$(rdma res show qp)" && fail "QPs left behind"
echo ok
