#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over RDMA over shca: an nvmet-rdma port on shca0's IPv4 address
# exporting a memory-backed null_blk namespace, and nvme-rdma's host
# connecting to it as a plain "nvme connect" does, with a host NQN of the
# test's own, (a) in loopback on shca0 and (b) from shca1 (--host-traddr)
# to shca0.  Each connect must get one I/O queue per CPU: shca has a
# completion vector per CPU, and 6.1's nvme-rdma takes no more queues than
# the device has vectors.  The queues' CQs spread over the vectors: every
# EQ of shca0 has events.
# Each time fio writes crc32c-checked blocks (4 KiB random, which go as
# inline data, and 128 KiB sequential, which the target fetches with RDMA
# READ from a fast-registration MR) and reads them back; the host
# disconnects and reconnects, and at the end fio checks that the data of
# both runs is still there.
# rdma res must show the host's and the target's QPs on the devices each
# case puts them on, and, at the end, nothing of theirs left.
# shca-timeout: 900
# Stock kernels only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN.
# shca-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme_lib.sh"

nvme_need
trap nvme_cleanup EXIT
two_devices
nvme_modules
nvme_target 10.11.0.1
cpus=$(nproc)
export NVME_QUEUES=default

# qps_on HOSTDEV: the host's QPs are on HOSTDEV, the target's on shca0,
# one per queue (the admin queue and an I/O queue per CPU) each side.
qps_on() {
	local ctrl=$1 hostdev=$2 n want
	want=$(cat /sys/class/nvme/"$ctrl"/queue_count)
	[ "$want" -eq $((cpus + 1)) ] ||
		fail "$ctrl has $want queues, expected the admin queue and $cpus I/O queues"
	n=$(rc_qps "$hostdev" nvme_rdma)
	[ "$n" -eq "$want" ] || fail "nvme_rdma holds $n QPs on $hostdev, expected $want: $(rdma res show qp)"
	n=$(rc_qps shca0 nvmet_rdma)
	[ "$n" -eq "$want" ] || fail "nvmet_rdma holds $n QPs on shca0, expected $want: $(rdma res show qp)"
	if [ "$hostdev" = shca0 ]; then
		n=$(rc_qps shca1 nvme_rdma)$(rc_qps shca1 nvmet_rdma)
	else
		n=$(rc_qps shca1 nvmet_rdma)$(rc_qps shca0 nvme_rdma)
	fi
	[ "$n" = 00 ] || fail "QPs on the wrong device: $(rdma res show qp)"
	echo "$ctrl: $want queues; host QPs on $hostdev, target QPs on shca0"
	n=$(shca_vectors shca0)
	[ "$n" -eq "$cpus" ] ||
		fail "shca0 has $n completion vectors, not one per CPU ($cpus)"
}

# (a) loopback on shca0.
ctrl=$(nvme_connect 10.11.0.1)
disk=$(nvme_wait_disk)
echo "$(date +%T) loopback: $ctrl, $disk"
qps_on "$ctrl" shca0
fio_verify loop "$disk" write 0
nvme_disconnect

# (b) from shca1 to shca0.  rdma_cm on the target side accepts a
# connection request only from an address its netdev routes to (a reverse
# path check, validate_net_dev() in cma.c): 10.11.1.1 is local to
# shca_d1, so without a route saying that shca_d0 reaches it, as the cable
# between the two ports would, the request is rejected (REJ, consumer
# defined).
ip route add 10.11.1.1/32 dev shca_d0
ctrl=$(nvme_connect 10.11.0.1 --host-traddr=10.11.1.1)
disk=$(nvme_wait_disk)
echo "$(date +%T) two devices: $ctrl, $disk"
qps_on "$ctrl" shca1
fio_verify cross "$disk" write 8
nvme_disconnect
ctrl=$(nvme_connect 10.11.0.1 --host-traddr=10.11.1.1)
disk=$(nvme_wait_disk)
# What both runs wrote is still there, across the reconnects (fio starts
# slowly under emulation: one run checks both).
fio_verify again "$disk" verify 8 0
nvme_disconnect
n=$(eqs_with_events shca0)
[ "$n" -eq "$cpus" ] ||
	fail "events on $n of shca0's $cpus EQs: $(cat /sys/kernel/debug/shca/shca0/eq)"

trap - EXIT
nvme_cleanup
res_only_ib_core shca0
res_only_ib_core shca1
rdma link delete shca0
rdma link delete shca1
left=$(rdma res show qp; rdma res show cq; rdma res show mr; rdma res show pd)
[ -z "$left" ] || fail "rdma res is not empty: $left"
echo ok
