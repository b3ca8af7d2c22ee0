#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# XRC (IBA A14): "sroce-verbs-check xrc" on one device (XRC domains, XRC
# SRQs, initiator and target QPs; SENDs into two SRQs through one pair,
# each completing on its SRQ's CQ with the target's QP number; RDMA
# WRITE, READ and atomics with keys of the named SRQ's PD; ibv_open_qp;
# an rkey of another PD, an SRQ of another domain and a missing SRQ
# refused), every byte checked; then rdma-core's ibv_xsrq_pingpong between
# the guests: two client processes on guest b against one server on guest
# a, each of its send QPs sending to the other side's XRC SRQ. rdma_rxe
# has no XRC: sroce-sroce only.
# timeout: 240
# place: 6.12@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
rig_suites sroce-sroce

rig_require_peer
rig_require_cmd ibv_xsrq_pingpong
rig_setup_dev
VC=${SROCE_VERBS_CHECK:-$RIG_REPO/build/tools/verbs-check/sroce-verbs-check}

if rig_is_a; then
	log=$RIG_TEST_OUT/xrc.log
	rc=0
	rig_run 120 "$VC" xrc "$RIG_DEV" >"$log" 2>&1 || rc=$?
	sed 's/^/    /' "$log"
	grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check xrc"
	[ "$rc" = 0 ] || rig_fail "sroce-verbs-check xrc exited $rc: $(grep -m1 '^FAIL' "$log")"
fi
rig_barrier verbs-check 150 || rig_fail "the peer did not get past sroce-verbs-check"

# ibv_xsrq_pingpong: -c clients (server), -n messages each way per
# client, -s bytes; it checks every completion's status and prints
# "success" when both sides are done.
port=18600
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
args=(-d "$RIG_DEV" -g "$gid" -m 1024 -s 8192 -n 50 -p "$port")
if rig_is_a; then
	rig_bg xsrq-server 90 ibv_xsrq_pingpong "${args[@]}" -c 2
	pid=$RIG_BG_PID
	rig_wait_listen "$port" 30 "$pid" || {
		kill "$pid"
		rig_fail "ibv_xsrq_pingpong: the server did not start"
	}
	rig_signal xsrq-listen
	rc=0
	rig_bg_wait "$pid" || rc=$?
	log=$RIG_TEST_OUT/xsrq-server.log
else
	rig_wait xsrq-listen 90 >/dev/null || rig_fail "the server never listened"
	rig_bg xsrq-client1 90 ibv_xsrq_pingpong "${args[@]}" "$RIG_PEER_IP4"
	pid1=$RIG_BG_PID
	rig_bg xsrq-client2 90 ibv_xsrq_pingpong "${args[@]}" "$RIG_PEER_IP4"
	pid2=$RIG_BG_PID
	rc=0
	rig_bg_wait "$pid1" || rc=$?
	rig_bg_wait "$pid2" || rc=$?
	log=$RIG_TEST_OUT/xsrq-client2.log
	grep -q '^success$' "$RIG_TEST_OUT/xsrq-client1.log" || {
		sed 's/^/    /' "$RIG_TEST_OUT/xsrq-client1.log"
		rig_fail "ibv_xsrq_pingpong client 1 did not succeed"
	}
fi
[ "$rc" = 0 ] || {
	sed 's/^/    /' "$log"
	rig_fail "ibv_xsrq_pingpong exited $rc"
}
grep -q '^success$' "$log" || {
	sed 's/^/    /' "$log"
	rig_fail "ibv_xsrq_pingpong did not report success"
}
rig_log "PASS: ibv_xsrq_pingpong, 2 clients x 50 messages of 8 KiB each way"
rig_barrier xsrq-done 60 || rig_fail "the peer did not finish ibv_xsrq_pingpong"
