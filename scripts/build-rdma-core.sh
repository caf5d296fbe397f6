#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build rdma-core 56.1 with the shca verbs provider added, in place under
# $SHCA_CACHE/rdma-core-56.1: nothing is installed.  The upstream tarball
# comes once from Debian trixie's source package (checked against its
# sha256) and is unpacked once into src/; every run then copies the
# project's files into that tree where they differ:
#   providers/shca/*             -> src/providers/shca/
#   include/shca/*.h             -> src/providers/shca/
#   include/uapi/rdma/shca-abi.h -> src/kernel-headers/rdma/shca-abi.h
# and runs ninja in build/, so an unchanged tree costs a few seconds.
#
# Use the result without installing it:
#   $build/bin/ibv_devices                 (RUNPATH finds $build/lib)
#   LD_LIBRARY_PATH=$build/lib ib_send_bw  (Debian's perftest)
#   PYTHONPATH=$build/python /usr/bin/python3 -c 'import pyverbs'
# libibverbs of an IN_PLACE build finds its providers, libshca among them,
# through $build/etc/libibverbs.d.
#
# Prints the build directory on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=56.1
deb_ver=$ver-1
sha256=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

shca_need_pkgs gcc libc6-dev cmake ninja-build pkg-config libnl-3-dev \
	libnl-route-3-dev cython3 python3-dev libudev-dev dpkg-dev \
	debian-archive-keyring perftest

# SHCA_RDMA_CORE_DIR puts the tree elsewhere, for a second working copy
# whose provider must not replace the first one's.
base=${SHCA_RDMA_CORE_DIR:-$SHCA_CACHE/rdma-core-$ver}
tarball=$SHCA_CACHE/rdma-core_$ver.orig.tar.gz
src=$base/src
build=$base/build

for f in "$SHCA_TOP/providers/shca/CMakeLists.txt" \
	 "$SHCA_TOP/include/uapi/rdma/shca-abi.h"; do
	[ -f "$f" ] || shca_die "missing ${f#"$SHCA_TOP"/}"
done

mkdir -p "$base"
exec 9>"$base/.lock"
flock 9

tarball_ok() {
	[ -f "$1" ] && [ "$(sha256sum < "$1" | cut -d' ' -f1)" = "$sha256" ]
}

# apt-get source with a private source list and list directory: the
# system's sources and lists are left alone.  Trixie's Release is signed by
# the bookworm and trixie archive keys of Debian 12's keyring.
fetch_tarball() {
	local tmp v versions got=
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand $tmp now
	trap "rm -rf '$tmp'" EXIT
	mkdir -p "$tmp/lists/partial" "$tmp/dl"
	cat > "$tmp/trixie-src.sources" <<-EOF
	Types: deb-src
	URIs: http://deb.debian.org/debian
	Suites: trixie
	Components: main
	Signed-By: $keyring
	EOF
	# apt downloads as _apt when it can write there.
	if id _apt >/dev/null 2>&1; then
		chown -R _apt "$tmp"
	fi
	local apt_opts=(-o "Dir::Etc::sourcelist=$tmp/trixie-src.sources"
		-o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$tmp/lists"
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
		-o APT::Get::List-Cleanup=0)

	shca_log "fetching rdma-core $ver source from Debian trixie"
	apt-get "${apt_opts[@]}" update -qq >&2 ||
		shca_die "apt-get update of trixie's sources failed"
	# Prefer $deb_ver; any 56.1-N has the same orig tarball.
	versions=$(apt-cache "${apt_opts[@]}" showsrc rdma-core 2>/dev/null |
		sed -n "s/^Version: \\(${ver//./\\.}-.*\\)/\\1/p" | sort -u)
	[ -n "$versions" ] || shca_die "trixie has no rdma-core $ver any more"
	for v in $deb_ver $versions; do
		grep -qxF "$v" <<<"$versions" || continue
		# The .dsc may answer 404 while the tarball comes: only the
		# tarball matters.
		(cd "$tmp/dl" && apt-get "${apt_opts[@]}" source -qq \
			--download-only "rdma-core=$v" >&2) ||
			shca_log "apt-get source rdma-core=$v failed; checking for the tarball anyway"
		if [ -f "$tmp/dl/rdma-core_$ver.orig.tar.gz" ]; then
			got=$tmp/dl/rdma-core_$ver.orig.tar.gz
			break
		fi
	done
	[ -n "$got" ] || shca_die "could not download rdma-core_$ver.orig.tar.gz"
	tarball_ok "$got" || shca_die "rdma-core_$ver.orig.tar.gz: sha256 mismatch"
	mkdir -p "$SHCA_CACHE"
	cp "$got" "$tarball.tmp"
	mv "$tarball.tmp" "$tarball"
	rm -rf "$tmp"
	trap - EXIT
}

