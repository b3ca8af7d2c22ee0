#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Teardown under block I/O: iSER (lib/iser.sh: a LIO target with an iSER
# portal on guest a, open-iscsi over ib_iser on guest b, replacement
# timeout 5 s). While fio runs on the remote disk on b (lib/blkio.sh: two
# jobs at depth 16; random writes, every block read back and compared as
# it goes, where the I/O may ride the teardown out), b's side goes away in
# four ways. Every wait is bounded, a hang is a failure (the rig counts
# hung-task reports and splats as failures too); after each teardown b
# logs in again where it has to and a verified fio pass (2 MiB, 512 KiB
# with SROCE_SHORT=1; crc32c) must succeed. The session's states are
# sampled until fio ends.
#   logout   iscsiadm --logout: fio must end within 20 s (errors: I/O
#            errors, or ENOSPC once the disk is deleted, its capacity 0)
#   device   rdma link delete of b's RDMA device: fio must end within 30 s
#            (the session fails its I/O after the replacement timeout);
#            the device comes back and iscsid's reconnects must log the
#            session in again by themselves within 30 s
#   netdev   b's netdev down for 3 s, then up: fio rides the outage out
#            or ends with errors within 40 s; the session must be logged
#            in again within 30 s
#   rmmod    rmmod ib_iser: refused while a session holds the transport,
#            and then fio must go on to its end without an error; or
#            done, and fio must end within 20 s. Then logout, unload,
#            load again, log in.
# Each outcome is logged ("outcome of ...") and listed again at the end.
# timeout: 800
# place: debug@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/blkio.sh
. "$(dirname "$0")/lib/blkio.sh"
# shellcheck source=lib/iser.sh
. "$(dirname "$0")/lib/iser.sh"
# sroce on both sides (the teardowns are sroce's; rxe's are rxe's).
rig_suites sroce-sroce

rig_require_peer
if rig_is_b; then
	rig_require_cmd iscsid iscsiadm fio
fi
rig_setup_dev

# --- the target ---
if rig_is_a; then
	a_cleanup() {
		iser_target_down
		rig_unload brd
	}
	trap a_cleanup EXIT
	iser_target_up 64
	rig_signal target-up
	rig_wait host-done 220 >/dev/null || rig_fail "the initiator did not finish"
	iser_target_down || rig_fail "cannot tear the target down"
	rig_unload brd || rig_fail "cannot unload brd"
	trap - EXIT
	rig_signal target-down
	exit 0
fi

# --- the initiator ---
cleanup() {
	iser_host_cleanup
	blk_restore
}
trap cleanup EXIT
iser_host_up 230
rig_wait target-up 120 >/dev/null || rig_fail "the target did not come up"
iser_discover
rig_run 10 iscsiadm "${ISER_NODE[@]}" -o update -n node.session.timeo.replacement_timeout -v 5 ||
	rig_fail "cannot set the node's replacement timeout"

# logged_in_again WHAT: after WHAT the session (LOGGED_IN, FAILED, FREE)
# must be logged in again within 30 s: iscsid reconnects by itself. What
# was seen in state.
logged_in_again() {
	blk_state_again "$1" "$ISER_SESSION/state" LOGGED_IN 30
	state="session:$BLK_STATES(sampled until fio's end), logged in $BLK_STATE_SECS s later"
}

iser_login

# (1) logout under I/O
blk_load_bg logout 30 "/dev/$ISER_DISK"
iser_logout
blk_fio_ends "$BLK_FIO_PID" 20 "the logout"
blk_fio_outcome logout "session and /dev/$ISER_DISK gone"
iser_login
blk_verified logout-after "/dev/$ISER_DISK"

# (2) rdma link delete of the initiator's device under I/O
blk_load_bg device 40 "/dev/$ISER_DISK" verify
rig_run 60 rdma link delete "$RIG_DEV" || rig_fail "rdma link delete $RIG_DEV under I/O failed"
blk_fio_ends "$BLK_FIO_PID" 30 "rdma link delete" "$ISER_SESSION/state"
blk_device_back
logged_in_again "rdma link delete"
blk_fio_outcome device "$state"
blk_verified device-after "/dev/$ISER_DISK"

# (3) the netdev down for 3 s and up under I/O
blk_load_bg netdev 8 "/dev/$ISER_DISK" verify
blk_iface_bounce 3
blk_fio_ends "$BLK_FIO_PID" 40 "the netdev down and up" "$ISER_SESSION/state"
logged_in_again "the netdev down and up"
blk_fio_outcome netdev "$state"
blk_verified netdev-after "/dev/$ISER_DISK"

# (4) rmmod ib_iser under I/O
blk_load_bg rmmod 5 "/dev/$ISER_DISK" verify
if said=$(rig_run 30 rmmod ib_iser 2>&1); then
	blk_fio_ends "$BLK_FIO_PID" 20 "rmmod ib_iser" "$ISER_SESSION/state"
	blk_fio_outcome rmmod "ib_iser unloaded under I/O; session:$BLK_STATES"
	rig_run 30 iscsiadm "${ISER_NODE[@]}" --logout >/dev/null 2>&1
else
	rig_log "rmmod ib_iser under I/O: $said"
	blk_fio_ends "$BLK_FIO_PID" 30 "the refused rmmod" "$ISER_SESSION/state"
	[ "$BLK_FIO_RC" = 0 ] || rig_fail "fio failed after a refused rmmod ib_iser (status $BLK_FIO_RC)"
	blk_fio_outcome rmmod "rmmod refused: ${said##*: }; session:$BLK_STATES"
	iser_logout
	rig_unload ib_iser || rig_fail "ib_iser stays loaded after the logout"
fi
modprobe ib_iser || rig_fail "modprobe ib_iser"
iser_login
blk_verified rmmod-after "/dev/$ISER_DISK"

iser_logout
blk_outcomes
rig_signal host-done
rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
iser_host_cleanup
trap - EXIT
for m in ib_iser libiscsi scsi_transport_iscsi; do
	[ -d "/sys/module/$m" ] && rig_fail "$m is still loaded"
done
exit 0
