#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Block I/O under load and under teardown, for the guest tests of the
# kernel's storage ULPs (NVMe-oF through lib/nvmet.sh, SRP, iSER): fio on a
# block device in the foreground or in the background with a time limit
# (its report in $RIG_TEST_OUT/NAME.fio, its summary lines logged), a
# bounded wait for a background fio that a teardown must end, and the
# teardowns that are the same for every ULP. Sourced after lib/guest.sh.

# Every block written carries its crc32c and is read back and compared; a
# mismatch ends fio with an error.
# shellcheck disable=SC2034 # used by the tests
BLK_VERIFY=(--verify=crc32c --verify_fatal=1 --verify_state_save=0)

# blk_fio NAME LIMIT DEV ARGS...: fio on DEV (O_DIRECT, libaio, ARGS give
# the jobs' shape), killed after LIMIT seconds. Returns fio's status.
blk_fio() {
	local name=$1 lim=$2 dev=$3 rc=0
	shift 3
	rig_run "$lim" fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--group_reporting --output="$RIG_TEST_OUT/$name.fio" "$@" || rc=$?
	blk_fio_summary "$name"
	return "$rc"
}

# blk_fio_bg NAME SECONDS DEV ARGS...: the same in the background for
# SECONDS of 4 KiB I/O (time-based); pid in BLK_FIO_PID. Returns once the
# I/O flows: 256 KiB more block I/O submitted on this guest than at the
# start, more than the teardown tests' jobs can have in flight at once (two
# jobs at depth 16: 128 KiB; the guest's root is 9p: fio's is the only
# block I/O), so some of it has completed. Fails when fio ends first or no
# I/O flows within 20 s. (It waited for 1 MiB: on the debug kernel, where
# this I/O moves at 100-300 KiB/s, the 5 s of the rmmod phases' load
# sometimes ended first, and iser_teardown failed with "fio rmmod ended at
# once".) Its status and summary
# come from blk_fio_ends (or the caller's own watch, then
# blk_fio_summary).
blk_fio_bg() {
	local name=$1 secs=$2 dev=$3 base end
	shift 3
	base=$(blk_io_kib)
	rig_bg "$name" $((secs + 60)) fio --name="$name" --filename="$dev" --direct=1 \
		--ioengine=libaio --group_reporting --bs=4k --time_based --runtime="$secs" \
		--output="$RIG_TEST_OUT/$name.fio" "$@"
	BLK_FIO_PID=$RIG_BG_PID
	BLK_FIO_NAME=$name
	end=$((EPOCHSECONDS + $(rig_limit 20)))
	while [ $(($(blk_io_kib) - base)) -lt 256 ]; do
		kill -0 "$BLK_FIO_PID" 2>/dev/null ||
			rig_fail "fio $name ended at once ($(tail -n 3 "$RIG_TEST_OUT/$name.log"))"
		[ "$EPOCHSECONDS" -ge "$end" ] && rig_fail "fio $name: no I/O within $(rig_limit 20) s"
		rig_sleep 0.2
	done
}

# blk_io_kib: the KiB of block I/O submitted on this guest since it booted
# (pgpgin and pgpgout).
blk_io_kib() {
	local k v n=0
	while read -r k v; do
		case "$k" in pgpgin | pgpgout) n=$((n + v)) ;; esac
	done </proc/vmstat
	echo "$n"
}

# blk_fio_ends PID SECONDS WHAT [FILE]: after WHAT (a disconnect, a
# teardown) the background fio must end within SECONDS, with or without
# errors: fails when it still runs. Its status in BLK_FIO_RC, the seconds
# it took in BLK_FIO_SECS. With FILE (a session's or a remote port's state
# in sysfs), the states read from it every 0.2 s until then, in BLK_STATES
# (" running blocked running "; "gone" while there is no FILE).
blk_fio_ends() {
	local t0=$EPOCHSECONDS lim st last=""
	lim=$(rig_limit "$2")
	BLK_STATES=" "
	while :; do
		if [ -n "${4:-}" ]; then
			st=gone
			read -r st 2>/dev/null <"$4"
			[ "$st" = "$last" ] || BLK_STATES+="$st "
			last=$st
		fi
		kill -0 "$1" 2>/dev/null && [ $((EPOCHSECONDS - t0)) -lt "$lim" ] || break
		rig_sleep 0.2
	done
	kill -0 "$1" 2>/dev/null && rig_fail "fio still runs ${lim} s after $3"
	BLK_FIO_RC=0
	rig_bg_wait "$1" || BLK_FIO_RC=$?
	BLK_FIO_SECS=$((EPOCHSECONDS - t0))
	blk_fio_summary "$BLK_FIO_NAME"
	rig_log "fio ended $BLK_FIO_SECS s after $3, status $BLK_FIO_RC${4:+; states seen:$BLK_STATES}"
}

