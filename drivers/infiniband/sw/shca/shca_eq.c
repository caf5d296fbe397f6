// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the event queue and the interrupt handler.
 *
 * The device writes completion and affiliated events to one EQ and raises
 * its vector; the handler drains the EQ by owner bit, turns each EQE into
 * a consumer callback and re-arms.  EQEs carry object numbers, never
 * pointers: an object is looked up, and held, under its xarray's lock, so
 * an event for an object being destroyed finds nothing.  An event of a QP,
 * CQ or SRQ also carries the object's generation, so an event of an
 * earlier holder of its number, still in the EQ, is dropped.
 *
 * The EQ is as deep as the device's objects need (shca_hw_eq_log_depth()):
 * the device keeps at most one EQE per object and kind in it, and holds
 * back, never drops, an event that finds the EQ full.
 */
#include <kunit/visibility.h>
#include <linux/delay.h>
#include <linux/vmalloc.h>

#include "shca.h"

/* The longest the eq_delay_us knob makes the handler sleep per EQE. */
#define SHCA_EQ_MAX_DELAY_US	100000

static const enum ib_event_type shca_event_type[] = {
	[SHCA_EV_COMM_EST]	= IB_EVENT_COMM_EST,
	[SHCA_EV_SQ_DRAINED]	= IB_EVENT_SQ_DRAINED,
	[SHCA_EV_QP_FATAL]	= IB_EVENT_QP_FATAL,
	[SHCA_EV_QP_REQ_ERR]	= IB_EVENT_QP_REQ_ERR,
	[SHCA_EV_QP_ACCESS_ERR]	= IB_EVENT_QP_ACCESS_ERR,
	[SHCA_EV_QP_LAST_WQE]	= IB_EVENT_QP_LAST_WQE_REACHED,
	[SHCA_EV_CQ_ERR]	= IB_EVENT_CQ_ERR,
	[SHCA_EV_SRQ_LIMIT]	= IB_EVENT_SRQ_LIMIT_REACHED,
	[SHCA_EV_PORT_ACTIVE]	= IB_EVENT_PORT_ACTIVE,
	[SHCA_EV_PORT_ERR]	= IB_EVENT_PORT_ERR,
};

