#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# An RDMA WRITE into a fast-registered region races the region's
# invalidation on another CPU, as a storage target's late WRITE meets the
# host's LOCAL_INV after a timeout (the host then reuses the pages). Once
# the LOCAL_INV has completed, no byte of the region may change: the WRITE
# landed before (and completes successfully) or not at all (and completes
# with a remote access error). A kernel consumer does it
# (tools/ktest/sroce_ktest.c, test=frwr_inval: RC QPs of the device
# connected through its own GID, the WRITE posted from one CPU, the
# LOCAL_INV from another CPU on a third QP of the PD), with the device's
# fault knob write_delay_ms holding the WRITE for 300 ms between its
# rkey's lookup and its copy. Three rounds.
# Before the fix, the LOCAL_INV completed while the WRITE was held and the
# page changed 200 ms after its completion. Needs two CPUs (smp2).
# timeout: 120
# place: smp2@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
rig_suites sroce-sroce sroce

ctrl_init
[ "$(nproc)" -ge 2 ] || rig_skip "the race needs two CPUs; this guest has $(nproc) (placed on smp2)"
rig_ktest_module
[ -d /sys/kernel/debug/sroce ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
knob=/sys/kernel/debug/sroce/$CTRL_DEV/fault/write_delay_ms
[ -e "$knob" ] || rig_fail "no $knob"
delay=300
ctrl_write "$knob" "$delay" 0

for round in 1 2 3; do
	echo "rig: frwr_inval round $round" >/dev/kmsg
	if ! insmod "$RIG_KTEST_KO" dev="$CTRL_DEV" test=frwr_inval delay_ms="$delay"; then
		dmesg | sed -n "/rig: frwr_inval round $round\$/,\$p" | grep sroce_ktest
		rig_fail "round $round: sroce_ktest frwr_inval failed"
	fi
	dmesg | sed -n "/rig: frwr_inval round $round\$/,\$p" | grep 'sroce_ktest: frwr_inval: WRITE'
	rmmod sroce_ktest || rig_fail "rmmod sroce_ktest"
done
rig_log "3 rounds: the region did not change after its LOCAL_INV completed"
