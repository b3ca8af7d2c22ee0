#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# "make provider" after a CMake configure that failed (a missing package,
# say) must configure again. A failed configure leaves CMakeCache.txt in
# the build folder; when that file was make's stamp of a configured tree,
# every later make went straight to "cmake --build", which found no build
# files and failed ("No rule to make target 'Makefile'") until the folder
# was removed by hand. Checked with make -n on a build folder that holds
# only such a cache.
#
#   tests/make_configure_test.sh REPO
set -euo pipefail
repo=${1:?usage: make_configure_test.sh REPO}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/CMakeCache.txt"
out=$(make -n -C "$repo" provider BUILD="$tmp" KDIR=/nonexistent 2>&1) || {
	echo "FAIL: make -n provider failed: $out"
	exit 1
}
if ! grep -q -- "cmake -S . -B $tmp" <<<"$out"; then
	echo "FAIL: a build folder left by a failed configure is not configured again; make -n says:"
	echo "$out"
	exit 1
fi
echo "PASS: make configures again after a failed configure"
