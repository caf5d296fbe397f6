/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca hardware model: test controls, for KUnit only.
 *
 * Everything a test does to the model that no driver would: hold a race
 * window open, pause and single-step the execution units, move the QPN
 * cursor, inject a command failure, shrink the EQ, read the model's
 * tables and counts.  The model's own debugfs files (shca_hw_debugfs.c)
 * give userspace the same controls; the driver uses neither.  Outside the
 * model, the structures behind these handles are opaque.  The functions
 * are exported only when KUnit is enabled (EXPORT_SYMBOL_IF_KUNIT), for
 * the shca_kunit module, which must import EXPORTED_FOR_KUNIT_TESTING.
 */
#ifndef SHCA_HW_TEST_H
#define SHCA_HW_TEST_H

#include "shca_hw.h"

/* A race window, as shca_hw_window() hands it out: opaque. */
struct shca_hw_window;

/* shca_hw_window_state(): nobody armed the window. */
#define SHCA_HW_WIN_IDLE	0
/* shca_hw_window_state(): the next matching pass will stop. */
#define SHCA_HW_WIN_ARMED	1
/* shca_hw_window_state(): a pass is stopped in the window. */
#define SHCA_HW_WIN_HELD	2

/**
 * struct shca_hw_eq_state - what one event queue holds
 * @depth: EQEs it holds, or 0 before CREATE_EQ
 * @limit: the test limit at which it counts as full, or 0
 * @written: EQEs the device wrote to it
 * @acked: EQEs the driver acknowledged
 * @owing: objects with an event not yet written
 * @cpu: the CPU its vector is steered to, or -1 for any
 */
struct shca_hw_eq_state {
	u32 depth;
	u32 limit;
	u64 written;
	u64 acked;
	u32 owing;
	int cpu;
};

/* Race windows (shca_hw_window.c) */
struct shca_hw_window *shca_hw_window(struct shca_hw *hw,
				      enum shca_hw_window_id id);
void shca_hw_window_set_qpn(struct shca_hw_window *win, u32 qpn);
void shca_hw_window_set_delay(struct shca_hw_window *win, u32 delay_us);
void shca_hw_window_arm(struct shca_hw_window *win);
bool shca_hw_window_wait_held(struct shca_hw_window *win,
			      unsigned long timeout);
void shca_hw_window_release(struct shca_hw_window *win);
int shca_hw_window_state(struct shca_hw_window *win);
u64 shca_hw_window_passes(struct shca_hw_window *win);
int shca_hw_window_timeouts(struct shca_hw_window *win);

/* The execution units (shca_hw_sched.c) */
void shca_hw_engine_pause(struct shca_hw *hw, bool pause);
bool shca_hw_engine_paused(struct shca_hw *hw);
void shca_hw_engine_flush(struct shca_hw *hw);
void shca_hw_engine_single_step(struct shca_hw *hw, u32 steps);
u32 shca_hw_engine_steps_left(struct shca_hw *hw);

/* The lazy doorbells' backstop (shca_hw_doorbell.c) */
int shca_hw_set_backstop_us(struct shca_hw *hw, u32 us);
u32 shca_hw_backstop_armed(struct shca_hw *hw);

/*
 * The adaptive pollers (shca_hw_poll.c): their longest idle window, and
 * the default, off
 */
#define SHCA_HW_POLL_MAX_US	50
#define SHCA_HW_POLL_DEFAULT_US	0
int shca_hw_set_poll_us(struct shca_hw *hw, u32 us);
int shca_hw_set_poll_shun_us(struct shca_hw *hw, u32 us);
u32 shca_hw_poll_held(struct shca_hw *hw);

/* The QP context table (shca_hw_qp.c) */
int shca_hw_set_next_qpn(struct shca_hw *hw, u32 qpn);
u32 shca_hw_next_qpn(struct shca_hw *hw);
u32 shca_hw_qpn_entries(struct shca_hw *hw);
bool shca_hw_qp_turn_idle(struct shca_hw *hw, u32 qpn);

/* Commands and tables (shca_hw.c) */
int shca_hw_inject_cmd_failure(struct shca_hw *hw, int opcode);
int shca_hw_injected_cmd_failure(struct shca_hw *hw);
u64 shca_hw_cmd_count(struct shca_hw *hw, enum shca_hw_opcode opcode);
const struct shca_hw_caps *shca_hw_caps(struct shca_hw *hw);

/* The memory protection table (shca_hw_mem.c) */
struct shca_hw_mem;
struct shca_hw_mem *shca_hw_mem_hold(struct shca_hw *hw, u32 pdn, u32 rkey,
				     u64 addr, u64 len, u32 access);
void shca_hw_mem_unhold(struct shca_hw_mem *mem);

/* The device memory (shca_hw_dm.c) */
void *shca_hw_dm_ptr(struct shca_hw *hw, u64 addr, u64 len);

/* The fabric (shca_hw_fabric.c) */
u32 shca_hw_fabric_generation(void);

/* The multicast group table (shca_hw_mcast.c) */
u32 shca_hw_mcast_groups(struct shca_hw *hw);
u32 shca_hw_mcast_groups_of(struct shca_hw *hw, u32 qpn);

/* On-demand paging (shca_hw_odp.c) */
int shca_hw_odp_users(struct shca_hw *hw, u32 key);

/* The event queue (shca_hw_eq.c) */
void shca_hw_eq_set_limit(struct shca_hw *hw, u32 limit);
void shca_hw_eq_query(struct shca_hw *hw, u32 eqn,
		      struct shca_hw_eq_state *st);

#endif /* SHCA_HW_TEST_H */
