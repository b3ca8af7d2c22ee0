#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: guest b's half fails; the test must be "not ok".
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
rig_is_b && rig_fail "failing on purpose"
exit 0
