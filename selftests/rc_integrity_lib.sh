# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Helpers of the sroce-integrity tests (selftests/rc_integrity*.sh and
# selftests/rc_errors*.sh); sourced after lib/guest.sh, not a test itself.
#
# One run of build/tools/integrity/sroce-integrity: guest a is the server,
# guest b the client, whose run parameters both sides use. Each side's
# output goes to $RIG_TEST_OUT/NAME.log and, indented, into the test log;
# when a side fails, its device counters and the end of its kernel log
# follow. SROCE_INTEGRITY_SEED=N in the guests' environment (tools/vm/suite.sh
# -e) replays the runs of a failed test.

# The checkout: the rig says where; else the one this file is in.
INTEG_REPO=${RIG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
INTEG_BIN=${SROCE_INTEGRITY:-$INTEG_REPO/build/tools/integrity/sroce-integrity}

# integ_init: a peer, the tool and this guest's device.
integ_init() {
	rig_require_peer
	[ -x "$INTEG_BIN" ] || rig_skip "no $INTEG_BIN (cmake --build build)"
	rig_setup_dev
}

# integ_type_of ROLE: the device type of guest ROLE (a or b).
integ_type_of() {
	if [ "$1" = "$RIG_ROLE" ]; then
		echo "$RIG_DEV_TYPE"
	else
		echo "$RIG_PEER_DEV_TYPE"
	fi
}

# integ_sroce_requester: the --requester value that makes the sroce
# guest(s) the only requesters (guest a is the server, b the client):
# both, server or client. rdma_rxe's requester on Linux 6.1 stalls after a
# lost packet, so tests that provoke losses or RNR keep rxe a responder.
integ_sroce_requester() {
	local a b
	a=$(integ_type_of a)
	b=$(integ_type_of b)
	if [ "$a" = sroce ] && [ "$b" = sroce ]; then
		echo both
	elif [ "$a" = sroce ]; then
		echo server
	else
		echo client
	fi
}

# integ_need_mtu BYTES: skip unless the port's active MTU is at least BYTES.
integ_need_mtu() {
	local mtu
	mtu=$(rig_active_mtu "$RIG_DEV")
	[ "${mtu:-0}" -ge "$1" ] || rig_skip "$RIG_DEV: active MTU ${mtu:-?}, this test needs $1"
}

# integ_diag: what the device and the kernel say, after a failure.
integ_diag() {
	rig_log "counters: $(rdma statistic show link "$RIG_DEV/1" 2>&1)"
	rig_log "kernel log, last lines:"
	dmesg 2>/dev/null | tail -n 25 | sed 's/^/    /'
}

# integ_run NAME SECONDS FAMILY PORT MODE [ARGS...]: sroce-integrity MODE
# (run or errors) between the guests over the RoCEv2 GID of the IPv4
# (FAMILY 4) or IPv6 (6) address, control connection on TCP PORT, ARGS for
# both sides. Leaves its exit status in INTEG_RC, its output in INTEG_LOG
# (also shown, indented) and its summary line in INTEG_SUMMARY.
integ_run() {
	local name=$1 t=$2 fam=$3 port=$4 mode=$5 own gid pid
	shift 5
	own=$RIG_IP4
	[ "$fam" = 6 ] && own=$RIG_IP6
	gid=$(rig_gid_index "$RIG_DEV" "$own") || rig_fail "$name: no RoCEv2 GID for $own"
	local args=("$mode" -d "$RIG_DEV" -g "$gid" -p "$port" -T "$t" "$@")
	# rdma_rxe on 6.1 never flushes a receive posted after the QP failed.
	if [ "$mode" = errors ] && [ "$RIG_DEV_TYPE" = rxe ]; then
		args+=(--lenient-recv-flush)
	fi
	INTEG_LOG=$RIG_TEST_OUT/$name.log
	INTEG_RC=0
	if rig_is_a; then
		rig_bg "$name" "$t" "$INTEG_BIN" "${args[@]}"
		pid=$RIG_BG_PID
		if ! rig_wait_listen "$port" 30; then
			kill "$pid" 2>/dev/null
			rig_fail "$name: the server did not start"
		fi
		rig_signal "listen-$name"
		rig_bg_wait "$pid" || INTEG_RC=$?
	else
		rig_wait "listen-$name" 60 >/dev/null || rig_fail "$name: the server never listened"
		if [ -n "${SROCE_INTEGRITY_SEED:-}" ]; then
			args+=(--seed "$SROCE_INTEGRITY_SEED")
		fi
		rig_run "$t" "$INTEG_BIN" "${args[@]}" "$RIG_PEER_IP4" >"$INTEG_LOG" 2>&1 ||
			INTEG_RC=$?
	fi
	sed 's/^/    /' "$INTEG_LOG"
	INTEG_SUMMARY=$(grep -m 1 '^sroce-integrity ' "$INTEG_LOG")
	# The first error, for the one-line verdict (CI shows little else).
	INTEG_FIRST_ERROR=$(grep -m 1 '^\[[a-z]*\] ERROR: ' "$INTEG_LOG")
}

# integ_why: why the last integ_run failed, in one line: its exit status,
# its first error, then its summary (CI shows little more than this line).
integ_why() {
	echo "sroce-integrity exited $INTEG_RC${INTEG_FIRST_ERROR:+: first $INTEG_FIRST_ERROR}${INTEG_SUMMARY:+; $INTEG_SUMMARY}"
}

# integ_pair NAME SECONDS FAMILY PORT MODE [ARGS...]: integ_run, which
# must pass on both sides.
integ_pair() {
	local name=$1
	integ_run "$@"
	if [ "$INTEG_RC" != 0 ]; then
		integ_diag
		rig_fail "$name: $(integ_why)"
	fi
	[ -n "$INTEG_SUMMARY" ] || rig_fail "$name: no summary line"
	rig_barrier "done-$name" 60 || rig_fail "$name: the peer did not finish"
}
