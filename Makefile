# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce top-level Makefile.
#
#   make              build sroce.ko (against KDIR), the provider and the host tests
#   make demo         the main job: build, boot two guests, run RDMA traffic, print results
#   make bench        sroce against rxe and the link, with a plot (bench-quick: fewer sizes, two rounds)
#   make test         the gate and one shard of three (what .ci/run runs; tools/test-all.sh)
#   make test-full    every test of every shard (Documentation/testing.rst)
#   make lint         checkpatch --strict, sparse (C=2), W=1, clang-format
#   make install      module + provider + /etc/libibverbs.d/sroce.driver + sroce(7)
#                     (DESTDIR, PREFIX; "make uninstall" removes them)
#   make dkms-install sroce.ko through DKMS for every installed kernel
#
# KDIR defaults to the running kernel's build tree; when that does not exist,
# the newest installed Debian *-amd64 headers are used (and named).

ifneq ($(KERNELRELEASE),)
# Invoked by kbuild: the real rules are in ./Kbuild.
include $(src)/Kbuild
else

SHELL		:= /bin/bash
ifeq ($(origin KDIR), undefined)
KDIR		:= $(shell tools/kdir.sh)
endif
BUILD		?= build
DESTDIR		?=
PREFIX		?= /usr
LIBDIR		?= $(PREFIX)/lib/x86_64-linux-gnu
JOBS		?= $(shell nproc)

.PHONY: all module provider unit cmake-build check-unit lint demo test test-full test-rxe \
	setup install \
	uninstall clean bench bench-quick dkms-install dkms-uninstall

all: module provider unit

setup:
	@tools/setup.sh

module:
	@test -n "$(KDIR)" || { echo "sroce: no kernel build tree (set KDIR or run tools/setup.sh)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# A configured tree is one with build files: a configure that failed leaves
# CMakeCache.txt behind, and the next make must configure again
# (tests/make_configure_test.sh).
$(BUILD)/Makefile:
	@tools/setup.sh --quiet --need cmake
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

# provider and unit are one CMake build: one target, so that make -j runs
# it once (two "cmake --build" on one tree at once failed to link,
# tests/make_parallel_test.sh).
provider unit: cmake-build

cmake-build: $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

check-unit: unit
	cd $(BUILD) && ctest --output-on-failure

lint:
	@tools/lint.sh

demo:
	@tools/demo.sh

# The benchmark (Documentation/benchmark.rst): results in out/bench/latest/.
bench: module provider
	@tools/bench/bench.sh

bench-quick: module provider
	@tools/bench/bench.sh --quick

test:
	@tools/test-all.sh

test-full:
	@tools/test-all.sh --full

# The guest suite on rdma_rxe alone (both guests): checks the tests
# themselves against the reference implementation.
test-rxe:
	@tools/test-all.sh --no-rig --no-6.12 --suites rxe-rxe

# The release KDIR builds for (Debian's 6.1 headers answer "make
# kernelrelease" with the upstream version, not the package's release).
KREL		= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
			$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MANDIR		?= $(PREFIX)/share/man

install: module provider
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) CONFIG_MODULE_SIG_ALL= \
		modules_install
	install -D -m 0644 $(BUILD)/provider/libsroce-rdmav34.so \
		$(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so
	install -D -m 0644 provider/sroce.driver $(DESTDIR)/etc/libibverbs.d/sroce.driver
	install -D -m 0644 Documentation/sroce.7 $(DESTDIR)$(MANDIR)/man7/sroce.7
	$(if $(DESTDIR),,depmod -a $(KREL))

# Removes what "make install" installed, the module for the KDIR release.
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so
	rm -f $(DESTDIR)/etc/libibverbs.d/sroce.driver
	rm -f $(DESTDIR)$(MANDIR)/man7/sroce.7
	rm -f $(DESTDIR)/lib/modules/$(KREL)/extra/sroce.ko \
		$(DESTDIR)/lib/modules/$(KREL)/extra/sroce.ko.xz \
		$(DESTDIR)/lib/modules/$(KREL)/extra/sroce.ko.zst
	$(if $(DESTDIR),,depmod -a $(KREL))

# DKMS (dkms.conf): build and install sroce.ko for every installed kernel.
dkms-install:
	@tools/dkms.sh install

dkms-uninstall:
	@tools/dkms.sh remove

clean:
	-[ -z "$(KDIR)" ] || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(BUILD) out

endif
