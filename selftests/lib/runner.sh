#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs the guest test suite in one guest of a rig run:
#
#   runner.sh ROLE TEST...       (from selftests/Makefile: run_tests, run_peer)
#
# Both guests run the same list in the same order, one half of each test per
# guest, in lockstep: before a test both halves meet at a start marker, after
# it each writes its status into the test's sync folder, and guest a (the
# reporter) combines the two statuses into one KTAP line. A test half that
# outlives its time limit is killed, and a half whose peer has already failed
# or skipped is stopped after a short grace time, so that one broken test
# cannot hang the rest of the suite.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The tests' folder (RIG_TESTS_DIR: the rig's self-test of this runner).
dir=${RIG_TESTS_DIR:-$(cd "$here/.." && pwd)}
# shellcheck source=selftests/lib/ktap.sh
. "$here/ktap.sh"

role=${1:?usage: runner.sh ROLE TEST...}
shift
tests=("$@")
peer=${RIG_PEER_ROLE:-}
[ "${RIG_NGUESTS:-1}" = 2 ] || peer=""
export RIG_ROLE=$role RIG_PEER_ROLE=$peer
export RIG_SHARED=${RIG_SHARED:-/tmp/rig}
export RIG_OUT=${RIG_OUT:-$RIG_SHARED/$role}
export RIG_SUITE=${RIG_SUITE:-local}
type_var=RIG_DEV_TYPE_${role^^}
peer_type_var=RIG_DEV_TYPE_${peer^^}
export RIG_DEV_TYPE=${!type_var:-${RIG_DEV_TYPE:-rxe}}
if [ -n "$peer" ]; then
	export RIG_PEER_DEV_TYPE=${!peer_type_var:-rxe}
else
	export RIG_PEER_DEV_TYPE=""
fi
mkdir -p "$RIG_OUT"

timeout=300
if [ -f "$dir/settings" ]; then
	t=$(sed -n 's/^timeout=\([0-9]\+\)$/\1/p' "$dir/settings")
	[ -n "$t" ] && timeout=$t
fi
start_wait=90
# At the first test the peer may still be booting, or booting again: the
# rig starts a guest again when it has not reached userspace 90 s after
# its start (tools/vm/run.sh --boot-limit).
first_wait=300
peer_grace=10
patterns=${RIG_REPO:-$here/../..}/tools/vm/splat-patterns

now() { echo "$EPOCHSECONDS"; }
# Sleep without an exec (each costs 50-100 ms under TCG).
exec {sleep_fd}<> <(:)
nap() { read -rt "$1" -u "$sleep_fd" _ || true; }

# Splat patterns, loaded once (every exec costs 50-100 ms under TCG, so
# the checks below run on builtins and one dmesg per call).
splat_labels=()
splat_res=()
if [ -f "$patterns" ]; then
	while IFS=$'\t' read -r label re; do
		case "$label" in '#'* | '') continue ;; esac
		splat_labels+=("$label")
		splat_res+=("$re")
	done <"$patterns"
fi

# The kernel log as /dev/kmsg records, one per line ("PRIO,SEQ,TIME,FLAGS;
# TEXT"; a record's continuation lines begin with a space). Their sequence
# numbers say which records are new and whether the log dropped some
# meanwhile: counting dmesg's lines instead skipped new lines once the
# 4 MiB log had wrapped. (dd reads one record per read(2) and stops at the
# end, EAGAIN, with its non-blocking open.)
kmsg_records() {
	dd if=/dev/kmsg iflag=nonblock bs=65536 status=none 2>/dev/null
}

