#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over RDMA over shca, torn down under I/O: the host on shca1
# (10.11.1.1), the target on shca0 (10.11.0.1), a memory-backed null_blk
# namespace.  Four writer threads (tests/user/nvme_blocks.py) write 4 KiB
# blocks with O_DIRECT | O_DSYNC, one at a time each, a pattern distinct
# per block and per write, and record every write the kernel acknowledged.
# Once each has had 20 writes acknowledged, the connection is torn down:
#
#   (a) nvme disconnect;
#   (b) rdma link delete shca1, the host's device;
#   (c) rdma link delete shca0, the target's device, with the host told to
#       fail I/O after 1 s without a connection (fast_io_fail_tmo) and to
#       give up on the controller after 5 s (--ctrl-loss-tmo, one attempt
#       a second).
#
# Every writer must then end, within 90 s, with an I/O error: ending
# without one would mean the teardown missed the I/O, or that a write
# was acknowledged that went nowhere.  The device comes back (rdma link
# add; in (c) the nvmet port is made again, since nvmet-rdma drops a
# listener whose device goes), the host reconnects, or in (c) finds its
# controller reconnected by itself, and every acknowledged block is read
# back: each must hold its last acknowledged write.  Only the block of a
# writer's failed write may hold that write instead (the target may have
# stored it before the connection went).  A block that holds anything
# else fails the test: an acknowledged write lost.  After each case the
# host disconnects, and neither device may keep a QP, CQ, MR or PD of
# NVMe's.  The checker itself must catch a record that claims a write the
# disk does not hold.  The debug kernel runs case (c) only.
# shca-timeout: 900
# make check runs it on the debug kernel, under KASAN (6.1's nvme-rdma,
# which differs, connects, moves data and disconnects in nvme_rdma);
# make check-long on the stock kernels too.
# shca-check-kernels: debug
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme_lib.sh"

nvme_need
command -v python3 > /dev/null || skip "no python3"
blocks=$SHCA_TOP/tests/user/nvme_blocks.py
trap nvme_cleanup EXIT
two_devices
# The target's rdma_cm accepts shca1's requests only from an address that
# shca_d0 routes to (see nvme_rdma.sh).
ip route add 10.11.1.1/32 dev shca_d0
nvme_modules
nvme_target 10.11.0.1

# connect: the host on shca1; prints the namespace's block device.
# nvme-cli 2.3 has no option for fast_io_fail_tmo; sysfs has.
connect() {
	local ctrl
	ctrl=$(nvme_connect 10.11.0.1 --host-traddr=10.11.1.1 \
		--ctrl-loss-tmo=5 --reconnect-delay=1)
	echo 1 > /sys/class/nvme/"$ctrl"/fast_io_fail_tmo
	nvme_wait_disk
}

# readd DEV NETDEV HEX: rdma link add DEV again, with its IPv4 GID.
readd() {
	rdma link add "$1" type shca netdev "$2"
	wait_for grep -q "ffff:$3" "/sys/class/infiniband/$1/ports/1/gids/3" ||
		fail "$1 has no IPv4 GID after rdma link add"
}

# ctrl_settled: the controller is live again, or gone.
ctrl_settled() {
	local c
	c=$(nvme_ctrl) || return 0
	[ "$(cat /sys/class/nvme/"$c"/state)" = live ]
}

# hung PID: fail, with the stacks of PID's threads.
hung() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "--- $t: $(cat "$t/wchan" 2>/dev/null)"
		cat "$t/stack" 2>/dev/null || true
	done >&2
	fail "$2"
}

# run_case NAME INDEX WHAT: the writers on region INDEX (1024 blocks),
# then WHAT under them; then back, the check, and nothing left behind.
run_case() {
	local name=$1 base=$(($2 * 1024)) what=$3 disk rec ready wpid
	local wlog=$SHCA_OUT/teardown-$1.writers
	rec=/tmp/nvme-$name.rec
	ready=/tmp/nvme-$name.ready
	disk=$(connect)
	echo "$(date +%T) ($name) $disk; writers on blocks $base-$((base + 1023))"
	rm -f "$ready"
	python3 "$blocks" write "$disk" $base 1024 4 "$rec" "$ready" 120 \
		> "$wlog" 2>&1 &
	wpid=$!
	wait_long 60 test -e "$ready" ||
		hung $wpid "($name) the writers did not get 20 writes each through in 60 s"
	echo "$(date +%T) ($name) $what"
	case $what in
	disconnect) nvme disconnect -n $NVME_NQN > /dev/null ||
		fail "($name) nvme disconnect failed under I/O" ;;
	delete-host) rdma link delete shca1 ;;
	delete-target) rdma link delete shca0 ;;
	esac
	wait_long 90 bash -c "! kill -0 $wpid 2>/dev/null" ||
		hung $wpid "($name) the writers hang after $what"
	wait $wpid || fail "($name) the writer failed: $(cat "$wlog")"
	cat "$wlog"
	[ "$(grep -c '(errno [0-9]*)' "$wlog")" -eq 4 ] ||
		fail "($name) a writer ended without an I/O error after $what"

	case $what in
	disconnect) ;;
	delete-host) readd shca1 shca_d1 0a0b:0101 ;;
	delete-target)
		readd shca0 shca_d0 0a0b:0001
		nvme_port_down
		nvme_port_up 10.11.0.1
		;;
	esac
	# Once its device is back, the controller reconnects by itself or
	# is given up; either way it settles.
	wait_long 120 ctrl_settled || fail "($name) the controller hangs in $(cat /sys/class/nvme/"$(nvme_ctrl)"/state)"
	if nvme_ctrl > /dev/null; then
		echo "$(date +%T) ($name) the controller reconnected by itself"
		disk=$(nvme_wait_disk)
	else
		disk=$(connect)
		echo "$(date +%T) ($name) reconnected: $disk"
	fi
	python3 "$blocks" check "$disk" $base 1024 "$rec" ||
		fail "($name) an acknowledged write is not on the namespace"
	if [ "$name" = a ] || [ "${SHCA_KERNEL:-}" = debug ]; then
		# The checker's own test (in the first case run): a record
		# claiming a write that was never made must fail.
		awk '!d && $1 == "ack" { $3 += 1000000; d = 1 } 1' "$rec" > "$rec.bad"
		if python3 "$blocks" check "$disk" $base 1024 "$rec.bad" > /dev/null; then
			fail "the checker passed a record of a write that was never made"
		fi
	fi
	nvme_disconnect
	wait_long 60 res_clean shca0 || res_only_ib_core shca0
	wait_long 60 res_clean shca1 || res_only_ib_core shca1
	echo "$(date +%T) ($name) ok; nothing of NVMe's left on shca0 or shca1"
}

# make check's debug guest has time for one case: (c), the device going
# away under the target while the host still sends to it.
if [ "${SHCA_KERNEL:-}" != debug ]; then
	run_case a 0 disconnect
	run_case b 1 delete-host
fi
run_case c 2 delete-target

trap - EXIT
nvme_cleanup
rdma link delete shca0
rdma link delete shca1
left=$(rdma res show qp; rdma res show cq; rdma res show mr; rdma res show pd)
[ -z "$left" ] || fail "rdma res is not empty: $left"
echo ok
