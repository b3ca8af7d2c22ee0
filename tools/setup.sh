#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install what building and testing sroce needs, from Debian packages, on a
# Debian bookworm machine. Idempotent: when everything is present it only
# checks (dpkg-query) and prints one line (nothing with --quiet).
#
#   tools/setup.sh [--quiet] [--need PKG... | --debug-kernel]
#
#   --need PKG...   install only these packages (e.g. the Makefile's
#                   "tools/setup.sh --quiet --need cmake")
#   --debug-kernel  install only what building the debug guest kernel
#                   needs (tools/vm/debug-kernel.sh), linux-source-6.1
#                   extracted: tools/test-all.sh starts that build (the
#                   longest step of a run on a fresh machine) before the
#                   rest of the packages are installed
#   --kernel-6.12   accepted for old callers: the 6.12 LTS kernel image
#                   and headers are always installed now
#   --quiet         print nothing unless something is installed or fails
#
# Also extracts the linux-source-6.1 tarball to /usr/src/linux-source-6.1
# (tools/lint.sh runs its scripts/checkpatch.pl).
set -euo pipefail

# Building: module (kbuild + headers; flex, bison and bc for the debug guest
# kernel of tools/vm/debug-kernel.sh), provider and host tests (cmake, g++,
# googletest, rdma-core headers; ccache, which tools/test-all.sh uses).
# Linting: sparse, clang-format, shellcheck, checkpatch (linux-source). DKMS. Guests: qemu, busybox-static, the 6.1 and
# 6.12 LTS Debian kernels (with headers: sroce.ko is built for both),
# cpio/kmod/xz for the initramfs, and the RDMA user space the guests borrow
# from the host root (rdma-core, perftest, iproute2's rdma, pyverbs, tcpdump,
# the NFS server and client for nfs_rdma.sh, openssl for test patterns; the
# storage stack's user space: fio, nvme-cli, open-iscsi for the iSER
# initiator, srptools (LIO targets are set up through configfs); udev's udevadm watches the
# kernel's uevents).
# The benchmark (tools/bench/): gnuplot for its plot, perf for --profile;
# perf and trace-cmd read sroce's tracepoints (tracepoints.sh).
PACKAGES=(
	build-essential libelf-dev flex bison bc
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	linux-image-6.12-amd64 linux-headers-6.12-amd64 dkms
	cmake g++ pkg-config googletest libgtest-dev ccache
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	rdmacm-utils perftest python3-pyverbs iproute2 iperf3
	nfs-kernel-server openssl
	fio nvme-cli open-iscsi srptools udev
	sparse clang-format shellcheck
	qemu-system-x86 busybox-static cpio kmod xz-utils zstd tcpdump
	procps util-linux coreutils gawk
	gnuplot-nox linux-perf trace-cmd
)
# What tools/vm/debug-kernel.sh needs: a compiler, Kbuild's tools (libelf
# for objtool) and the kernel source.
DEBUG_KERNEL_PACKAGES=(build-essential libelf-dev flex bison bc linux-source-6.1)

quiet=0
need=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quiet | -q) quiet=1 ;;
	--kernel-6.12) ;;
	--debug-kernel) need+=("${DEBUG_KERNEL_PACKAGES[@]}") ;;
	--need)
		shift
		while [ $# -gt 0 ] && [[ "$1" != -* ]]; do
			need+=("$1")
			shift
		done
		continue
		;;
	-h | --help)
		sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "setup: unknown argument $1 (see --help)" >&2
		exit 2
		;;
	esac
	shift
done

say() { [ "$quiet" = 1 ] || echo "setup: $*"; }
die() {
	echo "setup: error: $*" >&2
	exit 1
}

if [ ${#need[@]} -gt 0 ]; then
	wanted=("${need[@]}")
else
	wanted=("${PACKAGES[@]}")
fi

# Packages that are not installed ("install ok installed" is the only state
# that counts: half-configured or removed-with-config ones are missing).
# Sets missing=(...) to the wanted packages that are not installed.
find_missing() {
	local p st
	local -A ok=()
	while read -r p st; do
		[ "$st" = "install ok installed" ] && ok[${p%%:*}]=1
	done < <(dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null)
	missing=()
	for p in "${wanted[@]}"; do
		[ -n "${ok[$p]:-}" ] || missing+=("$p")
	done
}
find_missing

if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "not root: cannot install ${missing[*]} (run as root)"
	command -v apt-get >/dev/null || die "no apt-get: sroce's tools expect Debian bookworm"
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	# (Not again when the package lists are minutes old: test-all calls
	# this twice, --debug-kernel first.)
	if [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Release' -mmin -30 2>/dev/null | head -n 1)" ]; then
		say "package lists updated less than 30 minutes ago"
	elif ! apt-get update -q >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "apt-get update failed"
	fi
	if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "apt-get install ${missing[*]} failed"
	fi
	find_missing
	[ ${#missing[@]} -eq 0 ] || die "still not installed after apt-get: ${missing[*]}"
	say "installed what was missing"
fi

# checkpatch.pl and friends come from the kernel source tarball.
# (The debug guest kernel builds from it too.)
wants_source=0
for p in "${wanted[@]}"; do
	[ "$p" = linux-source-6.1 ] && wants_source=1
done
if [ "$wants_source" = 1 ] && [ ! -x /usr/src/linux-source-6.1/scripts/checkpatch.pl ]; then
	set -- /usr/src/linux-source-6.1.tar.*
	tarball=$1
	[ -e "$tarball" ] || die "linux-source-6.1 is installed but its tarball is missing"
	[ -w /usr/src ] || die "cannot write /usr/src to extract $tarball (run as root)"
	echo "setup: extracting $tarball (about a minute)"
	tar -C /usr/src -xf "$tarball" || die "cannot extract $tarball"
fi

if [ ${#need[@]} -eq 0 ]; then
	set -- /boot/vmlinuz-6.1.*-amd64
	[ -e "$1" ] || die "no /boot/vmlinuz-6.1.*-amd64 although linux-image-amd64 is installed"
	say "all ${#wanted[@]} packages present"
fi
