#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side self-test of scripts/ktap.sh, the one reader of every test
# program's results: sound reports are counted as they say, and each way a
# report breaks (results missing, too many, no plan, no version line,
# numbers out of order, a plan of 0, an exit status nothing explains, no
# report at all)
# is a failure, and the caller's own tallies see every result.  Reports in KTAP and exits non-zero if any case failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/ktap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "KTAP version 1"
echo "1..15"
failed=0 n=0

# What ktap_parse makes of a report: one "STATUS NAME" line per record.
record() {
	echo "$2 $1${3:+ ($3)}"
}

# check NAME STATUS WANT: parse the report on stdin, as a program that
# exited with STATUS; WANT is what record() must have been called with,
# every call, in order, one per line.
check() {
	local name=$1 status=$2 want=$3 got
	n=$((n + 1))
	cat > "$tmp/$name"
	got=$(ktap_parse "p: " "$tmp/$name" "$status")
	if [ "$got" = "$want" ]; then
		echo "ok $n $name"
	else
		echo "# wanted:"
		sed 's/^/#   /' <<<"$want"
		echo "# got:"
		sed 's/^/#   /' <<<"$got"
		echo "not ok $n $name"
		failed=1
	fi
}

check sound 1 'PASS p: one
FAIL p: two
SKIP p: three (not on this kernel)
SKIP p: four' <<'EOF'
KTAP version 1
1..4
chatter that is not KTAP
ok 1 one
# a comment
# two: why it failed
not ok 2 two
ok 3 three # SKIP not on this kernel
not ok 4 four # SKIP
EOF
check plan_at_the_end 0 'PASS p: one' <<'EOF'
KTAP version 1
ok 1 one
1..1
EOF
check subtests_count_once 0 'PASS p: suite
PASS p: other' <<'EOF'
KTAP version 1
1..2
    KTAP version 1
    1..2
    ok 1 case_a
    not ok 2 case_b # SKIP
ok 1 suite
ok 2 other
EOF
check diagnostic_is_not_a_skip 0 'FAIL p: one' <<'EOF'
KTAP version 1
1..1
not ok 1 one # exit status 3
EOF
check crlf_lines 0 'PASS p: one' < <(printf 'KTAP version 1\r\n1..1\r\nok 1 one\r\n')
check result_missing 0 'PASS p: one
FAIL p: ktap: 2 results planned, 1 reported' <<'EOF'
KTAP version 1
1..2
ok 1 one
EOF
check result_extra 0 'PASS p: one
PASS p: two
FAIL p: ktap: 1 results planned, 2 reported' <<'EOF'
KTAP version 1
1..1
ok 1 one
ok 2 two
EOF
check no_plan 0 'PASS p: one
FAIL p: ktap: no plan' <<'EOF'
KTAP version 1
ok 1 one
EOF
check plan_zero 0 'FAIL p: ktap: plan 0, nothing ran' <<'EOF'
KTAP version 1
1..0
EOF
check no_version_line 0 'PASS p: one
FAIL p: ktap: no KTAP version line' <<'EOF'
1..1
ok 1 one
EOF
check out_of_order 0 'PASS p: one
FAIL p: ktap: result 3 where 2 was due
PASS p: three' <<'EOF'
KTAP version 1
1..2
ok 1 one
ok 3 three
EOF
check status_unexplained 2 'PASS p: one
FAIL p: ktap: exit status 2 with no failed result' <<'EOF'
KTAP version 1
1..1
ok 1 one
EOF
check status_explained 1 'FAIL p: one' <<'EOF'
KTAP version 1
1..1
not ok 1 one
EOF
check no_report 0 'FAIL p: ktap: no report' < /dev/null

# The caller's tallies: make check's record() counts into globals named
# passed, failed and skipped, and ktap_parse must not hide any of them
# behind a local of its own (bash's locals are seen by the functions a
# function calls).
n=$((n + 1))
printf 'KTAP version 1\n1..3\nok 1 a\nnot ok 2 b\nok 3 c # SKIP\n' > "$tmp/tally"
tally=$(
	passed=0 failed=0 skipped=0
	record() {
		case "$2" in
		PASS) passed=$((passed + 1)) ;;
		SKIP) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	}
	ktap_parse "p: " "$tmp/tally" 1
	echo "$passed $failed $skipped"
)
if [ "$tally" = "1 1 1" ]; then
	echo "ok $n caller_tallies"
else
	echo "# wanted 1 passed, 1 failed, 1 skipped; the caller counted: $tally"
	echo "not ok $n caller_tallies"
	failed=1
fi
exit $failed
