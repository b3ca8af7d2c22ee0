#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The benchmark's guest half (both roles), started by tools/bench/bench.sh
# through tools/vm/run.sh. Walks the plan of tools/bench/lib.sh in step with
# the peer: for each round and device pair, both guests switch to their
# device (sroce and rdma_rxe both own UDP port 4791, so the other one's link
# is deleted, and rdma_rxe unloaded for sroce, whose link add would
# otherwise find the port taken), then run every perftest cell; each round
# ends with the link itself (iperf3). Guest a is the perftest server, guest
# b the client.
#
# Each guest appends what it measured to $RIG_OUT/raw.tsv, one line per
# number: "ROUND PAIR TEST SIZE METRIC VALUE" (a failed cell: METRIC "fail",
# VALUE the reason with spaces as "~"). Guest b records the perftest and
# iperf3 results; both record the CPU cost of bandwidth cells, measured in
# the middle of the transfer: from the first burst of traffic on the link,
# for half the test's duration, the guest's busy CPU time (/proc/stat) and
# the bytes its interface sent and received.
#
# In profile mode (BENCH_MODE=profile) each guest also runs
# "perf record -a" (cpu-clock) around the one cell and writes the top
# symbols to $RIG_OUT/profile.txt, call chains to profile-callers.txt;
# with BENCH_TRACE=1 (bench.sh --timeline) it records ftrace events
# instead, to $RIG_OUT/trace.txt (tools/bench/timeline.sh reads them).
export RIG_TEST=bench
# shellcheck source=../../selftests/lib/guest.sh
. "$RIG_REPO/selftests/lib/guest.sh"
# shellcheck source=../../selftests/lib/perftest.sh
. "$RIG_REPO/selftests/lib/perftest.sh"
# shellcheck source=../../selftests/lib/nvmet.sh
. "$RIG_REPO/selftests/lib/nvmet.sh"
# shellcheck source=../../selftests/lib/iser.sh
. "$RIG_REPO/selftests/lib/iser.sh"
# shellcheck source=lib.sh
. "$RIG_REPO/tools/bench/lib.sh"

rig_require_peer
bench_plan_init || rig_fail "no plan for mode ${BENCH_MODE:-}"
raw=$RIG_OUT/raw.tsv
: >"$raw"
step=0
nsteps=$(bench_steps)
round=0
pair=none

# Progress for the host's progress line (guest a writes it).
progress() {
	rig_is_a || return 0
	echo "$step/$nsteps round $round/$BENCH_ROUNDS $pair: $*" >"$RIG_SHARED/progress.new"
	mv -f "$RIG_SHARED/progress.new" "$RIG_SHARED/progress"
}

record() {
	echo "$round $pair $1 $2 $3 $4" >>"$raw"
}

# record_fail TEST SIZE REASON...
record_fail() {
	local t=$1 s=$2 why
	shift 2
	why="$*"
	rig_log "FAILED $pair $t $s: $why"
	record "$t" "$s" fail "${why// /\~}"
}

# switch_to TYPE: make TYPE0 this guest's only RDMA device; sets DEV, GID.
switch_to() {
	local t=$1 other=rxe
	[ "$t" = rxe ] && other=sroce
	if [ -e "/sys/class/infiniband/${other}0" ]; then
		rdma link delete "${other}0" || rig_fail "rdma link delete ${other}0 failed"
	fi
	if [ "$t" = rxe ]; then
		[ -d /sys/module/rdma_rxe ] || modprobe rdma_rxe || rig_fail "modprobe rdma_rxe failed"
	else
		if [ -d /sys/module/rdma_rxe ]; then
			modprobe -r rdma_rxe || rig_fail "modprobe -r rdma_rxe failed"
		fi
		rig_load_module sroce
	fi
	rig_add_link "${t}0" "$t"
	DEV=${t}0
	GID=$(rig_gid_index "$DEV" "$RIG_IP4") || rig_fail "$DEV: no RoCEv2 GID for $RIG_IP4"
}

# snap: "BUSY SYS BYTES" now: CPU jiffies spent busy (user, nice, system,
# irq, softirq, steal) and in the kernel (system, irq, softirq), and the
# bytes the link interface sent plus received. Builtins only.
snap() {
	local _c us ni sy _id _io irq sirq st
	read -r _c us ni sy _id _io irq sirq st _ </proc/stat
	link_bytes
	echo "$((us + ni + sy + irq + sirq + st)) $((sy + irq + sirq)) $LINK_BYTES"
}

# link_bytes: LINK_BYTES = the bytes the link interface sent plus received.
link_bytes() {
	local tx rx
	read -r tx <"/sys/class/net/$RIG_IFACE/statistics/tx_bytes"
	read -r rx <"/sys/class/net/$RIG_IFACE/statistics/rx_bytes"
	LINK_BYTES=$((tx + rx))
}

