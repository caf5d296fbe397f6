#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build shca.ko (and shca_kunit.ko where the kernel has KUnit) for one of
# the test kernels, in out/build-<kernel>/ so that the two builds never
# share objects.
#
#   build-module.sh debug|stock|stock61 [extra make arguments, e.g. C=1]
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

b=$SHCA_TOP/out/build-$kernel
rm -rf "$b"
mkdir -p "$b"
cp -r "$SHCA_TOP/Kbuild" "$SHCA_TOP/drivers" "$SHCA_TOP/include" \
	"$SHCA_TOP/kconsumer" "$SHCA_TOP/kbench" "$SHCA_TOP/kunit" \
	"$SHCA_TOP/lib" "$b/"
shca_log "building shca for the $kernel kernel"
make -s -C "$kdir" M="$b" W=1 "$@" modules 2>&1 | tee "$b/build.log" >&2
# Warnings fail the build: the driver compiles clean.  (Not a pipe into a
# grep that may stop at the first line: under pipefail the writer's
# SIGPIPE would pass the build.)
if [ -n "$(grep -E 'warning:|error:' "$b/build.log" | grep -v '^Skipping BTF')" ]; then
	shca_die "the $kernel build has warnings; see $b/build.log"
fi
ls "$b"/drivers/infiniband/sw/shca/shca.ko >/dev/null
