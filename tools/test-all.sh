#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The project's tests (what "make test", "make test-full" and .ci/run run):
#   1. setup        tools/setup.sh (installs missing Debian packages)
#   2. build        sroce.ko for every guest kernel (6.1, 6.12, and the
#                   debug 6.1 kernel once it is built: from the cache, or in
#                   the background at nice 19 from here on), then the CMake
#                   tree (provider, tools); parts not in the tree yet are
#                   reported as skipped, not built
#   3. checks       ctest (host unit tests), tools/lint.sh, tools/dkms.sh
#                   test: at nice 19 in the background when guests follow,
#                   reported after the guests
#   4. rig          tools/vm/selftest.sh, the rig's own self-tests (shard 3);
#                   its canaries on the debug kernel run in step 7
#   5. guests       the runs of tools/placement.sh (each test's "# place:"
#                   line says in which runs and tiers it runs): the pair runs
#                   on stock kernels (stock, smp2, sroce-rxe, rxe-sroce,
#                   6.12, 6.12-rxe, cross), one boot each
#   6. bench        tools/bench/bench.sh --smoke: the benchmark runs and
#                   produces every number (none is judged)
#   7. one guest    the one-guest runs (stock-1, 6.12-1) in two lanes side
#                   by side, the rig's canaries, then the debug kernel's
#                   pair run, whose boot runs the one-guest tests placed on
#                   that kernel (debug-1) first, half in each guest
# What runs: the gate (every submission: steps 1-3, the bench smoke and the
# tests placed "@gate") and one shard of three ("@1", "@2" or "@3"; the rig
# self-tests are shard 3's), picked from the commit: shard = (number of
# commits in HEAD's history) mod 3 + 1, so the same commit always runs the
# same shard and any three consecutive commits run all three
# (SROCE_SHARD=1|2|3 picks one, SROCE_SHARD=gate runs the gate alone).
# --full (make test-full) runs the gate and all three shards, one boot
# per run.
# A time budget (SROCE_TEST_BUDGET seconds from the start, 4800 by default,
# none with --full): a run whose measured time would take the whole past it
# is not started, its tests count as failed ("not run: budget"), and the
# summary still ends the output; a run that is started is stopped at the
# budget. Prints a result per step and ends with "N passed, N failed";
# exits non-zero when anything failed.
#
#   tools/test-all.sh [--full] [--shard N] [--no-guests] [--no-rig]
#                     [--no-6.12] [--no-debug] [--rxe-rxe]
#                     [--suites "SUITE ..."]
# --no-6.12 and --no-debug leave those kernels' runs out; --rxe-rxe adds
# rdma_rxe alone in both guests with every test (a check of the tests);
# --suites runs those suites whole on stock 6.1 instead of the placements
# (make test-rxe: --suites rxe-rxe).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo" || exit 1

KERNEL_612=6.12
guests=1
rig=1
with612=1
debug=1
full=0
rxe_rxe=0
whole_suites=()
shard=${SROCE_SHARD:-}
budget=${SROCE_TEST_BUDGET:-}
while [ $# -gt 0 ]; do
	case "$1" in
	--full) full=1 ;;
	--shard) shard=${2:?}; shift ;;
	--no-guests) guests=0 ;;
	--no-rig) rig=0 ;;
	--no-6.12) with612=0 ;;
	--no-debug) debug=0 ;;
	--rxe-rxe) rxe_rxe=1 ;;
	--suites) read -ra whole_suites <<<"${2?}"; shift ;;
	-h | --help) sed -n '3,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "test-all: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

# The tiers this run takes, and why.
commits=$(git -C "$repo" rev-list --count HEAD 2>/dev/null || echo 0)
head_id=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo "no git")
if [ "$full" = 1 ]; then
	tiers="gate 1 2 3"
	tiers_why="the gate and all three shards (--full)"
	budget=${budget:-0}
else
	if [ -z "$shard" ]; then
		shard=$((commits % 3 + 1))
		shard_why="picked by commit $head_id, $commits commits"
		# A shallow clone counts only the commits it has: the shard
		# would not rotate. The commit's hash picks then (the same
		# commit, the same shard), and the summary says so.
		if [ "$(git -C "$repo" rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
			shard=$((0x$(git -C "$repo" rev-parse HEAD | cut -c1-6) % 3 + 1))
			shard_why="picked by the hash of commit $head_id: a shallow clone, whose commit count does not rotate"
		fi
	else
		shard_why="SROCE_SHARD/--shard"
	fi
	case "$shard" in
	1 | 2 | 3)
		tiers="gate $shard"
		tiers_why="the gate and shard $shard of 3 ($shard_why)"
		;;
	gate)
		tiers="gate"
		tiers_why="the gate alone ($shard_why)"
		;;
	*) echo "test-all: bad shard $shard (1, 2, 3 or gate)" >&2; exit 2 ;;
	esac
	budget=${budget:-4800}
fi
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "test-all: bad SROCE_TEST_BUDGET $budget" >&2; exit 2; }
# The rig's self-tests are shard 3's.
in_tier() { [[ " $tiers " == *" $1 "* ]]; }
in_tier 3 || rig=0

logs=$repo/out/test-all
rm -rf "$logs"
mkdir -p "$logs"
passed=0
failed=0
skipped=0
failures=()

# The placements of the tiers this run takes (tools/placement.sh): run_tests
# RUN prints that run's tests, comma-separated (none with --suites).
declare -A run_tests_of=()
while read -r tt rr _; do
	run_tests_of[$rr]+="${run_tests_of[$rr]:+,}$tt"
