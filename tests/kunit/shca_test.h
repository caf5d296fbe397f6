/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * KUnit helpers shared by the shca suites.
 */
#ifndef SHCA_TEST_H
#define SHCA_TEST_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "hw/shca_hw_test.h"
#include "shca_ktest_qp.h"

#define SHCA_TEST_DEV		"shcakt0"
#define SHCA_TEST_DEV2		"shcakt1"
#define SHCA_TEST_BUF		(64 * 1024)
#define SHCA_TEST_SGID		SHCA_KTEST_SGID
#define SHCA_TEST_QKEY		0x11111111
#define SHCA_TEST_IMM		0x12345678
/* How long a test waits for the device to do something */
#define SHCA_TEST_WAIT		(5 * HZ)
/* Where in an end's buffer the MPT entries of shca_test_pbl_mpt() point */
#define SHCA_TEST_KEY_OFF	(4 * PAGE_SIZE)
/* For shca_test_post_send(): post without IB_SEND_SIGNALED */
#define SHCA_TEST_UNSIGNALED	BIT(30)

/**
 * struct shca_tq - one end of a test connection, as a kernel ULP holds it
 * @test: the test it belongs to
 * @dev: the device
 * @pd: a PD with an unsafe global rkey, so the peer can reach @buf
 * @cq: send CQ, and receive CQ unless @rcq; polled directly
 * @rcq: a separate receive CQ, or NULL
 * @cq_shared: the CQs belong to the test, not to this end
 * @qp: the QP
 * @srq: the SRQ the QP receives from, or NULL
 * @ah: for UD, an AH to the peer
 * @buf: SHCA_TEST_BUF bytes of memory
 * @addr: @buf's DMA address
 * @lkey: the local key that covers @buf
 * @rkey: the remote key that covers @buf
 * @events: bitmap of the affiliated events seen, by enum ib_event_type
 * @comp_events: completion events seen on @cq
 * @rnr_retry: RNR retries shca_test_to_rts() asks for
 * @retry_cnt: transport retries shca_test_to_rts() asks for
 */
struct shca_tq {
	struct kunit *test;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_cq *rcq;
	bool cq_shared;
	struct ib_qp *qp;
	struct ib_srq *srq;
	struct ib_ah *ah;
	u8 *buf;
	u64 addr;
	u32 lkey;
	u32 rkey;
	unsigned long events;
	atomic_t comp_events;
	u8 rnr_retry;
	u8 retry_cnt;
};

/**
 * struct shca_test_srq - an SRQ and what its event handler saw
 * @pd: its PD
 * @srq: the SRQ
 * @events: bitmap of the events seen, by enum ib_event_type
 */
struct shca_test_srq {
	struct ib_pd *pd;
	struct ib_srq *srq;
	unsigned long events;
};

/**
 * struct shca_test_shared - a device the cases of one suite share
 * @name: its name
 * @ndev: its netdev, or NULL
 * @dev: the device, referenced, or NULL
 * @flags: the SHCA_DEV_F_* it was made with
 *
 * Making and removing a device and its netdev costs more than most cases
 * cost to run: a parameterized case made of many small ones asks
 * shca_test_shared_dev() for its device, and the suite's exit removes it
 * with shca_test_shared_del().  Each case still makes and frees every
 * object it uses on the device.
 */
struct shca_test_shared {
	const char *name;
	struct net_device *ndev;
	struct ib_device *dev;
	u32 flags;
};

/**
 * struct shca_test_mpt - an MPT entry made as reg_user_mr makes one
 * @sdev: the device
 * @key: its key
 * @pbl: its one-page page list
 * @freed: FREE_MPT already ran
 */
struct shca_test_mpt {
	struct shca_dev *sdev;
	u32 key;
	u64 *pbl;
	bool freed;
};

/**
 * struct shca_test_hw_qp - a CQ of four CQEs and an RC QP on it, in a model
 * @ring: the CQ's ring
 * @sq: the QP's send ring, four WQEs
 * @db: the QP's doorbell record
 * @cqn: the CQ's number
 * @qpn: the QP's number
 */
struct shca_test_hw_qp {
	struct shca_hw_cqe *ring;
	struct shca_hw_send_wqe *sq;
	struct shca_hw_qp_dbrec *db;
	u32 cqn;
	u32 qpn;
};

struct net_device *shca_test_alloc_netdev(struct kunit *test);
struct net_device *shca_test_netdev(struct kunit *test);
struct ib_device *shca_test_add(struct kunit *test, const char *name,
				struct net_device *ndev);
struct ib_device *shca_test_add_flags(struct kunit *test, const char *name,
				      struct net_device *ndev, u32 flags);

void shca_test_devices(struct kunit *test, bool two, struct ib_device **a,
		       struct ib_device **b);
struct ib_device *shca_test_shared_dev(struct kunit *test,
				       struct shca_test_shared *sd, u32 flags);
void shca_test_shared_del(struct shca_test_shared *sd);
void shca_test_tq_init(struct kunit *test, struct shca_tq *tq,
		       struct ib_device *dev, enum ib_qp_type type,
		       struct ib_srq *srq, int cq_depth, u32 wr);
void shca_test_tq_init_on(struct kunit *test, struct shca_tq *tq,
			  struct ib_device *dev, enum ib_qp_type type,
			  struct ib_srq *srq, struct ib_cq *scq,
			  struct ib_cq *rcq, u32 wr);
