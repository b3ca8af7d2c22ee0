#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Summarise RoCEv2 pcap files: packet count and BTH opcodes (decoded from
# the first byte after the UDP header, dst port 4791), e.g.
#   rxe-rc-send-v4.pcap: 22 packets: RC SEND_ONLY x4, RC ACKNOWLEDGE x6 ...
#
#   tools/vm/pcap-summary.sh FILE.pcap...
set -euo pipefail

names='
0x00 RC SEND_FIRST
0x01 RC SEND_MIDDLE
0x02 RC SEND_LAST
0x03 RC SEND_LAST_WITH_IMMEDIATE
0x04 RC SEND_ONLY
0x05 RC SEND_ONLY_WITH_IMMEDIATE
0x06 RC RDMA_WRITE_FIRST
0x07 RC RDMA_WRITE_MIDDLE
0x08 RC RDMA_WRITE_LAST
0x09 RC RDMA_WRITE_LAST_WITH_IMMEDIATE
0x0a RC RDMA_WRITE_ONLY
0x0b RC RDMA_WRITE_ONLY_WITH_IMMEDIATE
0x0c RC RDMA_READ_REQUEST
0x0d RC RDMA_READ_RESPONSE_FIRST
0x0e RC RDMA_READ_RESPONSE_MIDDLE
0x0f RC RDMA_READ_RESPONSE_LAST
0x10 RC RDMA_READ_RESPONSE_ONLY
0x11 RC ACKNOWLEDGE
0x12 RC ATOMIC_ACKNOWLEDGE
0x13 RC COMPARE_SWAP
0x14 RC FETCH_ADD
0x16 RC SEND_LAST_WITH_INVALIDATE
0x17 RC SEND_ONLY_WITH_INVALIDATE
0x64 UD SEND_ONLY
0x65 UD SEND_ONLY_WITH_IMMEDIATE
'

for f in "$@"; do
	# tcpdump -xx: hex of each whole frame, 16 bytes a line after a header line.
	tcpdump -nn -xx -r "$f" 2>/dev/null | awk -v file="$(basename "$f")" -v names="$names" '
	BEGIN {
		n = split(names, l, "\n")
		for (i = 1; i <= n; i++) {
			if (l[i] == "") continue
			split(l[i], w, " ")
			name[w[1]] = w[2] " " w[3]
		}
	}
	function flush(   et, off, op, key) {
		if (hex == "") return
		pk++
		et = substr(hex, 25, 4)
		if (et == "0800") off = 14 + 20 + 8
		else if (et == "86dd") off = 14 + 40 + 8
		else { other++; hex = ""; return }
		op = "0x" substr(hex, off * 2 + 1, 2)
		key = (op in name) ? name[op] : "opcode " op
		count[key]++
		hex = ""
	}
	/^[^ \t]/ { flush(); next }
	/^[ \t]+0x[0-9a-f]+:/ {
		line = $0
		sub(/^[ \t]+0x[0-9a-f]+:[ \t]+/, "", line)
		gsub(/ /, "", line)
		hex = hex line
	}
	END {
		flush()
		s = file ": " pk " packets:"
		sep = " "
		for (k in count) { s = s sep k " x" count[k]; sep = ", " }
		if (other) s = s sep "non-IP x" other
		print s
	}'
done
