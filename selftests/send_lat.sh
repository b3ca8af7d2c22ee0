#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SEND latency between the guests with perftest's ib_send_lat (2 B, RC,
# RoCEv2 GID of the IPv4 address). Passes when both sides exit 0, report no
# error and print a result row. perftest times with the CPU cycle counter;
# when it cannot (it prints "inf", seen on 6.12 guests) the test is skipped
# rather than reporting a number that means nothing.
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
rig_require_cmd ib_send_lat
rig_setup_dev
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"

perf_pair send-lat 90 ib_send_lat -d "$RIG_DEV" -x "$gid" -s 2 -n 500 -F ||
	rig_fail "ib_send_lat failed"
row=$(perf_lat_row "$PERF_LOG" 2) || rig_fail "ib_send_lat: no result row"
read -r _ _ typical avg <<<"$row"
is_positive "$typical" || rig_skip "ib_send_lat cannot time here (t_typical = $typical)"
if rig_is_b; then
	rig_metric send_lat_2B_typical "$typical" usec
	rig_metric send_lat_2B_avg "$avg" usec
fi
rig_barrier finished 60 || rig_fail "the peer did not finish"