struct ib_cq *shca_test_cq_new(struct kunit *test, struct ib_device *dev,
			       int depth);
void shca_test_wait_eq(struct kunit *test, struct ib_device *dev, u32 eqn,
		       u64 held, u32 owing);
struct ib_cq *shca_test_cq_new_on(struct kunit *test, struct ib_device *dev,
				  int depth, u32 vector,
				  ib_comp_handler handler, void *ctx);
struct ib_cq *shca_test_cq_new_flags(struct kunit *test, struct ib_device *dev,
				     int depth, u32 flags);
int shca_test_to_rts(struct shca_tq *tq, struct shca_tq *peer);
void shca_test_connect(struct kunit *test, struct shca_tq *a,
		       struct shca_tq *b);
int shca_test_poll(struct shca_tq *tq, struct ib_wc *wc, int n);
int shca_test_poll_cq(struct ib_cq *cq, struct ib_wc *wc, int n);
void shca_test_wait_cqes(struct kunit *test, struct ib_cq *cq, u32 n);
u64 shca_test_drv_counter(struct ib_device *dev, enum shca_drv_counter c);
void shca_test_expect(struct kunit *test, struct shca_tq *tq,
		      enum ib_wc_status status, u64 wr_id);
int shca_test_wait_event(struct shca_tq *tq, enum ib_event_type event);
bool shca_test_sq_idle(struct shca_tq *tq);
int shca_test_post_recv(struct shca_tq *tq, u64 wr_id, u32 offset, u32 len);
int shca_test_post_send(struct shca_tq *tq, struct shca_tq *peer,
			enum ib_wr_opcode opcode, u64 wr_id, u32 offset,
			u32 remote_offset, u32 len, int flags);
enum ib_qp_state shca_test_qp_state(struct shca_tq *tq);
u64 shca_test_counter(struct ib_device *dev, enum shca_hw_counter counter);
struct shca_tq *shca_test_tq_new(struct kunit *test);
struct shca_test_srq *shca_test_srq_new(struct kunit *test,
					struct ib_device *dev, u32 wr,
					u32 limit, u32 sge);
void shca_test_pair(struct kunit *test, struct shca_tq *a, struct shca_tq *b,
		    enum ib_qp_type type, u32 wr);
struct shca_test_mpt *shca_test_pbl_mpt(struct kunit *test, struct shca_tq *tq,
					u32 offset);
int shca_test_mpt_write(struct shca_test_mpt *m);
int shca_test_rdma_write(struct shca_tq *a, u64 wr_id, u32 rkey, u64 addr,
			 u32 len);
struct shca_hw *shca_test_hw(struct kunit *test);
void shca_test_window_reset(void *win);
struct shca_hw_window *shca_test_window_arm(struct kunit *test,
					    struct ib_device *dev,
					    enum shca_hw_window_id id, u32 qpn);
struct shca_hw_window *shca_test_window_hold(struct kunit *test,
					     struct ib_device *dev,
					     enum shca_hw_window_id id, u32 key);
u32 shca_test_hw_create(struct kunit *test, struct shca_hw *hw,
			struct shca_hw_cmd *cmd);
void shca_test_hw_qp_new(struct kunit *test, struct shca_hw *hw, bool user,
			 struct shca_test_hw_qp *t);
u64 shca_test_hw_counter(struct kunit *test, struct shca_hw *hw,
			 enum shca_hw_counter counter);
void shca_test_hw_qp_rts(struct kunit *test, struct shca_hw *hw, u32 qpn);
void shca_test_hw_post_bad_send(struct shca_test_hw_qp *t, u32 idx);
bool shca_test_hw_cqe_written(struct shca_test_hw_qp *t, u32 idx);
void shca_test_poll_off(struct kunit *test, struct shca_hw *hw);
void shca_test_poll_set(struct kunit *test, struct shca_hw *hw, u32 us);

/**
 * struct shca_test_stall - a command that waits, and a bystander beside it
 * @dev: the device the bystander creates and destroys a CQ on
 * @cmd: the command that waits; returns 0 or a negative errno
 * @waiting: whether @cmd has gone as far as its wait (its object out of
 *	the device's table, say); it may ask the device itself
 * @arg: @cmd's and @waiting's
 * @cmd_work: runs @cmd
 * @cmd_ret: what it returned
 * @cmd_done: completed when it returned
 * @other_work: runs the bystander: once @waiting says so, a CQ created
 *	and destroyed
 * @other_ret: what the bystander's commands returned, or -ETIMEDOUT if
 *	@waiting never said so
 * @other_done: completed when the bystander finished
 * @cmd_pending: @cmd had not returned when the bystander finished
 */
struct shca_test_stall {
	struct ib_device *dev;
	int (*cmd)(void *arg);
	bool (*waiting)(void *arg);
	void *arg;
	struct work_struct cmd_work;
	int cmd_ret;
	struct completion cmd_done;
	struct work_struct other_work;
	int other_ret;
	struct completion other_done;
	bool cmd_pending;
};

struct shca_test_stall *shca_test_stall_new(struct kunit *test,
					    struct ib_device *dev,
					    int (*cmd)(void *arg),
					    bool (*waiting)(void *arg),
					    void *arg);
void shca_test_stall_run(struct shca_test_stall *s);
void shca_test_stall_expect_alone(struct kunit *test,
				  struct shca_test_stall *s);

#endif /* SHCA_TEST_H */
