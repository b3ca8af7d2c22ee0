#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A device goes away while a process holds a context on it (PD, MR, CQ with
# an armed completion channel, RC QP with a posted receive, all rings
# mapped): by "rdma link delete", by "rmmod sroce" (two devices, both held)
# and by deleting its netdev, and by both "rdma link delete" and the
# netdev's removal at once. Each removal completes promptly, and each
# holder gets IBV_EVENT_DEVICE_FATAL, touches its dead objects (poll, post,
# query), destroys them and exits 0, without a crash or a kernel splat.
# Last, the device is deleted while a process creates and destroys objects
# in a loop: that process stops on its own (EIO), without a crash.
# The delete and the removal at once: four rounds, the two 0, 200, 400
# and 600 ms apart; SROCE_SHORT=1 (the debug kernel's run,
# tools/test-all.sh) one, 400 ms apart (where the debug kernel's delete is
# still unregistering the held device when the netdev goes).
# timeout: 660
# place: debug-1@1
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV
ifc=$CTRL_IFACE

# timed NAME CMD...: run CMD (30 s limit), log how long it took.
timed() {
	local name=$1 t0 t1 rc=0
	shift
	t0=$(date +%s%N)
	rig_run 30 "$@" || rc=$?
	t1=$(date +%s%N)
	rig_log "$name: '$*' exit $rc after $(((t1 - t0) / 1000000)) ms"
	return "$rc"
}

# 1. rdma link delete with a live context.
ctrl_hold_start hold-linkdel "$dev" 120 --expect-removal
pid=$CTRL_HOLD_PID
timed link-delete rdma link delete "$dev" || rig_fail "rdma link delete $dev with a live context failed"
ctrl_wait_gone "$dev" 10 || rig_fail "$dev still registered"
ctrl_expect_released hold-linkdel "$pid"
ctrl_link_add "$dev" "$ifc" || rig_fail "rdma link add after the delete failed"

# 2. rmmod with two devices, each held by a process.
ctrl_veth ctrlr0 ctrlr1
ctrl_link_add sroce1 ctrlr0 || rig_fail "rdma link add sroce1 failed"
ctrl_hold_start hold-rmmod0 "$dev" 120 --expect-removal
pid0=$CTRL_HOLD_PID
ctrl_hold_start hold-rmmod1 sroce1 120 --expect-removal
pid1=$CTRL_HOLD_PID
rig_log "module refcount with two contexts: $(cat /sys/module/sroce/refcnt)"
timed rmmod rmmod sroce || rig_fail "rmmod sroce with live contexts failed"
[ ! -d /sys/module/sroce ] || rig_fail "sroce is still loaded"
ctrl_wait_gone "$dev" 10 || rig_fail "$dev still registered after rmmod"
ctrl_wait_gone sroce1 10 || rig_fail "sroce1 still registered after rmmod"
ctrl_expect_released hold-rmmod0 "$pid0"
ctrl_expect_released hold-rmmod1 "$pid1"
rig_load_module sroce
ctrl_link_add "$dev" "$ifc" || rig_fail "rdma link add after reloading failed"

# 3. The netdev disappears under a held device.
ctrl_link_add sroce1 ctrlr0 || rig_fail "rdma link add sroce1 (again) failed"
ctrl_hold_start hold-netdev sroce1 120 --expect-removal
pid=$CTRL_HOLD_PID
timed netdev-delete ip link del ctrlr0 || rig_fail "ip link del ctrlr0 failed"
ctrl_wait_gone sroce1 10 || rig_fail "sroce1 still registered after its netdev went away"
ctrl_expect_released hold-netdev "$pid"

# 3b. "rdma link delete" and the netdev's removal at once, under a held
# device (its unregistration then takes a while): both unregister it, and
# the second must find it going. The core WARNs when a driver queues an
# unregistration for a device already being unregistered; so it would, too,
# on NETDEV_UNREGISTER's rebroadcast (every second while the netdev still
# has users). The delay between the two varies from round to round.
rounds="1 2 3 4"
[ "${SROCE_SHORT:-0}" = 1 ] && rounds="3"
for i in $rounds; do
	ctrl_veth "ctrlq$i" "ctrlp$i"
	ctrl_link_add sroce2 "ctrlq$i" || rig_fail "race round $i: rdma link add sroce2 failed"
	ctrl_hold_start "hold-race$i" sroce2 120 --expect-removal
	pid=$CTRL_HOLD_PID
	rdma link delete sroce2 2>/dev/null &
	dpid=$!
	rig_sleep "0.$((i * 2 - 2))"
	ip link del "ctrlq$i" || rig_fail "race round $i: ip link del ctrlq$i failed"
	# Either may have done it: the delete's status is not the point.
	wait "$dpid" 2>/dev/null
	ctrl_wait_gone sroce2 10 || rig_fail "race round $i: sroce2 still registered"
	ctrl_expect_released "hold-race$i" "$pid"
	rig_log "race round $i: delete and netdev removal $((i * 2 - 2))00 ms apart, device gone"
done

# 4. rdma link delete in the middle of create/destroy loops: the looping
# process sees its verbs fail (EIO) and stops on its own, no crash.
"$CTRL_VC" objects "$dev" --loops 1000 >"$RIG_TEST_OUT/objects-removed.log" 2>&1 &
pid=$!
CTRL_PIDS+=("$pid")
sleep "${SROCE_CTRL_REMOVE_AFTER:-4}"
kill -0 "$pid" 2>/dev/null || rig_fail "the objects loop ended before the removal"
timed link-delete-busy rdma link delete "$dev" || rig_fail "rdma link delete $dev during the loops failed"
ctrl_wait_gone "$dev" 10 || rig_fail "$dev still registered"
rc=0
ctrl_hold_wait objects-removed "$pid" 120 >/dev/null || rc=$?
grep -v '^PASS' "$RIG_TEST_OUT/objects-removed.log" | head -n 20 | sed 's/^/    /'
[ "$rc" -lt 124 ] || rig_fail "the objects loop died or hung after the removal (status $rc)"
grep -q 'the device is gone' "$RIG_TEST_OUT/objects-removed.log" ||
	rig_fail "the objects loop did not notice the removal"
ctrl_link_add "$dev" "$ifc" || rig_fail "rdma link add after the busy delete failed"

# The survivor still works.
[ "$(ctrl_port_state "$dev")" = ACTIVE ] || rig_fail "$dev not ACTIVE at the end"
ctrl_vc devinfo-after 60 devinfo "$dev" --state active || rig_fail "$dev does not work at the end"
