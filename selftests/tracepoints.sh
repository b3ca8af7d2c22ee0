#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce's tracepoints (system "sroce", kernel/sroce_trace.h) through perf
# and trace-cmd, in the sroce-sroce pair.
#   a known sequence: "perf record -e 'sroce:*' -a -- sroce-verbs-check
#     resdetails" on guest a (a loopback RC pair: SENDs ACKed, then a
#     SEND to a reset QP retried until IBV_WC_RETRY_EXC_ERR); "perf
#     script" must show sroce_xmit, sroce_recv, sroce_ack_sent,
#     sroce_ack_rcvd, sroce_retransmit, sroce_timeout, sroce_qp_state,
#     sroce_cqe and sroce_doorbell, the reset QP's ACK timeouts at the
#     PSN it was stuck at and retransmits back to it;
#   a lossy transfer: "trace-cmd record -e sroce" on a; guest b sends a
#     runt UDP datagram to a's port 4791 (sroce_drop), then
#     ibv_rc_pingpong -c (200 x 4096 B, path MTU 1024) runs between the
#     guests with 5% of b's SEND packets lost (netem under a u32 filter,
#     lib/lossfilter.sh); the transfer completes (exit status, byte
#     count, -c's first byte per page) and a's trace
#     holds the drop and at least the 800 data packets a sent (report
#     excerpt in the log). Not b's ACKs: a pingpong side exits once its
#     own work completed, and a's retransmission after a lost last ACK
#     would find b's QP gone (debugfs_faults.sh says more).
# timeout: 240
# place: stock@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/lossfilter.sh
. "$(dirname "$0")/lib/lossfilter.sh"
rig_suites sroce-sroce

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || rig_skip "runs where both guests are sroce"
rig_require_cmd perf trace-cmd ibv_rc_pingpong
rig_setup_dev
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
repo=${RIG_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
VC=${SROCE_VERBS_CHECK:-$repo/build/tools/verbs-check/sroce-verbs-check}
[ -x "$VC" ] || rig_fail "no $VC (cmake --build build)"
[ -d /sys/kernel/tracing/events/sroce ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -d /sys/kernel/tracing/events/sroce ] || rig_fail "no sroce events in /sys/kernel/tracing/events"
cleanup() {
	local rc=$?
	rig_is_b && loss_restore
	exit "$rc"
}
trap cleanup EXIT

# --- the events of a known sequence (perf) ----------------------------------
# "perf record -- CMD" records from before CMD starts to its end.
if rig_is_a; then
	data=$RIG_TEST_OUT/perf.data
	rc=0
	rig_run 120 perf record -q -e 'sroce:*' -a -o "$data" -- \
		"$VC" resdetails "$RIG_DEV" >"$RIG_TEST_OUT/resdetails.log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || {
		sed 's/^/    /' "$RIG_TEST_OUT/resdetails.log"
		rig_fail "perf record -- sroce-verbs-check resdetails exited $rc"
	}
	perf script -i "$data" >"$RIG_TEST_OUT/perf.txt" 2>"$RIG_TEST_OUT/perf-script.log" ||
		rig_fail "perf script failed: $(head -3 "$RIG_TEST_OUT/perf-script.log")"
	counts=""
	for ev in xmit recv ack_sent ack_rcvd retransmit timeout qp_state cqe doorbell; do
		n=$(grep -c "sroce:sroce_$ev:" "$RIG_TEST_OUT/perf.txt")
		counts+=" $ev=$n"
		[ "$n" -gt 0 ] || rig_fail "perf script: no sroce:sroce_$ev event (counts:$counts)"
	done
	rig_log "perf events:$counts"
	# The reset QP's SEND: its timeouts name the PSN it was stuck at, and
	# each retransmit goes back to that PSN.
	stuck=$(grep 'sroce:sroce_timeout:' "$RIG_TEST_OUT/perf.txt" | grep -m 1 'tail_probe 0')
	[ -n "$stuck" ] || rig_fail "no ACK timeout (tail_probe 0) traced"
	qpn=$(sed -n 's/.*qpn \([0-9]*\) psn .*/\1/p' <<<"$stuck")
	psn=$(sed -n 's/.* psn \([0-9]*\) .*/\1/p' <<<"$stuck")
	grep 'sroce:sroce_timeout:' "$RIG_TEST_OUT/perf.txt" | grep -m 3 "qpn $qpn " | sed 's/^ */    /'
	grep -qE "sroce:sroce_retransmit: qpn $qpn from psn [0-9]+ to psn $psn( |\$)" "$RIG_TEST_OUT/perf.txt" ||
		rig_fail "no retransmit of QP $qpn back to PSN $psn"
	grep 'sroce:sroce_retransmit:' "$RIG_TEST_OUT/perf.txt" | grep -m 2 "qpn $qpn " | sed 's/^ */    /'
	rig_log "QP $qpn: ACK timeouts at PSN $psn and retransmits back to it traced"
fi
rig_barrier perf-done 180 || rig_fail "the peer did not finish the perf phase"

