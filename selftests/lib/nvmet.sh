#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics with the RDMA transport, for the guest tests that use it
# (nvmeof.sh, nvmeof_fio.sh, nvmeof_teardown.sh, nvmeof_ctrl.sh): the
# target side through nvmet's configfs tree, the host side through
# nvme-rdma. Sourced after lib/guest.sh.
#
# The target exports one RAM disk (brd) as namespace 1 of subsystem
# $NVMET_NQN (and of any other subsystem a test adds) on an RDMA port at
# this guest's IPv4 address, port 4420.

# shellcheck source=lib/blkio.sh
. "$(dirname "${BASH_SOURCE[0]}")/blkio.sh"

NVMET_NQN=${NVMET_NQN:-nqn.2026-11.org.sroce:selftest}
NVMET_CFG=/sys/kernel/config/nvmet
NVMET_SVC=4420
NVMET_PORT=$NVMET_CFG/ports/1
# The discovery subsystem's well-known NQN.
# shellcheck disable=SC2034 # used by the tests
NVME_DISC_NQN=nqn.2014-08.org.nvmexpress.discovery

# nvmet_target_up MIB: a MIB MiB RAM disk behind namespace 1, on the port.
nvmet_target_up() {
	modprobe brd rd_nr=1 rd_size=$(($1 * 1024)) || rig_fail "modprobe brd"
	modprobe nvmet-rdma || rig_fail "modprobe nvmet-rdma"
	# configfs is a module here: mount it once nvmet has loaded it.
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	[ -d "$NVMET_CFG" ] || rig_fail "no nvmet configfs at $NVMET_CFG"
	nvmet_subsys_add "$NVMET_NQN"
	mkdir "$NVMET_PORT"
	echo rdma >"$NVMET_PORT/addr_trtype"
	echo ipv4 >"$NVMET_PORT/addr_adrfam"
	echo "${RIG_IP4%/*}" >"$NVMET_PORT/addr_traddr"
	echo "$NVMET_SVC" >"$NVMET_PORT/addr_trsvcid"
	nvmet_port_on
	rig_log "nvmet-rdma target $NVMET_NQN on ${RIG_IP4%/*}:$NVMET_SVC, namespace /dev/ram0 ($1 MiB)"
}

# nvmet_subsys_add NQN: subsystem NQN, open to any host, with the RAM disk
# as namespace 1 (several subsystems may share it).
nvmet_subsys_add() {
	local sub=$NVMET_CFG/subsystems/$1
	mkdir "$sub" || rig_fail "cannot create the subsystem $1"
	echo 1 >"$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	echo /dev/ram0 >"$sub/namespaces/1/device_path"
	echo 1 >"$sub/namespaces/1/enable" || rig_fail "cannot enable the namespace of $1"
}

# nvmet_subsys_del NQN: the subsystem gone (its namespace disabled first);
# nvmet drops its controllers. Status 1 if it stays.
nvmet_subsys_del() {
	local sub=$NVMET_CFG/subsystems/$1
	echo 0 2>/dev/null >"$sub/namespaces/1/enable"
	rmdir "$sub/namespaces/1" "$sub" 2>/dev/null
	[ ! -d "$sub" ]
}

# nvmet_port_on [NQN] / nvmet_port_off [NQN]: the subsystem (default
# $NVMET_NQN) on the port or off it. With no subsystem left on it the port
# stops listening, and nvmet drops the controllers of the hosts connected
# through it.
nvmet_port_on() {
	local nqn=${1:-$NVMET_NQN}
	ln -s "$NVMET_CFG/subsystems/$nqn" "$NVMET_PORT/subsystems/$nqn" ||
		rig_fail "cannot enable the RDMA port for $nqn (is the device up?)"
}

nvmet_port_off() {
	local nqn=${1:-$NVMET_NQN}
	rm "$NVMET_PORT/subsystems/$nqn" || rig_fail "cannot take $nqn off the port"
}