static void shca_eq_cq(struct shca_dev *sdev, const struct shca_hw_eqe *eqe)
{
	struct ib_event ev = { .device = &sdev->ibdev };
	struct shca_cq *cq;
	unsigned long flags;

	xa_lock_irqsave(&sdev->cqs, flags);
	cq = xa_load(&sdev->cqs, eqe->obj);
	if (cq && (cq->gen != eqe->gen || !refcount_inc_not_zero(&cq->ref)))
		cq = NULL;
	xa_unlock_irqrestore(&sdev->cqs, flags);
	if (!cq)
		return;
	if (eqe->type == SHCA_EQE_COMP) {
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	} else if (cq->ibcq.event_handler) {
		ev.event = IB_EVENT_CQ_ERR;
		ev.element.cq = &cq->ibcq;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	if (refcount_dec_and_test(&cq->ref))
		complete(&cq->free);
}

static void shca_eq_qp(struct shca_dev *sdev, const struct shca_hw_eqe *eqe)
{
	struct ib_event ev = { .device = &sdev->ibdev };
	struct shca_qp *qp;
	unsigned long flags;

	if (eqe->event >= ARRAY_SIZE(shca_event_type))
		return;
	xa_lock_irqsave(&sdev->qps, flags);
	qp = xa_load(&sdev->qps, eqe->obj);
	if (qp && (qp->gen != eqe->gen || !refcount_inc_not_zero(&qp->ref)))
		qp = NULL;
	xa_unlock_irqrestore(&sdev->qps, flags);
	if (!qp)
		return;
	if (qp->ibqp.event_handler) {
		ev.event = shca_event_type[eqe->event];
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->free);
}

static void shca_eq_srq(struct shca_dev *sdev, const struct shca_hw_eqe *eqe)
{
	struct ib_event ev = { .device = &sdev->ibdev };
	struct shca_srq *srq;
	unsigned long flags;

	xa_lock_irqsave(&sdev->srqs, flags);
	srq = xa_load(&sdev->srqs, eqe->obj);
	if (srq && (srq->gen != eqe->gen || !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	xa_unlock_irqrestore(&sdev->srqs, flags);
	if (!srq)
		return;
	if (srq->ibsrq.event_handler) {
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		ev.element.srq = &srq->ibsrq;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->free);
}

static void shca_eq_port(struct shca_dev *sdev, const struct shca_hw_eqe *eqe)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = eqe->obj,
	};

	if (eqe->event != SHCA_EV_PORT_ACTIVE && eqe->event != SHCA_EV_PORT_ERR)
		return;
	ev.event = shca_event_type[eqe->event];
	ib_dispatch_event(&ev);
}

/*
 * The vector's handler: drain the EQ, then re-arm it.  A test may pause it
 * (it then waits here, and EQEs pile up in the EQ) or slow it down.
 */
static void shca_eq_irq(void *ctx)
{
	struct shca_dev *sdev = ctx;
	u32 mask = (1U << sdev->eq_log_depth) - 1;
	struct shca_hw_eqe *eqe;
	u32 delay;

	wait_event_idle(sdev->eq_wait, !READ_ONCE(sdev->eq_paused));
	for (;;) {
		eqe = &sdev->eq[sdev->eq_ci & mask];
		if (READ_ONCE(eqe->owner) ==
		    ((sdev->eq_ci >> sdev->eq_log_depth) & 1))
			break;
		dma_rmb();
		delay = READ_ONCE(sdev->eq_delay_us);
		if (delay)
			fsleep(min_t(u32, delay, SHCA_EQ_MAX_DELAY_US));
		switch (eqe->type) {
		case SHCA_EQE_COMP:
		case SHCA_EQE_CQ:
			shca_eq_cq(sdev, eqe);
			break;
		case SHCA_EQE_QP:
			shca_eq_qp(sdev, eqe);
			break;
		case SHCA_EQE_SRQ:
			shca_eq_srq(sdev, eqe);
			break;
		case SHCA_EQE_PORT:
			shca_eq_port(sdev, eqe);
			break;
		default:
			ibdev_err_ratelimited(&sdev->ibdev,
					      "unknown EQE type %u\n",
					      eqe->type);
			break;
		}
		sdev->eq_ci++;
	}
	shca_hw_eq_arm(sdev->hw, sdev->eq_ci);
}

/**
 * shca_eq_create() - give the device its event queue and connect the vector
 * @sdev: the device
 *
 * Return: 0 or a negative errno.
 */
int shca_eq_create(struct shca_dev *sdev)
{
	int err;

	init_waitqueue_head(&sdev->eq_wait);
	sdev->eq_log_depth = shca_hw_eq_log_depth(&sdev->caps);
	sdev->eq = vzalloc(sizeof(*sdev->eq) << sdev->eq_log_depth);
	if (!sdev->eq)
		return -ENOMEM;
	shca_hw_request_irq(sdev->hw, shca_eq_irq, sdev);
	err = shca_cmd_create_eq(sdev, sdev->eq, sdev->eq_log_depth);
	if (err) {
		shca_hw_free_irq(sdev->hw);
		vfree(sdev->eq);
		sdev->eq = NULL;
	}
	return err;
}

/**
 * shca_eq_destroy() - take the event queue back and quiet the vector
 * @sdev: the device; one without an EQ is allowed
 */
void shca_eq_destroy(struct shca_dev *sdev)
{
	if (!sdev->eq)
		return;
	/* A paused handler would hold up the wait for it below. */
	shca_eq_pause(sdev, false);
	shca_cmd_destroy_eq(sdev);
	shca_hw_free_irq(sdev->hw);
	vfree(sdev->eq);
	sdev->eq = NULL;
}

/**
 * shca_eq_pause() - hold the interrupt handler before it drains the EQ
 * @sdev: the device
 * @pause: true to hold it, false to let it go on
 *
 * A test knob: while the handler is held, the device keeps writing EQEs
 * until the EQ is full, and owes the events it cannot write.
 */
void shca_eq_pause(struct shca_dev *sdev, bool pause)
{
	WRITE_ONCE(sdev->eq_paused, pause);
	if (!pause)
		wake_up_all(&sdev->eq_wait);
}
EXPORT_SYMBOL_IF_KUNIT(shca_eq_pause);
