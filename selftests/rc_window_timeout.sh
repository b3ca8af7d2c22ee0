#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The local ACK timeout covers the packets of a message that is still
# being sent. ib_write_bw (1 MiB WRITEs, 256 packets at path MTU 4096)
# from guest b to guest a while a drops every RoCEv2 packet it sends (its
# ACKs: lib/lossfilter.sh), until the first window (32 packets, 128 KiB)
# has arrived and half a second more: b's requester stops in the middle of
# its first WRITE, held by the window, and a fresh QP has no round trip
# measured for a tail probe; only the ACK timeout (-u 18: 1.07 s, retry
# count 7: 8.6 s for the drop to end, which takes seconds of the debug
# kernel's commands; with -u 16 its 2.1 s ran out there) can bring it back
# once a answers again. Every WRITE must then
# complete, with at least one ACK timeout counted on b.
# Before the fix, sroce armed the timer only when a WQE's last packet went
# out, or on an ACK: here nothing came and nothing was sent again, and
# the WRITE never completed: on 6.1 (-u 16), 2 ACKs dropped, no timeout,
# nothing done in 60 s; with the fix 5 dropped, 5 timeouts, 13 s. (In make test,
# rc_netem.sh's "corrupt 1%" against rdma_rxe, which NAKs a gap once and
# then drops what follows in silence, left a 209 KiB WRITE uncompleted
# for 15 s with no ACK timeout counted.)
# timeout: 120
# place: stock@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/lossfilter.sh
. "$(dirname "$0")/lib/lossfilter.sh"
rig_suites sroce-sroce

rig_require_peer
rig_require_cmd ib_write_bw tc
rig_setup_dev
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
port=18530
log=$RIG_TEST_OUT/write_bw.$RIG_ROLE.log
args=(-d "$RIG_DEV" -x "$gid" -m 4096 -s 1048576 -n 20 -u 18 -F -p "$port")
cnt() {
	local v
	read -r v <"$hw/$1"
	echo "$v"
}

if rig_is_a; then
	trap loss_restore EXIT
	loss_init
	loss_band 3 100
	loss_match 3 "every RoCEv2 packet"
	rx0=$(cnt rx_packets)
	timeout -k 3 60 ib_write_bw "${args[@]}" >"$log" 2>&1 &
	srv=$!
	rig_wait_listen "$port" 30 "$srv" || rig_fail "ib_write_bw did not listen"
	rig_signal listening
	end=$((EPOCHSECONDS + 30))
	until [ $(($(cnt rx_packets) - rx0)) -ge 32 ]; do
		[ "$EPOCHSECONDS" -lt "$end" ] || rig_fail "the first window never arrived"
		rig_sleep 0.05
	done
	rig_sleep 0.5
	came=$(($(cnt rx_packets) - rx0))
	# Lift the drop: every packet goes to the default band again.
	tc filter del dev "$RIG_IFACE" parent 1: prio 1 || rig_fail "tc filter del"
	dropped=$(loss_dropped 3)
	rig_log "dropped $dropped of this guest's packets (its ACKs) while $came packets came"
	[ "$dropped" -ge 1 ] || rig_fail "no ACK was dropped: the test tested nothing"
	rc=0
	wait "$srv" || rc=$?
	sed 's/^/    /' "$log"
	[ "$rc" = 0 ] || rig_fail "ib_write_bw (server) exited $rc"
else
	rig_wait listening 90 >/dev/null || rig_fail "the server did not listen"
	t0=$(cnt ack_timeouts)
	rc=0
	timeout -k 3 60 ib_write_bw "${args[@]}" "$RIG_PEER_IP4" >"$log" 2>&1 || rc=$?
	sed 's/^/    /' "$log"
	to=$(($(cnt ack_timeouts) - t0))
	rig_log "ACK timeouts: $to"
	[ "$rc" = 0 ] || rig_fail "ib_write_bw (client, the requester) exited $rc: the WRITEs did not complete"
	grep -qE '^ *1048576 +20 ' "$log" || rig_fail "no result row for 20 WRITEs of 1 MiB"
	[ "$to" -ge 1 ] || rig_fail "no ACK timeout counted: what recovered the stall?"
fi
rig_barrier finished 90 || rig_fail "the peer did not finish"
