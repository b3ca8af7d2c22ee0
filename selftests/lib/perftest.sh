#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# perftest (ib_*_bw, ib_*_lat) between the two guests, for guest tests.
# Source after lib/guest.sh. Guest a runs the server, guest b the client.
#
#   perf_pair NAME SECONDS TOOL ARG...
#       runs TOOL ARG... as server (a) and client of $RIG_PEER_IP4 (b) with
#       the same arguments; the output of this guest's side is left in
#       $PERF_LOG; returns the tool's exit status (1 if the halves could not
#       meet). NAME must be unique within the test (it names the markers).
#   perf_bw_row LOG SIZE      -> "PEAK AVG MSGRATE" of the result row
#   perf_lat_row LOG SIZE     -> "MIN MAX TYPICAL AVG" of the result row

PERF_PORT=${PERF_PORT:-18515}

perf_pair() {
	local name=$1 t=$2 rc
	shift 2
	PERF_LOG=$RIG_TEST_OUT/$name.$RIG_ROLE.log
	if rig_is_a; then
		timeout -k 3 "$t" "$@" -p "$PERF_PORT" >"$PERF_LOG" 2>&1 &
		local pid=$!
		# With -R the server listens through rdma_cm, not on TCP.
		local listen=rig_wait_listen
		[[ " $* " == *" -R "* ]] && listen=rig_wait_cm_listen
		if ! "$listen" "$PERF_PORT" 30 "$pid"; then
			kill "$pid" 2>/dev/null
			wait "$pid"
			return 1
		fi
		rig_signal "listen-$name"
		# A client that lost perftest's -R race (below) is gone: its
		# verdict stops the server, which would wait out its limit.
		local verdict=$RIG_TEST_SYNC/$RIG_PEER_ROLE.m.verdict-$name v
		while kill -0 "$pid" 2>/dev/null; do
			if [ -e "$verdict" ]; then
				read -r v <"$verdict.val" || v=""
				[ -n "$v" ] && [ "$v" != no ] && kill "$pid" 2>/dev/null
				break
			fi
			rig_sleep 0.2
		done
		rc=0
		wait "$pid" || rc=$?
	else
		rig_wait "listen-$name" 90 >/dev/null || return 1
		rc=0
		timeout -k 3 "$t" "$@" -p "$PERF_PORT" "$RIG_PEER_IP4" >"$PERF_LOG" 2>&1 || rc=$?
	fi
	sed 's/^/    /' "$PERF_LOG"
	# Guest b asks for one more run (once) when perftest itself lost:
	# - it calibrates its clock at start; on a loaded host the fit can
	#   fail ("Correlation coefficient r^2 ... < 0.9") and it then reports
	#   0.00;
	# - with -R, the server binds and listens for the test QPs only after
	#   the handshake over its first connection, while the client connects
	#   them as soon as the handshake is done: when the client's REQ wins,
	#   the server's ib_cm answers "invalid service ID" (REJ reason 8,
	#   "RDMA_CM_EVENT_REJECTED; error: 8"), and perftest 4.5's own retry
	#   reuses the IDs it has just destroyed and crashes in librdmacm
	#   (Documentation/testing.rst). Any device, rxe too, can lose it.
	local again=""
	if rig_is_b; then
		if [ "${PERF_RETRY:-1}" = 1 ]; then
			if grep -q "^Correlation coefficient" "$PERF_LOG"; then
				again="perftest could not calibrate its clock"
			elif grep -q "RDMA_CM_EVENT_REJECTED; error: 8\." "$PERF_LOG"; then
				again="the server was not listening yet (perftest -R race, REJ invalid service ID)"
			fi
		fi
		rig_signal "verdict-$name" "${again:-no}"
	else
		again=$(rig_wait "verdict-$name" 60) || again=no
	fi
	if [ -n "$again" ] && [ "$again" != no ]; then
		rig_log "$1: $again; once more"
		PERF_RETRY=2 perf_pair "$name-again" "$t" "$@"
		return
	fi
	if [ "$rc" = 124 ]; then
		rig_log "$1 timed out after ${t}s"
	fi
	local err
	err=$(grep -m 2 -iE 'completion with error|failed status|couldn.t|unable to|error' "$PERF_LOG")
	if [ -n "$err" ]; then
		rig_log "$1 reported an error: ${err//$'\n'/ / }"
		[ "$rc" = 0 ] && rc=1
	fi
	[ "$rc" = 0 ] || perf_counters "$1"
	return "$rc"
}

# perf_counters NAME: this guest's non-zero device counters, after a failed
# run (retransmissions, timeouts, NAKs and drops say what went wrong).
perf_counters() {
	local f v line=""
	for f in /sys/class/infiniband/"$RIG_DEV"/ports/1/hw_counters/*; do
		[ -r "$f" ] || continue
		read -r v <"$f" 2>/dev/null || continue
		[ "$v" != 0 ] && line+=" ${f##*/}=$v"
	done
	rig_log "$1: $RIG_DEV counters:${line:- none}"
}

# The numbers after "SIZE ITERATIONS" on the result row of a perftest log.
perf_row() {
	awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 5 { $1 = ""; $2 = ""; print; exit }' "$1"
}

perf_bw_row() {
	local r
	r=$(perf_row "$1" "$2")
	[ -n "$r" ] || return 1
	# shellcheck disable=SC2086
	set -- $r
	echo "$1 $2 $3"
}

perf_lat_row() {
	local r
	r=$(perf_row "$1" "$2")
	[ -n "$r" ] || return 1
	# shellcheck disable=SC2086
	set -- $r
	echo "$1 $2 $3 $4"
}

# is_positive NUMBER: a finite number above zero.
is_positive() {
	awk -v v="$1" 'BEGIN { exit !(v ~ /^[0-9]+(\.[0-9]+)?$/ && v + 0 > 0) }'
}
