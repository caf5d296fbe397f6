// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: shca devices through the real driver and ib_core.  Each test
 * registers an Ethernet netdev of its own and creates shca devices on it
 * the way "rdma link add" does.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>

#include "shca.h"
#include "shca_test.h"

static void shca_test_device_answers_from_caps(struct kunit *test)
{
	struct net_device *ndev = shca_test_netdev(test);
	struct ib_device *ibdev = shca_test_add(test, SHCA_TEST_DEV, ndev);
	struct shca_dev *sdev = to_shca_dev(ibdev);
	const struct shca_hw_caps *caps = shca_hw_caps(sdev->hw);
	struct ib_device_attr attr;
	struct ib_udata udata = {};

	KUNIT_ASSERT_EQ(test, 0, ibdev->ops.query_device(ibdev, &attr,
							 &udata));
	KUNIT_EXPECT_EQ(test, caps->max_qp, (u32)attr.max_qp);
	KUNIT_EXPECT_EQ(test, caps->max_cqe, (u32)attr.max_cqe);
	KUNIT_EXPECT_EQ(test, caps->max_qp_wr, (u32)attr.max_qp_wr);
	KUNIT_EXPECT_EQ(test, caps->max_mr_size, attr.max_mr_size);
	KUNIT_EXPECT_EQ(test, caps->max_pkeys, attr.max_pkeys);
	KUNIT_EXPECT_EQ(test, SHCA_HW_VENDOR_ID, attr.vendor_id);
	KUNIT_EXPECT_EQ(test, caps->page_size_cap, attr.page_size_cap);
	KUNIT_EXPECT_EQ(test, caps->max_sge_rd, (u32)attr.max_sge_rd);
	KUNIT_EXPECT_EQ(test, caps->max_qp_rd_atom * caps->max_qp,
			(u32)attr.max_res_rd_atom);
	/*
	 * Every flag is a promise some suite keeps: fast registration and
	 * invalidation (shca_fast_reg, shca_remote_inv), RNR NAKs
	 * (shca_qp_errors), PORT_ACTIVE (below), the image GUID (here),
	 * FLUSH of both placement types and atomic write (shca_flush), SRQ
	 * resize (shca_srq).  Nothing else is set: no local DMA lkey, no SG_GAPS MRs.
	 */
	KUNIT_EXPECT_EQ(test, (u64)(IB_DEVICE_MEM_MGT_EXTENSIONS |
				    IB_DEVICE_RC_RNR_NAK_GEN |
				    IB_DEVICE_PORT_ACTIVE_EVENT |
				    IB_DEVICE_SRQ_RESIZE |
				    IB_DEVICE_SYS_IMAGE_GUID |
				    IB_DEVICE_FLUSH_GLOBAL |
				    IB_DEVICE_FLUSH_PERSISTENT |
				    IB_DEVICE_ATOMIC_WRITE |
				    IB_DEVICE_MEM_WINDOW |
				    IB_DEVICE_MEM_WINDOW_TYPE_2B |
				    IB_DEVICE_XRC),
			attr.device_cap_flags);
	/* On-demand paging where ib_core has it (explicit ODP MRs). */
	KUNIT_EXPECT_EQ(test, (u64)IBK_ALLOW_USER_UNREG |
			(IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING) ?
			 (u64)IBK_ON_DEMAND_PAGING : 0),
			attr.kernel_cap_flags);
	KUNIT_EXPECT_NE(test, 0ULL, be64_to_cpu(attr.sys_image_guid));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ibdev->node_guid),
			be64_to_cpu(attr.sys_image_guid));
	/* ib_core cached the same answer at registration. */
	KUNIT_EXPECT_EQ(test, attr.max_qp, ibdev->attrs.max_qp);
	KUNIT_EXPECT_EQ(test, 1U, rdma_end_port(ibdev));
	KUNIT_EXPECT_TRUE(test, rdma_protocol_roce(ibdev, 1));
}

