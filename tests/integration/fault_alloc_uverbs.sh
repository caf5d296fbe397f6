#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every create path of a process (alloc_ucontext, alloc_pd, reg_user_mr,
# create_ah, create_cq, create_qp for RC, UC, UD and on an SRQ,
# create_srq), with each allocation made under shca failed in turn
# (failslab and fail_page_alloc through the calling thread's fail-nth,
# filtered to shca's text): tests/user/fault_step makes what the object
# needs, then for N = 1, 2, ... arms its own fail-nth and does the one
# create.  Each failing step must be a clean errno; the loop ends at the
# step where no fault is left to inject and the create succeeds.  Then the
# process destroys that object and, still holding what it made first, must
# show in "rdma res" exactly what it showed before the steps: whatever a
# failed step had left behind would still be there.  make check fails
# each create's 1st allocation and every third after it (FAULT_STRIDE),
# make check-long every one.
# shca-timeout: 600
# Debian builds no fault injection: the debug kernel's config has it.
# shca-kernels: debug
# shca-long: every allocation, and UC, UD and SRQ-attached QPs too
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fault_lib.sh"

fault_need
use_rdma_core
step_bin=$SHCA_TOP/out/user/fault_step
[ -x "$step_bin" ] || fail "no $step_bin; run scripts/build-user.sh"
mkdummy shca_d0
rdma link add shca0 type shca netdev shca_d0
wait_for grep -qv '^0000:0000:0000:0000' /sys/class/infiniband/shca0/ports/1/gids/0 ||
	fail "shca0 has no GID 0"
fault_setup

# The conversation with fault_step: it reads "step N" or "stop" from one
# FIFO and prints a line per step into another.
fin=/tmp/fault_step.in
fout=/tmp/fault_step.out
trap '' PIPE
rm -f $fin $fout
mkfifo $fin $fout

# step_start OBJ; step_line (sets line and its words); step_done; step_end.
step_start() {
	"$step_bin" shca0 "$1" < $fin > $fout 2>&1 &
	step_pid=$!
	exec 3> $fin 4< $fout
}
step_line() {
	line=''
	read -r -t 120 -u 4 line || fail "fault_step $obj: no answer"
	set -- $line
	[ $# -eq 6 ] && [ "$3" = err ] || fail "fault_step: $line"
	step_n=$2 step_err=$4 step_inj=$6
}
# step_done: stop the loop; fault_step destroys the last object and holds
# what it made first, which must be all "rdma res" shows: anything a
# failed step left behind would still be there.
step_done() {
	local base=$1 res

	echo stop >&3
	read -r -t 120 -u 4 line || fail "fault_step $obj: no answer to stop"
	[ "$line" = "$obj done" ] || fail "fault_step $obj: $line"
	res=$(res_summary shca0)
	[ "$res" = "$base" ] ||
		fail "$obj: rdma res '$res' after the steps, '$base' before"
}
step_end() {
	local rest rc=0

	exec 3>&-
	rest=$(cat <&4)
	exec 4<&-
	wait $step_pid || rc=$?
	[ $rc -eq 0 ] && [ -z "$rest" ] || fail "fault_step $obj: exit $rc: $rest"
}

base0=$(res_summary shca0)
total_steps=0 total_failed=0 total_tolerated=0 total_slab=0 total_page=0
# make check fails each allocation of one kind of QP, RC's, whose create
# path UC's, UD's and those on an SRQ share; make check-long every
# kind of QP.
objs="ctx pd mr ah cq qp_rc srq"
[ "$SHCA_LONG" != 1 ] || objs+=" qp_uc qp_ud qp_srq"
for obj in $objs; do
	step_start "$obj"
	step_line
	base=$(res_summary shca0)
	failed=0 tolerated=0 slab_sum=0 page_sum=0 errs=''
	for ((n = 1; n <= 300; n += FAULT_STRIDE)); do
		fault_injected; before_slab=$slab before_page=$page
		echo "step $n" >&3
		step_line
		fault_injected
		slab=$((slab - before_slab)) page=$((page - before_page))
		slab_sum=$((slab_sum + slab)) page_sum=$((page_sum + page))
		inj=$((slab + page))
		[ "$step_n" -eq $n ] || fail "$obj: step $n answered '$line'"
		[ "$step_inj" -eq $inj ] ||
			fail "$obj step $n: fail-nth says injected $step_inj, $inj faults counted"
		if [ "$step_err" -ne 0 ]; then
			[ $inj -eq 1 ] ||
				fail "$obj step $n: failed (errno $step_err) with no fault injected"
			failed=$((failed + 1))
			errs+="$step_err "
			continue
		fi
		if [ $inj -eq 1 ]; then
			tolerated=$((tolerated + 1))
			continue
		fi
		break
	done
	[ $inj -eq 0 ] && [ "$step_err" -eq 0 ] || fail "$obj: no clean step in 300"
	# These surely allocate in shca's text (rings, its own objects): no
	# fault injected means the filter no longer matches, and nothing was
	# tested.
	case $obj in
	mr | cq | qp_rc | qp_uc | qp_ud | qp_srq | srq)
		[ $((slab_sum + page_sum)) -ge 1 ] ||
			fail "$obj: no fault injected; is the filter still shca's text?"
		;;
	esac
	res=$(res_summary shca0)
	[ "$res" != "$base" ] || [ "$obj" = ah ] ||
		fail "$obj: created, yet rdma res unchanged: '$res'"
	step_done "$base"
	step_end
	echo "$obj: $((failed + tolerated)) allocations failed in turn" \
		"($FAULT_WHICH; $slab_sum slab," \
		"$page_sum page): $failed clean errors [$([ -z "$errs" ] || echo $errs |
		tr ' ' '\n' | sort | uniq -c | awk '{ printf "%s%sx errno %s", s, $1, $2; s = " " }')]," \
		"$tolerated tolerated; step $n succeeded (rdma res: $res)"
	total_steps=$((total_steps + failed + tolerated + 1))
	total_failed=$((total_failed + failed))
	total_tolerated=$((total_tolerated + tolerated))
	total_slab=$((total_slab + slab_sum))
	total_page=$((total_page + page_sum))
done
fault_restore

# Nothing is left of the processes.
[ "$(res_summary shca0)" = "$base0" ] ||
	fail "rdma res '$(res_summary shca0)' at the end, '$base0' at the start"
rdma link delete shca0
echo "total: $total_steps steps, $((total_slab + total_page)) faults injected" \
	"($total_slab slab, $total_page page): $total_failed clean errors," \
	"$total_tolerated tolerated"
echo ok
