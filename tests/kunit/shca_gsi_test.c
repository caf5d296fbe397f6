// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the GSI QP as ib_mad drives it, through the real driver.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/scatterlist.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "shca.h"
#include "shca_test.h"

#define SHCA_GSI_MAD_CLASS	IB_MGMT_CLASS_VENDOR_RANGE2_START

/* One MAD agent's view of a test exchange. */
struct shca_gsi_mad {
	struct ib_mad_agent *agent;
	struct completion done;
	int status;
	u8 data[16];
};

static void shca_gsi_mad_sent(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *wc)
{
	struct shca_gsi_mad *m = agent->context;

	m->status = wc->status;
	ib_free_send_mad(wc->send_buf);
	complete(&m->done);
}

static void shca_gsi_mad_recv(struct ib_mad_agent *agent,
			      struct ib_mad_send_buf *send_buf,
			      struct ib_mad_recv_wc *wc)
{
	struct shca_gsi_mad *m = agent->context;
	struct ib_vendor_mad *vm = (struct ib_vendor_mad *)wc->recv_buf.mad;

	m->status = wc->wc->status;
	memcpy(m->data, vm->data, sizeof(m->data));
	ib_free_recv_mad(wc);
	complete(&m->done);
}

static void shca_gsi_mad_unregister(void *agent)
{
	ib_unregister_mad_agent(agent);
}

static void shca_gsi_destroy_ah(void *ah)
{
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

static struct shca_gsi_mad *shca_gsi_agent(struct kunit *test,
					   struct ib_device *dev, bool receiver)
{
	struct shca_gsi_mad *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct ib_mad_reg_req req = {
		.mgmt_class = SHCA_GSI_MAD_CLASS,
		.mgmt_class_version = 1,
		.oui = { 0x00, 0x53, 0x48 },
	};
	int err;

	KUNIT_ASSERT_NOT_NULL(test, m);
	init_completion(&m->done);
	set_bit(IB_MGMT_METHOD_GET, req.method_mask);
	m->agent = ib_register_mad_agent(dev, 1, IB_QPT_GSI,
					 receiver ? &req : NULL, 0,
					 shca_gsi_mad_sent,
					 receiver ? shca_gsi_mad_recv : NULL,
					 m, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(m->agent));
	err = kunit_add_action_or_reset(test, shca_gsi_mad_unregister, m->agent);
	KUNIT_ASSERT_EQ(test, 0, err);
	return m;
}

/*
 * A vendor MAD from one device's QP1 to another's, both driven by ib_mad:
 * the GSI QPs ib_mad created at registration carry real management
 * traffic.
 */
static void shca_test_gsi_mad_between_devices(struct kunit *test)
{
	struct ib_device *da, *db;
	struct shca_gsi_mad *tx, *rx;
	struct ib_mad_send_buf *msg;
	struct ib_vendor_mad *vm;
	struct rdma_ah_attr ah_attr = {};
	struct ib_ah *ah;
	union ib_gid dgid;
	int i, err;

	shca_test_devices(test, true, &da, &db);
	tx = shca_gsi_agent(test, da, false);
	rx = shca_gsi_agent(test, db, true);

	KUNIT_ASSERT_EQ(test, 0, rdma_query_gid(db, 1, SHCA_TEST_SGID, &dgid));
	ah_attr.type = rdma_ah_find_type(da, 1);
	rdma_ah_set_port_num(&ah_attr, 1);
	rdma_ah_set_grh(&ah_attr, &dgid, 0, SHCA_TEST_SGID, 64, 0);
	eth_broadcast_addr(ah_attr.roce.dmac);
	ah = rdma_create_ah(tx->agent->qp->pd, &ah_attr,
			    RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	err = kunit_add_action_or_reset(test, shca_gsi_destroy_ah, ah);
	KUNIT_ASSERT_EQ(test, 0, err);

	msg = ib_create_send_mad(tx->agent, SHCA_HW_GSI_QPN, 0, 0,
				 IB_MGMT_VENDOR_HDR, IB_MGMT_VENDOR_DATA,
				 GFP_KERNEL, IB_MGMT_BASE_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(msg));
	vm = msg->mad;
	vm->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	vm->mad_hdr.mgmt_class = SHCA_GSI_MAD_CLASS;
	vm->mad_hdr.class_version = 1;
	vm->mad_hdr.method = IB_MGMT_METHOD_GET;
	vm->mad_hdr.tid = cpu_to_be64(0x5348ca);
	vm->oui[1] = 0x53;
	vm->oui[2] = 0x48;
	for (i = 0; i < sizeof(rx->data); i++)
		vm->data[i] = 0xc0 + i;
	msg->ah = ah;
	msg->timeout_ms = 0;
	msg->retries = 0;
	KUNIT_ASSERT_EQ(test, 0, ib_post_send_mad(msg, NULL));

	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&tx->done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, tx->status);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&rx->done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, rx->status);
	for (i = 0; i < sizeof(rx->data); i++)
		KUNIT_EXPECT_EQ(test, 0xc0 + i, rx->data[i]);
}

static struct kunit_case shca_gsi_cases[] = {
	KUNIT_CASE(shca_test_gsi_mad_between_devices),
	{}
};

static struct kunit_suite shca_gsi_suite = {
	.name = "shca_gsi",
	.test_cases = shca_gsi_cases,
};

kunit_test_suite(shca_gsi_suite);
