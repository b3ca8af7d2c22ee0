#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A kernel ULP over the RDMA devices: the SCSI RDMA Protocol. Guest a
# exports a 64 MiB RAM disk (brd) as LUN 0 of the LIO target ib_srpt,
# configured through configfs, with an rdma_cm listener on port 5555;
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
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# A kernel ULP over sroce, as target and as initiator.
rig_suites sroce-sroce sroce-rxe rxe-sroce

rig_require_peer
rig_require_cmd openssl fio
rig_setup_dev
cfg=/sys/kernel/config/target
port=5555
pattern=/tmp/srp-pattern
size_mb=16

# GID 0 of this guest's device, 32 hex digits.
gid0() {
	local g
	read -r g <"/sys/class/infiniband/$RIG_DEV/ports/1/gids/0"
	echo "${g//:/}"
}

# --- target (guest a) --------------------------------------------------

# The target port is named after its GID 0 (0x and 32 hex digits) and the
# ACL names the initiator by its SRP port ID. The IP address forms do not
# do (6.1, 6.12): ib_srpt names an rdma_cm session after the ID's
# route.addr.src_addr, which on the listening side is the target's own
# address, so an ACL for the initiator's address never matches.
target_up() {
	[ -d /sys/module/brd ] && had_brd=1
	modprobe brd rd_nr=1 rd_size=65536 || rig_fail "modprobe brd"
	[ -b /dev/ram0 ] || rig_fail "no /dev/ram0"
	dd if=/dev/zero of=/dev/ram0 bs=1M count="$size_mb" oflag=direct status=none
	modprobe ib_srpt || rig_fail "modprobe ib_srpt"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	read -r guid </sys/module/ib_srpt/parameters/srpt_service_guid
	guid=${guid#0x}
	wwn=$cfg/srpt/0x$(gid0)
	tpg=$wwn/tpg_1
	acl=$tpg/acls/$initiator

	mkdir "$cfg/core/iblock_0" && mkdir "$cfg/core/iblock_0/ram0" ||
		rig_fail "cannot create the iblock backstore"
	echo udev_path=/dev/ram0 >"$cfg/core/iblock_0/ram0/control"
	echo 1 >"$cfg/core/iblock_0/ram0/enable" || rig_fail "cannot enable the backstore"
	[ -d "$cfg/srpt" ] || mkdir "$cfg/srpt" || rig_fail "cannot register the srpt fabric"
	echo "$port" >"$cfg/srpt/discovery_auth/rdma_cm_port" ||
		rig_fail "ib_srpt cannot listen on rdma_cm port $port"
	mkdir "$wwn" || rig_fail "ib_srpt has no port ${wwn##*/} on $RIG_DEV"
	mkdir "$tpg" "$tpg/lun/lun_0" || rig_fail "cannot create the target portal group"
	ln -s "$cfg/core/iblock_0/ram0" "$tpg/lun/lun_0/ram0" || rig_fail "cannot make LUN 0"
	mkdir "$acl" "$acl/lun_0" || rig_fail "cannot create the ACL $initiator"
	ln -s "$tpg/lun/lun_0" "$acl/lun_0/lun_0" || rig_fail "cannot map LUN 0 in the ACL"
	echo 1 >"$tpg/enable" || rig_fail "cannot enable the target portal group"
	rig_log "srpt target ${wwn##*/}/tpg_1 on $RIG_DEV, rdma_cm ${RIG_IP4%/*}:$port," \
		"id_ext=ioc_guid=$guid, LUN 0 = /dev/ram0, ACL $initiator"
}

# Undo target_up, as far as it got, in reverse order; then unload.
target_down() {
	local m
	[ -n "${down:-}" ] && return 0
	down=1
	if [ -n "${tpg:-}" ] && [ -d "$tpg" ]; then
		echo 0 >"$tpg/enable"
		rm -f "$acl/lun_0/lun_0"
		rmdir "$acl/lun_0" "$acl" 2>/dev/null
		rm -f "$tpg/lun/lun_0/ram0"
		rmdir "$tpg/lun/lun_0" "$tpg"
	fi
	[ -n "${wwn:-}" ] && [ -d "$wwn" ] && rmdir "$wwn"
	[ -d "$cfg/srpt" ] && rmdir "$cfg/srpt"
	[ -d "$cfg/core/iblock_0" ] && rmdir "$cfg/core/iblock_0/ram0" "$cfg/core/iblock_0"
	# target_core_mod loads all its backstores with the first HBA.
	rig_unload ib_srpt target_core_iblock target_core_file target_core_pscsi \
		target_core_user target_core_mod
	[ -z "${had_brd:-}" ] && rig_unload brd
	for m in ib_srpt target_core_mod; do
		[ -d "/sys/module/$m" ] && rig_fail "$m is still loaded"
	done
	return 0
}

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

# The SCSI host ib_srp made (shost) and its disk (disk).
find_disk() {
	local h p d
	for h in /sys/class/scsi_host/host*; do
		read -r p <"$h/proc_name" 2>/dev/null || continue
		[ "$p" = ib_srp ] || continue
		shost=$h
		for d in "$h"/device/target*/*/block/*; do
			[ -b "/dev/${d##*/}" ] && { disk=/dev/${d##*/}; return 0; }
		done
	done
	return 1
}

