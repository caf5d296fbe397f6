// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the event queues and their interrupt vectors.
 *
 * The device has caps.max_eq event queues, each with an MSI-X vector of its
 * own.  A CQ's completion and error events go to the EQ of the vector it
 * chose at CREATE_CQ; the affiliated events of QPs and SRQs, and the port's
 * events, go to EQ 0.  Each is an EQE with an owner bit.  An EQE written
 * while its EQ is armed fires the vector, which runs the driver's handler
 * from a work item on the CPU the vector is steered to (any CPU while that
 * one is offline), in process context, one invocation at a time per
 * vector: vectors run in parallel, as on a real HCA.  Every object that
 * can raise an event keeps its EQ state here (struct shca_hw_evsrc): it
 * never has more than one EQE per slot unacknowledged, and an event that
 * finds no room is owed, not lost.
 *
 * Lock order: shca_hw_eq.lock comes after every object lock (QP, SRQ, CQ)
 * and before shca_hw.lock; it is a leaf here, and no two EQs' locks are
 * ever held at once.  The handlers run with no model lock held.
 */
#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "shca_hw_int.h"

static void shca_hw_irq_fire(struct work_struct *work)
{
	struct shca_hw_eq *eq = container_of(work, struct shca_hw_eq,
					     irq_work);
	shca_hw_irq_handler_t handler = READ_ONCE(eq->handler);

	shca_hw_count(eq->hw, SHCA_CNT_INTERRUPTS);
	if (handler)
		handler(eq->ctx);
}

/*
 * Fire @eq's vector: its handler runs on the vector's CPU, or, while that
 * CPU is offline, wherever the workqueue puts it, as an interrupt whose
 * CPU went away is moved to one still online.
 */
static void shca_hw_eq_fire(struct shca_hw_eq *eq)
{
	int cpu = READ_ONCE(eq->cpu);

	lockdep_assert_held(&eq->lock);
	if (cpu < 0 || !cpu_online(cpu))
		cpu = WORK_CPU_UNBOUND;
	queue_work_on(cpu, system_highpri_wq, &eq->irq_work);
}

/**
 * shca_hw_eq_init() - the event queues of a new device, none created yet
 * @hw: the device
 *
 * Return: 0, or -ENOMEM.
 */
int shca_hw_eq_init(struct shca_hw *hw)
{
	u32 i;

	shca_hw_evsrc_init(&hw->port_ev, SHCA_EQE_PORT, 1, 0, 0);
	hw->eqs = kcalloc(hw->caps->max_eq, sizeof(*hw->eqs), GFP_KERNEL);
	if (!hw->eqs)
		return -ENOMEM;
	for (i = 0; i < hw->caps->max_eq; i++) {
		struct shca_hw_eq *eq = &hw->eqs[i];

		eq->hw = hw;
		eq->eqn = i;
		eq->cpu = -1;
		spin_lock_init(&eq->lock);
		INIT_LIST_HEAD(&eq->owed);
		INIT_WORK(&eq->irq_work, shca_hw_irq_fire);
	}
	return 0;
}

/**
 * shca_hw_eq_fini() - make sure every vector is quiet before the device goes
 * @hw: the device
 */
void shca_hw_eq_fini(struct shca_hw *hw)
{
	u32 i;

	if (!hw->eqs)
		return;
	for (i = 0; i < hw->caps->max_eq; i++)
		cancel_work_sync(&hw->eqs[i].irq_work);
	kfree(hw->eqs);
	hw->eqs = NULL;
}

/**
 * shca_hw_eq_log_depth() - the EQ depth a device's objects cannot overrun
 * @caps: the device's capability table
 *
 * Every CQ has at most one completion EQE and one CQ error EQE
 * unacknowledged, every QP and every SRQ one, the port one: an event
 * raised while its object's EQE is still in the EQ waits on the object
 * (shca_hw_eq_raise()).  Only EQEs of objects destroyed since they were
 * written can add to that; those go as the driver drains the EQ.  Any EQ
 * may be the vector of every CQ, so each EQ has that bound.
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
 * shca_hw_request_irq() - connect the driver's handler to a vector
 * @hw: the device
 * @eqn: the vector, below caps.max_eq
 * @cpu: the CPU its interrupts are steered to, or -1 for any
 * @handler: the handler
 * @ctx: its argument
 *
 * Return: 0, or -EINVAL for a vector the device does not have or a CPU
 * that is not possible.
 */
