#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RoCEv2 over an 802.1Q VLAN: each guest adds VLAN 100 on the link's netdev
# (10.77.100.a|b/24, fd7b::a|b/64); the core gives the RDMA device GIDs
# for the VLAN device's addresses, and traffic on those GIDs must leave
# through the VLAN device, tagged. Over the VLAN's addresses only:
# ibv_rc_pingpong and ibv_ud_pingpong -c (byte counts, -c's first byte per
# page) on the
# IPv4 and IPv6 GIDs, rping -V (rdma_cm, data validated) on both families
# and to the guest's own VLAN address (loopback: the received MADs must
# carry the VLAN id, or the CM finds no GID to answer from).
# A capture on the link's netdev (tcpdump -e) must show RoCEv2 frames of
# the VLAN's addresses in both directions, every one of them tagged 100:
# one untagged frame fails the test (sroce routed by the link's netdev
# until the GID's own netdev picked the route, kernel/sroce_net.c).
# timeout: 300
# place: stock@1 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# shellcheck source=lib/cm.sh
. "$(dirname "$0")/lib/cm.sh"
rig_suites sroce-sroce sroce-rxe rxe-rxe

rig_require_peer
rig_require_cmd ibv_rc_pingpong ibv_ud_pingpong rping tcpdump
rig_setup_dev
modprobe 8021q 2>/dev/null
modprobe rdma_ucm 2>/dev/null || rig_fail "modprobe rdma_ucm failed"

vid=100
vdev=$RIG_IFACE.$vid
if rig_is_a; then me=1 peer=2; else me=2 peer=1; fi
v4=10.77.100.$me peer4=10.77.100.$peer
v6=fd7b::$me peer6=fd7b::$peer
cap=$RIG_TEST_OUT/vlan.pcap
cap_pid=

cleanup() {
	local rc=$?
	[ -n "$cap_pid" ] && kill "$cap_pid" 2>/dev/null
	ip link del "$vdev" 2>/dev/null
	exit "$rc"
}
trap cleanup EXIT

ip link add link "$RIG_IFACE" name "$vdev" type vlan id "$vid" ||
	rig_fail "ip link add $vdev type vlan id $vid failed"
ip addr add "$v4/24" dev "$vdev" || rig_fail "ip addr add $v4 failed"
ip -6 addr add "$v6/64" dev "$vdev" nodad || rig_fail "ip addr add $v6 failed"
ip link set "$vdev" up || rig_fail "ip link set $vdev up failed"

# Every frame on the link's netdev from or to the VLAN's addresses; -e
# shows the 802.1Q header (the tag is in the skb's metadata when the NIC
# offloads it, and libpcap puts it back in the frame).
tcpdump -i "$RIG_IFACE" -e -nn -s 128 -U -w "$cap" \
	"udp port 4791 or (vlan and udp port 4791)" >/dev/null 2>&1 &
cap_pid=$!
rig_sleep 1
kill -0 "$cap_pid" 2>/dev/null || rig_fail "tcpdump did not start"

gid4=$(rig_gid_index "$RIG_DEV" "$v4") || rig_fail "$RIG_DEV has no RoCEv2 GID for $v4 on $vdev"
gid6=$(rig_gid_index "$RIG_DEV" "$v6") || rig_fail "$RIG_DEV has no RoCEv2 GID for $v6 on $vdev"
rig_log "$vdev: GID $gid4 ($v4), GID $gid6 ($v6)"
ping -c 1 -W 5 "$peer4" >/dev/null 2>&1 || rig_sleep 1
rig_barrier vlan-up 60 || rig_fail "the peer did not set up its VLAN"

mtu=$(rig_active_mtu "$RIG_DEV")
RIG_IP4=$v4 RIG_IP6=$v6 RIG_PEER_IP4=$peer4 PP_TAG=rc \
	pingpong_steps ibv_rc_pingpong 18631 4:1:100 4:65536:20 6:4096:50
RIG_IP4=$v4 RIG_IP6=$v6 RIG_PEER_IP4=$peer4 PP_TAG=ud \
	pingpong_steps ibv_ud_pingpong 18632 4:1:100 4:"$mtu":50 6:1024:50

if rig_is_a; then
	rping_pair rping-v4 7181 "$v4"
	rping_pair rping-v6 7182 "$v6"
else
	rping_pair rping-v4 7181 "$peer4"
	rping_pair rping-v6 7182 "$peer6"
fi

# rdma_cm to this guest's own VLAN address: the loopback path, where the
# packets must "arrive" on the VLAN device too.
rig_bg rping-local 60 rping -s -V -C 20 -S 1000 -a "$v4" -p 7185
rig_wait_cm_listen 7185 30 "$RIG_BG_PID" || rig_fail "rping-local: the server did not listen"
rig_run 60 rping -c -V -C 20 -S 1000 -a "$v4" -p 7185 >"$RIG_TEST_OUT/rping-local.client.log" 2>&1 ||
	rig_fail "rping-local: the client to $v4 failed"
rig_bg_wait "$RIG_BG_PID" || rig_fail "rping-local: the server failed"
grep -qiE 'error|fail|miscompare|invalid' "$RIG_TEST_OUT/rping-local.client.log" &&
	rig_fail "rping-local: $(grep -m 1 -iE 'error|fail|miscompare|invalid' "$RIG_TEST_OUT/rping-local.client.log")"
rig_log "rping-local: 20 pings to $v4"
rig_barrier done-local 60 || rig_fail "the peer did not finish rping-local"

# The capture: RoCEv2 frames of the VLAN's addresses, tagged or not.
rig_sleep 1
kill -INT "$cap_pid" 2>/dev/null
wait "$cap_pid" 2>/dev/null
cap_pid=
tcpdump -r "$cap" -e -nn 2>/dev/null >"$RIG_TEST_OUT/vlan.txt" ||
	rig_fail "tcpdump -r $cap failed"
ours="($v4|$peer4|$v6|$peer6)\.[0-9]+ > "
sent=0 recvd=0 untagged=0
while read -r line; do
	[[ "$line" =~ $ours ]] || continue
	if [[ "$line" != *"vlan $vid,"* ]]; then
		untagged=$((untagged + 1))
		[ "$untagged" = 1 ] && rig_log "untagged: $line"
		continue
	fi
	case "$line" in
	*" $v4."*" > "* | *" $v6."*" > "*) sent=$((sent + 1)) ;;
	*) recvd=$((recvd + 1)) ;;
	esac
done <"$RIG_TEST_OUT/vlan.txt"
rig_log "capture on $RIG_IFACE: $sent frames sent and $recvd received tagged $vid, $untagged untagged"
[ "$untagged" = 0 ] || rig_fail "$untagged RoCEv2 frames of the VLAN's addresses went untagged"
[ "$sent" -ge 100 ] || rig_fail "only $sent tagged frames sent from $v4/$v6"
[ "$recvd" -ge 100 ] || rig_fail "only $recvd tagged frames received for $v4/$v6"
rig_barrier done-capture 60 || rig_fail "the peer did not finish its capture check"
