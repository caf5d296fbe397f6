#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA over shca: the kernel's NFS server (nfsd, svcrdma) listens
# on the RDMA port 20049 only, and the kernel's NFSv4 client (xprtrdma)
# mounts it with proto=rdma and the newest minor version it has (4.2 on
# Debian's kernel; the debug kernel's client has only 4.0).  Files of
# several sizes and an O_DIRECT transfer are written from shca1 to shca0,
# then read back by checksum over a new mount in loopback on shca1, with
# RDMA READ and WRITE chunks counted in mountstats.  Then the server stops
# under a writer that fsyncs every chunk: the soft mount must fail the
# writer instead of hanging, and once the server is back every chunk it
# acknowledged must read back intact.  Everything is stopped and unloaded
# at the end and "rdma res" is what it was before NFS ran.
#
# The guest's root is read-only: nfsd's state (/var/lib/nfs, rpc_pipefs,
# the nfsd filesystem) and the export are tmpfs mounts the test makes, and
# the export is given with "exportfs -i".  Only nfsdcld (client tracking,
# so that a start with no client to reclaim skips the grace period) and
# rpc.mountd (the export upcalls) run, in the guest; no rpcbind: the
# server offers NFSv4 only.
# shca-timeout: 600
# Stock kernels only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN.
# shca-kernels: stock stock61
. "$(dirname "$0")/../lib.sh"

for t in rpc.mountd exportfs nfsdcld mount.nfs; do
	command -v $t >/dev/null ||
		fail "$t is missing: install nfs-kernel-server and nfs-common"
done

top=/run/shca-nfs
lib=/var/lib/nfs
nfsd=/proc/fs/nfsd
# Where nfs.conf puts it on Debian.
pipefs=/run/rpc_pipefs
exp=$top/export
mnt=$top/mnt
src=$top/src
# Every mount fails an RPC after 3 + 6 seconds without an answer instead
# of retrying forever.  The NFSv4 minor version is the newest the client
# has (below).
opts=rdma,port=20049,soft,timeo=30,retrans=1
vers=
srv=10.11.0.1
mods="nfsv4 nfs nfsd rpcrdma"
mountd_pid=
cld_pid=
writer_pid=

log() {
	echo "nfs_rdma: [${SECONDS}s] $*"
}

# nfsd_start: the RDMA listener and the threads.  The lease and grace
# times may only be set while nfsd is down.
nfsd_start() {
	echo 15 > $nfsd/nfsv4leasetime
	echo 10 > $nfsd/nfsv4gracetime
	echo "rdma 20049" > $nfsd/portlist
	echo 4 > $nfsd/threads
	grep -qx "rdma 20049" $nfsd/portlist ||
		fail "nfsd does not list rdma 20049: $(cat $nfsd/portlist)"
	[ "$(cat $nfsd/threads)" = 4 ] ||
		fail "nfsd threads: $(cat $nfsd/threads)"
}

# nfsd_stop: no threads means no nfsd service: its listeners and
# connections close and its NFSv4 state goes.
nfsd_stop() {
	echo 0 > $nfsd/threads
	[ -z "$(cat $nfsd/portlist)" ] ||
		fail "nfsd still listens: $(cat $nfsd/portlist)"
}

cleanup() {
	local m
	set +e
	[ -z "$writer_pid" ] || kill "$writer_pid" 2>/dev/null
	mountpoint -q $mnt && umount -f $mnt
	mountpoint -q $mnt && umount -l $mnt
	[ -w $nfsd/threads ] && echo 0 > $nfsd/threads
	[ -x /usr/sbin/exportfs ] && mountpoint -q $lib && exportfs -ua
	[ -z "$mountd_pid" ] || { kill "$mountd_pid"; wait "$mountd_pid"; } 2>/dev/null
	[ -z "$cld_pid" ] || { kill "$cld_pid"; wait "$cld_pid"; } 2>/dev/null
	mountpoint -q $nfsd && umount $nfsd
	mountpoint -q $pipefs && umount $pipefs
	mountpoint -q $lib && umount $lib
	mountpoint -q $exp && umount $exp
	ip route del $srv/32 dev shca_d1 2>/dev/null
	ip route del 10.11.1.1/32 dev shca_d0 2>/dev/null
	ip route add local $srv dev shca_d0 table local proto kernel \
		scope host src $srv 2>/dev/null
	log "nfsd and the daemons stopped; unloading $mods"
	for m in $mods; do
		grep -q "^$m " /proc/modules && modprobe -r "$m"
	done
	rm -rf $top
}
trap cleanup EXIT

