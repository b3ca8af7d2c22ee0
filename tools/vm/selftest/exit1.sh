#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: a broken guest script. The rig must fail the
# run with "script exited 1".
echo "guest $RIG_ROLE: failing on purpose"
exit 1
