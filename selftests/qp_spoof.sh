#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A connected QP takes packets from its peer only, and its live PSNs are
# not shown to everyone. sroce1 on one end of a veth pair, a forged peer
# (10.77.12.2) on the other ("sroce-verbs-check spoof"): SENDs at the PSN
# a victim RC QP expects, from another source address (10.77.12.4) and
# from the peer to another address of sroce1's netdev (10.77.12.3), are
# dropped (drop_bad_addr, no completion); the peer's own land, payload as
# sent. Then an RC QP held by sroce-verbs-check hold: `rdma resource show
# qp -dd` shows its driver details (req_psn among them) to root, none to
# an unprivileged user, who still sees the QP. Before the check, the
# spoofed SEND completed on the victim; before the capability check, the
# unprivileged listing showed req_psn.
# timeout: 120
# place: stock-1@2 6.12-1@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
rig_suites sroce-sroce sroce

ctrl_init
ctrl_forged_peer sroce1 spv0 spv1 10.77.12
ip addr add 10.77.12.3/24 dev spv0 || rig_fail "ip addr add 10.77.12.3 on spv0"

log=$RIG_TEST_OUT/spoof.log
rc=0
rig_run 60 "$CTRL_VC" spoof --target sroce1 --inject spv1 --peer-ip 10.77.12.2 \
	--spoof-ip 10.77.12.4 --other-ip 10.77.12.3 >"$log" 2>&1 || rc=$?
sed 's/^/    /' "$log"
# Both halves run before the verdict, each failure named.
fails=()
[ "$rc" = 0 ] || fails+=("sroce-verbs-check spoof exited $rc")
for c in source peer dest again; do
	grep -q "^PASS $c:" "$log" || fails+=("no PASS line for $c")
done

ctrl_hold_start hold "$CTRL_DEV" 60
qpn=$(rdma resource show qp link "$CTRL_DEV/1" | awk '/ type RC / { for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }' | tail -n 1)
[ -n "$qpn" ] || rig_fail "the holder's RC QP is not listed"
root_view=$(rdma resource show qp link "$CTRL_DEV/1" lqpn "$qpn" -dd)
user_view=$(setpriv --reuid=65534 --regid=65534 --clear-groups rdma resource show qp link "$CTRL_DEV/1" lqpn "$qpn" -dd 2>&1)
rig_log "root sees: $root_view"
rig_log "nobody sees: $user_view"
grep -q "req_psn" <<<"$root_view" || fails+=("root does not see QP $qpn's req_psn")
grep -q "lqpn $qpn " <<<"$user_view" || fails+=("an unprivileged user does not see QP $qpn at all")
grep -q "req_psn" <<<"$user_view" && fails+=("an unprivileged user sees QP $qpn's live PSNs")
[ ${#fails[@]} = 0 ] || rig_fail "$(IFS=';'; echo "${fails[*]}")"
rig_log "QP $qpn: its driver details are root's only; the QP itself is listed for all"
