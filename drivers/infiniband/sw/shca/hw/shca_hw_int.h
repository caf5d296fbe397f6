/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca hardware model: the device's insides, the interfaces its units
 * (one file each, Documentation/model.rst has the map) offer each other.
 * Only the model's own files include this; the driver sees shca_hw.h and
 * shca_hw_defs.h, KUnit shca_hw_test.h.
 *
 * The lock order is the DOC section below.
 */

/**
 * DOC: Lock order of the model
 *
 * Outermost first, with the unit (``hw/shca_hw_<unit>.c``) that owns each
 * lock::
 *
 *   shca_hw.cmd_mutex        shca_hw.c   object commands; never held by
 *                                        the engine, nor while a command
 *                                        waits out one object's accesses
 *                                        in flight (a destroy, a modify,
 *                                        a multicast detach)
 *   shca_hw_qp.modify_mutex  qp          one MODIFY_QP of a QP at a time;
 *                                        never taken under cmd_mutex, nor
 *                                        are the two mutexes below it
 *   shca_hw_qp.turn_mutex    sched, req  whoever runs one QP's turn;
 *                                        never two at once
 *   shca_hw_qp.resp_mutex    resp        one QP's responder; never two
 *                                        at once
 *   shca_hw_cq.write_mutex   cq          the one CQE writer of a CQ;
 *                                        never two at once
 *   shca_fabric_lock (read)  fabric      the list of devices
 *   shca_hw_qp.lock          qp          one QP context
 *   shca_hw.mcast_lock       mcast       the multicast group table; a
 *                                        leaf, taken under the fabric
 *                                        lock or (the responder of a
 *                                        multicast copy) a QP's lock
 *   shca_hw_srq.lock         srq         one SRQ context
 *   shca_hw_cq.lock          cq          one CQ context and its ring
 *   shca_hw_eq.lock          eq          one event queue, the EQ state
 *                                        of the objects whose events go
 *                                        to it; never two at once
 *   shca_hw.lock             shca_hw.c   port, GID and P_Key tables
 *   shca_hw_mpt.lock,        mem, resp   leaves
 *   shca_atomic_lock,
 *   shca_hw.backstop_lock    doorbell
 *   shca_hw_poller.lock      poll
 *
 * Spinlocks are all taken with interrupts off: doorbells and polling may
 * come from any context. CQEs are written with no spinlock held, as the
 * CQE publish window may sleep. No model lock is held across a call into
 * the driver: the interrupt handler runs from the model's vector work
 * with no lock held. Each file's header says where its own locks stand.
 */
#ifndef SHCA_HW_INT_H
#define SHCA_HW_INT_H

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <linux/fault-inject.h>

#include "shca_hw.h"
#include "shca_hw_test.h"

/*
 * The completion event, as an owed-event bit of a CQ; affiliated and port
 * events use their enum shca_hw_event value.
 */
#define SHCA_HW_EV_COMP		15
#define SHCA_HW_EV_SLOTS	2

/**
 * struct shca_hw_evsrc - what one object has in the EQ, and still owes it
 * @node: on its EQ's &shca_hw_eq.owed while @owed is not 0
 * @eqn: the EQ its events go to: its completion vector for a CQ, EQ 0
 *	for every other object; fixed for the object's life
 * @type: enum shca_hw_eqe_type of the object's affiliated events
 * @obj: the object's number
 * @gen: its generation, for a QP
 * @queued: bit per slot: the slot's EQE may still be unacknowledged
 * @owed: bit per event kind: raised, but not yet written to the EQ
 * @at: the EQ index of each slot's last EQE
 *
 * A CQ has two slots, its completion event and its error event; every
 * other object has one.  An object never has more than one EQE per slot
 * unacknowledged; an event raised meanwhile, or while the EQ is full, is
 * owed and written once the driver acknowledges EQ entries.  All of it but
 * @eqn is under the lock of EQ @eqn.
 */
struct shca_hw_evsrc {
	struct list_head node;
	u16 eqn;
	u8 type;
	u32 obj;
	u32 gen;
	u16 queued;
	u16 owed;
	u64 at[SHCA_HW_EV_SLOTS];
};

/**
 * struct shca_hw_window - a race window a test can widen or hold open
 * @delay_us: every pass through the window sleeps this long (at most
 *	100 ms)
 * @qpn: only passes for this QPN are delayed, held and counted; 0 for all
 * @passes: passes counted while a window is watched
 * @watched: bit 0 set once a test or a debugfs write touched the window;
 *	each set bit holds one count of shca_hw_windows_watched
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
	unsigned long watched;
	atomic_t timeouts;
	atomic_t state;
	wait_queue_head_t wait;
};

struct dentry;
struct seq_file;
struct shca_hw_qp;

/**
 * enum shca_hw_turn_by - who runs a QP's turn
 * @SHCA_HW_TURN_UNIT: an execution unit, for a doorbell, a state change
 *	or a retry timer
 * @SHCA_HW_TURN_CALLER: a doorbell's caller, in its own context
 * @SHCA_HW_TURN_POLLER: the adaptive poller that holds the QP
 *	(shca_hw_poll.c): sq_running stays set when the turn stops
 * @SHCA_HW_TURN_DESTROY: a destroy sending what a datagram QP posted
 *	(shca_hw_qp_send_off()): the turn stops as a poller's does, handing
 *	the QP to nobody
 */
enum shca_hw_turn_by {
	SHCA_HW_TURN_UNIT,
	SHCA_HW_TURN_CALLER,
	SHCA_HW_TURN_POLLER,
	SHCA_HW_TURN_DESTROY,
};

/**
 * typedef shca_hw_turn_fn - what a QP's turn runs
 * @qp: the QP, its turn_mutex held
 * @by: who runs it
 *
 * Return: true if work is left: the turn goes back in the queue.
 */
typedef bool (*shca_hw_turn_fn)(struct shca_hw_qp *qp,
				enum shca_hw_turn_by by);

/*
 * The MPT table's mark on a type 2 window bound to a QP (XA_MARK_0 is the
 * allocator's).
 */
#define SHCA_HW_MPT_QP_MARK	XA_MARK_1

