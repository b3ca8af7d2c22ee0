#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The kernel module's layering, checked from its sources (no build):
#   - every file of kernel/ is in the layer list of
#     Documentation/architecture.rst (between ".. layers: begin" and
#     ".. layers: end"; bottom first, one layer a line, paths under
#     kernel/), once;
#   - a file includes only headers of lower layers (a .c file also the
#     headers of its own layer);
#   - a .c file uses only the functions of .c files of lower layers (a
#     reference to a non-static function defined in another .c file:
#     a call, or a function pointer in an ops table);
#   - Kbuild lists the objects in the same order;
#   - no function is longer than 100 lines (kernel style: the body
#     opens with "{" alone in column 0 and ends with "}" in column 0).
# Prints one line per finding and exits 1 if there is any.
#
#   tools/layers.sh [REPO]          check REPO (default: this checkout)
#   tools/layers.sh --self-test     break a copy of this checkout in each
#                                   way above; each break must be found
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
max_fn_lines=100

# The layer list: "LAYER FILE" per file, LAYER counting from 1.
layer_list() {
	awk '
		/^\.\. layers: begin/ { on = 1; next }
		/^\.\. layers: end/ { on = 0 }
		on && /^   [^ ]/ { n++; for (i = 1; i <= NF; i++) print n, $i }
	' "$1/Documentation/architecture.rst"
}

# Source without comments or string contents, includes not expanded.
strip_comments() {
	gcc -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null |
		sed -E 's/"([^"\\]|\\.)*"/""/g'
}

