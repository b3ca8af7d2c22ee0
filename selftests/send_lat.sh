#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SEND latency between the guests with perftest's ib_send_lat (2 B, RC): the
# send_lat row of lib/perftest_runs.sh, which says what it checks; skipped
# when perftest cannot time.
# timeout: 120
# place: stock@2
# shellcheck source=lib/perftest_runs.sh
. "$(dirname "$0")/lib/perftest_runs.sh"
# perf_matrix.sh and the benchmark cover rxe-rxe.
# sroce requesting from rxe (rxe-sroce) is in perf_matrix.sh, which runs
# every perftest tool there.
perf_runs sroce-sroce sroce-rxe
