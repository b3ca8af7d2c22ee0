#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A kernel ULP over the RDMA devices: iSCSI Extensions for RDMA (iSER;
# lib/iser.sh). Guest a runs the LIO target, set up through configfs: a
# 64 MiB RAM disk (brd) as an iblock backstore, an iSCSI target with one LUN, an ACL
# for guest b's initiator name and a portal on its address with iSER enabled
# (ib_isert). Guest b runs open-iscsi (iscsid and iscsiadm, with a writable
# copy of /etc/iscsi bound over the read-only one) through an iface with
# iface.transport_name = iser (ib_iser): SendTargets discovery, login, and
# checks that the session is an iSER one on both ends. Then b writes 16 MiB
# of random data to the raw disk with O_DIRECT and reads it back, runs fio
# with crc32c verification on it (lib/blkio.sh's blk_verified), makes an
# ext4 file system, writes files of 4 KiB, 100003 bytes, 1 MiB and 16 MiB,
# unmounts, flushes the disk's buffers, mounts again and compares their
# SHA-256 with the sources. After b logged out, a tears the target down and
# finds the same files, with the same checksums, on its RAM disk.
#
# The connection comes up through the kernel's rdma_cm; iSER moves the
# SCSI data with RDMA READ and WRITE from kernel QPs, registering the
# initiator's buffers with fast registration (IB_WR_REG_MR) and
# invalidating them (LOCAL_INV, or SEND with Invalidate from the target).
# timeout: 150
# place: sroce-rxe@1 rxe-sroce@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/iser.sh
. "$(dirname "$0")/lib/iser.sh"
# shellcheck source=lib/blkio.sh
. "$(dirname "$0")/lib/blkio.sh"
# A kernel ULP over sroce, as target and as initiator.
rig_suites sroce-sroce sroce-rxe rxe-sroce

rig_require_peer
if rig_is_b; then
	rig_require_cmd iscsid iscsiadm mkfs.ext4
fi
rig_setup_dev

disk_mb=64
mnt=/mnt/iser
data=/tmp/iser-data
# File name and size in bytes of each file written through the file system.
files=(f4k:4096 odd:100003 f1m:1048576 f16m:16777216)

# --- guest a: the LIO target -------------------------------------------

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
	iser_target_down
	rig_unload brd
}

# --- guest b: the open-iscsi initiator ----------------------------------

b_cleanup() {
	mountpoint -q "$mnt" && umount "$mnt"
	rm -rf "$data"
	iser_host_cleanup
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
	iser_target_up "$disk_mb"
	rig_log "target set up in $((SECONDS - t0)) s"
	rig_signal target-up
	rig_wait logged-in 120 >/dev/null || rig_fail "the initiator did not log in"
	iser_target_check
	rig_signal target-checked
	sums=$(rig_wait host-done 120) || rig_fail "the initiator did not finish"
	t0=$SECONDS
	iser_target_down || rig_fail "cannot tear the target down"
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
	iser_host_up
	rig_log "data made, iscsid and iface iser_if set up in $SECONDS s"
	rig_wait target-up 120 >/dev/null || rig_fail "the target did not come up"
	t0=$SECONDS
	iser_discover
	iser_login
	rig_log "discovery and login in $((SECONDS - t0)) s"
	rig_signal logged-in
	disk=$ISER_DISK
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
	# fio as on the other block devices: random 4 KiB writes at depth 16,
	# every block read back and its crc32c compared.
	blk_verified fio "/dev/$disk"

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
	iser_logout
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
