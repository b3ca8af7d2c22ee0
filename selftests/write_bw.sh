#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RDMA WRITE bandwidth between the guests with perftest's ib_write_bw, 64 B
# and 64 KiB messages: the write_bw rows of lib/perftest_runs.sh, which says
# what each row checks.
# timeout: 180
# place: stock@2
# shellcheck source=lib/perftest_runs.sh
. "$(dirname "$0")/lib/perftest_runs.sh"
# sroce requesting from rxe (rxe-sroce) is in perf_matrix.sh, which runs
# every perftest tool there.
perf_runs sroce-sroce sroce-rxe rxe-rxe
