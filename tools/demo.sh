#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# "make demo": install what is missing, build, boot two qemu guests joined by
# a virtual Ethernet link, run real RDMA traffic between them and print what
# it measured. Every number comes from a guest test that passed in this run
# (selftests/, see Documentation/testing.rst); a pair whose tests fail shows
# FAILED, never a number.
#
#   tools/demo.sh [--no-setup] [--no-build] [-k KERNEL]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo" || exit 1

# Device pairs to demonstrate: TYPE_A-TYPE_B, one boot of two guests each.
DEMO_PAIRS=(rxe-rxe sroce-sroce sroce-rxe)

# Every pair is measured the same way, side by side in one table: rxe-rxe
# (the kernel's soft-RoCE), sroce-sroce, and sroce-rxe (interop). A pair
# that needs sroce while sroce.ko is not built is shown as "not built".

# The guest tests the demo runs and the numbers it shows from them
# ("metric|label|scale": the metric's value is multiplied by scale).
DEMO_TESTS="link.sh tcp_bw.sh rc_pingpong.sh rc_verify.sh write_bw.sh read_bw.sh send_lat.sh"
ROWS=(
	"tcp_bw|TCP over the link, iperf3 (Mbit/s)|1"
	"rc_pingpong_ipv4_1B_rtt|RC send round trip, 1 B, ibv_rc_pingpong (us)|1"
	"rc_pingpong_ipv4_4096B_rtt|RC send round trip, 4 KiB (us)|1"
	"rc_pingpong_ipv4_1048576B_bw|RC send 1 MiB messages, checked (Mbit/s)|1"
	"rc_pingpong_ipv6_4096B_bw|RC send 4 KiB over the IPv6 GID (Mbit/s)|1"
	"rc_verify_ipv4_checks|SEND/WRITE/READ/atomics, every byte checked (checks)|1"
	"send_lat_2B_typical|SEND latency 2 B typical, ib_send_lat (us)|1"
	"write_bw_65536B|RDMA WRITE 64 KiB, ib_write_bw (MB/s)|1"
	"write_bw_64B_rate|RDMA WRITE 64 B message rate (k msg/s)|1000"
	"read_bw_65536B|RDMA READ 64 KiB, ib_read_bw (MB/s)|1"
)

setup=1
build=1
kernel=()
while [ $# -gt 0 ]; do
	case "$1" in
	--no-setup) setup=0 ;;
	--no-build) build=0 ;;
	-k) kernel=(-k "${2:?}"); shift ;;
	-h | --help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

out=$repo/out/demo
mkdir -p "$out"
say() { echo "demo: $*"; }

if [ "$setup" = 1 ]; then
	say "checking the Debian packages (tools/setup.sh)"
	bash tools/setup.sh || exit 1
fi
guest_kernel=$(bash tools/vm/run.sh --print-kernel "${kernel[@]}") || exit 1

# sroce.ko must match the guest kernel, not the machine's.
module=0
if [ "$build" = 1 ]; then
	if ls kernel/*.c >/dev/null 2>&1; then
		say "building sroce.ko for $guest_kernel"
		if make -s module KDIR="/lib/modules/$guest_kernel/build" >"$out/module.log" 2>&1; then
			module=1
		else
			say "sroce.ko did not build ($out/module.log); its rows are left out"
		fi
	else
		say "no kernel sources yet: sroce.ko is not built"
	fi
	if [ -f CMakeLists.txt ]; then
		say "building the provider and tools (cmake, build/)"
		make -s provider >"$out/cmake.log" 2>&1 ||
			say "the CMake build failed ($out/cmake.log)"
	fi
elif [ -f sroce.ko ]; then
	module=1
fi

declare -A result
for pair in "${DEMO_PAIRS[@]}"; do
	if [[ "$pair" == *sroce* ]] && [ "$module" != 1 ]; then
		result[$pair]="not built"
		continue
	fi
	say "booting two guests for $pair and running: $DEMO_TESTS"
	run=$out/$pair
	# Every demo test on every pair (make test skips repeated coverage).
	bash tools/vm/suite.sh "${kernel[@]}" -t 900 -e RIG_ALL_SUITES=1 \
		--tests "$DEMO_TESTS" -o "$run" "$pair" \
		>"$out/$pair.log" 2>&1
	rc=$?
	grep -E '^rig: (guest .: userspace .*guest uptime|PASS|FAIL)' "$out/$pair.log" | sed 's/^/      /'
	sed -n '/^--- suite /,$p' "$out/$pair.log" | grep -E '^(ok|not ok) ' | sed 's/^/      /'
	if [ "$rc" = 0 ]; then result[$pair]=ok; else result[$pair]=FAILED; fi
done

# value PAIR METRIC SCALE: a number from a test of PAIR that passed.
value() {
	local pair=$1 metric=$2 scale=$3 run=$out/$1 test v
	[ "${result[$pair]}" = ok ] || { echo "${result[$pair]}"; return; }
	read -r test v < <(awk -v m="$metric" '$3 == m { print $2, $4; exit }' "$run/metrics" 2>/dev/null)
	if [ -z "${v:-}" ]; then
		echo "-"
	elif ! grep -qE "^ok [0-9]+ $test\$" "$run/a/script.log"; then
		echo "FAILED"
	else
		awk -v v="$v" -v s="$scale" 'BEGIN { x = v * s; printf (x >= 100 || x == int(x) ? "%.0f" : "%.2f"), x }'
	fi
}

echo
echo "sroce demo: RDMA between two qemu guests (kernel $guest_kernel, software CPU"
echo "emulation, 1 vCPU each, link MTU 4200: RoCE MTU 4096). Absolute numbers are"
echo "those of an emulated machine; compare pairs side by side."
echo
printf '%-58s' ""
for pair in "${DEMO_PAIRS[@]}"; do printf '%14s' "$pair"; done
echo
for row in "${ROWS[@]}"; do
	IFS='|' read -r metric label scale <<<"$row"
	printf '%-58s' "$label"
	for pair in "${DEMO_PAIRS[@]}"; do printf '%14s' "$(value "$pair" "$metric" "$scale")"; done
	echo
done
printf '%-58s' "guest boot to userspace (s)"
for pair in "${DEMO_PAIRS[@]}"; do
	printf '%14s' "$(awk '$1 == "a" { sub("boot_s=", "", $2); print $2 }' "$out/$pair/.rig/timings" 2>/dev/null)"
done
echo
echo
if [[ " ${DEMO_PAIRS[*]} " != *sroce* ]]; then
	echo "No sroce column yet: sroce joins the table once the sroce guest suites pass"
	echo "(see the EXTENSION POINT in tools/demo.sh)."
fi
echo "Logs: $out"
fail=0
for pair in "${DEMO_PAIRS[@]}"; do
	[ "${result[$pair]}" = FAILED ] && fail=1
done
exit "$fail"