static void shca_test_query_device_rejects_udata(struct kunit *test)
{
	struct net_device *ndev = shca_test_netdev(test);
	struct ib_device *ibdev = shca_test_add(test, SHCA_TEST_DEV, ndev);
	struct ib_device_attr attr;
	struct ib_udata udata = { .inlen = 8 };

	KUNIT_EXPECT_EQ(test, -EINVAL, ibdev->ops.query_device(ibdev, &attr,
							       &udata));
}

/* Port events a consumer saw, through ib_core's event handlers. */
struct shca_port_events {
	struct ib_event_handler handler;
	unsigned long seen;
};

static void shca_test_port_event(struct ib_event_handler *h,
				 struct ib_event *ev)
{
	struct shca_port_events *pe = container_of(h, struct shca_port_events,
						   handler);

	if (ev->element.port_num == 1)
		set_bit(ev->event, &pe->seen);
}

static void shca_test_unregister_events(void *h)
{
	ib_unregister_event_handler(h);
}

static bool shca_test_saw_event(struct shca_port_events *pe,
				enum ib_event_type event)
{
	unsigned long end = jiffies + 5 * HZ;

	while (!test_bit(event, &pe->seen) && !time_after(jiffies, end))
		usleep_range(100, 200);
	return test_bit(event, &pe->seen);
}

static void shca_test_port_follows_netdev(struct kunit *test)
{
	struct net_device *ndev = shca_test_netdev(test);
	struct ib_device *ibdev = shca_test_add(test, SHCA_TEST_DEV, ndev);
	struct shca_port_events *pe;
	struct ib_port_attr attr;
	int err;

	pe = kunit_kzalloc(test, sizeof(*pe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pe);
	INIT_IB_EVENT_HANDLER(&pe->handler, ibdev, shca_test_port_event);
	ib_register_event_handler(&pe->handler);
	err = kunit_add_action_or_reset(test, shca_test_unregister_events,
					&pe->handler);
	KUNIT_ASSERT_EQ(test, 0, err);

	KUNIT_ASSERT_EQ(test, 0, ib_query_port(ibdev, 1, &attr));
	KUNIT_EXPECT_EQ(test, IB_PORT_ACTIVE, attr.state);
	KUNIT_EXPECT_EQ(test, IB_PORT_PHYS_STATE_LINK_UP, attr.phys_state);
	KUNIT_EXPECT_EQ(test, IB_MTU_1024, attr.active_mtu);
	KUNIT_EXPECT_EQ(test, IB_MTU_4096, attr.max_mtu);
	KUNIT_EXPECT_EQ(test, 1, attr.pkey_tbl_len);
	KUNIT_EXPECT_TRUE(test, attr.ip_gids);

	rtnl_lock();
	dev_close(ndev);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, 0, ib_query_port(ibdev, 1, &attr));
	KUNIT_EXPECT_EQ(test, IB_PORT_DOWN, attr.state);
	/* The device reports the change through its EQ and interrupt. */
	KUNIT_EXPECT_TRUE(test, shca_test_saw_event(pe, IB_EVENT_PORT_ERR));
	KUNIT_EXPECT_FALSE(test, test_bit(IB_EVENT_PORT_ACTIVE, &pe->seen));

	rtnl_lock();
	KUNIT_EXPECT_EQ(test, 0, dev_open(ndev, NULL));
	KUNIT_EXPECT_EQ(test, 0, dev_set_mtu(ndev, 9000));
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, 0, ib_query_port(ibdev, 1, &attr));
	KUNIT_EXPECT_EQ(test, IB_PORT_ACTIVE, attr.state);
	KUNIT_EXPECT_EQ(test, IB_MTU_4096, attr.active_mtu);
	KUNIT_EXPECT_TRUE(test, shca_test_saw_event(pe, IB_EVENT_PORT_ACTIVE));

	KUNIT_EXPECT_EQ(test, -EINVAL, ib_query_port(ibdev, 2, &attr));
}

