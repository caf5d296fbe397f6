// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: memory windows.
 *
 * A window is an entry of the device's memory protection table, made by
 * ALLOC_MW and released by FREE_MPT, bound or not.  Binding is a work
 * request the device executes in send queue order (a BIND_MW WQE), for
 * type 1 windows too; ib_core has no bind work request for kernel QPs, so
 * only a process's QPs bind windows, through libshca.
 */
#include "shca.h"

/**
 * shca_alloc_mw() - allocate a memory window
 * @ibmw: the object ib_core allocated, its type and PD set
 * @udata: the process's driver data; none is defined
 *
 * Return: 0, with @ibmw->rkey the window's first key, or a negative errno.
 */
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibmw->device);
	u32 type;
	int err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return err;
	switch (ibmw->type) {
	case IB_MW_TYPE_1:
		type = SHCA_MW_TYPE_1;
		break;
	case IB_MW_TYPE_2:
		type = SHCA_MW_TYPE_2;
		break;
	default:
		shca_dbg(sdev, "memory window type %d\n", ibmw->type);
		return -EINVAL;
	}
	return shca_cmd_alloc_mw(sdev, type, to_shca_pd(ibmw->pd)->pdn,
				 &ibmw->rkey);
}

/**
 * shca_dealloc_mw() - release a memory window, bound or not
 * @ibmw: the window
 *
 * The window is invalid once this returns, and no access through it is
 * in flight.
 *
 * Return: 0 or a negative errno.
 */
int shca_dealloc_mw(struct ib_mw *ibmw)
{
	return shca_cmd_free_mpt(to_shca_dev(ibmw->device), ibmw->rkey);
}
