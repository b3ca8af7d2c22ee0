#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A device goes away while a process holds a context on it (PD, MR, CQ with
# an armed completion channel, RC QP with a posted receive, all rings
# mapped): by "rdma link delete", by "rmmod sroce" (two devices, both held)
# and by deleting its netdev. Each removal completes promptly, and each
# holder gets IBV_EVENT_DEVICE_FATAL, touches its dead objects (poll, post,
# query), destroys them and exits 0, without a crash or a kernel splat.
# timeout: 240
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"

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

# The survivor still works.
[ "$(ctrl_port_state "$dev")" = ACTIVE ] || rig_fail "$dev not ACTIVE at the end"
ctrl_vc devinfo-after 60 devinfo "$dev" --state active || rig_fail "$dev does not work at the end"
