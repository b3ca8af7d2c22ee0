#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The port follows its netdev: "ip link set down" makes it PORT_DOWN (sysfs,
# rdma link, ibv_devinfo, phys_state not LinkUp) and raises
# IBV_EVENT_PORT_ERR in an open context; "up" makes it PORT_ACTIVE again
# with IBV_EVENT_PORT_ACTIVE and its RoCEv2 GIDs back. The active MTU is the
# largest IBA MTU that fits the netdev MTU with RoCEv2 headers: 4096 at
# 4200 and 9000, 2048 at 2200, 1024 at 1500 and 1280.
# timeout: 420
# place: debug-1@3
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV
ifc=$CTRL_IFACE
# Keep the static IPv6 address (and its GID) across down/up.
ctrl_sysctl "net.ipv6.conf.$ifc.keep_addr_on_down" 1

ctrl_hold_start hold-events "$dev" 120

ip link set "$ifc" down || rig_fail "ip link set $ifc down failed"
ctrl_wait_state "$dev" DOWN 10 || rig_fail "port not DOWN after $ifc went down"
[ "$(ctrl_devinfo_field "$dev" state)" = PORT_DOWN ] ||
	rig_fail "ibv_devinfo: state $(ctrl_devinfo_field "$dev" state), want PORT_DOWN"
rdma link show "$dev/1" | grep -q "state DOWN" ||
	rig_fail "rdma link show: $(rdma link show "$dev/1")"
ctrl_vc devinfo-down 60 devinfo "$dev" --state down || rig_fail "devinfo --state down failed"

ip link set "$ifc" up || rig_fail "ip link set $ifc up failed"
ctrl_wait_state "$dev" ACTIVE 10 || rig_fail "port not ACTIVE after $ifc came up"
[ "$(ctrl_devinfo_field "$dev" state)" = PORT_ACTIVE ] ||
	rig_fail "ibv_devinfo: state $(ctrl_devinfo_field "$dev" state), want PORT_ACTIVE"
rig_gid_index "$dev" "$RIG_IP4" >/dev/null || rig_fail "no RoCEv2 GID for $RIG_IP4 after up"
rig_gid_index "$dev" "$RIG_IP6" >/dev/null || rig_fail "no RoCEv2 GID for $RIG_IP6 after up"

# An MTU above what the netdev takes (its maxmtu) is left out, said so; one
# within it that cannot be set fails.
maxmtu=$(ip -d link show "$ifc" | sed -n 's/.* maxmtu \([0-9]*\).*/\1/p')
for spec in 1500:1024 2200:2048 1280:1024 9000:4096 4200:4096; do
	mtu=${spec%%:*} want=${spec#*:}
	if [ -n "$maxmtu" ] && [ "$mtu" -gt "$maxmtu" ]; then
		rig_log "MTU $mtu: above $ifc's maxmtu $maxmtu, left out"
		continue
	fi
	ip link set "$ifc" mtu "$mtu" 2>"$RIG_TEST_OUT/mtu.err" ||
		rig_fail "cannot set MTU $mtu on $ifc (maxmtu ${maxmtu:-?}): $(cat "$RIG_TEST_OUT/mtu.err")"
	got=""
	for _ in $(seq 1 50); do
		got=$(ctrl_devinfo_field "$dev" active_mtu)
		[ "$got" = "$want" ] && break
		sleep 0.1
	done
	rig_log "netdev MTU $mtu: active_mtu $got (want $want)"
	[ "$got" = "$want" ] || rig_fail "netdev MTU $mtu: active_mtu $got, want $want"
	[ "$(ctrl_port_state "$dev")" = ACTIVE ] || rig_fail "port left ACTIVE at MTU $mtu"
done
ip link set "$ifc" mtu "${RIG_MTU:-4200}"
ctrl_vc devinfo-up 60 devinfo "$dev" --state active --mtu "$(ctrl_devinfo_field "$dev" active_mtu)" ||
	rig_fail "devinfo --state active failed"

kill -TERM "$CTRL_HOLD_PID"
ctrl_hold_wait hold-events "$CTRL_HOLD_PID" 20 || rig_fail "the event holder did not exit cleanly"
grep -q 'async event port error' "$RIG_TEST_OUT/hold-events.log" ||
	rig_fail "no IBV_EVENT_PORT_ERR when $ifc went down"
grep -q 'async event port active' "$RIG_TEST_OUT/hold-events.log" ||
	rig_fail "no IBV_EVENT_PORT_ACTIVE when $ifc came up"
