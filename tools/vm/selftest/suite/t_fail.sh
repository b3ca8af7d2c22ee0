#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: guest b's half fails; the test must be "not ok". It
# leaves a background process behind, as a test that fails before its own
# cleanup does (rig_bg: in a process group of its own): t_after checks that
# the runner ended it.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
if rig_is_b; then
	rig_bg leftover 300 bash -c 'exec -a rig_t_fail_leftover sleep 300'
	rig_fail "failing on purpose"
fi
exit 0
