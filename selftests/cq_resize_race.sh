#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A CQ resized while a POLL_CQ on it stands between loading the ring's
# header and using it (uverbs runs both with the CQ read-locked): the
# resize must not free the ring under the poll. The debugfs knob
# fault/poll_delay_ms holds the poll 2 s in that window, and
# "sroce-verbs-check cqrace" resizes the CQ (4096 entries, the old ring
# unmapped) once the poll's wait has begun; it checks that both succeed,
# that the resize was issued inside the window, and that the CQ polls
# empty and resizes again after. Before the CQ's ring mutex, the debug
# kernel's KASAN reported a use-after-free in sroce_poll_cq() here (the
# poll cleared a flag in the freed ring), which fails the test.
# timeout: 240
# place: debug-1@2 stock-1@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV
dbg=/sys/kernel/debug/sroce/$dev
[ -d /sys/kernel/debug/sroce ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
knob=$dbg/fault/poll_delay_ms
[ -e "$knob" ] || rig_fail "no $knob"
trap 'rc=$?; echo 0 >"$knob" 2>/dev/null; (exit "$rc"); ctrl_restore' EXIT

echo 2000 >"$knob"
ctrl_vc cqrace 120 cqrace "$dev" --rounds "${SROCE_CQ_RACE_ROUNDS:-3}" ||
	rig_fail "sroce-verbs-check cqrace failed"
echo 0 >"$knob"
