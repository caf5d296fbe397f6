#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make docs: the architecture picture and the HTML pages.
#
# Renders Documentation/images/architecture.dot to architecture.svg beside
# it (committed; lint fails if it is not what the .dot file makes), then
# builds Documentation/ with Sphinx into out/docs/, the kernel's kernel-doc
# extension pulling the DOC: sections (the lock orders) out of the
# headers.  A Sphinx warning fails the build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

shca_need_pkgs graphviz python3-sphinx
src=$(shca_srcdir)
[ -x "$src/scripts/kernel-doc" ] || "$SHCA_TOP/scripts/build-kernel.sh" >/dev/null
cd "$SHCA_TOP"
dot -Tsvg Documentation/images/architecture.dot \
	-o Documentation/images/architecture.svg
rm -rf out/docs
SHCA_KERNEL_SRC=$src sphinx-build -q -W -b html Documentation out/docs
shca_log "docs: $SHCA_TOP/out/docs/index.html"
