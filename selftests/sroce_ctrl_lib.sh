# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Helpers of the sroce control-path tests (selftests/sroce_ctrl_*.sh); sourced
# after lib/guest.sh, not a test itself.
#
# These tests need no peer: they run in guest a when its device type is sroce
# (suites "sroce", "sroce-sroce", "sroce-rxe") and skip otherwise; guest b's
# half passes at once. Run directly (tools/vm/run.sh -t 300
# selftests/sroce_ctrl_link.sh) they always test sroce.
#
# Each test may take the device apart (link delete, rmmod, rename, netdev
# down, MTU, rxe in its place); ctrl_restore, run on exit, puts the guest
# back the way the other tests expect it: sroce.ko loaded, sroce0 on
# $RIG_IFACE ACTIVE, $RIG_IFACE up at $RIG_MTU with its addresses, no rxe,
# no left-over netdevs or background processes.

# The checkout: the rig says where; else the one this file is in.
CTRL_REPO=${RIG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
CTRL_VC=${SROCE_VERBS_CHECK:-$CTRL_REPO/build/tools/verbs-check/sroce-verbs-check}
CTRL_DEV=sroce0
CTRL_IFACE=${RIG_IFACE:-eth0}
CTRL_NETDEVS=()
CTRL_PIDS=()
CTRL_SYSCTL_RESTORE=()
CTRL_WRITE_RESTORE=()

# ctrl_init: role and device-type gate, tools, the sroce device, cleanup trap.
ctrl_init() {
	local end
	if [ "${RIG_NGUESTS:-1}" = 2 ] && rig_is_b; then
		# Keep the suite in step: the runner expects both halves to
		# take about as long, so wait for guest a's verdict.
		rig_log "single-guest test: it runs in guest a; waiting for it"
		end=$(($(date +%s) + ${RIG_TEST_TIMEOUT:-300}))
		until [ -e "$RIG_TEST_SYNC/$RIG_PEER_ROLE.done" ] || [ "$(date +%s)" -ge "$end" ]; do
			sleep 0.5
		done
		exit 0
	fi
	if [ -n "${RIG_SUITE:-}" ] && [ "$RIG_DEV_TYPE" != sroce ]; then
		rig_skip "sroce control-path test; this guest's device type is $RIG_DEV_TYPE"
	fi
	# Once per make test: in the sroce-sroce suite (or a single sroce guest).
	case "${RIG_SUITE:-}" in
	"" | sroce | sroce-sroce) ;;
	*) rig_skip "sroce control-path tests run in the sroce-sroce suite" ;;
	esac
	rig_require_cmd rdma ibv_devinfo ibv_devices ip ss
	[ -x "$CTRL_VC" ] || rig_skip "no $CTRL_VC (cmake --build build)"
	trap ctrl_restore EXIT
	rig_setup_dev sroce
	[ "$RIG_DEV" = "$CTRL_DEV" ] || rig_fail "rig_setup_dev made $RIG_DEV, not $CTRL_DEV"
}

# --- state of devices and ports -------------------------------------------

ctrl_dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# ctrl_port_state DEV: ACTIVE, DOWN, ... (sysfs "4: ACTIVE" -> ACTIVE)
ctrl_port_state() {
	local s
	s=$(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null) || return 1
	echo "${s#*: }"
}

# ctrl_wait_gone DEV [SECONDS]: wait until DEV is unregistered.
ctrl_wait_gone() {
	local n=$((${2:-10} * 10))
	for _ in $(seq 1 "$n"); do
		ctrl_dev_exists "$1" || return 0
		sleep 0.1
	done
	rig_log "$1 still exists after ${2:-10}s"
	return 1
}

