#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce's debugfs (/sys/kernel/debug/sroce/DEV/) and its fault knobs, on
# guest a of the sroce-sroce pair (b is the peer of each transfer).
#   qps: while ibv_rc_pingpong -c runs (a serves, 5000 x 4096 B;
#     SROCE_LONG_ITERS, 2000 on the debug kernel; 20000 took 108 s of
#     its 120 s limit on stock 6.1, with the reader loop below beside it
#     on a's one CPU, and ran over on 6.12 with a guest beside it),
#     the server QP's block of the listing names its type, state RTS, the
#     peer's QP number, path MTU and PSNs; the listing is
#     read in a loop while the QP is destroyed (a reader must not see a
#     freed QP: the debug kernel's KASAN would), and the QP's block is
#     gone afterwards.
#   fault/tx_drop 20, rx_dup 7, rx_drop 13 on a in turn, each under a
#     sroce-integrity run (path MTU 1024, every RC opcode, both guests
#     requesting in turn, every byte and status checked): every run
#     passes; faults_injected grows by at least half the packets the
#     knob saw / EVERY (it picks one in EVERY at random: some 3 standard
#     deviations below the mean here), and the recovery shows where it
#     should: retransmits (tx_drop), duplicates (rx_dup), seq_naks_sent
#     (rx_drop).
#     Then alloc_fail 10 on a under the same kind of run: one packet
#     buffer of a in 10 is refused (requests, ACKs, READ responses),
#     faults_injected grows by at least a's packets sent / 20, and the
#     run passes. Without the requester's retry
#     timer (sroce_retry_nomem()) a QP whose first packet of a message found
#     no buffer had nothing in flight and waited for ever.
#     Then ack_delay_ms 20 on a under the same run: a's RC ACKs that
#     would leave alone wait up to 20 ms; faults_injected grows by at
#     least 10, acks_delayed at least as much, ack_delays_expired grows,
#     and the run passes.
#     (sroce-integrity, not ibv_rc_pingpong: a pingpong side exits as
#     soon as its own work completed, so when the last ACK to its peer is
#     lost (dropped, or its buffer refused), the peer's retransmission
#     finds no QP and fails with "transport retry counter exceeded". CI
#     saw that once with rx_drop 13 on the debug kernel; rx_drop 2, when
#     the knobs picked every Nth packet, on a fresh device and a
#     one-message pingpong showed it every time.)
# timeout: 800
# place: debug@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
rig_suites sroce-sroce