# cpu_sample PID SECONDS: wait for the transfer of PID to start (32 KiB on
# the link within 0.1 s), then measure SECONDS of it. Sets CPU_SAMPLE to
# "BUSY SYS BYTES" (deltas) or "" when PID ended before the window did.
cpu_sample() {
	local pid=$1 w=$2 b0 b1 b2 s1 s2 end
	CPU_SAMPLE=""
	end=$((EPOCHSECONDS + 60))
	read -r _ _ b0 <<<"$(snap)"
	while :; do
		kill -0 "$pid" 2>/dev/null || return 0
		[ "$EPOCHSECONDS" -lt "$end" ] || return 0
		rig_sleep 0.1
		read -r _ _ b1 <<<"$(snap)"
		[ $((b1 - b0)) -gt 32768 ] && break
		b0=$b1
	done
	s1=$(snap)
	rig_sleep "$w"
	s2=$(snap)
	kill -0 "$pid" 2>/dev/null || return 0
	read -r b0 b1 b2 <<<"$s1"
	read -r s1 end w <<<"$s2"
	CPU_SAMPLE="$((s1 - b0)) $((end - b1)) $((w - b2))"
}

# record_cpu TEST SIZE: the last sample as raw counts (the host turns them
# into seconds per GB): busy jiffies (jb_ROLE), kernel jiffies (js_ROLE),
# interface bytes (by_ROLE).
record_cpu() {
	local busy sys bytes r=$RIG_ROLE
	[ -n "$CPU_SAMPLE" ] || return 0
	read -r busy sys bytes <<<"$CPU_SAMPLE"
	[ "$bytes" -gt 0 ] || return 0
	record "$1" "$2" "jb_$r" "$busy"
	record "$1" "$2" "js_$r" "$sys"
	record "$1" "$2" "by_$r" "$bytes"
}

# recov_snap: "RETRIES TIMEOUTS OOS BYTES" of this guest's device now:
# requests sent again, local ACK timeouts, out-of-sequence requests seen
# (and NAKed) as responder, and the link interface's bytes sent plus
# received. sroce: retransmits, ack_timeouts, seq_naks_sent. rdma_rxe has
# no timeout counter: completer_retry_err counts its retries (timeouts and
# sequence NAKs), so its timeouts are those less rcvd_seq_err;
# out_of_seq_request. Builtins only.
recov_snap() {
	local hw=/sys/class/infiniband/$DEV/ports/1/hw_counters r=0 t=0 o=0 n=0
	case "$DEV" in
	sroce*)
		read -r r <"$hw/retransmits"
		read -r t <"$hw/ack_timeouts"
		read -r o <"$hw/seq_naks_sent"
		;;
	rxe*)
		read -r r <"$hw/completer_retry_err"
		read -r n <"$hw/rcvd_seq_err"
		read -r o <"$hw/out_of_seq_request"
		t=$((r - n))
		;;
	esac
	link_bytes
	echo "${r:-0} ${t:-0} ${o:-0} $LINK_BYTES"
}

# record_recov TEST SIZE BEFORE: the counters' deltas over the cell since
# BEFORE (a recov_snap line) as raw counts; the host turns them into
# events per GB moved (rv_ROLE, tm_ROLE, oo_ROLE, cb_ROLE).
record_recov() {
	local r0 t0 o0 b0 r1 t1 o1 b1 r=$RIG_ROLE
	read -r r0 t0 o0 b0 <<<"$3"
	read -r r1 t1 o1 b1 <<<"$(recov_snap)"
	record "$1" "$2" "rv_$r" $((r1 - r0))
	record "$1" "$2" "tm_$r" $((t1 - t0))
	record "$1" "$2" "oo_$r" $((o1 - o0))
	record "$1" "$2" "cb_$r" $((b1 - b0))
}

# half SECONDS: SECONDS / 2 as a decimal (builtins only: every exec costs
# a tenth of a second or more under TCG).
half() {
	if [ $(($1 % 2)) = 0 ]; then echo $(($1 / 2)); else echo "$(($1 / 2)).5"; fi
}

# The timeline's events: the NIC's receive interrupts, packets into and out
# of the stack, the program's posts (the uverbs doorbell write(), UDP's
# sendmmsg()) and receives, and sroce's own tracepoints (absent on rxe).
TRACE_EVENTS="irq:irq_handler_entry net:netif_receive_skb net:net_dev_xmit
syscalls:sys_enter_write syscalls:sys_enter_sendmmsg syscalls:sys_exit_recvfrom
sroce:sroce_recv sroce:sroce_cqe sroce:sroce_doorbell sroce:sroce_xmit"
TRACEFS=/sys/kernel/tracing

