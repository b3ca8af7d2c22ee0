#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build sroce.ko for one kernel in its own folder, so that modules for
# several kernels (6.1 and 6.12) exist side by side:
#
#   tools/kbuild.sh KDIR [KBUILD ARGS...]
#
# KDIR is a kernel build tree (/lib/modules/<release>/build). The build runs
# in out/kbuild/<release>/, a tree of symbolic links to the sources (Kbuild,
# kernel/, include/), with W=1. The last line printed is the path of the
# module. "make module" keeps building sroce.ko in the repo root; the test
# rig's guests load out/kbuild/$(uname -r)/sroce.ko when the root one was
# built for another kernel (selftests/lib/guest.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
kdir=${1:?usage: tools/kbuild.sh KDIR [KBUILD ARGS...]}
shift
[ -d "$kdir" ] || { echo "kbuild: no kernel build tree $kdir" >&2; exit 1; }
# The release the module is built for (its vermagic): Debian's 6.1 headers
# answer "make kernelrelease" with the upstream version, not the package's.
release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
[ -n "$release" ] || { echo "kbuild: cannot tell the release of $kdir" >&2; exit 1; }
[[ "$release" =~ ^[A-Za-z0-9.+_~-]+$ ]] || { echo "kbuild: odd release name $release" >&2; exit 1; }

dir=$repo/out/kbuild/$release
mkdir -p "$dir"
# Sources only: never link the in-tree build products (*.o, .*.cmd) of the
# root build, which kbuild would take as up to date.
find "$dir" -type l ! -exec test -e {} \; -delete
(cd "$repo" && find Kbuild kernel include tools/ktest -type f \( -name Kbuild -o -name '*.[ch]' \) \
	! -name '*.mod.c') | while read -r f; do
	mkdir -p "$dir/$(dirname "$f")"
	[ -L "$dir/$f" ] || ln -sfn "$repo/$f" "$dir/$f"
done
make -C "$kdir" M="$dir" W=1 "$@" modules
echo "$dir/sroce.ko"
