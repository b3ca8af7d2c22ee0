#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# On-demand paging ("sroce-verbs-check odp", one device, loopback RC
# pairs, every byte checked): odp_caps; a 64 MiB ODP region over untouched
# memory registers without faulting anything in; first touches by the
# device (WRITE, READ, SEND and receive, READ and atomic results into ODP
# memory, atomics on it); pages taken away between operations
# (MADV_DONTNEED, munmap and a new mapping: the device sees the new pages,
# never the old, and the resident memory drops while the region is
# registered); pages taken away during WRITE/READ/fetch-and-add traffic
# (a thread forks and discards pages); unmapped memory gives
# IBV_WC_REM_ACCESS_ERR and IBV_WC_LOC_PROT_ERR; ibv_advise_mr's advices
# and errors; pages swapped out (MADV_PAGEOUT to a zram swap device set up
# here) between and during operations;
# implicit ODP (one region for the address space). Then the device's
# regions are back to what they were.
# timeout: 480
# place: debug-1@1 6.12-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
mrs() { rdma resource show mr 2>/dev/null | grep -c "dev $CTRL_DEV "; }
# The device's counter NAME (rdma statistic show link DEV/1).
stat() {
	rdma statistic show link "$CTRL_DEV/1" 2>/dev/null |
		awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}
# Swap for the page-out checks: a zram device of 256 MiB, gone again after
# the run. Every kernel this test is placed on has swap, zram and
# transparent huge pages (the debug build too): a sub-check the tool could
# not run (SKIP: no swap, no THP) fails the test, as it would otherwise
# pass having checked less than it says.
swap=""
if ! grep -qs '^/' /proc/swaps && modprobe zram num_devices=1 2>/dev/null &&
	echo 256M >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null 2>&1 &&
	swapon /dev/zram0 2>/dev/null; then
	swap=zram0
	rig_log "swap: zram0, 256 MiB"
else
	rig_log "no swap set up here (no zram or no CONFIG_SWAP)"
fi
unswap() {
	[ -n "$swap" ] || return 0
	swapoff /dev/zram0 && echo 1 >/sys/block/zram0/reset && rmmod zram
}
# Transparent huge pages on request (madvise) for the run, not for every
# anonymous mapping ("always", the debug build's default). With "always",
# in the one-vCPU debug guest, the tool's fork() under traffic (the churn
# check) stopped for 20 s and more, and an RDMA WRITE with it, whose fault
# waits for the mmap_lock the fork holds: 10 runs of 11 failed so (the
# one that passed had the tool sleep between polls and between forks);
# with madvise the slowest operation took 257 ms. The stall ended when the
# tool's polling thread entered the kernel, which fits khugepaged (nice 19)
# collapsing pages under the mmap_lock while two threads at nice 0 (one
# spinning on the CQ) kept it off the CPU; not proven. MADV_COLLAPSE (the
# page-move check) works either way.
thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp" 2>/dev/null)
[ "$thp_was" != always ] || echo madvise >"$thp" ||
	rig_fail "could not set $thp to madvise"
mrs_before=$(mrs)
rnr_before=$(stat rnr_naks_sent)
log=$RIG_TEST_OUT/odp.log
rc=0
rig_run 240 "$CTRL_VC" odp "$CTRL_DEV" >"$log" 2>&1 || rc=$?
unswap || rig_fail "swapoff of zram0 failed"
[ "$thp_was" != always ] || echo always >"$thp" || rig_fail "could not set $thp back to always"
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check odp"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check odp exited $rc: $(grep -m1 '^FAIL' "$log")"
skips=$(sed -n 's/^SKIP \([^:]*\):.*/\1/p' "$log" | tr '\n' ' ')
[ -z "$skips" ] || rig_fail "sub-checks that could not run on $(uname -r): ${skips% } ($(grep -m1 '^SKIP' "$log"))"
# The responder's faults answer with RNR NAKs: the path was taken.
rnr=$(($(stat rnr_naks_sent) - rnr_before))
[ "$rnr" -gt 0 ] || rig_fail "no RNR NAK sent: the responder never waited for a page"
rig_log "PASS: rnr_naks_sent +$rnr (responder page faults)"
mrs_after=$(mrs)
[ "$mrs_after" = "$mrs_before" ] ||
	rig_fail "regions of $CTRL_DEV: $mrs_before before, $mrs_after after"
rig_log "PASS: regions of $CTRL_DEV back to $mrs_before"
