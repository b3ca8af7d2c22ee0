#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: a one-guest test in guest b's list that fails; guest a
# must report it as "not ok" with b's reason.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
rig_suites runner-solo
rig_fail "failing on purpose in guest $RIG_ROLE alone"
