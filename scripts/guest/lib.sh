# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for scripts that run inside the test guest.  Sourced.

export SHCA_BUILD=$SHCA_TOP/out/build-$SHCA_KERNEL

# shca_guest_loaded MODULE: whether MODULE is loaded.  Bash alone: under
# KASAN and TCG a fork costs a fraction of a second, and the runner asks
# before and after every test.
shca_guest_loaded() {
	local m _
	while read -r m _; do
		[ "$m" != "$1" ] || return 0
	done < /proc/modules
	return 1
}

# Load ib_core and friends (modules on the stock kernel, built in on the
# debug kernel), the netdevs the tests bind to, and shca itself, with the
# module parameters in SHCA_MODPARAMS (comma-separated name=value, from
# the host's environment through scripts/vm.sh).
shca_guest_load() {
	local m
	if [ ! -f /run/shca-deps-loaded ]; then
		for m in ib_core ib_uverbs ib_umad rdma_cm rdma_ucm dummy veth; do
			modprobe "$m" 2>/dev/null || true
		done
		: > /run/shca-deps-loaded
	fi
	if ! shca_guest_loaded shca; then
		local params=${SHCA_MODPARAMS:-}
		# shellcheck disable=SC2086 # one word per parameter
		insmod "$SHCA_BUILD/drivers/infiniband/sw/shca/shca.ko" \
			${params//,/ } || return 1
	fi
}

shca_guest_unload() {
	if shca_guest_loaded shca_kunit; then
		rmmod shca_kunit || return 1
	fi
	if shca_guest_loaded shca; then
		rmmod shca || return 1
	fi
}
