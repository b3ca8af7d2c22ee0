#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Self-tests of the test rig (tools/vm/run.sh), run on the host. Each case
# boots guests with a guest script from tools/vm/selftest/ and passes only if
# the rig reached the expected verdict: a healthy pair passes, and a broken
# script, a kernel WARNING, a hung script, a kernel panic and a failed peer
# each fail the run with their own reason, a guest whose first boot hangs is
# started again; and the guest test runner keeps a
# pair of guests in step through failing, skipped and hung tests. And the
# canaries (tools/vm/testmod/rig_canary.c): on a kernel with the detectors
# (the debug kernel) each bug it commits must fail the run with its
# detector's reason, as must a final rmmod that fails and a KMEMLEAK scan
# that could not run; on a stock kernel the same bugs pass unseen, which
# the diagnostics list. Prints KTAP.
#
#   tools/vm/selftest.sh [-k KERNEL] [--canaries]
#
# --canaries: the canary cases alone (tools/test-all.sh runs them so on
# the debug kernel).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$repo/selftests/lib/ktap.sh"

kernel=()
only_canaries=0
while [ $# -gt 0 ]; do
	case "$1" in
	-k) kernel=(-k "${2:?}"); shift ;;
	--canaries) only_canaries=1 ;;
	*) echo "usage: tools/vm/selftest.sh [-k KERNEL] [--canaries]" >&2; exit 2 ;;
	esac
	shift
done
runs=$repo/out/vm/selftest${kernel[1]:+-${kernel[1]}}
rm -rf "$runs"
mkdir -p "$runs"

# The guest kernel's build tree and configuration: a kernel of
# tools/vm/debug-kernel.sh (a "variant", -k debug) has them in its cache.
kernel_build() {
	local ver=$1 k=${kernel[1]:-}
	if [ -n "$k" ] && [ "$k" != guest ] && [ -f "$here/kconfig/$k.config" ]; then
		echo "$(bash "$here/debug-kernel.sh" --variant "$k" --print)/build"
	else
		echo "/lib/modules/$ver/build"
	fi
}

# Build the test modules (rig_warn, rig_stuck, rig_canary) against the
# guest kernel; prints their folder.
build_testmod() {
	local ver dir build
	ver=$(bash "$here/run.sh" --print-kernel "${kernel[@]}") || return 1
	build=$(kernel_build "$ver") || return 1
	dir=$repo/out/vm/testmod-$ver
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$here"/testmod/*.c "$here/testmod/Kbuild" "$dir/"
	if ! make -s -C "$build" M="$dir" modules >"$dir/build.log" 2>&1; then
		sed 's/^/# /' "$dir/build.log" >&2
		return 1
	fi
	echo "$dir"
}

# rig_start NAME RUN_ARGS...: boot the case's guests in the background
# (tools/vm/run.sh -o $runs/NAME); its exit status and its start and end
# times go to $runs/NAME.status. The cases of a wave run side by side: most
# of their time is boot and waiting for a timeout, not work.
rig_start() {
	local name=$1
	shift
	(
		t0=$(date +%s)
		bash "$here/run.sh" -q -o "$runs/$name" "${kernel[@]}" "$@" >"$runs/$name.log" 2>&1
		echo "$? $t0 $(date +%s)" >"$runs/$name.status"
	) &
}

# rig_case NAME EXPECT TIME_LIMIT: the verdict of a case started with
# rig_start, once it ended. EXPECT is "PASS" or a text that the
# "rig: FAIL:" line must contain; the run must end within TIME_LIMIT s.
rig_case() {
	local name=$1 expect=$2 limit=$3 log t0 t1 rc verdict
	log=$runs/$name.log
	read -r rc t0 t1 <"$runs/$name.status" || { rc=99 t0=0 t1=0; }
	verdict=$(grep -m 1 -E '^rig: (PASS|FAIL)' "$log" || echo "rig: no verdict (exit $rc)")
	ktap_diag "$name: $verdict ($((t1 - t0)) s)"
	if [ "$expect" = PASS ]; then
		if [ "$rc" != 0 ] || [[ "$verdict" != "rig: PASS"* ]]; then
			sed 's/^/#   /' "$log"
			ktap_fail "rig_$name"
			return
		fi
	elif [ "$rc" != 1 ] || [[ "$verdict" != "rig: FAIL:"*"$expect"* ]]; then
		ktap_diag "$name: expected a failure with \"$expect\""
		sed 's/^/#   /' "$log"
		ktap_fail "rig_$name"
		return
	fi
	if [ $((t1 - t0)) -gt "$limit" ]; then
		ktap_diag "$name: took $((t1 - t0)) s, limit $limit s"
		ktap_fail "rig_$name"
		return
	fi
	ktap_pass "rig_$name"
}

