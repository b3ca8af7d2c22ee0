#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: a guest script that never finishes. The rig
# must fail the run with "timed out".
echo "guest $RIG_ROLE: hanging on purpose"
while :; do
	sleep 1000
done
