#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Tearing down never waits for an on-demand-paging fault, with the memory
# that makes one wait for real: an ODP region over a private mapping of a
# file whose FUSE server reads every READ request and never replies
# ("sroce-verbs-check fusehang"). A fault there waits in the kernel,
# uninterruptibly, until the server dies (its connection is then aborted
# and the read fails). The cases of odp_stall.sh (lib/odpstall.sh), the
# server killed where that test clears its knob: the process's teardown,
# then its exit, "rdma link delete" and a refused rmmod each return while
# the faults wait; the faults reached the server (its log shows the
# reads); killed, they end and rmmod succeeds. On the debug kernel (6.1,
# under the detectors: 56 s there) and on 6.12.
# timeout: 240
# place: debug-1@3 6.12-1@1
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=sroce_ctrl_lib.sh
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# shellcheck source=lib/odpstall.sh
. "$(dirname "$0")/lib/odpstall.sh"
rig_suites sroce-sroce sroce

ctrl_init
# The server stopped and unmounted first; ctrl_restore gets the status.
fuse_exit() {
	local rc=$?
	fuse_stop
	(exit "$rc")
	ctrl_restore
}
trap fuse_exit EXIT
[ -e /dev/fuse ] || modprobe fuse || rig_fail "modprobe fuse failed"
mnt=$(mktemp -d /tmp/odpfuse.XXXXXX)
FUSE_PID=

# fuse_start NAME: a never-answering server mounted at $mnt (FUSE_PID).
fuse_start() {
	"$CTRL_VC" fusehang "$mnt" >"$RIG_TEST_OUT/$1.log" 2>&1 &
	FUSE_PID=$!
	ctrl_wait_started "$RIG_TEST_OUT/$1.log" '^mounted' "$FUSE_PID" 10 ||
		rig_fail "$1: the FUSE server did not mount $mnt"
}

# fuse_kill: the server killed (its connection aborted: waiting reads fail).
fuse_kill() { [ -n "$FUSE_PID" ] && kill -KILL "$FUSE_PID" 2>/dev/null; }

fuse_stop() {
	fuse_kill
	[ -n "$FUSE_PID" ] && wait "$FUSE_PID" 2>/dev/null
	FUSE_PID=
	umount -l "$mnt" 2>/dev/null
}

# fuse_reads NAME: the faults reached the server.
fuse_reads() {
	local n
	n=$(grep -c '^read ' "$RIG_TEST_OUT/$1.log")
	rig_log "$1: the server got $n READ requests (never answered)"
	[ "$n" -gt 0 ] || rig_fail "$1: no READ reached the FUSE server: the faults did not wait in it"
}

fuse_start fuse-inproc
odpstall_inproc --file "$mnt/data" --server-pid "$FUSE_PID"
fuse_reads fuse-inproc
fuse_stop

fuse_start fuse-exit
odpstall_exit fuse_kill --file "$mnt/data" --server-pid "$FUSE_PID"
fuse_reads fuse-exit
fuse_stop
rmdir "$mnt"
