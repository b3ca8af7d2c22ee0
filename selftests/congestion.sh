#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Congestion signals in the counters ("sroce-verbs-check congestion",
# tools/verbs-check/cmd_congestion.cpp): sroce1 on one end of a veth pair,
# a forged peer on the other end sends a victim QP of sroce1 a CNP (BTH
# opcode 0x81), then the same CNP with the IP ECN field at "congestion
# experienced". cnp_rcvd grows by 2, ecn_ce_rcvd by 1, and no drop
# counter moves (before, a CNP counted as drop_bad_qp_type).
# timeout: 90
# place: 6.12-1@1
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
ctrl_forged_peer sroce1 cgv0 cgv1 10.77.11

log=$RIG_TEST_OUT/congestion.log
rc=0
rig_run 60 "$CTRL_VC" congestion --target sroce1 --inject cgv1 --peer-ip 10.77.11.2 \
	>"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check congestion"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check congestion exited $rc"
for c in cnp ce no_drop; do
	grep -q "^PASS $c:" "$log" || rig_fail "no PASS line for $c"
done