# blk_fio_summary NAME: the lines of NAME's report a reader wants.
blk_fio_summary() {
	grep -E '^ +(read|write): IOPS=|^ +(READ|WRITE): bw=|err= *[1-9]|verify' \
		"$RIG_TEST_OUT/$1.fio" 2>/dev/null | sed 's/^ */  /' |
		while read -r l; do rig_log "fio $1: $l"; done
}

# blk_fio_error NAME: the first error in NAME's report ("" if none), e.g.
# "Input/output error (5)".
blk_fio_error() {
	sed -n 's/.* err= *\([0-9]*\) .*error=\([^)]*\)).*/\2 (\1)/p' "$RIG_TEST_OUT/$1.fio" 2>/dev/null |
		head -n 1
}

# blk_fio_slowest NAME: the slowest bucket of NAME's latency histogram
# (every I/O, the verify reads too), e.g. ">=2000 ms (3.44%)" or "<=250 ms
# (9.96%)".
blk_fio_slowest() {
	awk '/^ +lat \((usec|msec)\) +:/ {
		ms = ($0 ~ /msec/)
		for (i = 1; i <= NF; i++) {
			if ($i !~ /=[0-9.]+%,?$/) continue
			k = $i; sub(/=[0-9.]+%,?$/, "", k); p = $i; sub(/.*=/, "", p); sub(/,$/, "", p)
			v = k; sub(/>=/, "", v); v = ms ? v + 0 : v / 1000
			if (k ~ />=/) v += 0.5
			if (v > max) { max = v; lab = (k ~ />=/ ? k : "<=" k) (ms ? " ms" : " us") " (" p ")" }
		}
	} END { print lab }' "$RIG_TEST_OUT/$1.fio" 2>/dev/null
}

# blk_iface_bounce SECONDS: this guest's netdev down for SECONDS, then up.
# The rig's static IPv6 address (and its GID) stays, for the tests that
# follow.
blk_iface_bounce() {
	local keep
	keep=$(sysctl -n "net.ipv6.conf.$RIG_IFACE.keep_addr_on_down")
	sysctl -q -w "net.ipv6.conf.$RIG_IFACE.keep_addr_on_down=1"
	ip link set "$RIG_IFACE" down || rig_fail "ip link set $RIG_IFACE down failed"
	rig_sleep "$1"
	ip link set "$RIG_IFACE" up || rig_fail "ip link set $RIG_IFACE up failed"
	sysctl -q -w "net.ipv6.conf.$RIG_IFACE.keep_addr_on_down=$keep"
	rig_log "$RIG_IFACE down for $1 s under I/O, up again"
}

# blk_state_again WHAT FILE WANT SECONDS: after WHAT, the state in FILE (a
# session's, a remote port's) must be WANT again within SECONDS; the
# seconds it took in BLK_STATE_SECS.
blk_state_again() {
	local t0=$EPOCHSECONDS end st
	end=$((t0 + $(rig_limit "$4")))
	while :; do
		st=gone
		read -r st 2>/dev/null <"$2"
		[ "$st" = "$3" ] && break
		[ "$EPOCHSECONDS" -ge "$end" ] && rig_fail "$1: $2 is $st, not $3 after $4 s"
		rig_sleep 0.2
	done
	BLK_STATE_SECS=$((EPOCHSECONDS - t0))
}

# blk_device_back: the RDMA device of this guest again, after a teardown.
blk_device_back() {
	rig_setup_dev
	rig_log "$RIG_DEV is back: $(rdma link show "$RIG_DEV/1" 2>&1 | head -n 1)"
}

