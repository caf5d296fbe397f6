#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The soak, inside the guest: a randomised mix of traffic and faults.
#
#   soak.sh [--seconds N] [--seed N] [--workers N] [--no-reload]
#           [--report FILE]
#
# Two shca devices on dummy netdevs carry --workers traffic processes at a
# time (tests/user/shca_soak.c: RC, UC and UD lanes, shared CQs, an SRQ,
# MRs, every completion checked; destroy, reset and garbage in their own
# rings mid-traffic).  Beside them, drawn from a shuffled deck seeded by
# --seed, the soak kills a process with SIGKILL, deletes a device with
# "rdma link delete" and adds it again, deletes a netdev (which takes its
# device) and makes it again, or, with every process stopped, checks that
# "rdma res" holds nothing of theirs and unloads and reloads shca.  At the
# end it stops everything, deletes the devices, checks that "rdma res" is
# empty, unloads shca and checks that the kernel log has no report, then
# prints the operations by kind, the completions checked, the faults by
# kind and the errors.  Exit status 0 only with no error.  --no-reload
# leaves the unload and reload out of the deck (make check's soak_short:
# under KASAN they take a minute and a half, and every test of make check
# ends with shca unloaded, rmmod_race under load).
#
# Runs as root with SHCA_TOP, SHCA_OUT and SHCA_KERNEL set (vm.sh, or the
# integration test soak_short).  shca may or may not be loaded.
. "$SHCA_TOP/tests/lib.sh"
. "$SHCA_TOP/scripts/guest/lib.sh"
set +eu

seconds=${SOAK_SECONDS:-1800}
seed=${SOAK_SEED:-}
workers=6
report=
kinds=(kill link_delete netdev_delete reload)
while [ $# -gt 0 ]; do
	case "$1" in
	--no-reload) kinds=(kill link_delete netdev_delete); shift ;;
	--seconds) seconds=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--report) report=$2; shift 2 ;;
	*) echo "soak.sh: unknown argument $1"; exit 2 ;;
	esac
done
[ -n "$seed" ] || seed=$(( $(date +%s%N) % 1000000007 ))
RANDOM=$seed
echo "soak: seed $seed, ${seconds}s, $workers processes, kernel $(uname -r), $(nproc) CPUs"

use_rdma_core
bin=$SHCA_TOP/out/user/shca_soak
[ -x "$bin" ] || fail "no $bin; run scripts/build-user.sh"
wdir=$(mktemp -d /tmp/soak.XXXXXX)
dmesg_start=$(dmesg | wc -l)

declare -A ops=() wdev=() wepoch=() wid=() killed=() termed=() drawn=()
declare -A devepoch=([shca0]=0 [shca1]=0) devup=()
errors=0 next_id=0
stray=0 cqes=0

count() { ops[$1]=$(( ${ops[$1]:-0} + ${2:-1} )); }

err() {
	echo "soak: ERROR: $*"
	errors=$((errors + 1))
}

# dev_stats DEV: add a device's counters to the totals before it goes.  A
# counter row that is missing is an error, not a 0.
dev_stats() {
	local s v k
	[ -n "${devup[$1]}" ] || return 0
	s=$(rdma statistic show link "$1/1" 2>/dev/null | tr ' ' '\n')
	for k in stray_cqes cqes_written; do
		v=$(awk -v k="$k" '$0 == k { getline; print; exit }' <<<"$s")
		if ! [[ $v =~ ^[0-9]+$ ]]; then
			err "$1 has no $k counter: $(head -c 200 <<<"$s")"
			continue
		fi
		case $k in
		stray_cqes) stray=$((stray + v)) ;;
		cqes_written) cqes=$((cqes + v)) ;;
		esac
	done
}

netdev_up() {
	local n=$1
	ip link show "shca_d$n" >/dev/null 2>&1 && return 0
	mkdummy "shca_d$n" && ip addr add "10.11.$n.1/24" dev "shca_d$n"
}

# dev_up N: shcaN on shca_dN, with its IPv4 GID.
dev_up() {
	local n=$1
	netdev_up "$n" || { err "cannot make netdev shca_d$n"; return 1; }
	if ! rdma link add "shca$n" type shca netdev "shca_d$n"; then
		err "rdma link add shca$n failed"
		return 1
	fi
	count "op rdma link add"
	if ! wait_for grep -q "ffff:0a0b:0${n}01" \
		"/sys/class/infiniband/shca$n/ports/1/gids/3"; then
		err "shca$n has no IPv4 GID"
		return 1
	fi
	devup[shca$n]=1
}