done < <([ ${#whole_suites[@]} -gt 0 ] || bash tools/placement.sh --tiers "$tiers")
[ "$with612" = 1 ] || unset 'run_tests_of[6.12]' 'run_tests_of[6.12-1]' 'run_tests_of[6.12-rxe]' 'run_tests_of[cross]'
[ "$debug" = 1 ] || unset 'run_tests_of[debug]' 'run_tests_of[debug-1]'
run_tests() { echo "${run_tests_of[$1]:-}"; }
need_debug() { [ -n "$(run_tests debug)$(run_tests debug-1)" ]; }

t_start=$EPOCHSECONDS
# When the run being reported ended, if not now (the one-guest lanes).
t_end=""

# step NAME: a step's line begins; when, is kept for the timeline at the end
# (CI shows only the end of the log), in $logs/timeline as well (for the
# deadline's report below).
timeline=""
step() {
	printf '== %-28s ' "$1"
	local name=${1#guests: }
	timeline+="${name#build: } $((EPOCHSECONDS - t_start)), "
	printf '%s' "$timeline" >"$logs/timeline"
}
took() { echo "$((EPOCHSECONDS - $1)) s"; }

# slowest_tests: the 12 longest tests of the suites that have ended, as
# "SUITE/TEST SECONDS", from the runner's "TEST: N s; memory after" lines.
slowest_tests() {
	local f
	for f in "$logs"/suite-*.log; do
		[ -e "$f" ] || continue
		f=${f##*/suite-}
		sed -n 's/^ *# \([a-z0-9_]*\): \([0-9]*\) s; memory after.*/\2 \1/p' \
			"$logs/suite-$f" | sed "s|^\([0-9]*\) |\1 ${f%.log}/|"
	done | sort -rn | head -n 12 | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 } END { print "" }'
}

# CI stops the run at its limit (90 minutes) and keeps only the end of the
# log: before that (SROCE_TEST_DEADLINE seconds, 5280 under CI), the log says
# which step the run is in and where the time went, then the run goes on.
deadline=${SROCE_TEST_DEADLINE:-}
[ -n "$deadline" ] || { [ "${CI:-}" = true ] && deadline=5280; }
if [ -n "$deadline" ]; then
	(
		# Ended with the run (its sleep too: nothing may hold the
		# log's pipe open after the run).
		trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
		sleep "$deadline" &
		sleeper=$!
		wait "$sleeper" || exit 0
		echo
		echo "test-all: still running after $deadline s; steps began at: $(cat "$logs/timeline" 2>/dev/null)now $deadline" |
			fold -s -w 120
		echo "test-all: slowest tests so far (s): $(slowest_tests)" | fold -s -w 120
	) &
	deadline_pid=$!
fi
# Stopped from outside (CI's limit, ^C): the same report, then the exit.
on_signal() {
	echo
	echo "test-all: stopped by a signal after $(took "$t_start"); steps began at: ${timeline}now $((EPOCHSECONDS - t_start))" |
		fold -s -w 120
	echo "test-all: slowest tests (s): $(slowest_tests)" | fold -s -w 120
	[ -z "${deadline_pid:-}" ] || kill "$deadline_pid" 2>/dev/null
	exit 143
}
trap on_signal TERM INT HUP

# case_result NAME STATUS [DETAIL]: STATUS pass, fail or skip.
case_result() {
	case "$2" in
	pass) passed=$((passed + 1)) ;;
	skip) skipped=$((skipped + 1)) ;;
	*)
		failed=$((failed + 1))
		failures+=("$1${3:+: $3}")
		;;
	esac
}

# Count the KTAP results in file $2 as cases named "$1: TEST"; a plan that
# is not met counts the missing tests as failures. Leaves "P passed, F
# failed, S skipped" in $summary.
count_ktap() {
	local prefix=$1 file=$2 line name plan=0 seen=0 p=0 f=0 s=0 why=""
	while IFS= read -r line; do
		case "$line" in
		1..*) plan=${line#1..} ;;
		# The first reason a test gives for failing (a half's "FAIL:",
		# the runner's timeout or kernel splat): the summary at the end
		# names it, so that a short tail of the log still says why.
		"# ["?"] FAIL: "* | "# "*": ["?"] "*)
			[ -n "$why" ] || why=$(cut -c3-300 <<<"$line")
			;;
		"ok "*"# SKIP"*)
			why=""
			name=${line#ok * }
			case_result "$prefix: ${name%% # SKIP*}" skip
			s=$((s + 1))
			seen=$((seen + 1))
			;;
		"ok "*)
			why=""
			case_result "$prefix: ${line#ok * }" pass
			p=$((p + 1))
			seen=$((seen + 1))
			;;
		"not ok "*)
			name=${line#not ok }
			case_result "$prefix: ${name#* }" fail "$why"
			why=""
			f=$((f + 1))
			seen=$((seen + 1))
			;;
		esac
	done <"$file"
	if [[ "$plan" =~ ^[0-9]+$ ]] && [ "$seen" -lt "$plan" ]; then
		case_result "$prefix" fail "$((plan - seen)) of $plan tests did not report"
		f=$((f + plan - seen))
	fi
	summary="$p passed, $f failed, $s skipped"
}

# show_failures FILE: each failed KTAP line with its own diagnostics (the
# "# " lines between the result line before it and it, the last 25 of
# them, without the indented details), then the suite's totals. CI keeps
# only the head and the tail of a run's log: these lines are what it shows
# of a failure (tests/show_failures_test.sh).
show_failures() {
	awk '
	/^(ok|not ok) / {
		if ($1 == "not") {
			for (i = (n > 25 ? n - 25 : 0); i < n; i++)
				print diag[i % 25]
			print
		}
		n = 0
		next
	}
	/^# totals:/ { print; next }
	/^# / && !/^#   / { diag[n % 25] = $0; n++ }
	' "$1" | sed 's/^/     /'
}

