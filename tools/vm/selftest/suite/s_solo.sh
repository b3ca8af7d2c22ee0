#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runner self-test: a one-guest test of a pair rig's lists (RIG_SOLO_A,
# RIG_SOLO_B), in both lists. It must run as in a one-guest rig (no peer,
# suite runner-solo) and side by side with the other guest's copy: each
# waits for the other's marker, which the lockstep of the pair tests would
# give too, but not without a peer.
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
rig_suites runner-solo
[ "${RIG_NGUESTS:-}" = 1 ] || rig_fail "RIG_NGUESTS is '${RIG_NGUESTS:-}', not 1"
[ -z "$RIG_PEER_ROLE" ] || rig_fail "a peer ($RIG_PEER_ROLE) in a one-guest test"
[ "$RIG_SUITE" = runner-solo ] || rig_fail "suite $RIG_SUITE, not runner-solo"
other=a
[ "$RIG_ROLE" = a ] && other=b
: >"$RIG_SHARED/s_solo-$RIG_ROLE"
for _ in $(seq 1 100); do
	[ -e "$RIG_SHARED/s_solo-$other" ] && exit 0
	rig_sleep 0.2
done
rig_fail "guest $other's copy did not run beside this one"
