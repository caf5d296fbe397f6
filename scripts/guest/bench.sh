#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark run inside the guest (make bench, and the smoke test).
#
#   bench.sh [--smoke] [--scaling] [--rounds N] [DIR]
#
# perftest on shca and on rdma_rxe, one after the other, each in loopback
# on one device over a dummy netdev, and NVMe over RDMA (fio on nvme-rdma
# and nvmet-rdma) the same way; then the in-kernel microbenchmarks of
# shca_kbench.ko (CQ sweep, destroy_qp under load) and the memory objects
# take.  Raw results go to DIR (default $SHCA_OUT/bench) as CSV files;
# scripts/bench-report.sh turns them into the table and the plots.
# --smoke runs every step with tiny counts: it shows that the bench works,
# not how fast anything is.  --scaling runs only verbs_rate's QP scaling
# rows (scaling.csv), for a boot with another number of vCPUs.  --rounds
# N (default 5, and 1 for --smoke) runs every timed step N times, the
# rounds one after the other, each row marked with its round, so that
# scripts/bench-report.sh can give each figure's median, minimum and
# maximum.  The sweep (which takes a median itself) and the memory
# figures are taken once.
set -euo pipefail
. "$SHCA_TOP/scripts/guest/lib.sh"
. "$SHCA_TOP/tests/lib.sh"

smoke=0 scaling_only=0 rounds=
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--scaling) scaling_only=1 ;;
	--rounds) rounds=${2:?--rounds needs a count}; shift ;;
	*) break ;;
	esac
	shift
done
[ -n "$rounds" ] || rounds=$((smoke ? 1 : 5))
[[ $rounds =~ ^[1-9][0-9]*$ ]] || fail "bench.sh: --rounds $rounds is not a count"
dir=${1:-$SHCA_OUT/bench}
mkdir -p "$dir"
log=$dir/log
: > "$log"

note() {
	echo "bench: $(date +%T) $*" | tee -a "$log"
}

shca_guest_load || fail "cannot load shca"
modprobe rdma_rxe || fail "cannot load rdma_rxe"
if ! grep -q '^shca_kbench ' /proc/modules; then
	insmod "$SHCA_BUILD/tests/kmod/kbench/shca_kbench.ko" || fail "cannot load shca_kbench"
fi
use_rdma_core
command -v ib_send_bw >/dev/null || fail "perftest is not installed"
ip link set lo up

# Each device in loopback on a dummy netdev of its own.
mkdummy bench_shca
mkdummy bench_rxe
ip addr add 10.21.0.1/24 dev bench_shca
ip addr add 10.22.0.1/24 dev bench_rxe
rdma link add shca_b type shca netdev bench_shca
rdma link add rxe_b type rxe netdev bench_rxe
note "devices up"

# gid_index DEV HEX: the index of DEV's RoCE v2 GID ::ffff:HEX (an IPv4
# address); shca lists v1 and v2 GIDs, rxe only v2.
gid_index() {
	local g=/sys/class/infiniband/$1/ports/1 i
	for i in $(seq 0 15); do
		if grep -q "ffff:$2\$" "$g/gids/$i" 2>/dev/null &&
		   grep -q 'RoCE v2' "$g/gid_attrs/types/$i" 2>/dev/null; then
			echo "$i"
			return 0
		fi
	done
	return 1
}
declare -A gid
wait_for gid_index shca_b 0a15:0001 >/dev/null || fail "shca_b has no IPv4 GID"
wait_for gid_index rxe_b 0a16:0001 >/dev/null || fail "rxe_b has no IPv4 GID"
gid[shca_b]=$(gid_index shca_b 0a15:0001)
gid[rxe_b]=$(gid_index rxe_b 0a16:0001)

