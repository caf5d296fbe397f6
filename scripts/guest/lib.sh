# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for scripts that run inside the test guest.  Sourced.

export SHCA_BUILD=$SHCA_TOP/out/build-$SHCA_KERNEL

# Load ib_core and friends (modules on the stock kernel, built in on the
# debug kernel), the netdevs the tests bind to, and shca itself.
shca_guest_load() {
	local m
	if [ ! -f /run/shca-deps-loaded ]; then
		for m in ib_core ib_uverbs ib_umad rdma_cm rdma_ucm dummy veth; do
			modprobe "$m" 2>/dev/null || true
		done
		: > /run/shca-deps-loaded
	fi
	if ! grep -q '^shca ' /proc/modules; then
		insmod "$SHCA_BUILD/drivers/infiniband/sw/shca/shca.ko" || return 1
	fi
}

shca_guest_unload() {
	if grep -q '^shca_kunit ' /proc/modules; then
		rmmod shca_kunit || return 1
	fi
	if grep -q '^shca ' /proc/modules; then
		rmmod shca || return 1
	fi
}
