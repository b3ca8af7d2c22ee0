#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# iSCSI Extensions for RDMA, for the guest tests that use it (iser.sh,
# iser_teardown.sh): on guest a the LIO target, set up through configfs (a
# RAM disk (brd) as an iblock backstore, an iSCSI target with one LUN, an
# ACL for guest b's initiator name and a portal on a's address with iSER
# enabled: ib_isert); on guest b open-iscsi (iscsid and iscsiadm, with a
# writable copy of /etc/iscsi bound over the read-only one) through an
# iface with iface.transport_name = iser (ib_iser). Sourced after
# lib/guest.sh.

ISER_IQN_T=iqn.2026-11.org.sroce:iser-target
ISER_IQN_I=iqn.2026-11.org.sroce:iser-initiator
ISER_PORT=3260
ISER_CFG=/sys/kernel/config/target
ISER_TPG=$ISER_CFG/iscsi/$ISER_IQN_T/tpgt_1
iser_etc_copy=/run/iser-etc-iscsi
# iscsiadm's words for the target's node record through the iface iser_if.
ISER_NODE=(-m node -T "$ISER_IQN_T" -p "$RIG_PEER_IP4:$ISER_PORT" -I iser_if)

# iser_cm_check MODULE: MODULE (ib_isert or ib_iser) has a connected
# rdma_cm ID with a QP on this guest's device, to the peer; sets ISER_CM to
# a description.
iser_cm_check() {
	local line
	rig_run 20 rdma resource show cm_id >"$RIG_TEST_OUT/cm_id-$1.txt" 2>&1
	ISER_CM=""
	while read -r line; do
		[[ "$line " == "link $RIG_DEV/1 "* ]] || continue
		[[ "$line " == *" state CONNECT "* ]] || continue
		[[ "$line " == *" comm [$1] "* ]] || continue
		[[ "$line " == *" dst-addr $RIG_PEER_IP4:"* ]] || continue
		[[ "$line " == *" lqpn "* ]] || continue
		ISER_CM=${line#* lqpn }
		ISER_CM="$RIG_DEV, rdma_cm ID of $1 with QP ${ISER_CM%% *}"
		return 0
	done <"$RIG_TEST_OUT/cm_id-$1.txt"
	cat "$RIG_TEST_OUT/cm_id-$1.txt"
	rig_fail "no connected rdma_cm ID of $1 on $RIG_DEV"
}

# --- guest a: the LIO target -------------------------------------------

# The target is set up and torn down through LIO's configfs tree directly,
# as lib/srp.sh does for ib_srpt, not with targetcli: targetcli is a
# Python program (rtslib), and on the debug kernel under TCG its one shell
# took 145 s to set this target up and its clearconfig about as long
# again, most of iser_teardown's 646 s there; the directory and file
# operations below take seconds. They are what targetcli's commands did
# for this target (its "block" backstore is LIO's iblock).

# iser_target_up MIB: a MIB MiB RAM disk as LUN 0 of the target, its portal
# on this guest's address with iSER on.
iser_target_up() {
	local ip=${RIG_IP4%/*} iqn=$ISER_IQN_T bs=$ISER_CFG/core/iblock_0/iser0 acl np v
	# A RAM disk of our size (another test may have left brd loaded).
	rig_unload brd || rig_fail "cannot unload brd"
	modprobe brd rd_nr=1 rd_size=$(($1 << 10)) max_part=0 || rig_fail "modprobe brd"
	[ -b /dev/ram0 ] || rig_fail "no /dev/ram0"
	modprobe iscsi_target_mod || rig_fail "modprobe iscsi_target_mod"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	acl=$ISER_TPG/acls/$ISER_IQN_I
	np=$ISER_TPG/np/$ip:$ISER_PORT
	mkdir -p "$bs" || rig_fail "cannot create the iblock backstore"
	echo udev_path=/dev/ram0 >"$bs/control" && echo 1 >"$bs/enable" ||
		rig_fail "cannot enable the backstore on /dev/ram0"
	mkdir -p "$ISER_TPG/lun/lun_0" || rig_fail "cannot create the target $iqn and its TPG"
	ln -s "$bs" "$ISER_TPG/lun/lun_0/iser0" || rig_fail "cannot make LUN 0"
	mkdir -p "$acl/lun_0" || rig_fail "cannot create the ACL $ISER_IQN_I"
	ln -s "$ISER_TPG/lun/lun_0" "$acl/lun_0/lun_0" || rig_fail "cannot map LUN 0 in the ACL"
	echo 0 >"$ISER_TPG/attrib/authentication" || rig_fail "cannot turn authentication off"
	# A portal is a TCP one first; iser=1 adds the iSER one (ib_isert).
	mkdir "$np" || rig_fail "cannot create the portal $ip:$ISER_PORT"
	echo 1 >"$np/iser" || rig_fail "cannot enable iSER on the portal (ib_isert)"
	echo 1 >"$ISER_TPG/enable" || rig_fail "cannot enable the TPG"
	v=""
	read -r v <"$np/iser"
	[ "$v" = 1 ] || rig_fail "the portal's iser is '$v', not 1"
	rig_log "LIO target $iqn on $ip:$ISER_PORT (np iser=1), LUN 0 = /dev/ram0 ($1 MiB), ACL $ISER_IQN_I"
}

# iser_target_check: while b is logged in, the session is there and is
# iSER.
iser_target_check() {
	local info
	info=$(<"$ISER_TPG/acls/$ISER_IQN_I/info")
	[[ "$info" == *TARG_SESS_STATE_LOGGED_IN* ]] || {
		echo "$info"
		rig_fail "no session of $ISER_IQN_I logged in on the target"
	}
	# LIO names any transport but TCP "SCTP" here.
	if [[ "$info" != *"Address $RIG_PEER_IP4 "* ]] || [[ "$info" == *"Address $RIG_PEER_IP4 TCP"* ]]; then
		echo "$info"
		rig_fail "the session's connection is not an iSER one"
	fi
	iser_cm_check ib_isert
	rig_log "target: session of $ISER_IQN_I logged in, connected over $ISER_CM"
}

# iser_target_down: remove the configuration, as far as it got, in reverse
# order, and unload the target's modules (not brd). Status 1 when the
# configuration stays.
iser_target_down() {
	local bs=$ISER_CFG/core/iblock_0/iser0 acl=$ISER_TPG/acls/$ISER_IQN_I np
	if [ -d "$ISER_TPG" ]; then
		echo 0 >"$ISER_TPG/enable"
		rm -f "$acl/lun_0/lun_0"
		[ -d "$acl" ] && rmdir "$acl/lun_0" "$acl"
		for np in "$ISER_TPG"/np/*; do
			[ -d "$np" ] || continue
			[ "$(cat "$np/iser" 2>/dev/null)" = 1 ] && echo 0 >"$np/iser"
			rmdir "$np"
		done
		rm -f "$ISER_TPG/lun/lun_0/iser0"
		[ -d "$ISER_TPG/lun/lun_0" ] && rmdir "$ISER_TPG/lun/lun_0"
		rmdir "$ISER_TPG"
	fi
	[ -d "$ISER_CFG/iscsi/$ISER_IQN_T" ] && rmdir "$ISER_CFG/iscsi/$ISER_IQN_T"
	[ -d "$bs" ] && rmdir "$bs"
	[ -d "$ISER_CFG/core/iblock_0" ] && rmdir "$ISER_CFG/core/iblock_0"
	if [ -d "$ISER_CFG/iscsi/$ISER_IQN_T" ] || [ -d "$bs" ]; then
		find "$ISER_CFG/iscsi" "$ISER_CFG/core" -maxdepth 3 2>/dev/null
		return 1
	fi
	# The fabric's folder holds its module.
	[ -d "$ISER_CFG/iscsi" ] && rmdir "$ISER_CFG/iscsi"
	rig_unload ib_isert iscsi_target_mod tcm_loop target_core_user uio target_core_pscsi \
		target_core_file target_core_iblock target_core_mod
}

# --- guest b: the open-iscsi initiator ----------------------------------

iser_iscsid_pid=""
iser_sd_ours=""
iser_logged_in=""

# iser_host_up [SECONDS]: ib_iser, a writable /etc/iscsi with our
# initiator name, iscsid (for SECONDS at the most, default 150), and the
# iface iser_if.
iser_host_up() {
	local line up=""
	modprobe ib_iser || rig_fail "modprobe ib_iser"
	# No udev either, to load the SCSI disk driver for the LUN.
	[ -d /sys/module/sd_mod ] || { modprobe sd_mod && iser_sd_ours=1; } || rig_fail "modprobe sd_mod"
	mkdir -p "$iser_etc_copy"
	cp -a /etc/iscsi/. "$iser_etc_copy/" || rig_fail "cannot copy /etc/iscsi"
	echo "InitiatorName=$ISER_IQN_I" >"$iser_etc_copy/initiatorname.iscsi"
	# No systemd to start iscsid; short timeouts so that a failure ends soon.
	sed -i -e 's/^iscsid.startup *=.*/iscsid.startup = \/bin\/true/' \
		-e 's/^\(node.session.timeo.replacement_timeout\) *=.*/\1 = 10/' \
		-e 's/^\(node.session.initial_login_retry_max\) *=.*/\1 = 2/' \
		"$iser_etc_copy/iscsid.conf"
	mount --bind "$iser_etc_copy" /etc/iscsi || rig_fail "cannot bind a copy over /etc/iscsi"
	rig_bg iscsid "${1:-150}" iscsid -f -n
	iser_iscsid_pid=$RIG_BG_PID
	for _ in $(seq "$(rig_limit 50)"); do
		while read -r line; do
			[[ "$line" == *@ISCSIADM_ABSTRACT_NAMESPACE* ]] && up=1 && break
		done </proc/net/unix
		[ -n "$up" ] && break
		kill -0 "$iser_iscsid_pid" 2>/dev/null || break
		rig_sleep 0.2
	done
	[ -n "$up" ] || rig_fail "iscsid did not start (see iscsid.log)"
	# The iface as a record file, as open-iscsi's README describes: not
	# "iscsiadm -m iface -o new" and "-o update", which create it as a TCP
	# iface first and fail where the kernel has no iscsi_tcp (the debug
	# kernel builds only the iSER transport).
	mkdir -p /etc/iscsi/ifaces
	printf '%s\n' "iface.iscsi_ifacename = iser_if" "iface.transport_name = iser" \
		>/etc/iscsi/ifaces/iser_if || rig_fail "cannot write the iface record iser_if"
	rig_run 10 iscsiadm -m iface -I iser_if >"$RIG_TEST_OUT/iface.log" 2>&1 ||
		rig_fail "iscsiadm does not read the iface iser_if: $(cat "$RIG_TEST_OUT/iface.log")"
	grep -q '^iface.transport_name = iser$' "$RIG_TEST_OUT/iface.log" ||
		rig_fail "iface iser_if is not an iSER iface: $(grep transport_name "$RIG_TEST_OUT/iface.log")"
}

# iser_discover: SendTargets discovery of the peer's portal through
# iser_if; it must find the target.
iser_discover() {
	local found
	found=$(rig_run 60 iscsiadm -m discovery -t st -p "$RIG_PEER_IP4:$ISER_PORT" -I iser_if) ||
		rig_fail "SendTargets discovery on $RIG_PEER_IP4:$ISER_PORT failed"
	[[ "$found" == *"$ISER_IQN_T"* ]] || rig_fail "discovery did not find $ISER_IQN_T: $found"
}

# iser_login: log in to the discovered target; the session must be one
# iSER session (no fallback to TCP) with a connected rdma_cm ID of ib_iser,
# and its LUN show up within 20 s. Sets ISER_SESSION (its sysfs folder),
# ISER_DISK (sda) and ISER_SESS (iscsiadm's line).
iser_login() {
	local sdirs tname host proc
	iser_logged_in=1
	rig_run 60 iscsiadm "${ISER_NODE[@]}" --login || rig_fail "login to $ISER_IQN_T over iSER failed"
	ISER_SESS=$(rig_run 10 iscsiadm -m session) || rig_fail "iscsiadm -m session failed"
	if [[ "$ISER_SESS" == *$'\n'* ]] || [[ "$ISER_SESS" != "iser: "*" $ISER_IQN_T "* ]]; then
		rig_fail "not one iSER session: $ISER_SESS"
	fi
	sdirs=(/sys/class/iscsi_session/session*)
	[ "${#sdirs[@]}" = 1 ] || rig_fail "sessions in sysfs: ${sdirs[*]}"
	ISER_SESSION=${sdirs[0]}
	read -r tname <"$ISER_SESSION/targetname"
	[ "$tname" = "$ISER_IQN_T" ] || rig_fail "${ISER_SESSION##*/} is a session with $tname"
	host=$(readlink -f "$ISER_SESSION/device/..")
	read -r proc <"/sys/class/scsi_host/${host##*/}/proc_name"
	[ "$proc" = iscsi_iser ] || rig_fail "the session's SCSI host ${host##*/} is $proc, not iscsi_iser"
	iser_cm_check ib_iser
	rig_log "session: $ISER_SESS; SCSI host ${host##*/} ($proc), connected over $ISER_CM"
	ISER_DISK=""
	for _ in $(seq "$(rig_limit 100)"); do
		ISER_DISK=$(iser_find_disk) && break
		rig_sleep 0.2
	done
	[ -n "$ISER_DISK" ] || rig_fail "no disk of the session after $(rig_limit 20) s"
}

# iser_logout: log out of the target; the disk must be gone.
iser_logout() {
	rig_run 30 iscsiadm "${ISER_NODE[@]}" --logout >/dev/null || rig_fail "logout failed"
	iser_logged_in=""
	[ -e "/sys/block/$ISER_DISK" ] && rig_fail "/dev/$ISER_DISK is still there after the logout"
	return 0
}

# iser_find_disk: the block device of the session's LUN, once it is there.
iser_find_disk() {
	local d
	for d in /sys/class/iscsi_session/session*/device/target*/*:*:*:*/block/*; do
		[ -e "$d" ] && [ -b "/dev/${d##*/}" ] && echo "${d##*/}" && return 0
	done
	return 1
}

# iser_host_cleanup: log out if logged in, forget the node, stop iscsid,
# unload the initiator's modules.
iser_host_cleanup() {
	if [ -n "$iser_iscsid_pid" ]; then
		[ -n "$iser_logged_in" ] && rig_run 30 iscsiadm "${ISER_NODE[@]}" --logout >/dev/null 2>&1
		rig_run 10 iscsiadm -m node -T "$ISER_IQN_T" -I iser_if -o delete >/dev/null 2>&1
		# SIGTERM goes through timeout(1) to iscsid; SIGKILL after 5 s.
		kill "$iser_iscsid_pid" 2>/dev/null
		for _ in $(seq 25); do
			kill -0 "$iser_iscsid_pid" 2>/dev/null || break
			rig_sleep 0.2
		done
		kill -KILL "$iser_iscsid_pid" 2>/dev/null
		wait "$iser_iscsid_pid" 2>/dev/null
		iser_iscsid_pid=""
	fi
	mountpoint -q /etc/iscsi && umount /etc/iscsi
	rm -rf "$iser_etc_copy"
	rig_unload ib_iser iscsi_tcp libiscsi_tcp libiscsi scsi_transport_iscsi ${iser_sd_ours:+sd_mod}
}
