#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Busy polling (kernel/sroce_cq.c, provider/poll_cq.cpp): a user spinning
# on an empty CQ has the kernel poll the netdev for it. ibv_rc_pingpong -c
# (which spins on ibv_poll_cq), 1 B x 400 and 64 KiB x 20, guest a the
# server, each run checked as rc_pingpong.sh checks it (exit status, bytes
# moved, "invalid data"), three ways on each sroce guest:
#   busy_poll=50: busy_polls grows, and busy_poll_hits (busy polls that
#     ended with a completion in the CQ) by at least 40 in the 1 B run;
#   busy_poll=0: neither counter moves;
#   busy_poll=50 again, the CQs created while it was 0 on the other side
#     too: counting resumes (the flag is per CQ, set when it is created).
# sroce-rxe: the sroce side busy-polls, the rxe side runs as usual.
# timeout: 240
# place: stock@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
rig_suites sroce-sroce sroce-rxe

rig_require_peer
rig_require_cmd ibv_rc_pingpong
rig_setup_dev
mtu=$(rig_active_mtu "$RIG_DEV")
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
counters=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
sroce=0
if [ "$RIG_DEV_TYPE" = sroce ]; then
	sroce=1
	if [ ! -e "$counters/busy_polls" ] || [ ! -e "$counters/busy_poll_hits" ]; then
		rig_fail "no busy_polls/busy_poll_hits counters on $RIG_DEV"
	fi
	[ -e /sys/module/sroce/parameters/busy_poll ] ||
		rig_fail "no busy_poll module parameter"
	orig=$(cat /sys/module/sroce/parameters/busy_poll)
	trap 'echo "$orig" >/sys/module/sroce/parameters/busy_poll' EXIT
fi
count() { cat "$counters/$1"; }

# pingpong STEP SIZE ITERS: one checked ibv_rc_pingpong run.
pingpong() {
	local step=$1 size=$2 iters=$3 port=$((18720 + n)) rc=0 log line
	local args=(-d "$RIG_DEV" -g "$gid" -c -s "$size" -n "$iters" -m "$mtu" -p "$port")
	log=$RIG_TEST_OUT/$step.log
	n=$((n + 1))
	if rig_is_a; then
		rig_bg "$step" 90 ibv_rc_pingpong "${args[@]}"
		rig_wait_listen "$port" 30 "$RIG_BG_PID" ||
			{ kill "$RIG_BG_PID"; rig_fail "$step: the server did not start"; }
		rig_signal "listen-$step"
		rig_bg_wait "$RIG_BG_PID" || rc=$?
	else
		rig_wait "listen-$step" 90 >/dev/null || rig_fail "$step: the server never listened"
		rig_run 90 ibv_rc_pingpong "${args[@]}" "$RIG_PEER_IP4" >"$log" 2>&1 || rc=$?
	fi
	sed 's/^/    /' "$log"
	[ "$rc" = 0 ] || rig_fail "$step: ibv_rc_pingpong exited $rc"
	grep -qi 'invalid data' "$log" && rig_fail "$step: the received buffer is wrong"
	line="$((size * iters * 2)) bytes in "
	grep -q "^$line" "$log" || rig_fail "$step: no \"$line\" line"
	rig_barrier "done-$step" 60 || rig_fail "$step: the peer did not finish"
}

# phase NAME US: both runs with busy_poll=US on the sroce guests; checks
# the counters' growth against the setting.
phase() {
	local name=$1 us=$2 polls hits
	[ "$sroce" = 1 ] && echo "$us" >/sys/module/sroce/parameters/busy_poll
	rig_barrier "set-$name" 30 || rig_fail "$name: the peer did not set busy_poll"
	[ "$sroce" = 1 ] && polls=$(count busy_polls) && hits=$(count busy_poll_hits)
	pingpong "$name-1B" 1 400
	[ "$sroce" = 1 ] && hits1=$(($(count busy_poll_hits) - hits))
	pingpong "$name-64K" 65536 20
	[ "$sroce" = 1 ] || return 0
	polls=$(($(count busy_polls) - polls))
	hits=$(($(count busy_poll_hits) - hits))
	rig_log "$name: busy_poll=$us: busy_polls +$polls, busy_poll_hits +$hits (1 B run: +$hits1)"
	if [ "$us" = 0 ]; then
		if [ "$polls" != 0 ] || [ "$hits" != 0 ]; then
			rig_fail "$name: busy polling is off, yet busy_polls +$polls, busy_poll_hits +$hits"
		fi
	else
		[ "$hits1" -ge 40 ] ||
			rig_fail "$name: busy_poll=$us, but only $hits1 busy polls found a completion in 400 round trips"
		[ "$polls" -ge "$hits" ] || rig_fail "$name: more hits ($hits) than busy polls ($polls)"
	fi
}

n=0
phase on 50
phase off 0
phase again 50
rig_log "PASS"
