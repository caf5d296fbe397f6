// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: XRC domains, and what the verbs layer does for XRC SRQs and XRC
 * target QPs.
 *
 * An XRC domain is the device's (ALLOC_XRCD); the driver keeps the list
 * of its XRC SRQs.  An XRC target QP has no CQ of its own: its receives
 * complete in the CQ of the XRC SRQ each message named, with SHCA_CQE_F_XRC
 * and the SRQ's number in the CQE.  So destroying or resetting the QP
 * sweeps its CQEs out of the CQ of every XRC SRQ of its domain, each
 * removed receive giving its slot back to the SRQ it names, and leaves
 * every other QP's CQEs as they were.  ib_core keeps the shared target
 * QP and the handles ibv_open_qp() gives out; the driver sees one QP.
 * The SRQ unit (shca_srq.c) keeps an XRC SRQ on its domain's list and
 * hands out its references; this file reads the list.
 */
#include <linux/lockdep.h>

#include "shca.h"

/**
 * shca_alloc_xrcd() - allocate an XRC domain
 * @ibxrcd: the object ib_core allocated
 * @udata: must carry no input or output
 *
 * Return: 0 or a negative errno.
 */
int shca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibxrcd->device);
	struct shca_xrcd *xrcd = to_shca_xrcd(ibxrcd);
	int err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return err;
	mutex_init(&xrcd->lock);
	INIT_LIST_HEAD(&xrcd->srqs);
	err = shca_cmd_alloc_xrcd(sdev, &xrcd->xrcdn);
	if (err)
		mutex_destroy(&xrcd->lock);
	return err;
}

/**
 * shca_dealloc_xrcd() - free an XRC domain
 * @ibxrcd: the domain
 * @udata: unused
 *
 * Return: 0, or -EBUSY while an XRC SRQ or target QP is in it.
 */
int shca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct shca_xrcd *xrcd = to_shca_xrcd(ibxrcd);
	int err;

	err = shca_cmd_dealloc_xrcd(to_shca_dev(ibxrcd->device), xrcd->xrcdn);
	if (err)
		return err;
	mutex_destroy(&xrcd->lock);
	return 0;
}

/* A swept XRC receive: its slot goes back to the SRQ the CQE names. */
static void shca_xrc_sweep_slot(void *ctx, const struct shca_hw_cqe *cqe)
{
	struct shca_xrcd *xrcd = ctx;
	u32 srqn = shca_cqe_xrc_srqn(cqe);
	struct shca_srq *srq;

	lockdep_assert_held(&xrcd->lock);
	if (!(cqe->flags & SHCA_CQE_F_XRC))
		return;
	list_for_each_entry(srq, &xrcd->srqs, xrc_node)
		if (srq->srqn == srqn) {
			shca_srq_free_slot(srq, cqe->wqe_idx);
			return;
		}
}

/**
 * shca_xrc_sweep_tgt() - remove a fenced XRC target QP's CQEs
 * @qp: the QP; the device writes nothing more for it
 * @forget: also take it out of the driver's table afterward (destroy)
 *
 * Sweeps the CQ of each XRC SRQ of the QP's domain, one at a time, under
 * the domain's lock, so no SRQ leaves meanwhile.  A CQ shared by several
 * of them is swept again, finding nothing.  With @forget, the QP leaves
 * the table only after every sweep: until then no poll finds a CQE of it
 * that names nothing.
 */
void shca_xrc_sweep_tgt(struct shca_qp *qp, bool forget)
{
	struct shca_dev *sdev = to_shca_dev(qp->ibqp.device);
	struct shca_xrcd *xrcd = qp->xrcd;
	struct shca_srq *srq;

	mutex_lock(&xrcd->lock);
	list_for_each_entry(srq, &xrcd->srqs, xrc_node)
		shca_cq_sweep_one(to_shca_cq(srq->ibsrq.ext.cq), qp->qpn,
				  shca_xrc_sweep_slot, xrcd);
	mutex_unlock(&xrcd->lock);
	if (forget) {
		xa_erase_irq(&sdev->qps, qp->qpn);
		wake_up_all(&sdev->qpn_wait);
	}
}
