#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Capture known-good RoCEv2 test vectors: boots two guests with rdma_rxe,
# runs RC SEND (ibv_rc_pingpong), RDMA WRITE (ib_write_bw), RDMA READ
# (ib_read_bw) and atomics (ib_atomic_bw), small and multi-packet, over the
# IPv4 and the IPv6 RoCEv2 GIDs, and saves what crossed the link (at most 64
# packets each, whole frames) as rxe-rc-{send,write,read,atomic}-v{4,6}.pcap.
# The packets carry rxe's ICRC, so they check sroce's ICRC and header code.
#
#   tools/vm/capture-vectors.sh [-k KERNEL] [DEST]   (DEST: tests/vectors)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
kernel=()
if [ "${1:-}" = -k ]; then
	kernel=(-k "${2:?}")
	shift 2
fi
dest=${1:-$repo/tests/vectors}
out=$repo/out/vm/vectors

bash "$here/run.sh" -o "$out" -t 900 "${kernel[@]}" \
	"$here/guest/capture-vectors.sh" "$here/guest/capture-vectors.sh"
mkdir -p "$dest"
for f in "$out"/vectors/*.pcap; do
	[ -s "$f" ] || { echo "capture-vectors: empty $f" >&2; exit 1; }
	cp "$f" "$dest/"
done
bash "$here/pcap-summary.sh" "$dest"/rxe-rc-*.pcap
