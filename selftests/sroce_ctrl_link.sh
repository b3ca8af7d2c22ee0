#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce link life cycle, five times over: "rdma link delete" unregisters the
# device (gone from sysfs, "rdma link" and ibv_devices, and the RoCEv2 UDP
# socket closes with the last device); "rdma link add" brings it back ACTIVE
# with its sroce_abi and parent attributes, listed by ibv_devices and
# queryable through the provider. A second device on the same netdev and a
# device on a non-Ethernet netdev (lo) are refused without leaving anything
# behind. rmmod removes one or two devices nobody uses (four rounds); the
# module loads again each time.
# timeout: 200
# place: stock-1@3 6.12-1@3
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV
ifc=$CTRL_IFACE
loops=${SROCE_CTRL_LINK_LOOPS:-5}

# check_up: $dev is registered, ACTIVE on $ifc and visible everywhere.
check_up() {
	local what=$1 s
	[ "$(cat "/sys/class/infiniband/$dev/sroce_abi" 2>/dev/null)" = 1 ] ||
		rig_fail "$what: /sys/class/infiniband/$dev/sroce_abi is not 1"
	[ "$(cat "/sys/class/infiniband/$dev/parent" 2>/dev/null)" = "$ifc" ] ||
		rig_fail "$what: the parent attribute of $dev is not $ifc"
	ibv_devices | grep -qw "$dev" || rig_fail "$what: ibv_devices does not list $dev"
	s=$(rdma link show "$dev/1") || rig_fail "$what: rdma link show $dev/1 failed"
	[[ "$s" == *"state ACTIVE"* && "$s" == *"netdev $ifc"* ]] ||
		rig_fail "$what: rdma link show: $s"
	[ "$(ctrl_devinfo_field "$dev" state)" = PORT_ACTIVE ] ||
		rig_fail "$what: ibv_devinfo -d $dev: state $(ctrl_devinfo_field "$dev" state)"
	ctrl_udp_open || rig_fail "$what: nothing listens on UDP port 4791"
}

# check_gone NAME: NAME is not registered anywhere.
check_gone() {
	local what=$1 name=$2
	ctrl_wait_gone "$name" 10 || rig_fail "$what: $name still in sysfs"
	! ibv_devices | grep -qw "$name" || rig_fail "$what: ibv_devices still lists $name"
	! rdma link show | grep -q "link $name/" || rig_fail "$what: rdma link still shows $name"
}

check_up "initially"

# A second sroce device on the same netdev is refused (one per netdev).
if rdma link add sroce9 type sroce netdev "$ifc" 2>"$RIG_TEST_OUT/dup.err"; then
	rig_fail "a second sroce device on $ifc was accepted"
fi
rig_log "second device on $ifc refused: $(cat "$RIG_TEST_OUT/dup.err")"
check_gone "after the refused duplicate" sroce9
check_up "after the refused duplicate"

# Only Ethernet netdevs (lo is ARPHRD_LOOPBACK).
if rdma link add sroce9 type sroce netdev lo 2>"$RIG_TEST_OUT/lo.err"; then
	rig_fail "an sroce device on lo was accepted"
fi
rig_log "device on lo refused: $(cat "$RIG_TEST_OUT/lo.err")"
check_gone "after the refused lo device" sroce9

for i in $(seq 1 "$loops"); do
	rdma link delete "$dev" || rig_fail "round $i: rdma link delete $dev failed"
	check_gone "round $i: after delete" "$dev"
	! ctrl_udp_open || rig_fail "round $i: UDP port 4791 still open without a device"
	t0=$(date +%s%N)
	ctrl_link_add "$dev" "$ifc" || rig_fail "round $i: rdma link add $dev failed"
	t1=$(date +%s%N)
	check_up "round $i: after add"
	rig_log "round $i: deleted and re-added, ACTIVE after $(((t1 - t0) / 1000000)) ms"
done

# rmmod with devices nobody uses: one, then two (a veth for the second).
ctrl_veth ctrll0 ctrll1
for i in $(seq 1 "${SROCE_CTRL_RMMOD_LOOPS:-4}"); do
	n=1
	if [ "$i" -gt 1 ]; then
		ctrl_link_add sroce1 ctrll0 || rig_fail "rmmod round $i: rdma link add sroce1 failed"
		n=2
	fi
	rmmod sroce || rig_fail "rmmod round $i: rmmod sroce ($n idle devices) failed"
	check_gone "rmmod round $i" "$dev"
	check_gone "rmmod round $i" sroce1
	[ ! -d /sys/module/sroce ] || rig_fail "rmmod round $i: sroce is still loaded"
	! ctrl_udp_open || rig_fail "rmmod round $i: UDP port 4791 still open"
	rig_load_module sroce
	ctrl_link_add "$dev" "$ifc" || rig_fail "rmmod round $i: rdma link add after reloading failed"
	check_up "rmmod round $i: after reloading the module"
	rig_log "rmmod round $i: $n idle devices removed, module reloaded"
done
ctrl_vc devinfo 60 devinfo "$dev" --state active || rig_fail "sroce-verbs-check devinfo failed"
