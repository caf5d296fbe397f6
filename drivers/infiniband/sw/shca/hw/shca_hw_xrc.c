// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: XRC domains.
 *
 * An XRC domain is a number and a count of the XRC SRQs and XRC target
 * QPs in it.  ALLOC_XRCD and DEALLOC_XRCD run under the command mutex, as
 * do CREATE_SRQ and CREATE_QP, which take a domain by number; DEALLOC_XRCD
 * is refused while the count is not zero, so an SRQ or QP may keep its
 * pointer to the domain, unlocked, for as long as it lives.  An XRC target
 * QP delivers a message to the XRC SRQ the message names only if that
 * SRQ is in the QP's domain (shca_hw_xrc_srq_get(), in the SRQ unit,
 * which owns SRQ references; this unit calls no other).
 */
#include <linux/lockdep.h>
#include <linux/slab.h>

#include "shca_hw_int.h"

/**
 * shca_hw_xrcd_get() - take an XRC domain for a new SRQ or target QP
 * @hw: the device, its command mutex held
 * @xrcdn: the domain's number
 *
 * Return: the domain, its user count raised, or NULL if there is none.
 */
struct shca_hw_xrcd *shca_hw_xrcd_get(struct shca_hw *hw, u32 xrcdn)
{
	struct shca_hw_xrcd *xrcd;

	lockdep_assert_held(&hw->cmd_mutex);
	xrcd = xa_load(&hw->xrcds, xrcdn);
	if (xrcd)
		atomic_inc(&xrcd->users);
	return xrcd;
}

/**
 * shca_hw_xrcd_put() - an SRQ or target QP leaves its XRC domain
 * @xrcd: the domain
 */
void shca_hw_xrcd_put(struct shca_hw_xrcd *xrcd)
{
	atomic_dec(&xrcd->users);
}

/**
 * shca_hw_cmd_alloc_xrcd() - run ALLOC_XRCD
 * @hw: the device, its command mutex held
 * @cmd: the command; the domain's number is returned in @cmd->out.num
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cmd_alloc_xrcd(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	struct shca_hw_xrcd *xrcd;
	int err;

	lockdep_assert_held(&hw->cmd_mutex);
	xrcd = kzalloc(sizeof(*xrcd), GFP_KERNEL_ACCOUNT);
	if (!xrcd)
		return SHCA_HW_NO_RESOURCES;
	atomic_set(&xrcd->users, 0);
	err = xa_alloc(&hw->xrcds, &cmd->out.num, xrcd,
		       XA_LIMIT(1, hw->caps->max_xrcd), GFP_KERNEL);
	if (err < 0) {
		kfree(xrcd);
		return SHCA_HW_NO_RESOURCES;
	}
	xrcd->xrcdn = cmd->out.num;
	return SHCA_HW_OK;
}

/**
 * shca_hw_cmd_dealloc_xrcd() - run DEALLOC_XRCD
 * @hw: the device, its command mutex held
 * @cmd: the domain in @cmd->in.xrcdn
 *
 * Return: the completion status; BUSY while an SRQ or QP uses the domain.
 */
enum shca_hw_status shca_hw_cmd_dealloc_xrcd(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd)
{
	struct shca_hw_xrcd *xrcd;

	lockdep_assert_held(&hw->cmd_mutex);
	xrcd = xa_load(&hw->xrcds, cmd->in.xrcdn);
	if (!xrcd)
		return SHCA_HW_BAD_INDEX;
	if (atomic_read(&xrcd->users))
		return SHCA_HW_BUSY;
	xa_erase(&hw->xrcds, cmd->in.xrcdn);
	kfree(xrcd);
	return SHCA_HW_OK;
}

/**
 * shca_hw_xrcd_fini() - free the XRC domains left when the device powers off
 * @hw: the device, its SRQs and QPs already freed
 */
void shca_hw_xrcd_fini(struct shca_hw *hw)
{
	struct shca_hw_xrcd *xrcd;
	unsigned long index;

	xa_for_each(&hw->xrcds, index, xrcd) {
		xa_erase(&hw->xrcds, index);
		kfree(xrcd);
	}
}
