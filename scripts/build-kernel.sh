#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the shca debug kernel from Debian's linux-source-6.12 and the
# fragment scripts/debug-kernel.config.  The result is cached under
# $SHCA_CACHE, keyed on the source package version and on the hash of the
# fragment and of this script; a cached build is reused as it is.
#
# Prints the build directory on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

shca_need_pkgs linux-source-6.12 build-essential bc bison flex libelf-dev \
	libssl-dev cpio kmod ccache xz-utils

src=$(shca_srcdir)
out=$(shca_kbuild_dir)
frag=$SHCA_TOP/scripts/debug-kernel.config

if [ -f "$out/.shca-built" ]; then
	shca_log "debug kernel: cached in $out"
	echo "$out"
	exit 0
fi

if [ ! -f "$src/.shca-unpacked" ]; then
	shca_log "unpacking linux-source $(shca_source_pkg_version)"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf /usr/src/linux-source-6.12.tar.xz -C "$src.tmp"
	mv "$src.tmp/linux-source-6.12" "$src"
	rmdir "$src.tmp"
	touch "$src/.shca-unpacked"
fi

rm -rf "$out"
mkdir -p "$out"
shca_log "configuring debug kernel in $out"
KCONFIG_ALLCONFIG=$frag make -s -C "$src" O="$out" allnoconfig >/dev/null

# Every option of the fragment must have survived Kconfig's dependencies.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=n)
		opt=${line%=n}
		if grep -q "^$opt=" "$out/.config"; then
			shca_log "config: $opt is set, wanted off"
			bad=1
		fi ;;
	CONFIG_*)
		if ! grep -qxF "$line" "$out/.config"; then
			shca_log "config: '$line' did not survive"
			bad=1
		fi ;;
	esac
done < "$frag"
[ $bad -eq 0 ] || shca_die "the config fragment does not apply"

export CCACHE_DIR=${CCACHE_DIR:-$SHCA_CACHE/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
shca_log "building debug kernel with $SHCA_JOBS jobs (20 to 40 minutes cold on 2 cores)"
start=$(date +%s)
# One progress line every 250 build steps; the full log stays on disk.
make -C "$src" O="$out" CC="ccache gcc" -j"$SHCA_JOBS" bzImage modules 2>&1 |
	tee "$out/build.log" |
	awk -v t0="$start" '
		/^  (CC|LD|AR|AS)/ { n++ }
		n && n % 250 == 0 && n != last {
			last = n
			printf "[shca]   ... %d objects, %ds\n", n, systime() - t0
			fflush()
		}
		/ error|Error [0-9]/ { print; fflush() }' >&2 ||
	shca_die "kernel build failed; see $out/build.log"

make -s -C "$src" O="$out" INSTALL_MOD_PATH="$out/modroot" \
	modules_install >/dev/null
touch "$out/.shca-built"
shca_log "debug kernel built in $(( $(date +%s) - start ))s"

# Older builds of other configs only take space.
for d in "$SHCA_CACHE"/kbuild-*; do
	[ "$d" = "$out" ] || rm -rf "$d"
done
echo "$out"
