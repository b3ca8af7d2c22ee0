#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: a healthy guest. Both guests check that their
# clock runs at the host's TSC rate and that the link to the peer works,
# then finish with status 0.
set -euo pipefail
echo "guest $RIG_ROLE: $(uname -r), $RIG_IFACE $RIG_IP4 / $RIG_IP6, peer ${RIG_PEER_IP4:-none}"
touch "$RIG_OUT/hello"
# reachable ADDR: the peer may still be booting (a loaded host starts the
# two guests seconds apart): try for up to 60 s.
reachable() {
	local i
	for i in $(seq 60); do
		busybox ping -c 1 -W 1 "$1" >/dev/null 2>&1 && return 0
		[ "$i" = 60 ] || sleep 1
	done
	busybox ping -c 2 -W 5 "$1"
}
# The guest's clock: the rig gave the kernel the host's TSC rate
# (tsc_early_khz) and the kernel's own calibration against the HPET, a
# second after boot, agreed with it within 1% (it says "Refined TSC
# clocksource calibration" only then). A host whose TSC rate varies gives
# none (RIG_TSC_KHZ=0): no check there.
check_clock() {
	local khz refined="" i
	if [ "${RIG_TSC_KHZ:-}" = 0 ]; then
		echo "guest $RIG_ROLE: the host's TSC rate is not steady: the clock is not checked"
		return 0
	fi
	khz=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^tsc_early_khz=//p')
	if [ -z "$khz" ] || [ "$khz" != "${RIG_TSC_KHZ:-}" ]; then
		echo "guest $RIG_ROLE: no tsc_early_khz from the rig, or not its RIG_TSC_KHZ (${RIG_TSC_KHZ:-unset}): $(cat /proc/cmdline)"
		return 1
	fi
	for i in $(seq 30); do
		refined=$(dmesg | sed -n 's/.*Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p')
		[ -n "$refined" ] && break
		sleep 1
	done
	if [ -z "$refined" ]; then
		echo "guest $RIG_ROLE: the kernel's TSC calibration did not confirm tsc_early_khz=$khz:"
		dmesg | grep -iE 'tsc|clocksource' | head -n 20
		return 1
	fi
	echo "guest $RIG_ROLE: TSC $khz kHz from the host, $refined MHz by the guest's calibration"
}
check_clock
if [ "$RIG_NGUESTS" = 2 ]; then
	reachable "$RIG_PEER_IP4"
	reachable "$RIG_PEER_IP6"
	echo "guest $RIG_ROLE: the peer answers on IPv4 and IPv6"
	# Stay up until the peer has checked too: a guest that boots late
	# (the boot_hang case starts one again after 20 s) would otherwise
	# find its peer already powered off.
	touch "$RIG_OUT/linked"
	for i in $(seq 120); do
		[ -e "$RIG_SHARED/$RIG_PEER_ROLE/linked" ] && exit 0
		sleep 1
	done
	echo "guest $RIG_ROLE: the peer did not finish its checks in 120 s"
	exit 1
fi
