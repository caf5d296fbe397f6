# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for the integration tests (tests/integration/*.sh).  Sourced by
# each test, which runs in the guest as root with shca loaded and no shca
# device present.
#
# Under pipefail, never pipe a command into grep -q (or head): grep stops
# at the first match, the writer dies of SIGPIPE, and the pipeline fails
# although it matched.  Grep the output instead: grep -q RE <<<"$(CMD)",
# or CMD > FILE and grep FILE where CMD's status matters too.
set -euo pipefail

# SHCA_LONG is 1 in make check-long's run (scripts/guest/run-tests.sh):
# a test with a "# shca-long: WHAT" line does WHAT more there.
SHCA_LONG=${SHCA_LONG:-0}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# ktap_check FILE [NAME...]: FILE holds a sound KTAP report of a test
# program (shca_uverbs_test): a version line, results numbered in turn, a
# plan of one or more that they meet, none "not ok", and "ok N NAME" for
# each NAME.  Fails with what is wrong.
ktap_check() {
	local f=$1 why c
	shift
	why=$(awk '
		/^KTAP version 1$/ { v = 1 }
		/^1\.\.[0-9]+$/ { if (plan != "") print "a second plan"
			plan = substr($0, 4) + 0 }
		/^(not )?ok [0-9]+ / { n++
			num = $1 == "ok" ? $2 : $3
			if (!v) print "a result before the version line"
			if (num != n) print "result " num " where " n " was due"
			if ($1 == "not") print }
		END { if (plan == "") print "no plan: the report stops short"
			else if (plan == 0) print "plan 0"
			else if (plan != n) print plan " results planned, " n " reported" }' "$f")
	[ -z "$why" ] || fail "$f: $why"
	for c in "$@"; do
		grep -qE "^ok [0-9]+ $c\$" "$f" || fail "$f: no 'ok $c'"
	done
}

# kernel_before MAJOR.MINOR: whether the running kernel is older.  For
# what an older ib_core lacks, and shca with it (shca_compat.h).
kernel_before() {
	local want=$1 have
	have=$(uname -r | grep -oE '^[0-9]+\.[0-9]+')
	[ "$(printf '%s\n%s\n' "$have" "$want" | sort -V | head -n1)" != "$want" ]
}

# res_of WHAT DEV: rdma res show's WHAT (qp, cq, mr or pd) of DEV.  A QP
# is filtered by its link, the others by their device: iproute2 refuses
# "link" for them, with an error and nothing on stdout.
res_of() {
	local filter=dev
	[ "$1" != qp ] || filter="link"
	rdma res show "$1" "$filter" "$2"
}

# res_clean DEV: DEV holds no QP, CQ, MR or PD but ib_core's own (ib_mad's
# QP1 and its CQ and PD); rdma_cm's QPs and the ULPs' objects are gone.
# DEV must still exist (a deleted device holds nothing), and rdma must
# answer: an error is a failure, never an empty list.
res_clean() {
	local what out
	[ -d "/sys/class/infiniband/$1" ] || fail "res_clean: no device $1"
	for what in qp cq mr pd; do
		out=$(res_of $what "$1") || fail "rdma res show $what of $1 failed"
		[ -z "$(grep -v '\[ib_core\]' <<<"$out")" ] || return 1
	done
}

# res_only_ib_core DEV: res_clean, or fail with what DEV still holds.
res_only_ib_core() {
	res_clean "$1" && return 0
	fail "$1 still holds: $(res_of qp "$1"; res_of cq "$1"; res_of mr "$1"; res_of pd "$1")"
}

# mkdummy NAME [MAC]: a dummy Ethernet netdev, up.
mkdummy() {
	ip link add "$1" type dummy
	[ -z "${2:-}" ] || ip link set "$1" address "$2"
	ip link set "$1" up
}

# expect_error TEXT CMD...: CMD must fail and say TEXT on stderr.
expect_error() {
	local text=$1 out
	shift
	if out=$("$@" 2>&1); then
		fail "'$*' succeeded; expected it to fail with '$text'"
	fi
	grep -qF -- "$text" <<<"$out" ||
		fail "'$*' failed with '$out'; expected '$text'"
}

# sysfs_of DEV: the device's sysfs directory.
sysfs_of() {
	echo "/sys/class/infiniband/$1"
}

# wait_for CMD...: poll CMD for up to 10 seconds.  For state that ib_core
# updates from a workqueue (the GID table, deferred unregistration).
wait_for() {
	for _ in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# use_rdma_core: put the rdma-core build (libibverbs, librdmacm, libshca
# and the ibv_* tools, from scripts/build-rdma-core.sh, which check.sh
# records in out/rdma-core-build) first in the paths.  Debian's perftest
# binaries run against it through LD_LIBRARY_PATH.
use_rdma_core() {
	local b
	b=$(cat "$SHCA_TOP/out/rdma-core-build" 2>/dev/null) ||
		fail "no rdma-core build recorded; run scripts/build-rdma-core.sh"
	[ -x "$b/bin/ibv_devices" ] || fail "no rdma-core build in $b"
	export RDMA_CORE_BUILD=$b
	export LD_LIBRARY_PATH=$b/lib PATH=$b/bin:$PATH
	export PYTHONPATH=$b/python
}

# two_devices: shca0 and shca1 on dummy netdevs with IPv4 addresses; GID
# index 3 is each one's RoCE v2 address (::ffff:10.11.N.1).
two_devices() {
	mkdummy shca_d0
	mkdummy shca_d1
	ip addr add 10.11.0.1/24 dev shca_d0
	ip addr add 10.11.1.1/24 dev shca_d1
	rdma link add shca0 type shca netdev shca_d0
	rdma link add shca1 type shca netdev shca_d1
	wait_for grep -q ffff:0a0b:0001 \
		/sys/class/infiniband/shca0/ports/1/gids/3 ||
		fail "shca0 has no IPv4 GID"
	wait_for grep -q ffff:0a0b:0101 \
		/sys/class/infiniband/shca1/ports/1/gids/3 ||
		fail "shca1 has no IPv4 GID"
}

# wait_listen PORT: until something listens on TCP PORT.
wait_listen() {
	wait_for bash -c "ss -ltn | grep -q ':$1 '"
}

# pair NAME SERVER_CMD CLIENT_CMD: run a server and its client (the client
# once the server listens on $PORT, default 18515), each under a timeout;
# both must succeed.  Their output goes to $SHCA_OUT/NAME.{server,client}.
pair() {
	local name=$1 srv=$2 cli=$3 port=${PORT:-18515} spid rc=0
	timeout 120 bash -c "$srv" > "$SHCA_OUT/$name.server" 2>&1 &
	spid=$!
	wait_listen "$port" || { kill $spid; fail "$name: server never listened"; }
	timeout 120 bash -c "$cli" > "$SHCA_OUT/$name.client" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	if [ $rc -ne 0 ]; then
		tail -n 5 "$SHCA_OUT/$name.server" "$SHCA_OUT/$name.client" >&2
		fail "$name: exit status $rc"
	fi
	echo "$name: ok ($(grep -v -- '^ *---' "$SHCA_OUT/$name.client" | tail -n 1))"
}

# Network namespaces (netns, netns_exclusive): shca0 and shca1 on dummy
# netdevs in init_net, shca2 on one in shca_ns1.

# netns_mode MODE: "rdma system set netns MODE", which ib_core refuses while
# a namespace other than init_net exists; one that was just deleted takes
# a moment to go.
netns_mode() {
	wait_for bash -c "rdma system set netns $1 2>/dev/null" ||
		fail "rdma system set netns $1: $(rdma system set netns "$1" 2>&1)"
	grep -q "netns $1" <<<"$(rdma system show)" ||
		fail "mode is not $1: $(rdma system show)"
}

# netns_cleanup: undo netns_setup, back to shared mode.
netns_cleanup() {
	ip netns del shca_ns1 2>/dev/null || true
	ip link del shca_n0 2>/dev/null || true
	ip link del shca_n1 2>/dev/null || true
	for _ in $(seq 100); do
		rdma system set netns shared 2>/dev/null && break
		sleep 0.1
	done
}

# link_counter DEV NAME: one of the device's counters.
link_counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v n="$2" 'p { print; exit } $0 == n { p = 1 }'
}

# shca_vectors DEV: the device's completion vectors: its EQs (debugfs eq:
# a row per EQ after two header lines, the third field its depth).
shca_vectors() {
	awk 'NR > 2 && $3 > 0 { n++ } END { print n + 0 }' \
		"/sys/kernel/debug/shca/$1/eq"
}

# eqs_with_events DEV: how many of the device's EQs have had an event
# written to them (the fourth field of debugfs eq: the EQEs written).
eqs_with_events() {
	awk 'NR > 2 && $4 > 0 { n++ } END { print n + 0 }' \
		"/sys/kernel/debug/shca/$1/eq"
}

# netns_setup: the netdevs and devices; shca2 is created from its netdev's
# namespace, where "rdma link add" finds the netdev.
netns_setup() {
	local dev
	ip netns add shca_ns1
	ip -n shca_ns1 link set lo up
	mkdummy shca_n0
	mkdummy shca_n1
	ip -n shca_ns1 link add shca_n2 type dummy
	ip -n shca_ns1 link set shca_n2 up
	rdma link add shca0 type shca netdev shca_n0
	rdma link add shca1 type shca netdev shca_n1
	ip netns exec shca_ns1 rdma link add shca2 type shca netdev shca_n2
	for dev in shca0 shca1 shca2; do
		wait_for bash -c "rdma link show $dev/1 | grep -q ACTIVE" ||
			fail "$dev is not active"
	done
}

# kc_traffic A B: the consumer's verdict between devices A and B.
kc_traffic() {
	local kc=$SHCA_BUILD/tests/kmod/kconsumer/shca_kconsumer.ko
	local result=/sys/kernel/debug/shca_kconsumer/result
	insmod "$kc" dev_a="$1" dev_b="$2" iters=1 poll=softirq
	cat $result
	cp $result "$SHCA_OUT/netns-$1-$2.result"
	rmmod shca_kconsumer
}
