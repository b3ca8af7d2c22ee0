#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: crash the guest kernel (sysrq c). The rig must
# fail the run with "kernel panic".
echo "guest $RIG_ROLE: crashing the kernel on purpose"
sync
echo c >/proc/sysrq-trigger
sleep 60
