// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: address handles.
 *
 * An address handle is host memory only: the device has no AH table, and
 * a UD WQE carries a copy of the AH's address vector.  RoCE addresses
 * always carry a GRH.
 */
#include "shca.h"

/**
 * shca_av_from_ah_attr() - the device's address vector for an ib_core one
 * @av: filled in
 * @attr: the address; RoCE addresses always carry a GRH
 */
void shca_av_from_ah_attr(struct shca_hw_av *av,
			  const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);

	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
}

/**
 * shca_create_ah() - create an address handle
 * @ibah: the object ib_core allocated
 * @init: the address
 * @udata: must carry nothing
 *
 * Never sleeps.  The device has no AH table, but it keeps the count it
 * advertises: max_ah address handles at a time.
 *
 * Return: 0, -EINVAL for an address without a GRH, or -ENOMEM when the
 * device has max_ah already.
 */
int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibah->device);
	int err;

	err = shca_check_no_udata(sdev, udata);
	if (err)
		return err;
	if (!(rdma_ah_get_ah_flags(init->ah_attr) & IB_AH_GRH)) {
		shca_dbg(sdev, "RoCE address handle without a GRH\n");
		return -EINVAL;
	}
	if (!atomic_add_unless(&sdev->nr_ah, 1, sdev->caps.max_ah)) {
		shca_dbg(sdev, "already %u address handles\n", sdev->caps.max_ah);
		return -ENOMEM;
	}
	shca_av_from_ah_attr(&to_shca_ah(ibah)->av, init->ah_attr);
	return 0;
}

/**
 * shca_query_ah() - read an address handle back
 * @ibah: the AH
 * @attr: filled in
 *
 * Return: 0.
 */
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct shca_hw_av *av = &to_shca_ah(ibah)->av;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, NULL, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	rdma_ah_set_dgid_raw(attr, av->dgid);
	return 0;
}

/**
 * shca_destroy_ah() - destroy an address handle
 * @ibah: the AH
 * @flags: unused
 *
 * Return: 0.
 */
int shca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_shca_dev(ibah->device)->nr_ah);
	return 0;
}
