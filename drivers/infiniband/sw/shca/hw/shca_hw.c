// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: the device and its command processor.
 *
 * The device instance (power on and off), the port, GID and P_Key
 * tables, protection domains, the counters, and
 * shca_hw_exec(): it checks a command, counts it, fails it if a test
 * injected a failure, and hands it to the unit that owns its object, under
 * the lock its row of the command table (struct shca_hw_cmd_desc) names.
 * It is the top of the model's call graph: it calls every unit and no unit
 * calls it.
 *
 * Lock order: shca_hw.cmd_mutex is the outermost lock of the model (see
 * shca_hw_int.h for the whole order); shca_hw.lock, which guards the
 * port, GID and P_Key tables, is the innermost but the leaves: nothing
 * is taken under it, so a port event is raised (shca_hw_eq.lock) after
 * it is dropped.
 */
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/errno.h>
#include <linux/fault-inject.h>
#include <linux/idr.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/ratelimit.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

#include "shca_hw_int.h"

#define SHCA_HW_DEFAULT_PKEY	0xffff
#define SHCA_HW_NO_INJECTION	(-1)

/*
 * The table commands, shca_hw.c's own: the port, GID, P_Key and PD tables
 * and the counters, under shca_hw.lock with interrupts off.
 */
static enum shca_hw_status shca_hw_cmd_query_caps(struct shca_hw *hw,
						  struct shca_hw_cmd *cmd)
{
	lockdep_assert_held(&hw->lock);
	cmd->out.caps = *hw->caps;
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_cmd_query_port(struct shca_hw *hw,
						  struct shca_hw_cmd *cmd)
{
	lockdep_assert_held(&hw->lock);
	cmd->out.port = hw->port;
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_cmd_set_gid(struct shca_hw *hw,
					       struct shca_hw_cmd *cmd)
{
	const struct shca_hw_gid_entry *e = &cmd->in.gid;

	lockdep_assert_held(&hw->lock);
	if (cmd->index >= hw->caps->gid_tbl_len)
		return SHCA_HW_BAD_INDEX;
	if (e->valid && e->type != SHCA_HW_GID_ROCE_V1 &&
	    e->type != SHCA_HW_GID_ROCE_V2)
		return SHCA_HW_BAD_PARAM;
	if (e->valid)
		hw->gids[cmd->index] = *e;
	else
		memset(&hw->gids[cmd->index], 0, sizeof(*e));
	shca_hw_fabric_changed();
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_cmd_query_gid(struct shca_hw *hw,
						 struct shca_hw_cmd *cmd)
{
	lockdep_assert_held(&hw->lock);
	if (cmd->index >= hw->caps->gid_tbl_len)
		return SHCA_HW_BAD_INDEX;
	cmd->out.gid = hw->gids[cmd->index];
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_cmd_query_pkey(struct shca_hw *hw,
						  struct shca_hw_cmd *cmd)
{
	lockdep_assert_held(&hw->lock);
	if (cmd->index >= hw->caps->max_pkeys)
		return SHCA_HW_BAD_INDEX;
	cmd->out.pkey = hw->pkeys[cmd->index];
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_cmd_alloc_pd(struct shca_hw *hw,
						struct shca_hw_cmd *cmd)
{
	int pdn;

	lockdep_assert_held(&hw->lock);
	pdn = ida_alloc_range(&hw->pd_ida, 1, hw->caps->max_pd, GFP_ATOMIC);
	if (pdn < 0)
		return SHCA_HW_NO_RESOURCES;
	cmd->out.pdn = pdn;
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_cmd_dealloc_pd(struct shca_hw *hw,
						  struct shca_hw_cmd *cmd)
{
	lockdep_assert_held(&hw->lock);
	if (!cmd->in.pdn || cmd->in.pdn > hw->caps->max_pd)
		return SHCA_HW_BAD_INDEX;
	ida_free(&hw->pd_ida, cmd->in.pdn);
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_cmd_query_counters(struct shca_hw *hw,
						      struct shca_hw_cmd *cmd)
{
	int i, cpu;