/**
 * struct shca_hw_mpt - a memory protection table entry
 * @ref: lookups in flight, plus one while the entry is in the table
 * @rcu: frees the entry after a grace period: shca_hw_mpt_get() looks it
 *	up under RCU, with no lock
 * @lock: guards the translation fields below
 * @index: the entry's index, key >> 8
 * @type: enum shca_hw_mpt_type
 * @fast_reg: a fast-registration entry (SHCA_MPT_F_FAST_REG): a peer's
 *	SEND_WITH_INV may invalidate it
 * @pdn: protection domain
 * @valid: the translation may be used
 * @key: the full current key
 * @access: SHCA_ACCESS_*
 * @iova: first address, for PBL entries
 * @length: bytes, for PBL entries
 * @pbl: page list, for PBL entries
 * @npages: pages in @pbl
 * @page_shift: log2 of the page size
 * @max_pages: the longest page list the entry takes
 * @trans: which of @trans_users counts the accesses that take the
 *	translation now (0 or 1); REREG_MPT flips it when it rewrites it
 * @trans_users: accesses in flight by translation: the current one's,
 *	and the one a REREG_MPT replaced, which it waits out alone
 * @mws: for a region, the memory windows bound to it; each holds a
 *	reference.  FREE_MPT and REREG_MPT refuse a region with windows.
 * @dying: FREE_MPT is releasing the entry: no window binds to it
 * @mw_type: for a window, enum shca_hw_mw_type
 * @qpn: for a bound type 2 window, the QP it is bound to; destroying
 *	the QP invalidates the window
 * @mr: for a bound window, the region it is a range of, referenced; a
 *	window's @iova and @length are its own addresses: its bind's address
 *	in @mr's address space, or 0 for a zero-based window
 * @mr_addr: for a bound window, where its range starts in @mr's address
 *	space
 * @dm: for DM entries, the allocation the entry maps, once written
 * @dm_kaddr: for DM entries, the kernel address of the entry's address 0
 * @odp: for ODP entries, the paging state (shca_hw_odp.c)
 */
struct shca_hw_mpt {
	refcount_t ref;
	struct rcu_head rcu;
	spinlock_t lock;	/* guards the translation */
	u32 index;
	u32 type;
	bool fast_reg;
	u32 pdn;
	bool valid;
	u32 key;
	u32 access;
	u64 iova;
	u64 length;
	const u64 *pbl;
	u32 npages;
	u32 page_shift;
	u32 max_pages;
	u32 trans;
	atomic_t trans_users[2];
	u32 mws;
	bool dying;
	u32 mw_type;
	u32 qpn;
	struct shca_hw_mpt *mr;
	u64 mr_addr;
	struct shca_hw_dm_range *dm;
	u8 *dm_kaddr;
	struct shca_hw_odp *odp;
};

/**
 * struct shca_hw_dm_range - one allocation of the device memory
 * @start: its first allocation unit
 * @units: allocation units it takes
 * @length: bytes, as ALLOC_DM asked
 * @mrs: MPT entries mapping it; FREE_DM is refused while not zero
 */
struct shca_hw_dm_range {
	u32 start;
	u32 units;
	u64 length;
	atomic_t mrs;
};

/**
 * struct shca_hw_cq - a completion queue context
 * @hw: the device
 * @cqn: its number
 * @ref: users in flight, plus one while it is in the table
 * @rcu: frees it after a grace period: shca_hw_cq_get() looks it up
 *	under RCU, with no lock
 * @lock: guards the ring, the indices and the arm state
 * @write_mutex: one CQE writer at a time, from body to owner byte
 * @ring: CQEs, as the driver gave them
 * @log_depth: log2 of the number of CQEs
 * @dbrec: the driver's doorbell record
 * @pi: producer index
 * @armed: 0, SHCA_CQ_ARM_NEXT or SHCA_CQ_ARM_SOLICITED
 * @arm_seen: the doorbell record's arm word as last taken
 * @pending: CQEs written since arming, under moderation
 * @moder_count: CQEs per event
 * @moder_period: microseconds an event may wait
 * @moder_timer: fires a moderated event after @moder_period
 * @overflowed: the CQ overflowed; it takes no more CQEs
 * @resizing: a RESIZE_CQ is copying the ring; a second one is refused
 * @timestamps: its CQEs carry the device clock (SHCA_HW_CQ_F_TIMESTAMP)
 * @assoc: QPs and SRQs pointing at the CQ
 * @ev: its completion and error events in the EQ
 */
struct shca_hw_cq {
	struct shca_hw *hw;
	u32 cqn;
	refcount_t ref;
	struct rcu_head rcu;
	spinlock_t lock;	/* guards ring, indices, arming */
	struct mutex write_mutex; /* one CQE writer: in-order publication */
	struct shca_hw_cqe *ring;
	u32 log_depth;
	struct shca_hw_cq_dbrec *dbrec;
	u32 pi;
	u32 armed;
	u32 arm_seen;
	u32 pending;
	u16 moder_count;
	u16 moder_period;
	struct timer_list moder_timer;
	bool overflowed;
	bool resizing;
	bool timestamps;
	atomic_t assoc;
	struct shca_hw_evsrc ev;
};

/**
 * struct shca_hw_xrcd - an XRC domain
 * @xrcdn: its number
 * @users: XRC SRQs and XRC target QPs in it; DEALLOC_XRCD is refused
 *	while not zero, so the entry outlives every one of them
 */
struct shca_hw_xrcd {
	u32 xrcdn;
	atomic_t users;
};

/**
 * struct shca_hw_srq - a shared receive queue context
 * @hw: the device
 * @srqn: its number
 * @ref: users in flight, plus one while it is in the table
 * @lock: guards the consumer index, the limit, and the memory (@slots,
 *	@index_ring, @log_depth, @dbrec), which RESIZE_SRQ's switch changes
 * @pdn: protection domain
 * @slots: WQE slots
 * @index_ring: slot numbers, as posted
 * @log_depth: log2 of the depth
 * @dbrec: the driver's doorbell record
 * @ci: consumer index
 * @limit: armed limit, or 0
 * @max_sge: SGEs per WQE
 * @assoc: QPs attached
 * @ev: its limit event in the EQ
 * @xrcd: the XRC domain of an XRC SRQ, or NULL
 * @cq: the CQ an XRC SRQ's receive completions go to, or NULL
 */
