#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Every test of the project, in order (what "make test" and .ci/run run):
#   1. setup        tools/setup.sh (installs missing Debian packages)
#   2. build        sroce.ko for the guest kernel, then the CMake tree
#                   (provider, host unit tests); parts not in the tree yet
#                   are reported as skipped, not built
#   3. unit         ctest in build/ (one case per test)
#   4. lint         tools/lint.sh (one case per check); steps 3, 4 and
#                   4b (dkms) run at nice 19 in the background when guest
#                   suites follow, reported after the stock suites
#   5. rig          tools/vm/selftest.sh: the test rig's own self-tests
#   6. guests       tools/vm/suite.sh for each suite in GUEST_SUITES
#                   (sroce-sroce on the stock 6.1 kernel: the two-guest
#                   tests of TESTS_STOCK, then TESTS_SMP with two vCPUs
#                   per guest; sroce-rxe but TESTS_NOT_RXE, rxe-sroce;
#                   rxe-rxe with --rxe-rxe; one case per KTAP test line,
#                   plus the rig's verdict); then sroce-sroce on 6.12 LTS
#                   guests (the two-guest tests of TESTS_612), sroce-rxe
#                   on 6.12 (TESTS_612_RXE: RDMA FLUSH, which rxe offers
#                   from 6.2 on) and a 6.1 guest against a 6.12 guest
#                   (TESTS_CROSS); then the one-guest tests of
#                   TESTS_STOCK (6.1) and TESTS_612 in two one-guest
#                   rigs side by side (sroce-stock-1, sroce-6.12-1)
#   7. bench        tools/bench/bench.sh --smoke: the benchmark runs and
#                   produces every number (none is judged)
#   8. debug        sroce-sroce on the debug kernel (KASAN, lockdep,
#                   KMEMLEAK, UBSAN...: tools/vm/debug-kernel.sh, cached;
#                   when it is not, it builds in the background from
#                   step 2 on): every test but those in TESTS_STOCK (run
#                   on the stock 6.1 kernel in step 6), TESTS_INTEROP
#                   (sroce-rxe and rxe-sroce only), TESTS_612_ONLY and
#                   TESTS_NOT_DEBUG; its one-guest tests first, in two
#                   one-guest rigs side by side, then its pair; with
#                   --no-debug sroce-sroce runs whole on the stock 6.1
#                   kernel in step 6
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
# RDMA FLUSH, namespaces, restrack's resource details, device memory, ODP,
# XRC, NVMe-oF's controller resets under load), and the tests that run on
# no debug kernel (TESTS_NOT_DEBUG): ring_memcg, res_details, congestion,
# isolation, xrc, sroce_ctrl_two_devs (sroce_ctrl_netns_exclusive runs on
# stock 6.1, TESTS_STOCK, which balances the two one-guest rigs). Out of
# it for CI's time: the tail probe, hostile rings and the stress
# (TESTS_SMP: stock 6.1 with two vCPUs), VLANs and the delayed ACK's
# counts (stock 6.1): sroce's code for them is the same on both kernels.
# Its one-guest tests run in sroce-6.12-1 (step 6).
TESTS_612="link.sh rc_integrity.sh rc_errors.sh rc_flush.sh sroce_ctrl_invalid.sh
	sroce_ctrl_link.sh sroce_ctrl_objects.sh ring_memcg.sh rdma_cm.sh
	sroce_ctrl_netns.sh res_details.sh device_memory.sh odp.sh xrc.sh
	nvmeof_ctrl.sh congestion.sh isolation.sh sroce_ctrl_two_devs.sh"
