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
#                     the kernel's copy rate, each figure's spread
#   DIR/scaling-table.csv   verbs_rate with 1, 8 and 64 QPs, per vCPU count
#                     and number of posting threads
#   DIR/destroy-table.csv   destroy under load, per CQ mode and neighbours
#   DIR/churn.csv     the neighbours' dip with victims against the CPU
#                     burner's
#   DIR/report.txt    every table, as printed
# The raw files hold one row per run, the last column its round; every
# figure here is the median of the rounds (the mean of the middle two for
# an even count), and the figures that make the goals come with their
# minimum and maximum.
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

# median KEYS VALS SPREAD < CSV: one row per key (the columns KEYS, in
# the order the keys first appear), with the median of each column of
# VALS over the key's rows, then the minimum and maximum of each column
# of SPREAD, then the number of rows (rounds).  Column lists are
# comma-separated numbers.  Figures that are not numbers ("nan", "inf")
# are left out; a column with none is "nan", or empty if it was empty in
# every row (a figure a run does not give).
median() {
	awk -F, -v OFS=, -v keys="$1" -v vals="$2" -v spread="$3" '
	function isnum(x) { return x ~ /^-?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
	function med(k, c,   n, i, j, t, a) {
		n = cnt[k, c]
		if (!n)
			return any[k, c] ? "nan" : ""
		for (i = 1; i <= n; i++)
			a[i] = v[k, c, i]
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		if (n % 2)
			return a[(n + 1) / 2]
		return sprintf("%.6g", (a[n / 2] + a[n / 2 + 1]) / 2)
	}
	function ext(k, c, hi,   i, x, r) {
		if (!cnt[k, c])
			return any[k, c] ? "nan" : ""
		r = v[k, c, 1]
		for (i = 2; i <= cnt[k, c]; i++) {
			x = v[k, c, i]
			if ((hi && x + 0 > r + 0) || (!hi && x + 0 < r + 0))
				r = x
		}
		return r
	}
	BEGIN {
		nk = split(keys, kc, ","); nv = split(vals, vc, ",")
		ns = split(spread, sc, ",")
		# Each column once, whether a median, a spread or both.
		for (i = 1; i <= nv + ns; i++) {
			c = i <= nv ? vc[i] : sc[i - nv]
			if (!(c in isall)) { isall[c] = 1; all[++na] = c }
		}
	}
	NR == 1 {
		h = ""
		for (i = 1; i <= nk; i++) h = h (i > 1 ? "," : "") $kc[i]
		for (i = 1; i <= nv; i++) h = h "," $vc[i]
		for (i = 1; i <= ns; i++) h = h "," $sc[i] "_min," $sc[i] "_max"
		print h ",rounds"
		next
	}
	{
		k = $kc[1]
		for (i = 2; i <= nk; i++) k = k "," $kc[i]
		if (!(k in rows)) order[++n] = k
		rows[k]++
		for (i = 1; i <= na; i++) {
			c = all[i]
			if (isnum($c))
				v[k, c, ++cnt[k, c]] = $c
			else if ($c != "")
				any[k, c] = 1
		}
	}
	END {
		for (r = 1; r <= n; r++) {
			k = order[r]; line = k
			for (i = 1; i <= nv; i++) line = line "," med(k, vc[i])
			for (i = 1; i <= ns; i++)
				line = line "," ext(k, sc[i], 0) "," ext(k, sc[i], 1)
			print line "," rows[k]
		}
	}'
}

# ---- the yardsticks ---------------------------------------------------------
# The kernel's copy rate of 64 KiB by memcpy(), memmove() and rep movsb,
# and one system call's time, each the median of the rounds.
median 1 2,3,4,5 2,5 < "$dir/copy.csv" > "$dir/copy-table.csv"
copy=$(awk -F, 'NR == 2 { print $2 }' "$dir/copy-table.csv")

# ---- perftest: the ratio is the result ----------------------------------
# Latency: shca/rxe at most 1/5.  Small-message rate: at least 3 through
# perftest, 5 through verbs_rate.  64 KiB bandwidth: at least 70% of the
# kernel's own copy rate in the same boot (copy.csv, MiB/s like
# perftest's MB/sec), shown as copy_share.  A figure perftest could not
# give (no CPU clock rate) is "nan", and so is its ratio.  shca_cpu and
# rxe_cpu are busy CPU microseconds per message, both vCPUs together.
# Every figure is the median of the rounds; the ratio is the medians'.
median 1,2,3,4 5,6,7,8 5,6 < "$dir/perftest.csv" |
awk -F, -v copy="$copy" 'NR == 1 {
	print "test,bytes,qps,unit,shca,rxe,ratio,goal,met,shca_cpu,rxe_cpu,copy_share,shca_min,shca_max,rxe_min,rxe_max,rounds"
	next
}
{
	# A figure of 0 is no figure: a latency of 0 meets no goal.
	ok = $5 != "nan" && $6 != "nan" && $5 > 0 && $6 > 0
	# Judged as shown: a ratio printed as 3.000 meets ">=3".
	r = ok ? sprintf("%.3f", $5 / $6) + 0 : 0
	ratio = ok ? sprintf("%.3f", r) : "nan"
	goal = ""; met = ""; share = ""
	if ($4 == "usec") {
		goal = "<=0.2"; met = r <= 0.2 ? "yes" : "missed"
	} else if ($4 == "Mpps") {
		g = $1 == "verbs_rate" ? 5 : 3
		goal = ">=" g; met = r >= g ? "yes" : "missed"
	} else if ($4 == "MB/s" && $2 == 65536 && $1 !~ /^nvme/) {
		ok = $5 != "nan" && copy > 0
		s = ok ? sprintf("%.3f", $5 / copy) + 0 : 0
		share = ok ? sprintf("%.3f", s) : "nan"
		goal = ">=0.70 of copy"; met = s >= 0.7 ? "yes" : "missed"
	}
	if (!ok && goal != "")
		met = "n/a"
	printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", $1, $2,
		$3, $4, $5, $6, ratio, goal, met, $7, $8, share, $9, $10, $11,
		$12, $13
}' > "$dir/bench.csv"

