#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own tools over libshca: ibv_devices, ibv_devinfo -v, and the
# RC, UC, UD and SRQ pingpongs, in loopback on one device and between two
# devices; "rdma res show" sees the processes' objects while they run; a
# renamed device is hidden from libibverbs, and found again.
# Stock 6.12 kernel only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN,
# and on 6.1 the package test runs Debian's own pingpong, perftest and
# pyverbs over the installed provider (and rdma_core_suite all of pyverbs).
# shca-kernels: stock
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices

ibv_devices | tee "$SHCA_OUT/ibv_devices.txt"
grep -q '^ *shca0 ' "$SHCA_OUT/ibv_devices.txt" || fail "ibv_devices: no shca0"
grep -q '^ *shca1 ' "$SHCA_OUT/ibv_devices.txt" || fail "ibv_devices: no shca1"
ibv_devinfo -v -d shca0 > "$SHCA_OUT/ibv_devinfo.txt" ||
	fail "ibv_devinfo -v failed"
for f in 'hca_id:\s*shca0' 'vendor_id:\s*0x5348' 'state:\s*PORT_ACTIVE' \
	 'link_layer:\s*Ethernet' 'max_qp_wr:\s*4096' '::ffff:10.11.0.1'; do
	grep -qP "$f" "$SHCA_OUT/ibv_devinfo.txt" ||
		fail "ibv_devinfo -v: no '$f'"
done

# libibverbs knows shca devices by name: a renamed one is not matched.
rdma dev set shca1 name other1
grep -qw other1 <<<"$(ibv_devices)" && fail "a renamed device is still matched"
grep -qw shca0 <<<"$(ibv_devices)" || fail "shca0 lost when shca1 was renamed"
rdma dev set other1 name shca1
grep -qw shca1 <<<"$(ibv_devices)" || fail "shca1 not found when renamed back"

for pp in rc uc ud srq; do
	pair "${pp}_loopback" \
		"ibv_${pp}_pingpong -d shca0 -g 3 -n 200" \
		"ibv_${pp}_pingpong -d shca0 -g 3 -n 200 127.0.0.1"
	pair "${pp}_two_devices" \
		"ibv_${pp}_pingpong -d shca1 -g 3 -n 200" \
		"ibv_${pp}_pingpong -d shca0 -g 3 -n 200 127.0.0.1"
done

# Larger messages, and completion events instead of busy polling.
pair rc_events_64k \
	"ibv_rc_pingpong -d shca1 -g 3 -n 50 -s 65536 -e" \
	"ibv_rc_pingpong -d shca0 -g 3 -n 50 -s 65536 -e 127.0.0.1"

# rdma res shows the processes' QPs, CQs and MRs while they run.
timeout 120 ibv_rc_pingpong -d shca1 -g 3 -n 100000 > "$SHCA_OUT/res.server" 2>&1 &
spid=$!
wait_listen 18515 || fail "res: server never listened"
timeout 120 ibv_rc_pingpong -d shca0 -g 3 -n 100000 127.0.0.1 \
	> "$SHCA_OUT/res.client" 2>&1 &
cpid=$!
wait_for bash -c "rdma res show qp link shca0 | grep -q 'comm ibv_rc_pingpong'" ||
	fail "rdma res show qp: no ibv_rc_pingpong QP on shca0"
rdma res show qp link shca0 | tee "$SHCA_OUT/res-qp.txt"
grep -q 'comm ibv_rc_pingpong' <<<"$(rdma res show cq dev shca0)" ||
	fail "rdma res show cq: no ibv_rc_pingpong CQ"
grep -q 'comm ibv_rc_pingpong' <<<"$(rdma res show mr dev shca0)" ||
	fail "rdma res show mr: no ibv_rc_pingpong MR"
grep -q 'state RTS' <<<"$(rdma res show qp link shca1)" ||
	fail "rdma res show qp: the server's QP is not in RTS"
kill $cpid $spid 2>/dev/null
wait 2>/dev/null
# Killed mid-traffic: their objects go with them.
wait_for bash -c "! rdma res show qp | grep -q ibv_rc_pingpong" ||
	fail "QPs of killed pingpongs remain"
echo ok
