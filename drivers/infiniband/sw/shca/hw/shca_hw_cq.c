// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: completion queues, the event queue and the
 * interrupt vector.
 *
 * A CQE is written in two steps: its body, then (after a write barrier)
 * its owner byte.  The driver reads the owner byte first and the body
 * after a read barrier, so it never sees half a CQE.  Completion events
 * and affiliated events become EQEs; an EQE written while the EQ is armed
 * raises the vector, which runs the driver's handler from irq_work.
 */
#include <kunit/visibility.h>
#include <linux/delay.h>
#include <linux/lockdep.h>
#include <linux/slab.h>

#include "shca_hw_int.h"

static void shca_hw_irq_fire(struct work_struct *work)
{
	struct shca_hw *hw = container_of(work, struct shca_hw, irq_work);
	shca_hw_irq_handler_t handler = READ_ONCE(hw->irq_handler);

	shca_hw_count(hw, SHCA_CNT_INTERRUPTS);
	if (handler)
		handler(hw->irq_ctx);
}

/**
 * shca_hw_eq_init() - reset the event queue state of a new device
 * @hw: the device
 */
void shca_hw_eq_init(struct shca_hw *hw)
{
	spin_lock_init(&hw->eq_lock);
	INIT_LIST_HEAD(&hw->eq_owed);
	INIT_WORK(&hw->irq_work, shca_hw_irq_fire);
	shca_hw_evsrc_init(&hw->port_ev, SHCA_EQE_PORT, 1, 0);
}

/**
 * shca_hw_eq_fini() - make sure the vector is quiet before the device goes
 * @hw: the device
 */
void shca_hw_eq_fini(struct shca_hw *hw)
{
	cancel_work_sync(&hw->irq_work);
}

/**
 * shca_hw_eq_log_depth() - the EQ depth a device's objects cannot overrun
 * @caps: the device's capability table
 *
 * Every CQ has at most one completion EQE and one CQ error EQE
 * unacknowledged, every QP and every SRQ one, the port one: an event
 * raised while its object's EQE is still in the EQ waits on the object
 * (shca_hw_eq_raise()).  Only EQEs of objects destroyed since they were
 * written can add to that; those go as the driver drains the EQ.
 *
 * Return: log2 of the smallest power of two that holds them all, at most
 * SHCA_HW_MAX_LOG_DEPTH.
 */
u32 shca_hw_eq_log_depth(const struct shca_hw_caps *caps)
{
	u64 n = 2ULL * caps->max_cq + caps->max_qp + caps->max_srq +
		SHCA_HW_NUM_PORTS;

	return min_t(u32, order_base_2(n), SHCA_HW_MAX_LOG_DEPTH);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_eq_log_depth);

/**
 * shca_hw_request_irq() - connect the driver's handler to the vector
 * @hw: the device
 * @handler: the handler
 * @ctx: its argument
 */
void shca_hw_request_irq(struct shca_hw *hw, shca_hw_irq_handler_t handler,
			 void *ctx)
{
	hw->irq_ctx = ctx;
	WRITE_ONCE(hw->irq_handler, handler);
}

/**
 * shca_hw_free_irq() - disconnect the handler and wait for it to finish
 * @hw: the device
 */
void shca_hw_free_irq(struct shca_hw *hw)
{
	WRITE_ONCE(hw->irq_handler, NULL);
	cancel_work_sync(&hw->irq_work);
}

/**
 * shca_hw_evsrc_init() - set up an object's EQ state
 * @src: the state
 * @type: the EQE type of its affiliated events
 * @obj: its number
 * @gen: its generation, for a QP
 */
void shca_hw_evsrc_init(struct shca_hw_evsrc *src,
			enum shca_hw_eqe_type type, u32 obj, u32 gen)
{
	memset(src, 0, sizeof(*src));
	INIT_LIST_HEAD(&src->node);
	src->type = type;
	src->obj = obj;
	src->gen = gen;
}

/**
 * shca_hw_evsrc_del() - forget what an object owes the EQ, as it goes
 * @hw: the device
 * @src: the object's EQ state; its EQEs already written stay in the EQ
 */
