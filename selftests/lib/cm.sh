# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# rdma_cm programs between the guests (rdma_cm.sh, vlan.sh, netns_pair.sh);
# sourced after lib/guest.sh.

# cm_case NAME SECONDS PORT "SERVER CMD" "CLIENT CMD": the server in a
# (waited for until it listens on rdma_cm port PORT), the client in b; both
# must exit 0 without reporting an error. The commands are split on blanks.
cm_case() {
	local name=$1 secs=$2 port=$3 rc=0 log pid
	local -a srv_cmd cli_cmd
	read -ra srv_cmd <<<"$4"
	read -ra cli_cmd <<<"$5"
	log=$RIG_TEST_OUT/$name.$RIG_ROLE.log
	if rig_is_a; then
		timeout -k 3 "$secs" "${srv_cmd[@]}" >"$log" 2>&1 &
		pid=$!
		if ! rig_wait_cm_listen "$port" 30 "$pid"; then
			kill "$pid" 2>/dev/null
			rig_fail "$name: the server did not listen"
		fi
		rig_signal "listen-$name"
		wait "$pid" || rc=$?
	else
		rig_wait "listen-$name" 60 >/dev/null || rig_fail "$name: the server never started"
		timeout -k 3 "$secs" "${cli_cmd[@]}" >"$log" 2>&1 || rc=$?
	fi
	sed 's/^/    /' "$log" | tail -n 15
	local bad='error|fail|reject|unreachable|timed? ?out|miscompare|mismatch|invalid'
	local first
	first=$(grep -m 1 -iE "$bad" "$log")
	# The tool's first complaint (or its last word) goes into the verdict
	# line: CI shows little more than that line.
	[ "$rc" = 0 ] || rig_fail "$name: exited $rc: ${first:-$(tail -n 1 "$log")}"
	[ -z "$first" ] || rig_fail "$name: $first"
	rig_barrier "done-$name" 60 || rig_fail "$name: the peer did not finish"
	rig_log "$name: ok"
}

# rping_pair NAME PORT SERVER_ADDR [PREFIX...]: rping -V (50 x 2000 B)
# through cm_case, the server on SERVER_ADDR; PREFIX (e.g. ip netns exec
# NS) runs before rping on both sides.
rping_pair() {
	local name=$1 port=$2 addr=$3 opts
	shift 3
	opts="-V -C 50 -S 2000 -a $addr -p $port"
	cm_case "$name" 60 "$port" "$* rping -s $opts" "$* rping -c $opts"
}
