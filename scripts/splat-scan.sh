#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan a kernel log for reports that make a test run fail: BUG, WARNING
# (lockdep reports are WARNINGs), KASAN, UBSAN, kmemleak, hung tasks,
# soft lockups, oopses and panics.  Prints each report with its context
# and exits 1 if there was any.
set -euo pipefail
log=$1
pat='(BUG:|WARNING:|KASAN:|UBSAN:|Oops:|Kernel panic|general protection fault|'
pat+='kernel BUG at|INFO: task .* blocked for more than|'
pat+='kmemleak: [0-9]+ new suspected memory leak|unreferenced object 0x|'
pat+='INFO: possible|INFO: trying to register non-static key|'
pat+='watchdog: BUG|rcu: INFO: rcu_.* detected stalls)'
# Reports are kernel messages: only look after the printk timestamp.
if grep -nE "^\[ *[0-9]+\.[0-9]+\] $pat|^$pat" "$log" > /dev/null; then
	echo "[shca] kernel report(s) in $log:" >&2
	grep -m 20 -nE "^\[ *[0-9]+\.[0-9]+\] $pat|^$pat" "$log" >&2
	first=$(grep -m 1 -nE "^\[ *[0-9]+\.[0-9]+\] $pat|^$pat" "$log" |
		cut -d: -f1)
	echo "[shca] --- first report, in context ---" >&2
	sed -n "$((first > 5 ? first - 5 : 1)),$((first + 60))p" "$log" >&2
	echo "[shca] ---" >&2
	exit 1
fi
exit 0
