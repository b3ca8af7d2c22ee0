#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Completion timestamps of the extended CQ ("sroce-verbs-check cqex",
# loopback RC pair, bytes checked): ibv_query_device_ex reports the clock,
# and the raw and wall clock timestamps of a SEND and its receive lie
# between the clocks read before the post and after the poll
# (ibv_query_rt_values_ex for the raw one).
# timeout: 90
# place: stock-1@1
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
log=$RIG_TEST_OUT/cqex.log
rc=0
rig_run 60 "$CTRL_VC" cqex "$CTRL_DEV" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check cqex"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check cqex exited $rc"