# The same 64-byte RDMA writes through plain libibverbs (verbs_rate, from
# tests/user/), without perftest's own loop: what is left of a message's
# cost is the device's and its provider's.
vr=$SHCA_TOP/out/user/verbs_rate
[ -x "$vr" ] || fail "no $vr; run scripts/build-user.sh"
n_rate=$((smoke ? 1600 : 40000))
# rate DEV QPS COUNT THREADS: one run on DEV, COUNT writes per QP; one
# posting thread runs on CPU 1 where there is one, more on a CPU each;
# prints Mpps and the busy CPU microseconds per message, which
# verbs_rate measures over its timed loop only (no start-up in it,
# unlike perftest's rows).
rate() {
	local cpus=$(($(nproc) > 1 ? 1 : 0))
	[ "$4" -eq 1 ] || cpus=0-$(($(nproc) - 1))
	taskset -c "$cpus" "$vr" "$1" "${gid[$1]}" "$3" 64 "$2" "$4" |
		tee -a "$log" |
		awk '/ Mpps$/ { m = $(NF - 1) } / us\/msg$/ { c = $(NF - 1) }
		     END { if (m == "") exit 1; print m, c == "" ? "nan" : c }'
}
# QP scaling: the rate with 1, 8 and 64 QPs on one CQ, the same loop on
# one CPU, then 8 and 64 QPs shared by a posting thread per vCPU (each
# with a CQ of its own).  Beyond one QP the run posts 8 x n_rate writes
# in all, shared by the QPs (a multiple of verbs_rate's signalling
# interval, 16), so that 64 QPs take no longer than 8.  Every row goes
# to scaling.csv with the boot's vCPU count and the round; perftest.csv
# has the one-thread verbs_rate rows of a full run's boot.
echo "vcpus,qps,shca,rxe,shca_cpu,rxe_cpu,threads,round" > "$dir/scaling.csv"
scaling() {
	local q t qt n s r sc rc runs=("1 1" "8 1" "64 1")
	[ "$(nproc)" -eq 1 ] || runs+=("8 $(nproc)" "64 $(nproc)")
	for qt in "${runs[@]}"; do
		read -r q t <<< "$qt"
		n=$n_rate
		[ "$q" -eq 1 ] || n=$((8 * n_rate / q / 16 * 16))
		read -r s sc <<< "$(rate shca_b "$q" "$n" "$t")" ||
			fail "verbs_rate on shca_b failed"
		read -r r rc <<< "$(rate rxe_b "$q" "$n" "$t")" ||
			fail "verbs_rate on rxe_b failed"
		[ -n "$s" ] && [ -n "$r" ] || fail "verbs_rate gave no figure"
		note "round $round: verbs_rate 64 B, $q QP, $t threads, $(nproc) vCPUs: shca $s, rxe $r Mpps; CPU us/msg shca $sc, rxe $rc"
		echo "$(nproc),$q,$s,$r,$sc,$rc,$t,$round" >> "$dir/scaling.csv"
		[ $scaling_only -eq 1 ] || [ "$t" -ne 1 ] ||
			echo "verbs_rate,64,$q,Mpps,$s,$r,$sc,$rc,$round" >> "$dir/perftest.csv"
	done
}
if [ $scaling_only -eq 1 ]; then
	for ((round = 1; round <= rounds; round++)); do
		scaling
	done
	rdma link del shca_b
	rdma link del rxe_b
	rmmod shca_kbench
	ip link del bench_shca
	ip link del bench_rxe
	note "done"
	exit 0
fi

# ---- perftest -------------------------------------------------------------

if [ $smoke -eq 1 ]; then
	n_lat=20 n_small=1000 n_big=20
else
	n_lat=5000 n_small=20000 n_big=2000
fi

# The tests, as "NAME TOOL BYTES QPS ITERS".  perftest's latency tools
# drive one QP; the bandwidth tools run 1 and 8.
tests=(
	"send_lat ib_send_lat 8 1 $n_lat"
	"write_lat ib_write_lat 8 1 $n_lat"
)
for q in 1 8; do
	tests+=(
		"send_bw ib_send_bw 64 $q $n_small"
		"write_bw ib_write_bw 64 $q $n_small"
		"write_bw ib_write_bw 65536 $q $n_big"
		"read_bw ib_read_bw 65536 $q $n_big"
	)
done
# A smoke run makes one run of each kind of figure: a latency, a message
# rate and a bandwidth (with its share of the copy rate).  The tools'
# own work is user_perftest's.
if [ $smoke -eq 1 ]; then
	tests=(
		"send_lat ib_send_lat 8 1 $n_lat"
		"send_bw ib_send_bw 64 8 $n_small"
		"read_bw ib_read_bw 65536 8 $n_big"
	)
fi
# On the debug kernel (KASAN, lockdep and kmemleak under TCG) every run
# crawls, and with one CPU perftest's two busy-polling processes even take
# turns by the scheduler tick: the figures mean nothing (perftest may
# report "inf").  A smoke run there makes one run per device, to show that
# the tools work.
# There, too, a tenth of the messages will do.
slow_smoke=0
if [ $smoke -eq 1 ] &&
   { [ "$(nproc)" -eq 1 ] || [ "${SHCA_KERNEL:-}" = debug ]; }; then
	slow_smoke=1
	tests=("send_bw ib_send_bw 64 8 $((n_small / 10))")
