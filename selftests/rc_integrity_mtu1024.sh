#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC data integrity as rc_integrity.sh, with a path MTU of 1024 on the QPs
# (the link keeps its MTU): messages up to 3 KiB, so most of them are split
# into FIRST/MIDDLE/LAST packets, over the RoCEv2 GID of the IPv4 address.
# timeout: 120
# place: stock@1 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it. rxe-rxe runs rc_integrity.sh.
rig_suites sroce-sroce sroce-rxe

integ_init
integ_pair ipv4-mtu1024 90 4 18612 run --mtu 1024 --rounds 48