struct shca_hw_srq {
	struct shca_hw *hw;
	u32 srqn;
	refcount_t ref;
	/* guards ci, limit, and the memory RESIZE_SRQ's switch changes */
	spinlock_t lock;
	u32 pdn;
	struct shca_hw_recv_wqe *slots;
	u32 *index_ring;
	u32 log_depth;
	struct shca_hw_srq_dbrec *dbrec;
	u32 ci;
	u32 limit;
	u32 max_sge;
	atomic_t assoc;
	struct shca_hw_evsrc ev;
	struct shca_hw_xrcd *xrcd;
	struct shca_hw_cq *cq;
};

/**
 * struct shca_hw_wq - one work queue of a QP, as the device tracks it
 * @ring: entries
 * @log_depth: log2 of the depth
 * @ci: consumer index
 */
struct shca_hw_wq {
	void *ring;
	u32 log_depth;
	u32 ci;
};

/* Where a message comes from, as the receiver's headers will say. */
struct shca_hw_src {
	u8 gid[SHCA_HW_GID_LEN];
	u8 net_type;
	u32 mtu;
	u64 segment;
};

/**
 * struct shca_hw_route - where a QP's messages went last, kept by its turn
 * @gen: the fabric generation it was found under; 0 for none
 * @sgid_index: the source GID index it was found for
 * @dgid: the destination GID it was found for
 * @routable: the source can send: its port is up and the GID valid
 * @dst_known: @dst has been looked up
 * @src: the source, when @routable
 * @dst: the device on @src.segment whose port is up and whose GID table
 *	holds @dgid, or NULL for none; not referenced, so only good under
 *	rcu_read_lock() while @gen is the fabric's
 *
 * Only the QP's turn reads or writes it (its turn_mutex is held).
 */
struct shca_hw_route {
	u32 gen;
	u32 sgid_index;
	u8 dgid[SHCA_HW_GID_LEN];
	bool routable;
	bool dst_known;
	struct shca_hw_src src;
	struct shca_hw *dst;
};

/**
 * struct shca_hw_qp - a queue pair context
 * @hw: the device
 * @qpn: its number
 * @gen: generation: the device's count of QPs created, this one included
 * @type: enum shca_hw_qp_type
 * @pdn: protection domain; 0 for an XRC target QP, whose messages use
 *	the protection domain of the XRC SRQ they name
 * @xrcd: the XRC domain of an XRC target QP, or NULL
 * @ref: users in flight, plus one while it is in the table
 * @rcu: frees it after a grace period: shca_hw_qp_get() looks it up
 *	under RCU, with no lock
 * @done: completed when the last reference goes
 * @modify_mutex: serialises MODIFY_QP on this QP; a modify to RESET
 *	fences the QP under it, so other QPs' commands never wait for it
 * @turn_mutex: held by whoever runs the QP's turn: its engine work, or a
 *	process whose doorbell runs it (shca_hw_ring_sq_run())
 * @resp_mutex: serialises the responder: one inbound message at a time
 * @lock: guards the state, attributes and queue indices
 * @attr: the modifiable attributes
 * @sq: the send queue
 * @rq: the receive queue, unless @srq
 * @dbrec: the driver's doorbell record
 * @scq: send CQ
 * @rcq: receive CQ
 * @srq: SRQ, or NULL
 * @max_send_sge: SGEs per send WQE
 * @max_recv_sge: SGEs per receive WQE
 * @max_inline: inline bytes per send WQE
 * @sig_all: every send WQE completes
 * @user: a process writes the WQEs (no REG_MR or LOCAL_INV)
 * @fenced: the engine may not touch the QP any more
 * @rnr_left: RNR retries left for the WQE at the head of the SQ
 * @retry_left: transport retries left for it
 * @sqd_notified: the SQ drained event for this SQD visit went out
 * @last_wqe_sent: the last WQE reached event went out
 * @comm_est_sent: the communication established event for this RTR visit
 *	went out
 * @engine: the QP's turn on an execution unit (shca_hw_sched.c)
 * @backstop_node: in the device's armed list while its lazy doorbells'
 *	backstop is armed, or in a sweep's list while one serves it
 *	(shca_hw_doorbell.c); empty otherwise
 * @poller: the adaptive poller that holds it, or NULL (shca_hw_poll.c)
 * @poll_node: in @poller's watch list while it has one
 * @ev: its affiliated events in the EQ
 * @route: the route its last message took, for its turn's next one
 */
struct shca_hw_qp {
	struct shca_hw *hw;
	u32 qpn;
	u32 gen;
	u32 type;
	u32 pdn;
	struct shca_hw_xrcd *xrcd;
	refcount_t ref;
	struct rcu_head rcu;
	struct completion done;
	struct mutex modify_mutex;	/* one modify of the QP at a time */
	struct mutex turn_mutex;	/* one runner of the QP's turn */
	struct mutex resp_mutex;	/* one inbound message at a time */
	spinlock_t lock;		/* guards state, attr, indices */
	struct shca_hw_qp_attr attr;
	struct shca_hw_wq sq;
	struct shca_hw_wq rq;
	struct shca_hw_qp_dbrec *dbrec;
	struct shca_hw_cq *scq;
	struct shca_hw_cq *rcq;
	struct shca_hw_srq *srq;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	bool sig_all;
	bool user;
	bool fenced;
	u8 rnr_left;
	u8 retry_left;
	bool sqd_notified;
	bool last_wqe_sent;
	bool comm_est_sent;
	struct delayed_work engine;
	struct list_head backstop_node;	/* in shca_hw.backstop_armed or
					 * a sweep's list; backstop_lock
					 */
	struct shca_hw_poller *poller;	/* set and cleared under turn_mutex
					 * and the poller's lock
					 */
	struct list_head poll_node;	/* in the poller's watch list;
					 * the poller's lock
					 */
	struct shca_hw_evsrc ev;
	struct shca_hw_route route;
};

/**
 * struct shca_hw_mcg_member - a QP attached to a multicast group
 * @qpn: its QPN
 * @gen: the generation of the QP that attached
 */
struct shca_hw_mcg_member {
	u32 qpn;
	u32 gen;
};

/**
 * struct shca_hw_mcast_target - a member a multicast copy is for
 * @hw: the member's device, as the fabric found it; not referenced, so
 *	only shca_hw_fabric_mcast_member() may use it
 * @m: the member, as the group table had it then
 */
