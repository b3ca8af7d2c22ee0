#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The mapped rings of CQs, SRQs and QPs are charged to the memory cgroup of
# their creator ("sroce-verbs-check memcg"): in a cgroup without a limit,
# CQs, SRQs, QPs with big RQs and QPs with big SQs holding 64 MiB of rings
# of each kind are all created and memory.current grows by at least that
# much; in a cgroup with memory.max 64 MiB creation fails with ENOMEM
# before the rings held pass 64 MiB, without the cgroup's OOM killer
# (memory.events oom_kill 0), and small rings still work. After each
# destroy, memory.current is back within 2 MiB of where it was. The guest
# mounts cgroup2 at /sys/fs/cgroup if nothing is mounted there.
# timeout: 300
# place: 6.12-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV
limit=$((${SROCE_MEMCG_LIMIT_MIB:-64} << 20))
cgroot=/sys/fs/cgroup
mounted=0
groups=()

memcg_restore() {
	local rc=$? g
	for g in "${groups[@]}"; do
		[ -d "$g" ] || continue
		# Nothing of ours is left in it; a stray process goes to the root.
		while read -r pid; do
			echo "$pid" >"$cgroot/cgroup.procs"
		done <"$g/cgroup.procs"
		rmdir "$g" || rig_log "cannot remove $g"
	done
	[ "$mounted" = 1 ] && umount "$cgroot"
	(exit "$rc")
	ctrl_restore
}
trap memcg_restore EXIT

if [ ! -e "$cgroot/cgroup.controllers" ]; then
	grep -q ' /sys/fs/cgroup ' /proc/mounts &&
		rig_skip "a cgroup v1 hierarchy is mounted at $cgroot"
	mount -t cgroup2 none "$cgroot" || rig_skip "cannot mount cgroup2 at $cgroot"
	mounted=1
fi
grep -qw memory "$cgroot/cgroup.controllers" || rig_skip "no memory controller in cgroup2"
echo +memory >"$cgroot/cgroup.subtree_control" ||
	rig_fail "cannot enable the memory controller in $cgroot/cgroup.subtree_control"

# mkgroup DIR MAX: a child cgroup with memory.max MAX (swap off in it).
mkgroup() {
	mkdir "$1" || rig_fail "mkdir $1"
	groups+=("$1")
	echo "$2" >"$1/memory.max" || rig_fail "cannot set $1/memory.max to $2"
	if [ -e "$1/memory.swap.max" ]; then
		echo 0 >"$1/memory.swap.max"
	fi
}

# vc_in NAME GROUP ARGS...: sroce-verbs-check ARGS in cgroup GROUP (the
# process moves itself there before exec), output as ctrl_vc.
vc_in() {
	local name=$1 g=$2 rc=0
	shift 2
	# shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
	rig_run 200 bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$g" \
		"$CTRL_VC" "$@" --cgroup "$g" >"$RIG_TEST_OUT/$name.log" 2>&1 || rc=$?
	grep -v '^PASS ' "$RIG_TEST_OUT/$name.log" | sed 's/^/    /'
	rig_log "sroce-verbs-check $* in ${g#"$cgroot"/}: exit $rc"
	return "$rc"
}

# group_report GROUP: memory.peak (if there) and memory.events in one line.
group_report() {
	local peak=""
	[ -r "$1/memory.peak" ] && peak="peak $(($(cat "$1/memory.peak") >> 20)) MiB, "
	rig_log "${1#"$cgroot"/}: ${peak}events: $(tr '\n' ' ' <"$1/memory.events")"
}

# event GROUP NAME: a counter of memory.events.
event() { awk -v n="$2" '$1 == n { print $2 }' "$1/memory.events"; }

free=$cgroot/sroce-ring-free
small=$cgroot/sroce-ring-small
mkgroup "$free" max
mkgroup "$small" "$limit"
rig_log "memory.max $limit in ${small#"$cgroot"/}, none in ${free#"$cgroot"/}"
base=$(ctrl_counts "$dev")

fails=()
vc_in memcg-free "$free" memcg "$dev" --expect-success-up-to "$limit" ||
	fails+=("no limit: exit $?")
group_report "$free"
vc_in memcg-small "$small" memcg "$dev" --expect-enomem-above "$limit" ||
	fails+=("memory.max $((limit >> 20)) MiB: exit $?")
group_report "$small"
kills=$(event "$small" oom_kill)
[ "${kills:-0}" = 0 ] || fails+=("the OOM killer ran $kills times in the limited cgroup")

after=$(ctrl_counts "$dev")
[ "$after" = "$base" ] || fails+=("object counts $after, want $base")
[ ${#fails[@]} = 0 ] || rig_fail "$(printf '%s; ' "${fails[@]}")"
