#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The RDMA subsystem's exclusive netns mode, the one container plugins
# (rdma-cni) use: every RDMA device belongs to one namespace and is visible
# only there. On one guest, with no other namespace alive:
#   - "rdma system set netns exclusive" (restored to shared on exit);
#   - namespaces sroce_xa and sroce_xb joined by a veth pair (xv0,
#     10.79.0.1, fd79::1 in sroce_xa; xv1, 10.79.0.2, fd79::2 in sroce_xb);
#     sroce5 on xv0 and sroce6 on xv1, each made by "rdma link add" inside
#     its namespace: the core puts new devices in init_net, so init_net
#     lists them and the namespaces do not;
#   - "rdma dev set sroce5 netns sroce_xa" (and sroce6 to sroce_xb): the
#     devices leave init_net; each namespace lists its own device and no
#     other (rdma dev, ibv_devices), and sroce6 cannot be opened in sroce_xa;
#   - traffic between the namespaces on the moved devices: ibv_rc_pingpong
#     -c (1 B x 100, 64 KiB x 20 on IPv4, 4 KiB x 20 on IPv6; byte counts,
#     -c's first byte per page)
#     and rping -V (rdma_cm inside both namespaces);
#   - a device moved while a process holds it open (an ibv_rc_pingpong
#     server waiting for its peer): the move completes (the core
#     disassociates the context; that the process sees it is not checked),
#     and the device works after it is moved back;
#   - with traffic running, each namespace's "rdma resource show qp" lists
#     its own device's RC QP and nothing of the other's;
#   - sroce's debugfs follows the moves: after sroce5 went to init_net
#     and back (the core enables a moved device again), the busy QP has
#     its block in /sys/kernel/debug/sroce/sroce5/qps, and both devices'
#     folders are gone with the devices (a folder left behind would hold
#     fault knobs that point into the freed device);
#   - deleting both namespaces with traffic running unregisters both
#     devices and closes the namespaces' sockets (kmemleak and lockdep
#     watch this on the debug kernel).
# timeout: 300
# place: stock-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
rig_require_cmd ibv_rc_pingpong rping
modprobe rdma_ucm 2>/dev/null || rig_fail "modprobe rdma_ucm failed"
XA=sroce_xa
XB=sroce_xb

netns_mode() { rdma system show | sed -n 's/.*netns \([a-z]*\).*/\1/p'; }

# set_mode MODE: "rdma system set netns MODE"; the core refuses (EBUSY)
# while a namespace other than init_net exists, and a deleted namespace
# is torn down asynchronously, after the last reference to it goes (an
# rdma_cm ID holds one until its connection's time-wait ends): retry for
# 60 s.
set_mode() {
	local end=$((EPOCHSECONDS + 60))
	until rdma system set netns "$1" 2>"$RIG_TEST_OUT/mode.err"; do
		if [ "$EPOCHSECONDS" -ge "$end" ]; then
			cat "$RIG_TEST_OUT/mode.err"
			lsns -t net 2>&1 | sed 's/^/    /'
			return 1
		fi
		rig_sleep 0.5
	done
	[ "$(netns_mode)" = "$1" ]
}

xcleanup() {
	local n
	# init_ns only names init_net: unname it, kill nothing.
	[ -e /run/netns/init_ns ] && ip netns del init_ns
	for n in $XA $XB; do
		[ -e "/run/netns/$n" ] || continue
		ip netns pids "$n" | xargs -r kill -9 2>/dev/null
		ip netns del "$n"
	done
	[ "$(netns_mode)" = shared ] || set_mode shared ||
		rig_log "could not restore the shared netns mode"
	return 0
}
# ctrl_restore judges the test by the status it finds in $?.
trap 'rc=$?; xcleanup; (exit "$rc"); ctrl_restore' EXIT

[ "$(netns_mode)" = shared ] || rig_fail "netns mode is $(netns_mode) at the start, not shared"
set_mode exclusive || rig_fail "rdma system set netns exclusive failed"
rig_log "netns mode: $(netns_mode)"

ip netns add $XA || rig_fail "ip netns add $XA failed"
ip netns add $XB || rig_fail "ip netns add $XB failed"
ctrl_veth xv0 xv1
ip link set xv0 netns $XA || rig_fail "cannot move xv0 into $XA"
ip link set xv1 netns $XB || rig_fail "cannot move xv1 into $XB"
for x in "$XA xv0 1" "$XB xv1 2"; do
	read -r ns v i <<<"$x"
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip link set "$v" up
	ip netns exec "$ns" ip addr add "10.79.0.$i/24" dev "$v"
	ip netns exec "$ns" ip addr add "fd79::$i/64" dev "$v" nodad
done

ip netns exec $XA rdma link add sroce5 type sroce netdev xv0 ||
	rig_fail "rdma link add sroce5 netdev xv0 (inside $XA) failed"
ip netns exec $XB rdma link add sroce6 type sroce netdev xv1 ||
	rig_fail "rdma link add sroce6 netdev xv1 (inside $XB) failed"
