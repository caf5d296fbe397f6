#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak: boot the SMP debug kernel and run the soak in it.
#
#   SOAK_SECONDS=N  how long the mix runs (default 1800)
#   SOAK_SEED=N     the seed (default: from the clock; printed either way)
#   SOAK_WORKERS=N  traffic processes at a time (default 6)
#   KERNEL=stock    Debian's stock 6.12 kernel instead of the debug one
#   KERNEL=stock61  Debian 12's default 6.1 kernel
#
# scripts/guest/soak.sh does the work (see there); the guest's timeout is
# the soak's time and 15 minutes more.  The run fails on any error the
# soak counts, on anything left in rdma res, and, through vm.sh, on any
# kernel report (BUG, WARNING, KASAN, UBSAN, lockdep, kmemleak, hung task).
# The report is printed and kept in out/soak-$KERNEL/report.txt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

seconds=${SOAK_SECONDS:-1800}
seed=${SOAK_SEED:-$(( $(date +%s%N) % 1000000007 ))}
workers=${SOAK_WORKERS:-6}
kernel=${KERNEL:-debug}
case "$kernel" in
debug|stock|stock61) ;;
*) shca_die "soak.sh: KERNEL must be debug, stock or stock61" ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || shca_die "soak.sh: SOAK_SECONDS must be a number"
[[ "$seed" =~ ^[0-9]+$ ]] || shca_die "soak.sh: SOAK_SEED must be a number"
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || shca_die "soak.sh: SOAK_WORKERS must be a positive number"

"$SHCA_TOP/scripts/build-module.sh" "$kernel" >/dev/null
"$SHCA_TOP/scripts/build-user.sh" >/dev/null
out=$SHCA_TOP/out/soak-$kernel
shca_log "soak: ${seconds}s on the $kernel kernel, seed $seed, $workers processes"
rc=0
"$SHCA_TOP/scripts/vm.sh" --kernel "$kernel" --out "$out" \
	--timeout $((seconds + 900)) scripts/guest/soak.sh \
	--seconds "$seconds" --seed "$seed" --workers "$workers" \
	--report "$out/report.txt" || rc=$?
echo
if [ -f "$out/report.txt" ]; then
	cat "$out/report.txt"
else
	shca_log "no report; the guest's console log is $out/console.log"
	tail -n 40 "$out/console.log" >&2
fi
if [ $rc -ne 0 ]; then
	shca_log "the soak FAILED (seed $seed); see $out/console.log"
	exit 1
fi
shca_log "the soak passed: seed $seed, ${seconds}s, no error, no kernel report"
