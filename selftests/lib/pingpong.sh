# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# rdma-core's ibv_*_pingpong between the guests, for selftests/uc_pingpong.sh,
# ud_pingpong.sh, counters.sh, debugfs_faults.sh and others; sourced after
# lib/guest.sh, not a test.

# pingpong_steps TOOL PORT SPEC... [-- ARGS...]: one run of TOOL -c (which
# checks the first byte of each page of a received buffer, no more: the
# project's own tools check data byte for byte) per SPEC "FAMILY:SIZE:ITERS"
# over the RoCEv2 GID of the
# IPv4 (4) or IPv6 (6) address, with ARGS for both sides. Guest a is the
# server, guest b the client; each side checks its exit status, that no
# invalid data was reported and that it moved exactly SIZE * ITERS * 2 bytes.
# The addresses are $RIG_IP4/$RIG_IP6 (the GID's) and $RIG_PEER_IP4 (the
# out-of-band TCP exchange); $PP_TAG, when set, prefixes the step names,
# $PP_EXEC (words, e.g. "ip netns exec ctr") the commands, and $PP_LIMIT
# (default 60) is each run's time limit in seconds.
pingpong_steps() {
	local tool=$1 port=$2 spec fam size iters own gid step log rc pid want
	local -a specs=() extra=() wrap=()
	read -ra wrap <<<"${PP_EXEC:-}"
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		specs+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift && extra=("$@")
	for spec in "${specs[@]}"; do
		IFS=: read -r fam size iters <<<"$spec"
		own=$RIG_IP4
		[ "$fam" = 6 ] && own=$RIG_IP6
		gid=$(rig_gid_index "$RIG_DEV" "$own") || rig_fail "no RoCEv2 GID for $own"
		local -a args=(-d "$RIG_DEV" -g "$gid" -c -s "$size" -n "$iters" -p "$port" "${extra[@]}")
		step=${PP_TAG:+$PP_TAG-}ipv$fam-$size
		log=$RIG_TEST_OUT/$step.log
		rc=0
		if rig_is_a; then
			rig_bg "$step" "${PP_LIMIT:-60}" "${wrap[@]}" "$tool" "${args[@]}"
			pid=$RIG_BG_PID
			rig_wait_listen "$port" 30 "$pid" || {
				kill "$pid"
				rig_fail "$step: the server did not start"
			}
			rig_signal "listen-$step"
			rig_bg_wait "$pid" || rc=$?
		else
			rig_wait "listen-$step" 90 >/dev/null || rig_fail "$step: the server never listened"
			rig_run "${PP_LIMIT:-60}" "${wrap[@]}" "$tool" "${args[@]}" "$RIG_PEER_IP4" >"$log" 2>&1 || rc=$?
		fi
		[ "$rc" = 0 ] || {
			sed 's/^/    /' "$log"
			rig_fail "$step: $tool exited $rc"
		}
		grep -q "invalid data" "$log" && rig_fail "$step: received data differs"
		want=$((size * iters * 2))
		grep -q "^$want bytes in" "$log" || {
			sed 's/^/    /' "$log"
			rig_fail "$step: did not move $want bytes"
		}
		rig_barrier "done-$step" 60 || rig_fail "the peer did not finish $step"
	done
}

# pp_bg_start NAME SIZE ITERS: ibv_rc_pingpong -c (path MTU 1024, the GID
# of $RIG_IP4) in the background on TCP port $PP_PORT (then the next one):
# a serves, b connects once a listens; its pid is left in PP_PID.
# pp_bg_wait NAME SIZE ITERS: it exited 0, moved SIZE * ITERS * 2 bytes and
# -c's spot check (first byte of each page) found nothing; then both sides
# wait for each other.
PP_PORT=${PP_PORT:-18870}
pp_bg_start() {
	local name=$1 p=$PP_PORT gid
	gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
	local -a args=(-d "$RIG_DEV" -g "$gid" -c -s "$2" -n "$3" -m 1024 -p "$p")
	PP_PORT=$((PP_PORT + 1))
	if rig_is_a; then
		rig_bg "$name" 120 ibv_rc_pingpong "${args[@]}"
		PP_PID=$RIG_BG_PID
		rig_wait_listen "$p" 30 "$PP_PID" || rig_fail "$name: the server did not start"
		rig_signal "listen-$name"
	else
		rig_wait "listen-$name" 60 >/dev/null || rig_fail "$name: the server never listened"
		rig_bg "$name" 120 ibv_rc_pingpong "${args[@]}" "$RIG_PEER_IP4"
		PP_PID=$RIG_BG_PID
	fi
}
pp_bg_wait() {
	local name=$1 log=$RIG_TEST_OUT/$1.log want=$(($2 * $3 * 2))
	rig_bg_wait "$PP_PID" || { sed 's/^/    /' "$log"; rig_fail "$name: ibv_rc_pingpong failed"; }
	grep -qi 'invalid data' "$log" && rig_fail "$name: a received buffer is wrong"
	grep -q "^$want bytes in " "$log" || rig_fail "$name: not $want bytes moved"
	rig_barrier "done-$name" 60 || rig_fail "$name: the peer did not finish"
}
