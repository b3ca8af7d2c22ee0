#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Helpers for guest tests (sourced by every selftests/*.sh). A test runs in
# both guests of a rig run at once, one half per role (a, b); the halves meet
# through marker files in a per-test folder of the shared run folder.
#
# Environment (from tools/vm/run.sh, see Documentation/testing.rst):
#   RIG_ROLE RIG_PEER_ROLE RIG_NGUESTS RIG_IFACE RIG_MTU
#   RIG_IP4 RIG_IP4_PREFIX RIG_PEER_IP4 RIG_IP6 RIG_IP6_PREFIX RIG_PEER_IP6
#   RIG_SHARED RIG_OUT RIG_REPO RIG_KERNEL
# and from the runner (selftests/lib/runner.sh):
#   RIG_SUITE RIG_DEV_TYPE RIG_PEER_DEV_TYPE RIG_TEST RIG_TEST_SYNC
#   RIG_TEST_OUT RIG_TEST_TIMEOUT
#
# Exit status of a test half: 0 pass, 4 skip (rig_skip), anything else fails.

KSFT_SKIP=4
RIG_PEER_ROLE=${RIG_PEER_ROLE:-}
RIG_TEST=${RIG_TEST:-$(basename "$0" .sh)}
RIG_TEST_SYNC=${RIG_TEST_SYNC:-${RIG_SHARED:-/tmp}/sync/$RIG_TEST}
RIG_TEST_OUT=${RIG_TEST_OUT:-${RIG_OUT:-/tmp}/tests/$RIG_TEST}
RIG_DEV_TYPE=${RIG_DEV_TYPE:-rxe}
RIG_PEER_DEV_TYPE=${RIG_PEER_DEV_TYPE:-rxe}
mkdir -p "$RIG_TEST_SYNC" "$RIG_TEST_OUT"

# Under TCG every exec costs 50-100 ms (about 1 s on the debug kernel), so
# the polling helpers below use builtins only: rig_sleep waits on a pipe
# that nobody writes to. The kernel's release, as uname -r prints it:
RIG_UNAME=""
read -r RIG_UNAME </proc/sys/kernel/osrelease
exec {RIG_SLEEP_FD}<> <(:)
rig_sleep() { read -rt "$1" -u "$RIG_SLEEP_FD" _ || true; }

# --- messages and verdicts ----------------------------------------------

rig_log() { echo "[$RIG_ROLE] $*"; }

# rig_fail MESSAGE: end this half of the test as failed.
rig_fail() {
	rig_log "FAIL: $*"
	echo "$*" >"$RIG_TEST_SYNC/$RIG_ROLE.reason"
	exit 1
}

# rig_skip REASON: this half cannot run here (the whole test is reported as
# "ok N name # SKIP REASON").
rig_skip() {
	rig_log "SKIP: $*"
	echo "$*" >"$RIG_TEST_SYNC/$RIG_ROLE.skip"
	exit "$KSFT_SKIP"
}

# rig_suites SUITE...: run only in these suites of the test command, where
# running it in the others would repeat the same coverage (a test whose
# traffic already goes both ways, a device-free check, a link baseline).
# Elsewhere the test is skipped, naming the suites that run it. Runs
# everywhere outside a suite run (RIG_SUITE unset or "local") and with
# RIG_ALL_SUITES=1 (tools/vm/suite.sh -e RIG_ALL_SUITES=1).
rig_suites() {
	local s
	[ "${RIG_ALL_SUITES:-0}" = 1 ] && return 0
	case "${RIG_SUITE:-local}" in local) return 0 ;; esac
	for s; do
		[ "$s" = "$RIG_SUITE" ] && return 0
	done
	rig_skip "covered by suites $*"
}

rig_is_a() { [ "$RIG_ROLE" = a ]; }
rig_is_b() { [ "$RIG_ROLE" = b ]; }

# rig_require_peer: skip unless a second guest is there.
rig_require_peer() {
	[ "${RIG_NGUESTS:-1}" = 2 ] || rig_skip "needs two guests"
}

# rig_require_cmd CMD...: skip when a tool is missing.
rig_require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || rig_skip "$c not installed"
	done
}