# Log out if still logged in; unload what this test loaded.
host_cleanup() {
	[ -n "${rport:-}" ] && [ -e "$rport/delete" ] && echo 1 >"$rport/delete"
	rig_unload ib_srp scsi_transport_srp
	[ -n "${our_sd:-}" ] && rig_unload sd_mod
	return 0
}

rig_make_pattern "$pattern" "$size_mb" srp
if rig_is_a; then
	want=$(sha256sum <"$pattern")
	trap target_down EXIT
	initiator=$(rig_wait initiator 60) || rig_fail "no initiator port ID from the peer"
	target_up
	rig_signal target-up "$guid"
	rig_wait logged-in 60 >/dev/null &&
		rig_log "connection: $(rdma resource show cm_id |
			grep -m1 "src-addr ${RIG_IP4%/*}:$port dst-addr")"
	rig_wait host-done 120 >/dev/null || rig_fail "the initiator did not finish"
	got=$(head -c $((size_mb << 20)) /dev/ram0 | sha256sum)
	[ "${got%% *}" = "${want%% *}" ] || rig_fail "the RAM disk does not hold the pattern"
	st=$acl/lun_0/statistics/scsi_auth_intr
	read -r wmb <"$st/write_mbytes"
	read -r rmb <"$st/read_mbytes"
	read -r cmds <"$st/num_cmds"
	rig_log "the RAM disk holds the $size_mb MiB the initiator wrote; LIO counted" \
		"$cmds commands, $wmb MiB written and $rmb MiB read for $initiator"
	[ "${wmb:-0}" -ge $((size_mb + 8)) ] || rig_fail "only ${wmb:-0} MiB written through the ACL"
	target_down
	rig_signal target-down
else
	trap host_cleanup EXIT
	# The initiator's port ID: the initiator extension (0 here) and the
	# interface ID of the GID 0 that ib_srp logs in from.
	g=$(gid0)
	rig_signal initiator "0x0000000000000000${g:16}"
	# No udev here to load the SCSI disk driver for the new LUN.
	[ -d /sys/module/sd_mod ] || our_sd=1
	modprobe sd_mod || rig_fail "modprobe sd_mod"
	modprobe ib_srp || rig_fail "modprobe ib_srp"
	srp=/sys/class/infiniband_srp/srp-$RIG_DEV-1
	[ -e "$srp/add_target" ] || rig_fail "no $srp/add_target"
	guid=$(rig_wait target-up 60) || rig_fail "the target did not come up"
	opts="id_ext=$guid,ioc_guid=$guid,dest=$RIG_PEER_IP4:$port"
	t0=${EPOCHREALTIME/./}
	echo "$opts" >"$srp/add_target" || rig_fail "add_target $opts failed"
	rig_metric srp_login_ms $(((${EPOCHREALTIME/./} - t0) / 1000)) ms
	shost="" disk=""
	end=$((EPOCHSECONDS + $(rig_limit 20)))
	until find_disk; do
		[ "$EPOCHSECONDS" -ge "$end" ] && rig_fail "no disk on the ib_srp SCSI host ${shost:-(none)}"
		rig_sleep 0.2
	done
	rig_signal logged-in
	h=${shost##*/}
	rport=$(echo "/sys/class/srp_remote_ports/port-${h#host}:"*)
	[ -e "$rport/delete" ] || rig_fail "no SRP remote port for $h"
	attr() { tr -d '\n' <"$shost/$1" 2>/dev/null; }
	rig_log "logged in: $opts; $h (${rport##*/}) on $(attr local_ib_device)" \
		"port $(attr local_ib_port), sgid $(attr sgid), $(attr ch_count) channel(s)," \
		"req_lim $(attr req_lim); disk $disk," \
		"$(($(cat "/sys/class/block/${disk#/dev/}/size") >> 11)) MiB"
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
	echo 1 >"$rport/delete" || rig_fail "cannot delete $rport"
	end=$((EPOCHSECONDS + $(rig_limit 20)))
	while [ -e "$shost" ] || [ -e "$disk" ]; do
		[ "$EPOCHSECONDS" -ge "$end" ] && rig_fail "$h or $disk still there after logout"
		rig_sleep 0.2
	done
	rig_log "logged out: $h and $disk are gone"
	rig_signal host-done
	rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
	host_cleanup
	[ -d /sys/module/ib_srp ] && rig_fail "ib_srp is still loaded"
fi
exit 0