void shca_hw_evsrc_del(struct shca_hw *hw, struct shca_hw_evsrc *src)
{
	unsigned long flags;

	spin_lock_irqsave(&hw->eq_lock, flags);
	list_del_init(&src->node);
	src->owed = 0;
	spin_unlock_irqrestore(&hw->eq_lock, flags);
}

/* A CQ's error event has a slot of its own; everything else uses slot 0. */
static u32 shca_hw_ev_slot(u32 kind)
{
	return kind == SHCA_EV_CQ_ERR;
}

/* Whether the EQE @src last wrote in @slot is still unacknowledged. */
static bool shca_hw_ev_busy(struct shca_hw *hw, struct shca_hw_evsrc *src,
			    u32 slot)
{
	lockdep_assert_held(&hw->eq_lock);
	if (!(src->queued & BIT(slot)))
		return false;
	if (src->at[slot] >= hw->eq_ci)
		return true;
	src->queued &= ~BIT(slot);
	return false;
}

static bool shca_hw_eq_full(struct shca_hw *hw)
{
	u32 room = 1U << hw->eq_log_depth;

	lockdep_assert_held(&hw->eq_lock);
	if (hw->eq_limit && hw->eq_limit < room)
		room = hw->eq_limit;
	return hw->eq_pi - hw->eq_ci >= room;
}

/* Write one EQE for @src, and raise the vector if the EQ is armed. */
static void shca_hw_eq_write(struct shca_hw *hw, struct shca_hw_evsrc *src,
			     u32 kind)
{
	u64 idx = hw->eq_pi - hw->eq_start;
	u32 slot = shca_hw_ev_slot(kind);
	struct shca_hw_eqe *eqe;

	lockdep_assert_held(&hw->eq_lock);
	eqe = &hw->eq[idx & ((1U << hw->eq_log_depth) - 1)];
	eqe->type = kind == SHCA_HW_EV_COMP ? SHCA_EQE_COMP : src->type;
	eqe->event = kind == SHCA_HW_EV_COMP ? 0 : kind;
	eqe->obj = src->obj;
	eqe->gen = src->gen;
	dma_wmb();
	WRITE_ONCE(eqe->owner, !((idx >> hw->eq_log_depth) & 1));
	src->queued |= BIT(slot);
	src->at[slot] = hw->eq_pi;
	hw->eq_pi++;
	shca_hw_count(hw, SHCA_CNT_EQES);
	if (hw->eq_armed) {
		hw->eq_armed = false;
		queue_work(system_highpri_wq, &hw->irq_work);
	}
}

/*
 * Write what @src owes, lowest kind first, as far as its slots and the EQ
 * allow; keep it on the owed list while it owes anything.
 *
 * Return: false if the EQ was full.
 */
static bool shca_hw_ev_flush(struct shca_hw *hw, struct shca_hw_evsrc *src)
{
	unsigned long owed = src->owed;
	bool room = true;
	u32 kind;

	lockdep_assert_held(&hw->eq_lock);
	for_each_set_bit(kind, &owed, BITS_PER_TYPE(src->owed)) {
		if (shca_hw_ev_busy(hw, src, shca_hw_ev_slot(kind)))
			continue;
		if (shca_hw_eq_full(hw)) {
			room = false;
			break;
		}
		shca_hw_eq_write(hw, src, kind);
		src->owed &= ~BIT(kind);
	}
	if (!src->owed)
		list_del_init(&src->node);
	else if (list_empty(&src->node))
		list_add_tail(&src->node, &hw->eq_owed);
	return room;
}

/**
 * shca_hw_eq_raise() - raise an event on an object
 * @hw: the device
 * @src: the object's EQ state
 * @kind: SHCA_HW_EV_COMP for a CQ's completion event, or the enum
 *	shca_hw_event
 *
 * The EQE is written at once if the object has no EQE of that slot
 * unacknowledged and the EQ has room.  Otherwise the event is owed, and
 * written when the driver acknowledges EQEs (shca_hw_eq_arm()): raised
 * twice meanwhile, it is written once.  An event that finds the EQ full
 * counts as an EQ overflow, and is still not lost.  The port owes only its
 * latest event.
 */
