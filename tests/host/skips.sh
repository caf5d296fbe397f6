#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side self-test of scripts/skips.sh, make check's judge of skips: a
# listed skip for its listed reason passes as a skip; a skip for another
# reason, an unlisted one, a skip with no reason, and a listed test that
# ran are failures; a manifest line that took no skip is reported, but
# only where every test of its kind ran.  Reports in KTAP and exits
# non-zero if any case failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
SHCA_TOP=$top
. "$top/scripts/lib.sh"
. "$top/scripts/skips.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "KTAP version 1"
echo "1..10"
failed=0 n=0

cat > "$tmp/stock" <<'EOM'
# a comment
itest fault_* no failslab (CONFIG_FAILSLAB)
rdma-core test_odp.Odp.test_xrc ODP is unavailable
rdma-core test_mlx5_* *
kunit shca_never.case never
EOM
skips_load "$tmp"

# check NAME WANT RESULT...: skip_judge's j_status and j_name for RESULT.
check() {
	local name=$1 want=$2 j_name j_status
	shift 2
	n=$((n + 1))
	skip_judge "$@"
	if [ "$j_status $j_name" = "$want" ]; then
		echo "ok $n $name"
	else
		echo "# wanted: $want"
		echo "# got:    $j_status $j_name"
		echo "not ok $n $name"
		failed=1
	fi
}

check listed_skip 'SKIP itest/stock: fault_cmd' \
	'itest/stock: fault_cmd' SKIP 'no failslab (CONFIG_FAILSLAB)'
check listed_any_reason 'SKIP rdma-core/stock: test_mlx5_dr.X.y' \
	'rdma-core/stock: test_mlx5_dr.X.y' SKIP 'anything at all'
check other_reason 'FAIL rdma-core/stock: test_odp.Odp.test_xrc: a skip no tests/skips manifest expects (Operation not supported)' \
	'rdma-core/stock: test_odp.Odp.test_xrc' SKIP 'Operation not supported'
check unlisted 'FAIL rdma-core/stock: test_cq.A.b: a skip no tests/skips manifest expects (Extended CQ is not supported)' \
	'rdma-core/stock: test_cq.A.b' SKIP 'Extended CQ is not supported'
check no_reason 'FAIL itest/stock: fault_cmd: a skip no tests/skips manifest expects (no reason)' \
	'itest/stock: fault_cmd' SKIP
check other_kernel 'FAIL itest/debug: fault_cmd: a skip no tests/skips manifest expects (no failslab (CONFIG_FAILSLAB))' \
	'itest/debug: fault_cmd' SKIP 'no failslab (CONFIG_FAILSLAB)'
check listed_but_ran 'FAIL rdma-core/stock: test_odp.Odp.test_xrc: ran, but tests/skips/stock lists it as a skip (PASS)' \
	'rdma-core/stock: test_odp.Odp.test_xrc' PASS
check host_skip 'FAIL lint: foo: a skip no tests/skips manifest expects (why)' \
	'lint: foo' SKIP why

# record NAME STATUS: what skips_unused reports.
record() {
	echo "$2 $1"
}
n=$((n + 1))
got=$(skips_unused '*' '*')
want='FAIL skips/stock: rdma-core test_odp.Odp.test_xrc (ODP is unavailable) skipped nowhere'
if [ "$got" = "$want" ]; then
	echo "ok $n unused_line_reported"
else
	echo "# got: $got"
	echo "not ok $n unused_line_reported"
	failed=1
fi
# A run of some integration tests only, and no KUnit at all, judges no
# line: the ones it did not run may well skip.
n=$((n + 1))
got=$(skips_unused '*' 'user_*')
if [ -z "$got" ]; then
	echo "ok $n partial_run_judges_no_line"
else
	echo "# got: $got"
	echo "not ok $n partial_run_judges_no_line"
	failed=1
fi
exit $failed
