#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The delayed ACK (kernel/sroce_ack.c): on request/response traffic an
# sroce responder holds the ACK of a request until its own reply goes
# out, and sends it in the same burst; on other patterns it must not.
# sroce-integrity exchange (tools/integrity/exchange.cpp), each case on a
# fresh RC QP pair, 200 SENDs of 1 B to a path MTU + 123 B each way, every
# completion and every byte checked:
#   pingpong: the client SENDs, the server answers each, and the client
#     destroys its QP right after the last reply (as ibv_rc_pingpong
#     does); an sroce side holds at least 50 ACKs for the reply, and at
#     most 2 + 1 in 20 of the held ones are not taken along by one (the
#     last message; a reply later than the hold on a slow guest);
#   symmetric: both SEND, each waits for its own SEND to complete before
#     it sends again: a side that held its ACK for its own next SEND would
#     wait on the other; at most 16 held ACKs not taken along;
#   turn: pingpong, then symmetric with both sides posting at once (a
#     barrier before each SEND): at least 25 held, the same bound;
#   one_way: the client SENDs back to back; the server holds no ACK.
# A case whose data passed but whose counters missed runs again on a fresh
# pair, three times at most (a slow guest's late replies end ping-pong
# mode); the tries are counted and shown.
# sroce-sroce, then: the same with the delayed ACK switched off (module
# parameter ack_delay=0 on both guests) must fail, and only on the
# counters of pingpong and turn, on all three tries: the check and its
# tries find a delayed ACK that does not work.
# sroce-rxe: the same against rdma_rxe, which ACKs at once.
# timeout: 120
# place: stock@2 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
rig_suites sroce-sroce sroce-rxe

# On a slowed kernel (the debug one, two vCPUs) a reply comes later than
# the hold (4 to 8 ms) more often, and a late ACK breaks the row that
# enters ping-pong mode more often (the completer runs on the other vCPU):
# 30 and 44 of 200 held in two of three tries (this rig's host, debug
# kernel, --smp 2, nothing else running), 184 in the third, as on a stock
# 6.12 kernel. The check is that the delayed ACK holds at all (ack_delay=0
# below holds none): 10 % there, the 25 % of a stock kernel elsewhere.
MIN_HELD=25
[ "${RIG_TIMEOUT_SCALE:-100}" -le 100 ] || MIN_HELD=10
integ_init
[ "$RIG_DEV_TYPE" != sroce ] ||
	[ -e "/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters/acks_delayed" ] ||
	rig_fail "no acks_delayed counter on $RIG_DEV"
integ_pair exchange-ipv4 90 4 18625 exchange --timeout 10 --min-held "$MIN_HELD"
grep -q '^sroce-integrity exchange: PASS .*cases=4 failed=0' "$INTEG_LOG" ||
	rig_fail "not all 4 cases ran and passed: $INTEG_SUMMARY"
rig_log "cases tried again: $(grep -c 'once more on a fresh pair' "$INTEG_LOG")"

[ "$RIG_DEV_TYPE" = sroce ] && [ "$RIG_PEER_DEV_TYPE" = sroce ] || exit 0
param=/sys/module/sroce/parameters/ack_delay
[ -w "$param" ] || rig_fail "no writable $param"
orig=$(cat "$param")
trap 'echo "$orig" >"$param"' EXIT
echo 0 >"$param"
integ_run exchange-off 120 4 18626 exchange --timeout 10
echo "$orig" >"$param"
[ "$INTEG_RC" = 1 ] || rig_fail "exchange-off: sroce-integrity exited $INTEG_RC, want 1"
grep -q '^sroce-integrity exchange: FAIL .*cases=4 failed=2 ' "$INTEG_LOG" ||
	rig_fail "exchange-off: want 2 of 4 cases failed: $INTEG_SUMMARY"
for c in pingpong turn; do
	grep -q "^\[[a-z]*\] ERROR: $c (try 3): only 0 ACKs waited for the reply" \
		"$INTEG_LOG" || rig_fail "exchange-off: $c did not miss its holds on the third try"
done
n=$(grep -c '^\[[a-z]*\] ERROR: ' "$INTEG_LOG")
[ "$n" = 4 ] || rig_fail "exchange-off: $n errors, want 4 (pingpong and turn, own and peer's)"
rig_barrier done-exchange-off 60 || rig_fail "exchange-off: the peer did not finish"
rig_log "PASS: with ack_delay=0 pingpong and turn miss their holds on all 3 tries"
