#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC data integrity with large messages: sroce-integrity run with sizes up
# to 1 MiB (up to 256 packets each at MTU 4096), 4 in flight, over the
# RoCEv2 GID of the IPv4 address. Bursts this long overflow the rig's link
# (qemu's datagram backend drops what the receiving guest cannot take in
# time), so this also exercises recovery: PSN sequence NAKs, retransmission
# of WRITEs and SENDs, and READs resumed in the middle of their response.
#
# rdma_rxe's requester (Linux 6.1) sometimes never recovers from such a
# loss (no retransmission after a sequence NAK or a lost READ response, the
# work request hangs), so with an rxe peer only the sroce side requests,
# and rxe-rxe has nothing to test here (skipped).
# timeout: 150
# place: stock@3 sroce-rxe@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"
# Traffic goes both ways in one run: the rxe-sroce suite would repeat it. rxe-rxe runs rc_integrity.sh.
rig_suites sroce-sroce sroce-rxe

integ_init
integ_need_mtu 4096
who=both
case "$(integ_type_of a)-$(integ_type_of b)" in
rxe-rxe) rig_skip "rdma_rxe on both sides: its requester stalls after packet loss" ;;
*-rxe) who=server ;;
rxe-*) who=client ;;
esac
integ_pair large-ipv4 120 4 18616 run --max-size 1048576 --depth 4 --batch 4 \
	--rounds 8 --requester "$who"