rig_require_peer
# Messages of the transfer that must outlast reading its QP's file.
LONG=${SROCE_LONG_ITERS:-5000}
[ "$RIG_DEV_TYPE" = sroce ] || rig_skip "runs where both guests are sroce"
rig_require_cmd ibv_rc_pingpong rdma
[ -x "$INTEG_BIN" ] || rig_skip "no $INTEG_BIN (cmake --build build)"
rig_setup_dev
dbg=/sys/kernel/debug/sroce/$RIG_DEV
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
cnt() { cat "$hw/$1"; }
if rig_is_a; then
	[ -d /sys/kernel/debug/sroce ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for f in qps fault/rx_drop fault/rx_dup fault/tx_drop fault/alloc_fail fault/ack_delay_ms; do
		[ -e "$dbg/$f" ] || rig_fail "no $dbg/$f"
	done
fi
knobs_off() {
	local k
	for k in rx_drop rx_dup tx_drop alloc_fail ack_delay_ms; do
		[ -e "$dbg/fault/$k" ] && echo 0 >"$dbg/fault/$k"
	done
	return 0
}
cleanup() {
	local rc=$?
	rig_is_a && knobs_off
	exit "$rc"
}
trap cleanup EXIT

# --- the QP's block of the listing ---------------------------------------
pp_bg_start qpfile 4096 "$LONG"
if rig_is_a; then
	line=""
	# 20 s, scaled for a slow kernel (60 s on the debug kernel): beside
	# other guests on a host that lost CPU to its hypervisor, the debug
	# kernel's pingpong was not in RTS after 20 s.
	end=$((EPOCHSECONDS + $(rig_limit 20)))
	until [ -n "$line" ]; do
		line=$(rdma resource show qp link "$RIG_DEV/1" | grep 'comm ibv_rc_pingpong' | grep 'state RTS')
		[ "$EPOCHSECONDS" -lt "$end" ] || rig_fail "qpfile: no RTS QP of ibv_rc_pingpong"
		[ -n "$line" ] || rig_sleep 0.1
	done
	qpn=$(sed -n 's/.* lqpn \([0-9]*\) .*/\1/p' <<<"$line")
	rqpn=$(sed -n 's/.* rqpn \([0-9]*\) .*/\1/p' <<<"$line")
	f=$dbg/qps
	snap=$(rig_sroce_qp_dbg "$RIG_DEV" "$qpn")
	[ -n "$snap" ] || {
		sed 's/^/    /' "$f"
		rig_fail "qpfile: no block for QP $qpn in $f"
	}
	sed 's/^/    /' <<<"$snap"
	for want in "type RC" "state RTS" "dest_qpn $rqpn" "path_mtu 1024"; do
		grep -qx "$want" <<<"$snap" || rig_fail "qpfile: no \"$want\" in QP $qpn's block of $f"
	done
	grep -qE '^comp_psn [0-9]+$' <<<"$snap" || rig_fail "qpfile: no comp_psn in QP $qpn's block"
	# Read the listing without pause until the QP has left it.
	(while [ -n "$(rig_sroce_qp_dbg "$RIG_DEV" "$qpn")" ]; do :; done) &
	reader=$!
fi
pp_bg_wait qpfile 4096 "$LONG"
if rig_is_a; then
	end=$((EPOCHSECONDS + 10))
	while [ -n "$(rig_sroce_qp_dbg "$RIG_DEV" "$qpn")" ]; do
		[ "$EPOCHSECONDS" -lt "$end" ] || rig_fail "qpfile: QP $qpn still in $f after it was destroyed"
		rig_sleep 0.1
	done
	wait "$reader"
	rig_log "qpfile: the listing read while QP $qpn ran and while it was destroyed; its block gone after"
fi

# --- the fault knobs -------------------------------------------------------
# fault KNOB EVERY COUNTER PACKETS PORT: a sroce-integrity run with KNOB set
# on a; COUNTER must grow, and faults_injected by at least half the packets
# the knob saw / EVERY (one in EVERY, at random). PACKETS says which
# packets it sees: rx_drop's never reach rx_packets, rx_dup's are counted
# twice there, tx_drop's never reach tx_packets.
fault() {
	local knob=$1 every=$2 counter=$3 packets=$4 port=$5 f0 c0 p0 df dc dp seen
	if rig_is_a; then
		f0=$(cnt faults_injected) c0=$(cnt "$counter") p0=$(cnt "$packets")
		echo "$every" >"$dbg/fault/$knob" || rig_fail "cannot set $knob"
	fi
	integ_pair "$knob" 120 4 "$port" run --mtu 1024 --rounds 24
	rig_is_a || return 0
	echo 0 >"$dbg/fault/$knob"
	df=$(($(cnt faults_injected) - f0)) dc=$(($(cnt "$counter") - c0))
	dp=$(($(cnt "$packets") - p0))
	case $knob in
	rx_dup) seen=$((dp - df)) ;;
	*) seen=$((dp + df)) ;;
	esac
	rig_log "$knob $every: faults_injected +$df of $seen packets, $counter +$dc, every byte checked"
	[ "$seen" -ge 200 ] || rig_fail "$knob: only $seen packets"
	[ "$df" -ge $((seen / every / 2)) ] ||
		rig_fail "$knob: faults_injected +$df, want >= $seen / $every / 2"
	[ "$dc" -gt 0 ] || rig_fail "$knob: $counter did not grow"
}
fault tx_drop 20 retransmits tx_packets 18890
fault rx_dup 7 duplicates rx_packets 18891
fault rx_drop 13 seq_naks_sent rx_packets 18892
# One packet buffer in 10 refused: a requester whose first packet of a
# message finds no buffer has nothing in flight, so no ACK timer to come
# back on; at path MTU 1024 most messages are one packet or a few.
if rig_is_a; then
	f0=$(cnt faults_injected) p0=$(cnt tx_packets)
	echo 10 >"$dbg/fault/alloc_fail" || rig_fail "cannot set alloc_fail"
fi
integ_pair alloc_fail 120 4 18893 run --mtu 1024 --rounds 24
if rig_is_a; then
	echo 0 >"$dbg/fault/alloc_fail"
	df=$(($(cnt faults_injected) - f0)) dp=$(($(cnt tx_packets) - p0))
	rig_log "alloc_fail 10: faults_injected +$df, $dp packets sent"
	[ "$df" -ge $((dp / 20)) ] ||
		rig_fail "alloc_fail: faults_injected +$df, want >= $dp / 20"
	[ "$dp" -ge 100 ] || rig_fail "alloc_fail: only $dp packets sent"
fi

# ACKs held: ack_delay_ms 20 on a, same run: every RC ACK of a that would
# leave alone waits up to 20 ms (until a request of a takes it along, the
# next request asking for an ACK releases it, or b's tail probe asks).
if rig_is_a; then
	f0=$(cnt faults_injected) h0=$(cnt acks_delayed) e0=$(cnt ack_delays_expired)
	echo 20 >"$dbg/fault/ack_delay_ms" || rig_fail "cannot set ack_delay_ms"
fi
integ_pair ack_delay 120 4 18894 run --mtu 1024 --rounds 16
if rig_is_a; then
	echo 0 >"$dbg/fault/ack_delay_ms"
	df=$(($(cnt faults_injected) - f0)) dh=$(($(cnt acks_delayed) - h0))
	de=$(($(cnt ack_delays_expired) - e0))
	rig_log "ack_delay_ms 20: faults_injected +$df, acks_delayed +$dh, ack_delays_expired +$de"
	[ "$df" -ge 10 ] || rig_fail "ack_delay_ms: faults_injected +$df, want >= 10"
	[ "$dh" -ge "$df" ] || rig_fail "ack_delay_ms: acks_delayed +$dh, fewer than the knob held ($df)"
	[ "$de" -gt 0 ] || rig_fail "ack_delay_ms: no held ACK ended by its time or a probe"
fi
rig_log "PASS"
