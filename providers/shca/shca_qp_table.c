// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: the context's table of its QPs, by QPN.  Creating a QP puts it
 * in, polling looks a CQE's QPN up, and a destroyed QP's sweep takes it
 * out (shca_cq.c).  It calls no other file of libshca.
 */
#include <config.h>

#include <pthread.h>

#include "shca.h"

static struct shca_qp **shca_qp_slot(struct shca_context *ctx, uint32_t qpn)
{
	return &ctx->qp_table[qpn % SHCA_QP_TABLE_SIZE];
}

struct shca_qp *shca_qp_lookup(struct shca_context *ctx, uint32_t qpn)
{
	struct shca_qp *qp;

	pthread_mutex_lock(&ctx->qp_lock);
	for (qp = *shca_qp_slot(ctx, qpn); qp; qp = qp->next)
		if (qp->vqp.qp.qp_num == qpn)
			break;
	pthread_mutex_unlock(&ctx->qp_lock);
	return qp;
}

/*
 * A QPN the kernel reissued while its previous owner in this process is
 * still being swept waits for that sweep: a CQE of the old QP must never
 * be found under the new one.
 */
void shca_qp_insert(struct shca_context *ctx, struct shca_qp *qp)
{
	struct shca_qp **slot = shca_qp_slot(ctx, qp->vqp.qp.qp_num);
	struct shca_qp *p;

	pthread_mutex_lock(&ctx->qp_lock);
again:
	for (p = *slot; p; p = p->next) {
		if (p->vqp.qp.qp_num == qp->vqp.qp.qp_num) {
			pthread_cond_wait(&ctx->qp_gone, &ctx->qp_lock);
			goto again;
		}
	}
	qp->next = *slot;
	*slot = qp;
	pthread_mutex_unlock(&ctx->qp_lock);
}

void shca_qp_remove(struct shca_context *ctx, struct shca_qp *qp)
{
	struct shca_qp **p;

	pthread_mutex_lock(&ctx->qp_lock);
	for (p = shca_qp_slot(ctx, qp->vqp.qp.qp_num); *p; p = &(*p)->next) {
		if (*p == qp) {
			*p = qp->next;
			break;
		}
	}
	pthread_cond_broadcast(&ctx->qp_gone);
	pthread_mutex_unlock(&ctx->qp_lock);
}
