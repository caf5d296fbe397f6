#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packages on a Debian 12 system, as a user would install them.
#
#   pkg-test.sh                  all of it
#   pkg-test.sh --install        its host steps: 1, 2 and 5
#   pkg-test.sh --boot           then the rest: 3 and 4
#   SHCA_DEBS=DIR pkg-test.sh    the packages scripts/build-debs.sh made
#                                there already
#
# Builds shca-dkms and libshca (scripts/build-debs.sh, lintian included)
# and takes the cached Debian 12 system of scripts/build-sysroot.sh, which
# has Debian's 6.1 kernel with its headers, dkms, and Debian's own
# rdma-core 44 tools.  On an overlay of it (the cached tree is never
# changed), it then:
#   1. installs both packages with dpkg: DKMS builds shca.ko for 6.1;
#   2. installs the stock 6.12 kernel and its headers: DKMS builds shca.ko
#      for the new kernel too;
#   3. boots that system under QEMU on each kernel, its own image and
#      modules, and runs tests/package/installed.sh there: modinfo,
#      modprobe, rdma link add, and Debian's unmodified ibv_* tools,
#      perftest, rping and pyverbs over the installed provider, with no
#      environment variable;
#   4. removes both packages, and purges them: every shca.ko DKMS built,
#      the provider and its driver file go with them;
#   5. stages make install and make uninstall for 6.1 into a directory.
# Steps 1, 2, 4 and 5 are checked here; step 3 in the guests.  The
# packages go in through a chroot, not in the booted guest: DKMS under
# TCG would take many minutes for what the chroot does in seconds, and
# the guest boots the very tree the chroot changed.  make check runs the
# host's builds (--install) in the background beside its debug guest, and
# the boots (--boot, on the overlay --install left in out/pkg) at its
# end.  Reports in KTAP: this script's own checks on stdout, each
# guest's in out/pkg-<release>/results (check.sh counts both).  Exits
# non-zero if a host step fails or a guest run fails.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=${1:-all}
case "$mode" in
all|--install|--boot) ;;
*) shca_die "pkg-test.sh: --install, --boot or no argument" ;;
esac

base=$("$SHCA_TOP/scripts/build-sysroot.sh")
rel61=$(shca_stock_release stock61)
rel612=$(shca_stock_release stock)
ver=$("$SHCA_TOP/scripts/check-version.sh")

w=$SHCA_TOP/out/pkg
root=$w/root

teardown() {
	local m
	for m in "$root$SHCA_TOP" "$root/dev/pts" "$root/dev" "$root/sys" \
		 "$root/proc" "$root"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	return 0
}
trap teardown EXIT
teardown
if [ "$mode" != --boot ]; then
	# No result of an earlier run may be counted as this one's.
	rm -rf "$SHCA_TOP"/out/pkg-*/ "$w"
	# make check builds the packages in the background beforehand and
	# names their directory in SHCA_DEBS.
	debs=${SHCA_DEBS:-}
	[ -n "$debs" ] || debs=$("$SHCA_TOP/scripts/build-debs.sh")
	mkdir -p "$w/upper" "$w/work" "$root"
fi
# --boot takes the system --install left: its upper layer over the same
# cached tree.
mount -t overlay overlay \
	-o "lowerdir=$base,upperdir=$w/upper,workdir=$w/work" "$root"

# The host's /proc, /sys and /dev, for the chroot steps only: a booted
# guest mounts its own.
host_mounts() {
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --bind /dev "$root/dev"
	mount --make-private "$root/dev"
	mount --bind /dev/pts "$root/dev/pts"
}
host_umounts() {
	local m
	for m in "$root/dev/pts" "$root/dev" "$root/sys" "$root/proc"; do
		umount "$m"
	done
}
host_mounts

in_root() {
	chroot "$root" env -i DEBIAN_FRONTEND=noninteractive LC_ALL=C \
		HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

n=0 rc=0
echo "KTAP version 1"
case "$mode" in
all) echo "1..6" ;;
*) echo "1..3" ;;
esac
# check NAME CMD...: one result, CMD's output as KTAP comments on failure.
check() {
	local name=$1 out st=0
	shift
	n=$((n + 1))
	out=$("$@" 2>&1) || st=$?
	if [ $st -eq 0 ]; then
		echo "ok $n $name"
	else
		sed 's/^/# /' <<<"$out" | tail -n 40
		echo "not ok $n $name"
		rc=1
	fi
}

# ko REL: where DKMS puts shca.ko for a kernel, compressed as the
# kernel's own modules are (6.12's with xz, 6.1's not).
ko() {
	local f=$root/lib/modules/$1/updates/dkms/shca.ko
	if [ -e "$f.xz" ]; then echo "$f.xz"; else echo "$f"; fi
}

