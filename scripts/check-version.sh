#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The release number stands in three places: shca_version.h (what modinfo
# shows), dkms.conf (what DKMS builds) and debian/changelog (what the
# packages are).  Fails, saying which, unless all three agree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

h=$(sed -n 's/^#define SHCA_VERSION "\(.*\)"$/\1/p' \
	"$SHCA_TOP/drivers/infiniband/sw/shca/shca_version.h")
d=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$SHCA_TOP/dkms.conf")
c=$(sed -n '1s/^shca (\([^)]*\)).*/\1/p' "$SHCA_TOP/debian/changelog")
if [ -z "$h" ] || [ "$h" != "$d" ] || [ "$h" != "$c" ]; then
	echo "versions disagree: shca_version.h '$h', dkms.conf '$d', debian/changelog '$c'" >&2
	exit 1
fi
echo "$h"
