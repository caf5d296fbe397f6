#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own python test suite (tests/ of the rdma-core tree the
# project builds, over its pyverbs and libshca), loopback on one shca
# device with its RoCE v2 IPv4 GID.  tests/user/rdma_core_ktap.py reports
# every test case in KTAP to $SHCA_OUT/rdma-core.ktap, which make check
# counts case by case ("rdma-core/KERNEL: NAME").  This test fails if the
# suite could not run to its end, if a case failed or erred, or if the
# suite left a QP, CQ, MR or PD behind.
#
# make check runs each case once, on one of the two stock kernels: on
# 6.1 the part where its ib_core and uverbs differ (the CQ, extended CQ,
# SRQ, extended QP, MR, device and QP cases), on 6.12 all the others.
# make check-long runs the whole suite on every kernel, the debug one
# under KASAN.  SHCA_RDMA_CORE_CASES (comma-separated test ids or parts of
# them, "!" before one to leave it out; passed on by vm.sh) runs just
# those, as in
#   SHCA_RDMA_CORE_CASES=test_cqex.,test_mr.MRTest KERNEL=stock \
#	make itest TEST=rdma_core_suite
# shca-timeout: 1500
# shca-long: the whole suite
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
src=$(dirname "$RDMA_CORE_BUILD")/src/tests
[ -f "$src/run_tests.py" ] || fail "no rdma-core test suite in $src"
[ -d "$RDMA_CORE_BUILD/python/pyverbs" ] ||
	fail "the rdma-core build has no pyverbs (is cython3 installed?)"

mkdummy shca_d0
ip addr add 10.11.0.1/24 dev shca_d0
rdma link add shca0 type shca netdev shca_d0
wait_for grep -q ffff:0a0b:0001 /sys/class/infiniband/shca0/ports/1/gids/3 ||
	fail "shca0 has no IPv4 GID"

# counts: shca0's PD, CQ, QP, MR, SRQ and context counts, by rdma res.
counts() {
	rdma res show | awk '$2 == "shca0:" { s = ""
		for (i = 3; i < NF; i += 2)
			if ($i ~ /^(pd|cq|qp|mr|srq|ctx)$/) s = s $i "=" $(i + 1) " "
		print s }'
}
before=$(counts)
[ -n "$before" ] || fail "rdma res shows nothing for shca0"

# A part of the suite says so: make check holds the manifest's rdma-core
# skips against a run of the whole suite only.
rm -f "$SHCA_OUT/rdma-core.part"
cases=()
if [ -n "${SHCA_RDMA_CORE_CASES:-}" ]; then
	IFS=, read -r -a cases <<<"$SHCA_RDMA_CORE_CASES"
elif [ "$SHCA_LONG" != 1 ]; then
	# 6.1's part; 6.12 runs the rest.
	cases=(test_cq. test_cqex. test_srq. test_qpex. test_mr. test_device.
		test_qp.)
	[ "$SHCA_KERNEL" = stock61 ] || cases=("${cases[@]/#/!}")
fi

[ ${#cases[@]} -eq 0 ] || echo "${cases[*]}" > "$SHCA_OUT/rdma-core.part"

# Some cases register memory from 2 MiB huge pages: give them a few.
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
[ ! -w $hp ] || echo 16 > $hp

report=$SHCA_OUT/rdma-core.ktap
rc=0
/usr/bin/python3 "$SHCA_TOP/tests/user/rdma_core_ktap.py" "$src" shca0 3 \
	"${cases[@]}" > "$report" || rc=$?
tail -n 1 "$report"
grep -q '^1\.\.' "$report" || fail "the suite did not start"
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$report")
[ "$(grep -cE '^(not )?ok ' "$report")" -eq "$planned" ] ||
	fail "the suite stopped short of its $planned cases"
[ $rc -eq 0 ] || fail "$(grep -c '^not ok ' "$report") cases failed"

# What ib_core and shca hold themselves (the GSI QP and its CQ, say) was
# there before the suite started; the suite must leave just that.
[ "$(counts)" = "$before" ] ||
	fail "the suite left objects behind: before '$before', after '$(counts)'"
[ ! -w $hp ] || echo 0 > $hp
echo ok
