# SPDX-License-Identifier: GPL-2.0
# Helpers for the integration tests (tests/integration/*.sh).  Sourced by
# each test, which runs in the guest as root with shca loaded and no shca
# device present.
set -euo pipefail

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
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
	echo "$out" | grep -qF -- "$text" ||
		fail "'$*' failed with '$out'; expected '$text'"
}

# sysfs_of DEV: the device's sysfs directory.
sysfs_of() {
	echo "/sys/class/infiniband/$1"
}

# wait_for CMD...: poll CMD for up to 10 seconds.  For state that ib_core
# updates from a workqueue (the GID table, deferred unregistration).
wait_for() {
	local i
	for i in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
