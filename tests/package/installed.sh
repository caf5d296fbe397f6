#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In a Debian 12 system that has shca-dkms and libshca installed, booted
# on one of its kernels (scripts/pkg-test.sh): what a user does first, with
# Debian's own tools and libraries only.  No RDMAV_DRIVERS, no
# LD_LIBRARY_PATH, no rdma-core of the project's.
#
#   installed.sh VERSION [CHECK...]
#
# Runs every check, or the ones named (modprobe_and_link first, for those
# that need devices), and reports each in KTAP to $SHCA_OUT/results.
ver=$1
shift
results=$SHCA_OUT/results
unset RDMAV_DRIVERS LD_LIBRARY_PATH PYTHONPATH
checks=(dkms_module modinfo modprobe_and_link ibv_devices ibv_devinfo
	rc_pingpong ud_pingpong ib_write_bw ib_send_lat rping pyverbs
	other_private_abi rmmod)
[ $# -eq 0 ] || checks=("$@")
n=0
{
	echo "KTAP version 1"
	echo "1..${#checks[@]}"
} > "$results"

# Each check, t_NAME, runs in a subshell under tests/lib.sh's strict mode: the first
# failure ends it, with a reason.
. "$SHCA_TOP/tests/lib.sh"
set +e
rel=$(uname -r)

t_dkms_module() {
	local f=/lib/modules/$rel/updates/dkms/shca.ko
	[ -f "$f" ] || f=$f.xz
	[ -f "$f" ] || fail "no ${f%.xz}, compressed or not"
	[ "$(modinfo -F filename shca)" = "$f" ] ||
		fail "modprobe would load $(modinfo -F filename shca), not $f"
}

t_modinfo() {
	local out
	out=$(modinfo shca)
	echo "$out"
	grep -qxP "version:\s+$ver" <<<"$out" || fail "no version $ver"
	grep -qP '^description:\s+shca: a soft InfiniBand/RoCE HCA' <<<"$out" ||
		fail "no description"
	grep -qP '^license:\s+Dual BSD/GPL' <<<"$out" || fail "no license"
	for p in max_qp max_qp_wr max_cq max_cqe max_srq; do
		grep -qP "^parm:\s+$p:" <<<"$out" || fail "no parameter $p"
	done
}

t_modprobe_and_link() {
	modprobe shca
	modprobe rdma_ucm
	two_devices
	grep -q ACTIVE <<<"$(rdma link show shca0/1)" || fail "shca0 is not active"
}

t_ibv_devices() {
	local out
	out=$(ibv_devices 2>&1) || fail "ibv_devices: $out"
	echo "$out"
	grep -q '^ *shca0 ' <<<"$out" || fail "no shca0"
	grep -q '^ *shca1 ' <<<"$out" || fail "no shca1"
	! grep -qi 'warning' <<<"$out" || fail "libibverbs warned"
}

t_ibv_devinfo() {
	local out
	out=$(ibv_devinfo -v -d shca0 2>&1) || fail "ibv_devinfo: $out"
	for f in 'hca_id:\s*shca0' 'transport:\s*InfiniBand' \
		 'state:\s*PORT_ACTIVE' 'link_layer:\s*Ethernet' \
		 '::ffff:10.11.0.1'; do
		grep -qP "$f" <<<"$out" || fail "no '$f'"
	done
}

t_rc_pingpong() {
	pair rc "ibv_rc_pingpong -d shca1 -g 3 -n 200" \
		"ibv_rc_pingpong -d shca0 -g 3 -n 200 127.0.0.1"
	pair rc_events "ibv_rc_pingpong -d shca1 -g 3 -n 50 -s 65536 -e" \
		"ibv_rc_pingpong -d shca0 -g 3 -n 50 -s 65536 -e 127.0.0.1"
}

t_ud_pingpong() {
	pair ud "ibv_ud_pingpong -d shca1 -g 3 -n 200" \
		"ibv_ud_pingpong -d shca0 -g 3 -n 200 127.0.0.1"
}

t_ib_write_bw() {
	pair write_bw "ib_write_bw -d shca1 -x 3 -F -n 500 -s 65536" \
		"ib_write_bw -d shca0 -x 3 -F -n 500 -s 65536 127.0.0.1"
}

t_ib_send_lat() {
	pair send_lat "ib_send_lat -d shca1 -x 3 -F -n 200" \
		"ib_send_lat -d shca0 -x 3 -F -n 200 127.0.0.1"
}

# rping over rdma_cm, from shca0's address to shca1's.  Each address has
# a host route through the other's netdev, as if both were on one link:
# rdma_cm accepts a request only if the way back leaves through the
# netdev it came in on.
t_rping() {
	local srv=10.11.1.1 cli=10.11.0.1 spid rc=0 i
	ip route add $cli/32 dev shca_d1
	ip route add $srv/32 dev shca_d0
	timeout 120 rping -s -a $srv -p 7174 -C 10 -S 4096 -V -v \
		> "$SHCA_OUT/rping.server" 2>&1 &
	spid=$!
	for i in $(seq 300); do
		grep -qE "state LISTEN ps TCP .*src-addr [^ ]+:7174 " \
			<<<"$(rdma res show cm_id)" && break
		[ "$i" -lt 300 ] || { kill $spid; fail "rping: no listener"; }
		sleep 0.1
	done
	timeout 120 rping -c -a $srv -I $cli -p 7174 -C 10 -S 4096 -V -v \
		> "$SHCA_OUT/rping.client" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	cat "$SHCA_OUT/rping.client"
	[ $rc -eq 0 ] || fail "rping: exit status $rc"
	[ "$(grep -c '^ping data: rdma-ping-' "$SHCA_OUT/rping.client")" -eq 10 ] ||
		fail "rping: the client did not see its 10 pings"
	! grep -q mismatch "$SHCA_OUT/rping.client" || fail "rping: data mismatch"
}

t_pyverbs() {
	/usr/bin/python3 "$SHCA_TOP/tests/package/pyverbs_check.py" shca0
}

# A provider whose private ABI the system's libibverbs does not have is
# refused when loaded, with a message, and nothing crashes: the same
# provider with its need of IBVERBS_PRIVATE_34 turned into _99.
t_other_private_abi() {
	local d=/tmp/abi out st=0
	mkdir -p $d
	/usr/bin/python3 - "$d/libshcaother-rdmav34.so" <<-'PY'
	import sys
	src = "/usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so"
	data = open(src, "rb").read()
	assert data.count(b"IBVERBS_PRIVATE_34") >= 1, "no private ABI need"
	open(sys.argv[1], "wb").write(data.replace(b"IBVERBS_PRIVATE_34", b"IBVERBS_PRIVATE_99"))
	PY
	out=$(RDMAV_DRIVERS=$d/libshcaother ibv_devices 2>&1) || st=$?
	echo "$out"
	[ $st -eq 0 ] || fail "ibv_devices exited $st"
	grep -q "couldn't load driver.*IBVERBS_PRIVATE_99" <<<"$out" ||
		fail "no message of the refused provider"
	grep -q '^ *shca0 ' <<<"$out" || fail "the installed provider stopped working"
}

t_rmmod() {
	rdma link delete shca0
	rdma link delete shca1
	rmmod shca
	! grep -q '^shca ' /proc/modules || fail "shca is still loaded"
}

for c in "${checks[@]}"; do
	n=$((n + 1))
	echo "=== $c"
	( set -euo pipefail; "t_$c" ) > "$SHCA_OUT/$c.log" 2>&1
	st=$?
	cat "$SHCA_OUT/$c.log"
	if [ $st -eq 0 ]; then
		echo "ok $n $c" >> "$results"
	else
		echo "# $c: $(tail -n 1 "$SHCA_OUT/$c.log")" >> "$results"
		echo "not ok $n $c" >> "$results"
	fi
done
exit 0
