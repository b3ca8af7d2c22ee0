#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Invalid arguments to the control verbs fail with the expected errno and
# leave the objects usable ("sroce-verbs-check invalid": capacities over the
# device limits, bad CQ sizes and resizes, busy destroys, bad MR
# access/addresses, refused QP transitions and attribute values, bad AHs,
# out-of-range queries, malformed work requests), twice in a row, with no
# kernel splat (the runner checks dmesg) and no object left behind.
# timeout: 300
# place: debug-1@3 6.12-1@3
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV

base=$(ctrl_counts "$dev")
before=$(dmesg | wc -l)
rc=0
for round in 1 2; do
	ctrl_vc "invalid-$round" 120 invalid "$dev" || rc=$?
done
dmesg | tail -n +"$((before + 1))" >"$RIG_TEST_OUT/dmesg-new.txt"
rig_log "kernel log lines during the checks: $(wc -l <"$RIG_TEST_OUT/dmesg-new.txt")"
sed 's/^/    /' "$RIG_TEST_OUT/dmesg-new.txt" | head -n 20
[ "$(ctrl_counts "$dev")" = "$base" ] ||
	rig_fail "object counts after the checks: $(ctrl_counts "$dev"), want $base"
if [ "$rc" != 0 ]; then
	grep -h '^FAIL' "$RIG_TEST_OUT"/invalid-*.log | sort -u | sed 's/^/    /'
	rig_fail "sroce-verbs-check invalid: exit $rc"
fi
