#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Devices go away cleanly: when their netdev is deleted, and when shca is
# unloaded with devices present.
# make check runs it on the stock kernels: what it proves is how ib_core
# and the netdev see a device go, not memory safety, which the debug
# kernel's tests of the same paths watch; make check-long on the debug
# kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

mkdummy shca_d0
mkdummy shca_d1
rdma link add shca0 type shca netdev shca_d0
rdma link add shca1 type shca netdev shca_d1

# Deleting the netdev removes its device and leaves the other alone.
ip link del shca_d1
wait_for bash -c '! rdma dev show shca1 >/dev/null 2>&1' ||
	fail "shca1 outlived its netdev"
grep -q ACTIVE <<<"$(rdma link show shca0/1)" || fail "shca0 disturbed"

# rmmod with a device present removes it.
mkdummy shca_d1
rdma link add shca1 type shca netdev shca_d1
rmmod shca
[ -z "$(rdma dev | grep shca || true)" ] || fail "devices remain: $(rdma dev)"
[ ! -d /sys/kernel/debug/shca ] || fail "debugfs remains"

# And it comes back.
. "$SHCA_TOP/scripts/guest/lib.sh"
shca_guest_load
rdma link add shca0 type shca netdev shca_d0
grep -q ACTIVE <<<"$(rdma link show shca0/1)" || fail "shca0 after reload"
echo ok
