#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make debs: shca's two Debian packages, built with Debian's own tooling
# (dpkg-buildpackage, debhelper, dh-dkms) from debian/, and checked by
# lintian:
#   out/debs/shca-dkms_VERSION_all.deb    the driver's source for DKMS
#   out/debs/libshca_VERSION_amd64.deb    the verbs provider
# The provider is the one scripts/build-rdma-core.sh builds inside
# rdma-core 56.1, from providers/shca/.  Before packaging it, this script
# checks that Debian 12's own libibverbs exports every versioned symbol
# the provider needs: a provider it could not load is never packaged.
#
# Prints the directory of the packages on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

shca_need_pkgs dpkg-dev debhelper dh-dkms chrpath fakeroot lintian \
	libibverbs1 binutils

ver=$("$SHCA_TOP/scripts/check-version.sh") ||
	shca_die "the version numbers of the tree disagree"

build=$("$SHCA_TOP/scripts/build-rdma-core.sh")
provider=$build/lib/libshca-rdmav34.so
[ -f "$provider" ] || shca_die "rdma-core's build has no $provider"

shca_provider_loads "$provider"

out=$SHCA_TOP/out/debs
stage=$out/shca-$ver
rm -rf "$out"
mkdir -p "$stage/include"
cp -a "$SHCA_TOP/dkms.conf" "$SHCA_TOP/drivers" "$SHCA_TOP/debian" "$stage/"
cp -a "$SHCA_TOP/include/uapi" "$SHCA_TOP/include/shca" "$stage/include/"
# What a module build may have left in the tree is not source.
find "$stage/drivers" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o \
	-name '.*.cmd' -o -name '*.order' -o -name Module.symvers \) -delete
mkdir -p "$stage/debian/prebuilt"
cp "$provider" "$stage/debian/prebuilt/"
echo "driver shca" > "$stage/debian/prebuilt/shca.driver"

shca_log "building shca-dkms and libshca $ver"
(cd "$stage" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log" >&2; shca_die "dpkg-buildpackage failed; see $out/build.log"; }
# dpkg-shlibdeps warns of a symbol no library of the system has.
if grep -E 'dpkg-shlibdeps: (warning|error)' "$out/build.log" >&2; then
	shca_die "dpkg-shlibdeps found a problem; see $out/build.log"
fi
debs=()
for p in shca-dkms libshca; do
	f=$(ls "$out/${p}_${ver}_"*.deb 2>/dev/null) ||
		shca_die "dpkg-buildpackage made no $p package"
	debs+=("$f")
done
# Debian's own checks of a package: no error and no warning.
lintian --fail-on error,warning "${debs[@]}" > "$out/lintian.log" 2>&1 ||
	{ cat "$out/lintian.log" >&2; shca_die "lintian found errors or warnings"; }
shca_log "lintian: no error, no warning"
echo "$out"
