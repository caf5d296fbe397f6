// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the driver's debugfs knobs.
 *
 * /sys/kernel/debug/shca/
 *   teardown_delay_ms  every device teardown waits this long (at most
 *                  5000 ms) after its EQ is gone and before the model
 *                  powers off, to widen the window against rmmod
 *   teardowns      read-only: device teardowns begun and not yet finished
 *
 * /sys/kernel/debug/shca/<ibdev>/
 *   eq_paused      1 holds the interrupt handler before it drains the EQ
 *                  (EQEs pile up), 0 lets it go on
 *   eq_delay_us    the handler sleeps this long per EQE (at most 100 ms)
 *
 * The rest of a device's directory is the model's: it creates its own
 * knobs and mirrors there (hw/shca_hw_debugfs.c), and this file only
 * makes and removes the directory.  Documentation/debugfs.rst has them
 * all.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>

#include "shca.h"

static struct dentry *shca_debugfs_root;
/* The teardown_delay_ms knob. */
static u32 shca_teardown_delay_ms;

#define SHCA_TEARDOWN_DELAY_MAX_MS	5000

static int shca_eq_paused_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct shca_dev *)data)->eq_paused);
	return 0;
}

static int shca_eq_paused_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	shca_eq_pause(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_eq_paused_fops, shca_eq_paused_get,
			 shca_eq_paused_set, "%llu\n");

static int shca_eq_delay_us_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct shca_dev *)data)->eq_delay_us);
	return 0;
}

static int shca_eq_delay_us_set(void *data, u64 val)
{
	if (val > 100000)
		return -EINVAL;
	WRITE_ONCE(((struct shca_dev *)data)->eq_delay_us, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_eq_delay_us_fops, shca_eq_delay_us_get,
			 shca_eq_delay_us_set, "%llu\n");

/**
 * shca_debugfs_add_dev() - create a device's debugfs directory
 * @sdev: the device, about to be registered
 * @name: its name, and the directory's
 */
void shca_debugfs_add_dev(struct shca_dev *sdev, const char *name)
{
	struct dentry *d;

	d = debugfs_create_dir(name, shca_debugfs_root);
	sdev->debugfs = d;
	/* The model's knobs are the model's to make. */
	shca_hw_debugfs_init(sdev->hw, d);
	/* The interrupt handler is the driver's. */
	debugfs_create_file_unsafe("eq_paused", 0600, d, sdev,
				   &shca_eq_paused_fops);
	debugfs_create_file_unsafe("eq_delay_us", 0600, d, sdev,
				   &shca_eq_delay_us_fops);
}

/**
 * shca_debugfs_del_dev() - remove a device's debugfs directory
 * @sdev: the device; its directory may never have been made
 */
void shca_debugfs_del_dev(struct shca_dev *sdev)
{
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
}

/**
 * shca_debugfs_init() - create /sys/kernel/debug/shca
 * @teardowns: the driver's count of teardowns in progress, mirrored
 */
void shca_debugfs_init(atomic_t *teardowns)
{
	shca_debugfs_root = debugfs_create_dir("shca", NULL);
	debugfs_create_atomic_t("teardowns", 0400, shca_debugfs_root,
				teardowns);
	debugfs_create_u32("teardown_delay_ms", 0600, shca_debugfs_root,
			   &shca_teardown_delay_ms);
}

/**
 * shca_debugfs_teardown_delay() - wait as long as teardown_delay_ms says
 *
 * Called by a device's teardown between the EQ and the model.
 */
void shca_debugfs_teardown_delay(void)
{
	u32 ms = min(READ_ONCE(shca_teardown_delay_ms),
		     SHCA_TEARDOWN_DELAY_MAX_MS);

	if (ms)
		msleep(ms);
}

/**
 * shca_debugfs_exit() - remove /sys/kernel/debug/shca
 */
void shca_debugfs_exit(void)
{
	debugfs_remove_recursive(shca_debugfs_root);
	shca_debugfs_root = NULL;
}