# ---- scaling: the rate must not fall as QPs are added ----------------------
# For each vCPU count, each row's shca rate over that boot's 1-QP rate
# (vs_1qp).  With one posting thread the rate must hold: at least 0.9 of
# the 1-QP rate (the noise of runs under emulation), else it "falls".
# With a posting thread per vCPU, more QPs must be faster: at least 1.5
# times the 1-QP rate.  The same ratios for rxe, beside.
median 1,2,7 3,4,5,6 3,4 < "$dir/scaling.csv" | awk -F, 'NR == 1 {
	print "vcpus,qps,threads,shca,rxe,ratio,shca_vs_1qp,rxe_vs_1qp,goal,met,shca_cpu,rxe_cpu,shca_min,shca_max,rxe_min,rxe_max,rounds"
	next
}
{
	if ($2 == 1 && $3 == 1) { s1[$1] = $4; r1[$1] = $5 }
	ratio = ($4 > 0 && $5 > 0) ? sprintf("%.3f", $4 / $5) : "nan"
	sv = s1[$1] > 0 ? sprintf("%.3f", $4 / s1[$1]) + 0 : 0
	rv = r1[$1] > 0 ? $5 / r1[$1] : 0
	g = $3 == 1 ? 0.9 : 1.5
	goal = ">=" g " of 1 QP"
	met = sv <= 0 ? "n/a" : (sv >= g ? "yes" : ($3 == 1 ? "falls" : "missed"))
	svs = sv <= 0 ? "nan" : sprintf("%.3f", sv)
	rvs = rv <= 0 ? "nan" : sprintf("%.3f", rv)
	printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", $1, $2,
		$3, $4, $5, ratio, svs, rvs, goal, met, $6, $7, $8, $9, $10,
		$11, $12
}' > "$dir/scaling-table.csv"

