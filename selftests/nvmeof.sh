#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A kernel ULP over the RDMA devices: NVMe over Fabrics with the RDMA
# transport. Guest a exports a 64 MiB RAM disk (brd) through nvmet-rdma,
# configured with configfs; guest b connects with nvme-rdma (through
# /dev/nvme-fabrics, no nvme-cli needed), writes random data with O_DIRECT
# in 4 KiB (2 MiB of it), 64 KiB and 1 MiB blocks (8 MiB), reads each back
# and compares checksums; then guest a checks that its RAM disk holds the
# bytes.
#
# Connection setup is the kernel's rdma_cm over QP1 MADs. nvme-rdma
# registers its data buffers with fast registration (ib_alloc_mr,
# IB_WR_REG_MR) and invalidates them locally (IB_WR_LOCAL_INV) or lets
# the target do it with SEND with Invalidate; nvmet-rdma moves the data
# with RDMA READ and WRITE from kernel QPs.
# timeout: 150
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# A kernel ULP over sroce, as target/server and as host/client.
rig_suites sroce-sroce sroce-rxe rxe-sroce

rig_require_peer
rig_setup_dev
nqn=nqn.2026-11.org.sroce:selftest
cfg=/sys/kernel/config/nvmet
port=4420
pattern=/tmp/nvmeof-pattern
size_mb=8

# The data: the same bytes on both guests, from a seed the run shares.
make_pattern() {
	local seed=${RIG_RUN_ID:-sroce}
	openssl enc -aes-128-ctr -pass "pass:$seed" -nosalt -pbkdf2 </dev/zero 2>/dev/null |
		head -c $((size_mb << 20)) >"$pattern"
	[ "$(stat -c %s "$pattern")" = $((size_mb << 20)) ] || rig_fail "cannot make the test pattern"
}

target_up() {
	modprobe brd rd_nr=1 rd_size=65536 || rig_fail "modprobe brd"
	modprobe nvmet-rdma || rig_fail "modprobe nvmet-rdma"
	# configfs is a module here: mount it once nvmet has loaded it.
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	[ -d "$cfg" ] || rig_fail "no nvmet configfs at $cfg"
	mkdir "$cfg/subsystems/$nqn" || rig_fail "cannot create the subsystem"
	echo 1 >"$cfg/subsystems/$nqn/attr_allow_any_host"
	mkdir "$cfg/subsystems/$nqn/namespaces/1"
	echo /dev/ram0 >"$cfg/subsystems/$nqn/namespaces/1/device_path"
	echo 1 >"$cfg/subsystems/$nqn/namespaces/1/enable" || rig_fail "cannot enable the namespace"
	mkdir "$cfg/ports/1"
	echo rdma >"$cfg/ports/1/addr_trtype"
	echo ipv4 >"$cfg/ports/1/addr_adrfam"
	echo "${RIG_IP4%/*}" >"$cfg/ports/1/addr_traddr"
	echo "$port" >"$cfg/ports/1/addr_trsvcid"
	ln -s "$cfg/subsystems/$nqn" "$cfg/ports/1/subsystems/$nqn" ||
		rig_fail "cannot enable the RDMA port (is the device up?)"
	rig_log "nvmet-rdma target $nqn on ${RIG_IP4%/*}:$port, namespace /dev/ram0"
}

target_down() {
	rm -f "$cfg/ports/1/subsystems/$nqn"
	rmdir "$cfg/ports/1" 2>/dev/null
	echo 0 >"$cfg/subsystems/$nqn/namespaces/1/enable" 2>/dev/null
	rmdir "$cfg/subsystems/$nqn/namespaces/1" "$cfg/subsystems/$nqn" 2>/dev/null
	modprobe -r nvmet-rdma nvmet || rig_fail "cannot unload nvmet-rdma"
}

# host_io DEV BS MIB: write the first MIB MiB of the pattern in blocks of
# BS, read them back, compare.
host_io() {
	local dev=$1 bs=$2 mib=$3 count got want
	count=$(((mib << 20) / bs))
	want=$(head -c $((mib << 20)) "$pattern" | sha256sum)
	want=${want%% *}
	rig_run 60 dd if="$pattern" of="$dev" bs="$bs" count="$count" oflag=direct status=none ||
		rig_fail "write with bs=$bs failed"
	got=$(rig_run 60 dd if="$dev" bs="$bs" count="$count" iflag=direct status=none | sha256sum)
	[ "${got%% *}" = "$want" ] || rig_fail "read back with bs=$bs differs from what was written"
	rig_log "bs=$bs: wrote and read back $mib MiB, sha256 matches"
}

make_pattern
if rig_is_a; then
	want=$(sha256sum <"$pattern")
	want=${want%% *}
	target_up
	rig_signal target-up
	rig_wait host-done 120 >/dev/null || { target_down; rig_fail "the host did not finish"; }
	got=$(head -c $((size_mb << 20)) /dev/ram0 | sha256sum)
	[ "${got%% *}" = "$want" ] || { target_down; rig_fail "the RAM disk does not hold the pattern"; }
	rig_log "the RAM disk holds the $size_mb MiB the host wrote"
	target_down
	rig_signal target-down
else
	modprobe nvme-rdma || rig_fail "modprobe nvme-rdma"
	rig_wait target-up 60 >/dev/null || rig_fail "the target did not come up"
	ctrl=$(echo "transport=rdma,traddr=${RIG_PEER_IP4},trsvcid=$port,nqn=$nqn" |
		(exec 3<>/dev/nvme-fabrics && cat >&3 && cat <&3)) ||
		rig_fail "connecting to $nqn over RDMA failed"
	inst=$(sed -n 's/.*instance=\([0-9]\+\).*/\1/p' <<<"$ctrl")
	[ -n "$inst" ] || rig_fail "no controller instance in '$ctrl'"
	dev=/dev/nvme${inst}n1
	for _ in $(seq 50); do
		[ -b "$dev" ] && break
		sleep 0.2
	done
	[ -b "$dev" ] || rig_fail "$dev did not appear"
	rig_log "connected: nvme$inst ($(cat "/sys/class/nvme/nvme$inst/transport" 2>/dev/null))"
	host_io "$dev" 4096 2
	host_io "$dev" 65536 "$size_mb"
	host_io "$dev" 1048576 "$size_mb"
	echo 1 >"/sys/class/nvme/nvme$inst/delete_controller" || rig_fail "cannot disconnect"
	rig_signal host-done
	rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
	modprobe -r nvme-rdma || rig_fail "cannot unload nvme-rdma"
fi