TESTS_612_RXE="rc_flush.sh rc_integrity.sh"
# Races between CPUs (a window bind against deregistration, ring flag
# updates, the tail probe's timers against the requester and the ACKs)
# need guests with two vCPUs: these run on the stock 6.1 kernel with
# --smp 2 (sroce-sroce-smp2), the full test each (hostile_rings' long
# flushes too). On the debug kernel two vCPUs cost some 790 s of CI's
# time for these three (the debug guests' every fork and exec is 7 times
# the stock kernel's: 700 ms for /bin/true); hostile_rings runs there
# with one vCPU (its forged WQEs and indices under KASAN, its flag race
# preempted rather than in parallel), stress and rc_tail_loss do not
# (TESTS_NOT_DEBUG).
TESTS_SMP="stress.sh hostile_rings.sh rc_tail_loss.sh"
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
# debug kernel, and the debug kernel has no LIO target); the tail probe on
# a 40 ms path (rc_tail_loss_slow: the debug kernel's own round trip is
# near the ACK timeout already; rc_tail_loss runs there); the delayed
# ACK's counts (rc_ack_delay: a debug guest's replies come too late for
# the ping-pong mode it checks); userspace rdma_cm between the guests
# (rdma_cm: on the debug kernel the kernel's rdma_cm user NVMe-oF
# connects between the guests), UD between them (ud_pingpong: nvmeof's
# rdma_cm takes UD's wire path there); rdma-core's own suite
# (rdma_core_suite: 285 s of the debug run, where sroce-verbs-check's
# commands take the same verbs: verbs_fuzz, xrc, odp, srq_verbs,
# device_memory, isolation; it runs on 6.1 and 6.12); VLANs (vlan: 228 s
# of the debug run; sroce's own code is the same on a VLAN as on its
# netdev, the stack below it tags; sroce_ctrl_bond runs sroce over an
# upper device, on stock 6.1 too), the trace events (tracepoints: they read the
# fields the data path reads) and NFS over RDMA (nfs_rdma: nvmeof.sh takes
# the kernel consumers' verbs there, FRWR and remote invalidation).
# The loss tests with netem and filters (rc_netem, rc_nak_loss: their
# recovery paths, retransmission, duplicates, sequence NAKs and the ACK
# timeout, run on the debug kernel under debugfs_faults' knobs,
# rc_window_timeout and rc_tail_loss); sroce_ctrl_rename (no sroce kernel
# code: the core renames, the provider matches by sroce_abi), sroce_ctrl_bond
# (sroce's netdev event code runs on the debug kernel under sroce_ctrl_port
# and sroce_ctrl_two_devs, MTU and carrier changes; 144 s there),
# sroce_ctrl_devinfo and cq_timestamps (queries and the provider's extended
# CQ: sroce_ctrl_objects and the rc tests take their kernel paths), and
# counters (184 s of the debug pair, its two transfers timed to outlast its
# checks; debugfs_faults, rc_errors, rc_rnr and rc_tail_loss still read
# the device's counters on the debug kernel, but none binds a QP to a
# counter there: a loss, for CI's time); bounded_work (it measures how
# long sroce's large ring work keeps a 1 ms sleeper waiting, and the
# debug kernel adds unpreemptible work of its own (KASAN's vmalloc
# shadow, KMEMLEAK): there, beside a loaded host, it once waited 435 ms
# where 294 were allowed, every WQE moved right, the cause not found;
# the stock kernel measures sroce's part. The same ring code, growing an
# SRQ with receives posted and resizing CQs that hold completions, runs
# at small sizes under KASAN in srq_verbs, sroce_ctrl_objects and
# verbs_fuzz); and for CI's time four transport tests of the pair:
# rc_order (the responder's ordering behind a READ runs on the debug
# kernel in resp_order, against a forged peer), rc_integrity_srq (SRQs'
# verbs and rings: srq_verbs), rc_window_timeout and rc_vanish (the ACK
# timeout's retransmissions and a QP's error flush: debugfs_faults'
# tx_drop, rc_errors).
TESTS_STOCK="tcp_bw.sh write_bw.sh read_bw.sh send_lat.sh atomic_bw.sh perf_matrix.sh
	rc_busy_poll.sh rc_soak.sh msg_size.sh netns_pair.sh rc_pingpong.sh uc_pingpong.sh
	srq_pingpong.sh rc_integrity_mtu1024.sh rc_integrity_large.sh rc_integrity_selfcheck.sh
	sroce_ctrl_vs_rxe.sh domains.sh nvmeof_fio.sh nvmeof_teardown.sh
	srp_teardown.sh iser_teardown.sh rc_tail_loss_slow.sh rc_ack_delay.sh rdma_cm.sh
	ud_pingpong.sh rdma_core_suite.sh vlan.sh tracepoints.sh nfs_rdma.sh
	rc_netem.sh rc_nak_loss.sh sroce_ctrl_rename.sh sroce_ctrl_bond.sh sroce_ctrl_devinfo.sh
	cq_timestamps.sh counters.sh bounded_work.sh rc_integrity_uc.sh ud_qkey.sh
	sroce_ctrl_link.sh rc_order.sh rc_integrity_srq.sh rc_window_timeout.sh rc_vanish.sh
	sroce_ctrl_netns_exclusive.sh"
