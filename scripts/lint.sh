#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Style checks of the C sources, with the kernel's own tools: checkpatch
# --strict, kernel-doc -Wall and sparse (through a C=2 build against the
# debug kernel), and that the release number agrees wherever it stands
# (scripts/check-version.sh); shellcheck of every shell script; the
# documentation (Sphinx, the kernel-doc directives, the architecture
# picture, the README's length); and that no two files of the model, of
# the verbs layer or of libshca call each other (scripts/call-graph.py,
# from the objects' symbols), nor the model the verbs layer.  libshca and the userspace tests are checked with
# checkpatch too, but keep userspace C types and errno values; libshca
# must also compile clean with -Wall -Wextra -Werror (build-user.sh).
# Reports in KTAP: the plan, then "ok N NAME" or "not ok N NAME" per check,
# each check's findings as "#" lines before its result; exits non-zero if
# any check fails.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

src=$(shca_srcdir)
[ -x "$src/scripts/checkpatch.pl" ] || "$SHCA_TOP/scripts/build-kernel.sh" >/dev/null
cd "$SHCA_TOP" || exit 1
files=$(git ls-files '*.c' '*.h' 2>/dev/null)
[ -n "$files" ] || files=$(find drivers include tests/kunit tests/kmod -name '*.[ch]' 2>/dev/null)
rc=0 n=0 notes=

echo "KTAP version 1"
echo "1..7"

# say TEXT...: a finding, printed as a KTAP comment before the result.
say() {
	notes+="$*"$'\n'
}