# The guest test runner in a pair of guests: first one-guest tests of each
# guest's own list, side by side (a pass in both, run as in a one-guest rig;
# a test for another suite; a failure in b's, reported by a with its
# reason), then a pass, a failure, a skip, a
# test for another suite (skipped unstarted), a hang, a half stuck in the
# kernel past its limit, a half whose peer failed, a failure whose EXIT
# trap ended the script with 0 and a final pass must be
# reported as such, with the hang, the stuck half (timeout(1) kills its
# process group, itself included, so the runner does not wait for the
# stuck shell) and the stranded half cut short; what the failed test left
# running in the background must not outlive it (t_after looks).
runner_case() {
	local name=runner out=$runs/runner log=$runs/runner.log rc t0 t1 got want
	read -r rc t0 t1 <"$runs/$name.status" || { rc=99 t0=0 t1=0; }
	ktap_diag "$name: $(grep -m 1 -E '^rig: (PASS|FAIL)' "$log") ($((t1 - t0)) s)"
	want=$(printf '%s\n' "ok 1 s_solo" \
		"ok 2 t_other_suite # SKIP covered by suites some-other-suite" "ok 3 s_solo" \
		"not ok 4 s_solo_fail" "ok 5 t_pass" "not ok 6 t_fail" \
		"ok 7 t_skip # SKIP skipping on purpose" \
		"ok 8 t_other_suite # SKIP covered by suites some-other-suite" "not ok 9 t_hang" \
		"not ok 10 t_stuck" "not ok 11 t_peer_gone" "not ok 12 t_masked" "ok 13 t_after" \
		"# totals: pass:4 fail:6 xfail:0 xpass:0 skip:3 error:0")
	got=$(grep -E '^(ok|not ok|# totals)' "$out/a/script.log" 2>/dev/null)
	if [ "$got" != "$want" ]; then
		ktap_diag "$name: the runner reported:"
		echo "$got" | sed 's/^/#   /'
		ktap_diag "$name: expected:"
		echo "$want" | sed 's/^/#   /'
		sed 's/^/#   /' "$log"
		ktap_fail "rig_$name"
	elif ! grep -q '^# s_solo_fail: \[b\] failing on purpose in guest b alone' "$out/a/script.log"; then
		ktap_diag "$name: guest b's one-guest failure was not reported with its reason"
		sed 's/^/#   /' "$log"
		ktap_fail "rig_$name"
	elif ! grep -q '^# t_stuck: \[a\] timed out after 8s' "$out/a/script.log" ||
		! grep -qE '^# t_stuck: ([0-9]|[12][0-9]) s;' "$out/a/script.log"; then
		ktap_diag "$name: t_stuck did not end by its time limit within 30 s (its read sleeps 60 s)"
		sed 's/^/#   /' "$log"
		ktap_fail "rig_$name"
	elif [ $((t1 - t0)) -gt 200 ]; then
		ktap_diag "$name: took $((t1 - t0)) s, limit 200 s"
		ktap_fail "rig_$name"
	else
		ktap_pass "rig_$name"
	fi
}

# A guest whose first boot hangs before userspace is started again and the
# pair passes; the rig says so in its log.
boot_hang_case() {
	local name=boot_hang log=$runs/boot_hang.log
	rig_case "$name" PASS 150
	if ! grep -q '^rig: guest b: no userspace 20 s after its start (console: rig-init: hanging before userspace on purpose' "$log"; then
		ktap_diag "$name: the rig did not say that it started guest b again"
		sed 's/^/#   /' "$log"
		ktap_fail "rig_${name}_said"
	elif [ ! -s "$runs/$name/console-b.boot1.log" ]; then
		ktap_diag "$name: no console-b.boot1.log kept"
		ktap_fail "rig_${name}_said"
	else
		ktap_pass "rig_${name}_said"
	fi
}

