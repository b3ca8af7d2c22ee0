#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce devices in network namespaces, on one guest: a veth pair with one
# end (nsv0, 10.78.0.1, fd78::1) in init_net and the other (nsv1,
# 10.78.0.2, fd78::2) in namespace sroce_ns1. sroce1 is created on nsv0 in
# init_net, sroce2 on nsv1 by "rdma link add" run inside sroce_ns1 (the
# RDMA subsystem's default "shared" netns mode). Checked:
#   - both namespaces have their own socket on UDP port 4791;
#   - ibv_rc_pingpong -c between the namespaces, the server on sroce1 in
#     init_net, the client on sroce2 inside sroce_ns1: 1 B x 100, 64 KiB x
#     20 over the IPv4 GIDs, 4 KiB x 20 over the IPv6 GIDs (byte counts,
#     -c's first byte per page);
#   - rping -V (rdma_cm, validated data) with the client inside sroce_ns1;
#   - rdma-core's rdma_cm tests (pyverbs test_rdmacm) inside sroce_ns1 on
#     sroce2: all ten run and pass;
#   - deleting the namespace while an ibv_rc_pingpong runs in it (which
#     destroys the veth pair) unregisters sroce2 and sroce1 and closes the
#     namespace's socket; init_net's socket stays (sroce0 uses it);
#   - a second namespace, sroce_ns2, made the same way, carries traffic
#     (its sockets are opened afresh);
#   - moving a netdev that has an sroce device into a namespace removes
#     the device; "rdma link add" in the new namespace makes it again.
# rxe cannot do this on 6.1 or 6.12: its sockets and routes are init_net's.
# timeout: 600
# place: 6.12-1@1
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
rig_require_cmd ibv_rc_pingpong rping
NS=sroce_ns1
NS2=sroce_ns2

ns_cleanup() {
	local n
	for n in sroce_ns1 sroce_ns2; do
		[ -e "/run/netns/$n" ] || continue
		ip netns pids "$n" | xargs -r kill 2>/dev/null
		ip netns del "$n"
	done
	return 0
}
# ctrl_restore judges the test by the status it finds in $?.
trap 'rc=$?; ns_cleanup; (exit "$rc"); ctrl_restore' EXIT

