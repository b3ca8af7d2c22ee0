#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Every test of the project, in order (what "make test" and .ci/run run):
#   1. setup        tools/setup.sh (installs missing Debian packages)
#   2. build        sroce.ko for the guest kernel, then the CMake tree
#                   (provider, host unit tests); parts not in the tree yet
#                   are reported as skipped, not built
#   3. unit         ctest in build/ (one case per test)
#   4. lint         tools/lint.sh (one case per check)
#   5. rig          tools/vm/selftest.sh: the test rig's own self-tests
#   6. guests       tools/vm/suite.sh for each suite in GUEST_SUITES
#                   (sroce-rxe, rxe-sroce; rxe-rxe with --rxe-rxe; one
#                   case per KTAP test line, plus the rig's verdict);
#                   then sroce-sroce on 6.12 LTS guests (the tests in
#                   TESTS_612), sroce-rxe on 6.12 (TESTS_612_RXE: RDMA
#                   FLUSH, which rxe offers from 6.2 on) and a 6.1 guest
#                   against a 6.12 guest (TESTS_CROSS)
#   7. bench        tools/bench/bench.sh --smoke: the benchmark runs and
#                   produces every number (none is judged)
#   8. debug        sroce-sroce on the debug kernel (KASAN, lockdep,
#                   KMEMLEAK, UBSAN...: tools/vm/debug-kernel.sh, cached;
#                   when it is not, it builds in the background from
#                   step 2 on): every test but those in TESTS_STOCK (run
#                   on the stock 6.1 kernel in step 6, sroce-sroce-stock)
#                   and TESTS_SMP, then the tests in TESTS_SMP there with
#                   two vCPUs per guest; with --no-debug sroce-sroce runs
#                   whole on the stock 6.1 kernel in step 6
#   (after lint)    dkms: tools/dkms.sh test builds sroce with DKMS for
#                   every installed kernel in a private DKMS tree
# Prints a result per step and ends with "N passed, N failed"; exits
# non-zero when anything failed.
#
#   tools/test-all.sh [--no-guests] [--no-rig] [--no-6.12] [--no-debug]
#                     [--rxe-rxe] [--suites "sroce-sroce ..."]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo" || exit 1

# Guest suites, each one boot of a guest pair (tools/vm/suite.sh SUITE runs
# selftests/ with device TYPE_A in guest a and TYPE_B in guest b). A suite
# that needs sroce is skipped while sroce.ko is not built. To add one, add
# its name here, e.g. sroce-sroce or sroce-rxe.
# rxe-rxe (every test on rdma_rxe alone: a check of the tests, not of
# sroce) runs with --rxe-rxe or "make test-rxe".
GUEST_SUITES=(sroce-sroce sroce-rxe rxe-sroce)
# The second LTS kernel: a shorter sroce-sroce run on 6.12 guests, and the
# RC tests between a 6.1 guest (a) and a 6.12 guest (b). README names them.
# The 6.12 list is short for CI's time; "tools/vm/suite.sh -k 6.12
# sroce-sroce" runs (and passes) the whole suite there.
KERNEL_612=6.12
# The 6.12 list: the tests of code that differs between the kernels (the
# core's API: links, objects, invalid verbs, memcg accounting, rdma_cm,
# rdma-core's suite, RDMA FLUSH, namespaces, bonds and VLANs, restrack's
# SRQ hook, NVMe-oF's host and target under load, teardown and resets) and the
# timers (tail probe, delayed ACK). What the kernels
# share (counters, tracepoints, debugfs, message sizes, loss recovery)
# runs on 6.1. Namespaces: sroce_ctrl_netns and its exclusive mode take
# netns_pair's paths (as on the debug kernel).
TESTS_612="link.sh rc_integrity.sh rc_errors.sh rc_flush.sh sroce_ctrl_invalid.sh
	sroce_ctrl_link.sh sroce_ctrl_objects.sh ring_memcg.sh rdma_cm.sh rdma_core_suite.sh
	rc_tail_loss.sh rc_ack_delay.sh sroce_ctrl_netns.sh sroce_ctrl_netns_exclusive.sh
	sroce_ctrl_bond.sh vlan.sh res_details.sh device_memory.sh odp.sh xrc.sh
	nvmeof_fio.sh nvmeof_teardown.sh nvmeof_ctrl.sh"
