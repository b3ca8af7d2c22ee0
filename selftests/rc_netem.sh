#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC reliability over an impaired link, in one boot. For each scenario both
# guests put the same netem qdisc on their link (the guests switch together,
# at a barrier), sroce-integrity run moves a few rounds of random traffic
# with every RC opcode (every byte, every READ and every atomic result
# checked), and the qdisc is taken off again. Scenarios: loss 1%, loss 10%,
# reordering (25% of the packets overtake the others, which are delayed),
# duplication 5%, corruption 1% (one flipped bit, which the ICRC must
# catch), delay with jitter, and a link slower than the local ACK timeout
# (200 ms each way against sroce-integrity's 268 ms). Per scenario the test
# records the bytes the requester moved (the tool's summary line), the time
# of the run and, on each sroce guest, the deltas of its counters:
# retransmits, ACK timeouts, sequence NAKs received and sent, duplicates
# and ICRC drops. Guest a prints
# them as a table and records them with rig_metric. Besides the tool's
# verdict, counters that the impairment forces to move must have moved:
# retransmits and ACK timeouts or sequence NAKs under loss 10%, sequence
# NAKs under reordering, duplicates under duplication where sroce is a
# responder (a requester does not count a repeated answer for the last PSN
# it has seen), ICRC drops under corruption; on the slow link ACK timeouts,
# and, where sroce responds, at most six duplicates per timeout, one per
# tail probe (sroce_retry_tlp_fire()) and 16 to spare: after a timeout
# the requester sends one packet and waits for the answer, instead of the
# whole window again, which buried a slow responder in duplicates
# (sroce_retry_rto_fire(); before it: 228 duplicates for 10 timeouts;
# after it: 14 for 6 on 6.1, 23 for 6 on the debug kernel: a timeout that
# ends in go-back-N, as after an ACK of the probe alone, still resends a
# window). Tail probes on the slow link are spurious until the probe time
# has learnt the 400 ms round trip (73 duplicates for 12 timeouts and
# their probes on 6.1).
#
# rdma_rxe on Linux 6.1 as requester stalls after a lost packet: it does not
# retransmit and its work requests never complete. So with an rxe peer only
# the sroce guest issues requests (sroce-integrity --requester), rxe only
# responds (which it does correctly under loss), and rxe-rxe is skipped.
# timeout: 150
# place: stock@1 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# The sroce guest requests, whichever guest it is: rxe-sroce would repeat
# sroce-rxe.
rig_suites sroce-sroce sroce-rxe

# Rounds per requesting side and scenario: enough packets (a few thousand)
# for loss 10% to force retransmissions, few enough for a CI budget.
NETEM_ROUNDS=${NETEM_ROUNDS:-6}
# Messages of up to 16 packets: many packets for little per-round overhead.
NETEM_MAX_SIZE=${NETEM_MAX_SIZE:-65536}
# name|check|netem arguments|more sroce-integrity arguments; check: what
# must move (see netem_check). Under corruption, large READs and WRITEs: the
# flipped bits land in payload (what the ICRC covers) on both sides, in
# READ responses too, which are all an rxe peer sends to sroce in bulk.
NETEM_SCENARIOS=(
	"loss1||loss 1%|"
	"loss10|loss|loss 10%|"
	"reorder|reorder|delay 4ms reorder 25% 50%|"
	"dup|dup|duplicate 5%|"
	"corrupt|corrupt|corrupt 1%|--ops read,write --max-size 262144"
	"jitter||delay 3ms 2ms|"
	"slow|slow|delay 200ms|--rounds 2"
)
# sroce counters recorded, and the table's short names for them.
NETEM_COUNTERS=(retransmits ack_timeouts tail_probes seq_naks_rcvd seq_naks_sent duplicates drop_bad_icrc)
NETEM_HEADS=(retrans timeouts probes nak_rcvd nak_sent dups icrc)

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || [ "$RIG_PEER_DEV_TYPE" = sroce ] ||
	rig_skip "needs sroce on one side: rdma_rxe 6.1 as requester does not retransmit after a loss"
rig_require_cmd tc
integ_init
modprobe sch_netem 2>/dev/null