# ns_setup NS V0 V1 NET: namespace NS, veth V0 (NET.1, init_net) and V1
# (NET.2, inside NS), IPv6 fd78:NET's third byte::1 and ::2.
ns_setup() {
	local ns=$1 v0=$2 v1=$3 net=$4 six=fd78:${4##*.}
	ip netns add "$ns" || rig_fail "ip netns add $ns failed"
	ctrl_veth "$v0" "$v1"
	ip link set "$v1" netns "$ns" || rig_fail "cannot move $v1 into $ns"
	ip addr add "$net.1/24" dev "$v0"
	ip addr add "$six::1/64" dev "$v0" nodad
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip link set "$v1" up
	ip netns exec "$ns" ip addr add "$net.2/24" dev "$v1"
	ip netns exec "$ns" ip addr add "$six::2/64" dev "$v1" nodad
}

# pingpong NAME SERVER_DEV CLIENT_DEV SERVER_GID CLIENT_GID SIZE ITERS:
# ibv_rc_pingpong -c, the server in init_net, the client inside $NS.
pingpong() {
	local name=$1 sdev=$2 cdev=$3 sgid=$4 cgid=$5 size=$6 iters=$7 port=$((18790 + n))
	local log=$RIG_TEST_OUT/$name
	local args=(-c -s "$size" -n "$iters" -m 1024 -p "$port")
	n=$((n + 1))
	rig_bg "$name.server" 60 ibv_rc_pingpong -d "$sdev" -g "$sgid" "${args[@]}"
	rig_wait_listen "$port" 30 || rig_fail "$name: the server did not start"
	rig_run 60 ip netns exec "$NS" ibv_rc_pingpong -d "$cdev" -g "$cgid" "${args[@]}" \
		"$server_ip" >"$log.client.log" 2>&1 || {
		sed 's/^/    /' "$log.client.log" "$log.server.log"
		rdma statistic show link "$sdev/1" | sed 's/^/    /'
		rdma statistic show link "$cdev/1" | sed 's/^/    /'
		rig_fail "$name: the client inside $NS failed"
	}
	rig_bg_wait "$RIG_BG_PID" || rig_fail "$name: the server failed"
	sed 's/^/    /' "$log.client.log"
	if grep -qi 'invalid data' "$log.client.log" "$log.server.log"; then
		rig_fail "$name: a received buffer is wrong"
	fi
	grep -q "^$((size * iters * 2)) bytes in " "$log.client.log" ||
		rig_fail "$name: the client did not move $((size * iters * 2)) bytes"
}

ns_setup $NS nsv0 nsv1 10.78.0
ctrl_link_add sroce1 nsv0 || rig_fail "rdma link add sroce1 netdev nsv0 failed"
ip netns exec $NS rdma link add sroce2 type sroce netdev nsv1 ||
	rig_fail "rdma link add sroce2 netdev nsv1, inside $NS, failed"
ctrl_wait_state sroce2 ACTIVE 10 || rig_fail "sroce2 (inside $NS) is not ACTIVE"
rdma link show | sed 's/^/    /'

[ -n "$(ss -Hlun 'sport = :4791')" ] || rig_fail "nothing listens on UDP 4791 in init_net"
[ -n "$(ip netns exec $NS ss -Hlun 'sport = :4791')" ] ||
	rig_fail "nothing listens on UDP 4791 inside $NS"

g1=$(rig_gid_index sroce1 10.78.0.1) || rig_fail "sroce1: no GID for 10.78.0.1"
g2=$(rig_gid_index sroce2 10.78.0.2) || rig_fail "sroce2: no GID for 10.78.0.2"
g1v6=$(rig_gid_index sroce1 fd78:0::1) || rig_fail "sroce1: no GID for fd78:0::1"
g2v6=$(rig_gid_index sroce2 fd78:0::2) || rig_fail "sroce2: no GID for fd78:0::2"
# (One look: sroce2's own addresses are in its table already.)
if RIG_GID_WAIT=0 rig_gid_index sroce2 10.78.0.1 >/dev/null 2>&1; then
	rig_fail "sroce2 (inside $NS) has init_net's address 10.78.0.1 as a GID"
fi

n=0
server_ip=10.78.0.1
pingpong v4-1B sroce1 sroce2 "$g1" "$g2" 1 100
pingpong v4-64K sroce1 sroce2 "$g1" "$g2" 65536 20
pingpong v6-4K sroce1 sroce2 "$g1v6" "$g2v6" 4096 20

# rdma_cm: the client resolves and connects from inside the namespace.
rig_bg rping.server 60 rping -s -V -C 50 -S 1000 -a 10.78.0.1 -p 7190
rig_sleep 1
rig_run 60 ip netns exec $NS rping -c -V -C 50 -S 1000 -a 10.78.0.1 -p 7190 \
	>"$RIG_TEST_OUT/rping.client.log" 2>&1 || {
	sed 's/^/    /' "$RIG_TEST_OUT/rping.client.log" "$RIG_TEST_OUT/rping.server.log"
	rig_fail "rping from inside $NS failed"
}
rig_bg_wait "$RIG_BG_PID" || rig_fail "the rping server failed"
rig_log "rping -V: 50 pings of 1000 B from inside $NS"

# rdma-core's rdma_cm tests (pyverbs tests/test_rdmacm.py), run inside the
# namespace on sroce2 with the namespace's address.
rdmacm_tests() {
	local work log rc ran ok skipped failed
	[ -f /usr/share/doc/rdma-core/tests/run_tests.py ] ||
		rig_fail "no rdma-core test suite (apt-get install python3-pyverbs)"
	work=/tmp/rdma-core-tests-ns
	rm -rf "$work"
	mkdir -p "$work"
	cp -r /usr/share/doc/rdma-core/tests "$work/" || rig_fail "cannot copy rdma-core's test suite"
	gunzip -f "$work"/tests/*.gz 2>/dev/null
	log=$RIG_TEST_OUT/rdmacm.log
	(cd "$work" && rig_run 400 ip netns exec $NS python3 \
		"$RIG_REPO/selftests/lib/rdma_core_tests.py" tests --dev sroce2 -v test_rdmacm) >"$log" 2>&1
	rc=$?
	ran=$(sed -n 's/^Ran \([0-9]\+\) tests.*/\1/p' "$log")
	ok=$(grep -c ' \.\.\. ok$' "$log")
	skipped=$(grep -c ' \.\.\. skipped' "$log")
	failed=$(grep -cE '^(FAIL|ERROR): ' "$log")
	rig_log "rdma-core test_rdmacm inside $NS on sroce2: ran ${ran:-0}, ok $ok, skipped $skipped, failed/errors $failed (exit $rc)"
	grep -E '^(FAIL|ERROR): | skipped ' "$log" | head -20 | sed 's/^/    /'
	[ "$failed" = 0 ] || rig_fail "test_rdmacm: $failed tests failed or errored inside $NS"
	[ "$rc" = 0 ] || rig_fail "test_rdmacm inside $NS exited $rc"
	# All ten must run: a device without an address skips them all.
	[ "${ran:-0}" -ge 10 ] || rig_fail "test_rdmacm: ran ${ran:-0} tests inside $NS, not 10"
	[ "$skipped" = 0 ] || rig_fail "test_rdmacm: $skipped tests skipped inside $NS"
}
rdmacm_tests

# The namespace goes away under traffic: sroce2 and its socket with it.
rig_bg busy.server 120 ibv_rc_pingpong -d sroce1 -g "$g1" -s 4096 -n 1000000 -m 1024 -p 18799
rig_wait_listen 18799 30 || rig_fail "the long server did not start"
ip netns exec $NS ibv_rc_pingpong -d sroce2 -g "$g2" -s 4096 -n 1000000 -m 1024 -p 18799 \
	10.78.0.1 >"$RIG_TEST_OUT/busy.client.log" 2>&1 &
client=$!
rig_sleep 2
kill -0 "$client" 2>/dev/null || rig_fail "the long client ended early"
ip netns pids $NS | xargs -r kill -9
ip netns del $NS || rig_fail "ip netns del $NS failed"
wait "$client" 2>/dev/null
ctrl_wait_gone sroce2 20 || rig_fail "sroce2 outlived its namespace"
ctrl_wait_gone sroce1 20 || rig_fail "sroce1 outlived its veth"
kill "$RIG_BG_PID" 2>/dev/null
wait "$RIG_BG_PID" 2>/dev/null
[ "$(ctrl_port_state "$CTRL_DEV")" = ACTIVE ] || rig_fail "$CTRL_DEV not ACTIVE after $NS went away"
ctrl_udp_open || rig_fail "init_net's UDP 4791 socket closed with $NS"

# A second namespace: its sockets are opened afresh.
NS=$NS2
ns_setup $NS nsv2 nsv3 10.78.1
ip netns exec $NS rdma link add sroce3 type sroce netdev nsv3 ||
	rig_fail "rdma link add sroce3 inside $NS failed"
ctrl_link_add sroce4 nsv2 || rig_fail "rdma link add sroce4 netdev nsv2 failed"
ctrl_wait_state sroce3 ACTIVE 10 || rig_fail "sroce3 is not ACTIVE"
g4=$(rig_gid_index sroce4 10.78.1.1) || rig_fail "sroce4: no GID for 10.78.1.1"
g3=$(rig_gid_index sroce3 10.78.1.2) || rig_fail "sroce3: no GID for 10.78.1.2"
server_ip=10.78.1.1
pingpong again-4K sroce4 sroce3 "$g4" "$g3" 4096 20
# A netdev moved to another namespace takes its sroce device with it out
# of existence (as rxe's): the device is bound to the namespace's sockets
# and routes. It can be made again in the netdev's new namespace.
ctrl_veth nsv4 nsv5
ip addr add 10.78.2.1/24 dev nsv4
ctrl_link_add sroce9 nsv4 || rig_fail "rdma link add sroce9 netdev nsv4 failed"
ip link set nsv4 netns $NS || rig_fail "cannot move nsv4 into $NS"
ctrl_wait_gone sroce9 20 || rig_fail "sroce9 outlived its netdev's move to $NS"
ip netns exec $NS ip link set nsv4 up
ip netns exec $NS ip addr add 10.78.2.1/24 dev nsv4
ip netns exec $NS rdma link add sroce9 type sroce netdev nsv4 ||
	rig_fail "rdma link add sroce9 on nsv4 inside $NS failed"
ctrl_wait_state sroce9 ACTIVE 10 || rig_fail "sroce9 (again, inside $NS) is not ACTIVE"
rig_gid_index sroce9 10.78.2.1 >/dev/null || rig_fail "sroce9: no GID for 10.78.2.1 inside $NS"
rdma link delete sroce9 || rig_fail "rdma link delete sroce9 failed"
rdma link delete sroce3 || rig_fail "rdma link delete sroce3 failed"
rdma link delete sroce4 || rig_fail "rdma link delete sroce4 failed"
[ -z "$(ip netns exec $NS ss -Hlun 'sport = :4791')" ] ||
	rig_fail "$NS still has a UDP 4791 socket after its last device went"
rig_log "PASS"
