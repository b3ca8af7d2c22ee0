#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Soak: mixed RC traffic (every opcode, both directions, every byte and
# atomic result checked by sroce-integrity) for SROCE_SOAK_SECONDS (default
# 20; the long target is 600: tools/vm/suite.sh -e SROCE_SOAK_SECONDS=600)
# under 5% loss (netem on both guests' link), then a leak check on each
# guest: the RDMA object counts of `rdma resource show` back to what they
# were, and unreclaimable slab and vmalloc use back to their level after a
# warm-up run, within a small tolerance for the kernel's own caches.
# sroce-sroce only: the peer must retransmit too (rxe's requester stalls
# after losses on 6.1).
# timeout: 900
# place: stock@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"

if [ "$RIG_DEV_TYPE" != sroce ] || [ "${RIG_PEER_DEV_TYPE:-}" != sroce ]; then
	rig_skip "soak runs sroce-sroce (rxe's requester stalls after losses on 6.1)"
fi
integ_init
secs=${SROCE_SOAK_SECONDS:-20}

# mem_kib FIELD: a /proc/meminfo field in KiB.
mem_kib() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }
# res_counts: the object counts of this guest's device.
res_counts() { rdma resource show 2>/dev/null | grep " $RIG_DEV: " | sed 's/^[0-9]*: //'; }
settle() {
	sync
	rig_sleep 2
}

# Warm-up (first QPs, caches, per-CPU pools), then the baseline.
integ_pair warmup 120 4 18631 run --rounds 8
settle
base_res=$(res_counts)
base_slab=$(mem_kib SUnreclaim)
base_vm=$(mem_kib VmallocUsed)
rig_log "baseline: $base_res; SUnreclaim $base_slab KiB, VmallocUsed $base_vm KiB"

tc qdisc replace dev "$RIG_IFACE" root netem loss 5% ||
	rig_fail "tc qdisc netem on $RIG_IFACE failed"
rig_barrier netem-on 60 || rig_fail "the peer did not set up netem"
before=$(rdma statistic show link "$RIG_DEV/1" 2>/dev/null)
integ_pair soak $((secs + 120)) 4 18632 run --duration "$secs"
after=$(rdma statistic show link "$RIG_DEV/1" 2>/dev/null)
tc qdisc del dev "$RIG_IFACE" root 2>/dev/null
rig_barrier netem-off 60 || rig_fail "the peer did not remove netem"
rig_log "soak: $INTEG_SUMMARY"

# stat_of TEXT NAME: one counter of `rdma statistic show link`.
stat_of() { awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }' <<<"$1"; }
rtx=$(($(stat_of "$after" retransmits) - $(stat_of "$before" retransmits)))
rig_log "soak: $secs s under 5% loss, $rtx retransmits here"
[ "$rtx" -gt 0 ] || rig_fail "no retransmits under 5% loss: the loss did not happen?"

settle
res=$(res_counts)
slab=$(mem_kib SUnreclaim)
vm=$(mem_kib VmallocUsed)
rig_log "after: $res; SUnreclaim $slab KiB, VmallocUsed $vm KiB"
[ "$res" = "$base_res" ] || rig_fail "RDMA objects left behind: '$res', was '$base_res'"
# A leak per packet or per WQE would be megabytes after thousands of them.
[ $((slab - base_slab)) -lt 2048 ] ||
	rig_fail "unreclaimable slab grew by $((slab - base_slab)) KiB"
[ $((vm - base_vm)) -lt 1024 ] || rig_fail "vmalloc use grew by $((vm - base_vm)) KiB"
if rig_is_a; then
	rig_metric soak_seconds "$secs" s
	rig_metric soak_retransmits "$rtx" packets
	rig_metric soak_slab_delta $((slab - base_slab)) KiB
fi
rig_barrier finished 60 || rig_fail "the peer did not finish"
