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

# Debian publishes the signed image some days after the unsigned one it
# is built from (same kernel, same modules); either will do.
stock_image() {
	if [ -n "$(apt-cache madison "linux-image-$rel" 2>/dev/null)" ]; then
		echo "linux-image-$rel"
	else
		echo "linux-image-$rel-unsigned"
	fi
}

stock_download() {
	cd "$dir/debs" && apt-get download -q "$(stock_image)" \
		"linux-headers-$rel" "linux-headers-$abi-common" \
		"linux-kbuild-$abi"
}

rm -rf "$dir"
mkdir -p "$dir/debs" "$root"
shca_log "downloading stock kernel $rel"
(stock_download >&2 2>/dev/null) ||
	(apt-get update -qq >&2 && stock_download >&2) ||
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