dev_down_mark() {
	devup[$1]=
	devepoch[$1]=$(( ${devepoch[$1]} + 1 ))
}

start_worker() {
	local dev=shca$((RANDOM % 2)) id life pid
	[ -n "${devup[$dev]}" ] || dev=shca$(( 1 - ${dev#shca} ))
	[ -n "${devup[$dev]}" ] || return 0
	id=$next_id
	next_id=$((next_id + 1))
	life=$(( 3 + RANDOM % 25 ))
	# Niced, so that the faults keep their pace beside busy pollers.
	nice -n 10 "$bin" "$dev" "$((RANDOM * 32768 + RANDOM))" "$id" \
		"$life" "$wdir/stats.$id" 2> "$wdir/log.$id" &
	pid=$!
	wid[$pid]=$id
	wdev[$pid]=$dev
	wepoch[$pid]=${devepoch[$dev]}
	count "op process start"
}

# reap PID: collect one process's exit and judge it.
reap() {
	local pid=$1 rc
	wait "$pid"
	rc=$?
	if [ -n "${killed[$pid]}" ] && [ $rc -eq 137 ]; then
		count "end killed (SIGKILL)"
	elif [ -n "${termed[$pid]}" ] && [ $rc -eq 143 ]; then
		# Stopped before it had set up its SIGTERM handler.
		count "end stopped before it began"
	elif [ $rc -eq 0 ]; then
		count "end clean, all completions in"
	elif [ $rc -eq 3 ] && [ "${wepoch[$pid]}" != "${devepoch[${wdev[$pid]}]}" ]; then
		count "end device removed under it"
	else
		err "process ${wid[$pid]} on ${wdev[$pid]} exited with $rc:"
		sed 's/^/    /' "$wdir/log.${wid[$pid]}" | tail -n 20
	fi
	if grep -q 'error:' "$wdir/log.${wid[$pid]}" && [ $rc -ne 1 ] && [ $rc -ne 3 ]; then
		err "process ${wid[$pid]} logged errors:"
		grep 'error:' "$wdir/log.${wid[$pid]}" | head -n 10 | sed 's/^/    /'
	fi
	unset "wid[$pid]" "wdev[$pid]" "wepoch[$pid]" "killed[$pid]" \
		"termed[$pid]"
}

reap_done() {
	local pid
	for pid in "${!wid[@]}"; do
		kill -0 "$pid" 2>/dev/null || reap "$pid"
	done
}

# stop_all: every process ends its traffic, waits for every completion it
# expects and frees what it holds; one that does not end in time is an
# error.
stop_all() {
	local pid i
	for pid in "${!wid[@]}"; do
		termed[$pid]=1
		kill -TERM "$pid" 2>/dev/null
	done
	for i in $(seq 1800); do
		[ ${#wid[@]} -eq 0 ] && return 0
		reap_done
		sleep 0.1
	done
	for pid in "${!wid[@]}"; do
		err "process ${wid[$pid]} did not stop in 180s"
		kill -9 "$pid" 2>/dev/null
		killed[$pid]=1
		reap "$pid"
	done
}

# no_user_res: rdma res shows no object of a soak process.
no_user_res() {
	local k left
	for k in qp cq mr pd srq; do
		left=$(rdma res show "$k" 2>/dev/null | grep -c shca_soak)
		if [ "$left" -ne 0 ]; then
			err "rdma res show $k: $left objects of dead processes"
			rdma res show "$k" | grep shca_soak | head -n 5
		fi
	done
}

act_kill() {
	local pids=("${!wid[@]}") pid
	[ ${#pids[@]} -gt 0 ] || return 0
	pid=${pids[$((RANDOM % ${#pids[@]}))]}
	killed[$pid]=1
	kill -9 "$pid" 2>/dev/null
	count "fault kill -9 of a process"
}

act_link_delete() {
	local n=$((RANDOM % 2))
	[ -n "${devup[shca$n]}" ] || return 0
	dev_stats "shca$n"
	dev_down_mark "shca$n"
	if ! timeout 120 rdma link delete "shca$n"; then
		err "rdma link delete shca$n failed"
		return
	fi
	count "fault rdma link delete under traffic"
	wait_for bash -c "! rdma dev show shca$n >/dev/null 2>&1" ||
		err "shca$n still there after rdma link delete"
	dev_up "$n"
}

act_netdev_delete() {
	local n=$((RANDOM % 2))
	[ -n "${devup[shca$n]}" ] || return 0
	dev_stats "shca$n"
	dev_down_mark "shca$n"
	if ! timeout 120 ip link del "shca_d$n"; then
		err "ip link del shca_d$n failed"
		return
	fi
	count "fault netdev deleted under traffic"
	wait_for bash -c "! rdma dev show shca$n >/dev/null 2>&1" ||
		err "shca$n still there after its netdev went"
	dev_up "$n"
}

# tick WHAT: how long since the last tick, for the log.
tick() {
	local t
	t=$(date +%s%N)
	echo "soak:   $1 $(( (t - ${tick_last:-$t}) / 1000000 ))ms"
	tick_last=$t
}

act_reload() {
	tick_last=
	tick start
	stop_all
	tick "processes stopped"
	count "op processes stopped for reload"
	no_user_res
	dev_stats shca0
	dev_stats shca1
	dev_down_mark shca0
	dev_down_mark shca1
	if ! timeout 120 rmmod shca; then
		err "rmmod shca failed while idle"
		return
	fi
	count "op rmmod shca (idle)"
	tick rmmod
	grep -q shca <<<"$(rdma dev show 2>/dev/null)" &&
		err "shca devices after rmmod"
	if ! shca_guest_load; then
		err "insmod shca failed"
		return
	fi
	count "op insmod shca"
	tick insmod
	dev_up 0
	dev_up 1
	tick "devices up"
}

shca_guest_load || fail "cannot load shca"
dev_up 0 || fail "cannot add shca0"
dev_up 1 || fail "cannot add shca1"

# The checker must be able to fail: a process told to forget one send
# completion has to report the next one as out of sequence.
SHCA_SOAK_SELFTEST=1 timeout 120 "$bin" shca0 "$seed" 255 5 \
	"$wdir/selftest.stats" 2> "$wdir/selftest.log"
rc=$?
if [ $rc -eq 1 ] && grep -q 'lane 0: send completion' "$wdir/selftest.log"; then
	count "op checker self-test: lost CQE caught"
else
	err "the checker did not catch a forgotten completion (exit $rc):"
	head -n 5 "$wdir/selftest.log"
fi

# The deck: each kind of fault in its proportion, shuffled by the seed;
# the first deck holds one of each, so that a short soak has them all.
deck=()
decks=0
new_deck() {
	local i j t
	if [ $decks -eq 0 ]; then
		deck=("${kinds[@]}")
	else
		deck=(kill kill "${kinds[@]}" idle)
	fi
	decks=$((decks + 1))
	for ((i = ${#deck[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		t=${deck[$i]}; deck[$i]=${deck[$j]}; deck[$j]=$t
	done
}

# covered: every kind of fault of the deck has been drawn.
covered() {
	local k
	for k in "${kinds[@]}"; do
		[ -n "${drawn[$k]:-}" ] || return 1
	done
}

# The mix runs its time, and on until each kind was drawn once (for at
# most five minutes more: on a loaded host under TCG a device's removal
# can take half a minute).
start=$(date +%s)
end=$((start + seconds))
while now=$(date +%s); [ "$now" -lt "$end" ] ||
      { ! covered && [ "$now" -lt $((end + 300)) ]; }; do
	reap_done
	while [ ${#wid[@]} -lt "$workers" ]; do
		start_worker
		[ -n "${devup[shca0]}${devup[shca1]}" ] || break
	done
	sleep "$((RANDOM % 2)).$((RANDOM % 10))"
	[ ${#deck[@]} -gt 0 ] || new_deck
	a=${deck[0]}
	deck=("${deck[@]:1}")
	drawn[$a]=1
	t0=$(date +%s)
	case $a in
	kill) act_kill ;;
	link_delete) act_link_delete ;;
	netdev_delete) act_netdev_delete ;;
	reload) act_reload ;;
	esac
	echo "soak: +$((t0 - start))s $a with ${#wid[@]} processes ($(( $(date +%s) - t0 ))s)"
	[ $errors -lt 20 ] || break
done

# The end: everything stopped and freed, the devices gone, nothing left.
stop_all
no_user_res
dev_stats shca0
dev_stats shca1
rdma link delete shca0 || err "rdma link delete shca0 at the end failed"
rdma link delete shca1 || err "rdma link delete shca1 at the end failed"
wait_for bash -c '[ -z "$(rdma res show)" ]' ||
	err "rdma res is not empty at the end: $(rdma res show)"
# Unloaded, so that the guest's last kmemleak scan sees all of it freed.
if timeout 300 rmmod shca; then
	count "op rmmod shca (idle)"
else
	err "rmmod shca at the end failed"
fi
ip link del shca_d0 2>/dev/null
ip link del shca_d1 2>/dev/null
[ "$stray" -eq 0 ] || err "the driver met $stray CQEs it could not place"

reports=$(dmesg | tail -n +"$((dmesg_start + 1))" |
	grep -cE 'BUG:|WARNING:|KASAN:|UBSAN:|INFO: task .* blocked|soft lockup|Oops|kernel panic')
[ "$reports" -eq 0 ] || err "$reports kernel reports in the log"

# Sum the processes' counters.
declare -A sum=()
for f in "$wdir"/stats.*; do
	[ -f "$f" ] || continue
	while read -r k v; do
		sum[$k]=$(( ${sum[$k]:-0} + v ))
	done < "$f"
done
errors=$(( errors + ${sum[errors]:-0} ))

# Any soak must have checked completions (a thousand of each kind: a
# short one on the debug kernel checks tens of thousands), seen a process
# end clean with all of them in, and drained quietly on CQ events.
for k in cqe_checked_send cqe_checked_recv; do
	[ "${sum[$k]:-0}" -ge 1000 ] || err "only ${sum[$k]:-0} $k"
done
[ "${ops["end clean, all completions in"]:-0}" -gt 0 ] ||
	err "no process ended clean with all its completions in"
[ "${sum[op_quiet]:-0}" -gt 0 ] || err "no process drained quietly"
# A soak of five minutes or more must have done each thing it claims to
# do.  A shorter one may not get that far on a loaded host under TCG (the
# debug kernel can take minutes over a device's removal and shca's unload).
if [ "$seconds" -ge 300 ]; then
	[ "${sum[cq_events]:-0}" -gt 0 ] || err "never happened: a CQ event"
	for k in "fault kill -9 of a process" "fault rdma link delete under traffic" \
		 "fault netdev deleted under traffic" "op rmmod shca (idle)" \
		 "end clean, all completions in"; do
		[ "${ops[$k]:-0}" -gt 0 ] || err "never happened: $k"
	done
	for k in fault_destroy_mid_traffic fault_reset_mid_traffic \
		 fault_garbage_opcode fault_garbage_sge fault_garbage_inline \
		 fault_garbage_sq_pi fault_garbage_recv_wqe fault_garbage_cq_ci \
		 cqe_checked_send cqe_checked_recv cqe_swept_at_teardown \
		 cqe_neighbours_at_teardown; do
		[ "${sum[$k]:-0}" -gt 0 ] || err "never happened: $k"
	done
fi

{
	echo "soak report: seed $seed, $(( $(date +%s) - start ))s, kernel $(uname -r), $(nproc) CPUs"
	echo "operations:"
	for k in "${!ops[@]}"; do
		[[ $k == op* || $k == end* ]] && printf '  %-45s %10d\n' "$k" "${ops[$k]}"
	done | sort
	for k in "${!sum[@]}"; do
		[[ $k == op_* ]] && printf '  %-45s %10d\n' "${k#op_}" "${sum[$k]}"
	done | sort
	printf '  %-45s %10d\n' "cq events waited for" "${sum[cq_events]:-0}"
	echo "completions:"
	printf '  %-45s %10d\n' "send completions checked" "${sum[cqe_checked_send]:-0}" \
		"receive completions checked" "${sum[cqe_checked_recv]:-0}" \
		"completions of garbage-fed QPs" "${sum[cqe_garbage_qp]:-0}" \
		"expected ones a teardown took (swept)" "${sum[cqe_swept_at_teardown]:-0}" \
		"unpolled in the CQs at a teardown" "${sum[cqe_unpolled_at_teardown]:-0}" \
		"  of them the neighbours'" "${sum[cqe_neighbours_at_teardown]:-0}" \
		"CQEs the devices wrote" "$cqes" \
		"CQEs the driver could not place" "$stray"
	echo "faults injected:"
	for k in "${!ops[@]}"; do
		[[ $k == fault* ]] && printf '  %-45s %10d\n' "${k#fault }" "${ops[$k]}"
	done | sort
	for k in "${!sum[@]}"; do
		[[ $k == fault_* ]] && printf '  %-45s %10d\n' "${k#fault_}" "${sum[$k]}"
	done | sort
	echo "rdma res at the end: $(rdma res show | wc -l) lines"
	echo "kernel reports: $reports"
	echo "errors: $errors"
} | tee ${report:+"$report"}
rm -rf "$wdir"
[ $errors -eq 0 ]
