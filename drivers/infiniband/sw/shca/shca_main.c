// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: a soft HCA.  Module entry points, the verbs ops table, device
 * creation through "rdma link add" and the netdev notifier.
 *
 * Lock order: rtnl_lock and ib_core's unregistration_lock come before
 * shca_dev_list_lock (shca.h has the driver's whole order).
 *
 * Module exit and device teardown.  A device stays on shca_dev_list from
 * its creation until its teardown has returned to ib_core, not merely
 * begun: ib_core holds the device's unregistration_lock from before
 * dealloc_driver until after it returns, so the reaper takes that lock to
 * know that the teardown thread has left shca's text, and only then takes
 * the device off the list and drops the device reference dealloc_driver
 * took.  Module exit unregisters the devices it can, waits for the list
 * to empty and flushes the reaper, so it cannot return while any thread
 * (rdma link delete, a netdev's deletion, rdma_dev_exit_net) is still in
 * a teardown.  The teardown itself quiets everything of the device that
 * runs on its own: debugfs, the EQs' vectors and their work items, the CQ
 * moderation timers and the model's workqueue.  The driver queues no RCU
 * callbacks.
 */
#include <kunit/visibility.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "shca.h"
#include "shca_version.h"

MODULE_AUTHOR("The shca developers");
MODULE_DESCRIPTION("shca: a soft InfiniBand/RoCE HCA with a hardware model");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(SHCA_VERSION);

/* Every shca device, from creation until its teardown has returned. */
static LIST_HEAD(shca_dev_list);
/* Protects shca_dev_list and each device's list entry and dead flag. */
static DEFINE_MUTEX(shca_dev_list_lock);
/* Devices on shca_dev_list; module exit waits for it to drop to zero. */
static atomic_t shca_dev_count = ATOMIC_INIT(0);
/* Woken when a device leaves shca_dev_list. */
static DECLARE_WAIT_QUEUE_HEAD(shca_dev_list_wq);
/* Device teardowns begun and not finished, for debugfs. */
static atomic_t shca_teardowns = ATOMIC_INIT(0);

static void shca_reap(struct work_struct *work);
/* Takes dead devices off shca_dev_list once their teardown returned. */
static DECLARE_WORK(shca_reap_work, shca_reap);

static struct shca_dev *shca_first_dead(void)
{
	struct shca_dev *sdev;

	lockdep_assert_held(&shca_dev_list_lock);
	list_for_each_entry(sdev, &shca_dev_list, list)
		if (sdev->dead)
			return sdev;
	return NULL;
}

static void shca_reap(struct work_struct *work)
{
	struct shca_dev *sdev;

	for (;;) {
		mutex_lock(&shca_dev_list_lock);
		sdev = shca_first_dead();
		mutex_unlock(&shca_dev_list_lock);
		if (!sdev)
			return;
		/*
		 * ib_core releases this lock only once dealloc_driver has
		 * returned.  The device's refcount is zero for good, so no
		 * one else takes it for long.
		 */
		mutex_lock(&sdev->ibdev.unregistration_lock);
		mutex_unlock(&sdev->ibdev.unregistration_lock);

		mutex_lock(&shca_dev_list_lock);
		list_del_init(&sdev->list);
		mutex_unlock(&shca_dev_list_lock);
		put_device(&sdev->ibdev.dev);
		atomic_dec(&shca_teardowns);
		atomic_dec(&shca_dev_count);
		wake_up_all(&shca_dev_list_wq);
	}
}

/*
 * The last op ib_core calls, from ib_unregister_device() or from
 * ib_dealloc_device() when setup fails: it must cope with a device that
 * got only part of the way up.  A listed device stays listed, marked
 * dead, with a device reference, until the reaper sees this return.
 */
static void shca_dealloc_driver(struct ib_device *ibdev)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	struct net_device *ndev;
	bool listed;

	atomic_inc(&shca_teardowns);
	shca_debugfs_del_dev(sdev);
	mutex_lock(&shca_dev_list_lock);
	listed = !list_empty(&sdev->list);
	if (listed) {
		sdev->dead = true;
		get_device(&ibdev->dev);
	}
	/* The netdev notifier and "rdma link add" find it no more. */
	ndev = sdev->ndev;
	sdev->ndev = NULL;
	mutex_unlock(&shca_dev_list_lock);
	if (ndev)
		netdev_put(ndev, &sdev->ndev_tracker);
	if (sdev->hw)
		shca_eq_destroy(sdev);
	xa_destroy(&sdev->cqs);
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->srqs);
	xa_destroy(&sdev->odp_mrs);
	mutex_destroy(&sdev->odp_mutex);
	/* Every QP, and with it every attachment, is gone. */
	WARN_ON_ONCE(!list_empty(&sdev->mcast_quotas));
	mutex_destroy(&sdev->mcast_quota_lock);
	shca_debugfs_teardown_delay();
	shca_hw_destroy(sdev->hw);
	sdev->hw = NULL;
	free_percpu(sdev->drv_counters);
	sdev->drv_counters = NULL;
	if (listed)
		queue_work(system_unbound_wq, &shca_reap_work);
	else
		atomic_dec(&shca_teardowns);
}

