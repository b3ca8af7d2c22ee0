#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Responses in request order behind a long RDMA READ (IBA 9.7.5.1):
# sroce-integrity order (tools/integrity/order.cpp), each case on a fresh RC
# QP pair, each guest taking turns as requester. One post: a 1 MiB READ
# followed by FETCH_AND_ADD, by CMP_AND_SWAP, by a SEND, by an RDMA WRITE,
# and a mixed chain of three READs, three atomics, a SEND and a WRITE; and
# a BIND_MW (a memory operation: no packet) as the last WQE behind a READ
# or an atomic, which completes once they are answered. Every
# completion must be a success, in the order posted; every byte each READ
# brings back, each atomic's original value and the atomic words' new
# values, the SEND's receive and the WRITE's bytes are checked. No
# retransmission may be counted on either guest during a case (sroce:
# retransmits, ack_timeouts, sequence NAKs, duplicates; rdma_rxe: its
# duplicate, sequence and retry counters): an answer that overtakes the
# READ's responses makes the requester send the READ again. rxe-rxe is the
# reference (rdma_rxe answers a READ in full before it looks at the next
# request).
# timeout: 120
# place: stock@1 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Each guest requests in turn: rxe-sroce would repeat sroce-rxe.
rig_suites sroce-sroce sroce-rxe rxe-rxe

integ_init
integ_pair order-ipv4 90 4 18624 order --timeout 10
grep -q '^sroce-integrity order: PASS .*cases=24 failed=0 skipped=0' "$INTEG_LOG" ||
	rig_fail "not all 24 cases ran and passed: $INTEG_SUMMARY"
