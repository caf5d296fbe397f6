#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Work a process hands the device without a system call is the device's
# to pace: a QP connected to itself keeps four RDMA writes of 16 MiB in
# flight for ten seconds, polled without a system call on CPU 0, while a
# process spinning on CPU 1 must keep at least 40% of it (the engine's
# turns have a budget and its copies yield page by page).  The figures go
# to the log.
# Debian's kernels (voluntary preemption) are the ones where a kworker
# that never yielded would hold a CPU; the debug kernel's KASAN copies
# would only make the flood slower.  make check runs it on the stock 6.12
# kernel; make check-long on 6.1 too.
# shca-kernels: stock stock61
# shca-check-kernels: stock
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"
[ "$(nproc)" -ge 2 ] || fail "the guest has $(nproc) CPU; the test needs two"

out=$SHCA_OUT/uverbs-flood-cpu.txt
timeout 180 "$t" shca0 flood_cpu > "$out" 2>&1 || fail "$(grep -v '^ok' "$out")"
cat "$out"
ktap_check "$out" flood_cpu_two_cpus flood_cpu_writes_complete \
	flood_cpu_other_cpu_usable flood_cpu_device_works_after
echo ok
