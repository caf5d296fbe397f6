# SPDX-License-Identifier: GPL-2.0
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

# Debian's ABI name for the stock kernel, e.g. 6.12.117+deb12-amd64.
shca_stock_release() {
	echo "$(shca_upstream_version)+deb12-amd64"
}

shca_stock_dir() {
	echo "$SHCA_CACHE/stock-$(shca_stock_release)"
}
