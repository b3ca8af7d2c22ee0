#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC SEND/RECV through a shared receive queue with rdma-core's
# ibv_srq_pingpong -c: 8 RC QPs per side whose receives all come from one
# SRQ (and, on sroce, from its mapped ring), -c's spot check of the
# server's buffers (the first byte of each page; rc_integrity_srq.sh checks
# SRQ data byte for byte), IPv4 and IPv6 GIDs, from 1 byte to multi-packet messages. Guest a is the
# server, guest b the client; each side checks its exit status and the
# bytes it moved (lib/pingpong.sh).
#
# Message size times QPs stays at 128 KiB: ibv_srq_pingpong fixes the
# local ACK timeout at 67 ms, and a busy emulated guest running rdma_rxe
# was seen to take seconds to acknowledge 16 x 64 KiB arriving at once,
# so the sender's retries ran out (RETRY_EXC_ERR) although nothing was
# lost.
# timeout: 200
# place: stock@3 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it.
rig_suites sroce-sroce sroce-rxe rxe-rxe

rig_require_peer
rig_require_cmd ibv_srq_pingpong
rig_setup_dev
pingpong_steps ibv_srq_pingpong 18519 4:1:50 4:4096:50 6:16384:20 -- -q 8 -r 64
