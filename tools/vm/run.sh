#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The sroce test rig: boot one or two qemu (TCG) guests on an installed Debian
# kernel, each running a guest script, and judge the run.
#
#   tools/vm/run.sh [OPTIONS] SCRIPT_A [SCRIPT_B]
#
# With SCRIPT_B, two guests (roles a and b) are joined by one virtio-net link
# (qemu's datagram backend on 127.0.0.1). Each guest sees the host root
# read-only at the same paths and a per-run folder (the "shared" folder) that
# both guests and the host can write. See Documentation/testing.rst.
#
# Exit status: 0 pass, 1 the run failed (the reason is printed on one line
# starting with "rig: FAIL:"), 2 the rig could not be started.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
	cat <<EOF
usage: tools/vm/run.sh [OPTIONS] SCRIPT_A [SCRIPT_B]

  -k, --kernel VER      guest kernel: a release from /boot (6.1.0-56-amd64) or
                        a prefix (6.12); default: newest /boot/vmlinuz-6.1.*-amd64;
                        "debug" (or "kcsan"): the project's debug kernel
                        (tools/vm/debug-kernel.sh builds it)
      --kernel-b VER    another kernel for guest b (cross-kernel runs)
  -o, --out DIR         run folder (default: out/vm/runs/<time>-<pid>)
  -t, --timeout SEC     timeout of the whole run (default: 900)
      --mtu N           link MTU (default: 4200, RoCE active MTU 4096)
      --ip4-a ADDR/LEN  guest a IPv4 (default: 192.168.77.1/24); --ip4-b: .2
      --ip6-a ADDR/LEN  guest a IPv6 (default: fd77::1/64); --ip6-b: fd77::2/64
  -m, --mem MB          guest memory (default: 1024; 2048 on a debug kernel,
                        whose KASAN shadow, quarantine and KMEMLEAK metadata
                        take a quarter of 1 GB)
      --smp N           vCPUs per guest (default: 1; races between CPUs, such
                        as hostile_rings' flag_race, need 2 or more)
      --monitor         a qemu human monitor per guest on 127.0.0.1, TCP, at
                        its link port's number (tools/vm/monitor.sh); no
                        authentication: any local user can drive the qemu
      --link-buf BYTES  socket buffer of each end of the link (default:
                        8388608; 0: qemu's own socket with the host default,
                        which drops bursts when a guest is descheduled)
      --grace SEC       how long a guest may run on after its peer failed
                        (default: 20)
      --boot-limit SEC  a guest that has not reached userspace this long
                        after its start is started again, once (default:
                        90; 180 on a debug kernel; 0: never); a second
                        such boot fails the run
      --test-boot-hang ROLE  the first boot of guest ROLE hangs before
                        userspace (the rig's self-test of --boot-limit)
  -e, --env NAME=VALUE  environment for both guest scripts (repeatable)
      --env-a / --env-b NAME=VALUE   for one guest only
  -q, --quiet           print only the verdict line
      --print-kernel    print the guest kernel release that would be used
  -h, --help

Scripts run as root in the guest with bash, from the repo root, and must be
visible there: in the repo, or in the host root outside the folders that are
tmpfs in the guest (/tmp, /run, /root, /home, /var/{tmp,lib,cache,log}...).
EOF
}

die() {
	echo "rig: error: $*" >&2
	exit 2
}

# newest FILE...: the existing file with the highest version in its name.
newest() {
	local f
	for f in "$@"; do
		[ -e "$f" ] && echo "$f"
	done | sort -V | tail -n 1
}

# A kernel built by tools/vm/debug-kernel.sh: VARIANT is the name of one of
# its fragments (tools/vm/kconfig/VARIANT.config).
is_variant() {
	[[ "$1" =~ ^[a-z0-9]+$ ]] && [ "$1" != guest ] && [ -f "$here/kconfig/$1.config" ]
}

# variant_dir VARIANT: the built kernel's cache folder (or die).
variant_dir() {
	local d
	d=$(bash "$here/debug-kernel.sh" --variant "$1" --print 2>&1) || die "${d#debug-kernel: error: }"
	echo "$d"
}

pick_kernel() {
	local want=$1 img
	if is_variant "$want"; then
		cat "$(variant_dir "$want")/release"
		return
	fi
	if [ -z "$want" ]; then
		img=$(newest /boot/vmlinuz-6.1.*-amd64)
	elif [ -e "/boot/vmlinuz-$want" ]; then
		img=/boot/vmlinuz-$want
	else
		img=$(newest /boot/vmlinuz-"$want"*-amd64)
	fi
	[ -n "$img" ] || die "no installed kernel matches '${want:-6.1}' in /boot (tools/setup.sh)"
	echo "${img#/boot/vmlinuz-}"
}

kernel=""
kernel_b=""
print_kernel=0
out=""
timeout=900
mtu=4200
mem=""
smp=1
link_buf=8388608
monitor=0
grace=20
boot_limit=""
test_boot_hang=""
ip4_a=192.168.77.1/24
ip4_b=192.168.77.2/24
ip6_a=fd77::1/64
ip6_b=fd77::2/64
quiet=0
env_all=()
env_a=()
env_b=()
scripts=()

while [ $# -gt 0 ]; do
	case "$1" in
	-k | --kernel) kernel=${2:?}; shift ;;
	--kernel-b) kernel_b=${2:?}; shift ;;
	-o | --out) out=${2:?}; shift ;;
	-t | --timeout) timeout=${2:?}; shift ;;
	--mtu) mtu=${2:?}; shift ;;
	--ip4-a) ip4_a=${2:?}; shift ;;
	--ip4-b) ip4_b=${2:?}; shift ;;
	--ip6-a) ip6_a=${2:?}; shift ;;
	--ip6-b) ip6_b=${2:?}; shift ;;
	-m | --mem) mem=${2:?}; shift ;;
	--smp) smp=${2:?}; shift ;;
	--link-buf) link_buf=${2:?}; shift ;;
	--monitor) monitor=1 ;;
	--grace) grace=${2:?}; shift ;;
	--boot-limit) boot_limit=${2:?}; shift ;;
	--test-boot-hang) test_boot_hang=${2:?}; shift ;;
	-e | --env) env_all+=("${2:?}"); shift ;;
	--env-a) env_a+=("${2:?}"); shift ;;
	--env-b) env_b+=("${2:?}"); shift ;;
	-q | --quiet) quiet=1 ;;
	--print-kernel) print_kernel=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; die "unknown option $1" ;;
	*) scripts+=("$1") ;;
	esac
	shift
