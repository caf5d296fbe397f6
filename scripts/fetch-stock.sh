#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's stock 6.12 kernel image and headers that match the
# installed linux-source-6.12, and unpack them under $SHCA_CACHE without
# installing them.  The unpacked tree holds:
#   root/boot/vmlinuz-<rel>                 the kernel the guest boots
#   root/lib/modules/<rel>/                 its modules, depmod already run
#   root/usr/src/linux-headers-<rel>/       KDIR for building shca
#
# Prints the unpacked root on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

shca_need_pkgs linux-source-6.12 kmod xz-utils gcc-12

rel=$(shca_stock_release)
abi=${rel%-amd64}
dir=$(shca_stock_dir)
root=$dir/root

if [ -f "$dir/.shca-unpacked" ]; then
	shca_log "stock kernel $rel: cached in $dir"
	echo "$root"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/debs" "$root"
shca_log "downloading stock kernel $rel"
(cd "$dir/debs" && apt-get download -q \
	"linux-image-$rel" "linux-headers-$rel" \
	"linux-headers-$abi-common" "linux-kbuild-$abi" >&2 2>/dev/null) ||
	(cd "$dir/debs" && apt-get update -qq >&2 && apt-get download -q \
	"linux-image-$rel" "linux-headers-$rel" \
	"linux-headers-$abi-common" "linux-kbuild-$abi" >&2) ||
	shca_die "cannot download the stock kernel packages for $rel"
for deb in "$dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$root"
done
rm -rf "$dir/debs"

# The headers' Makefile includes the common tree by absolute path; point
# it at the unpacked copy.
sed -i "s|^include /usr/src/|include $root/usr/src/|" \
	"$root/usr/src/linux-headers-$rel/Makefile"
depmod -b "$root" "$rel"
touch "$dir/.shca-unpacked"
shca_log "stock kernel $rel unpacked in $dir"
echo "$root"