# --- 1. setup ---------------------------------------------------------------
# The debug guest kernel (tools/vm/debug-kernel.sh: built once from
# linux-source-6.1 and cached outside the repo) builds in the background
# at nice 19 while the steps and suites that do not need it run: it takes
# the CPU they leave idle (lint and checkpatch are one process, a guest
# often waits for its peer) and yields at once to them. The debug runs
# come last, after debug_kernel_finish has waited for it. Not cached yet
# (a fresh machine), it is the longest step of the run (15 minutes of two
# cores alone), so what builds it is installed first and the build starts
# then, beside the rest of the setup (downloading and unpacking packages
# leave the CPU idle), not after it.
dbg_pid=""
start_debug_kernel() {
	dbg_t0=$EPOCHSECONDS
	nice -n 19 bash tools/vm/debug-kernel.sh >"$logs/debug-kernel.log" 2>&1 &
	dbg_pid=$!
}
step setup
t=$EPOCHSECONDS
early=""
if [ "$guests" = 1 ] && need_debug && ! bash tools/vm/debug-kernel.sh --print >/dev/null 2>&1 &&
	bash tools/setup.sh --quiet --debug-kernel >"$logs/setup.log" 2>&1; then
	start_debug_kernel
	early="; the debug kernel's build started after $(took "$t")"
fi
if bash tools/setup.sh --quiet >>"$logs/setup.log" 2>&1; then
	echo "ok ($(took "$t")$early)"
	case_result setup pass
else
	echo "FAILED ($(took "$t"))"
	sed 's/^/     /' "$logs/setup.log" | tail -n 20
	case_result setup fail
fi

# --- 2. build ---------------------------------------------------------------
# build_failed CASE LOG PATTERN: a build step (started at $t) failed; show
# the lines of LOG that match PATTERN.
build_failed() {
	echo "FAILED ($(took "$t"), $2)"
	grep -iE "$3" "$2" | head -n 20 | sed 's/^/     /'
	case_result "$1" fail
}

# cached BUILD-COMMAND...: run it with ccache in front of the compilers
# (Debian's /usr/lib/ccache names them as the builds call them: gcc-12,
# x86_64-linux-gnu-gcc-12, c++), its cache in /var/cache/sroce/ccache
# beside the debug kernel's: a run whose sources did not change builds
# sroce.ko for three kernels and the CMake tree from the cache (some 280 s
# of CPU otherwise, most of it C++), also from another clone (CI clones
# anew: paths are taken relative to the clone, CCACHE_BASEDIR, and the
# working folder is left out of the hash, CCACHE_NOHASHDIR, though -g
# builds name it in their debug information). Not for the debug kernel's own build
# (its 2 GB of objects would push everything else out of the cache).
ccache_dir=${SROCE_CCACHE_DIR:-/var/cache/sroce/ccache}
cached() {
	if [ -d /usr/lib/ccache ] && command -v ccache >/dev/null && mkdir -p "$ccache_dir" 2>/dev/null; then
		PATH=/usr/lib/ccache:$PATH CCACHE_DIR=$ccache_dir CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G} \
			CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=1 "$@"
	else
		"$@"
	fi
}

