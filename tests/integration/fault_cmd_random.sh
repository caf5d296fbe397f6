#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Random command failures (the model's fail_cmd fault_attr): with
# probability 100 and "times" N, the next N commands that may fail do,
# from this test's tasks only (task-filter, make-it-fail).  Creates fail
# cleanly with -EIO and leave nothing behind; destroys never fail, even
# with every other command failing; once "times" runs out, or the
# probability is 0 again, the device works.
# Debian builds no fault injection: the debug kernel's config has it.
# shca-kernels: debug
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fault_lib.sh"

mkdummy shca_d0
rdma link add shca0 type shca netdev shca_d0
wait_for grep -qv '^0000:0000:0000:0000' /sys/class/infiniband/shca0/ports/1/gids/0 ||
	fail "shca0 has no GID 0"
F=/sys/kernel/debug/shca/shca0/fail_cmd
[ -d $F ] || skip "no fail_cmd (CONFIG_FAULT_INJECTION_DEBUG_FS)"
[ "$(cat $F/probability)" = 0 ] || fail "fail_cmd is on by default"


before=$(res_summary shca0)
insmod "$SHCA_BUILD/tests/kmod/kconsumer/shca_kstep.ko" dev=shca0
base=$(res_summary shca0)

# Only tasks with make-it-fail set, this shell and its children, fail.
echo 1 > $F/task-filter
echo 0 > $F/verbose
echo 1 > $F/interval
echo 1 > /proc/self/make-it-fail

steps="cq srq qp_rc qp_ud fr_mr cq_modify srq_query qp_modify"
n=$(echo $steps | wc -w)
echo $n > $F/times
echo 100 > $F/probability
for s in $steps; do
	r=$(kstep $s)
	[ "$r" = -5 ] || fail "$s: '$r' with every command failing, not -EIO"
done
[ "$(cat $F/times)" = 0 ] || fail "times $(cat $F/times) after $n failures"
[ "$(res_summary shca0)" = "$base" ] || fail "failed creates left '$(res_summary shca0)', before '$base'"
for s in $steps; do
	r=$(kstep $s)
	[ "$r" = 0 ] || fail "$s: '$r' once times ran out"
done
echo "$n creates and modifies failed with -EIO, then worked"

# At random: each step works or fails with -EIO, and leaves nothing.
echo 50 > $F/probability
echo -1 > $F/times
ok=0 eio=0
for _ in $(seq 3); do
	for s in $steps; do
		r=$(kstep $s)
		case $r in
		0) ok=$((ok + 1)) ;;
		-5) eio=$((eio + 1)) ;;
		*) fail "$s: '$r' with probability 50" ;;
		esac
	done
done
[ "$(res_summary shca0)" = "$base" ] || fail "random failures left '$(res_summary shca0)', before '$base'"
echo "probability 50: $ok worked, $eio failed with -EIO"
# Both outcomes, or the round proved one path only.  A step's commands
# are a handful at most, so each of its 24 runs works with probability
# 1/32 or better and fails with 1/2 or better: one outcome alone has odds
# under 1e-6.
[ $ok -ge 1 ] && [ $eio -ge 1 ] ||
	fail "probability 50 gave one outcome only: $ok worked, $eio failed"

# Every command that may fail does; the destroys of rmmod still work.
echo 100 > $F/probability
rmmod shca_kstep
[ "$(res_summary shca0)" = "$before" ] || fail "rmmod left '$(res_summary shca0)', before '$before'"
echo 0 > $F/probability
echo 0 > /proc/self/make-it-fail

insmod "$SHCA_BUILD/tests/kmod/kconsumer/shca_kstep.ko" dev=shca0
for s in $steps; do
	r=$(kstep $s)
	[ "$r" = 0 ] || fail "$s: '$r' after fail_cmd is off"
done
rmmod shca_kstep
rdma link delete shca0
echo ok
