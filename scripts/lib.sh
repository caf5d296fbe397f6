# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared settings for the shca scripts.  Sourced, never run.

SHCA_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHCA_CACHE=${SHCA_CACHE:-$HOME/.cache/shca}
SHCA_JOBS=${SHCA_JOBS:-$(nproc)}

shca_log() { printf '[shca] %s\n' "$*" >&2; }

# One debug-kernel build at a time: a second caller waits for the first and
# then finds the build cached, instead of starting it over in the same place.
if [ "$(basename "$0")" = build-kernel.sh ]; then
	mkdir -p "$SHCA_CACHE"
	exec 9>"$SHCA_CACHE/kbuild.lock"
	flock 9
fi
shca_die() { printf '[shca] error: %s\n' "$*" >&2; exit 1; }

# Install Debian packages that are missing; quiet when all are present.
shca_need_pkgs() {
	local missing=() p
	for p in "$@"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = \
			"install ok installed" ] || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || shca_die "missing packages: ${missing[*]} (run as root or install them)"
	shca_log "installing: ${missing[*]}"
	if [ ! -f "$SHCA_CACHE/.apt-updated" ] ||
	   [ -n "$(find "$SHCA_CACHE/.apt-updated" -mmin +720 2>/dev/null)" ]; then
		apt-get update -qq >&2 || shca_die "apt-get update failed"
		mkdir -p "$SHCA_CACHE" && touch "$SHCA_CACHE/.apt-updated"
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >&2 ||
		shca_die "apt-get install ${missing[*]} failed"
}

# Debian version of the installed linux-source-6.12, e.g. 6.12.117-1~deb12u1.
shca_source_pkg_version() {
	dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null
}

# Upstream version, e.g. 6.12.117.
shca_upstream_version() {
	local v
	v=$(shca_source_pkg_version)
	echo "${v%%-*}"
}

# Where the kernel source is unpacked.
shca_srcdir() {
	echo "$SHCA_CACHE/linux-source-$(shca_upstream_version)"
}

# Build directory of the debug kernel, keyed on version and config.
shca_kbuild_dir() {
	local h
	h=$(cat "$SHCA_TOP/scripts/debug-kernel.config" \
		"$SHCA_TOP/scripts/build-kernel.sh" | sha256sum | cut -c1-12)
	echo "$SHCA_CACHE/kbuild-$(shca_source_pkg_version | tr '~' '_')-$h"
}

# Debian's ABI name for a stock kernel: "stock" (the default) is the 6.12
# that matches linux-source-6.12, e.g. 6.12.117+deb12-amd64; "stock61" is
# Debian 12's default kernel, the one linux-image-amd64 depends on, e.g.
# 6.1.0-57-amd64.
shca_stock_release() {
	local rel
	case "${1:-stock}" in
	stock)
		echo "$(shca_upstream_version)+deb12-amd64"
		;;
	stock61)
		rel=$(shca_default_image)
		[ -n "$rel" ] || { apt-get update -qq >&2; rel=$(shca_default_image); }
		[ -n "$rel" ] || shca_die "no linux-image-amd64 in the package lists"
		echo "$rel"
		;;
	*)
		shca_die "no stock kernel named '$1' (stock or stock61)"
		;;
	esac
}

# The release linux-image-amd64 depends on, or nothing.
shca_default_image() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(6\.1\.[0-9]*-[0-9]*-amd64\)$/\1/p' |
		head -n 1
}

# The image package of a release: Debian publishes the signed image some
# days after the unsigned one it is built from (same kernel, same
# modules); either will do.
shca_stock_image() {
	if [ -n "$(apt-cache madison "linux-image-$1" 2>/dev/null)" ]; then
		echo "linux-image-$1"
	else
		echo "linux-image-$1-unsigned"
	fi
}

shca_stock_dir() {
	echo "$SHCA_CACHE/stock-$(shca_stock_release "${1:-stock}")"
}

# Every kernel the tests run on, and the one a name stands for:
# shca_kernel_ok NAME fails for a name that is none of them.
SHCA_KERNELS="debug stock stock61"
shca_kernel_ok() {
	[[ " $SHCA_KERNELS " == *" $1 "* ]]
}

# shca_ibverbs_syms FILE UNDEFINED: FILE's libibverbs symbols as
# NAME@VERSION, sorted: those it needs (UNDEFINED 1) or defines (0).
# objdump -T prints a line per dynamic symbol, "*UND*" for those needed,
# then the version (in parentheses where undefined) and the name.
shca_ibverbs_syms() {
	objdump -T "$1" | awk -v und="$2" 'NF > 2 && (/\*UND\*/ ? 1 : 0) == und &&
		$(NF - 1) ~ /^\(?IBVERBS_/ {
		v = $(NF - 1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u
}

# shca_provider_loads PROVIDER: dies unless the system's libibverbs
# defines every symbol, at its version, that PROVIDER (libshca-rdmav34.so, built in
# rdma-core 56.1) needs of libibverbs, its private ABI among them: a
# provider the system could not load is never installed.
shca_provider_loads() {
	local syslib need have missing
	syslib=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libibverbs.so.1
	[ -f "$syslib" ] || shca_die "no $syslib: install libibverbs1"
	need=$(shca_ibverbs_syms "$1" 1)
	have=$(shca_ibverbs_syms "$syslib" 0)
	[ -n "$need" ] || shca_die "$1 needs nothing of libibverbs: not a provider"
	missing=$(comm -23 <(echo "$need") <(echo "$have"))
	[ -z "$missing" ] ||
		shca_die "the system's libibverbs lacks $(echo "$missing" | tr '\n' ' ')which libshca needs"
}
