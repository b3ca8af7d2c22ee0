#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UD SEND/RECV between the guests with rdma-core's ibv_ud_pingpong -c
# (a spot check of the server's buffer, the first byte of each page, past
# the 40-byte GRH the receive buffers hold before the payload; interop with
# the tool users run, not a data check), IPv4 and IPv6 GIDs, from 1 byte to a full path MTU (a UD
# message is one packet). Guest a is the server, guest b the client; each
# side checks its exit status and that it moved exactly SIZE * ITERS * 2
# bytes (lib/pingpong.sh).
# timeout: 200
# place: stock@3 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it.
rig_suites sroce-sroce sroce-rxe rxe-rxe

rig_require_peer
rig_require_cmd ibv_ud_pingpong
rig_setup_dev
mtu=$(rig_active_mtu "$RIG_DEV")
pingpong_steps ibv_ud_pingpong 18517 4:1:100 4:"$mtu":50 6:1024:50
