# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for the NVMe over RDMA tests (tests/integration/nvme_rdma*.sh)
# and the bench, sourced after tests/lib.sh.
#
# nvme_modules loads the target (nvmet, nvmet-rdma), the host (nvme-rdma)
# and null_blk; nvme_target DEV_ADDR makes a memory-backed null_blk disk
# and exports it as namespace 1 of $NVME_NQN on an nvmet-rdma port at
# DEV_ADDR:4420, for $NVME_HOSTNQN only; nvme_connect connects the host;
# nvme_cleanup undoes all of it, host first, and unloads the modules, so
# that shca can be unloaded after the test.

NVMET=/sys/kernel/config/nvmet
NULLB=/sys/kernel/config/nullb
NVME_NQN=nqn.2026-12.dev.shca:nvme-test
NVME_HOSTNQN=nqn.2026-12.dev.shca:host-a
NVME_HOSTID=5b1d2c7e-5c4e-4e8a-9a57-3f0e2b6d1c01
NVME_PORT=4420
NVME_DISK=shca_nvme_nb
# The namespace's size in MiB: small, every byte of it really stored.
NVME_MB=${NVME_MB:-64}

# nvme_need: the tools (check.sh installs them) and the kernel's modules
# (both test kernels have them), or fail.
nvme_need() {
	local m
	command -v nvme > /dev/null || fail "no nvme-cli (apt-get install nvme-cli)"
	command -v fio > /dev/null || fail "no fio (apt-get install fio)"
	for m in nvmet nvmet_rdma nvme_rdma null_blk; do
		modprobe -n "$m" 2> /dev/null || fail "this kernel has no $m module"
	done
}

nvme_modules() {
	local m
	# The stock kernel has configfs as a module, which the guest's init
	# could not mount before it was loaded.
	if ! mountpoint -q /sys/kernel/config; then
		modprobe configfs 2> /dev/null || true
		mount -t configfs configfs /sys/kernel/config ||
			fail "cannot mount configfs"
	fi
	for m in null_blk nvmet nvmet_rdma nvme_rdma; do
		# nr_devices=0: only the configfs disk, which stores its data.
		if [ $m = null_blk ]; then
			modprobe null_blk nr_devices=0 || fail "modprobe null_blk"
		else
			modprobe $m || fail "modprobe $m"
		fi
	done
	[ -d $NVMET ] || fail "no $NVMET (configfs not mounted?)"
	[ -d $NULLB ] || fail "no $NULLB"
}

# nvme_target [ADDR]: the disk, the subsystem, the host it admits, and
# port 1 at ADDR if given.
nvme_target() {
	local nb=$NULLB/$NVME_DISK s=$NVMET/subsystems/$NVME_NQN

	mkdir $nb
	echo $NVME_MB > $nb/size
	echo 1 > $nb/memory_backed
	echo 4096 > $nb/blocksize
	echo 1 > $nb/power
	[ -b /dev/$NVME_DISK ] || fail "null_blk made no /dev/$NVME_DISK"

	mkdir $NVMET/hosts/$NVME_HOSTNQN
	mkdir $s
	echo 0 > $s/attr_allow_any_host
	ln -s $NVMET/hosts/$NVME_HOSTNQN $s/allowed_hosts/$NVME_HOSTNQN
	mkdir $s/namespaces/1
	echo /dev/$NVME_DISK > $s/namespaces/1/device_path
	echo 1 > $s/namespaces/1/enable
	[ -z "${1:-}" ] || nvme_port_up "$1"
}

# nvme_port_up ADDR [ID]: port ID (default 1), RDMA at ADDR:$NVME_PORT,
# with the subsystem.  nvmet-rdma listens from the moment the subsystem is
# linked to it.
nvme_port_up() {
	local p=$NVMET/ports/${2:-1}

	mkdir $p
	echo rdma > $p/addr_trtype
	echo ipv4 > $p/addr_adrfam
	echo "$1" > $p/addr_traddr
	echo $NVME_PORT > $p/addr_trsvcid
	ln -s $NVMET/subsystems/$NVME_NQN $p/subsystems/$NVME_NQN
}

# nvme_port_down [ID]: port ID (default 1) goes.  After its RDMA device
# was removed, a port listens no more (nvmet-rdma drops its listener); it
# must be made again.
nvme_port_down() {
	local p=$NVMET/ports/${1:-1}

	[ -d $p ] || return 0
	rm -f $p/subsystems/$NVME_NQN
	rmdir $p
}

# nvme_target_down: the port, the subsystem, the host and the disk, as far
# as they exist.
nvme_target_down() {
	local s=$NVMET/subsystems/$NVME_NQN

	nvme_port_down 1
	nvme_port_down 2
	if [ -d $s ]; then
		[ ! -d $s/namespaces/1 ] || echo 0 > $s/namespaces/1/enable
		[ ! -d $s/namespaces/1 ] || rmdir $s/namespaces/1
		rm -f $s/allowed_hosts/$NVME_HOSTNQN
		rmdir $s
	fi
	[ ! -d $NVMET/hosts/$NVME_HOSTNQN ] || rmdir $NVMET/hosts/$NVME_HOSTNQN
	[ ! -d $NULLB/$NVME_DISK ] || rmdir $NULLB/$NVME_DISK
}

