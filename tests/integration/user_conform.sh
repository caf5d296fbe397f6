#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What IBTA allows a process, done from userspace: RDMA writes into
# regions registered at an iova of their own and zero-based; type 2
# memory windows bound zero-based, bound again after an invalidation
# with the key the consumer chose (the old key then refused), and
# read-only over a region with the bind right alone; a zero-length
# region with zero-byte WRITE, READ and SEND through it; a READ or an
# atomic with a bad lkey failing locally, whatever its rkey or alignment;
# a UD datagram
# whose IPv4 header carries the address handle's traffic class and hop
# limit.  Every case must report, and each must pass.
# make check runs it on the stock kernels: what it proves is what IBTA
# allows a process, through each kernel's uverbs, not memory safety, which
# the debug kernel's tests of the same paths watch; make check-long on the
# debug kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"

out=$SHCA_OUT/uverbs-conform.txt
rc=0
timeout 120 "$t" shca0 conform > "$out" 2>&1 || rc=$?
cat "$out"
for c in conform_iova_mr_write conform_zero_based_mr_write \
	conform_mw_zero_based_bind conform_mw_zero_based_write \
	conform_mw_local_inv conform_mw_rebind_consumer_key \
	conform_mw_rebound_write conform_mw_old_key_refused \
	conform_mw_read_only_bind conform_mw_read_only_read \
	conform_zero_length_mr conform_zero_length_mr_zero_byte_ops \
	conform_zero_length_mr_dereg conform_read_bad_lkey_and_rkey \
	conform_atomic_bad_lkey_and_rkey conform_atomic_unaligned_bad_lkey \
	conform_ud_send \
	conform_ud_ipv4_tos_and_ttl conform_traffic_after; do
	grep -qE "^ok [0-9]+ $c\$" "$out" || fail "no 'ok $c'"
done
[ $rc -eq 0 ] || fail "exit $rc: $(grep '^not ok' "$out")"
ktap_check "$out"
echo ok
