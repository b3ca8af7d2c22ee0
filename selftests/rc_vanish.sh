#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The peer vanishes in the middle of a transfer: sroce-integrity vanish.
# Guest a (sroce) requests on one RC QP per opcode (RDMA WRITE, SEND, RDMA
# READ, FETCH_AND_ADD), 4 WRs in flight each, local ACK timeout 15
# (4.096 us x 2^15 = 134.2 ms) and retry_cnt 5; guest b responds. Once every
# QP is moving, b takes its link down (ip link set down). Each of a's QPs
# must then complete its oldest WR with IBV_WC_RETRY_EXC_ERR (retry_cnt + 1)
# x 134.2 ms = 805 ms after its last success (the tool takes 90% of that to
# 4 times plus 1 s), every later WR with IBV_WC_WR_FLUSH_ERR in order, go to
# ERR and flush a WR posted afterwards; a's sroce must have counted
# retry_cnt + 1 ACK timeouts per QP. The measured times are recorded with
# rig_metric; the runner fails the test on any kernel splat in a's dmesg.
# Afterwards b brings its link back (addresses and GIDs kept), for the
# tests that follow. Only meaningful with sroce requesting in guest a:
# sroce-sroce and sroce-rxe.
# timeout: 90
# place: stock@2 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"

VANISH_TIMEOUT=15
VANISH_RETRY=5
VANISH_PORT=18650

rig_require_peer
[ "$(integ_type_of a)" = sroce ] ||
	rig_skip "measures sroce's retry timeout: needs sroce in guest a (sroce-sroce, sroce-rxe)"
rig_require_cmd ip busybox
integ_init
args=(--requester server --ack-timeout "$VANISH_TIMEOUT" --retry-cnt "$VANISH_RETRY"
	--depth 4 --timeout 20)
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters

# vanish_counter NAME: one of this guest's sroce counters.
vanish_counter() {
	local v
	read -r v <"$hw/$1" || rig_fail "cannot read $hw/$1"
	echo "$v"
}

# --- guest b: vanish, then come back -------------------------------------

link_down=0
tool_pid=""

# vanish_restore: link up with its addresses, the RDMA port ACTIVE with its
# GIDs, the peer reachable again.
vanish_restore() {
	[ "$link_down" = 1 ] || return 0
	ip link set dev "$RIG_IFACE" up || rig_log "ip link set $RIG_IFACE up failed"
	link_down=0
	rig_add_link "$RIG_DEV" "$RIG_DEV_TYPE"
	rig_gid_index "$RIG_DEV" "$RIG_IP4" >/dev/null || rig_fail "no IPv4 GID after the link came back"
	rig_gid_index "$RIG_DEV" "$RIG_IP6" >/dev/null || rig_fail "no IPv6 GID after the link came back"
	for _ in 1 2 3 4 5; do
		busybox ping -c 1 -W 2 "$RIG_PEER_IP4" >/dev/null 2>&1 &&
			busybox ping -c 1 -W 2 "$RIG_PEER_IP6" >/dev/null 2>&1 && return 0
	done
	rig_fail "the peer does not answer ping after the link came back"
}

vanish_b_cleanup() {
	[ -n "$tool_pid" ] && kill "$tool_pid" 2>/dev/null
	vanish_restore
}