# nvme_connect ADDR [OPTION...]: connect to the target at ADDR with two I/O
# queues, or NVME_QUEUES of them (NVME_QUEUES=default: as many as nvme
# connect gives by default); prints the controller's name (nvmeN).
nvme_connect() {
	local addr=$1 out ctrl q=(-i "${NVME_QUEUES:-2}")
	shift
	[ "${NVME_QUEUES:-}" != default ] || q=()
	out=$(nvme connect -t rdma -a "$addr" -s $NVME_PORT -n $NVME_NQN \
		--hostnqn=$NVME_HOSTNQN --hostid=$NVME_HOSTID \
		"${q[@]}" "$@" 2>&1) ||
		fail "nvme connect -a $addr $*: $out"
	ctrl=$(nvme_ctrl) || fail "nvme connect made no controller: $out"
	echo "$ctrl"
}

# nvme_ctrl: the controller connected to $NVME_NQN, if any.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme-fabrics/ctl/nvme*; do
		[ -e "$c/subsysnqn" ] || continue
		[ "$(cat "$c/subsysnqn")" = $NVME_NQN ] || continue
		echo "${c##*/}"
		return 0
	done
	return 1
}

# nvme_disk: the namespace's block device (nvmeXnY, with or without
# native multipath), once it is there.
nvme_disk() {
	local b
	for b in /sys/block/nvme*n*; do
		[[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = $NVME_NQN ] || continue
		[ -b "/dev/${b##*/}" ] || continue
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# nvme_wait_disk: wait for the namespace; prints its block device.
nvme_wait_disk() {
	wait_for nvme_disk > /dev/null || fail "no block device for $NVME_NQN"
	nvme_disk
}

# nvme_disconnect: disconnect the host from $NVME_NQN; wait until the
# controller is gone.
nvme_disconnect() {
	local out
	out=$(nvme disconnect -n $NVME_NQN 2>&1) ||
		fail "nvme disconnect: $out"
	wait_long 30 no_ctrl ||
		fail "the controller is still there after nvme disconnect"
}

# no_ctrl: no controller is connected to $NVME_NQN.
no_ctrl() {
	! nvme_ctrl > /dev/null
}

# rc_qps DEV MODULE: how many connected RC QPs MODULE holds on DEV.  The
# QPs themselves are rdma_cm's in rdma res; the connection IDs name the
# ULP that made them and their QPs' numbers, each of which must be an RC
# QP in RTS on DEV.
rc_qps() {
	local qpn n=0 qps
	qps=$(rdma res show qp link "$1")
	for qpn in $(rdma res show cm_id link "$1" | awk -v m="$2" '
		{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		  c = v["comm"]; gsub(/[][]/, "", c)
		  if (c == m && v["lqpn"] != "") print v["lqpn"]
		  delete v }'); do
		grep -qE "lqpn $qpn .*type RC state RTS " <<<"$qps" ||
			fail "$2's QP $qpn is not an RC QP in RTS on $1: $qps"
		n=$((n + 1))
	done
	echo $n
}

# nvme_cleanup: the host's controllers, the target, the modules.
nvme_cleanup() {
	local m
	nvme disconnect -n $NVME_NQN > /dev/null 2>&1 || true
	nvme_target_down
	for m in nvme_rdma nvme_fabrics nvmet_rdma nvmet null_blk; do
		grep -q "^$m " /proc/modules || continue
		wait_for rmmod $m || fail "rmmod $m: $(rmmod $m 2>&1)"
	done
}

# wait_long SECONDS CMD...: poll CMD every half second for up to SECONDS.
wait_long() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.5
	done
	"$@"
}

# fio_verify NAME DISK write|verify MIB...: one fio run (fio starts slowly
# under emulation) with two jobs per region of 8 MiB at each MIB offset:
# 4 KiB random writes (inline data at the target) over its first half and
# 128 KiB sequential writes (a fast-registration MR the target reads with
# RDMA READ) over its second, crc32c-checked blocks, libaio, O_DIRECT.
# "write" writes each job's blocks and reads them back; "verify" only
# reads back and checks what a "write" run of the same regions wrote,
# with the same random sequence.
fio_verify() {
	local name=$1 disk=$2 mode=$3 log job off
	shift 3
	log=$SHCA_OUT/fio-$name.log
	job=$SHCA_OUT/fio-$name.job
	cat > "$job" <<-JOB
	[global]
	filename=$disk
	ioengine=libaio
	direct=1
	iodepth=16
	verify=crc32c
	verify_fatal=1
	randrepeat=1
	randseed=20261201
	JOB
	[ "$mode" = write ] || echo verify_only=1 >> "$job"
	for off in "$@"; do
		printf '[rand-%s]\noffset=%sM\nsize=4M\nbs=4k\nrw=randwrite\n' \
			"$off" "$off" >> "$job"
		printf '[seq-%s]\noffset=%sM\nsize=4M\nbs=128k\nrw=write\n' \
			"$off" $((off + 4)) >> "$job"
	done
	fio "$job" > "$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; fail "fio $name failed"; }
	[ "$(grep -c 'err= 0' "$log")" -eq $((2 * $#)) ] ||
		{ tail -n 20 "$log" >&2; fail "fio $name: not every job ended without error"; }
	echo "$(date +%T) fio $name ($mode at $*): ok ($(grep -m1 -oE 'READ: bw=[^ ]+' "$log" || true))"
}
