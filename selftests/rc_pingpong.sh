#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC SEND/RECV between the guests with rdma-core's ibv_rc_pingpong, for
# message sizes from 1 B to 1 MiB over the RoCEv2 GID of the IPv4 address,
# one size over the IPv6 GID and one at path MTU 1024 (the tool's own TCP
# exchange of QP numbers and GIDs always goes over IPv4: its server listens
# on IPv4 only). Guest a is the server, guest b the client.
# -c makes the server look at the first byte of each page of its buffer
# ("invalid data in page" is a failure, although the tool still exits 0):
# a spot check, not a data check (rc_integrity.sh checks every byte). Each
# side checks its exit status and that it moved exactly SIZE * ITERS * 2
# bytes.
# timeout: 240
# place: stock@1 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it.
rig_suites sroce-sroce sroce-rxe rxe-rxe

rig_require_peer
rig_require_cmd ibv_rc_pingpong
rig_setup_dev
mtu=$(rig_active_mtu "$RIG_DEV")
port=18515

# family:size:iterations[:path MTU, default the port's active MTU]
for spec in 4:1:200 4:4096:100 4:65536:20 4:1048576:5 6:4096:50 4:65536:20:1024; do
	IFS=: read -r fam size iters pmtu <<<"$spec"
	pmtu=${pmtu:-$mtu}
	own=$RIG_IP4
	[ "$fam" = 6 ] && own=$RIG_IP6
	gid=$(rig_gid_index "$RIG_DEV" "$own") || rig_fail "no RoCEv2 GID for $own"
	args=(-d "$RIG_DEV" -g "$gid" -c -s "$size" -n "$iters" -m "$pmtu" -p "$port")
	step=ipv$fam-$size
	[ "$pmtu" = "$mtu" ] || step=$step-mtu$pmtu
	log=$RIG_TEST_OUT/$step.log
	rc=0
	if rig_is_a; then
		rig_bg "$step" 90 ibv_rc_pingpong "${args[@]}"
		pid=$RIG_BG_PID
		rig_wait_listen "$port" 30 || { kill "$pid"; rig_fail "$step: the server did not start"; }
		rig_signal "listen-$step"
		rig_bg_wait "$pid" || rc=$?
	else
		rig_wait "listen-$step" 90 >/dev/null || rig_fail "$step: the server never listened"
		rig_run 90 ibv_rc_pingpong "${args[@]}" "$RIG_PEER_IP4" >"$log" 2>&1 || rc=$?
	fi
	sed 's/^/    /' "$log"
	[ "$rc" = 0 ] || rig_fail "$step: ibv_rc_pingpong exited $rc"
	if grep -qi 'invalid data' "$log"; then
		rig_fail "$step: the received buffer is wrong"
	fi
	bytes=$((size * iters * 2))
	line=$(grep -E "^$bytes bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec" "$log") ||
		rig_fail "$step: no \"$bytes bytes in\" line"
	usec=$(sed -n "s/^$iters iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter$/\1/p" "$log")
	[ -n "$usec" ] || rig_fail "$step: no \"$iters iters in\" line"
	if rig_is_b; then
		mbit=$(echo "$line" | awk '{ print $(NF - 1) }')
		[ "$pmtu" = "$mtu" ] && rig_metric "rc_pingpong_ipv${fam}_${size}B_rtt" "$usec" usec
		if [ "$size" -ge 4096 ] && [ "$pmtu" = "$mtu" ]; then
			rig_metric "rc_pingpong_ipv${fam}_${size}B_bw" "$mbit" Mbit/s
		fi
	fi
	rig_barrier "done-$step" 60 || rig_fail "$step: the peer did not finish"
done