struct shca_hw_mcast_target {
	struct shca_hw *hw;
	struct shca_hw_mcg_member m;
};

/**
 * struct shca_hw_mcg - one multicast group table entry
 * @mgid: the group's GID
 * @nr: QPs attached; 0 for a free entry
 * @members: the attached QPs, @nr of them in order of attachment; room
 *	for the max_mcast_qp_attach capability
 */
struct shca_hw_mcg {
	u8 mgid[SHCA_HW_GID_LEN];
	u32 nr;
	struct shca_hw_mcg_member *members;
};

/**
 * struct shca_hw_counters - one CPU's share of the device counters
 * @c: by enum shca_hw_counter
 */
struct shca_hw_counters {
	u64 c[SHCA_CNT_NUM];
};

/**
 * struct shca_hw_eq - one event queue and its modeled MSI-X vector
 * @hw: the device
 * @eqn: its number, which is also its vector's
 * @lock: guards @ring to @armed, @cpu, @handler and @ctx, and the EQ
 *	state of the objects whose events come here
 * @ring: EQE ring, or NULL before CREATE_EQ
 * @log_depth: log2 of its depth
 * @start: @pi when the EQ was created: its ring index 0
 * @pi: producer index, counted over the device's life
 * @ci: consumer index, as the driver last acknowledged
 * @owed: objects owing events, by &shca_hw_evsrc.node
 * @armed: the next EQE raises the interrupt
 * @nr_cqs: CQs whose completion vector this is; under shca_hw.cmd_mutex
 * @cpu: the CPU the vector's interrupt is steered to, while it is online
 * @handler: the driver's handler for the vector, or NULL; read by the
 *	vector's work without @lock
 * @ctx: its argument
 * @irq_work: runs @handler: the vector firing
 */
struct shca_hw_eq {
	struct shca_hw *hw;
	u32 eqn;
	spinlock_t lock;	/* the EQ, its vector and its objects' state */
	struct shca_hw_eqe *ring;
	u32 log_depth;
	u64 start;
	u64 pi;
	u64 ci;
	struct list_head owed;
	bool armed;
	u32 nr_cqs;
	int cpu;
	shca_hw_irq_handler_t handler;
	void *ctx;
	struct work_struct irq_work;
};

/**
 * struct shca_hw - one modeled HCA
 * @caps: the capability table the device reports: @own_caps
 * @own_caps: the table, as the module parameters set it at power-on
 * @lock: guards @port, @gids and @pkeys
 * @cmd_mutex: serialises object commands
 * @port: the port's link, as the PHY last reported it
 * @gids: the GID table, @caps->gid_tbl_len entries
 * @pkeys: the P_Key table, @caps->max_pkeys entries
 * @pd_ida: allocator of protection domain numbers
 * @inject_opcode: opcode whose next command fails, or -1
 * @fail_cmd: random command failures (debugfs fail_cmd/), when the
 *	kernel has CONFIG_FAULT_INJECTION_DEBUG_FS
 * @cmd_count: commands executed, by opcode
 * @counters: device counters, by enum shca_hw_counter, per CPU: the data
 *	path counts with no shared cache line, and a query sums them
 * @fabric_node: entry in the fabric's device list
 * @mcast_lock: guards @mcgs, their members and @mcast_attached
 * @mcgs: the multicast group table, @caps->max_mcast_grp entries
 * @mcast_attached: QP attachments over all of @mcgs
 * @qps: the QP context table, by QPN
 * @next_qpn: where the cyclic QPN search starts
 * @obj_gen: generation of the QP, CQ or SRQ created last; it names no
 *	number, so the device keeps no state for a number no object holds;
 *	under @cmd_mutex
 * @nr_qps: QPs in @qps
 * @cqs: the CQ context table
 * @next_cqn: where the cyclic CQN search starts
 * @srqs: the SRQ context table
 * @xrcds: the XRC domain table, under @cmd_mutex
 * @mpts: the memory protection table, by index
 * @next_mpt: where the cyclic MPT index search starts
 * @mpt_tag: the key tag the next allocated entry starts with
 * @engine_wq: the execution units
 * @turn: what a QP's turn runs on them: the requester
 * @engine_paused: the execution units take no work, except @engine_steps
 * @engine_steps: WQEs (or flushes) they may still run while paused
 * @windows: the race windows tests hold open, by enum shca_hw_window_id
 * @backstop_lock: guards @backstop_armed and the QPs' backstop_node
 * @backstop_armed: the QPs whose lazy doorbells' backstop is armed
 * @backstop_timer: runs while @backstop_armed is not empty; queues
 *	@backstop_work when the period is over
 * @backstop_work: the sweep, on the execution units' workqueue
 * @backstop_us: the backstop's period in microseconds; 0 arms none
 * @poll_wq: where the adaptive pollers run, one work item per CPU
 * @pollers: the pollers, by CPU (nr_cpu_ids of them)
 * @poll_us: the longest a poller polls with no work; 0 turns them off
 * @poll_shun_us: how long a poller that found its CPU busy is passed over
 * @eqs: the event queues and their vectors, @caps->max_eq of them, or
 *	NULL if the device could not allocate them
 * @eq_limit: a test knob: each EQ counts as full at this many
 *	unacknowledged EQEs; 0 for its depth
 * @port_ev: the port's events, in EQ 0
 * @odp_handler: the driver's page fault handler (shca_hw_odp.c)
 * @odp_ctx: its argument
 * @dm: the device memory, @caps->max_dm_size bytes, page-aligned and
 *	physically contiguous, so that a process can map it
 * @dm_map: its allocation units in use, one bit each; under @cmd_mutex
 * @dm_ranges: its allocations, by first unit; changed under @cmd_mutex
 */
struct shca_hw {
	const struct shca_hw_caps *caps;
	struct shca_hw_caps own_caps;
	spinlock_t lock;	/* guards port, gids, pkeys */
	struct mutex cmd_mutex;	/* serialises object commands */
	struct shca_hw_port_attr port;
	struct shca_hw_gid_entry *gids;
	u16 *pkeys;
	struct ida pd_ida;
	atomic_t inject_opcode;
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	struct fault_attr fail_cmd;
#endif
	atomic64_t cmd_count[SHCA_CMD_NUM_OPCODES];
	struct shca_hw_counters __percpu *counters;
	struct list_head fabric_node;
	spinlock_t mcast_lock;	/* guards the multicast group table */
	struct shca_hw_mcg *mcgs;
	u32 mcast_attached;

