#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The SCSI RDMA Protocol, for the guest tests that use it (srp.sh,
# srp_teardown.sh): the LIO target ib_srpt set up through configfs on guest
# a, the initiator ib_srp on guest b logging in over rdma_cm (add_target
# with the target's IPv4 address, no srp_daemon). Sourced after
# lib/guest.sh.
#
# The target exports a 64 MiB RAM disk (brd) as LUN 0, with an rdma_cm
# listener on port $SRP_PORT. Its port is named after its GID 0 (0x and 32
# hex digits) and the ACL names the initiator by its SRP port ID. The IP
# address forms do not do (6.1, 6.12): ib_srpt names an rdma_cm session
# after the ID's route.addr.src_addr, which on the listening side is the
# target's own address, so an ACL for the initiator's address never
# matches.

SRP_CFG=/sys/kernel/config/target
SRP_PORT=5555

# srp_gid0: GID 0 of this guest's device, 32 hex digits.
srp_gid0() {
	local g
	read -r g <"/sys/class/infiniband/$RIG_DEV/ports/1/gids/0"
	echo "${g//:/}"
}

# srp_initiator_id: the initiator's SRP port ID, for the target's ACL: the
# initiator extension (0 here) and the interface ID of the GID 0 that
# ib_srp logs in from.
srp_initiator_id() {
	local g
	g=$(srp_gid0)
	echo "0x0000000000000000${g:16}"
}

# --- target (guest a) --------------------------------------------------

# srp_target_up INITIATOR: the RAM disk as LUN 0 of ib_srpt's port on this
# guest's device, for the initiator of SRP port ID INITIATOR. Sets
# SRP_GUID (ib_srpt's service GUID, the initiator's id_ext and ioc_guid)
# and SRP_ACL (the ACL's configfs folder).
srp_target_up() {
	local cfg=$SRP_CFG
	[ -d /sys/module/brd ] && srp_had_brd=1
	modprobe brd rd_nr=1 rd_size=65536 || rig_fail "modprobe brd"
	[ -b /dev/ram0 ] || rig_fail "no /dev/ram0"
	modprobe ib_srpt || rig_fail "modprobe ib_srpt"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	read -r SRP_GUID </sys/module/ib_srpt/parameters/srpt_service_guid
	SRP_GUID=${SRP_GUID#0x}
	srp_wwn=$cfg/srpt/0x$(srp_gid0)
	srp_tpg=$srp_wwn/tpg_1
	SRP_ACL=$srp_tpg/acls/$1

	mkdir "$cfg/core/iblock_0" && mkdir "$cfg/core/iblock_0/ram0" ||
		rig_fail "cannot create the iblock backstore"
	echo udev_path=/dev/ram0 >"$cfg/core/iblock_0/ram0/control"
	echo 1 >"$cfg/core/iblock_0/ram0/enable" || rig_fail "cannot enable the backstore"
	[ -d "$cfg/srpt" ] || mkdir "$cfg/srpt" || rig_fail "cannot register the srpt fabric"
	echo "$SRP_PORT" >"$cfg/srpt/discovery_auth/rdma_cm_port" ||
		rig_fail "ib_srpt cannot listen on rdma_cm port $SRP_PORT"
	mkdir "$srp_wwn" || rig_fail "ib_srpt has no port ${srp_wwn##*/} on $RIG_DEV"
	mkdir "$srp_tpg" "$srp_tpg/lun/lun_0" || rig_fail "cannot create the target portal group"
	ln -s "$cfg/core/iblock_0/ram0" "$srp_tpg/lun/lun_0/ram0" || rig_fail "cannot make LUN 0"
	mkdir "$SRP_ACL" "$SRP_ACL/lun_0" || rig_fail "cannot create the ACL $1"
	ln -s "$srp_tpg/lun/lun_0" "$SRP_ACL/lun_0/lun_0" || rig_fail "cannot map LUN 0 in the ACL"
	echo 1 >"$srp_tpg/enable" || rig_fail "cannot enable the target portal group"
	rig_log "srpt target ${srp_wwn##*/}/tpg_1 on $RIG_DEV, rdma_cm ${RIG_IP4%/*}:$SRP_PORT," \
		"id_ext=ioc_guid=$SRP_GUID, LUN 0 = /dev/ram0, ACL $1"
}

# srp_target_down: undo srp_target_up, as far as it got, in reverse order;
# then unload. Fails when a module stays.
srp_target_down() {
	local cfg=$SRP_CFG m
	[ -n "${srp_down:-}" ] && return 0
	srp_down=1
	if [ -n "${srp_tpg:-}" ] && [ -d "$srp_tpg" ]; then
		echo 0 >"$srp_tpg/enable"
		rm -f "$SRP_ACL/lun_0/lun_0"
		rmdir "$SRP_ACL/lun_0" "$SRP_ACL" 2>/dev/null
		rm -f "$srp_tpg/lun/lun_0/ram0"
		rmdir "$srp_tpg/lun/lun_0" "$srp_tpg"
	fi
	[ -n "${srp_wwn:-}" ] && [ -d "$srp_wwn" ] && rmdir "$srp_wwn"
	[ -d "$cfg/srpt" ] && rmdir "$cfg/srpt"
	[ -d "$cfg/core/iblock_0" ] && rmdir "$cfg/core/iblock_0/ram0" "$cfg/core/iblock_0"
	# target_core_mod loads all its backstores with the first HBA.
	rig_unload ib_srpt target_core_iblock target_core_file target_core_pscsi \
		target_core_user target_core_mod
	[ -z "${srp_had_brd:-}" ] && rig_unload brd
	for m in ib_srpt target_core_mod; do
		[ -d "/sys/module/$m" ] && rig_fail "$m is still loaded"
	done
	return 0
}

# --- initiator (guest b) ----------------------------------------------

# srp_host_up: the SCSI disk driver (no udev here to load it for a new
# LUN) and ib_srp, with the add_target file of this guest's device.
srp_host_up() {
	[ -d /sys/module/sd_mod ] || srp_our_sd=1
	modprobe sd_mod || rig_fail "modprobe sd_mod"
	modprobe ib_srp || rig_fail "modprobe ib_srp"
	SRP_ADD=/sys/class/infiniband_srp/srp-$RIG_DEV-1/add_target
	[ -e "$SRP_ADD" ] || rig_fail "no $SRP_ADD"
}

# srp_find_disk: the SCSI host ib_srp made (SRP_SHOST) and its disk
# (SRP_DISK).
srp_find_disk() {
	local h p d
	for h in /sys/class/scsi_host/host*; do
		read -r p <"$h/proc_name" 2>/dev/null || continue
		[ "$p" = ib_srp ] || continue
		SRP_SHOST=$h
		for d in "$h"/device/target*/*/block/*; do
			[ -b "/dev/${d##*/}" ] && { SRP_DISK=/dev/${d##*/}; return 0; }
		done
	done
	return 1
}

