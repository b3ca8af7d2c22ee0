#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Static checks, one KTAP test line per check:
#   checkpatch    scripts/checkpatch.pl --strict on kernel/**/*.[ch],
#                 include/uapi/**/*.h and the rig's test modules
#                 (tools/ktest, tools/vm/testmod); justified exceptions are listed in
#                 tools/checkpatch-ignore.txt
#   sparse        the module and tools/ktest built with C=2 W=1 (sparse and
#                 the extra gcc warnings): any warning in our files fails
#   sparse-6.12   the same against the 6.12 LTS headers (skipped when
#                 linux-headers-6.12-amd64 is not installed)
#   clang-format  --dry-run --Werror on the C++ sources of provider/, tests/
#                 and tools/ (the repo's .clang-format)
#   shell         shellcheck on the project's bash and busybox sh scripts
#   placement     every guest test in TEST_PROGS says where it runs, in one
#                 "# place:" line of known runs and tiers that fit its
#                 rig_suites line (tools/placement.sh --check)
#   layers        the kernel's includes and calls go down the layer order of
#                 Documentation/architecture.rst, no function passes 100
#                 lines (tools/layers.sh)
#   layers-self-test  tools/layers.sh finds an upward include, an upward
#                 call, a header circle, an unplaced file, a Kbuild order
#                 against the layers and a long function in a copy of the tree
# A check with nothing to look at yet is reported as skipped.
#
#   tools/lint.sh [CHECK...]      (default: all eight)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$repo/selftests/lib/ktap.sh"

checkpatch=${CHECKPATCH:-/usr/src/linux-source-6.1/scripts/checkpatch.pl}
ignore_file=$here/checkpatch-ignore.txt
work=$repo/out/lint
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=(checkpatch sparse sparse-6.12 clang-format shell placement layers layers-self-test)

cd "$repo" || exit 1
mkdir -p "$work"

# Files tracked or not, without build trees. Prints paths relative to repo.
src_files() {
	find "$@" -type f 2>/dev/null | grep -v -e '^build/' -e '^out/' -e '/\.' | LC_ALL=C sort
}

kernel_sources() {
	{
		src_files kernel | grep -E '\.[ch]$'
		src_files include/uapi | grep -E '\.h$'
		src_files tools/ktest tools/vm/testmod | grep -E '\.c$' | grep -v '\.mod\.c$'
	} | LC_ALL=C sort -u
}

# checkpatch-ignore.txt: "TYPE reason..." ignores TYPE everywhere,
# "path:TYPE reason..." in one file only. Prints the types for file $1.
ignored_types() {
	local file=$1 what _
	[ -f "$ignore_file" ] || return 0
	while read -r what _; do
		case "$what" in
		'' | '#'*) continue ;;
		*:*) [ "${what%%:*}" = "$file" ] && echo "${what#*:}" ;;
		*) echo "$what" ;;
		esac
	done <"$ignore_file" | paste -sd, -
}