static void shca_test_gid_and_pkey_tables(struct kunit *test)
{
	struct net_device *ndev = shca_test_netdev(test);
	struct ib_device *ibdev = shca_test_add(test, SHCA_TEST_DEV, ndev);
	const struct ib_gid_attr *cached;
	union ib_gid gid;
	u16 pkey;

	KUNIT_ASSERT_EQ(test, 0, ibdev->ops.query_pkey(ibdev, 1, 0, &pkey));
	KUNIT_EXPECT_EQ(test, 0xffff, pkey);
	KUNIT_EXPECT_EQ(test, -EINVAL, ibdev->ops.query_pkey(ibdev, 1, 1,
							     &pkey));

	/*
	 * ib_core writes the default GID (from the MAC) into slot 0 at
	 * registration, through add_gid; the device's table must hold what
	 * ib_core's cache holds.
	 */
	cached = rdma_get_gid_attr(ibdev, 1, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cached));
	KUNIT_ASSERT_EQ(test, 0, ibdev->ops.query_gid(ibdev, 1, 0, &gid));
	KUNIT_EXPECT_MEMEQ(test, cached->gid.raw, gid.raw, sizeof(gid.raw));
	rdma_put_gid_attr(cached);

	KUNIT_EXPECT_EQ(test, -EINVAL, ibdev->ops.query_gid(ibdev, 1, 64,
							    &gid));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibdev->ops.query_gid(ibdev, 1, -1,
							    &gid));
}

KUNIT_DEFINE_ACTION_WRAPPER(shca_test_kfree, kfree, const void *);

static struct ib_pd *shca_test_alloc_pd(struct kunit *test,
					struct ib_device *ibdev)
{
	struct ib_pd *pd = rdma_zalloc_drv_obj(ibdev, ib_pd);

	if (pd) {
		pd->device = ibdev;
		if (kunit_add_action_or_reset(test, shca_test_kfree, pd))
			return NULL;
	}
	return pd;
}

static void shca_test_pd_alloc_and_free(struct kunit *test)
{
	struct net_device *ndev = shca_test_netdev(test);
	struct ib_device *ibdev = shca_test_add(test, SHCA_TEST_DEV, ndev);
	struct shca_dev *sdev = to_shca_dev(ibdev);
	u64 allocs = shca_hw_cmd_count(sdev->hw, SHCA_CMD_ALLOC_PD);
	u64 frees = shca_hw_cmd_count(sdev->hw, SHCA_CMD_DEALLOC_PD);
	struct ib_udata udata = { .outlen = 4 };
	struct ib_pd *a, *b;
	int err;

	/*
	 * Until the device has the kernel verbs ib_alloc_pd() relies on
	 * (get_dma_mr), PDs are made the way uverbs makes them: the core
	 * allocates the object, the driver's op fills it in.
	 */
	a = shca_test_alloc_pd(test, ibdev);
	b = shca_test_alloc_pd(test, ibdev);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, 0, ibdev->ops.alloc_pd(a, NULL));
	KUNIT_ASSERT_EQ(test, 0, ibdev->ops.alloc_pd(b, NULL));
	KUNIT_EXPECT_NE(test, to_shca_pd(a)->pdn, to_shca_pd(b)->pdn);
	KUNIT_EXPECT_EQ(test, 0, ibdev->ops.dealloc_pd(b, NULL));
	KUNIT_EXPECT_EQ(test, 0, ibdev->ops.dealloc_pd(a, NULL));
	KUNIT_EXPECT_EQ(test, allocs + 2,
			shca_hw_cmd_count(sdev->hw, SHCA_CMD_ALLOC_PD));
	KUNIT_EXPECT_EQ(test, frees + 2,
			shca_hw_cmd_count(sdev->hw, SHCA_CMD_DEALLOC_PD));

	/* A device command failure surfaces as -EIO; the next call works. */
	err = shca_hw_inject_cmd_failure(sdev->hw, SHCA_CMD_ALLOC_PD);
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_EXPECT_EQ(test, -EIO, ibdev->ops.alloc_pd(a, NULL));
	KUNIT_ASSERT_EQ(test, 0, ibdev->ops.alloc_pd(a, NULL));
	KUNIT_EXPECT_EQ(test, 0, ibdev->ops.dealloc_pd(a, NULL));

	/* A PD with user data it does not understand is refused. */
	KUNIT_EXPECT_EQ(test, -EINVAL, ibdev->ops.alloc_pd(a, &udata));
}