done

if [ "$print_kernel" = 1 ]; then
	pick_kernel "$kernel"
	exit 0
fi
if [ ${#scripts[@]} -lt 1 ] || [ ${#scripts[@]} -gt 2 ]; then
	usage >&2
	die "need one or two guest scripts"
fi
[[ "$timeout" =~ ^[0-9]+$ ]] || die "bad --timeout $timeout"
[[ "$mtu" =~ ^[0-9]+$ ]] || die "bad --mtu $mtu"
[[ "$grace" =~ ^[0-9]+$ ]] || die "bad --grace $grace"
# A debug kernel reaches userspace in 40-50 s on an idle host and in 80 s
# beside two other guests on a host whose hypervisor takes a quarter of
# its CPU (steal time): 90 s started both guests of a debug pair again
# that were only slow (test-all's run, 170 s to userspace), and a second
# slow boot would fail the run.
if [ -z "$boot_limit" ]; then
	boot_limit=90
	if is_variant "$kernel" || { [ -n "$kernel_b" ] && is_variant "$kernel_b"; }; then
		boot_limit=180
	fi
fi
[[ "$boot_limit" =~ ^[0-9]+$ ]] || die "bad --boot-limit $boot_limit"
[[ "$test_boot_hang" =~ ^[ab]?$ ]] || die "bad --test-boot-hang $test_boot_hang (a or b)"
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || die "bad --smp $smp"
if [ -z "$mem" ]; then
	mem=1024
	if is_variant "$kernel" || { [ -n "$kernel_b" ] && is_variant "$kernel_b"; }; then
		mem=2048
	fi
fi
[[ "$mem" =~ ^[1-9][0-9]*$ ]] || die "bad --mem $mem"
[ "$(id -u)" = 0 ] || die "must run as root (the guest shares the host root with root's rights)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (tools/setup.sh)"
case "$repo" in *[[:space:]]*) die "repo path must not contain spaces: $repo" ;; esac

roles=(a)
[ ${#scripts[@]} -eq 2 ] && roles=(a b)
declare -A script
for i in "${!roles[@]}"; do
	s=${scripts[$i]}
	[ -f "$s" ] || die "no such guest script: $s"
	s=$(cd "$(dirname "$s")" && pwd)/$(basename "$s")
	case "$s" in
	"$repo"/*) ;;
	/tmp/* | /run/* | /var/tmp/* | /var/lib/* | /var/cache/* | /var/log/* | /root/* | /home/* | /mnt/* | /media/* | /proc/* | /sys/* | /dev/*)
		die "guest script $s is under a folder the guest does not share" ;;
	esac
	script[${roles[$i]}]=$s
done

log() { [ "$quiet" = 1 ] || echo "rig: $*"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# --- guest kernel -----------------------------------------------------------

# The x86 boot path of a compressed bzImage costs about 7 s under TCG
# (real-mode setup and decompression). The Debian kernels are built with
# CONFIG_PVH, so qemu can start the uncompressed ELF directly: extract it
# once per kernel into the cache.
kernel_image() {
	local ver=$1 cache=$2 img=/boot/vmlinuz-$1 elf off magic
	elf=$cache/vmlinux-$ver
	if ! grep -qx 'CONFIG_PVH=y' "/boot/config-$ver" 2>/dev/null; then
		echo "$img"
		return
	fi
	if [ -s "$elf" ] && [ "$elf" -nt "$img" ]; then
		echo "$elf"
		return
	fi
	(
		flock 8
		[ -s "$elf" ] && [ "$elf" -nt "$img" ] && exit 0
		for magic in '\xfd7zXZ\x00:xz -dc --single-stream' \
			'\x28\xb5\x2f\xfd:zstd -qdc' '\x1f\x8b\x08:gzip -dc'; do
			off=$(LC_ALL=C grep -obUaP "${magic%%:*}" "$img" 2>/dev/null | head -n 1 | cut -d: -f1)
			[ -n "$off" ] || continue
			tail -c +"$((off + 1))" "$img" | ${magic#*:} >"$elf.tmp" 2>/dev/null || true
			if [ "$(head -c 4 "$elf.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
				mv "$elf.tmp" "$elf"
				exit 0
			fi
		done
		rm -f "$elf.tmp"
	) 8>"$cache/.vmlinux.lock"
	if [ -s "$elf" ]; then echo "$elf"; else echo "$img"; fi
}

# --- link ports ---------------------------------------------------------------

portdir=/tmp/sroce-vm-ports
ports_held=()

port_busy() {
	local p=$1 owner
	if [ -e "$portdir/$p" ]; then
		owner=$(cat "$portdir/$p" 2>/dev/null || true)
		[ -n "$owner" ] && kill -0 "$owner" 2>/dev/null && return 0
	fi
	[ -n "$(ss -Hlun "sport = :$p" 2>/dev/null)" ] || [ -n "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]
}

# Two ports on 127.0.0.1 free for UDP and TCP, reserved (under a lock)
# against parallel runs until this script exits: the link's two ends, and
# with --monitor the two qemus' monitors on the same numbers.
reserve_ports() {
	local p
	mkdir -p "$portdir"
	exec 7>"$portdir/.lock"
	flock 7
	for _ in $(seq 1 100); do
		p=$(( (20000 + (RANDOM * 32768 + RANDOM) % 40000) & ~1 ))
		port_busy "$p" || port_busy "$((p + 1))" || {
			echo $$ >"$portdir/$p"
			echo $$ >"$portdir/$((p + 1))"
			ports_held=("$p" "$((p + 1))")
			break
		}
	done
	flock -u 7
	exec 7>&-
	[ ${#ports_held[@]} -eq 2 ] || die "no free UDP port pair on 127.0.0.1"
}

# --- run --------------------------------------------------------------------

declare -A qpid state t_up t_end
cleanup() {
	local r
	for r in "${roles[@]}"; do
		if [ -n "${qpid[$r]:-}" ] && kill -0 "${qpid[$r]}" 2>/dev/null; then
			kill "${qpid[$r]}" 2>/dev/null || true
		fi
	done
	for r in "${ports_held[@]}"; do
		rm -f "$portdir/$r"
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ "$link_buf" =~ ^[0-9]+$ ]] || die "--link-buf: not a number: $link_buf"
dgram_exec=${SROCE_RIG_DGRAM:-$repo/build/tools/vm/dgram/rig-dgram-exec}
if [ "$link_buf" != 0 ] && [ ! -x "$dgram_exec" ]; then
	die "no $dgram_exec (cmake --build build, or make), or run with --link-buf 0"
fi
# The host's TSC frequency for the guests (tools/vm/clock/rig_tsc_khz.cpp
# says why): measured when the host's TSC runs at one rate whatever the
# CPU's clock and sleep states do; SROCE_RIG_TSC_KHZ gives it (0: none, the
# guests measure it themselves).
tsc_khz=${SROCE_RIG_TSC_KHZ-}
if [ -z "$tsc_khz" ]; then
	tsc_khz=0
	tsc_tool=$repo/build/tools/vm/clock/rig-tsc-khz
	flags=" $(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null || true) "
	if [[ "$flags" == *" constant_tsc "* && "$flags" == *" nonstop_tsc "* ]]; then
		[ -x "$tsc_tool" ] || die "no $tsc_tool (cmake --build build, or make)"
		if ! tsc_khz=$("$tsc_tool"); then
			echo "rig: warning: $tsc_tool found no steady TSC rate; the guests measure it themselves" >&2
			tsc_khz=0
		fi
	fi
fi
[[ "$tsc_khz" =~ ^[0-9]+$ ]] || die "SROCE_RIG_TSC_KHZ: not a number: $tsc_khz"
kver=$(pick_kernel "$kernel")
cache=${SROCE_VM_CACHE:-$repo/out/vm/cache}
mkdir -p "$cache"
# Kernel, image and initramfs of each role (guest b may boot another kernel).
# A debug kernel's modules are not under the host's /lib/modules: the guest
# gets its own tree (rmodroot) shared over 9p and mounted there.
declare -A rkver rinitrd rkimg rmodroot rkconfig
for r in "${roles[@]}"; do
	want=$kernel
	[ "$r" = b ] && [ -n "$kernel_b" ] && want=$kernel_b
	rkver[$r]=$(pick_kernel "$want")
	rmodroot[$r]=""
	if is_variant "$want"; then
		d=$(variant_dir "$want")
		rmodroot[$r]=$d/root
		rkimg[$r]=$d/build/arch/x86/boot/bzImage
		rkconfig[$r]=$d/build/.config
	else
		rkimg[$r]=$(kernel_image "${rkver[$r]}" "$cache")
		rkconfig[$r]=/boot/config-${rkver[$r]}
	fi
	rinitrd[$r]=$(bash "$here/mkinitramfs.sh" "${rkver[$r]}" "$cache" ${rmodroot[$r]:+"${rmodroot[$r]}"}) ||
		die "cannot build the initramfs"
done
kimg=${rkimg[a]}

if [ -z "$out" ]; then
	out=$repo/out/vm/runs/$(date +%Y%m%d-%H%M%S)-$$
	# The folder must exist: under pipefail a failed find ends the script.
	mkdir -p "$repo/out/vm/runs"
	# Keep the 20 newest default run folders (and any still in use).
	find "$repo/out/vm/runs" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | LC_ALL=C sort -r |
		tail -n +20 | while read -r old; do
		# shellcheck disable=SC2094 # the lock is dropped with its folder
		(flock -n 9 && rm -rf "$old" "$(dirname "$old")/.$(basename "$old").lock") \
			9>>"$(dirname "$old")/.$(basename "$old").lock" || true
	done
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out" in *[[:space:]]*) die "run folder must not contain spaces: $out" ;; esac
# One run per folder: the lock lives next to the folder (its contents are
# deleted below) and is held until this script exits.
exec 6>"$(dirname "$out")/.$(basename "$out").lock"
flock -n 6 || die "run folder $out is in use by another run"
# A run folder is emptied before use, but only one made by the rig.
if [ -n "$(ls -A "$out")" ]; then
	[ -d "$out/.rig" ] || die "$out is not empty and not a rig run folder"
	find "$out" -mindepth 1 -delete
fi
mkdir -p "$out/.rig"
for r in "${roles[@]}"; do
	mkdir -p "$out/$r"
done

script_timeout=$((timeout > 60 ? timeout - 20 : timeout * 2 / 3))

# Environment of a guest script (sourced by tools/vm/guest/init.sh).
write_env() {
	local role=$1 peer=$2 f=$out/.rig/env-$1 ip4 ip6 pip4 pip6 kv
	local -n extra=env_$1
	if [ "$role" = a ]; then
		ip4=$ip4_a ip6=$ip6_a pip4=$ip4_b pip6=$ip6_b
	else
		ip4=$ip4_b ip6=$ip6_b pip4=$ip4_a pip6=$ip6_a
	fi
	{
		echo "# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB"
		echo "# generated by tools/vm/run.sh"
		printf 'export RIG_ROLE=%q RIG_PEER_ROLE=%q RIG_NGUESTS=%q\n' "$role" "$peer" "${#roles[@]}"
		printf 'export RIG_IFACE=eth0 RIG_MTU=%q\n' "$mtu"
		printf 'export RIG_IP4=%q RIG_IP4_PREFIX=%q RIG_PEER_IP4=%q\n' "${ip4%/*}" "${ip4#*/}" "${pip4%/*}"
		printf 'export RIG_IP6=%q RIG_IP6_PREFIX=%q RIG_PEER_IP6=%q\n' "${ip6%/*}" "${ip6#*/}" "${pip6%/*}"
		printf 'export RIG_SHARED=%q RIG_OUT=%q RIG_REPO=%q\n' "$out" "$out/$role" "$repo"
		# The host's TSC rate the kernel was given (0: none; the rig's
		# self-test checks the guest's clock with it).
		printf 'export RIG_TSC_KHZ=%q\n' "$tsc_khz"
		printf 'export RIG_KERNEL=%q RIG_SCRIPT=%q RIG_SCRIPT_TIMEOUT=%q\n' "${rkver[$role]}" "${script[$role]}" "$script_timeout"
		echo "RIG_SCRIPT_ARGS=()"
		for kv in "${env_all[@]}" "${extra[@]}"; do
			[[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "bad --env $kv"
			printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"
		done
	} >"$f"
}

reserve_ports
declare -A lport rport mac
lport[a]=${ports_held[0]} rport[a]=${ports_held[1]} mac[a]=52:54:00:77:00:0a
lport[b]=${ports_held[1]} rport[b]=${ports_held[0]} mac[b]=52:54:00:77:00:0b

start_guest() {
	local role=$1 peer=b
	[ "$role" = b ] && peer=a
	[ ${#roles[@]} -eq 1 ] && peer=""
	write_env "$role" "$peer"
	# no_timer_check: a vCPU starved by a busy host can miss the timer
	# interrupts of the early IO-APIC check, which then panics the boot.
	# log_buf_len: the tests read the kernel log between tests; a debug
	# kernel logs much more than the default buffer holds.
	# tsc_early_khz, the host's measured rate, replaces the guest's early
	# guess: a 6.12 guest whose calibration against the PIT went wrong on
	# a busy host ran its clock at 146 MHz instead of 2095, 14 times too
	# fast (its 90 s test limit ended in 7), and the refined calibration
	# keeps the early value when the two differ by more than 1%.
	# tsc=reliable, only with that rate: qemu's TCG CPU is no Intel CPU
	# with a constant TSC, so a guest with two or more vCPUs marks its TSC
	# "unsynchronized" at boot (whatever the host) and runs on the HPET,
	# an emulated device: every clock read in the kernel is an MMIO exit,
	# and userspace's too (the vDSO cannot read the HPET: a system call
	# each). The vCPUs' TSC is the host's, which the rig checked to be
	# constant and nonstop. Measured, debug kernel, two vCPUs, side by
	# side: a Python loop read the clock 123089 times a second on the TSC,
	# 19387 on the HPET. (smp2's tests took as long either way: stress
	# 241 s, hostile_rings 193, against 246 and 182 on the HPET.)
	local append="console=ttyS0 oops=panic panic=-1 rdinit=/init quiet no_timer_check log_buf_len=4M"
	append+=" rig_role=$role rig_results=$out rig_repo=$repo"
	[ "$tsc_khz" = 0 ] || append+=" tsc_early_khz=$tsc_khz tsc=reliable"
	# Extra kernel parameters (experiments: kmemleak=off, ...).
	append+="${SROCE_RIG_APPEND:+ $SROCE_RIG_APPEND}"
	[ "$role" = "$test_boot_hang" ] && [ "${boots[$role]}" = 0 ] && append+=" rig_test_hang=1"
	local modshare=()
	if [ -n "${rmodroot[$role]}" ]; then
		append+=" rig_modules=1"
		modshare=(-virtfs "local,path=${rmodroot[$role]}/lib/modules,mount_tag=modules,security_model=none,readonly=on,multidevs=remap")
	fi
	# The link's socket: opened by rig-dgram-exec with a large buffer (see
	# tools/vm/dgram/rig_dgram_exec.cpp), or by qemu itself.
	local netdev="dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=${lport[$role]},remote.type=inet,remote.host=127.0.0.1,remote.port=${rport[$role]}"
	local pre=()
	if [ "$link_buf" != 0 ]; then
		pre=("$dgram_exec" "${lport[$role]}" "${rport[$role]}" "$link_buf" --)
		netdev="dgram,id=n0,local.type=fd,local.str={fd}"
	fi
	# The NIC without the virtio event index (notification suppression by
	# flags instead): with it, qemu 7.2 now and then stopped looking at a
	# guest's transmit ring for good after a burst of small packets
	# (ib_send_bw 64 B over rdma_rxe: the link stopped within 8 and 11
	# two-second runs; with event_idx=off, 0 in 50; Documentation/benchmark.rst).
	# SROCE_RIG_NIC_OPTS replaces these options ("" for qemu's defaults).
	local nic_opts=${SROCE_RIG_NIC_OPTS-event_idx=off} mon=()
	if [ "$monitor" = 1 ]; then
		mon=(-monitor "tcp:127.0.0.1:${lport[$role]},server=on,wait=off")
		echo "${lport[$role]}" >"$out/.rig/monitor-$role"
	fi
	local cmd=("${pre[@]}" qemu-system-x86_64 -name "rig-$role" -machine q35 -cpu "${SROCE_RIG_CPU:-max}" -smp "$smp" -m "$mem"
		-nographic -no-reboot -nodefaults -serial stdio -bios qboot.rom
		-kernel "${rkimg[$role]}" -initrd "${rinitrd[$role]}" -append "$append"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$repo,mount_tag=repo,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$out,mount_tag=results,security_model=none"
		"${modshare[@]}"
		-netdev "$netdev"
		-device "virtio-net-pci,id=nic0,netdev=n0,mac=${mac[$role]},romfile=${nic_opts:+,$nic_opts}"
		"${mon[@]}")
	printf '%q ' "${cmd[@]}" >"$out/.rig/qemu-$role.cmd"
	"${cmd[@]}" </dev/null >"$out/console-$role.log" 2>&1 &
	qpid[$role]=$!
	state[$role]=running
	t_start[$role]=$(now)
	boots[$role]=$((boots[$role] + 1))
}

# The last line a guest's console shows (its kernel's or init's last
# words), for a guest that never reached userspace.
console_tail() {
	local line
	line=$(grep -vE '^[[:space:]]*$|^qemu-system-x86_64: terminating on signal' \
		"$out/console-$1.log" 2>/dev/null | tail -n 1 |
		sed -E 's/^\[ *[0-9.]+\] //' | tr -cd '[:print:]' | cut -c1-160)
	echo "${line:-nothing}"
}

# A guest that has not reached userspace boot_limit seconds after its start
# hangs in its kernel's boot or the initramfs, before the guest script and
# sroce (init.sh marks userspace before anything else): seen once on a
# CI host, guest b of a debug-kernel pair silent while guest a booted in
# 15 s. That is no test's failure; the rig starts the guest again, once,
# keeping the first console, and says so. A second hang fails the run.
# Its peer waits for it at the first test (selftests/lib/runner.sh).
boot_watch() {
	local r=$1 last
	[ "$boot_limit" != 0 ] && [ -z "${t_up[$r]:-}" ] && [ ! -e "$out/$r/up" ] || return 0
	[ "$(elapsed "${t_start[$r]}" "$(now)" | cut -d. -f1)" -ge "$boot_limit" ] || return 0
	last=$(console_tail "$r")
	kill "${qpid[$r]}" 2>/dev/null || true
	wait "${qpid[$r]}" 2>/dev/null || true
	if [ "${boots[$r]}" -ge 2 ]; then
		state[$r]=noboot
		t_end[$r]=$(now)
		echo "rig: guest $r: no userspace ${boot_limit} s after its second start (console: $last)"
		return 0
	fi
	mv "$out/console-$r.log" "$out/console-$r.boot1.log"
	# Said even with -q: a run that passes after it must still show it.
	echo "rig: guest $r: no userspace ${boot_limit} s after its start (console: $last); started again, first console in console-$r.boot1.log"
	rm -rf "${out:?}/$r"
	mkdir -p "$out/$r"
	start_guest "$r"
}

# A guest that stopped without a clean status has failed.
guest_failed() {
	local role=$1 rc
	[ "${state[$role]}" = timeout ] && return 0
	grep -q 'Kernel panic' "$out/console-$role.log" 2>/dev/null && return 0
	rc=$(cat "$out/$role/exit" 2>/dev/null || echo none)
	[ "$rc" != 0 ]
}

log "kernel $kver, image $(basename "$kimg")${kernel_b:+, guest b kernel ${rkver[b]}}, run folder $out"
# cut_deadline: the other guest gets --grace seconds more, no longer.
cut_deadline() {
	local d
	d=$(awk -v n="$(now)" -v g="$grace" 'BEGIN { printf "%d", n + g }')
	[ "$d" -lt "$deadline" ] && deadline=$d
	return 0
}

declare -A boots t_start
for r in "${roles[@]}"; do
	boots[$r]=0
done
t0=$(now)
for r in "${roles[@]}"; do
	start_guest "$r"
done

deadline=$(awk -v a="$t0" -v t="$timeout" 'BEGIN { printf "%d", a + t }')
while :; do
	running=0
	for r in "${roles[@]}"; do
		[ "${state[$r]}" = running ] || continue
		if [ -z "${t_up[$r]:-}" ] && [ -e "$out/$r/up" ]; then
			t_up[$r]=$(now)
			log "guest $r: userspace $(elapsed "$t0" "${t_up[$r]}") s after start"
		fi
		if kill -0 "${qpid[$r]}" 2>/dev/null; then
			boot_watch "$r"
		fi
		if [ "${state[$r]}" = noboot ]; then
			cut_deadline
			continue
		fi
		if kill -0 "${qpid[$r]}" 2>/dev/null; then
			running=1
			continue
		fi
		wait "${qpid[$r]}" || true
		state[$r]=stopped
		t_end[$r]=$(now)
		log "guest $r: stopped after $(elapsed "$t0" "${t_end[$r]}") s"
		# A failed guest leaves its peer waiting for it: cut that short.
		guest_failed "$r" && cut_deadline
	done
	[ "$running" = 1 ] || break
	if [ "$(date +%s)" -ge "$deadline" ]; then
		for r in "${roles[@]}"; do
			if [ "${state[$r]}" = running ]; then
				kill "${qpid[$r]}" 2>/dev/null || true
				wait "${qpid[$r]}" 2>/dev/null || true
				state[$r]=timeout
				t_end[$r]=$(now)
			fi
		done
		break
	fi
	sleep 0.2
done
t1=$(now)

# --- verdict ----------------------------------------------------------------

# The splats in a kernel log, one line each, "LABEL<TAB>LABEL in dmesg:
# line": the first line that each pattern of splat-patterns matches, in the
# file's order (its most telling first). The generic ones (BUG, WARNING,
# INFO, a bare call trace, a use-after-free named in passing) only when no
# detector's own report is there, and only the first: the detectors print
# such lines too.
generic_splats='|BUG|WARNING|INFO report|stack trace|use-after-free|'
find_splats() {
	local file=$1 label re line n frames specific=0
	[ -s "$file" ] || return 1
	while IFS=$'\t' read -r label re; do
		case "$label" in '#'* | '') continue ;; esac
		[[ "$generic_splats" != *"|$label|"* ]] || [ "$specific" = 0 ] || continue
		line=$(grep -E -m 1 -n -- "$re" "$file" || true)
		[ -n "$line" ] || continue
		# The first frames of its call trace say which object or
		# path it was, where the line alone does not. (Under errexit
		# and pipefail, in a process substitution: no stage may end
		# early, which would kill the one before it with SIGPIPE and
		# this function with it, and a trace without frames is no
		# error.)
		n=${line%%:*}
		frames=$(sed -n "$n,$((n + 59))p" "$file" |
			sed -n '/Call Trace:/,$p' | sed -E 's/^\[ *[0-9.]+\] //' |
			grep -E '^ +[a-z_][a-z0-9_.]*\+0x' | sed -n '1,4p' |
			sed -E 's/^ +//; s/\+0x.*//' | tr '\n' ' ') || frames=""
		line=$(echo "${line#*:}" | sed -E 's/^\[ *[0-9.]+\] //' | cut -c1-160)
		printf '%s\t%s in dmesg: %s%s\n' "$label" "$label" "$line" "${frames:+ (trace: ${frames% })}"
		[[ "$generic_splats" != *"|$label|"* ]] || break
		specific=1
	done <"$here/splat-patterns"
}

# A guest that never came up is the cause of whatever its peer did.
early=()
reasons=()
later=()
# in_test ROLE: " in test NAME" when the guest test runner (selftests/
# lib/runner.sh) of guest ROLE was inside a test: the newest test it
# started (its output folder exists) has no ROLE.done in its sync folder.
# (A test skipped unstarted has a sync folder but no output folder; the
# peer may be a test further on.)
in_test() {
	local d name
	[ -d "$out/sync" ] || return 0
	while IFS= read -r d; do
		name=$(basename "$d" | sed 's/^[0-9]*-//')
		[ -d "$out/$1/tests/$name" ] || continue
		[ -e "$d/$1.done" ] || echo " in test $name"
		return 0
	done < <(find "$out/sync" -mindepth 1 -maxdepth 1 -type d | sort -rV)
}
other_failed() {
	local me=$1 r
	for r in "${roles[@]}"; do
		[ "$r" = "$me" ] && continue
		[ "${state[$r]}" != timeout ] && guest_failed "$r" && return 0
	done
	return 1
}
for r in "${roles[@]}"; do
	con=$out/console-$r.log
	rc=$(cat "$out/$r/exit" 2>/dev/null || true)
	if [ "${state[$r]}" = noboot ]; then
		early+=("guest $r: no userspace ${boot_limit} s after its start, twice (console: $(console_tail "$r"))")
	elif [ "${state[$r]}" = timeout ]; then
		if other_failed "$r"; then
			# Stopped for its peer, booting or not: a consequence.
			later+=("guest $r: stopped after its peer failed")
		elif [ -z "${t_up[$r]:-}" ] && [ ! -e "$out/$r/up" ]; then
			early+=("guest $r: timed out before userspace (console: $(console_tail "$r"))")
		else
			reasons+=("guest $r: timed out after ${timeout} s (the guest did not finish$(in_test "$r"))")
		fi
	elif line=$(grep -m 1 'Kernel panic' "$con" 2>/dev/null); then
		reasons+=("guest $r: kernel panic: $(echo "$line" | sed -E 's/^\[ *[0-9.]+\] //' | cut -c1-160)")
	elif grep -q '^qemu-system-x86_64: ' "$con" 2>/dev/null && [ -z "$rc" ]; then
		reasons+=("guest $r: qemu failed: $(grep -m 1 '^qemu-system-x86_64: ' "$con" | cut -c1-160)")
	fi
	# Each detector's report counts (a guest may hold several): from the
	# kernel log the guest saved, then from the console, where the kernel
	# wrote every message as it happened (loglevel 7 from the guest's
	# start), so that a report a full log buffer overwrote, or one from a
	# guest that saved no log, is still found. Only kernel lines count
	# there ("[ seconds] "): the guest script's output is mirrored to the
	# console too. A panic was named above.
	declare -A seen=()
	while IFS=$'\t' read -r label s; do
		seen[$label]=1
		reasons+=("guest $r: $s")
	done < <(find_splats "$out/$r/dmesg.txt")
	if grep -E '^\[ *[0-9]+\.[0-9]+\] ' "$con" >"$out/.rig/console-kernel-$r.log" 2>/dev/null; then
		while IFS=$'\t' read -r label s; do
			if [ -n "${seen[$label]:-}" ] || [ "$label" = "kernel panic" ]; then
				continue
			fi
			[[ "$generic_splats" != *"|$label|"* ]] || [ ${#seen[@]} = 0 ] || continue
			reasons+=("guest $r: $s (console)")
		done < <(find_splats "$out/.rig/console-kernel-$r.log")
	fi
	unset seen
	# KMEMLEAK (debug kernels): tools/vm/guest/init.sh scanned after the
	# script, with the RDMA links deleted and their drivers unloaded. A
	# guest whose script ended must have scanned: a run that never
	# scanned is no clean run. What its teardown could not delete or
	# unload holds objects the scan cannot see.
	if [ -n "$rc" ] && grep -qx 'CONFIG_DEBUG_KMEMLEAK=y' "${rkconfig[$r]}" 2>/dev/null; then
		if [ -s "$out/$r/teardown.txt" ]; then
			reasons+=("guest $r: teardown: $(head -n 1 "$out/$r/teardown.txt" | cut -c1-160)")
		fi
		if [ "$(cat "$out/$r/kmemleak.state" 2>/dev/null)" != scanned ]; then
			reasons+=("guest $r: KMEMLEAK: no completed scan after the script ($(cat "$out/$r/kmemleak.state" 2>/dev/null || echo "no scan")); the run cannot say there was no leak")
		fi
	fi
	if [ -s "$out/$r/kmemleak.txt" ] && [ "$(cat "$out/$r/kmemleak.state" 2>/dev/null)" = scanned ]; then
		n=$(grep -c '^unreferenced object' "$out/$r/kmemleak.txt" || true)
		if [ "$n" -gt 0 ]; then
			# (The kernel may print the frames' addresses hashed,
			# "[<(____ptrval____)>]"; and the pipeline must not end
			# the rig under pipefail when no frame is left.)
			first=$(grep -m 1 -A 12 '^unreferenced object' "$out/$r/kmemleak.txt" |
				sed -n 's/^ *\[<[^>]*>\] //p' | grep -vE '^(kmemleak_|__?kmem_cache_alloc|kmalloc|__kmalloc|slab_post|kmalloc_trace)' |
				head -n 3 | tr '\n' ' ' || true)
			reasons+=("guest $r: KMEMLEAK: $n unreferenced objects after the tests (first allocated in: ${first:-?}; $r/kmemleak.txt)")
		fi
	fi
	if [ "${state[$r]}" != timeout ] && [ "${state[$r]}" != noboot ]; then
		case "$rc" in
		0) ;;
		124 | 137) reasons+=("guest $r: script timed out after ${script_timeout} s$(in_test "$r")") ;;
		'') reasons+=("guest $r: stopped without a script status (see console-$r.log)") ;;
		*) reasons+=("guest $r: script exited $rc") ;;
		esac
	fi
