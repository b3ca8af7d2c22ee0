#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UC SEND/RECV between the guests with rdma-core's ibv_uc_pingpong -c
# (buffer contents checked), IPv4 and IPv6 GIDs. UC never retransmits, so
# the messages are kept to one packet at the path MTU: a packet the
# emulated link drops would otherwise stall the run. Guest a is the
# server, guest b the client; each side checks its exit status and that it
# moved exactly SIZE * ITERS * 2 bytes.
# timeout: 200
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"

rig_require_peer
rig_require_cmd ibv_uc_pingpong
rig_setup_dev
mtu=$(rig_active_mtu "$RIG_DEV")
port=18516

# family:size:iterations
for spec in 4:1:100 4:"$mtu":50 6:1024:50; do
	IFS=: read -r fam size iters <<<"$spec"
	own=$RIG_IP4
	[ "$fam" = 6 ] && own=$RIG_IP6
	gid=$(rig_gid_index "$RIG_DEV" "$own") || rig_fail "no RoCEv2 GID for $own"
	args=(-d "$RIG_DEV" -g "$gid" -c -s "$size" -n "$iters" -m "$mtu" -p "$port")
	step=ipv$fam-$size
	log=$RIG_TEST_OUT/$step.log
	rc=0
	if rig_is_a; then
		rig_bg "$step" 60 ibv_uc_pingpong "${args[@]}"
		pid=$RIG_BG_PID
		rig_wait_listen "$port" 30 || { kill "$pid"; rig_fail "$step: the server did not start"; }
		rig_signal "listen-$step"
		rig_bg_wait "$pid" || rc=$?
	else
		rig_wait "listen-$step" 90 >/dev/null || rig_fail "$step: the server never listened"
		rig_run 60 ibv_uc_pingpong "${args[@]}" "$RIG_PEER_IP4" >"$log" 2>&1 || rc=$?
	fi
	[ "$rc" = 0 ] || { sed 's/^/    /' "$log"; rig_fail "$step: ibv_uc_pingpong exited $rc"; }
	grep -q "invalid data" "$log" && rig_fail "$step: received data differs"
	want=$((size * iters * 2))
	grep -q "^$want bytes in" "$log" || { sed 's/^/    /' "$log"; rig_fail "$step: did not move $want bytes"; }
	rig_barrier "done-$step" 60 || rig_fail "the peer did not finish $step"
done
