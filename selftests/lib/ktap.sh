#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# KTAP output helpers (Documentation/dev-tools/ktap.rst of the kernel), the
# format the kernel's kselftests print. Sourced by the guest test runner and
# by the host-side checks (tools/lint.sh, tools/vm/selftest.sh).
#
#   ktap_header; ktap_plan N
#   ktap_result NAME STATUS [SKIP_REASON]   STATUS: 0 pass, 4 skip, else fail
#   ktap_pass NAME; ktap_fail NAME; ktap_skip NAME REASON
#   ktap_diag MESSAGE...; ktap_totals

KTAP_N=0
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0
# Exit status of a test that could not run here (kselftest's KSFT_SKIP).
KSFT_SKIP=4

ktap_header() { echo "TAP version 13"; }
ktap_plan() { echo "1..$1"; }
ktap_diag() { echo "# $*"; }

ktap_pass() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_PASS=$((KTAP_PASS + 1))
	echo "ok $KTAP_N $1"
}

ktap_fail() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_FAIL=$((KTAP_FAIL + 1))
	echo "not ok $KTAP_N $1"
}

ktap_skip() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_N $1 # SKIP ${2:-}"
}

ktap_result() {
	case "$2" in
	0) ktap_pass "$1" ;;
	"$KSFT_SKIP") ktap_skip "$1" "${3:-}" ;;
	*) ktap_fail "$1" ;;
	esac
}

ktap_totals() {
	echo "# totals: pass:$KTAP_PASS fail:$KTAP_FAIL xfail:0 xpass:0 skip:$KTAP_SKIP error:0"
}
