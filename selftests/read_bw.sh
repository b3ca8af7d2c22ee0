#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RDMA READ bandwidth between the guests with perftest's ib_read_bw, 64 B
# and 64 KiB messages: the read_bw rows of lib/perftest_runs.sh, which says
# what each row checks.
# timeout: 180
# place: stock@2
# shellcheck source=lib/perftest_runs.sh
. "$(dirname "$0")/lib/perftest_runs.sh"
# perf_matrix.sh and the benchmark cover rxe-rxe.
# sroce requesting from rxe (rxe-sroce) is in perf_matrix.sh, which runs
# every perftest tool there.
perf_runs sroce-sroce sroce-rxe
