#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Tearing down never waits for an on-demand-paging fault. A fault runs in a
# work item that touches the region owner's memory; memory whose backing
# never answers (a FUSE server that reads the request and does not reply:
# odp_fuse.sh) holds that work item in the kernel for as long as it likes,
# and nothing interrupts it. Here the debugfs knob sroce/odp_stall makes
# every fault wait that way while it is set, on any kernel (the debug one
# has no FUSE):
#  1. "sroce-verbs-check odpstall": with both sides of a loopback QP
#     waiting for faults, destroying the QPs, deregistering the regions and
#     closing the device each return in under 5 s; the faults end when the
#     knob is cleared; a new pair then moves ODP data, every byte checked.
#  2. The same stall, then the process exits with its objects in place:
#     the exit, "rdma link delete" and a refused "rmmod" (the waiting
#     faults hold the module) each return in under 10 s; once the knob is
#     cleared, rmmod succeeds (lib/odpstall.sh).
# Before, each of them waited for the faults (a watchdog clears the knob
# after 15-25 s so that the test ends, and fails).
# timeout: 240
# place: stock-1@2 debug-1@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# shellcheck source=lib/odpstall.sh
. "$(dirname "$0")/lib/odpstall.sh"
rig_suites sroce-sroce sroce

ctrl_init
trap ctrl_restore EXIT
[ -d /sys/kernel/debug/sroce ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
knob=/sys/kernel/debug/sroce/odp_stall
[ -e "$knob" ] || rig_fail "no $knob"
# Cleared again on exit, whatever happens.
ctrl_write "$knob" 0 0
knob_clear() { [ -e "$knob" ] && echo 0 >"$knob"; }

odpstall_inproc --knob "$knob"
odpstall_exit knob_clear --knob "$knob"