# report NAME PASS|FAIL: the next result, after the check's findings.
report() {
	n=$((n + 1))
	[ -z "$notes" ] || sed -e '/^$/d' -e 's/^/# /' <<<"$notes"
	notes=
	if [ "$2" = PASS ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		rc=1
	fi
}

# checkpatch ARGS...: run checkpatch --strict, terse, on ARGS; print its
# findings.  Fails if it found anything, and if it did not run as it
# should: an exit status other than 0 or 1, or output that is neither a
# finding nor its summary (a missing file only makes it say so).
issue=': (ERROR|WARNING|CHECK):'
checkpatch() {
	local out st
	out=$(perl "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types "$@" 2>&1)
	st=$?
	if [ $st -gt 1 ] ||
	   grep -vqE -e "$issue" -e '^total: [0-9]+ errors' -e '^$' <<<"$out" ||
	   { [ $st -eq 1 ] && ! grep -qE -- "$issue" <<<"$out"; }; then
		echo "checkpatch did not run (exit status $st):"
		echo "$out"
		return 1
	fi
	grep -E -- "$issue" <<<"$out"
	[ $st -eq 0 ]
}

# Userspace code (libshca, the userspace tests) keeps rdma-core's ways:
# C types and positive errno values.
kfiles=$(grep -vE '^(providers|tests/user)/' <<<"$files")
ufiles=$(grep -E '^(providers|tests/user)/' <<<"$files")
# It must catch what it is there to catch: a planted defect first.
canary=$(mktemp --suffix=.c)
trap 'rm -f "$canary"' EXIT
printf '// SPDX-License-Identifier: GPL-2.0\nint  x ;\n' > "$canary"
if [ -z "$kfiles" ]; then
	say "no kernel sources to check"
	report checkpatch FAIL
elif out=$(checkpatch -f "$canary") ||
     ! grep -q ':SPACING:' <<<"$out"; then
	say "$out"
	say "checkpatch does not find a planted defect: it does not work"
	report checkpatch FAIL
else
	st=0
	# shellcheck disable=SC2086 # one file name a word
	out=$(checkpatch --ignore FILE_PATH_CHANGES -f $kfiles) || st=1
	say "$out"
	if [ -n "$ufiles" ]; then
		# shellcheck disable=SC2086 # one file name a word
		out=$(checkpatch --ignore FILE_PATH_CHANGES,PREFER_KERNEL_TYPES,USE_NEGATIVE_ERRNO \
			-f $ufiles) || st=1
		say "$out"
	fi
	if [ $st -eq 0 ]; then report checkpatch PASS; else report checkpatch FAIL; fi
fi

# shellcheck disable=SC2086 # one file name a word
out=$(perl "$src/scripts/kernel-doc" -none -Wall $files 2>&1)
st=$?
if [ -z "$out" ] && [ $st -eq 0 ]; then
	report kernel-doc PASS
else
	say "$out"
	say "kernel-doc: exit status $st"
	report kernel-doc FAIL
fi

# Shell scripts: shellcheck's warnings and errors (its style notes, such
# as a variable left unquoted because it is meant to split, are the
# reviewer's call), each disable in a script with its reason beside it;
# and no pipeline into grep -q, which pipefail turns into a failure when
# grep stops reading at its first match (testing.rst).  A "bash -c"
# string runs in a shell without pipefail.  A planted defect first.
shca_need_pkgs shellcheck
shfiles=$(git ls-files '*.sh' .ci/run 2>/dev/null)
printf '#!/bin/bash\ncd /nonexistent\n' > "$canary"
if ! command -v shellcheck >/dev/null; then
	say "no shellcheck"
	report shellcheck FAIL
elif out=$(shellcheck -S warning -f gcc "$canary" 2>&1) ||
     ! grep -q 'SC2164' <<<"$out"; then
	say "$out"
	say "shellcheck does not find a planted defect: it does not work"
	report shellcheck FAIL
elif [ -z "$shfiles" ]; then
	say "no shell scripts to check"
	report shellcheck FAIL
else
	st=0
	# shellcheck disable=SC2086 # one file name a word
	out=$(shellcheck -x -S warning -f gcc $shfiles 2>&1) || st=1
	say "$out"
	# shellcheck disable=SC2086 # one file name a word
	out=$(grep -nE '\|[[:space:]]*grep[[:space:]]+(-[a-zA-Z]*q|--quiet)' \
		$shfiles | grep -v 'bash -c "')
	if [ -n "$out" ]; then
		say "$out"
		say "a pipeline into grep -q: use grep -q PATTERN <<<\"\$(CMD)\""
		st=1
	fi
	# shellcheck disable=SC2086 # one file name a word
	out=$(grep -nE '# shellcheck disable=[A-Z0-9,]+[[:space:]]*$' $shfiles)
	if [ -n "$out" ]; then
		say "$out"
		say "a shellcheck disable without its reason on the line"
		st=1
	fi
	if [ $st -eq 0 ]; then report shellcheck PASS; else report shellcheck FAIL; fi
fi

if out=$("$SHCA_TOP/scripts/check-version.sh" 2>&1); then
	report versions PASS
else
	say "$out"
	report versions FAIL
fi

# Documentation: the pages build with Sphinx without a warning (so every
# page is in index.rst's toctree), every kernel-doc directive finds its
# DOC section (kernel-doc says so on stderr, which Sphinx passes through
# without failing: any output at all fails), the architecture picture is
# what its .dot file makes, and the README stays within 180 lines.  A
# planted directive naming no section first.
shca_need_pkgs graphviz python3-sphinx
docs=$(mktemp -d)
trap 'rm -f "$canary"; rm -rf "$docs"' EXIT
mkdir "$docs/canary"
cp Documentation/conf.py "$docs/canary/"
printf 'Canary\n======\n\n.. kernel-doc:: %s\n   :doc: No such section\n' \
	providers/shca/shca.h > "$docs/canary/index.rst"
sphinx() {
	SHCA_TOP=$SHCA_TOP SHCA_KERNEL_SRC=$src \
		sphinx-build -q -W -b html "$1" "$2" 2>&1
}
if ! out=$(sphinx "$docs/canary" "$docs/canary-html") ||
   ! grep -q 'No such section' <<<"$out"; then
	say "$out"
	say "a kernel-doc directive naming no section goes unnoticed"
	report docs FAIL
else
	st=0
	out=$(sphinx Documentation "$docs/html") || st=1
	if [ -n "$out" ]; then
		say "$out"
		st=1
	fi
	dot -Tsvg Documentation/images/architecture.dot -o "$docs/arch.svg"
	if ! cmp -s "$docs/arch.svg" Documentation/images/architecture.svg; then
		say "architecture.svg is not what architecture.dot makes: make docs"
		st=1
	fi
	lines=$(wc -l < README.md)
	if [ "$lines" -gt 180 ]; then
		say "README.md has $lines lines, more than 180"
		st=1
	fi
	if [ $st -eq 0 ]; then report docs PASS; else report docs FAIL; fi
fi

# In a directory of its own: make check runs lint beside the debug guest,
# which loads the modules of out/build-debug/.
shca_need_pkgs sparse
kbuild=$SHCA_TOP/out/lint-build
if out=$(SHCA_MODULE_OUT=$kbuild "$SHCA_TOP/scripts/build-module.sh" debug C=2 2>&1); then
	report sparse PASS
else
	say "$(grep -E 'warning|error' <<<"$out" | head -n 40)"
	report sparse FAIL
fi
# Calls run one way: no two files of a layer call each other, directly or
# round a cycle, and the model calls nothing of the verbs layer; read off
# the objects sparse's build just made and libshca's (rdma-core's build is
# incremental, and leaves alone what has not changed: a guest may be
# using it).  A planted cycle first: two objects that need each other.
kobj=$kbuild/drivers/infiniband/sw/shca
uobj=
if rbuild=$("$SHCA_TOP/scripts/build-rdma-core.sh" 2>/dev/null); then
	uobj=$rbuild/providers/shca/CMakeFiles/shca-rdmav34.dir
fi
printf 'void b(void);\nvoid a(void) { b(); }\n' > "$docs/a.c"
printf 'void a(void);\nvoid b(void) { a(); }\n' > "$docs/b.c"
if ! gcc -c -o "$docs/a.o" "$docs/a.c" || ! gcc -c -o "$docs/b.o" "$docs/b.c" ||
   "$SHCA_TOP/scripts/call-graph.py" canary "$docs/a.o" "$docs/b.o" >/dev/null; then
	say "call-graph.py does not find a planted cycle"
	report calls FAIL
elif [ ! -d "$kobj/hw" ] || [ -z "$uobj" ] || [ ! -d "$uobj" ]; then
	say "no objects to read: the module or libshca did not build"
	report calls FAIL
else
	# The objects of the sources in the tree, none left from older ones.
	st=0 hobj=() vobj=() pobj=()
	d=drivers/infiniband/sw/shca
	for f in "$d"/hw/*.c; do hobj+=("$kobj/hw/$(basename "$f" .c).o"); done
	for f in "$d"/*.c; do
		[ "$f" = "$d/shca_odp.c" ] && [ ! -f "$kobj/shca_odp.o" ] && continue
		vobj+=("$kobj/$(basename "$f" .c).o")
	done
	for f in providers/shca/*.c; do pobj+=("$uobj/$(basename "$f").o"); done
	out=$("$SHCA_TOP/scripts/call-graph.py" model "${hobj[@]}" -- "${vobj[@]}") ||
		st=1
	[ $st -eq 0 ] || say "$(grep -v ' -> ' <<<"$out")"
	if ! out=$("$SHCA_TOP/scripts/call-graph.py" "verbs layer" "${vobj[@]}"); then
		say "$(grep -v ' -> ' <<<"$out")"
		st=1
	fi
	if ! out=$("$SHCA_TOP/scripts/call-graph.py" libshca "${pobj[@]}"); then
		say "$(grep -v ' -> ' <<<"$out")"
		st=1
	fi
	if [ $st -eq 0 ]; then report calls PASS; else report calls FAIL; fi
fi
exit $rc
