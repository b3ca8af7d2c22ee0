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
# timeout: 150
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Each guest is once requester and once responder: rxe-sroce would repeat
# sroce-rxe.
rig_suites sroce-sroce sroce-rxe rxe-rxe

integ_init
integ_pair errors-ipv4 120 4 18617 errors --timeout 5
