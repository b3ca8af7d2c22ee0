#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The maximum message size, 2^31 bytes (IBA 9.4.3; the port's max_msg_sz):
# "sroce-verbs-check msgsize" (tools/verbs-check/cmd_msgsize.cpp).
#   Requester, sroce0 over a loopback pair: a SEND, WRITE or READ whose SGE
#   lengths add up to more than max_msg_sz (also to 2^32 + 1, which is 1 in
#   32-bit arithmetic) completes with IBV_WC_LOC_LEN_ERR and sends nothing.
#   Responder, sroce1 on one end of a veth pair: requests forged with the
#   protocol core and put on the other end with AF_PACKET, from an address
#   no interface has. A WRITE of exactly max_msg_sz is taken; a WRITE or
#   READ of max_msg_sz + 1 MTU is NAKed (QP in ERR, nothing written); a
#   SEND of max_msg_sz + 2 MTUs (512 Ki packets) into a receive WQE whose
#   three SGEs add up to more than 4 GiB (a 64 MiB memfd mapped 33 times,
#   and a region of its own) completes the receive with IBV_WC_LOC_LEN_ERR
#   and places nothing past max_msg_sz. SROCE_MSGSIZE_SEND_BYTES=4294975488
#   (4 GiB + 2 MTUs, twice as long) shows what a 32-bit receive offset
#   would do; SROCE_MSGSIZE_SEND_BYTES=none leaves that SEND out (make test
#   does on the debug kernel, where it takes 6 minutes, and runs it on
#   6.12). A duplicate of a READ that comes while the responses of a
#   16 MiB READ after it are going out (a go-back-N requester that lost a
#   response) is answered at once, and a duplicate of the long READ starts
#   its responses over; the tool reads them on msgv1 frame by frame
#   (ctrl_forged_peer).
# timeout: 300
# place: stock-1@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
# The forged peer: 10.77.9.2, an address no interface has, through msgv1.
ctrl_forged_peer sroce1 msgv0 msgv1 10.77.9

log=$RIG_TEST_OUT/msgsize.log
args=(msgsize sroce0 --target sroce1 --inject msgv1 --peer-ip 10.77.9.2)
[ -n "${SROCE_MSGSIZE_SEND_BYTES:-}" ] && args+=(--send-bytes "$SROCE_MSGSIZE_SEND_BYTES")
rc=0
rig_run 270 "$CTRL_VC" "${args[@]}" >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check msgsize exited $rc"
cases=(requester.send_over_max requester.send_wraps_u32 requester.write_over_max
	requester.read_over_max responder.write_at_max responder.write_over_max
	responder.read_over_max responder.read_dup_busy.answered responder.read_dup_busy.restart)
if [ "${SROCE_MSGSIZE_SEND_BYTES:-}" = none ]; then
	rig_log "responder.send_over_max not run (SROCE_MSGSIZE_SEND_BYTES=none)"
else
	cases+=(responder.send_over_max)
fi
for c in "${cases[@]}"; do
	grep -q "^PASS $c:" "$log" || rig_fail "no PASS line for $c"
done