	struct xarray qps;
	u32 next_qpn;
	u32 obj_gen;
	u32 nr_qps;
	struct xarray cqs;
	u32 next_cqn;
	struct xarray srqs;
	struct xarray xrcds;
	struct xarray mpts;
	u32 next_mpt;
	u8 mpt_tag;
	struct workqueue_struct *engine_wq;
	shca_hw_turn_fn turn;
	bool engine_paused;
	atomic_t engine_steps;
	struct shca_hw_window windows[SHCA_WIN_NUM];
	spinlock_t backstop_lock;	/* guards the armed list */
	struct list_head backstop_armed;
	struct hrtimer backstop_timer;
	struct work_struct backstop_work;
	u32 backstop_us;
	struct workqueue_struct *poll_wq;
	struct shca_hw_poller *pollers;
	u32 poll_us;
	u32 poll_shun_us;

	struct shca_hw_eq *eqs;
	u32 eq_limit;
	struct shca_hw_evsrc port_ev;
	shca_hw_odp_fault_fn odp_handler;
	void *odp_ctx;
	u8 *dm;
	unsigned long *dm_map;
	struct xarray dm_ranges;
};

/*
 * A QP being freed leaves the armed list of the lazy doorbells' backstop
 * (shca_hw_doorbell.c).  Its holds are gone, so no sweep has it.
 */
static inline void shca_hw_backstop_forget(struct shca_hw_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->hw->backstop_lock, flags);
	list_del_init(&qp->backstop_node);
	spin_unlock_irqrestore(&qp->hw->backstop_lock, flags);
}

/**
 * struct shca_hw_poller - an adaptive poller: the execution unit of one CPU
 *	that keeps serving QPs whose send queues went empty
 * @hw: the device
 * @cpu: the CPU its work item is queued on
 * @work: its run, on @hw->poll_wq
 * @lock: guards @watch, @nr and the watched QPs' poll_node
 * @watch: the QPs it holds, with sq_running set (shca_hw_qp.poll_node)
 * @nr: how many
 * @window_ns: how long it polls with no work before it lets its QPs go;
 *	adapts between SHCA_HW_POLL_MIN_NS and the device's poll_us; only
 *	the poller's run uses it
 * @shun_until: it found its CPU busy: no turn hands it a QP before this
 *	time (ktime_get_ns()) unless it holds one already
 * @shun_us: how long it was passed over the last time, 0 once it served
 *	work; only the poller's run uses it
 */
struct shca_hw_poller {
	struct shca_hw *hw;
	int cpu;
	struct work_struct work;
	spinlock_t lock;	/* guards the watch list */
	struct list_head watch;
	u32 nr;
	u64 window_ns;
	u64 shun_until;
	u32 shun_us;
};

/*
 * A QP being fenced leaves its poller, under its turn_mutex, so that no
 * poller runs its turn again (shca_hw_poll.c).  The driver's next post
 * after a fence rings: modify out of RESET clears sq_running.
 */
static inline void shca_hw_poll_forget(struct shca_hw_qp *qp)
{
	struct shca_hw_poller *p = qp->poller;
	unsigned long flags;

	lockdep_assert_held(&qp->turn_mutex);
	if (!p)
		return;
	spin_lock_irqsave(&p->lock, flags);
	list_del_init(&qp->poll_node);
	p->nr--;
	qp->poller = NULL;
	spin_unlock_irqrestore(&p->lock, flags);
}

static inline void shca_hw_count(struct shca_hw *hw, enum shca_hw_counter c)
{
	this_cpu_inc(hw->counters->c[c]);
}

static inline void shca_hw_count_add(struct shca_hw *hw,
				     enum shca_hw_counter c, u64 n)
{
	this_cpu_add(hw->counters->c[c], n);
}

/*
 * A new object's generation: never 0, never one an earlier QP, CQ or SRQ
 * of the device had (not until 2^32 creates), so that its events, which
 * carry it, are told from those of an earlier holder of its number.
 */
static inline u32 shca_hw_new_gen(struct shca_hw *hw)
{
	lockdep_assert_held(&hw->cmd_mutex);
	if (!++hw->obj_gen)
		++hw->obj_gen;
	return hw->obj_gen;
}

static inline bool shca_hw_log_depth_ok(u32 log_depth)
{
	return log_depth && log_depth <= SHCA_HW_MAX_LOG_DEPTH;
}

/*
 * The WQEs a ring of 2^@log_depth holds from the device's consumer index
 * @ci up to the producer index @pi the driver wrote.  An index behind the
 * consumer, or more than a ring ahead of it, names no WQE the device could
 * take: it counts as none, so a flush and the turn that looks for one
 * agree that there is nothing to do.
 */
static inline u32 shca_hw_wq_posted(u32 pi, u32 ci, u32 log_depth)
{
	return pi - ci <= (1U << log_depth) ? pi - ci : 0;
}

/* The longest period of the lazy doorbells' backstop, and the default. */
#define SHCA_HW_BACKSTOP_MAX_US	100

/* shca_hw_doorbell.c: the doorbells and the lazy doorbells' backstop */
void shca_hw_doorbell_init(struct shca_hw *hw);
void shca_hw_doorbell_fini(struct shca_hw *hw);
void shca_hw_doorbell_debugfs(struct shca_hw *hw, struct dentry *dir);

/*
 * The adaptive pollers: the longest idle window (and the default), the
 * shortest, how long a poller that found its CPU busy is passed over (the
 * default, and the most), and how many times that a poller found busy
 * again and again is passed over at most.
 */
#define SHCA_HW_POLL_MIN_NS	2000
#define SHCA_HW_POLL_SHUN_US	1000
#define SHCA_HW_POLL_MAX_SHUN_US	1000000
#define SHCA_HW_POLL_SHUN_MAX_X		128

/* shca_hw_poll.c: the adaptive pollers */
int shca_hw_poll_init(struct shca_hw *hw);
void shca_hw_poll_fini(struct shca_hw *hw);
void shca_hw_poll_debugfs(struct shca_hw *hw, struct dentry *dir);
bool shca_hw_poll_adopt(struct shca_hw_qp *qp, enum shca_hw_turn_by by);