# Not in sroce-sroce at all (for CI's time): SRP and iSER run in sroce-rxe
# and rxe-sroce, with sroce as the target in one and the initiator in the
# other; their teardown tests run in sroce-sroce-stock.
TESTS_INTEROP="srp.sh iser.sh"
# One-guest tests of TESTS_STOCK that measure a wait (bounded_work: how
# long a 1 ms sleeper waits behind sroce's ring work): in the stock pair,
# whose guest b idles through them, not in sroce-stock-1 beside another
# busy guest, where the host's own scheduling would be in the measured
# wait.
TESTS_TIMED="bounded_work.sh"
# On the 6.12 kernel only (TESTS_612), for CI's time: NVMe-oF's controller
# resets under fio (nvmeof_ctrl, 71 s on stock 6.1). On 6.1 the same sroce
# code, QPs torn down and made again under a ULP's load, runs under
# nvmeof_teardown (stock) and nvmeof (debug).
TESTS_612_ONLY="nvmeof_ctrl.sh"
# Not on the debug kernel either, for CI's time (a full run must end
# within 75 minutes; the debug kernel runs a test 3 to 5 times as long):
# stress and rc_tail_loss (TESTS_SMP, stock 6.1 with two vCPUs); rc_flush
# (the 6.1 core has no RDMA FLUSH: it skipped there; 6.12 runs it, against
# rxe too); res_details, ring_memcg, congestion, isolation and xrc (sroce's
# restrack callbacks, its rings' memcg charge, ECN marks and CNPs, keys
# across processes, XRC: on 6.12, TESTS_612; the objects they walk are
# made and freed under KASAN in sroce_ctrl_objects, verbs_fuzz, srq_verbs
# and rc_integrity_srq there); rc_integrity_uc and ud_qkey (UC and UD
# between the guests, on stock 6.1: TESTS_STOCK; the debug kernel takes
# UC's and UD's verbs in verbs_fuzz and sroce_ctrl_objects, UD's wire path
# in the kernel's rdma_cm of nvmeof); sroce_ctrl_two_devs (6.12, in full:
# 196 s of a debug rig; sroce_ctrl_netns_exclusive, 460 s there, is in
# TESTS_STOCK); on the debug kernel a held device's disassociation, its
# mappings zapped, runs in sroce_ctrl_removal, two held devices sharing a
# socket in sroce_ctrl_removal's rmmod; sroce_ctrl_link (6.12 and stock
# 6.1, TESTS_STOCK, in full: 295 s of a debug rig, most of it its checks'
# processes; on the debug kernel every test adds and deletes links, and
# sroce_ctrl_removal deletes them and unloads the module under holders);
# sroce_ctrl_netns (6.12, in full: 495 s of a debug rig; its IPv6 step's
# paths run there in rc_integrity_ipv6, a netdev's removal under a held
# device in sroce_ctrl_removal; a namespace's socket closed under traffic
# runs on no debug kernel: a loss, for CI's time).
TESTS_NOT_DEBUG="stress.sh rc_tail_loss.sh rc_flush.sh res_details.sh ring_memcg.sh
	congestion.sh isolation.sh xrc.sh rc_integrity_uc.sh ud_qkey.sh
	sroce_ctrl_two_devs.sh sroce_ctrl_link.sh sroce_ctrl_netns.sh"
