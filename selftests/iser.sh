#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A kernel ULP over the RDMA devices: iSCSI Extensions for RDMA (iSER).
# Guest a runs the LIO target, set up with targetcli: a 64 MiB RAM disk
# (brd) as a block backstore, an iSCSI target with one LUN, an ACL for
# guest b's initiator name and a portal on its address with iSER enabled
# (ib_isert). Guest b runs open-iscsi (iscsid and iscsiadm, with a
# writable copy of /etc/iscsi bound over the read-only one) through an
# iface with iface.transport_name = iser (ib_iser): SendTargets discovery,
# login, and checks that the session is an iSER one on both ends. Then b
# writes 16 MiB of random data to the raw disk with O_DIRECT and reads it
# back, makes an ext4 file system, writes files of 4 KiB, 100003 bytes,
# 1 MiB and 16 MiB, unmounts, flushes the disk's buffers, mounts again and
# compares their SHA-256 with the sources. After b logged out, a tears the target
# down and finds the same files, with the same checksums, on its RAM disk.
#
# The connection comes up through the kernel's rdma_cm; iSER moves the
# SCSI data with RDMA READ and WRITE from kernel QPs, registering the
# initiator's buffers with fast registration (IB_WR_REG_MR) and
# invalidating them (LOCAL_INV, or SEND with Invalidate from the target).
# timeout: 150
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# A kernel ULP over sroce, as target and as initiator.
rig_suites sroce-sroce sroce-rxe rxe-sroce

rig_require_peer
if rig_is_a; then
	rig_require_cmd targetcli dbus-run-session
else
	rig_require_cmd iscsid iscsiadm mkfs.ext4
fi
rig_setup_dev

iqn_t=iqn.2026-11.org.sroce:iser-target
iqn_i=iqn.2026-11.org.sroce:iser-initiator
port=3260
disk_mb=64
cfg=/sys/kernel/config/target
tpg=$cfg/iscsi/$iqn_t/tpgt_1
mnt=/mnt/iser
data=/tmp/iser-data
etc_copy=/run/iser-etc-iscsi
# File name and size in bytes of each file written through the file system.
files=(f4k:4096 odd:100003 f1m:1048576 f16m:16777216)

# cm_check MODULE: MODULE (ib_isert or ib_iser) has a connected rdma_cm ID
# with a QP on this guest's device, to the peer; sets cm to a description.
cm_check() {
	local line
	rig_run 20 rdma resource show cm_id >"$RIG_TEST_OUT/cm_id-$1.txt" 2>&1
	cm=""
	while read -r line; do
		[[ "$line " == "link $RIG_DEV/1 "* ]] || continue
		[[ "$line " == *" state CONNECT "* ]] || continue
		[[ "$line " == *" comm [$1] "* ]] || continue
		[[ "$line " == *" dst-addr $RIG_PEER_IP4:"* ]] || continue
		[[ "$line " == *" lqpn "* ]] || continue
		cm=${line#* lqpn }
		cm="$RIG_DEV, rdma_cm ID of $1 with QP ${cm%% *}"
		return 0
	done <"$RIG_TEST_OUT/cm_id-$1.txt"
	cat "$RIG_TEST_OUT/cm_id-$1.txt"
	rig_fail "no connected rdma_cm ID of $1 on $RIG_DEV"
}

# --- guest a: the LIO target -------------------------------------------

# tcli NAME: run the targetcli commands on stdin in one targetcli shell (one
# Python start-up, seconds under TCG); output in RIG_TEST_OUT/targetcli-NAME.log.
# Its status says little (the shell goes on after a failed command): the
# callers check configfs. targetcli asks the system D-Bus for tcmu-runner's
# backstores and exits when there is no bus at all, as in the guest: it
# gets a private bus of its own, gone when it exits.
tcli() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	rig_run 90 dbus-run-session -- \
		sh -c 'DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS exec targetcli' \
		>"$RIG_TEST_OUT/targetcli-$1.log" 2>&1
}

