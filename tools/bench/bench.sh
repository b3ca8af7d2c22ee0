#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The benchmark: one boot of the two-guest rig measures sroce <-> sroce,
# rxe <-> rxe, sroce <-> rxe and the link itself (iperf3), alternating the
# implementations over several rounds, then writes results.csv,
# results.json, table.md (ratios) and bench.png into a results folder.
# Documentation/benchmark.rst explains every cell.
#
#   tools/bench/bench.sh [MODE] [OPTIONS]
#
#   (no MODE)         full run ("make bench", 3 rounds, about 35 min)
#   --quick           fewer sizes and rounds ("make bench-quick", 130 steps)
#   --smoke           one round, two sizes, sroce-sroce and rxe-rxe; checks
#                     only that every cell produced a number that parsed
#   --profile         perf record in both guests during sroce <-> sroce
#                     ib_write_bw 64 KiB; prints the top symbols
#   --profile-size N  profile ib_write_bw with N-byte messages instead
#   --profile-test T  profile T: write_bw (default), send_lat, write_lat,
#                     read_lat (2-byte messages), udp_lat, udp_lat_pair
#                     (the link's ping-pongs)
#   --timeline        profile mode with ftrace instead of perf: where the
#                     time of each turnaround goes in each guest
#                     (tools/bench/timeline.sh), for a latency test
#   --sroce-params P  sroce module parameters in the guests ("tx_gso=0")
#   --report DIR      redo the outputs of an earlier results folder
#   --rounds N        override the mode's number of rounds
#   --pairs "A-B ..." override the device pairs (e.g. "sroce-rxe rxe-sroce")
#   --cells "T ..."   only the mode's cells and link tests named T
#                     (e.g. "iser_randread iser_seqread tcp")
#   -k KERNEL         guest kernel (tools/vm/run.sh -k)
#   -o DIR            results folder (default out/bench/MODE-DATE, and
#                     out/bench/latest points to it)
#   --publish         copy the outputs into Documentation/bench/
#   --test-link-stop N  (for the tests) act as if the link stopped after
#                     step N once: the guests are booted again from it
#
# Needs sroce.ko for the guest kernel and the provider built ("make module
# provider"); "make bench" builds them first.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo" || exit 1
# shellcheck source=lib.sh
. "$here/lib.sh"

mode=full
test_link_stop=""
report_dir=""
publish=0
out=""
kernel=()
usage() { sed -n '3,34p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
	echo "bench: error: $*" >&2
	exit 1
}
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) mode=quick ;;
	--smoke) mode=smoke ;;
	--profile) mode=profile ;;
	--timeline) mode=profile; BENCH_TRACE=1 ;;
	--full) mode=full ;;
	--report) report_dir=${2:?--report needs a folder}; shift ;;
	--rounds) BENCH_ROUNDS_OVERRIDE=${2:?}; shift ;;
	--pairs) BENCH_PAIRS_OVERRIDE=${2:?}; shift ;;
	--cells) BENCH_CELLS=${2:?}; shift ;;
	--profile-size) BENCH_PROFILE_SIZE=${2:?}; shift ;;
	--profile-test) BENCH_PROFILE_TEST=${2:?}; shift ;;
	--sroce-params) SROCE_PARAMS=${2?}; shift ;;
	-k) kernel=(-k "${2:?}"); shift ;;
	-o) out=${2:?}; shift ;;
	--publish) publish=1 ;;
	--test-link-stop) test_link_stop=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
export BENCH_ROUNDS_OVERRIDE=${BENCH_ROUNDS_OVERRIDE:-} BENCH_PAIRS_OVERRIDE=${BENCH_PAIRS_OVERRIDE:-}
export BENCH_CELLS=${BENCH_CELLS:-}
BENCH_PROFILE_SIZE=${BENCH_PROFILE_SIZE:-65536}
[[ "$BENCH_PROFILE_SIZE" =~ ^[0-9]+$ ]] || die "--profile-size takes a message size in bytes"
BENCH_PROFILE_TEST=${BENCH_PROFILE_TEST:-write_bw}
case "$BENCH_PROFILE_TEST" in
write_bw | send_lat | write_lat | read_lat | udp_lat | udp_lat_pair) ;;
*) die "--profile-test takes write_bw, send_lat, write_lat, read_lat, udp_lat or udp_lat_pair" ;;
esac
BENCH_TRACE=${BENCH_TRACE:-0}
[ "$BENCH_TRACE" = 0 ] || [ "$BENCH_PROFILE_TEST" != write_bw ] ||
	die "--timeline times latency tests: give --profile-test send_lat, write_lat, read_lat, udp_lat or udp_lat_pair"

