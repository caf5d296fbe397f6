#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's connection manager tools over libshca, every connection made
# by rdma_cm (RoCE v2, ib_cm's MADs over the devices' GSI QPs): rping with
# data validation, ucmatose with several connections, udaddy (UD),
# rdma_server/rdma_client, the rsockets tools rstream (blocking and
# nonblocking) and riostream, and perftest with -R.  Not rstream's async
# mode (-T a): it takes POLLHUP from rs_poll() as an error even while data
# is still to be read, so a client fails whenever the server's disconnect
# arrives before its last poll, on any device.  The server
# runs on shca1 (10.11.1.1); a client that can bind a source address binds
# 10.11.0.1, so its QP is on shca0 and the traffic crosses between the two
# devices; rdma_client and this perftest cannot bind one and connect from
# shca1 itself.  A client starts once the server's rdma_cm listener is in
# "rdma res show cm_id".  The pairs run three at a time, on ports of their
# own.  Each tool must exit 0 and print what a good run prints; at the end
# no process QP or rdma_cm ID is left on either device.
# shca-timeout: 600
# Stock kernels only: make check's debug guest keeps its time for the
# teardown, fault, race and soak tests, which drive these paths under KASAN.
# shca-kernels: stock stock61
# make check runs it on the stock 6.12 kernel; on 6.1, where nvme_rdma and
# nfs_rdma drive the same rdma_cm, make check-long runs it.
# shca-check-kernels: stock
. "$(dirname "$0")/../lib.sh"

use_rdma_core
two_devices
for t in rping ucmatose udaddy rdma_server rdma_client rstream riostream; do
	[ -x "$RDMA_CORE_BUILD/bin/$t" ] || fail "no $t in $RDMA_CORE_BUILD/bin"
done
command -v ib_send_bw >/dev/null || fail "perftest is not installed"
srv=10.11.1.1 cli=10.11.0.1

# Both addresses are local to this host, each on its own netdev.  rdma_cm
# accepts a request only if the way back to its source leaves through the
# netdev it came in on, and a lookup bound to that netdev skips the local
# table's entry (which names the other netdev): give each address a host
# route through the other netdev, as if the two were on one link.
ip route add $cli/32 dev shca_d1
ip route add $srv/32 dev shca_d0

# cm_listening PS PORT: an rdma_cm ID of port space PS (TCP, UDP) listens
# on PORT, by rdma res.
cm_listening() {
	grep -qE "state LISTEN ps $1 .*src-addr [^ ]+:$2 " <<<"$(rdma res show cm_id)"
}

