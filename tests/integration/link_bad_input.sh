#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input to "rdma link add" gets a clear error and harms nothing.
# make check runs it on the stock kernels: what it proves is the errors
# the rdma tool shows, not memory safety, which the debug kernel's tests
# of the same paths watch; make check-long on the debug kernel too.
# shca-check-kernels: stock
. "$(dirname "$0")/../lib.sh"

mkdummy shca_d0
mkdummy shca_d1

expect_error "No such device" \
	rdma link add shca0 type shca netdev no_such_netdev

rdma link add shca0 type shca netdev shca_d0
expect_error "File exists" rdma link add shca0 type shca netdev shca_d1
expect_error "Device or resource busy" \
	rdma link add shca1 type shca netdev shca_d0
expect_error "Protocol not supported" rdma link add shca1 type shca netdev lo

# None of that disturbed the device that exists, or left one behind.
grep -q 'state ACTIVE' <<<"$(rdma link show shca0/1)" || fail "shca0 disturbed"
[ "$(rdma dev | grep -c shca)" = 1 ] || fail "stray devices: $(rdma dev)"

# The netdev is free again once its device is gone.
rdma link delete shca0
rdma link add shca1 type shca netdev shca_d0
rdma link delete shca1
echo ok
