#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# perftest across address families and path MTUs: ib_send_bw, ib_write_bw,
# ib_read_bw, ib_send_lat, ib_write_lat, ib_read_lat and ib_atomic_bw (both
# atomic operations) over the RoCEv2 GID of the IPv6 address at path MTU
# 1024, with messages of several packets; and the tools that write_bw.sh,
# read_bw.sh, send_lat.sh and atomic_bw.sh do not run (ib_send_bw,
# ib_write_lat, ib_read_lat) over the IPv4 GID at path MTU 4096. Together
# every tool runs over both GID families and both MTUs. Guest a is the
# server, guest b the client (the requester of WRITE, READ and atomics).
# Each run passes when both sides exit 0, report no error and the side
# that prints results has a row with a positive bandwidth or message rate
# (bw) or average latency (lat). Runs only where sroce is one of the
# devices: rxe-rxe has rxe's own numbers from the other perftest tests.
# timeout: 420
# place: stock@2 rxe-sroce@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/perftest.sh
. "$(dirname "$0")/lib/perftest.sh"

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || [ "$RIG_PEER_DEV_TYPE" = sroce ] ||
	rig_skip "runs where sroce is one of the devices (rxe-rxe: other perftest tests)"
for t in ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat ib_atomic_bw; do
	rig_require_cmd "$t"
done
rig_setup_dev
gid4=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
gid6=$(rig_gid_index "$RIG_DEV" "$RIG_IP6") || rig_fail "no RoCEv2 GID for $RIG_IP6"

# matrix_run FAMILY MTU TOOL SIZE ITERS [ARGS...]: one perftest run and its
# check. FAMILY 4 or 6 picks the GID; the TCP set-up goes over IPv4.
matrix_run() {
	local fam=$1 mtu=$2 tool=$3 size=$4 iters=$5 gid=$gid4 name row v unit what
	shift 5
	[ "$fam" = 6 ] && gid=$gid6
	name=${tool#ib_}-v$fam-m$mtu-s$size
	[ "$tool" = ib_atomic_bw ] && name=${tool#ib_}-v$fam-m$mtu-${2,,}
	local args=(-d "$RIG_DEV" -x "$gid" -m "$mtu" -n "$iters" -F "$@")
	# ib_atomic_bw's messages are 8 bytes; it takes no size.
	[ "$tool" = ib_atomic_bw ] || args+=(-s "$size")
	perf_pair "$name" 60 "$tool" "${args[@]}" || rig_fail "$name: $tool failed"
	case "$tool" in
	*_lat)
		# ib_read_lat prints its result on the client only.
		if row=$(perf_lat_row "$PERF_LOG" "$size"); then
			read -r _ _ _ v <<<"$row"
			unit=usec
			what="average latency"
		elif [ "$tool" = ib_read_lat ] && rig_is_a; then
			v=""
		else
			rig_fail "$name: no result row"
		fi
		;;
	*)
		row=$(perf_bw_row "$PERF_LOG" "$size") || rig_fail "$name: no result row"
		read -r _ v rate <<<"$row"
		unit=MB/s
		what="average bandwidth"
		if [ "$tool" = ib_atomic_bw ]; then
			v=$rate
			unit=Mpps
			what="message rate"
		fi
		;;
	esac
	# perftest times with the CPU's cycle counter, which it calibrates
	# against the clock at start; on a loaded host the fit can fail on
	# either guest ("Correlation coefficient r^2 ... < 0.9"), and that
	# side then prints inf or 0.00. Guest b's numbers are the test's (its
	# metrics): a failed calibration there runs the cell again
	# (perf_pair). On guest a it leaves a's copy unmeasured (seen: rxe's
	# ib_write_lat server "inf" while the sroce client measured 1338 us):
	# said, not judged.
	if [ -n "$v" ] && rig_is_a && ! is_positive "$v" &&
		grep -q "^Correlation coefficient" "$PERF_LOG"; then
		rig_log "$name: perftest on guest a could not calibrate its clock ($what $v); guest b's numbers stand"
		v=""
	fi
	if [ -n "$v" ]; then
		is_positive "$v" || rig_fail "$name: $what $v"
		rig_is_b && rig_metric "${name//-/_}" "$v" "$unit"
		rig_log "$name: $what $v $unit"
	fi
	rig_barrier "done-$name" 60 || rig_fail "$name: the peer did not finish"
}

# IPv6 GID, path MTU 1024: messages of 4 packets (bw) and 2 packets (lat).
matrix_run 6 1024 ib_send_bw 4096 400
matrix_run 6 1024 ib_write_bw 4096 400
matrix_run 6 1024 ib_read_bw 4096 300
matrix_run 6 1024 ib_atomic_bw 8 300 -A FETCH_AND_ADD
matrix_run 6 1024 ib_atomic_bw 8 300 -A CMP_AND_SWAP
matrix_run 6 1024 ib_send_lat 2048 200
matrix_run 6 1024 ib_write_lat 2048 200
matrix_run 6 1024 ib_read_lat 2048 200
# IPv4 GID, path MTU 4096: the tools no other test runs there.
matrix_run 4 4096 ib_send_bw 65536 200
matrix_run 4 4096 ib_write_lat 64 200
matrix_run 4 4096 ib_read_lat 64 200
