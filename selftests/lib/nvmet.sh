#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics with the RDMA transport, for the guest tests that use it
# (nvmeof.sh, nvmeof_fio.sh, nvmeof_teardown.sh): the target side through
# nvmet's configfs tree, the host side through nvme-rdma. Sourced after
# lib/guest.sh.
#
# The target exports one RAM disk (brd) as namespace 1 of subsystem
# $NVMET_NQN on an RDMA port at this guest's IPv4 address, port 4420.

NVMET_NQN=${NVMET_NQN:-nqn.2026-11.org.sroce:selftest}
NVMET_CFG=/sys/kernel/config/nvmet
NVMET_SVC=4420
NVMET_PORT=$NVMET_CFG/ports/1

# nvmet_target_up MIB: a MIB MiB RAM disk behind namespace 1, on the port.
nvmet_target_up() {
	local sub=$NVMET_CFG/subsystems/$NVMET_NQN
	modprobe brd rd_nr=1 rd_size=$(($1 * 1024)) || rig_fail "modprobe brd"
	modprobe nvmet-rdma || rig_fail "modprobe nvmet-rdma"
	# configfs is a module here: mount it once nvmet has loaded it.
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	[ -d "$NVMET_CFG" ] || rig_fail "no nvmet configfs at $NVMET_CFG"
	mkdir "$sub" || rig_fail "cannot create the subsystem"
	echo 1 >"$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	echo /dev/ram0 >"$sub/namespaces/1/device_path"
	echo 1 >"$sub/namespaces/1/enable" || rig_fail "cannot enable the namespace"
	mkdir "$NVMET_PORT"
	echo rdma >"$NVMET_PORT/addr_trtype"
	echo ipv4 >"$NVMET_PORT/addr_adrfam"
	echo "${RIG_IP4%/*}" >"$NVMET_PORT/addr_traddr"
	echo "$NVMET_SVC" >"$NVMET_PORT/addr_trsvcid"
	nvmet_port_on
	rig_log "nvmet-rdma target $NVMET_NQN on ${RIG_IP4%/*}:$NVMET_SVC, namespace /dev/ram0 ($1 MiB)"
}

# nvmet_port_on / nvmet_port_off: the subsystem on the port or off it. With
# no subsystem left on it the port stops listening, and nvmet drops the
# controllers of the hosts connected through it.
nvmet_port_on() {
	ln -s "$NVMET_CFG/subsystems/$NVMET_NQN" "$NVMET_PORT/subsystems/$NVMET_NQN" ||
		rig_fail "cannot enable the RDMA port (is the device up?)"
}

nvmet_port_off() {
	rm "$NVMET_PORT/subsystems/$NVMET_NQN" || rig_fail "cannot take the subsystem off the port"
}

nvmet_target_down() {
	local sub=$NVMET_CFG/subsystems/$NVMET_NQN
	rm -f "$NVMET_PORT/subsystems/$NVMET_NQN"
	rmdir "$NVMET_PORT" 2>/dev/null
	echo 0 >"$sub/namespaces/1/enable" 2>/dev/null
	rmdir "$sub/namespaces/1" "$sub" 2>/dev/null
	modprobe -r nvmet-rdma nvmet || rig_fail "cannot unload nvmet-rdma"
	modprobe -r brd || rig_fail "cannot unload brd"
}

# nvme_host_connect [OPTIONS]: connect to the peer's subsystem through
# /dev/nvme-fabrics (OPTIONS: more of its comma-separated options, e.g.
# "reconnect_delay=1,ctrl_loss_tmo=60"). Sets NVME_CTRL (nvme3) and
# NVME_DEV (the namespace's block device) once the device is there.
nvme_host_connect() {
	local ans inst opts="transport=rdma,traddr=${RIG_PEER_IP4},trsvcid=$NVMET_SVC,nqn=$NVMET_NQN"
	[ -d /sys/module/nvme_rdma ] || modprobe nvme-rdma || rig_fail "modprobe nvme-rdma"
	ans=$(echo "$opts${1:+,$1}" | (exec 3<>/dev/nvme-fabrics && cat >&3 && cat <&3)) ||
		rig_fail "connecting to $NVMET_NQN over RDMA failed"
	inst=$(sed -n 's/.*instance=\([0-9]\+\).*/\1/p' <<<"$ans")
	[ -n "$inst" ] || rig_fail "no controller instance in '$ans'"
	NVME_CTRL=nvme$inst
	nvme_host_find_dev || rig_fail "no namespace block device for $NVME_CTRL"
	rig_log "connected: $NVME_CTRL ($(cat "/sys/class/nvme/$NVME_CTRL/transport")), $NVME_DEV"
}

# nvme_cli_connect [ARGS]: the same with nvme-cli ("nvme connect", the way
# users connect; ARGS: more of its options).
nvme_cli_connect() {
	local ans
	[ -d /sys/module/nvme_rdma ] || modprobe nvme-rdma || rig_fail "modprobe nvme-rdma"
	ans=$(rig_run 60 nvme connect -t rdma -a "$RIG_PEER_IP4" -s "$NVMET_SVC" -n "$NVMET_NQN" \
		-o json "$@" 2>&1) || rig_fail "nvme connect to $NVMET_NQN failed: $ans"
	NVME_CTRL=$(grep -oE 'nvme[0-9]+' <<<"$ans" | head -n 1)
	[ -n "$NVME_CTRL" ] || rig_fail "no controller in nvme connect's answer '$ans'"
	nvme_host_find_dev || rig_fail "no namespace block device for $NVME_CTRL"
	rig_log "nvme connect: $NVME_CTRL ($(cat "/sys/class/nvme/$NVME_CTRL/transport")), $NVME_DEV"
}

