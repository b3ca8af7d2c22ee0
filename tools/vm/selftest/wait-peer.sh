#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: guest a fails at once, guest b waits for a
# marker that a never writes. The rig must report a's failure and stop b
# early instead of waiting for the whole timeout.
if [ "$RIG_ROLE" = a ]; then
	echo "guest a: failing on purpose"
	exit 1
fi
echo "guest b: waiting for a marker that never comes"
while [ ! -e "$RIG_SHARED/never" ]; do
	sleep 0.5
done
