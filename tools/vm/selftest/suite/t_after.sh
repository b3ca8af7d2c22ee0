#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: the suite is still in step after the failures above,
# and nothing t_fail left running outlived it.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
if pgrep -f rig_t_fail_leftover >/dev/null; then
	rig_fail "t_fail's background process outlived the test"
fi
rig_barrier still-here 20 || rig_fail "the peer did not come"