# Against rxe on 6.12: RDMA FLUSH (rxe has it from 6.2 on) and the basic
# RC exchange. VLANs and namespaces against rxe run on 6.1 (sroce-rxe);
# sroce's own 6.12 code for them runs in TESTS_612.
TESTS_612_RXE="rc_flush.sh rc_integrity.sh"
# Races between CPUs (a window bind against deregistration, ring flag
# updates, the tail probe's and the delayed ACK's timers against the
# requester and the ACKs) need
# guests with two vCPUs: these run on the debug kernel with --smp 2
# (sroce-sroce-debug-smp2) instead of in the one-vCPU debug run, which has
# every other test.
TESTS_SMP="stress.sh hostile_rings.sh rc_tail_loss.sh rc_ack_delay.sh"
# The debug kernel runs a test 3 to 5 times slower than the stock one
# (measured: the whole suite 875 s on stock 6.1, some 2700 s on the debug
# kernel). These run on the stock 6.1 kernel instead (sroce-sroce-stock),
# to keep CI within its time: the tests that measure (perftest, the busy
# poll's latency, the soak), msg_size's 2 GiB SEND (6 minutes with
# KASAN), and tests whose kernel paths the debug run takes through other
# tests: netns_pair (sroce_ctrl_netns, sroce_ctrl_netns_exclusive), the
# pingpongs (the rc_integrity tests, with every byte checked), two of the
# rc_integrity variants (path MTU and sizes) and its host-only selfcheck,
# the comparison with rxe; the block storage tests under fio (the stack
# above sroce is the kernel's; nvmeof.sh runs the NVMe-oF path on the
# debug kernel, and the debug kernel has no LIO target).
TESTS_STOCK="tcp_bw.sh write_bw.sh read_bw.sh send_lat.sh atomic_bw.sh perf_matrix.sh
	rc_busy_poll.sh rc_soak.sh msg_size.sh netns_pair.sh rc_pingpong.sh uc_pingpong.sh
	srq_pingpong.sh rc_integrity_mtu1024.sh rc_integrity_large.sh rc_integrity_selfcheck.sh
	sroce_ctrl_vs_rxe.sh domains.sh nvmeof_fio.sh nvmeof_teardown.sh nvmeof_ctrl.sh srp.sh iser.sh
	srp_teardown.sh iser_teardown.sh"
TESTS_CROSS="rc_integrity.sh rc_flush.sh"
# On the debug kernel the tests that need only one guest (their rig_suites
# line names the one-guest suite "sroce") run in two one-guest rigs side by
# side, then the two-guest tests in a pair: a one-guest test in the pair
# keeps one of CI's two cores busy while the other guest idles (they took
# 1220 s of the debug run's 2513 s at 26678d9, one after the other). The
# tests here go to the second one-guest rig, every other one to the
# first: about half of that time each. Measured at 071115f: both rigs
# done in 670 s, each test as long as in the pair (sroce_ctrl_netns took
# 148 s, was 154; sroce_ctrl_bond 121, was 131); the debug kernel's
# three steps took 2240 s instead of 2957.
TESTS_SOLO2="sroce_ctrl_netns.sh sroce_ctrl_removal.sh sroce_ctrl_link.sh
	sroce_ctrl_objects.sh sroce_ctrl_two_devs.sh sroce_ctrl_rename.sh
	sroce_ctrl_port.sh sroce_ctrl_devinfo.sh sroce_ctrl_invalid.sh"

guests=1
rig=1
with612=1
debug=1
while [ $# -gt 0 ]; do
	case "$1" in
	--no-guests) guests=0 ;;
	--no-rig) rig=0 ;;
	--no-6.12) with612=0 ;;
	--no-debug) debug=0 ;;
	--rxe-rxe) GUEST_SUITES=(rxe-rxe "${GUEST_SUITES[@]}") ;;
	--suites) read -ra GUEST_SUITES <<<"${2?}"; shift ;;
	-h | --help) sed -n '3,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "test-all: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

logs=$repo/out/test-all
rm -rf "$logs"
mkdir -p "$logs"
passed=0
failed=0
skipped=0
failures=()
t_start=$EPOCHSECONDS

