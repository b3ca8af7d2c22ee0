#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Where each guest test runs in "make test": the one reader of the
# "# place:" lines of selftests/*.sh (tools/test-all.sh builds its runs from
# what this prints; tools/lint.sh runs --check).
#
#   tools/placement.sh [--tiers "gate 1 2 3"]   TEST RUN TIER, one line each
#   tools/placement.sh --check                 KTAP-free check: exit 1 and
#                                              one line per problem
#   tools/placement.sh --runs                  the known runs, with what
#                                              each boots
#
# A test says where it runs in one line of its header, next to its
# "# timeout:" line:
#
#   # place: debug@gate 6.12-1@2 sroce-rxe@3
#
# Each word is RUN@TIER. A RUN is a kernel, a pairing and a guest count
# (the table below); a TIER is "gate" (every submission runs it) or a shard,
# 1 to 3 (a submission runs one shard, picked from its commit; any three
# consecutive commits pick the three: tools/test-all.sh). A one-guest run
# ("-1" at the end of its name) takes only tests whose rig_suites line names
# the one-guest suite "sroce"; a pair run takes a test whose rig_suites line
# names its pairing, or that has no such line (it runs everywhere).
# Every test in TEST_PROGS has exactly one place line with at least one
# word; a test may name a run once.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

# RUN  SUITE  what it boots (tools/vm/suite.sh arguments before SUITE)
runs_table() {
	cat <<'EOF'
stock       sroce-sroce  two guests, stock 6.1
stock-1     sroce        one guest, stock 6.1
smp2        sroce-sroce  two guests, stock 6.1, two vCPUs each
sroce-rxe   sroce-rxe    two guests, stock 6.1: sroce in a, rdma_rxe in b
rxe-sroce   rxe-sroce    two guests, stock 6.1: rdma_rxe in a, sroce in b
6.12        sroce-sroce  two guests, stock 6.12
6.12-1      sroce        one guest, stock 6.12
6.12-rxe    sroce-rxe    two guests, stock 6.12: sroce in a, rdma_rxe in b
cross       sroce-sroce  two guests: stock 6.1 in a, stock 6.12 in b
debug       sroce-sroce  two guests, the debug 6.1 kernel
debug-1     sroce        one guest, the debug 6.1 kernel
EOF
}

tiers_all="gate 1 2 3"

# run_suite RUN: its suite (pairing), empty for an unknown run.
run_suite() {
	runs_table | awk -v r="$1" '$1 == r { print $2 }'
}

# test_progs: TEST_PROGS, in order.
test_progs() {
	make -s --no-print-directory -C "$repo/selftests" list_tests TESTS='$(TEST_PROGS)'
}

# place_words FILE: the words of its "# place:" lines (one line each).
place_lines() {
	sed -n 's/^# place:\(.*\)$/\1/p' "$1"
}

# suites_line FILE: its top-level rig_suites line's suites, or "ALL".
suites_line() {
	local l
	l=$(grep -m 1 '^rig_suites ' "$1" || true)
	if [ -n "$l" ]; then
		echo " ${l#rig_suites } "
	else
		echo ALL
	fi
}

# check: every problem on a line of its own; exit 1 when there is one.
check() {
	local t f lines n w run tier suite s bad=0 seen
	declare -A listed=()
	while read -r t; do
		listed[$t]=1
		f=$repo/selftests/$t
		if [ ! -f "$f" ]; then
			echo "placement: $t: in TEST_PROGS, no such file"
			bad=1
			continue
		fi
		lines=$(place_lines "$f")
		n=$(grep -c . <<<"$lines" || true)
		if [ "$n" != 1 ]; then
			echo "placement: $t: $n \"# place:\" lines, want 1"
			bad=1
			continue
		fi
		s=$(suites_line "$f")
		seen=" "
		# shellcheck disable=SC2086 # the words of the line
		set -- $lines
		[ $# -gt 0 ] || { echo "placement: $t: an empty place line"; bad=1; }
		for w; do
			run=${w%@*}
			tier=${w##*@}
			suite=$(run_suite "$run")
			if [[ "$w" != *@* ]] || [ -z "$suite" ]; then
				echo "placement: $t: unknown run in \"$w\" (tools/placement.sh --runs)"
				bad=1
				continue
			fi
			if [[ " $tiers_all " != *" $tier "* ]]; then
				echo "placement: $t: unknown tier in \"$w\" (gate, 1, 2 or 3)"
				bad=1
			fi
			if [[ "$seen" == *" $run "* ]]; then
				echo "placement: $t: run $run named twice"
				bad=1
			fi
			seen+="$run "
			if [ "$s" != ALL ] && [[ "$s" != *" $suite "* ]]; then
				echo "placement: $t: run $run is a $suite run, its rig_suites line does not name $suite"
				bad=1
			fi
			if [ "$suite" != sroce ] && [ "$s" != ALL ] && [[ "$s" == *" sroce "* ]] &&
				[[ "$run" != smp2 && "$run" != stock ]]; then
				# A one-guest test in a pair keeps guest b idle:
				# only where the pair is the point (two vCPUs, or
				# a wait measured beside an idle peer).
				echo "placement: $t: a one-guest test placed in the pair run $run (use ${run}-1)"
				bad=1
			fi
		done
	done < <(test_progs)
	for f in "$repo"/selftests/*.sh; do
		t=${f##*/}
		if [ -n "$(place_lines "$f")" ] && [ -z "${listed[$t]:-}" ]; then
			echo "placement: $t: has a place line but is not in TEST_PROGS"
			bad=1
		fi
	done
	return "$bad"
}

# list TIERS: TEST RUN TIER for each placement in those tiers, in
# TEST_PROGS order.
list() {
	local tiers=" $1 " t w
	while read -r t; do
		for w in $(place_lines "$repo/selftests/$t"); do
			[[ "$tiers" == *" ${w##*@} "* ]] && echo "$t ${w%@*} ${w##*@}"
		done
	done < <(test_progs)
	return 0
}

case "${1:-}" in
--check) check ;;
--runs) runs_table ;;
--tiers) list "${2:?--tiers \"gate 1 ...\"}" ;;
"") list "$tiers_all" ;;
-h | --help) sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//' ;;
*) echo "placement: unknown argument $1" >&2; exit 2 ;;
esac