rdma dev show sroce5 >/dev/null || rig_fail "init_net does not list the new sroce5"
ip netns exec $XA rdma dev show sroce5 >/dev/null 2>&1 &&
	rig_fail "$XA lists sroce5 before it was moved there"

rdma dev set sroce5 netns $XA || rig_fail "rdma dev set sroce5 netns $XA failed"
rdma dev set sroce6 netns $XB || rig_fail "rdma dev set sroce6 netns $XB failed"
rdma dev show sroce5 >/dev/null 2>&1 && rig_fail "init_net still lists sroce5"
rdma dev show sroce6 >/dev/null 2>&1 && rig_fail "init_net still lists sroce6"
for x in "$XA sroce5 sroce6" "$XB sroce6 sroce5"; do
	read -r ns own other <<<"$x"
	list=$(ip netns exec "$ns" rdma dev show | awk '{ print $2 }' | tr -d : | xargs)
	[ "$list" = "$own" ] || rig_fail "$ns lists RDMA devices \"$list\", not just $own"
	list=$(ip netns exec "$ns" ibv_devices | awk 'NR > 2 { print $1 }' | xargs)
	[ "$list" = "$own" ] || rig_fail "ibv_devices in $ns shows \"$list\", not just $own"
	ip netns exec "$ns" ibv_devinfo -d "$other" >/dev/null 2>&1 &&
		rig_fail "$ns can open $other, which lives in another namespace"
done
# ns_active NS DEV: DEV's port is ACTIVE, as NS's sysfs shows it (a moved
# device is gone from init_net's); waits up to 10 s.
ns_active() {
	local end=$((EPOCHSECONDS + 10))
	until ip netns exec "$1" cat "/sys/class/infiniband/$2/ports/1/state" 2>/dev/null |
		grep -q ACTIVE; do
		[ "$EPOCHSECONDS" -lt "$end" ] || return 1
		rig_sleep 0.2
	done
}
ns_active $XA sroce5 || rig_fail "sroce5 is not ACTIVE in $XA"
ns_active $XB sroce6 || rig_fail "sroce6 is not ACTIVE in $XB"
rdma dev show sroce0 >/dev/null || rig_fail "init_net lost sroce0"

# GID indexes, read inside the namespaces (sysfs there shows their devices).
gid_in() { ip netns exec "$1" bash -c ". $RIG_REPO/selftests/lib/guest.sh; rig_gid_index $2 $3"; }
ga=$(gid_in $XA sroce5 10.79.0.1) || rig_fail "sroce5: no GID for 10.79.0.1"
gb=$(gid_in $XB sroce6 10.79.0.2) || rig_fail "sroce6: no GID for 10.79.0.2"
ga6=$(gid_in $XA sroce5 fd79::1) || rig_fail "sroce5: no GID for fd79::1"
gb6=$(gid_in $XB sroce6 fd79::2) || rig_fail "sroce6: no GID for fd79::2"

# pingpong NAME SERVER_GID CLIENT_GID SIZE ITERS: ibv_rc_pingpong -c, the
# server on sroce5 inside $XA, the client on sroce6 inside $XB.
n=0
pingpong() {
	local name=$1 sgid=$2 cgid=$3 size=$4 iters=$5 port=$((18810 + n))
	local log=$RIG_TEST_OUT/$name args=(-c -s "$4" -n "$5" -m 1024 -p "$port")
	n=$((n + 1))
	rig_bg "$name.server" 60 ip netns exec $XA ibv_rc_pingpong -d sroce5 -g "$sgid" "${args[@]}"
	local end=$((EPOCHSECONDS + 30))
	until ip netns exec $XA ss -Hltn "sport = :$port" | grep -q .; do
		[ "$EPOCHSECONDS" -lt "$end" ] || rig_fail "$name: the server did not start"
		rig_sleep 0.2
	done
	rig_run 60 ip netns exec $XB ibv_rc_pingpong -d sroce6 -g "$cgid" "${args[@]}" \
		10.79.0.1 >"$log.client.log" 2>&1 || {
		sed 's/^/    /' "$log.client.log" "$log.server.log"
		rig_fail "$name: the client inside $XB failed"
	}
	rig_bg_wait "$RIG_BG_PID" || rig_fail "$name: the server inside $XA failed"
	sed 's/^/    /' "$log.client.log"
	grep -qi 'invalid data' "$log.client.log" "$log.server.log" &&
		rig_fail "$name: a received buffer is wrong"
	grep -q "^$((size * iters * 2)) bytes in " "$log.client.log" ||
		rig_fail "$name: the client did not move $((size * iters * 2)) bytes"
}
pingpong v4-1B "$ga" "$gb" 1 100
pingpong v4-64K "$ga" "$gb" 65536 20
pingpong v6-4K "$ga6" "$gb6" 4096 20

# rping: rdma_cm in both namespaces, on the devices moved there.
rig_bg rping.server 60 ip netns exec $XA rping -s -V -C 50 -S 1000 -a 10.79.0.1 -p 7191
rig_sleep 2
rig_run 60 ip netns exec $XB rping -c -V -C 50 -S 1000 -a 10.79.0.1 -p 7191 \
	>"$RIG_TEST_OUT/rping.client.log" 2>&1 || {
	sed 's/^/    /' "$RIG_TEST_OUT/rping.client.log" "$RIG_TEST_OUT/rping.server.log"
	rig_fail "rping from $XB to $XA failed"
}
rig_bg_wait "$RIG_BG_PID" || rig_fail "the rping server inside $XA failed"
rig_log "rping -V: 50 pings of 1000 B, $XB to $XA"

