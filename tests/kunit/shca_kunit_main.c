// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suites of the shca driver, built as one module.  They run when it
 * is loaded, against the shca.ko that is loaded with it.
 */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit suites of the shca driver");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
