#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn the raw results of scripts/guest/bench.sh into the report.
#
#   bench-report.sh DIR
#
# Reads DIR/{perftest,copy,scaling,sweep,destroy,memory}.csv and writes:
#   DIR/bench.csv     the perftest table: shca, rxe, their ratio, the goal,
#                     CPU time per message, 64 KiB bandwidth as a share of
#                     the kernel's copy rate
#   DIR/scaling-table.csv   verbs_rate with 1, 8 and 64 QPs, per vCPU count
#   DIR/report.txt    every table, as printed
#   DIR/bench.png     shca/rxe for each perftest run, against the goals
#   DIR/sweep.png     sweep time against entries, depth and victim share
#   DIR/destroy.png   the neighbours' completion rate around the destroys
# and prints report.txt.  The goals are not assertions: a missed one is
# marked "missed", not failed.
set -euo pipefail

dir=${1:?usage: bench-report.sh DIR}
for f in perftest copy scaling sweep destroy memory; do
	[ -s "$dir/$f.csv" ] || { echo "bench-report: no $dir/$f.csv" >&2; exit 1; }
done

# ---- perftest: the ratio is the result ----------------------------------
# Latency: shca/rxe at most 1/5.  Small-message rate: at least 3 through
# perftest, 5 through verbs_rate.  64 KiB bandwidth: at least 70% of the
# kernel's own copy rate in the same boot (copy.csv, MiB/s like
# perftest's MB/sec), shown as copy_share.  A figure perftest could not
# give (no CPU clock rate) is "nan", and so is its ratio.  shca_cpu and
# rxe_cpu are busy CPU microseconds per message, both vCPUs together.
copy=$(awk -F, 'NR == 2 { print $2 }' "$dir/copy.csv")
awk -F, -v copy="$copy" 'NR == 1 {
	print "test,bytes,qps,unit,shca,rxe,ratio,goal,met,shca_cpu,rxe_cpu,copy_share"
	next
}
{
	# A figure of 0 is no figure: a latency of 0 meets no goal.
	ok = $5 != "nan" && $6 != "nan" && $5 > 0 && $6 > 0
	r = ok ? $5 / $6 : 0
	ratio = ok ? sprintf("%.3f", r) : "nan"
	goal = ""; met = ""; share = ""
	if ($4 == "usec") {
		goal = "<=0.2"; met = r <= 0.2 ? "yes" : "missed"
	} else if ($4 == "Mpps") {
		g = $1 == "verbs_rate" ? 5 : 3
		goal = ">=" g; met = r >= g ? "yes" : "missed"
	} else if ($4 == "MB/s" && $2 == 65536 && $1 !~ /^nvme/) {
		ok = $5 != "nan" && copy > 0
		s = ok ? $5 / copy : 0
		share = ok ? sprintf("%.3f", s) : "nan"
		goal = ">=0.70 of copy"; met = s >= 0.7 ? "yes" : "missed"
	}
	if (!ok && goal != "")
		met = "n/a"
	printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", $1, $2, $3, $4, $5, $6,
		ratio, goal, met, $7, $8, share
}' "$dir/perftest.csv" > "$dir/bench.csv"

# ---- scaling: the rate must not fall as QPs are added ----------------------
# For each vCPU count, each row's shca rate over that boot's 1-QP rate
# (vs_1qp); "holds" while it stays at or above 0.9 of it (the noise of
# two runs under emulation), else "falls".  The same for rxe, beside.
awk -F, 'NR == 1 {
	print "vcpus,qps,shca,rxe,ratio,shca_vs_1qp,rxe_vs_1qp,holds,shca_cpu,rxe_cpu"
	next
}
{
	if ($2 == 1) { s1[$1] = $3; r1[$1] = $4 }
	ratio = ($3 > 0 && $4 > 0) ? sprintf("%.3f", $3 / $4) : "nan"
	sv = s1[$1] > 0 ? $3 / s1[$1] : 0
	rv = r1[$1] > 0 ? $4 / r1[$1] : 0
	holds = sv <= 0 ? "n/a" : (sv >= 0.9 ? "yes" : "falls")
	svs = sv <= 0 ? "nan" : sprintf("%.3f", sv)
	rvs = rv <= 0 ? "nan" : sprintf("%.3f", rv)
	printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", $1, $2, $3, $4, ratio,
		svs, rvs, holds, $5, $6
}' "$dir/scaling.csv" > "$dir/scaling-table.csv"