static const struct ib_device_ops shca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SHCA_UVERBS_ABI_VERSION,

	.add_gid = shca_add_gid,
	.alloc_dm = shca_alloc_dm,
	.alloc_hw_port_stats = shca_alloc_hw_port_stats,
	.alloc_mr = shca_alloc_mr,
	.alloc_mw = shca_alloc_mw,
	.alloc_pd = shca_alloc_pd,
	.alloc_ucontext = shca_alloc_ucontext,
#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
	.advise_mr = shca_advise_mr,
#endif
	.alloc_xrcd = shca_alloc_xrcd,
	.attach_mcast = shca_attach_mcast,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq_op,
	.create_qp = shca_create_qp,
	.create_srq = shca_create_srq,
	.create_user_ah = shca_create_ah,
	.dealloc_dm = shca_dealloc_dm,
	.dealloc_driver = shca_dealloc_driver,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.dealloc_xrcd = shca_dealloc_xrcd,
	.del_gid = shca_del_gid,
	.dereg_mr = shca_dereg_mr,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.destroy_srq = shca_destroy_srq,
	.detach_mcast = shca_detach_mcast,
	.disassociate_ucontext = shca_disassociate_ucontext,
	.fill_res_cq_entry = shca_fill_res_cq_entry,
	.fill_res_mr_entry = shca_fill_res_mr_entry,
	.fill_res_qp_entry = shca_fill_res_qp_entry,
	.get_dev_fw_str = shca_get_dev_fw_str,
	.get_dma_mr = shca_get_dma_mr,
	.get_hw_stats = shca_get_hw_stats,
	.get_link_layer = shca_get_link_layer,
	.get_netdev = shca_get_netdev,
	.get_port_immutable = shca_get_port_immutable,
	.get_vector_affinity = shca_get_vector_affinity,
	.map_mr_sg = shca_map_mr_sg,
	.mmap = shca_mmap,
	.mmap_free = shca_mmap_free,
	.modify_cq = shca_modify_cq,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_ah = shca_query_ah,
	.query_device = shca_query_device,
	.query_gid = shca_query_gid,
	.query_pkey = shca_query_pkey,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_srq = shca_query_srq,
	.query_ucontext = shca_query_ucontext,
	.reg_dm_mr = shca_reg_dm_mr,
	.reg_user_mr = shca_reg_user_mr,
	.req_notify_cq = shca_req_notify_cq,
	.rereg_user_mr = shca_rereg_user_mr,
	.resize_cq = shca_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, shca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, shca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, shca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, shca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, shca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, shca_xrcd, ibxrcd),
};

static struct shca_dev *shca_find_by_ndev(const struct net_device *ndev)
{
	struct shca_dev *sdev;

