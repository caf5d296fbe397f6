#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: boot a test kernel and benchmark shca against rdma_rxe.
#
#   bench.sh [--smoke]
#
# KERNEL=stock (the default: two CPUs, no debug options, so the figures
# mean something) or KERNEL=debug.  Runs scripts/guest/bench.sh in the
# guest, then scripts/bench-report.sh, which prints the tables and writes
# out/bench-$KERNEL/bench/{bench.csv,bench.png,sweep.png,destroy.png,
# report.txt}.  A second boot with 4 vCPUs runs verbs_rate's QP scaling
# rows alone (scripts/guest/bench.sh --scaling), added to the first's
# scaling.csv.  --smoke runs every step with tiny counts, once.  ROUNDS=N
# (default 5) runs the timed steps N times in each boot; every figure of
# the report is the median of the rounds, with its minimum and maximum.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

smoke=()
[ "${1:-}" = --smoke ] && smoke=(--smoke)
rounds=${ROUNDS:-5}
[ ${#smoke[@]} -eq 0 ] || rounds=${ROUNDS:-1}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || shca_die "bench.sh: ROUNDS must be 1 to 99"
kernel=${KERNEL:-stock}
case "$kernel" in
debug|stock) ;;
*) shca_die "bench.sh: KERNEL must be debug or stock" ;;
esac

shca_need_pkgs gnuplot-nox bsdextrautils perftest
"$SHCA_TOP/scripts/build-module.sh" "$kernel" >/dev/null
"$SHCA_TOP/scripts/build-user.sh" >/dev/null
out=$SHCA_TOP/out/bench-$kernel
"$SHCA_TOP/scripts/vm.sh" --kernel "$kernel" --out "$out" --timeout 3600 \
	scripts/guest/bench.sh "${smoke[@]}" --rounds "$rounds" "$out/bench" || {
	shca_log "the bench failed; the guest's console log is $out/console.log"
	tail -n 20 "$out/bench/log" 2>/dev/null >&2 || true
	exit 1
}
# The same QP scaling rows with 4 vCPUs.  The host has $(nproc) CPUs: the
# vCPUs beyond them share the host's (env.txt gives its count).
"$SHCA_TOP/scripts/vm.sh" --kernel "$kernel" --out "$out-4cpu" --cpus 4 \
	--timeout 1800 scripts/guest/bench.sh "${smoke[@]}" --scaling \
	--rounds "$rounds" \
	"$out-4cpu/bench" || {
	shca_log "the 4-vCPU scaling run failed; its console log is $out-4cpu/console.log"
	tail -n 20 "$out-4cpu/bench/log" 2>/dev/null >&2 || true
	exit 1
}
tail -n +2 "$out-4cpu/bench/scaling.csv" >> "$out/bench/scaling.csv"
echo
{
	echo "kernel: $kernel $(grep -m1 -o 'Linux version [^ ]*' "$out/console.log" | cut -d' ' -f3)"
	echo "guest: 2 vCPUs (and 4 for the scaling rows), 3 GiB, QEMU $(cat "$out/accel")"
	echo "host: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "mode: ${smoke[*]:-full}, $rounds rounds"
} > "$out/bench/env.txt"
echo
cat "$out/bench/env.txt"
"$SHCA_TOP/scripts/bench-report.sh" "$out/bench"
