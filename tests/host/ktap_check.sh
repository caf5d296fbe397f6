#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side self-test of ktap_check (tests/lib.sh), which the integration
# tests hold shca_uverbs_test's reports to: a sound report passes, with
# each case asked for; one that stops short of its plan, has a failed
# case, lacks a case asked for, plans nothing or puts a result before
# its version line fails.  Reports in KTAP and exits non-zero if any case
# failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
SHCA_TOP=$top
. "$top/tests/lib.sh"
set +e
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "KTAP version 1"
echo "1..6"
failed=0 n=0

# check NAME WANT REPORT [CASE...]: ktap_check on REPORT (printf's format)
# passes (WANT 0) or fails (WANT 1).
check() {
	local name=$1 want=$2 got=0
	n=$((n + 1))
	# shellcheck disable=SC2059 # the report is a printf format
	printf "$3" > "$tmp/$name"
	shift 3
	( ktap_check "$tmp/$name" "$@" ) > "$tmp/$name.out" 2>&1 || got=1
	if [ "$got" -eq "$want" ]; then
		echo "ok $n $name"
	else
		sed 's/^/# /' "$tmp/$name.out"
		echo "not ok $n $name"
		failed=1
	fi
}

check sound 0 'KTAP version 1\nok 1 a\n# chatter\nok 2 b\n1..2\n' a b
check stops_short 1 'KTAP version 1\nok 1 a\nok 2 b\n' a
check failed_case 1 'KTAP version 1\nok 1 a\nnot ok 2 b # why\n1..2\n'
check case_missing 1 'KTAP version 1\nok 1 a\n1..1\n' a c
check plan_zero 1 'KTAP version 1\n1..0\n'
check before_version 1 'ok 1 a\nKTAP version 1\n1..1\n'
exit $failed