# ---- churn: the dip destroys cause, against the dip any CPU load causes -----
# destroy.csv's runs, each figure the median of the rounds, drop_pct with
# its spread.  churn.csv: per neighbour count, the neighbours' dip with
# victims on their CQ (shared), on a CQ of their own (own) and with the
# CPU burner in their place (burn); with 64 neighbours the dip must be at
# most 10%, with fewer at most 3 points above the burner's.
median 1,2 "$(seq -s, 3 17)" 11 < "$dir/destroy.csv" > "$dir/destroy-table.csv"
awk -F, 'NR > 1 { d[$1, $2] = $11; lo[$1, $2] = $18; hi[$1, $2] = $19
		  if (!(($2) in seen)) { seen[$2] = 1; n[++nn] = $2 } }
END {
	print "neighbours,shared_drop_pct,shared_min,shared_max,own_drop_pct,burn_drop_pct,above_burn,goal,met"
	for (i = 1; i <= nn; i++) {
		k = n[i]
		if (!(("shared", k) in d))
			continue
		b = (("burn", k) in d) ? d["burn", k] : "nan"
		above = b == "nan" ? "nan" : sprintf("%.1f", d["shared", k] - b)
		if (k >= 64) {
			goal = "<=10%"; met = d["shared", k] <= 10 ? "yes" : "missed"
		} else {
			goal = "<=burn+3"
			met = above == "nan" ? "n/a" : (above + 0 <= 3 ? "yes" : "missed")
		}
		printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", k, d["shared", k],
			lo["shared", k], hi["shared", k], d["own", k], b, above,
			goal, met
	}
}' "$dir/destroy-table.csv" > "$dir/churn.csv"

{
	echo "perftest and NVMe over RDMA (fio), shca against rdma_rxe (same VM, one after the other)"
	awk -F, 'NR == 2 {
		printf "rounds: %s; every figure the median of the rounds, the goals with their min and max\n", $10
		printf "kernel memcpy of 64 KiB in the same boot: %s MiB/s (min %s, max %s; copy_share: shca'"'"'s bandwidth over it)\n", $2, $6, $7
		printf "the same 64 KiB by memmove: %s MiB/s, by a bare rep movsb: %s MiB/s\n", $3, $4
		printf "one system call (getppid): %s ns (min %s, max %s)\n", $5, $8, $9 }' \
		"$dir/copy-table.csv"
	column -s, -t < "$dir/bench.csv"
	awk -F, '$1 ~ /_bw$|^verbs_rate$/ && $2 == 64 && $10 > 0 && $11 > 0 {
		printf "%s CPU per 64 B message, shca over rxe: %.3f (goal <= 0.333)\n",
			$1 " " $3 " QP", $10 / $11 }' "$dir/bench.csv"
	echo
	echo "verbs_rate 64 B writes with 1, 8 and 64 QPs, on one posting thread and on one per vCPU, per vCPU count (Mpps)"
	column -s, -t < "$dir/scaling-table.csv"
	echo
	echo "CQ sweep (ns: median of the repetitions; ps per entry looked at)"
	column -s, -t < "$dir/sweep.csv"
	echo
	echo "destroy_qp every 1 ms beside N neighbours busy on one CQ (burn: a CPU burner in the victims' place)"
	column -s, -t < "$dir/destroy-table.csv"
	echo
	echo "the neighbours' dip (%): victims on the shared CQ, on their own, and the CPU burner"
	column -s, -t < "$dir/churn.csv"
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
awk -F, 'NR > 1 { print > ("'"$dir"'/.destroy-" $1 ".dat") }' "$dir/destroy-table.csv"

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
	"$dir/.destroy-own.dat" using 2:10 title "victims on their own CQ (control)", \
	"$dir/.destroy-burn.dat" using 2:10 title "a CPU burner in their place (control)"
EOF
rm -f "$dir"/.bench.dat "$dir"/.sweep-*.dat "$dir"/.destroy-*.dat
echo
echo "bench-report: $dir/bench.csv, $dir/bench.png, $dir/sweep.png, $dir/destroy.png"
