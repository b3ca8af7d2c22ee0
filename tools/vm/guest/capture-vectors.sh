#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest script of tools/vm/capture-vectors.sh: rdma_rxe traffic between the
# two guests, captured with tcpdump in guest a (both directions of the link)
# into $RIG_SHARED/vectors/rxe-rc-OP-vFAM.pcap. Guest a runs the servers,
# guest b the clients; each capture is framed by markers so the two guests
# stay in step.
set -uo pipefail
# shellcheck source=selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"

dest=$RIG_SHARED/vectors
mkdir -p "$dest"
rig_require_cmd tcpdump ibv_rc_pingpong ib_write_bw ib_read_bw ib_atomic_bw
rig_setup_dev rxe
port=18515

# traffic OP GID: one run of the traffic of a vector, as server (a) or
# client (b); the TCP side channel always uses IPv4 (filtered out anyway).
traffic() {
	local op=$1 gid=$2 name=$3 peer=() pid rc=0
	rig_is_b && peer=("$RIG_PEER_IP4")
	local pp=(ibv_rc_pingpong -d "$RIG_DEV" -g "$gid" -m 4096 -p "$port")
	local pt=(-d "$RIG_DEV" -x "$gid" -p "$port" -n 5 -F)
	case "$op" in
	send-small) set -- "${pp[@]}" -s 64 -n 2 ;;
	send) set -- "${pp[@]}" -s 12288 -n 2 ;;
	write-small) set -- ib_write_bw "${pt[@]}" -s 64 ;;
	write) set -- ib_write_bw "${pt[@]}" -s 12288 ;;
	read-small) set -- ib_read_bw "${pt[@]}" -s 64 ;;
	read) set -- ib_read_bw "${pt[@]}" -s 12288 ;;
	fadd) set -- ib_atomic_bw "${pt[@]}" -A FETCH_AND_ADD ;;
	cswap) set -- ib_atomic_bw "${pt[@]}" -A CMP_AND_SWAP ;;
	esac
	if rig_is_a; then
		timeout -k 3 60 "$@" >>"$RIG_TEST_OUT/traffic.log" 2>&1 &
		pid=$!
		rig_wait_listen "$port" 30 || return 1
		rig_signal "listen-$name-$op"
		wait "$pid" || rc=$?
	else
		rig_wait "listen-$name-$op" 60 >/dev/null || return 1
		timeout -k 3 60 "$@" "${peer[@]}" >>"$RIG_TEST_OUT/traffic.log" 2>&1 || rc=$?
	fi
	[ "$rc" = 0 ] || rig_log "$* exited $rc"
	return "$rc"
}

# vector NAME FAMILY OP...: capture the packets of the OPs into NAME.pcap.
vector() {
	local name=$1 fam=$2 own gid pid op ok=0
	shift 2
	own=$RIG_IP4
	[ "$fam" = 6 ] && own=$RIG_IP6
	gid=$(rig_gid_index "$RIG_DEV" "$own") || return 1
	if rig_is_a; then
		tcpdump -i "$RIG_IFACE" -Z root -U -s 9216 -c 64 -w "$dest/$name.pcap" \
			"udp dst port 4791" >"$RIG_TEST_OUT/$name.tcpdump" 2>&1 &
		pid=$!
		until grep -q 'listening on' "$RIG_TEST_OUT/$name.tcpdump"; do
			kill -0 "$pid" 2>/dev/null || return 1
			rig_sleep 0.1
		done
	fi
	for op in "$@"; do
		traffic "$op" "$gid" "$name" || ok=1
	done
	rig_barrier "end-$name" 60 || ok=1
	if rig_is_a; then
		rig_sleep 1
		kill -INT "$pid" 2>/dev/null
		wait "$pid"
		rig_log "$name: $(tail -n 3 "$RIG_TEST_OUT/$name.tcpdump" | tr '\n' ' ')"
	fi
	return "$ok"
}

fail=0
for fam in 4 6; do
	vector "rxe-rc-send-v$fam" "$fam" send-small send || fail=1
	vector "rxe-rc-write-v$fam" "$fam" write-small write || fail=1
	vector "rxe-rc-read-v$fam" "$fam" read-small read || fail=1
	vector "rxe-rc-atomic-v$fam" "$fam" fadd cswap || fail=1
done
exit "$fail"