trace_start() {
	local e
	[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS" || rig_fail "no tracefs"
	echo 0 >"$TRACEFS/tracing_on"
	: >"$TRACEFS/trace"
	echo 16384 >"$TRACEFS/buffer_size_kb"
	: >"$TRACEFS/set_event"
	for e in $TRACE_EVENTS; do
		echo "$e" >>"$TRACEFS/set_event" 2>/dev/null ||
			rig_log "timeline: no event $e here"
	done
	# Only what a cycle needs: the receive queue's interrupts, receives
	# that returned data (a busy-polling program's empty ones are most).
	echo 'name ~ "*input*"' >"$TRACEFS/events/irq/irq_handler_entry/filter"
	echo 'ret > 0' >"$TRACEFS/events/syscalls/sys_exit_recvfrom/filter"
	echo 1 >"$TRACEFS/tracing_on"
}

trace_stop() {
	echo 0 >"$TRACEFS/tracing_on"
	cat "$TRACEFS/trace" >"$RIG_OUT/trace.txt"
	: >"$TRACEFS/set_event"
	echo 0 >"$TRACEFS/events/irq/irq_handler_entry/filter"
	echo 0 >"$TRACEFS/events/syscalls/sys_exit_recvfrom/filter"
}

profile_start() {
	[ "$BENCH_MODE" = profile ] || return 0
	if [ "${BENCH_TRACE:-0}" = 1 ]; then
		trace_start
		return 0
	fi
	# perf takes many seconds to start under TCG: it starts with its events
	# disabled, and the test begins only once it acknowledged "enable".
	local ctl ack=""
	rm -f /tmp/perf.ctl /tmp/perf.ack
	mkfifo /tmp/perf.ctl /tmp/perf.ack || rig_fail "mkfifo failed"
	perf record -e cpu-clock -F 999 -a -g -D -1 \
		--control=fifo:/tmp/perf.ctl,/tmp/perf.ack \
		-o /tmp/perf.data >"$RIG_OUT/perf-record.log" 2>&1 &
	PROF_PID=$!
	exec {ctl}>/tmp/perf.ctl
	echo enable >&"$ctl"
	read -r -t 120 ack </tmp/perf.ack
	exec {ctl}>&-
	[ "$ack" = ack ] || rig_fail "perf record did not start (ack: '$ack')"
}

profile_stop() {
	[ "$BENCH_MODE" = profile ] || return 0
	if [ "${BENCH_TRACE:-0}" = 1 ]; then
		trace_stop
		return 0
	fi
	kill -INT "$PROF_PID" 2>/dev/null
	wait "$PROF_PID"
	{
		echo "== guest $RIG_ROLE ($DEV), $*: top symbols, all CPU time of the guest"
		perf report -i /tmp/perf.data --stdio --no-children -g none \
			--sort sym --percent-limit 0.3 2>/dev/null | grep -v '^#' | grep .
	} >"$RIG_OUT/profile.txt"
	# Who calls the costly symbols: call chains of those over 2%.
	perf report -i /tmp/perf.data --stdio --no-children --sort sym \
		-g caller,0.5,callee,function,percent --percent-limit 2 \
		>"$RIG_OUT/profile-callers.txt" 2>/dev/null
	cp /tmp/perf.data "$RIG_OUT/perf.data" 2>/dev/null
}

# cell_hook PHASE [PID]: perf_pair's PERF_HOOK for a perftest cell: the
# profile around each attempt, the CPU sample in the middle of a bandwidth
# transfer.
cell_hook() {
	case "$1" in
	start)
		CPU_SAMPLE=""
		profile_start
		;;
	run)
		if [ "$cell_bw" = 1 ]; then cpu_sample "$2" "$(half "$BENCH_DUR")"; fi
		;;
	end) profile_stop "$cell_what" ;;
	esac
}

# perftest_cell TEST SIZE TOOL ARGS...: one perftest run between the guests
# (perf_pair of selftests/lib/perftest.sh: guest b asks for one more try
# when perftest could not calibrate its clock).
perftest_cell() {
	local t=$1 size=$2 tool=$3 lim rc=0 row v rate args more recov
	shift 3
	cell_bw=0
	case "$t" in *_bw*) cell_bw=1 ;; esac
	args=("$@" -d "$DEV" -F)
	# rdma_cm picks the GID from the address it resolves.
	[[ " $* " == *" -R "* ]] || args+=(-x "$GID")
	if [ "$cell_bw" = 1 ]; then
		more=(-D "$BENCH_DUR" -f 0)
		lim=$((BENCH_DUR + 60))
	else
		more=(-n "$BENCH_LAT_ITERS")
		lim=120
	fi
	PERF_PORT=$((18515 + step % 50))
	cell_what="$tool ${args[*]} -p $PERF_PORT ${more[*]}"
	recov=$(recov_snap)
	perf_pair "r$round.$pair.$t.$size" "$lim" "$tool" "${args[@]}" "${more[@]}" || rc=$?
	# sroce's counters so far (retransmits, timeouts, drops) explain a bad cell.
	case "$DEV" in sroce*) rdma statistic show link "$DEV/1" >>"$PERF_LOG" 2>&1 ;; esac
	if [ "$rc" != 0 ]; then
		rig_is_b && record_fail "$t" "$size" "$tool exited $rc"
		return 0
	fi
	record_cpu "$t" "$size"
	record_recov "$t" "$size" "$recov"
	rig_is_b || return 0
	if [ "$cell_bw" = 1 ]; then
		row=$(perf_bw_row "$PERF_LOG" "$size") || {
			record_fail "$t" "$size" "no result row"
			return 0
		}
		read -r _ v rate <<<"$row"
		is_positive "$v" || {
			record_fail "$t" "$size" "bandwidth $v"
			return 0
		}
		record "$t" "$size" bw_MiBps "$v"
		record "$t" "$size" rate_Mpps "$rate"
	else
		# MIN MAX TYPICAL AVG STDEV P99 P99.9
		row=$(perf_row "$PERF_LOG" "$size")
		# shellcheck disable=SC2086
		set -- $row
		if ! is_positive "${3:-}" || ! is_positive "${6:-}"; then
			record_fail "$t" "$size" "no latency (row: ${row:-none})"
			return 0
		fi
		record "$t" "$size" typical_us "$3"
		record "$t" "$size" p99_us "$6"
	fi
}