publish_results() {
	local d=$1 dst=$repo/Documentation/bench
	mkdir -p "$dst"
	cp "$d/table.md" "$dst/results.md"
	cp "$d/results.json" "$d/results.csv" "$d/bench.png" "$dst/"
	local more=""
	if [ -s "$d/scale.png" ]; then
		cp "$d/scale.png" "$dst/"
		more=", scale.png"
	fi
	echo "bench: published to Documentation/bench/ (results.md, results.json, results.csv, bench.png$more)"
}

if [ -n "$report_dir" ]; then
	bash "$here/report.sh" "$report_dir" || exit 1
	[ "$publish" = 1 ] && publish_results "$report_dir"
	exit 0
fi

export BENCH_MODE=$mode
bench_plan_init || exit 2
nsteps=$(bench_steps)

# Prerequisites: the plot tool, sroce.ko for the guest kernel, the provider.
if [ "$mode" != profile ] && ! command -v gnuplot >/dev/null; then
	bash tools/setup.sh --quiet --need gnuplot-nox || die "gnuplot is missing (tools/setup.sh --need gnuplot-nox)"
fi
gk=$(bash tools/vm/run.sh --print-kernel "${kernel[@]}") || die "no guest kernel"
ko=$repo/sroce.ko
if [ "$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{ print $1 }')" != "$gk" ]; then
	ko=$repo/out/kbuild/$gk/sroce.ko
fi
[ -f "$ko" ] || die "no sroce.ko for guest kernel $gk (make module KDIR=/lib/modules/$gk/build)"
[ -f build/provider/libsroce-rdmav34.so ] || die "the provider is not built (make provider)"

stamp=$(date -u +%Y%m%d-%H%M%S)
[ -n "$out" ] || out=$repo/out/bench/$mode-$stamp
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
if [[ "$out" == "$repo/out/bench/"* ]]; then
	ln -sfn "$(basename "$out")" "$repo/out/bench/latest"
fi

read -r load_start _ </proc/loadavg
{
	echo "mode $mode"
	echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "git $(git describe --always --dirty 2>/dev/null || echo unknown)"
	echo "rounds $BENCH_ROUNDS"
	echo "pairs $BENCH_PAIRS"
	[ -n "$BENCH_CELLS" ] && echo "cells $BENCH_CELLS"
	echo "duration $BENCH_DUR"
	echo "lat_iters $BENCH_LAT_ITERS"
	echo "host_cpus $(nproc)"
	echo "host_load_start $load_start"
} >"$out/meta"

# Time limit of the whole rig run: what the plan needs at a slow pace
# (with 4096 QPs to set up in the full run's last scale cells).
limit=$((240 + nsteps * (BENCH_DUR + 25)))
mem=()
if [ "$mode" = full ]; then
	limit=$((limit + 900))
	# Registering 1 GiB (reg_mr) needs more than the guests' usual 1 GiB.
	mem=(-m 2560)
fi
echo "bench: $mode run, $nsteps steps ($BENCH_ROUNDS rounds of: $BENCH_PAIRS${BENCH_LINK:+, link}), guest kernel $gk"
echo "bench: results in $out"
start=$EPOCHSECONDS
# The progress line: rewritten in place on a terminal, else one line when
# the pair changes or every 30 s.
tty=0
[ -t 1 ] && tty=1
last=""
last_t=0

# link_diag: the guests found the link stopped (guest.sh step_done): what
# both qemus' monitors say of it (tools/vm/monitor.sh): the virtio queues
# as qemu last saw them, and from guest memory the indexes the guest wrote
# since (avail idx), the used ring, and the two event indexes (VIRTIO 1.x
# 2.7.10: avail_event, written by qemu, tells the guest when to notify).
# Setting the NICs' links down and up (set_link) did not bring the link
# back, and rdma_rxe's skb destructor then crashed on a QP already gone
# (6.1): not done.
link_diag() {
	local r qn st av us q=/machine/peripheral/nic0/virtio-backend
	for r in a b; do
		echo "== guest $r: qemu's view"
		bash tools/vm/monitor.sh "$out/run" "$r" info network
		for qn in 0 1; do
			echo "-- queue $qn ($([ "$qn" = 0 ] && echo receive || echo send))"
			st=$(bash tools/vm/monitor.sh "$out/run" "$r" info virtio-queue-status "$q" "$qn")
			echo "$st"
			av=$(awk '$1 == "avail:" { print $2 }' <<<"$st")
			us=$(awk '$1 == "used:" { print $2 }' <<<"$st")
			[ -n "$av" ] && [ -n "$us" ] || continue
			echo "   avail flags, idx (guest):"
			bash tools/vm/monitor.sh "$out/run" "$r" xp /2hx "$av"
			echo "   used_event (guest):"
			bash tools/vm/monitor.sh "$out/run" "$r" xp /1hx "$(printf "0x%x" $((av + 4 + 2 * 256)))"
			echo "   used flags, idx (qemu):"
			bash tools/vm/monitor.sh "$out/run" "$r" xp /2hx "$us"
			echo "   avail_event (qemu):"
			bash tools/vm/monitor.sh "$out/run" "$r" xp /1hx "$(printf "0x%x" $((us + 4 + 8 * 256)))"
		done
	done >"$out/run/link-diag.txt" 2>&1
	: >"$out/run/link-diag"
}

