#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Atomic operations between the guests with perftest's ib_atomic_bw
# (FETCH_AND_ADD, then CMP_AND_SWAP) over the RoCEv2 GID of the IPv4 address.
# Passes when both sides exit 0, report no error and print a result row with
# a non-zero rate. Skipped when the device does not offer atomics.
# timeout: 120
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/perftest.sh
. "$(dirname "$0")/lib/perftest.sh"
# perf_matrix.sh and the benchmark cover rxe-rxe.
# sroce requesting from rxe (rxe-sroce) is in perf_matrix.sh, which runs
# every perftest tool there.
rig_suites sroce-sroce sroce-rxe

rig_require_peer
rig_require_cmd ib_atomic_bw
rig_setup_dev
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
cap=$(ibv_devinfo -d "$RIG_DEV" -v | awk '/atomic_cap:/ { print $2; exit }')
[ "$cap" = ATOMIC_NONE ] && rig_skip "$RIG_DEV has atomic_cap ATOMIC_NONE"

for op in FETCH_AND_ADD CMP_AND_SWAP; do
	perf_pair "atomic-$op" 90 ib_atomic_bw -d "$RIG_DEV" -x "$gid" -A "$op" -n 500 -F ||
		rig_fail "ib_atomic_bw -A $op failed"
	row=$(perf_bw_row "$PERF_LOG" 8) || rig_fail "ib_atomic_bw -A $op: no result row"
	read -r _ _ rate <<<"$row"
	is_positive "$rate" || rig_fail "ib_atomic_bw -A $op: message rate $rate"
	if rig_is_b; then
		rig_metric "atomic_${op,,}_rate" "$rate" Mpps
	fi
	rig_barrier "done-$op" 60 || rig_fail "the peer did not finish -A $op"
done