guest_kernel=$(bash tools/vm/run.sh --print-kernel 2>/dev/null)
module_built=0
step "build: sroce.ko"
t=$EPOCHSECONDS
if ! ls kernel/*.c >/dev/null 2>&1; then
	echo "SKIP (no kernel sources in the tree yet)"
	case_result module skip
elif [ -z "$guest_kernel" ] || [ ! -d "/lib/modules/$guest_kernel/build" ]; then
	echo "FAILED (no headers for the guest kernel ${guest_kernel:-?})"
	case_result module fail "no kernel headers"
elif cached make -s -j "$(nproc)" module KDIR="/lib/modules/$guest_kernel/build" SROCE_KTEST=m >"$logs/module.log" 2>&1; then
	echo "ok for $guest_kernel ($(took "$t"))"
	case_result module pass
	module_built=1
else
	build_failed module "$logs/module.log" 'error|warning'
fi

# The same tree for the 6.12 LTS guests, built in out/kbuild/<release>/
# (tools/kbuild.sh) so that it sits next to the 6.1 sroce.ko.
kver612=""
module612_built=0
if [ "$with612" = 1 ] && [ "$module_built" = 1 ]; then
	kver612=$(bash tools/vm/run.sh -k "$KERNEL_612" --print-kernel 2>/dev/null)
	step "build: sroce.ko $KERNEL_612"
	t=$EPOCHSECONDS
	if [ -z "$kver612" ] || [ ! -d "/lib/modules/$kver612/build" ]; then
		echo "FAILED (no $KERNEL_612 kernel or headers; tools/setup.sh)"
		case_result module-6.12 fail "no $KERNEL_612 kernel headers"
	elif cached bash tools/kbuild.sh "/lib/modules/$kver612/build" -j "$(nproc)" SROCE_KTEST=m >"$logs/module-6.12.log" 2>&1 &&
		! grep -qE '(warning|error):' "$logs/module-6.12.log"; then
		echo "ok for $kver612 ($(took "$t"))"
		case_result module-6.12 pass
		module612_built=1
	else
		echo "FAILED ($(took "$t"), $logs/module-6.12.log)"
		grep -iE 'error|warning' "$logs/module-6.12.log" | head -n 20 | sed 's/^/     /'
		case_result module-6.12 fail
	fi
fi

# The debug guest kernel (see step 1), if its build has not started yet
# (cached, it only prints its folder), and sroce.ko for it once it is there.
if [ -z "$dbg_pid" ] && [ "$guests" = 1 ] && [ "$module_built" = 1 ] && need_debug; then
	step "build: debug kernel"
	start_debug_kernel
	echo "started in the background ($logs/debug-kernel.log)"
fi

moduledbg_built=0
dbg_ok=0
debug_kernel_finish() {
	local t rc
	[ -n "$dbg_pid" ] || return 0
	step "build: debug kernel"
	t=$EPOCHSECONDS
	wait "$dbg_pid"
	rc=$?
	dbg_pid=""
	if [ "$rc" = 0 ]; then
		dbgdir=$(tail -n 1 "$logs/debug-kernel.log")
		echo "ok: $(cat "$dbgdir/release") ($(took "$dbg_t0") since its start, $(took "$t") waited)"
		dbg_ok=1
		grep -E '^debug-kernel: (built|.* is cached)' "$logs/debug-kernel.log" | sed 's/^/     /'
		case_result debug-kernel pass
		step "build: sroce.ko debug"
		t=$EPOCHSECONDS
		if cached bash tools/kbuild.sh "$dbgdir/build" -j "$(nproc)" SROCE_KTEST=m >"$logs/module-debug.log" 2>&1 &&
			! grep -qE '(warning|error):' "$logs/module-debug.log"; then
			echo "ok ($(took "$t"))"
			case_result module-debug pass
			moduledbg_built=1
		else
			echo "FAILED ($(took "$t"), $logs/module-debug.log)"
			grep -iE 'error|warning' "$logs/module-debug.log" | head -n 20 | sed 's/^/     /'
			case_result module-debug fail
		fi
	else
		echo "FAILED ($(took "$t"), $logs/debug-kernel.log)"
		tail -n 20 "$logs/debug-kernel.log" | sed 's/^/     /'
		case_result debug-kernel fail
	fi
}

# rig_targets: the CMake targets the guests and the rig use (the provider,
# the tools, the rig's helpers), not the host's unit tests and fuzzers
# (GoogleTest and sanitizer builds: more than half of the tree's compile
# time), which step 3 builds at nice 19 beside the guests when they
# follow.
rig_targets() {
	cmake --build build --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p' |
		grep -vE '_tests$|_tests_asan$|_asan$|_fuzz$|\.|^(all|clean|depend|edit_cache|rebuild_cache|test|install.*|list_install_components)$'
}

step "build: cmake (provider, tests)"
t=$EPOCHSECONDS
cmake_ok=0
parts=()
[ -f provider/CMakeLists.txt ] && parts+=(provider)
[ -f tests/CMakeLists.txt ] && parts+=(unit-tests)
[ -f tools/CMakeLists.txt ] && parts+=(tools)
if [ ! -f CMakeLists.txt ]; then
	echo "SKIP (no CMakeLists.txt)"
	case_result cmake skip
elif cached make -s build/Makefile >"$logs/cmake.log" 2>&1 &&
	mapfile -t rig_tg < <(rig_targets) &&
	cached cmake --build build -j "$(nproc)" --target "${rig_tg[@]}" >>"$logs/cmake.log" 2>&1; then
	echo "ok: ${parts[*]:-nothing to build yet} ($(took "$t"); the unit tests build with step 3)"
	case_result cmake pass
	cmake_ok=1
else
	build_failed cmake "$logs/cmake.log" error
fi
[ -f provider/CMakeLists.txt ] || echo "   (provider: not in the tree yet, skipped)"
[ -f tests/CMakeLists.txt ] || echo "   (host unit tests: not in the tree yet, skipped)"

# --- 3. unit tests ------------------------------------------------------------
# Steps 3, 4 and 4b check the tree on the host alone. When guest suites
# follow, they run at nice 19 in the background, as the debug kernel's
# build does: they take the CPU the suites leave idle (the stock suites
# keep some 72% of two cores busy) and yield at once to the guests; their
# lines are printed after the stock suites (before the debug kernel's).
# Alone they took some 200 s of a run (ctest 26, lint 125, dkms 52).
# host_checks [NICE]: run them, each log in $logs, each duration in
# $logs/NAME.took; ctest's exit status in $logs/ctest.rc.
host_checks() {
	local n=${1:-0} t0
	t0=$EPOCHSECONDS
	if [ "$cmake_ok" = 1 ]; then
		if ! cached nice -n "$n" cmake --build build -j "$(nproc)" >"$logs/unit-build.log" 2>&1; then
			{
				echo "the unit tests did not build ($logs/unit-build.log):"
				grep -E 'error' "$logs/unit-build.log" | head -n 20
			} >"$logs/ctest.log"
			echo 1 >"$logs/ctest.rc"
		else
			(cd build && nice -n "$n" ctest --output-on-failure --timeout 600 -j "$(nproc)") \
				>"$logs/ctest.log" 2>&1
			echo $? >"$logs/ctest.rc"
		fi
	fi
	echo $((EPOCHSECONDS - t0)) >"$logs/ctest.took"
	t0=$EPOCHSECONDS
	nice -n "$n" bash tools/lint.sh >"$logs/lint.log" 2>&1
	echo $((EPOCHSECONDS - t0)) >"$logs/lint.took"
	t0=$EPOCHSECONDS
	nice -n "$n" bash tools/dkms.sh test >"$logs/dkms.log" 2>&1
	echo $((EPOCHSECONDS - t0)) >"$logs/dkms.took"
}

# took_file NAME: "N s" from $logs/NAME.took (the check's own time).
took_file() {
	echo "$(cat "$logs/$1.took" 2>/dev/null || echo '?') s"
}

# report_host_checks [NOTE]: the lines of steps 3, 4 and 4b from their logs.
report_host_checks() {
	local note=${1:-} rc total nfail ntotal nskip npass name
	step "unit: ctest"
	if [ "$cmake_ok" != 1 ]; then
		echo "SKIP (nothing built)"
		case_result ctest skip
	else
		read -r rc <"$logs/ctest.rc"
		total=$(sed -n 's/.*tests passed, \([0-9]\+\) tests\{0,1\} failed out of \([0-9]\+\).*/\1 \2/p' "$logs/ctest.log")
		if grep -q 'No tests were found' "$logs/ctest.log"; then
			echo "SKIP (no tests registered yet)"
			case_result ctest skip
		elif [ -z "$total" ]; then
			echo "FAILED (ctest exit $rc, no summary; $logs/ctest.log)"
			tail -n 20 "$logs/ctest.log" | sed 's/^/     /'
			case_result ctest fail "no summary"
		else
			read -r nfail ntotal <<<"$total"
			nskip=$(grep -cE '\*\*\*Skipped|  Skipped ' "$logs/ctest.log")
			npass=$((ntotal - nfail - nskip))
			passed=$((passed + npass))
			skipped=$((skipped + nskip))
			failed=$((failed + nfail))
			while read -r name; do
				failures+=("ctest: $name")
			done < <(sed -n 's/^ *[0-9]\+ - \(.*\) (.*)$/\1/p' "$logs/ctest.log")
			echo "$npass passed, $nfail failed, $nskip skipped ($(took_file ctest)$note)"
			if [ "$nfail" != 0 ]; then
				sed -n '/The following tests FAILED/,$p' "$logs/ctest.log" | head -n 20 | sed 's/^/     /'
			fi
		fi
	fi

	step lint
	count_ktap lint "$logs/lint.log"
	echo "$summary ($(took_file lint)$note)"
	grep -E '^(ok|not ok) ' "$logs/lint.log" | sed 's/^/     /'
	if grep -q '^not ok' "$logs/lint.log"; then
		grep '^# ' "$logs/lint.log" | head -n 30 | sed 's/^/     /'
	fi

	step dkms
	count_ktap dkms "$logs/dkms.log"
	echo "$summary ($(took_file dkms)$note)"
	grep -E '^# dkms status:' "$logs/dkms.log" | sed 's/^# /     /'
	grep -q '^not ok' "$logs/dkms.log" && show_failures "$logs/dkms.log"
}


