#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot the debug kernel, load shca and show what it does.
# KERNEL=stock runs it on Debian's stock kernel instead.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=${KERNEL:-debug}
"$SHCA_TOP/scripts/build-module.sh" "$kernel" >/dev/null
"$SHCA_TOP/scripts/build-user.sh" >/dev/null
out=$SHCA_TOP/out/vm-demo
rc=0
"$SHCA_TOP/scripts/vm.sh" --kernel "$kernel" --out "$out" --timeout 900 \
	scripts/guest/demo.sh || rc=$?
echo
cat "$out/demo.log" 2>/dev/null || true
if [ $rc -ne 0 ]; then
	shca_log "the demo failed; the guest's console log is $out/console.log"
	exit $rc
fi
echo
echo "The demo ran on $kernel kernel $(grep -m1 -o 'Linux version [^ ]*' "$out/console.log" | cut -d' ' -f3) with no kernel report."
