#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# perftest (ib_*_bw, ib_*_lat) between the two guests, for guest tests and
# the benchmark (tools/bench/guest.sh). Source after lib/guest.sh. Guest a
# runs the server, guest b the client.
#
#   perf_pair NAME SECONDS TOOL ARG...
#       runs TOOL ARG... as server (a) and client of $RIG_PEER_IP4 (b) with
#       the same arguments and -p $PERF_PORT; the output of this guest's
#       side is left in $PERF_LOG; returns the tool's exit status (1 if the
#       halves could not meet). NAME must be unique within the test (it
#       names the markers and the log).
#   perf_row LOG SIZE         -> the numbers after "SIZE ITERATIONS" of the
#                                result row (perftest's columns)
#   perf_fields N LOG SIZE    -> the first N of those
#   perf_bw_row LOG SIZE      -> "PEAK AVG MSGRATE" of the result row
#   perf_lat_row LOG SIZE     -> "MIN MAX TYPICAL AVG" of the result row
#   is_positive NUMBER        -> a finite decimal number above zero
#
# Optional, for callers that measure around a run (the benchmark):
#   PERF_PORT         the TCP port (default 18515), read at each call
#   PERF_LOG_DIR      the logs' folder (default $RIG_TEST_OUT); the log of a
#                     run is $PERF_LOG_DIR/NAME.ROLE.log
#   PERF_LISTEN_WAIT  seconds guest a waits for its server to listen (30)
#   PERF_HOOK         a function perf_pair calls with "start" before each
#                     attempt, "run PID" once TOOL runs (in guest a: once it
#                     listens), "end" when it has exited
# The helpers the checks use run on builtins only: under TCG every exec
# costs a tenth of a second or more.

PERF_PORT=${PERF_PORT:-18515}

# perf_hook PHASE [PID]: the caller's PERF_HOOK, if any.
perf_hook() {
	[ -z "${PERF_HOOK:-}" ] || "$PERF_HOOK" "$@"
}

perf_pair() {
	local name=$1 t=$2 rc=0 pid met=1
	shift 2
	PERF_LOG=${PERF_LOG_DIR:-$RIG_TEST_OUT}/$name.$RIG_ROLE.log
	perf_hook start
	if rig_is_a; then
		timeout -k 3 "$t" "$@" -p "$PERF_PORT" >"$PERF_LOG" 2>&1 &
		pid=$!
		# With -R the server listens through rdma_cm, not on TCP.
		local listen=rig_wait_listen
		[[ " $* " == *" -R "* ]] && listen=rig_wait_cm_listen
		if "$listen" "$PERF_PORT" "${PERF_LISTEN_WAIT:-30}" "$pid"; then
			rig_signal "listen-$name"
			perf_hook run "$pid"
			[ "$listen" = rig_wait_cm_listen ] && perf_watch_verdict "$name" "$pid"
		else
			kill "$pid" 2>/dev/null
			met=0
		fi
		wait "$pid" || rc=$?
		# Guest b decides on one more run; a server that could not
		# calibrate its clock reports 0.00 while the client is fine.
		if grep -q "^Correlation coefficient" "$PERF_LOG"; then
			rig_signal "server-$name" uncalibrated
		else
			rig_signal "server-$name" ok
		fi
	elif rig_wait "listen-$name" 90 >/dev/null; then
		timeout -k 3 "$t" "$@" -p "$PERF_PORT" "$RIG_PEER_IP4" >"$PERF_LOG" 2>&1 &
		pid=$!
		perf_hook run "$pid"
		wait "$pid" || rc=$?
	else
		met=0
	fi
	perf_hook end
	[ "$met" = 1 ] || return 1
	sed 's/^/    /' "$PERF_LOG"
	# Guest b asks for one more run (twice at most) when perftest itself
	# lost:
	# - it calibrates its clock at start; on a loaded host the fit can
	#   fail ("Correlation coefficient r^2 ... < 0.9") and it then reports
	#   0.00 (guest a's server tells guest b so);
	# - with -R, the server binds and listens for the test QPs only after
	#   the handshake over its first connection, while the client connects
	#   them as soon as the handshake is done: when the client's REQ wins,
	#   the server's ib_cm answers "invalid service ID" (REJ reason 8,
	#   "RDMA_CM_EVENT_REJECTED; error: 8"), and perftest 4.5's own retry
	#   reuses the IDs it has just destroyed and crashes in librdmacm
	#   (Documentation/testing.rst). Any device, rxe too, can lose it.
	local again="" try=${PERF_RETRY:-1}
	if rig_is_b; then
		# Up to three runs: a reject twice in a row was seen in a
		# sroce-rxe run beside a busy host (an -R server on a slow
		# guest, rxe's fast client).
		if [ "$try" -lt 3 ]; then
			if grep -q "^Correlation coefficient" "$PERF_LOG"; then
				again="perftest could not calibrate its clock"
			elif grep -q "RDMA_CM_EVENT_REJECTED; error: 8\." "$PERF_LOG"; then
				again="the server was not listening yet (perftest -R race, REJ invalid service ID)"
			elif [ "$(rig_wait "server-$name" 60)" = uncalibrated ]; then
				# (Not waited for after a reject: that server
				# waits for this verdict to be stopped.)
				again="perftest's server could not calibrate its clock"
			fi
		fi
		rig_signal "verdict-$name" "${again:-no}"
	else
		# Up to 2 minutes: guest b may first stop a profile (PERF_HOOK).
		again=$(rig_wait "verdict-$name" 120) || again=no
	fi
	if [ -n "$again" ] && [ "$again" != no ]; then
		rig_log "$1: $again; once more"
		PERF_RETRY=$((try + 1)) perf_pair "$name-again$try" "$t" "$@"
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

# perf_watch_verdict NAME PID (guest a, with -R): until server PID ends,
# watch for the client's verdict on run NAME. A client that lost perftest's
# -R race (perf_pair) is gone: its verdict stops the server, which would
# wait out its limit. Without -R a client that asks for one more run has
# run to its end, and so does the server: it is waited for without
# polling (no wakeups during the benchmark's measurements).
perf_watch_verdict() {
	local verdict=$RIG_TEST_SYNC/$RIG_PEER_ROLE.m.verdict-$1 v
	while kill -0 "$2" 2>/dev/null; do
		if [ -e "$verdict" ]; then
			read -r v <"$verdict.val" || v=""
			[ -n "$v" ] && [ "$v" != no ] && kill "$2" 2>/dev/null
			break
		fi
		rig_sleep 0.2
	done
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

# The numbers after "SIZE ITERATIONS" on the result row of a perftest log:
# the first line of five fields or more whose first is SIZE and second a
# whole number.
perf_row() {
	local f
	while read -ra f; do
		if [ "${f[0]:-}" = "$2" ] && [[ "${f[1]:-}" =~ ^[0-9]+$ ]] && [ ${#f[@]} -ge 5 ]; then
			echo "${f[*]:2}"
			return 0
		fi
	done <"$1"
	return 1
}

# perf_fields N LOG SIZE: the first N numbers of the result row.
perf_fields() {
	local f
	read -ra f <<<"$(perf_row "$2" "$3")"
	[ ${#f[@]} -gt 0 ] || return 1
	echo "${f[*]:0:$1}"
}

perf_bw_row() { perf_fields 3 "$@"; }
perf_lat_row() { perf_fields 4 "$@"; }

# is_positive NUMBER: a finite decimal number above zero.
is_positive() {
	[[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] && [[ "$1" =~ [1-9] ]]
}