# cm_pair NAME [PS:]PORT SERVER_CMD CLIENT_CMD: the server, then the client
# once the server's listener (port space PS, default TCP) is up, each under
# a timeout; both must exit 0.  Their output goes to
# $SHCA_OUT/NAME.{server,client}; the time it took to $SHCA_OUT/NAME.time.
cm_pair() {
	local name=$1 ps=TCP port=$2 srv_cmd=$3 cli_cmd=$4 spid rc=0 i
	local so=$SHCA_OUT/$name.server co=$SHCA_OUT/$name.client start=$SECONDS
	if [[ $port == *:* ]]; then
		ps=${port%:*} port=${port#*:}
	fi
	timeout 120 bash -o pipefail -c "$srv_cmd" > "$so" 2>&1 &
	spid=$!
	for i in $(seq 600); do
		cm_listening $ps "$port" && break
		kill -0 $spid 2>/dev/null ||
			{ tail -n 5 "$so" >&2; fail "$name: server exited before it listened"; }
		[ "$i" -lt 600 ] || { kill $spid; fail "$name: no listener on port $port"; }
		sleep 0.1
	done
	timeout 120 bash -o pipefail -c "$cli_cmd" > "$co" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	if [ $rc -ne 0 ]; then
		tail -n 5 "$so" "$co" >&2
		fail "$name: exit status $rc"
	fi
	echo "$((SECONDS - start))s" > "$SHCA_OUT/$name.time"
}

# took NAME: how long NAME's pair ran.
took() {
	cat "$SHCA_OUT/$1.time"
}

# expect NAME SIDE COUNT RE: SIDE's output has exactly COUNT lines
# matching RE (COUNT "+" for at least one).
expect() {
	local f=$SHCA_OUT/$1.$2 n
	n=$(grep -cE -- "$4" "$f" || true)
	if [ "$3" = + ]; then
		[ "$n" -gt 0 ] || { tail -n 5 "$f" >&2; fail "$1: $2 printed no '$4'"; }
	else
		[ "$n" -eq "$3" ] ||
			{ tail -n 5 "$f" >&2; fail "$1: $2 printed '$4' $n times, not $3"; }
	fi
}

# rping: RC, the client's buffer advertised, read by the server, written
# back, validated (-V) each time.  -v prints each ping; only its start is
# kept.
job_rping() {
	local size=$1 count=$2 port=$3 name=rping_$1
	cm_pair "$name" "$port" \
		"rping -s -a $srv -p $port -S $size -C $count -V -v | cut -c -40" \
		"rping -c -a $srv -I $cli -p $port -S $size -C $count -V -v | cut -c -40"
	expect "$name" client "$count" '^ping data: rdma-ping-[0-9]+: '
	expect "$name" server "$count" '^server ping data: rdma-ping-[0-9]+: '
	expect "$name" client 0 'mismatch'
	expect "$name" server 1 'DISCONNECT EVENT'
	# The last ping the client sent is the last one the server read.
	[ "$(grep -c "rdma-ping-$((count - 1)): " "$SHCA_OUT/$name.server")" -eq 1 ] ||
		fail "$name: the server missed rdma-ping-$((count - 1))"
	echo "$name: ok ($count pings of $size bytes, $(took "$name"))"
}

# ucmatose: four RC connections at once, ten 100-byte sends each way on
# each.
job_ucmatose() {
	local side
	cm_pair ucmatose 7471 "ucmatose -b $srv -p 7471 -c 4 -C 10" \
		"ucmatose -s $srv -b $cli -p 7471 -c 4 -C 10"
	for side in server client; do
		expect ucmatose $side 1 '^return status 0$'
		expect ucmatose $side + 'data transfers complete'
	done
	echo "ucmatose: ok (4 connections, $(took ucmatose))"
}

# udaddy: UD, address handles from rdma_cm.  Its -p is the port space: it
# always uses port 7174 (of the UDP port space).
job_udaddy() {
	local side
	cm_pair udaddy UDP:7174 "udaddy -b $srv -c 2 -C 10" \
		"udaddy -s $srv -b $cli -c 2 -C 10"
	for side in server client; do
		expect udaddy $side 1 '^return status 0$'
		expect udaddy $side + 'data transfers complete'
	done
	echo "udaddy: ok (2 UD endpoints, $(took udaddy))"
}

# rdma_server listens on every address; rdma_client's send and the reply.
job_rdma_server() {
	cm_pair rdma_server 7473 "rdma_server -p 7473" \
		"rdma_client -s $srv -p 7473"
	expect rdma_server server 1 '^rdma_server: end 0$'
	expect rdma_server client 1 '^rdma_client: end 0$'
	echo "rdma_server/rdma_client: ok ($(took rdma_server))"
}

# rsockets: rstream blocking and nonblocking, and
# riostream, data verified (-T v) on both sides.
rs_result='^[a-z0-9_]+ +[0-9.]+[kmg]? +[0-9.]+[kmg]? +[0-9.]+[kmg]? +[0-9.]+[kmg]?b? +[0-9.]+s +[0-9.]+ +[0-9.]+$'
job_rs() {
	local tool=$1 size=$2 count=$3 mode=$4 port=$5 name=${1}_${2}_$4
	cm_pair "$name" "$port" \
		"$tool -b $srv -p $port -S $size -C $count -T $mode -T v" \
		"$tool -s $srv -b $cli -p $port -S $size -C $count -T $mode -T v"
	expect "$name" client 1 "$rs_result"
	expect "$name" server 1 "$rs_result"
	echo "$name: ok ($(took "$name"): $(grep -E "$rs_result" "$SHCA_OUT/$name.client"))"
}

# perftest over rdma_cm (-R): the connection, its QP attributes and the
# peer's addresses come from rdma_cm, not from perftest's TCP exchange.
# This perftest does not bind its rdma_cm client to --source_ip, so the
# client's QP is on the server's device, shca1.
perf_result='^ *[0-9]+ +[0-9]+ +'
job_perf() {
	local tool=$1 port=$2 name=perf_${1#ib_}
	shift 2
	# perftest's client gives up on the first rdma_cm event it does not
	# expect (and then crashes on its way out): once, on a loaded guest,
	# its connection set-up failed with "Failed to handle RDMA CM event".
	# Such a set-up failure, and only that, is tried once more on another
	# port; the first attempt stays in this log.
	if ! (cm_pair "$name" "$port" "$tool -d shca1 -R -F -p $port $*" \
		"$tool -d shca0 -R -F -p $port --source_ip $cli $* $srv"); then
		grep -q 'Failed to handle RDMA CM event' "$SHCA_OUT/$name.client" ||
			fail "$name: failed"
		echo "$name: rdma_cm set-up failed, trying once more:"
		sed 's/^/    /' "$SHCA_OUT/$name.client"
		port=$((port + 100))
		cm_pair "$name" "$port" "$tool -d shca1 -R -F -p $port $*" \
			"$tool -d shca0 -R -F -p $port --source_ip $cli $* $srv"
	fi
	expect "$name" client + "$perf_result"
	expect "$name" client 1 'Data ex. method : rdma_cm'
	echo "$name: ok ($(took "$name"): $(grep -E "$perf_result" "$SHCA_OUT/$name.client" | tail -n 1))"
}

# run_jobs MAX JOB...: each JOB (a command line) in a subshell of its own,
# MAX at a time, its output in $SHCA_OUT/job-N.log and then in this log;
# fails once all have ended if any failed.
run_jobs() {
	local max=$1 n=0 i=0 pid rc bad=()
	local -A job=()
	shift
	while [ $# -gt 0 ] || [ $n -gt 0 ]; do
		if [ $# -gt 0 ] && [ $n -lt "$max" ]; then
			i=$((i + 1))
			( eval "$1" ) > "$SHCA_OUT/job-$i.log" 2>&1 &
			job[$!]="$i $1"
			n=$((n + 1))
			shift
			continue
		fi
		rc=0
		wait -n -p pid || rc=$?
		n=$((n - 1))
		cat "$SHCA_OUT/job-${job[$pid]%% *}.log"
		[ $rc -eq 0 ] || bad+=("${job[$pid]#* } (status $rc)")
	done
	[ ${#bad[@]} -eq 0 ] || fail "failed: $(printf '%s; ' "${bad[@]}")"
}

run_jobs 3 \
	"job_rping 64 10 7174" "job_rping 4096 10 7175" \
	"job_rping 65535 3 7176" job_ucmatose job_udaddy job_rdma_server \
	"job_rs rstream 4096 100 b 7480" "job_rs rstream 65536 20 n 7481" \
	"job_rs riostream 65536 20 b 7483" \
	"job_perf ib_send_bw 18515 -n 100 -s 4096" \
	"job_perf ib_write_bw 18516 -n 100 -s 65536" \
	"job_perf ib_read_bw 18517 -n 100 -s 65536" \
	"job_perf ib_send_lat 18518 -n 50 -s 8"

# Every process's QP and rdma_cm ID went with it; QP1 (ib_mad's) stays.
gone() {
	! grep -E 'type (RC|UC|UD)' <<<"$(rdma res show qp)" >/dev/null &&
	[ -z "$(rdma res show cm_id)" ]
}
if ! wait_for gone; then
	rdma res show qp >&2
	rdma res show cm_id >&2
	fail "QPs or rdma_cm IDs left behind"
fi
echo ok