# Who requests: the sroce guest(s). Guest a is the server, b the client.
type_a=$(integ_type_of a)
type_b=$(integ_type_of b)
requester=$(integ_sroce_requester)
# One seed for every scenario of the boot: the same traffic each time, so the
# rows compare (SROCE_INTEGRITY_SEED replays a run).
seed=${SROCE_INTEGRITY_SEED:-$(((RANDOM << 30) | (RANDOM << 15) | RANDOM))}
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
gso=/sys/module/sroce/parameters/tx_gso

# Rows of the table and totals of the sroce guests, per scenario (guest a).
rows=()
declare -A total

# netem_table: the rows so far (guest a, also when a check failed).
netem_table() {
	local head cells line
	rig_is_a && [ ${#rows[@]} -gt 0 ] || return 0
	printf -v head '%-8s %-28s %9s %7s %-5s' scenario netem bytes time sroce
	printf -v cells ' %8s' "${NETEM_HEADS[@]}"
	rig_log "$head$cells"
	for line in "${rows[@]}"; do rig_log "$line"; done
}
trap 'rig_netem_restore; [ -w "$gso" ] && echo Y >"$gso"; netem_table' EXIT

# netem_read: the sroce counters into NETEM_NOW (zeros on an rxe guest).
netem_read() {
	local c v
	NETEM_NOW=()
	for c in "${NETEM_COUNTERS[@]}"; do
		v=0
		[ "$RIG_DEV_TYPE" = sroce ] && { read -r v <"$hw/$c" || rig_fail "cannot read $hw/$c"; }
		NETEM_NOW+=("$v")
	done
}

# netem_check NAME CHECK: the counters that must have moved (guest a, with
# total[NAME.counter] summed over the sroce guests).
netem_check() {
	local n=$1 sroce_responds=0
	[ "$requester" = both ] && sroce_responds=1
	case "$2" in
	loss)
		[ "${total[$n.retransmits]}" -gt 0 ] ||
			rig_fail "$n: no retransmission under loss 10%"
		[ $((total[$n.ack_timeouts] + total[$n.seq_naks_rcvd])) -gt 0 ] ||
			rig_fail "$n: neither an ACK timeout nor a sequence NAK under loss 10%"
		;;
	reorder)
		# A request that overtakes the one before it is a sequence error
		# at the responder: a NAK that the sroce requester receives.
		[ $((total[$n.seq_naks_rcvd] + total[$n.seq_naks_sent])) -gt 0 ] ||
			rig_fail "$n: no sequence NAK although requests were reordered"
		;;
	dup)
		# Duplicate requests are counted by a sroce responder.
		[ "$sroce_responds" = 0 ] || [ "${total[$n.duplicates]}" -gt 0 ] ||
			rig_fail "$n: no duplicate counted under duplicate 5%"
		;;
	slow)
		[ "${total[$n.ack_timeouts]}" -gt 0 ] ||
			rig_fail "$n: no ACK timeout although every answer came after it"
		# A tail probe is one packet: at most one duplicate each.
		[ "$sroce_responds" = 0 ] ||
			[ "${total[$n.duplicates]}" -le $((6 * total[$n.ack_timeouts] + total[$n.tail_probes] + 16)) ] ||
			rig_fail "$n: ${total[$n.duplicates]} duplicates for ${total[$n.ack_timeouts]} ACK timeouts and ${total[$n.tail_probes]} tail probes: the timeouts resent whole windows"
		;;
	corrupt)
		# Every sroce guest receives READ responses, most of their
		# packets 4 KiB of payload: about ten of them are damaged.
		[ "${total[$n.drop_bad_icrc]}" -gt 0 ] ||
			rig_fail "$n: no ICRC drop under corrupt 1%"
		;;
	esac
}