# serve LOG SECONDS CMD...: guest a's side of a two-guest tool: runs CMD
# (output to LOG, at most SECONDS), tells guest b once it printed
# "listening" (or died), waits for it; returns its exit status.
serve() {
	local log=$1 t=$2 pid i rc=0
	shift 2
	timeout -k 3 "$t" "$@" >"$log" 2>&1 &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		grep -q listening "$log" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		rig_sleep 0.1
	done
	rig_signal "listen-$step"
	wait "$pid" || rc=$?
	return "$rc"
}

# manyqp_cell TEST QPS SIZE: SIZE-byte WRITEs over QPS RC QPs
# (sroce-manyqp, tools/bench/manyqp.cpp), 128 outstanding in all; also the
# QPs' setup time and memory per QP on both guests.
manyqp_cell() {
	local t=$1 qps=$2 size=$3 port=$((19600 + step % 50)) rc=0 line w recov
	local log=$RIG_OUT/logs/r$round.$pair.$t.$qps.log
	CPU_SAMPLE=""
	recov=$(recov_snap)
	if rig_is_a; then
		serve "$log" $((BENCH_DUR + 300)) "$MANYQP" server "$DEV" "$GID" "$port" &&
			record_recov "$t" "$qps" "$recov"
		return 0
	fi
	if rig_wait "listen-$step" 60 >/dev/null; then
		timeout -k 3 $((BENCH_DUR + 300)) "$MANYQP" client "$DEV" "$GID" "$RIG_PEER_IP4" \
			"$port" "$qps" "$size" "$BENCH_DUR" >"$log" 2>&1 || rc=$?
	else
		rc=1
		echo "the server never started" >"$log"
	fi
	if [ "$rc" != 0 ]; then
		record_fail "$t" "$qps" "sroce-manyqp exited $rc"
		return 0
	fi
	record_recov "$t" "$qps" "$recov"
	line=$(grep -m 1 '^manyqp ' "$log") || {
		record_fail "$t" "$qps" "no result line"
		return 0
	}
	# manyqp qps=N ... bw_MiBps=X setup_us=U mem_kib=M peer_setup_us=U peer_mem_kib=M
	for w in $line; do
		case "$w" in
		*mem_kib=-1) ;; # not measured below 64 QPs
		bw_MiBps=* | setup_us=* | mem_kib=* | peer_setup_us=* | peer_mem_kib=*)
			record "$t" "$qps" "${w%%=*}" "${w#*=}"
			;;
		esac
	done
}

# reg_cell TEST MIB: ibv_reg_mr and ibv_dereg_mr of MIB MiB on guest b.
reg_cell() {
	local t=$1 mib=$2 rc=0 line w log
	log=$RIG_OUT/logs/r$round.$pair.$t.$mib.log
	CPU_SAMPLE=""
	rig_is_b || return 0
	timeout -k 3 300 "$MANYQP" reg "$DEV" "$mib" >"$log" 2>&1 || rc=$?
	line=$(grep -m 1 '^manyqp_reg ' "$log") || {
		record_fail "$t" "$mib" "sroce-manyqp reg exited $rc"
		return 0
	}
	for w in $line; do
		case "$w" in
		reg_ms=* | dereg_ms=* | kib_per_page=*) record "$t" "$mib" "${w%%=*}" "${w#*=}" ;;
		esac
	done
}

# cmrate_cell TEST N PARALLEL: N rdma_cm connections from guest b to guest
# a, PARALLEL at a time (sroce-cmrate, tools/bench/cmrate.cpp).
cmrate_cell() {
	local t=$1 n=$2 par=$3 port=$((19700 + step % 50)) rc=0 line w
	local log=$RIG_OUT/logs/r$round.$pair.$t.$n.log
	CPU_SAMPLE=""
	if rig_is_a; then
		serve "$log" 300 "$CMRATE" server "$RIG_IP4" "$port" "$n" || true
		return 0
	fi
	if rig_wait "listen-$step" 60 >/dev/null; then
		timeout -k 3 300 "$CMRATE" client "$RIG_PEER_IP4" "$port" "$n" "$par" >"$log" 2>&1 || rc=$?
	else
		rc=1
		echo "the server never started" >"$log"
	fi
	line=$(grep -m 1 '^cmrate ' "$log") && [ "$rc" = 0 ] || {
		record_fail "$t" "$n" "sroce-cmrate exited $rc"
		return 0
	}
	for w in $line; do
		case "$w" in conn_per_s=*) record "$t" "$n" conn_per_s "${w#*=}" ;; esac
	done
}

# cell_fio TEST BS RW DEV LOG SECONDS: fio on the block device DEV (RW:
# randread or read, BS-byte blocks, four jobs at queue depth 32, direct I/O)
# for SECONDS, its terse line appended to LOG; returns fio's status.
cell_fio() {
	timeout -k 3 $(($6 + 60)) fio --name="$1" --filename="$4" --direct=1 --ioengine=libaio \
		--rw="$3" --bs="$2" --iodepth=32 --numjobs=4 --time_based --runtime="$6" \
		--group_reporting --output-format=terse --terse-version=3 >>"$5" 2>&1
}

