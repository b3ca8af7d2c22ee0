#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Verbs argument fuzzing ("sroce-verbs-check fuzz"): several fuzz processes
# (SROCE_FUZZ_PROCS, default 4) with different seeds run at once on sroce0
# for SROCE_FUZZ_SECONDS (default 20; longer, up to 80, until each has
# counted 64 iterations): random create/modify/destroy of PDs,
# MRs, CQs, QPs, SRQs, AHs and windows with partly invalid attributes,
# valid and invalid posts, polls. Each process is SIGKILLed at a random
# point (or ends by itself and must exit 0, having destroyed what it
# holds) and replaced by one with a new seed. Afterwards the device's
# object counts ("rdma resource show": pd, mr, cq, qp, ...) are back at
# their baseline, no slab cache grew by more than 1000 objects (but the
# caches of address spaces: sroce_ctrl_lib.sh, ctrl_slab_grown), vmalloc
# use is back within 4 MiB, the module refcount is unchanged, and an
# ibv_rc_pingpong over the loopback path completes (exit status, byte
# count, -c's first byte per page). The kernel
# log must stay clean (the runner's check). Prints the iterations run and
# the processes killed.
# timeout: 480
# place: debug-1@2
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
rig_require_cmd ibv_rc_pingpong
dev=$CTRL_DEV
secs=${SROCE_FUZZ_SECONDS:-20}
procs=${SROCE_FUZZ_PROCS:-4}
slab_max=${SROCE_CTRL_SLAB_MAX:-1000}
# Iterations each fuzz slot must count (a killed process's count is its
# last "progress" line, every 64).
min_iters=${SROCE_FUZZ_MIN_ITERS:-64}
dir=$RIG_TEST_OUT

base=$(ctrl_counts "$dev")
[ -n "$base" ] || rig_fail "rdma resource show has no line for $dev"
rig_log "baseline: $base"
# A short run first warms the caches (slab pages, xarray nodes, vmap areas).
rig_run 30 "$CTRL_VC" fuzz "$dev" --seed 1 --seconds 2 >"$dir/warmup.log" 2>&1 ||
	rig_fail "the warm-up fuzz run exited $? ($(tail -n 1 "$dir/warmup.log"))"
vm0=$(ctrl_vmalloc_kb)
ref0=$(cat /sys/module/sroce/refcnt)
ctrl_slab_snapshot "$dir/slab.before"

# fuzz_slot N END LAST: fuzz processes one after the other until END (epoch
# seconds), and on until LAST while the slot has run fewer than min_iters
# iterations; each line of $dir/slot-N.txt is "seed killed|exit:RC
# iterations".
fuzz_slot() {
	local slot=$1 end=$2 last=$3 n=0 seed pid rc iters log counted=0 late=0
	# Past LAST, one more process (left to end by itself) all the same:
	# on a starved guest a single killed process took the slot past LAST.
	while [ "$EPOCHSECONDS" -lt "$end" ] ||
		{ [ "$counted" -lt "$min_iters" ] &&
			{ [ "$EPOCHSECONDS" -lt "$last" ] || [ "$late" = 0 ]; }; }; do
		[ "$EPOCHSECONDS" -lt "$last" ] || late=1
		n=$((n + 1))
		seed=$((slot * 1000 + n + ${SROCE_FUZZ_SEED:-0}))
		log=$dir/fuzz-$slot-$n.log
		"$CTRL_VC" fuzz "$dev" --seed "$seed" --seconds $((1 + RANDOM % 6)) >"$log" 2>&1 &
		pid=$!
		if [ "$EPOCHSECONDS" -lt "$end" ]; then
			# Kill at 0.3 .. 7 s: most runs die mid-sequence, some finish.
			sleep "$((RANDOM % 7)).$((RANDOM % 10))"
			sleep 0.3
		else
			# Past END the slot still lacks iterations: this process
			# runs its seconds out and counts them (killed ones count
			# only whole 64s; on a slow guest, whose start takes
			# seconds, nearly none got that far: 10 killed, 54
			# iterations in 107 s on the debug kernel beside a busy
			# host). Bounded: killed after 60 s all the same.
			for _ in $(seq 1 600); do
				kill -0 "$pid" 2>/dev/null || break
				rig_sleep 0.1
			done
		fi
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			rc=killed
		else
			wait "$pid"
			rc=exit:$?
		fi
		iters=$(sed -n 's/^info: iterations //p' "$log")
		[ -n "$iters" ] || iters=$(sed -n 's/^progress //p' "$log" | tail -n 1)
		echo "$seed $rc ${iters:-0}" >>"$dir/slot-$slot.txt"
		counted=$((counted + ${iters:-0}))
	done
}

