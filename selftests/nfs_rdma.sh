#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NFS over RDMA between the guests: guest a runs the kernel NFS server
# (nfsd with svcrdma listening on port 20049) exporting a tmpfs folder,
# guest b mounts it with NFSv4.2 over RDMA (proto=rdma, xprtrdma), writes
# 8 MiB of random data, unmounts, mounts again and reads the file back:
# both checksums and the server's copy must match what was written.
# xprtrdma needs fast registration (IB_WR_REG_MR, LOCAL_INV) and uses
# RDMA READ/WRITE chunks and SEND with Invalidate; the connection comes
# up through the kernel's rdma_cm.
#
# The server's grace period is cut to its minimum (10 s, before nfsd
# starts) and nfsdcld tracks clients, so that a server with no clients to
# reclaim ends the grace period at once.
# timeout: 150
# place: stock@3 sroce-rxe@1 rxe-sroce@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# A kernel ULP over sroce, as target/server and as host/client.
rig_suites sroce-sroce sroce-rxe rxe-sroce

rig_require_peer
rig_require_cmd rpc.nfsd
rig_require_cmd exportfs
rig_require_cmd mount.nfs4
rig_setup_dev
export_dir=/tmp/nfs-export
mnt=/mnt/nfs-rdma
pattern=/tmp/nfs-pattern
size_mb=8
port=20049

# (The same bytes on both guests; a pattern of the wrong size fails here,
# not as an empty file whose checksums agree.)
rig_make_pattern "$pattern" "$size_mb" nfs
want=$(sha256sum <"$pattern")
want=${want%% *}

server_up() {
	modprobe nfsd || rig_fail "modprobe nfsd"
	modprobe rpcrdma || rig_fail "modprobe rpcrdma"
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd ||
		rig_fail "cannot mount the nfsd filesystem"
	mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/nfsdcld /var/lib/nfs/v4recovery "$export_dir"
	mountpoint -q /var/lib/nfs/rpc_pipefs ||
		mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs || rig_fail "cannot mount rpc_pipefs"
	touch /var/lib/nfs/etab /var/lib/nfs/rmtab
	command -v nfsdcld >/dev/null && nfsdcld
	exportfs -o rw,no_root_squash,fsid=0,insecure,sync "$RIG_PEER_IP4:$export_dir" ||
		rig_fail "exportfs failed"
	rpc.mountd -N 3 --no-udp || rig_fail "rpc.mountd failed"
	rpc.nfsd -N 3 -U -G 10 -L 10 --rdma="$port" 4 || rig_fail "rpc.nfsd failed"
	grep -q "rdma $port" /proc/fs/nfsd/portlist || {
		cat /proc/fs/nfsd/portlist
		rig_fail "nfsd does not listen on rdma $port"
	}
	rig_log "nfsd exports $export_dir over RDMA port $port ($(tr '\n' ' ' </proc/fs/nfsd/portlist))"
}

server_down() {
	rpc.nfsd 0
	exportfs -ua
	pkill rpc.mountd
	pkill nfsdcld
}

client_mount() {
	rig_run 60 mount -t nfs4 -o "proto=rdma,port=$port,vers=4.2" "$RIG_PEER_IP4:/" "$mnt" ||
		rig_fail "mount over RDMA failed"
	grep -q " $mnt nfs4 .*proto=rdma" /proc/mounts || {
		grep " $mnt " /proc/mounts
		rig_fail "$mnt is not an NFS mount over RDMA"
	}
}

if rig_is_a; then
	server_up
	rig_signal server-up
	rig_wait client-done 120 >/dev/null || { server_down; rig_fail "the client did not finish"; }
	got=$(sha256sum <"$export_dir/data")
	server_down
	[ "${got%% *}" = "$want" ] || rig_fail "the server's copy differs from what the client wrote"
	rig_log "the server holds the $size_mb MiB the client wrote"
else
	modprobe rpcrdma || rig_fail "modprobe rpcrdma"
	mkdir -p "$mnt"
	rig_wait server-up 60 >/dev/null || rig_fail "the server did not come up"
	client_mount
	rig_log "mounted: $(grep " $mnt " /proc/mounts)"
	rig_run 60 dd if="$pattern" of="$mnt/data" bs=1M conv=fsync status=none ||
		rig_fail "writing $size_mb MiB over NFS/RDMA failed"
	umount "$mnt" || rig_fail "umount failed"
	client_mount
	got=$(rig_run 60 cat "$mnt/data" | sha256sum)
	umount "$mnt" || rig_fail "umount failed"
	[ "${got%% *}" = "$want" ] || rig_fail "the file read back over NFS/RDMA differs"
	rig_log "wrote $size_mb MiB, remounted, read back: sha256 matches"
	rig_signal client-done
fi
rig_barrier finished 60 || rig_fail "the peer did not finish"