done

for r in "${roles[@]}"; do
	up=-
	[ -n "${t_up[$r]:-}" ] && up=$(elapsed "$t0" "${t_up[$r]}")
	guest_up=$(cat "$out/$r/up" 2>/dev/null || echo -)
	scr=-
	if [ -f "$out/$r/script.time" ] && read -r s e <"$out/$r/script.time"; then
		scr=$(elapsed "$s" "$e")
	fi
	echo "$r boot_s=$up guest_uptime_s=$guest_up script_s=$scr exit=$(cat "$out/$r/exit" 2>/dev/null || echo -)" \
		>>"$out/.rig/timings"
	log "guest $r: userspace ${up} s after start (guest uptime ${guest_up} s), script ${scr} s, exit $(cat "$out/$r/exit" 2>/dev/null || echo none)"
done

# Consequences come after causes.
reasons=("${early[@]}" "${reasons[@]}" "${later[@]}")
total=$(elapsed "$t0" "$t1")
if [ ${#reasons[@]} -eq 0 ]; then
	echo PASS >"$out/result"
	echo "rig: PASS in ${total} s ($out)"
	exit 0
fi
echo "FAIL: ${reasons[0]}" >"$out/result"
echo "rig: FAIL: ${reasons[0]}"
for r in "${reasons[@]:1}"; do
	echo "FAIL: $r" >>"$out/result"
	echo "rig:   also: $r"
done
echo "rig: run folder $out (console-*.log, */script.log, */dmesg.txt)"
exit 1
