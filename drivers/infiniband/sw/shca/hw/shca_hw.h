/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca hardware model: the interface the driver sees.
 *
 * A model instance is one HCA.  The driver creates it, issues commands to
 * it with shca_hw_exec() and destroys it.  Commands are synchronous and may
 * be issued from any context: they never sleep, and the model serialises
 * them itself.  Like a driver's view of real firmware, the driver trusts nothing
 * about the model's internals: it sees only the command blocks and the
 * status codes of shca_hw_defs.h.
 */
#ifndef SHCA_HW_H
#define SHCA_HW_H

#include "shca_hw_defs.h"

struct shca_hw;

struct shca_hw *shca_hw_create(void);
void shca_hw_destroy(struct shca_hw *hw);
enum shca_hw_status shca_hw_exec(struct shca_hw *hw, struct shca_hw_cmd *cmd);

int shca_hw_inject_cmd_failure(struct shca_hw *hw, int opcode);
int shca_hw_injected_cmd_failure(struct shca_hw *hw);
u64 shca_hw_cmd_count(struct shca_hw *hw, enum shca_hw_opcode opcode);
const struct shca_hw_caps *shca_hw_caps(struct shca_hw *hw);
const char *shca_hw_opcode_name(enum shca_hw_opcode opcode);

#endif /* SHCA_HW_H */
