#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side self-test of scripts/kunit-results.sh: KUnit results must not
# drop out of the count.  A module of two suites (alpha: three cases, one
# of them parameterized; beta: two; and shared_helper.o, built from another
# directory as tests/kmod/common/shca_ktest_qp.o is, with no suite) and
# console logs of runs of it, whole and broken in each way a run breaks;
# each broken one must give a failed "kunit-plan:" result, the whole one
# none, and every report must be sound KTAP to scripts/ktap.sh.  Reports
# in KTAP and exits non-zero if any case failed.
set -uo pipefail
# The parser narrows by $SUITE unless told otherwise; here it is told.
unset SUITE
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/src"
cat > "$tmp/src/Kbuild" <<'EOF'
obj-m += shca_kunit.o
shca_kunit-y := main.o alpha_test.o shared_helper.o \
	beta_test.o
EOF
cat > "$tmp/src/alpha_test.c" <<'EOF'
static struct kunit_case alpha_cases[] = {
	KUNIT_CASE(a_one),
	KUNIT_CASE_PARAM(a_two, a_gen_params),
	KUNIT_CASE(a_three),
	{}
};

static struct kunit_suite alpha_suite = {
	.name = "alpha",
	.test_cases = alpha_cases,
};

kunit_test_suite(alpha_suite);
EOF
cat > "$tmp/src/beta_test.c" <<'EOF'
static struct kunit_case beta_cases[] = {
	KUNIT_CASE(b_one),
	KUNIT_CASE_ATTR(b_two, { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite beta_suite = {
	.name = "beta",
	.test_cases = beta_cases,
};

kunit_test_suites(&beta_suite);
EOF
: > "$tmp/src/main.c"

# A whole run, as the guest's console shows it.
whole() {
	cat <<'EOF'
[    5.000000] shca-kunit: begin
[    5.100000] KTAP version 1
[    5.100001] 1..2
[    5.100002]     KTAP version 1
[    5.100003]     # Subtest: alpha
[    5.100004]     # module: shca_kunit
[    5.100005]     1..3
[    5.200000]     ok 1 a_one
[    5.200001]         KTAP version 1
[    5.200002]         # Subtest: a_two
[    5.200003]         ok 1 p0
[    5.200004]         ok 2 p1
[    5.200005]     # a_two: pass:2 fail:0 skip:0 total:2
[    5.200006]     ok 2 a_two
[    5.300000]     ok 3 a_three
[    5.300001] # alpha: pass:3 fail:0 skip:0 total:3
[    5.300002] # Totals: pass:4 fail:0 skip:0 total:4
[    5.300003] ok 1 alpha
[    5.400000]     KTAP version 1
[    5.400001]     # Subtest: beta
[    5.400002]     # module: shca_kunit
[    5.400003]     1..2
[    5.400004]     ok 1 b_one
[    5.400005]     ok 2 b_two
[    5.400006] # beta: pass:2 fail:0 skip:0 total:2
[    5.400007] # Totals: pass:2 fail:0 skip:0 total:2
[    5.400008] ok 2 beta
[    6.000000] shca-kunit: end
EOF
}

. "$top/scripts/ktap.sh"
# "LOG | check ..." runs check in this shell, so its results count.
shopt -s lastpipe

echo "KTAP version 1"
echo "1..14"
failed=0 n=0
# result NAME STATUS [DETAILS]: the next KTAP result.
result() {
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $n $1"
	else
		[ -z "${3:-}" ] || sed 's/^/# /' <<<"$3"
		echo "not ok $n $1"
		failed=1
	fi
}

# What ktap_parse makes of a report: one "STATUS NAME" line per record.
record() {
	echo "$2 $1"
}

# check NAME WANT [OPTIONS]: feed the log on stdin to kunit-results.sh;
# WANT is an extended regular expression a failed result must match, or
# "none" for no failed result and at least one passed.
check() {
	local name=$1 want=$2 out fails st
	shift 2
	mkdir -p "$tmp/$name"
	cat > "$tmp/$name/console.log"
	"$top/scripts/kunit-results.sh" --sources "$tmp/src" "$@" \
		"$tmp/$name/console.log" > "$tmp/$name/ktap" 2>"$tmp/$name/stderr"
	out=$(ktap_parse "" "$tmp/$name/ktap" $?)
	fails=$(sed -n 's/^FAIL //p' <<<"$out")
	if [ "$want" = none ]; then
		[ -z "$fails" ] && grep -q '^PASS' <<<"$out"
	else
		grep -qE -- "^kunit-plan: .*$want" <<<"$fails" &&
			! grep -q '^ktap:' <<<"$fails"
	fi
	st=$?
	result "$name" $st "$out"
}

# The run of beta alone.
only_beta() {
	whole | sed -e 's/^\(\[[ 0-9.]*\]\) 1\.\.2$/\1 1..1/' \
		-e '/ 5\.10000[2-5]\]/d' -e '/ 5\.[23]/d' \
		-e 's/ok 2 beta/ok 1 beta/'
}

whole | check whole_run none
only_beta | check glob_of_one_suite none --suite 'b*'
# The guest died in beta's second case: no result, no end marker.
whole | sed '/ok 2 b_two/,$d' |
	check truncated_in_a_suite '2 suites declared, 1 reported'
whole | sed '/ok 2 b_two/,$d' |
	check truncated_names_the_suite 'beta: 2 cases declared, 1 reported'
whole | sed '/ok 2 b_two/,$d' |
	check truncated_has_no_end 'did not finish'
# alpha never registered: the module's own plan agrees, the sources do not.
only_beta | check suite_never_ran 'alpha: in the module.s sources, never ran'
# alpha's suite_init failed: its result, and no header, plan or case.
whole | grep -v -e ' 5\.10000[2-5]\]' -e ' 5\.2' -e ' 5\.30000[0-2]\]' |
	sed 's/ok 1 alpha/not ok 1 alpha/' |
	check suite_init_failed 'alpha: no plan'
# A case lost between the plan and the suite's result.
whole | sed '/ok 3 a_three/d' |
	check case_lost 'alpha: 3 cases declared, 2 reported'
# The module is stale: it has a case the sources no longer list.
whole | sed 's/^\(\[ *5\.100005\]\)     1\.\.3/\1     1..4/' |
	check stale_module 'alpha: the sources have 3 cases, the module 4'
# A suite the glob does not select ran anyway.
whole | check unexpected_suite 'alpha: ran, but is not in the sources' \
	--suite 'b*'
# One suite per file, named after it.
cp -r "$tmp/src" "$tmp/src_two"
cat >> "$tmp/src_two/beta_test.c" <<'EOF'

static struct kunit_suite gamma_suite = {
	.name = "gamma",
	.test_cases = beta_cases,
};

kunit_test_suite(gamma_suite);
EOF
whole | check two_suites_in_a_file 'beta_test.c: holds 2 suites' \
	--sources "$tmp/src_two"
cp -r "$tmp/src" "$tmp/src_name"
sed -i 's/"beta"/"bravo"/' "$tmp/src_name/beta_test.c"
whole | sed 's/beta/bravo/' |
	check suite_named_unlike_its_file 'suite bravo, the file.s name wants beta' \
	--sources "$tmp/src_name"
cp -r "$tmp/src" "$tmp/src_main"
cp "$tmp/src/beta_test.c" "$tmp/src_main/main.c"
: > "$tmp/src_main/beta_test.c"
whole | check suite_outside_a_test_file 'main.c: holds a suite, but is not named' \
	--sources "$tmp/src_main"
# No report at all is an error, not an empty pass.
mkdir -p "$tmp/empty"
echo "[    1.0] shca-kunit: begin" > "$tmp/empty/console.log"
! "$top/scripts/kunit-results.sh" --sources "$tmp/src" \
	"$tmp/empty/console.log" > "$tmp/empty/ktap" 2>"$tmp/empty/stderr" &&
	[ "$(ktap_parse "" "$tmp/empty/ktap" 1)" = "FAIL ktap: no report" ]
result no_report $? "$(cat "$tmp/empty/ktap" "$tmp/empty/stderr")"
exit $failed
