#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# query_device, query_port, query_gid and query_pkey answer from the
# device's capability table, as ib_core's sysfs shows them.
# make check runs it on the stock kernels: what it proves is what
# ib_core's sysfs shows, which 6.1 does differently, not memory safety,
# which the debug kernel's tests of the same paths watch; make check-long
# on the debug kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

mkdummy shca_d0 02:11:22:33:44:55
ip addr add 192.0.2.1/24 dev shca_d0
rdma link add shca0 type shca netdev shca_d0
s=$(sysfs_of shca0)
caps=/sys/kernel/debug/shca/shca0/caps

[ "$(cat $s/fw_ver)" = 0.2.0 ] || fail "fw_ver $(cat $s/fw_ver)"
[ "$(cat $s/node_type)" = "1: CA" ] || fail "node_type $(cat $s/node_type)"
[ "$(cat $s/node_guid)" = 0011:22ff:fe33:4455 ] ||
	fail "node_guid $(cat $s/node_guid)"
[ "$(cat $s/ports/1/state)" = "4: ACTIVE" ] ||
	fail "port state $(cat $s/ports/1/state)"
[ "$(cat $s/ports/1/phys_state)" = "5: LinkUp" ] ||
	fail "phys_state $(cat $s/ports/1/phys_state)"
[ "$(cat $s/ports/1/link_layer)" = Ethernet ] || fail "link layer"
[ "$(cat $s/ports/1/pkeys/0)" = 0xffff ] || fail "pkey 0"

# The GID table: the link-local GID from the MAC, and the IPv4 address,
# each as RoCE v1 and as RoCE v2.
# (read, not cat: 64 forks a call crawl on the debug kernel.)
gid_types() {
	local i g t types=()
	for ((i = 0; i < 64; i++)); do
		read -r g < $s/ports/1/gids/$i
		[ "$g" = "$1" ] || continue
		read -r t < $s/ports/1/gid_attrs/types/$i
		types+=("$t")
	done
	printf '%s\n' "${types[@]}" | sort | paste -sd,
}
ll=fe80:0000:0000:0000:0011:22ff:fe33:4455
v4=0000:0000:0000:0000:0000:ffff:c000:0201
[ "$(gid_types $ll)" = "IB/RoCE v1,RoCE v2" ] ||
	fail "link-local GID types: '$(gid_types $ll)'"
wait_for bash -c "grep -q $v4 $s/ports/1/gids/*" ||
	fail "no GID for 192.0.2.1: $(cat $s/ports/1/gids/* | sort -u)"
[ "$(gid_types $v4)" = "IB/RoCE v1,RoCE v2" ] ||
	fail "IPv4 GID types: '$(gid_types $v4)'"

# Limits come from the one capability table, which debugfs mirrors.
grep -q '^max_qp  *1024$' $caps || fail "caps mirror: $(cat $caps)"
grep -q '^gid_tbl_len  *64$' $caps || fail "caps mirror: $(cat $caps)"

# Port state follows the netdev's link.
ip link set shca_d0 down
wait_for grep -q DOWN $s/ports/1/state || fail "port not DOWN: $(cat $s/ports/1/state)"
ip link set shca_d0 up
wait_for grep -q ACTIVE $s/ports/1/state || fail "port not ACTIVE again"
ip link set shca_d0 mtu 1024
[ "$(rdma -j link show shca0/1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])')" = ACTIVE ] ||
	fail "rdma link after MTU change"
echo ok
