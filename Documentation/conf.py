# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration for "make docs" (scripts/docs.sh), which passes the
# kernel source tree whose kernel-doc extension pulls the DOC: sections
# (the lock orders) out of the headers.
import os
import sys

project = 'shca'
master_doc = 'index'
exclude_patterns = ['_build']
srctree = os.environ.get('SHCA_TOP', os.path.abspath('..'))
kernel = os.environ.get('SHCA_KERNEL_SRC')
extensions = []
if kernel:
    sys.path.insert(0, os.path.join(kernel, 'Documentation', 'sphinx'))
    extensions.append('kerneldoc')
    kerneldoc_bin = os.path.join(kernel, 'scripts', 'kernel-doc')
    kerneldoc_srctree = srctree
html_theme = 'alabaster'
