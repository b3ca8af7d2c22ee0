#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: a healthy guest. Both guests check that the
# link to the peer works, then finish with status 0.
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
if [ "$RIG_NGUESTS" = 2 ]; then
	reachable "$RIG_PEER_IP4"
	reachable "$RIG_PEER_IP6"
	echo "guest $RIG_ROLE: the peer answers on IPv4 and IPv6"
fi
