#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rig self-test guest script: commit the bugs named in $RIG_CANARY (a comma
# separated list, committed in that order) with one load of
# tools/vm/testmod's rig_canary ($RIG_CANARY_KO), and write each one's
# outcome, as the module logged it, to $RIG_OUT/canary-NAME ("committed"
# or "not committed (ERRNO)"). The script ends with status 0: the rig's
# verdict, not this script, must say what the kernel saw. Besides the
# module's bugs:
#   pin              an rxe device is made first, whose driver the module
#                    pins: the rig's final rmmod of rdma_rxe must fail
#   kmemleak_noscan  no bug: debugfs is taken away after the load, so that
#                    the rig's final KMEMLEAK scan cannot run (a kernel with
#                    KMEMLEAK must fail the run for it)
set -euo pipefail
ko=${RIG_CANARY_KO:?}
IFS=, read -ra names <<<"${RIG_CANARY:?}"
bugs=()
args=()
noscan=0
for b in "${names[@]}"; do
	case "$b" in
	kmemleak_noscan) noscan=1; continue ;;
	pin)
		modprobe rdma_rxe
		rdma link add rig_rxe0 type rxe netdev "$RIG_IFACE"
		args+=(dev=rig_rxe0)
		;;
	esac
	bugs+=("$b")
done
if [ ${#bugs[@]} -gt 0 ]; then
	# rig_canary resolves two symbols of ib_core (bug=pin) when it loads.
	modprobe ib_core
	insmod "$ko" "bug=$(IFS=,; echo "${bugs[*]}")" "${args[@]}"
	log=$(dmesg)
	for b in "${bugs[@]}"; do
		line=$(grep -m 1 "rig_canary: $b: " <<<"$log" || echo "rig_canary: $b: no outcome logged")
		echo "guest $RIG_ROLE: ${line#*rig_canary: }"
		echo "${line#*rig_canary: "$b": }" >"$RIG_OUT/canary-$b"
	done
fi
if [ "$noscan" = 1 ]; then
	umount -l /sys/kernel/debug
	echo "guest $RIG_ROLE: debugfs unmounted"
	echo committed >"$RIG_OUT/canary-kmemleak_noscan"
fi
