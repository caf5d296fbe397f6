#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install and make uninstall: shca without a package, in the layout
# of the packages (make debs), but for the module's directory (DKMS's is
# updates/dkms/):
#   /lib/modules/KVER/updates/shca.ko                      the driver
#   /usr/lib/MULTIARCH/libibverbs/libshca-rdmav34.so        the provider
#   /etc/libibverbs.d/shca.driver                           its driver file
#
#   install.sh install|uninstall
#
# From the environment (make passes its variables on): KVER, the kernel to
# build for (default: the running one); KDIR, its build tree (default
# /lib/modules/KVER/build, what linux-headers-KVER installs); DESTDIR, a
# staging root (default: none, the system itself, which then runs
# depmod).  The provider is built in rdma-core 56.1
# (scripts/build-rdma-core.sh) and installed only if the system's
# libibverbs has every symbol version it needs.  Both ways at once would
# leave two shca.ko and two owners of the provider: with shca-dkms or
# libshca installed, make install refuses.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

what=${1:-}
kver=${KVER:-$(uname -r)}
kdir=${KDIR:-/lib/modules/$kver/build}
dest=${DESTDIR:-}
ma=$(gcc -print-multiarch)
mod=$dest/lib/modules/$kver/updates/shca.ko
prov=$dest/usr/lib/$ma/libibverbs/libshca-rdmav34.so
drv=$dest/etc/libibverbs.d/shca.driver

case "$what" in
install)
	[ -f "$kdir/Makefile" ] ||
		shca_die "no kernel build tree in $kdir: install linux-headers-$kver, or set KDIR"
	shca_need_pkgs chrpath binutils libibverbs1 dpkg-dev
	if [ -z "$dest" ]; then
		for p in shca-dkms libshca; do
			! grep -q 'ok installed' <<<"$(dpkg-query -W \
				-f '${Status}' "$p" 2>/dev/null)" ||
				shca_die "the $p package is installed: remove it first (apt-get purge shca-dkms libshca)"
		done
	fi
	b=$SHCA_TOP/out/install-$kver
	rm -rf "$b"
	mkdir -p "$b/include"
	cp -r "$SHCA_TOP/drivers" "$b/"
	cp -r "$SHCA_TOP/include/uapi" "$SHCA_TOP/include/shca" "$b/include/"
	shca_log "building shca.ko for $kver"
	make -s -j"$(nproc)" -C "$kdir" M="$b/drivers/infiniband/sw/shca" modules >&2 ||
		shca_die "the module build failed"
	build=$("$SHCA_TOP/scripts/build-rdma-core.sh")
	shca_provider_loads "$build/lib/libshca-rdmav34.so"
	install -D -m 644 "$b/drivers/infiniband/sw/shca/shca.ko" "$mod"
	install -D -m 644 "$build/lib/libshca-rdmav34.so" "$prov"
	# The build tree's own library path means nothing once installed.
	chrpath -d "$prov" >/dev/null
	mkdir -p "$(dirname "$drv")"
	echo "driver shca" > "$drv"
	[ -n "$dest" ] || depmod -a "$kver"
	shca_log "installed $mod, $prov and $drv"
	;;
uninstall)
	rm -f "$mod" "$prov" "$drv"
	[ -n "$dest" ] || depmod -a "$kver"
	shca_log "removed $mod, $prov and $drv"
	;;
*)
	shca_die "install.sh: install or uninstall"
	;;
esac
