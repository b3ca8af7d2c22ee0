#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Hostile user space against sroce's mapped rings ("sroce-verbs-check
# ring"): the tool finds the rings of its own QPs in its address space,
# writes forged send WQEs (opcode 0xff, num_sge 1000, an inline length of
# 2^31 - 1, a 4 GiB SGE, unknown flag bits, an lkey of another PD) and
# impossible producer indices (SQ past the end or behind cons, RQ past the
# end), rings the doorbell itself, and checks the kernel's answer: the
# error completion the IBA gives a malformed WQE, or, for a broken index,
# the QP in ERR with IBV_EVENT_QP_FATAL (and the peer's SEND NAKed with
# IBV_WC_REM_OP_ERR). A QP pair left alone must still work afterwards, the
# other PD's buffer stays untouched, and the kernel log stays clean (the
# rig's check). The object counts of "rdma resource show" return to their
# baseline when the tool has exited.
# timeout: 120
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"

ctrl_init
base=$(ctrl_counts "$CTRL_DEV")
log=$RIG_TEST_OUT/ring.log
rc=0
rig_run 90 "$CTRL_VC" ring "$CTRL_DEV" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check ring"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check ring exited $rc"
after=$(ctrl_counts "$CTRL_DEV")
[ "$after" = "$base" ] || rig_fail "object counts did not return to baseline: '$base' -> '$after'"
rig_log "object counts back to baseline: $after"
