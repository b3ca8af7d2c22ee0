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

# odpstall_exit RELEASE HOW...: the faults wait while their process exits,
# the link is deleted and rmmod is refused, each in under 10 s; once they
# are let go, rmmod succeeds. The module is loaded again and the link
# added back. A watchdog runs RELEASE after 25 s, so that a run whose
# teardown waits for the faults still ends (and fails).
odpstall_exit() {
	local release=$1 fired=$RIG_TEST_OUT/watchdog.fired t0 ms rc=0 refs said dog
	shift
	rm -f "$fired"
	(
		sleep 25
		"$release"
		touch "$fired"
	) &
	dog=$!
	CTRL_PIDS+=("$dog")

	t0=$(date +%s%N)
	rig_run 60 "$CTRL_VC" odpstall "$CTRL_DEV" "$@" --exit >"$RIG_TEST_OUT/exit.log" 2>&1 || rc=$?
	ms=$(odpstall_ms_since "$t0")
	sed 's/^/    /' "$RIG_TEST_OUT/exit.log"
	rig_log "odpstall --exit: status $rc after $ms ms (1 s of it the stall itself)"
	grep -q '^stalled' "$RIG_TEST_OUT/exit.log" || rig_fail "odpstall --exit did not stall its faults (status $rc)"
	[ "$rc" = 0 ] || rig_fail "odpstall --exit: status $rc"
	[ -e "$fired" ] && rig_fail "the process exit waited for the faults until the watchdog let them go ($ms ms)"
	[ "$ms" -lt 10000 ] || rig_fail "the process took $ms ms to exit with faults waiting"

	t0=$(date +%s%N)
	rig_run 30 rdma link delete "$CTRL_DEV" || rig_fail "rdma link delete $CTRL_DEV failed"
	ms=$(odpstall_ms_since "$t0")
	rig_log "rdma link delete with faults waiting: $ms ms"
	[ -e "$fired" ] && rig_fail "rdma link delete waited for the faults until the watchdog let them go ($ms ms)"
	[ "$ms" -lt 10000 ] || rig_fail "rdma link delete took $ms ms with faults waiting"
	ctrl_wait_gone "$CTRL_DEV" 10 || rig_fail "$CTRL_DEV still registered"

	refs=$(cat /sys/module/sroce/refcnt)
	rig_log "sroce.ko refcnt with the faults still waiting, no device: $refs"
	[ "$refs" -gt 0 ] || rig_fail "no fault holds sroce.ko (refcnt $refs): rmmod would free the code they run"
	t0=$(date +%s%N)
	if said=$(rig_run 30 rmmod sroce 2>&1); then
		rig_fail "rmmod sroce succeeded while faults were waiting"
	fi
	ms=$(odpstall_ms_since "$t0")
	rig_log "rmmod with faults waiting: refused after $ms ms: $said"
	[ -e "$fired" ] && rig_fail "rmmod waited for the faults until the watchdog let them go"
	[ "$ms" -lt 10000 ] || rig_fail "rmmod took $ms ms with faults waiting"

	kill "$dog" 2>/dev/null
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
