#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# An active-backup bond as the link's netdev, and MTU changes on a live
# device. On one guest: bond0 (active-backup, miimon 50, 10.80.0.1) with
# veth slaves bv0a and bv0b in init_net; their peers bv1a and bv1b in
# namespace sroce_bn, slaves there of bondp (active-backup, 10.80.0.2; no
# bridge: the debug kernel has none). Both bonds take frames on their
# backup slave too (all_slaves_active), so either may switch alone.
# sroce7 on bond0, sroce8 on bondp (made inside sroce_bn). MTU 4200
# everywhere at the start.
#   - Failover under RC traffic: sroce-integrity run (path MTU 1024, every
#     RC opcode both ways, random sizes, every byte and atomic result
#     checked) between sroce8 and sroce7 while the active slave loses its
#     carrier (its peer goes down: miimon fails it over) and then is made
#     active again by hand; the run passes (no completion in error, no
#     wrong byte) and the bond's active slave did change.
#   - MTU down under traffic, path MTU fits: bond0, the slaves and the
#     far side go to MTU 1500 while a 1024-MTU sroce-integrity run goes
#     on; it passes. The port's active MTU follows (4096 -> 1024) and a
#     new QP then works (ibv_rc_pingpong, its exit status and byte count).
#   - MTU down under traffic, path MTU does not fit: a 4096-MTU QP pair
#     running when both bonds drop to MTU 1500 keeps its MTU (the peer
#     would NAK shorter middle packets: IBV_WC_REM_INV_REQ_ERR) and the
#     sends that no longer fit end in IBV_WC_RETRY_EXC_ERR ("transport
#     retry counter exceeded"), in time; the kernel stays clean. Which end
#     fails depends on which was sending: ibv_rc_pingpong alternates, and
#     the end that was waiting for a message waits on (its QP still RTS,
#     no send outstanding, as the IBA says) until it is killed.
# The failover and mtu-fits runs outlast their events: they end at the
# first round after the test says so (--stop-file).
# timeout: 400
# place: stock-1@1
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# INTEG_BIN: the sroce-integrity the other tests use (one guest here: its
# pair helpers do not apply).
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
rig_require_cmd ibv_rc_pingpong
integ=$INTEG_BIN
[ -x "$integ" ] || rig_skip "no $integ (cmake --build build)"
modprobe bonding max_bonds=0 2>/dev/null
[ -d /sys/module/bonding ] || rig_skip "no bonding module in this kernel"
NS=sroce_bn

bcleanup() {
	[ -e "/run/netns/$NS" ] && {
		ip netns pids $NS | xargs -r kill -9 2>/dev/null
		ip netns del $NS
	}
	[ -e /sys/class/net/bond0 ] && ip link del bond0
	return 0
}
# ctrl_restore judges the test by the status it finds in $?.
trap 'rc=$?; bcleanup; (exit "$rc"); ctrl_restore' EXIT

ip netns add $NS || rig_fail "ip netns add $NS failed"
ip link add bond0 type bond mode active-backup miimon 50 all_slaves_active 1 ||
	rig_fail "ip link add bond0 type bond failed"
for s in a b; do
	ip link add "bv0$s" type veth peer name "bv1$s" || rig_fail "veth bv0$s failed"
	ip link set "bv0$s" master bond0 || rig_fail "cannot enslave bv0$s"
	ip link set "bv1$s" netns $NS || rig_fail "cannot move bv1$s into $NS"
done
ip link set bond0 mtu 4200 up || rig_fail "bond0: MTU 4200, up"
ip addr add 10.80.0.1/24 dev bond0
ns() { ip netns exec $NS "$@"; }
ns ip link set lo up
ns ip link add bondp type bond mode active-backup miimon 50 all_slaves_active 1 ||
	rig_fail "ip link add bondp type bond (inside $NS) failed"
for s in a b; do
	ns ip link set "bv1$s" master bondp || rig_fail "cannot enslave bv1$s to bondp"
done
ns ip link set bondp mtu 4200 up || rig_fail "bondp: MTU 4200, up"
ns ip addr add 10.80.0.2/24 dev bondp

