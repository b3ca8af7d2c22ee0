#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Teardown under block I/O: NVMe over Fabrics (RDMA, lib/nvmet.sh) with fio
# running on the host (guest b, four jobs at depth 32), while the RDMA
# stack under it goes away on one side or the other. Every phase is
# bounded; a hang is a failure (and the rig counts hung-task reports and
# splats as failures too).
#
# Outages the host rides out (nvme-rdma holds the I/O of a reconnecting
# controller and resubmits it; reconnect_delay 1 s): fio writes with
# verify_backlog (blocks read back and compared as it goes) and must end
# without one error, the controller seen reconnecting and live again.
#   host_link     the host's netdev down for 3 s, then up (the QPs may
#                 outlast this in their retries: no reconnect needed then)
#   target_link   the target deletes its RDMA device (rdma link delete),
#                 adds it again and enables its nvmet port again
#   target_rmmod  the target unloads its RDMA driver (rmmod sroce, the
#                 driver's link deleted with it) and loads it again
# Teardowns the host cannot ride out: fio must end with errors within
# 20 s, the controller must be gone; then the host sets up again and a
# verified fio pass runs on a new controller.
#   host_ulp      rmmod nvme-rdma (the initiator's transport)
#   host_device   rdma link delete of the host's RDMA device
#   host_rmmod    rmmod of the host's RDMA driver (sroce)
# timeout: 300
# place: stock@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/nvmet.sh
. "$(dirname "$0")/lib/nvmet.sh"
# sroce on both sides (the teardowns are sroce's; rxe's are rxe's).
rig_suites sroce-sroce

nvme_test_setup

# --- the target ---
if rig_is_a; then
	nvmet_target_up 128
	rig_signal target-up
	for what in target_link target_rmmod; do
		rig_wait "$what" 240 >/dev/null || { nvmet_target_down; rig_fail "the host never reached $what"; }
		case "$what" in
		target_link) rdma link delete "$RIG_DEV" || rig_fail "rdma link delete $RIG_DEV failed" ;;
		target_rmmod) rig_run 60 rmmod sroce || rig_fail "rmmod sroce under I/O failed" ;;
		esac
		rig_log "$what: done under I/O"
		rig_sleep 2
		blk_device_back
		# nvmet-rdma drops a port whose device went away and does not
		# listen again by itself (it does after an address change):
		# the admin enables the port again, as here.
		nvmet_port_off
		nvmet_port_on
		rig_signal "$what-back"
	done
	rig_wait host-done 120 >/dev/null || { nvmet_target_down; rig_fail "the host did not finish"; }
	nvmet_target_down
	rig_signal target-down
	exit 0
fi

# --- the host ---
rig_wait target-up 60 >/dev/null || rig_fail "the target did not come up"
connect() { nvme_cli_connect --reconnect-delay=1 --ctrl-loss-tmo=60; }
connect

# ride_out WHAT: fio across an outage caused by WHAT.
ride_out() {
	local what=$1 rc=0
	nvme_fio_bg "$what" 7 --rw=randwrite --verify_backlog=512 "${BLK_VERIFY[@]}"
	case "$what" in
	host_link) blk_iface_bounce 3 ;;
	*) rig_signal "$what" ;;
	esac
	nvme_fio_watch "$BLK_FIO_PID" || rc=$?
	[ "$what" = host_link ] || rig_wait "$what-back" 60 >/dev/null || rig_fail "$what: the target did not come back"
	[ "$rc" = 0 ] || rig_fail "$what: fio across the outage: status $rc (an error or a verify mismatch)"
	# Link down for 3 s may stay within the QPs' retries: then nothing
	# is seen but a pause. A deleted device always means a reconnect.
	[ "$what" = host_link ] || [[ "$NVME_STATES" == *" connecting "* ]] ||
		rig_fail "$what: $NVME_CTRL was never seen reconnecting"
	[ "$(nvme_ctrl_state)" = live ] || rig_fail "$what: $NVME_CTRL is $(nvme_ctrl_state) at the end"
}

# torn_down WHAT: fio while WHAT tears the host's stack down, then anew.
torn_down() {
	local what=$1
	nvme_fio_bg "$what" 40 --rw=randrw
	case "$what" in
	host_ulp) rig_run 60 modprobe -r nvme-rdma || rig_fail "rmmod nvme-rdma under I/O failed" ;;
	host_device) rig_run 60 rdma link delete "$RIG_DEV" || rig_fail "rdma link delete under I/O failed" ;;
	host_rmmod) rig_run 60 rmmod sroce || rig_fail "rmmod sroce under I/O failed" ;;
	esac
	rig_log "$what: done under I/O"
	blk_fio_ends "$BLK_FIO_PID" 20 "$what"
	[ "$(nvme_ctrl_state)" = gone ] || rig_fail "$what: $NVME_CTRL is $(nvme_ctrl_state), not gone"
	[ "$what" = host_ulp ] || blk_device_back
	connect
	nvme_fio "$what-after" 120 2 --rw=randwrite --bs=4k "${BLK_VERIFY[@]}" ||
		rig_fail "$what: fio on the new controller failed (status $?)"
}

ride_out host_link
ride_out target_link
ride_out target_rmmod
torn_down host_ulp
torn_down host_device
torn_down host_rmmod

said=$(rig_run 30 nvme disconnect -n "$NVMET_NQN" 2>&1) || rig_fail "nvme disconnect failed: $said"
rig_signal host-done
rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
modprobe -r nvme-rdma || rig_fail "cannot unload nvme-rdma"