target_up() {
	local ip=${RIG_IP4%/*} np v
	# A RAM disk of our size (another test may have left brd loaded).
	rig_unload brd || rig_fail "cannot unload brd"
	modprobe brd rd_nr=1 rd_size=$((disk_mb << 10)) max_part=0 || rig_fail "modprobe brd"
	tcli setup <<-EOF
		set global color_mode=false auto_save_on_exit=false auto_add_default_portal=false
		/backstores/block create name=iser0 dev=/dev/ram0
		/iscsi create $iqn_t
		/iscsi/$iqn_t/tpg1/luns create /backstores/block/iser0
		/iscsi/$iqn_t/tpg1/acls create $iqn_i
		/iscsi/$iqn_t/tpg1 set attribute authentication=0
		/iscsi/$iqn_t/tpg1/portals create $ip $port
		/iscsi/$iqn_t/tpg1/portals/$ip:$port enable_iser boolean=true
		ls /iscsi
		exit
	EOF
	np=$tpg/np/$ip:$port
	v=""
	[ -e "$np/iser" ] && read -r v <"$np/iser"
	if [ "$v" != 1 ] || ! [ -e "$tpg/lun/lun_0" ] || ! [ -e "$tpg/acls/$iqn_i/lun_0" ]; then
		cat "$RIG_TEST_OUT/targetcli-setup.log"
		rig_fail "targetcli did not set up an iSER portal with a LUN (see targetcli-setup.log)"
	fi
	read -r v <"$tpg/enable"
	[ "$v" = 1 ] || rig_fail "the TPG is not enabled"
	rig_log "LIO target $iqn_t on $ip:$port (np iser=1), LUN 0 = /dev/ram0 ($disk_mb MiB), ACL $iqn_i"
}

# target_check: while b is logged in, the session is there and is iSER.
target_check() {
	local info
	info=$(<"$tpg/acls/$iqn_i/info")
	[[ "$info" == *TARG_SESS_STATE_LOGGED_IN* ]] || {
		echo "$info"
		rig_fail "no session of $iqn_i logged in on the target"
	}
	# LIO names any transport but TCP "SCTP" here.
	if [[ "$info" != *"Address $RIG_PEER_IP4 "* ]] || [[ "$info" == *"Address $RIG_PEER_IP4 TCP"* ]]; then
		echo "$info"
		rig_fail "the session's connection is not an iSER one"
	fi
	cm_check ib_isert
	rig_log "target: session of $iqn_i logged in, connected over $cm"
}

# target_down: remove the configuration and unload the target's modules.
target_down() {
	if [ -d "$cfg/core" ]; then
		printf '%s\n' "set global auto_save_on_exit=false" "clearconfig confirm=True" exit |
			tcli teardown
	fi
	if [ -d "$cfg/iscsi/$iqn_t" ]; then
		cat "$RIG_TEST_OUT/targetcli-teardown.log"
		return 1
	fi
	# The fabric's folder holds its module.
	[ -d "$cfg/iscsi" ] && rmdir "$cfg/iscsi"
	rig_unload ib_isert iscsi_target_mod tcm_loop target_core_user uio target_core_pscsi \
		target_core_file target_core_iblock target_core_mod
}

# target_files SUMS: mount the RAM disk read-only and compare its files
# with SUMS ("name=sha256 ...", from b).
target_files() {
	local kv name got n=0
	# Nothing on this guest has read the RAM disk but LIO, whose bios
	# bypass the page cache; flush what there may be anyway.
	blockdev --flushbufs /dev/ram0
	mkdir -p "$mnt"
	mount -t ext4 -o ro,noload /dev/ram0 "$mnt" || rig_fail "cannot mount the RAM disk"
	for kv in $1; do
		name=${kv%%=*}
		got=$(sha256sum <"$mnt/$name")
		[ "${got%% *}" = "${kv#*=}" ] || {
			umount "$mnt"
			rig_fail "$name on the RAM disk differs from what b wrote"
		}
		n=$((n + 1))
	done
	umount "$mnt" || rig_fail "cannot unmount the RAM disk"
	[ "$n" = "${#files[@]}" ] || rig_fail "b reported $n files, not ${#files[@]}"
	rig_log "the RAM disk holds the $n files b wrote, sha256 matches"
}

a_cleanup() {
	mountpoint -q "$mnt" && umount "$mnt"
	target_down
	rig_unload brd
}

# --- guest b: the open-iscsi initiator ----------------------------------

iscsid_pid=""
sd_mod_ours=""
logged_in=""

# iscsi_up: a writable /etc/iscsi with our initiator name, then iscsid.
iscsi_up() {
	local line up=""
	modprobe ib_iser || rig_fail "modprobe ib_iser"
	# No udev either, to load the SCSI disk driver for the LUN.
	[ -d /sys/module/sd_mod ] || { modprobe sd_mod && sd_mod_ours=1; } || rig_fail "modprobe sd_mod"
	mkdir -p "$etc_copy"
	cp -a /etc/iscsi/. "$etc_copy/" || rig_fail "cannot copy /etc/iscsi"
	echo "InitiatorName=$iqn_i" >"$etc_copy/initiatorname.iscsi"
	# No systemd to start iscsid; short timeouts so that a failure ends soon.
	sed -i -e 's/^iscsid.startup *=.*/iscsid.startup = \/bin\/true/' \
		-e 's/^\(node.session.timeo.replacement_timeout\) *=.*/\1 = 10/' \
		-e 's/^\(node.session.initial_login_retry_max\) *=.*/\1 = 2/' \
		"$etc_copy/iscsid.conf"
	mount --bind "$etc_copy" /etc/iscsi || rig_fail "cannot bind a copy over /etc/iscsi"
	rig_bg iscsid 150 iscsid -f -n
	iscsid_pid=$RIG_BG_PID
	for _ in $(seq "$(rig_limit 50)"); do
		while read -r line; do
			[[ "$line" == *@ISCSIADM_ABSTRACT_NAMESPACE* ]] && up=1 && break
		done </proc/net/unix
		[ -n "$up" ] && break
		kill -0 "$iscsid_pid" 2>/dev/null || break
		rig_sleep 0.2
	done
	[ -n "$up" ] || rig_fail "iscsid did not start (see iscsid.log)"
}

b_cleanup() {
	mountpoint -q "$mnt" && umount "$mnt"
	if [ -n "$iscsid_pid" ]; then
		[ -n "$logged_in" ] &&
			rig_run 30 iscsiadm -m node -T "$iqn_t" -I iser_if --logout >/dev/null 2>&1
		rig_run 10 iscsiadm -m node -T "$iqn_t" -I iser_if -o delete >/dev/null 2>&1
		# SIGTERM goes through timeout(1) to iscsid; SIGKILL after 5 s.
		kill "$iscsid_pid" 2>/dev/null
		for _ in $(seq 25); do
			kill -0 "$iscsid_pid" 2>/dev/null || break
			rig_sleep 0.2
		done
		kill -KILL "$iscsid_pid" 2>/dev/null
		wait "$iscsid_pid" 2>/dev/null
		iscsid_pid=""
	fi
	mountpoint -q /etc/iscsi && umount /etc/iscsi
	rm -rf "$etc_copy" "$data"
	rig_unload ib_iser iscsi_tcp libiscsi_tcp libiscsi scsi_transport_iscsi ${sd_mod_ours:+sd_mod}
}

# find_disk: the block device of the session's LUN, once it is there.
find_disk() {
	local d
	for d in /sys/class/iscsi_session/session*/device/target*/*:*:*:*/block/*; do
		[ -e "$d" ] && [ -b "/dev/${d##*/}" ] && echo "${d##*/}" && return 0
	done
	return 1
}

# check_files DIR: the files in DIR have the sources' checksums.
check_files() {
	local f got
	for f in "${files[@]}"; do
		got=$(sha256sum <"$1/${f%%:*}")
		[ "${got%% *}" = "${sums[${f%%:*}]}" ] || rig_fail "${f%%:*} read back differs from what was written"
	done
}

if rig_is_a; then
	trap a_cleanup EXIT
	t0=$SECONDS
	target_up
	rig_log "target set up in $((SECONDS - t0)) s"
	rig_signal target-up
	rig_wait logged-in 120 >/dev/null || rig_fail "the initiator did not log in"
	target_check
	rig_signal target-checked
	sums=$(rig_wait host-done 120) || rig_fail "the initiator did not finish"
	t0=$SECONDS
	target_down || rig_fail "cannot tear the target down"
	rig_log "target torn down, modules unloaded in $((SECONDS - t0)) s"
	target_files "$sums"
	rig_unload brd || rig_fail "cannot unload brd"
	trap - EXIT
	for m in ib_isert iscsi_target_mod target_core_mod brd; do
		if [ -d "/sys/module/$m" ]; then
			rig_fail "$m is still loaded"
		fi
	done
else
	trap b_cleanup EXIT
	declare -A sums
	mkdir -p "$data" "$mnt"
	for f in "${files[@]}"; do
		openssl enc -aes-128-ctr -pass "pass:${RIG_RUN_ID:-sroce}-$f" -nosalt -pbkdf2 \
			</dev/zero 2>/dev/null | head -c "${f#*:}" >"$data/${f%%:*}"
		[ "$(stat -c %s "$data/${f%%:*}")" = "${f#*:}" ] || rig_fail "cannot make $f"
		sum=$(sha256sum <"$data/${f%%:*}")
		sums[${f%%:*}]=${sum%% *}
	done
	iscsi_up
	rig_run 10 iscsiadm -m iface -I iser_if -o new >/dev/null || rig_fail "cannot create iface iser_if"
	rig_run 10 iscsiadm -m iface -I iser_if -o update -n iface.transport_name -v iser >/dev/null ||
		rig_fail "cannot set iface.transport_name = iser"
	rig_log "data made, iscsid and iface iser_if set up in $SECONDS s"
	rig_wait target-up 120 >/dev/null || rig_fail "the target did not come up"
	t0=$SECONDS
	found=$(rig_run 60 iscsiadm -m discovery -t st -p "$RIG_PEER_IP4:$port" -I iser_if) ||
		rig_fail "SendTargets discovery on $RIG_PEER_IP4:$port failed"
	[[ "$found" == *"$iqn_t"* ]] || rig_fail "discovery did not find $iqn_t: $found"
	logged_in=1
	rig_run 60 iscsiadm -m node -T "$iqn_t" -p "$RIG_PEER_IP4:$port" -I iser_if --login ||
		rig_fail "login to $iqn_t over iSER failed"
	rig_log "discovery and login in $((SECONDS - t0)) s"

	# The session must be an iSER one: no fallback to TCP.
	sess=$(rig_run 10 iscsiadm -m session) || rig_fail "iscsiadm -m session failed"
	if [[ "$sess" == *$'\n'* ]] || [[ "$sess" != "iser: "*" $iqn_t "* ]]; then
		rig_fail "not one iSER session: $sess"
	fi
	sdirs=(/sys/class/iscsi_session/session*)
	[ "${#sdirs[@]}" = 1 ] || rig_fail "sessions in sysfs: ${sdirs[*]}"
	sdir=${sdirs[0]}
	read -r tname <"$sdir/targetname"
	[ "$tname" = "$iqn_t" ] || rig_fail "${sdir##*/} is a session with $tname"
	host=$(readlink -f "$sdir/device/..")
	read -r proc <"/sys/class/scsi_host/${host##*/}/proc_name"
	[ "$proc" = iscsi_iser ] || rig_fail "the session's SCSI host ${host##*/} is $proc, not iscsi_iser"
	cm_check ib_iser
	rig_log "session: $sess; SCSI host ${host##*/} ($proc), connected over $cm"
	rig_signal logged-in

	disk=""
	for _ in $(seq "$(rig_limit 100)"); do
		disk=$(find_disk) && break
		rig_sleep 0.2
	done
	[ -n "$disk" ] || rig_fail "no disk of the session after $(rig_limit 20) s"
	read -r sectors <"/sys/block/$disk/size"
	[ "$sectors" = $((disk_mb << 11)) ] || rig_fail "/dev/$disk has $sectors sectors, not $((disk_mb << 11))"
	rig_log "LUN 0 is /dev/$disk ($disk_mb MiB)"

	# Raw: 16 MiB in 1 MiB blocks with O_DIRECT, out and back.
	t0=$SECONDS
	rig_run 60 dd if="$data/f16m" of="/dev/$disk" bs=1M oflag=direct status=none ||
		rig_fail "O_DIRECT write to /dev/$disk failed"
	got=$(rig_run 60 dd if="/dev/$disk" bs=1M count=16 iflag=direct status=none | sha256sum)
	[ "${got%% *}" = "${sums[f16m]}" ] || rig_fail "O_DIRECT read back of /dev/$disk differs"
	rig_log "raw: 16 MiB written and read back with O_DIRECT in $((SECONDS - t0)) s, sha256 matches"

	# A file system: write, unmount, flush the disk's buffers, mount, read back.
	t0=$SECONDS
	rig_run 60 mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 \
		"/dev/$disk" || rig_fail "mkfs.ext4 on /dev/$disk failed"
	rig_run 30 mount -t ext4 "/dev/$disk" "$mnt" || rig_fail "cannot mount /dev/$disk"
	for f in "${files[@]}"; do
		rig_run 60 cp "$data/${f%%:*}" "$mnt/" || rig_fail "writing ${f%%:*} failed"
	done
	rig_run 60 sync || rig_fail "sync failed"
	rig_run 60 umount "$mnt" || rig_fail "cannot unmount /dev/$disk"
	# No cached page of the disk is left: all is read back over iSER.
	blockdev --flushbufs "/dev/$disk" || rig_fail "cannot flush the buffers of /dev/$disk"
	rig_run 30 mount -t ext4 -o ro "/dev/$disk" "$mnt" || rig_fail "cannot mount /dev/$disk again"
	check_files "$mnt"
	rig_run 60 umount "$mnt" || rig_fail "cannot unmount /dev/$disk"
	rig_log "ext4: ${#files[@]} files (${files[*]}) written, read back after a remount in $((SECONDS - t0)) s, sha256 matches"

	rig_wait target-checked 60 >/dev/null || rig_fail "the target did not check the session"
	rig_run 30 iscsiadm -m node -T "$iqn_t" -p "$RIG_PEER_IP4:$port" -I iser_if --logout >/dev/null ||
		rig_fail "logout failed"
	logged_in=""
	if [ -e "/sys/block/$disk" ]; then
		rig_fail "/dev/$disk is still there after the logout"
	fi
	list=""
	for f in "${files[@]}"; do
		list+="${f%%:*}=${sums[${f%%:*}]} "
	done
	rig_signal host-done "$list"
	t0=$SECONDS
	b_cleanup
	rig_log "logged out, iscsid stopped, modules unloaded in $((SECONDS - t0)) s"
	trap - EXIT
	for m in ib_iser iscsi_tcp libiscsi scsi_transport_iscsi; do
		if [ -d "/sys/module/$m" ]; then
			rig_fail "$m is still loaded"
		fi
	done
fi
