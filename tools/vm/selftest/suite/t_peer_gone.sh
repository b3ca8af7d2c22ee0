#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: guest b fails at once while guest a waits for a marker
# b never sends (for up to 1000 s); the runner must stop a's half soon.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
if rig_is_b; then
	rig_fail "failing on purpose"
fi
sleep 1000
