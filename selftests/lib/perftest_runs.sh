#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The perftest guest tests write_bw.sh, read_bw.sh, send_lat.sh and
# atomic_bw.sh as one table: each of those scripts names its suites and
# sources this file, which runs the table's rows of that test (RIG_TEST)
# between the guests over the RoCEv2 GID of the IPv4 address, guest a the
# server, guest b the client. Each row passes when both sides exit 0 and
# report no error (perf_pair) and the result row passes its CHECK:
#
#   bw    a row for SIZE with a positive average bandwidth; metrics
#         METRIC (MB/s) and METRIC_rate (message rate, Mpps)
#   rate  a row for SIZE with a positive message rate; metric METRIC (Mpps)
#   lat   a row for SIZE; metrics METRIC_typical and METRIC_avg (usec).
#         perftest times with the CPU cycle counter; when it cannot (it
#         prints "inf", seen on 6.12 guests) the test is skipped rather
#         than reporting a number that means nothing.
#
# Guest b records the metrics (rig_metric). Each tool also gets
# -d DEV -x GID -F (no CPU frequency check).
#
# perf_runs SUITE...: run the rows of this test in these suites only
# (rig_suites).
# shellcheck source=guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest.sh"
# shellcheck source=perftest.sh
. "$(dirname "${BASH_SOURCE[0]}")/perftest.sh"

# TEST      NAME                 CHECK SIZE  METRIC                    TOOL ARGS...
PERF_RUNS="
write_bw    write-64             bw    64    write_bw_64B              ib_write_bw -s 64 -n 2000
write_bw    write-65536          bw    65536 write_bw_65536B           ib_write_bw -s 65536 -n 300
read_bw     read-64              bw    64    read_bw_64B               ib_read_bw -s 64 -n 1000
read_bw     read-65536           bw    65536 read_bw_65536B            ib_read_bw -s 65536 -n 200
send_lat    send-lat             lat   2     send_lat_2B               ib_send_lat -s 2 -n 500
atomic_bw   atomic-FETCH_AND_ADD rate  8     atomic_fetch_and_add_rate ib_atomic_bw -A FETCH_AND_ADD -n 500
atomic_bw   atomic-CMP_AND_SWAP  rate  8     atomic_cmp_and_swap_rate  ib_atomic_bw -A CMP_AND_SWAP -n 500
"

# perf_run_row NAME CHECK SIZE METRIC TOOL ARGS...: one row, over GID
# index $gid (of perf_runs).
perf_run_row() {
	local name=$1 check=$2 size=$3 metric=$4 row avg rate typical
	shift 4
	local what="$*"
	perf_pair "$name" 90 "$@" -d "$RIG_DEV" -x "$gid" -F || rig_fail "$what failed"
	case "$check" in
	lat)
		row=$(perf_lat_row "$PERF_LOG" "$size") || rig_fail "$what: no result row"
		read -r _ _ typical avg <<<"$row"
		is_positive "$typical" || rig_skip "$1 cannot time here (t_typical = $typical)"
		if rig_is_b; then
			rig_metric "${metric}_typical" "$typical" usec
			rig_metric "${metric}_avg" "$avg" usec
		fi
		;;
	bw | rate)
		row=$(perf_bw_row "$PERF_LOG" "$size") || rig_fail "$what: no result row"
		read -r _ avg rate <<<"$row"
		if [ "$check" = bw ]; then
			is_positive "$avg" || rig_fail "$what: average bandwidth $avg"
			rig_is_b && rig_metric "$metric" "$avg" MB/s
			rig_is_b && rig_metric "${metric}_rate" "$rate" Mpps
		else
			is_positive "$rate" || rig_fail "$what: message rate $rate"
			rig_is_b && rig_metric "$metric" "$rate" Mpps
		fi
		;;
	*) rig_fail "perftest_runs: row $name: unknown check $check" ;;
	esac
	rig_barrier "done-$name" 60 || rig_fail "the peer did not finish $what"
}

perf_runs() {
	local t name check size metric tool args tools=() gid
	rig_suites "$@"
	rig_require_peer
	while read -r t _ _ _ _ tool _; do
		[ "$t" = "$RIG_TEST" ] && tools+=("$tool")
	done <<<"$PERF_RUNS"
	[ ${#tools[@]} -gt 0 ] || rig_fail "perftest_runs: no row for test $RIG_TEST"
	rig_require_cmd "${tools[@]}"
	rig_setup_dev
	gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
	if [[ " ${tools[*]} " == *" ib_atomic_bw "* ]]; then
		local cap
		cap=$(ibv_devinfo -d "$RIG_DEV" -v | awk '/atomic_cap:/ { print $2; exit }')
		[ "$cap" = ATOMIC_NONE ] && rig_skip "$RIG_DEV has atomic_cap ATOMIC_NONE"
	fi
	while read -r t name check size metric tool args <&3; do
		[ "$t" = "$RIG_TEST" ] || continue
		# shellcheck disable=SC2086 # args is a list of words
		perf_run_row "$name" "$check" "$size" "$metric" "$tool" $args
	done 3<<<"$PERF_RUNS"
}
