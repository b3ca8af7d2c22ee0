#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: guest a's half is stuck in the kernel past its time
# limit: the test's shell itself reads tools/vm/testmod/rig_stuck.c's file
# (bash's read builtin), which sleeps in state D for 60 s (less than the
# hung-task detector's 120); no signal ends it. The test must fail at its
# limit and the suite go on: timeout(1) sends KILL to its whole process
# group at the limit (plus 5 s), itself included, so the runner does not
# wait for the stuck shell.
# timeout: 8
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
if rig_is_a; then
	mod=${RIG_TESTMOD:?no RIG_TESTMOD}
	insmod "${mod%/*}/rig_stuck.ko" stuck_ms=60000 || rig_fail "cannot load rig_stuck.ko"
	read -r _ </sys/kernel/debug/rig_stuck
fi
exit 0
