#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Driver details in "rdma -dd resource show" ("sroce-verbs-check
# resdetails", loopback RC pair): a QP's requester, completer and
# responder PSNs, ring indices, retries left and timers, a CQ's ring and
# arm state, an MR's pinned pages, an SRQ's ring and limit (6.12), each
# read back for a known state: after 5 SENDs all ACKed, and while a SEND
# to a reset peer is being retried (it then ends in
# IBV_WC_RETRY_EXC_ERR). The text form is shown for a QP too.
# timeout: 120
# place: 6.12-1@1
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
rig_require_cmd rdma
log=$RIG_TEST_OUT/resdetails.log
rc=0
rig_run 90 "$CTRL_VC" resdetails "$CTRL_DEV" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check resdetails"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check resdetails exited $rc"

# The text form (what a user reads): a QP of an ibv_rc_pingpong server
# waiting for its client shows the driver's fields after the core's.
gid=$(rig_gid_index "$CTRL_DEV" "$RIG_IP4") || rig_fail "no GID for $RIG_IP4"
rig_bg pp 30 ibv_rc_pingpong -d "$CTRL_DEV" -g "$gid" -p 18850
rig_wait_listen 18850 20 || rig_fail "ibv_rc_pingpong did not start"
qpline=$(rdma -dd resource show qp link "$CTRL_DEV/1" | grep -m 1 'comm ibv_rc_pingpong')
kill "$RIG_BG_PID" 2>/dev/null
wait "$RIG_BG_PID" 2>/dev/null
rig_log "rdma -dd resource show qp: $qpline"
for f in sq_prod sq_cons req_psn comp_psn retry_left rto_ms resp_epsn resp_msn rq_prod rq_cons; do
	grep -qw "drv_$f" <<<"$qpline" || rig_fail "no $f in rdma -dd resource show qp"
done
rig_log "PASS"