# The sequence number the next kernel log record will have.
kmsg_next() {
	local recs=() i
	mapfile -t recs < <(kmsg_records)
	for ((i = ${#recs[@]} - 1; i >= 0; i--)); do
		if [[ "${recs[i]}" =~ ^[0-9]+,([0-9]+), ]]; then
			echo "$((BASH_REMATCH[1] + 1))"
			return
		fi
	done
	echo 0
}

# First kernel splat in the records from sequence number $1 on, as "LABEL
# in dmesg: text"; status 1 when there is none. Records the log dropped
# before they were read are reported on standard error: the rig finds
# their reports on the guest's console (tools/vm/run.sh).
new_splat() {
	local from=$1 recs=() texts=() i j start first=""
	local rec_re='^[0-9]+,([0-9]+),[^;]*;(.*)$'
	[ ${#splat_res[@]} -gt 0 ] || return 1
	mapfile -t recs < <(kmsg_records)
	start=${#recs[@]}
	for ((i = ${#recs[@]} - 1; i >= 0; i--)); do
		[[ "${recs[i]}" =~ $rec_re ]] || continue
		[ "${BASH_REMATCH[1]}" -ge "$from" ] || break
		start=$i
		first=${BASH_REMATCH[1]}
	done
	if [ -n "$first" ] && [ "$first" -gt "$from" ] && [ "$i" -lt 0 ]; then
		echo "kernel log: records $from to $((first - 1)) were overwritten before the runner read them (the rig checks the console)" >&2
	fi
	for ((i = start; i < ${#recs[@]}; i++)); do
		[[ "${recs[i]}" =~ $rec_re ]] && texts+=("${BASH_REMATCH[2]}")
	done
	for ((j = 0; j < ${#splat_res[@]}; j++)); do
		for ((i = 0; i < ${#texts[@]}; i++)); do
			if [[ "${texts[i]}" =~ ${splat_res[j]} ]]; then
				echo "${splat_labels[j]} in dmesg: ${texts[i]}"
				return 0
			fi
		done
	done
	return 1
}

# Memory after a test, in MB, from /proc/meminfo (builtins only): a test
# that leaks kernel memory shows as a step down from one line to the next.
mem_line() {
	local k v _ avail="" slab="" vm=""
	while read -r k v _; do
		case "$k" in
		MemAvailable:) avail=$((v / 1024)) ;;
		Slab:) slab=$((v / 1024)) ;;
		VmallocUsed:) vm=$((v / 1024)) ;;
		esac
	done </proc/meminfo
	echo "available ${avail:-?} MB, slab ${slab:-?} MB, vmalloc ${vm:-?} MB"
}

# Per-test time limit: "# timeout: N" in the test script, else settings.
# Not scaled by RIG_TIMEOUT_SCALE: N is the limit on the slowest kernel the
# test is placed on (tools/placement.sh), about three times its time there;
# a limit three times as long again let one hung test take half of CI's
# time.
test_timeout() {
	local line t=$timeout
	while IFS= read -r line; do
		if [[ "$line" =~ ^#\ timeout:\ ([0-9]+)$ ]]; then
			t=${BASH_REMATCH[1]}
			break
		fi
	done <"$1"
	echo "$t"
}

# Run this guest's half of test $2 (script $1) in sync folder $3; prints
# nothing, leaves the status in $3/$role.done.
run_half() {
	local script=$1 name=$2 sync=$3 limit pid rc="" t0 before peer_rc aborted=""
	limit=$(test_timeout "$script")
	export RIG_TEST=$name RIG_TEST_SYNC=$sync RIG_TEST_TIMEOUT=$limit
	export RIG_TEST_OUT=$RIG_OUT/tests/$name
	mkdir -p "$RIG_TEST_OUT"
	before=$(kmsg_next)
	t0=$(now)
	# RIG_XTRACE=1 (tools/vm/suite.sh -e RIG_XTRACE=1): the test runs
	# under "bash -x", each traced command stamped with the time of day in
	# seconds (where a slow test spends its time), in its ROLE.log.
	local sh=(bash)
	# (bash takes no PS4 from the environment as root: set it inside.)
	# shellcheck disable=SC2016 # expanded by that bash
	[ "${RIG_XTRACE:-0}" = 1 ] && sh=(bash -c 'PS4="+ \${EPOCHREALTIME} "; set -x; . "$0"')
	# The test runs in a session of its own (sid = pid: setsid(1) does not
	# fork, the runner's children lead no process group), which keeps every
	# process it starts, also those that rig_bg's timeout(1) puts in process
	# groups of their own.
	setsid timeout -k 5 "$limit" "${sh[@]}" "$script" >"$RIG_TEST_OUT/$role.log" 2>&1 \
		</dev/null &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ -n "$peer" ] && [ -z "$aborted" ] && [ -e "$sync/$peer.done" ]; then
			peer_rc=1
			read -r peer_rc <"$sync/$peer.rc"
			if [ "$peer_rc" != 0 ]; then
				aborted=$(($(now) + peer_grace))
			fi
		fi
		if [ -n "$aborted" ] && [ "$(now)" -ge "$aborted" ]; then
			echo "[$role] stopped: the peer's half ended with status $peer_rc" \
				>>"$RIG_TEST_OUT/$role.log"
			pkill -KILL -s "$pid"
			kill -KILL "$pid" 2>/dev/null
			break
		fi
		nap 0.2
	done
	wait "$pid" 2>/dev/null
	rc=$?
	# What the test left running goes with it: a half that fails before
	# its own cleanup (rig_fail exits at once) would leave its background
	# tools holding QPs and ports into the next test.
	pkill -KILL -s "$pid"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ] && [ -z "$aborted" ]; then
		echo "[$role] timed out after ${limit}s" >>"$RIG_TEST_OUT/$role.log"
		echo "timed out after ${limit}s" >"$sync/$role.reason"
	fi
	# rig_fail and rig_skip leave their reason before they exit; an EXIT
	# trap that runs a command before one that exits with "$?" turns the
	# status into 0, and the failure or skip must not become a pass.
	if [ "$rc" = 0 ] && [ -f "$sync/$role.reason" ]; then
		echo "[$role] the test called rig_fail but exited 0 (its EXIT trap lost the status)" \
			>>"$RIG_TEST_OUT/$role.log"
		rc=1
	elif [ "$rc" = 0 ] && [ -f "$sync/$role.skip" ]; then
		rc=$KSFT_SKIP
	fi
	if [ -n "$aborted" ]; then
		# The peer's verdict decides (skip or fail); ours is "stopped".
		rc=$peer_rc
		[ "$rc" = "$KSFT_SKIP" ] || rc=1
	fi
	if splat=$(new_splat "$before" 2>>"$RIG_TEST_OUT/$role.log"); then
		echo "[$role] kernel: $splat" >>"$RIG_TEST_OUT/$role.log"
		echo "kernel: $splat" >"$sync/$role.reason"
		rc=1
	fi
	echo "$(($(now) - t0))" >"$sync/$role.time"
	echo "$rc" >"$sync/$role.rc"
	: >"$sync/$role.done"
}

# suites_of SCRIPT: SUITES_OF = the suites named by the test's top-level
# "rig_suites" line (lib/guest.sh), empty when it has none. The runner
# skips a test outside them without starting it: a started test costs a
# second or more under TCG (its shell, its libraries, the dmesg checks),
# and a suite skips dozens. Builtins only.
suites_of() {
	local line
	SUITES_OF=""
	while IFS= read -r line; do
		if [[ "$line" == "rig_suites "* ]]; then
			SUITES_OF=${line#rig_suites }
			return 0
		fi
	done <"$1"
}

# Wait for the peer's status of the test in $1 (bounded); prints it.
peer_status() {
	local sync=$1 limit=$2 end
	end=$(($(now) + limit))
	until [ -e "$sync/$peer.done" ]; do
		[ "$(now)" -ge "$end" ] && { echo none; return; }
		nap 0.2
	done
	cat "$sync/$peer.rc"
}

peer_gone=""
met=""
report() {
	[ "$role" = a ] || return 0
	"$@"
}

# --- one-guest tests before the pair's -------------------------------------
# RIG_SOLO_A and RIG_SOLO_B (tools/vm/suite.sh --solo-a, --solo-b; comma
# lists): one-guest tests that this pair rig runs before its pair tests,
# each guest its own list, side by side and not in step: every test of a
# list runs as in a one-guest rig (no peer, RIG_NGUESTS=1, suite
# RIG_SOLO_SUITE, by default the guest's device type). The debug kernel's
# one-guest tests run so (tools/test-all.sh): one boot of that slow kernel
# fewer, and both of CI's two cores busy with them. Guest a reports every
# one of them, its own as they end and b's once b's list is done, before
# the pair tests; each guest waits for the other's list to end (bounded by
# the sum of its tests' time limits) before the first pair test.
solo_list() {
	local v=RIG_SOLO_${1^^}
	echo "${!v:-}" | tr ',' ' '
}
read -ra solo_own <<<"$(solo_list "$role")"
solo_peer=()
[ -n "$peer" ] && read -ra solo_peer <<<"$(solo_list "$peer")"
solo_suite=${RIG_SOLO_SUITE:-$RIG_DEV_TYPE}
solo_dir() { echo "$RIG_SHARED/sync/solo-$1/$(printf %02d "$2")-${3%.sh}"; }

# solo_run: this guest's list, each test in a sync folder of its own.
solo_run() {
	local n=0 t name script sync keep_peer=$peer keep_suite=$RIG_SUITE
	local keep_ptype=$RIG_PEER_DEV_TYPE keep_n=${RIG_NGUESTS:-1}
	peer=""
	export RIG_PEER_ROLE="" RIG_NGUESTS=1 RIG_SUITE=$solo_suite RIG_PEER_DEV_TYPE=""
	for t in "${solo_own[@]}"; do
		n=$((n + 1))
		name=${t%.sh}
		script=$dir/$t
		sync=$(solo_dir "$role" "$n" "$t")
		mkdir -p "$sync"
		if [ ! -f "$script" ]; then
			echo "no such test" >"$sync/$role.reason"
			echo 1 >"$sync/$role.rc"
			: >"$sync/$role.done"
		else
			suites_of "$script"
			if [ "${RIG_ALL_SUITES:-0}" != 1 ] && [ -n "$SUITES_OF" ] &&
				[[ " $SUITES_OF " != *" $solo_suite "* ]]; then
				echo "covered by suites $SUITES_OF" >"$sync/$role.skip"
				echo "$KSFT_SKIP" >"$sync/$role.rc"
				echo 0 >"$sync/$role.time"
				: >"$sync/$role.done"
			else
				run_half "$script" "$name" "$sync"
			fi
		fi
		mem_line >"$sync/$role.mem"
		[ "$role" = a ] && solo_report "$role" "$n" "$t"
		[ "$role" = a ] || echo "# [$role] $name (one guest): status $(cat "$sync/$role.rc")"
	done
	: >"$RIG_SHARED/sync/solo-$role.done"
	peer=$keep_peer
	export RIG_PEER_ROLE=$peer RIG_NGUESTS=$keep_n RIG_SUITE=$keep_suite RIG_PEER_DEV_TYPE=$keep_ptype
}

# solo_report ROLE N TEST: the KTAP line of ROLE's Nth one-guest test, after
# its log.
solo_report() {
	local r=$1 name=${3%.sh} sync rc reason
	sync=$(solo_dir "$r" "$2" "$3")
	sed 's/^/# /' "$RIG_SHARED/$r/tests/$name/$r.log" 2>/dev/null
	if [ ! -e "$sync/$r.done" ]; then
		ktap_diag "$name: guest $r did not report this one-guest test"
		ktap_fail "$name"
		return
	fi
	rc=$(cat "$sync/$r.rc")
	ktap_diag "$name: $(cat "$sync/$r.time") s; memory after: $(cat "$sync/$r.mem" 2>/dev/null) (one guest, $r)"
	case "$rc" in
	0) ktap_pass "$name" ;;
	"$KSFT_SKIP") ktap_skip "$name" "$(head -n 1 "$sync/$r.skip" 2>/dev/null || echo skipped)" ;;
	*)
		[ -f "$sync/$r.reason" ] && ktap_diag "$name: [$r] $(cat "$sync/$r.reason")"
		ktap_fail "$name"
		;;
	esac
}

# solo_wait_peer T0: wait for the peer's list to end, at most the sum of its
# tests' time limits (plus a boot's wait) from T0.
solo_wait_peer() {
	local t end=$(($1 + first_wait))
	[ ${#solo_peer[@]} -gt 0 ] || return 0
	for t in "${solo_peer[@]}"; do
		[ -f "$dir/$t" ] && end=$((end + $(test_timeout "$dir/$t") + 15))
	done
	until [ -e "$RIG_SHARED/sync/solo-$peer.done" ]; do
		if [ "$(now)" -ge "$end" ]; then
			report ktap_diag "guest $peer did not end its one-guest tests in time"
			return 1
		fi
		nap 0.5
	done
}

report ktap_header
report ktap_plan $((${#tests[@]} + ${#solo_own[@]} + ${#solo_peer[@]}))
report ktap_diag "suite ${RIG_SUITE}: a=${RIG_DEV_TYPE} b=${RIG_PEER_DEV_TYPE:-none}, kernel $(uname -r)"
if [ $((${#solo_own[@]} + ${#solo_peer[@]})) -gt 0 ]; then
	solo_t0=$(now)
	report ktap_diag "one-guest tests first, side by side (suite $solo_suite): a: ${solo_own[*]:-none}; b: ${solo_peer[*]:-none}"
	solo_run
	solo_wait_peer "$solo_t0"
	if [ "$role" = a ]; then
		n=0
		for t in "${solo_peer[@]}"; do
			n=$((n + 1))
			solo_report "$peer" "$n" "$t"
		done
	fi
fi
n=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	name=${t%.sh}
	script=$dir/$t
	sync=$RIG_SHARED/sync/$(printf %02d "$n")-$name
	mkdir -p "$sync"
	if [ ! -f "$script" ]; then
		report ktap_diag "$t: no such test"
		report ktap_fail "$name"
		continue
	fi
	# Not in this suite: skipped by both guests alike, unstarted.
	if [ "${RIG_ALL_SUITES:-0}" != 1 ] && [ "$RIG_SUITE" != local ]; then
		suites_of "$script"
		if [ -n "$SUITES_OF" ] && [[ " $SUITES_OF " != *" $RIG_SUITE "* ]]; then
			report ktap_skip "$name" "covered by suites $SUITES_OF"
			continue
		fi
	fi
	# Meet the peer (it may still be finishing the previous test).
	if [ -n "$peer" ]; then
		now >"$sync/$role.start"
		end=$(($(now) + start_wait))
		[ -z "$met" ] && end=$(($(now) + first_wait))
		until [ -e "$sync/$peer.start" ] || [ -n "$peer_gone" ]; do
			if [ "$(now)" -ge "$end" ]; then
				peer_gone=1
				break
			fi
			nap 0.2
		done
		if [ -n "$peer_gone" ]; then
			report ktap_diag "$name: guest $peer did not come to the start of the test"
			report ktap_fail "$name"
			continue
		fi
		met=1
	fi
	run_half "$script" "$name" "$sync"
	rc=$(cat "$sync/$role.rc")
	prc=0
	if [ -n "$peer" ]; then
		prc=$(peer_status "$sync" "$(($(test_timeout "$script") + 30))")
	fi
	if [ "$role" != a ]; then
		echo "# [$role] $name: status $rc (peer $prc)"
		sed 's/^/# /' "$RIG_TEST_OUT/$role.log"
		continue
	fi
	sed 's/^/# /' "$RIG_TEST_OUT/$role.log"
	ktap_diag "$name: $(cat "$sync/$role.time") s; memory after: $(mem_line)"
	if [ -n "$peer" ] && [ "$prc" != 0 ]; then
		sed 's/^/# /' "$RIG_SHARED/$peer/tests/$name/$peer.log" 2>/dev/null
	fi
	if [ "$prc" = none ]; then
		ktap_diag "$name: guest $peer did not report its half"
		ktap_fail "$name"
	elif [ "$rc" != 0 ] && [ "$rc" != "$KSFT_SKIP" ] ||
		[ "$prc" != 0 ] && [ "$prc" != "$KSFT_SKIP" ]; then
		for r in "$role" "$peer"; do
			[ -n "$r" ] && [ -f "$sync/$r.reason" ] &&
				ktap_diag "$name: [$r] $(cat "$sync/$r.reason")"
		done
		ktap_fail "$name"
	elif [ "$rc" = "$KSFT_SKIP" ] || [ "$prc" = "$KSFT_SKIP" ]; then
		reason=$(cat "$sync/$role.skip" "$sync/$peer.skip" 2>/dev/null | head -n 1)
		ktap_skip "$name" "${reason:-skipped}"
	else
		ktap_pass "$name"
	fi
done
report ktap_totals
if [ "$role" = a ]; then
	[ "$KTAP_FAIL" = 0 ]
fi
