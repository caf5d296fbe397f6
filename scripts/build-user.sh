#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The userspace side: rdma-core with libshca (scripts/build-rdma-core.sh),
# recorded in out/rdma-core-build for the guest, and the project's
# userspace tests built against it into out/user/:
#   cq_sweep_test      the shared CQ sweep, on the host
#   shca_uverbs_test   what a process can do to shca, in the guest
#   verbs_rate         a device's small-message rate through plain
#                      libibverbs, for make bench
#   shca_soak          one traffic process of make soak, which checks
#                      every completion it expects
#   fault_step         one create with its Nth allocation failed, for the
#                      fault_alloc integration test
#   syscall_cost       the time of one system call in this boot, for
#                      make bench
# Warnings fail the build, as they do for the kernel module.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

build=$("$SHCA_TOP/scripts/build-rdma-core.sh")
src=$(dirname "$build")/src
mkdir -p "$SHCA_TOP/out/user"
echo "$build" > "$SHCA_TOP/out/rdma-core-build"

# rdma-core's build does not stop on warnings: libshca must have none.
# Every source file of it, as rdma_provider() in its CMakeLists.txt lists
# them.
gcc -fsyntax-only -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wmissing-prototypes -Wstrict-prototypes -Wshadow -Werror \
	-I"$build/include" -I"$src" -I"$SHCA_TOP/include/uapi" \
	-I"$SHCA_TOP/include/shca" "$SHCA_TOP"/providers/shca/*.c

cflags=(-O2 -g -Wall -Wextra -Werror -pthread
	-I"$SHCA_TOP/include/uapi" -I"$SHCA_TOP/include/shca"
	-I"$SHCA_TOP/tests/vectors")
gcc "${cflags[@]}" "$SHCA_TOP/tests/user/cq_sweep_test.c" \
	-o "$SHCA_TOP/out/user/cq_sweep_test"
gcc "${cflags[@]}" -Wno-unused-parameter -I"$build/include" -I"$src" \
	-I"$SHCA_TOP/providers/shca" "$SHCA_TOP/tests/user/shca_uverbs_test.c" \
	-L"$build/lib" -Wl,-rpath,"$build/lib" -libverbs \
	-o "$SHCA_TOP/out/user/shca_uverbs_test"
gcc "${cflags[@]}" -Wno-unused-parameter -I"$build/include" \
	"$SHCA_TOP/tests/user/verbs_rate.c" \
	-L"$build/lib" -Wl,-rpath,"$build/lib" -libverbs \
	-o "$SHCA_TOP/out/user/verbs_rate"
gcc "${cflags[@]}" -Wno-unused-parameter -I"$build/include" -I"$src" \
	-I"$SHCA_TOP/providers/shca" "$SHCA_TOP/tests/user/shca_soak.c" \
	-L"$build/lib" -Wl,-rpath,"$build/lib" -libverbs \
	-o "$SHCA_TOP/out/user/shca_soak"
gcc "${cflags[@]}" -I"$build/include" "$SHCA_TOP/tests/user/fault_step.c" \
	-L"$build/lib" -Wl,-rpath,"$build/lib" -libverbs \
	-o "$SHCA_TOP/out/user/fault_step"
gcc "${cflags[@]}" "$SHCA_TOP/tests/user/syscall_cost.c" \
	-o "$SHCA_TOP/out/user/syscall_cost"
