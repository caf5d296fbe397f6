#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rmmod beside a device teardown already in progress: "rdma link delete" or
# the netdev's deletion starts a teardown, and rmmod shca runs while it is
# inside the driver.  Module exit must wait for that teardown to leave the
# module's text.
#
# Slow rounds: debugfs teardown_delay_ms holds every teardown between the
# EQ and the model, and the read-only "teardowns" mirror says when one is
# under way, so every slow round provably races.  rmmod must not return
# before the teardown it raced has finished: "rdma link delete" returns
# just after its teardown, so in the link rounds rmmod must end no earlier
# than half a delay before it (without the wait, rmmod ends almost a whole
# delay before it, and the teardown goes on in freed module text).
# Fast rounds: no delay, two devices, for the natural race.  make check
# runs two of each (a link deletion and a netdev deletion); make
# check-long four slow and eight fast ones.
# shca-timeout: 600
# shca-long: four slow rounds and eight fast ones
# make check runs it on the debug kernel and on the stock 6.12 kernel,
# whose ib_core is modules; make check-long on 6.1 too.
# shca-check-kernels: debug stock
. "$(dirname "$0")/../lib.sh"
. "$SHCA_TOP/scripts/guest/lib.sh"

dbg=/sys/kernel/debug/shca
slow_rounds=2
fast_rounds=2
if [ "$SHCA_LONG" = 1 ]; then
	slow_rounds=4
	fast_rounds=8
fi
delay_ms=3000
tmp=$(mktemp -d)

# now_ms: milliseconds since the epoch.
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# teardown_started: true once a teardown is under way; polls without a
# fork, so that rmmod starts well inside the window.
teardown_started() {
	local v
	for _ in $(seq 20000); do
		read -r v < $dbg/teardowns
		[ "$v" -eq 0 ] || return 0
	done
	return 1
}

# round N DELAY: one device teardown against rmmod.  Odd rounds delete
# the link, even rounds the netdev.  A slow round (DELAY > 0) has shca0
# only, so that rmmod has no teardown of its own to wait for.
round() {
	local n=$1 delay=$2 pid rc=0 t_rmmod t_end

	shca_guest_load || fail "round $n: insmod"
	ip link show shca_d0 >/dev/null 2>&1 || mkdummy shca_d0
	rdma link add shca0 type shca netdev shca_d0
	if [ "$delay" -eq 0 ]; then
		ip link show shca_d1 >/dev/null 2>&1 || mkdummy shca_d1
		rdma link add shca1 type shca netdev shca_d1
	fi
	echo "$delay" > $dbg/teardown_delay_ms
	rm -f "$tmp/end"
	if [ $((n % 2)) -eq 1 ]; then
		(rdma link delete shca0 && now_ms > "$tmp/end") &
	else
		ip link del shca_d0 &
	fi
	pid=$!
	if [ "$delay" -gt 0 ]; then
		teardown_started ||
			fail "round $n: the teardown never started"
		raced=$((raced + 1))
	fi
	rmmod shca || fail "round $n: rmmod: $?"
	t_rmmod=$(now_ms)
	wait $pid || rc=$?
	# Unless the teardown had begun, rmmod may have removed the device
	# before "rdma link delete" found it.
	[ $rc -eq 0 ] || [ "$delay" -eq 0 ] ||
		fail "round $n: the teardown's command failed: $rc"
	if [ "$delay" -gt 0 ] && [ -f "$tmp/end" ]; then
		t_end=$(cat "$tmp/end")
		echo "round $n: rmmod ended $((t_rmmod - t_end)) ms after the link delete"
		[ $((t_rmmod + delay / 2)) -ge "$t_end" ] ||
			fail "round $n: rmmod returned $((t_end - t_rmmod)) ms before the teardown it raced finished"
		timed=$((timed + 1))
	fi
	! grep -q '^shca ' /proc/modules || fail "round $n: shca still loaded"
	[ -z "$(rdma dev | grep shca || true)" ] ||
		fail "round $n: devices remain: $(rdma dev)"
}

raced=0 timed=0
for n in $(seq $slow_rounds); do
	round "$n" $delay_ms
done
[ $raced -eq $slow_rounds ] && [ $timed -eq $((slow_rounds / 2)) ] ||
	fail "raced $raced, timed $timed of $slow_rounds slow rounds"
for n in $(seq $fast_rounds); do
	round "$n" 0
done
echo "$slow_rounds slow rounds raced rmmod, $fast_rounds fast rounds ran"

# Nothing is left: no device, no resource, and shca loads again.
shca_guest_load || fail "insmod after the rounds"
res=$(rdma res show) || fail "rdma res show failed"
[ -z "$(grep shca <<<"$res")" ] || fail "resources remain: $res"
[ "$(cat $dbg/teardowns)" = 0 ] || fail "teardowns: $(cat $dbg/teardowns)"
rm -rf "$tmp"
echo ok
