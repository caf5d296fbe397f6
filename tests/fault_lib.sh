# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for the fault-injection tests (tests/integration/fault_*.sh),
# sourced after tests/lib.sh.
#
# fault_setup points failslab and fail_page_alloc at shca: they fail
# nothing at random (probability 0), and a task's fail-nth counts, and
# fails, only allocations with a frame of shca.ko's text in their stack
# (require-start/require-end; in 6.12 should_fail_ex() checks the stack
# filter before it counts fail-nth down).  GFP_KERNEL, highmem and order-0
# allocations all count.  "times" is set high and read back to count the
# faults injected, per kind.  fault_restore undoes it all.

# FAULT_STRIDE: the fault loops fail the 1st allocation of a create and
# every third after it (the 4th, the 7th, ...) in make check, and every
# one in make check-long; FAULT_WHICH says which, for their reports.
# shellcheck disable=SC2034 # the fault tests' to read
if [ "${SHCA_LONG:-0}" = 1 ]; then
	FAULT_STRIDE=1 FAULT_WHICH='every one'
else
	FAULT_STRIDE=3 FAULT_WHICH='the 1st and every third after it'
fi

FS=/sys/kernel/debug/failslab
FP=/sys/kernel/debug/fail_page_alloc
fault_saved=()

# fault_need: skip on a kernel without what the tests need.
fault_need() {
	[ -d "$FS" ] || skip "no failslab (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)"
	[ -d "$FP" ] || skip "no fail_page_alloc (CONFIG_FAIL_PAGE_ALLOC)"
	[ -e "$FS/require-start" ] ||
		skip "no stack filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)"
	[ -e /proc/self/fail-nth ] || skip "no per-task fail-nth"
	[ -r /sys/module/shca/sections/.text ] || skip "no module sections in sysfs"
	command -v readelf > /dev/null || skip "no readelf"
}

# shca_text_range: "START END" of shca.ko's resident text, from the
# sections' load addresses in sysfs and their sizes in the module file.
shca_text_range() {
	local ko=$SHCA_BUILD/drivers/infiniband/sw/shca/shca.ko
	local name size addr start='' end='' a e

	while read -r name size; do
		case $name in .init*|.exit*) continue ;; esac
		[ -r "/sys/module/shca/sections/$name" ] || continue
		read -r addr < "/sys/module/shca/sections/$name"
		a=$((addr))
		e=$((a + 16#$size))
		if [ -z "$start" ] || [ "$a" -lt "$start" ]; then start=$a; fi
		if [ -z "$end" ] || [ "$e" -gt "$end" ]; then end=$e; fi
	done < <(readelf -SW "$ko" |
		 awk '/^ *\[ *[0-9]+\]/ { sub(/^ *\[ *[0-9]+\] */, "")
			if ($7 ~ /X/) print $1, $5 }')
	[ -n "$start" ] && [ "$end" -gt "$start" ] ||
		fail "cannot find shca's text"
	printf '0x%x 0x%x\n' "$start" "$end"
}

# ksym_range NAME: "START END" of a kernel function: its address and the
# next symbol's.  From the kernel's System.map, which is in address order,
# shifted by where _stext really is (reading all of /proc/kallsyms takes
# minutes under emulation); from /proc/kallsyms, sorted, when there is no
# System.map.
ksym_range() {
	local map k m r off sorted=cat

	map=/lib/modules/$(uname -r)/build/System.map

	if [ -r "$map" ]; then
		k=$(grep -m 1 ' _stext$' /proc/kallsyms || true)
		m=$(grep -m 1 ' _stext$' "$map" || true)
	else
		map=/proc/kallsyms k=0 m=0 sorted=sort
	fi
	r=$($sorted "$map" | awk -v n="$1" '
		found { if ($1 != start) { print start, $1; exit } }
		$3 == n && $2 ~ /^[tT]$/ { found = 1; start = $1 }')
	[ -n "$r" ] || return 0
	off=$((16#${k%% *} - 16#${m%% *}))
	printf '0x%x 0x%x\n' $((16#${r% *} + off)) $((16#${r#* } + off))
}

# fault_set FILE VALUE: VALUE into FILE, its old value kept for
# fault_restore.  Builtins only: under KASAN and TCG a fork costs a
# fraction of a second, and fault_setup sets thirty of them.
fault_set() {
	local f=$1 v=$2 old

	read -r old < "$f" || true
	fault_saved+=("$f=$old")
	echo "$v" > "$f"
}

fault_setup() {
	local range kml a

	range=$(shca_text_range)
	echo "shca text: $range"
	kml=$(ksym_range __alloc_object)
	[ -n "$kml" ] || kml="0 0"
	for a in "$FS" "$FP"; do
		fault_set "$a/probability" 0
		fault_set "$a/interval" 1
		fault_set "$a/space" 0
		fault_set "$a/times" 1000000000
		fault_set "$a/verbose" 0
		fault_set "$a/task-filter" N
		fault_set "$a/ignore-gfp-wait" N
		fault_set "$a/stacktrace-depth" 32
		# kmemleak's bookkeeping of each allocation is not shca's, and
		# falls back to a pool when it fails.
		fault_set "$a/reject-start" "${kml% *}"
		fault_set "$a/reject-end" "${kml#* }"
		fault_set "$a/require-start" "${range% *}"
		fault_set "$a/require-end" "${range#* }"
	done
	fault_set "$FP/ignore-gfp-highmem" N
	fault_set "$FP/min-order" 0
	fault_set "$FS/cache-filter" N
	trap fault_restore EXIT
}

fault_restore() {
	local i

	echo 0 > "/proc/self/task/$BASHPID/fail-nth" 2>/dev/null || true
	for ((i = ${#fault_saved[@]} - 1; i >= 0; i--)); do
		echo "${fault_saved[i]#*=}" > "${fault_saved[i]%%=*}" || true
	done
	fault_saved=()
}

# fault_injected: set slab and page to the faults of each kind injected
# since fault_setup.  Builtins only: it runs once or twice a step.
# shellcheck disable=SC2034 # slab and page are the caller's to read
fault_injected() {
	local t

	read -r t < "$FS/times"
	slab=$((1000000000 - t))
	read -r t < "$FP/times"
	page=$((1000000000 - t))
}

# res_summary DEV: the device's line of "rdma res", without the index.
res_summary() {
	rdma res show | awk -v d="$1:" '$2 == d { $1 = ""; print }'
}

# kstep STEP: run one step of shca_kstep.ko (tests/kmod/kconsumer/shca_kstep.c) and
# print its errno (0 for success).
KSTEP_CTL=/sys/kernel/debug/shca_kstep/step
kstep() {
	local w1 w3
	echo "$1" > $KSTEP_CTL 2>/dev/null || true
	while read -r w1 _ w3; do
		if [ "$w1" = last ]; then echo "$w3"; fi
	done < $KSTEP_CTL
}
