#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UD Q_Key rules on this guest's device ("sroce-verbs-check qkey": two UD
# QPs, loopback address, payloads checked): a matching Q_Key arrives, any
# other is dropped silently and counted (drop_bad_qkey on sroce), the
# receive left posted takes the next good message, a work request Q_Key
# with the high bit set stands for the sending QP's own Q_Key, and a
# controlled Q_Key (high bit) can be set on a QP by root but not by an
# unprivileged user (EPERM; run as nobody with /dev/infiniband/uverbs*
# opened to all, as rdma-core's udev rule does). Runs in guest a on sroce
# (sroce-sroce) and on rdma_rxe (rxe-rxe, the reference). rdma_rxe on 6.1
# sends a WR Q_Key as it is, high bit or not, so there the own-Q_Key
# checks are skipped (reported, not passed).
# timeout: 90
# place: stock@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
rig_suites sroce-sroce rxe-rxe

vc=${SROCE_VERBS_CHECK:-$RIG_REPO/build/tools/verbs-check/sroce-verbs-check}
if [ "${RIG_NGUESTS:-1}" = 2 ] && rig_is_b; then
	rig_wait qkey-done "${RIG_TEST_TIMEOUT:-90}" >/dev/null || true
	exit 0
fi
[ -x "$vc" ] || rig_skip "no $vc (cmake --build build)"
rig_require_cmd setpriv
rig_setup_dev

opts=()
[ "$RIG_DEV_TYPE" = rxe ] && opts=(--no-own-qkey)
rc=0
rig_run 60 "$vc" qkey "$RIG_DEV" "${opts[@]}" >"$RIG_TEST_OUT/root.log" 2>&1 || rc=$?
sed 's/^/    /' "$RIG_TEST_OUT/root.log"
grep -q '^PASS privileged.root' "$RIG_TEST_OUT/root.log" || rc=1

chmod 0666 /dev/infiniband/uverbs* || rig_fail "cannot open /dev/infiniband to all"
rcu=0
rig_run 60 setpriv --reuid=65534 --regid=65534 --clear-groups -- "$vc" qkey "$RIG_DEV" "${opts[@]}" \
	>"$RIG_TEST_OUT/nobody.log" 2>&1 || rcu=$?
sed 's/^/    /' "$RIG_TEST_OUT/nobody.log"
grep -q '^PASS privileged.user' "$RIG_TEST_OUT/nobody.log" || rcu=1
rig_signal qkey-done
[ "$rc" = 0 ] || rig_fail "Q_Key checks as root failed"
[ "$rcu" = 0 ] || rig_fail "Q_Key checks as an unprivileged user failed"