# blk_restore: after a failure in the middle of a teardown (from an EXIT
# trap), this guest's netdev up and its RDMA device there again, for the
# tests that follow.
blk_restore() {
	ip link set "$RIG_IFACE" up
	[ -e "/sys/class/infiniband/$RIG_DEV" ] || (rig_setup_dev)
	return 0
}

# --- the teardown tests' I/O ---------------------------------------------

# blk_load_bg NAME SECONDS DEV [verify]: the load a teardown meets, in the
# background (blk_fio_bg) for SECONDS: two jobs of random 4 KiB reads and
# writes at depth 16, each in its own 16 MiB region of DEV. With "verify"
# (for an outage the I/O may ride out) random writes, every block read back
# and compared as it goes (verify_backlog). Not for a disk that goes away:
# once it is deleted its capacity is 0, and a read at an offset past that
# returns 0 bytes with no error, which fio takes as done and verifies its
# buffer's old contents ("bad header").
blk_load_bg() {
	local how=(--rw=randrw)
	BLK_LOAD_VERIFY=${4:-}
	[ "$BLK_LOAD_VERIFY" = verify ] && how=(--rw=randwrite --verify_backlog=256 "${BLK_VERIFY[@]}")
	blk_fio_bg "$1" "$2" "$3" --iodepth=16 --numjobs=2 --size=16M --offset_increment=16M \
		"${how[@]}"
}

# blk_verified NAME DEV: a verified pass on DEV: two jobs of random 4 KiB
# writes at depth 16 over 1 MiB each, all read back and compared; fails
# the test on an error. With SROCE_SHORT=1 (the debug kernel's runs, where
# this I/O moves at 100-300 KiB/s and a pass took 15-25 s) 256 KiB each:
# still 64 blocks a job, written, read back and compared after the
# teardown before it.
blk_verified() {
	local kib=1024
	[ "${SROCE_SHORT:-0}" = 1 ] && kib=256
	blk_fio "$1" 60 "$2" --iodepth=16 --numjobs=2 --size="${kib}k" --offset_increment=16M \
		--rw=randwrite --bs=4k "${BLK_VERIFY[@]}" ||
		rig_fail "$1: the verified fio pass on $2 failed (status $?)"
	rig_log "$1: $((2 * kib)) KiB of random writes on $2 read back, crc32c verified"
}

# blk_outcome WHAT TEXT: what WHAT did to the I/O, logged and kept for
# blk_outcomes.
BLK_OUTCOMES=()
blk_outcome() {
	BLK_OUTCOMES+=("$1: $2")
	rig_log "outcome of $1: $2"
}

# blk_fio_mismatch NAME: the first line of NAME's report that says a block
# read back was not what was written ("" if none): fio's verify messages
# ("verify: bad magic header", "crc32c: verify failed") and its error 84,
# EILSEQ, which a fatal verify failure ends the job with.
blk_fio_mismatch() {
	grep -m 1 -E 'verify: bad|verify failed|err= *84[^0-9]|Invalid or incomplete multibyte' \
		"$RIG_TEST_OUT/$1.fio" 2>/dev/null
}

# blk_fio_outcome WHAT [TEXT]: the outcome of the background fio after WHAT
# (from blk_fio_ends): the seconds it took to end, its error; TEXT added.
# An I/O error or an orderly end of the device is an outcome a teardown may
# have; a block that was read back wrong never is: the test fails.
blk_fio_outcome() {
	local err bad
	bad=$(blk_fio_mismatch "$BLK_FIO_NAME")
	[ -z "$bad" ] || rig_fail "$1: fio read back a block that differs from what it wrote: ${bad# *}"
	if [ "$BLK_FIO_RC" = 0 ]; then
		blk_outcome "$1" "fio rode it out: ended ${BLK_FIO_SECS} s after (its time), no error${BLK_LOAD_VERIFY:+, data verified}, slowest I/Os $(blk_fio_slowest "$BLK_FIO_NAME")${2:+; $2}"
	else
		err=$(blk_fio_error "$BLK_FIO_NAME")
		blk_outcome "$1" "fio ended with errors ${BLK_FIO_SECS} s after (status $BLK_FIO_RC${err:+, $err})${2:+; $2}"
	fi
}

# blk_outcomes: all the outcomes again, at the end of the test.
blk_outcomes() {
	local o
	for o in "${BLK_OUTCOMES[@]}"; do
		rig_log "outcome $o"
	done
}
