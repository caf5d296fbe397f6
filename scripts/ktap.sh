# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The one reader of test results, sourced by scripts/check.sh (and by its
# host self-test, tests/host/ktap.sh).  Every test program of shca reports
# in KTAP (Documentation/dev-tools/ktap.rst), flat:
#
#   KTAP version 1
#   1..N
#   ok 1 NAME
#   not ok 2 NAME # why
#   ok 3 NAME # SKIP why
#   # any other line beginning with "#" is a comment
#
# ktap_parse PREFIX FILE [STATUS] calls "record PREFIX+NAME PASS|FAIL|SKIP
# [WHY]" for each result at the top level (indented lines, a subtest's, are
# left to its own result line; WHY is a skip's reason, the text after
# "SKIP"), and turns into failures, named "PREFIX+ktap: ...", whatever
# makes the report unsound: no report, no version line, no plan, a plan of
# 0 (a filter that matched nothing), a result numbered out of order, fewer
# or more results than the plan, and a non-zero STATUS (the program's exit
# status) with no failed result to explain it.  A result whose directive is SKIP
# counts as skipped, ok or not ok.  Lines that are not KTAP (a program's
# chatter) are ignored.  The caller defines record(), which may keep its
# tallies in globals of any name but ktap_parse's own locals (prefix, file,
# status, line, version, plan, n, bad, ktap_failed, st, why): bash shows a
# function's locals to the functions it calls.  Returns non-zero if
# anything failed.

# ktap_line LINE: split one top-level result line into ktap_ok (ok|not ok),
# ktap_num, ktap_name and ktap_dir (the directive after " # ", if any).
# Returns non-zero if LINE is not a result line.
ktap_line() {
	local re='^(ok|not ok) ([0-9]+)( (.*))?$' rest
	[[ $1 =~ $re ]] || return 1
	ktap_ok=${BASH_REMATCH[1]}
	ktap_num=${BASH_REMATCH[2]}
	rest=${BASH_REMATCH[4]}
	ktap_name=${rest%% # *}
	ktap_name=${ktap_name%% #}
	ktap_name=${ktap_name#- }
	ktap_dir=
	[ "$ktap_name" = "$rest" ] || ktap_dir=${rest#* # }
	[ -n "$ktap_name" ] || ktap_name="#$ktap_num"
}

ktap_parse() {
	local prefix=$1 file=$2 status=${3:-0}
	local line version='' plan='' n=0 bad=0 ktap_failed=0 st why
	local plan_re='^1\.\.([0-9]+)$' version_re='^KTAP version [0-9]+$'

	if [ ! -s "$file" ]; then
		record "${prefix}ktap: no report" FAIL
		return 1
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		if [[ $line =~ $version_re ]]; then
			[ -n "$version" ] || version=$line
		elif [[ $line =~ $plan_re ]]; then
			if [ -n "$plan" ]; then
				record "${prefix}ktap: a second plan ($line)" FAIL
				bad=1
			fi
			plan=${BASH_REMATCH[1]}
		elif ktap_line "$line"; then
			n=$((n + 1))
			if [ "$ktap_num" -ne "$n" ]; then
				record "${prefix}ktap: result $ktap_num where $n was due" FAIL
				bad=1
			fi
			why=
			if [[ ${ktap_dir^^} == SKIP* ]]; then
				st=SKIP
				why=${ktap_dir:4}
				why=${why# }
			elif [ "$ktap_ok" = ok ]; then
				st=PASS
			else
				st=FAIL
				ktap_failed=1
			fi
			record "$prefix$ktap_name" "$st" "$why"
		fi
	done < "$file"
	if [ -z "$version" ]; then
		record "${prefix}ktap: no KTAP version line" FAIL
		bad=1
	fi
	if [ -z "$plan" ]; then
		record "${prefix}ktap: no plan" FAIL
		bad=1
	elif [ "$plan" -eq 0 ]; then
		record "${prefix}ktap: plan 0, nothing ran" FAIL
		bad=1
	elif [ "$n" -ne "$plan" ]; then
		record "${prefix}ktap: $plan results planned, $n reported" FAIL
		bad=1
	fi
	if [ "$status" -ne 0 ] && [ $ktap_failed -eq 0 ]; then
		record "${prefix}ktap: exit status $status with no failed result" FAIL
		bad=1
	fi
	[ $bad -eq 0 ] && [ $ktap_failed -eq 0 ]
}
