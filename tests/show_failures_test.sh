#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# tools/test-all.sh's show_failures must print a failed test's own
# diagnostics. KTAP puts a test's "# ..." lines before its "not ok" line;
# CI keeps only the head and the tail of a run's log, so the lines printed
# under a suite's result are all it shows of a failure. They were the last
# 40 diagnostic lines of the whole suite: for a test that failed in the
# middle (rc_netem, 32nd of 39), the next tests' lines and none of its own.
#
#   tests/show_failures_test.sh REPO
set -euo pipefail
repo=${1:?usage: show_failures_test.sh REPO}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eval "$(sed -n '/^show_failures() {$/,/^}$/p' "$repo/tools/test-all.sh")"
declare -F show_failures >/dev/null || { echo "FAIL: no show_failures in tools/test-all.sh"; exit 1; }
{
	echo "KTAP version 1"
	echo "1..3"
	echo "# first: 3 s"
	echo "ok 1 first"
	for i in $(seq 1 30); do echo "# [a] middle step $i"; done
	echo "# [a] FAIL: the middle test's reason"
	echo "#   an indented detail"
	echo "not ok 2 middle"
	for i in $(seq 1 60); do echo "# [a] last step $i"; done
	echo "ok 3 last"
} >"$tmp/suite.ktap"
out=$(show_failures "$tmp/suite.ktap")
fail=0
grep -q "FAIL: the middle test's reason" <<<"$out" || { echo "FAIL: the failed test's reason is not shown"; fail=1; }
grep -q "not ok 2 middle" <<<"$out" || { echo "FAIL: the not ok line is not shown"; fail=1; }
grep -q "last step" <<<"$out" && { echo "FAIL: a later test's lines are shown"; fail=1; }
grep -q "middle step 1$" <<<"$out" && { echo "FAIL: more than the last lines of a long diagnostic are shown"; fail=1; }
grep -q "middle step 30" <<<"$out" || { echo "FAIL: the last of the failed test's steps is not shown"; fail=1; }
if [ "$fail" = 1 ]; then
	echo "show_failures printed:"
	echo "$out"
	exit 1
fi
echo "PASS: show_failures prints the failed test's own diagnostics"
