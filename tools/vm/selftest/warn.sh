#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: load a module whose init does WARN_ON(1)
# (tools/vm/testmod, built by tools/vm/selftest.sh into $RIG_TESTMOD). The
# script itself succeeds; the rig must fail the run with "WARNING in dmesg".
set -euo pipefail
insmod "${RIG_TESTMOD:?}"
echo "guest $RIG_ROLE: rig_warn loaded"
