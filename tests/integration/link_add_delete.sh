#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "rdma link add" creates a shca device that rdma dev and rdma link show;
# "rdma link delete" removes it.
# make check runs it on the stock kernels: what it proves is ib_core's
# netdev binding, which 6.1 does differently, not memory safety, which the
# debug kernel's tests of the same paths watch; make check-long on the
# debug kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

mkdummy shca_d0 02:00:00:00:00:01
rdma link add shca0 type shca netdev shca_d0

grep -q 'shca0' <<<"$(rdma dev show shca0)" || fail "rdma dev does not show shca0"
grep -q 'node_guid 0000:00ff:fe00:0001' <<<"$(rdma dev show shca0)" ||
	fail "node GUID is not derived from the MAC: $(rdma dev show shca0)"
grep -q 'state ACTIVE' <<<"$(rdma link show shca0/1)" ||
	fail "port is not ACTIVE: $(rdma link show shca0/1)"
grep -q 'netdev shca_d0' <<<"$(rdma link show shca0/1)" ||
	fail "port is not bound to shca_d0: $(rdma link show shca0/1)"
grep -q '"node_type":"ca"' <<<"$(rdma -j dev show shca0)" ||
	fail "node type is not CA"

rdma link delete shca0
rdma dev show shca0 2>/dev/null && fail "shca0 still exists after delete"
[ ! -e "$(sysfs_of shca0)" ] || fail "sysfs entry of shca0 remains"

# The same name and netdev can be used again.
rdma link add shca0 type shca netdev shca_d0
rdma link delete shca0
echo ok