check() {
	local repo=$1 bad=0 f ly inc il target def user
	local -A layer=() defined=()
	local -a files=()

	cd "$repo" || return 2
	while read -r ly f; do
		if [ -n "${layer[$f]:-}" ]; then
			echo "layers: kernel/$f is listed twice"
			bad=1
		fi
		layer[$f]=$ly
	done < <(layer_list "$repo")
	if [ ${#layer[@]} = 0 ]; then
		echo "layers: no layer list in Documentation/architecture.rst"
		return 1
	fi
	mapfile -t files < <(cd kernel && find . -name '*.[ch]' ! -name '*.mod.c' |
		sed 's|^\./||' | LC_ALL=C sort)
	for f in "${files[@]}"; do
		if [ -z "${layer[$f]:-}" ]; then
			echo "layers: kernel/$f is in no layer (Documentation/architecture.rst)"
			bad=1
		fi
	done
	for f in "${!layer[@]}"; do
		[ -f "kernel/$f" ] || { echo "layers: kernel/$f is listed but does not exist"; bad=1; }
	done
	[ "$bad" = 0 ] || return 1

	# Includes: resolved from the including file's folder, then kernel/.
	for f in "${files[@]}"; do
		ly=${layer[$f]}
		while read -r inc; do
			target=
			if [ -f "kernel/$(dirname "$f")/$inc" ]; then
				target=$(realpath -m --relative-to=kernel "kernel/$(dirname "$f")/$inc")
			elif [ -f "kernel/$inc" ]; then
				target=$inc
			else
				continue	# include/, the kernel's own
			fi
			il=${layer[$target]:-0}
			if [ "$il" -gt "$ly" ] || { [ "$il" = "$ly" ] && [[ "$f" != *.c ]]; } ||
				[ "$target" = "$f" ]; then
				echo "layers: kernel/$f (layer $ly) includes kernel/$target (layer $il): up the layer order"
				bad=1
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "kernel/$f")
	done

	# Non-static functions defined in .c files: name -> file.
	for f in "${files[@]}"; do
		[[ "$f" == *.c ]] || continue
		while read -r def; do
			if [ -n "${defined[$def]:-}" ]; then
				echo "layers: $def is defined in kernel/${defined[$def]} and kernel/$f"
				bad=1
			fi
			defined[$def]=$f
		done < <(strip_comments "kernel/$f" | awk '
			/^[A-Za-z_]/ && !/^(static|extern|typedef|struct [A-Za-z_0-9]+ *\{|enum|union|#)/ &&
			!/;[[:space:]]*$/ && match($0, /[A-Za-z_][A-Za-z_0-9]*\(/) {
				print substr($0, RSTART, RLENGTH - 1)
			}' | grep -v -E '^(EXPORT_SYMBOL|EXPORT_SYMBOL_GPL|MODULE_[A-Z_]+|module_[a-z_]+|DEFINE_[A-Z_]+|LIST_HEAD|late_initcall|module_init|module_exit)$')
	done
	# Uses of those functions in other .c files.
	for f in "${files[@]}"; do
		[[ "$f" == *.c ]] || continue
		ly=${layer[$f]}
		while read -r user; do
			target=${defined[$user]:-}
			if [ -z "$target" ] || [ "$target" = "$f" ]; then
				continue
			fi
			il=${layer[$target]}
			if [ "$il" -ge "$ly" ]; then
				echo "layers: kernel/$f (layer $ly) uses $user() of kernel/$target (layer $il): up the layer order"
				bad=1
			fi
		done < <(strip_comments "kernel/$f" | grep -o -E '\b[A-Za-z_][A-Za-z_0-9]*\b' | sort -u)
	done

	# Kbuild's objects in the layer order.
	local -a objs=()
	local prev=0 o
	mapfile -t objs < <(sed -n 's/^\tkernel\/\([^ ]*\)\.o.*/\1.c/p' Kbuild)
	for o in "${objs[@]}"; do
		ly=${layer[$o]:-}
		if [ -z "$ly" ]; then
			echo "layers: Kbuild builds kernel/$o, which is in no layer"
			bad=1
		elif [ "$ly" -lt "$prev" ]; then
			echo "layers: Kbuild lists kernel/$o (layer $ly) after a file of layer $prev"
			bad=1
		else
			prev=$ly
		fi
	done

	# Function length.
	for f in "${files[@]}"; do
		[[ "$f" == *.c ]] || continue
		awk -v f="kernel/$f" -v max="$max_fn_lines" '
			/^\{$/ { start = FNR; name = prev; next }
			/^\}/ { if (start && FNR - start + 1 > max) {
					sub(/\(.*/, "", name); n = split(name, w, /[ *]+/)
					printf "layers: %s:%d: %s() is %d lines long (at most %d)\n",
					       f, start, w[n], FNR - start + 1, max
					bad = 1
				}
				start = 0 }
			/^[A-Za-z_].*\(/ { prev = $0 }
			END { exit bad }
		' "kernel/$f" || bad=1
	done
	return "$bad"
}

# Break a copy of the checkout in each way the check must find.
self_test() {
	local tmp rc=0 out
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	expect() {
		local what=$1 pattern=$2
		rm -rf "$tmp/r"
		mkdir -p "$tmp/r"
		cp -r "$repo/kernel" "$repo/Kbuild" "$tmp/r/"
		mkdir -p "$tmp/r/Documentation"
		cp "$repo/Documentation/architecture.rst" "$tmp/r/Documentation/"
		(cd "$tmp/r" && eval "$3")
		if out=$(check "$tmp/r") || ! grep -q -e "$pattern" <<<"$out"; then
			echo "layers self-test: $what was not found; the check said:"
			echo "$out" | sed 's/^/  /'
			rc=1
		fi
	}
	out=$(check "$repo") || { echo "layers self-test: this checkout fails:"; echo "$out"; return 1; }
	expect "an upward include" "kernel/sroce_queue.c (layer [0-9]*) includes kernel/sroce_engine.h" \
		"sed -i '0,/^#include \"/s//#include \"sroce_engine.h\"\n&/' kernel/sroce_queue.c"
	expect "an upward call" "kernel/sroce_sq.c (layer [0-9]*) uses sroce_req_run()" \
		"printf 'void sroce_self_test_up(struct sroce_qp *qp)\n{\n\tsroce_req_run(qp);\n}\n' >>kernel/sroce_sq.c"
	expect "a circle between two headers" "kernel/sroce_queue.h (layer [0-9]*) includes kernel/sroce_cq.h" \
		"sed -i '0,/^#include \"/s//#include \"sroce_cq.h\"\n&/' kernel/sroce_queue.h"
	expect "a file in no layer" "kernel/sroce_new.c is in no layer" \
		"printf '// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB\n' >kernel/sroce_new.c"
	expect "a Kbuild order against the layers" "Kbuild lists kernel/sroce_queue.c" \
		"sed -i '/kernel\/sroce_queue.o/d; s|^\(\tkernel/sroce_main.o\)|\tkernel/sroce_queue.o \\\\\n\1|' Kbuild"
	expect "a function of 101 lines" "sroce_self_test_long() is 101 lines long" \
		"{ printf 'void sroce_self_test_long(void)\n{\n'; for i in \$(seq 99); do printf '\tbarrier();\n'; done; printf '}\n'; } >>kernel/sroce_main.c"
	return "$rc"
}

if [ "${1:-}" = --self-test ]; then
	repo=$(cd "$here/.." && pwd)
	self_test
	exit $?
fi
repo=$(cd "${1:-$here/..}" && pwd) || exit 2
check "$repo"