# cell_fio_record TEST BS LOG RC: IOPS and bandwidth from fio's line in
# LOG (RC: fio's status).
cell_fio_record() {
	local line f
	# Terse version 3: field 7 read bandwidth (KiB/s), field 8 read IOPS.
	line=$(grep -m 1 '^3;' "$3") && [ "$4" = 0 ] || {
		record_fail "$1" "$2" "fio exited $4"
		return 0
	}
	IFS=';' read -ra f <<<"$line"
	is_positive "${f[7]:-}" || {
		record_fail "$1" "$2" "no IOPS in fio's line"
		return 0
	}
	record "$1" "$2" iops "${f[7]}"
	record "$1" "$2" bw_MiBps "$(awk -v k="${f[6]}" 'BEGIN { printf "%.4g", k / 1024 }')"
}

# block_cell_begin TEST BS: a block cell's common state: LOG (its log
# file), DUR (fio's seconds, at least 3) and RECOV (the counters before it).
block_cell_begin() {
	LOG=$RIG_OUT/logs/r$round.$pair.$1.$2.log
	DUR=$((BENCH_DUR < 3 ? 3 : BENCH_DUR))
	CPU_SAMPLE=""
	RECOV=$(recov_snap)
}

# nvmeof_cell TEST BS RW: NVMe over Fabrics on this pair's devices: guest
# a exports a 128 MiB RAM disk (selftests/lib/nvmet.sh), guest b connects
# and runs fio (cell_fio) for the cell's duration; IOPS and bandwidth. The
# setup runs in subshells: a failure there fails the cell, not the run.
# ("io-done", not "done": step_done's marker of the same step must not be
# read before the peer wrote its link state in it.)
nvmeof_cell() {
	local t=$1 bs=$2 rw=$3 rc=0 line recov dur log
	block_cell_begin "$t" "$bs"
	log=$LOG dur=$DUR recov=$RECOV
	if rig_is_a; then
		if (nvmet_target_up 128) >"$log" 2>&1; then
			rig_signal "listen-$step"
		else
			rig_signal "listen-$step" fail
		fi
		rig_wait "io-done-$step" $((dur + 120)) >/dev/null || true
		(nvmet_target_down) >>"$log" 2>&1 || rig_log "$t: the target did not go down cleanly ($log)"
		record_recov "$t" "$bs" "$recov"
		return 0
	fi
	line=$(rig_wait "listen-$step" 60) || line=timeout
	if [ -n "$line" ]; then
		record_fail "$t" "$bs" "the NVMe-oF target did not come up"
		rig_signal "io-done-$step"
		return 0
	fi
	if ! (nvme_host_connect && echo "$NVME_CTRL $NVME_DEV" >"$log.dev") >"$log" 2>&1; then
		record_fail "$t" "$bs" "nvme-rdma could not connect"
		rig_signal "io-done-$step"
		return 0
	fi
	read -r NVME_CTRL NVME_DEV <"$log.dev"
	cell_fio "$t" "$bs" "$rw" "$NVME_DEV" "$log" "$dur" || rc=$?
	echo 1 >"/sys/class/nvme/$NVME_CTRL/delete_controller" 2>/dev/null
	rig_signal "io-done-$step"
	record_recov "$t" "$bs" "$recov"
	cell_fio_record "$t" "$bs" "$log" "$rc"
}

# iser_cell TEST BS RW: fio (cell_fio) over iSER on this pair's devices,
# set up by selftests/lib/iser.sh: guest a's LIO target exports a 128 MiB
# RAM disk, guest b logs in with open-iscsi through an iSER iface; IOPS
# and bandwidth, as nvmeof_cell. Both ends allow 128 commands in flight
# (the ACL's CmdSN window, the session's queue depth), as fio's four jobs
# at depth 32 and nvme-rdma's queue of 128 do. Each half runs in a
# subshell (the library fails with rig_fail); the cell's log gives each
# phase's time.
iser_cell() {
	local t=$1 bs=$2 rw=$3 rc=0 recov t0 dur log
	block_cell_begin "$t" "$bs"
	log=$LOG dur=$DUR recov=$RECOV
	if rig_is_a; then
		t0=${EPOCHREALTIME/./}
		if (iser_target_up 128 && echo 128 >"$ISER_TPG/acls/$ISER_IQN_I/cmdsn_depth" &&
			echo "== CmdSN depth $(<"$ISER_TPG/acls/$ISER_IQN_I/cmdsn_depth")") >"$log" 2>&1; then
			rig_signal "listen-$step"
		else
			rig_signal "listen-$step" fail
		fi
		echo "== target up in $(ms_since "$t0") ms" >>"$log"
		rig_wait "io-done-$step" $((dur + 180)) >/dev/null || true
		t0=${EPOCHREALTIME/./}
		(iser_target_down && rig_unload brd) >>"$log" 2>&1 ||
			rig_log "$t: the target did not go down cleanly ($log)"
		echo "== target down in $(ms_since "$t0") ms" >>"$log"
		record_recov "$t" "$bs" "$recov"
		return 0
	fi
	rm -f "$log".*
	# Appending: fio appends its own lines to the same log.
	: >"$log"
	(iser_host_cell "$t" "$bs" "$rw" "$log" "$dur") >>"$log" 2>&1
	rig_signal "io-done-$step"
	record_recov "$t" "$bs" "$recov"
	if [ -s "$log.fio" ]; then
		read -r rc <"$log.fio"
		cell_fio_record "$t" "$bs" "$log" "$rc"
	else
		record_fail "$t" "$bs" "iSER: $(cat "$log.stage" 2>/dev/null)"
	fi
}

