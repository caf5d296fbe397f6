#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# pyverbs, the Python bindings the rdma-core build makes when cython3 is
# present, over libshca: two RC QPs in loopback exchange a send and an RDMA
# write (tests/user/pyverbs_smoke.py).
# Stock 6.12 kernel only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN,
# and on 6.1 the package test runs Debian's own pingpong, perftest and
# pyverbs over the installed provider (and rdma_core_suite all of pyverbs).
# shca-kernels: stock
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
[ -d "$RDMA_CORE_BUILD/python/pyverbs" ] ||
	fail "the rdma-core build has no pyverbs (is cython3 installed?)"
/usr/bin/python3 "$SHCA_TOP/tests/user/pyverbs_smoke.py" shca0 3 ||
	fail "pyverbs over shca0"
/usr/bin/python3 "$SHCA_TOP/tests/user/pyverbs_smoke.py" shca1 3 ||
	fail "pyverbs over shca1"
echo ok
