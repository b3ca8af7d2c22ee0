#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Device memory ("sroce-verbs-check dm", one device, loopback RC path,
# every byte checked): max_dm_size and the device's budget (ENOMEM past
# it, back once freed), refused allocations, ibv_memcpy_to_dm/_from_dm
# (a 64 KiB pattern round trip; unaligned copies EINVAL, past the end
# EFAULT, as mlx5),
# ibv_reg_dm_mr's errors, then SEND into and out of device memory, RDMA
# WRITE and READ at an offset, fetch-and-add and compare-and-swap on it,
# and ibv_free_dm refused (EBUSY) while a region uses the memory. Then a
# process that exits with a DM, a region on it and its mapping alive: the
# device's regions are back to what they were (the kernel freed them; on
# the debug kernel KMEMLEAK would name a leak at the end of the suite).
# timeout: 240
# place: debug-1@1 6.12-1@3
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
log=$RIG_TEST_OUT/dm.log
rc=0
rig_run 90 "$CTRL_VC" dm "$CTRL_DEV" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check dm"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check dm exited $rc"

mrs() { rdma resource show mr 2>/dev/null | grep -c "dev $CTRL_DEV "; }
mrs_before=$(mrs)
abandon_out=$(SROCE_DM_ABANDON=1 rig_run 30 "$CTRL_VC" dm "$CTRL_DEV" 2>&1) ||
	rig_fail "the abandoning process failed: $abandon_out"
rig_log "$abandon_out"
mrs_after=$(mrs)
[ "$mrs_after" = "$mrs_before" ] ||
	rig_fail "regions of $CTRL_DEV: $mrs_before before the process, $mrs_after after it exited"
rig_log "PASS: regions of $CTRL_DEV back to $mrs_before after the process left a DM region behind"