vanish_b() {
	local gid log line cue="" found=0 end
	gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
	# Keep the IPv6 address through the link's down time, as IPv4 does.
	echo 1 >"/proc/sys/net/ipv6/conf/$RIG_IFACE/keep_addr_on_down" ||
		rig_fail "cannot set keep_addr_on_down on $RIG_IFACE"
	trap vanish_b_cleanup EXIT
	rig_wait listen-vanish 60 >/dev/null || rig_fail "the server never listened"
	log=$RIG_TEST_OUT/vanish.log
	rig_bg vanish 60 "$INTEG_BIN" vanish -d "$RIG_DEV" -g "$gid" -p "$VANISH_PORT" -T 60 \
		"${args[@]}" "$RIG_PEER_IP4"
	tool_pid=$RIG_BG_PID
	# Poll the tool's output (builtins only) for its cue.
	end=$((EPOCHSECONDS + 60))
	while [ "$found" = 0 ]; do
		kill -0 "$tool_pid" 2>/dev/null || break
		[ "$EPOCHSECONDS" -lt "$end" ] || break
		if [ -e "$log" ]; then
			while IFS= read -r line; do
				[[ "$line" == "sroce-integrity vanish: vanishing"* ]] && found=1 cue=$line
			done <"$log"
		fi
		[ "$found" = 1 ] || rig_sleep 0.05
	done
	if [ "$found" = 0 ]; then
		sed 's/^/    /' "$log"
		rig_fail "the tool never got to vanish"
	fi
	ip link set dev "$RIG_IFACE" down || rig_fail "ip link set $RIG_IFACE down failed"
	link_down=1
	rig_log "$RIG_IFACE down after the tool's cue: $cue"
	rig_signal down
	rig_wait finished 60 >/dev/null || rig_log "guest a did not finish"
	vanish_restore
	kill "$tool_pid" 2>/dev/null
	wait "$tool_pid" 2>/dev/null
	tool_pid=""
	sed 's/^/    /' "$log"
	! grep -q 'ERROR:' "$log" || rig_fail "the responder found errors before it vanished"
	rig_log "$RIG_IFACE back up, GIDs and peer reachable"
	rig_signal link-up
}

# --- guest a: the requester ------------------------------------------------

vanish_a() {
	local t0 r0 t1 r1 nqps line kind ms want
	t0=$(vanish_counter ack_timeouts)
	r0=$(vanish_counter retransmits)
	integ_run vanish 60 4 "$VANISH_PORT" vanish "${args[@]}"
	rig_signal finished
	rig_wait link-up 60 >/dev/null || rig_fail "guest b did not bring its link back"
	t1=$(vanish_counter ack_timeouts)
	r1=$(vanish_counter retransmits)
	rig_log "ack_timeouts +$((t1 - t0)), retransmits +$((r1 - r0))"
	if [ "$INTEG_RC" != 0 ]; then
		integ_diag
		rig_fail "sroce-integrity vanish exited $INTEG_RC${INTEG_SUMMARY:+: $INTEG_SUMMARY}"
	fi
	[[ "$INTEG_SUMMARY" =~ \ PASS\ .*\ qps=([0-9]+)\  ]] ||
		rig_fail "no PASS summary line with qps= ($INTEG_SUMMARY)"
	nqps=${BASH_REMATCH[1]}
	while IFS= read -r line; do
		[[ "$line" =~ ^vanish-qp\ kind=([a-z_]+)\ error_after_ms=([0-9]+)\ expected_ms=([0-9.]+) ]] ||
			continue
		kind=${BASH_REMATCH[1]}
		ms=${BASH_REMATCH[2]}
		want=${BASH_REMATCH[3]}
		rig_metric "vanish_${kind}_retry_exc_after" "$ms" ms
	done <"$INTEG_LOG"
	[ -n "${want:-}" ] || rig_fail "no per-QP times in the tool's output"
	rig_metric vanish_retry_exc_expected "$want" ms
	# Each QP: retry_cnt retries, each after a timeout, and the last timeout.
	[ $((t1 - t0)) -ge $((nqps * (VANISH_RETRY + 1))) ] ||
		rig_fail "ack_timeouts +$((t1 - t0)), want at least $nqps QPs x $((VANISH_RETRY + 1))"
	[ $((r1 - r0)) -ge $((nqps * VANISH_RETRY)) ] ||
		rig_fail "retransmits +$((r1 - r0)), want at least $nqps QPs x $VANISH_RETRY"
}

if rig_is_a; then
	vanish_a
else
	vanish_b
fi
