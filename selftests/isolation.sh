#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Isolation ("sroce-verbs-check isolation", loopback RC pairs on sroce0):
# RDMA WRITE, READ and atomics with the rkey of an MR in another PD, of a
# deregistered MR, of a type 2 window after LOCAL_INV, of a deallocated
# type 1 window, of a read-only MR, or a valid rkey plus 1, 0x80, 0x100...
# complete with IBV_WC_REM_ACCESS_ERR; a local SGE with another PD's lkey
# with IBV_WC_LOC_PROT_ERR. Each time both QPs of the pair end in ERR (the
# responder's only when it refused the request), the memory the key named
# is unchanged byte for byte, and a fresh pair moves a WRITE and a READ.
#
# Then users: /dev/infiniband/uverbs* is usable by anyone; a root process
# registers an MR and publishes its address and keys in a file; the same
# tool run as "nobody" (setpriv) opens the device, moves its own traffic,
# and fails with REM_ACCESS_ERR / LOC_PROT_ERR on root's rkey and lkey;
# root's memory is unchanged. Object counts return to their baseline.
# timeout: 150
# place: 6.12-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
rig_require_cmd setpriv
base=$(ctrl_counts "$CTRL_DEV")
rc=0
ctrl_vc isolation 90 isolation "$CTRL_DEV" || rc=$?
grep -q '^summary:' "$RIG_TEST_OUT/isolation.log" ||
	rig_fail "no summary line from sroce-verbs-check isolation"
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check isolation exited $rc"

# --- another user ----------------------------------------------------------
as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
for node in /dev/infiniband/uverbs*; do
	rig_log "$(ls -l "$node")"
	"${as_nobody[@]}" test -r "$node" -a -w "$node" ||
		rig_fail "$node is not readable and writable by nobody"
done
pub=$RIG_TEST_OUT/root-mr
rm -f "$pub" "$pub.done"
chmod 755 "$RIG_TEST_OUT"
"$CTRL_VC" isolation "$CTRL_DEV" --publish "$pub" --hold 60 >"$RIG_TEST_OUT/publish.log" 2>&1 &
holder=$!
CTRL_PIDS+=("$holder")
for _ in $(seq 1 300); do
	[ -s "$pub" ] && break
	kill -0 "$holder" 2>/dev/null || break
	rig_sleep 0.1
done
[ -s "$pub" ] || {
	sed 's/^/    /' "$RIG_TEST_OUT/publish.log"
	rig_fail "the root process did not publish its MR"
}
frc=0
rig_run 60 "${as_nobody[@]}" "$CTRL_VC" isolation "$CTRL_DEV" --foreign "$pub" \
	>"$RIG_TEST_OUT/foreign.log" 2>&1 || frc=$?
: >"$pub.done"
hrc=0
wait "$holder" || hrc=$?
rig_log "as nobody (exit $frc):"
grep -v '^PASS ' "$RIG_TEST_OUT/foreign.log" | sed 's/^/    /'
rig_log "root's holder (exit $hrc):"
sed 's/^/    /' "$RIG_TEST_OUT/publish.log"
grep -q '^info: running as uid 65534' "$RIG_TEST_OUT/foreign.log" ||
	rig_fail "the foreign process did not run as nobody"
grep -q '^PASS foreign.own_traffic' "$RIG_TEST_OUT/foreign.log" ||
	rig_fail "nobody could not move its own traffic"
grep -q '^PASS foreign.write.status' "$RIG_TEST_OUT/foreign.log" ||
	rig_fail "nobody's WRITE with root's rkey did not fail with REM_ACCESS_ERR"
[ "$frc" = 0 ] || rig_fail "sroce-verbs-check isolation --foreign (as nobody) exited $frc"
grep -q '^PASS publish.memory' "$RIG_TEST_OUT/publish.log" ||
	rig_fail "root's MR was changed"
[ "$hrc" = 0 ] || rig_fail "sroce-verbs-check isolation --publish exited $hrc"

after=$(ctrl_counts "$CTRL_DEV")
[ "$after" = "$base" ] || rig_fail "object counts did not return to baseline: '$base' -> '$after'"
rig_log "object counts back to baseline: $after"