# srp_login GUID: log in to the target of service GUID GUID (add_target,
# then up to 20 s for the disk). Sets SRP_SHOST, SRP_DISK, SRP_RPORT (the
# SRP remote port in sysfs) and SRP_LOGIN_MS.
srp_login() {
	local opts="id_ext=$1,ioc_guid=$1,dest=$RIG_PEER_IP4:$SRP_PORT" t0 end h
	t0=${EPOCHREALTIME/./}
	echo "$opts" >"$SRP_ADD" || rig_fail "add_target $opts failed"
	# shellcheck disable=SC2034 # for the caller
	SRP_LOGIN_MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
	SRP_SHOST="" SRP_DISK=""
	end=$((EPOCHSECONDS + $(rig_limit 20)))
	until srp_find_disk; do
		[ "$EPOCHSECONDS" -ge "$end" ] && rig_fail "no disk on the ib_srp SCSI host ${SRP_SHOST:-(none)}"
		rig_sleep 0.2
	done
	h=${SRP_SHOST##*/}
	SRP_RPORT=$(echo "/sys/class/srp_remote_ports/port-${h#host}:"*)
	[ -e "$SRP_RPORT/delete" ] || rig_fail "no SRP remote port for $h"
	rig_log "logged in: $opts; $h (${SRP_RPORT##*/}) on $(srp_host_attr local_ib_device)" \
		"port $(srp_host_attr local_ib_port), sgid $(srp_host_attr sgid)," \
		"$(srp_host_attr ch_count) channel(s), req_lim $(srp_host_attr req_lim); disk $SRP_DISK," \
		"$(($(cat "/sys/class/block/${SRP_DISK#/dev/}/size") >> 11)) MiB"
}

# srp_host_attr NAME: attribute NAME of the SCSI host, on one line.
srp_host_attr() { tr -d '\n' <"$SRP_SHOST/$1" 2>/dev/null; }

# srp_logout: delete the remote port; its SCSI host and disk must go.
srp_logout() {
	echo 1 >"$SRP_RPORT/delete" || rig_fail "cannot delete $SRP_RPORT"
	srp_host_gone logout
	rig_log "logged out: ${SRP_SHOST##*/} and $SRP_DISK are gone"
}

# srp_host_gone WHAT: the SCSI host and its disk must go within 20 s of
# WHAT.
srp_host_gone() {
	local end=$((EPOCHSECONDS + $(rig_limit 20)))
	while [ -e "$SRP_SHOST" ] || [ -e "$SRP_DISK" ]; do
		[ "$EPOCHSECONDS" -ge "$end" ] && rig_fail "${SRP_SHOST##*/} or $SRP_DISK still there after $1"
		rig_sleep 0.2
	done
}

# srp_host_cleanup: log out if still logged in; unload what was loaded.
srp_host_cleanup() {
	[ -n "${SRP_RPORT:-}" ] && [ -e "$SRP_RPORT/delete" ] && echo 1 >"$SRP_RPORT/delete"
	rig_unload ib_srp scsi_transport_srp
	[ -n "${srp_our_sd:-}" ] && rig_unload sd_mod
	return 0
}

# srp_host_finish: after the last logout, tell the target (host-done),
# wait until it is down (target-down), unload the initiator.
srp_host_finish() {
	rig_signal host-done
	rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
	srp_host_cleanup
	[ -d /sys/module/ib_srp ] && rig_fail "ib_srp is still loaded"
	return 0
}
