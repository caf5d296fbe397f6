// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_kstep: one verb at a time on an shca device, for the fault
 * injection tests.
 *
 *   insmod shca_kstep.ko dev=shca0
 *
 * On load it takes the standing objects a step builds on: a PD, a CQ and
 * an SRQ on the device.  Writing a step's name to
 * /sys/kernel/debug/shca_kstep/step runs the step in the writer's task: it
 * creates one object on the standing ones, does the step's operation on it
 * (if the step has one) and destroys it again.  The write returns the
 * verb's errno.  So a task's fail-nth counts the allocations of exactly one
 * create, and a one-shot command failure (the device's fail_cmd_once knob)
 * meets exactly the verb the step names.  Reading the file lists the steps
 * and the last result.
 *
 * Like shca_kconsumer it is an ib_client of ib_core's public API; it lets
 * go of its objects when ib_core removes the device.  The one exception is
 * the "gid" step, which calls the driver's query_gid op: ib_core reads a
 * RoCE port's GIDs from its own cache and calls that op for IB ports only.
 */
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

MODULE_DESCRIPTION("One verb at a time on an shca device, for fault injection");
MODULE_LICENSE("Dual BSD/GPL");

static char *dev = "shca0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "the RDMA device");

#define KS_DEPTH	16

/* The device and its standing objects; NULL once the device is gone. */
struct ks_state {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_srq *srq;
};

static struct ks_state ks;
/* Serialises steps, and steps against releasing the standing objects. */
static DEFINE_MUTEX(ks_lock);
static const char *ks_last_name = "none";
static int ks_last_err;
static struct dentry *ks_debugfs;

static struct ib_qp *ks_qp(enum ib_qp_type type, struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.qp_type = type,
		.send_cq = ks.cq,
		.recv_cq = ks.cq,
		.srq = srq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = KS_DEPTH, .max_send_sge = 1,
			 .max_recv_wr = srq ? 0 : KS_DEPTH,
			 .max_recv_sge = srq ? 0 : 1 },
		.port_num = 1,
	};

	return ib_create_qp(ks.pd, &init);
}

static int ks_qp_step(enum ib_qp_type type, struct ib_srq *srq)
{
	struct ib_qp *qp = ks_qp(type, srq);

	if (IS_ERR(qp))
		return PTR_ERR(qp);
	return ib_destroy_qp(qp);
}

static int ks_pd_flags(unsigned int flags)
{
	struct ib_pd *pd = ib_alloc_pd(ks.dev, flags);

	if (IS_ERR(pd))
		return PTR_ERR(pd);
	ib_dealloc_pd(pd);
	return 0;
}

/* alloc_pd, and get_dma_mr for the PD's local DMA lkey. */
static int ks_step_pd(void)
{
	return ks_pd_flags(0);
}

/* The same, with a DMA MR that also has remote rights. */
static int ks_step_dma_mr(void)
{
	return ks_pd_flags(IB_PD_UNSAFE_GLOBAL_RKEY);
}

static int ks_step_fr_mr(void)
{
	struct ib_mr *mr = ib_alloc_mr(ks.pd, IB_MR_TYPE_MEM_REG, KS_DEPTH);

	if (IS_ERR(mr))
		return PTR_ERR(mr);
	return ib_dereg_mr(mr);
}

/* An AH to the device's own link-local GID (index 0, always there). */
static int ks_step_ah(void)
{
	struct rdma_ah_attr attr = {};
	union ib_gid dgid;
	struct ib_ah *ah;
	int err;

	err = rdma_query_gid(ks.dev, 1, 0, &dgid);
	if (err)
		return err;
	attr.type = rdma_ah_find_type(ks.dev, 1);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &dgid, 0, 0, 64, 0);
	eth_broadcast_addr(attr.roce.dmac);
	ah = rdma_create_ah(ks.pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	return 0;
}

static struct ib_cq *ks_cq(void)
{
	return ib_alloc_cq(ks.dev, NULL, KS_DEPTH, 0, IB_POLL_DIRECT);
}

static int ks_step_cq(void)
{
	struct ib_cq *cq = ks_cq();

	if (IS_ERR(cq))
		return PTR_ERR(cq);
	ib_free_cq(cq);
	return 0;
}

static int ks_step_cq_resize(void)
{
	struct ib_cq *cq = ks_cq();
	int err;

	if (IS_ERR(cq))
		return PTR_ERR(cq);
	err = ib_resize_cq(cq, 4 * KS_DEPTH);
	ib_free_cq(cq);
	return err;
}

