#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# "make -j2" on a fresh clone must run the CMake build once. When the
# provider and unit targets each had a "cmake --build" recipe, make -j ran
# both at once on the same tree and the link failed ("undefined reference
# to integ::run_selfcheck()"); a second make passed. Checked with make -n
# (the recipes make would run) on an unconfigured build folder: "cmake
# --build" must appear once for "provider unit" and "check-unit provider".
#
#   tests/make_parallel_test.sh REPO
set -euo pipefail
repo=${1:?usage: make_parallel_test.sh REPO}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for goals in "provider unit" "check-unit provider"; do
	# shellcheck disable=SC2086 # the goals, word-split
	out=$(make -n -j2 -C "$repo" $goals BUILD="$tmp/build" KDIR=/nonexistent 2>&1) || {
		echo "FAIL: make -n -j2 $goals failed: $out"
		exit 1
	}
	n=$(grep -c -- "cmake --build $tmp/build" <<<"$out" || true)
	if [ "$n" != 1 ]; then
		echo "FAIL: make -j2 $goals runs \"cmake --build\" $n times on one tree; make -n says:"
		echo "$out"
		exit 1
	fi
done
echo "PASS: make -j2 runs the CMake build once"