# The canaries each guest commits, in this order (rig_canary.c: lockdep
# first, one KASAN bug a guest).
canaries_a=lock_order,atomic_sleep,shift,timer_free,uaf,leak,pin
canaries_b=oob,kmemleak_noscan
# What the rig must say of each on a kernel with the detectors: a glob of
# its reason (the "rig: FAIL:" line or an "also:" line after it).
declare -A canary_reason=(
	[lock_order]="lockdep report in dmesg: WARNING: possible circular locking dependency detected*"
	[atomic_sleep]="sleeping in atomic in dmesg: BUG: sleeping function called from invalid context*"
	[shift]="UBSAN report in dmesg: UBSAN: shift-out-of-bounds in *rig_canary.c*"
	[timer_free]="DEBUG_OBJECTS report in dmesg: ODEBUG: free active *timer_list*canary_timer_fn*"
	[uaf]="KASAN report in dmesg: BUG: KASAN: *use-after-free in canary_uaf*"
	[leak]="KMEMLEAK: * unreferenced objects after the tests (first allocated in: *canary_leak*"
	[pin]="teardown: rmmod rdma_rxe failed*"
	[oob]="KASAN report in dmesg: BUG: KASAN: slab-out-of-bounds in canary_oob*"
	[kmemleak_noscan]="KMEMLEAK: no completed scan after the script*"
)

# has_reason GLOB VERDICTS: a line of VERDICTS is "guest a: GLOB".
has_reason() {
	local v
	while IFS= read -r v; do
		# shellcheck disable=SC2053 # the reason is a glob
		[[ "$v" == "guest a: "$1 ]] && return 0
	done <<<"$2"
	return 1
}

# canary_debug NAME CANARIES: every canary of the case committed, and each
# named by the rig's verdict with its own reason; the run failed.
canary_debug() {
	local name=$1 list=$2 log=$runs/$1.log b rc t0 t1 got verdicts
	read -r rc t0 t1 <"$runs/$name.status" || { rc=99 t0=0 t1=0; }
	verdicts=$(grep -E '^rig: (FAIL: |  also: )' "$log" | sed -E 's/^rig: (FAIL: |  also: )//')
	ktap_diag "$name: exit $rc, $((t1 - t0)) s; the rig said:"
	echo "${verdicts:-(no failure)}" | sed 's/^/#   /'
	for b in ${list//,/ }; do
		got=$(cat "$runs/$name/a/canary-$b" 2>/dev/null || echo "no outcome")
		if [ "$got" != committed ]; then
			ktap_diag "$name: canary $b: $got"
			ktap_fail "canary_$b"
		elif [ "$rc" != 1 ] || ! has_reason "${canary_reason[$b]}" "$verdicts"; then
			ktap_diag "$name: canary $b: no reason like \"${canary_reason[$b]}\""
			ktap_fail "canary_$b"
		else
			ktap_pass "canary_$b"
		fi
	done
}

# canary_stock NAME CANARIES: on a kernel without the detectors the run
# passes; timer_free is not committed there (its free would leave the
# timer armed in freed memory), every other canary is. The diagnostics say
# which bugs went unseen.
canary_stock() {
	local name=$1 list=$2 log=$runs/$1.log b got ok=1 unseen=()
	for b in ${list//,/ }; do
		got=$(cat "$runs/$name/a/canary-$b" 2>/dev/null || echo "no outcome")
		case "$b:$got" in
		timer_free:"not committed (-95)") ;;
		timer_free:*) ktap_diag "$name: canary timer_free: $got (expected: not committed (-95))"; ok=0 ;;
		*:committed) unseen+=("$b") ;;
		*) ktap_diag "$name: canary $b: $got"; ok=0 ;;
		esac
	done
	ktap_diag "$name: $(grep -m 1 -E '^rig: (PASS|FAIL)' "$log" || echo "no verdict")"
	ktap_diag "$name: committed on this kernel, unseen by it: ${unseen[*]:-none}"
	if [ "$ok" = 1 ] && grep -q '^rig: PASS' "$log"; then
		ktap_pass "canaries_unseen_on_stock"
	else
		sed 's/^/#   /' "$log"
		ktap_fail "canaries_unseen_on_stock"
	fi
}

