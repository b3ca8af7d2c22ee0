#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build (once per kernel release, then cached) the tiny initramfs the test rig
# boots: busybox-static, the virtio/9p modules of that kernel, and an /init
# that mounts the host root over 9p and switches into it.
#
#   tools/vm/mkinitramfs.sh KERNEL_RELEASE CACHE_DIR [MODROOT]
#
# MODROOT: the root whose lib/modules/KERNEL_RELEASE holds the modules (a
# kernel of tools/vm/debug-kernel.sh); default /.
# Prints the path of the (possibly cached) cpio archive.
set -euo pipefail

kver=${1:?usage: mkinitramfs.sh KERNEL_RELEASE CACHE_DIR}
cache=${2:?usage: mkinitramfs.sh KERNEL_RELEASE CACHE_DIR}
modroot=${3:-/}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
init_src=$here/initramfs-init
modules=(virtio_pci 9pnet_virtio 9p virtio_net)

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[ -d "$modroot/lib/modules/$kver" ] || die "no $modroot/lib/modules/$kver (is linux-image-$kver installed?)"
[ -x /bin/busybox ] || die "no /bin/busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || die "no cpio (apt-get install cpio)"

# The cache key covers everything that goes into the archive.
key=$( { cat "$init_src" "$0"; ls -l --time-style=+%s /bin/busybox \
	"$modroot/lib/modules/$kver/modules.dep"; } | sha256sum | cut -c1-12)
out=$cache/initramfs-$kver-$key.cpio
if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.initramfs.lock"
flock 9
if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi

stage=$(mktemp -d "$cache/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,mods}
cp /bin/busybox "$stage/bin/busybox"
cp "$init_src" "$stage/init"
chmod 0755 "$stage/init"

# One module name per modprobe call: further names would be taken as
# parameters of the first. "builtin" lines (6.12: virtio_pci) need nothing.
: >"$stage/mods/order"
for m in "${modules[@]}"; do
	modprobe -d "$modroot" -S "$kver" --show-depends "$m" | while read -r verb path _; do
		[ "$verb" = insmod ] || continue
		base=$(basename "$path")
		base=${base%.xz}
		base=${base%.zst}
		grep -qxF "$base" "$stage/mods/order" && continue
		case "$path" in
		*.ko.xz) xz -dc "$path" >"$stage/mods/$base" ;;
		*.ko.zst) zstd -qdc "$path" >"$stage/mods/$base" ;;
		*) cp "$path" "$stage/mods/$base" ;;
		esac
		echo "$base" >>"$stage/mods/order"
	done
done

tmp=$out.tmp.$$
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 >"$tmp")
mv "$tmp" "$out"
# Drop archives of older keys for this kernel.
for old in "$cache"/initramfs-"$kver"-*.cpio; do
	[ "$old" = "$out" ] || rm -f "$old"
done
echo "$out"
