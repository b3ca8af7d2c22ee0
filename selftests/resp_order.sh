#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The responder's answers and executions while the responses of an earlier
# RDMA READ are still going out: "sroce-verbs-check resporder"
# (tools/verbs-check/cmd_resporder.cpp). sroce1 sits on one end of a veth
# pair; a forged peer (tools/verbs-check/forged_peer.h) puts requests built
# with the protocol core on the other end with AF_PACKET, from an address
# no interface has, and reads every packet sroce1 sends back. Behind a READ
# of thousands of responses:
#   - an RNR NAK or a PSN sequence NAK held back for a SEND that the peer
#     then sends again and that is taken must not go out after the READ
#     (an ACK for the SEND does, when it asked for one);
#   - a reset while the READ goes out, then a new connection with new
#     PSNs: no packet with an old PSN leaves after the reset returned;
#   - a FETCH_ADD accepted before a SEND with Invalidate of its window's
#     rkey still executes (value and atomic ACK checked), and an ATOMIC
#     WRITE after a FETCH_ADD never becomes visible before the FETCH_ADD's
#     result.
# timeout: 400
# place: debug-1@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
ctrl_forged_peer sroce1 rordv0 rordv1 10.77.10

log=$RIG_TEST_OUT/resporder.log
args=(resporder --target sroce1 --inject rordv1 --peer-ip 10.77.10.2)
[ -n "${SROCE_RESPORDER_READ_MIB:-}" ] && args+=(--read-mib "$SROCE_RESPORDER_READ_MIB")
[ -n "${SROCE_RESPORDER_RESET_ROUNDS:-}" ] && args+=(--reset-rounds "$SROCE_RESPORDER_RESET_ROUNDS")
rc=0
rig_run 270 "$CTRL_VC" "${args[@]}" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check resporder exited $rc"
for c in held_rnr.ack held_rnr.noack held_seq_nak.ack reset.reconnect atomic.invalidate \
	atomic.atomic_write; do
	grep -q "^PASS $c:" "$log" || rig_fail "no PASS line for $c"
done
