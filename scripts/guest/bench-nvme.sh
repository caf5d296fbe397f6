# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # $dir and $smoke are bench.sh's, which sources this
# The NVMe over RDMA part of the bench, sourced by scripts/guest/bench.sh
# with its devices up (shca_b on 10.21.0.1, rxe_b on 10.22.0.1) and its
# $dir, $log, $smoke and note(): sets the target up; each nvme_round
# appends two rows to $dir/perftest.csv, and nvme_cleanup takes it down.
. "$SHCA_TOP/tests/nvme_lib.sh"
# nvmet-rdma and nvme-rdma in loopback on each device in turn, on a
# memory-backed null_blk namespace written once beforehand: fio's 4 KiB
# random reads at queue depth 32 (kIOPS) and 128 KiB sequential reads at
# queue depth 16 (MB/s), one job, libaio, O_DIRECT, over an I/O queue per
# vCPU (a plain connect's: both devices have a completion vector per CPU),
# for $nvme_secs seconds each (after a second's ramp).  The namespace is
# written in the first round only.
nvme_need
nvme_modules
export NVME_QUEUES=default
NVME_MB=$((smoke ? 16 : 256))
nvme_target
nvme_secs=$((smoke ? 1 : 10))
# nvme_fio DISK RW BS QD: one time-based run; prints the read IOPS and the
# read bandwidth in bytes per second.
nvme_fio() {
	local out=$SHCA_OUT/nvme-fio.json
	fio --name=bench --filename="$1" --ioengine=libaio --direct=1 \
		--rw="$2" --bs="$3" --iodepth="$4" --time_based \
		--runtime=$nvme_secs --ramp_time=$((smoke ? 0 : 1)) \
		--output-format=json > "$out" 2>> "$log" ||
		fail "fio $2 $3 on $1 failed"
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print(r["iops"], r["bw_bytes"])' "$out"
}
declare -A nvme_addr=([shca_b]=10.21.0.1 [rxe_b]=10.22.0.1)
declare -A nvme_iops nvme_bw
# nvme_round: both devices, one after the other; $round is bench.sh's.
nvme_round() {
	local dev disk n out iops bw
	for dev in shca_b rxe_b; do
		nvme_port_up "${nvme_addr[$dev]}" 2
		nvme_connect "${nvme_addr[$dev]}" > /dev/null
		disk=$(nvme_wait_disk)
		n=$(rc_qps "$dev" nvme_rdma)
		[ "$n" -ge 2 ] || fail "NVMe over $dev: $n host QPs on $dev"
		[ "$round" -gt 1 ] ||
			fio --name=fill --filename="$disk" --ioengine=libaio \
				--direct=1 --rw=write --bs=128k --iodepth=16 \
				> /dev/null 2>> "$log" || fail "fio could not fill $disk"
		out=$(nvme_fio "$disk" randread 4k 32) || exit 1
		read -r iops _ <<< "$out"
		out=$(nvme_fio "$disk" read 128k 16) || exit 1
		read -r _ bw <<< "$out"
		nvme_iops[$dev]=$(awk -v x="$iops" 'BEGIN { printf "%.2f", x / 1000 }')
		nvme_bw[$dev]=$(awk -v x="$bw" 'BEGIN { printf "%.2f", x / 1e6 }')
		nvme_disconnect
		nvme_port_down 2
		note "round $round: nvme over $dev ($((n - 1)) I/O queues): 4 KiB random read ${nvme_iops[$dev]} kIOPS, 128 KiB read ${nvme_bw[$dev]} MB/s"
	done
	echo "nvme_randread,4096,$((n - 1)),kIOPS,${nvme_iops[shca_b]},${nvme_iops[rxe_b]},,,$round" >> "$dir/perftest.csv"
	echo "nvme_seqread,131072,$((n - 1)),MB/s,${nvme_bw[shca_b]},${nvme_bw[rxe_b]},,,$round" >> "$dir/perftest.csv"
}
