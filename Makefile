# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce top-level Makefile.
#
#   make              build sroce.ko (against KDIR), the provider and the host tests
#   make demo         the main job: build, boot two guests, run RDMA traffic, print results
#   make test         every test: host unit tests, lint, guest suites (what .ci/run runs)
#   make lint         checkpatch --strict, sparse (C=2), W=1, clang-format
#   make install      module + provider + /etc/libibverbs.d/sroce.driver
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

.PHONY: all module provider unit check-unit lint demo test setup install \
	uninstall clean bench bench-quick

all: module provider unit

setup:
	@tools/setup.sh

module:
	@test -n "$(KDIR)" || { echo "sroce: no kernel build tree (set KDIR or run tools/setup.sh)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

$(BUILD)/CMakeCache.txt:
	@tools/setup.sh --quiet --need cmake
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

provider unit: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

check-unit: unit
	cd $(BUILD) && ctest --output-on-failure

lint:
	@tools/lint.sh

demo:
	@tools/demo.sh

test:
	@tools/test-all.sh

install: module provider
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	install -D -m 0644 $(BUILD)/provider/libsroce-rdmav34.so \
		$(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so
	install -D -m 0644 provider/sroce.driver $(DESTDIR)/etc/libibverbs.d/sroce.driver
	depmod -a $(shell $(MAKE) -s -C $(KDIR) kernelrelease 2>/dev/null)

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so
	rm -f $(DESTDIR)/etc/libibverbs.d/sroce.driver
	rm -f /lib/modules/*/extra/sroce.ko
	depmod -a

clean:
	-[ -z "$(KDIR)" ] || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(BUILD) out

endif