# rig_make_pattern FILE MIB [SALT]: MIB MiB of pseudo-random bytes in FILE,
# the same on both guests (a stream cipher keyed with the run's ID and
# SALT), so that either side can check what the other wrote.
rig_make_pattern() {
	openssl enc -aes-128-ctr -pass "pass:${RIG_RUN_ID:-sroce}${3:+-$3}" -nosalt -pbkdf2 \
		</dev/zero 2>/dev/null | head -c $(($2 << 20)) >"$1"
	[ "$(stat -c %s "$1")" = $(($2 << 20)) ] || rig_fail "cannot make the test pattern $1"
}

# rig_unload MODULE...: unload those of the modules that are loaded, in
# order; one still in use (a session being torn down still holds its
# transport) is tried again for up to 10 s. Status 1 if one stays.
rig_unload() {
	local m rc=0 end
	for m; do
		end=$((EPOCHSECONDS + $(rig_limit 10)))
		while [ -d "/sys/module/$m" ]; do
			modprobe -r "$m" 2>/dev/null && break
			if [ "$EPOCHSECONDS" -ge "$end" ]; then
				rig_log "cannot unload $m: $(modprobe -r "$m" 2>&1)"
				rc=1
				break
			fi
			rig_sleep 0.5
		done
	done
	return "$rc"
}

# rig_metric NAME VALUE UNIT: record a number for reports (tools/demo.sh).
rig_metric() {
	echo "${RIG_SUITE:-none} $RIG_TEST $1 $2 $3" >>"$RIG_OUT/metrics"
	rig_log "metric $1 = $2 $3"
}

# --- running commands -------------------------------------------------------

# Time limits given to rig_run, rig_bg and rig_wait are scaled by
# RIG_TIMEOUT_SCALE percent (300 on a debug kernel, where everything runs
# about three times slower; tools/vm/suite.sh). The test's own limit is
# not: its "# timeout:" is already its limit on the slowest kernel.
# rig_limit SECONDS: such a limit, for other uses.
rig_limit() { echo $(($1 * ${RIG_TIMEOUT_SCALE:-100} / 100)); }

# rig_run SECONDS CMD...: run CMD with a time limit; its status is returned
# (124 when it timed out, which is also logged).
rig_run() {
	local t=$(($1 * ${RIG_TIMEOUT_SCALE:-100} / 100)) rc
	shift
	timeout -k 3 "$t" "$@"
	rc=$?
	[ "$rc" = 124 ] && rig_log "timed out after ${t}s: $*"
	return "$rc"
}

# rig_bg NAME SECONDS CMD...: start CMD in the background with a time limit,
# output to $RIG_TEST_OUT/NAME.log; its pid is left in RIG_BG_PID.
rig_bg() {
	local name=$1 t=$(($2 * ${RIG_TIMEOUT_SCALE:-100} / 100))
	shift 2
	timeout -k 3 "$t" "$@" >"$RIG_TEST_OUT/$name.log" 2>&1 &
	# shellcheck disable=SC2034 # for the caller
	RIG_BG_PID=$!
}

# rig_bg_wait PID: wait for a rig_bg command and return its status.
rig_bg_wait() {
	local rc=0
	wait "$1" || rc=$?
	return "$rc"
}

# --- synchronisation with the peer --------------------------------------

# rig_signal NAME [VALUE]: tell the peer that NAME happened (with a value).
# Markers live in $RIG_TEST_SYNC as ROLE.m.NAME (the runner's own files there
# are ROLE.start, ROLE.rc, ROLE.done, ROLE.reason, ROLE.skip, ROLE.time).
rig_signal() {
	local f=$RIG_TEST_SYNC/$RIG_ROLE.m.$1
	echo "${2:-}" >"$f.val"
	: >"$f"
}

# rig_wait NAME [SECONDS]: wait until the peer signalled NAME; prints its
# value. Fails (status 1) after SECONDS (default 60) or when the peer's half
# of the test ended without signalling.
rig_wait() {
	local f=$RIG_TEST_SYNC/$RIG_PEER_ROLE.m.$1
	local lim=$((${2:-60} * ${RIG_TIMEOUT_SCALE:-100} / 100))
	local end=$((EPOCHSECONDS + lim))
	[ -n "$RIG_PEER_ROLE" ] || { rig_log "rig_wait $1: no peer"; return 1; }
	until [ -e "$f" ]; do
		if [ -e "$RIG_TEST_SYNC/$RIG_PEER_ROLE.done" ]; then
			rig_log "peer ended without signalling $1"
			return 1
		fi
		if [ "$EPOCHSECONDS" -ge "$end" ]; then
			rig_log "timed out after ${lim}s waiting for the peer's $1"
			return 1
		fi
		rig_sleep 0.2
	done
	local v=""
	read -r v <"$f.val" || true
	echo "$v"
}

