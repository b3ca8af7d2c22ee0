#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RNR (receiver not ready) with sroce as the sender: sroce-integrity errors,
# one run per case, each on fresh QPs over the RoCEv2 GID of the IPv4
# address:
#   rnr_zero    SEND, no receive, rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR after
#               one RNR NAK; the requester's QP in ERR, the SEND behind it
#               and a SEND and a receive posted afterwards flushed
#               (IBV_WC_WR_FLUSH_ERR); the responder's QP still in RTS;
#   rnr_limit   the same with rnr_retry 3 and an RNR timer of 40.96 ms: four
#               RNR NAKs, the error no sooner than 3 x 40.96 ms;
#   rnr_late    SEND with the receive posted 1 s late, rnr_retry 7: the
#               sender waits (one RNR NAK per timer period of 10.24 ms) and
#               succeeds, the data intact;
#   rnr_stream  SENDs of one and three packets, an RDMA WRITE and a WRITE
#               with immediate in one chain while the receives come late,
#               one by one: every WR succeeds, in order, every byte checked.
#               (rdma_rxe as receiver also answers the packets behind an
#               RNR NAKed one with a sequence NAK for the same PSN, in every
#               RNR round: the sender must not spend its retry_cnt on them.)
# Each sroce guest checks its own counters: RNR NAKs received as the sender
# (exactly 1 and 4 where the count is fixed) and sent as the receiver.
# Only sroce sends: with an rxe peer, rxe is the receiver (rc_errors.sh runs
# rnr_zero and rnr_late in every direction); rxe-rxe is skipped.
# timeout: 300
# place: debug@1 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# The sroce guest sends, whichever guest it is: rxe-sroce would repeat
# sroce-rxe.
rig_suites sroce-sroce sroce-rxe

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || [ "$RIG_PEER_DEV_TYPE" = sroce ] ||
	rig_skip "tests sroce as the sender; rxe-rxe RNR cases are in rc_errors.sh"
integ_init

# Who sends: the sroce guest(s). Guest a is the server, b the client.
requester=$(integ_sroce_requester)
sends=0
receives=0
case "$requester-$RIG_ROLE" in
both-*) sends=1 receives=1 ;;
server-a | client-b) sends=1 ;;
*) receives=1 ;;
esac
[ "$RIG_DEV_TYPE" = sroce ] || receives=0
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters

# rnr_counters: RNR NAKs received and sent so far, into RNR_NOW.
rnr_counters() {
	local r=0 s=0
	if [ "$RIG_DEV_TYPE" = sroce ]; then
		read -r r <"$hw/rnr_naks_rcvd" || rig_fail "cannot read $hw/rnr_naks_rcvd"
		read -r s <"$hw/rnr_naks_sent" || rig_fail "cannot read $hw/rnr_naks_sent"
	fi
	RNR_NOW=("$r" "$s")
}

# rnr_expect WHAT COUNT MIN MAX: COUNT must lie in [MIN, MAX].
rnr_expect() {
	if [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
		rig_fail "$1: $2, want $3..$4"
	fi
}

# rnr_case INDEX CASE MIN MAX: one case, sroce sending; the RNR NAKs this
# guest received as sender and sent as receiver must number MIN..MAX.
rnr_case() {
	local i=$1 c=$2 min=$3 max=$4 before rcvd sent ms
	rnr_counters
	before=("${RNR_NOW[@]}")
	integ_pair "$c" 60 4 $((18640 + i)) errors --timeout 5 --cases "$c" \
		--requester "$requester"
	rnr_counters
	rcvd=$((RNR_NOW[0] - before[0]))
	sent=$((RNR_NOW[1] - before[1]))
	[[ "$INTEG_SUMMARY" =~ \ PASS\ .*\ cases=([0-9]+)\ failed=0\ skipped=0 ]] ||
		rig_fail "$c: no PASS summary line ($INTEG_SUMMARY)"
	rig_log "$c: RNR NAKs received $rcvd, sent $sent"
	if [ "$sends" = 1 ]; then
		rnr_expect "$c: RNR NAKs received by the sender" "$rcvd" "$min" "$max"
		rig_metric "rnr_${c}_naks_rcvd" "$rcvd" count
	fi
	if [ "$receives" = 1 ]; then
		rnr_expect "$c: RNR NAKs sent by the receiver" "$sent" "$min" "$max"
	fi
	if [ "$c" = rnr_limit ] && [ "$sends" = 1 ]; then
		[[ "$(<"$INTEG_LOG")" =~ RNR\ retries\ exhausted\ after\ ([0-9]+)\ ms ]] ||
			rig_fail "$c: the sender did not report when its retries ran out"
		ms=${BASH_REMATCH[1]}
		rig_metric rnr_limit_error_after "$ms" ms
		rig_metric rnr_limit_error_least 122.88 ms
	fi
}

# rnr_zero: the first RNR NAK ends it. rnr_limit: the first and 3 retries.
# rnr_late: 1 s of RNR timer periods of 10.24 ms (at most one NAK per
# period, with 10% for a coarse kernel timer); at least 10, or the sender
# waited far longer than it was asked to. rnr_stream: three late receives
# (at least one NAK each), 800 ms of 5.12 ms periods.
rnr_case 0 rnr_zero 1 1
rnr_case 1 rnr_limit 4 4
rnr_case 2 rnr_late 10 110
rnr_case 3 rnr_stream 3 180
