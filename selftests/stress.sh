#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Concurrency stress, for the debug kernel's detectors (KASAN, lockdep,
# KMEMLEAK, DEBUG_OBJECTS) to judge. For SROCE_STRESS_SECONDS (default 40),
# all at once:
#   - both guests: "sroce-verbs-check stress" (threads creating and
#     destroying PDs, MRs, windows, CQs, SRQs, AHs and RC QPs, loopback RC
#     traffic with every byte compared, window binds racing the
#     deregistration of their region: see tools/verbs-check/cmd_stress.cpp);
#   - RC traffic between the guests with every byte and atomic checked
#     (sroce-integrity run);
#   - guest a: forged WQEs and ring indices ("sroce-verbs-check ring
#     --quick": its two long flushes, a minute each on the debug kernel, are
#     hostile_rings.sh's) in a loop; guest b: sroce-wirefuzz at a's address (random QPNs and keys,
#     none of the live connection's PSNs).
# Then, on guest a, teardown under load: "rdma link delete" and then
# "rmmod sroce" while a stress process uses the device; the process must
# see the device go (IBV_EVENT_DEVICE_FATAL or failing verbs) and end by
# itself. Prints the operations each stress run did. The rig then scans for
# leaks with the module unloaded (tools/vm/guest/init.sh).
# timeout: 240
# place: smp2@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"

rig_suites sroce-sroce
# Races between CPUs are what it is for: make test runs it with --smp 2 on
# stock 6.1 (its place line: the smp2 run).
[ "$(nproc)" -ge 2 ] || rig_skip "needs two vCPUs per guest (tools/vm/suite.sh --smp 2)"
if [ "$RIG_DEV_TYPE" != sroce ] || [ "${RIG_PEER_DEV_TYPE:-}" != sroce ]; then
	rig_skip "the stress test runs sroce-sroce"
fi
VC_BIN=$RIG_REPO/build/tools/verbs-check/sroce-verbs-check
FUZZ_BIN=$RIG_REPO/build/tools/wirefuzz/sroce-wirefuzz
[ -x "$VC_BIN" ] || rig_skip "no $VC_BIN (cmake --build build)"
[ -x "$FUZZ_BIN" ] || rig_skip "no $FUZZ_BIN (cmake --build build)"
integ_init
secs=${SROCE_STRESS_SECONDS:-40}
dir=$RIG_TEST_OUT
gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"

# stress_ops LOG: the info line of a stress run.
stress_ops() { sed -n 's/^info: stress: //p' "$1"; }

rig_bg stress $((secs + 60)) "$VC_BIN" stress "$RIG_DEV" --gid-index "$gid" --seconds "$secs"
stress_pid=$RIG_BG_PID
side_pid=""
if rig_is_a; then
	# Hostile rings, one run after the other, until the stress ends.
	(
		n=0
		while kill -0 "$stress_pid" 2>/dev/null; do
			n=$((n + 1))
			"$VC_BIN" ring "$RIG_DEV" --quick >"$dir/ring-$n.log" 2>&1 || echo "ring run $n exited $?" >>"$dir/ring.failed"
		done
		echo "$n" >"$dir/ring.runs"
	) &
	side_pid=$!
else
	rig_bg wirefuzz $((secs + 30)) "$FUZZ_BIN" -d "$RIG_PEER_IP4" -s "$RIG_IP4" \
		-S "$RANDOM" -D "$secs" -r 500 -n 10000000
	side_pid=$RIG_BG_PID
fi
# RC traffic over the link while the rest runs.
integ_pair stress-integrity $((secs + 60)) 4 18691 run --duration "$secs"

rc=0
rig_bg_wait "$stress_pid" || rc=$?
sed 's/^/    /' "$dir/stress.log" | grep -v '^    PASS' | tail -n 20
[ "$rc" = 0 ] || rig_fail "sroce-verbs-check stress exited $rc"
ops=$(stress_ops "$dir/stress.log")
[ -n "$ops" ] || rig_fail "the stress run printed no operation counts"
rig_log "stress ($RIG_ROLE): $ops"
rig_metric stress_races "$(echo "$ops" | sed -n 's/.*, \([0-9]*\) bind\/dereg.*/\1/p')" races
rc=0
rig_bg_wait "$side_pid" || rc=$?
if rig_is_a; then
	[ ! -s "$dir/ring.failed" ] || rig_fail "hostile ring runs failed: $(head -n 3 "$dir/ring.failed" | tr '\n' ' ')"
	rig_log "hostile ring runs: $(cat "$dir/ring.runs" 2>/dev/null || echo 0)"
else
	[ "$rc" = 0 ] || rig_fail "sroce-wirefuzz exited $rc"
	grep '^sroce-wirefuzz: sent' "$dir/wirefuzz.log"
fi
rig_barrier stress-done 120 || rig_fail "the peer did not finish its stress"

# Teardown under load (guest a; b waits): the device goes away under a
# stress process, by link deletion and then by module removal.
# teardown WHAT CMD...: run CMD 5 s into a stress run; the run must end by
# itself within 60 s, having noticed the device go.
teardown() {
	local what=$1 pid rc=0 end
	shift
	rig_bg "stress-$what" 120 "$VC_BIN" stress "$RIG_DEV" --gid-index "$gid" \
		--seconds 100 --until-removed
	pid=$RIG_BG_PID
	rig_sleep 5
	kill -0 "$pid" 2>/dev/null || rig_fail "$what: the stress run ended early ($(tail -n 2 "$dir/stress-$what.log"))"
	"$@" || rig_fail "$what: $* failed under load"
	end=$((EPOCHSECONDS + 60))
	while kill -0 "$pid" 2>/dev/null && [ "$EPOCHSECONDS" -lt "$end" ]; do
		rig_sleep 0.5
	done
	kill -0 "$pid" 2>/dev/null && rig_fail "$what: the stress run did not end within 60 s of '$*'"
	rig_bg_wait "$pid" || rc=$?
	grep -E '^(FAIL|info)' "$dir/stress-$what.log" | sed 's/^/    /'
	[ "$rc" = 0 ] || rig_fail "$what: the stress run exited $rc"
	grep -q 'the device went away' "$dir/stress-$what.log" ||
		rig_fail "$what: the stress run did not see the device go"
}

if rig_is_a; then
	teardown link-delete rdma link delete "$RIG_DEV"
	rig_add_link "$RIG_DEV" sroce
	teardown rmmod rmmod sroce
	rig_setup_dev sroce
	rig_signal teardown-done
else
	rig_wait teardown-done 200 >/dev/null || rig_fail "guest a's teardown did not finish"
fi
