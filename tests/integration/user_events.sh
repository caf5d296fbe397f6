#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A process that floods its own UC and RC QPs held in RTR with zero-length
# messages, and reads none of its async events meanwhile, finds one
# COMM_EST per receiver queued at the end, not one per message; the
# device keeps carrying traffic.
# shca-timeout: 600
# make check runs it on the stock kernels: what it proves is which events
# a process reads, not memory safety, which the debug kernel's tests of
# the same paths watch; make check-long on the debug kernel too.
# shca-check-kernels: stock
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"

rc=0
timeout 240 "$t" shca0 flood > "$SHCA_OUT/uverbs-flood.txt" || rc=$?
cat "$SHCA_OUT/uverbs-flood.txt"
[ $rc -eq 0 ] || fail "exit $rc: $(grep '^not ok' "$SHCA_OUT/uverbs-flood.txt")"
ktap_check "$SHCA_OUT/uverbs-flood.txt" flood_events_bounded
res=$(rdma res show qp) || fail "rdma res show qp failed"
grep -q shca_uverbs <<<"$res" && fail "QPs left behind"
echo ok
