/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca hardware model: the interface the driver sees.
 *
 * A model instance is one HCA.  The driver creates it, issues commands to
 * it with shca_hw_exec() and destroys it.  Commands are synchronous.  Table
 * commands (capabilities, port, GID, P_Key, PD), RESIZE_CQ, QUERY_CQ and
 * QUERY_COUNTERS never sleep and may be issued from any context; commands
 * that create, modify or destroy queue objects or MPT entries may sleep.
 *
 * Doorbells are not commands: they never sleep, never fail, and only tell
 * the device that a producer index in a doorbell record moved.
 *
 * Like a driver's view of real firmware, the driver trusts nothing about
 * the model's internals: it sees only the command blocks, ring formats and
 * status codes of shca_hw_defs.h.
 */
#ifndef SHCA_HW_H
#define SHCA_HW_H

#include "shca_hw_defs.h"

struct shca_hw;

/**
 * typedef shca_hw_irq_handler_t - the driver's handler for the device's
 * interrupt vector
 * @ctx: what the driver registered with it
 *
 * It runs in process context, one invocation at a time per device, like a
 * threaded interrupt handler.  It drains the event queue and acknowledges
 * with shca_hw_eq_arm().
 */
typedef void (*shca_hw_irq_handler_t)(void *ctx);

struct shca_hw *shca_hw_create(void);
void shca_hw_destroy(struct shca_hw *hw);
enum shca_hw_status shca_hw_exec(struct shca_hw *hw, struct shca_hw_cmd *cmd);

void shca_hw_request_irq(struct shca_hw *hw, shca_hw_irq_handler_t handler,
			 void *ctx);
void shca_hw_free_irq(struct shca_hw *hw);

void shca_hw_ring_sq(struct shca_hw *hw, u32 qpn);
void shca_hw_ring_rq(struct shca_hw *hw, u32 qpn);
void shca_hw_arm_cq(struct shca_hw *hw, u32 cqn, u32 how);
void shca_hw_eq_arm(struct shca_hw *hw, u32 ci);

int shca_hw_inject_cmd_failure(struct shca_hw *hw, int opcode);
int shca_hw_injected_cmd_failure(struct shca_hw *hw);
u64 shca_hw_cmd_count(struct shca_hw *hw, enum shca_hw_opcode opcode);
const struct shca_hw_caps *shca_hw_caps(struct shca_hw *hw);
const char *shca_hw_opcode_name(enum shca_hw_opcode opcode);
const char *shca_hw_counter_name(enum shca_hw_counter counter);

#endif /* SHCA_HW_H */
