#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every create path of a kernel consumer (alloc_pd with its get_dma_mr,
# alloc_mr, create_ah, create_cq, create_qp for RC, UC, UD and on an SRQ,
# create_srq), with each allocation made under shca failed in turn
# (failslab and fail_page_alloc through this shell's fail-nth, filtered to
# shca's text).  shca_kstep.ko runs one create per write, in the writer's
# task, and destroys it again.  Each failing step must be a clean errno;
# the loop ends at the step where no fault is left to inject and the
# create succeeds.  "rdma res" must then show what it showed before the
# steps: whatever a failed step had left behind would still be there.
# make check fails each create's 1st allocation and every third after it
# (FAULT_STRIDE), make check-long every one.
# shca-timeout: 600
# Debian builds no fault injection: the debug kernel's config has it.
# shca-kernels: debug
# shca-long: every allocation, and UC, UD and SRQ-attached QPs too
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fault_lib.sh"

fault_need
mkdummy shca_d0
rdma link add shca0 type shca netdev shca_d0
# The AH step addresses GID 0, which ib_core fills in from a workqueue.
wait_for grep -qv '^0000:0000:0000:0000' /sys/class/infiniband/shca0/ports/1/gids/0 ||
	fail "shca0 has no GID 0"
insmod "$SHCA_BUILD/tests/kmod/kconsumer/shca_kstep.ko" dev=shca0
ctl=/sys/kernel/debug/shca_kstep/step
nth=/proc/self/task/$BASHPID/fail-nth
fault_setup
base=$(res_summary shca0)
echo "rdma res: $base"

total_steps=0 total_failed=0 total_tolerated=0 total_slab=0 total_page=0
# make check fails each allocation of one kind of QP, RC's, whose create
# path UC's, UD's and those on an SRQ share; make check-long every
# kind of QP.
steps="pd dma_mr fr_mr ah cq qp_rc srq mcast_attach"
[ "$SHCA_LONG" != 1 ] || steps+=" qp_uc qp_ud qp_srq"
for step in $steps; do
	failed=0 tolerated=0 slab_sum=0 page_sum=0 errs=''
	for ((n = 1; n <= 200; n += FAULT_STRIDE)); do
		fault_injected; before_slab=$slab before_page=$page
		rc=0
		# The write is this shell's own (echo is a builtin), so the
		# create runs in the task whose fail-nth is armed.
		echo "$n" > "$nth"
		# shellcheck disable=SC2320 # the write's status: it is the step's
		echo "$step" > "$ctl" 2>/dev/null || rc=$?
		read -r left < "$nth"
		echo 0 > "$nth"
		fault_injected
		slab=$((slab - before_slab)) page=$((page - before_page))
		slab_sum=$((slab_sum + slab))
		page_sum=$((page_sum + page))
		inj=$((slab + page))
		[ $inj -eq $((left == 0)) ] ||
			fail "$step step $n: fail-nth left $left, $inj faults counted"
		while read -r w1 _ w3; do
			if [ "$w1" = last ]; then err=$w3; fi
		done < "$ctl"
		if [ $rc -ne 0 ]; then
			[ $inj -eq 1 ] ||
				fail "$step step $n: failed ($err) with no fault injected"
			[ "$err" -lt 0 ] || fail "$step step $n: no errno ($err)"
			failed=$((failed + 1))
			errs+="$err "
			continue
		fi
		[ "$err" = 0 ] || fail "$step step $n: write passed, result $err"
		if [ $inj -eq 1 ]; then
			tolerated=$((tolerated + 1))
			continue
		fi
		break
	done
	[ $inj -eq 0 ] && [ $rc -eq 0 ] || fail "$step: no clean step in 200"
	# These surely allocate in shca's text (rings, its own objects): no
	# fault injected means the filter no longer matches, and nothing was
	# tested.
	case $step in
	cq | qp_rc | qp_uc | qp_ud | qp_srq | srq | fr_mr)
		[ $((slab_sum + page_sum)) -ge 1 ] ||
			fail "$step: no fault injected; is the filter still shca's text?"
		;;
	esac
	# Whatever a failed step had left behind would still be there.
	[ "$(res_summary shca0)" = "$base" ] ||
		fail "$step: rdma res '$(res_summary shca0)' after the steps, '$base' before"
	echo "$step: $((failed + tolerated)) allocations failed in turn" \
		"($FAULT_WHICH; $slab_sum slab," \
		"$page_sum page): $failed clean errors [$([ -z "$errs" ] || echo $errs |
		tr ' ' '\n' | sort | uniq -c | awk '{ printf "%s%sx%s", s, $1, $2; s = " " }')]," \
		"$tolerated tolerated; step $n succeeded"
	total_steps=$((total_steps + failed + tolerated + 1))
	total_failed=$((total_failed + failed))
	total_tolerated=$((total_tolerated + tolerated))
	total_slab=$((total_slab + slab_sum))
	total_page=$((total_page + page_sum))
done
fault_restore

# The device still works for a real consumer, and nothing leaked.
echo qp_rc > "$ctl" || fail "qp_rc after the faults"
rmmod shca_kstep
rdma link delete shca0
echo "total: $total_steps steps, $((total_slab + total_page)) faults injected" \
	"($total_slab slab, $total_page page): $total_failed clean errors," \
	"$total_tolerated tolerated"
echo ok