/* shca_hw_sched.c: schedules turns; calls nothing above it */
void shca_hw_sched_debugfs(struct shca_hw *hw, struct dentry *dir);
int shca_hw_sched_init(struct shca_hw *hw, shca_hw_turn_fn turn);
void shca_hw_sched_fini(struct shca_hw *hw);
void shca_hw_sched_qp_init(struct shca_hw_qp *qp);
void shca_hw_sched_kick(struct shca_hw_qp *qp);
void shca_hw_sched_kick_now(struct shca_hw_qp *qp);
void shca_hw_sched_retry(struct shca_hw_qp *qp, u32 usecs);
void shca_hw_sched_cancel(struct shca_hw_qp *qp);
bool shca_hw_sched_busy(struct shca_hw_qp *qp);
void shca_hw_sched_run_here(struct shca_hw_qp *qp);
bool shca_hw_sched_may_run(struct shca_hw *hw);

/* shca_hw_caps.c */
void shca_hw_caps_debugfs(struct shca_hw *hw, struct dentry *dir);
void shca_hw_caps_init(struct shca_hw_caps *caps);

/* shca_hw_window.c */
void shca_hw_window_debugfs(struct shca_hw *hw, struct dentry *parent);
void shca_hw_windows_init(struct shca_hw *hw);
void shca_hw_windows_fini(struct shca_hw *hw);
bool __shca_hw_window_enter(struct shca_hw_window *win, u32 qpn);

/**
 * shca_hw_window_enter() - count a pass and say whether it must wait
 * @win: the window
 * @qpn: the QP the pass is for
 *
 * Cheap, and callable under a spinlock: a caller that gets true drops
 * its locks and calls shca_hw_window_wait().  While no test watches any
 * window, a patched-out branch.
 *
 * Return: true if the window has a delay or is armed for this pass.
 */
static inline bool shca_hw_window_enter(struct shca_hw_window *win, u32 qpn)
{
	return static_branch_unlikely(&shca_hw_windows_watched) &&
	       __shca_hw_window_enter(win, qpn);
}

void shca_hw_window_wait(struct shca_hw_window *win);
const char *shca_hw_window_name(enum shca_hw_window_id id);

/*
 * Command handlers, shca_hw_cmd_<opcode>(): each unit's, for the commands
 * on its objects.  Only shca_hw_exec() runs them, through the command
 * table in shca_hw.c, which says what it holds around each.
 */

/* shca_hw_eq.c */
void shca_hw_eq_debugfs(struct shca_hw *hw, struct dentry *dir);
enum shca_hw_status shca_hw_cmd_create_eq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_destroy_eq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd);
void shca_hw_evsrc_init(struct shca_hw_evsrc *src,
			enum shca_hw_eqe_type type, u32 obj, u32 gen, u32 eqn);
void shca_hw_evsrc_del(struct shca_hw *hw, struct shca_hw_evsrc *src);
void shca_hw_eq_raise(struct shca_hw *hw, struct shca_hw_evsrc *src,
		      u32 kind);
int shca_hw_eq_init(struct shca_hw *hw);
void shca_hw_eq_add_cq(struct shca_hw *hw, u32 eqn);
void shca_hw_eq_del_cq(struct shca_hw *hw, u32 eqn);
void shca_hw_eq_fini(struct shca_hw *hw);

