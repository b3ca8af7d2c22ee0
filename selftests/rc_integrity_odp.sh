#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# On-demand paging between two guests over a lossy link: sroce-integrity run
# --odp --odp-churn 5 on both sides (every RC opcode, random sizes and
# scatter lists, every byte, READ result and atomic word checked as in
# rc_integrity.sh), every buffer registered on demand, while netem drops 2%
# of each guest's packets and a thread of each tool forks every 5 ms (each
# fork write-protects the tool's pages: the device's mappings are
# invalidated under the traffic and its next WRITE faults in a moved page).
# So a page fault meets a lost request, a lost RNR NAK, a retransmission of
# a request that faulted, a duplicate READ over pages that moved. Besides
# the tool's verdict, on each guest: the loss was met (retransmits), its
# responder faulted (rnr_naks_sent) and its churn forked (the tool fails a
# run without a fork).
# timeout: 240
# place: debug@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# rdma_rxe on 6.1 has no on-demand paging.
rig_suites sroce-sroce

rig_require_cmd tc
integ_init
modprobe sch_netem 2>/dev/null
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
trap rig_netem_restore EXIT

# count NAME: the device's counter NAME.
count() {
	local v
	read -r v <"$hw/$1" || rig_fail "cannot read $hw/$1"
	echo "$v"
}

retrans0=$(count retransmits)
rnr0=$(count rnr_naks_sent)
rig_barrier pre-odp 60 || rig_fail "the peer did not come"
tc qdisc replace dev "$RIG_IFACE" root netem loss 2% ||
	rig_fail "tc qdisc replace dev $RIG_IFACE root netem loss 2% failed"
rig_barrier on-odp 60 || rig_fail "the peer did not apply netem"
# Each wait of the tool (default 15 s) scales as the rig's own waits do: on
# the debug kernel beside CI's other lanes a round of faults, RNR NAKs and
# retransmissions is slow, and a slow round is not what this test checks.
integ_run odp-loss 150 4 18690 run --odp --odp-churn 5 --rounds 16 --max-size 65536 \
	--timeout "$(rig_limit 15)"
rig_netem_restore
if [ "$INTEG_RC" != 0 ]; then
	integ_diag
	rig_fail "odp-loss: $(integ_why)"
fi
[[ "$INTEG_SUMMARY" == *" PASS "* ]] || rig_fail "odp-loss: no PASS summary: $INTEG_SUMMARY"
grep -q '^\[[a-z]*\] --odp-churn: [1-9][0-9]* forks' "$INTEG_LOG" ||
	rig_fail "odp-loss: the tool does not say its churn thread forked"
retrans=$(($(count retransmits) - retrans0))
rnr=$(($(count rnr_naks_sent) - rnr0))
rig_log "$RIG_DEV: retransmits +$retrans, rnr_naks_sent +$rnr; $(grep -m 1 -o -- '--odp-churn: [0-9]* forks' "$INTEG_LOG")"
[ "$retrans" -gt 0 ] || rig_fail "no retransmission under loss 2%: the loss was not met"
[ "$rnr" -gt 0 ] || rig_fail "no RNR NAK sent: this guest's responder never faulted a page in"
rig_barrier done-odp 60 || rig_fail "the peer did not finish"
rig_log "PASS: ODP traffic under loss and invalidation, every byte checked"
