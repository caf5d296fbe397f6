#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Network namespaces.  A shca device is reachable only from devices whose
# netdevs share its netdev's namespace: an in-kernel consumer's RC, UC and
# UD traffic works between two devices in one namespace, and between
# namespaces RC ends in a transport retry error while UC and UD messages
# are dropped and counted.  Moving a netdev to another namespace removes
# its shca device.  In exclusive mode, "rdma dev set DEV netns NS" moves a
# device, which is then visible in NS only, and traffic still works.
. "$(dirname "$0")/../lib.sh"

kc=$SHCA_BUILD/kconsumer/shca_kconsumer.ko
result=/sys/kernel/debug/shca_kconsumer/result

# set_mode MODE: "rdma system set netns MODE", which ib_core refuses while
# a namespace other than init_net exists; one that was just deleted takes
# a moment to go.
set_mode() {
	wait_for bash -c "rdma system set netns $1 2>/dev/null" ||
		fail "rdma system set netns $1: $(rdma system set netns "$1" 2>&1)"
	rdma system show | grep -q "netns $1" ||
		fail "mode is not $1: $(rdma system show)"
}

cleanup() {
	ip netns del shca_ns1 2>/dev/null || true
	ip netns del shca_ns2 2>/dev/null || true
	for i in $(seq 100); do
		rdma system set netns shared 2>/dev/null && break
		sleep 0.1
	done
}
trap cleanup EXIT

# counter DEV NAME: one of the device's counters.
counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v n="$2" 'p { print; exit } $0 == n { p = 1 }'
}

# namespaces: shca_ns1 with the netdevs of shca0 and shca1, shca_ns2 with
# that of shca2; the devices are created from their netdev's namespace.
namespaces() {
	local ns dev
	ip netns add shca_ns1
	ip netns add shca_ns2
	for ns in shca_ns1 shca_ns2; do
		ip -n $ns link set lo up
	done
	for dev in shca_n0:shca_ns1 shca_n1:shca_ns1 shca_n2:shca_ns2; do
		ip -n "${dev#*:}" link add "${dev%:*}" type dummy
		ip -n "${dev#*:}" link set "${dev%:*}" up
	done
	ip netns exec shca_ns1 rdma link add shca0 type shca netdev shca_n0
	ip netns exec shca_ns1 rdma link add shca1 type shca netdev shca_n1
	ip netns exec shca_ns2 rdma link add shca2 type shca netdev shca_n2
	for dev in shca0 shca1 shca2; do
		wait_for bash -c "rdma link show $dev/1 | grep -q ACTIVE" ||
			fail "$dev is not active"
	done
}

# traffic A B: the consumer's verdict between devices A and B.
traffic() {
	insmod "$kc" dev_a="$1" dev_b="$2" iters=2 poll=softirq
	cat $result
	cp $result "$SHCA_OUT/netns-$1-$2.result"
	rmmod shca_kconsumer
}

# Shared mode (the default): a device is in every RDMA namespace, but the
# fabric follows the netdevs.
rdma system show | grep -q "netns shared" || fail "mode: $(rdma system show)"
namespaces
# Moving an RDMA device needs exclusive mode.
expect_error "Operation not supported" rdma dev set shca0 netns shca_ns2
traffic shca0 shca1
for t in rc uc ud; do
	grep -q "^$t PASS" "$SHCA_OUT/netns-shca0-shca1.result" ||
		fail "$t in one namespace: $(grep "^$t" "$SHCA_OUT/netns-shca0-shca1.result")"
done

dropped=$(counter shca0 dropped_packets)
retries=$(counter shca0 err_retry_exceeded)
traffic shca0 shca2
for t in rc uc ud; do
	grep -q "^$t FAIL" "$SHCA_OUT/netns-shca0-shca2.result" ||
		fail "$t across namespaces: $(grep "^$t" "$SHCA_OUT/netns-shca0-shca2.result")"
done
dmesg | grep -q "shca_kconsumer: rc: .*transport retry counter exceeded" ||
	fail "no retry error for RC across namespaces: $(dmesg | grep shca_kconsumer | head -5)"
[ "$(counter shca0 err_retry_exceeded)" -gt "$retries" ] ||
	fail "err_retry_exceeded did not move"
[ "$(counter shca0 dropped_packets)" -gt "$dropped" ] ||
	fail "dropped_packets did not move"
[ "$(counter shca2 rx_bytes)" -eq 0 ] || fail "shca2 received: $(counter shca2 rx_bytes)"

# A netdev that moves to another namespace takes its device with it.
ip -n shca_ns1 link set dev shca_n1 netns shca_ns2
wait_for bash -c '! rdma dev show shca1 >/dev/null 2>&1' ||
	fail "shca1 outlived its netdev's move"
rdma dev show shca0 >/dev/null || fail "shca0 went too"

# Exclusive mode: ib_core allows the switch only with init_net alone.
rdma link delete shca0
rdma link delete shca2
ip netns del shca_ns1
ip netns del shca_ns2
set_mode exclusive
namespaces
# A new device starts in init_net's RDMA namespace.
rdma dev show shca0 >/dev/null || fail "shca0 not in init_net"
! ip netns exec shca_ns1 rdma dev show shca0 >/dev/null 2>&1 ||
	fail "shca0 visible in shca_ns1 before the move"
rdma dev set shca0 netns shca_ns1
rdma dev set shca1 netns shca_ns1
! rdma dev show shca0 >/dev/null 2>&1 || fail "shca0 still in init_net"
ip netns exec shca_ns1 rdma dev show shca0 >/dev/null ||
	fail "shca0 not in shca_ns1: $(ip netns exec shca_ns1 rdma dev)"
ip netns exec shca_ns1 rdma dev show shca1 >/dev/null ||
	fail "shca1 not in shca_ns1"
! ip netns exec shca_ns1 rdma dev show shca2 >/dev/null 2>&1 ||
	fail "shca2 visible in shca_ns1"
[ ! -e /sys/class/infiniband/shca0 ] || fail "shca0 in init_net's sysfs"
ip netns exec shca_ns1 test -e /sys/class/infiniband/shca0 ||
	fail "shca0 not in shca_ns1's sysfs"
wait_for bash -c "ip netns exec shca_ns1 rdma link show shca0/1 | grep -q ACTIVE" ||
	fail "shca0 not active after the move"
traffic shca0 shca1
for t in rc uc ud; do
	grep -q "^$t PASS" "$SHCA_OUT/netns-shca0-shca1.result" ||
		fail "$t after the move: $(grep "^$t" "$SHCA_OUT/netns-shca0-shca1.result")"
done
# Deleting a namespace sends its devices back to init_net (ib_core), and
# deletes its netdevs, which removes the devices.
ip netns del shca_ns1
wait_for bash -c '! rdma dev show shca0 >/dev/null 2>&1 && ! rdma dev show shca1 >/dev/null 2>&1' ||
	fail "shca0/shca1 outlived their namespace"
ip netns del shca_ns2
set_mode shared
trap - EXIT
[ -z "$(rdma res show | grep shca || true)" ] ||
	fail "resources remain: $(rdma res show)"
echo ok
