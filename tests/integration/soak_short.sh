#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make soak in miniature: scripts/guest/soak.sh for half a minute, with a
# seed from the clock that it prints first (SOAK_SEED=N make soak draws
# the same again), and without its unload and reload of shca (a minute
# and a half under KASAN) but in make check-long.
# Traffic processes check every completion they expect while they are
# killed, their QPs destroyed and reset, garbage is written into their
# rings, devices and netdevs are deleted under them, and shca is reloaded
# when idle (in make check-long); it must end with no error, rdma res
# empty and no kernel report.
# shca-timeout: 600
# shca-long: the unload and reload too
# Not on 6.1: what the soak drives is the model and shca's own teardown,
# the same code on every kernel, and make check's time goes to the tests
# of what 6.1's ib_core does differently.  make soak runs it anywhere.
# make check runs it on the debug kernel, under KASAN and lockdep; make
# check-long on the stock 6.12 kernel too, beside its 30-minute soak.
# shca-kernels: debug stock
# shca-check-kernels: debug
. "$(dirname "$0")/../lib.sh"

reload=(--no-reload)
[ "$SHCA_LONG" != 1 ] || reload=()
bash "$SHCA_TOP/scripts/guest/soak.sh" --seconds 30 --workers 4 "${reload[@]}" \
	--report "$SHCA_OUT/soak_short.txt" || fail "the soak found errors"
echo ok