# rig_barrier NAME [SECONDS]: signal NAME and wait for the peer's NAME.
rig_barrier() {
	rig_signal "$1"
	rig_wait "$1" "${2:-60}" >/dev/null
}

# rig_tcp_listening PORT [DIR]: true when a TCP socket listens on PORT
# (IPv4 or IPv6), from DIR/tcp{,6} (default /proc/net: this shell's
# network namespace).
rig_tcp_listening() {
	local hex f addr st
	hex=$(printf '%04X' "$1")
	for f in "${2:-/proc/net}/tcp" "${2:-/proc/net}/tcp6"; do
		[ -r "$f" ] || continue
		while read -r _ addr _ st _; do
			[ "$st" = 0A ] && [ "${addr##*:}" = "$hex" ] && return 0
		done <"$f"
	done
	return 1
}

# rig_wait_listen PORT [SECONDS] [PID]: wait until a TCP port listens. With
# PID (a rig_bg command), the namespace of its child counts too: the
# command may be "ip netns exec NS server ...".
rig_wait_listen() {
	local end=$((EPOCHSECONDS + ${2:-30})) kids=() k
	until rig_tcp_listening "$1"; do
		if [ -n "${3:-}" ]; then
			[ "${#kids[@]}" -gt 0 ] || read -ra kids <<<"$(pgrep -P "$3" | xargs)"
			for k in "${kids[@]}"; do
				rig_tcp_listening "$1" "/proc/$k/net" && return 0
			done
		fi
		if [ "$EPOCHSECONDS" -ge "$end" ]; then
			rig_log "nothing listens on TCP port $1 after ${2:-30}s"
			return 1
		fi
		rig_sleep 0.1
	done
}

# rig_wait_cm_listen PORT [SECONDS] [PID]: wait until an rdma_cm ID listens
# on PORT (rdma resource show cm_id; default 30 s). With PID, only an ID of
# that process or of its children counts: the listener of a server that
# has just exited can still be listed for a moment, and a client that
# connected on its word was rejected ("invalid service ID").
rig_wait_cm_listen() {
	local end=$((EPOCHSECONDS + ${2:-30})) owners
	until owners=${3:+$(pgrep -d '|' -P "$3")}
		rdma resource show cm_id 2>/dev/null |
			grep -E "state LISTEN .*src-addr [^ ]*:$1( |\$)" |
			grep -qE "${3:+ pid ($3${owners:+|$owners}) }"; do
		if [ "$EPOCHSECONDS" -ge "$end" ]; then
			rig_log "no rdma_cm ID listens on port $1 after ${2:-30}s"
			return 1
		fi
		rig_sleep 0.1
	done
}

# --- RDMA devices -------------------------------------------------------

# rig_build_dir: the folder of the sroce build for the running kernel:
# the repo root when its sroce.ko is for this kernel ("make module"), else
# out/kbuild/$(uname -r)/ (tools/kbuild.sh builds one per kernel there).
rig_build_dir() {
	local vermagic
	vermagic=$(modinfo -F vermagic "$RIG_REPO/sroce.ko" 2>/dev/null || true)
	if [ "${vermagic%% *}" = "$RIG_UNAME" ]; then
		echo "$RIG_REPO"
	else
		echo "$RIG_REPO/out/kbuild/$RIG_UNAME"
	fi
}

# rig_ktest_module: set RIG_KTEST_KO to tools/ktest's sroce_ktest.ko built
# for the running kernel beside sroce.ko (SROCE_KTEST=m, as
# tools/test-all.sh builds); the test fails when there is none.
rig_ktest_module() {
	local vermagic
	RIG_KTEST_KO=$(rig_build_dir)/tools/ktest/sroce_ktest.ko
	vermagic=$(modinfo -F vermagic "$RIG_KTEST_KO" 2>/dev/null || true)
	[ "${vermagic%% *}" = "$RIG_UNAME" ] ||
		rig_fail "no $RIG_KTEST_KO for $RIG_UNAME (build the module with SROCE_KTEST=m)"
}

