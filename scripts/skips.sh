# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The expected skips, sourced by scripts/check.sh (and by its host
# self-test, tests/host/skips.sh).  tests/skips/KERNEL lists the skips make
# check expects on that kernel, one per line, "SOURCE NAME WHY": SOURCE is
# itest (an integration test), rdma-core (a case of rdma-core's suite) or
# kunit (debug only); NAME and WHY (the rest of the line: the skip's
# reason) are bash patterns.  Blank lines and lines beginning with "#"
# (which say why the skip is right) are ignored.
#
# skips_load [DIR] reads the manifests (DIR: tests/skips); skip_judge NAME
# STATUS [WHY] judges one result, as make check names it ("itest/K: T",
# "rdma-core/K: T", "kunit: T"), into j_name and j_status: an unlisted
# skip, or a listed one that ran, becomes a failure; skips_unused SUITE
# ITEST calls "record NAME FAIL" for each line that took no skip, where
# the tests of its kind all ran (SUITE and ITEST are the KUnit and
# integration test globs of the run, "*" for all).

skip_kernel=() skip_src=() skip_name=() skip_why=() skip_hits=()
declare -A skip_ran=()
skips_load() {
	local dir=${1:-$SHCA_TOP/tests/skips} f k src name why
	for f in "$dir"/*; do
		k=${f##*/}
		shca_kernel_ok "$k" || shca_die "skips: $f names no kernel"
		while read -r src name why; do
			[[ -z $src || $src == \#* ]] && continue
			[[ " itest rdma-core kunit " == *" $src "* ]] && [ -n "$why" ] ||
				shca_die "skips: $f: bad line: $src $name $why"
			skip_kernel+=("$k") skip_src+=("$src") skip_name+=("$name")
			skip_why+=("$why") skip_hits+=(0)
		done < "$f"
	done
}

# skip_split NAME: the source, kernel and test of a result's name, in
# r_src, r_k and r_test; r_src is empty for a result of no guest's test.
skip_split() {
	local re='^(itest|rdma-core)/([a-z0-9]+): (.*)$'
	r_src='' r_k='' r_test=''
	if [[ $1 =~ $re ]]; then
		r_src=${BASH_REMATCH[1]} r_k=${BASH_REMATCH[2]}
		r_test=${BASH_REMATCH[3]}
	elif [[ $1 == "kunit: "* ]]; then
		r_src=kunit r_k=debug r_test=${1#kunit: }
	fi
}

# skip_listed: the index of the manifest line that takes r_src, r_k,
# r_test skipping for WHY ($1); with no WHY, of a line naming r_test
# exactly.  Fails if none does.
skip_listed() {
	local i
	for i in "${!skip_src[@]}"; do
		[ "${skip_src[$i]}" = "$r_src" ] && [ "${skip_kernel[$i]}" = "$r_k" ] ||
			continue
		if [ $# -gt 0 ]; then
			# shellcheck disable=SC2053 # the manifest's fields are patterns
			[[ $r_test == ${skip_name[$i]} && $1 == ${skip_why[$i]} ]] ||
				continue
		else
			[ "$r_test" = "${skip_name[$i]}" ] || continue
		fi
		echo "$i"
		return 0
	done
	return 1
}

# skip_judge NAME STATUS [WHY]: see above; j_name and j_status are the
# caller's (its locals, as record() has them).
# shellcheck disable=SC2034 # j_name and j_status are the caller's
skip_judge() {
	local i
	j_name=$1 j_status=$2
	skip_split "$1"
	[ -z "$r_src" ] || skip_ran[$r_k/$r_src]=1
	if [ "$2" = SKIP ]; then
		if [ -n "$r_src" ] && i=$(skip_listed "${3:-}"); then
			skip_hits[i]=$((skip_hits[i] + 1))
		else
			j_name="$1: a skip no tests/skips manifest expects (${3:-no reason})"
			j_status=FAIL
		fi
	elif [ -n "$r_src" ] && skip_listed > /dev/null; then
		j_name="$1: ran, but tests/skips/$r_k lists it as a skip ($2)"
		j_status=FAIL
	fi
}

# skips_unused SUITE ITEST: see above.
skips_unused() {
	local i k src
	for i in "${!skip_src[@]}"; do
		k=${skip_kernel[$i]} src=${skip_src[$i]}
		[ "${skip_hits[$i]}" -eq 0 ] && [ -n "${skip_ran[$k/$src]:-}" ] ||
			continue
		case $src in
		kunit) [ "$1" = '*' ] || continue ;;
		*) [ "$2" = '*' ] || continue ;;
		esac
		record "skips/$k: $src ${skip_name[$i]} (${skip_why[$i]}) skipped nowhere" FAIL
	done
}
