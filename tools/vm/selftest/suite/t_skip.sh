#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: guest a skips; the test must be "ok ... # SKIP".
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
rig_is_a && rig_skip "skipping on purpose"
exit 0
