#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build (once, then cached) a guest kernel with the kernel's own bug
# detectors, from Debian's linux-source-6.1 (the kernel the suite runs on):
#
#   tools/vm/debug-kernel.sh [--variant NAME] [--print] [-j N]
#
# The configuration is "make allnoconfig" plus tools/vm/kconfig/guest.config
# (what a rig guest needs) and tools/vm/kconfig/NAME.config (the detectors;
# default variant "debug": KASAN, lockdep, KMEMLEAK, UBSAN, DEBUG_OBJECTS,
# KFENCE; "kcsan": the data-race detector instead of KASAN). Every line of
# the fragments must hold in the final .config, or the build fails naming
# the line.
#
# The cache key is a hash of the source package's version, the fragments and
# RECIPE below (raise it when a change to this script changes the kernel it
# builds); the kernel release carries it (6.1.N-sroce-debug-KEY), so a
# changed fragment is a new kernel, and sroce.ko builds for it in
# out/kbuild/RELEASE/ (tools/kbuild.sh). The cache lives outside the repo
# (a fresh clone, as CI makes, reuses it): $SROCE_KERNEL_CACHE, default
# /var/cache/sroce/kernels. Two entries per variant are kept (the newest
# two built); each is:
#   VARIANT-KEY/build/         kernel build tree (KDIR for out-of-tree modules),
#                              with arch/x86/boot/bzImage
#   VARIANT-KEY/root/lib/modules/RELEASE/   installed modules (build -> ../../../build)
#   VARIANT-KEY/release        the release, VARIANT-KEY/done once complete
#
# Prints the entry's folder as its last line. --print only prints it, and
# exits 1 when that kernel is not built yet. tools/vm/run.sh -k debug (or
# -k kcsan) boots it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
variant=debug
print=0
jobs=$(nproc)
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) variant=${2:?}; shift ;;
	--print) print=1 ;;
	-j) jobs=${2:?}; shift ;;
	-h | --help) sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "debug-kernel: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "debug-kernel: error: $*" >&2; exit 1; }

# The version of how the kernel is built from the fragments (see above).
RECIPE=1

[[ "$variant" =~ ^[a-z0-9]+$ ]] || die "bad variant name $variant"
base=$here/kconfig/guest.config
frag=$here/kconfig/$variant.config
if [ ! -f "$frag" ]; then
	known=()
	for f in "$here"/kconfig/*.config; do
		f=$(basename "$f" .config)
		[ "$f" = guest ] || known+=("$f")
	done
	die "no $frag (variants: ${known[*]})"
fi
pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
	die "linux-source-6.1 is not installed (tools/setup.sh)"
src=/usr/src/linux-source-6.1
[ -f "$src/Makefile" ] || die "no $src (tools/setup.sh extracts it)"

# Comments and blank lines of the fragments do not change the kernel.
key=$( { echo "$pkgver $RECIPE"; grep -hvE '^[[:space:]]*(#|$)' "$base" "$frag"; } |
	sha256sum | cut -c1-10)
cache=${SROCE_KERNEL_CACHE:-/var/cache/sroce/kernels}
dir=$cache/$variant-$key

if [ "$print" = 1 ]; then
	[ -e "$dir/done" ] || die "the $variant kernel ($dir) is not built: run tools/vm/debug-kernel.sh --variant $variant"
	echo "$dir"
	exit 0
fi

for tool in flex bison bc make gcc; do
	command -v "$tool" >/dev/null || die "$tool missing (tools/setup.sh)"
done
mkdir -p "$cache"
exec 9>"$cache/.$variant.lock"
flock 9
if [ -e "$dir/done" ]; then
	echo "debug-kernel: $variant kernel $(cat "$dir/release") is cached"
	echo "$dir"
	exit 0
fi

t0=$EPOCHSECONDS
rm -rf "$dir"
mkdir -p "$dir/build"
kver=$(make -s -C "$src" kernelversion)
release=$kver-sroce-$variant-$key
log=$dir/build.log
echo "debug-kernel: building $release from linux-source-6.1 $pkgver ($jobs jobs, log $log)"

# allnoconfig with the fragments forced; LOCALVERSION names the release.
all=$dir/allconfig
{
	cat "$base" "$frag"
	echo "CONFIG_LOCALVERSION=\"-sroce-$variant-$key\""
} >"$all"
kmake() { make -C "$src" O="$dir/build" "$@"; }
kmake KCONFIG_ALLCONFIG="$all" allnoconfig >"$log" 2>&1 || {
	tail -n 20 "$log" >&2
	die "allnoconfig failed"
}

# Every line of the fragments must have survived Kconfig's dependencies.
bad=0
while IFS= read -r line; do
	case "$line" in CONFIG_*=*) ;; *) continue ;; esac
	name=${line%%=*}
	if [ "${line#*=}" = n ]; then
		grep -q "^$name=" "$dir/build/.config" || continue
	else
		grep -qxF "$line" "$dir/build/.config" && continue
	fi
	echo "debug-kernel: $line does not hold: $(grep -E "^(# )?${name}[= ]" "$dir/build/.config" || echo "$name absent")" >&2
	bad=1
done <"$all"
[ "$bad" = 0 ] || die "the configuration lost options (a missing dependency in tools/vm/kconfig/)"

# The rig boots the bzImage: a KASAN kernel cannot start at the PVH entry
# of its vmlinux (that early code runs instrumented, before KASAN's shadow
# memory exists, and the guest resets at once).
if ! kmake -j "$jobs" bzImage modules >>"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -n 20 >&2
	die "kernel build failed ($log)"
fi
# The running kernel's release must match the name the modules go under.
got=$(kmake -s kernelrelease)
[ "$got" = "$release" ] || die "built $got, expected $release"
kmake INSTALL_MOD_PATH="$dir/root" INSTALL_MOD_STRIP=1 modules_install >>"$log" 2>&1 ||
	die "modules_install failed ($log)"
ln -sfn ../../../build "$dir/root/lib/modules/$release/build"
echo "$release" >"$dir/release"
: >"$dir/done"

# This build and the newest other one of this variant stay (some 520 MiB
# each): a tree that goes back and forth between two configurations (a
# branch, a bisection) builds neither again. Older ones and unfinished
# ones go.
keep=""
for old in "$cache/$variant"-*/done; do
	[ -e "$old" ] && [ "$old" != "$dir/done" ] || continue
	[ -z "$keep" ] || [ "$old" -nt "$keep" ] && keep=$old
done
for old in "$cache/$variant"-*; do
	[ "$old" = "$dir" ] || [ "$old/done" = "$keep" ] || rm -rf "$old"
done
echo "debug-kernel: built $release in $((EPOCHSECONDS - t0)) s ($(du -sh "$dir" | cut -f1))"
echo "$dir"
