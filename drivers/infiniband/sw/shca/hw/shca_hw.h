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

#include <linux/atomic.h>
#include <linux/wait.h>

#include "shca_hw_defs.h"

struct shca_hw;

/**
 * enum shca_hw_window_id - the race windows a test can widen or hold open
 * @SHCA_WIN_CQE_PUBLISH: the device has written a CQE's body but not yet
 *	its owner byte; other writers to the CQ wait meanwhile, so CQEs
 *	are still published in ring order
 * @SHCA_WIN_FENCE_SWEEP: a QP being destroyed or reset is fenced and its
 *	CQEs are not yet swept; the driver passes through this one
 * @SHCA_WIN_MEM_ACCESS: the responder of an RDMA WRITE holds the target MR
 *	and the source, checked, and has not yet copied: an access in flight,
 *	which FREE_MPT and DESTROY_QP wait out
 * @SHCA_WIN_NUM: number of windows
 */
enum shca_hw_window_id {
	SHCA_WIN_CQE_PUBLISH,
	SHCA_WIN_FENCE_SWEEP,
	SHCA_WIN_MEM_ACCESS,
	SHCA_WIN_NUM,
};

/**
 * struct shca_hw_window - a race window a test can widen or hold open
 * @delay_us: every pass through the window sleeps this long (at most
 *	100 ms)
 * @qpn: only passes for this QPN are delayed, held and counted; 0 for all
 * @passes: passes counted
 * @timeouts: holds nobody released, given up after a while
 * @state: SHCA_HW_WIN_IDLE, SHCA_HW_WIN_ARMED or SHCA_HW_WIN_HELD
 * @wait: woken when @state changes
 *
 * Arming is one-shot: the next matching pass holds until it is released,
 * then the window is idle again.
 */
struct shca_hw_window {
	u32 delay_us;
	u32 qpn;
	atomic64_t passes;
	atomic_t timeouts;
	atomic_t state;
	wait_queue_head_t wait;
};

#define SHCA_HW_WIN_IDLE	0
#define SHCA_HW_WIN_ARMED	1
#define SHCA_HW_WIN_HELD	2

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

/**
 * struct shca_hw_eq_state - what the event queue holds, for debugfs
 * @depth: EQEs it holds, or 0 before CREATE_EQ
 * @limit: the test limit at which it counts as full, or 0
 * @written: EQEs the device wrote to it
 * @acked: EQEs the driver acknowledged
 * @owing: objects with an event not yet written
 */
struct shca_hw_eq_state {
	u32 depth;
	u32 limit;
	u64 written;
	u64 acked;
	u32 owing;
};

struct shca_hw *shca_hw_create(void);
void shca_hw_destroy(struct shca_hw *hw);
enum shca_hw_status shca_hw_exec(struct shca_hw *hw, struct shca_hw_cmd *cmd);

void shca_hw_request_irq(struct shca_hw *hw, shca_hw_irq_handler_t handler,
			 void *ctx);
void shca_hw_free_irq(struct shca_hw *hw);

void shca_hw_ring_sq(struct shca_hw *hw, u32 qpn);
void shca_hw_ring_sq_run(struct shca_hw *hw, u32 qpn);
void shca_hw_ring_rq(struct shca_hw *hw, u32 qpn);
void shca_hw_arm_cq(struct shca_hw *hw, u32 cqn, u32 how);
void shca_hw_eq_arm(struct shca_hw *hw, u32 ci);
u32 shca_hw_eq_log_depth(const struct shca_hw_caps *caps);
void shca_hw_eq_set_limit(struct shca_hw *hw, u32 limit);
void shca_hw_eq_query(struct shca_hw *hw, struct shca_hw_eq_state *st);

int shca_hw_inject_cmd_failure(struct shca_hw *hw, int opcode);
int shca_hw_injected_cmd_failure(struct shca_hw *hw);
u64 shca_hw_cmd_count(struct shca_hw *hw, enum shca_hw_opcode opcode);
const struct shca_hw_caps *shca_hw_caps(struct shca_hw *hw);
const char *shca_hw_opcode_name(enum shca_hw_opcode opcode);
const char *shca_hw_counter_name(enum shca_hw_counter counter);

struct shca_hw_window *shca_hw_window(struct shca_hw *hw,
				      enum shca_hw_window_id id);
void shca_hw_window_pass(struct shca_hw_window *win, u32 qpn);
void shca_hw_window_arm(struct shca_hw_window *win);
bool shca_hw_window_wait_held(struct shca_hw_window *win,
			      unsigned long timeout);
void shca_hw_window_release(struct shca_hw_window *win);

void shca_hw_engine_pause(struct shca_hw *hw, bool pause);
bool shca_hw_engine_paused(struct shca_hw *hw);
void shca_hw_engine_single_step(struct shca_hw *hw, u32 steps);
u32 shca_hw_engine_steps_left(struct shca_hw *hw);
int shca_hw_set_next_qpn(struct shca_hw *hw, u32 qpn);
u32 shca_hw_next_qpn(struct shca_hw *hw);
u32 shca_hw_qpn_entries(struct shca_hw *hw);

#endif /* SHCA_HW_H */