# A move under an open context: a server waiting on sroce5 does not hold
# up sroce5's move back to init_net, and sroce5 comes back to $XA working.
rig_bg held 60 ip netns exec $XA ibv_rc_pingpong -d sroce5 -g "$ga" -p 18829
held=$RIG_BG_PID
rig_sleep 2
kill -0 "$held" 2>/dev/null || rig_fail "the waiting server ended early"
# "rdma dev set" takes a namespace's name: give init_net one.
ip netns attach init_ns 1 || rig_fail "ip netns attach init_ns 1 failed"
ip netns exec $XA rdma dev set sroce5 netns init_ns ||
	rig_fail "cannot move sroce5 back to init_net"
rdma dev show sroce5 >/dev/null || rig_fail "sroce5 is not back in init_net"
kill "$held" 2>/dev/null
wait "$held" 2>/dev/null
rdma dev set sroce5 netns $XA || rig_fail "cannot move sroce5 into $XA again"
ns_active $XA sroce5 || rig_fail "sroce5 is not ACTIVE after two moves"
ga=$(gid_in $XA sroce5 10.79.0.1) || rig_fail "sroce5: no GID for 10.79.0.1 after two moves"
pingpong again-4K "$ga" "$gb" 4096 20
ip netns del init_ns

# Both namespaces go away under traffic.
rig_bg busy.server 120 ip netns exec $XA ibv_rc_pingpong -d sroce5 -g "$ga" -s 4096 -n 1000000 -m 1024 -p 18830
rig_sleep 2
ip netns exec $XB ibv_rc_pingpong -d sroce6 -g "$gb" -s 4096 -n 1000000 -m 1024 -p 18830 \
	10.79.0.1 >"$RIG_TEST_OUT/busy.client.log" 2>&1 &
client=$!
rig_sleep 3
kill -0 "$client" 2>/dev/null || {
	sed 's/^/    /' "$RIG_TEST_OUT/busy.client.log"
	rig_fail "the long client ended early"
}
# Each namespace sees its own QPs only ("rdma resource show qp").
for x in "$XA sroce5 sroce6" "$XB sroce6 sroce5"; do
	read -r ns own other <<<"$x"
	ip netns exec "$ns" rdma resource show qp >"$RIG_TEST_OUT/qp.$ns.txt" 2>&1
	grep -q "link $own/1 .*type RC" "$RIG_TEST_OUT/qp.$ns.txt" ||
		{ cat "$RIG_TEST_OUT/qp.$ns.txt"; rig_fail "$ns does not see $own's RC QP"; }
	grep -q "link $other/" "$RIG_TEST_OUT/qp.$ns.txt" &&
		rig_fail "$ns sees QPs of $other, a device of another namespace"
done
# debugfs (init_net's mount) after sroce5's two moves: the busy RC QP of
# sroce5 has its block in the QP listing.
dbgfs=/sys/kernel/debug/sroce
[ -d $dbgfs ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -d $dbgfs ] || rig_fail "no $dbgfs"
rcqpn=$(ip netns exec $XA rdma resource show qp link sroce5/1 |
	sed -n 's/.* lqpn \([0-9]*\) .*type RC.*/\1/p' | head -n 1)
[ -n "$rcqpn" ] || rig_fail "no RC QP number for sroce5"
blk=$(rig_sroce_qp_dbg sroce5 "$rcqpn")
[ -n "$blk" ] || {
	find $dbgfs 2>&1 | sed 's/^/    /'
	rig_fail "no block for sroce5's QP $rcqpn in $dbgfs/sroce5/qps after the device moved twice"
}
rig_log "debugfs after two moves: $(head -n 2 <<<"$blk" | tr '\n' ' ')"
ip netns pids $XA | xargs -r kill -9
ip netns pids $XB | xargs -r kill -9
ip netns del $XA || rig_fail "ip netns del $XA failed"
ip netns del $XB || rig_fail "ip netns del $XB failed"
wait "$client" "$RIG_BG_PID" 2>/dev/null
# Back in shared mode (possible once both namespaces are gone) init_net
# sees every device there is.
set_mode shared || rig_fail "cannot go back to the shared netns mode"
ctrl_wait_gone sroce5 20 || rig_fail "sroce5 outlived its namespace"
ctrl_wait_gone sroce6 20 || rig_fail "sroce6 outlived its namespace"
for d in sroce5 sroce6; do
	[ ! -e $dbgfs/$d ] || rig_fail "$dbgfs/$d outlived the device"
done
[ "$(ctrl_port_state "$CTRL_DEV")" = ACTIVE ] || rig_fail "$CTRL_DEV not ACTIVE after the namespaces went"
ctrl_udp_open || rig_fail "init_net's UDP 4791 socket closed with the namespaces"
rig_log "PASS"
