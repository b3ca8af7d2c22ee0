#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: guest a's half hangs past its time limit (this line
# sets it); the test must fail and the suite go on.
# timeout: 8
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
if rig_is_a; then
	sleep 1000
fi
exit 0
