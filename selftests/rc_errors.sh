#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC error paths between the guests: sroce-integrity errors, each case on a
# fresh QP pair, each guest once requester and once responder, over the
# RoCEv2 GID of the IPv4 address. The work request under test, and what
# the requester must get (IBA spec; rdma_rxe 6.1's own statuses accepted
# and reported where it differs):
#   RDMA WRITE with a wrong rkey, WRITE and READ across the end of an MR,
#   WRITE to an MR without REMOTE_WRITE, READ from one without REMOTE_READ:
#     IBV_WC_REM_ACCESS_ERR;
#   FETCH_AND_ADD at an unaligned address: IBV_WC_REM_INV_REQ_ERR (or the
#     provider refuses it at post time, as rdma-core's rxe and sroce do);
#   SEND longer than the receive: IBV_WC_REM_INV_REQ_ERR, the receive
#     IBV_WC_LOC_LEN_ERR;
#   SEND with no receive and rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR;
#   SEND with the receive posted 1 s late and rnr_retry 7: success;
#   SEND with a bogus lkey: IBV_WC_LOC_PROT_ERR;
#   RDMA WRITE through a memory window the responder has unbound (type 1)
#     or invalidated with LOCAL_INV (type 2), or that a SEND with
#     Invalidate from the requester invalidated (type 2; a WRITE through it
#     before succeeds and lands, the receive reports the invalidated rkey):
#     IBV_WC_REM_ACCESS_ERR.
# After each error the requester's QP must be in ERR (ibv_query_qp), the
# SEND behind the bad request and a SEND and a receive posted afterwards
# must complete with IBV_WC_WR_FLUSH_ERR; the responder's QP must be in ERR
# after its own (class C) errors, with its receives flushed, and in RTS
# otherwise; the memory the bad request aimed at must be unchanged.
# On an sroce guest the NAK counters (hw_counters) count them by kind: at
# least 8 access_naks_sent (the wrong rkey, the two ends of an MR, the two
# access rights, the three windows; as responder) and 1 inv_req_naks_sent
# (the long SEND), err_naks_sent grown by exactly the kinds' sum; with an
# sroce peer the same numbers received (access_naks_rcvd, inv_req_naks_rcvd).
# timeout: 450
# place: debug@gate sroce-rxe@1 6.12@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Each guest is once requester and once responder: rxe-sroce would repeat
# sroce-rxe.
rig_suites sroce-sroce sroce-rxe rxe-rxe

integ_init
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
naks=(err_naks_sent access_naks_sent inv_req_naks_sent op_naks_sent
	err_naks_rcvd access_naks_rcvd inv_req_naks_rcvd op_naks_rcvd)
declare -A n0
if [ "$RIG_DEV_TYPE" = sroce ]; then
	for c in "${naks[@]}"; do
		n0[$c]=$(cat "$hw/$c") || rig_fail "no counter $c"
	done
fi
integ_pair errors-ipv4 120 4 18617 errors --timeout 5
if [ "$RIG_DEV_TYPE" = sroce ]; then
	declare -A d
	line=""
	for c in "${naks[@]}"; do
		v=$(cat "$hw/$c")
		d[$c]=$((v - ${n0[$c]}))
		line+=" $c +${d[$c]}"
	done
	rig_log "NAK counters:$line"
	for dir in sent rcvd; do
		[ "$dir" = rcvd ] && [ "$RIG_PEER_DEV_TYPE" != sroce ] && continue
		[ "${d[access_naks_$dir]}" -ge 8 ] || rig_fail "access_naks_$dir +${d[access_naks_$dir]}, want >= 8"
		[ "${d[inv_req_naks_$dir]}" -ge 1 ] || rig_fail "inv_req_naks_$dir +${d[inv_req_naks_$dir]}, want >= 1"
		a=${d[access_naks_$dir]} i=${d[inv_req_naks_$dir]} o=${d[op_naks_$dir]}
		sum=$((a + i + o))
		[ "${d[err_naks_$dir]}" = "$sum" ] ||
			rig_fail "err_naks_$dir +${d[err_naks_$dir]}, not the kinds' sum $sum"
	done
fi