# nvme_host_find_dev: the block device of namespace 1 of $NVME_CTRL (with
# native multipath the subsystem's shared disk, whose number is the
# subsystem's, not the controller's). Waits up to 10 s for it.
nvme_host_find_dev() {
	local s d
	NVME_DEV=""
	for _ in $(seq 50); do
		for s in /sys/class/nvme-subsystem/*/"$NVME_CTRL" /sys/class/nvme/"$NVME_CTRL"; do
			[ -e "$s" ] || continue
			for d in "${s%/*}"/nvme*n1 "$s"/nvme*n1; do
				[ -e "$d" ] && [[ "${d##*/}" =~ ^nvme[0-9]+n1$ ]] && [ -b "/dev/${d##*/}" ] &&
					NVME_DEV=/dev/${d##*/} && return 0
			done
		done
		rig_sleep 0.2
	done
	return 1
}

# nvme_ctrl_state: the state of $NVME_CTRL (live, connecting, ...; "gone"
# once deleted).
nvme_ctrl_state() {
	local st=gone
	read -r st <"/sys/class/nvme/$NVME_CTRL/state" 2>/dev/null
	echo "$st"
}

# --- fio on the namespace ---

# Every block written carries its crc32c and is read back and compared; a
# mismatch ends fio with an error.
# shellcheck disable=SC2034 # used by the tests
NVME_VERIFY=(--verify=crc32c --verify_fatal=1 --verify_state_save=0)

# nvme_fio NAME LIMIT MIB ARGS...: fio on $NVME_DEV, four jobs at depth
# 32, each on MIB MiB of its own 24 MiB region; its report in
# $RIG_TEST_OUT/NAME.fio, its summary lines logged. Returns fio's status.
nvme_fio() {
	local name=$1 lim=$2 mib=$3 rc=0
	shift 3
	rig_run "$lim" fio --name="$name" --filename="$NVME_DEV" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=4 --size="${mib}M" --offset_increment=24M --group_reporting \
		--output="$RIG_TEST_OUT/$name.fio" "$@" || rc=$?
	nvme_fio_summary "$name"
	return "$rc"
}

# nvme_fio_bg NAME SECONDS ARGS...: the same jobs in the background for
# SECONDS of 4 KiB I/O (time-based, 24 MiB each); pid in NVME_FIO_PID. Its
# status and summary come from nvme_fio_watch or nvme_fio_ends.
nvme_fio_bg() {
	local name=$1 secs=$2
	shift 2
	rig_bg "$name" $((secs + 60)) fio --name="$name" --filename="$NVME_DEV" --direct=1 \
		--ioengine=libaio --iodepth=32 --numjobs=4 --size=24M --offset_increment=24M \
		--group_reporting --bs=4k --time_based --runtime="$secs" \
		--output="$RIG_TEST_OUT/$name.fio" "$@"
	NVME_FIO_PID=$RIG_BG_PID
	NVME_FIO_NAME=$name
	rig_sleep 2
	kill -0 "$NVME_FIO_PID" 2>/dev/null ||
		rig_fail "fio $name ended at once ($(tail -n 3 "$RIG_TEST_OUT/$name.log"))"
}

# nvme_fio_watch PID: the states $NVME_CTRL goes through (sampled every
# 0.1 s) until the background fio ends, in NVME_STATES (" live connecting
# live "); logs them and returns fio's status.
nvme_fio_watch() {
	local st last rc=0
	last=$(nvme_ctrl_state)
	NVME_STATES=" $last "
	while kill -0 "$1" 2>/dev/null; do
		st=$(nvme_ctrl_state)
		[ "$st" = "$last" ] || NVME_STATES+="$st "
		last=$st
		rig_sleep 0.1
	done
	rig_bg_wait "$1" || rc=$?
	nvme_fio_summary "$NVME_FIO_NAME"
	rig_log "$NVME_CTRL went through:$NVME_STATES(fio status $rc)"
	return "$rc"
}

# nvme_fio_ends PID SECONDS WHAT: after WHAT (a disconnect, a teardown) the
# background fio must end within SECONDS, with or without errors: fails
# when it still runs.
nvme_fio_ends() {
	local t0=$EPOCHSECONDS lim rc=0
	lim=$(rig_limit "$2")
	while kill -0 "$1" 2>/dev/null && [ $((EPOCHSECONDS - t0)) -lt "$lim" ]; do
		rig_sleep 0.2
	done
	kill -0 "$1" 2>/dev/null && rig_fail "fio still runs ${lim} s after $3"
	rig_bg_wait "$1" || rc=$?
	nvme_fio_summary "$NVME_FIO_NAME"
	rig_log "fio ended $((EPOCHSECONDS - t0)) s after $3, status $rc"
}

# nvme_fio_summary NAME: the lines of NAME's report a reader wants.
nvme_fio_summary() {
	grep -E '^ +(read|write): IOPS=|^ +(READ|WRITE): bw=|err= *[1-9]|verify' \
		"$RIG_TEST_OUT/$1.fio" 2>/dev/null | sed 's/^ */  /' |
		while read -r l; do rig_log "fio $1: $l"; done
}

# nvme_fio_iops NAME DIR: NAME's IOPS in direction DIR (read or write).
nvme_fio_iops() {
	local v
	v=$(sed -n "s/^ *$2: IOPS=\\([0-9.]*k\\{0,1\\}\\),.*/\\1/p" "$RIG_TEST_OUT/$1.fio" | head -n 1)
	case "$v" in
	*k) awk -v v="${v%k}" 'BEGIN { printf "%d\n", v * 1000 }' ;;
	'') echo 0 ;;
	*) echo "$v" ;;
	esac
}