# Does the guest kernel have the detectors (KASAN and KMEMLEAK)?
ver=$(bash "$here/run.sh" --print-kernel "${kernel[@]}") || exit 1
config=$(kernel_build "$ver")/.config
[ -f "$config" ] || config=/boot/config-$ver
detectors=0
grep -qx 'CONFIG_KASAN=y' "$config" && grep -qx 'CONFIG_DEBUG_KMEMLEAK=y' "$config" && detectors=1

ktap_header
s=$here/selftest
mod=$(build_testmod) || mod=""
if [ "$only_canaries" = 1 ]; then
	ktap_plan $((detectors ? 9 : 1))
else
	ktap_plan $((detectors ? 18 : 10))
	# Waves of cases side by side, four guests at most (a wave's guests
	# share the CPUs; the time limits allow for that), then the verdicts
	# in order.
	rig_start pass_two_guests -t 100 "$s/pass.sh" "$s/pass.sh"
	rig_start script_fails -t 100 "$s/exit1.sh"
	rig_start script_hangs -t 36 "$s/hang.sh"
	wait
	[ -z "$mod" ] || rig_start kernel_warning -t 100 -e "RIG_TESTMOD=$mod/rig_warn.ko" "$s/warn.sh"
	rig_start kernel_panic -t 100 "$s/panic.sh"
	rig_start peer_failed -t 300 --grace 10 "$s/wait-peer.sh" "$s/wait-peer.sh"
	wait
	rig_start runner -t 300 ${mod:+-e "RIG_TESTMOD=$mod/rig_warn.ko"} "$s/runner.sh" "$s/runner.sh"
	rig_start boot_hang -t 200 --boot-limit 20 --test-boot-hang b "$s/pass.sh" "$s/pass.sh"
	wait

	rig_case pass_two_guests PASS 120
	rig_case script_fails "guest a: script exited 1" 120
	if [ -n "$mod" ]; then
		rig_case kernel_warning "guest a: WARNING in dmesg" 120
	else
		ktap_diag "cannot build tools/vm/testmod against the guest kernel"
		ktap_fail rig_kernel_warning
	fi
	rig_case script_hangs "timed out" 120
	rig_case kernel_panic "guest a: kernel panic" 120
	rig_case peer_failed "guest a: script exited 1" 100
	runner_case
	boot_hang_case
fi
if [ -z "$mod" ]; then
	ktap_diag "cannot build tools/vm/testmod against the guest kernel"
	if [ "$detectors" = 1 ]; then
		for b in ${canaries_a//,/ } ${canaries_b//,/ }; do ktap_fail "canary_$b"; done
	else
		ktap_fail canaries_unseen_on_stock
	fi
elif [ "$detectors" = 1 ]; then
	# Two guests side by side (each 2 GiB on the debug kernel).
	rig_start canaries_a -t 400 -e "RIG_CANARY_KO=$mod/rig_canary.ko" \
		-e "RIG_CANARY=$canaries_a" "$s/canary.sh"
	rig_start canaries_b -t 400 -e "RIG_CANARY_KO=$mod/rig_canary.ko" \
		-e "RIG_CANARY=$canaries_b" "$s/canary.sh"
	wait
	canary_debug canaries_a "$canaries_a"
	canary_debug canaries_b "$canaries_b"
else
	rig_start canaries -t 100 -e "RIG_CANARY_KO=$mod/rig_canary.ko" \
		-e "RIG_CANARY=$canaries_a,oob" "$s/canary.sh"
	wait
	canary_stock canaries "$canaries_a,oob"
fi
ktap_totals
[ "$KTAP_FAIL" = 0 ]
