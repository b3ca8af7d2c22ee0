#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UC data integrity over the RoCEv2 GID of the IPv4 address: sroce-integrity
# run --uc, SEND, SEND with immediate, RDMA WRITE and WRITE with immediate
# (what UC carries), sizes, SGEs and checks as rc_integrity.sh. UC has no
# acknowledgements, so every round ends with a SEND with immediate whose
# arrival tells the responder that the writes before it are in place.
# Sizes stay small enough for this link not to drop packets (a drop loses a
# UC message, which the test would report).
# timeout: 120
# place: stock@2 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it. rxe-rxe runs rc_integrity.sh.
rig_suites sroce-sroce sroce-rxe

integ_init
integ_pair uc-ipv4 90 4 18615 run --uc --rounds 48
