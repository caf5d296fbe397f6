#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Network namespaces.  A shca device is reachable only from devices whose
# netdevs share its netdev's namespace: an in-kernel consumer's RC, UC and
# UD traffic works between two devices in one namespace, and between
# namespaces RC ends in a transport retry error while UC and UD messages
# are dropped and counted.  Moving a netdev to another namespace removes
# its shca device.  (netns_exclusive.sh covers "rdma system" exclusive
# mode.)
# shca-timeout: 600
# Stock kernels only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN.
# shca-kernels: stock stock61
# make check runs it on the stock 6.12 kernel; on 6.1, where nvme_rdma and
# nfs_rdma drive the same rdma_cm, make check-long runs it.
# shca-check-kernels: stock
. "$(dirname "$0")/../lib.sh"

trap netns_cleanup EXIT

# Shared mode (the default): a device is in every RDMA namespace, but the
# fabric follows the netdevs.
grep -q "netns shared" <<<"$(rdma system show)" || fail "mode: $(rdma system show)"
netns_setup
# Moving an RDMA device needs exclusive mode.
expect_error "Operation not supported" rdma dev set shca0 netns shca_ns1

kc_traffic shca0 shca1
for t in rc uc ud; do
	grep -q "^$t PASS" "$SHCA_OUT/netns-shca0-shca1.result" ||
		fail "$t in one namespace: $(grep "^$t" "$SHCA_OUT/netns-shca0-shca1.result")"
done

dropped=$(link_counter shca0 dropped_packets)
retries=$(link_counter shca0 err_retry_exceeded)
kc_traffic shca0 shca2
for t in rc uc ud; do
	grep -q "^$t FAIL" "$SHCA_OUT/netns-shca0-shca2.result" ||
		fail "$t across namespaces: $(grep "^$t" "$SHCA_OUT/netns-shca0-shca2.result")"
done
grep -q "shca_kconsumer: rc: .*transport retry counter exceeded" <<<"$(dmesg)" ||
	fail "no retry error for RC across namespaces: $(dmesg | grep shca_kconsumer | head -5)"
[ "$(link_counter shca0 err_retry_exceeded)" -gt "$retries" ] ||
	fail "err_retry_exceeded did not move"
[ "$(link_counter shca0 dropped_packets)" -gt "$dropped" ] ||
	fail "dropped_packets did not move"
[ "$(link_counter shca2 rx_bytes)" -eq 0 ] ||
	fail "shca2 received: $(link_counter shca2 rx_bytes)"

# A netdev that moves to another namespace takes its device with it.
ip link set dev shca_n1 netns shca_ns1
wait_for bash -c '! rdma dev show shca1 >/dev/null 2>&1' ||
	fail "shca1 outlived its netdev's move"
rdma dev show shca0 >/dev/null || fail "shca0 went too"

# Nothing of the consumers is left, on each device while it is there.
res_only_ib_core shca0
res_only_ib_core shca2
rdma link delete shca0
rdma link delete shca2
echo ok
