// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the event queues and their interrupt handlers.
 *
 * The device gets one EQ per online CPU (at most the comp_vectors module
 * parameter, and the device's own limit), each with a vector steered to
 * its CPU: the completion vectors a CQ chooses from.  The device writes a
 * CQ's completion and error events to the EQ of the CQ's vector, and
 * affiliated and port events to EQ 0.  Each vector's handler drains its EQ
 * by owner bit, turns each EQE into a consumer callback and re-arms; the
 * handlers of different vectors run in parallel.  EQEs carry object
 * numbers, never pointers: an object is looked up, and held, under its
 * xarray's lock, so an event for an object being destroyed finds nothing.
 * An event of a QP, CQ or SRQ also carries the object's generation, so an
 * event of an earlier holder of its number, still in an EQ, is dropped.
 *
 * Each EQ is as deep as the device's objects need (shca_hw_eq_log_depth()):
 * the device keeps at most one EQE per object and kind in it, and holds
 * back, never drops, an event that finds the EQ full.
 */
#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "shca.h"

/* The longest the eq_delay_us knob makes the handler sleep per EQE. */
#define SHCA_EQ_MAX_DELAY_US	100000

static unsigned int comp_vectors = SHCA_HW_MAX_EQS;
module_param(comp_vectors, uint, 0644);
MODULE_PARM_DESC(comp_vectors,
		 "completion vectors per device, one per online CPU up to this many (1..64, default 64); a device takes the value in force when it is created");

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
 * A vector's handler: drain its EQ, then re-arm it.  A test may pause it
 * (it then waits here, and EQEs pile up in the EQ) or slow it down.
 */
static void shca_eq_irq(void *ctx)
{
	struct shca_eq *eq = ctx;
	struct shca_dev *sdev = eq->sdev;
	u32 mask = (1U << sdev->eq_log_depth) - 1;
	struct shca_hw_eqe *eqe;
	u32 delay;

	wait_event_idle(sdev->eq_wait, !READ_ONCE(sdev->eq_paused));
	for (;;) {
		eqe = &eq->ring[eq->ci & mask];
		if (READ_ONCE(eqe->owner) ==
		    ((eq->ci >> sdev->eq_log_depth) & 1))
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
		eq->ci++;
	}
	shca_hw_eq_arm(sdev->hw, eq->eqn, eq->ci);
}

/* Give the device EQ @eqn, its vector steered to @cpu. */
static int shca_eq_create_one(struct shca_dev *sdev, u32 eqn, int cpu)
{
	struct shca_eq *eq = &sdev->eqs[eqn];
	int err;

	eq->sdev = sdev;
	eq->eqn = eqn;
	eq->cpu = cpu;
	eq->ring = vzalloc(sizeof(*eq->ring) << sdev->eq_log_depth);
	if (!eq->ring)
		return -ENOMEM;
	err = shca_hw_request_irq(sdev->hw, eqn, cpu, shca_eq_irq, eq);
	if (!err) {
		err = shca_cmd_create_eq(sdev, eqn, eq->ring,
					 sdev->eq_log_depth);
		if (err)
			shca_hw_free_irq(sdev->hw, eqn);
	}
	if (err) {
		vfree(eq->ring);
		eq->ring = NULL;
	}
	return err;
}

/**
 * shca_eq_create() - give the device its event queues and connect the vectors
 * @sdev: the device
 *
 * One EQ per CPU online now, up to comp_vectors and the device's limit,
 * vector i steered to the i-th of them; at least one.  They become the
 * device's completion vectors.
 *
 * Return: 0 or a negative errno.
 */
int shca_eq_create(struct shca_dev *sdev)
{
	u32 i, n;
	int err = 0;

	n = min3(num_online_cpus(), clamp(READ_ONCE(comp_vectors), 1U,
					  (unsigned int)SHCA_HW_MAX_EQS),
		 sdev->caps.max_eq);
	if (!n)
		return -EINVAL;
	init_waitqueue_head(&sdev->eq_wait);
	sdev->eq_log_depth = shca_hw_eq_log_depth(&sdev->caps);
	sdev->eqs = kcalloc(n, sizeof(*sdev->eqs), GFP_KERNEL);
	if (!sdev->eqs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = shca_eq_create_one(sdev, i,
					 cpumask_local_spread(i, NUMA_NO_NODE));
		if (err)
			break;
		sdev->num_eqs = i + 1;
	}
	if (err)
		shca_eq_destroy(sdev);
	return err;
}

/**
 * shca_eq_destroy() - take the event queues back and quiet the vectors
 * @sdev: the device; one without EQs is allowed
 */
void shca_eq_destroy(struct shca_dev *sdev)
{
	struct shca_eq *eq;
	int err;

	if (!sdev->eqs)
		return;
	/* A paused handler would hold up the waits for it below. */
	shca_eq_pause(sdev, false);
	while (sdev->num_eqs) {
		eq = &sdev->eqs[--sdev->num_eqs];
		err = shca_cmd_destroy_eq(sdev, eq->eqn);
		shca_hw_free_irq(sdev->hw, eq->eqn);
		/* The device may still write to an EQ it did not give back. */
		if (err)
			ibdev_err_ratelimited(&sdev->ibdev,
					      "EQ %u not destroyed (%d): its ring is leaked\n",
					      eq->eqn, err);
		else
			vfree(eq->ring);
	}
	kfree(sdev->eqs);
	sdev->eqs = NULL;
}

/**
 * shca_get_vector_affinity() - the CPU a completion vector's handler runs on
 * @ibdev: the device
 * @comp_vector: the vector
 *
 * Return: the vector's CPU, or NULL for a vector the device does not have.
 */
const struct cpumask *shca_get_vector_affinity(struct ib_device *ibdev,
					       int comp_vector)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);

	if (comp_vector < 0 || comp_vector >= sdev->num_eqs)
		return NULL;
	return cpumask_of(sdev->eqs[comp_vector].cpu);
}

/**
 * shca_eq_pause() - hold the interrupt handlers before they drain their EQs
 * @sdev: the device
 * @pause: true to hold them, false to let them go on
 *
 * A test knob: while the handlers are held, the device keeps writing EQEs
 * until an EQ is full, and owes the events it cannot write.
 */
void shca_eq_pause(struct shca_dev *sdev, bool pause)
{
	WRITE_ONCE(sdev->eq_paused, pause);
	if (!pause)
		wake_up_all(&sdev->eq_wait);
}
EXPORT_SYMBOL_IF_KUNIT(shca_eq_pause);
