#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest script of a suite run (tools/vm/suite.sh): guest a runs the
# selftests' run_tests target (it prints KTAP), guest b run_peer.
set -euo pipefail
case "$RIG_ROLE" in
a) target=run_tests ;;
*) target=run_peer ;;
esac
exec make -s --no-print-directory -C "$RIG_REPO/selftests" "$target"
