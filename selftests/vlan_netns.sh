#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A VLAN moved into another namespace does not deliver to the devices of
# its real device's namespace. sroce1 on veth end sv0 (init_net); VLAN
# sv0.100 moved into namespace C, which holds an sroce device of its own
# (sroce2 on a veth end there, so C has a socket on UDP port 4791); the
# other veth end sv1, with its VLAN, in namespace P. From P, a datagram
# to port 4791 of sv0's address reaches sroce1 (its rx_packets grows: the
# probe works); one to the VLAN's address in C must not (rx_packets of
# sroce1 unchanged), and C's socket took it (C's UDP counters). Before the
# namespace check, the second one was counted by sroce1: a packet in C
# dispatched to init_net's device.
# timeout: 90
# place: stock-1@3 6.12-1@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
rig_suites sroce-sroce sroce

ctrl_init
[ -d /sys/module/8021q ] || modprobe 8021q 2>/dev/null || rig_skip "no 8021q module in this kernel"
NSC=sroce_vlc
NSP=sroce_vlp
vn_cleanup() {
	local n
	for n in "$NSC" "$NSP"; do
		[ -e "/run/netns/$n" ] && ip netns del "$n"
	done
	return 0
}
trap 'rc=$?; vn_cleanup; (exit "$rc"); ctrl_restore' EXIT

ip netns add "$NSC" && ip netns add "$NSP" || rig_fail "ip netns add failed"
ctrl_veth sv0 sv1
ip addr add 10.77.15.1/24 dev sv0 || rig_fail "ip addr add on sv0"
ctrl_link_add sroce1 sv0 || rig_fail "rdma link add sroce1 netdev sv0 failed"
ip link add link sv0 name sv0.100 type vlan id 100 || rig_fail "VLAN sv0.100"
ip link set sv0.100 netns "$NSC" || rig_fail "cannot move sv0.100 into $NSC"
ip link set sv1 netns "$NSP" || rig_fail "cannot move sv1 into $NSP"
inc() { ip netns exec "$NSC" "$@"; }
inp() { ip netns exec "$NSP" "$@"; }
inc ip link set lo up
inc ip addr add 10.77.16.1/24 dev sv0.100
inc ip link set sv0.100 up
# C's own sroce device, on a veth pair of its own: its socket on 4791.
ctrl_veth cv0 cv1
ip link set cv0 netns "$NSC" && ip link set cv1 netns "$NSC" || rig_fail "cannot move cv0/cv1"
inc ip link set cv0 up
inc ip link set cv1 up
inc ip addr add 10.77.17.1/24 dev cv0
inc rdma link add sroce2 type sroce netdev cv0 || rig_fail "rdma link add sroce2 in $NSC failed"
inp ip link set lo up
inp ip link set sv1 up
inp ip addr add 10.77.15.2/24 dev sv1
inp ip link add link sv1 name sv1.100 type vlan id 100 || rig_fail "VLAN sv1.100"
inp ip addr add 10.77.16.2/24 dev sv1.100
inp ip link set sv1.100 up

rx() { cat /sys/class/infiniband/sroce1/ports/1/hw_counters/rx_packets; }
c_udp() { inc awk '/^Udp:/ && $2 ~ /^[0-9]+$/ { print $2 }' /proc/net/snmp; }
probe() {
	# 40 bytes to port 4791: not a valid RoCE packet, counted and dropped.
	inp bash -c "echo -n 0123456789012345678901234567890123456789 >/dev/udp/$1/4791" ||
		rig_fail "sending to $1 failed"
}
wait_rx() {
	local want=$1 end=$((SECONDS + 5)) v
	while v=$(rx) && [ "$v" -lt "$want" ] && [ "$SECONDS" -lt "$end" ]; do
		rig_sleep 0.1
	done
	echo "$v"
}

r0=$(rx)
probe 10.77.15.1
r1=$(wait_rx $((r0 + 1)))
[ "$r1" -ge $((r0 + 1)) ] || rig_fail "the probe to sv0's address was not counted by sroce1 ($r0 -> $r1)"
rig_log "a datagram to sroce1's own address: rx_packets $r0 -> $r1"

u0=$(c_udp)
probe 10.77.16.1
end=$((SECONDS + 5))
while [ "$(c_udp)" -le "$u0" ] && [ "$SECONDS" -lt "$end" ]; do
	rig_sleep 0.1
done
u1=$(c_udp)
rig_sleep 0.5
r2=$(rx)
rig_log "a datagram to the VLAN in $NSC: $NSC's UDP InDatagrams $u0 -> $u1, sroce1 rx_packets $r1 -> $r2"
[ "$u1" -gt "$u0" ] || rig_fail "the datagram did not reach $NSC's UDP socket"
[ "$r2" = "$r1" ] || rig_fail "a packet received in $NSC on the VLAN was delivered to init_net's sroce1"
