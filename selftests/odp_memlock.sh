#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The page tables of on-demand-paging regions are paid for by their owner:
# the kernel's ODP code allocates 16 bytes of tables per page of a region's
# range whether anything is mapped there or not, so one unprivileged
# ibv_reg_mr(1 TiB, ON_DEMAND) would take 4 GiB of kernel memory. sroce
# counts them in the owner's pinned memory (VmPin) against RLIMIT_MEMLOCK,
# as the pages of an ordinary region are. "sroce-verbs-check odpcharge",
# run without CAP_IPC_LOCK and with a memlock limit of 1 MiB, checks that a
# 16 GiB region fails with ENOMEM, that 64 MiB regions are counted and
# refused before the limit, that an implicit region's 64 MiB children are
# too (prefetches at one mapped page per chunk), and that deregistering
# gives it all back. Before the charge, every one of them was accepted.
# timeout: 180
# place: stock-1@1 debug-1@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
rig_suites sroce-sroce sroce

ctrl_init
trap ctrl_restore EXIT
limit=$((1 << 20))
rc=0
# Root without CAP_IPC_LOCK: dropped from the bounding set, it is not
# granted again at exec.
rig_run 120 prlimit --memlock="$limit:$limit" setpriv --bounding-set -ipc_lock -- \
	"$CTRL_VC" odpcharge "$CTRL_DEV" --limit "$limit" >"$RIG_TEST_OUT/odpcharge.log" 2>&1 || rc=$?
grep -v '^PASS ' "$RIG_TEST_OUT/odpcharge.log" | sed 's/^/    /'
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check odpcharge: exit $rc"