fi

# perf DEV NAME TOOL BYTES QPS ITERS: one run, as server and client on DEV;
# prints "value unit": the typical (median) latency in microseconds, the
# message rate in Mpps for small messages, the average bandwidth in MB/s
# for large ones.  A figure perftest cannot give ("inf") is "nan".  The server
# runs on CPU 0 and the client on CPU 1 (where there is one), so that the
# two busy-polling processes do not share a CPU.
#
# perftest converts cycles to time with a CPU frequency it measures itself
# at start-up (TSC against gettimeofday, fitted by least squares).  Under
# QEMU's TCG a vCPU thread the host preempts can spoil the fit; perftest
# then prints "Correlation coefficient r^2: ... < 0.9" and takes 0 MHz, so
# every rate and bandwidth of that run comes out 0.  With two CPUs such a
# run is repeated, up to $perf_tries times in all, and a run that never
# calibrates gives "nan", not a 0 that would read as a figure.  With one
# CPU (a jiffies clock) perftest never calibrates: one run, its figures
# taken as printed.
perf_tries=1
[ "$(nproc)" -gt 1 ] && perf_tries=5
# busy: the CPU time every vCPU spent busy since boot, in USER_HZ ticks
# (user, nice, system, irq, softirq, steal of /proc/stat's "cpu" line).
hz=$(getconf CLK_TCK)
busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}
# cpu_per_msg T0 T1 MSGS: busy microseconds, all vCPUs together, per
# message between busy readings T0 and T1.
cpu_per_msg() {
	awk -v a="$1" -v b="$2" -v n="$3" -v hz="$hz" \
		'BEGIN { printf "%.2f\n", (b - a) * 1e6 / hz / n }'
}
perf() {
	local dev=$1 name=$2 tool=$3 bytes=$4 qps=$5 iters=$6 args line try
	local ccpu=$(($(nproc) > 1 ? 1 : 0)) run=perf-$dev-$name-$bytes-$qps
	local field=5 unit=Mpps uncal=0 t0 t1
	case $name in
	*_lat) unit=usec ;;
	*) [ "$bytes" -le 4096 ] || { field=4; unit=MB/s; } ;;
	esac
	args="-d $dev -x ${gid[$dev]} -F -s $bytes -n $iters"
	[ "$qps" -eq 1 ] || args+=" -q $qps"
	for ((try = 1; try <= perf_tries; try++)); do
		t0=$(busy)
		pair "$run" "taskset -c 0 $tool $args" \
			"taskset -c $ccpu $tool $args 127.0.0.1" >> "$log"
		t1=$(busy)
		uncal=0
		grep -q '^Correlation coefficient' "$SHCA_OUT/$run.client" ||
			break
		uncal=1
		echo "$run: perftest could not measure the CPU frequency (run $try of $perf_tries)" >> "$log"
	done
	line=$(grep -E '^ *[0-9]+ +[0-9]+ +([0-9.]+|inf|-?nan) ' \
		"$SHCA_OUT/$run.client" | tail -n 1)
	[ -n "$line" ] || fail "$dev $name: no results line"
	if [ $uncal -eq 1 ] && [ $perf_tries -gt 1 ]; then
		echo "nan $unit nan"
	else
		echo "$line $(cpu_per_msg "$t0" "$t1" $((iters * qps)))" |
			awk -v f=$field -v u=$unit '{ print $f, u, $NF }' |
			sed -E 's/^(inf|-?nan) /nan /'
	fi
}

