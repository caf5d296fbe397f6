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

if [ -n "$SHCA_INTERACTIVE" ]; then
	# shellcheck disable=SC1091 # the guest's path, not the host's
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
# scan, let them age, scan again.  The debug kernel boots without a leak
# (two scans of a booted guest find none), so there is no scan at boot:
# whatever these scans find, the run made.  A kmemleak that went off (it
# turns itself off for good when it cannot track an allocation) refuses the
# scan and reports nothing: $SHCA_OUT/kmemleak-state says "active" only
# if both scans ran, and vm.sh fails a debug kernel's run without it.
kml=/sys/kernel/debug/kmemleak
if [ ! -e "$kml" ]; then
	echo "absent: no $kml" > "$SHCA_OUT/kmemleak-state"
elif ! echo scan 2>/dev/null > "$kml"; then
	echo "off: $kml refuses a scan" > "$SHCA_OUT/kmemleak-state"
else
	sleep 6
	if echo scan 2>/dev/null > "$kml" &&
	   cat "$kml" > "$SHCA_OUT/kmemleak"; then
		echo active > "$SHCA_OUT/kmemleak-state"
	else
		echo "off: $kml failed its second scan" > "$SHCA_OUT/kmemleak-state"
	fi
fi
echo "$status" > "$SHCA_OUT/exit-status"
sync
/bin/busybox reboot -f