int shca_hw_request_irq(struct shca_hw *hw, u32 eqn, int cpu,
			shca_hw_irq_handler_t handler, void *ctx)
{
	struct shca_hw_eq *eq;

	if (!hw->eqs || eqn >= hw->caps->max_eq ||
	    (cpu >= 0 && (cpu >= nr_cpu_ids || !cpu_possible(cpu))))
		return -EINVAL;
	eq = &hw->eqs[eqn];
	spin_lock_irq(&eq->lock);
	eq->ctx = ctx;
	WRITE_ONCE(eq->cpu, cpu < 0 ? -1 : cpu);
	WRITE_ONCE(eq->handler, handler);
	spin_unlock_irq(&eq->lock);
	return 0;
}

/**
 * shca_hw_free_irq() - disconnect a vector's handler and wait for it
 * @hw: the device
 * @eqn: the vector; one the device does not have is ignored
 */
void shca_hw_free_irq(struct shca_hw *hw, u32 eqn)
{
	struct shca_hw_eq *eq;

	if (!hw->eqs || eqn >= hw->caps->max_eq)
		return;
	eq = &hw->eqs[eqn];
	spin_lock_irq(&eq->lock);
	WRITE_ONCE(eq->handler, NULL);
	spin_unlock_irq(&eq->lock);
	cancel_work_sync(&eq->irq_work);
}

/**
 * shca_hw_evsrc_init() - set up an object's EQ state
 * @src: the state
 * @type: the EQE type of its affiliated events
 * @obj: its number
 * @gen: its generation, for a QP, CQ or SRQ
 * @eqn: the EQ its events go to
 */
void shca_hw_evsrc_init(struct shca_hw_evsrc *src,
			enum shca_hw_eqe_type type, u32 obj, u32 gen, u32 eqn)
{
	memset(src, 0, sizeof(*src));
	INIT_LIST_HEAD(&src->node);
	src->eqn = eqn;
	src->type = type;
	src->obj = obj;
	src->gen = gen;
}

/**
 * shca_hw_evsrc_del() - forget what an object owes its EQ, as it goes
 * @hw: the device
 * @src: the object's EQ state; its EQEs already written stay in the EQ
 */
void shca_hw_evsrc_del(struct shca_hw *hw, struct shca_hw_evsrc *src)
{
	struct shca_hw_eq *eq = &hw->eqs[src->eqn];
	unsigned long flags;

	spin_lock_irqsave(&eq->lock, flags);
	list_del_init(&src->node);
	src->owed = 0;
	spin_unlock_irqrestore(&eq->lock, flags);
}

/**
 * shca_hw_eq_add_cq() - count a new CQ on its completion vector
 * @hw: the device, its command mutex held
 * @eqn: the vector the CQ chose, one the device has
 */
void shca_hw_eq_add_cq(struct shca_hw *hw, u32 eqn)
{
	lockdep_assert_held(&hw->cmd_mutex);
	hw->eqs[eqn].nr_cqs++;
}

/**
 * shca_hw_eq_del_cq() - a CQ on the vector is gone
 * @hw: the device, its command mutex held
 * @eqn: the CQ's vector
 */
void shca_hw_eq_del_cq(struct shca_hw *hw, u32 eqn)
{
	lockdep_assert_held(&hw->cmd_mutex);
	hw->eqs[eqn].nr_cqs--;
}

/* A CQ's error event has a slot of its own; everything else uses slot 0. */
static u32 shca_hw_ev_slot(u32 kind)
{
	return kind == SHCA_EV_CQ_ERR;
}

/* Whether the EQE @src last wrote in @slot is still unacknowledged. */
static bool shca_hw_ev_busy(struct shca_hw_eq *eq, struct shca_hw_evsrc *src,
			    u32 slot)
{
	lockdep_assert_held(&eq->lock);
	if (!(src->queued & BIT(slot)))
		return false;
	if (src->at[slot] >= eq->ci)
		return true;
	src->queued &= ~BIT(slot);
	return false;
}

static bool shca_hw_eq_full(struct shca_hw_eq *eq)
{
	u32 limit = READ_ONCE(eq->hw->eq_limit);
	u32 room = 1U << eq->log_depth;

	lockdep_assert_held(&eq->lock);
	if (limit && limit < room)
		room = limit;
	return eq->pi - eq->ci >= room;
}

/* Write one EQE for @src, and fire the vector if the EQ is armed. */
static void shca_hw_eq_write(struct shca_hw_eq *eq, struct shca_hw_evsrc *src,
			     u32 kind)
{
	u64 idx = eq->pi - eq->start;
	u32 slot = shca_hw_ev_slot(kind);
	struct shca_hw_eqe *eqe;

	lockdep_assert_held(&eq->lock);
	eqe = &eq->ring[idx & ((1U << eq->log_depth) - 1)];
	eqe->type = kind == SHCA_HW_EV_COMP ? SHCA_EQE_COMP : src->type;
	eqe->event = kind == SHCA_HW_EV_COMP ? 0 : kind;
	eqe->obj = src->obj;
	eqe->gen = src->gen;
	dma_wmb();
	WRITE_ONCE(eqe->owner, !((idx >> eq->log_depth) & 1));
	src->queued |= BIT(slot);
	src->at[slot] = eq->pi;
	eq->pi++;
	shca_hw_count(eq->hw, SHCA_CNT_EQES);
	if (eq->armed) {
		eq->armed = false;
		shca_hw_eq_fire(eq);
	}
}

