/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the memory ordering of the data path shared with libshca.
 *
 * The headers beside this one (shca_wq.h, shca_wqe.h, shca_cqe.h) are
 * compiled by the kernel driver and by libshca alike.  Where they load or
 * store an index another thread reads, they go through these hooks.  The
 * includer may define any of them before it includes a data path header
 * (the kernel: smp_load_acquire(), smp_store_release(), READ_ONCE() and
 * WRITE_ONCE()); the defaults are the compiler's atomics.
 */
#ifndef SHCA_DP_SYNC_H
#define SHCA_DP_SYNC_H

/* Load *@p; later loads and stores stay after it. */
#ifndef shca_dp_load_acquire
#define shca_dp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#endif

/* Store @v in *@p; earlier loads and stores stay before it. */
#ifndef shca_dp_store_release
#define shca_dp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#endif

/* Load *@p once, untorn, with no ordering. */
#ifndef shca_dp_read_once
#define shca_dp_read_once(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#endif

/* Store @v in *@p once, untorn, with no ordering. */
#ifndef shca_dp_write_once
#define shca_dp_write_once(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#endif

#endif /* SHCA_DP_SYNC_H */