# nvmet_ram_holds PATTERN MIB: true when the RAM disk's first MIB MiB are
# those of PATTERN (what the host wrote, seen from the target).
nvmet_ram_holds() {
	local got want
	want=$(head -c $(($2 << 20)) "$1" | sha256sum)
	got=$(head -c $(($2 << 20)) /dev/ram0 | sha256sum)
	[ "${got%% *}" = "${want%% *}" ]
}

# nvmet_target_down: every subsystem off the port and gone, the port gone,
# nvmet and the RAM disk unloaded.
nvmet_target_down() {
	local s
	for s in "$NVMET_PORT"/subsystems/*; do
		[ -L "$s" ] && rm -f "$s"
	done
	rmdir "$NVMET_PORT" 2>/dev/null
	for s in "$NVMET_CFG"/subsystems/*; do
		[ -d "$s" ] && nvmet_subsys_del "${s##*/}"
	done
	modprobe -r nvmet-rdma nvmet || rig_fail "cannot unload nvmet-rdma"
	modprobe -r brd || rig_fail "cannot unload brd"
}

# nvme_test_setup: what every NVMe-oF test under load needs first: the
# peer guest, fio and nvme-cli, this guest's RDMA device.
nvme_test_setup() {
	rig_require_peer
	rig_require_cmd fio nvme
	rig_setup_dev
}

# nvme_rdma_load: the host's transport (and nvme-core, whose sysfs classes
# nvme-cli reads) loaded.
nvme_rdma_load() {
	[ -d /sys/module/nvme_rdma ] || modprobe nvme-rdma || rig_fail "modprobe nvme-rdma"
}

# nvme_fabrics_add NQN [OPTIONS]: a controller of the peer's subsystem NQN
# (or of its discovery subsystem, $NVME_DISC_NQN), made by writing to
# /dev/nvme-fabrics (OPTIONS: more of its comma-separated options, e.g.
# "reconnect_delay=1,ctrl_loss_tmo=60"). Sets NVME_CTRL (nvme3).
nvme_fabrics_add() {
	local ans inst opts="transport=rdma,traddr=${RIG_PEER_IP4},trsvcid=$NVMET_SVC,nqn=$1"
	nvme_rdma_load
	ans=$(echo "$opts${2:+,$2}" | (exec 3<>/dev/nvme-fabrics && cat >&3 && cat <&3)) ||
		rig_fail "connecting to $1 over RDMA failed"
	inst=$(sed -n 's/.*instance=\([0-9]\+\).*/\1/p' <<<"$ans")
	[ -n "$inst" ] || rig_fail "no controller instance in '$ans'"
	NVME_CTRL=nvme$inst
}

# nvme_host_connect [OPTIONS]: connect to $NVMET_NQN that way. Sets
# NVME_CTRL and NVME_DEV (the namespace's block device) once the device is
# there.
nvme_host_connect() {
	nvme_fabrics_add "$NVMET_NQN" "${1:-}"
	nvme_host_find_dev || rig_fail "no namespace block device for $NVME_CTRL"
	rig_log "connected: $NVME_CTRL ($(<"/sys/class/nvme/$NVME_CTRL/transport")), $NVME_DEV"
}

# nvme_cli_connect [ARGS]: the same with nvme-cli ("nvme connect", the way
# users connect; ARGS: more of its options).
nvme_cli_connect() {
	local ans
	nvme_rdma_load
	ans=$(rig_run 60 nvme connect -t rdma -a "$RIG_PEER_IP4" -s "$NVMET_SVC" -n "$NVMET_NQN" \
		-o json "$@" 2>&1) || rig_fail "nvme connect to $NVMET_NQN failed: $ans"
	[[ "$ans" =~ nvme[0-9]+ ]] || rig_fail "no controller in nvme connect's answer '$ans'"
	NVME_CTRL=${BASH_REMATCH[0]}
	nvme_host_find_dev || rig_fail "no namespace block device for $NVME_CTRL"
	rig_log "nvme connect: $NVME_CTRL ($(<"/sys/class/nvme/$NVME_CTRL/transport")), $NVME_DEV"
}

