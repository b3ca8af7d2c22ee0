#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Device and port attributes: "sroce-verbs-check devinfo" (node type CA, one
# Ethernet port, ACTIVE with the active MTU the link MTU allows, max_qp_wr,
# 32 SGEs, 32767+ CQEs, 128 RDMA reads/atomics, P_Key 0xffff, RoCEv2 GIDs,
# ibv_query_device_ex consistent with ibv_query_device). Saves
# "ibv_devinfo -v", "rdma dev/link show -d" and the sysfs attributes of the
# device into the test's output folder (ibv_devinfo-v.sroce0.txt, ...).
# timeout: 120
# place: stock-1@3
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
dev=$CTRL_DEV
odir=$RIG_TEST_OUT

ibv_devinfo -v -d "$dev" >"$odir/ibv_devinfo-v.$dev.txt" 2>&1 ||
	rig_fail "ibv_devinfo -v -d $dev failed: $(cat "$odir/ibv_devinfo-v.$dev.txt")"
rig_log "ibv_devinfo -v -d $dev (saved as ibv_devinfo-v.$dev.txt):"
sed 's/^/    /' "$odir/ibv_devinfo-v.$dev.txt"
{
	rdma dev show "$dev" -d
	rdma link show "$dev/1" -d
	rdma resource show
	for f in node_type node_guid sys_image_guid fw_ver node_desc sroce_abi parent \
		ports/1/state ports/1/phys_state ports/1/link_layer ports/1/rate \
		ports/1/cap_mask ports/1/gid_attrs/types/0 ports/1/gid_attrs/ndevs/0; do
		echo "$f: $(cat "/sys/class/infiniband/$dev/$f" 2>&1)"
	done
} >"$odir/attributes.$dev.txt" 2>&1

mtu=$(cat "/sys/class/net/$CTRL_IFACE/mtu")
want=1024
[ "$mtu" -ge 4180 ] && want=4096
[ "$mtu" -ge 2132 ] && [ "$mtu" -lt 4180 ] && want=2048
# sroce promises at least rdma_rxe's limits (kernel/sroce.h): 2^20 WRs.
ctrl_vc devinfo 60 devinfo "$dev" --state active --mtu "$want" --min-qp-wr 1048576 ||
	rig_fail "sroce-verbs-check devinfo $dev failed"
grep -q '^[[:space:]]*link_layer:[[:space:]]*Ethernet' "$odir/ibv_devinfo-v.$dev.txt" ||
	rig_fail "ibv_devinfo: link_layer is not Ethernet"
