#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A kernel ULP over the RDMA devices: the SCSI RDMA Protocol (lib/srp.sh).
# Guest a exports a 64 MiB RAM disk (brd) as LUN 0 of the LIO target
# ib_srpt, configured through configfs, with an rdma_cm listener on port 5555;
# guest b logs in with ib_srp over rdma_cm (add_target with the target's
# IPv4 address, no srp_daemon), finds the disk of the new SCSI host,
# writes random data with O_DIRECT in 4 KiB (2 MiB of it), 64 KiB (6 MiB)
# and 1 MiB (8 MiB) blocks, reads each part back and compares checksums,
# runs fio (8 MiB, crc32c verified) at queue depth 32, then logs out and
# checks that the disk goes away. Guest a checks that its RAM disk holds
# the 16 MiB and that LIO counted the writes for this initiator.
#
# The login is an SRP_LOGIN_REQ in the private data of the rdma_cm
# connect. ib_srp maps its data buffers with fast registration
# (IB_WR_REG_MR) and sends small writes as immediate data; ib_srpt moves
# the rest with RDMA READ and WRITE through the rdma_rw API.
# timeout: 150
# place: sroce-rxe@1 rxe-sroce@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/srp.sh
. "$(dirname "$0")/lib/srp.sh"
# A kernel ULP over sroce, as target and as initiator.
rig_suites sroce-sroce sroce-rxe rxe-sroce

rig_require_peer
rig_require_cmd openssl fio
rig_setup_dev
pattern=/tmp/srp-pattern
size_mb=16

# --- initiator (guest b) ----------------------------------------------

# host_io DEV BS OFFSET MIB: write MIB MiB of the pattern at OFFSET MiB
# in blocks of BS, read them back, compare.
host_io() {
	local dev=$1 bs=$2 off=$3 mib=$4 count skip got want t0 ms
	count=$(((mib << 20) / bs))
	skip=$(((off << 20) / bs))
	want=$(dd if="$pattern" bs="$bs" skip="$skip" count="$count" status=none | sha256sum)
	t0=${EPOCHREALTIME/./}
	rig_run 60 dd if="$pattern" of="$dev" bs="$bs" skip="$skip" seek="$skip" count="$count" \
		oflag=direct status=none || rig_fail "write with bs=$bs failed"
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	got=$(rig_run 60 dd if="$dev" bs="$bs" skip="$skip" count="$count" iflag=direct status=none |
		sha256sum)
	[ "${got%% *}" = "${want%% *}" ] || rig_fail "read back with bs=$bs differs from what was written"
	rig_log "bs=$bs: wrote $mib MiB at $off MiB in $ms ms, read back, sha256 matches"
	[ "$bs" = 1048576 ] && rig_metric srp_write_1m $((mib * 1000 / (ms > 0 ? ms : 1))) MB/s
	return 0
}

rig_make_pattern "$pattern" "$size_mb" srp
if rig_is_a; then
	want=$(sha256sum <"$pattern")
	trap srp_target_down EXIT
	initiator=$(rig_wait initiator 60) || rig_fail "no initiator port ID from the peer"
	srp_target_up "$initiator"
	dd if=/dev/zero of=/dev/ram0 bs=1M count="$size_mb" oflag=direct status=none
	rig_signal target-up "$SRP_GUID"
	rig_wait logged-in 60 >/dev/null &&
		rig_log "connection: $(rdma resource show cm_id |
			grep -m1 "src-addr ${RIG_IP4%/*}:$SRP_PORT dst-addr")"
	rig_wait host-done 120 >/dev/null || rig_fail "the initiator did not finish"
	got=$(head -c $((size_mb << 20)) /dev/ram0 | sha256sum)
	[ "${got%% *}" = "${want%% *}" ] || rig_fail "the RAM disk does not hold the pattern"
	st=$SRP_ACL/lun_0/statistics/scsi_auth_intr
	read -r wmb <"$st/write_mbytes"
	read -r rmb <"$st/read_mbytes"
	read -r cmds <"$st/num_cmds"
	rig_log "the RAM disk holds the $size_mb MiB the initiator wrote; LIO counted" \
		"$cmds commands, $wmb MiB written and $rmb MiB read for $initiator"
	[ "${wmb:-0}" -ge $((size_mb + 8)) ] || rig_fail "only ${wmb:-0} MiB written through the ACL"
	srp_target_down
	rig_signal target-down
else
	trap srp_host_cleanup EXIT
	rig_signal initiator "$(srp_initiator_id)"
	srp_host_up
	guid=$(rig_wait target-up 60) || rig_fail "the target did not come up"
	srp_login "$guid"
	rig_metric srp_login_ms "$SRP_LOGIN_MS" ms
	rig_signal logged-in
	disk=$SRP_DISK
	host_io "$disk" 4096 0 2
	host_io "$disk" 65536 2 6
	host_io "$disk" 1048576 8 8
	got=$(rig_run 60 dd if="$disk" bs=1M count="$size_mb" iflag=direct status=none | sha256sum)
	want=$(sha256sum <"$pattern")
	[ "${got%% *}" = "${want%% *}" ] || rig_fail "the first $size_mb MiB differ from the pattern"
	rig_run 60 fio --name=srp --filename="$disk" --direct=1 --ioengine=libaio \
		--iodepth=32 --rw=randwrite --bsrange=4k-128k --offset=32M --size=8M \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--output="$RIG_TEST_OUT/fio.txt" || rig_fail "fio verify failed (see fio.txt)"
	rig_log "fio: 8 MiB of random writes (4-128 KiB, queue depth 32) read back, crc32c verified"
	srp_logout
	srp_host_finish
fi
exit 0