host_pid=""
if [ "$guests" = 1 ]; then
	step "checks: unit, lint, dkms"
	host_checks 19 &
	host_pid=$!
	echo "started in the background at nice 19 (reported after the guests)"
else
	host_checks
	report_host_checks
fi

# --- 4. rig self-tests --------------------------------------------------------
if [ "$rig" = 1 ] && [ "$guests" = 1 ]; then
	step "rig self-tests"
	t=$EPOCHSECONDS
	# Not beside lint and dkms: tried, lint took 243 s instead of 125
	# (its sparse builds and the guests share two cores), the three
	# together 295 s instead of 309, and a guest of the boot-hang case,
	# whose limit is 20 s, did not reach userspace in 20 s twice.
	bash tools/vm/selftest.sh >"$logs/rig-selftest.log" 2>&1
	count_ktap rig "$logs/rig-selftest.log"
	echo "$summary ($(took "$t"))"
	grep -q '^not ok' "$logs/rig-selftest.log" && show_failures "$logs/rig-selftest.log"
fi

# The rig's canaries on the debug kernel (shard 3, with the rig's other
# self-tests, once the debug kernel is built): each bug that kernel is there
# to catch must fail its run with its detector's reason. Two debug guests
# side by side: 96 s on an idle host (240 s is its estimate for the
# budget). After the one-guest lanes, by themselves: the lanes keep both
# cores busy now that the debug kernel's one-guest tests run in its pair
# boot, and beside them they would make four guests on two cores.
canary_pid=""
rig_canaries_start() {
	local est=240
	canary_t0=$EPOCHSECONDS
	if over_budget "$est"; then
		echo "budget: about $est s from $((EPOCHSECONDS - t_start)) s, budget $budget s" \
			>"$logs/rig-canaries.skip"
		return
	fi
	bash tools/vm/selftest.sh -k debug --canaries >"$logs/rig-canaries.log" 2>&1 &
	canary_pid=$!
}
rig_canaries_report() {
	step "rig canaries: debug kernel"
	if [ -e "$logs/rig-canaries.skip" ]; then
		echo "NOT RUN ($(cat "$logs/rig-canaries.skip"))"
		case_result "rig: canaries on the debug kernel" fail "not run: budget"
		return
	fi
	wait "$canary_pid"
	count_ktap rig "$logs/rig-canaries.log"
	echo "$summary ($(took "$canary_t0"))"
	grep -q '^not ok' "$logs/rig-canaries.log" && show_failures "$logs/rig-canaries.log"
}

# --- 5. guest runs ------------------------------------------------------------

# The runs of tools/placement.sh: RUN's report label, its tools/vm/suite.sh
# arguments (word-split: no spaces inside one) and whether the sroce.ko it
# needs was built. The debug kernel's runs are shorter where a test says so
# (SROCE_SHORT=1: sroce_ctrl_removal and hostile_rings leave out steps or
# rounds whose kernel paths other steps or tests take there; one object
# loop after the warm-up; 2000 round trips for transfers that only have to
# outlast a check).
dbg_env="-e SROCE_CTRL_OBJECT_LOOPS=1 -e SROCE_LONG_ITERS=2000 -e SROCE_SHORT=1"
run_label() {
	case "$1" in
	stock) echo sroce-sroce-stock ;;
	stock-1) echo sroce-stock-1 ;;
	smp2) echo sroce-sroce-smp2 ;;
	6.12) echo sroce-sroce-6.12 ;;
	6.12-1) echo sroce-6.12-1 ;;
	6.12-rxe) echo sroce-rxe-6.12 ;;
	cross) echo sroce-sroce-6.1-6.12 ;;
	debug) echo sroce-sroce-debug ;;
	debug-1) echo sroce-debug-1 ;;
	*) echo "$1" ;;
	esac
}
run_args() {
	case "$1" in
	stock) echo sroce-sroce ;;
	stock-1) echo sroce ;;
	smp2) echo --smp 2 sroce-sroce ;;
	6.12) echo -k "$KERNEL_612" sroce-sroce ;;
	6.12-1) echo -k "$KERNEL_612" sroce ;;
	6.12-rxe) echo -k "$KERNEL_612" sroce-rxe ;;
	cross) echo --kernel-b "$KERNEL_612" sroce-sroce ;;
	debug) echo -k debug "$dbg_env" sroce-sroce ;;
	debug-1) echo -k debug "$dbg_env" sroce ;;
	*) echo "$1" ;;
	esac
}
run_built() {
	case "$1" in
	6.12 | 6.12-1 | 6.12-rxe) echo "$module612_built" ;;
	cross) [ "$module_built" = 1 ] && [ "$module612_built" = 1 ] && echo 1 || echo 0 ;;
	debug | debug-1) echo "$moduledbg_built" ;;
	rxe-rxe) echo 1 ;;
	*) echo "$module_built" ;;
	esac
}