# iser_host_cell TEST BS RW LOG SECONDS: guest b's half of iser_cell, in a
# subshell: open-iscsi up, login once the target is, SECONDS of fio, logout;
# everything undone when it ends, however it ends. LOG.stage says what
# failed, LOG.fio holds fio's status.
iser_host_cell() {
	local t0 rc=0 line qd
	t0=${EPOCHREALTIME/./}
	# shellcheck disable=SC2034 # iser_cm_check's device
	RIG_DEV=$DEV
	trap iser_host_cleanup EXIT
	echo "open-iscsi did not start" >"$4.stage"
	iser_host_up $(($5 + 300))
	# The node record below takes iscsid.conf's values.
	sed -i -e 's/^\(node.session.cmds_max\) *=.*/\1 = 128/' \
		-e 's/^\(node.session.queue_depth\) *=.*/\1 = 128/' /etc/iscsi/iscsid.conf
	echo "== iscsid up in $(ms_since "$t0") ms"
	echo "the target did not come up" >"$4.stage"
	line=$(rig_wait "listen-$step" 120) || line=timeout
	[ -z "$line" ] || rig_fail "the target did not come up ($line)"
	t0=${EPOCHREALTIME/./}
	echo "the login failed" >"$4.stage"
	# The target's node record made here, not by SendTargets discovery
	# (selftests/iser.sh tests that): a discovery that timed out once
	# (sroce target, rxe initiator, a loaded host) left iscsiadm dead and
	# its discovery session behind, holding ib_iser and ib_isert for
	# the cells after it.
	rig_run 10 iscsiadm "${ISER_NODE[@]}" -o new >/dev/null || rig_fail "cannot create the node record"
	iser_login
	read -r qd <"/sys/block/$ISER_DISK/device/queue_depth"
	echo "== login in $(ms_since "$t0") ms: /dev/$ISER_DISK, queue depth $qd"
	echo "fio did not run" >"$4.stage"
	t0=${EPOCHREALTIME/./}
	cell_fio "$1" "$2" "$3" "/dev/$ISER_DISK" "$4" "$5" || rc=$?
	echo "$rc" >"$4.fio"
	echo "== fio in $(ms_since "$t0") ms"
	t0=${EPOCHREALTIME/./}
	iser_logout
	iser_host_cleanup
	trap - EXIT
	echo "== logout and cleanup in $(ms_since "$t0") ms"
}

# ms_since T0: milliseconds since T0 (an EPOCHREALTIME without its dot).
ms_since() {
	echo $(((${EPOCHREALTIME/./} - $1) / 1000))
}

# udp_lat_cell TEST: UDP ping-pong (sroce-udp-lat), the link's latency;
# TEST udp_lat_pair: two datagrams each way (--pair), as RC's ACK and reply.
udp_lat_cell() {
	local t=$1 port=$((19515 + step % 50)) log=$RIG_OUT/logs/r$round.link.$1.log rc=0 row
	local bin=${SROCE_UDP_LAT:-$RIG_REPO/build/tools/bench/sroce-udp-lat}
	local popt=()
	[ "$t" = udp_lat_pair ] && popt=(--pair)
	CPU_SAMPLE=""
	profile_start
	if rig_is_a; then
		serve "$log" 120 "$bin" "${popt[@]}" -s "$port" "$BENCH_LAT_ITERS" 2 || true
		profile_stop "sroce-udp-lat ${popt[*]} (server)"
		return 0
	fi
	if rig_wait "listen-$step" 60 >/dev/null; then
		timeout -k 3 120 "$bin" "${popt[@]}" -c "$RIG_PEER_IP4" "$port" "$BENCH_LAT_ITERS" 2 >"$log" 2>&1 || rc=$?
		profile_stop "sroce-udp-lat ${popt[*]} (client)"
	else
		profile_stop "sroce-udp-lat"
		rc=1
		echo "the server never started" >"$log"
	fi
	if [ "$rc" != 0 ]; then
		record_fail "$t" 2 "sroce-udp-lat exited $rc"
		return 0
	fi
	# MIN MAX TYPICAL AVG STDEV P99 P99.9, as perftest prints them
	row=$(perf_row "$log" 2)
	# shellcheck disable=SC2086
	set -- $row
	if ! is_positive "${3:-}" || ! is_positive "${6:-}"; then
		record_fail "$t" 2 "no latency (row: ${row:-none})"
		return 0
	fi
	record "$t" 2 typical_us "$3"
	record "$t" 2 p99_us "$6"
}

