#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Doorbell suppression from a process: while a QP's turn executes, libshca
# makes no system call for a post, and no WQE is ever stranded.  A post
# into a turn held in the db_idle window (it still says it runs) skips
# the doorbell and the turn finds the WQE on its second look; one into
# the db_recheck window (it said it stops) rings; either way the WQE runs
# exactly once.  The adaptive poller's two windows likewise: a turn
# hands the QP to a poller with sq_running set, and a post into
# poll_idle (the poller letting the QP go, the bit still set) is found by
# its second look, one into poll_recheck rings.  Arming a CQ makes no system call either: ibv_req_notify_cq
# stores the request in the CQ's doorbell record, the next CQE raises the
# event, and an arm into the cq_arm window (CQE published, record not yet
# read) is followed by a poll that finds the CQE, and by the event.  A CQ
# on each completion vector (one per CPU) wakes its channel.  Lazy
# doorbells: with four WRITEs outstanding and the device's backstop armed,
# a post makes no system call; one into the backstop's sweep held in the
# backstop_idle window is run by the sweep, one into backstop_recheck
# rings; a poll or an arm rings what was left, as does the seventeenth
# post in a row; ping-pong and SHCA_LAZY_DOORBELL=0 ring every post and
# arm no backstop.
# make check runs it on the debug kernel only: it drives the model and
# shca's own code, the same on every kernel; make check-long runs it on
# the stock kernels too.
# shca-check-kernels: debug
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"

timeout 120 "$t" shca0 doorbell | tee "$SHCA_OUT/uverbs-doorbell.txt" ||
	fail "$(grep '^not ok' "$SHCA_OUT/uverbs-doorbell.txt")"
ktap_check "$SHCA_OUT/uverbs-doorbell.txt" db_idle_wqe_runs_once
ktap_check "$SHCA_OUT/uverbs-doorbell.txt" poll_idle_wqe_runs_once
ktap_check "$SHCA_OUT/uverbs-doorbell.txt" poll_recheck_wqe_runs_once
timeout 120 "$t" shca0 cq_arm | tee "$SHCA_OUT/uverbs-cq-arm.txt" ||
	fail "$(grep '^not ok' "$SHCA_OUT/uverbs-cq-arm.txt")"
ktap_check "$SHCA_OUT/uverbs-cq-arm.txt" cq_arm_window_polls_then_wakes
ktap_check "$SHCA_OUT/uverbs-cq-arm.txt" cq_arm_every_vector_wakes
timeout 120 "$t" shca0 lazy | tee "$SHCA_OUT/uverbs-lazy.txt" ||
	fail "$(grep '^not ok' "$SHCA_OUT/uverbs-lazy.txt")"
ktap_check "$SHCA_OUT/uverbs-lazy.txt" lazy_idle_backstop_runs_it_once
ktap_check "$SHCA_OUT/uverbs-lazy.txt" lazy_recheck_wqe_runs_once
echo ok