# rig_load_module TYPE: load the RDMA driver TYPE (rxe or sroce) and its
# dependencies. sroce.ko comes from the repo root when it was built for this
# kernel ("make module"), else from out/kbuild/$(uname -r)/ (tools/kbuild.sh
# builds one per kernel there); $SROCE_KO overrides. Nothing to do when it
# is loaded (finding the file took 4 s of every test on the debug kernel).
rig_load_module() {
	case "$1" in
	rxe)
		[ -d /sys/module/rdma_rxe ] || modprobe rdma_rxe || rig_fail "modprobe rdma_rxe failed"
		;;
	sroce)
		[ -d /sys/module/sroce ] && return 0
		local ko=${SROCE_KO:-$(rig_build_dir)/sroce.ko} m
		[ -f "$ko" ] || rig_skip "no $ko (the module is not built for $RIG_UNAME)"
		for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do
			[ -d "/sys/module/$m" ] || modprobe "$m" || rig_fail "modprobe $m failed"
		done
		if [ ! -d /sys/module/sroce ]; then
			# SROCE_PARAMS: module parameters (sroce(7)), e.g. "tx_gso=0"
			# shellcheck disable=SC2086 # a list of words
			insmod "$ko" ${SROCE_PARAMS:-} || rig_fail "insmod $ko ${SROCE_PARAMS:-} failed"
		fi
		;;
	*)
		rig_fail "unknown device type $1"
		;;
	esac
}

# rig_use_sroce_provider: make libibverbs load the provider from the build
# tree (the guest's root is read-only, so /etc/libibverbs.d is left alone).
rig_use_sroce_provider() {
	local lib=$RIG_REPO/build/provider/libsroce
	[ -f "$lib-rdmav34.so" ] || rig_skip "no $lib-rdmav34.so (the provider is not built)"
	export RDMAV_DRIVERS=$lib
}

# rig_add_link NAME TYPE [NETDEV]: create RDMA device NAME of TYPE on NETDEV
# (default $RIG_IFACE) unless it exists; waits until its port is ACTIVE.
rig_add_link() {
	local name=$1 type=$2 netdev=${3:-$RIG_IFACE} st i
	if [ ! -e "/sys/class/infiniband/$name" ]; then
		rdma link add "$name" type "$type" netdev "$netdev" ||
			rig_fail "rdma link add $name type $type netdev $netdev failed"
	fi
	for ((i = 0; i < 100; i++)); do
		st=""
		read -r st <"/sys/class/infiniband/$name/ports/1/state" 2>/dev/null
		case "$st" in
		*ACTIVE*) return 0 ;;
		esac
		rig_sleep 0.1
	done
	rig_fail "$name: port 1 not ACTIVE after 10s"
}

# rig_setup_dev [TYPE]: load the driver and create this guest's device of
# TYPE (default: the suite's $RIG_DEV_TYPE for this role). Sets and exports
# RIG_DEV (device name, e.g. rxe0). Safe to call in every test: the device is
# created once per boot.
rig_setup_dev() {
	local type=${1:-$RIG_DEV_TYPE}
	rig_load_module "$type"
	[ "$type" = sroce ] && rig_use_sroce_provider
	RIG_DEV=${type}0
	export RIG_DEV
	rig_add_link "$RIG_DEV" "$type"
	rig_netem_once
	rig_pcap_once
}

# rig_netem_once: with RIG_NETEM set (e.g. "loss 1% duplicate 1%", from
# tools/vm/suite.sh -e), put that netem qdisc on this guest's link once per
# boot, so any test can be run over an impaired link.
rig_netem_once() {
	[ -n "${RIG_NETEM:-}" ] || return 0
	[ -e /run/rig-netem ] && return 0
	modprobe sch_netem 2>/dev/null
	# shellcheck disable=SC2086 # RIG_NETEM is a list of netem words
	tc qdisc replace dev "$RIG_IFACE" root netem $RIG_NETEM ||
		rig_fail "tc qdisc netem $RIG_NETEM on $RIG_IFACE failed"
	: >/run/rig-netem
	rig_log "$RIG_IFACE: netem $RIG_NETEM"
}

# rig_netem_restore: this guest's link as it was before a test that put a
# netem qdisc of its own on it (none; the suite-wide RIG_NETEM one if set).
rig_netem_restore() {
	if [ -n "${RIG_NETEM:-}" ]; then
		# shellcheck disable=SC2086 # RIG_NETEM is a list of netem words
		tc qdisc replace dev "$RIG_IFACE" root netem $RIG_NETEM
	else
		tc qdisc del dev "$RIG_IFACE" root 2>/dev/null
	fi
	return 0
}

