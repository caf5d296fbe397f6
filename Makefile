# SPDX-License-Identifier: GPL-2.0
#
# shca: the user's front door.
#
#   make            build shca.ko (and its KUnit module) against KDIR
#   make check      everything: lint, KUnit and integration tests on the
#                   debug kernel, integration tests on the stock 6.12 and
#                   6.1 kernels, the package test
#   make check-long the second tier: what make check leaves out on each
#                   kernel, the long variants of tests, the 30-minute soak
#   make kunit      only the KUnit suites, on the debug kernel
#   make vm         a shell on the debug kernel with shca loaded
#   make demo       boot the debug kernel and show what shca does
#   make lint       checkpatch --strict, kernel-doc, shellcheck, the
#                   documentation, sparse and the calls between files
#   make docs       the architecture picture from its .dot file, and the
#                   HTML pages in out/docs/
#   make kernel     build (or find cached) the debug kernel
#   make user       build rdma-core with libshca, and the userspace tests
#   make bench      perftest against rdma_rxe and the in-kernel
#                   microbenchmarks, on the stock kernel (KERNEL=debug for
#                   the debug one); a table, CSV and plots in out/
#   make soak       a randomised mix of traffic and faults for SOAK_SECONDS
#                   (default 1800) on the SMP debug kernel
#   make debs       the shca-dkms and libshca Debian packages, in out/debs/
#   make pkgtest    the packages installed on a Debian 12 system, booted on
#                   its 6.1 and 6.12 kernels (scripts/pkg-test.sh)
#   make install    shca.ko for the running kernel (KVER=, KDIR=) and the
#                   provider for the system's libibverbs (DESTDIR= to stage)
#   make uninstall  remove what make install put there
#
# KDIR defaults to the debug kernel's build directory, built on first use.

SHELL := /bin/bash
TOP := $(CURDIR)
KDIR ?= $(shell $(TOP)/scripts/build-kernel.sh)

.PHONY: all modules clean check check-long kunit itest vm demo lint docs kernel stock user \
	bench soak debs install uninstall pkgtest

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(TOP) modules

clean:
	$(MAKE) -C $(KDIR) M=$(TOP) clean 2>/dev/null || true
	rm -rf $(TOP)/out

kernel:
	@$(TOP)/scripts/build-kernel.sh

stock:
	@$(TOP)/scripts/fetch-stock.sh

user:
	@$(TOP)/scripts/build-user.sh

bench:
	@$(TOP)/scripts/bench.sh

soak:
	@$(TOP)/scripts/soak.sh

check:
	@$(TOP)/scripts/check.sh

check-long:
	@$(TOP)/scripts/check.sh --long

kunit:
	@$(TOP)/scripts/check.sh --kunit

vm:
	@$(TOP)/scripts/build-module.sh $${KERNEL:-debug}
	@$(TOP)/scripts/vm.sh --interactive --kernel $${KERNEL:-debug} \
		--out $(TOP)/out/vm-shell

demo:
	@$(TOP)/scripts/demo.sh

lint:
	@$(TOP)/scripts/lint.sh

docs:
	@$(TOP)/scripts/docs.sh

itest:
	@$(TOP)/scripts/check.sh --itest

debs:
	@$(TOP)/scripts/build-debs.sh

pkgtest:
	@$(TOP)/scripts/check.sh --pkg

install:
	@$(TOP)/scripts/install.sh install

uninstall:
	@$(TOP)/scripts/install.sh uninstall