static void shca_test_add_refuses_bad_input(struct kunit *test)
{
	struct net_device *ndev = shca_test_netdev(test);
	struct net_device *other = shca_test_netdev(test);
	struct net_device *raw;

	shca_test_add(test, SHCA_TEST_DEV, ndev);
	/* A second device on the same netdev. */
	KUNIT_EXPECT_EQ(test, -EBUSY, shca_dev_add(SHCA_TEST_DEV2, ndev));
	/* A name that is taken. */
	KUNIT_EXPECT_EQ(test, -EEXIST, shca_dev_add(SHCA_TEST_DEV, other));
	/* A netdev that is not Ethernet. */
	raw = shca_test_alloc_netdev(test);
	raw->type = ARPHRD_NONE;
	KUNIT_EXPECT_EQ(test, -EPROTONOSUPPORT,
			shca_dev_add(SHCA_TEST_DEV2, raw));
	free_netdev(raw);

	/* None of it left a device behind; the free netdev still works. */
	KUNIT_EXPECT_NULL(test, ib_device_get_by_name(SHCA_TEST_DEV2,
						      RDMA_DRIVER_UNKNOWN));
	shca_test_add(test, SHCA_TEST_DEV2, other);
}

static const char * const shca_bad_names[] = {
	"",
	"shca%d",
	"shca-a-name-of-sixty-four-characters-which-ib-core-cannot-hold-x",
};

static void shca_bad_name_desc(const char * const *name, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "name \"%.40s\"", *name);
}

KUNIT_ARRAY_PARAM(shca_bad_name, shca_bad_names, shca_bad_name_desc);

static void shca_test_add_refuses_bad_name(struct kunit *test)
{
	const char * const *name = test->param_value;
	struct net_device *ndev = shca_test_netdev(test);
	struct ib_device *ibdev;

	KUNIT_EXPECT_EQ(test, -EINVAL, shca_dev_add(*name, ndev));
	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	KUNIT_EXPECT_NULL(test, ibdev);
	if (ibdev)
		ib_device_put(ibdev);
	/* The netdev is free for a device with a good name. */
	shca_test_add(test, SHCA_TEST_DEV, ndev);
}

static void shca_test_netdev_removal_removes_device(struct kunit *test)
{
	struct net_device *ndev = shca_test_alloc_netdev(test);
	struct ib_device *ibdev;
	int err;

	err = register_netdev(ndev);
	if (err) {
		free_netdev(ndev);
		KUNIT_FAIL(test, "register_netdev: %d", err);
		return;
	}
	err = shca_dev_add(SHCA_TEST_DEV, ndev);
	KUNIT_EXPECT_EQ(test, 0, err);

	/*
	 * shca holds the netdev until its device is gone, so
	 * unregister_netdev() returns only once the device has been
	 * unregistered and freed: no waiting and hoping here.
	 */
	unregister_netdev(ndev);
	free_netdev(ndev);
	ibdev = ib_device_get_by_name(SHCA_TEST_DEV, RDMA_DRIVER_UNKNOWN);
	KUNIT_EXPECT_NULL(test, ibdev);
	if (ibdev)
		ib_device_put(ibdev);
}

static struct kunit_case shca_device_cases[] = {
	KUNIT_CASE(shca_test_device_answers_from_caps),
	KUNIT_CASE(shca_test_query_device_rejects_udata),
	KUNIT_CASE(shca_test_port_follows_netdev),
	KUNIT_CASE(shca_test_gid_and_pkey_tables),
	KUNIT_CASE(shca_test_pd_alloc_and_free),
	KUNIT_CASE(shca_test_add_refuses_bad_input),
	KUNIT_CASE_PARAM(shca_test_add_refuses_bad_name,
			 shca_bad_name_gen_params),
	KUNIT_CASE(shca_test_netdev_removal_removes_device),
	{}
};

static struct kunit_suite shca_device_suite = {
	.name = "shca_device",
	.test_cases = shca_device_cases,
};

kunit_test_suite(shca_device_suite);
