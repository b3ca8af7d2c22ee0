#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Every perftest operation over the address families and path MTUs the
# other perftest tests do not cover: ib_send_bw, ib_write_bw, ib_read_bw,
# ib_atomic_bw (compare-and-swap and fetch-and-add), ib_send_lat,
# ib_write_lat and ib_read_lat, over the RoCEv2 GID of the IPv4 address at
# path MTU 1024 and of the IPv6 address at 1024 and 4096 (perftest's own
# TCP exchange always uses IPv4). Short runs: this checks that every
# operation completes without error between the two guests' devices (in
# both suites' directions), not how fast. Passes when both sides exit 0,
# report no error and print a result row (bandwidth rows non-zero).
# timeout: 600
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/perftest.sh
. "$(dirname "$0")/lib/perftest.sh"

rig_require_peer
rig_require_cmd ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw \
	ib_send_lat ib_write_lat ib_read_lat
rig_setup_dev

# name|command arguments|size of the result row|kind
ops=(
	"send_bw|ib_send_bw -s 65536 -n 40|65536|bw"
	"write_bw|ib_write_bw -s 65536 -n 40|65536|bw"
	"read_bw|ib_read_bw -s 65536 -n 40|65536|bw"
	"cas_bw|ib_atomic_bw -A CMP_AND_SWAP -n 100|8|bw"
	"faa_bw|ib_atomic_bw -A FETCH_AND_ADD -n 100|8|bw"
	"send_lat|ib_send_lat -s 2 -n 100|2|lat"
	"write_lat|ib_write_lat -s 2 -n 100|2|lat"
	"read_lat|ib_read_lat -s 2 -n 100|2|lat"
)

for combo in 4:1024 6:1024 6:4096; do
	IFS=: read -r fam mtu <<<"$combo"
	own=$RIG_IP4
	[ "$fam" = 6 ] && own=$RIG_IP6
	gid=$(rig_gid_index "$RIG_DEV" "$own") || rig_fail "no RoCEv2 GID for $own"
	for op in "${ops[@]}"; do
		IFS='|' read -r name cmd size kind <<<"$op"
		step=ipv$fam-mtu$mtu-$name
		# shellcheck disable=SC2086
		perf_pair "$step" 90 $cmd -d "$RIG_DEV" -x "$gid" -m "$mtu" -F ||
			rig_fail "$step failed"
		if [ "$kind" = bw ]; then
			row=$(perf_bw_row "$PERF_LOG" "$size") ||
				rig_fail "$step: no result row"
			read -r _ avg _ <<<"$row"
			is_positive "$avg" || rig_fail "$step: average bandwidth $avg"
		else
			perf_lat_row "$PERF_LOG" "$size" >/dev/null ||
				rig_fail "$step: no result row"
		fi
		rig_barrier "done-$step" 60 || rig_fail "the peer did not finish $step"
	done
done
