/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: what differs between the kernels shca builds for.
 *
 * shca is written against the newest ib_core it supports (6.12) and builds
 * for Debian 12's default 6.1 kernel too.  Every difference between them
 * is settled here, on feature tests the Kbuild makes of the kernel's own
 * headers (SHCA_HAVE_*), so that no other file of the driver tests what
 * kernel it is built for.  The one difference of a header's name
 * (<linux/unaligned.h>, <asm/unaligned.h> before 6.12) is settled in the
 * Kbuild as well, with a shim on the include path (compat/).
 *
 * What an older ib_core lacks, shca lacks there too:
 *  - RDMA FLUSH and ATOMIC WRITE (ib_core 6.2): their device capabilities
 *    and MR access flags read as zero, so the device offers neither and no
 *    MR can ask for them;
 *  - "rdma res" driver attributes of an SRQ (ib_core 6.2): there is no
 *    fill_res_srq_entry to register.
 */
#ifndef SHCA_COMPAT_H
#define SHCA_COMPAT_H

#include <linux/mm.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#ifdef SHCA_NO_IB_VERBS_H
#error "compat/features.sh found no include/rdma/ib_verbs.h in the kernel tree"
#endif

#ifndef SHCA_HAVE_IB_FLUSH
#define IB_DEVICE_FLUSH_GLOBAL		0
#define IB_DEVICE_FLUSH_PERSISTENT	0
#define IB_DEVICE_ATOMIC_WRITE		0
#define IB_ACCESS_FLUSH_GLOBAL		0
#define IB_ACCESS_FLUSH_PERSISTENT	0
/*
 * Only a process posts these, and a process's CQEs are decoded by
 * libshca: a kernel CQ never holds one.  Their slots in the kernel's
 * decoding table need a name all the same.
 */
#define IB_WC_FLUSH			IB_WC_RDMA_WRITE
#define IB_WC_ATOMIC_WRITE		IB_WC_RDMA_WRITE
#endif

#ifndef SHCA_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int shca_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq);

/*
 * ib_core hands create_cq the whole attribute bundle from 6.10 on, and
 * only the driver's udata before; shca_create_cq() takes the udata.
 */
#ifdef SHCA_HAVE_CREATE_CQ_ATTRS
static inline int shca_create_cq_op(struct ib_cq *ibcq,
				    const struct ib_cq_init_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	return shca_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define shca_create_cq_op shca_create_cq
#endif

/**
 * shca_compat_set_ops() - the callbacks only some kernels have
 * @ibdev: the device being set up, after its main ops table
 */
static inline void shca_compat_set_ops(struct ib_device *ibdev)
{
#ifdef SHCA_HAVE_FILL_RES_SRQ
	static const struct ib_device_ops ops = {
		.fill_res_srq_entry = shca_fill_res_srq_entry,
	};

	ib_set_device_ops(ibdev, &ops);
#endif
}

#endif /* SHCA_COMPAT_H */