# netem_scenario INDEX NAME CHECK TOOL_ARGS NETEM...: one scenario (both
# guests); TOOL_ARGS (a list of words) go to sroce-integrity.
netem_scenario() {
	local i=$1 name=$2 check=$3 more=() t0 t1 ms bytes k c before after line cell peer
	read -ra more <<<"$4"
	shift 4
	rig_barrier "pre-$name" 60 || rig_fail "$name: the peer did not come"
	# netem draws corruption, reordering and duplication once per skb,
	# and sroce sends a run of packets as one GSO skb (module parameter
	# tx_gso): for "corrupt 1%" to hit 1% of the packets, and reordering
	# to reorder packets rather than whole bursts (with bursts a short run
	# could see no reordered request at all: sroce-rxe once had no
	# sequence NAK), they go one by one in these scenarios. Loss is left
	# per burst: a lost burst is a burst of losses, as on a real link.
	case $name in
	corrupt | reorder | dup) [ -w "$gso" ] && echo N >"$gso" ;;
	esac
	tc qdisc replace dev "$RIG_IFACE" root netem "$@" ||
		rig_fail "$name: tc qdisc replace dev $RIG_IFACE root netem $* failed"
	netem_read
	before=("${NETEM_NOW[@]}")
	rig_barrier "on-$name" 60 || rig_fail "$name: the peer did not apply netem"
	t0=${EPOCHREALTIME/./}
	integ_run "$name" 60 4 $((18660 + i)) run --requester "$requester" \
		--rounds "$NETEM_ROUNDS" --max-size "$NETEM_MAX_SIZE" --seed "$seed" "${more[@]}"
	t1=${EPOCHREALTIME/./}
	ms=$(((t1 - t0) / 1000))
	netem_read
	after=("${NETEM_NOW[@]}")
	rig_netem_restore
	[ -w "$gso" ] && echo Y >"$gso"
	if [ "$INTEG_RC" != 0 ]; then
		integ_diag
		rig_fail "$name (netem $*): $(integ_why)"
	fi
	[[ "$INTEG_SUMMARY" =~ \ PASS\ .*\ bytes=([0-9]+)\  ]] ||
		rig_fail "$name: no PASS summary line with bytes= ($INTEG_SUMMARY)"
	bytes=${BASH_REMATCH[1]}
	# This guest's share: bytes it requested, time, counter deltas.
	line="$bytes $ms"
	for k in "${!NETEM_COUNTERS[@]}"; do
		line+=" $((after[k] - before[k]))"
	done
	if rig_is_b; then
		rig_signal "stats-$name" "$line"
		rig_wait "tallied-$name" 60 >/dev/null || rig_fail "$name: guest a did not tally"
		return
	fi
	peer=$(rig_wait "stats-$name" 60) || rig_fail "$name: no numbers from guest b"
	local mine=() theirs=() g vals
	read -ra mine <<<"$line"
	read -ra theirs <<<"$peer"
	total[$name.bytes]=$((mine[0] + theirs[0]))
	total[$name.ms]=${mine[1]}
	for k in "${!NETEM_COUNTERS[@]}"; do
		total[$name.${NETEM_COUNTERS[k]}]=0
	done
	for g in a b; do
		[ "$(integ_type_of "$g")" = sroce ] || continue
		if [ "$g" = a ]; then vals=("${mine[@]}"); else vals=("${theirs[@]}"); fi
		printf -v line '%-8s %-28s %9s %5d.%ds %-5s' "$name" "$*" "${total[$name.bytes]}" \
			$((total[$name.ms] / 1000)) $((total[$name.ms] % 1000 / 100)) "$g"
		for k in "${!NETEM_COUNTERS[@]}"; do
			c=${NETEM_COUNTERS[k]}
			total[$name.$c]=$((total[$name.$c] + vals[k + 2]))
			printf -v cell ' %8s' "${vals[k + 2]}"
			line+=$cell
			rig_metric "netem_${name}_${c}_$g" "${vals[k + 2]}" count
		done
		rows+=("$line")
	done
	rig_metric "netem_${name}_bytes" "${total[$name.bytes]}" bytes
	rig_metric "netem_${name}_time" "${total[$name.ms]}" ms
	rig_signal "tallied-$name"
	netem_check "$name" "$check"
}

rig_log "requester: $requester ($type_a server, $type_b client), $NETEM_ROUNDS rounds" \
	"per requesting side and scenario, seed $seed"
for i in "${!NETEM_SCENARIOS[@]}"; do
	IFS='|' read -r name check args more <<<"${NETEM_SCENARIOS[i]}"
	# shellcheck disable=SC2086 # args is a list of netem words
	netem_scenario "$i" "$name" "$check" "$more" $args
done