TESTS_CROSS="rc_integrity.sh rc_flush.sh"
# Not in sroce-rxe (for CI's time; "tools/vm/suite.sh sroce-rxe" runs them):
# tests of sroce's local features, whose rxe peer only carries ordinary RC
# traffic that the other sroce-rxe tests put on the wire as well: the
# device's counters, sroce in a network namespace (rxe cannot be in one: it
# answers from init_net, "the wire does not care"), the busy-polled CQ,
# and NVMe-oF's controller resets and fio load (nvmeof.sh runs NVMe-oF
# against rxe both ways: connect, I/O verified, disconnect); and perftest's
# programs, which rxe-sroce runs between the two (sroce the client there;
# the verbs they take with rxe requesting and sroce responding are
# rc_integrity's here, every byte checked). Some 360 s of the 837 s
# sroce-rxe took on a slow host.
TESTS_NOT_RXE="counters.sh netns_pair.sh rc_busy_poll.sh nvmeof_ctrl.sh nvmeof_fio.sh
	atomic_bw.sh read_bw.sh send_lat.sh write_bw.sh perf_matrix.sh"
# On the debug kernel the tests that need only one guest (their rig_suites
# line names the one-guest suite "sroce") run first in two one-guest rigs
# side by side (the tests here in sroce-debug-2, the others in
# sroce-debug-1: about as long each, some 900 s each on a slow host), then the
# two-guest tests in a pair: a one-guest test in the pair would keep one of
# CI's two cores busy while the other guest idles. Tried and taken back:
# the pair beside the heavier one-guest rig (two streams, the lighter rig
# after the pair): the pair keeps more than one core busy, and beside it
# the one-guest rig's control tests took 2.5 times as long (sroce_ctrl_link
# 533 s, was 209; sroce_ctrl_two_devs 311, was 123).
TESTS_SOLO2="sroce_ctrl_removal.sh sroce_ctrl_invalid.sh hostile_rings.sh
	srq_verbs.sh sroce_ctrl_objects.sh"

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
	-h | --help) sed -n '3,44p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# cached BUILD-COMMAND...: run it with ccache in front of the compilers
# (Debian's /usr/lib/ccache names them as the builds call them: gcc-12,
# x86_64-linux-gnu-gcc-12, c++), its cache in /var/cache/sroce/ccache
# beside the debug kernel's: a run whose sources did not change builds
# sroce.ko for three kernels and the CMake tree from the cache (some 280 s
# of CPU otherwise, most of it C++). Not for the debug kernel's own build
# (its 2 GB of objects would push everything else out of the cache).
ccache_dir=${SROCE_CCACHE_DIR:-/var/cache/sroce/ccache}
cached() {
	if [ -d /usr/lib/ccache ] && command -v ccache >/dev/null && mkdir -p "$ccache_dir" 2>/dev/null; then
		PATH=/usr/lib/ccache:$PATH CCACHE_DIR=$ccache_dir CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G} "$@"
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
elif cached make -s -j "$(nproc)" module KDIR="/lib/modules/$guest_kernel/build" >"$logs/module.log" 2>&1; then
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
	elif cached bash tools/kbuild.sh "/lib/modules/$kver612/build" -j "$(nproc)" >"$logs/module-6.12.log" 2>&1 &&
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
		if cached bash tools/kbuild.sh "$dbgdir/build" -j "$(nproc)" >"$logs/module-debug.log" 2>&1 &&
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
	echo "started in the background at nice 19 (reported after the stock suites)"
else
	host_checks
	report_host_checks
fi

# --- 5. rig self-tests --------------------------------------------------------
if [ "$rig" = 1 ]; then
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
			# Each its own run folder: two suite.sh of one suite
			# started together both tidy and relink the suite's
			# default folders, and one of them once ended at once,
			# silently (sroce-debug-2, 0 tests run).
			rm -rf "$repo/out/vm/suites/$label"
			# shellcheck disable=SC2086 # the arguments, word-split
			bash tools/vm/suite.sh -o "$repo/out/vm/suites/$label" ${spec#*|} \
				>"$logs/suite-$label.log" 2>&1 &
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
	grep -E '^rig: guest .: (userspace .*guest uptime|no userspace)' "$log" | sed 's/^/     /'
	[ "$rc" = 0 ] || show_failures "$logs/suite-$label.ktap"
}

