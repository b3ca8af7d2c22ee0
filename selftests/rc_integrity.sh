#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC data integrity over the RoCEv2 GID of the IPv4 address, path MTU 4096:
# sroce-integrity run (tools/integrity) moves random data with every RC
# opcode (SEND, SEND with immediate, RDMA WRITE, WRITE with immediate, RDMA
# READ, CMP_AND_SWAP, FETCH_AND_ADD), 0 bytes to three MTUs, 1-8 SGEs at
# unaligned offsets through two lkeys, inline and unsignalled work
# requests, up to 8 in flight, PSNs near the 24-bit wrap, each guest taking
# turns as requester. Every received byte, every written region and its
# guard bytes, every READ, every atomic's returned value and the atomic
# words afterwards are checked, as are completion statuses, opcodes,
# byte_len, immediates and flags. Guest a is the server, guest b the client.
# timeout: 360
# place: debug@gate sroce-rxe@1 6.12@3 6.12-rxe@3 cross@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Each guest requests in turn: rxe-sroce would repeat sroce-rxe.
rig_suites sroce-sroce sroce-rxe rxe-rxe

integ_init
integ_need_mtu 4096
integ_pair ipv4-mtu4096 90 4 18611 run --mtu 4096 --rounds 48
