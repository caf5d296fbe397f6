#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Style checks of the C sources, with the kernel's own tools: checkpatch
# --strict, kernel-doc -Wall and sparse (through a C=1 build against the
# debug kernel).  libshca and the userspace tests are checked with
# checkpatch too, but keep userspace C types and errno values; libshca
# must also compile clean with -Wall -Wextra -Werror (build-user.sh).  Prints "lint: NAME PASS|FAIL" per check and
# exits non-zero if any fails.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

src=$(shca_srcdir)
[ -x "$src/scripts/checkpatch.pl" ] || "$SHCA_TOP/scripts/build-kernel.sh" >/dev/null
cd "$SHCA_TOP"
files=$(git ls-files '*.c' '*.h' 2>/dev/null)
[ -n "$files" ] || files=$(find drivers kunit include -name '*.[ch]' 2>/dev/null)
rc=0

report() {
	echo "lint: $1 $2"
	[ "$2" = PASS ] || rc=1
}

# Userspace code (libshca, the userspace tests) keeps rdma-core's ways:
# C types and positive errno values.
kfiles=$(echo "$files" | grep -vE '^(providers|tests)/')
ufiles=$(echo "$files" | grep -E '^(providers|tests)/')
# shellcheck disable=SC2086
out=$( (perl "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
	--show-types --ignore FILE_PATH_CHANGES -f $kfiles
	[ -z "$ufiles" ] || perl "$src/scripts/checkpatch.pl" --strict \
	--no-tree --terse --show-types \
	--ignore FILE_PATH_CHANGES,PREFER_KERNEL_TYPES,USE_NEGATIVE_ERRNO \
	-f $ufiles) 2>&1 | grep -E ': (ERROR|WARNING|CHECK):')
if [ -z "$out" ]; then report checkpatch PASS; else echo "$out"; report checkpatch FAIL; fi

# shellcheck disable=SC2086
out=$(perl "$src/scripts/kernel-doc" -none -Wall $files 2>&1)
if [ -z "$out" ]; then report kernel-doc PASS; else echo "$out"; report kernel-doc FAIL; fi

shca_need_pkgs sparse
if out=$("$SHCA_TOP/scripts/build-module.sh" debug C=1 2>&1); then
	report sparse PASS
else
	echo "$out" | grep -E 'warning|error' | head -n 40
	report sparse FAIL
fi
exit $rc