void shca_hw_eq_raise(struct shca_hw *hw, struct shca_hw_evsrc *src,
		      u32 kind)
{
	unsigned long flags;

	spin_lock_irqsave(&hw->eq_lock, flags);
	if (hw->eq) {
		if (src == &hw->port_ev)
			src->owed = 0;
		src->owed |= BIT(kind);
		if (!shca_hw_ev_flush(hw, src) && (src->owed & BIT(kind)))
			shca_hw_count(hw, SHCA_CNT_EQ_OVERFLOW);
	}
	spin_unlock_irqrestore(&hw->eq_lock, flags);
}

/**
 * shca_hw_eq_arm() - acknowledge EQEs and re-arm the vector
 * @hw: the device
 * @ci: the driver's consumer index: every EQE below it is handled
 *
 * The events objects owe go into the room this makes.  If EQEs are past
 * @ci then, the vector fires again at once.
 */
void shca_hw_eq_arm(struct shca_hw *hw, u32 ci)
{
	struct shca_hw_evsrc *src, *tmp;
	unsigned long flags;
	u32 acked;

	spin_lock_irqsave(&hw->eq_lock, flags);
	if (!hw->eq) {
		spin_unlock_irqrestore(&hw->eq_lock, flags);
		return;
	}
	acked = ci - (u32)(hw->eq_ci - hw->eq_start);
	/* The driver cannot have handled EQEs never written. */
	if (!WARN_ON_ONCE(acked > hw->eq_pi - hw->eq_ci))
		hw->eq_ci += acked;
	list_for_each_entry_safe(src, tmp, &hw->eq_owed, node)
		if (!shca_hw_ev_flush(hw, src))
			break;
	if (hw->eq_pi != hw->eq_ci)
		queue_work(system_highpri_wq, &hw->irq_work);
	else
		hw->eq_armed = true;
	spin_unlock_irqrestore(&hw->eq_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_eq_arm);

/**
 * shca_hw_eq_set_limit() - make the EQ count as full early (a test knob)
 * @hw: the device
 * @limit: unacknowledged EQEs at which it is full; 0 for its depth
 */
void shca_hw_eq_set_limit(struct shca_hw *hw, u32 limit)
{
	unsigned long flags;

	spin_lock_irqsave(&hw->eq_lock, flags);
	hw->eq_limit = limit;
	spin_unlock_irqrestore(&hw->eq_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_eq_set_limit);

/**
 * shca_hw_eq_query() - what the event queue holds
 * @hw: the device
 * @st: filled in
 */
void shca_hw_eq_query(struct shca_hw *hw, struct shca_hw_eq_state *st)
{
	struct shca_hw_evsrc *src;
	unsigned long flags;

	memset(st, 0, sizeof(*st));
	spin_lock_irqsave(&hw->eq_lock, flags);
	if (hw->eq)
		st->depth = 1U << hw->eq_log_depth;
	st->limit = hw->eq_limit;
	st->written = hw->eq_pi - hw->eq_start;
	st->acked = hw->eq_ci - hw->eq_start;
	list_for_each_entry(src, &hw->eq_owed, node)
		st->owing++;
	spin_unlock_irqrestore(&hw->eq_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_eq_query);

/**
 * shca_hw_cq_get() - look up a CQ context and hold it
 * @hw: the device
 * @cqn: the CQ number
 *
 * Return: the context, or NULL if no CQ has that number.
 */
struct shca_hw_cq *shca_hw_cq_get(struct shca_hw *hw, u32 cqn)
{
	struct shca_hw_cq *cq;
	unsigned long flags;

	xa_lock_irqsave(&hw->cqs, flags);
	cq = xa_load(&hw->cqs, cqn);
	if (cq && !refcount_inc_not_zero(&cq->ref))
		cq = NULL;
	xa_unlock_irqrestore(&hw->cqs, flags);
	return cq;
}

/**
 * shca_hw_cq_put() - drop a hold on a CQ context
 * @cq: the context
 */
void shca_hw_cq_put(struct shca_hw_cq *cq)
{
	if (refcount_dec_and_test(&cq->ref))
		wake_up_var(&cq->ref);
}

static void shca_hw_cq_event(struct shca_hw_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->armed = 0;
	cq->pending = 0;
	shca_hw_eq_raise(cq->hw, &cq->ev, SHCA_HW_EV_COMP);
}

static void shca_hw_cq_moder_expired(struct timer_list *t)
{
	struct shca_hw_cq *cq = from_timer(cq, t, moder_timer);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->armed && cq->pending)
		shca_hw_cq_event(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* Whether the next CQE would overflow the ring; if so, it is lost. */
static bool shca_hw_cq_overflow(struct shca_hw_cq *cq)
{
	u32 ci;

	lockdep_assert_held(&cq->lock);
	/* Pairs with the consumer's (and the sweep's) release of ci. */
	ci = smp_load_acquire(&cq->dbrec->ci);
	if (!cq->overflowed && cq->pi - ci < (1U << cq->log_depth))
		return false;
	shca_hw_count(cq->hw, SHCA_CNT_CQ_OVERFLOW);
	if (!cq->overflowed) {
		cq->overflowed = true;
		shca_hw_eq_raise(cq->hw, &cq->ev, SHCA_EV_CQ_ERR);
	}
	return true;
}

/**
 * shca_hw_cq_write() - produce one CQE
 * @cq: the CQ
 * @cqe: its contents; the owner byte is the device's business
 * @solicited: the completion is solicited, for CQs armed for those only
 *
 * A full ring is an overflow: the CQE is lost, the CQ goes to error and
 * the CQ error event is raised, once.
 *
 * One writer at a time per CQ, body then owner byte, so CQEs are
 * published in ring order: an entry is never valid while one before it is
 * not.  The driver's sweep relies on that.  When the CQE publish window is
 * open, the body goes into the ring, the CQ is let go and the writer
 * sleeps in the window before it writes the owner byte.
 */
void shca_hw_cq_write(struct shca_hw_cq *cq, const struct shca_hw_cqe *cqe,
		      bool solicited)
{
	struct shca_hw *hw = cq->hw;
	struct shca_hw_window *win = &hw->windows[SHCA_WIN_CQE_PUBLISH];
	struct shca_hw_cqe *slot;
	unsigned long flags;

	might_sleep();
	mutex_lock(&cq->write_mutex);
	spin_lock_irqsave(&cq->lock, flags);
	if (shca_hw_cq_overflow(cq))
		goto out;
	if (shca_hw_window_enter(win, cqe->qpn)) {
		memcpy(&cq->ring[cq->pi & ((1U << cq->log_depth) - 1)], cqe,
		       offsetof(struct shca_hw_cqe, owner));
		spin_unlock_irqrestore(&cq->lock, flags);
		shca_hw_window_wait(win);
		spin_lock_irqsave(&cq->lock, flags);
		/* A resize meanwhile moved the ring, and may have shrunk it. */
		if (shca_hw_cq_overflow(cq))
			goto out;
	}
	slot = &cq->ring[cq->pi & ((1U << cq->log_depth) - 1)];
	memcpy(slot, cqe, offsetof(struct shca_hw_cqe, owner));
	dma_wmb();
	WRITE_ONCE(slot->owner, !((cq->pi >> cq->log_depth) & 1));
	cq->pi++;
	shca_hw_count(hw, SHCA_CNT_CQES);

	if (cq->armed == SHCA_CQ_ARM_NEXT ||
	    (cq->armed == SHCA_CQ_ARM_SOLICITED &&
	     (solicited || cqe->status != SHCA_CQE_OK))) {
		cq->pending++;
		if (cq->moder_count <= 1 || cq->pending >= cq->moder_count) {
			shca_hw_cq_event(cq);
		} else if (cq->moder_period && !timer_pending(&cq->moder_timer)) {
			mod_timer(&cq->moder_timer, jiffies +
				  usecs_to_jiffies(cq->moder_period));
		}
	}
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	mutex_unlock(&cq->write_mutex);
}

/**
 * shca_hw_arm_cq() - the CQ arm doorbell
 * @hw: the device
 * @cqn: the CQ
 * @how: SHCA_CQ_ARM_NEXT or SHCA_CQ_ARM_SOLICITED
 *
 * The next (solicited) CQE raises one completion event.  Arming for next
 * overrides an armed solicited request; the reverse does not.
 */
void shca_hw_arm_cq(struct shca_hw *hw, u32 cqn, u32 how)
{
	struct shca_hw_cq *cq = shca_hw_cq_get(hw, cqn);
	unsigned long flags;

	if (!cq)
		return;
	shca_hw_count(hw, SHCA_CNT_DOORBELLS);
	spin_lock_irqsave(&cq->lock, flags);
	if (how == SHCA_CQ_ARM_NEXT || !cq->armed)
		cq->armed = how == SHCA_CQ_ARM_NEXT ? SHCA_CQ_ARM_NEXT :
			    SHCA_CQ_ARM_SOLICITED;
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
}

static bool shca_hw_log_depth_ok(u32 log_depth)
{
	return log_depth && log_depth <= SHCA_HW_MAX_LOG_DEPTH;
}

static enum shca_hw_status shca_hw_create_cq(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd)
{
	const struct shca_hw_cq_create *in = &cmd->in.cq;
	struct shca_hw_cq *cq;
	int err;

	if (!in->ring || !in->dbrec || !shca_hw_log_depth_ok(in->log_depth) ||
	    (1U << in->log_depth) > hw->caps->max_cqe + 1)
		return SHCA_HW_BAD_PARAM;
	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq)
		return SHCA_HW_NO_RESOURCES;
	cq->hw = hw;
	refcount_set(&cq->ref, 1);
	spin_lock_init(&cq->lock);
	mutex_init(&cq->write_mutex);
	cq->ring = in->ring;
	cq->log_depth = in->log_depth;
	cq->dbrec = in->dbrec;
	cq->pi = READ_ONCE(in->dbrec->ci);
	cq->moder_count = 1;
	timer_setup(&cq->moder_timer, shca_hw_cq_moder_expired, 0);
	atomic_set(&cq->assoc, 0);
	shca_hw_evsrc_init(&cq->ev, SHCA_EQE_CQ, 0, 0);

	err = xa_alloc_cyclic_irq(&hw->cqs, &cmd->out.num, cq,
				  XA_LIMIT(1, hw->caps->max_cq),
				  &hw->next_cqn, GFP_KERNEL);
	if (err < 0) {
		kfree(cq);
		return SHCA_HW_NO_RESOURCES;
	}
	cq->cqn = cmd->out.num;
	cq->ev.obj = cq->cqn;
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_destroy_cq(struct shca_hw *hw, u32 cqn)
{
	struct shca_hw_cq *cq;

	xa_lock_irq(&hw->cqs);
	cq = xa_load(&hw->cqs, cqn);
	if (!cq) {
		xa_unlock_irq(&hw->cqs);
		return SHCA_HW_BAD_INDEX;
	}
	if (atomic_read(&cq->assoc)) {
		xa_unlock_irq(&hw->cqs);
		return SHCA_HW_BUSY;
	}
	__xa_erase(&hw->cqs, cqn);
	xa_unlock_irq(&hw->cqs);

	shca_hw_cq_put(cq);
	wait_var_event(&cq->ref, !refcount_read(&cq->ref));
	timer_shutdown_sync(&cq->moder_timer);
	shca_hw_evsrc_del(hw, &cq->ev);
	mutex_destroy(&cq->write_mutex);
	kfree(cq);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cq_fini() - free the CQs a device still has when it powers off
 * @hw: the device, its QPs already freed, so no CQ is associated
 */
void shca_hw_cq_fini(struct shca_hw *hw)
{
	struct shca_hw_cq *cq;
	unsigned long index;

	xa_for_each(&hw->cqs, index, cq)
		shca_hw_destroy_cq(hw, index);
}

/*
 * Move the live CQEs, ci to pi, to the start of a new ring.  The caller
 * holds its poll lock, so the consumer index cannot move meanwhile; the
 * consumer starts over at index 0 of the new ring.
 */
static enum shca_hw_status shca_hw_resize_cq(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd)
{
	const struct shca_hw_cq_create *in = &cmd->in.cq;
	struct shca_hw_cq *cq;
	unsigned long flags;
	u32 ci, n, i, old_mask;
	enum shca_hw_status status = SHCA_HW_OK;

	if (!in->ring || !in->dbrec || !shca_hw_log_depth_ok(in->log_depth) ||
	    (1U << in->log_depth) > hw->caps->max_cqe + 1)
		return SHCA_HW_BAD_PARAM;
	cq = shca_hw_cq_get(hw, cmd->index);
	if (!cq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irqsave(&cq->lock, flags);
	ci = READ_ONCE(cq->dbrec->ci);
	n = cq->pi - ci;
	if (n > (1U << in->log_depth)) {
		status = SHCA_HW_BAD_PARAM;
		goto out;
	}
	old_mask = (1U << cq->log_depth) - 1;
	for (i = 0; i < n; i++) {
		memcpy(&in->ring[i], &cq->ring[(ci + i) & old_mask],
		       offsetof(struct shca_hw_cqe, owner));
		in->ring[i].owner = 1;
	}
	WRITE_ONCE(in->dbrec->ci, 0);
	cq->ring = in->ring;
	cq->dbrec = in->dbrec;
	cq->log_depth = in->log_depth;
	cq->pi = n;
	cq->overflowed = false;
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
	return status;
}

static enum shca_hw_status shca_hw_query_cq(struct shca_hw *hw,
					    struct shca_hw_cmd *cmd)
{
	struct shca_hw_cq_query *out = &cmd->out.cq;
	struct shca_hw_cq *cq = shca_hw_cq_get(hw, cmd->index);
	unsigned long flags;

	if (!cq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irqsave(&cq->lock, flags);
	out->log_depth = cq->log_depth;
	out->pi = cq->pi;
	out->ci = READ_ONCE(cq->dbrec->ci);
	out->armed = cq->armed;
	out->assoc = atomic_read(&cq->assoc);
	out->overflowed = cq->overflowed;
	out->moder_count = cq->moder_count;
	out->moder_period = cq->moder_period;
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_modify_cq(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd)
{
	struct shca_hw_cq *cq = shca_hw_cq_get(hw, cmd->index);
	unsigned long flags;

	if (!cq)
		return SHCA_HW_BAD_INDEX;
	spin_lock_irqsave(&cq->lock, flags);
	cq->moder_count = cmd->in.moder.count;
	cq->moder_period = cmd->in.moder.period;
	spin_unlock_irqrestore(&cq->lock, flags);
	shca_hw_cq_put(cq);
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_create_eq(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd)
{
	if (!cmd->in.eq.ring || !shca_hw_log_depth_ok(cmd->in.eq.log_depth))
		return SHCA_HW_BAD_PARAM;
	spin_lock_irq(&hw->eq_lock);
	if (hw->eq) {
		spin_unlock_irq(&hw->eq_lock);
		return SHCA_HW_BAD_STATE;
	}
	hw->eq = cmd->in.eq.ring;
	hw->eq_log_depth = cmd->in.eq.log_depth;
	/* Indices keep counting, so no object's last EQE looks unhandled. */
	hw->eq_start = hw->eq_pi;
	hw->eq_ci = hw->eq_pi;
	hw->eq_armed = true;
	spin_unlock_irq(&hw->eq_lock);
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_destroy_eq(struct shca_hw *hw)
{
	struct shca_hw_evsrc *src, *tmp;

	spin_lock_irq(&hw->eq_lock);
	hw->eq = NULL;
	hw->eq_armed = false;
	list_for_each_entry_safe(src, tmp, &hw->eq_owed, node) {
		list_del_init(&src->node);
		src->owed = 0;
	}
	spin_unlock_irq(&hw->eq_lock);
	cancel_work_sync(&hw->irq_work);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cq_cmd() - run a CQ or EQ command
 * @hw: the device
 * @cmd: the command
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_cq_cmd(struct shca_hw *hw, struct shca_hw_cmd *cmd)
{
	switch (cmd->opcode) {
	case SHCA_CMD_CREATE_EQ:
		return shca_hw_create_eq(hw, cmd);
	case SHCA_CMD_DESTROY_EQ:
		return shca_hw_destroy_eq(hw);
	case SHCA_CMD_CREATE_CQ:
		return shca_hw_create_cq(hw, cmd);
	case SHCA_CMD_RESIZE_CQ:
		return shca_hw_resize_cq(hw, cmd);
	case SHCA_CMD_MODIFY_CQ:
		return shca_hw_modify_cq(hw, cmd);
	case SHCA_CMD_QUERY_CQ:
		return shca_hw_query_cq(hw, cmd);
	case SHCA_CMD_DESTROY_CQ:
		return shca_hw_destroy_cq(hw, cmd->index);
	default:
		return SHCA_HW_BAD_OPCODE;
	}
}
