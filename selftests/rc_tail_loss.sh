#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Loss at the tail of a message is recovered in about a round trip, not by
# the local ACK timeout. Both guests drop 10% of the RoCEv2 packets that
# end a SEND (SEND LAST, SEND ONLY), and nothing else (a prio qdisc whose
# third band is netem "loss 10%", fed by u32 filters on the BTH opcode;
# sroce's GSO is off, so that the qdisc sees each packet). Not ACKs: a
# lost ACK of a guest's last SEND would strand it, as the peer may have
# everything it waits for and destroy its QP before any resend arrives
# (seen once: IBV_WC_RETRY_EXC_ERR at the end of a run). A lost tail
# cannot: the peer waits for that message.
# Such a loss leaves nothing behind it to show the responder a gap: before
# the tail probe (sroce_retry_tlp_fire()), each one cost a whole local ACK
# timeout (ibv_rc_pingpong asks for 14: 67 ms), 128 KiB round trips went
# from 2 ms to 67 ms, and ib_send_lat's p99 followed (issue 22).
#
# ibv_rc_pingpong -c moves 300 messages of 128 KiB each way (exit status,
# exactly the bytes expected, no "invalid data" from -c, which looks at one
# byte a page: lib/pingpong.sh; the data is rc_integrity's); each guest counts
# its ACK timeouts and tail probes (hw_counters) and the tail packets its
# filter dropped (about 60 in all). Measured on 6.1: without probes 142
# ACK timeouts (49 ms a round trip), with up to two probes per stall 0
# and 2 in two runs (64 and 88 probes, 17 and 22 ms a round trip). The
# test fails above 20 timeouts, and when no probe was sent or the filter
# dropped nothing (it would then test nothing). The round-trip time is
# reported, not asserted.
# timeout: 240
# place: smp2@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# shellcheck source=lib/lossfilter.sh
. "$(dirname "$0")/lib/lossfilter.sh"
# Both sides request; rdma_rxe on 6.1 does not recover a lost packet.
rig_suites sroce-sroce

# On a slowed kernel (the debug one: RIG_TIMEOUT_SCALE above 100) a
# 128 KiB message takes about as long as the 67 ms ACK timeout itself
# (190 ms a round trip with KASAN), which leaves a probe no time to come
# first: 8 KiB (two packets) there.
if [ "${RIG_TIMEOUT_SCALE:-100}" -gt 100 ]; then
	TAIL_SIZE=${TAIL_SIZE:-8192}
else
	TAIL_SIZE=${TAIL_SIZE:-131072}
fi
TAIL_ITERS=${TAIL_ITERS:-300}
TAIL_MAX_TIMEOUTS=${TAIL_MAX_TIMEOUTS:-20}
# Every packet of both guests delayed this long (rc_tail_loss_slow.sh).
TAIL_DELAY_MS=${TAIL_DELAY_MS:-0}
# BTH opcodes of RC SEND LAST and SEND ONLY (IBA 9.2.1).
TAIL_OPCODES=(0x02 0x04)

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || rig_skip "counts sroce's ACK timeouts and tail probes"
rig_require_cmd ibv_rc_pingpong
rig_setup_dev
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
trap loss_restore EXIT

# tail_counts: "ack_timeouts tail_probes netem_drops" of this guest.
tail_counts() {
	local t p
	read -r t <"$hw/ack_timeouts" || rig_fail "cannot read ack_timeouts"
	p=0
	[ -e "$hw/tail_probes" ] && { read -r p <"$hw/tail_probes" || rig_fail "cannot read tail_probes"; }
	echo "$t $p $(loss_dropped 3)"
}

# The tail packets: 10% of them dropped (band 3).
loss_init
loss_band 3 10 "$TAIL_DELAY_MS"
[ "$TAIL_DELAY_MS" = 0 ] || loss_delay "$TAIL_DELAY_MS"
for op in "${TAIL_OPCODES[@]}"; do
	loss_match 3 "opcode $op" match u8 "$op" 0xff at 28
done
loss_exchange 18517 "$TAIL_SIZE" "$TAIL_ITERS" tail_counts \
	"timeouts, tail probes, tail packets dropped"
read -r ta pa da <<<"$LOSS_MINE"
read -r tb pb db <<<"$LOSS_PEER"
timeouts=$((ta + tb))
probes=$((pa + pb))
ms=$LOSS_MS
rig_metric tail_loss_timeouts "$timeouts" count
rig_metric tail_loss_probes "$probes" count
rig_metric tail_loss_rtt_us $((ms * 1000 / TAIL_ITERS)) us
[ $((da + db)) -gt 0 ] || rig_fail "the filter dropped no packet: nothing was tested"
[ "$timeouts" -le "$TAIL_MAX_TIMEOUTS" ] ||
	rig_fail "$timeouts ACK timeouts for $((da + db)) tail packets dropped (at most $TAIL_MAX_TIMEOUTS)"
[ -e "$hw/tail_probes" ] || rig_fail "no tail_probes counter in $hw"
[ "$probes" -gt 0 ] || rig_fail "$((da + db)) tail packets dropped and not one tail probe sent"
rig_log "PASS: $timeouts ACK timeouts, $probes tail probes, $((da + db)) tail packets dropped"
