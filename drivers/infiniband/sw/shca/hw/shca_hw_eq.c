// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the event queue and the interrupt vector.
 *
 * Completion events and affiliated events become EQEs in the one EQ, with
 * an owner bit.  An EQE written while the EQ is armed raises the vector,
 * which runs the driver's handler from irq_work, in process context, one
 * invocation at a time.  Every object that can raise an event keeps its
 * EQ state here (struct shca_hw_evsrc): it never has more than one EQE per
 * slot unacknowledged, and an event that finds no room is owed, not lost.
 *
 * Lock order: shca_hw.eq_lock comes after every object lock (QP, SRQ, CQ)
 * and before shca_hw.lock; it is a leaf here.  The vector's handler runs
 * with no model lock held.
 */
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>

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
 * @gen: its generation, for a QP, CQ or SRQ
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
 * shca_hw_cmd_create_eq() - run CREATE_EQ
 * @hw: the device, its command mutex held
 * @cmd: the ring and its depth in @cmd->in.eq
 *
 * Return: the completion status; BAD_STATE if the device has an EQ.
 */
enum shca_hw_status shca_hw_cmd_create_eq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	lockdep_assert_held(&hw->cmd_mutex);
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

/**
 * shca_hw_cmd_destroy_eq() - run DESTROY_EQ
 * @hw: the device, its command mutex held
 * @cmd: the command (no parameters)
 *
 * Events raised from now on are dropped; the vector's work is waited out.
 *
 * Return: SHCA_HW_OK.
 */
enum shca_hw_status shca_hw_cmd_destroy_eq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	struct shca_hw_evsrc *src, *tmp;

	lockdep_assert_held(&hw->cmd_mutex);
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

static int shca_hw_eq_show(struct seq_file *s, void *unused)
{
	struct shca_hw_eq_state st;

	shca_hw_eq_query(s->private, &st);
	seq_printf(s, "depth %u\nlimit %u\nwritten %llu\nacked %llu\nowing %u\n",
		   st.depth, st.limit, st.written, st.acked, st.owing);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_eq);

static int shca_hw_eq_limit_get(void *data, u64 *val)
{
	struct shca_hw_eq_state st;

	shca_hw_eq_query(data, &st);
	*val = st.limit;
	return 0;
}

static int shca_hw_eq_limit_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	shca_hw_eq_set_limit(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_hw_eq_limit_fops, shca_hw_eq_limit_get,
			 shca_hw_eq_limit_set, "%llu\n");

/**
 * shca_hw_eq_debugfs() - create eq and eq_limit, the event queue's mirror and its test limit
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_eq_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file("eq", 0400, dir, hw, &shca_hw_eq_fops);
	debugfs_create_file_unsafe("eq_limit", 0600, dir, hw,
				   &shca_hw_eq_limit_fops);
}
