#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch a stock Debian kernel's image and headers and unpack them under
# $SHCA_CACHE without installing them:
#
#   fetch-stock.sh [stock|stock61]
#
# "stock" (the default) is the 6.12 that matches the installed
# linux-source-6.12; "stock61" is Debian 12's default kernel, the 6.1 that
# linux-image-amd64 depends on.  The unpacked tree holds:
#   root/boot/vmlinuz-<rel>                 the kernel the guest boots
#   root/lib/modules/<rel>/                 its modules, depmod already run
#   root/usr/src/linux-headers-<rel>/       KDIR for building shca
#
# Prints the unpacked root on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

shca_need_pkgs linux-source-6.12 kmod xz-utils gcc-12

kernel=${1:-stock}
[ "$kernel" = stock ] || [ "$kernel" = stock61 ] ||
	shca_die "fetch-stock.sh: the kernel must be stock or stock61"
rel=$(shca_stock_release "$kernel")
dir=$(shca_stock_dir "$kernel")
root=$dir/root

if [ -f "$dir/.shca-unpacked" ]; then
	shca_log "stock kernel $rel: cached in $dir"
	echo "$root"
	exit 0
fi

# The headers, and the common headers and kbuild tree they depend on
# (linux-headers-6.1.0-57-common and linux-kbuild-6.1, say).
stock_download() {
	local deps
	deps=$(apt-cache depends "linux-headers-$rel" |
		sed -n 's/^ *Depends: \(linux-\(headers-.*-common\|kbuild-.*\)\)$/\1/p' |
		sort -u)
	[ -n "$deps" ] || return 1
	# shellcheck disable=SC2086 # one package name a word
	cd "$dir/debs" && apt-get download -q "$(shca_stock_image "$rel")" \
		"linux-headers-$rel" $deps
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