# rig_run FROM: one boot of the rig, walking the plan from step FROM.
rig_run() {
	local p el line
	rm -rf "$out/run"
	bash tools/vm/run.sh "${kernel[@]}" "${mem[@]}" --monitor -q -t "$limit" -o "$out/run" \
		-e BENCH_MODE="$mode" -e BENCH_ROUNDS_OVERRIDE="$BENCH_ROUNDS_OVERRIDE" \
		-e BENCH_PAIRS_OVERRIDE="$BENCH_PAIRS_OVERRIDE" -e BENCH_CELLS="$BENCH_CELLS" \
		-e BENCH_PROFILE_SIZE="$BENCH_PROFILE_SIZE" \
		-e BENCH_PROFILE_TEST="$BENCH_PROFILE_TEST" -e BENCH_TRACE="$BENCH_TRACE" \
		-e SROCE_PARAMS="${SROCE_PARAMS:-}" \
		-e BENCH_FROM="$1" -e BENCH_TEST_LINK_STOP="$test_link_stop" \
		tools/bench/guest.sh tools/bench/guest.sh >>"$out/rig.log" 2>&1 &
	rig=$!
	while kill -0 "$rig" 2>/dev/null; do
		sleep 1
		[ -e "$out/run/link-stop" ] && [ ! -e "$out/run/link-diag" ] && link_diag
		p=""
		[ -f "$out/run/progress" ] && read -r p <"$out/run/progress"
		[ -n "$p" ] || p="$(($1 - 1))/$nsteps booting the guests"
		el=$((EPOCHSECONDS - start))
		line=$(printf 'bench: [%s] %dm%02ds' "$p" $((el / 60)) $((el % 60)))
		if [ "$tty" = 1 ]; then
			printf '\r%-100.100s' "$line"
		elif [ "${p%%:*}" != "${last%%:*}" ] && [ "$((EPOCHSECONDS - last_t))" -ge 30 ] ||
			[ "$((EPOCHSECONDS - last_t))" -ge 60 ]; then
			echo "$line"
			last=$p
			last_t=$EPOCHSECONDS
		fi
	done
	[ "$tty" = 1 ] && echo
	wait "$rig"
}

# When the link stops (guest.sh step_done), the guests give back the
# step's results and stop; boot them again from that step, a few times.
: >"$out/rig.log"
rm -rf "$out"/run-*
from=1
boots=1
stops=""
while :; do
	rig_run "$from"
	rc=$?
	[ "$rc" != 0 ] && [ -s "$out/run/resume" ] && [ "$boots" -le 3 ] || break
	read -r from <"$out/run/resume"
	stops="$stops $from"
	mv "$out/run" "$out/run-$boots"
	echo "bench: the link stopped in step $from; booting the guests again to go on from it" \
		"(the guests' view: $out/run-$boots/{a,b}/link-stop.txt, qemu's: link-diag.txt)"
	boots=$((boots + 1))
done
read -r load_end _ </proc/loadavg
echo "host_load_end $load_end" >>"$out/meta"
echo "elapsed $((EPOCHSECONDS - start))" >>"$out/meta"
[ -n "$stops" ] && echo "link_stops${stops}" >>"$out/meta"
[ -f "$out/run/guest-meta" ] && sed 's/^/guest_/' "$out/run/guest-meta" >>"$out/meta"
if [ "$rc" != 0 ]; then
	tail -n 20 "$out/rig.log" >&2
	die "the rig run failed (status $rc): $out/run (console-*.log, */script.log)"
fi
echo "bench: rig run done in $((EPOCHSECONDS - start)) s"

