# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# rping between the guests, for tests that run rdma_cm over addresses of
# their own (vlan.sh, netns_pair.sh); sourced after lib/guest.sh.

# rping_pair NAME PORT SERVER_ADDR [PREFIX...]: rping -V (50 x 2000 B) with
# the server on SERVER_ADDR in guest a, the client in b; PREFIX (e.g. ip
# netns exec NS) runs before rping on both. Both sides must exit 0 without
# an error line.
rping_pair() {
	local name=$1 port=$2 addr=$3 rc=0 log=$RIG_TEST_OUT/$1.$RIG_ROLE.log pid
	local bad='error|fail|reject|miscompare|invalid'
	shift 3
	if rig_is_a; then
		timeout -k 3 60 "$@" rping -s -V -C 50 -S 2000 -a "$addr" -p "$port" >"$log" 2>&1 &
		pid=$!
		rig_wait_cm_listen "$port" 30 || {
			kill "$pid" 2>/dev/null
			rig_fail "$name: the server did not listen"
		}
		rig_signal "listen-$name"
		wait "$pid" || rc=$?
	else
		rig_wait "listen-$name" 60 >/dev/null || rig_fail "$name: the server never started"
		timeout -k 3 60 "$@" rping -c -V -C 50 -S 2000 -a "$addr" -p "$port" >"$log" 2>&1 || rc=$?
	fi
	sed 's/^/    /' "$log" | tail -n 5
	[ "$rc" = 0 ] || rig_fail "$name: rping exited $rc"
	grep -qiE "$bad" "$log" && rig_fail "$name: $(grep -m 1 -iE "$bad" "$log")"
	rig_barrier "done-$name" 60 || rig_fail "$name: the peer did not finish"
	rig_log "$name: ok"
}