step() { printf '== %-28s ' "$1"; }
took() { echo "$((EPOCHSECONDS - $1)) s"; }

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
			[ -n "$why" ] || why=$(cut -c3-160 <<<"$line")
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

# show_failures FILE: the failed KTAP lines and their diagnostics.
show_failures() {
	grep -E '^(not ok|# )' "$1" | grep -vE '^#   ' | tail -n 40 | sed 's/^/     /'
}

# --- 1. setup ---------------------------------------------------------------
step setup
t=$EPOCHSECONDS
if bash tools/setup.sh --quiet >"$logs/setup.log" 2>&1; then
	echo "ok ($(took "$t"))"
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
elif make -s module KDIR="/lib/modules/$guest_kernel/build" >"$logs/module.log" 2>&1; then
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
	elif bash tools/kbuild.sh "/lib/modules/$kver612/build" >"$logs/module-6.12.log" 2>&1 &&
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

# The debug guest kernel (tools/vm/debug-kernel.sh: built once from
# linux-source-6.1 and cached outside the repo) and sroce.ko for it. A
# kernel not cached yet (a fresh machine: 10 minutes on 2 cores) builds in
# the background at nice 19 while the steps and suites that do not need it
# run: it takes the CPU they leave idle (lint and checkpatch are one
# process, a guest often waits for its peer) and yields at once to them.
# The debug suites run last, after debug_kernel_finish has waited for it.
dbg_pid=""
if [ "$debug" = 1 ] && [ "$guests" = 1 ] && [ "$module_built" = 1 ] &&
	[[ " ${GUEST_SUITES[*]} " == *" sroce-sroce "* ]]; then
	step "build: debug kernel"
	dbg_t0=$EPOCHSECONDS
	nice -n 19 bash tools/vm/debug-kernel.sh >"$logs/debug-kernel.log" 2>&1 &
	dbg_pid=$!
	echo "started in the background ($logs/debug-kernel.log)"
fi

moduledbg_built=0
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
		grep -E '^debug-kernel: (built|.* is cached)' "$logs/debug-kernel.log" | sed 's/^/     /'
		case_result debug-kernel pass
		step "build: sroce.ko debug"
		t=$EPOCHSECONDS
		if bash tools/kbuild.sh "$dbgdir/build" >"$logs/module-debug.log" 2>&1 &&
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
elif make -s provider >"$logs/cmake.log" 2>&1; then
	echo "ok: ${parts[*]:-nothing to build yet} ($(took "$t"))"
	case_result cmake pass
	cmake_ok=1
else
	build_failed cmake "$logs/cmake.log" error
fi
[ -f provider/CMakeLists.txt ] || echo "   (provider: not in the tree yet, skipped)"
[ -f tests/CMakeLists.txt ] || echo "   (host unit tests: not in the tree yet, skipped)"

# --- 3. unit tests ------------------------------------------------------------
step "unit: ctest"
t=$EPOCHSECONDS
if [ "$cmake_ok" != 1 ]; then
	echo "SKIP (nothing built)"
	case_result ctest skip
else
	(cd build && ctest --output-on-failure --timeout 600 -j "$(nproc)") >"$logs/ctest.log" 2>&1
	rc=$?
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
		echo "$npass passed, $nfail failed, $nskip skipped ($(took "$t"))"
		if [ "$nfail" != 0 ]; then
			sed -n '/The following tests FAILED/,$p' "$logs/ctest.log" | head -n 20 | sed 's/^/     /'
		fi
	fi
fi

# --- 4. lint ------------------------------------------------------------------
step lint
t=$EPOCHSECONDS
bash tools/lint.sh >"$logs/lint.log" 2>&1
count_ktap lint "$logs/lint.log"
echo "$summary ($(took "$t"))"
grep -E '^(ok|not ok) ' "$logs/lint.log" | sed 's/^/     /'
if grep -q '^not ok' "$logs/lint.log"; then
	grep '^# ' "$logs/lint.log" | head -n 30 | sed 's/^/     /'
fi

# --- 4b. dkms -----------------------------------------------------------------
step dkms
t=$EPOCHSECONDS
bash tools/dkms.sh test >"$logs/dkms.log" 2>&1
count_ktap dkms "$logs/dkms.log"
echo "$summary ($(took "$t"))"
grep -E '^# dkms status:' "$logs/dkms.log" | sed 's/^# /     /'
grep -q '^not ok' "$logs/dkms.log" && show_failures "$logs/dkms.log"

