#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The checks of sroce-integrity catch damage: with --corrupt write each side,
# as responder, flips one byte of a region the peer wrote just before
# checking it (as a device that placed a wrong byte would). Both sides must
# then report it (an ERROR line naming the written region, errors=1 and
# peer_errors=1 in the summary) and exit 1. A checker that passes this
# cannot be silently blind to the data.
# timeout: 90
# place: stock@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Checks the checker, not a device: one suite is enough.
rig_suites sroce-sroce

integ_init
integ_run corrupt-write 60 4 18618 run --rounds 8 --ops write,send --corrupt write
[ "$INTEG_RC" = 1 ] || rig_fail "sroce-integrity exited $INTEG_RC, want 1 (damage reported)"
grep -q 'ERROR: round .* write len .* (written region): 1 of ' "$INTEG_LOG" ||
	rig_fail "no ERROR line about the damaged written region"
[[ "$INTEG_SUMMARY" == *" FAIL "*" errors=1 peer_errors=1 "* ]] ||
	rig_fail "summary does not count one error on each side: $INTEG_SUMMARY"
rig_log "the damaged byte was reported"
rig_barrier checked 60 || rig_fail "the peer did not finish"
