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
# the tail probe (sroce_comp_tlp_fire()), each one cost a whole local ACK
# timeout (ibv_rc_pingpong asks for 14: 67 ms), 128 KiB round trips went
# from 2 ms to 67 ms, and ib_send_lat's p99 followed (issue 22).
#
# ibv_rc_pingpong -c moves 300 messages of 128 KiB each way (buffers
# checked, exactly the bytes expected: lib/pingpong.sh); each guest counts
# its ACK timeouts and tail probes (hw_counters) and the tail packets its
# filter dropped (about 60 in all). Measured on 6.1: without probes 142
# ACK timeouts (49 ms a round trip), with up to two probes per stall 0
# and 2 in two runs (64 and 88 probes, 17 and 22 ms a round trip). The
# test fails above 20 timeouts, and when no probe was sent or the filter
# dropped nothing (it would then test nothing). The round-trip time is
# reported, not asserted.
# timeout: 240
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
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
# BTH opcodes of RC SEND LAST and SEND ONLY (IBA 9.2.1).
TAIL_OPCODES=(0x02 0x04)

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || rig_skip "counts sroce's ACK timeouts and tail probes"
rig_require_cmd ibv_rc_pingpong tc
rig_setup_dev
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
gso=/sys/module/sroce/parameters/tx_gso

tail_restore() {
	tc qdisc del dev "$RIG_IFACE" root 2>/dev/null
	[ -w "$gso" ] && echo Y >"$gso"
	return 0
}
trap tail_restore EXIT

# tail_filter: the qdisc that drops 10% of the tail packets (band 3 of 1:).
tail_filter() {
	local op
	modprobe -a sch_prio sch_netem cls_u32 2>/dev/null
	tc qdisc replace dev "$RIG_IFACE" root handle 1: prio bands 3 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 || rig_fail "tc prio qdisc"
	tc qdisc add dev "$RIG_IFACE" parent 1:3 handle 30: netem loss 10% ||
		rig_fail "tc netem qdisc under 1:3"
	# IPv4 without options: UDP at 20, BTH opcode at 28.
	for op in "${TAIL_OPCODES[@]}"; do
		tc filter add dev "$RIG_IFACE" parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u8 "$op" 0xff at 28 flowid 1:3 ||
			rig_fail "tc u32 filter for opcode $op"
	done
}

# tail_counts: "ack_timeouts tail_probes netem_drops" of this guest.
tail_counts() {
	local t p d
	read -r t <"$hw/ack_timeouts" || rig_fail "cannot read ack_timeouts"
	p=0
	[ -e "$hw/tail_probes" ] && { read -r p <"$hw/tail_probes" || rig_fail "cannot read tail_probes"; }
	d=$(tc -s qdisc show dev "$RIG_IFACE" | awk '/^qdisc netem 30:/ { n = 1 }
		n && /dropped/ { sub(",", "", $7); print $7; exit }')
	echo "$t $p ${d:-0}"
}

[ -w "$gso" ] && echo N >"$gso"
tail_filter
read -r t0 p0 _ <<<"$(tail_counts)"
rig_barrier filtered 60 || rig_fail "the peer did not set up its filter"
start=${EPOCHREALTIME/./}
pingpong_steps ibv_rc_pingpong 18517 4:"$TAIL_SIZE":"$TAIL_ITERS"
ms=$(((${EPOCHREALTIME/./} - start) / 1000))
read -r t1 p1 drops <<<"$(tail_counts)"
mine="$((t1 - t0)) $((p1 - p0)) $drops"
rig_log "timeouts, tail probes, tail packets dropped: $mine; $ms ms for $TAIL_ITERS round trips"
if rig_is_b; then
	rig_signal counts "$mine"
	rig_barrier tallied 60 || rig_fail "guest a did not tally"
	exit 0
fi
peer=$(rig_wait counts 60) || rig_fail "no counts from guest b"
read -r ta pa da <<<"$mine"
read -r tb pb db <<<"$peer"
timeouts=$((ta + tb))
probes=$((pa + pb))
rig_barrier tallied 60
rig_metric tail_loss_timeouts "$timeouts" count
rig_metric tail_loss_probes "$probes" count
rig_metric tail_loss_rtt_us $((ms * 1000 / TAIL_ITERS)) us
[ $((da + db)) -gt 0 ] || rig_fail "the filter dropped no packet: nothing was tested"
[ "$timeouts" -le "$TAIL_MAX_TIMEOUTS" ] ||
	rig_fail "$timeouts ACK timeouts for $((da + db)) tail packets dropped (at most $TAIL_MAX_TIMEOUTS)"
[ -e "$hw/tail_probes" ] || rig_fail "no tail_probes counter in $hw"
[ "$probes" -gt 0 ] || rig_fail "$((da + db)) tail packets dropped and not one tail probe sent"
rig_log "PASS: $timeouts ACK timeouts, $probes tail probes, $((da + db)) tail packets dropped"