# --- a lossy transfer (trace-cmd) --------------------------------------------
args=(-d "$RIG_DEV" -g "$gid" -c -s 4096 -n 200 -m 1024 -p 18890)
if rig_is_a; then
	dat=$RIG_TEST_OUT/trace.dat
	trace-cmd record -q -e sroce -o "$dat" >"$RIG_TEST_OUT/trace-record.log" 2>&1 &
	tc_pid=$!
	end=$((EPOCHSECONDS + $(rig_limit 60)))
	until [ "$(cat /sys/kernel/tracing/events/sroce/enable)" = 1 ]; do
		kill -0 "$tc_pid" 2>/dev/null && [ "$EPOCHSECONDS" -lt "$end" ] || {
			cat "$RIG_TEST_OUT/trace-record.log"
			rig_fail "trace-cmd record did not enable the sroce events"
		}
		rig_sleep 0.2
	done
	rig_sleep 1 # its readers started before it enabled the events
	rig_signal tracing
	rig_wait runt-sent 60 >/dev/null || rig_fail "guest b did not send its datagram"
	rig_bg lossy 120 ibv_rc_pingpong "${args[@]}"
	rig_wait_listen 18890 30 "$RIG_BG_PID" || rig_fail "lossy: the server did not start"
	rig_signal listen-lossy
	# What a user looking at the transfer sees (for Documentation/debugging.rst).
	rig_sleep 2
	rdma -dd resource show qp link "$RIG_DEV/1" | grep 'comm ibv_rc_pingpong' | sed 's/^/    /'
	rdma statistic show link "$RIG_DEV/1" | sed 's/^/    /'
	rig_bg_wait "$RIG_BG_PID" || {
		sed 's/^/    /' "$RIG_TEST_OUT/lossy.log"
		rig_fail "lossy: ibv_rc_pingpong failed"
	}
	kill -INT "$tc_pid"
	wait "$tc_pid" 2>/dev/null
	trace-cmd report -i "$dat" >"$RIG_TEST_OUT/trace.txt" 2>"$RIG_TEST_OUT/trace-report.log" ||
		rig_fail "trace-cmd report failed: $(head -3 "$RIG_TEST_OUT/trace-report.log")"
	grep -q 'sroce_drop:' "$RIG_TEST_OUT/trace.txt" || rig_fail "trace-cmd: no sroce_drop for the runt datagram"
	grep -m 1 'sroce_drop:' "$RIG_TEST_OUT/trace.txt" | sed 's/^ */    /'
	n=$(grep -c 'sroce_xmit:' "$RIG_TEST_OUT/trace.txt")
	[ "$n" -ge 800 ] || rig_fail "trace-cmd: $n sroce_xmit events for 800 data packets sent"
	rig_log "trace-cmd: $(grep -c 'sroce_' "$RIG_TEST_OUT/trace.txt") events; sroce_xmit $n; retransmit $(grep -c 'sroce_retransmit:' "$RIG_TEST_OUT/trace.txt"); timeout $(grep -c 'sroce_timeout:' "$RIG_TEST_OUT/trace.txt")"
	grep -E 'sroce_(retransmit|timeout|ack_sent|ack_rcvd):' "$RIG_TEST_OUT/trace.txt" | head -n 8 | sed 's/^ */    /'
	log=$RIG_TEST_OUT/lossy.log
else
	rig_wait tracing 90 >/dev/null || rig_fail "guest a did not start tracing"
	# 4 bytes: shorter than a BTH, dropped as drop_short (reason 1).
	printf 'runt' >"/dev/udp/$RIG_PEER_IP4/4791" || rig_fail "cannot send to $RIG_PEER_IP4:4791"
	rig_signal runt-sent
	# RC SEND FIRST .. SEND ONLY with immediate (BTH opcodes 0x00-0x05).
	loss_init
	loss_band 3 5
	loss_match 3 "RC SEND packets" match u8 0x00 0xf8 at 28
	rig_wait listen-lossy 60 >/dev/null || rig_fail "lossy: the server never listened"
	rig_bg lossy 120 ibv_rc_pingpong "${args[@]}" "$RIG_PEER_IP4"
	rig_bg_wait "$RIG_BG_PID" || {
		sed 's/^/    /' "$RIG_TEST_OUT/lossy.log"
		rig_fail "lossy: ibv_rc_pingpong failed"
	}
	dropped=$(loss_dropped 3)
	loss_restore
	rig_log "lossy: $dropped of this guest's SEND packets dropped"
	[ "$dropped" -gt 0 ] || rig_fail "lossy: no SEND packet dropped: nothing was lost"
	log=$RIG_TEST_OUT/lossy.log
fi
grep -qi 'invalid data' "$log" && rig_fail "lossy: a received buffer is wrong"
grep -q "^$((4096 * 200 * 2)) bytes in " "$log" || rig_fail "lossy: not $((4096 * 200 * 2)) bytes moved"
rig_barrier done-lossy 120 || rig_fail "the peer did not finish the lossy transfer"
rig_log "PASS"
