#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The SRQ verbs ibv_srq_pingpong does not reach ("sroce-verbs-check srq",
# one device, loopback RC path, every payload byte checked): the SRQ limit
# (arming above max_wr fails; armed at 8 with 16 receives posted, the
# ninth message raises exactly one IBV_EVENT_SRQ_LIMIT_REACHED and the
# limit reads back 0), growing the SRQ with receives posted (they come back
# in order, the new size takes more), shrinking below the posted count
# (EINVAL), post_recv on an SRQ QP (EINVAL), destroy while in use (EBUSY).
# timeout: 300
# place: debug-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
log=$RIG_TEST_OUT/srq.log
rc=0
rig_run 90 "$CTRL_VC" srq "$CTRL_DEV" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check srq"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check srq exited $rc"
