#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Hostile user space against sroce's mapped rings ("sroce-verbs-check
# ring"): the tool finds the rings of its own QPs in its address space,
# writes forged send WQEs (opcode 0xff, num_sge 1000, an inline length of
# 2^31 - 1, a 4 GiB SGE, unknown flag bits, an lkey of another PD) and
# impossible producer indices (SQ past the end or behind cons, RQ past the
# end), rings the doorbell itself, and checks the kernel's answer: the
# error completion the IBA gives a malformed WQE, or, for a broken index,
# the QP in ERR with IBV_EVENT_QP_FATAL (and the peer's SEND NAKed with
# IBV_WC_REM_OP_ERR). An SQ prod moved back behind WQEs the kernel has
# already fetched is refused the same way, and no slot past it is ever sent
# or completed. 2^17 send and 2^17 receive WQEs written into the rings are
# flushed by moving the QP to ERR, every one with IBV_WC_WR_FLUSH_ERR, in
# order, once; the largest rings (2^20 + 2^20) flushed twice over
# must not keep a 1 ms sleeper in the process waiting 100 ms (not with
# SROCE_SHORT=1, below). The SQ's
# SROCE_RING_F_FLUSH bit must survive a doorbell rung in another thread
# while the QP is cycled RTS -> ERR -> RESET (a race that needs two CPUs to
# show). A QP pair left alone must still work afterwards, the
# other PD's buffer stays untouched, ibv_rc_pingpong pairs in another
# process on the same device keep passing throughout (each pair: exit
# status, bytes moved, no "invalid data" from -c's first-byte-per-page
# check), and
# the kernel log stays clean (the rig's check). The object counts of "rdma resource show" return to their
# baseline when the tool has exited.
# timeout: 240
# place: debug-1@gate smp2@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
rig_require_cmd ibv_rc_pingpong
base=$(ctrl_counts "$CTRL_DEV")
gid=$(rig_gid_index "$CTRL_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"

# bystander: other processes' traffic on the same device while the rings
# are attacked: ibv_rc_pingpong pairs over the loopback path, one after
# another until $RIG_TEST_OUT/stop exists, each of 100 round trips of
# 4096 bytes (-c: the server looks at the first byte of each page).
# Prints the number of pairs; fails on the first pair that fails: an exit
# status, a byte count other than 819200 on either side, or "invalid
# data" (which ibv_rc_pingpong prints and still exits 0). The failed
# pair's logs are kept.
bystander() {
	local n=0 port=18711 srv log side
	while [ ! -e "$RIG_TEST_OUT/stop" ]; do
		ibv_rc_pingpong -d "$CTRL_DEV" -g "$gid" -p "$port" -n 100 -c \
			>"$RIG_TEST_OUT/bystander-server.log" 2>&1 &
		srv=$!
		rig_wait_listen "$port" 30 || return 1
		if ! timeout 60 ibv_rc_pingpong -d "$CTRL_DEV" -g "$gid" -p "$port" -n 100 -c \
			"$RIG_IP4" >"$RIG_TEST_OUT/bystander-client.log" 2>&1 || ! wait "$srv"; then
			echo "pair $n failed"
			return 1
		fi
		for side in server client; do
			log=$RIG_TEST_OUT/bystander-$side.log
			if grep -qi 'invalid data' "$log" || ! grep -q '^819200 bytes in ' "$log"; then
				echo "pair $n: the $side's buffer or byte count is wrong:"
				cat "$log"
				return 1
			fi
		done
		n=$((n + 1))
	done
	echo "$n pairs"
}
bystander >"$RIG_TEST_OUT/bystander.log" 2>&1 &
by=$!
# The first pair must be moving before the attack starts.
rig_wait_listen 18711 30 || rig_fail "the bystander's ibv_rc_pingpong did not start"

log=$RIG_TEST_OUT/ring.log
rc=0
# SROCE_SHORT=1 (the debug kernel's run, tools/test-all.sh): without the two
# long flushes (2 minutes there; the forged indices still flush short rings,
# and the smp2 run has the long ones).
quick=()
if [ "${SROCE_SHORT:-0}" = 1 ]; then
	quick=(--quick)
	rig_log "SROCE_SHORT=1: sroce-verbs-check ring --quick"
fi
rig_run 90 "$CTRL_VC" ring "$CTRL_DEV" "${quick[@]}" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
touch "$RIG_TEST_OUT/stop"
by_rc=0
wait "$by" || by_rc=$?
rig_log "bystander (another process, same device): $(cat "$RIG_TEST_OUT/bystander.log")"
if [ "$by_rc" != 0 ]; then
	sed 's/^/    /' "$RIG_TEST_OUT/bystander-server.log" "$RIG_TEST_OUT/bystander-client.log"
	rig_fail "another process's ibv_rc_pingpong failed while the rings were attacked"
fi
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check ring"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check ring exited $rc"
after=$(ctrl_counts "$CTRL_DEV")
[ "$after" = "$base" ] || rig_fail "object counts did not return to baseline: '$base' -> '$after'"
rig_log "object counts back to baseline: $after"
