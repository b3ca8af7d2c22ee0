#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Atomic operations between the guests with perftest's ib_atomic_bw
# (FETCH_AND_ADD, then CMP_AND_SWAP): the atomic_bw rows of
# lib/perftest_runs.sh, which says what they check. Skipped when the device
# does not offer atomics.
# timeout: 120
# place: stock@2
# shellcheck source=lib/perftest_runs.sh
. "$(dirname "$0")/lib/perftest_runs.sh"
# perf_matrix.sh and the benchmark cover rxe-rxe.
# sroce requesting from rxe (rxe-sroce) is in perf_matrix.sh, which runs
# every perftest tool there.
perf_runs sroce-sroce sroce-rxe
