#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A lost sequence NAK is recovered in about a round trip, not by the local
# ACK timeout. Both guests drop 1% of the RoCEv2 packets in the middle of
# a SEND (SEND MIDDLE: each such loss leaves a gap the responder NAKs) and
# half of their PSN sequence error NAKs (opcode ACKNOWLEDGE, AETH syndrome
# 0x60), and nothing else (lib/lossfilter.sh), while ibv_rc_pingpong -c
# moves 300 messages of 128 KiB each way (byte counts and -c's first byte
# per page: lib/pingpong.sh; what is under test is recovery, not data).
# A responder NAKs a gap once and drops what comes behind it; when that
# NAK is lost, the requester's tail probe resends its last packet, which
# the responder already dropped once: sroce NAKs again then
# (sroce_resp_seq_nak_due()). Before, every lost NAK cost an ACK timeout
# (67 ms at ibv_rc_pingpong's timeout 14).
# The test fails when the ACK timeouts of both guests together exceed half
# the NAKs the filters dropped, or when fewer than 5 NAKs were dropped (it
# would test nothing). Measured on 6.1: without the repeat 684 timeouts
# for 361 NAKs dropped (each lost NAK cost one, and the resent messages
# more), 182 ms a round trip; with it 152 for 653 (those left are the
# gaps whose NAK and both repeats were lost: a requester probes twice),
# 84 ms a round trip. On a slowed kernel (the debug one)
# messages of 16 KiB (two SEND MIDDLE packets) with 8% of them dropped.
# timeout: 300
# place: stock@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# shellcheck source=lib/lossfilter.sh
. "$(dirname "$0")/lib/lossfilter.sh"
# Both sides request and respond; rdma_rxe NAKs a gap once.
rig_suites sroce-sroce

if [ "${RIG_TIMEOUT_SCALE:-100}" -gt 100 ]; then
	NAK_SIZE=${NAK_SIZE:-16384}
	NAK_GAP_PCT=${NAK_GAP_PCT:-8}
else
	NAK_SIZE=${NAK_SIZE:-131072}
	NAK_GAP_PCT=${NAK_GAP_PCT:-1}
fi
NAK_ITERS=${NAK_ITERS:-300}

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || rig_skip "counts sroce's ACK timeouts and NAKs"
rig_require_cmd ibv_rc_pingpong
rig_setup_dev
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
trap loss_restore EXIT

# nak_counts: "ack_timeouts seq_naks_sent gaps_made naks_dropped" here.
nak_counts() {
	local t n
	read -r t <"$hw/ack_timeouts" || rig_fail "cannot read ack_timeouts"
	read -r n <"$hw/seq_naks_sent" || rig_fail "cannot read seq_naks_sent"
	echo "$t $n $(loss_dropped 3) $(loss_dropped 4)"
}

loss_init
# Band 3: SEND MIDDLE (BTH opcode 0x01, IBA 9.2.1).
loss_band 3 "$NAK_GAP_PCT"
loss_match 3 "SEND MIDDLE" match u8 0x01 0xff at 28
# Band 4: ACKNOWLEDGE (0x11) whose AETH (after the 12-byte BTH) says NAK
# PSN sequence error (syndrome 011 00000, IBA 9.7.5.2.1).
loss_band 4 50
loss_match 4 "sequence NAK" match u8 0x11 0xff at 28 match u8 0x60 0xff at 40
loss_exchange 18519 "$NAK_SIZE" "$NAK_ITERS" nak_counts \
	"timeouts, NAKs sent, gaps made, NAKs dropped"
read -r ta sa ga da <<<"$LOSS_MINE"
read -r tb sb gb db <<<"$LOSS_PEER"
ms=$LOSS_MS
timeouts=$((ta + tb))
dropped=$((da + db))
rig_metric nak_loss_timeouts "$timeouts" count
rig_metric nak_loss_naks_dropped "$dropped" count
rig_metric nak_loss_rtt_us $((ms * 1000 / NAK_ITERS)) us
[ $((ga + gb)) -gt 0 ] || rig_fail "the filter made no gap: nothing was tested"
[ "$dropped" -ge 5 ] ||
	rig_fail "only $dropped NAKs dropped ($((sa + sb)) sent, $((ga + gb)) gaps): too few to test"
[ $((timeouts * 2)) -le "$dropped" ] ||
	rig_fail "$timeouts ACK timeouts for $dropped NAKs dropped (at most half as many)"
rig_log "PASS: $timeouts ACK timeouts for $dropped NAKs dropped ($((sa + sb)) sent, $((ga + gb)) gaps)"