# A slow guest (the debug kernel on a loaded host) may start a process in
# more time than the kill leaves it: each slot goes on (up to three times
# the fuzzing time more, its processes no longer killed but left to end by
# themselves) until it has counted min_iters iterations, and the test
# fails when the slots counted fewer than that in all.
t0=$EPOCHSECONDS
end=$((t0 + secs))
pids=()
for slot in $(seq 1 "$procs"); do
	: >"$dir/slot-$slot.txt"
	fuzz_slot "$slot" "$end" $((end + 3 * secs)) &
	pids+=($!)
	CTRL_PIDS+=($!)
done
for pid in "${pids[@]}"; do
	wait "$pid"
done
cat "$dir"/slot-*.txt >"$dir/runs.txt"
runs=$(wc -l <"$dir/runs.txt")
kills=$(grep -c ' killed ' "$dir/runs.txt")
total=$(awk '{ s += $3 } END { print s + 0 }' "$dir/runs.txt")
rig_log "$runs fuzz processes, $kills SIGKILLed, $total iterations in $((EPOCHSECONDS - t0))s"
rig_metric verbs_fuzz_iterations "$total" iterations
rig_metric verbs_fuzz_kills "$kills" processes
bad=$(awk '$2 ~ /^exit:/ && $2 != "exit:0"' "$dir/runs.txt")
if [ -n "$bad" ]; then
	echo "$bad" | sed 's/^/    seed /'
	rig_log "rerun one with: sroce-verbs-check fuzz $dev --seed SEED --seconds 6 --verbose"
	rig_fail "fuzz processes that ended by themselves exited non-zero"
fi
[ "$total" -ge "$min_iters" ] ||
	rig_fail "the fuzz processes counted $total iterations, fewer than $min_iters (killed before they could run)"
# The tallies of the runs that finished: which results the verbs gave.
cat "$dir"/fuzz-*.log | awk '$1 == "tally" { n[$2 " " $3] += $4 } END { for (k in n) print k, n[k] }' |
	sort >"$dir/tally.txt"
rig_log "results of the runs that finished (verb result count), first 40 of $(wc -l <"$dir/tally.txt"):"
head -n 40 "$dir/tally.txt" | sed 's/^/    /'

# Uverbs destroys a killed process's objects when its file is released.
after=""
for _ in $(seq 1 100); do
	after=$(ctrl_counts "$dev")
	[ "$after" = "$base" ] && break
	rig_sleep 0.2
done
rig_log "after: $after"
[ "$after" = "$base" ] || rig_fail "object counts did not return to baseline: '$base' -> '$after'"
vm1=$(ctrl_vmalloc_kb)
ref1=$(cat /sys/module/sroce/refcnt)
ctrl_slab_snapshot "$dir/slab.after"
rig_log "VmallocUsed: $vm0 kB before, $vm1 kB after; module refcnt $ref0 -> $ref1"
if [ -s "$dir/slab.before" ]; then
	grew=$(ctrl_slab_grown "$dir/slab.before" "$dir/slab.after" "$slab_max")
	[ -z "$grew" ] || rig_fail "slab caches grew by more than $slab_max objects: $grew"
else
	rig_fail "/proc/slabinfo not readable: the slab comparison cannot run"
fi
[ $((vm1 - vm0)) -le 4096 ] || rig_fail "VmallocUsed grew by $((vm1 - vm0)) kB"
[ "$ref1" = "$ref0" ] || rig_fail "module refcount $ref0 -> $ref1"

# The device still works: a pingpong over the loopback path.
gid=$(rig_gid_index "$dev" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
args=(-d "$dev" -g "$gid" -c -s 4096 -n 50 -p 18531)
rig_bg pingpong-server 60 ibv_rc_pingpong "${args[@]}"
server=$RIG_BG_PID
rig_wait_listen 18531 30 || rig_fail "ibv_rc_pingpong server did not listen"
crc=0
rig_run 60 ibv_rc_pingpong "${args[@]}" 127.0.0.1 >"$dir/pingpong-client.log" 2>&1 || crc=$?
src=0
rig_bg_wait "$server" || src=$?
sed 's/^/    /' "$dir/pingpong-client.log"
[ "$crc" = 0 ] && [ "$src" = 0 ] || rig_fail "ibv_rc_pingpong after fuzzing: client $crc, server $src"
! grep -qi 'invalid data' "$dir/pingpong-client.log" "$dir/pingpong-server.log" ||
	rig_fail "ibv_rc_pingpong after fuzzing: the received buffer is wrong"
grep -q '^409600 bytes in' "$dir/pingpong-client.log" ||
	rig_fail "ibv_rc_pingpong after fuzzing: no \"409600 bytes in\" line"
