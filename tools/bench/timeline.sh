#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Where a small message's time goes in one guest, from the ftrace events
# that "bench.sh --timeline" records there (tools/bench/guest.sh,
# trace_start()):
#
#   tools/bench/timeline.sh TRACE
#
# A cycle starts at an interrupt of the NIC's receive queue and ends when
# the next packets go out (the last net_dev_xmit of a burst, whose
# transmission kicks the NIC): in a ping-pong the turnaround
# from request in to reply out, for the READ requester from response in to
# the next request out, for the READ responder from request in to response
# out. The milestones between are taken where the cycle has them:
#
#   netif_receive_skb          the first packet leaves the driver
#   sroce_recv                 sroce's receive handler has the first packet
#   sroce_cqe                  the last CQE written (a receive, a READ)
#   recvfrom returns           UDP: the datagram reached the program
#   write() / sendmmsg()       the program posts (the uverbs doorbell, or UDP)
#   sroce_doorbell             the doorbell reached sroce
#   sroce_xmit                 the first packet built
#
# Printed: the median of each step over all cycles, the median cycle, and
# the median time from a cycle's end to the next receive interrupt (the
# peer's turnaround and the link both ways). Each traced event costs the
# emulated CPU a few microseconds, so the steps are longer than untraced;
# compare steps, not totals against untraced runs.
set -euo pipefail
[ $# = 1 ] && [ -r "$1" ] || {
	echo "usage: timeline.sh TRACE" >&2
	exit 2
}
exec awk '
function stamp(   i, t) {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i; sub(":", "", t); return t * 1e6 }
	return -1
}
function median(n, a,   k, m, b) {
	m = 0
	for (k = 1; k <= n; k++) b[++m] = a[k]
	if (!m) return "-"
	asort(b)
	return sprintf("%.1f", b[int((m + 1) / 2)])
}
function finish(   p, i, m, k) {
	p = "in"
	for (i = 1; i <= nm + 1; i++) {
		m = (i <= nm) ? M[i] : "out"
		if (m != "out" && !(m in at)) continue
		k = p SUBSEP m
		if (!(k in ns)) pk[++npk] = k
		step[k, ++ns[k]] = (m == "out" ? t_out : at[m]) - at[p]
		p = m
	}
	cyc[++nc] = t_out - at["in"]
	last_out = t_out
	open = 0
	closing = 0
}
BEGIN {
	nm = split("rx drv cqe user post db build", M, " ")
	name["in"] = "receive interrupt"
	name["rx"] = "netif_receive_skb"
	name["drv"] = "sroce_recv"
	name["cqe"] = "sroce_cqe"
	name["user"] = "recvfrom returns"
	name["post"] = "write() / sendmmsg()"
	name["db"] = "sroce_doorbell"
	name["build"] = "sroce_xmit"
	name["out"] = "net_dev_xmit"
}
/^#/ { next }
{
	t = stamp()
	if (t < 0) next
	ev = ""
	if ($0 ~ /irq_handler_entry: .*-input/) ev = "in"
	else if ($0 ~ /netif_receive_skb:/) ev = "rx"
	else if ($0 ~ /sroce_recv:/) ev = "drv"
	else if ($0 ~ /sroce_cqe:/) ev = "cqe"
	else if ($0 ~ /sys_recvfrom -> / && $0 !~ /-> 0xfffffff/) ev = "user"
	else if ($0 ~ /sys_(write|sendmmsg)\(/) ev = "post"
	else if ($0 ~ /sroce_doorbell:/) ev = "db"
	else if ($0 ~ /sroce_xmit:/) ev = "build"
	else if ($0 ~ /net_dev_xmit:/) ev = "out"
	if (ev == "") next
	# A burst (a held ACK and the reply) leaves as several net_dev_xmit,
	# the NIC is kicked in the last of them: the cycle ends there.
	if (closing && ev == "out") { t_out = t; next }
	if (closing) finish()
	if (ev == "in") {
		if (!open) {
			if (last_out) away[++na] = t - last_out
			open = 1
			delete at
			at["in"] = t
		}
		next
	}
	if (!open) next
	if (ev == "out") {
		closing = 1
		t_out = t
		next
	}
	# The first of each, but the last CQE before the post.
	if (!(ev in at) || ev == "cqe") at[ev] = t
}
END {
	if (closing) finish()
	if (!nc) { print "timeline: no cycle in the trace"; exit 1 }
	printf "%d cycles (receive interrupt to the next packet out), medians in us:\n", nc
	# The steps most cycles took, in the order of the milestones; a step
	# in fewer than a tenth of the cycles is left out.
	rank["in"] = 0
	for (i = 1; i <= nm; i++) rank[M[i]] = i
	rank["out"] = nm + 1
	for (j = 1; j <= npk; j++) {
		split(pk[j], f, SUBSEP)
		byrank[sprintf("%02d %02d", rank[f[1]], rank[f[2]])] = pk[j]
	}
	nr = asorti(byrank, ro)
	for (j = 1; j <= nr; j++) {
		k = byrank[ro[j]]
		if (ns[k] * 10 < nc) continue
		split(k, f, SUBSEP)
		delete v
		for (i = 1; i <= ns[k]; i++) v[i] = step[k, i]
		printf "  %-24s -> %-22s %8s  (%d cycles)\n", name[f[1]], name[f[2]], median(ns[k], v), ns[k]
	}
	printf "  %-50s %8s\n", "cycle", median(nc, cyc)
	printf "  %-50s %8s\n", "packet out -> next receive interrupt (peer, link)", median(na, away)
}' "$1"