	lockdep_assert_held(&shca_dev_list_lock);
	list_for_each_entry(sdev, &shca_dev_list, list)
		if (!sdev->dead && sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/**
 * shca_dev_add_flags() - create and register a shca device, with flags
 * @name: the ib_device name
 * @ndev: the netdev; must be an Ethernet device without a shca device
 * @flags: SHCA_DEV_F_*; SHCA_DEV_F_NO_MAD leaves the GSI QP to whoever
 *	creates it
 *
 * Return: 0, -EINVAL for an empty, too long or patterned name, -EEXIST
 * when @name is taken, -EBUSY when @ndev already has a shca device,
 * -EPROTONOSUPPORT when @ndev is not Ethernet, or another negative errno.
 */
VISIBLE_IF_KUNIT int shca_dev_add_flags(const char *name,
					struct net_device *ndev, u32 flags)
{
	struct ib_device *other;
	struct shca_dev *sdev;
	u64 segment;
	int err;

	if (!*name || strnlen(name, IB_DEVICE_NAME_MAX) >= IB_DEVICE_NAME_MAX ||
	    strchr(name, '%')) {
		netdev_dbg(ndev, "shca: bad RDMA device name\n");
		return -EINVAL;
	}

	if (ndev->type != ARPHRD_ETHER) {
		netdev_dbg(ndev, "shca: %s is not an Ethernet device\n",
			   netdev_name(ndev));
		return -EPROTONOSUPPORT;
	}
	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		netdev_dbg(ndev, "shca: RDMA device name %s is taken\n", name);
		return -EEXIST;
	}

	sdev = ib_alloc_device(shca_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	INIT_LIST_HEAD(&sdev->list);
	sdev->flags = flags;
	xa_init_flags(&sdev->cqs, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->qps, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->srqs, XA_FLAGS_LOCK_IRQ);
	xa_init(&sdev->odp_mrs);
	mutex_init(&sdev->odp_mutex);
	mutex_init(&sdev->mcast_quota_lock);
	INIT_LIST_HEAD(&sdev->mcast_quotas);
	init_waitqueue_head(&sdev->qpn_wait);
	/* From here on, ib_dealloc_device() undoes everything we did. */
	ib_set_device_ops(&sdev->ibdev, &shca_dev_ops);
	shca_compat_set_ops(&sdev->ibdev);
	if (IS_ENABLED(CONFIG_INFINIBAND_USER_ACCESS))
		sdev->ibdev.driver_def = shca_uapi_defs;
	/*
	 * Beyond ib_core's default commands: a process rings its doorbells
	 * with a POST_SEND or POST_RECV of no work requests, and arms its
	 * CQs through the kernel.
	 */
	sdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	sdev->hw = shca_hw_create();
	sdev->drv_counters = alloc_percpu(struct shca_drv_counters);
	if (!sdev->hw || !sdev->drv_counters) {
		err = -ENOMEM;
		goto err_dealloc_dev;
	}
	shca_odp_init(sdev);

	mutex_lock(&shca_dev_list_lock);
	if (shca_find_by_ndev(ndev)) {
		mutex_unlock(&shca_dev_list_lock);
		netdev_dbg(ndev, "shca: %s already has a shca device\n",
			   netdev_name(ndev));
		err = -EBUSY;
		goto err_dealloc_dev;
	}
	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	list_add_tail(&sdev->list, &shca_dev_list);
	atomic_inc(&shca_dev_count);
	mutex_unlock(&shca_dev_list_lock);

	err = shca_cmd_query_caps(sdev, &sdev->caps);
	if (err)
		goto err_dealloc_dev;
	segment = shca_netdev_segment(ndev);
	err = shca_cmd_set_port(sdev, ndev, NULL);
	if (err)
		goto err_dealloc_dev;
	err = shca_eq_create(sdev);
	if (err)
		goto err_dealloc_dev;

	addrconf_addr_eui48((unsigned char *)&sdev->ibdev.node_guid,
			    ndev->dev_addr);
	strscpy(sdev->ibdev.node_desc, "shca", sizeof(sdev->ibdev.node_desc));
	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = SHCA_HW_NUM_PORTS;
	sdev->ibdev.num_comp_vectors = sdev->num_eqs;

	err = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (err)
		goto err_dealloc_dev;

	shca_debugfs_add_dev(sdev, name);

	/*
	 * A racing "rdma link delete" may free the device as soon as it is
	 * registered; keep its memory until we are done with it.
	 */
	get_device(&sdev->ibdev.dev);
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		/* A name taken since the check above comes back as -ENFILE. */
		if (err == -ENFILE)
			err = -EEXIST;
		ib_dealloc_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
		return err;
	}

	/*
	 * The notifier skips a device that is not registered yet.  If the
	 * netdev went away or moved to another network namespace meanwhile,
	 * its NETDEV_UNREGISTER has come and gone (both happen in one rtnl
	 * section), so remove the device here.  The caller holds @ndev.
	 */
	rtnl_lock();
	if ((ndev->reg_state != NETREG_REGISTERED ||
	     shca_netdev_segment(ndev) != segment) &&
	    ib_device_try_get(&sdev->ibdev)) {
		ib_unregister_device_queued(&sdev->ibdev);
		ib_device_put(&sdev->ibdev);
	}
	rtnl_unlock();
	put_device(&sdev->ibdev.dev);
	return 0;

err_dealloc_dev:
	ib_dealloc_device(&sdev->ibdev);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_dev_add_flags);

/**
 * shca_dev_add() - create and register a shca device bound to a netdev
 * @name: the ib_device name
 * @ndev: the netdev; must be an Ethernet device without a shca device
 *
 * The "rdma link add" entry point.
 *
 * Return: as shca_dev_add_flags().
 */
int shca_dev_add(const char *name, struct net_device *ndev)
{
	return shca_dev_add_flags(name, ndev, 0);
}
EXPORT_SYMBOL_IF_KUNIT(shca_dev_add);

static struct rdma_link_ops shca_link_ops = {
	.type = "shca",
	.newlink = shca_dev_add,
};

static int shca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct shca_dev *sdev;

