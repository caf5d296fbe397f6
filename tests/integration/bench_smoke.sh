#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench in miniature: the guest side of the bench with tiny counts
# (perftest and NVMe over RDMA on shca and rdma_rxe, the sweep, destroy
# under load, memory),
# then the report.  It asserts only that every step ran and gave figures,
# the CSV table and the plots; how fast anything is is make bench's
# business.  Two checks of the destroy-under-load run are correctness,
# not speed: no neighbour completion lost or reordered and no victim
# completion polled after its destroy_qp returned (bench.sh fails on
# either).
# shca-timeout: 900
# Stock 6.12 kernel only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN,
# and the benches measure the model, which is the same on 6.1.
# shca-kernels: stock
. "$(dirname "$0")/../lib.sh"

# The debug kernel's guest (a jiffies clock, on which perftest may print
# "inf", and KASAN's quarantine in the slab figures) gives figures, but
# not ones that mean anything: there, and only there, their form alone is
# checked.  Elsewhere a figure must be a positive number: "nan" and "inf"
# are not (awk compares them with 0 as strings, and "nan" > 0 is true).
timed=1
[ "${SHCA_KERNEL:-}" = debug ] && timed=0
# figure: awk functions, given t=$timed; num(x) is a decimal number, pos(x)
# a positive one, form(x) a figure of a run that may not have been timed.
figure='function num(x) { return x ~ /^-?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
	function pos(x) { return num(x) && x + 0 > 0 }
	function form(x) { return num(x) || x == "nan" || (!t && x == "inf") }'

d=$SHCA_OUT/bench-smoke
rm -rf "$d"
bash "$SHCA_TOP/scripts/guest/bench.sh" --smoke "$d" ||
	fail "the bench failed: $(tail -n 3 "$d/log" 2>/dev/null)"
bash "$SHCA_TOP/scripts/bench-report.sh" "$d" > "$d/report.out" 2>&1 ||
	fail "the report failed: $(tail -n 3 "$d/report.out")"

# keys CSV N KEY...: the first N fields of CSV's data rows are exactly the
# KEYs, each once (a row missing, repeated or unexpected fails).
keys() {
	local csv=$1 n=$2 got want
	shift 2
	got=$(awk -F, -v n="$n" 'NR > 1 { k = $1
		for (i = 2; i <= n; i++) k = k "," $i
		print k }' "$csv" | sort)
	want=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$want" ] ||
		fail "$csv: rows $(echo $got), expected $(echo $want)"
}
# On the debug kernel, or with one CPU, the smoke run makes one perftest
# run per device, then three verbs_rate runs per device (1, 8 and 64
# QPs), and no NVMe over RDMA run; elsewhere three perftest runs (a
# latency, a message rate, a bandwidth), the three verbs_rate runs and
# the two NVMe over RDMA rows (one queue pair per vCPU).
rate_rows=("verbs_rate,64,1" "verbs_rate,64,8" "verbs_rate,64,64")
if [ "$(nproc)" -gt 1 ] && [ $timed -eq 1 ]; then
	keys "$d/bench.csv" 3 send_lat,8,1 send_bw,64,8 \
		read_bw,65536,8 "${rate_rows[@]}" \
		"nvme_randread,4096,$(nproc)" "nvme_seqread,131072,$(nproc)"
else
	keys "$d/bench.csv" 3 send_bw,64,8 "${rate_rows[@]}"
fi
# verbs_rate's scaling runs: 1, 8 and 64 QPs on one posting thread, and
# where there is more than one vCPU, 8 and 64 on one per vCPU.
nc=$(nproc)
scale_rows=("$nc,1,1" "$nc,8,1" "$nc,64,1")
[ "$nc" -eq 1 ] || scale_rows+=("$nc,8,$nc" "$nc,64,$nc")
awk -F, -v OFS=, 'NR == 1 || $8 == 1 { print $1, $2, $7 }' "$d/scaling.csv" \
	> "$d/scaling-keys.csv"
