#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build shca.ko (and shca_kunit.ko where the kernel has KUnit) for one of
# the test kernels, in out/build-<kernel>/ so that the two builds never
# share objects.  The build is incremental: the sources are synced into
# that directory (a file copied only where it changed, one gone from the
# tree removed), and make rebuilds what changed.  A build with a warning
# fails and is thrown away whole, so that the next one compiles, and
# warns, again.  The log is out/build-<kernel>.log.
#
#   build-module.sh debug|stock|stock61 [extra make arguments, e.g. C=2]
#   SHCA_MODULE_OUT=DIR   build in DIR instead (lint's own build, which
#                         make check runs beside a guest that loads the
#                         modules of out/build-<kernel>/)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=$1
shift
case "$kernel" in
debug) kdir=$("$SHCA_TOP/scripts/build-kernel.sh") ;;
stock|stock61)
	kdir=$("$SHCA_TOP/scripts/fetch-stock.sh" "$kernel")/usr/src/linux-headers-$(shca_stock_release "$kernel")
	;;
*) shca_die "build-module.sh: kernel must be debug, stock or stock61" ;;
esac

shca_need_pkgs rsync
b=${SHCA_MODULE_OUT:-$SHCA_TOP/out/build-$kernel}
log=$b.log
mkdir -p "$b/tests"
# The sources, and only they: whatever else is in $b, the build made.
srcs=(--include='*/' --include='*.[ch]' --include=Kbuild --include='*.sh'
	--exclude='*.mod.c' --exclude='*')
rsync -a --delete "${srcs[@]}" "$SHCA_TOP/Kbuild" "$SHCA_TOP/drivers" \
	"$SHCA_TOP/include" "$b/"
rsync -a --delete "${srcs[@]}" "$SHCA_TOP/tests/kunit" "$SHCA_TOP/tests/kmod" \
	"$SHCA_TOP/tests/vectors" "$b/tests/"
shca_log "building shca for the $kernel kernel"
st=0
make -s -C "$kdir" M="$b" W=1 "$@" modules > "$log" 2>&1 || st=$?
cat "$log" >&2
# Warnings fail the build: the driver compiles clean.  (Not a pipe into a
# grep that may stop at the first line: under pipefail the writer's
# SIGPIPE would pass the build.)
if [ $st -ne 0 ] ||
   [ -n "$(grep -E 'warning:|error:' "$log" | grep -v '^Skipping BTF')" ]; then
	rm -rf "$b"
	shca_die "the $kernel build failed or has warnings; see $log"
fi
ls "$b"/drivers/infiniband/sw/shca/shca.ko >/dev/null
