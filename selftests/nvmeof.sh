#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A kernel ULP over the RDMA devices: NVMe over Fabrics with the RDMA
# transport. Guest a exports a 64 MiB RAM disk (brd) through nvmet-rdma,
# configured with configfs; guest b connects with nvme-rdma (through
# /dev/nvme-fabrics, no nvme-cli needed), writes random data with O_DIRECT
# in 4 KiB (2 MiB of it), 64 KiB and 1 MiB blocks (8 MiB), reads each back
# and compares checksums; then guest a checks that its RAM disk holds the
# bytes.
#
# Connection setup is the kernel's rdma_cm over QP1 MADs. nvme-rdma
# registers its data buffers with fast registration (ib_alloc_mr,
# IB_WR_REG_MR) and invalidates them locally (IB_WR_LOCAL_INV) or lets
# the target do it with SEND with Invalidate; nvmet-rdma moves the data
# with RDMA READ and WRITE from kernel QPs.
# timeout: 450
# place: debug@1 sroce-rxe@1 rxe-sroce@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/nvmet.sh
. "$(dirname "$0")/lib/nvmet.sh"
# A kernel ULP over sroce, as target/server and as host/client.
rig_suites sroce-sroce sroce-rxe rxe-sroce

rig_require_peer
rig_setup_dev
pattern=/tmp/nvmeof-pattern
size_mb=8

rig_make_pattern "$pattern" "$size_mb"
if rig_is_a; then
	nvmet_target_up 64
	rig_signal target-up
	rig_wait host-done 120 >/dev/null || { nvmet_target_down; rig_fail "the host did not finish"; }
	nvmet_ram_holds "$pattern" "$size_mb" || { nvmet_target_down; rig_fail "the RAM disk does not hold the pattern"; }
	rig_log "the RAM disk holds the $size_mb MiB the host wrote"
	nvmet_target_down
	rig_signal target-down
else
	rig_wait target-up 60 >/dev/null || rig_fail "the target did not come up"
	nvme_host_connect
	nvme_dd_check "$pattern" 4096 2
	nvme_dd_check "$pattern" 65536 "$size_mb"
	nvme_dd_check "$pattern" 1048576 "$size_mb"
	rig_log "wrote and read back 2 MiB in 4 KiB blocks, $size_mb MiB in 64 KiB and 1 MiB ones: sha256 matches"
	echo 1 >"/sys/class/nvme/$NVME_CTRL/delete_controller" || rig_fail "cannot disconnect"
	rig_signal host-done
	rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
	modprobe -r nvme-rdma || rig_fail "cannot unload nvme-rdma"
fi