static int ks_step_cq_modify(void)
{
	struct ib_cq *cq = ks_cq();
	int err;

	if (IS_ERR(cq))
		return PTR_ERR(cq);
	err = rdma_set_cq_moderation(cq, 4, 10);
	ib_free_cq(cq);
	return err;
}

static int ks_step_qp_rc(void)
{
	return ks_qp_step(IB_QPT_RC, NULL);
}

static int ks_step_qp_uc(void)
{
	return ks_qp_step(IB_QPT_UC, NULL);
}

static int ks_step_qp_ud(void)
{
	return ks_qp_step(IB_QPT_UD, NULL);
}

static int ks_step_qp_srq(void)
{
	return ks_qp_step(IB_QPT_RC, ks.srq);
}

static int ks_step_qp_modify(void)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_qp *qp = ks_qp(IB_QPT_RC, NULL);
	int err;

	if (IS_ERR(qp))
		return PTR_ERR(qp);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	ib_destroy_qp(qp);
	return err;
}

static int ks_step_qp_query(void)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	struct ib_qp *qp = ks_qp(IB_QPT_RC, NULL);
	int err;

	if (IS_ERR(qp))
		return PTR_ERR(qp);
	err = ib_query_qp(qp, &attr, IB_QP_STATE, &init);
	ib_destroy_qp(qp);
	return err;
}

/* A UD QP attached to a multicast group, and detached again. */
static int ks_step_mcast_attach(void)
{
	union ib_gid mgid = { .raw = { 0xff, 0x0e, [15] = 0x01 } };
	struct ib_qp *qp = ks_qp(IB_QPT_UD, NULL);
	int err;

	if (IS_ERR(qp))
		return PTR_ERR(qp);
	err = ib_attach_mcast(qp, &mgid, 0);
	if (!err)
		err = ib_detach_mcast(qp, &mgid, 0);
	ib_destroy_qp(qp);
	return err;
}

static struct ib_srq *ks_srq(void)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = KS_DEPTH, .max_sge = 1 },
	};

	return ib_create_srq(ks.pd, &init);
}

static int ks_step_srq(void)
{
	struct ib_srq *srq = ks_srq();

	if (IS_ERR(srq))
		return PTR_ERR(srq);
	ib_destroy_srq(srq);
	return 0;
}

static int ks_step_srq_modify(void)
{
	struct ib_srq_attr attr = { .srq_limit = 4 };
	struct ib_srq *srq = ks_srq();
	int err;

	if (IS_ERR(srq))
		return PTR_ERR(srq);
	err = ib_modify_srq(srq, &attr, IB_SRQ_LIMIT);
	ib_destroy_srq(srq);
	return err;
}

static int ks_step_srq_resize(void)
{
	struct ib_srq_attr attr = { .max_wr = 4 * KS_DEPTH };
	struct ib_srq *srq = ks_srq();
	int err;

	if (IS_ERR(srq))
		return PTR_ERR(srq);
	err = ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR);
	ib_destroy_srq(srq);
	return err;
}

static int ks_step_srq_query(void)
{
	struct ib_srq_attr attr;
	struct ib_srq *srq = ks_srq();
	int err;

	if (IS_ERR(srq))
		return PTR_ERR(srq);
	err = ib_query_srq(srq, &attr);
	ib_destroy_srq(srq);
	return err;
}

static int ks_step_port(void)
{
	struct ib_port_attr attr;

	return ib_query_port(ks.dev, 1, &attr);
}

static int ks_step_pkey(void)
{
	u16 pkey;

	return ib_query_pkey(ks.dev, 1, 0, &pkey);
}

static int ks_step_gid(void)
{
	union ib_gid gid;

	if (!ks.dev->ops.query_gid)
		return -EOPNOTSUPP;
	return ks.dev->ops.query_gid(ks.dev, 1, 0, &gid);
}

