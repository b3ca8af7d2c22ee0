#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma-core's own conformance suite (python3-pyverbs installs it under
# /usr/share/doc/rdma-core/tests, partly gzipped) on this guest's device:
# traffic, CQ, QP, MR, atomics and rdma_cm tests over loopback on one
# device. Passes when it ran tests, none failed or errored, and every test
# of lib/rdma_core_pass-VERSION.txt (the tests that pass on sroce with
# Debian's rdma-core of that major version) passed: the suite itself skips a
# test whose verb the device reports unsupported (EOPNOTSUPP), so a verb
# that regressed to EOPNOTSUPP would otherwise pass as a skip. Tests that
# pass and are not listed are named (the list should grow). Runs in guest
# a; guest b idles: a one-guest test, which "tools/vm/suite.sh sroce" runs
# on one guest.
# timeout: 900
# place: stock-1@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
rig_suites sroce-sroce sroce

if [ "${RIG_NGUESTS:-1}" = 2 ] && rig_is_b; then
	# A single-guest test: keep in step with guest a until it is done.
	end=$((EPOCHSECONDS + ${RIG_TEST_TIMEOUT:-900}))
	until [ -e "$RIG_TEST_SYNC/$RIG_PEER_ROLE.done" ] || [ "$EPOCHSECONDS" -ge "$end" ]; do
		sleep 0.5
	done
	exit 0
fi
# On sroce: in the sroce-sroce and sroce suites. RDMA_CORE_ANY_DEV=1
# (tools/vm/suite.sh -e RDMA_CORE_ANY_DEV=1 -e RIG_ALL_SUITES=1 --tests
# rdma_core_suite.sh rxe-rxe) runs it on rxe too, to compare pass and skip
# counts.
if [ "${RDMA_CORE_ANY_DEV:-0}" != 1 ]; then
	[ "$RIG_DEV_TYPE" = sroce ] || rig_skip "runs on sroce devices only"
	case "${RIG_SUITE:-}" in
	"" | sroce | sroce-sroce) ;;
	*) rig_skip "the rdma-core suite runs in the sroce-sroce suite" ;;
	esac
fi
rig_require_cmd python3
[ -f /usr/share/doc/rdma-core/tests/run_tests.py ] ||
	rig_skip "python3-pyverbs is not installed"
rig_setup_dev

# The huge page tests (parent domain allocators on a 2 MiB page, ODP)
# skip without 2 MiB pages reserved: 16 of them for the run.
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ -w "$hp" ]; then
	hp_before=$(cat "$hp")
	trap 'echo "$hp_before" >"$hp"' EXIT
	echo 16 >"$hp"
	rig_log "2 MiB huge pages reserved: $(cat "$hp")"
fi

work=/tmp/rdma-core-tests
rm -rf "$work" && mkdir -p "$work"
cp -r /usr/share/doc/rdma-core/tests "$work/" || rig_fail "cannot copy the suite"
gunzip -f "$work"/tests/*.gz 2>/dev/null || true
log=$RIG_TEST_OUT/run_tests.log
results=$RIG_TEST_OUT/results.tsv
: >"$results"
# lib/rdma_core_tests.py is run_tests.py with setUp()'s netdev lookups
# cached: uncached they cost 150 of the suite's 190 s in a TCG guest.
(cd "$work" && RDMA_CORE_RESULTS=$results timeout 840 python3 "$RIG_REPO/selftests/lib/rdma_core_tests.py" tests \
	--dev "$RIG_DEV" -v) >"$log" 2>&1
rc=$?

ran=$(sed -n 's/^Ran \([0-9]\+\) tests.*/\1/p' "$log")
# From unittest's last line ("OK (skipped=N)", "FAILED (failures=F,
# errors=E, skipped=N)"): a test that warned prints its "ok" on a line of
# its own, so counting "... ok" lines misses some.
verdict=$(grep -E '^(OK|FAILED)( \(|$)' "$log" | tail -n 1)
count_of() {
	local n
	n=$(sed -n "s/.*[(, ]$1=\([0-9]\+\).*/\1/p" <<<"$verdict")
	echo "${n:-0}"
}
skipped=$(count_of skipped)
failed=$(($(count_of failures) + $(count_of errors)))
other=$(($(count_of "expected failures") + $(count_of "unexpected successes")))
ok=$((${ran:-0} - skipped - failed - other))
rig_log "rdma-core suite on $RIG_DEV: ran ${ran:-0}, ok $ok, skipped $skipped, failed/errors $failed (exit $rc)"
rig_metric rdma_core_ok "$ok" tests
rig_metric rdma_core_skipped "$skipped" tests
grep -E '^(FAIL|ERROR): ' "$log" | head -20
[ -n "$verdict" ] || rig_fail "no OK or FAILED line at the end of the suite's output"
[ "${ran:-0}" -gt 0 ] || rig_fail "the suite ran no test"
[ "$failed" = 0 ] || rig_fail "$failed tests failed or errored"
[ "$rc" = 0 ] || rig_fail "run_tests.py exited $rc"

# The tests that must pass, for this rdma-core: its major version from
# libibverbs' file name (libibverbs.so.1.14.44.0 is rdma-core 44.0; the
# guest has no dpkg database).
lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libibverbs.so.1)
ver=$(sed -n 's/.*\.so\.[0-9]*\.[0-9]*\.\([0-9]*\)\.[0-9]*$/\1/p' <<<"$lib")
expected=$RIG_REPO/selftests/lib/rdma_core_pass-$ver.txt
[ -f "$expected" ] ||
	rig_fail "no list of the tests that must pass for rdma-core ${ver:-?} ($expected)"
passed=$(awk -F '\t' '$1 == "ok" { print $2 }' "$results" | sort -u)
want=$(grep -v '^#' "$expected" | sort -u)
missing=$(comm -23 <(echo "$want") <(echo "$passed"))
extra=$(comm -13 <(echo "$want") <(echo "$passed"))
[ -z "$extra" ] || rig_log "passed, not in $(basename "$expected") yet: $(echo "$extra" | tr '\n' ' ')"
if [ -n "$missing" ]; then
	while IFS= read -r t; do
		rig_log "expected to pass: $t: $(awk -F '\t' -v t="$t" '$2 == t { print $1 }' "$results" | head -n 1 | grep . || echo "not run")"
	done <<<"$missing"
	rig_fail "$(echo "$missing" | wc -l) of the $(echo "$want" | wc -l) tests that must pass did not"
fi
rig_log "all $(echo "$want" | wc -l) tests that must pass passed"
