#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of a rig guest, started by the initramfs (tools/vm/initramfs-init)
# after it mounted everything and switched into the host root (read-only 9p).
# Configures the virtual link, runs the guest script, saves its status and
# dmesg into the run folder shared with the host (and the peer guest), and
# powers the guest off. Configuration comes from $rig_results/.rig/env-$rig_role,
# written by tools/vm/run.sh; rig_role and rig_results are on the kernel
# command line.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# LANG=C: with C.UTF-8, a program's setlocale() looks for 13 locale files
# under two names each, every lookup a 9p round trip to the host: grep took
# 0.56 s on the debug kernel, 0.31 s with LANG=C, bash -c : 0.67 s and 0.43.
# (Python coerces the C locale to C.UTF-8 for itself.)
export HOME=/root TERM=dumb LANG=C

say() { echo "rig-guest: $*" >/dev/console; }
halt() {
	sync
	/bin/busybox poweroff -f
	sleep 10
}

read -r up _ </proc/uptime
role=${rig_role:-a}
results=${rig_results:?}
# shellcheck source=/dev/null
. "$results/.rig/env-$role"

out=$RIG_OUT
echo "$up" >"$out/up"
say "userspace after ${up}s (guest $role, kernel $RIG_KERNEL)"
echo "rig-$role" >/proc/sys/kernel/hostname

# The virtual link: no DAD on the private link, so addresses work at once.
echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad
echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
ip link set lo up
if [ -n "$RIG_IFACE" ] && [ -e "/sys/class/net/$RIG_IFACE" ]; then
	echo 0 >"/proc/sys/net/ipv6/conf/$RIG_IFACE/accept_dad"
	ip link set "$RIG_IFACE" mtu "$RIG_MTU" up
	ip addr add "$RIG_IP4/$RIG_IP4_PREFIX" dev "$RIG_IFACE"
	ip -6 addr add "$RIG_IP6/$RIG_IP6_PREFIX" dev "$RIG_IFACE" nodad
else
	say "no network interface $RIG_IFACE"
fi

# libibverbs loads every provider that /etc/libibverbs.d names (17 on
# Debian) when a process first lists the devices: on the debug kernel 0.4 s
# of every verbs process's start (ibv_devices 2.0 s, 1.6 s with one file).
# A guest has rxe and sroce devices only, and sroce's provider comes from
# the build tree (RDMAV_DRIVERS, selftests/lib/guest.sh): a tmpfs over the
# directory keeps rxe's file. The host's directory stays as it is.
ibvd=/etc/libibverbs.d
if [ -f "$ibvd/rxe.driver" ] && mkdir -p /run/libibverbs.d &&
	cp "$ibvd/rxe.driver" /run/libibverbs.d/; then
	mount --bind /run/libibverbs.d "$ibvd" || say "cannot narrow $ibvd"
fi

# A kernel with KMEMLEAK (tools/vm/debug-kernel.sh): scanned after the
# script (below), not before it. A scan here, then "clear", used to be meant
# to mark what boot left unreferenced as seen, and did not: a scan reports
# no object whose contents changed since the scan before (mm/kmemleak.c,
# update_checksum), and a first scan finds every object changed from its
# initial checksum of 0, so it reports nothing and "clear", which greys
# only reported objects, had nothing to grey. It took about 20 s of every
# debug guest's boot.
kmemleak=/sys/kernel/debug/kmemleak

# A kernel with KCSAN (debug-kernel.sh --variant kcsan): races of the core
# kernel in which no sroce code takes part are not reported (the debugfs
# filter list; a report is skipped when either side's top frame is listed).
# do_nanosleep / hrtimer_wakeup: the sleeper's task pointer, read without
# READ_ONCE while the timer interrupt clears it; seen twice in stress.sh.
kcsan=/sys/kernel/debug/kcsan
if [ -w "$kcsan" ]; then
	for f in do_nanosleep hrtimer_wakeup; do
		echo "!$f" >"$kcsan" || say "kcsan: cannot leave out $f"
	done
fi

cd "$RIG_REPO" || halt
start=$(date +%s.%N)
# Kernel messages from now on go to the console as they happen.
echo 7 >/proc/sys/kernel/printk
# The guest-side timeout ends the script a little before the host kills the
# guest, so that its status and dmesg are still saved. The output goes to a
# file (a pipe could be held open by a left-over background process) and is
# mirrored to the console.
timeout -k 5 "$RIG_SCRIPT_TIMEOUT" bash "$RIG_SCRIPT" "${RIG_SCRIPT_ARGS[@]}" \
	</dev/null >"$out/script.log" 2>&1 &
spid=$!
tail -n +1 -s 0.3 --pid="$spid" -f "$out/script.log" >/dev/console 2>&1 &
tpid=$!
wait "$spid"
rc=$?
wait "$tpid"
# Whatever the script left running goes now (PID 1 is spared by kill -1).
kill -TERM -1 2>/dev/null
sleep 0.2
kill -KILL -1 2>/dev/null
end=$(date +%s.%N)
echo "$start $end" >"$out/script.time"
# bounded SECS CMD...: CMD, given SECS seconds to end; a command stuck in
# the kernel (which no signal ends) is left behind with its blocked tasks
# in the kernel log and status 124, so that the guest still reports.
bounded() {
	local secs=$1 pid i
	shift
	"$@" &
	pid=$!
	for ((i = 0; i < secs * 5; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		sleep 0.2
	done
	say "teardown: \"$*\" still running after $secs s; blocked tasks in dmesg"
	echo w >/proc/sysrq-trigger
	return 124
}
# Leaks: every RDMA link deleted and the RDMA device drivers unloaded, so
# that everything they allocated must have been freed; then two scans (an
# object is reported once it stayed unreferenced past kmemleak's minimum
# age of 5 s). The rig fails the run on any object in kmemleak.txt, on a
# link delete or rmmod that failed (teardown.txt: objects a driver still
# holds are invisible to the scan) and, on a kernel with KMEMLEAK, when
# kmemleak.state does not say "scanned".
teardown_failed() {
	say "teardown: $*"
	echo "$*" >>"$out/teardown.txt"
}
if [ -w "$kmemleak" ]; then
	for l in $(rdma link show 2>/dev/null | sed -n 's/^link \([^/]*\)\/.*/\1/p' | sort -u); do
		bounded 120 rdma link delete "$l" >/dev/null 2>&1 ||
			teardown_failed "rdma link delete $l failed (status $?)"
	done
	for m in sroce rdma_rxe; do
		[ -d "/sys/module/$m" ] || continue
		bounded 120 rmmod "$m" || teardown_failed "rmmod $m failed (status $?)"
	done
	# The second scan reports what was unreferenced in both and is at
	# least 5 s old when it starts. The first scan takes longer than that
	# on the debug kernel (11 s), so the wait between them is only what
	# is left of 7 s (whole seconds).
	t0=$EPOCHSECONDS
	if echo scan >"$kmemleak" && sleep "$((t0 + 7 > EPOCHSECONDS ? t0 + 7 - EPOCHSECONDS : 0))" &&
		echo scan >"$kmemleak" && cat "$kmemleak" >"$out/kmemleak.txt"; then
		echo scanned >"$out/kmemleak.state"
	else
		echo "kmemleak scan failed" >"$out/kmemleak.txt"
		echo "scan failed" >"$out/kmemleak.state"
	fi
fi
dmesg >"$out/dmesg.txt" 2>&1
echo "$rc" >"$out/exit"
say "script exited $rc"
halt