ctrl_link_add sroce7 bond0 || rig_fail "rdma link add sroce7 netdev bond0 failed"
ns rdma link add sroce8 type sroce netdev bondp || rig_fail "rdma link add sroce8 netdev bondp failed"
ctrl_wait_state sroce8 ACTIVE 10 || rig_fail "sroce8 is not ACTIVE"
g7=$(rig_gid_index sroce7 10.80.0.1) || rig_fail "sroce7: no GID for 10.80.0.1"
g8=$(rig_gid_index sroce8 10.80.0.2) || rig_fail "sroce8: no GID for 10.80.0.2"
active() { cat /sys/class/net/bond0/bonding/active_slave; }
rig_log "bond0 active slave $(active); sroce7 active_mtu $(ctrl_devinfo_field sroce7 active_mtu)"

# run_start NAME SIZE ITERS MTU: ibv_rc_pingpong -e -c, the server on
# sroce7 in init_net, the client on sroce8 inside $NS, in the background.
port=18840
run_start() {
	local name=$1 p=$port args=(-e -c -s "$2" -n "$3" -m "$4" -p "$port")
	port=$((port + 1))
	rig_bg "$name.server" 120 ibv_rc_pingpong -d sroce7 -g "$g7" "${args[@]}"
	server=$RIG_BG_PID
	rig_wait_listen "$p" 30 || rig_fail "$name: the server did not start"
	ns timeout -k 3 "$(rig_limit 120)" ibv_rc_pingpong -d sroce8 -g "$g8" "${args[@]}" 10.80.0.1 \
		>"$RIG_TEST_OUT/$name.client.log" 2>&1 &
	client=$!
}

# run_check NAME SIZE ITERS: both ends exited 0, moved SIZE * ITERS * 2
# bytes and reported no invalid data (rdma-core's -c looks at one byte a
# page: the integrity runs above are what check data).
run_check() {
	local name=$1 log=$RIG_TEST_OUT/$1 rc=0
	wait "$client" || rc=$?
	sed 's/^/    /' "$log.client.log"
	[ "$rc" = 0 ] || {
		sed 's/^/    /' "$log.server.log"
		rdma statistic show link sroce7/1 | sed 's/^/    /'
		rig_fail "$name: the client exited $rc"
	}
	rig_bg_wait "$server" || rig_fail "$name: the server failed"
	grep -qi 'invalid data' "$log.client.log" "$log.server.log" &&
		rig_fail "$name: a received buffer is wrong"
	grep -q "^$(($2 * $3 * 2)) bytes in " "$log.client.log" ||
		rig_fail "$name: the client did not move $(($2 * $3 * 2)) bytes"
}

# integ_start NAME: sroce-integrity run, the server on sroce7 in init_net,
# the client on sroce8 inside $NS, path MTU 1024, in the background until
# integ_check NAME (at most 200 s).
integ_start() {
	local name=$1 p=$port
	port=$((port + 1))
	rm -f "$RIG_TEST_OUT/$name.stop"
	rig_bg "$name.server" 240 "$integ" run -d sroce7 -g "$g7" -p "$p"
	server=$RIG_BG_PID
	rig_wait_listen "$p" 30 || rig_fail "$name: the server did not start"
	ns timeout -k 3 "$(rig_limit 240)" "$integ" run -d sroce8 -g "$g8" -p "$p" --mtu 1024 \
		--duration 200 --stop-file "$RIG_TEST_OUT/$name.stop" 10.80.0.1 \
		>"$RIG_TEST_OUT/$name.client.log" 2>&1 &
	client=$!
}

# integ_check NAME: the run ends at its next round; both sides passed.
integ_check() {
	local name=$1 log=$RIG_TEST_OUT/$1 rc=0
	touch "$log.stop"
	wait "$client" || rc=$?
	sed 's/^/    /' "$log.client.log"
	if [ "$rc" != 0 ] || ! grep -q '^sroce-integrity run: PASS' "$log.client.log"; then
		sed 's/^/    /' "$log.server.log"
		rdma statistic show link sroce7/1 | sed 's/^/    /'
		rig_fail "$name: sroce-integrity exited $rc: $(grep -m 1 '^sroce-integrity ' "$log.client.log")"
	fi
	rig_bg_wait "$server" || rig_fail "$name: the server side failed"
	rig_log "$name: $(grep -m 1 '^sroce-integrity ' "$log.client.log")"
}

# still_running NAME WHAT: the transfer has not ended yet (else the event
# under test happened after it, and proved nothing).
still_running() {
	kill -0 "$client" 2>/dev/null ||
		rig_fail "$1: the transfer ended before $2; it must run longer"
}

