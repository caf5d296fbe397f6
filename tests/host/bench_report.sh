#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side self-test of scripts/bench-report.sh, make bench's judge: on
# raw results of five rounds (and three for the destroys) it must give
# each figure as the median of its rounds with its minimum and maximum,
# leave figures that are not numbers out of the median, take the ratio
# of the medians, judge the goals on them, tell scaling with one posting
# thread from scaling with one per vCPU, and set the neighbours' dip
# beside the CPU burner's.  Reports in KTAP and exits non-zero if any
# case failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The raw files, as scripts/guest/bench.sh writes them.
cat > "$tmp/copy.csv" <<'EOM'
bytes,mibps,memmove_mibps,movsb_mibps,getppid_ns,round
65536,100,10,11,10.0,1
65536,300,30,31,50.0,2
65536,200,20,21,30.0,3
65536,500,50,51,20.0,4
65536,400,40,41,40.0,5
EOM
{
	echo "test,bytes,qps,unit,shca,rxe,shca_cpu,rxe_cpu,round"
	r=0
	for s in 9 7 8 nan 10; do
		r=$((r + 1))
		echo "send_lat,8,1,usec,$s,50,100,200,$r"
	done
	r=0
	for s in 0.3 0.1 0.2 0.5 0.4; do
		r=$((r + 1))
		echo "write_bw,64,1,Mpps,$s,0.1,4,20,$r"
		echo "read_bw,65536,1,MB/s,$((r * 70)),10,1,1,$r"
		echo "verbs_rate,64,8,Mpps,0.4,0.1,3,$((r * 3)),$r"
		echo "nvme_randread,4096,2,kIOPS,9,3,,,$r"
	done
} > "$tmp/perftest.csv"
cat > "$tmp/scaling.csv" <<'EOM'
vcpus,qps,shca,rxe,shca_cpu,rxe_cpu,threads,round
2,1,0.1,0.05,9,30,1,1
2,8,0.095,0.05,9,30,1,1
2,8,0.16,0.05,9,30,2,1
2,64,0.12,0.05,9,30,2,1
EOM
{
	echo "cq,neighbours,period_us,destroys_per_s,cycle_ns,lat_ns_median,lat_ns_p99,lat_ns_max,base_per_s,loaded_per_s,drop_pct,victim_polled,bad,late,create_ns,to_rts_ns,post_ns,round"
	r=0
	for d in "20 18 21" "30 19 23" "25 20 22"; do
		r=$((r + 1))
		read -r sh own burn <<< "$d"
		echo "shared,1,1000,900,200000,50000,90000,99000,1000,800,$sh.0,10,0,0,1,1,1,$r"
		echo "own,1,1000,900,200000,50000,90000,99000,1000,800,$own.0,10,0,0,1,1,1,$r"
		echo "burn,1,1000,1000,200000,200000,200000,200000,1000,800,$burn.0,0,0,0,0,0,0,$r"
		echo "shared,64,1000,900,200000,50000,90000,99000,1000,800,1$r.0,10,0,0,1,1,1,$r"
		echo "burn,64,1000,1000,200000,200000,200000,200000,1000,800,5.0,0,0,0,0,0,0,$r"
	done
} > "$tmp/destroy.csv"
cat > "$tmp/sweep.csv" <<'EOM'
series,depth,entries,share,removed,ns_median,ps_per_entry
depth,1024,1024,50,512,1000,976
entries,1024,1024,50,512,1000,976
EOM
cat > "$tmp/memory.csv" <<'EOM'
object,count,size,slab_bytes,vmalloc_bytes,bytes_per_object
qp,16,1,16000,0,1000
cq,4,1023,4000,4000,2000
cq,4,4095,8000,8000,4000
EOM

echo "KTAP version 1"
echo "1..9"
failed=0 n=0
# check NAME WANT GOT: one case.
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n $1"
	else
		echo "# wanted: $2"
		echo "# got:    $3"
		echo "not ok $n $1"
		failed=1
	fi
}

"$top/scripts/bench-report.sh" "$tmp" > "$tmp/out" 2>&1
rc=$?
# Without gnuplot the tables are written and only the plots are missing.
if [ $rc -ne 0 ] && ! grep -q 'gnuplot is not installed' "$tmp/out"; then
	sed 's/^/# /' "$tmp/out"
fi
# row FILE KEY: the line of FILE that starts with KEY.
row() {
	grep -m1 "^$2," "$1" 2>/dev/null
}
check yardsticks_are_medians_with_spread \
	"65536,300,30,31,30.0,100,500,10.0,50.0,5" \
	"$(row "$tmp/copy-table.csv" 65536)"
check nan_left_out_of_an_even_median \
	"send_lat,8,1,usec,8.5,50,0.170,<=0.2,yes,100,200,,7,10,50,50,5" \
	"$(row "$tmp/bench.csv" send_lat)"
check rate_ratio_of_medians \
	"write_bw,64,1,Mpps,0.3,0.1,3.000,>=3,yes,4,20,,0.1,0.5,0.1,0.1,5" \
	"$(row "$tmp/bench.csv" write_bw)"
check copy_share_of_median_copy \
	"read_bw,65536,1,MB/s,210,10,21.000,>=0.70 of copy,yes,1,1,0.700,70,350,10,10,5" \
	"$(row "$tmp/bench.csv" read_bw)"
check empty_figures_stay_empty \
	"nvme_randread,4096,2,kIOPS,9,3,3.000,,,,,,9,9,3,3,5" \
	"$(row "$tmp/bench.csv" nvme_randread)"
check one_thread_must_hold \
	"2,8,1,0.095,0.05,1.900,0.950,1.000,>=0.9 of 1 QP,yes" \
	"$(row "$tmp/scaling-table.csv" 2,8,1 | cut -d, -f1-10)"
check threads_must_scale \
	"2,8,2,0.16,yes 2,64,2,0.12,missed" \
	"$(awk -F, '$3 == 2 { printf "%s%s,%s,%s,%s,%s", s, $1, $2, $3, $4, $10
			      s = " " }' "$tmp/scaling-table.csv" 2>/dev/null)"
check dip_beside_burner \
	"1,25.0,20.0,30.0,19.0,22.0,3.0,<=burn+3,yes" \
	"$(row "$tmp/churn.csv" 1)"
check dip_with_64_at_most_10 \
	"64,12.0,11.0,13.0,,5.0,7.0,<=10%,missed" \
	"$(row "$tmp/churn.csv" 64)"
exit $failed
