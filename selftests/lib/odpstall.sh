#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Teardown while on-demand-paging faults wait, for odp_stall.sh (the
# debugfs knob sroce/odp_stall holds every fault) and odp_fuse.sh (the
# faults wait in a FUSE file whose server never answers). Sourced after
# lib/guest.sh and sroce_ctrl_lib.sh (ctrl_init done). HOW below is how
# "sroce-verbs-check odpstall" holds the faults: --knob PATH, or --file F
# --server-pid P; RELEASE is a command that lets them go (the knob cleared,
# the server killed).

# odpstall_inproc HOW...: the faults wait while the process tears its
# objects down; each step must return in under 5 s (the tool checks).
odpstall_inproc() {
	ctrl_vc odpstall 120 odpstall "$CTRL_DEV" "$@" || rig_fail "sroce-verbs-check odpstall $*: failed"
}

# odpstall_ms_since T0: milliseconds since T0 (date +%s%N).
odpstall_ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# odpstall_arm RELEASE / odpstall_disarm: a watchdog around one step: it
# runs RELEASE 20 s (scaled by rig_limit) after odpstall_arm unless
# disarmed by then, so that a step that waits for the faults still ends
# (and fails: odpstall_fired).
# One per step, not one for the whole teardown: each step is allowed
# 10 s, and in a debug guest on a busy host the script's own commands
# between the steps once took 13 s, so a single 25 s watchdog fired during
# a link delete that returned in 9.5 s on its own.
ODPSTALL_FIRED=""
ODPSTALL_DOG=""
odpstall_arm() {
	local release=$1
	ODPSTALL_FIRED=$RIG_TEST_OUT/watchdog.fired
	rm -f "$ODPSTALL_FIRED"
	(
		sleep "$(rig_limit 20)"
		# (Marked first: a disarm that races the release still sees it.)
		touch "$ODPSTALL_FIRED"
		"$release"
	) &
	ODPSTALL_DOG=$!
	CTRL_PIDS+=("$ODPSTALL_DOG")
}
odpstall_disarm() {
	kill "$ODPSTALL_DOG" 2>/dev/null
	wait "$ODPSTALL_DOG" 2>/dev/null
	return 0
}
odpstall_fired() { [ -e "$ODPSTALL_FIRED" ]; }

# odpstall_exit RELEASE HOW...: the faults wait while their process exits,
# the link is deleted and rmmod is refused, each in under 10 s (scaled by
# rig_limit; a watchdog per step lets the faults go after twice that, so
# that a step that waits for them still ends, and fails); once they are
# let go, rmmod succeeds. The
# module is loaded again and the link added back.
odpstall_exit() {
	local release=$1 t0 ms rc=0 refs said step_ms
	shift
	# 10 s a step, scaled as the rig's waits are (RIG_TIMEOUT_SCALE: 3x on
	# the debug kernel, where a process exit took 10.6 s beside another
	# busy guest): a fault that waits waits until it is let go, far longer.
	step_ms=$(($(rig_limit 10) * 1000))

	odpstall_arm "$release"
	t0=$(date +%s%N)
	rig_run 60 "$CTRL_VC" odpstall "$CTRL_DEV" "$@" --exit >"$RIG_TEST_OUT/exit.log" 2>&1 || rc=$?
	ms=$(odpstall_ms_since "$t0")
	odpstall_disarm
	sed 's/^/    /' "$RIG_TEST_OUT/exit.log"
	rig_log "odpstall --exit: status $rc after $ms ms (1 s of it the stall itself)"
	grep -q '^stalled' "$RIG_TEST_OUT/exit.log" || rig_fail "odpstall --exit did not stall its faults (status $rc)"
	[ "$rc" = 0 ] || rig_fail "odpstall --exit: status $rc"
	odpstall_fired && rig_fail "the process exit waited for the faults until the watchdog let them go ($ms ms)"
	[ "$ms" -lt "$step_ms" ] || rig_fail "the process took $ms ms to exit with faults waiting (limit $step_ms ms)"

	odpstall_arm "$release"
	t0=$(date +%s%N)
	rig_run 30 rdma link delete "$CTRL_DEV" || rig_fail "rdma link delete $CTRL_DEV failed"
	ms=$(odpstall_ms_since "$t0")
	odpstall_disarm
	rig_log "rdma link delete with faults waiting: $ms ms"
	odpstall_fired && rig_fail "rdma link delete waited for the faults until the watchdog let them go ($ms ms)"
	[ "$ms" -lt "$step_ms" ] || rig_fail "rdma link delete took $ms ms with faults waiting (limit $step_ms ms)"
	ctrl_wait_gone "$CTRL_DEV" 10 || rig_fail "$CTRL_DEV still registered"

	refs=$(cat /sys/module/sroce/refcnt)
	rig_log "sroce.ko refcnt with the faults still waiting, no device: $refs"
	[ "$refs" -gt 0 ] || rig_fail "no fault holds sroce.ko (refcnt $refs): rmmod would free the code they run"
	odpstall_arm "$release"
	t0=$(date +%s%N)
	if said=$(rig_run 30 rmmod sroce 2>&1); then
		odpstall_disarm
		rig_fail "rmmod sroce succeeded while faults were waiting"
	fi
	ms=$(odpstall_ms_since "$t0")
	odpstall_disarm
	rig_log "rmmod with faults waiting: refused after $ms ms: $said"
	odpstall_fired && rig_fail "rmmod waited for the faults until the watchdog let them go"
	[ "$ms" -lt "$step_ms" ] || rig_fail "rmmod took $ms ms with faults waiting (limit $step_ms ms)"

	"$release"
	for _ in $(seq 1 100); do
		[ "$(cat /sys/module/sroce/refcnt)" = 0 ] && break
		sleep 0.1
	done
	refs=$(cat /sys/module/sroce/refcnt)
	[ "$refs" = 0 ] || rig_fail "faults let go: sroce.ko refcnt still $refs after 10 s"
	rig_run 30 rmmod sroce || rig_fail "rmmod sroce failed once the faults had ended"
	rig_load_module sroce
	ctrl_link_add "$CTRL_DEV" "$CTRL_IFACE" || rig_fail "rdma link add after reloading failed"
}
