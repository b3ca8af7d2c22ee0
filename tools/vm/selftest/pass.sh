#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: a healthy guest. Both guests check that the
# link to the peer works, then finish with status 0.
set -euo pipefail
echo "guest $RIG_ROLE: $(uname -r), $RIG_IFACE $RIG_IP4 / $RIG_IP6, peer ${RIG_PEER_IP4:-none}"
touch "$RIG_OUT/hello"
if [ "$RIG_NGUESTS" = 2 ]; then
	busybox ping -c 2 -W 5 "$RIG_PEER_IP4"
	busybox ping -c 2 -W 5 "$RIG_PEER_IP6"
fi