keys "$d/scaling-keys.csv" 3 "${scale_rows[@]}"
keys "$d/scaling-table.csv" 3 "${scale_rows[@]}"
keys "$d/sweep.csv" 4 depth,1024,1024,50 depth,4096,4096,50 \
	entries,4096,1024,50 entries,4096,4096,50 share,1024,1024,0 \
	share,1024,1024,50 share,1024,1024,100
keys "$d/destroy.csv" 2 shared,1 own,1 burn,1 shared,4 own,4 burn,4
keys "$d/churn.csv" 1 1 4
keys "$d/memory.csv" 3 qp,16,1 qp,16,256 cq,4,1023 cq,4,4095

# Every figure is a number.  On a timed kernel a perftest figure is a
# positive number, and its CPU figure one not below 0, unless bench.sh
# logged that perftest could not measure the CPU clock on the run's last
# try: then (only then) its figures are "nan".  On the debug kernel a
# figure may also be "nan" or "inf".
uncal=$(grep -oE '^perf-[a-z_]+-[a-z_]+-[0-9]+-[0-9]+: perftest could not measure the CPU frequency \(run ([0-9]+) of \1\)' \
	"$d/log" | cut -d: -f1 | tr '\n' ' ' || true)
awk -F, -v t=$timed -v uncal=" $uncal" "$figure"'
	function cal(dev) { return index(uncal, " perf-" dev "-" $1 "-" $2 "-" $3 " ") == 0 }
	function fig(x, dev) { return t ? (pos(x) || (!cal(dev) && x == "nan")) : form(x) }
	function cpu(x, dev) { return t ? ((num(x) && x >= 0) || (!cal(dev) && x == "nan")) : form(x) }
	NR > 1 && $1 !~ /^(verbs_rate|nvme_)/ &&
	!(fig($5, "shca_b") && fig($6, "rxe_b") && cpu($10, "shca_b") && cpu($11, "rxe_b")) {
		print; bad = 1 }
	END { exit bad }' "$d/bench.csv" ||
	fail "a perftest figure is not a positive number (nor a run perftest could not time)"
# verbs_rate times itself with the monotonic clock: positive numbers on a
# timed kernel; on the debug kernel, positive numbers, "nan" or "inf".
awk -F, -v t=$timed "$figure"'
	function ok(x) { return pos(x) || (!t && !num(x) && form(x)) }
	$1 == "verbs_rate" && !(ok($5) && ok($6)) { print; bad = 1 }
	END { exit bad }' "$d/bench.csv" ||
	fail "a verbs_rate figure is missing"
# The scaling rows are this boot's: its vCPU count, in round 1; the
# one-thread rows have the same figures as the verbs_rate rows, and
# every row of the table a verdict.
awk -F, -v n="$nc" 'NR > 1 && ($1 != n || $8 != 1) { bad = 1 }
	END { exit bad }' "$d/scaling.csv" ||
	fail "scaling rows are wrong: $(cat "$d/scaling.csv")"
[ "$(awk -F, 'NR > 1 && $7 == 1 { print $3 "," $4 }' "$d/scaling.csv")" = \
  "$(awk -F, '$1 == "verbs_rate" { print $5 "," $6 }' "$d/bench.csv")" ] ||
	fail "the scaling rows are not verbs_rate's"
awk -F, 'NR > 1 && $10 !~ /^(yes|falls|missed|n\/a)$/ { print; bad = 1 }
	END { exit bad }' "$d/scaling-table.csv" || fail "a scaling verdict is missing"
# fio times itself with the monotonic clock: NVMe over RDMA's IOPS and
# bandwidth, where it ran, are positive numbers on both devices.
awk -F, -v t=$timed "$figure"'
	$1 ~ /^nvme_/ && !(pos($5) && pos($6) && pos($7)) { print; bad = 1 }
	END { exit bad }' "$d/bench.csv" ||
	fail "an NVMe over RDMA figure is missing"