# rig_pcap_once: with RIG_PCAP=1, capture the RoCEv2 headers this guest
# sends and receives (after its qdisc, so what went on the wire) into
# $RIG_OUT/roce.pcap, from the first device set-up to the end of the boot.
rig_pcap_once() {
	[ "${RIG_PCAP:-0}" = 1 ] || return 0
	[ -e /run/rig-pcap ] && return 0
	: >/run/rig-pcap
	command -v tcpdump >/dev/null || rig_fail "RIG_PCAP=1 needs tcpdump"
	tcpdump -i "$RIG_IFACE" -s 128 -U -w "$RIG_OUT/roce.pcap" udp port 4791 \
		>/dev/null 2>&1 &
	rig_sleep 1
}

# rig_sroce_qp_dbg DEV QPN: QP QPN's block of sroce device DEV's debugfs
# listing (/sys/kernel/debug/sroce/DEV/qps: a block per QP, each ended by
# an empty line, its first line "qpn N"); nothing when the QP is not there.
rig_sroce_qp_dbg() {
	awk -v head="qpn $2" 'BEGIN { RS = "" } index($0 "\n", head "\n") == 1 { print }' \
		"/sys/kernel/debug/sroce/$1/qps"
}

# rig_gid_of ADDR: the GID sysfs shows for an IPv4 or IPv6 address
# (IPv4 as ::ffff:a.b.c.d), eight groups of four lower-case hex digits.
rig_gid_of() {
	local a=$1 head tail n g out=() h=() t=()
	if [[ "$a" == *.*.*.* ]]; then
		local IFS=.
		# shellcheck disable=SC2086
		set -- $a
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
		return
	fi
	if [[ "$a" == *::* ]]; then
		head=${a%%::*}
		tail=${a#*::}
	else
		head=$a
		tail=
	fi
	IFS=: read -ra h <<<"$head"
	IFS=: read -ra t <<<"$tail"
	n=$((8 - ${#h[@]} - ${#t[@]}))
	for g in "${h[@]}"; do out+=("$(printf %04x "0x$g")"); done
	while [ "$n" -gt 0 ]; do
		out+=(0000)
		n=$((n - 1))
	done
	for g in "${t[@]}"; do out+=("$(printf %04x "0x$g")"); done
	(IFS=:; echo "${out[*]}")
}

# rig_gid_index DEV ADDR [TYPE]: index of the GID of ADDR with GID type TYPE
# (default "RoCE v2"; or "IB/RoCE v1") on port 1 of DEV. Waits up to
# RIG_GID_WAIT seconds (default 10; 0: one look, for a GID that must be
# absent) for the GID table to catch up with the addresses. The table is read in
# index order and the scan ends after 32 empty entries in a row (rxe's table
# has 1024 entries).
rig_gid_index() {
	local dev=$1 gid want=${3:-RoCE v2} d n v ty empty end
	gid=$(rig_gid_of "$2")
	d=/sys/class/infiniband/$dev/ports/1
	end=$((EPOCHSECONDS + ${RIG_GID_WAIT:-10}))
	while :; do
		n=0
		empty=0
		while [ -e "$d/gids/$n" ] && [ "$empty" -lt 32 ]; do
			v=""
			read -r v <"$d/gids/$n" 2>/dev/null
			if [ "$v" = "$gid" ]; then
				ty=""
				read -r ty <"$d/gid_attrs/types/$n" 2>/dev/null
				if [ "$ty" = "$want" ]; then
					echo "$n"
					return 0
				fi
			fi
			case "$v" in
			0000:0000:0000:0000:0000:0000:0000:0000 | "") empty=$((empty + 1)) ;;
			*) empty=0 ;;
			esac
			n=$((n + 1))
		done
		[ "$EPOCHSECONDS" -ge "$end" ] && break
		rig_sleep 0.2
	done
	rig_log "$dev: no $want GID for $2 ($gid)"
	return 1
}

# rig_active_mtu DEV: the port's active MTU in bytes (from ibv_devinfo).
rig_active_mtu() {
	ibv_devinfo -d "$1" -i 1 | awk '/active_mtu:/ { print $2; exit }'
}
