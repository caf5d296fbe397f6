// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: memory windows.  The kernel allocates and releases them; a
 * bind is a BIND_MW WQE on the QP's send queue, which the device executes
 * in order, for type 1 windows (ibv_bind_mw(), posted by shca_post.c) as
 * for type 2 ones (IBV_WR_BIND_MW, ibv_wr_bind_mw()).  This file builds
 * the WQE.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include <ccan/array_size.h>

#include "shca.h"

struct ibv_mw *shca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	/* The kernel refuses a type it does not know, with EINVAL. */
	if (ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			     sizeof(resp))) {
		free(mw);
		return NULL;
	}
	return mw;
}

int shca_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

/* A window's rights as the device names them; -1 for one it lacks. */
static int shca_bind_access(unsigned int flags)
{
	static const struct {
		unsigned int ibv;
		uint32_t hw;
	} map[] = {
		{ IBV_ACCESS_LOCAL_WRITE, SHCA_BIND_LOCAL_WRITE },
		{ IBV_ACCESS_REMOTE_WRITE, SHCA_BIND_REMOTE_WRITE },
		{ IBV_ACCESS_REMOTE_READ, SHCA_BIND_REMOTE_READ },
		{ IBV_ACCESS_REMOTE_ATOMIC, SHCA_BIND_REMOTE_ATOMIC },
		{ IBV_ACCESS_FLUSH_GLOBAL, SHCA_BIND_FLUSH_GLOBAL },
		{ IBV_ACCESS_FLUSH_PERSISTENT, SHCA_BIND_FLUSH_PERSISTENT },
		/* The model places every access in order. */
		{ IBV_ACCESS_RELAXED_ORDERING, 0 },
		/* The device refuses it for a type 1 window. */
		{ IBV_ACCESS_ZERO_BASED, SHCA_BIND_ZERO_BASED },
	};
	uint32_t hw = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		if (flags & map[i].ibv) {
			hw |= map[i].hw;
			flags &= ~map[i].ibv;
		}
	}
	return flags ? -1 : (int)hw;
}

int shca_wqe_bind(struct shca_hw_send_wqe *w, struct ibv_mw *mw,
		  uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	int access = shca_bind_access(info->mw_access_flags);

	/* The device checks the rest: keys, ranges, rights, the PD. */
	if (!mw || access < 0 || (!info->mr && info->length))
		return EINVAL;
	shca_wqe_set_bind(w, mw->rkey, rkey, info->mr ? info->mr->lkey : 0,
			  info->addr, info->length, access);
	return 0;
}
