#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RDMA WRITE bandwidth between the guests with perftest's ib_write_bw over
# the RoCEv2 GID of the IPv4 address, 64 B and 64 KiB messages. Passes when
# both sides exit 0, report no error and print a result row with a non-zero
# average bandwidth.
# timeout: 180
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/perftest.sh
. "$(dirname "$0")/lib/perftest.sh"

# sroce requesting from rxe (rxe-sroce) is in perf_matrix.sh, which runs
# every perftest tool there.
rig_suites sroce-sroce sroce-rxe rxe-rxe
rig_require_peer
rig_require_cmd ib_write_bw
rig_setup_dev
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"

for spec in 64:2000 65536:300; do
	IFS=: read -r size iters <<<"$spec"
	perf_pair "write-$size" 90 ib_write_bw -d "$RIG_DEV" -x "$gid" -s "$size" -n "$iters" -F ||
		rig_fail "ib_write_bw -s $size failed"
	row=$(perf_bw_row "$PERF_LOG" "$size") || rig_fail "ib_write_bw -s $size: no result row"
	read -r _ avg rate <<<"$row"
	is_positive "$avg" || rig_fail "ib_write_bw -s $size: average bandwidth $avg"
	if rig_is_b; then
		rig_metric "write_bw_${size}B" "$avg" MB/s
		rig_metric "write_bw_${size}B_rate" "$rate" Mpps
	fi
	rig_barrier "done-$size" 60 || rig_fail "the peer did not finish -s $size"
done
