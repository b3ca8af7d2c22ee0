#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The RDMA device of each guest is up on the virtual link: its port is
# ACTIVE with active MTU 4096 (link MTU 4200), it has RoCEv2 GIDs for the
# guest's IPv4 and IPv6 addresses, libibverbs lists it, and the peer answers
# on the link over IPv4 and IPv6.
# timeout: 300
# place: debug@3 sroce-rxe@1 rxe-sroce@2 6.12@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"

rig_require_cmd rdma ibv_devinfo ibv_devices
rig_setup_dev

ibv_devices | grep -qw "$RIG_DEV" || rig_fail "ibv_devices does not list $RIG_DEV"
state=$(cat "/sys/class/infiniband/$RIG_DEV/ports/1/state")
[[ "$state" == *ACTIVE* ]] || rig_fail "port state $state"
mtu=$(rig_active_mtu "$RIG_DEV")
rig_log "$RIG_DEV on $RIG_IFACE: $state, active MTU $mtu"
if [ "$RIG_MTU" -ge 4200 ] && [ "$mtu" != 4096 ]; then
	rig_fail "active MTU $mtu, expected 4096 on a $RIG_MTU link"
fi
g4=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
g6=$(rig_gid_index "$RIG_DEV" "$RIG_IP6") || rig_fail "no RoCEv2 GID for $RIG_IP6"
rig_log "RoCEv2 GID index: $g4 for $RIG_IP4, $g6 for $RIG_IP6"
rdma link show "$RIG_DEV/1" | grep -q "netdev $RIG_IFACE" ||
	rig_fail "rdma link does not show $RIG_DEV on $RIG_IFACE"

if [ "${RIG_NGUESTS:-1}" = 2 ]; then
	busybox ping -c 1 -W 10 "$RIG_PEER_IP4" >/dev/null || rig_fail "no IPv4 answer from $RIG_PEER_IP4"
	busybox ping -c 1 -W 10 "$RIG_PEER_IP6" >/dev/null || rig_fail "no IPv6 answer from $RIG_PEER_IP6"
	rig_barrier pinged 60 || rig_fail "the peer did not finish its checks"
fi
