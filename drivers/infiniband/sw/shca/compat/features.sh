#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Feature tests of a kernel's headers, for shca_compat.h: prints the
# compiler flags (-DSHCA_HAVE_*, and the include path of compat/'s shims)
# that say what this kernel has.  The Kbuild runs it with the kernel's
# source tree and compat/'s own path.
#
#   features.sh SRCTREE COMPATDIR
inc=$1/include
has() {
	grep -qsE "$2" "$inc/$1"
}

# A tree without ib_core's header would read as a kernel that has
# nothing: say so instead, and shca_compat.h stops the build.
[ -f "$inc/rdma/ib_verbs.h" ] || { echo -DSHCA_NO_IB_VERBS_H; exit 0; }
# FLUSH and ATOMIC WRITE came together (6.2): one test for both.

has rdma/ib_verbs.h 'IB_DEVICE_FLUSH_GLOBAL' && echo -DSHCA_HAVE_IB_FLUSH
has rdma/ib_verbs.h '[(][*]fill_res_srq_entry[)]' &&
	echo -DSHCA_HAVE_FILL_RES_SRQ
has linux/mm.h 'void vm_flags_set[(]' && echo -DSHCA_HAVE_VM_FLAGS_SET
# create_cq's declaration spans two lines; its last argument tells.
grep -sA1 'int [(][*]create_cq[)][(]' "$inc/rdma/ib_verbs.h" |
	grep -q uverbs_attr_bundle && echo -DSHCA_HAVE_CREATE_CQ_ATTRS
# Before 6.12, <linux/unaligned.h> was <asm/unaligned.h>.
[ -f "$inc/linux/unaligned.h" ] || echo "-I$2"
exit 0
