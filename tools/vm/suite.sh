#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Run the guest test suite (selftests/) in one boot of the rig.
#
#   tools/vm/suite.sh [OPTIONS] SUITE
#
# SUITE names the RDMA device type of each guest: TYPE_A-TYPE_B for two
# guests (rxe-rxe, sroce-sroce, sroce-rxe), or TYPE for a single guest. Guest
# a reports: its KTAP output is printed after the rig's verdict. Exit status
# 0 only when the rig passed and no test failed.
#
#   -k, --kernel VER     guest kernel (tools/vm/run.sh -k)
#       --kernel-b VER   another kernel for guest b (cross-kernel runs)
#   -o, --out DIR        run folder (default: a new out/vm/suites/SUITE/<time>-<pid>)
#   -t, --timeout SEC    whole-run limit (default: the sum of the tests'
#                        time limits, plus boot)
#       --tests "A.sh B.sh"  run only these tests (default: TEST_PROGS; or A.sh,B.sh)
#   -e NAME=VALUE        more environment for the guests
#       --timeout-scale P  how much slower the kernel is, in percent (default
#                        100; 300 on a debug kernel, -k debug or -k kcsan):
#                        the tests' own waits scale by it (rig_limit), their
#                        time limits do not: a test's "# timeout:" is its
#                        limit on the slowest kernel it is placed on
#                        (tools/placement.sh), about three times its time there
#       --smp N          vCPUs per guest (tools/vm/run.sh --smp; default 1)
#       --solo-a "A.sh B.sh", --solo-b "C.sh"
#                        one-guest tests that guest a (b) runs by itself
#                        before the pair tests, side by side with the other
#                        guest's (selftests/lib/runner.sh; a reports them)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=""
timeout=""
tests=""
pass=()
kernels=()
scale=""
solo_a=""
solo_b=""
while [ $# -gt 0 ]; do
	case "$1" in
	-k | --kernel) pass+=(-k "${2:?}"); kernels+=("$2"); shift ;;
	--kernel-b) pass+=(--kernel-b "${2:?}"); kernels+=("$2"); shift ;;
	-o | --out) out=${2:?}; shift ;;
	-t | --timeout) timeout=${2:?}; shift ;;
	--tests) tests=${2//,/ }; shift ;;
	-e | --env) pass+=(-e "${2:?}"); shift ;;
	--timeout-scale) scale=${2:?}; shift ;;
	--smp) pass+=(--smp "${2:?}"); shift ;;
	--solo-a) solo_a=${2//,/ }; shift ;;
	--solo-b) solo_b=${2//,/ }; shift ;;
	-h | --help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "suite: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
suite=${1:?usage: tools/vm/suite.sh [OPTIONS] SUITE (e.g. rxe-rxe)}
[[ "$suite" =~ ^[a-z0-9]+(-[a-z0-9]+)?$ ]] || { echo "suite: bad suite name $suite" >&2; exit 2; }
# Debug kernels (their fragments are in tools/vm/kconfig/) run slower.
if [ -z "$scale" ]; then
	scale=100
	for k in "${kernels[@]}"; do
		[ "$k" != guest ] && [ -f "$here/kconfig/$k.config" ] && scale=300
	done
fi
if ! [[ "$scale" =~ ^[0-9]+$ ]] || [ "$scale" -eq 0 ]; then
	echo "suite: bad --timeout-scale $scale" >&2
	exit 2
fi
pass+=(-e "RIG_TIMEOUT_SCALE=$scale")
type_a=${suite%%-*}
guest=$here/guest/selftests.sh
scripts=("$guest")
pass+=(-e "RIG_SUITE=$suite" -e "RIG_DEV_TYPE_A=$type_a")
if [[ "$suite" == *-* ]]; then
	pass+=(-e "RIG_DEV_TYPE_B=${suite#*-}")
	scripts+=("$guest")
fi
# One line, single spaces: the list travels in an environment file and a
# make variable, where a newline would end it.
read -ra test_list <<<"$(tr '\n\t' '  ' <<<"$tests")"
tests="${test_list[*]}"
[ -z "$tests" ] || pass+=(-e "TESTS=$tests")
# (Commas: the lists travel in the environment file.)
read -ra solo_a_list <<<"$solo_a"
read -ra solo_b_list <<<"$solo_b"
if [ $((${#solo_a_list[@]} + ${#solo_b_list[@]})) -gt 0 ]; then
	[[ "$suite" == *-* ]] || { echo "suite: --solo-a/--solo-b need a pair suite" >&2; exit 2; }
	pass+=(-e "RIG_SOLO_A=$(IFS=,; echo "${solo_a_list[*]}")" -e "RIG_SOLO_B=$(IFS=,; echo "${solo_b_list[*]}")")
fi
# Default run folder: a new one per run (parallel runs of one suite must not
# share it), out/vm/suites/SUITE/latest pointing at it, the 5 newest kept.
if [ -z "$out" ]; then
	base=$repo/out/vm/suites/$suite
	mkdir -p "$base"
	find "$base" -mindepth 1 -maxdepth 1 -type d -name '2*' | LC_ALL=C sort -r |
		tail -n +5 | while read -r old; do
		# Not one that a run still uses (tools/vm/run.sh holds this lock).
		# shellcheck disable=SC2094 # the lock is dropped with its folder
		(flock -n 9 && rm -rf "$old" "$base/.$(basename "$old").lock") \
			9>>"$base/.$(basename "$old").lock" || true
	done
	out=$base/$(date +%Y%m%d-%H%M%S)-$$
	mkdir -p "$out"
	# (Another run of the suite may relink it at the same moment.)
	ln -sfn "$(basename "$out")" "$base/latest" 2>/dev/null || true
fi

# Without -t, the run may take as long as all its tests' time limits (the
# runner enforces each) plus boot and slack.
if [ -z "$timeout" ]; then
	default=$(sed -n 's/^timeout=\([0-9]\+\)$/\1/p' "$repo/selftests/settings")
	# limit_of TEST: its time limit plus 15 s.
	limit_of() {
		local lim
		lim=$(sed -n 's/^# timeout: \([0-9]\+\)$/\1/p' "$repo/selftests/$1" 2>/dev/null | head -n 1)
		echo $((${lim:-${default:-300}} + 15))
	}
	timeout=180
	while read -r t; do
		[ -n "$t" ] || continue
		timeout=$((timeout + $(limit_of "$t")))
	done < <(make -s --no-print-directory -C "$repo/selftests" list_tests ${tests:+TESTS="$tests"})
	# The one-guest lists run side by side: the longer one counts.
	solo_max=0
	for l in "${solo_a_list[*]}" "${solo_b_list[*]}"; do
		sum=0
		for t in $l; do sum=$((sum + $(limit_of "$t"))); done
		[ "$sum" -gt "$solo_max" ] && solo_max=$sum
	done
	timeout=$((timeout + solo_max))
fi

rc=0
bash "$here/run.sh" -o "$out" -t "$timeout" "${pass[@]}" "${scripts[@]}" || rc=$?
if [ -s "$out/a/script.log" ]; then
	echo "--- suite $suite: KTAP from guest a ($out/a/script.log)"
	cat "$out/a/script.log"
fi
# Metrics of both guests, one file ("SUITE TEST METRIC VALUE UNIT").
: >"$out/metrics"
for r in a b; do
	if [ -f "$out/$r/metrics" ]; then
		cat "$out/$r/metrics" >>"$out/metrics"
	fi
done
exit "$rc"
