#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: a test for other suites only. The runner must skip it
# from its rig_suites line without starting it: started, it fails before
# its own rig_suites could skip it.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
rig_fail "started, though its rig_suites line leaves out this suite"
rig_suites some-other-suite
