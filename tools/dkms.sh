#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce.ko through DKMS (Debian package dkms), with ./dkms.conf:
#
#   tools/dkms.sh install    copy the module sources to /usr/src/sroce-VER,
#                            dkms add, then build and install for every
#                            installed kernel that has its headers
#   tools/dkms.sh remove     dkms remove sroce/VER --all, delete the sources
#   tools/dkms.sh test       add and build for every kernel with headers in a
#                            private DKMS tree (a temporary folder): prints
#                            "dkms status" and KTAP, then deletes the tree;
#                            touches nothing of the system's DKMS state
#   tools/dkms.sh stage DIR  only copy the sources DKMS needs into DIR
#
# VER is PACKAGE_VERSION in dkms.conf. Run as root.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
name=sroce
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/dkms.conf")
[ -n "$version" ] || { echo "dkms: no PACKAGE_VERSION in $repo/dkms.conf" >&2; exit 1; }

die() {
	echo "dkms: error: $*" >&2
	exit 1
}

# stage DIR: the files a kbuild of the module reads, and dkms.conf.
stage() {
	local dst=$1
	mkdir -p "$dst"
	(cd "$repo" && find Kbuild Makefile dkms.conf kernel include -type f \
		\( -name Kbuild -o -name Makefile -o -name dkms.conf -o -name '*.[ch]' \) \
		! -name '*.mod.c' -print0 | cpio --quiet -0 -pdm "$dst")
}

# Releases of the installed kernels whose build tree (headers) is present.
kernels() {
	local d
	for d in /lib/modules/*/build; do
		[ -e "$d/Makefile" ] && basename "$(dirname "$d")"
	done | sort -V
}

need_dkms() {
	command -v dkms >/dev/null || die "no dkms (apt-get install dkms, or tools/setup.sh)"
	[ "$(id -u)" = 0 ] || die "must run as root"
}

# remove_installed: dkms remove the version in the system's DKMS tree, if
# any (its sources are put back first: dkms reads their dkms.conf).
remove_installed() {
	[ -d "/var/lib/dkms/$name/$version" ] || return 0
	[ -f "/usr/src/$name-$version/dkms.conf" ] || stage "/usr/src/$name-$version"
	dkms remove "$name/$version" --all
}

cmd=${1:-}
case "$cmd" in
stage)
	stage "${2:?usage: tools/dkms.sh stage DIR}"
	;;
install)
	need_dkms
	src=/usr/src/$name-$version
	remove_installed
	rm -rf "$src"
	stage "$src"
	dkms add "$name/$version"
	for k in $(kernels); do
		dkms build "$name/$version" -k "$k"
		dkms install "$name/$version" -k "$k"
	done
	dkms status "$name"
	;;
remove)
	need_dkms
	remove_installed
	rm -rf "/usr/src/$name-$version"
	;;
test)
	need_dkms
	tmp=$(mktemp -d /tmp/sroce-dkms.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	opts=(--dkmstree "$tmp/dkms" --sourcetree "$tmp/src" --installtree "$tmp/modules")
	# No signing for a test build: dkms would otherwise create its signing
	# key (/var/lib/dkms/mok.key) on first use.
	export sign_file=$tmp/no-sign-file
	mkdir -p "$tmp/dkms" "$tmp/src" "$tmp/modules"
	stage "$tmp/src/$name-$version"
	mapfile -t ks < <(kernels)
	echo "1..$((${#ks[@]} + 1))"
	n=1
	if dkms add "$name/$version" "${opts[@]}" >"$tmp/add.log" 2>&1; then
		echo "ok $n dkms add $name/$version"
	else
		sed 's/^/# /' "$tmp/add.log"
		echo "not ok $n dkms add $name/$version"
	fi
	for k in "${ks[@]}"; do
		n=$((n + 1))
		log=$tmp/build-$k.log
		if dkms build "$name/$version" -k "$k" "${opts[@]}" >"$log" 2>&1 &&
			dkms status "$name/$version" -k "$k" "${opts[@]}" | grep -q ': built$' &&
			[ "$(modinfo -F vermagic "$tmp/dkms/$name/$version/$k/x86_64/module/$name.ko"* |
				cut -d' ' -f1)" = "$k" ]; then
			echo "ok $n dkms build $name/$version for $k"
		else
			tail -n 30 "$log" | sed 's/^/# /'
			find "$tmp/dkms" -name make.log -path "*/$k/*" -exec tail -n 30 {} \; | sed 's/^/# /'
			echo "not ok $n dkms build $name/$version for $k"
		fi
	done
	dkms status "${opts[@]}" | sed 's/^/# dkms status: /'
	dkms remove "$name/$version" --all "${opts[@]}" >/dev/null 2>&1 || true
	;;
*)
	sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'
	[ "$cmd" = -h ] || [ "$cmd" = --help ] || exit 2
	;;
esac