two_devices
res_before=$(rdma res show)
kmsg_start=$(dmesg | wc -l)

modprobe rpcrdma || fail "no rpcrdma module (CONFIG_SUNRPC_XPRT_RDMA)"
modprobe nfsd || fail "no nfsd module (CONFIG_NFSD)"
modprobe nfsv4 || fail "no nfsv4 module (CONFIG_NFS_V4)"
log "modules loaded"

# The server's writable state, all of it tmpfs.
mkdir -p $exp $mnt $src
mount -t tmpfs -o size=256m shca_nfs_export $exp
mount -t tmpfs -o size=16m,mode=0755 shca_nfs_lib $lib
mkdir -p $lib/nfsdcld $lib/v4recovery $pipefs
mount -t rpc_pipefs sunrpc $pipefs
mount -t nfsd nfsd $nfsd
: > $lib/etab
: > $lib/rmtab

# The export is the NFSv4 pseudo root (fsid=0): the root above it is 9p,
# which nfsd cannot export.
exportfs -i -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0 \
	"10.11.0.0/16:$exp"
grep -q "^$exp" $lib/etab || fail "exportfs wrote no etab: $(cat $lib/etab)"
nfsdcld -F -s $lib/nfsdcld > "$SHCA_OUT/nfs_rdma.nfsdcld" 2>&1 &
cld_pid=$!
# nfsd gives nfsdcld a second to open its pipe when it starts; it must be
# watching rpc_pipefs for the pipe by then (its inotify descriptor open),
# or nfsd falls back to another kind of client tracking (or none).
wait_for bash -c "ls -l /proc/$cld_pid/fd | grep -q inotify" ||
	fail "nfsdcld is not running: $(cat "$SHCA_OUT/nfs_rdma.nfsdcld")"
rpc.mountd -F -N 2 -N 3 -u > "$SHCA_OUT/nfs_rdma.mountd" 2>&1 &
mountd_pid=$!
# NFSv4 only: no version of the server needs rpcbind.
echo "-3 +4 +4.1 +4.2" > $nfsd/versions
nfsd_start
log "nfsd: $(cat $nfsd/portlist | tr '\n' ' '), versions $(cat $nfsd/versions)"

# Test data, in the guest's memory, and its checksums.
declare -A sum
for n in 1 4095 65537 1048576 5242880; do
	head -c $n /dev/urandom > $src/f$n
	sum[f$n]=$(sha256sum < $src/f$n)
done
head -c 8M /dev/urandom > $src/big
sum[big]=$(sha256sum < $src/big)
log "test data made"

# wait_secs N CMD...: poll CMD every 0.2 s for up to N seconds.
wait_secs() {
	local i n=$(($1 * 5))
	shift
	for i in $(seq $n); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

# rc_qps DEV: the device's RC QPs.
rc_qps() {
	rdma res show qp link "$1/1" 2>/dev/null | grep -c ' type RC ' || true
}

no_rc_qps() {
	[ "$(rc_qps shca0)" -eq 0 ] && [ "$(rc_qps shca1)" -eq 0 ]
}

# xprt_field N: field N of the mount's RDMA transport statistics (see
# xprt_rdma_print_stats(): 11 read chunks, 12 write chunks).
xprt_field() {
	awk -v m="$mnt" -v n="$1" '
		$1 == "device" && $5 == m { cur = 1; next }
		$1 == "device" { cur = 0 }
		cur && $1 == "xprt:" && $2 == "rdma" { print $(n + 2); exit }
	' /proc/self/mountstats
}

# The newest NFSv4 minor version the client has: Debian's kernel has 4.2;
# one built without CONFIG_NFS_V4_1 has only 4.0 (and refuses vers=4.1 as
# an invalid mount option).  nfsv4.ko has nfs41_sequence_done() with 4.1
# and nfs42_proc_allocate() with 4.2.
syms=$(grep -o -w -E 'nfs41_sequence_done|nfs42_proc_allocate' /proc/kallsyms || true)
case "$syms" in
*nfs42_proc_allocate*) vers=4.2 ;;
*nfs41_sequence_done*) vers=4.1 ;;
*) vers=4.0 ;;
esac
log "the client's newest NFSv4 minor version: $vers"