# --- failover -----------------------------------------------------------
first=$(active)
integ_start failover
rig_sleep 2
still_running failover "the carrier loss"
ns ip link set "${first/bv0/bv1}" down # the active slave's carrier goes
rig_sleep 2
second=$(active)
[ "$second" != "$first" ] || rig_fail "bond0 did not fail over from $first"
rig_log "failover: $first lost its carrier, $second took over"
still_running failover "the failback"
ns ip link set "${first/bv0/bv1}" up
rig_sleep 1
echo "$first" >/sys/class/net/bond0/bonding/active_slave ||
	rig_fail "cannot make $first the active slave again"
[ "$(active)" = "$first" ] || rig_fail "bond0's active slave is $(active), not $first"
rig_log "failback: $first active again"
still_running failover "the end of the failback"
integ_check failover
rig_log "failover: 2 switches under traffic, every byte checked"
# A failover makes the core delete and add the bond's GIDs again: their
# indexes may change.
g7=$(rig_gid_index sroce7 10.80.0.1) || rig_fail "sroce7: no GID for 10.80.0.1 after the failover"
g8=$(rig_gid_index sroce8 10.80.0.2) || rig_fail "sroce8: no GID for 10.80.0.2 after the failover"

# --- MTU down, the live QP's path MTU still fits ------------------------
integ_start mtu-fits
rig_sleep 2
still_running mtu-fits "the MTU change"
ip link set bond0 mtu 1500 || rig_fail "bond0: MTU 1500"
ns ip link set bondp mtu 1500
rig_log "MTU 1500 under traffic: sroce7 active_mtu $(ctrl_devinfo_field sroce7 active_mtu)"
integ_check mtu-fits
[ "$(ctrl_devinfo_field sroce7 active_mtu)" = 1024 ] ||
	rig_fail "sroce7 active_mtu $(ctrl_devinfo_field sroce7 active_mtu) at MTU 1500, want 1024"
run_start mtu-new 4096 50 1024
run_check mtu-new 4096 50

# --- MTU down, the live QP's path MTU no longer fits ---------------------
ip link set bond0 mtu 4200 || rig_fail "bond0: MTU 4200"
ns ip link set bondp mtu 4200 || rig_fail "bondp: MTU 4200"
for d in sroce7 sroce8; do
	[ "$(ctrl_devinfo_field $d active_mtu)" = 4096 ] ||
		rig_fail "$d active_mtu $(ctrl_devinfo_field $d active_mtu) at MTU 4200, want 4096"
done
run_start mtu-shrinks 16384 100000 4096
rig_sleep 2
still_running mtu-shrinks "the MTU change"
ip link set bond0 mtu 1500 || rig_fail "bond0: MTU 1500"
ns ip link set bondp mtu 1500 || rig_fail "bondp: MTU 1500"
# 7 retries of a 4 us * 2^14 (67 ms) timeout: well under a minute.
end=$((EPOCHSECONDS + $(rig_limit 60)))
while kill -0 "$client" 2>/dev/null && kill -0 "$server" 2>/dev/null; do
	[ "$EPOCHSECONDS" -lt "$end" ] ||
		rig_fail "mtu-shrinks: both ends still run 60 s after the MTU change"
	rig_sleep 0.5
done
rig_sleep 1 # the other end, if it was sending too
kill "$client" "$server" 2>/dev/null
rc=0
wait "$client" || rc=$?
wait "$server" 2>/dev/null
for d in sroce7 sroce8; do
	rig_log "$d: $(rdma statistic show link "$d/1" | tr -s ' ' | cut -c1-400)"
done
log=$RIG_TEST_OUT/mtu-shrinks
sed 's/^/    client: /' "$log.client.log"
sed 's/^/    server: /' "$log.server.log"
grep -q "^$((16384 * 100000 * 2)) bytes in " "$log.client.log" &&
	rig_fail "mtu-shrinks: 4096-byte packets crossed a 1500-byte link"
grep -qi 'invalid data' "$log.client.log" "$log.server.log" &&
	rig_fail "mtu-shrinks: a received buffer is wrong"
grep -q 'transport retry counter exceeded' "$log.client.log" "$log.server.log" ||
	rig_fail "mtu-shrinks: no end saw a retry-exceeded completion"
grep -h 'Failed status' "$log.client.log" "$log.server.log" |
	grep -v 'transport retry counter exceeded' &&
	rig_fail "mtu-shrinks: a completion failed otherwise than retry-exceeded"
rig_log "mtu-shrinks: the 4096-MTU QP kept its MTU and ended with IBV_WC_RETRY_EXC_ERR"
rig_log "PASS"