static const struct {
	const char *name;
	int (*run)(void);
} ks_steps[] = {
	{ "pd", ks_step_pd },
	{ "dma_mr", ks_step_dma_mr },
	{ "fr_mr", ks_step_fr_mr },
	{ "ah", ks_step_ah },
	{ "cq", ks_step_cq },
	{ "cq_resize", ks_step_cq_resize },
	{ "cq_modify", ks_step_cq_modify },
	{ "qp_rc", ks_step_qp_rc },
	{ "qp_uc", ks_step_qp_uc },
	{ "qp_ud", ks_step_qp_ud },
	{ "qp_srq", ks_step_qp_srq },
	{ "qp_modify", ks_step_qp_modify },
	{ "qp_query", ks_step_qp_query },
	{ "mcast_attach", ks_step_mcast_attach },
	{ "srq", ks_step_srq },
	{ "srq_modify", ks_step_srq_modify },
	{ "srq_resize", ks_step_srq_resize },
	{ "srq_query", ks_step_srq_query },
	{ "port", ks_step_port },
	{ "pkey", ks_step_pkey },
	{ "gid", ks_step_gid },
};

static ssize_t ks_step_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char name[32];
	int err = -EINVAL;
	size_t len;
	int i;

	if (count >= sizeof(name))
		return -EINVAL;
	if (copy_from_user(name, ubuf, count))
		return -EFAULT;
	name[count] = '\0';
	len = strcspn(name, "\n");
	name[len] = '\0';
	for (i = 0; i < ARRAY_SIZE(ks_steps); i++)
		if (!strcmp(name, ks_steps[i].name))
			break;
	if (i == ARRAY_SIZE(ks_steps))
		return -EINVAL;

	mutex_lock(&ks_lock);
	if (ks.dev)
		err = ks_steps[i].run();
	else
		err = -ENODEV;
	ks_last_name = ks_steps[i].name;
	ks_last_err = err;
	mutex_unlock(&ks_lock);
	return err ?: count;
}

static int ks_step_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(ks_steps); i++)
		seq_printf(m, "%s%s", i ? " " : "", ks_steps[i].name);
	mutex_lock(&ks_lock);
	seq_printf(m, "\nlast %s %d\n", ks_last_name, ks_last_err);
	mutex_unlock(&ks_lock);
	return 0;
}

static int ks_step_open(struct inode *inode, struct file *file)
{
	return single_open(file, ks_step_show, NULL);
}

static const struct file_operations ks_step_fops = {
	.owner = THIS_MODULE,
	.open = ks_step_open,
	.read = seq_read,
	.write = ks_step_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static void ks_release_locked(void)
{
	lockdep_assert_held(&ks_lock);
	if (!IS_ERR_OR_NULL(ks.srq))
		ib_destroy_srq(ks.srq);
	if (!IS_ERR_OR_NULL(ks.cq))
		ib_free_cq(ks.cq);
	if (!IS_ERR_OR_NULL(ks.pd))
		ib_dealloc_pd(ks.pd);
	memset(&ks, 0, sizeof(ks));
}

static int ks_add(struct ib_device *ibdev)
{
	return 0;
}

static void ks_remove(struct ib_device *ibdev, void *data)
{
	mutex_lock(&ks_lock);
	if (ibdev == ks.dev)
		ks_release_locked();
	mutex_unlock(&ks_lock);
}

static struct ib_client ks_client = {
	.name = "shca_kstep",
	.add = ks_add,
	.remove = ks_remove,
};

static int ks_setup_locked(struct ib_device *ibdev)
{
	lockdep_assert_held(&ks_lock);
	ks.dev = ibdev;
	ks.pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(ks.pd))
		return PTR_ERR(ks.pd);
	ks.cq = ks_cq();
	if (IS_ERR(ks.cq))
		return PTR_ERR(ks.cq);
	ks.srq = ks_srq();
	return PTR_ERR_OR_ZERO(ks.srq);
}

static int __init ks_init(void)
{
	struct ib_device *ibdev;
	int err;

	err = ib_register_client(&ks_client);
	if (err)
		return err;
	ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		ib_unregister_client(&ks_client);
		return -ENODEV;
	}
	mutex_lock(&ks_lock);
	err = ks_setup_locked(ibdev);
	if (err)
		ks_release_locked();
	mutex_unlock(&ks_lock);
	ib_device_put(ibdev);
	if (err) {
		ib_unregister_client(&ks_client);
		return err;
	}
	ks_debugfs = debugfs_create_dir("shca_kstep", NULL);
	debugfs_create_file("step", 0600, ks_debugfs, NULL, &ks_step_fops);
	return 0;
}

static void __exit ks_exit(void)
{
	debugfs_remove_recursive(ks_debugfs);
	ib_unregister_client(&ks_client);
	mutex_lock(&ks_lock);
	ks_release_locked();
	mutex_unlock(&ks_lock);
}

module_init(ks_init);
module_exit(ks_exit);