	mutex_lock(&shca_dev_list_lock);
	sdev = shca_find_by_ndev(ndev);
	if (sdev && !ib_device_try_get(&sdev->ibdev))
		sdev = NULL;
	mutex_unlock(&shca_dev_list_lock);
	if (!sdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Also a move to another network namespace. */
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
		/* A link change comes back as a port event through the EQ. */
		shca_cmd_set_port(sdev, ndev, NULL);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block shca_netdev_notifier = {
	.notifier_call = shca_netdev_event,
};

/*
 * Unregister every device; wait for those already on their way out, until
 * their teardown has returned.
 */
static void shca_remove_all(void)
{
	struct shca_dev *sdev, *victim;

	for (;;) {
		victim = NULL;
		mutex_lock(&shca_dev_list_lock);
		list_for_each_entry(sdev, &shca_dev_list, list) {
			if (!sdev->dead && ib_device_try_get(&sdev->ibdev)) {
				victim = sdev;
				break;
			}
		}
		mutex_unlock(&shca_dev_list_lock);
		if (!victim)
			break;
		ib_unregister_device_and_put(&victim->ibdev);
	}
	wait_event(shca_dev_list_wq, !atomic_read(&shca_dev_count));
	/* The reaper's last pass may still be on its way out. */
	flush_work(&shca_reap_work);
}

static int __init shca_init(void)
{
	int err;

	shca_res_init();
	shca_debugfs_init(&shca_teardowns);
	err = register_netdevice_notifier(&shca_netdev_notifier);
	if (err)
		goto err_debugfs;
	rdma_link_register(&shca_link_ops);
	return 0;

err_debugfs:
	shca_debugfs_exit();
	return err;
}

static void __exit shca_exit(void)
{
	rdma_link_unregister(&shca_link_ops);
	unregister_netdevice_notifier(&shca_netdev_notifier);
	shca_remove_all();
	shca_debugfs_exit();
}

module_init(shca_init);
module_exit(shca_exit);
MODULE_ALIAS_RDMA_LINK("shca");
