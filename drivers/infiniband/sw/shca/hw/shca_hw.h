/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca hardware model: the interface the driver sees.
 *
 * A model instance is one HCA.  The driver creates it, issues commands to
 * it with shca_hw_exec() and destroys it.  Commands are synchronous.  Table
 * commands (capabilities, port, GID, P_Key, PD), RESIZE_CQ, QUERY_CQ and
 * QUERY_COUNTERS never sleep and may be issued from any context; commands
 * that create, modify or destroy queue objects or MPT entries, and
 * ATTACH_MCAST and DETACH_MCAST, may sleep.
 *
 * Doorbells are not commands: they never sleep, never fail, and only tell
 * the device that a producer index in a doorbell record moved.
 *
 * Like a driver's view of real firmware, the driver trusts nothing about
 * the model's internals: it sees only the command blocks, ring formats and
 * status codes of shca_hw_defs.h.  The model's test controls are its own:
 * it creates their debugfs files in a directory the driver hands it
 * (shca_hw_debugfs_init()), and KUnit reaches them through shca_hw_test.h.
 */
#ifndef SHCA_HW_H
#define SHCA_HW_H

#include <linux/jump_label.h>
#include <linux/types.h>

#include "shca_hw_defs.h"

struct dentry;
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
 * @SHCA_WIN_MCAST_DELIVER: a UD send to a multicast group has collected
 *	the group's members and not yet looked this member up to deliver
 *	its copy; passed by the sending device, for the member's QPN
 * @SHCA_WIN_DB_IDLE: a turn found its send queue empty and will stop;
 *	it has not yet cleared the doorbell record's sq_running, so a
 *	driver posting now sees it running and rings no doorbell
 * @SHCA_WIN_DB_RECHECK: the stopping turn has cleared sq_running and
 *	issued its barrier, and has not yet read the producer index again;
 *	a driver posting now rings
 * @SHCA_WIN_CQ_ARM: the device has published a CQE and issued its
 *	barrier, and has not yet read the doorbell record's arm word; a
 *	driver arming now polls that CQE (for the CQE's QPN)
 * @SHCA_WIN_ROUTE: a QP's turn has its message's source, from the QP's
 *	cached route or found afresh, and has not yet looked up the device
 *	its destination GID is on; a route that changes now is still seen
 *	(for the sending QP's QPN)
 * @SHCA_WIN_ODP_DEFER: a responder raised a page fault to the requester,
 *	which holds nothing of the message now and has not yet answered it;
 *	an invalidation of either side's memory does not wait for it (for
 *	the sending QP's QPN)
 * @SHCA_WIN_CQ_RESIZE: RESIZE_CQ has copied a chunk of the CQ's live
 *	CQEs into the new ring and let the CQ go, interrupts on; the old
 *	ring is still the device's, and CQEs written now are copied in a
 *	later chunk (for the CQ's number)
 * @SHCA_WIN_SRQ_RESIZE: RESIZE_SRQ has copied a chunk of the SRQ's posted
 *	WQEs into the new memory and holds nothing; the SRQ is still in the
 *	old memory, where the driver posts and the responder takes, and what
 *	is posted now is copied later (for the SRQ's number)
 * @SHCA_WIN_BACKSTOP_IDLE: the lazy doorbells' backstop has taken a QP
 *	off its armed list and not yet cleared the doorbell record's backstop
 *	word; a driver posting now leaves the doorbell unrung
 * @SHCA_WIN_BACKSTOP_RECHECK: the backstop has cleared the word and issued
 *	its barrier, and has not yet read the producer index; a driver
 *	posting now rings
 * @SHCA_WIN_POLL_IDLE: an adaptive poller has let a QP go and not yet
 *	cleared the doorbell record's sq_running; a driver posting now rings
 *	no doorbell, and the poller must find the WQE
 * @SHCA_WIN_POLL_RECHECK: the poller has cleared sq_running and issued
 *	its barrier, and has not yet read the producer index again; a
 *	driver posting now rings
 * @SHCA_WIN_NUM: number of windows
 */
enum shca_hw_window_id {
	SHCA_WIN_CQE_PUBLISH,
	SHCA_WIN_FENCE_SWEEP,
	SHCA_WIN_MEM_ACCESS,
	SHCA_WIN_MCAST_DELIVER,
	SHCA_WIN_DB_IDLE,
	SHCA_WIN_DB_RECHECK,
	SHCA_WIN_CQ_ARM,
	SHCA_WIN_ROUTE,
	SHCA_WIN_ODP_DEFER,
	SHCA_WIN_CQ_RESIZE,
	SHCA_WIN_SRQ_RESIZE,
	SHCA_WIN_BACKSTOP_IDLE,
	SHCA_WIN_BACKSTOP_RECHECK,
	SHCA_WIN_POLL_IDLE,
	SHCA_WIN_POLL_RECHECK,
	SHCA_WIN_NUM,
};

/**
 * typedef shca_hw_irq_handler_t - the driver's handler for one of the
 * device's interrupt vectors
 * @ctx: what the driver registered with it
 *
 * It runs in process context, one invocation at a time per vector, like a
 * threaded interrupt handler, on the CPU the vector is steered to while
 * that CPU is online; the handlers of different vectors run in parallel.
 * It drains its vector's event queue and acknowledges with
 * shca_hw_eq_arm().
 */
typedef void (*shca_hw_irq_handler_t)(void *ctx);

/**
 * typedef shca_hw_odp_fault_fn - the driver's page fault handler
 * @ctx: what the driver registered with it
 * @fault: the fault: an ODP entry's pages an access needs and finds absent
 *
 * The device calls it from the execution unit whose access faulted, in
 * process context with no model lock held, and that access waits for it
 * (the QP stalls meanwhile).  The handler answers by making the pages
 * present with MAP_ODP, then returning 0; or by returning an error, and
 * the access fails: the WQE completes with a local protection error for
 * the requester's own memory, a remote access error for the responder's.
 * Handlers of several QPs' faults may run at once.
 *
 * Return: 0 when the pages were mapped, or a negative errno.
 */
typedef int (*shca_hw_odp_fault_fn)(void *ctx,
				    const struct shca_hw_odp_fault *fault);

struct shca_hw *shca_hw_create(void);
void shca_hw_destroy(struct shca_hw *hw);
enum shca_hw_status shca_hw_exec(struct shca_hw *hw, struct shca_hw_cmd *cmd);

int shca_hw_request_irq(struct shca_hw *hw, u32 eqn, int cpu,
			shca_hw_irq_handler_t handler, void *ctx);
void shca_hw_free_irq(struct shca_hw *hw, u32 eqn);
void shca_hw_set_odp_handler(struct shca_hw *hw, shca_hw_odp_fault_fn fn,
			     void *ctx);

void shca_hw_ring_sq(struct shca_hw *hw, u32 qpn);
void shca_hw_ring_sq_run(struct shca_hw *hw, u32 qpn);
void shca_hw_ring_rq(struct shca_hw *hw, u32 qpn);
void shca_hw_arm_cq(struct shca_hw *hw, u32 cqn, u32 how);
u64 shca_hw_read_clock(struct shca_hw *hw);
unsigned long shca_hw_dm_pfn(struct shca_hw *hw, u64 addr);
void shca_hw_eq_arm(struct shca_hw *hw, u32 eqn, u32 ci);
u32 shca_hw_eq_log_depth(const struct shca_hw_caps *caps);

const char *shca_hw_opcode_name(enum shca_hw_opcode opcode);
const char *shca_hw_counter_name(enum shca_hw_counter counter);

DECLARE_STATIC_KEY_FALSE(shca_hw_windows_watched);
void __shca_hw_window_pass(struct shca_hw *hw, enum shca_hw_window_id id,
			   u32 qpn);

/**
 * shca_hw_window_pass() - go through a race window
 * @hw: the device
 * @id: the window
 * @qpn: the QP the pass is for
 *
 * Sleeps the window's delay, and stops here if the window is armed, until
 * the test releases it.  May sleep; the caller holds no spinlock.  While
 * no test watches any window, a pass is a patched-out branch.
 */
static inline void shca_hw_window_pass(struct shca_hw *hw,
				       enum shca_hw_window_id id, u32 qpn)
{
	if (static_branch_unlikely(&shca_hw_windows_watched))
		__shca_hw_window_pass(hw, id, qpn);
}

void shca_hw_debugfs_init(struct shca_hw *hw, struct dentry *dir);

#endif /* SHCA_HW_H */
