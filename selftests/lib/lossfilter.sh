#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Loss of chosen RoCEv2 packets on this guest's link interface, for the
# loss recovery tests (rc_tail_loss.sh, rc_nak_loss.sh): a prio qdisc at
# the root with four bands, everything in band 2 by default; a band with a
# netem "loss N%" under it; u32 filters that send the packets they match
# (IPv4 without options, UDP to port 4791, plus the caller's matches on
# the BTH and what follows it: the BTH starts at byte 28) to that band.
# sroce's GSO is turned off, so that the qdisc sees each packet.
# Needs the caller to have run rig_setup_dev (RIG_DEV, RIG_IFACE).

LOSS_GSO=/sys/module/sroce/parameters/tx_gso

# loss_restore: the interface as it was (the callers' EXIT trap).
loss_restore() {
	tc qdisc del dev "$RIG_IFACE" root 2>/dev/null
	[ -w "$LOSS_GSO" ] && echo Y >"$LOSS_GSO"
	return 0
}

# loss_init: GSO off, the prio qdisc in place.
loss_init() {
	rig_require_cmd tc
	modprobe -a sch_prio sch_netem cls_u32 2>/dev/null
	[ -w "$LOSS_GSO" ] && echo N >"$LOSS_GSO"
	# A fresh qdisc: replacing a prio left by a test that was killed
	# (no EXIT trap ran) kept its netem children, and adding one failed.
	tc qdisc del dev "$RIG_IFACE" root 2>/dev/null
	tc qdisc replace dev "$RIG_IFACE" root handle 1: prio bands 4 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 || rig_fail "tc prio qdisc"
}

# loss_band BAND PERCENT [DELAY_MS]: netem dropping PERCENT% under band BAND
# (3 or 4), and delaying the rest DELAY_MS.
loss_band() {
	local delay=()
	[ "${3:-0}" = 0 ] || delay=(delay "${3}ms")
	tc qdisc add dev "$RIG_IFACE" parent "1:$1" handle "${1}0:" netem loss "$2%" "${delay[@]}" ||
		rig_fail "tc netem qdisc under 1:$1"
}
# loss_delay MS: every packet of the default band (band 2: all that no
# filter sends to another band) delayed MS milliseconds.
loss_delay() {
	tc qdisc add dev "$RIG_IFACE" parent 1:2 handle 20: netem delay "${1}ms" ||
		rig_fail "tc netem delay under 1:2"
}

# loss_match BAND WHAT MATCH...: RoCEv2 packets that also match the u32
# MATCHes go to band BAND; WHAT names them in a failure.
loss_match() {
	local band=$1 what=$2
	shift 2
	tc filter add dev "$RIG_IFACE" parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff "$@" flowid "1:$band" ||
		rig_fail "tc u32 filter for $what"
}

# loss_dropped BAND: how many packets the netem of band BAND dropped.
loss_dropped() {
	tc -s qdisc show dev "$RIG_IFACE" | awk -v h="${1}0:" '$1 == "qdisc" { n = ($3 == h) }
		n && /dropped/ { sub(",", "", $7); print $7; exit }' | grep . || echo 0
}

# loss_exchange PORT SIZE ITERS COUNTS LABEL: with both guests' filters in
# place, ibv_rc_pingpong -c moves ITERS messages of SIZE bytes each way
# (lib/pingpong.sh checks the buffers). COUNTS is a function that prints
# this guest's counters; after it: LOSS_MS the time the exchange took,
# LOSS_MINE the counters' growth over it (logged under LABEL, words the
# counters' names), and on guest a LOSS_PEER guest b's. Guest b ends here.
loss_exchange() {
	local port=$1 size=$2 iters=$3 counts=$4 label=$5 start i
	local -a before after
	read -ra before <<<"$("$counts")"
	rig_barrier filtered 60 || rig_fail "the peer did not set up its filter"
	start=${EPOCHREALTIME/./}
	# 300 round trips with 1% loss took 42 s on a quiet host and passed
	# 60 s beside other guests: the limit is for a hang, not for speed.
	PP_LIMIT=150 pingpong_steps ibv_rc_pingpong "$port" 4:"$size":"$iters"
	LOSS_MS=$(((${EPOCHREALTIME/./} - start) / 1000))
	read -ra after <<<"$("$counts")"
	LOSS_MINE=""
	for i in "${!after[@]}"; do
		LOSS_MINE+="$((after[i] - ${before[i]:-0})) "
	done
	rig_log "$label: $LOSS_MINE; $LOSS_MS ms for $iters round trips"
	if rig_is_b; then
		rig_signal counts "$LOSS_MINE"
		rig_barrier tallied 60 || rig_fail "guest a did not tally"
		exit 0
	fi
	# shellcheck disable=SC2034 # read by the tests
	LOSS_PEER=$(rig_wait counts 60) || rig_fail "no counts from guest b"
	rig_barrier tallied 60
}
