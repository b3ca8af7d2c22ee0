#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Containers on both guests: on an sroce guest, namespace sroce_ctr gets a
# macvlan (mv0) over the link's netdev with 10.81.0.a|b/24 and fd81::a|b,
# and "rdma link add sroce_c type sroce netdev mv0" runs inside it; every
# command below runs inside the namespace too (ip netns exec). An rxe guest
# cannot do that (rxe's sockets are init_net's): it puts the same addresses
# on the link's netdev and uses rxe0 from init_net; the wire does not care.
# Checked, guest a serving:
#   - init_net's sroce0 has no GID for the namespace's addresses (the
#     core offers them: mv0 is an upper device of the link's netdev), and
#     sroce_c none for init_net's;
#   - ibv_rc_pingpong -c (1 B x 100, 64 KiB x 20 on IPv4, 4 KiB x 20 on
#     IPv6) and ibv_ud_pingpong -c (byte counts, -c's first byte per
#     page), the out-of-band TCP
#     exchange between the namespaces too;
#   - rping -V over IPv4 and IPv6 (rdma_cm inside the namespace);
#   - perftest: ib_write_bw and ib_read_bw (64 KiB, 200 iterations) and
#     ib_send_lat (2 B) on the namespace's GID, and ib_send_bw -R (rdma_cm);
#     each must report a positive result.
# timeout: 400
# place: stock@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# shellcheck source=lib/cm.sh
. "$(dirname "$0")/lib/cm.sh"
# shellcheck source=lib/perftest.sh
. "$(dirname "$0")/lib/perftest.sh"
rig_suites sroce-sroce sroce-rxe

rig_require_peer
rig_require_cmd ibv_rc_pingpong ibv_ud_pingpong rping ib_write_bw ib_read_bw ib_send_lat ib_send_bw
rig_setup_dev
modprobe rdma_ucm 2>/dev/null || rig_fail "modprobe rdma_ucm failed"

NS=sroce_ctr
if rig_is_a; then me=1 peer=2; else me=2 peer=1; fi
c4=10.81.0.$me peer4=10.81.0.$peer
c6=fd81::$me peer6=fd81::$peer
ncleanup() {
	local rc=$?
	if [ -e "/run/netns/$NS" ]; then
		ip netns pids $NS | xargs -r kill -9 2>/dev/null
		ip netns exec $NS rdma link delete sroce_c 2>/dev/null
		ip netns del $NS
	fi
	ip addr del "$c4/24" dev "$RIG_IFACE" 2>/dev/null
	ip addr del "$c6/64" dev "$RIG_IFACE" 2>/dev/null
	exit "$rc"
}
trap ncleanup EXIT

if [ "$RIG_DEV_TYPE" = sroce ]; then
	ip netns add $NS || rig_fail "ip netns add $NS failed"
	ip link add link "$RIG_IFACE" name mv0 type macvlan mode bridge ||
		rig_fail "ip link add mv0 type macvlan failed"
	ip link set mv0 netns $NS || rig_fail "cannot move mv0 into $NS"
	ip netns exec $NS ip link set lo up
	ip netns exec $NS ip link set mv0 up
	ip netns exec $NS ip addr add "$c4/24" dev mv0
	ip netns exec $NS ip addr add "$c6/64" dev mv0 nodad
	ip netns exec $NS rdma link add sroce_c type sroce netdev mv0 ||
		rig_fail "rdma link add sroce_c netdev mv0, inside $NS, failed"
	DEV=sroce_c
	X="ip netns exec $NS"
	# The core offers sroce0 the GIDs of its upper devices, mv0 too,
	# wherever they live; sroce0 refuses those of another namespace (it
	# could not serve them, and rdma_cm would pick it over sroce_c).
	rig_gid_index sroce0 "$c4" >/dev/null 2>&1 &&
		rig_fail "init_net's sroce0 has a GID for $c4, an address of $NS"
	rig_gid_index sroce_c "$RIG_IP4" >/dev/null 2>&1 &&
		rig_fail "sroce_c has a GID for $RIG_IP4, an address of init_net"
	rig_log "$NS: sroce_c on mv0 ($c4, $c6)"
else
	ip addr add "$c4/24" dev "$RIG_IFACE" || rig_fail "ip addr add $c4 failed"
	ip addr add "$c6/64" dev "$RIG_IFACE" nodad || rig_fail "ip addr add $c6 failed"
	DEV=$RIG_DEV
	X=""
	rig_log "init_net: $DEV on $RIG_IFACE ($c4, $c6)"
fi
g4=$(rig_gid_index "$DEV" "$c4") || rig_fail "$DEV: no RoCEv2 GID for $c4"
rig_barrier ns-up 60 || rig_fail "the peer did not set up its side"
# shellcheck disable=SC2086 # $X is a command prefix
$X ping -c 1 -W 5 "$peer4" >/dev/null 2>&1 || rig_log "ping $peer4 failed once"

mtu=$(rig_active_mtu "$DEV")
RIG_DEV=$DEV RIG_IP4=$c4 RIG_IP6=$c6 RIG_PEER_IP4=$peer4 PP_EXEC=$X PP_TAG=rc \
	pingpong_steps ibv_rc_pingpong 18851 4:1:100 4:65536:20 6:4096:20
RIG_DEV=$DEV RIG_IP4=$c4 RIG_IP6=$c6 RIG_PEER_IP4=$peer4 PP_EXEC=$X PP_TAG=ud \
	pingpong_steps ibv_ud_pingpong 18852 4:1:100 4:"$mtu":20

srv4=$c4 srv6=$c6
rig_is_b && srv4=$peer4 srv6=$peer6
# rdma_cm inside the namespace.
# shellcheck disable=SC2086 # $X is a command prefix
rping_pair rping-v4 7183 "$srv4" $X
# shellcheck disable=SC2086
rping_pair rping-v6 7184 "$srv6" $X

# perftest inside the namespace (perf_pair runs "$X TOOL ...").
# shellcheck disable=SC2086
for t in "write_bw ib_write_bw -s 65536 -n 200" "read_bw ib_read_bw -s 65536 -n 200" \
	"send_lat ib_send_lat -s 2 -n 2000" "send_bw-R ib_send_bw -R -s 4096 -n 200"; do
	read -r name tool args <<<"$t"
	gidarg=(-x "$g4")
	[[ "$args" == *-R* ]] && gidarg=()
	RIG_PEER_IP4=$peer4 perf_pair "$name" 90 $X "$tool" -d "$DEV" "${gidarg[@]}" -F $args ||
		rig_fail "$tool ($name) failed"
	if [[ "$name" == *lat* ]]; then
		row=$(perf_lat_row "$PERF_LOG" 2) || rig_fail "$name: no result row"
		read -r _ _ typ _ <<<"$row"
		is_positive "$typ" || rig_fail "$name: typical latency $typ"
		rig_log "$name: typical $typ us"
	else
		size=${args#-R }
		size=${size#-s }
		size=${size%% *}
		row=$(perf_bw_row "$PERF_LOG" "$size") || rig_fail "$name: no result row"
		read -r _ avg _ <<<"$row"
		is_positive "$avg" || rig_fail "$name: average bandwidth $avg"
		rig_log "$name: $avg MB/s"
	fi
	rig_barrier "done-$name" 60 || rig_fail "$name: the peer did not finish"
done
