#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging MRs under a process that munmaps and remaps, drops
# pages (MADV_DONTNEED) and forks while the device reads and writes them
# (tests/user/odp_remap.py): the device sees the pages the process has now,
# never stale ones, never a child's copy; the MMU notifier's
# invalidations and the device's page faults show in the counters.  Then
# an ODP MR's pages copied into each other through a QP connected to
# itself, the target a copy-on-write page whose fault invalidates the MR
# under the send (shca_uverbs_test odp_cow): it completes, in bounded
# time, with the data.  On every kernel, the debug one's KASAN and
# lockdep included.
# make check runs it on the debug kernel and on 6.1, where ib_core's
# on-demand paging differs; make check-long on the stock 6.12 kernel
# too.
# shca-check-kernels: debug stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"
[ -d "$RDMA_CORE_BUILD/python/pyverbs" ] ||
	fail "the rdma-core build has no pyverbs (is cython3 installed?)"
faults=$(link_counter shca0 odp_page_faults)
invals=$(link_counter shca0 odp_invalidations)
"$t" shca0 odp_cow > "$SHCA_OUT/uverbs-odp_cow.txt" ||
	fail "$(grep -h '^not ok' "$SHCA_OUT/uverbs-odp_cow.txt")"
cat "$SHCA_OUT/uverbs-odp_cow.txt"
[ "$(grep -c '^ok ' "$SHCA_OUT/uverbs-odp_cow.txt")" -eq 5 ] ||
	fail "odp_cow reported $(grep -c '^ok ' "$SHCA_OUT/uverbs-odp_cow.txt") of 5 cases"
ktap_check "$SHCA_OUT/uverbs-odp_cow.txt"
/usr/bin/python3 "$SHCA_TOP/tests/user/odp_remap.py" shca0 3 20 ||
	fail "ODP MR under remap, DONTNEED and fork"
[ "$(link_counter shca0 odp_page_faults)" -gt "$faults" ] ||
	fail "no page fault counted"
[ "$(link_counter shca0 odp_invalidations)" -gt "$invals" ] ||
	fail "no invalidation counted"
echo ok
