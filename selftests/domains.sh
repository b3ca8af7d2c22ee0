#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Thread and parent domains ("sroce-verbs-check domains", one device,
# loopback RC path, every payload byte checked): the EINVAL cases of
# ibv_alloc_td and ibv_alloc_parent_domain; two RC QPs, an SRQ and an
# extended CQ on a parent domain with a TD and an allocator pair, SENDs
# through the SRQ and RDMA WRITEs; one allocator call per QP, CQ and SRQ
# with the right resource type, each block freed once when its object
# goes; TD, PD and parent domain refused (EBUSY) while in use; an
# allocator answering IBV_ALLOCATOR_USE_DEFAULT; a parent domain with
# neither TD nor allocators. The provider alone implements all of it.
# timeout: 120
# place: stock-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
log=$RIG_TEST_OUT/domains.log
rc=0
rig_run 90 "$CTRL_VC" domains "$CTRL_DEV" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
grep -q '^summary:' "$log" || rig_fail "no summary line from sroce-verbs-check domains"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check domains exited $rc"
