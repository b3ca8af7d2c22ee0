#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: guest a's half calls rig_fail, and its EXIT trap then
# ends the script with status 0 (a trap whose cleanup runs a command before
# one that exits with "$?" does so). The test must still be "not ok": the
# failure's reason, not only the exit status, decides.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
if rig_is_a; then
	trap 'true; exit 0' EXIT
	rig_fail "failing on purpose under a trap that loses the status"
fi
exit 0
