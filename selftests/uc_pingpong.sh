#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UC SEND/RECV between the guests with rdma-core's ibv_uc_pingpong -c
# (a spot check of the server's buffer, the first byte of each page: the
# tool users run, not a data check; rc_integrity_uc.sh checks UC data),
# IPv4 and IPv6 GIDs. UC never retransmits, so
# the messages are kept to one packet at the path MTU: a lost packet would
# otherwise stall the run. Guest a is the server, guest b the client; each
# side checks its exit status and that it moved exactly SIZE * ITERS * 2
# bytes (lib/pingpong.sh).
# timeout: 200
# place: stock@2 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it.
rig_suites sroce-sroce sroce-rxe rxe-rxe

rig_require_peer
rig_require_cmd ibv_uc_pingpong
rig_setup_dev
mtu=$(rig_active_mtu "$RIG_DEV")
pingpong_steps ibv_uc_pingpong 18516 4:1:100 4:"$mtu":50 6:1024:50 -- -m "$mtu"