	lockdep_assert_held(&hw->lock);
	memset(cmd->out.counters, 0, sizeof(cmd->out.counters));
	for_each_possible_cpu(cpu) {
		const struct shca_hw_counters *pc = per_cpu_ptr(hw->counters, cpu);

		for (i = 0; i < SHCA_CNT_NUM; i++)
			cmd->out.counters[i] += pc->c[i];
	}
	return SHCA_HW_OK;
}

/*
 * SET_PORT takes shca_hw.lock itself: the port event it may raise takes
 * shca_hw_eq.lock, which comes before it.  There is one port, so one
 * event source.
 */
static enum shca_hw_status shca_hw_cmd_set_port(struct shca_hw *hw,
						struct shca_hw_cmd *cmd)
{
	unsigned long flags;
	int event = -1;

	if (cmd->in.port.mtu < 256)
		return SHCA_HW_BAD_PARAM;
	spin_lock_irqsave(&hw->lock, flags);
	if (cmd->in.port.link_up != hw->port.link_up)
		event = cmd->in.port.link_up ? SHCA_EV_PORT_ACTIVE :
					       SHCA_EV_PORT_ERR;
	hw->port = cmd->in.port;
	shca_hw_fabric_changed();
	spin_unlock_irqrestore(&hw->lock, flags);
	if (event >= 0)
		shca_hw_eq_raise(hw, &hw->port_ev, event);
	return SHCA_HW_OK;
}

/**
 * enum shca_hw_cmd_regime - what shca_hw_exec() holds around a handler
 * @SHCA_HW_CMD_UNIT: nothing: the handler takes what it needs.  A destroy,
 *	a free or a multicast detach holds the command mutex only to change
 *	its table and waits out one object's accesses in flight with it
 *	dropped; MODIFY_QP and QUERY_QP hold one QP; the resizes copy in
 *	steps; the ODP commands come from the driver's page fault handler and
 *	MMU notifier, which may run under any command's allocation.
 * @SHCA_HW_CMD_MUTEX: the command mutex
 * @SHCA_HW_CMD_TABLES: shca_hw.lock, interrupts off: the port, GID, P_Key
 *	and PD tables and the counters; the handler never sleeps
 */
enum shca_hw_cmd_regime {
	SHCA_HW_CMD_UNIT,
	SHCA_HW_CMD_MUTEX,
	SHCA_HW_CMD_TABLES,
};

/* struct shca_hw_cmd_desc flags */
#define SHCA_HW_CMD_SLEEPS	BIT(0)	/* may sleep: never in atomic context */
#define SHCA_HW_CMD_PORT	BIT(1)	/* cmd->port must name the port */
#define SHCA_HW_CMD_RELEASES	BIT(2)	/* releases a resource */

/**
 * struct shca_hw_cmd_desc - what the command processor knows of an opcode
 * @name: the opcode's printable name (debugfs cmd_counts, the fault knobs)
 * @run: its handler, shca_hw_cmd_<opcode>() in the unit that owns its object
 * @regime: enum shca_hw_cmd_regime
 * @flags: SHCA_HW_CMD_*.  A command that releases a resource cannot fail by
 *	injection, on this device as on real ones: a driver that saw one fail
 *	would have no way back.
 *
 * Adding a command is adding its row here (Documentation/architecture.rst
 * has the checklist).
 */
struct shca_hw_cmd_desc {
	const char *name;
	enum shca_hw_status (*run)(struct shca_hw *hw, struct shca_hw_cmd *cmd);
	u8 regime;
	u8 flags;
};

static const struct shca_hw_cmd_desc shca_hw_cmds[SHCA_CMD_NUM_OPCODES] = {
	[SHCA_CMD_QUERY_CAPS] = { "QUERY_CAPS", shca_hw_cmd_query_caps,
		SHCA_HW_CMD_TABLES, 0 },
	[SHCA_CMD_QUERY_PORT] = { "QUERY_PORT", shca_hw_cmd_query_port,
		SHCA_HW_CMD_TABLES, SHCA_HW_CMD_PORT },
	[SHCA_CMD_SET_PORT] = { "SET_PORT", shca_hw_cmd_set_port,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_PORT },
	[SHCA_CMD_SET_GID] = { "SET_GID", shca_hw_cmd_set_gid,
		SHCA_HW_CMD_TABLES, SHCA_HW_CMD_PORT },
	[SHCA_CMD_QUERY_GID] = { "QUERY_GID", shca_hw_cmd_query_gid,
		SHCA_HW_CMD_TABLES, SHCA_HW_CMD_PORT },
	[SHCA_CMD_QUERY_PKEY] = { "QUERY_PKEY", shca_hw_cmd_query_pkey,
		SHCA_HW_CMD_TABLES, SHCA_HW_CMD_PORT },
	[SHCA_CMD_ALLOC_PD] = { "ALLOC_PD", shca_hw_cmd_alloc_pd,
		SHCA_HW_CMD_TABLES, 0 },
	[SHCA_CMD_DEALLOC_PD] = { "DEALLOC_PD", shca_hw_cmd_dealloc_pd,
		SHCA_HW_CMD_TABLES, SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_CREATE_EQ] = { "CREATE_EQ", shca_hw_cmd_create_eq,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_DESTROY_EQ] = { "DESTROY_EQ", shca_hw_cmd_destroy_eq,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_CREATE_CQ] = { "CREATE_CQ", shca_hw_cmd_create_cq,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_RESIZE_CQ] = { "RESIZE_CQ", shca_hw_cmd_resize_cq,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_MODIFY_CQ] = { "MODIFY_CQ", shca_hw_cmd_modify_cq,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_QUERY_CQ] = { "QUERY_CQ", shca_hw_cmd_query_cq,
		SHCA_HW_CMD_UNIT, 0 },
	[SHCA_CMD_DESTROY_CQ] = { "DESTROY_CQ", shca_hw_cmd_destroy_cq,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_CREATE_SRQ] = { "CREATE_SRQ", shca_hw_cmd_create_srq,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_MODIFY_SRQ] = { "MODIFY_SRQ", shca_hw_cmd_srq_attr,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_QUERY_SRQ] = { "QUERY_SRQ", shca_hw_cmd_srq_attr,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_DESTROY_SRQ] = { "DESTROY_SRQ", shca_hw_cmd_destroy_srq,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_CREATE_QP] = { "CREATE_QP", shca_hw_cmd_create_qp,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_MODIFY_QP] = { "MODIFY_QP", shca_hw_cmd_modify_qp,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_QUERY_QP] = { "QUERY_QP", shca_hw_cmd_query_qp,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_DESTROY_QP] = { "DESTROY_QP", shca_hw_cmd_destroy_qp,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_ALLOC_MPT] = { "ALLOC_MPT", shca_hw_cmd_alloc_mpt,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_WRITE_MPT] = { "WRITE_MPT", shca_hw_cmd_write_mpt,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_FREE_MPT] = { "FREE_MPT", shca_hw_cmd_free_mpt,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_QUERY_COUNTERS] = { "QUERY_COUNTERS", shca_hw_cmd_query_counters,
		SHCA_HW_CMD_TABLES, 0 },
	[SHCA_CMD_ATTACH_MCAST] = { "ATTACH_MCAST", shca_hw_cmd_mcast,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_DETACH_MCAST] = { "DETACH_MCAST", shca_hw_cmd_mcast,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_RESIZE_SRQ] = { "RESIZE_SRQ", shca_hw_cmd_resize_srq,
		SHCA_HW_CMD_UNIT, 0 },
	[SHCA_CMD_REREG_MPT] = { "REREG_MPT", shca_hw_cmd_rereg_mpt,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_ALLOC_MW] = { "ALLOC_MW", shca_hw_cmd_alloc_mw,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_ALLOC_DM] = { "ALLOC_DM", shca_hw_cmd_alloc_dm,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_FREE_DM] = { "FREE_DM", shca_hw_cmd_free_dm,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_MAP_ODP] = { "MAP_ODP", shca_hw_cmd_map_odp,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_INVALIDATE_ODP] = { "INVALIDATE_ODP", shca_hw_cmd_invalidate_odp,
		SHCA_HW_CMD_UNIT, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
	[SHCA_CMD_ALLOC_XRCD] = { "ALLOC_XRCD", shca_hw_cmd_alloc_xrcd,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS },
	[SHCA_CMD_DEALLOC_XRCD] = { "DEALLOC_XRCD", shca_hw_cmd_dealloc_xrcd,
		SHCA_HW_CMD_MUTEX, SHCA_HW_CMD_SLEEPS | SHCA_HW_CMD_RELEASES },
};

static const char * const shca_hw_counter_names[SHCA_CNT_NUM] = {
	[SHCA_CNT_DOORBELLS]		= "doorbells",
	[SHCA_CNT_DOORBELL_RUNS]	= "doorbell_runs",
	[SHCA_CNT_WQES]			= "send_wqes",
	[SHCA_CNT_RECV_WQES]		= "recv_wqes",
	[SHCA_CNT_CQES]			= "cqes_written",
	[SHCA_CNT_EQES]			= "eqes_written",
	[SHCA_CNT_INTERRUPTS]		= "interrupts",
	[SHCA_CNT_TX_BYTES]		= "tx_bytes",
	[SHCA_CNT_RX_BYTES]		= "rx_bytes",
	[SHCA_CNT_FLUSHED]		= "flushed_wqes",
	[SHCA_CNT_LOC_PROT_ERR]		= "err_local_protection",
	[SHCA_CNT_REM_ACCESS_ERR]	= "err_remote_access",
	[SHCA_CNT_LEN_ERR]		= "err_length",
	[SHCA_CNT_RNR_NAK]		= "rnr_naks",
	[SHCA_CNT_RNR_EXC]		= "err_rnr_retry_exceeded",
	[SHCA_CNT_RETRY_EXC]		= "err_retry_exceeded",
	[SHCA_CNT_DROPPED]		= "dropped_packets",
	[SHCA_CNT_CQ_OVERFLOW]		= "err_cq_overflow",
	[SHCA_CNT_EQ_OVERFLOW]		= "err_eq_overflow",
	[SHCA_CNT_MCAST_TX]		= "mcast_tx_packets",
	[SHCA_CNT_MCAST_RX]		= "mcast_rx_packets",
	[SHCA_CNT_ODP_FAULTS]		= "odp_page_faults",
	[SHCA_CNT_ODP_INVALIDATIONS]	= "odp_invalidations",
	[SHCA_CNT_DB_RECHECKS]		= "doorbell_rechecks",
	[SHCA_CNT_CQ_DBREC_ARMS]	= "cq_dbrec_arms",
	[SHCA_CNT_ROUTE_LOOKUPS]	= "route_lookups",
	[SHCA_CNT_RX_REJECTED]	= "rx_rejected",
	[SHCA_CNT_BACKSTOP_ARMS]	= "backstop_arms",
	[SHCA_CNT_BACKSTOP_KICKS]	= "backstop_kicks",
	[SHCA_CNT_POLL_ADOPTS]		= "poll_adopts",
	[SHCA_CNT_POLL_TURNS]		= "poll_turns",
	[SHCA_CNT_DESTROY_SENDS]	= "destroy_sends",
};

/**
 * shca_hw_counter_name() - printable name of a device counter
 * @counter: the counter
 *
 * Return: the name, or "unknown".
 */
const char *shca_hw_counter_name(enum shca_hw_counter counter)
{
	if ((unsigned int)counter >= SHCA_CNT_NUM)
		return "unknown";
	return shca_hw_counter_names[counter];
}

/**
 * shca_hw_opcode_name() - printable name of a command opcode
 * @opcode: the opcode
 *
 * Return: the name, or "UNKNOWN" for an opcode the device does not know.
 */
const char *shca_hw_opcode_name(enum shca_hw_opcode opcode)
{
	if ((unsigned int)opcode >= SHCA_CMD_NUM_OPCODES ||
	    !shca_hw_cmds[opcode].name)
		return "UNKNOWN";
	return shca_hw_cmds[opcode].name;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_opcode_name);

/**
 * shca_hw_create() - power on one modeled HCA
 *
 * Return: the new instance, or NULL when memory runs out.
 */
struct shca_hw *shca_hw_create(void)
{
	struct shca_hw *hw;
	int i;

	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw)
		return NULL;
	shca_hw_caps_init(&hw->own_caps);
	hw->caps = &hw->own_caps;
	spin_lock_init(&hw->lock);
	mutex_init(&hw->cmd_mutex);
	ida_init(&hw->pd_ida);
	atomic_set(&hw->inject_opcode, SHCA_HW_NO_INJECTION);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	/* Off (probability 0) until a test sets it up in debugfs. */
	hw->fail_cmd = (struct fault_attr)FAULT_ATTR_INITIALIZER;
	ratelimit_state_init(&hw->fail_cmd.ratelimit_state, 0,
			     DEFAULT_RATELIMIT_BURST);
#endif
	hw->port.mtu = 1500;
	INIT_LIST_HEAD(&hw->fabric_node);
	xa_init_flags(&hw->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&hw->cqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&hw->srqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&hw->xrcds, XA_FLAGS_ALLOC1);
	xa_init_flags(&hw->mpts, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	/* Here, not in shca_hw_dm_init(): a failed create still frees it. */
	xa_init(&hw->dm_ranges);
	hw->next_qpn = SHCA_HW_FIRST_QPN;
	shca_hw_windows_init(hw);
	shca_hw_doorbell_init(hw);

	hw->gids = kcalloc(hw->caps->gid_tbl_len, sizeof(*hw->gids),
			   GFP_KERNEL);
	hw->pkeys = kcalloc(hw->caps->max_pkeys, sizeof(*hw->pkeys),
			    GFP_KERNEL);
	hw->counters = alloc_percpu(struct shca_hw_counters);
	if (!hw->gids || !hw->pkeys || !hw->counters || shca_hw_eq_init(hw) ||
	    shca_hw_mcast_init(hw) || shca_hw_dm_init(hw) ||
	    shca_hw_sched_init(hw, shca_hw_req_turn) || shca_hw_poll_init(hw)) {
		shca_hw_destroy(hw);
		return NULL;
	}
	for (i = 0; i < hw->caps->max_pkeys; i++)
		hw->pkeys[i] = SHCA_HW_DEFAULT_PKEY;
	shca_hw_fabric_add(hw);
	return hw;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_create);

/**
 * shca_hw_destroy() - power off a modeled HCA and free it
 * @hw: the instance; NULL is allowed
 */
void shca_hw_destroy(struct shca_hw *hw)
{
	if (!hw)
		return;
	shca_hw_fabric_del(hw);
	shca_hw_qp_fini(hw);
	shca_hw_srq_fini(hw);
	shca_hw_xrcd_fini(hw);
	shca_hw_cq_fini(hw);
	shca_hw_eq_fini(hw);
	shca_hw_mpt_fini(hw);
	shca_hw_dm_fini(hw);
	shca_hw_mcast_fini(hw);
	shca_hw_doorbell_fini(hw);
	shca_hw_poll_fini(hw);
	shca_hw_sched_fini(hw);
	shca_hw_windows_fini(hw);
	xa_destroy(&hw->qps);
	xa_destroy(&hw->cqs);
	xa_destroy(&hw->srqs);
	xa_destroy(&hw->xrcds);
	xa_destroy(&hw->mpts);
	ida_destroy(&hw->pd_ida);
	mutex_destroy(&hw->cmd_mutex);
	free_percpu(hw->counters);
	kfree(hw->pkeys);
	kfree(hw->gids);
	kfree(hw);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_destroy);

/* Whether a command may fail by injection (struct shca_hw_cmd_desc). */
static bool shca_hw_cmd_may_fail(enum shca_hw_opcode opcode)
{
	return !(shca_hw_cmds[opcode].flags & SHCA_HW_CMD_RELEASES);
}

/*
 * A random failure of the fault_attr behind debugfs fail_cmd/.  It is off
 * until a test gives it a probability: until then it does not even call
 * should_fail(), which would count a task's fail-nth, meant for the
 * allocations the fault_alloc tests fail, against commands.
 */
static bool shca_hw_fail_cmd(struct shca_hw *hw, enum shca_hw_opcode opcode)
{
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	if (!READ_ONCE(hw->fail_cmd.probability) ||
	    !shca_hw_cmd_may_fail(opcode))
		return false;
	return should_fail(&hw->fail_cmd, 1);
#else
	return false;
#endif
}

/**
 * shca_hw_inject_cmd_failure() - make the next command of one opcode fail
 * @hw: the device
 * @opcode: the opcode, or -1 to cancel a pending injection
 *
 * The injection is one-shot: the command that consumes it completes with
 * SHCA_HW_INJECTED and later commands run normally.  Commands that release
 * a resource cannot fail, on this device as on real ones, so they cannot
 * be armed.
 *
 * Return: 0, or -EINVAL for an opcode that cannot be armed.
 */
int shca_hw_inject_cmd_failure(struct shca_hw *hw, int opcode)
{
	if (opcode == SHCA_HW_NO_INJECTION) {
		atomic_set(&hw->inject_opcode, opcode);
		return 0;
	}
	if (opcode < 0 || opcode >= SHCA_CMD_NUM_OPCODES ||
	    !shca_hw_cmd_may_fail(opcode))
		return -EINVAL;
	atomic_set(&hw->inject_opcode, opcode);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_inject_cmd_failure);

/**
 * shca_hw_injected_cmd_failure() - the opcode armed to fail next
 * @hw: the device
 *
 * Return: the opcode, or -1 when no injection is pending.
 */
int shca_hw_injected_cmd_failure(struct shca_hw *hw)
{
	return atomic_read(&hw->inject_opcode);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_injected_cmd_failure);

/**
 * shca_hw_cmd_count() - how many commands of one opcode the device ran
 * @hw: the device
 * @opcode: the opcode
 *
 * Return: the count, failed commands included.
 */
u64 shca_hw_cmd_count(struct shca_hw *hw, enum shca_hw_opcode opcode)
{
	if ((unsigned int)opcode >= SHCA_CMD_NUM_OPCODES)
		return 0;
	return atomic64_read(&hw->cmd_count[opcode]);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_cmd_count);

/**
 * shca_hw_exec() - run one device command to completion
 * @hw: the device
 * @cmd: the command; its result block is written on success
 *
 * Looks the opcode up in the command table, counts it, fails it if a test
 * armed a failure, checks the port it names if it names one, and runs its
 * handler under the regime the table gives it.
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_exec(struct shca_hw *hw, struct shca_hw_cmd *cmd)
{
	const struct shca_hw_cmd_desc *desc;
	enum shca_hw_status status;
	unsigned long flags;

	if ((unsigned int)cmd->opcode >= SHCA_CMD_NUM_OPCODES ||
	    !shca_hw_cmds[cmd->opcode].run)
		return SHCA_HW_BAD_OPCODE;
	desc = &shca_hw_cmds[cmd->opcode];
	if (desc->flags & SHCA_HW_CMD_SLEEPS)
		might_sleep();
	atomic64_inc(&hw->cmd_count[cmd->opcode]);

	if (atomic_cmpxchg(&hw->inject_opcode, cmd->opcode,
			   SHCA_HW_NO_INJECTION) == cmd->opcode)
		return SHCA_HW_INJECTED;
	if (shca_hw_fail_cmd(hw, cmd->opcode))
		return SHCA_HW_INJECTED;
	if ((desc->flags & SHCA_HW_CMD_PORT) &&
	    (cmd->port < 1 || cmd->port > SHCA_HW_NUM_PORTS))
		return SHCA_HW_BAD_PARAM;

	switch (desc->regime) {
	case SHCA_HW_CMD_MUTEX:
		mutex_lock(&hw->cmd_mutex);
		status = desc->run(hw, cmd);
		mutex_unlock(&hw->cmd_mutex);
		return status;
	case SHCA_HW_CMD_TABLES:
		spin_lock_irqsave(&hw->lock, flags);
		status = desc->run(hw, cmd);
		spin_unlock_irqrestore(&hw->lock, flags);
		return status;
	default:
		return desc->run(hw, cmd);
	}
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_exec);

static int shca_hw_cmd_counts_show(struct seq_file *s, void *unused)
{
	struct shca_hw *hw = s->private;
	int op;

	for (op = 0; op < SHCA_CMD_NUM_OPCODES; op++)
		seq_printf(s, "%2d %-12s %llu\n", op, shca_hw_opcode_name(op),
			   shca_hw_cmd_count(hw, op));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_hw_cmd_counts);

static int shca_hw_fail_cmd_once_get(void *data, u64 *val)
{
	*val = (u64)(s64)shca_hw_injected_cmd_failure(data);
	return 0;
}

static int shca_hw_fail_cmd_once_set(void *data, u64 val)
{
	s64 op = (s64)val;

	/* Signed: "-1" cancels. */
	if (op < INT_MIN || op > INT_MAX)
		return -EINVAL;
	return shca_hw_inject_cmd_failure(data, op);
}
DEFINE_DEBUGFS_ATTRIBUTE_SIGNED(shca_hw_fail_cmd_once_fops,
				shca_hw_fail_cmd_once_get,
				shca_hw_fail_cmd_once_set, "%lld\n");

/**
 * shca_hw_debugfs_init() - create the model's debugfs files
 * @hw: the device
 * @dir: the directory to put them in; whoever made it removes it, and
 *	them with it, before the device powers off
 *
 * Each unit makes its own files, in netdevsim's manner; the command
 * processor's are cmd_counts (the commands run, by opcode),
 * fail_cmd_once (a one-shot failure, by opcode) and, with
 * CONFIG_FAULT_INJECTION_DEBUG_FS, fail_cmd/ (random failures).  The
 * units': caps (shca_hw_caps.c), engine_paused and engine_step
 * (shca_hw_sched.c), next_qpn (shca_hw_qp.c), eq and eq_limit
 * (shca_hw_eq.c), mcast (shca_hw_mcast.c), windows/ (shca_hw_window.c).
 * Documentation/debugfs.rst describes each.  No file takes a lock of its
 * own: each takes those of the functions it calls.
 */
void shca_hw_debugfs_init(struct shca_hw *hw, struct dentry *dir)
{
	debugfs_create_file("cmd_counts", 0400, dir, hw,
			    &shca_hw_cmd_counts_fops);
	debugfs_create_file_unsafe("fail_cmd_once", 0600, dir, hw,
				   &shca_hw_fail_cmd_once_fops);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	fault_create_debugfs_attr("fail_cmd", dir, &hw->fail_cmd);
#endif
	shca_hw_caps_debugfs(hw, dir);
	shca_hw_sched_debugfs(hw, dir);
	shca_hw_qp_debugfs(hw, dir);
	shca_hw_doorbell_debugfs(hw, dir);
	shca_hw_poll_debugfs(hw, dir);
	shca_hw_eq_debugfs(hw, dir);
	shca_hw_mcast_debugfs(hw, dir);
	shca_hw_window_debugfs(hw, dir);
}
