#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce devices are matched by their sroce_abi attribute, not by name: after
# "rdma dev set sroce0 name foo0" (also while a process holds a context) and
# for a link created under another name, ibv_devices lists the new name and
# ibv_devinfo -d NAME and sroce-verbs-check devinfo work through the
# provider. The rename is reflected in sysfs and "rdma link"; the old name
# is gone. Renaming onto an existing name is refused.
# timeout: 200
# place: stock-1@3
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
ifc=$CTRL_IFACE

# check_name NAME: NAME is the sroce device on $ifc and works via the provider.
check_name() {
	ctrl_dev_exists "$1" || rig_fail "no /sys/class/infiniband/$1"
	ibv_devices | grep -qw "$1" || rig_fail "ibv_devices does not list $1"
	rdma link show "$1/1" | grep -q "netdev $ifc" ||
		rig_fail "rdma link show $1/1: $(rdma link show "$1/1" 2>&1)"
	[ "$(ctrl_devinfo_field "$1" state)" = PORT_ACTIVE ] ||
		rig_fail "ibv_devinfo -d $1: state $(ctrl_devinfo_field "$1" state)"
	ctrl_vc "devinfo-$1" 60 devinfo "$1" --state active ||
		rig_fail "sroce-verbs-check devinfo $1 failed"
}

rdma dev set sroce0 name foo0 || rig_fail "rdma dev set sroce0 name foo0 failed"
ctrl_wait_gone sroce0 5 || rig_fail "sroce0 still in sysfs after the rename"
! ibv_devices | grep -qw sroce0 || rig_fail "ibv_devices still lists sroce0"
check_name foo0

# Rename while a context is open on the device: the holder is not affected.
ctrl_hold_start hold-rename foo0 60
rdma dev set foo0 name bar0 || rig_fail "rename foo0 -> bar0 with an open context failed"
check_name bar0
kill -0 "$CTRL_HOLD_PID" || rig_fail "the holder died during the rename"
kill -TERM "$CTRL_HOLD_PID"
ctrl_hold_wait hold-rename "$CTRL_HOLD_PID" 20 || rig_fail "the holder did not exit cleanly"
grep -q '^summary: hold: .* 0 failed' "$RIG_TEST_OUT/hold-rename.log" ||
	rig_fail "the holder reported failures"

# A name another device has is refused.
ctrl_veth ctrln0 ctrln1
ctrl_link_add other0 ctrln0 || rig_fail "rdma link add other0 failed"
[ "$(cat /sys/class/infiniband/other0/parent)" = ctrln0 ] || rig_fail "other0 is not on ctrln0"
if rdma dev set bar0 name other0 2>/dev/null; then
	rig_fail "renaming bar0 onto the existing other0 was accepted"
fi
ctrl_dev_exists bar0 || rig_fail "bar0 vanished after the refused rename"
ibv_devices | grep -qw other0 || rig_fail "ibv_devices does not list other0 (any name works)"
rdma link delete other0 || rig_fail "rdma link delete other0 failed"

rdma dev set bar0 name sroce0 || rig_fail "rename back to sroce0 failed"
check_name sroce0

# A link created under a name of another pattern.
rdma link delete sroce0 || rig_fail "rdma link delete sroce0 failed"
ctrl_wait_gone sroce0 10 || rig_fail "sroce0 still registered"
ctrl_link_add myroce7 "$ifc" || rig_fail "rdma link add myroce7 failed"
check_name myroce7
rdma link delete myroce7 || rig_fail "rdma link delete myroce7 failed"
ctrl_wait_gone myroce7 10 || rig_fail "myroce7 still registered"