# shca_cpu and rxe_cpu: busy CPU microseconds per message, both vCPUs
# together, over the whole perftest run: its start-up (connecting, and
# perftest's CPU clock measurement) is in it, so only long runs mean
# much; verbs_rate's rows time the loop alone.  The two processes poll,
# so this is at least the wall time twice over; a device that runs work
# on a spare CPU shows it here.
# The yardsticks, taken in every round on the vCPU the clients run on:
# for bandwidth, the kernel's own memcpy() of 64 KiB, the routine the
# device copies payloads with (shca_kbench's copy; MiB/s, the unit of
# perftest's MB/sec), and beside it memmove()'s rate and a bare REP
# MOVSB's, what the CPU model charges for the string instruction; for a
# message's fixed cost, one system call (syscall_cost's getppid(), in
# ns), the floor under every doorbell.  The report gives shca's 64 KiB
# bandwidths as a share of the copy rate.
copy_ms=$((smoke ? 100 : 1000))
sysc=$SHCA_TOP/out/user/syscall_cost
[ -x "$sysc" ] || fail "no $sysc; run scripts/build-user.sh"
# copy_field NAME: NAME=value of shca_kbench's copy result.
copy_field() {
	awk -v k="$1=" '{ for (i = 1; i <= NF; i++)
		if (index($i, k) == 1) print substr($i, length(k) + 1) }' \
		/sys/kernel/debug/shca_kbench/result
}
yardsticks() {
	local cpu=$(($(nproc) > 1 ? 1 : 0)) copy copy_memmove copy_movsb sys
	taskset -c $cpu \
		sh -c "echo copy 65536 $copy_ms > /sys/kernel/debug/shca_kbench/run" ||
		fail "shca_kbench: copy failed"
	copy=$(copy_field mibps)
	copy_memmove=$(copy_field memmove_mibps)
	copy_movsb=$(copy_field movsb_mibps)
	[ -n "$copy" ] && [ -n "$copy_memmove" ] && [ -n "$copy_movsb" ] ||
		fail "shca_kbench: copy gave no rate"
	sys=$(taskset -c $cpu "$sysc" "$copy_ms" | tee -a "$log" |
		awk '/^syscall_cost: getppid / { print $3 }')
	[ -n "$sys" ] || fail "syscall_cost gave no figure"
	echo "65536,$copy,$copy_memmove,$copy_movsb,$sys,$round" >> "$dir/copy.csv"
	note "round $round: kernel memcpy of 64 KiB: $copy MiB/s (memmove $copy_memmove, rep movsb $copy_movsb); getppid() $sys ns"
}
echo "bytes,mibps,memmove_mibps,movsb_mibps,getppid_ns,round" > "$dir/copy.csv"
echo "test,bytes,qps,unit,shca,rxe,shca_cpu,rxe_cpu,round" > "$dir/perftest.csv"
[ $slow_smoke -eq 0 ] || n_rate=160
# The NVMe over RDMA part is not in the debug kernel's smoke run: there
# it takes minutes for figures that mean nothing, and nvme_rdma and
# nvme_rdma_teardown run the same stack under KASAN already.
[ $slow_smoke -eq 1 ] || . "$SHCA_TOP/scripts/guest/bench-nvme.sh"
# Round after round, each the whole of the timed steps, so that a slow
# spell of the host lands in one round's figures, not in one test's.
for ((round = 1; round <= rounds; round++)); do
	yardsticks
	for t in "${tests[@]}"; do
		read -r name tool bytes qps iters <<< "$t"
		out=$(perf shca_b "$name" "$tool" "$bytes" "$qps" "$iters") || exit 1
		read -r s unit sc <<< "$out"
		out=$(perf rxe_b "$name" "$tool" "$bytes" "$qps" "$iters") || exit 1
		read -r r _ rc <<< "$out"
		note "round $round: $name $bytes B, $qps QP: shca $s, rxe $r $unit; CPU us/msg shca $sc, rxe $rc"
		echo "$name,$bytes,$qps,$unit,$s,$r,$sc,$rc,$round" >> "$dir/perftest.csv"
	done
	scaling
	[ $slow_smoke -eq 1 ] || nvme_round
done
[ $slow_smoke -eq 1 ] || nvme_cleanup

rdma link del rxe_b

# ---- in-kernel microbenchmarks --------------------------------------------

kb=/sys/kernel/debug/shca_kbench
# kbench CMD...: run one command; print its result line.
kbench() {
	echo "$*" > $kb/run || fail "shca_kbench: '$*' failed"
	cat $kb/result
}
# fields LINE KEY...: the values of KEY=value in LINE, comma-separated.
fields() {
	local line=$1
	shift
	awk -v keys="$*" '{
		for (i = 1; i <= NF; i++) {
			split($i, kv, "="); v[kv[1]] = kv[2]
		}
		n = split(keys, k, " ")
		for (i = 1; i <= n; i++)
			printf "%s%s", v[k[i]], i < n ? "," : "\n"
	}' <<< "$line"
}