# The yardstick: the kernel's copy rate of 64 KiB is a positive number
# (memcpy's, memmove's and a bare rep movsb's),
# and so is every 64 KiB perftest bandwidth's share of it (timed kernel),
# but for a run perftest could not time; the CPU time per message of every
# verbs_rate run is a number not below 0 (it may be 0 for a run shorter
# than a tick; "nan" or "inf" on the debug kernel).
awk -F, -v t=$timed "$figure"'NR == 2 && !(pos($2) && pos($3) && pos($4) && pos($5) && $6 == 1) { bad = 1 }
	END { exit bad || NR != 2 }' "$d/copy.csv" ||
	fail "no copy rate or system call time: $(cat "$d/copy.csv")"
grep -q '^the same 64 KiB by memmove: ' "$d/report.txt" ||
	fail "the report has no memmove and rep movsb rates"
grep -q '^one system call (getppid): ' "$d/report.txt" ||
	fail "the report has no system call time"
if [ $timed -eq 1 ]; then
	awk -F, -v t=$timed -v uncal=" $uncal" "$figure"'
		NR > 1 && $4 == "MB/s" && $2 == 65536 && $1 !~ /^nvme/ &&
		!pos($12) && !($12 == "nan" &&
			index(uncal, " perf-shca_b-" $1 "-" $2 "-" $3 " ")) {
			print; bad = 1 } END { exit bad }' "$d/bench.csv" ||
		fail "a copy share is missing"
fi
awk -F, -v t=$timed "$figure"'
	function cpu(x) { return t ? num(x) && x >= 0 : form(x) }
	$1 == "verbs_rate" && !(cpu($10) && cpu($11)) { print; bad = 1 }
	END { exit bad }' "$d/bench.csv" || fail "a verbs_rate CPU figure is garbled"
# The sweep removed exactly the victim's share and took some time.
awk -F, -v t=$timed 'NR > 1 && !($5 == int($3 * $4 / 100) &&
			       ($6 > 0 || (!t && $6 == 0))) { print; bad = 1 }
	 END { exit bad }' "$d/sweep.csv" || fail "a sweep result is wrong"
# Every destroy run destroyed QPs while the neighbours completed work, and
# the parts of a victim cycle (create, to RTS, posts) fit in the cycle.
# Every burner run spun while they did, each time for at least as long
# as the same round's victim cycle beside as many neighbours, and
# touched no QP.
awk -F, 'NR > 1 && $1 != "burn" && !($4 > 0 && $9 > 0 && $10 > 0 &&
		     $13 == 0 && $14 == 0 && $15 > 0 && $16 > 0 && $17 > 0 &&
		     $15 + $16 + $17 < $5) { print; bad = 1 }
	 $1 == "shared" { cyc[$2, $18] = $5 }
	 $1 == "burn" && !($4 > 0 && $9 > 0 && $10 > 0 && $12 == 0 &&
			   $13 == 0 && $14 == 0 && $15 == 0 &&
			   ($2, $18) in cyc &&
			   $5 >= (cyc[$2, $18] < 1e6 ? cyc[$2, $18] : 1e6)) {
		print; bad = 1 }
	 END { exit bad }' "$d/destroy.csv" ||
	fail "a destroy-under-load run is wrong"
awk -F, 'NR > 1 && !($2 ~ /^[0-9.]+$/ && $6 ~ /^-?[0-9.]+$/ &&
		     $9 ~ /^(yes|missed|n\/a)$/) { print; bad = 1 }
	 END { exit bad }' "$d/churn.csv" || fail "a churn verdict is missing"
# QPs and CQs take memory, and bigger ones take more.
if [ $timed -eq 1 ]; then
	awk -F, 'NR > 1 { if ($6 <= 0) bad = 1
		 if (prev[$1] && $6 <= prev[$1]) bad = 1; prev[$1] = $6 }
		 END { exit bad }' "$d/memory.csv" || fail "a memory figure is wrong"
fi
grep -q 'per CQE: ' "$d/report.txt" || fail "no per-CQE figure"

for p in bench sweep destroy; do
	[ "$(head -c 4 "$d/$p.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] ||
		fail "$p.png is not a PNG"
done
echo ok