# Measured times, for the budget: each run's tests' times ("TEST SECONDS",
# and "boot SECONDS" for the rest of the run: boots, scans, checks) from
# the last run of that label on this machine, in $times_dir/LABEL; where
# there is none, a test's "# timeout:" / 3 (its limit is about three times
# its time on its slowest kernel) and a boot of 60 s (240 s on the debug
# kernel: its boot and KMEMLEAK's scans).
times_dir=${SROCE_TIMES_DIR:-/var/cache/sroce/times}
mkdir -p "$times_dir" 2>/dev/null || times_dir=$logs/times
mkdir -p "$times_dir"
test_limit() {
	local l
	l=$(sed -n 's/^# timeout: \([0-9]\+\)$/\1/p' "selftests/$1" 2>/dev/null | head -n 1)
	echo "${l:-240}"
}
# estimate LABEL "A.sh,B.sh" [SOLO_A SOLO_B]: seconds; with the one-guest
# lists of a pair run (guest_run), the longer of them counts.
# (The debug pair run's one-guest lists fall back on the times of the
# one-guest rigs sroce-debug-1, -2 of older trees; its own record wins.)
estimate() {
	local label=$1 s sum boot=60 rec=$times_dir/$1 recs a b
	[[ "$label" == *debug* ]] && boot=240
	recs=("$rec")
	[ "$label" = sroce-sroce-debug ] && recs=("$times_dir"/sroce-debug-? "$rec")
	s=$(awk '$1 == "boot" { print $2 }' "$rec" 2>/dev/null)
	sum=${s:-$boot}
	test_sum() {
		local tt t=0
		for tt in ${1//,/ }; do
			s=$(awk -v t="${tt%.sh}" '$1 == t { v = $2 } END { print v }' "${recs[@]}" 2>/dev/null)
			t=$((t + ${s:-$(($(test_limit "$tt") / 3))}))
		done
		echo "$t"
	}
	a=$(test_sum "${3:-}")
	b=$(test_sum "${4:-}")
	echo $((sum + $(test_sum "$2") + (a > b ? a : b)))
}
# record_times LABEL: keep the times of the run that just ended (its log).
record_times() {
	local label=$1 log=$logs/suite-$1.log start end total sum
	read -r start end <"$logs/suite-$label.when" 2>/dev/null || return 0
	total=$((end - start))
	sed -n 's/^ *# \([a-z0-9_]*\): \([0-9]*\) s; memory after.*/\1 \2/p' "$log" >"$logs/times-$label"
	[ -s "$logs/times-$label" ] || return 0
	# The tests' time: the pair tests', and the longer of the one-guest
	# lists the guests ran side by side ("(one guest, a)").
	sum=$(sed -n 's/^ *# [a-z0-9_]*: \([0-9]*\) s; memory after.*(one guest, \([ab]\))$/\2 \1/p
		s/^ *# [a-z0-9_]*: \([0-9]*\) s; memory after.*[^)]$/- \1/p' "$log" |
		awk '{ t[$1] += $2 } END { print t["-"] + (t["a"] > t["b"] ? t["a"] : t["b"]) }')
	echo "boot $((total > sum ? total - sum : 0))" >>"$logs/times-$label"
	# Tests of this label not run this time keep their old times.
	[ -f "$times_dir/$label" ] && awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen)' \
		"$logs/times-$label" "$times_dir/$label" >>"$logs/times-$label"
	cp "$logs/times-$label" "$times_dir/$label" 2>/dev/null || true
}