# --- 5. rig self-tests --------------------------------------------------------
if [ "$rig" = 1 ]; then
	step "rig self-tests"
	t=$EPOCHSECONDS
	bash tools/vm/selftest.sh >"$logs/rig-selftest.log" 2>&1
	count_ktap rig "$logs/rig-selftest.log"
	echo "$summary ($(took "$t"))"
	grep -q '^not ok' "$logs/rig-selftest.log" && show_failures "$logs/rig-selftest.log"
fi

# --- 6. guest suites ----------------------------------------------------------

# guest_suite LABEL NEEDS [SUITE.SH ARGS...] SUITE: one boot of a guest pair,
# reported as LABEL; NEEDS is 0 when the sroce.ko it needs was not built.
guest_suite() {
	local label=$1 built=$2
	shift 2
	step "guests: $label"
	t=$EPOCHSECONDS
	if [ "$built" != 1 ]; then
		echo "SKIP (sroce.ko was not built)"
		case_result "suite $label" skip
		return
	fi
	bash tools/vm/suite.sh "$@" >"$logs/suite-$label.log" 2>&1
	suite_result "$label" $?
}

# guest_suites_parallel NEEDS "LABEL|SUITE.SH ARGS..." ...: several boots at
# once (word-split arguments: no spaces inside one), reported one after
# the other when all have ended.
guest_suites_parallel() {
	local built=$1 spec label pids=() labels=() i t0=$EPOCHSECONDS
	shift
	for spec in "$@"; do
		label=${spec%%|*}
		labels+=("$label")
		if [ "$built" = 1 ]; then
			# shellcheck disable=SC2086 # the arguments, word-split
			bash tools/vm/suite.sh ${spec#*|} >"$logs/suite-$label.log" 2>&1 &
			pids+=($!)
		fi
	done
	for i in "${!labels[@]}"; do
		step "guests: ${labels[i]}"
		t=$t0
		if [ "$built" != 1 ]; then
			echo "SKIP (sroce.ko was not built)"
			case_result "suite ${labels[i]}" skip
			continue
		fi
		wait "${pids[i]}"
		suite_result "${labels[i]}" $?
	done
}

# suite_result LABEL RC: count and print the results of a suite's log.
suite_result() {
	local label=$1 rc=$2 log=$logs/suite-$1.log verdict
	sed -n '/^--- suite /,$p' "$log" | tail -n +2 >"$logs/suite-$label.ktap"
	count_ktap "$label" "$logs/suite-$label.ktap"
	verdict=$(grep -m 1 -E '^rig: (PASS|FAIL)' "$log" || echo "rig: no verdict (exit $rc)")
	if [ "$rc" = 0 ]; then
		case_result "$label: rig" pass
	else
		case_result "$label: rig" fail "${verdict#rig: }"
	fi
	echo "$summary ($(took "$t"))"
	echo "     $verdict"
	grep -E '^rig: guest .: userspace .*guest uptime' "$log" | sed 's/^/     /'
	[ "$rc" = 0 ] || show_failures "$logs/suite-$label.ktap"
}

# one_guest_test SCRIPT: true when the test's top-level rig_suites line names
# the one-guest suite "sroce" (the runner reads the same line).
one_guest_test() {
	local line
	line=$(grep -m 1 '^rig_suites ' "$1") || return 1
	[[ " ${line#rig_suites } " == *" sroce "* ]]
}

if [ "$guests" = 1 ]; then
	for s in "${GUEST_SUITES[@]}"; do
		need=1
		[[ "$s" == *sroce* ]] && need=$module_built
		# sroce-sroce runs on the debug kernel, last (below), but
		# for TESTS_STOCK.
		if [ "$s" = sroce-sroce ] && [ "$debug" = 1 ]; then
			guest_suite sroce-sroce-stock "$need" --tests "$TESTS_STOCK" sroce-sroce
			continue
		fi
		guest_suite "$s" "$need" "$s"
	done
	if [ "$with612" = 1 ]; then
		guest_suite "sroce-sroce-6.12" "$module612_built" \
			-k "$KERNEL_612" --tests "$TESTS_612" sroce-sroce
		guest_suite "sroce-rxe-6.12" "$module612_built" \
			-k "$KERNEL_612" --tests "$TESTS_612_RXE" sroce-rxe
		both=0
		[ "$module_built" = 1 ] && [ "$module612_built" = 1 ] && both=1
		guest_suite "sroce-sroce-6.1-6.12" "$both" \
			--kernel-b "$KERNEL_612" --tests "$TESTS_CROSS" sroce-sroce
	fi

	# --- 7. benchmark smoke ----------------------------------------------
	# "make bench" in its smallest form: it must run and produce every
	# number and the plot; no number is judged (Documentation/benchmark.rst).
	# It acts as if the link stopped after step 3: the guests must be booted
	# again and the run go on from that step, every cell still measured.
	step "bench: smoke"
	t=$EPOCHSECONDS
	if [ "$module_built" != 1 ] || [ "$cmake_ok" != 1 ]; then
		echo "SKIP (sroce.ko or the provider was not built)"
		case_result bench-smoke skip
	elif bash tools/bench/bench.sh --smoke --test-link-stop 3 -o "$logs/bench-smoke" \
		>"$logs/bench-smoke.log" 2>&1; then
		echo "ok ($(took "$t"))"
		case_result bench-smoke pass
	else
		echo "FAILED ($(took "$t"), $logs/bench-smoke.log)"
		tail -n 15 "$logs/bench-smoke.log" | sed 's/^/     /'
		# Its reason in the summary at the end, which CI shows.
		case_result bench-smoke fail "$(awk '/^bench: error: /; /^bench: failed cells/ { getline
			print "first failed cell:" $0 }' "$logs/bench-smoke.log" | tr '\n' ' ' | cut -c1-240)"
	fi

	# --- 8. sroce-sroce on the debug kernel --------------------------------
	if [ "$debug" = 1 ] && [[ " ${GUEST_SUITES[*]} " == *" sroce-sroce "* ]]; then
		debug_kernel_finish
		# The life-cycle loops repeat the same code paths; on the
		# debug kernel (a module load there takes seconds) two
		# rounds of link delete/add and of rmmod, and three object
		# rounds, keep CI within its time; the stock 6.12 run
		# (TESTS_612) runs both tests with the full counts. The
		# transfers that only have to outlast a check (counters.sh,
		# debugfs_faults.sh) are 10 times shorter.
		debug_tests=$(make -s --no-print-directory -C selftests list_tests |
			grep -vxF -f <(tr ' \t' '\n\n' <<<"$TESTS_SMP $TESTS_STOCK" | grep .))
		solo1="" solo2="" pair=""
		for tt in $debug_tests; do
			if ! one_guest_test "selftests/$tt"; then
				pair+="$tt "
			elif [[ " ${TESTS_SOLO2//[$'\t\n']/ } " == *" $tt "* ]]; then
				solo2+="$tt,"
			else
				solo1+="$tt,"
			fi
		done
		dbg_env="-e SROCE_CTRL_LINK_LOOPS=2 -e SROCE_CTRL_RMMOD_LOOPS=2
			-e SROCE_CTRL_OBJECT_LOOPS=3 -e SROCE_LONG_ITERS=2000"
		guest_suites_parallel "$moduledbg_built" \
			"sroce-debug-1|-k debug $dbg_env --tests ${solo1%,} sroce" \
			"sroce-debug-2|-k debug $dbg_env --tests ${solo2%,} sroce"
		# shellcheck disable=SC2086 # dbg_env: options, word-split
		guest_suite "sroce-sroce-debug" "$moduledbg_built" -k debug $dbg_env \
			--tests "$pair" sroce-sroce
		guest_suite "sroce-sroce-debug-smp2" "$moduledbg_built" -k debug --smp 2 \
			--tests "$TESTS_SMP" sroce-sroce
	fi
fi

echo
echo "test-all: $(took "$t_start") in all, logs in $logs"
if [ ${#failures[@]} -gt 0 ]; then
	echo "test-all: failed:"
	printf '   %s\n' "${failures[@]}"
fi
[ "$skipped" = 0 ] || echo "test-all: $skipped skipped (not counted as passed)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
