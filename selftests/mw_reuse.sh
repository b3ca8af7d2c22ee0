#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A type 2 memory window bound to a QP that is destroyed stays closed to
# the QP that gets its number next ("sroce-verbs-check mwreuse", loopback):
# QP numbers are reused once the 24-bit space wraps; the debugfs knob
# fault/qpn_next hands A's number out again at once. A write through the
# window from the peer of a new QP of another PD, then of the same PD,
# holding that number ends in a remote access error and writes nothing;
# after a LOCAL_INV and a new bind the window works again. Before, the
# window matched the QP number only: both writes landed.
# timeout: 120
# place: stock-1@1 debug-1@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
rig_suites sroce-sroce sroce

ctrl_init
trap ctrl_restore EXIT
[ -d /sys/kernel/debug/sroce ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
knob=/sys/kernel/debug/sroce/$CTRL_DEV/fault/qpn_next
[ -e "$knob" ] || rig_fail "no $knob"
ctrl_vc mwreuse 60 mwreuse "$CTRL_DEV" --qpn-knob "$knob" || rig_fail "sroce-verbs-check mwreuse failed"
