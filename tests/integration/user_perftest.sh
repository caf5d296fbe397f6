#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debian's perftest binaries over libshca, between two devices: send,
# RDMA write, RDMA read and atomic bandwidth, send and write latency.  They
# post with the ibv_wr_* API and poll the mapped CQ rings; each must run to
# its report.  One run uses two QPs, one a shared receive queue.
# shca-timeout: 600
# Stock 6.12 kernel only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN,
# and on 6.1 the package test runs Debian's own pingpong, perftest and
# pyverbs over the installed provider (and rdma_core_suite all of pyverbs).
# shca-kernels: stock
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
command -v ib_send_bw >/dev/null || fail "perftest is not installed"

# perf NAME TOOL ARGS...: TOOL as server on shca1, as client on shca0.
perf() {
	local name=$1 tool=$2
	shift 2
	pair "$name" "$tool -d shca1 -x 3 -F $*" "$tool -d shca0 -x 3 -F $* 127.0.0.1"
	grep -qE '^ *[0-9]+ +[0-9]+ ' "$SHCA_OUT/$name.client" ||
		fail "$name: no results line"
}

perf send_bw ib_send_bw -n 500 -s 4096
perf send_bw_2qp ib_send_bw -n 200 -s 4096 -q 2
perf send_bw_srq ib_send_bw -n 200 -s 4096 --use-srq
perf write_bw ib_write_bw -n 500 -s 65536
perf read_bw ib_read_bw -n 500 -s 65536
perf atomic_bw ib_atomic_bw -n 500
perf send_lat ib_send_lat -n 200 -s 8
perf write_lat ib_write_lat -n 200 -s 8
echo ok
