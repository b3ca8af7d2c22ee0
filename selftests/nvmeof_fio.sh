#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics (RDMA) under load, the way storage test labs run it:
# guest a exports a 128 MiB RAM disk through nvmet-rdma (lib/nvmet.sh),
# guest b connects with nvme-cli and runs fio on the namespace with four
# jobs at queue depth 32, every block checked (verify=crc32c: each block
# carries its checksum, read back and compared; a mismatch ends fio with
# an error).
#
#   random       4 KiB random writes over 16 MiB, then read back and verified
#   sequential   1 MiB sequential writes over 64 MiB, verified
#   disconnect   "nvme disconnect" while random reads and writes run: fio
#                must end with errors within a bounded time (no hang), the
#                controller must be gone; then "nvme connect" again and a
#                verified random pass on the new controller
#   port         the target takes the subsystem off its port for 4 s while
#                fio writes with verify_backlog (blocks verified as it
#                goes): the host must see the controller reconnecting and
#                live again, and fio end without a single error (nvme-rdma
#                holds and resubmits the I/O of a reconnecting controller;
#                reconnect_delay 1 s)
#
# fio's summary lines are in the log; IOPS are metrics. Hung
# tasks and splats are the rig's dmesg check.
# timeout: 240
# place: stock@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/nvmet.sh
. "$(dirname "$0")/lib/nvmet.sh"
# sroce as target and as host (nvmeof.sh runs the other direction too).
rig_suites sroce-sroce sroce-rxe

nvme_test_setup

if rig_is_a; then
	nvmet_target_up 128
	rig_signal target-up
	# The port phase: the host says when its fio is under way.
	rig_wait port-off 150 >/dev/null || { nvmet_target_down; rig_fail "the host never reached the port phase"; }
	nvmet_port_off
	rig_log "subsystem taken off the port under I/O"
	rig_sleep 4
	nvmet_port_on
	rig_log "subsystem back on the port"
	rig_signal port-on
	rig_wait host-done 120 >/dev/null || { nvmet_target_down; rig_fail "the host did not finish"; }
	nvmet_target_down
	rig_signal target-down
	exit 0
fi

rig_wait target-up 60 >/dev/null || rig_fail "the target did not come up"
nvme_cli_connect --reconnect-delay=1 --ctrl-loss-tmo=60

# --- random and sequential, verified ---
nvme_fio random 120 4 --rw=randwrite --bs=4k "${BLK_VERIFY[@]}" || rig_fail "fio random: failed (status $?)"
rig_metric randwrite_4k_iops "$(nvme_fio_iops random write)" IOPS
nvme_fio sequential 120 16 --rw=write --bs=1M "${BLK_VERIFY[@]}" || rig_fail "fio sequential: failed (status $?)"

# --- nvme disconnect under I/O ---
nvme_fio_bg disconnect 40 --rw=randrw
pid=$BLK_FIO_PID
said=$(rig_run 30 nvme disconnect -n "$NVMET_NQN" 2>&1) || rig_fail "nvme disconnect failed: $said"
rig_log "under I/O: $said"
blk_fio_ends "$pid" 20 "the disconnect"
[ "$(nvme_ctrl_state)" = gone ] || rig_fail "$NVME_CTRL is still there after the disconnect"
nvme_cli_connect --reconnect-delay=1 --ctrl-loss-tmo=60
nvme_fio reconnected 120 2 --rw=randwrite --bs=4k "${BLK_VERIFY[@]}" ||
	rig_fail "fio after the reconnect: failed (status $?)"

# --- the target's port removed under I/O ---
nvme_fio_bg port 10 --rw=randwrite --verify_backlog=512 "${BLK_VERIFY[@]}"
pid=$BLK_FIO_PID
rig_signal port-off
rc=0
nvme_fio_watch "$pid" || rc=$?
rig_wait port-on 10 >/dev/null || rig_fail "the target did not put the port back"
[ "$rc" = 0 ] || rig_fail "fio across the port outage: status $rc (an error or a verify mismatch)"
[[ "$NVME_STATES" == *" connecting "* ]] || rig_fail "$NVME_CTRL never reconnected: the outage was not seen"
[ "$(nvme_ctrl_state)" = live ] || rig_fail "$NVME_CTRL is $(nvme_ctrl_state) after the outage"
rig_metric port_outage_verified_iops "$(nvme_fio_iops port write)" IOPS

said=$(rig_run 30 nvme disconnect -n "$NVMET_NQN" 2>&1) || rig_fail "nvme disconnect failed: $said"
rig_signal host-done
rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
modprobe -r nvme-rdma || rig_fail "cannot unload nvme-rdma"
