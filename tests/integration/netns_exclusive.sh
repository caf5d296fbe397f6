#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "rdma system set netns exclusive": a new shca device starts in init_net,
# "rdma dev set DEV netns NS" moves it, it is then visible (rdma dev,
# sysfs) in NS only, and traffic between two moved devices still works.
# Deleting the namespace sends them back to init_net.  Shared mode is
# restored.
# shca-timeout: 600
# make check runs it on the stock kernels: what it proves is ib_core's net
# namespaces, which 6.1 does differently, not memory safety, which the
# debug kernel's tests of the same paths watch; make check-long on the
# debug kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

trap netns_cleanup EXIT

# ib_core allows the switch only while init_net is the only namespace.
netns_mode exclusive
netns_setup
rdma dev show shca2 >/dev/null || fail "shca2 not in init_net"
! ip netns exec shca_ns1 rdma dev show shca2 >/dev/null 2>&1 ||
	fail "shca2 visible in shca_ns1 before any move"
# The RDMA namespace is not the netdev's: shca0 and shca1 move, their
# netdevs stay in init_net, where the fabric still connects them.
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
kc_traffic shca0 shca1
for t in rc uc ud; do
	grep -q "^$t PASS" "$SHCA_OUT/netns-shca0-shca1.result" ||
		fail "$t after the move: $(grep "^$t" "$SHCA_OUT/netns-shca0-shca1.result")"
done

# Deleting the namespace sends shca0 and shca1 back to init_net (ib_core),
# and deletes shca_n2, which removes shca2.
ip netns del shca_ns1
wait_for bash -c 'rdma dev show shca0 >/dev/null 2>&1 && rdma dev show shca1 >/dev/null 2>&1' ||
	fail "shca0/shca1 did not come back to init_net: $(rdma dev)"
wait_for bash -c '! rdma dev show shca2 >/dev/null 2>&1' ||
	fail "shca2 outlived its netdev's namespace"
netns_mode shared
# Nothing of the consumers is left, on each device while it is there.
res_only_ib_core shca0
res_only_ib_core shca1
rdma link delete shca0
rdma link delete shca1
trap - EXIT
netns_cleanup
echo ok
