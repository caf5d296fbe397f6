#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's mckey, rdma_cm multicast over UD, between two devices: on
# RoCE rdma_cm maps the IPv4 group to an MGID (::ffff:239.1.2.3 for RoCE
# v2), joins the IP group on the netdev, and librdmacm attaches the
# process's UD QP (libshca, ATTACH_MCAST).  A receiver on shca0 gets every
# message a sender on shca1 sends to the group; then two receivers at
# once, one on each device.  The sender is a member too, and gets none of
# its own messages (shca1 drops nothing).  mckey has no handshake: the
# sender starts once the receivers' QPs are in the group, as the model's
# debugfs mcast mirror shows (mckey posts its receives before it joins).
# At the end no mckey QP is left and both group tables are empty.
# Stock kernels only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN.
# shca-kernels: stock stock61
# make check runs it on the stock 6.12 kernel; on 6.1, where nvme_rdma and
# nfs_rdma drive the same rdma_cm, make check-long runs it.
# shca-check-kernels: stock
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices

group=239.1.2.3
mgid=::ffff:$group
n=50

# members DEV: how many QPs of DEV are in the group.
members() {
	awk -v g=$mgid '$1 == g { n = NF - 1 } END { print n + 0 }' \
		/sys/kernel/debug/shca/$1/mcast
}

# receiver NAME ADDR: a receiver of $n messages, bound to ADDR, in the
# background; its output goes to $SHCA_OUT/NAME.log, line by line (what
# a receiver that timed out had got shows there).
receiver() {
	timeout 60 stdbuf -oL mckey -m $group -b "$2" -C $n > "$SHCA_OUT/$1.log" 2>&1 &
}

# finished NAME PID: the receiver exited 0 after all its messages.
finished() {
	local rc=0
	wait "$2" || rc=$?
	[ $rc -eq 0 ] && grep -q '^data transfers complete' "$SHCA_OUT/$1.log" || {
		tail -n 5 "$SHCA_OUT/$1.log" >&2
		fail "$1: exit status $rc; mcast_rx_packets shca0 $(link_counter shca0 mcast_rx_packets), shca1 $(link_counter shca1 mcast_rx_packets); dropped_packets shca0 $(link_counter shca0 dropped_packets), shca1 $(link_counter shca1 dropped_packets)"
	}
	echo "$1: $n messages received"
}

send() {
	timeout 60 stdbuf -oL mckey -m $group -b 10.11.1.1 -s -C $n > "$SHCA_OUT/$1.log" 2>&1 || {
		tail -n 5 "$SHCA_OUT/$1.log" >&2
		fail "$1: sender failed"
	}
}

# waits until DEV has COUNT QPs in the group, or fails with what it has.
wait_members() {
	wait_for bash -c "[ \$(awk -v g=$mgid '\$1 == g { n = NF - 1 } END { print n + 0 }' /sys/kernel/debug/shca/$1/mcast) -eq $2 ]" ||
		fail "$1: $(members "$1") QPs in $mgid, not $2: $(cat /sys/kernel/debug/shca/$1/mcast)"
}

grep -q '^max_mcast_grp  *64$' /sys/kernel/debug/shca/shca0/caps ||
	fail "caps mirror: $(grep mcast /sys/kernel/debug/shca/shca0/caps)"
[ "$(members shca0)" = 0 ] && [ "$(members shca1)" = 0 ] ||
	fail "groups before the test"

# One receiver on shca0, the sender on shca1.
tx=$(link_counter shca1 mcast_tx_packets)
rx=$(link_counter shca0 mcast_rx_packets)
receiver one 10.11.0.1
pid=$!
wait_members shca0 1
# /proc/net/igmp: the group as a little-endian hex word, under shca_d0.
awk '$2 == "shca_d0" { d = 1; next } /^[0-9]/ { d = 0 } d && $1 == "030201EF" { f = 1 }
	END { exit !f }' /proc/net/igmp ||
	fail "rdma_cm joined no IP group on shca_d0: $(cat /proc/net/igmp)"
send one_sender
finished one $pid
[ "$(link_counter shca1 mcast_tx_packets)" -eq $((tx + n)) ] ||
	fail "shca1 mcast_tx_packets: $tx -> $(link_counter shca1 mcast_tx_packets)"
[ "$(link_counter shca0 mcast_rx_packets)" -eq $((rx + n)) ] ||
	fail "shca0 mcast_rx_packets: $rx -> $(link_counter shca0 mcast_rx_packets)"
wait_members shca0 0
wait_members shca1 0

# Two receivers at once, one on each device; the sender is on shca1 too.
rx0=$(link_counter shca0 mcast_rx_packets)
rx1=$(link_counter shca1 mcast_rx_packets)
dropped=$(link_counter shca1 dropped_packets)
receiver two_a 10.11.0.1
pid_a=$!
receiver two_b 10.11.1.1
pid_b=$!
wait_members shca0 1
wait_members shca1 1
send two_sender
finished two_a $pid_a
finished two_b $pid_b
[ "$(link_counter shca0 mcast_rx_packets)" -eq $((rx0 + n)) ] ||
	fail "shca0 mcast_rx_packets: $rx0 -> $(link_counter shca0 mcast_rx_packets)"
[ "$(link_counter shca1 mcast_rx_packets)" -eq $((rx1 + n)) ] ||
	fail "shca1 mcast_rx_packets: $rx1 -> $(link_counter shca1 mcast_rx_packets)"
# The sender posts no receive: a copy of its own would have been dropped.
[ "$(link_counter shca1 dropped_packets)" -eq "$dropped" ] ||
	fail "shca1 dropped_packets: $dropped -> $(link_counter shca1 dropped_packets)"

wait_for bash -c "! rdma res show qp | grep -q 'comm mckey'" ||
	fail "mckey QPs left: $(rdma res show qp)"
wait_members shca0 0
wait_members shca1 0
[ -z "$(cat /sys/kernel/debug/shca/shca0/mcast /sys/kernel/debug/shca/shca1/mcast)" ] ||
	fail "groups left: $(cat /sys/kernel/debug/shca/shca*/mcast)"
echo ok