install_debs() {
	cp "$debs"/shca-dkms_"${ver}"_all.deb "$debs"/libshca_"${ver}"_amd64.deb \
		"$root/tmp/"
	in_root dpkg -i "/tmp/shca-dkms_${ver}_all.deb" \
		"/tmp/libshca_${ver}_amd64.deb" || return 1
	in_root dkms status shca
	[ -f "$(ko "$rel61")" ] || { echo "no $(ko "$rel61")"; return 1; }
	[ "$(modinfo -F version "$(ko "$rel61")")" = "$ver" ] ||
		{ echo "shca.ko for $rel61 is not version $ver"; return 1; }
	[ -f "$root/usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so" ] &&
		grep -qx 'driver shca' "$root/etc/libibverbs.d/shca.driver"
}

new_kernel() {
	[ ! -e "$(ko "$rel612")" ] || { echo "shca.ko for $rel612 before its kernel"; return 1; }
	in_root apt-get install -y -q --no-download --no-install-recommends \
		"$(shca_stock_image "$rel612")" "linux-headers-$rel612" || return 1
	in_root dkms status shca
	[ -f "$(ko "$rel612")" ] || { echo "DKMS built no $(ko "$rel612")"; return 1; }
	grep -qE "^updates/dkms/shca.ko(.xz)?:" "$root/lib/modules/$rel612/modules.dep" ||
		{ echo "depmod of $rel612 does not know shca.ko"; return 1; }
}

# installed: --install put both packages in, with shca.ko for both
# kernels.
installed() {
	[ -f "$w/installed" ] ||
		{ echo "the packages are not installed (pkg-test.sh --install failed)"; return 1; }
}

boot() {
	local rel=$1 out=$SHCA_TOP/out/pkg-$1
	installed || return 1
	"$SHCA_TOP/scripts/vm.sh" --kernel "system:$rel" --root "$root" \
		--out "$out" --timeout 900 tests/package/installed.sh "$ver" &&
		[ -s "$out/results" ]
}

remove_debs() {
	local k
	installed || return 1
	in_root dpkg -r shca-dkms libshca || return 1
	for k in "$rel61" "$rel612"; do
		[ ! -e "$(ko "$k")" ] || { echo "$(ko "$k") is still there"; return 1; }
		! grep -q "shca.ko" "$root/lib/modules/$k/modules.dep" ||
			{ echo "modules.dep of $k still names shca.ko"; return 1; }
	done
	[ ! -e "$root/usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so" ] ||
		{ echo "the provider is still there"; return 1; }
	# The driver file is a conffile: removed, not purged, it stays.
	in_root dpkg -P shca-dkms libshca || return 1
	[ ! -e "$root/etc/libibverbs.d/shca.driver" ] ||
		{ echo "shca.driver is still there after a purge"; return 1; }
	[ -z "$(in_root dkms status shca)" ] ||
		{ echo "dkms still knows shca"; return 1; }
}

# make install and make uninstall, for the 6.1 kernel, into a staging
# root: the same files where the packages put them, and none left after.
install_tree() {
	local d=$w/destdir kdir f
	kdir=$("$SHCA_TOP/scripts/fetch-stock.sh" stock61)/usr/src/linux-headers-$rel61
	rm -rf "$d"
	make -s -C "$SHCA_TOP" install DESTDIR="$d" KVER="$rel61" KDIR="$kdir" ||
		return 1
	for f in "lib/modules/$rel61/updates/shca.ko" \
		 usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so \
		 etc/libibverbs.d/shca.driver; do
		[ -f "$d/$f" ] || { echo "make install put no $f"; return 1; }
	done
	[ "$(modinfo -F version "$d/lib/modules/$rel61/updates/shca.ko")" = "$ver" ] ||
		{ echo "make install's shca.ko is not version $ver"; return 1; }
	! grep -qE 'RUNPATH|RPATH' <<<"$(readelf -d \
		"$d/usr/lib/x86_64-linux-gnu/libibverbs/libshca-rdmav34.so")" ||
		{ echo "the provider keeps a RUNPATH"; return 1; }
	make -s -C "$SHCA_TOP" uninstall DESTDIR="$d" KVER="$rel61" || return 1
	f=$(find "$d" -type f ! -name 'modules.*')
	[ -z "$f" ] || { echo "make uninstall left $f"; return 1; }
}
if [ "$mode" != --boot ]; then
	check "dpkg -i shca-dkms libshca builds shca.ko for $rel61" install_debs
	check "installing kernel $rel612 builds shca.ko for it" new_kernel
	[ $rc -ne 0 ] || touch "$w/installed"
	check "make install and make uninstall into a staging root" install_tree
fi
[ "$mode" != --install ] || exit $rc

# The guests run from this tree: the checkout at its own path, and the
# busybox the test guest's init powers off with.
host_umounts
mkdir -p "$root$SHCA_TOP"
mount --bind "$SHCA_TOP" "$root$SHCA_TOP"
[ -x "$root/bin/busybox" ] || cp /bin/busybox "$root/bin/busybox"
check "the system boots $rel61 and runs the tests" boot "$rel61"
check "the system boots $rel612 and runs the tests" boot "$rel612"
umount -l "$root$SHCA_TOP"
host_mounts
check "dpkg -r removes shca.ko from every kernel, and the provider" remove_debs
exit $rc
