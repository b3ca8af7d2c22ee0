#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: the guest test runner (selftests/lib/runner.sh)
# on the tests of tools/vm/selftest/suite/ -- a pass, a failure, a skip, a
# test for another suite, a hang, a half stuck in the kernel, a half whose
# peer failed, a failure whose EXIT trap lost the status, then a pass --
# in both guests, after one-guest tests of each guest's own (a pass in
# both, a test for another suite in a's, a failure in b's). Guest a's
# KTAP output is checked by tools/vm/selftest.sh.
export RIG_TESTS_DIR=$RIG_REPO/tools/vm/selftest/suite RIG_SUITE=runner-selftest
export RIG_SOLO_A=s_solo.sh,t_other_suite.sh RIG_SOLO_B=s_solo.sh,s_solo_fail.sh RIG_SOLO_SUITE=runner-solo
bash "$RIG_REPO/selftests/lib/runner.sh" "$RIG_ROLE" \
	t_pass.sh t_fail.sh t_skip.sh t_other_suite.sh t_hang.sh t_stuck.sh t_peer_gone.sh t_masked.sh t_after.sh
# The runner exits 1 when a test failed, as some do here on purpose.
exit 0
