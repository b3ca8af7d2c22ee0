#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Teardown under block I/O: the SCSI RDMA Protocol (lib/srp.sh: ib_srpt on
# guest a, ib_srp on guest b logging in over rdma_cm; on the remote port a
# reconnect try every second, I/O failed after 5 s, the port given up after
# 30 s). While fio runs on the remote disk on b (lib/blkio.sh: two jobs at
# depth 16; random writes, every block read back and compared as it goes,
# where the I/O may ride the teardown out), b's side goes away in four
# ways. Every wait is bounded, a hang is a failure (the rig counts
# hung-task reports and splats as failures too); after each teardown b
# logs in again where it has to and a verified fio pass (2 MiB, 512 KiB
# with SROCE_SHORT=1; crc32c) must succeed.
#   logout   the remote port deleted (srp_remote_ports/*/delete): fio must
#            end within 20 s (errors: I/O errors, or ENOSPC once the disk
#            is deleted, its capacity 0)
#   device   rdma link delete of b's RDMA device: ib_srp removes the
#            target; fio must end within 20 s; the device comes back
#   netdev   b's netdev down for 3 s, then up: fio rides the outage out
#            (the QPs' retries outlast it, or ib_srp reconnects) or ends
#            with errors within 40 s; the remote port's states are sampled
#            until then and it must be running again within 20 s
#   rmmod    rmmod ib_srp: refused while the disk is open (the SCSI host's
#            module is held), and then fio must go on to its end without an
#            error; or done, and fio must end within 20 s. Then logout,
#            unload, load again, log in.
# Each outcome is logged ("outcome of ...") and listed again at the end.
# timeout: 900
# place: debug@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/blkio.sh
. "$(dirname "$0")/lib/blkio.sh"
# shellcheck source=lib/srp.sh
. "$(dirname "$0")/lib/srp.sh"
# sroce on both sides (the teardowns are sroce's; rxe's are rxe's).
rig_suites sroce-sroce

rig_require_peer
rig_require_cmd fio
rig_setup_dev

# --- the target ---
if rig_is_a; then
	trap srp_target_down EXIT
	initiator=$(rig_wait initiator 60) || rig_fail "no initiator port ID from the peer"
	srp_target_up "$initiator"
	rig_signal target-up "$SRP_GUID"
	rig_wait host-done 180 >/dev/null || rig_fail "the initiator did not finish"
	srp_target_down
	rig_signal target-down
	exit 0
fi

# --- the initiator ---
cleanup() {
	srp_host_cleanup
	blk_restore
}
trap cleanup EXIT
rig_signal initiator "$(srp_initiator_id)"
srp_host_up
guid=$(rig_wait target-up 60) || rig_fail "the target did not come up"

# login: log in, with short transport-layer timers on the remote port.
login() {
	srp_login "$guid"
	{ echo 1 >"$SRP_RPORT/reconnect_delay" && echo 5 >"$SRP_RPORT/fast_io_fail_tmo" &&
		echo 30 >"$SRP_RPORT/dev_loss_tmo"; } ||
		rig_fail "cannot set the timers of ${SRP_RPORT##*/}"
}

login

# (1) logout under I/O
blk_load_bg logout 30 "$SRP_DISK"
srp_logout
blk_fio_ends "$BLK_FIO_PID" 20 "the logout"
blk_fio_outcome logout "${SRP_SHOST##*/} and $SRP_DISK gone"
login
blk_verified logout-after "$SRP_DISK"

# (2) rdma link delete of the initiator's device under I/O
blk_load_bg device 30 "$SRP_DISK"
rig_run 60 rdma link delete "$RIG_DEV" || rig_fail "rdma link delete $RIG_DEV under I/O failed"
blk_fio_ends "$BLK_FIO_PID" 20 "rdma link delete"
srp_host_gone "rdma link delete"
blk_fio_outcome device "${SRP_SHOST##*/} and $SRP_DISK gone"
blk_device_back
srp_host_up
login
blk_verified device-after "$SRP_DISK"

# (3) the netdev down for 3 s and up under I/O
blk_load_bg netdev 8 "$SRP_DISK" verify
blk_iface_bounce 3
# The remote port (running, blocked, fail-fast, lost) must be running
# again: ib_srp reconnects by itself.
blk_fio_ends "$BLK_FIO_PID" 40 "the netdev down and up" "$SRP_RPORT/state"
blk_state_again "the netdev down and up" "$SRP_RPORT/state" running 20
blk_fio_outcome netdev "remote port:$BLK_STATES(sampled until fio's end), running $BLK_STATE_SECS s later"
blk_verified netdev-after "$SRP_DISK"

# (4) rmmod ib_srp under I/O
blk_load_bg rmmod 5 "$SRP_DISK" verify
if said=$(rig_run 30 rmmod ib_srp 2>&1); then
	blk_fio_ends "$BLK_FIO_PID" 20 "rmmod ib_srp"
	srp_host_gone "rmmod ib_srp"
	blk_fio_outcome rmmod "ib_srp unloaded under I/O"
else
	rig_log "rmmod ib_srp under I/O: $said"
	blk_fio_ends "$BLK_FIO_PID" 30 "the refused rmmod" "$SRP_RPORT/state"
	[ "$BLK_FIO_RC" = 0 ] || rig_fail "fio failed after a refused rmmod ib_srp (status $BLK_FIO_RC)"
	blk_fio_outcome rmmod "rmmod refused: ${said##*: }; remote port:$BLK_STATES"
	srp_logout
	rig_unload ib_srp || rig_fail "ib_srp stays loaded after the logout"
fi
srp_host_up
login
blk_verified rmmod-after "$SRP_DISK"

srp_logout
blk_outcomes
srp_host_finish
exit 0