# udp64_record LOG: iperf3's 64-byte datagrams, counted in its receiver
# line ("0.00-2.01 sec ... LOST/TOTAL (N%) receiver"): datagrams sent and
# received per second, in thousands, the unit of perftest's message rate.
udp64_record() {
	local f i line="" t="" lost="" total=""
	while read -ra f; do
		[ ${#f[@]} -gt 0 ] && [ "${f[-1]}" = receiver ] && line="${f[*]}"
	done <"$1"
	read -ra f <<<"$line"
	for ((i = 1; i < ${#f[@]}; i++)); do
		[ "${f[i]}" = sec ] && t=${f[i - 1]#*-}
		[[ "${f[i]}" =~ ^([0-9]+)/([0-9]+)$ ]] && lost=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
	done
	if ! is_positive "$t" || ! is_positive "$total"; then
		record_fail udp64 64 "no datagram counts in the receiver line (${line:-none})"
		return 0
	fi
	record udp64 64 sent_kmsgps "$(awk -v n="$total" -v t="$t" 'BEGIN { printf "%.4g", n / t / 1000 }')"
	record udp64 64 rate_kmsgps "$(awk -v n="$((total - lost))" -v t="$t" 'BEGIN { printf "%.4g", n / t / 1000 }')"
	record udp64 64 loss_pct "$(awk -v l="$lost" -v n="$total" 'BEGIN { printf "%.3g", 100 * l / n }')"
}

# link_cell PROTO: iperf3 (tcp, udp with 4 KiB datagrams, udp64 with 64-byte
# ones) or UDP ping-pong (udp_lat, udp_lat_pair) between the guests over the
# same link.
link_cell() {
	local proto=$1 port=$((5201 + step % 50)) log pid rc=0 d=$BENCH_DUR rate loss args
	if [ "$proto" = udp_lat ] || [ "$proto" = udp_lat_pair ]; then
		udp_lat_cell "$proto"
		return 0
	fi
	[ "$d" -lt 2 ] && d=2
	log=$RIG_OUT/logs/r$round.link.$proto.log
	CPU_SAMPLE=""
	args=(-c "$RIG_PEER_IP4" -p "$port" -t "$d" -f m)
	[ "$proto" = udp ] && args+=(-u -b 0 -l 4096)
	[ "$proto" = udp64 ] && args+=(-u -b 0 -l 64)
	if rig_is_a; then
		timeout -k 3 $((d + 40)) iperf3 -s -1 -p "$port" -f m >"$log" 2>&1 &
		pid=$!
		if rig_wait_listen "$port" 30; then
			rig_signal "listen-$step"
			cpu_sample "$pid" "$(half "$d")"
		else
			kill "$pid" 2>/dev/null
		fi
		wait "$pid" || rc=$?
	else
		if rig_wait "listen-$step" 60 >/dev/null; then
			timeout -k 3 $((d + 40)) iperf3 "${args[@]}" >"$log" 2>&1 &
			pid=$!
			cpu_sample "$pid" "$(half "$d")"
			wait "$pid" || rc=$?
		else
			rc=1
		fi
	fi
	if [ "$rc" != 0 ]; then
		rig_is_b && record_fail "$proto" 0 "iperf3 exited $rc"
		return 0
	fi
	[ "$proto" = udp64 ] || record_cpu "$proto" 0
	rig_is_b || return 0
	if [ "$proto" = udp64 ]; then
		udp64_record "$log"
		return 0
	fi
	# The receiver's line: its rate (Mbit/s; the host converts to MiB/s, the
	# unit of perftest's MB/sec) and, for UDP, the loss "(N%)".
	local f i line=""
	while read -ra f; do
		[ ${#f[@]} -gt 0 ] && [ "${f[-1]}" = receiver ] && line="${f[*]}"
	done <"$log"
	read -ra f <<<"$line"
	rate=""
	loss=""
	for ((i = 1; i < ${#f[@]}; i++)); do
		[ "${f[i]}" = Mbits/sec ] && rate=${f[i - 1]}
		[[ "${f[i]}" =~ ^\(([0-9.e+-]+)%\)$ ]] && loss=${BASH_REMATCH[1]}
	done
	is_positive "$rate" || {
		record_fail "$proto" 0 "no receiver rate"
		return 0
	}
	record "$proto" 0 bw_Mbps "$rate"
	[ "$proto" = udp ] && [ -n "$loss" ] && record udp 0 loss_pct "$loss"
	return 0
}

# link_alive: the peer answers ping on the link (3 tries: the link loses
# a datagram now and then, and the peer may still be busy with the cell).
link_alive() {
	local i
	for ((i = 0; i < 3; i++)); do
		busybox ping -q -c 1 -W 2 "$RIG_PEER_IP4" >/dev/null 2>&1 && return 0
	done
	return 1
}

# link_stopped: the state of this guest's end of the link, for the
# diagnosis of a link that stopped (Documentation/benchmark.rst).
link_stopped() {
	{
		echo "== step $step, $pair, $(date -u +%H:%M:%S)"
		ip -s -s link show "$RIG_IFACE"
		command -v ethtool >/dev/null && ethtool -S "$RIG_IFACE"
		cat "/sys/class/net/$RIG_IFACE/queues/tx-0/tx_timeout" 2>/dev/null
		ip neigh show dev "$RIG_IFACE"
		grep -E '^(Ip|Udp):' /proc/net/snmp
		dmesg | tail -n 20
	} >>"$RIG_OUT/link-stop.txt" 2>&1
}

# Step barrier: both halves finished the step before the next one starts;
# each tells the other whether the peer still answers on the link. When it
# does not, for either guest, the step's results are taken back and both
# guests stop: bench.sh boots them again and goes on from this step
# (BENCH_FROM). The link of this rig stops for good now and then after a
# burst (Documentation/benchmark.rst); every cell after that would fail.
step_done() {
	local mine=up peer i
	link_alive || mine=down
	if [ -n "${BENCH_TEST_LINK_STOP:-}" ] && [ "$step" = "$BENCH_TEST_LINK_STOP" ] &&
		[ "$BENCH_FROM" -lt "$step" ]; then
		rig_log "test: the link is taken for stopped after step $step"
		mine=down
	fi
	rig_signal "done-$step" "$mine"
	peer=$(rig_wait "done-$step" 180) || rig_fail "the peer did not finish step $step"
	[ "$mine" = up ] && [ "$peer" = up ] && return 0
	rig_log "the link stopped in step $step (this guest: $mine, the peer: $peer)"
	link_stopped
	# bench.sh reads both qemus' view of the link (for the diagnosis).
	rig_is_a && echo "$step" >"$RIG_SHARED/link-stop"
	for ((i = 0; i < 240; i++)); do
		[ -e "$RIG_SHARED/link-diag" ] && break
		rig_sleep 0.5
	done
	truncate -s "$raw_at_step" "$raw"
	rig_is_a && echo "$step" >"$RIG_SHARED/resume"
	exit 3
}

mkdir -p "$RIG_OUT/logs"
MANYQP=${SROCE_MANYQP:-$RIG_REPO/build/tools/bench/sroce-manyqp}
CMRATE=${SROCE_CMRATE:-$RIG_REPO/build/tools/bench/sroce-cmrate}
# perftest cells through perf_pair: their logs, hook and listen time.
# shellcheck disable=SC2034 # read by perf_pair
PERF_LOG_DIR=$RIG_OUT/logs PERF_HOOK=cell_hook PERF_LISTEN_WAIT=40
rig_use_sroce_provider
# libibverbs loads every provider listed in /etc/libibverbs.d in every
# process, about a second per perftest run under TCG: this guest sees only
# rxe's there (sroce's provider comes from RDMAV_DRIVERS).
mkdir -p /run/bench-ibverbs.d
cp /etc/libibverbs.d/rxe.driver /run/bench-ibverbs.d/ &&
	mount --bind /run/bench-ibverbs.d /etc/libibverbs.d ||
	rig_log "could not narrow /etc/libibverbs.d (runs are slower)"
if rig_is_a; then
	{
		echo "kernel $(uname -r)"
		echo "perftest $(ib_write_bw --version 2>/dev/null | awk '{ print $NF }')"
		echo "iperf3 $(iperf3 --version 2>/dev/null | awk 'NR == 1 { print $2 }')"
		echo "vcpus $(nproc)"
		echo "mtu $RIG_MTU"
	} >"$RIG_SHARED/guest-meta"
fi

# A run booted again after the link stopped starts at step BENCH_FROM.
BENCH_FROM=${BENCH_FROM:-1}
[[ "$BENCH_FROM" =~ ^[1-9][0-9]*$ ]] || rig_fail "BENCH_FROM=$BENCH_FROM is not a step"
[ "$BENCH_FROM" -gt 1 ] && rig_log "going on from step $BENCH_FROM of $nsteps"
raw_at_step=0
for ((round = 1; round <= BENCH_ROUNDS; round++)); do
	for pair in $(bench_pairs_of_round "$round"); do
		switched=0
		while read -r t size tool args <&3; do
			[ -n "$t" ] || continue # no cell of this mode is left (bench.sh --cells)
			step=$((step + 1))
			[ "$step" -lt "$BENCH_FROM" ] && continue
			if [ "$switched" = 0 ]; then
				progress "switching devices"
				if rig_is_a; then switch_to "${pair%-*}"; else switch_to "${pair#*-}"; fi
				rig_barrier "switch-$round-$pair" 120 ||
					rig_fail "the peer did not switch to $pair"
				switched=1
			fi
			raw_at_step=$(stat -c %s "$raw")
			progress "$t $size"
			case "$tool" in
			sroce-manyqp) manyqp_cell "$t" "$size" "$args" ;;
			sroce-manyqp-reg) reg_cell "$t" "$size" ;;
			sroce-cmrate) cmrate_cell "$t" "$size" "$args" ;;
			sroce-nvmeof) nvmeof_cell "$t" "$size" "$args" ;;
			sroce-iser) iser_cell "$t" "$size" "$args" ;;
			*)
				# shellcheck disable=SC2086 # args is a list of words
				perftest_cell "$t" "$size" "$tool" $args
				;;
			esac
			step_done
		done 3<<<"$BENCH_TESTS"
	done
	pair="link"
	for proto in $BENCH_LINK; do
		step=$((step + 1))
		[ "$step" -lt "$BENCH_FROM" ] && continue
		raw_at_step=$(stat -c %s "$raw")
		progress "link $proto"
		link_cell "$proto"
		step_done
	done
done
step=$nsteps
round=$BENCH_ROUNDS
progress "done"
rig_log "$nsteps steps done"
