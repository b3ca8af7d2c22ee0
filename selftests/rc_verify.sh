#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Every byte checked: RC SEND both ways, RDMA WRITE (and the bytes around
# its target), RDMA READ, FETCH_AND_ADD and CMP_AND_SWAP between the guests,
# for messages of 1 B, 1000 B, 4096 B (one MTU), 4097 B, 64 KiB and 1 MiB,
# with random payloads (lib/rc_verify.py, on rdma-core's pyverbs). Guest a
# is the server, guest b the client; both must report every check passed.
# Run over the IPv4 RoCEv2 GID, then with 4 KiB over the IPv6 one.
# timeout: 240
# place: sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# An oracle independent of sroce-integrity, where it counts: against rxe
# (sroce-rxe). Traffic goes both ways in one run, so rxe-sroce would repeat
# it; sroce-sroce has the integrity tests.
rig_suites sroce-rxe rxe-rxe

rig_require_peer
[ -x /usr/bin/python3 ] || rig_skip "no /usr/bin/python3"
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || rig_skip "python3-pyverbs not installed"
rig_setup_dev
port=18600
tool=$(dirname "$0")/lib/rc_verify.py

for spec in 4:1,1000,4096,4097,65536,1048576 6:4096; do
	fam=${spec%%:*}
	sizes=${spec#*:}
	own=$RIG_IP4
	[ "$fam" = 6 ] && own=$RIG_IP6
	gid=$(rig_gid_index "$RIG_DEV" "$own") || rig_fail "no RoCEv2 GID for $own"
	args=(--dev "$RIG_DEV" --gid "$gid" --port "$port" --seed "$RANDOM")
	log=$RIG_TEST_OUT/ipv$fam.log
	rc=0
	if rig_is_a; then
		rig_bg "ipv$fam" 150 /usr/bin/python3 "$tool" --role server "${args[@]}"
		pid=$RIG_BG_PID
		rig_wait_listen "$port" 60 || { kill "$pid"; rig_fail "ipv$fam: the server did not start"; }
		rig_signal "listen-$fam"
		rig_bg_wait "$pid" || rc=$?
	else
		rig_wait "listen-$fam" 90 >/dev/null || rig_fail "ipv$fam: the server never listened"
		rig_run 150 /usr/bin/python3 "$tool" --role client --peer "$RIG_PEER_IP4" \
			--sizes "$sizes" "${args[@]}" >"$log" 2>&1 || rc=$?
	fi
	sed 's/^/    /' "$log"
	[ "$rc" = 0 ] || rig_fail "ipv$fam: rc_verify.py exited $rc"
	grep -q 'all checks passed' "$log" || rig_fail "ipv$fam: rc_verify.py did not report success"
	if rig_is_b; then
		rig_metric "rc_verify_ipv${fam}_checks" "$(grep -c '^ok ' "$log")" checks
	fi
	rig_barrier "done-$fam" 60 || rig_fail "ipv$fam: the peer did not finish"
done