if [ "$mode" = profile ] && [ "$BENCH_TRACE" = 1 ]; then
	for r in a b; do
		[ -s "$out/run/$r/trace.txt" ] || die "guest $r wrote no trace ($out/run/$r)"
		echo "== guest $r, $BENCH_PROFILE_TEST: $(bash "$here/timeline.sh" "$out/run/$r/trace.txt")"
		echo
	done | tee "$out/timeline.txt"
	awk '$5 == "typical_us" { print "bench: " $3 " traced: " $6 " us typical" }' "$out/run/b/raw.tsv"
	echo "bench: timelines in $out/timeline.txt, the traces in $out/run/{a,b}/trace.txt"
	exit 0
fi
if [ "$mode" = profile ]; then
	for r in a b; do
		[ -s "$out/run/$r/profile.txt" ] || die "guest $r wrote no profile ($out/run/$r/perf-record.log)"
		cp "$out/run/$r/profile.txt" "$out/profile-$r.txt"
		cp "$out/run/$r/profile-callers.txt" "$out/profile-callers-$r.txt" 2>/dev/null
		# By DSO on the host: the guest's perf files its modules' samples
		# under [kernel.kallsyms], the host's reads the modules' names from
		# perf.data.
		if command -v perf >/dev/null; then
			{
				echo
				echo "== guest $r: by DSO (kernel modules apart)"
				timeout 120 perf report -i "$out/run/$r/perf.data" --stdio --no-children -g none \
					--sort dso --percent-limit 0.3 2>/dev/null | grep -v '^#' | grep .
			} >>"$out/profile-$r.txt"
		fi
		head -n 60 "$out/profile-$r.txt"
		echo
	done
	awk -v size="$BENCH_PROFILE_SIZE" '$5 == "bw_MiBps" { print "bench: ib_write_bw " size " B under perf: " $6 " MiB/s" }
		$5 == "typical_us" { print "bench: " $3 " under perf: " $6 " us typical" }
		$5 == "rate_Mpps" { print "bench: ib_write_bw " size " B under perf: " $6 * 1000 " kmsg/s" }' "$out/run/b/raw.tsv"
	echo "bench: profiles in $out/profile-a.txt, profile-b.txt, call chains in profile-callers-{a,b}.txt (perf.data in $out/run/a, b)"
	exit 0
fi

bash "$here/report.sh" "$out" || die "the report failed"

# Every planned cell must have produced its numbers (smoke asserts only
# this); failed cells are listed in every mode.
fails=$(cat "$out"/run*/[ab]/raw.tsv | awk '$5 == "fail"' | sort -u)
missing=0
while read -r t size _; do
	for p in $BENCH_PAIRS; do
		awk -v p="$p" -v t="$t" -v s="$size" '$2 == p && $3 == t && $4 == s && $5 != "fail"' \
			"$out/raw.tsv" | grep -q . || missing=$((missing + 1))
	done
done <<<"$BENCH_TESTS"
for t in $BENCH_LINK; do
	awk -v t="$t" '$2 == "link" && $3 == t && $5 != "fail"' "$out/raw.tsv" |
		grep -q . || missing=$((missing + 1))
done
if [ -n "$fails" ]; then
	echo "bench: failed cells (round pair test size):"
	awk '{ print "    " $1, $2, $3, $4 ": " $6 }' <<<"$fails"
fi
cat "$out/table.md"
scale_png=""
[ -s "$out/scale.png" ] && scale_png=1
echo "bench: $out/table.md, results.csv, results.json, bench.png${scale_png:+, scale.png}"
if [ "$mode" = smoke ]; then
	nnum=$(awk '$5 != "fail"' "$out/raw.tsv" | wc -l)
	[ "$missing" = 0 ] && [ -z "$fails" ] && [ -s "$out/bench.png" ] ||
		die "smoke: $missing cells without a result, $(grep -c . <<<"$fails") failures"
	if [ -n "$test_link_stop" ]; then
		# The rig's link may also stop for real (its known problem),
		# which the run survives the same way: any other stops are
		# named, not judged.
		[[ "$stops " == *" $test_link_stop "* ]] && ls "$out"/run-*/a/link-stop.txt >/dev/null 2>&1 ||
			die "smoke: no new boot after the link stop of step $test_link_stop (stops:${stops:- none})"
		echo "bench: smoke: booted again after the link stop of step $test_link_stop" \
			"(all stops:$stops)"
	fi
	echo "bench: smoke OK: every cell produced numbers ($nnum parsed)"
fi
[ "$publish" = 1 ] && publish_results "$out"
exit 0
