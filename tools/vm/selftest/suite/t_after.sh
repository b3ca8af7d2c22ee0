#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: the suite is still in step after the failures above.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
rig_barrier still-here 20 || rig_fail "the peer did not come"