/* shca_hw_cq.c */
enum shca_hw_status shca_hw_cmd_create_cq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_resize_cq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_modify_cq(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_query_cq(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_destroy_cq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd);
struct shca_hw_cq *shca_hw_cq_get(struct shca_hw *hw, u32 cqn);
void shca_hw_cq_put(struct shca_hw_cq *cq);
void shca_hw_cq_write(struct shca_hw_cq *cq, const struct shca_hw_cqe *cqe,
		      bool solicited);
void shca_hw_cq_fini(struct shca_hw *hw);

/* shca_hw_srq.c */
enum shca_hw_status shca_hw_cmd_create_srq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_srq_attr(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_resize_srq(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_destroy_srq(struct shca_hw *hw,
					    struct shca_hw_cmd *cmd);
struct shca_hw_srq *shca_hw_srq_get(struct shca_hw *hw, u32 srqn);
void shca_hw_srq_put(struct shca_hw_srq *srq);
bool shca_hw_srq_peek(struct shca_hw_srq *srq, struct shca_hw_recv_wqe *wqe,
		      u32 *slot, u32 *ci);
bool shca_hw_srq_take(struct shca_hw_srq *srq, u32 ci);
struct shca_hw_srq *shca_hw_xrc_srq_get(struct shca_hw_qp *qp, u32 srqn);
void shca_hw_srq_fini(struct shca_hw *hw);

/* shca_hw_xrc.c */
enum shca_hw_status shca_hw_cmd_alloc_xrcd(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_dealloc_xrcd(struct shca_hw *hw,
					     struct shca_hw_cmd *cmd);
struct shca_hw_xrcd *shca_hw_xrcd_get(struct shca_hw *hw, u32 xrcdn);
void shca_hw_xrcd_put(struct shca_hw_xrcd *xrcd);
void shca_hw_xrcd_fini(struct shca_hw *hw);

static inline bool shca_hw_qp_is_xrc(const struct shca_hw_qp *qp)
{
	return qp->type == SHCA_QPT_XRC_INI || qp->type == SHCA_QPT_XRC_TGT;
}

/* RC, and both XRC kinds: acknowledged, retried, in order. */
static inline bool shca_hw_qp_reliable(const struct shca_hw_qp *qp)
{
	return qp->type == SHCA_QPT_RC || shca_hw_qp_is_xrc(qp);
}

/* shca_hw_qp.c */
void shca_hw_qp_debugfs(struct shca_hw *hw, struct dentry *dir);
enum shca_hw_status shca_hw_cmd_create_qp(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_modify_qp(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_query_qp(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_destroy_qp(struct shca_hw *hw,
					   struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_mcast(struct shca_hw *hw,
				      struct shca_hw_cmd *cmd);
struct shca_hw_qp *shca_hw_qp_get(struct shca_hw *hw, u32 qpn);
void shca_hw_qp_put(struct shca_hw_qp *qp);
void shca_hw_qp_to_err(struct shca_hw_qp *qp);
void shca_hw_qp_event(struct shca_hw_qp *qp, enum shca_hw_event event);
u8 shca_hw_wqe_cqe_opcode(u32 opcode);
void shca_hw_qp_flush(struct shca_hw_qp *qp, bool rq);
bool shca_hw_qp_flush_pending(struct shca_hw_qp *qp, bool rq);
bool shca_hw_qp_sq_due(struct shca_hw_qp *qp);
void shca_hw_qp_fini(struct shca_hw *hw);

/* shca_hw_mem.c */

/* A key: the MPT index above an 8-bit variant (tag) byte. */
#define SHCA_HW_KEY_TAG_BITS	8

static inline u32 shca_hw_key_index(u32 key)
{
	return key >> SHCA_HW_KEY_TAG_BITS;
}

/**
 * struct shca_hw_mem_seg - one resolved piece of memory
 * @mpt: the MPT entry, referenced; NULL for the inline buffer
 * @addr: start, in the entry's address space (a kernel address if inline)
 * @len: bytes
 * @pbl: the entry's page list when it was checked, or NULL for kernel
 *	addresses; a re-registration meanwhile cannot move the bounds
 * @iova: the entry's first address when it was checked
 * @page_shift: its page size then
 * @odp: the entry's paging state, when the segment holds its pages
 *	present: an access in flight INVALIDATE_ODP waits out
 * @trans: which of @mpt's translations the segment counts itself a user
 *	of (struct shca_hw_mpt @trans_users)
 */
struct shca_hw_mem_seg {
	struct shca_hw_mpt *mpt;
	struct shca_hw_odp *odp;
	u32 trans;
	u64 addr;
	const u64 *pbl;
	u64 iova;
	u32 len;
	u32 page_shift;
};

/* How many bytes a copy moves between two chances for others to run. */
#define SHCA_HW_COPY_YIELD	SZ_64K

/**
 * struct shca_hw_mem - a resolved scatter/gather list
 * @n: segments in use
 * @total: their total length
 * @seg: the segments
 */
struct shca_hw_mem {
	u32 n;
	u64 total;
	struct shca_hw_mem_seg seg[SHCA_HW_MAX_SGE];
};

enum shca_hw_status shca_hw_cmd_alloc_mpt(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_write_mpt(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_rereg_mpt(struct shca_hw *hw,
					  struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_free_mpt(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd);

/* shca_hw_mpt.c */
struct shca_hw_mpt *shca_hw_mpt_get(struct shca_hw *hw, u32 key);
void shca_hw_mpt_put(struct shca_hw_mpt *mpt);
void shca_hw_mpt_seg(struct shca_hw_mpt *mpt, u64 addr, u64 len,
		     struct shca_hw_mem_seg *seg);
bool shca_hw_mpt_covers(const struct shca_hw_mpt *mpt, u64 addr, u64 len);

/**
 * struct shca_hw_odp_defer - a page fault the responder leaves to the requester
 * @raised: an access of the responder found pages of an ODP entry absent;
 *	@fault names them.  The message took no effect: the requester answers
 *	the fault, holding nothing, and sends the message again.
 * @deny: absent pages deny the access instead, as a failed fault does: the
 *	requester's answer to a fault of this message failed, or it has
 *	answered SHCA_HW_ODP_MAX_FAULTS of them
 * @fault: the fault to answer
 *
 * The responder runs in the requester's context while the requester holds
 * its own memory (shca_hw_msg.local): waiting there for a fault, whose
 * MMU notifier may wait out that very hold, would deadlock.
 */
struct shca_hw_odp_defer {
	bool raised;
	bool deny;
	struct shca_hw_odp_fault fault;
};

enum shca_hw_cqe_status shca_hw_mem_resolve(struct shca_hw *hw, u32 pdn,
					    const struct shca_hw_sge *sge,
					    u32 n, u32 access,
					    struct shca_hw_odp_defer *defer,
					    struct shca_hw_mem *mem);
bool shca_hw_mem_resolve_remote(struct shca_hw *hw, u32 pdn, u32 qpn,
				u32 qp_access, u32 rkey, u64 addr, u64 len,
				u32 access, struct shca_hw_odp_defer *defer,
				struct shca_hw_mem *mem);
bool shca_hw_mem_flush(struct shca_hw *hw, u32 pdn, u32 qpn, u32 qp_access,
		       u32 rkey, u64 addr, u64 len, bool whole, u32 access);
void shca_hw_mem_inline(struct shca_hw_mem *mem, const void *buf, u32 len);
void shca_hw_mem_release(struct shca_hw_mem *mem);
void shca_hw_mem_copy(struct shca_hw_mem *dst, u64 dst_off,
		      struct shca_hw_mem *src, u64 len);
void shca_hw_mem_write(struct shca_hw_mem *dst, u64 dst_off,
		       const void *buf, u32 len);
void *shca_hw_mem_ptr(struct shca_hw_mem *mem, u64 off, u32 len);
/*
 * shca_hw_mpt_invalidate() flags.  SHCA_HW_INV_REMOTE: a peer's
 * SEND_WITH_INV; SHCA_HW_INV_MW_ONLY: a process's QP, which may invalidate
 * only its own type 2 windows.
 */
#define SHCA_HW_INV_REMOTE	BIT(0)
#define SHCA_HW_INV_MW_ONLY	BIT(1)
bool shca_hw_mpt_invalidate(struct shca_hw *hw, u32 pdn, u32 qpn, u32 key,
			    u32 flags);
bool shca_hw_mpt_fast_reg(struct shca_hw *hw, u32 pdn,
			  const struct shca_hw_send_wqe *wqe);
void shca_hw_mpt_fini(struct shca_hw *hw);

/* shca_hw_mw.c */
enum shca_hw_status shca_hw_cmd_alloc_mw(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd);
u8 shca_hw_mw_bind(struct shca_hw *hw, u32 pdn, u32 qpn,
		   const struct shca_hw_send_wqe *wqe);
bool shca_hw_mw_check(struct shca_hw_mpt *mw, u32 key, u32 pdn, u32 qpn,
		      u64 addr, u64 len, bool whole, u32 access,
		      struct shca_hw_mem_seg *seg);
bool shca_hw_mw_invalidate(struct shca_hw_mpt *mw, u32 pdn, u32 qpn, u32 key,
			   bool remote);
void shca_hw_mw_qp_gone(struct shca_hw *hw, u32 qpn);
void shca_hw_mw_unbind(struct shca_hw_mpt *mw);
/* shca_hw_dm.c */
int shca_hw_dm_init(struct shca_hw *hw);
void shca_hw_dm_fini(struct shca_hw *hw);
enum shca_hw_status shca_hw_cmd_alloc_dm(struct shca_hw *hw,
					 struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_free_dm(struct shca_hw *hw,
					struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_dm_map(struct shca_hw *hw,
				   struct shca_hw_mpt *mpt,
				   const struct shca_hw_mpt_write *in);
void shca_hw_dm_unmap(struct shca_hw_mpt *mpt);
/* shca_hw_odp.c */
/* An access retries at most this many faults before it fails. */
#define SHCA_HW_ODP_MAX_FAULTS	16

struct shca_hw_odp *shca_hw_odp_alloc(u32 npages);
void shca_hw_odp_free(struct shca_hw_odp *odp);
bool shca_hw_odp_check(struct shca_hw_mpt *mpt, u64 addr, u64 len,
		       bool write, struct shca_hw_odp_fault *fault);
const u64 *shca_hw_odp_pages(struct shca_hw_odp *odp);
void shca_hw_odp_put(struct shca_hw_odp *odp);
bool shca_hw_odp_fault(struct shca_hw *hw, const struct shca_hw_odp_fault *f);
bool shca_hw_odp_answer(struct shca_hw *hw, const struct shca_hw_odp_fault *f);
enum shca_hw_status shca_hw_cmd_map_odp(struct shca_hw *hw,
					struct shca_hw_cmd *cmd);
enum shca_hw_status shca_hw_cmd_invalidate_odp(struct shca_hw *hw,
					       struct shca_hw_cmd *cmd);

/* shca_hw_fabric.c */
/**
 * struct shca_hw_msg - one message on the wire, as the responder sees it
 * @src_qp: the sending QP
 * @src: the sender's GID and encapsulation
 * @av: the address vector it was sent with
 * @wqe: the sender's WQE
 * @local: the sender's resolved local memory: the payload, or where a read
 *	or atomic result goes
 * @len: payload or read length
 * @qkey: the Q_Key it carries, for UD
 * @mcast: a copy of a UD send to a multicast group
 * @pdn: the responder's protection domain for this message: its QP's, or
 *	for an XRC target QP the named XRC SRQ's
 * @srq: the SRQ the responder takes a receive WQE from, or NULL
 * @rcq: the CQ its receive completion goes to
 * @defer: a page fault the responder raised instead of waiting for it
 * @psn: for RC, UC and XRC, the PSN of its first packet
 * @npkts: the PSNs it takes: its packets at the path MTU, at least one (a
 *	READ's, its response's)
 */
struct shca_hw_msg {
	struct shca_hw_qp *src_qp;
	struct shca_hw_src src;
	const struct shca_hw_av *av;
	const struct shca_hw_send_wqe *wqe;
	struct shca_hw_mem *local;
	u64 len;
	u32 qkey;
	bool mcast;
	u32 pdn;
	struct shca_hw_srq *srq;
	struct shca_hw_cq *rcq;
	struct shca_hw_odp_defer defer;
	u32 psn;
	u32 npkts;
};

/* PSNs are 24 bits, and wrap. */
#define SHCA_HW_PSN_MASK	0xffffff

/**
 * struct shca_hw_result - what the requester learns about its WQE
 * @status: the completion status
 * @byte_len: bytes moved
 * @rnr: an RNR NAK: the message goes again after @rnr_timer
 * @rnr_timer: the responder's RNR NAK timer
 * @no_ack: no answer: the message goes again after the ACK timeout
 * @npkts: PSNs the message took: the requester's next PSN moves on by
 *	this many (0 when the message goes again, or never left)
 */
struct shca_hw_result {
	u8 status;
	u32 byte_len;
	bool rnr;
	u8 rnr_timer;
	bool no_ack;
	u32 npkts;
};

void shca_hw_fabric_add(struct shca_hw *hw);
void shca_hw_fabric_del(struct shca_hw *hw);
void shca_hw_fabric_changed(void);
bool shca_hw_route_source(struct shca_hw_qp *qp, const struct shca_hw_av *av,
			  struct shca_hw_src *src);
struct shca_hw_qp *shca_hw_route_dest(struct shca_hw_qp *qp, u32 dqpn);
void shca_hw_fabric_grh(u8 *buf, const struct shca_hw_msg *m, const u8 *dgid);
u32 shca_hw_fabric_mcast(const u8 *mgid, u64 segment,
			 const struct shca_hw_qp *src,
			 struct shca_hw_mcast_target **targets, u32 *lost);
struct shca_hw_qp *
shca_hw_fabric_mcast_member(const struct shca_hw_mcast_target *t);

/* shca_hw_mcast.c: a leaf */
void shca_hw_mcast_debugfs(struct shca_hw *hw, struct dentry *dir);
int shca_hw_mcast_init(struct shca_hw *hw);
void shca_hw_mcast_fini(struct shca_hw *hw);
bool shca_hw_gid_is_mcast(const u8 *gid);
enum shca_hw_status shca_hw_mcast_attach(struct shca_hw *hw, u32 qpn,
					 u32 gen, const u8 *mgid);
enum shca_hw_status shca_hw_mcast_detach(struct shca_hw *hw, u32 qpn,
					 const u8 *mgid);
void shca_hw_mcast_purge(struct shca_hw *hw, u32 qpn);
bool shca_hw_mcast_is_member(struct shca_hw *hw, u32 qpn, const u8 *mgid);
u32 shca_hw_mcast_count(struct shca_hw *hw, const u8 *mgid);
u32 shca_hw_mcast_collect(struct shca_hw *hw, const u8 *mgid,
			  struct shca_hw_mcg_member *members, u32 max);

/* shca_hw_resp.c */
u8 shca_hw_respond(struct shca_hw_qp *qp, struct shca_hw_msg *m,
		   struct shca_hw_result *res);

/* shca_hw_req.c */
bool shca_hw_req_turn(struct shca_hw_qp *qp, enum shca_hw_turn_by by);

#endif /* SHCA_HW_INT_H */