{
	echo "perftest and NVMe over RDMA (fio), shca against rdma_rxe (same VM, one after the other)"
	echo "kernel memcpy of 64 KiB in the same boot: $copy MiB/s (copy_share: shca's bandwidth over it)"
	awk -F, 'NR == 2 && NF >= 4 {
		printf "the same 64 KiB by memmove: %s MiB/s, by a bare rep movsb: %s MiB/s\n", $3, $4 }' \
		"$dir/copy.csv"
	column -s, -t < "$dir/bench.csv"
	echo
	echo "verbs_rate 64 B writes with 1, 8 and 64 QPs on one CQ, per vCPU count (Mpps)"
	column -s, -t < "$dir/scaling-table.csv"
	echo
	echo "CQ sweep (ns: median of the repetitions; ps per entry looked at)"
	column -s, -t < "$dir/sweep.csv"
	echo
	echo "destroy_qp every 1 ms beside N neighbours busy on one CQ"
	column -s, -t < "$dir/destroy.csv"
	echo
	echo "memory (Slab + VmallocUsed growth while the objects live)"
	column -s, -t < "$dir/memory.csv"
	awk -F, '$1 == "qp" { q[$3] = $6 } $1 == "cq" { c[++nc] = $3; cb[nc] = $6 }
	END {
		for (s in q) printf "  per QP with %s-entry queues: %d bytes\n", s, q[s]
		if (nc == 2 && c[2] > c[1])
			printf "  per CQE: %.1f bytes\n", (cb[2] - cb[1]) / (c[2] - c[1])
	}' "$dir/memory.csv"
} > "$dir/report.txt"
cat "$dir/report.txt"

# ---- plots -----------------------------------------------------------------
if ! command -v gnuplot >/dev/null; then
	echo "bench-report: gnuplot is not installed; no plots" >&2
	exit 1
fi
awk -F, 'NR > 1 { printf "\"%s %s %sQP\" %s\n", $1, $2, $3,
	$7 == "nan" ? "NaN" : $7 }' "$dir/bench.csv" > "$dir/.bench.dat"
# placeholder FILE COL: whether FILE has no positive figure in column COL
# (a guest whose clock could not time the runs), so that the plot says so
# instead of failing.
placeholder() {
	! awk -F, -v c="$2" 'NR > 1 && $c > 0 { n++ } END { exit !n }' "$1"
}
sweep_plot="\"$dir/.sweep-depth.dat\" using 3:6 title \"full ring, depth = entries, 50% victim\", \"$dir/.sweep-entries.dat\" using 3:6 title \"ring of $(awk -F, '$1 == "entries" { print $2; exit }' "$dir/sweep.csv") entries, partly full\""
if placeholder "$dir/sweep.csv" 6; then
	sweep_plot="\"$dir/.sweep-depth.dat\" using 3:(1) title \"no figures: the clock could not time these sweeps\""
fi
# Without a single ratio (perftest could not time), the plot shows why.
if awk -F, 'NR > 1 && $7 != "nan" { n++ } END { exit !n }' "$dir/bench.csv"; then
	ratios="\"$dir/.bench.dat\" using 2:xtic(1) title \"ratio\","
else
	ratios="\"$dir/.bench.dat\" using (1):xtic(1) title \"no figures: perftest could not time these runs\","
fi
awk -F, 'NR > 1 { print > ("'"$dir"'/.sweep-" $1 ".dat") }' "$dir/sweep.csv"
awk -F, 'NR > 1 { print > ("'"$dir"'/.destroy-" $1 ".dat") }' "$dir/destroy.csv"

gnuplot <<EOF
set terminal pngcairo size 1100,600 noenhanced font ",10"
set datafile separator whitespace
set output "$dir/bench.png"
set title "shca / rdma_rxe, perftest in one VM (latency: lower is better; rates: higher)"
set style data histograms
set style fill solid 0.7
set boxwidth 0.8
set logscale y
set yrange [0.01:100]
set ylabel "shca / rxe"
set xtics rotate by -35
set grid ytics
plot $ratios \
	3 with lines dt 2 lw 2 title "rate goal (>= 3)", \
	0.2 with lines dt 3 lw 2 title "latency goal (<= 1/5)", \
	1 with lines lc rgb "gray" title "parity"

set output "$dir/sweep.png"
set title "CQ sweep: time against the entries between consumer and producer index"
unset style
set style data linespoints
set datafile separator ","
set logscale xy
set autoscale y
set xtics norotate
set xlabel "entries looked at"
set ylabel "ns (median)"
set key top left
plot $sweep_plot

set output "$dir/destroy.png"
set title "Neighbours' completions per second: alone, and with a QP destroyed every ms"
unset logscale
set logscale x 2
set xlabel "neighbour QPs on the CQ"
set ylabel "completions / s"
set yrange [0:*]
plot "$dir/.destroy-shared.dat" using 2:9 title "alone (before the shared-CQ run)", \
	"$dir/.destroy-shared.dat" using 2:10 title "victims on the same CQ", \
	"$dir/.destroy-own.dat" using 2:10 title "victims on their own CQ (control)"
EOF
rm -f "$dir"/.bench.dat "$dir"/.sweep-*.dat "$dir"/.destroy-*.dat
echo
echo "bench-report: $dir/bench.csv, $dir/bench.png, $dir/sweep.png, $dir/destroy.png"