# nfs_mount ADDR: mount the export from ADDR; the mount must be over RDMA.
nfs_mount() {
	local line
	timeout 120 mount -t nfs -o "$opts,vers=$vers" "$1:/" $mnt ||
		fail "mount -o $opts,vers=$vers $1:/ failed"
	line=$(grep " $mnt nfs4 " /proc/mounts) || fail "no nfs4 mount in /proc/mounts"
	grep -q 'proto=rdma' <<<"$line" || fail "not over RDMA: $line"
	grep -q 'port=20049' <<<"$line" || fail "not on port 20049: $line"
	grep -q "vers=$vers," <<<"$line" || fail "not NFSv$vers: $line"
}

# nfs_umount: unmount; the connection must go with the mount.
nfs_umount() {
	local t0=$SECONDS
	timeout 120 umount $mnt || fail "umount $mnt failed"
	wait_secs 30 no_rc_qps ||
		fail "RC QPs outlive the mount: $(rdma res show qp)"
	log "unmounted, RC QPs gone, in $((SECONDS - t0)) s"
}

# check NAME...: each file reads back from the mount with its checksum.
check() {
	local f
	for f in "$@"; do
		[ "$(sha256sum < "$mnt/$f")" = "${sum[$f]}" ] ||
			fail "$f reads back wrong"
	done
}

# Between the devices: shca1 holds the client's QP and shca0 the server's.
# Both addresses are local, so rdma_cm would resolve the server's on shca0
# itself (a route through lo) and take the client's device from it.  Set
# up as two hosts would be: without the local route to the server's
# address and with a host route to it through shca_d1, the client connects
# from shca1 (10.11.1.1); and the server's rdma_cm, which checks that the
# client's address is reachable through the netdev the request came in
# on, gets a host route to it through shca_d0.
cross_routes() {
	ip route "$1" $srv/32 dev shca_d1 src 10.11.1.1
	ip route "$1" 10.11.1.1/32 dev shca_d0
}
ip route del local $srv dev shca_d0 table local
cross_routes add
nfs_mount $srv
log "mounted: $(grep " $mnt " /proc/mounts)"
[ "$(rc_qps shca0)" -eq 1 ] && [ "$(rc_qps shca1)" -eq 1 ] ||
	fail "the connection is not between shca1 and shca0: $(rdma res show qp)"
rdma res show qp | grep ' type RC ' | sed 's/^/nfs_rdma: qp: /'

start=$(date +%s%N)
cp $src/f* $mnt/
dd if=$src/big of=$mnt/big bs=1M oflag=direct status=none ||
	fail "O_DIRECT write failed"
sync
t=$((($(date +%s%N) - start) / 1000000))
log "wrote $(du -sb $src | cut -f1) bytes in ${t} ms"
[ "$(xprt_field 11)" -gt 0 ] ||
	fail "no RDMA READ chunk for the writes: $(grep 'xprt:' /proc/self/mountstats)"

# Read back from the server, not from the page cache: over a new mount,
# in loopback on one device.  The client mounts shca1's own address, and
# both ends of the connection are on shca1.
nfs_umount
echo 3 > /proc/sys/vm/drop_caches
nfs_mount 10.11.1.1
[ "$(rc_qps shca1)" -eq 2 ] && [ "$(rc_qps shca0)" -eq 0 ] ||
	fail "the loopback connection is not on shca1: $(rdma res show qp)"
log "mounted in loopback on shca1"
check f1 f4095 f65537 f1048576 f5242880
start=$(date +%s%N)
[ "$(dd if=$mnt/big bs=1M iflag=direct status=none | sha256sum)" = "${sum[big]}" ] ||
	fail "O_DIRECT read of big reads back wrong"
t=$((($(date +%s%N) - start) / 1000000))
log "read 8 MiB with O_DIRECT in ${t} ms"
[ "$(xprt_field 12)" -gt 0 ] ||
	fail "no RDMA WRITE chunk for the reads: $(grep 'xprt:' /proc/self/mountstats)"