/*
 * Write what @src owes, lowest kind first, as far as its slots and the EQ
 * allow; keep it on the owed list while it owes anything.
 *
 * Return: false if the EQ was full.
 */
static bool shca_hw_ev_flush(struct shca_hw_eq *eq, struct shca_hw_evsrc *src)
{
	unsigned long owed = src->owed;
	bool room = true;
	u32 kind;

	lockdep_assert_held(&eq->lock);
	for_each_set_bit(kind, &owed, BITS_PER_TYPE(src->owed)) {
		if (shca_hw_ev_busy(eq, src, shca_hw_ev_slot(kind)))
			continue;
		if (shca_hw_eq_full(eq)) {
			room = false;
			break;
		}
		shca_hw_eq_write(eq, src, kind);
		src->owed &= ~BIT(kind);
	}
	if (!src->owed)
		list_del_init(&src->node);
	else if (list_empty(&src->node))
		list_add_tail(&src->node, &eq->owed);
	return room;
}

/**
 * shca_hw_eq_raise() - raise an event on an object
 * @hw: the device
 * @src: the object's EQ state
 * @kind: SHCA_HW_EV_COMP for a CQ's completion event, or the enum
 *	shca_hw_event
 *
 * The EQE is written at once, to the object's EQ, if the object has no
 * EQE of that slot unacknowledged and the EQ has room.  Otherwise the
 * event is owed, and written when the driver acknowledges EQEs
 * (shca_hw_eq_arm()): raised twice meanwhile, it is written once.  An
 * event that finds the EQ full counts as an EQ overflow, and is still not
 * lost.  The port owes only its latest event.  Before CREATE_EQ, and after
 * DESTROY_EQ, the EQ drops what is raised.
 */
void shca_hw_eq_raise(struct shca_hw *hw, struct shca_hw_evsrc *src,
		      u32 kind)
{
	struct shca_hw_eq *eq = &hw->eqs[src->eqn];
	unsigned long flags;

	spin_lock_irqsave(&eq->lock, flags);
	if (eq->ring) {
		if (src == &hw->port_ev)
			src->owed = 0;
		src->owed |= BIT(kind);
		if (!shca_hw_ev_flush(eq, src) && (src->owed & BIT(kind)))
			shca_hw_count(hw, SHCA_CNT_EQ_OVERFLOW);
	}
	spin_unlock_irqrestore(&eq->lock, flags);
}

/**
 * shca_hw_eq_arm() - acknowledge EQEs and re-arm a vector
 * @hw: the device
 * @eqn: the EQ; one the device does not have is ignored
 * @ci: the driver's consumer index: every EQE below it is handled
 *
 * The events objects owe go into the room this makes.  If EQEs are past
 * @ci then, the vector fires again at once.
 */
