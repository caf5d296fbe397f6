// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca hardware model: device instance, capability table, port, GID and
 * P_Key tables, and the command processor.
 *
 * Lock order: hw->lock is a leaf.  No model lock is held across a call
 * back into the driver.
 */
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/idr.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "shca_hw.h"

/* The one table of what the device can do. */
static const struct shca_hw_caps shca_hw_default_caps = {
	.max_mr_size			= 1ULL << 40,
	.page_size_cap			= 0xfffff000ULL,
	.max_qp				= 1 << 16,
	.max_qp_wr			= 1 << 14,
	.max_send_sge			= 16,
	.max_recv_sge			= 16,
	.max_sge_rd			= 16,
	.max_cq				= 1 << 16,
	.max_cqe			= (1 << 20) - 1,
	.max_mr				= 1 << 16,
	.max_pd				= 1 << 16,
	.max_qp_rd_atom			= 16,
	.max_qp_init_rd_atom		= 16,
	.max_srq			= 1 << 12,
	.max_srq_wr			= 1 << 14,
	.max_srq_sge			= 16,
	.max_ah				= 1 << 16,
	.max_fast_reg_page_list_len	= 512,
	.max_inline_data		= 256,
	.max_msg_sz			= 1U << 31,
	.max_pkeys			= 1,
	.gid_tbl_len			= 64,
	.max_mtu			= 4096,
	.local_ca_ack_delay		= 15,
};

#define SHCA_HW_DEFAULT_PKEY	0xffff
#define SHCA_HW_NO_INJECTION	(-1)

/**
 * struct shca_hw - one modeled HCA
 * @caps: the capability table the device reports
 * @lock: serialises commands; protects @port, @gids and @pkeys
 * @port: the port's link, as the PHY last reported it
 * @gids: the GID table, @caps->gid_tbl_len entries
 * @pkeys: the P_Key table, @caps->max_pkeys entries
 * @pd_ida: allocator of protection domain numbers
 * @inject_opcode: opcode whose next command fails, or SHCA_HW_NO_INJECTION
 * @cmd_count: commands executed, by opcode
 */
struct shca_hw {
	const struct shca_hw_caps *caps;
	spinlock_t lock;	/* serialises commands, guards the tables */
	struct shca_hw_port_attr port;
	struct shca_hw_gid_entry *gids;
	u16 *pkeys;
	struct ida pd_ida;
	atomic_t inject_opcode;
	atomic64_t cmd_count[SHCA_CMD_NUM_OPCODES];
};

static const char * const shca_hw_opcode_names[SHCA_CMD_NUM_OPCODES] = {
	[SHCA_CMD_QUERY_CAPS]	= "QUERY_CAPS",
	[SHCA_CMD_QUERY_PORT]	= "QUERY_PORT",
	[SHCA_CMD_SET_PORT]	= "SET_PORT",
	[SHCA_CMD_SET_GID]	= "SET_GID",
	[SHCA_CMD_QUERY_GID]	= "QUERY_GID",
	[SHCA_CMD_QUERY_PKEY]	= "QUERY_PKEY",
	[SHCA_CMD_ALLOC_PD]	= "ALLOC_PD",
	[SHCA_CMD_DEALLOC_PD]	= "DEALLOC_PD",
};

/**
 * shca_hw_opcode_name() - printable name of a command opcode
 * @opcode: the opcode
 *
 * Return: the name, or "UNKNOWN" for an opcode the device does not know.
 */
const char *shca_hw_opcode_name(enum shca_hw_opcode opcode)
{
	if ((unsigned int)opcode >= SHCA_CMD_NUM_OPCODES)
		return "UNKNOWN";
	return shca_hw_opcode_names[opcode];
}

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
	hw->caps = &shca_hw_default_caps;
	spin_lock_init(&hw->lock);
	ida_init(&hw->pd_ida);
	atomic_set(&hw->inject_opcode, SHCA_HW_NO_INJECTION);
	hw->port.mtu = 1500;

	hw->gids = kcalloc(hw->caps->gid_tbl_len, sizeof(*hw->gids),
			   GFP_KERNEL);
	hw->pkeys = kcalloc(hw->caps->max_pkeys, sizeof(*hw->pkeys),
			    GFP_KERNEL);
	if (!hw->gids || !hw->pkeys) {
		shca_hw_destroy(hw);
		return NULL;
	}
	for (i = 0; i < hw->caps->max_pkeys; i++)
		hw->pkeys[i] = SHCA_HW_DEFAULT_PKEY;
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
	ida_destroy(&hw->pd_ida);
	kfree(hw->pkeys);
	kfree(hw->gids);
	kfree(hw);
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_destroy);

