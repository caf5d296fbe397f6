#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest, as root, in the host's (read-only) root.  Prepares the
# system, runs the command vm.sh was given (or a shell), checks kmemleak,
# records the exit status in $SHCA_OUT and powers the guest off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp/home TERM=${TERM:-linux} LC_ALL=C
mkdir -p "$HOME"
cd "$SHCA_TOP" || exit 1

ip link set lo up
hostname shca-guest 2>/dev/null
# Leaks found so far are the boot's business, not ours.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
fi

if [ -n "$SHCA_INTERACTIVE" ]; then
	# shellcheck disable=SC1091
	. "$SHCA_TOP/scripts/guest/lib.sh"
	shca_guest_load || echo "shca-init: loading shca failed"
	echo "shca guest: $(uname -r).  shca is loaded; 'exit' powers off."
	setsid /bin/busybox cttyhack /bin/bash -l
	status=0
else
	eval "set -- $(cat "$SHCA_OUT/.cmd")"
	bash "$@"
	status=$?
fi

# kmemleak only reports objects it has seen unreferenced for 5 seconds:
# scan, let them age, scan again.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > "$SHCA_OUT/kmemleak"
fi
echo "$status" > "$SHCA_OUT/exit-status"
sync
/bin/busybox reboot -f