# ctrl_wait_state DEV STATE [SECONDS]: wait until port 1 of DEV is in STATE.
ctrl_wait_state() {
	local n=$((${3:-10} * 10))
	for _ in $(seq 1 "$n"); do
		[ "$(ctrl_port_state "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	rig_log "$1: port state $(ctrl_port_state "$1"), not $2 after ${3:-10}s"
	return 1
}

# ctrl_link_add DEV NETDEV: rdma link add (type sroce) and wait for ACTIVE.
ctrl_link_add() {
	rdma link add "$1" type sroce netdev "$2" || return 1
	ctrl_wait_state "$1" ACTIVE 10
}

# ctrl_devinfo_field DEV FIELD: a field of ibv_devinfo (port 1), e.g. state.
ctrl_devinfo_field() {
	ibv_devinfo -d "$1" -i 1 2>/dev/null | awk -v f="$2:" '$1 == f { print $2; exit }'
}

# ctrl_udp_open: something listens on UDP port 4791 (RoCEv2).
ctrl_udp_open() {
	[ -n "$(ss -Hlun 'sport = :4791' 2>/dev/null)" ]
}

# ctrl_counts DEV: DEV's line of "rdma resource show" without the index and
# name ("pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0").
ctrl_counts() {
	rdma resource show 2>/dev/null | sed -n "s/^[0-9]*: $1: //p" | sed 's/ *$//'
}

# ctrl_vmalloc_kb: VmallocUsed of /proc/meminfo in kB.
ctrl_vmalloc_kb() {
	awk '/^VmallocUsed:/ { print $2 }' /proc/meminfo
}

# ctrl_slab_snapshot FILE: "cache active_objs" of every slab cache, sorted
# (FILE stays empty when /proc/slabinfo is not readable).
ctrl_slab_snapshot() {
	: >"$1"
	[ -r /proc/slabinfo ] || return 0
	awk 'NR > 2 { print $1, $2 }' /proc/slabinfo | sort >"$1"
}

# ctrl_slab_grown BEFORE AFTER MAX: the caches (of two snapshots) whose
# active objects grew by more than MAX, as "cache +N". Left out: vmap_area
# (since 6.9 vmalloc keeps freed areas in per-node pools) and the debug
# kernel's own bookkeeping, freed lazily (KMEMLEAK's kmemleak_object,
# DEBUG_OBJECTS' debug_objects_cache); KMEMLEAK itself judges leaks there.
# Left out too: the caches of processes' address spaces (maple_node,
# vm_area_struct, anon_vma_chain, anon_vma). A killed process's are freed
# whole at its exit, but on the debug kernel KASAN's quarantine keeps freed
# objects counted as active: python processes that mmap 400 areas each,
# SIGKILLed for 25 s without sroce loaded, left maple_node +5272,
# vm_area_struct +1050 and anon_vma_chain +1108 there, as many 20 s later.
# sroce maps rings into them but allocates none of these (its one mmget,
# ODP's look at a mapping, is put in the same function).
ctrl_slab_grown() {
	join "$1" "$2" | awk -v max="$3" '
		$1 == "vmap_area" || $1 == "kmemleak_object" || $1 == "debug_objects_cache" { next }
		$1 == "maple_node" || $1 == "vm_area_struct" || $1 == "anon_vma_chain" || $1 == "anon_vma" { next }
		$3 - $2 > max { print $1 " +" $3 - $2 }'
}

# --- sroce-verbs-check ------------------------------------------------------

# ctrl_vc NAME SECONDS ARGS...: run sroce-verbs-check ARGS with a time limit;
# its output goes to $RIG_TEST_OUT/NAME.log, and all but its PASS lines,
# indented, to the test log. Returns its exit status.
ctrl_vc() {
	local name=$1 t=$2 rc=0
	shift 2
	rig_run "$t" "$CTRL_VC" "$@" >"$RIG_TEST_OUT/$name.log" 2>&1 || rc=$?
	grep -v '^PASS ' "$RIG_TEST_OUT/$name.log" | sed 's/^/    /'
	rig_log "sroce-verbs-check $*: exit $rc"
	return "$rc"
}

# ctrl_hold_start NAME DEV SECONDS [ARGS...]: "sroce-verbs-check hold" in the
# background (log $RIG_TEST_OUT/NAME.log), once it holds its objects.
# Leaves its pid in CTRL_HOLD_PID.
ctrl_hold_start() {
	local name=$1 dev=$2 secs=$3
	shift 3
	"$CTRL_VC" hold "$dev" "$secs" "$@" >"$RIG_TEST_OUT/$name.log" 2>&1 &
	CTRL_HOLD_PID=$!
	CTRL_PIDS+=("$CTRL_HOLD_PID")
	ctrl_wait_started "$RIG_TEST_OUT/$name.log" '^holding ' "$CTRL_HOLD_PID" 30 ||
		rig_fail "$name: sroce-verbs-check hold $dev did not start holding"
}

# ctrl_wait_started LOG REGEX PID SECONDS: wait until background process
# PID has written a line matching REGEX to LOG; 1 (LOG shown, indented) if
# it exits or SECONDS pass first.
ctrl_wait_started() {
	for _ in $(seq 1 $(($4 * 10))); do
		grep -q "$2" "$1" && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/    /' "$1"
	return 1
}

# ctrl_hold_wait NAME PID SECONDS: wait for a holder to exit; returns its
# status (124 if it was still running after SECONDS and had to be killed).
ctrl_hold_wait() {
	local name=$1 pid=$2 rc=0
	for _ in $(seq 1 $(($3 * 10))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rc=124
	else
		wait "$pid" || rc=$?
	fi
	rig_log "$name: holder exited with status $rc"
	sed 's/^/    /' "$RIG_TEST_OUT/$name.log"
	return "$rc"
}

# ctrl_expect_released NAME PID: the holder saw the device go away and
# exited cleanly (status 0, "device removed", "released").
ctrl_expect_released() {
	local rc=0
	ctrl_hold_wait "$1" "$2" 30 || rc=$?
	[ "$rc" = 0 ] || rig_fail "$1: the holder exited with status $rc (a signal if > 128)"
	grep -q '^device removed' "$RIG_TEST_OUT/$1.log" ||
		rig_fail "$1: the holder got no IBV_EVENT_DEVICE_FATAL"
	grep -q '^released' "$RIG_TEST_OUT/$1.log" || rig_fail "$1: the holder did not finish"
}

# --- temporary netdevs and settings --------------------------------------

# ctrl_veth NAME PEER: a veth pair, both ends up (removed by ctrl_restore).
ctrl_veth() {
	if [ ! -d /sys/module/veth ] && ! modprobe veth 2>/dev/null; then
		rig_skip "no veth module in this kernel"
	fi
	ip link add "$1" type veth peer name "$2" || rig_fail "ip link add $1 type veth failed"
	CTRL_NETDEVS+=("$1")
	ip link set "$1" up && ip link set "$2" up || rig_fail "cannot bring $1/$2 up"
}

# ctrl_forged_peer DEV V0 V1 NET: RDMA device DEV on veth end V0 (MTU 4200,
# address NET.1/24) for a forged peer (tools/verbs-check/forged_peer.h) that
# injects on the other end V1 from NET.2, an address no interface has: its
# neighbour entry points at V1. The peer reads back every packet DEV sends:
# one frame per packet (sroce's UDP GSO bursts would reach the veth whole;
# with one segment per skb the stack splits them first), and room on the
# input backlog for thousands of READ responses, which the work item builds
# faster than softirqs take them off.
ctrl_forged_peer() {
	local dev=$1 v0=$2 v1=$3 net=$4
	ctrl_veth "$v0" "$v1"
	ip link set "$v0" gso_max_segs 1 || rig_fail "$v0: gso_max_segs 1"
	ctrl_sysctl net.core.netdev_max_backlog 100000
	ip link set "$v0" mtu 4200 || rig_fail "$v0: MTU 4200"
	ip link set "$v1" mtu 4200 || rig_fail "$v1: MTU 4200"
	ip addr add "$net.1/24" dev "$v0" || rig_fail "ip addr add on $v0"
	ip neigh replace "$net.2" lladdr "$(cat "/sys/class/net/$v1/address")" dev "$v0" \
		nud permanent || rig_fail "ip neigh replace $net.2"
	ctrl_link_add "$dev" "$v0" || rig_fail "rdma link add $dev netdev $v0 failed"
	rig_gid_index "$dev" "$net.1" >/dev/null || rig_fail "$dev: no RoCEv2 GID for $net.1"
}

# ctrl_sysctl KEY VALUE: set a sysctl for this test (restored on exit).
ctrl_sysctl() {
	local old
	old=$(sysctl -n "$1") || rig_fail "no sysctl $1"
	CTRL_SYSCTL_RESTORE+=("$1=$old")
	sysctl -q -w "$1=$2" || rig_fail "sysctl -w $1=$2 failed"
}

# ctrl_write FILE VALUE OLD: write VALUE into a sysfs or debugfs FILE for
# this test; OLD is written back on exit.
ctrl_write() {
	CTRL_WRITE_RESTORE+=("$1" "$3")
	echo "$2" >"$1" || rig_fail "cannot write $2 into $1"
}

# --- restore -----------------------------------------------------------

ctrl_restore() {
	local rc=$? pid n kv dev broken=""
	set +e
	for pid in "${CTRL_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	for n in "${CTRL_NETDEVS[@]}"; do
		[ -e "/sys/class/net/$n" ] && ip link del "$n"
	done
	if [ -d /sys/module/rdma_rxe ]; then
		for dev in /sys/class/infiniband/*; do
			[ -e "$dev/parent" ] && [ ! -e "$dev/sroce_abi" ] && rdma link delete "${dev##*/}"
		done
		modprobe -r rdma_rxe || broken="rdma_rxe does not unload"
	fi
	ip link set "$CTRL_IFACE" mtu "${RIG_MTU:-4200}" up
	for kv in "${CTRL_SYSCTL_RESTORE[@]}"; do
		sysctl -q -w "$kv"
	done
	for ((n = 0; n < ${#CTRL_WRITE_RESTORE[@]}; n += 2)); do
		echo "${CTRL_WRITE_RESTORE[n + 1]}" >"${CTRL_WRITE_RESTORE[n]}"
	done
	if [ -n "${RIG_IP6:-}" ] && ! ip -6 addr show dev "$CTRL_IFACE" | grep -q " $RIG_IP6/"; then
		ip -6 addr add "$RIG_IP6/$RIG_IP6_PREFIX" dev "$CTRL_IFACE" nodad
	fi
	if [ -n "${RIG_IP4:-}" ] && ! ip -4 addr show dev "$CTRL_IFACE" | grep -q " $RIG_IP4/"; then
		ip addr add "$RIG_IP4/$RIG_IP4_PREFIX" dev "$CTRL_IFACE"
	fi
	# Whatever the test left (renamed, deleted, extra devices): sroce0 on
	# the rig's interface and nothing else.
	for dev in /sys/class/infiniband/*; do
		[ -e "$dev/sroce_abi" ] || continue
		n=${dev##*/}
		if [ "$(cat "$dev/parent" 2>/dev/null)" = "$CTRL_IFACE" ]; then
			[ "$n" = "$CTRL_DEV" ] || rdma dev set "$n" name "$CTRL_DEV"
		else
			rdma link delete "$n"
		fi
	done
	if [ ! -d /sys/module/sroce ]; then
		rig_load_module sroce
	fi
	if ! ctrl_dev_exists "$CTRL_DEV"; then
		ctrl_link_add "$CTRL_DEV" "$CTRL_IFACE" || broken="cannot recreate $CTRL_DEV"
	fi
	ctrl_wait_state "$CTRL_DEV" ACTIVE 10 || broken="$CTRL_DEV is not ACTIVE"
	if [ -n "$broken" ]; then
		rig_log "restore: $broken"
		if [ "$rc" = 0 ]; then
			echo "restore: $broken" >"$RIG_TEST_SYNC/$RIG_ROLE.reason"
			rc=1
		fi
	fi
	exit "$rc"
}
