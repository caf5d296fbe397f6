/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: <linux/unaligned.h> for kernels older than 6.12, where the same
 * helpers live in <asm/unaligned.h>.  The Kbuild puts this directory on
 * the include path only when the kernel has no header of this name.
 */
#ifndef SHCA_COMPAT_LINUX_UNALIGNED_H
#define SHCA_COMPAT_LINUX_UNALIGNED_H
#include <asm/unaligned.h>
#endif
