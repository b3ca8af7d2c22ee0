#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# TCP over the virtual link with iperf3 (3 s, guest b sends to guest a): the
# baseline that RDMA numbers on this rig are compared with. Passes when both
# sides exit 0 and the receiver reports a non-zero rate.
# timeout: 60
# place: stock@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/perftest.sh
. "$(dirname "$0")/lib/perftest.sh"
# The link baseline does not depend on the RDMA devices.
rig_suites sroce-sroce

rig_require_peer
rig_require_cmd iperf3
port=5201
log=$RIG_TEST_OUT/iperf3.log
rc=0
if rig_is_a; then
	rig_bg iperf3 40 iperf3 -s -1 -p "$port" -f m
	pid=$RIG_BG_PID
	rig_wait_listen "$port" 20 || rig_fail "iperf3 server did not start"
	rig_signal listen
	rig_bg_wait "$pid" || rc=$?
else
	rig_wait listen 60 >/dev/null || rig_fail "the iperf3 server never listened"
	rig_run 40 iperf3 -c "$RIG_PEER_IP4" -p "$port" -t 3 -f m >"$log" 2>&1 || rc=$?
fi
sed 's/^/    /' "$log"
[ "$rc" = 0 ] || rig_fail "iperf3 exited $rc"
if rig_is_b; then
	rate=$(awk '/receiver$/ { for (i = 1; i < NF; i++) if ($(i + 1) == "Mbits/sec") print $i }' "$log")
	is_positive "$rate" || rig_fail "no receiver rate in the iperf3 output"
	rig_metric tcp_bw "$rate" Mbit/s
fi
rig_barrier finished 30 || rig_fail "the peer did not finish"