check_checkpatch() {
	local files f ign out bad=0 n=0
	mapfile -t files < <(kernel_sources)
	if [ ${#files[@]} -eq 0 ]; then
		ktap_skip checkpatch "no kernel sources yet"
		return
	fi
	if [ ! -x "$checkpatch" ]; then
		ktap_diag "checkpatch: $checkpatch missing (tools/setup.sh extracts linux-source-6.1)"
		ktap_fail checkpatch
		return
	fi
	for f in "${files[@]}"; do
		n=$((n + 1))
		ign=$(ignored_types "$f")
		# Run outside the repo: checkpatch caches CamelCase words in
		# ./.checkpatch-camelcase.git.* when it finds ./.git.
		out=$(cd "$work" && "$checkpatch" --strict --no-tree --terse --show-types \
			--no-summary ${ign:+--ignore "$ign"} -f "$repo/$f" 2>&1)
		if [ -n "$out" ]; then
			bad=$((bad + 1))
			out=${out//"$repo/"/}
			echo "# ${out//$'\n'/$'\n'# }"
		fi
	done
	ktap_diag "checkpatch: $n files, $bad with findings"
	if [ "$bad" = 0 ]; then ktap_pass checkpatch; else ktap_fail checkpatch; fi
}

# kbuild writes objects next to the sources: build a copy of the module's
# sources under out/ so that this check never races with a build of the
# work tree, and map the paths back in its messages.
# check_sparse [NAME KDIR]: NAME is the KTAP name (sparse-6.12 for the 6.12
# headers); without KDIR, $KDIR or tools/kdir.sh.
check_sparse() {
	local sparse=${1:-sparse} kdir=${2:-} tree log warn rc=0
	if ! src_files kernel | grep -qE '\.c$' || [ ! -f Kbuild ]; then
		ktap_skip "$sparse" "no kernel sources yet"
		return
	fi
	[ -n "$kdir" ] || kdir=${KDIR:-$(bash "$here/kdir.sh" 2>/dev/null)}
	if [ -z "$kdir" ] || [ ! -d "$kdir" ]; then
		ktap_diag "$sparse: no kernel build tree (install linux-headers-amd64 or set KDIR)"
		ktap_fail "$sparse"
		return
	fi
	if ! command -v sparse >/dev/null; then
		ktap_diag "$sparse: not installed (tools/setup.sh)"
		ktap_fail "$sparse"
		return
	fi
	tree=$work/$sparse-tree
	log=$work/$sparse.log
	rm -rf "$tree"
	mkdir -p "$tree"
	cp Kbuild Makefile "$tree/"
	tar -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod*' \
		kernel include tools/ktest | tar -C "$tree" -xf -
	make -C "$kdir" M="$tree" C=2 W=1 SROCE_KTEST=m -j"$(nproc)" modules >"$log" 2>&1 || rc=$?
	sed -i "s|$tree/||g" "$log"
	warn=$(grep -E '^(\./)?(kernel|include|tools/ktest)/[^:]+:[0-9]+(:[0-9]+)?: (warning|error|note)' "$log")
	if [ -n "$warn" ]; then
		echo "# ${warn//$'\n'/$'\n'# }"
		ktap_diag "$sparse: $(echo "$warn" | grep -c .) warning lines from our files"
		ktap_fail "$sparse"
	elif [ "$rc" != 0 ]; then
		tail -n 20 "$log" | sed 's/^/# /'
		ktap_diag "$sparse: the build failed (make exit $rc)"
		ktap_fail "$sparse"
	else
		ktap_diag "$sparse: clean ($(grep -c '^  CHECK' "$log") files checked with $(basename "$kdir"))"
		ktap_pass "$sparse"
	fi
}

# C++ sources; a .h counts as C++ when it uses C++-only syntax.
cxx_files() {
	local f
	src_files provider tests tools | while read -r f; do
		case "$f" in
		*.cc | *.cpp | *.cxx | *.hpp | *.hh) echo "$f" ;;
		*.h)
			grep -qE '^\s*(namespace|template\s*<|class\s+\w+|using\s+\w+\s*=)|\b(constexpr|nullptr|std::|static_cast<)' "$f" &&
				echo "$f"
			;;
		esac
	done
}

check_clang_format() {
	local files out
	mapfile -t files < <(cxx_files)
	if [ ${#files[@]} -eq 0 ]; then
		ktap_skip clang-format "no C++ sources yet"
		return
	fi
	if ! command -v clang-format >/dev/null; then
		ktap_diag "clang-format: not installed (tools/setup.sh)"
		ktap_fail clang-format
		return
	fi
	out=$(clang-format --style=file --dry-run --Werror "${files[@]}" 2>&1)
	if [ -n "$out" ]; then
		echo "$out" | grep -E ': (error|warning):' | sed 's/^/# /' | head -n 60
		ktap_diag "clang-format: $(echo "$out" | grep -cE ': (error|warning):') findings in ${#files[@]} files (fix: clang-format -i FILE)"
		ktap_fail clang-format
	else
		ktap_diag "clang-format: ${#files[@]} files clean"
		ktap_pass clang-format
	fi
}

shell_files() {
	local f
	src_files tools selftests .ci | while read -r f; do
		case "$f" in
		*.sh | .ci/run) echo "$f" ;;
		*) head -n 1 "$f" 2>/dev/null | grep -qE '^#!.*\b(ba)?sh\b' && echo "$f" ;;
		esac
	done
}

check_shellcheck() {
	local files out
	mapfile -t files < <(shell_files)
	if [ ${#files[@]} -eq 0 ]; then
		ktap_skip shell "no shell scripts"
		return
	fi
	if ! command -v shellcheck >/dev/null; then
		ktap_diag "shellcheck: not installed (tools/setup.sh)"
		ktap_fail shell
		return
	fi
	# Warnings and errors fail; style notes are left to the author. In
	# batches, one per CPU at a time (all in one process: 60 s of CI's).
	out=$(printf '%s\0' "${files[@]}" |
		xargs -0 -n 16 -P "$(nproc)" shellcheck -x -S warning -f gcc 2>&1)
	if [ -n "$out" ]; then
		echo "$out" | sed 's/^/# /' | head -n 60
		ktap_diag "shellcheck: $(echo "$out" | grep -c .) findings in ${#files[@]} scripts"
		ktap_fail shell
	else
		ktap_diag "shellcheck: ${#files[@]} scripts clean"
		ktap_pass shell
	fi
}

check_placement() {
	local out
	if out=$(bash "$here/placement.sh" --check 2>&1); then
		ktap_diag "placement: $(bash "$here/placement.sh" | wc -l) placements of $(make -s --no-print-directory -C "$repo/selftests" list_tests TESTS='$(TEST_PROGS)' | wc -l) tests"
		ktap_pass placement
	else
		while IFS= read -r l; do ktap_diag "$l"; done <<<"$out"
		ktap_fail placement
	fi
}

# check_layers NAME [ARG]: tools/layers.sh [ARG]; its findings as diagnostics.
check_layers() {
	local name=$1 out
	shift
	if out=$(bash "$here/layers.sh" "$@" 2>&1); then
		ktap_pass "$name"
	else
		while IFS= read -r l; do ktap_diag "$l"; done <<<"$out"
		ktap_fail "$name"
	fi
}

ktap_header
ktap_plan "${#checks[@]}"
for c in "${checks[@]}"; do
	case "$c" in
	checkpatch) check_checkpatch ;;
	sparse) check_sparse ;;
	sparse-6.12)
		k612=$(find /lib/modules -mindepth 2 -maxdepth 2 -path '/lib/modules/6.12.*/build' 2>/dev/null |
			sort -V | tail -n 1)
		if [ -n "$k612" ]; then
			check_sparse sparse-6.12 "$k612"
		else
			ktap_skip sparse-6.12 "no 6.12 headers (tools/setup.sh --kernel-6.12)"
		fi
		;;
	clang-format) check_clang_format ;;
	shell) check_shellcheck ;;
	placement) check_placement ;;
	layers) check_layers layers ;;
	layers-self-test) check_layers layers-self-test --self-test ;;
	*)
		ktap_diag "unknown check $c"
		ktap_fail "$c"
		;;
	esac
done
ktap_totals
[ "$KTAP_FAIL" = 0 ]
