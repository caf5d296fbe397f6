#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian 12 system as a user has one, for the package tests
# (scripts/pkg-test.sh): debootstrap's minimal bookworm, the host's
# Debian sources (bookworm, its updates and security), and from Debian's
# own packages:
#   - the default kernel (linux-image-amd64's 6.1) with its headers and
#     dkms, so that a DKMS package builds for it when installed;
#   - Debian 12's rdma-core 44 tools and libraries: ibverbs-utils,
#     rdmacm-utils, perftest, python3-pyverbs, iproute2's rdma;
#   - the stock 6.12 image and headers downloaded into apt's cache but not
#     installed, for the test that installs a new kernel after shca.
# Nothing of shca is in it.  The tree is cached under $SHCA_CACHE, keyed
# on what goes into it (the release, the packages and the two kernel
# releases: change the recipe below and it is built again), and never
# changed after it is built: the package tests lay an overlay on it.
#
# Prints the tree's path on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

shca_need_pkgs debootstrap debian-archive-keyring

rel61=$(shca_stock_release stock61)
rel612=$(shca_stock_release stock)
# The recipe.
suite=bookworm
pkgs=(kmod iproute2 procps bash util-linux dkms initramfs-tools
      "linux-image-$rel61" "linux-headers-$rel61"
      ibverbs-utils rdmacm-utils perftest python3-pyverbs ibverbs-providers)
later=("$(shca_stock_image "$rel612")" "linux-headers-$rel612")
key=$(echo "1 $suite minbase ${pkgs[*]} / ${later[*]}" | sha256sum | cut -c1-12)
dir=$SHCA_CACHE/sysroot-$key
if [ -f "$dir/.shca-built" ]; then
	shca_log "Debian 12 system: cached in $dir"
	echo "$dir"
	exit 0
fi

mkdir -p "$SHCA_CACHE"
exec 8>"$SHCA_CACHE/sysroot.lock"
flock 8
if [ -f "$dir/.shca-built" ]; then
	echo "$dir"
	exit 0
fi

tmp=$dir.tmp
umount_all() {
	local m
	for m in dev/pts dev sys proc; do
		mountpoint -q "$tmp/$m" && umount -l "$tmp/$m"
	done
	return 0
}
trap umount_all EXIT
umount_all
rm -rf "$tmp"
shca_log "debootstrap of Debian 12 into $tmp (a few minutes)"
debootstrap --variant=minbase $suite "$tmp" http://deb.debian.org/debian \
	> "$SHCA_CACHE/sysroot-debootstrap.log" 2>&1 ||
	shca_die "debootstrap failed; see $SHCA_CACHE/sysroot-debootstrap.log"

# The sources of this machine, which is a Debian 12 one too, in either
# of apt's formats.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	rm -f "$tmp/etc/apt/sources.list"
	cp /etc/apt/sources.list.d/debian.sources "$tmp/etc/apt/sources.list.d/"
elif [ -f /etc/apt/sources.list ]; then
	cp /etc/apt/sources.list "$tmp/etc/apt/sources.list"
fi
# No service starts inside the chroot.
printf '#!/bin/sh\nexit 101\n' > "$tmp/usr/sbin/policy-rc.d"
chmod +x "$tmp/usr/sbin/policy-rc.d"
echo shca-sysroot > "$tmp/etc/hostname"
mount -t proc proc "$tmp/proc"
mount -t sysfs sysfs "$tmp/sys"
mount --bind /dev "$tmp/dev"
mount --bind /dev/pts "$tmp/dev/pts"

in_root() {
	chroot "$tmp" env DEBIAN_FRONTEND=noninteractive LC_ALL=C \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
shca_log "installing the kernel $rel61, dkms and rdma-core's tools"
{
	in_root apt-get update -qq &&
	in_root apt-get install -y -qq --no-install-recommends "${pkgs[@]}" &&
	in_root apt-get install -y -qq --no-install-recommends --download-only \
		"${later[@]}"
} > "$SHCA_CACHE/sysroot-apt.log" 2>&1 ||
	shca_die "installing into the Debian 12 system failed; see $SHCA_CACHE/sysroot-apt.log"
umount_all
trap - EXIT

for d in "$SHCA_CACHE"/sysroot-*/; do
	d=${d%/}
	[ "$d" = "$tmp" ] || [ "$d" = "$dir" ] || rm -rf "$d"
done
rm -rf "$dir"
mv "$tmp" "$dir"
touch "$dir/.shca-built"
shca_log "Debian 12 system ready in $dir"
echo "$dir"