if [ ! -f "$src/.shca-unpacked" ]; then
	if ! tarball_ok "$tarball"; then
		rm -f "$tarball"
		fetch_tarball
	fi
	shca_log "unpacking rdma-core $ver into $src"
	rm -rf "$src" "$base/src.tmp"
	mkdir -p "$base/src.tmp"
	tar -xzf "$tarball" -C "$base/src.tmp"
	[ -d "$base/src.tmp/rdma-core-$ver" ] ||
		shca_die "rdma-core_$ver.orig.tar.gz has no rdma-core-$ver/"
	mv "$base/src.tmp/rdma-core-$ver" "$src"
	rmdir "$base/src.tmp"
	touch "$src/.shca-unpacked"
fi

# Copy $1 to $2 only when the content differs, so ninja rebuilds only what
# changed.
sync_file() {
	cmp -s "$1" "$2" && return 0
	shca_log "sync ${2#"$src"/}"
	mkdir -p "$(dirname "$2")"
	cp "$1" "$2.shca-tmp"
	mv "$2.shca-tmp" "$2"
}

# src/providers/shca/ is ours alone: it holds exactly providers/shca/ and
# include/shca/*.h.
declare -A want=()
pdir=$src/providers/shca
while IFS= read -r -d '' f; do
	rel=${f#"$SHCA_TOP/providers/shca/"}
	want[$rel]=$f
done < <(find "$SHCA_TOP/providers/shca" -type f ! -name '.*' -print0)
for f in "$SHCA_TOP"/include/shca/*.h; do
	[ -f "$f" ] || continue
	rel=${f##*/}
	if [ -n "${want[$rel]:-}" ]; then
		shca_die "providers/shca/$rel and include/shca/$rel would both be src/providers/shca/$rel"
	fi
	want[$rel]=$f
done
for rel in "${!want[@]}"; do
	sync_file "${want[$rel]}" "$pdir/$rel"
done
while IFS= read -r -d '' f; do
	rel=${f#"$pdir/"}
	if [ -z "${want[$rel]:-}" ]; then
		shca_log "remove providers/shca/$rel"
		rm -f "$f"
	fi
done < <(find "$pdir" -type f -print0)
find "$pdir" -mindepth 1 -type d -empty -delete

sync_file "$SHCA_TOP/include/uapi/rdma/shca-abi.h" \
	"$src/kernel-headers/rdma/shca-abi.h"

# Hook the provider and its kernel header into rdma-core's build, once.
top_cml=$src/CMakeLists.txt
if ! grep -qxF 'add_subdirectory(providers/shca)' "$top_cml"; then
	grep -qxF 'add_subdirectory(providers/siw)' "$top_cml" ||
		shca_die "$top_cml: no add_subdirectory(providers/siw) to add shca after"
	sed -i 's|^add_subdirectory(providers/siw)$|&\nadd_subdirectory(providers/shca)|' \
		"$top_cml"
fi
# rdma/shca-abi.h goes before rdma/siw-abi.h in both lists:
# publish_internal_headers(rdma ...) links it into build/include/rdma/, and
# rdma_kernel_provider_abi(...) makes build/include/kernel-abi/shca-abi.h,
# the _STRUCT_* macros DECLARE_DRV_CMD() needs.
kh_cml=$src/kernel-headers/CMakeLists.txt
if ! grep -qF 'rdma/shca-abi.h' "$kh_cml"; then
	[ "$(grep -cx '  rdma/siw-abi\.h' "$kh_cml")" -eq 2 ] ||
		shca_die "$kh_cml: expected rdma/siw-abi.h in two lists"
	sed -i 's|^  rdma/siw-abi\.h$|  rdma/shca-abi.h\n&|' "$kh_cml"
fi
[ "$(grep -cx '  rdma/shca-abi\.h' "$kh_cml")" -eq 2 ] ||
	shca_die "$kh_cml: rdma/shca-abi.h is not in both header lists"

# Debian's python3, the one cython3 and python3-dev are for, not whatever
# python3 comes first in $PATH (pyenv and the like).
python=/usr/bin/python3
cmake_args=(-GNinja -DIN_PLACE=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0
	-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DPYTHON_EXECUTABLE=$python")
"$python" -c 'import Cython' 2>/dev/null || cmake_args+=(-DNO_PYVERBS=1)
config="${cmake_args[*]} $src"
if [ ! -f "$build/build.ninja" ] ||
   [ "$(cat "$build/.shca-config" 2>/dev/null)" != "$config" ]; then
	shca_log "configuring rdma-core in $build"
	rm -rf "$build"
	mkdir -p "$build"
	(cd "$build" && cmake "${cmake_args[@]}" "$src" >&2) ||
		shca_die "cmake failed"
	printf '%s\n' "$config" > "$build/.shca-config"
fi

shca_log "building rdma-core with $SHCA_JOBS jobs (a few minutes cold)"
ninja -C "$build" -j"$SHCA_JOBS" >&2 || shca_die "rdma-core build failed"
[ -f "$build/etc/libibverbs.d/shca.driver" ] ||
	shca_die "the build has no shca provider (providers/shca/CMakeLists.txt must call rdma_provider(shca ...))"

echo "$build"