# all_tests_but "A.sh B.sh ...": the suite's tests (selftests' TEST_PROGS,
# in order) but these, on one line (suite.sh --tests; its guests' TESTS).
all_tests_but() {
	make -s --no-print-directory -C selftests list_tests |
		grep -vxF -f <(tr ' \t' '\n\n' <<<"$1" | grep .) | tr '\n' ' '
}

# one_guest_test SCRIPT: true when the test's top-level rig_suites line names
# the one-guest suite "sroce" (the runner reads the same line).
one_guest_test() {
	local line
	line=$(grep -m 1 '^rig_suites ' "$1") || return 1
	[[ " ${line#rig_suites } " == *" sroce "* ]]
}

# words_but "A B ..." "B ...": the words of the first list not in the second.
words_but() {
	local w out=""
	for w in $1; do
		[[ " ${2//[$'\t\n']/ } " == *" $w "* ]] || out+="$w "
	done
	echo "$out"
}

# one_guest_tests "A.sh B.sh ..." [0|1]: those of the tests that are
# one-guest tests (1, the default) or two-guest tests (0), comma-separated
# (suite.sh --tests).
one_guest_tests() {
	local tt out="" want=${2:-1} is
	for tt in $1; do
		is=0
		one_guest_test "selftests/$tt" && is=1
		[ "$is" = "$want" ] && out+="$tt,"
	done
	echo "${out%,}"
}

