#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Kernel work whose size user space chooses must give the CPU up
# ("sroce-verbs-check bound", one device, loopback): growing an SRQ that
# holds 2^19 receives, resizing a full CQ of 2^17 CQEs, an SQ of 2^20
# memory operations (BIND_MW) behind an unacknowledged SEND (the requester
# starts at most 256 WQEs before an answer) and the ACKs that then
# complete them all, and mapping a 256 MiB ring. Each must be
# done right (every WQE and CQE kept or completed once, in order; the
# payloads, and an RDMA READ through the bound window, byte for byte) while
# a SCHED_FIFO thread of the process that sleeps 1 ms at a time (a
# cyclictest-like probe: only code that cannot be preempted delays it) is
# never kept waiting 100 ms (with one vCPU; with more it may run
# elsewhere; the SRQ resize may add what creating an SRQ of the new size
# kept it waiting: the allocator's and KASAN's work, not sroce's); an
# ordinary such thread's wait is reported. The soft-lockup
# detector gets its shortest threshold (kernel.watchdog_thresh=1: a CPU
# held for 2 s is reported, and the rig fails the test on the splat). On a
# kernel with dynamic preemption (Debian's) the test runs with preemption
# "none", as many server kernels are built: then only explicit scheduling
# points let another task in, and the sleeper measures exactly those.
# SROCE_BOUND_CASES=local_sq,... (tools/vm/suite.sh -e) runs some cases only.
# timeout: 240
# place: stock@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
ctrl_sysctl kernel.watchdog_thresh 1
preempt=/sys/kernel/debug/sched/preempt
if [ -w "$preempt" ]; then
	# "none voluntary (full)": the model in parentheses is the current one.
	model=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' "$preempt")
	ctrl_write "$preempt" none "$model"
	rig_log "preemption: none (was $model)"
else
	rig_log "preemption: as built (no $preempt)"
fi
log=$RIG_TEST_OUT/bound.log
args=(bound "$CTRL_DEV")
[ -n "${SROCE_BOUND_CASES:-}" ] && args+=(--cases "$SROCE_BOUND_CASES")
rc=0
rig_run $((${RIG_TEST_TIMEOUT:-240} - 20)) "$CTRL_VC" "${args[@]}" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check bound"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check bound exited $rc"