log "xprt: $(grep 'xprt:' /proc/self/mountstats)"
# The client's and the server's CQs spread over shca1's completion
# vectors (ib_alloc_cq_any()): every one of its EQs has had events.
n=$(eqs_with_events shca1)
[ "$n" -eq "$(shca_vectors shca1)" ] ||
	fail "events on $n of shca1's EQs: $(cat /sys/kernel/debug/shca/shca1/eq)"
log "events on all $n of shca1's EQs"
rm $mnt/f* $mnt/big
nfs_umount
nfs_mount $srv
[ "$(rc_qps shca0)" -eq 1 ] && [ "$(rc_qps shca1)" -eq 1 ] ||
	fail "the connection is not between shca1 and shca0: $(rdma res show qp)"

# The server stops under a writer.  Each chunk is one dd that writes
# 512 KiB of the source at the same offset in the file and fsyncs; a
# chunk is acknowledged when its dd exits 0.
chunk=524288
nchunks=32
head -c $((nchunks * chunk)) /dev/urandom > $src/chunks
rm -f $top/writer.err
: > $top/acked
(
	for i in $(seq 0 $((nchunks - 1))); do
		dd if=$src/chunks of=$mnt/log bs=$chunk count=1 skip="$i" \
			seek="$i" conv=notrunc,fsync status=none ||
			{ echo "chunk $i failed" >> $top/writer.err; exit 1; }
		echo $i >> $top/acked
	done
) 2>> $top/writer.err &
writer_pid=$!
acked_4() {
	[ "$(wc -l < $top/acked)" -ge 4 ] || ! kill -0 $writer_pid 2>/dev/null
}
wait_secs 60 acked_4
[ "$(wc -l < $top/acked)" -ge 4 ] ||
	fail "the writer acknowledged $(wc -l < $top/acked) chunks: $(cat $top/writer.err)"
nfsd_stop
stopped=$(date +%s)
log "server stopped after $(wc -l < $top/acked) acknowledged chunks"
writer_gone() {
	! kill -0 $writer_pid 2>/dev/null
}
wait_secs 150 writer_gone ||
	fail "the writer hangs $(($(date +%s) - stopped)) s after the server stopped"
wrc=0
wait $writer_pid || wrc=$?
writer_pid=
acked=$(wc -l < $top/acked)
[ $wrc -ne 0 ] && [ -s $top/writer.err ] ||
	fail "the writer ended without an error although the server is down ($acked chunks acknowledged)"
log "the writer failed after $(($(date +%s) - stopped)) s, $acked chunks acknowledged: $(tr '\n' ' ' < $top/writer.err)"

# The same mount, once the server is back: the client reconnects and
# recovers its NFSv4 state.  O_DIRECT reads come from the server, not from
# the page cache.
nfsd_start
# A soft mount may fail a call or two while the client reconnects.
server_back() {
	stat -c %s $mnt/log > $top/size 2>/dev/null
}
wait_secs 60 server_back ||
	fail "the client does not reach the server again: $(stat $mnt/log 2>&1)"
size=$(cat $top/size)
[ "$size" -ge $((acked * chunk)) ] ||
	fail "log has $size bytes; $acked chunks of $chunk were acknowledged"
cmp -n $((acked * chunk)) $src/chunks \
	<(dd if=$mnt/log bs=$chunk count=$acked iflag=direct,fullblock status=none) ||
	fail "the $acked acknowledged chunks do not read back"
log "server back: all $acked acknowledged chunks read back intact"
rm $mnt/log
nfs_umount

(cleanup)
trap - EXIT
log "stopped and unloaded"
for m in $mods; do
	! grep -q "^$m " /proc/modules || fail "$m is still loaded"
done
wait_for bash -c "[ \"\$(rdma res show)\" = '$res_before' ]" ||
	fail "rdma res: $(rdma res show); before NFS: $res_before"
log "rdma res: $(rdma res show | tr '\n' ' ')"
# shca's errors for the model's faults (ratelimited ibdev_err()).
errs=$(dmesg | tail -n +$((kmsg_start + 1)) | grep 'infiniband shca' || true)
[ -z "$errs" ] || fail "shca reported errors: $errs"
echo ok
