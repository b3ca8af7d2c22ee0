#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC and UC data integrity with receives from a shared receive queue on
# both sides: sroce-integrity run --srq (every opcode, random sizes and
# scatter lists, every byte checked as in rc_integrity.sh), the receive
# WQEs posted with ibv_post_srq_recv and, on sroce, taken from the SRQ's
# mapped ring by the responder.
# timeout: 150
# place: stock@2 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it. rxe-rxe runs rc_integrity.sh.
rig_suites sroce-sroce sroce-rxe

integ_init
integ_pair srq-rc 90 4 18616 run --srq --rounds 32
integ_pair srq-uc 90 4 18617 run --srq --uc --rounds 24
