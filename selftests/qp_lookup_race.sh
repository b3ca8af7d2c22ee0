#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A QP destroyed while a lookup by its number stands between finding it and
# taking a reference: the lookup must let go without touching the QP, which
# the RDMA core frees as soon as destroy returns. A remote peer reaches this
# with a packet to a QP number whose owner is destroying it; here the
# debugfs QP listing does the lookup, the same sroce_qp_get(). The knob
# fault/lookup_delay_ms holds a lookup 4 s in that window where it can be
# preempted (process context under preemptible RCU: the debug kernel;
# elsewhere the test skips, as the knob never waits there). Each round: a
# holder (sroce-verbs-check hold: an RC QP in INIT) is started, the listing
# is read with the knob set, and once the listing's lookup of the holder's
# QP has begun (faults_injected counts each wait as it begins; QP 1, the
# GSI QP, comes first) the holder is killed, so its QP is destroyed and
# freed inside the window. Checked each round: the listing was still in
# that lookup when the holder had exited (else the window was missed), the
# listing does not show the holder's QP, and the device still works (a new
# holder, the next round). Without struct sroce_qp_life (kfree_rcu'd
# reference counts), the debug kernel's KASAN reported a use-after-free in
# sroce_qp_get() here, which fails the test.
# timeout: 300
# place: debug-1@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV
dbg=/sys/kernel/debug/sroce/$dev
[ -d /sys/kernel/debug/sroce ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
knob=$dbg/fault/lookup_delay_ms
[ -e "$knob" ] || rig_fail "no $knob"
faults=/sys/class/infiniband/$dev/ports/1/hw_counters/faults_injected
restore_knob() { echo 0 >"$knob" 2>/dev/null || true; }
trap 'rc=$?; restore_knob; (exit "$rc"); ctrl_restore' EXIT
# count: faults_injected, without a process (a fork costs most of a second
# on the debug kernel).
count() {
	local v
	read -r v <"$faults"
	echo "$v"
}

ROUNDS=${SROCE_QP_RACE_ROUNDS:-4}
for round in $(seq 1 "$ROUNDS"); do
	ctrl_hold_start "hold$round" "$dev" 120
	holder=$CTRL_HOLD_PID
	qpn=$(awk '/^qpn / { q = $2 } /^user 1$/ { print q }' "$dbg/qps" | tail -n 1)
	[ -n "$qpn" ] || rig_fail "round $round: the holder's QP is not in $dbg/qps"
	before=$(count)
	echo 4000 >"$knob"
	cat "$dbg/qps" >"$RIG_TEST_OUT/qps.$round" &
	lister=$!
	# The second wait (QP 1's, then the holder's QP's) has begun.
	end=$((SECONDS + 30))
	while [ "$(count)" -lt $((before + 2)) ]; do
		if [ "$SECONDS" -ge "$end" ] || ! kill -0 "$lister" 2>/dev/null; then
			restore_knob
			wait "$lister"
			[ "$(count)" = "$before" ] &&
				rig_skip "lookup_delay_ms never waited: this kernel's RCU is not preemptible"
			rig_fail "round $round: the listing's lookups waited $(($(count) - before)) times, want 2"
		fi
		rig_sleep 0.05
	done
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null
	if ! kill -0 "$lister" 2>/dev/null; then
		rig_fail "round $round: the listing ended before the holder's QP was destroyed (window missed)"
	fi
	restore_knob
	wait "$lister" || rig_fail "round $round: reading $dbg/qps failed"
	if grep -qx "qpn $qpn" "$RIG_TEST_OUT/qps.$round"; then
		rig_fail "round $round: the listing shows QP $qpn, destroyed during its lookup"
	fi
	rig_log "round $round: QP $qpn destroyed inside its lookup's window; the listing skipped it"
done
rig_log "$ROUNDS rounds"
