#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging MRs under a process that munmaps and remaps, drops
# pages (MADV_DONTNEED) and forks while the device reads and writes them
# (tests/user/odp_remap.py): the device sees the pages the process has now,
# never stale ones, never a child's copy; the MMU notifier's
# invalidations and the device's page faults show in the counters.
# Stock kernels only: the debug kernel's ib_core has no on-demand paging.
# shca-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
[ -d "$RDMA_CORE_BUILD/python/pyverbs" ] ||
	fail "the rdma-core build has no pyverbs (is cython3 installed?)"
faults=$(link_counter shca0 odp_page_faults)
invals=$(link_counter shca0 odp_invalidations)
/usr/bin/python3 "$SHCA_TOP/tests/user/odp_remap.py" shca0 3 20 ||
	fail "ODP MR under remap, DONTNEED and fork"
[ "$(link_counter shca0 odp_page_faults)" -gt "$faults" ] ||
	fail "no page fault counted"
[ "$(link_counter shca0 odp_invalidations)" -gt "$invals" ] ||
	fail "no invalidation counted"
echo ok