# The sweep: against the depth of a full ring, against the entries in a
# ring of 1M, and against the victim's share.
if [ $smoke -eq 1 ]; then
	depths="1024 4096" reps=2 shares="0 50 100"
else
	depths="1024 4096 16384 65536 262144 1048576" reps=7
	shares="0 1 10 25 50 75 90 100"
fi
big=${depths##* }
echo "series,depth,entries,share,removed,ns_median,ps_per_entry" > "$dir/sweep.csv"
sweep() {
	local series=$1 r
	r=$(kbench sweep "$2" "$3" "$4" $reps)
	echo "$series,$2,$3,$4,$(fields "$r" removed ns_median ps_per_entry)" >> "$dir/sweep.csv"
}
for d in $depths; do
	sweep depth "$d" "$d" 50
done
for d in $depths; do
	sweep entries "$big" "$d" 50
done
for s in $shares; do
	sweep share "${depths%% *}" "${depths%% *}" "$s"
done
note "sweep: $(($(wc -l < "$dir/sweep.csv") - 1)) points"

# destroy_qp every millisecond beside N neighbours on the same CQ, and
# two controls: the victims on a CQ of their own (the same work, no
# shared sweep), and no victims but a CPU burner taking, every
# millisecond, the CPU time the shared run's victim cycle took in the
# same round (the dip any CPU load of that size causes).
if [ $smoke -eq 1 ]; then
	neighbours="1 4" ms=100
else
	neighbours="1 8 64" ms=3000
fi
echo "cq,neighbours,period_us,destroys_per_s,cycle_ns,lat_ns_median,lat_ns_p99,lat_ns_max,base_per_s,loaded_per_s,drop_pct,victim_polled,bad,late,create_ns,to_rts_ns,post_ns,round" > "$dir/destroy.csv"
for ((round = 1; round <= rounds; round++)); do
	for n in $neighbours; do
		for cq in shared own burn; do
			mode=$cq
			[ "$cq" != burn ] || mode="burn $((cycle > 1000000 ? 1000000 : cycle))"
			# shellcheck disable=SC2086 # a burn's mode is two words
			r=$(kbench destroy shca_b "$n" 1000 "$ms" $mode)
			[ "$cq" != shared ] || cycle=$(fields "$r" cycle_ns)
			fields "$r" cq neighbours period_us destroys_per_s \
				cycle_ns lat_ns_median lat_ns_p99 lat_ns_max \
				base_per_s loaded_per_s drop_permille \
				victim_polled bad late create_ns to_rts_ns \
				post_ns |
				awk -F, -v OFS=, -v r="$round" \
					'{ $11 = sprintf("%.1f", $11 / 10); print $0, r }' \
				>> "$dir/destroy.csv"
			[ "$(fields "$r" bad late)" = 0,0 ] ||
				fail "destroy under load lost or misattributed completions: $r"
		done
	done
done
note "destroy: $(($(wc -l < "$dir/destroy.csv") - 1)) runs"

# Memory: what /proc/meminfo's Slab and VmallocUsed grow by while shca
# holds COUNT objects, per object.  Two sizes of each separate the fixed
# part from the part per WQE or CQE.
meminfo() {
	echo 1 > /proc/sys/vm/stat_refresh
	awk '/^Slab:/ { s = $2 } /^VmallocUsed:/ { v = $2 }
	     END { print s * 1024, v * 1024 }' /proc/meminfo
}
if [ $smoke -eq 1 ]; then
	holds=("qp 16 1" "qp 16 256" "cq 4 1023" "cq 4 4095")
else
	holds=("qp 1000 1" "qp 1000 256" "cq 100 1023" "cq 100 65535")
fi
echo "object,count,size,slab_bytes,vmalloc_bytes,bytes_per_object" > "$dir/memory.csv"
for h in "${holds[@]}"; do
	read -r what count size <<< "$h"
	read -r s0 v0 <<< "$(meminfo)"
	kbench hold shca_b "$what" "$count" "$size" > /dev/null
	read -r s1 v1 <<< "$(meminfo)"
	kbench release > /dev/null
	echo "$what,$count,$size,$((s1 - s0)),$((v1 - v0)),$(( (s1 - s0 + v1 - v0) / count ))" >> "$dir/memory.csv"
done
note "memory: $(($(wc -l < "$dir/memory.csv") - 1)) points"

rdma link del shca_b
rmmod shca_kbench
ip link del bench_shca
ip link del bench_rxe
note "done"