# The one-guest tests of the stock kernels (TESTS_STOCK's but TESTS_TIMED,
# TESTS_612's) run in two one-guest rigs side by side (sroce-stock-1 on
# 6.1, sroce-6.12-1), not in the guest pairs, where guest b would idle
# through them. later_suite LABEL NEEDS SUITE.SH ARGS... adds one (word-
# split arguments, as in guest_suites_parallel); run_one_guest_stock runs
# them. Tried and taken back: these and the benchmark's smoke run beside
# the debug pair, one after the other: beside it (some 1.2 cores busy,
# and this host's hypervisor taking a quarter of its CPU) msg_size took
# 271 s instead of 104, and the pair's first test, link, 139 s instead of
# 47: three busy guests on two cores are much slower than their share.
one_guest_stock=()
later_suite() {
	one_guest_stock+=("$1|$2|${*:3}")
}
run_one_guest_stock() {
	local e need=1 specs=()
	[ ${#one_guest_stock[@]} -gt 0 ] || return 0
	for e in "${one_guest_stock[@]}"; do
		specs+=("${e%%|*}|${e#*|*|}")
		e=${e#*|}
		[ "${e%%|*}" = 1 ] || need=0
	done
	guest_suites_parallel "$need" "${specs[@]}"
}

if [ "$guests" = 1 ]; then
	for s in "${GUEST_SUITES[@]}"; do
		need=1
		[[ "$s" == *sroce* ]] && need=$module_built
		# sroce-sroce runs on the debug kernel, last (below), but
		# for TESTS_STOCK: their two-guest tests here, their
		# one-guest tests in sroce-stock-1 (below).
		if [ "$s" = sroce-sroce ] && [ "$debug" = 1 ]; then
			guest_suite sroce-sroce-stock "$need" --tests \
				"$(one_guest_tests "$TESTS_STOCK" 0),${TESTS_TIMED// /,}" sroce-sroce
			later_suite sroce-stock-1 "$need" --tests \
				"$(one_guest_tests "$(words_but "$TESTS_STOCK" "$TESTS_TIMED")")" sroce
			guest_suite sroce-sroce-smp2 "$need" --smp 2 --tests "$TESTS_SMP" sroce-sroce
			continue
		fi
		if [ "$s" = sroce-rxe ]; then
			guest_suite "$s" "$need" --tests "$(all_tests_but "$TESTS_NOT_RXE")" "$s"
			continue
		fi
		guest_suite "$s" "$need" "$s"
	done
	if [ "$with612" = 1 ]; then
		guest_suite "sroce-sroce-6.12" "$module612_built" \
			-k "$KERNEL_612" --tests "$(one_guest_tests "$TESTS_612" 0)" sroce-sroce
		later_suite "sroce-6.12-1" "$module612_built" \
			-k "$KERNEL_612" --tests "$(one_guest_tests "$TESTS_612")" sroce
		guest_suite "sroce-rxe-6.12" "$module612_built" \
			-k "$KERNEL_612" --tests "$TESTS_612_RXE" sroce-rxe
		both=0
		[ "$module_built" = 1 ] && [ "$module612_built" = 1 ] && both=1
		guest_suite "sroce-sroce-6.1-6.12" "$both" \
			--kernel-b "$KERNEL_612" --tests "$TESTS_CROSS" sroce-sroce
	fi
	run_one_guest_stock

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

	if [ -n "$host_pid" ]; then
		wait "$host_pid"
		report_host_checks ", at nice 19 beside the guests"
	fi

	# --- 8. sroce-sroce on the debug kernel --------------------------------
	if [ "$debug" = 1 ] && [[ " ${GUEST_SUITES[*]} " == *" sroce-sroce "* ]]; then
		debug_kernel_finish
		# The object loop repeats the same code paths: on the debug
		# kernel one round after the warm-up keeps CI within its time;
		# the stock 6.12 run (TESTS_612) runs five. The transfer that
		# only has to outlast a check (debugfs_faults.sh) is shorter
		# (2000 round trips, not 5000). SROCE_SHORT=1:
		# sroce_ctrl_removal and hostile_rings leave out steps or
		# rounds whose kernel paths other steps or tests take there
		# (each test says which).
		debug_tests=$(all_tests_but "$TESTS_STOCK $TESTS_INTEROP $TESTS_612_ONLY $TESTS_NOT_DEBUG")
		solo1="" solo2="" pair=""
		for tt in $debug_tests; do
			if ! one_guest_test "selftests/$tt"; then
				pair+="$tt,"
			elif [[ " ${TESTS_SOLO2//[$'\t\n']/ } " == *" $tt "* ]]; then
				solo2+="$tt,"
			else
				solo1+="$tt,"
			fi
		done
		# Each run's time limit (-t) is about 1.5 to 2 times what it
		# takes on a slow host of this project's (the one-guest rigs
		# some 1300 s side by side, the pair 1200), not the sum of its
		# tests' limits times 3 (suite.sh's default: over two hours
		# for one rig): a guest that hangs fails its run in time for
		# the report to say which test it was in, where CI's own limit
		# would cut the whole log off.
		dbg_env="-e SROCE_CTRL_OBJECT_LOOPS=1 -e SROCE_LONG_ITERS=2000 -e SROCE_SHORT=1"
		guest_suites_parallel "$moduledbg_built" \
			"sroce-debug-1|-k debug $dbg_env -t 1800 --tests ${solo1%,} sroce" \
			"sroce-debug-2|-k debug $dbg_env -t 1800 --tests ${solo2%,} sroce"
		# shellcheck disable=SC2086 # dbg_env: options, word-split
		guest_suite "sroce-sroce-debug" "$moduledbg_built" -k debug $dbg_env -t 2000 \
			--tests "${pair%,}" sroce-sroce
	fi
fi

echo
# When each step's line began, in seconds from the start: for the parallel
# debug rigs, when the one before it had ended.
echo "test-all: timeline: ${timeline}end $((EPOCHSECONDS - t_start))" | fold -s -w 120
echo "test-all: slowest tests (s): $(slowest_tests)" | fold -s -w 120
echo "test-all: $(took "$t_start") in all, logs in $logs"
[ -z "${deadline_pid:-}" ] || kill "$deadline_pid" 2>/dev/null
if [ ${#failures[@]} -gt 0 ]; then
	echo "test-all: failed:"
	printf '   %s\n' "${failures[@]}"
fi
[ "$skipped" = 0 ] || echo "test-all: $skipped skipped (not counted as passed)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