void shca_hw_eq_arm(struct shca_hw *hw, u32 eqn, u32 ci)
{
	struct shca_hw_evsrc *src, *tmp;
	struct shca_hw_eq *eq;
	unsigned long flags;
	u32 acked;

	if (!hw->eqs || eqn >= hw->caps->max_eq)
		return;
	eq = &hw->eqs[eqn];
	spin_lock_irqsave(&eq->lock, flags);
	if (!eq->ring) {
		spin_unlock_irqrestore(&eq->lock, flags);
		return;
	}
	acked = ci - (u32)(eq->ci - eq->start);
	/* The driver cannot have handled EQEs never written. */
	if (!WARN_ON_ONCE(acked > eq->pi - eq->ci))
		eq->ci += acked;
	list_for_each_entry_safe(src, tmp, &eq->owed, node)
		if (!shca_hw_ev_flush(eq, src))
			break;
	if (eq->pi != eq->ci)
		shca_hw_eq_fire(eq);
	else
		eq->armed = true;
	spin_unlock_irqrestore(&eq->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_eq_arm);

/**
 * shca_hw_eq_set_limit() - make every EQ count as full early (a test knob)
 * @hw: the device
 * @limit: unacknowledged EQEs at which an EQ is full; 0 for its depth
 *
 * An EQ sees the new limit from its next event or acknowledgment on.
 */
void shca_hw_eq_set_limit(struct shca_hw *hw, u32 limit)
{
	WRITE_ONCE(hw->eq_limit, limit);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_eq_set_limit);

/**
 * shca_hw_eq_query() - what an event queue holds
 * @hw: the device
 * @eqn: the EQ
 * @st: filled in; all zero for an EQ the device does not have
 */
void shca_hw_eq_query(struct shca_hw *hw, u32 eqn, struct shca_hw_eq_state *st)
{
	struct shca_hw_evsrc *src;
	struct shca_hw_eq *eq;
	unsigned long flags;

	memset(st, 0, sizeof(*st));
	if (!hw->eqs || eqn >= hw->caps->max_eq)
		return;
	eq = &hw->eqs[eqn];
	st->limit = READ_ONCE(hw->eq_limit);
	spin_lock_irqsave(&eq->lock, flags);
	if (eq->ring)
		st->depth = 1U << eq->log_depth;
	st->written = eq->pi - eq->start;
	st->acked = eq->ci - eq->start;
	st->cpu = eq->cpu;
	list_for_each_entry(src, &eq->owed, node)
		st->owing++;
	spin_unlock_irqrestore(&eq->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_eq_query);

/**
 * shca_hw_cmd_create_eq() - run CREATE_EQ
 * @hw: the device, its command mutex held
 * @cmd: the EQ's number in @cmd->index, its ring and depth in @cmd->in.eq
 *
 * Return: the completion status; BAD_STATE if the EQ exists.
 */
enum shca_hw_status shca_hw_cmd_create_eq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd)
{
	struct shca_hw_eq *eq;

	lockdep_assert_held(&hw->cmd_mutex);
	if (cmd->index >= hw->caps->max_eq)
		return SHCA_HW_BAD_INDEX;
	if (!cmd->in.eq.ring || !shca_hw_log_depth_ok(cmd->in.eq.log_depth))
		return SHCA_HW_BAD_PARAM;
	eq = &hw->eqs[cmd->index];
	spin_lock_irq(&eq->lock);
	if (eq->ring) {
		spin_unlock_irq(&eq->lock);
		return SHCA_HW_BAD_STATE;
	}
	eq->ring = cmd->in.eq.ring;
	eq->log_depth = cmd->in.eq.log_depth;
	/* Indices keep counting, so no object's last EQE looks unhandled. */
	eq->start = eq->pi;
	eq->ci = eq->pi;
	eq->armed = true;
	spin_unlock_irq(&eq->lock);
	return SHCA_HW_OK;
}

/**
 * shca_hw_cmd_destroy_eq() - run DESTROY_EQ
 * @hw: the device, its command mutex held
 * @cmd: the EQ's number in @cmd->index
 *
 * Events raised from now on are dropped; the vector's work is waited out.
 * EQ 0 takes the affiliated events of every QP and SRQ, and of the port,
 * which the driver stops caring for once it destroys it.
 *
 * Return: the completion status: BAD_INDEX for an EQ the device does not
 * have, BUSY while a CQ has it for its vector.
 */
enum shca_hw_status shca_hw_cmd_destroy_eq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd)
{
	struct shca_hw_evsrc *src, *tmp;
	struct shca_hw_eq *eq;

	lockdep_assert_held(&hw->cmd_mutex);
	if (cmd->index >= hw->caps->max_eq)
		return SHCA_HW_BAD_INDEX;
	eq = &hw->eqs[cmd->index];
	if (eq->nr_cqs)
		return SHCA_HW_BUSY;
	spin_lock_irq(&eq->lock);
	eq->ring = NULL;
	eq->armed = false;
	list_for_each_entry_safe(src, tmp, &eq->owed, node) {
		list_del_init(&src->node);
		src->owed = 0;
	}
	spin_unlock_irq(&eq->lock);
	cancel_work_sync(&eq->irq_work);
	return SHCA_HW_OK;
}

static int shca_hw_eq_show(struct seq_file *s, void *unused)
{
	struct shca_hw *hw = s->private;
	struct shca_hw_eq_state st;
	u32 i;

	seq_printf(s, "limit %u\n", READ_ONCE(hw->eq_limit));
	seq_puts(s, "eq cpu depth written acked owing\n");
	for (i = 0; hw->eqs && i < hw->caps->max_eq; i++) {
		shca_hw_eq_query(hw, i, &st);
		if (!st.depth && !st.written)
			continue;
		seq_printf(s, "%u %d %u %llu %llu %u\n", i, st.cpu, st.depth,
			   st.written, st.acked, st.owing);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_eq);

static int shca_hw_eq_limit_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct shca_hw *)data)->eq_limit);
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
 * shca_hw_eq_debugfs() - create eq and eq_limit, the event queues' mirror and their test limit
 * @hw: the device
 * @dir: the device's debugfs directory
 */
void shca_hw_eq_debugfs(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file("eq", 0400, dir, hw, &shca_hw_eq_fops);
	debugfs_create_file_unsafe("eq_limit", 0600, dir, hw,
				   &shca_hw_eq_limit_fops);
}
