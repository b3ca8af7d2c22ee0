#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC data integrity as rc_integrity.sh over the RoCEv2 GID of the IPv6
# address, once with path MTU 4096 and once with 1024. (The control
# connection of sroce-integrity stays on IPv4; the GID decides the RoCE
# packets' family.)
# timeout: 450
# place: debug@2 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it. rxe-rxe runs rc_integrity.sh.
rig_suites sroce-sroce sroce-rxe

integ_init
integ_need_mtu 4096
integ_pair ipv6-mtu4096 60 6 18613 run --mtu 4096 --rounds 32
integ_pair ipv6-mtu1024 60 6 18614 run --mtu 1024 --rounds 32
