#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A process's rings are charged to its memory cgroup.  In a cgroup v2
# group with a small memory.max, a process creates big CQs and a deep QP:
# memory.current grows by their rings and falls back when they go; CQs
# past memory.max fail with ENOMEM, nobody is OOM-killed, nothing is left
# behind and the device still carries traffic.  Skipped on a kernel
# without the memory controller.
# make check runs it on the stock kernels: what it proves is the memory
# cgroup's accounting, on Debian's configs, not memory safety, which the
# debug kernel's tests of the same paths watch; make check-long on the
# debug kernel too.
# shca-check-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

use_rdma_core
t=$SHCA_TOP/out/user/shca_uverbs_test
[ -x "$t" ] || fail "no $t; run scripts/build-user.sh"

root=/sys/fs/cgroup
if ! grep -q "^[^ ]* $root cgroup2 " /proc/mounts; then
	mount -t cgroup2 none "$root" 2>/dev/null ||
		skip "cannot mount cgroup2 (no cgroup v2 in this kernel)"
fi
grep -qw memory "$root/cgroup.controllers" ||
	skip "the kernel has no memory cgroup controller"
echo +memory > "$root/cgroup.subtree_control"
cg=$root/shca_memcg
[ ! -d "$cg" ] || rmdir "$cg"
mkdir "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo 96M > "$cg/memory.max"
[ ! -f "$cg/memory.swap.max" ] || echo 0 > "$cg/memory.swap.max"

two_devices
out=$SHCA_OUT/uverbs-memcg.txt
# Unkillable by the OOM killer: a charge past the limit must fail the
# allocation that makes it, never end the process.
SHCA_CGROUP=$cg timeout 120 bash -c \
	'echo $$ > "$SHCA_CGROUP/cgroup.procs" &&
	 echo -1000 > /proc/self/oom_score_adj && exec "$0" shca0 memcg' \
	"$t" > "$out" 2>&1 || fail "$(grep -v '^ok' "$out")"
cat "$out"
ktap_check "$out" memcg_cq_rings_charged memcg_cq_rings_uncharged \
	memcg_qp_rings_charged memcg_limit_enomem memcg_limit_held \
	memcg_limit_reached memcg_device_works_after
grep -q '^oom_kill 0$' "$cg/memory.events" ||
	fail "an OOM kill in the group: $(cat "$cg/memory.events")"
wait_for bash -c "! rdma res show cq | grep -q shca_uverbs" ||
	fail "CQs of the process remain"
wait_for bash -c "! rdma res show qp | grep -q shca_uverbs" ||
	fail "QPs of the process remain"
# The group is empty again: every ring's charge went with it.
wait_for bash -c "[ \$(cat $cg/memory.current) -lt 8388608 ]" ||
	fail "memory.current stays at $(cat "$cg/memory.current")"
echo ok
