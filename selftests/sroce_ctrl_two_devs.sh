#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two and three sroce devices at once, one per netdev: sroce0 on the rig's
# interface, sroce1 and sroce2 on the two ends of a veth pair. All are listed
# by ibv_devices and "rdma link" with their own netdev and GUID, and each
# follows its own netdev: carrier loss on the veth takes sroce1 DOWN while
# sroce0 stays ACTIVE, and each has the active MTU of its own netdev (4096
# at MTU 4200, 1024 at the veth's 1500). A second device on a netdev that
# has one is refused. Deleting one device leaves the others (and the shared
# UDP socket) working.
# timeout: 200
# place: 6.12-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
ifc=$CTRL_IFACE
ctrl_veth ctrlv0 ctrlv1

ctrl_link_add sroce1 ctrlv0 || rig_fail "rdma link add sroce1 netdev ctrlv0 failed"
ctrl_link_add sroce2 ctrlv1 || rig_fail "rdma link add sroce2 netdev ctrlv1 failed"
if rdma link add sroce3 type sroce netdev ctrlv0 2>/dev/null; then
	rig_fail "a second device on ctrlv0 was accepted"
fi
ctrl_wait_gone sroce3 5 || rig_fail "the refused sroce3 is registered"

ibv_devices | tee "$RIG_TEST_OUT/ibv_devices.txt" | sed 's/^/    /'
rdma link show | tee "$RIG_TEST_OUT/rdma_link.txt" | sed 's/^/    /'
for spec in sroce0:$ifc sroce1:ctrlv0 sroce2:ctrlv1; do
	d=${spec%%:*} n=${spec#*:}
	ibv_devices | grep -qw "$d" || rig_fail "ibv_devices does not list $d"
	rdma link show "$d/1" | grep -q "state ACTIVE .*netdev $n\b" ||
		rig_fail "rdma link show $d/1: $(rdma link show "$d/1")"
	[ "$(cat "/sys/class/infiniband/$d/parent")" = "$n" ] || rig_fail "$d: parent is not $n"
	[ "$(ctrl_devinfo_field "$d" state)" = PORT_ACTIVE ] || rig_fail "$d: not PORT_ACTIVE"
done
g0=$(cat /sys/class/infiniband/sroce0/node_guid)
g1=$(cat /sys/class/infiniband/sroce1/node_guid)
g2=$(cat /sys/class/infiniband/sroce2/node_guid)
[ "$g0" != "$g1" ] && [ "$g1" != "$g2" ] && [ "$g0" != "$g2" ] ||
	rig_fail "node GUIDs are not distinct: $g0 $g1 $g2"
rig_log "node GUIDs: sroce0 $g0, sroce1 $g1, sroce2 $g2"

# Per-netdev MTU: the veth has 1500 (active 1024), the rig's link 4200.
m0=$(ctrl_devinfo_field sroce0 active_mtu)
m1=$(ctrl_devinfo_field sroce1 active_mtu)
rig_log "active MTU: sroce0 $m0 ($ifc mtu $(cat /sys/class/net/"$ifc"/mtu)), sroce1 $m1 (ctrlv0 mtu 1500)"
[ "$m1" = 1024 ] || rig_fail "sroce1 on a 1500 MTU veth: active_mtu $m1, want 1024"
if [ "${RIG_MTU:-4200}" -ge 4200 ] && [ "$m0" != 4096 ]; then
	rig_fail "sroce0: active_mtu $m0, want 4096"
fi

# Carrier: the far end going down takes sroce1 (and sroce2) down, not sroce0.
ip link set ctrlv1 down
ctrl_wait_state sroce1 DOWN 10 || rig_fail "sroce1 not DOWN after its veth lost carrier"
ctrl_wait_state sroce2 DOWN 10 || rig_fail "sroce2 not DOWN with its netdev down"
[ "$(ctrl_port_state sroce0)" = ACTIVE ] || rig_fail "sroce0 left ACTIVE with the veth"
[ "$(ctrl_devinfo_field sroce1 state)" = PORT_DOWN ] ||
	rig_fail "ibv_devinfo sroce1: state $(ctrl_devinfo_field sroce1 state), want PORT_DOWN"
ip link set ctrlv1 up
ctrl_wait_state sroce1 ACTIVE 10 || rig_fail "sroce1 not ACTIVE after carrier came back"
ctrl_wait_state sroce2 ACTIVE 10 || rig_fail "sroce2 not ACTIVE after its netdev came up"

for d in sroce0 sroce1; do
	ctrl_vc "devinfo-$d" 60 devinfo "$d" --state active ||
		rig_fail "sroce-verbs-check devinfo $d failed"
done

# Deleting one device leaves the others.
rdma link delete sroce1 || rig_fail "rdma link delete sroce1 failed"
ctrl_wait_gone sroce1 10 || rig_fail "sroce1 still registered"
for d in sroce0 sroce2; do
	[ "$(ctrl_port_state "$d")" = ACTIVE ] || rig_fail "$d not ACTIVE after deleting sroce1"
	ibv_devices | grep -qw "$d" || rig_fail "ibv_devices lost $d after deleting sroce1"
done
ctrl_udp_open || rig_fail "UDP port 4791 closed although sroce0 and sroce2 remain"
rdma link delete sroce2 || rig_fail "rdma link delete sroce2 failed"
ctrl_wait_gone sroce2 10 || rig_fail "sroce2 still registered"
ctrl_udp_open || rig_fail "UDP port 4791 closed although sroce0 remains"
ctrl_vc devinfo-sroce0-alone 60 devinfo sroce0 --state active ||
	rig_fail "sroce0 does not work alone again"