# nvme_cli_disconnect: "nvme disconnect" of $NVMET_NQN's controllers (it
# returns once they are deleted); $NVME_CTRL must be gone. Its answer in
# NVME_SAID.
nvme_cli_disconnect() {
	NVME_SAID=$(rig_run 30 nvme disconnect -n "$NVMET_NQN" 2>&1) ||
		rig_fail "nvme disconnect of $NVMET_NQN failed: $NVME_SAID"
	[ "$(nvme_ctrl_state)" = gone ] || rig_fail "$NVME_CTRL is still there after nvme disconnect"
}

# nvme_dd_check PATTERN BS MIB [AT]: MIB MiB of PATTERN from its MiB AT on
# (default 0) written to $NVME_DEV at MiB AT in blocks of BS with
# O_DIRECT, read back the same way and compared (sha256).
nvme_dd_check() {
	local pat=$1 bs=$2 mib=$3 at=${4:-0} count skip got want
	count=$(((mib << 20) / bs))
	skip=$(((at << 20) / bs))
	want=$(dd if="$pat" bs="$bs" skip="$skip" count="$count" status=none | sha256sum)
	rig_run 60 dd if="$pat" of="$NVME_DEV" bs="$bs" skip="$skip" seek="$skip" count="$count" \
		oflag=direct status=none || rig_fail "$NVME_DEV: write with bs=$bs failed"
	got=$(rig_run 60 dd if="$NVME_DEV" bs="$bs" skip="$skip" count="$count" iflag=direct \
		status=none | sha256sum)
	[ "${got%% *}" = "${want%% *}" ] ||
		rig_fail "$NVME_DEV: read back with bs=$bs differs from what was written (MiB $at on)"
}

# nvme_host_find_dev: the block device of namespace 1 of $NVME_CTRL (with
# native multipath the subsystem's shared disk, whose number is the
# subsystem's, not the controller's). Waits up to 10 s for it.
nvme_host_find_dev() {
	local s d i
	NVME_DEV=""
	for ((i = 0; i < 50; i++)); do
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
	read -r st 2>/dev/null <"/sys/class/nvme/$NVME_CTRL/state"
	echo "$st"
}

# nvme_ctrl_states PID: the states $NVME_CTRL goes through (sampled every
# 0.1 s) while PID runs and once after, in NVME_STATES (" live connecting
# live ").
nvme_ctrl_states() {
	local st last run=1
	last=$(nvme_ctrl_state)
	NVME_STATES=" $last "
	while [ "$run" = 1 ]; do
		kill -0 "$1" 2>/dev/null || run=0
		st=$(nvme_ctrl_state)
		[ "$st" = "$last" ] || NVME_STATES+="$st "
		last=$st
		[ "$run" = 0 ] || rig_sleep 0.1
	done
}

# --- fio on the namespace (lib/blkio.sh) ---

# nvme_fio NAME LIMIT MIB ARGS...: fio on $NVME_DEV, four jobs at depth
# 32, each on MIB MiB of its own 24 MiB region. Returns fio's status.
nvme_fio() {
	local name=$1 lim=$2 mib=$3
	shift 3
	blk_fio "$name" "$lim" "$NVME_DEV" --iodepth=32 --numjobs=4 --size="${mib}M" \
		--offset_increment=24M "$@"
}

# nvme_fio_bg NAME SECONDS ARGS...: the same jobs in the background for
# SECONDS of 4 KiB I/O (24 MiB each); pid in BLK_FIO_PID. Its status and
# summary come from nvme_fio_watch or blk_fio_ends.
nvme_fio_bg() {
	local name=$1 secs=$2
	shift 2
	blk_fio_bg "$name" "$secs" "$NVME_DEV" --iodepth=32 --numjobs=4 --size=24M \
		--offset_increment=24M "$@"
}

# nvme_fio_watch PID: the states $NVME_CTRL goes through (sampled every
# 0.1 s) until the background fio ends, in NVME_STATES (" live connecting
# live "); logs them and returns fio's status.
nvme_fio_watch() {
	local rc=0
	nvme_ctrl_states "$1"
	rig_bg_wait "$1" || rc=$?
	blk_fio_summary "$BLK_FIO_NAME"
	rig_log "$NVME_CTRL went through:$NVME_STATES(fio status $rc)"
	return "$rc"
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
