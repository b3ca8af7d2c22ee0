#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Loads the provider into the real libibverbs of this host and lets it match
# devices from a fake sysfs tree (SYSFS_PATH), in a private mount namespace
# whose /dev/infiniband holds placeholder nodes. Checks that:
#   - the module is dlopen()ed without errors and registers itself,
#   - an sroce device is claimed whatever its name,
#   - a device without the sroce_abi attribute is not,
#   - a device with another sroce ABI version is not, with a warning.
# Exits 77 (skip) where a mount namespace cannot be made.
#
# usage: load_test.sh build/provider/libsroce-rdmav34.so
set -u
so=$1
prefix=${so%-rdmav34.so}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v ibv_devices >/dev/null || { echo "SKIP: no ibv_devices"; exit 77; }
unshare -m true 2>/dev/null || { echo "SKIP: cannot unshare a mount namespace"; exit 77; }

sys=$tmp/sys
mkdir -p "$sys/class/infiniband_verbs" "$sys/class/infiniband"
echo 6 >"$sys/class/infiniband_verbs/abi_version"

# add_dev UVERBS_INDEX IBDEV_NAME SROCE_ABI|-
add_dev() {
	uv=$sys/class/infiniband_verbs/uverbs$1
	ib=$sys/class/infiniband/$2
	mkdir -p "$uv" "$ib"
	echo "$2" >"$uv/ibdev"
	echo "231:$((192 + $1))" >"$uv/dev"
	echo 1 >"$uv/abi_version"
	echo "1: CA" >"$ib/node_type"
	echo "0002:c9ff:fe00:000$1" >"$ib/node_guid"
	[ "$3" = - ] || echo "$3" >"$ib/sroce_abi"
}
add_dev 0 weird7 1
add_dev 1 foo0 -
add_dev 2 future0 99

unshare -m sh -c '
	mount -t tmpfs none /dev || exit 77
	mkdir /dev/infiniband && touch /dev/infiniband/uverbs0 \
		/dev/infiniband/uverbs1 /dev/infiniband/uverbs2
	SYSFS_PATH="$1" RDMAV_DRIVERS="$2" IBV_SHOW_WARNINGS=1 ibv_devices
' sh "$sys" "$prefix" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 77 ] && { echo "SKIP: cannot mount in the namespace"; exit 77; }

fail=0
check() { # description, command...
	desc=$1; shift
	if "$@"; then echo "ok - $desc"; else echo "not ok - $desc"; fail=1; fi
}
check "ibv_devices ran" [ $rc -eq 0 ]
check "no load error" sh -c "! grep -q \"couldn't load driver\" '$tmp/err'"
check "no undefined symbol" sh -c "! grep -qi 'undefined symbol' '$tmp/err'"
check "sroce device with any name is claimed" grep -q 'weird7' "$tmp/out"
check "device without sroce_abi is not claimed" \
	grep -q 'no userspace device-specific driver found for foo0' "$tmp/err"
check "device with another sroce ABI is not claimed" \
	grep -q 'future0 has sroce ABI 99' "$tmp/err"
[ $fail -eq 0 ] || { echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; }
exit $fail
