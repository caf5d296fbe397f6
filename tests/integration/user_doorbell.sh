#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Doorbell suppression from a process: while a QP's turn executes, libshca
# makes no system call for a post, and no WQE is ever stranded.  A post
# into a turn held in the db_idle window (it still says it runs) skips
# the doorbell and the turn finds the WQE on its second look; one into
# the db_recheck window (it said it stops) rings; either way the WQE runs
# exactly once.
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"

timeout 120 "$t" shca0 doorbell | tee "$SHCA_OUT/uverbs-doorbell.txt" ||
	fail "$(grep '^not ok' "$SHCA_OUT/uverbs-doorbell.txt")"
grep -q '^ok db_idle_wqe_runs_once' "$SHCA_OUT/uverbs-doorbell.txt" ||
	fail "the held cases did not run"
echo ok