/**
 * shca_hw_caps() - the capability table of a device
 * @hw: the device
 *
 * The table is constant for the life of the device; debugfs mirrors it.
 *
 * Return: the table.
 */
const struct shca_hw_caps *shca_hw_caps(struct shca_hw *hw)
{
	return hw->caps;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_caps);

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
	    opcode == SHCA_CMD_DEALLOC_PD)
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

static enum shca_hw_status shca_hw_check_port(u32 port)
{
	return port >= 1 && port <= SHCA_HW_NUM_PORTS ?
		SHCA_HW_OK : SHCA_HW_BAD_PARAM;
}

static enum shca_hw_status shca_hw_set_gid(struct shca_hw *hw,
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
	return SHCA_HW_OK;
}

static enum shca_hw_status shca_hw_dispatch(struct shca_hw *hw,
					    struct shca_hw_cmd *cmd)
{
	int pdn;

	lockdep_assert_held(&hw->lock);
	switch (cmd->opcode) {
	case SHCA_CMD_QUERY_CAPS:
		cmd->out.caps = *hw->caps;
		return SHCA_HW_OK;
	case SHCA_CMD_QUERY_PORT:
		cmd->out.port = hw->port;
		return SHCA_HW_OK;
	case SHCA_CMD_SET_PORT:
		if (cmd->in.port.mtu < 256)
			return SHCA_HW_BAD_PARAM;
		hw->port = cmd->in.port;
		return SHCA_HW_OK;
	case SHCA_CMD_SET_GID:
		return shca_hw_set_gid(hw, cmd);
	case SHCA_CMD_QUERY_GID:
		if (cmd->index >= hw->caps->gid_tbl_len)
			return SHCA_HW_BAD_INDEX;
		cmd->out.gid = hw->gids[cmd->index];
		return SHCA_HW_OK;
	case SHCA_CMD_QUERY_PKEY:
		if (cmd->index >= hw->caps->max_pkeys)
			return SHCA_HW_BAD_INDEX;
		cmd->out.pkey = hw->pkeys[cmd->index];
		return SHCA_HW_OK;
	case SHCA_CMD_ALLOC_PD:
		pdn = ida_alloc_range(&hw->pd_ida, 1, hw->caps->max_pd,
				      GFP_ATOMIC);
		if (pdn < 0)
			return SHCA_HW_NO_RESOURCES;
		cmd->out.pdn = pdn;
		return SHCA_HW_OK;
	case SHCA_CMD_DEALLOC_PD:
		if (!cmd->in.pdn || cmd->in.pdn > hw->caps->max_pd)
			return SHCA_HW_BAD_INDEX;
		ida_free(&hw->pd_ida, cmd->in.pdn);
		return SHCA_HW_OK;
	default:
		return SHCA_HW_BAD_OPCODE;
	}
}

static bool shca_hw_needs_port(enum shca_hw_opcode opcode)
{
	switch (opcode) {
	case SHCA_CMD_QUERY_PORT:
	case SHCA_CMD_SET_PORT:
	case SHCA_CMD_SET_GID:
	case SHCA_CMD_QUERY_GID:
	case SHCA_CMD_QUERY_PKEY:
		return true;
	default:
		return false;
	}
}

/**
 * shca_hw_exec() - run one device command to completion
 * @hw: the device
 * @cmd: the command; its result block is written on success
 *
 * Return: the completion status.
 */
enum shca_hw_status shca_hw_exec(struct shca_hw *hw, struct shca_hw_cmd *cmd)
{
	enum shca_hw_status status;
	unsigned long flags;

	if ((unsigned int)cmd->opcode >= SHCA_CMD_NUM_OPCODES)
		return SHCA_HW_BAD_OPCODE;
	atomic64_inc(&hw->cmd_count[cmd->opcode]);

	if (atomic_cmpxchg(&hw->inject_opcode, cmd->opcode,
			   SHCA_HW_NO_INJECTION) == cmd->opcode)
		return SHCA_HW_INJECTED;

	if (shca_hw_needs_port(cmd->opcode)) {
		status = shca_hw_check_port(cmd->port);
		if (status != SHCA_HW_OK)
			return status;
	}

	spin_lock_irqsave(&hw->lock, flags);
	status = shca_hw_dispatch(hw, cmd);
	spin_unlock_irqrestore(&hw->lock, flags);
	return status;
}
EXPORT_SYMBOL_IF_KUNIT(shca_hw_exec);