# run_limit "A.sh,..." [SOLO_A SOLO_B]: whole-run limit: the sum of its
# tests' limits plus boot (suite.sh's own default), but never past the
# budget, so that a hung run still leaves the summary inside CI's time.
run_limit() {
	local tt lim=240 left a=0 b=0 solo_a=${2:-} solo_b=${3:-}
	for tt in ${1//,/ }; do
		lim=$((lim + $(test_limit "$tt") + 15))
	done
	# The one-guest lists of a pair run side by side: the longer counts.
	for tt in ${solo_a//,/ }; do a=$((a + $(test_limit "$tt") + 15)); done
	for tt in ${solo_b//,/ }; do b=$((b + $(test_limit "$tt") + 15)); done
	lim=$((lim + (a > b ? a : b)))
	if [ "$budget" -gt 0 ]; then
		left=$((budget - (EPOCHSECONDS - t_start)))
		[ "$left" -lt 60 ] && left=60
		[ "$left" -lt "$lim" ] && lim=$left
	fi
	echo "$lim"
}

# over_budget EST [AFTER]: true when a run of EST seconds, started AFTER
# seconds from now (0), would end past the budget.
over_budget() {
	[ "$budget" -gt 0 ] || return 1
	[ $((EPOCHSECONDS - t_start + ${2:-0} + $1)) -gt "$budget" ]
}

# not_run LABEL "A.sh,B.sh" WHY: the run was not started; each test fails.
not_run() {
	local tt
	echo "NOT RUN ($3)"
	for tt in ${2//,/ }; do
		case_result "$1: ${tt%.sh}" fail "not run: $3"
	done
}

# guest_run RUN [SOLO_RUN]: one boot for RUN's tests, reported as its
# label; with SOLO_RUN (a one-guest run of the same kernel), its tests go
# into the same boot, split in two lists that the two guests run side by
# side before the pair tests (tools/vm/suite.sh --solo-a, --solo-b).
guest_run() {
	local run=$1 label tests est solo="" halves=("" "")
	tests=$(run_tests "$run")
	[ -n "$tests" ] || return 0
	label=$(run_label "$run")
	[ -n "${2:-}" ] && solo=$(run_tests "$2")
	step "guests: $label"
	t=$EPOCHSECONDS
	if [ "$(run_built "$run")" != 1 ]; then
		echo "SKIP (the sroce.ko it needs was not built)"
		case_result "suite $label" skip
		return
	fi
	[ -n "$solo" ] && mapfile -t halves < <(split_tests "$solo" "$label")
	est=$(estimate "$label" "$tests" "${halves[0]}" "${halves[1]:-}")
	if over_budget "$est"; then
		not_run "$label" "$tests${solo:+,$solo}" "budget: about $est s, $((budget - (EPOCHSECONDS - t_start))) s left of $budget"
		return
	fi
	# shellcheck disable=SC2046 # the run's arguments, word-split
	bash tools/vm/suite.sh -t "$(run_limit "$tests" "${halves[0]}" "${halves[1]:-}")" --tests "$tests" \
		${solo:+--solo-a "${halves[0]}" --solo-b "${halves[1]:-}"} $(run_args "$run") \
		>"$logs/suite-$label.log" 2>&1
	local rc=$?
	echo "$t $EPOCHSECONDS" >"$logs/suite-$label.when"
	suite_result "$label" "$rc"
	record_times "$label"
}

# suite_result LABEL RC [NOTE [PLACED]]: count and print the results of a
# suite's log; PLACED 0 for a whole suite (not a run of placements).
suite_result() {
	local label=$1 rc=$2 note=${3:-} placed=${4:-1} log=$logs/suite-$1.log verdict name
	sed -n '/^--- suite /,$p' "$log" | tail -n +2 >"$logs/suite-$label.ktap"
	count_ktap "$label" "$logs/suite-$label.ktap"
	verdict=$(grep -m 1 -E '^rig: (PASS|FAIL)' "$log" || echo "rig: no verdict (exit $rc)")
	if [ "$rc" = 0 ]; then
		case_result "$label: rig" pass
	else
		case_result "$label: rig" fail "${verdict#rig: }"
	fi
	# A test placed where its own rig_suites call (not the top-level
	# line that tools/placement.sh checks) skips it: misplaced, and so
	# run nowhere. A failure, not a skip.
	while read -r name; do
		case_result "$label: $name" fail "placed in a run its rig_suites call skips (tools/placement.sh)"
	done < <([ "$placed" = 0 ] ||
		sed -n 's/^ok [0-9]* \([a-z0-9_]*\) # SKIP covered by suites.*/\1/p' "$logs/suite-$label.ktap")
	echo "$summary ($((${t_end:-$EPOCHSECONDS} - t)) s$note)"
	t_end=""
	echo "     $verdict"
	grep -E '^rig: guest .: (userspace .*guest uptime|no userspace)' "$log" | sed 's/^/     /'
	[ "$rc" = 0 ] || show_failures "$logs/suite-$label.ktap"
}

# The one-guest runs, in two lanes side by side (a one-guest test in a
# pair would keep one of CI's two cores idle with guest b). Each lane runs
# its rigs one after the other; the rigs go to the lanes longest first,
# each to the lane that ends sooner. The debug kernel's one-guest tests
# (debug-1) are not here when that kernel has a pair run: they go into its
# boot, each guest a half (guest_run debug debug-1; the gate always has
# debug pair tests, so a debug-1 lane is left only for a tree without).
# Measured before: as a lane of its own, debug-1 took 586-773 s (its boot
# and KMEMLEAK's scans 161 s of it) while the other lane's stock-1 and
# 6.12-1 ended after 237-308 s, and the debug pair started only then.
# Tried and taken back: a one-guest rig beside a pair run (three busy
# guests on two cores: the one-guest rig's control tests took 2.5 times as
# long).
# split_tests "A.sh,B.sh,..." LABEL: two comma lists on two lines, longest
# first into the shorter.
split_tests() {
	local tt s a="" b="" sa=0 sb=0 boot
	# estimate() counts a boot with the tests: once per test here, not.
	boot=$(estimate "$2" "")
	for tt in ${1//,/ }; do
		s=$(estimate "$2" "$tt")
		echo "$((s - boot)) $tt"
	done | sort -rn | {
		while read -r s tt; do
			if [ "$sa" -le "$sb" ]; then
				a+="${a:+,}$tt"
				sa=$((sa + s))
			else
				b+="${b:+,}$tt"
				sb=$((sb + s))
			fi
		done
		echo "$a"
		echo "$b"
	}
}

one_guest_lanes() {
	local run r i label tests lane0=0 lane1=0 start order
	local -a lane_of=() est_of=() labels=() testss=() argss=() built=() pids=()
	for run in stock-1 6.12-1 debug-1; do
		tests=$(run_tests "$run")
		[ -n "$tests" ] || continue
		[ "$run" = debug-1 ] && [ -n "$(run_tests debug)" ] && continue
		label=$(run_label "$run")
		labels+=("$label")
		testss+=("$tests")
		argss+=("$(run_args "$run")")
		built+=("$(run_built "$run")")
	done
	[ ${#labels[@]} -gt 0 ] || return 0
	# Longest first, each to the lane that ends sooner; a rig that would
	# end past the budget there is not started (and takes no lane time).
	for r in "${!labels[@]}"; do
		est_of[r]=$(estimate "${labels[r]}" "${testss[r]}")
	done
	order=$(for i in "${!labels[@]}"; do echo "${est_of[i]} $i"; done | sort -rn | cut -d' ' -f2)
	for r in $order; do
		[ "${built[r]}" = 1 ] || continue
		if [ "$lane0" -le "$lane1" ]; then i=0 start=$lane0; else i=1 start=$lane1; fi
		if over_budget "${est_of[r]}" "$start"; then
			echo "budget: about ${est_of[r]} s from $((EPOCHSECONDS - t_start + start)) s, budget $budget s" \
				>"$logs/suite-${labels[r]}.skip"
			continue
		fi
		lane_of[r]=$i
		if [ "$i" = 0 ]; then lane0=$((lane0 + est_of[r])); else lane1=$((lane1 + est_of[r])); fi
	done
	# lane N: its rigs longest first, each started with a limit that ends
	# at the budget.
	run_lane() {
		local n=$1 r t0
		for r in $order; do
			[ "${lane_of[r]:-}" = "$n" ] || continue
			t0=$EPOCHSECONDS
			rm -rf "$repo/out/vm/suites/${labels[r]}"
			# Each its own run folder: two suite.sh of one suite
			# started together both tidy and relink the suite's
			# default folders.
			# shellcheck disable=SC2046 # the arguments, word-split
			bash tools/vm/suite.sh -o "$repo/out/vm/suites/${labels[r]}" \
				-t "$(run_limit "${testss[r]}")" --tests "${testss[r]}" ${argss[r]} \
				>"$logs/suite-${labels[r]}.log" 2>&1
			echo $? >"$logs/suite-${labels[r]}.rc"
			echo "$t0 $EPOCHSECONDS" >"$logs/suite-${labels[r]}.when"
		done
	}
	run_lane 0 &
	pids+=($!)
	run_lane 1 &
	pids+=($!)
	wait "${pids[@]}"
	for r in "${!labels[@]}"; do
		step "guests: ${labels[r]}"
		if [ "${built[r]}" != 1 ]; then
			echo "SKIP (the sroce.ko it needs was not built)"
			case_result "suite ${labels[r]}" skip
			continue
		fi
		if [ -e "$logs/suite-${labels[r]}.skip" ]; then
			not_run "${labels[r]}" "${testss[r]}" "$(cat "$logs/suite-${labels[r]}.skip")"
			continue
		fi
		read -r t t_end <"$logs/suite-${labels[r]}.when"
		suite_result "${labels[r]}" "$(cat "$logs/suite-${labels[r]}.rc")" \
			"; lane $((lane_of[r] + 1)), from $((t - t_start)) s"
		record_times "${labels[r]}"
	done
}

# whole_suite SUITE: the suite with every test (--suites, --rxe-rxe).
whole_suite() {
	step "guests: $1"
	t=$EPOCHSECONDS
	if [[ "$1" == *sroce* ]] && [ "$module_built" != 1 ]; then
		echo "SKIP (sroce.ko was not built)"
		case_result "suite $1" skip
		return
	fi
	bash tools/vm/suite.sh "$1" >"$logs/suite-$1.log" 2>&1
	suite_result "$1" $? "" 0
}


if [ "$guests" = 1 ] && [ ${#whole_suites[@]} -gt 0 ]; then
	for s in "${whole_suites[@]}"; do
		whole_suite "$s"
	done
elif [ "$guests" = 1 ]; then
	for run in stock smp2 sroce-rxe rxe-sroce 6.12 6.12-rxe cross; do
		guest_run "$run"
	done
	[ "$rxe_rxe" = 1 ] && whole_suite rxe-rxe

	# --- 6. benchmark smoke ----------------------------------------------
	# "make bench" in its smallest form: it must run and produce every
	# number and the plot; no number is judged (Documentation/benchmark.rst).
	# It acts as if the link stopped after step 3: the guests must be booted
	# again and the run go on from that step, every cell still measured.
	step "bench: smoke"
	t=$EPOCHSECONDS
	if [ "$module_built" != 1 ] || [ "$cmake_ok" != 1 ]; then
		echo "SKIP (sroce.ko or the provider was not built)"
		case_result bench-smoke skip
	elif over_budget "$(awk '$1 == "total" { print $2 }' "$times_dir/bench-smoke" 2>/dev/null || echo 150)"; then
		echo "NOT RUN (budget)"
		case_result bench-smoke fail "not run: budget"
	elif bash tools/bench/bench.sh --smoke --test-link-stop 3 -o "$logs/bench-smoke" \
		>"$logs/bench-smoke.log" 2>&1; then
		echo "ok ($(took "$t"))"
		echo "total $((EPOCHSECONDS - t))" >"$times_dir/bench-smoke"
		case_result bench-smoke pass
	else
		echo "FAILED ($(took "$t"), $logs/bench-smoke.log)"
		tail -n 15 "$logs/bench-smoke.log" | sed 's/^/     /'
		# Its reason in the summary at the end, which CI shows.
		case_result bench-smoke fail "$(awk '/^bench: error: /; /^bench: failed cells/ { getline
			print "first failed cell:" $0 }' "$logs/bench-smoke.log" | tr '\n' ' ' | cut -c1-240)"
	fi

	# --- 7. one-guest runs, then the debug kernel's pair ------------------
	# (The host checks go on beside them at nice 19: waiting for them
	# here left the guests idle for 150 s when ccache was cold.)
	need_debug && debug_kernel_finish
	one_guest_lanes
	if [ "$rig" = 1 ] && [ "$dbg_ok" = 1 ]; then
		rig_canaries_start
		rig_canaries_report
	fi
	guest_run debug debug-1
fi
if [ -n "$host_pid" ]; then
	wait "$host_pid"
	report_host_checks ", at nice 19 beside the guests"
fi

echo
# When each step's line began, in seconds from the start: for the one-guest
# lanes, when the step before had ended.
echo "test-all: timeline: ${timeline}end $((EPOCHSECONDS - t_start))" | fold -s -w 120
echo "test-all: slowest tests (s): $(slowest_tests)" | fold -s -w 120
echo "test-all: ran $tiers_why; budget ${budget:-0} s (0: none)"
echo "test-all: $(took "$t_start") in all, logs in $logs"
[ -z "${deadline_pid:-}" ] || kill "$deadline_pid" 2>/dev/null
if [ ${#failures[@]} -gt 0 ]; then
	echo "test-all: failed:"
	printf '   %s\n' "${failures[@]}"
fi
[ "$skipped" = 0 ] || echo "test-all: $skipped skipped (not counted as passed)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
