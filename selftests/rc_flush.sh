#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RDMA FLUSH (IBA Annex A19) between the guests: sroce-integrity flush, each
# case on a fresh RC QP pair. The requester is the sroce guest (its
# provider's sroce_wr_flush(): rdma-core 44 has no ibv_wr_flush()); the
# responder grants FLUSH with IB_ACCESS_FLUSH_GLOBAL on its region and QP,
# which the core knows from Linux 6.2 on.
#   good: a WRITE, a FLUSH of that range (of the whole region; of 0 bytes)
#     and a READ back in one post: each completes with success in order,
#     the FLUSH with opcode 8 (IBV_WC_FLUSH) and byte_len 0, the READ brings
#     back every byte, and the responder finds exactly those bytes in its
#     region, zeros elsewhere; an sroce responder's "flushes" counter rises
#     by one;
#   bad: FLUSH of a region without FLUSH access, or across its end, or for
#     persistence to a QP that grants it (no region can):
#     IBV_WC_REM_ACCESS_ERR; FLUSH to a QP without FLUSH access, or for
#     persistence to a QP that does not grant it: IBV_WC_REM_INV_REQ_ERR. The
#     SEND behind it is flushed, both QPs end in ERR, memory is untouched.
# sroce-rxe makes rdma_rxe the responder (the interop check; rxe 6.2-6.12
# checks FLUSH against its own variant of the ICRC, which the sroce
# requester learns per QP: sroce_sq.c); rxe cannot be the requester with
# rdma-core 44. sroce-sroce runs a second time with the requester sending
# rxe's ICRC variant (flush_icrc=2): the sroce responder must take it at
# once (no retransmission), as it would from rxe. On Linux 6.1 neither device can be a
# FLUSH target: the test is skipped there, with the reason.
# timeout: 90
# place: 6.12@3 6.12-rxe@3 cross@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
rig_suites sroce-sroce sroce-rxe

integ_init

# flush_run NAME: one run of every case; fails the test unless all pass.
flush_run() {
	local name=$1
	integ_run "$name" 60 4 18623 flush --timeout 5
	if [ "$INTEG_RC" = 4 ]; then
		rig_barrier "done-$name" 60 || true
		rig_skip "${INTEG_SUMMARY#*SKIP }"
	fi
	if [ "$INTEG_RC" != 0 ]; then
		integ_diag
		rig_fail "$name: $(integ_why)"
	fi
	grep -q '^sroce-integrity flush: PASS .*cases=8 failed=0' "$INTEG_LOG" ||
		rig_fail "$name: not all 8 cases ran and passed: $INTEG_SUMMARY"
	rig_barrier "done-$name" 60 || rig_fail "$name: the peer did not finish"
}

retransmits() {
	local v
	v=$(cat "/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters/retransmits") &&
		[[ "$v" =~ ^[0-9]+$ ]] || rig_fail "cannot read the retransmits counter"
	echo "$v"
}

flush_run flush-ipv4
[ "$RIG_DEV_TYPE" = sroce ] && [ "$RIG_PEER_DEV_TYPE" = sroce ] || exit 0

# sroce-sroce: again with rdma_rxe's variant of the FLUSH ICRC on both
# sides (module parameter flush_icrc=2), which our receive path takes as
# rxe sends it: each FLUSH must be answered at the first try, with no
# retransmission on either guest (whichever of them requests: on a 6.1 and
# 6.12 pair only the 6.12 guest can be the target).
param=/sys/module/sroce/parameters/flush_icrc
[ -w "$param" ] || rig_fail "no $param"
trap 'echo 0 >"$param"' EXIT
before=$(retransmits) || exit 1
echo 2 >"$param"
flush_run flush-rxe-icrc
echo 0 >"$param"
after=$(retransmits) || exit 1
rig_log "retransmits with rxe's FLUSH ICRC: $((after - before))"
[ "$after" = "$before" ] || rig_fail "FLUSHes with rxe's ICRC needed retransmissions"
