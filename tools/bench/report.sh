#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The benchmark's outputs from a results folder of tools/bench/bench.sh:
#
#   tools/bench/report.sh DIR
#
# reads DIR/meta and the guests' DIR/run*/{a,b}/raw.tsv ("ROUND PAIR TEST
# SIZE METRIC VALUE" lines) and writes
#   DIR/results.csv    one row per cell and metric: median, min, max,
#                      spread (max - min, in % of the median), n, failures
#   DIR/results.json   the same with every value, plus the run's metadata
#   DIR/table.md       the medians side by side with their ratios
#   DIR/bench.png      bandwidth against message size, latency bars
#   DIR/scale.png      bandwidth and memory per QP against the QP count
#                      (when the run had scale cells)
# (gnuplot, with its data in DIR/plot/).
set -euo pipefail

d=${1:?usage: report.sh RESULTS_DIR}
[ -f "$d/meta" ] || { echo "report: no $d/meta" >&2; exit 1; }
raw=$d/raw.tsv
# The guests record raw counts; here they become the reported units:
# rate_Mpps -> rate_kmsgps, bw_Mbps (iperf3) -> bw_MiBps, and each guest's
# busy and kernel jiffies (USER_HZ 100) with its interface bytes (jb_R,
# js_R, by_R) -> cpu_R and ksys_R in CPU seconds per GB (1e9 bytes); the
# loss-recovery counts of both guests over a cell (rv_R retries, tm_R
# timeouts, oo_R out-of-sequence requests, cb_R the cell's link bytes) ->
# retries_pGB, timeouts_pGB and oos_pGB, events per GB the link moved
# (guest b's bytes sent plus received).
cat "$d"/run*/[ab]/raw.tsv 2>/dev/null | awk '
NF != 6 { next }
$5 == "rate_Mpps" { $5 = "rate_kmsgps"; $6 = sprintf("%.4g", $6 * 1000) }
$5 == "bw_Mbps" { $5 = "bw_MiBps"; $6 = sprintf("%.4g", $6 * 1e6 / 8 / 1048576) }
$5 ~ /^(jb|js|by)_[ab]$/ {
	k = $1 " " $2 " " $3 " " $4
	r = substr($5, 4)
	c[k, substr($5, 1, 2) r] = $6
	if (!((k, r) in seen)) { seen[k, r] = 1; ks[++n] = k SUBSEP r }
	next
}
$5 ~ /^(rv|tm|oo|cb)_[ab]$/ {
	k = $1 " " $2 " " $3 " " $4
	m = substr($5, 1, 2)
	if (m == "cb") rb[k, substr($5, 4)] = $6
	else rc[k, m] += $6
	if (!(k in rseen)) { rseen[k] = 1; rks[++rn] = k }
	next
}
{ print }
END {
	for (i = 1; i <= rn; i++) {
		k = rks[i]
		b = (k, "b") in rb ? rb[k, "b"] : rb[k, "a"]
		if (b > 0) {
			printf "%s retries_pGB %.4g\n", k, rc[k, "rv"] / (b / 1e9)
			printf "%s timeouts_pGB %.4g\n", k, rc[k, "tm"] / (b / 1e9)
			printf "%s oos_pGB %.4g\n", k, rc[k, "oo"] / (b / 1e9)
		}
	}
	for (i = 1; i <= n; i++) {
		split(ks[i], f, SUBSEP)
		k = f[1]
		r = f[2]
		b = c[k, "by" r]
		if (b > 0) {
			printf "%s cpu_%s %.4g\n", k, r, c[k, "jb" r] / 100 / (b / 1e9)
			printf "%s ksys_%s %.4g\n", k, r, c[k, "js" r] / 100 / (b / 1e9)
		}
	}
}' >"$raw" || true
[ -s "$raw" ] || { echo "report: no results in $d/run/*/raw.tsv" >&2; exit 1; }
meta() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$d/meta"; }

# --- results.csv, results.json -----------------------------------------
gawk -v csv="$d/results.csv" -v json="$d/results.json" -v metafile="$d/meta" '
function unit(m) {
	if (m == "bw_MiBps") return "MiB/s"
	if (m ~ /_kmsgps$/) return "kmsg/s"
	if (m ~ /_us$/) return "us"
	if (m ~ /^(cpu|ksys)_/) return "s/GB"
	if (m ~ /_pGB$/) return "/GB"
	if (m == "loss_pct") return "%"
	if (m ~ /_kib$/ || m == "kib_per_page") return "KiB"
	if (m ~ /_ms$/) return "ms"
	if (m == "conn_per_s") return "conn/s"
	if (m == "iops") return "IOPS"
	return ""
}
function jstr(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
{
	key = $2 SUBSEP $3 SUBSEP $4
	if ($5 == "fail") {
		nfail[key]++
		fk[++nf] = $1 SUBSEP key SUBSEP $6
		if (!(key in seenc)) { seenc[key] = 1 }
		next
	}
	k = key SUBSEP $5
	if (!(k in n)) order[++nk] = k
	v[k, ++n[k]] = $6 + 0
}
END {
	while ((getline line < metafile) > 0) {
		split(line, w, " ")
		mk = w[1]
		sub(/^[^ ]+ ?/, "", line)
		mv[mk] = line
		mo[++nm] = mk
	}
	print "pair,test,size,metric,unit,n,median,min,max,spread_pct,failed" > csv
	printf "{\n  \"meta\": {" > json
	for (i = 1; i <= nm; i++)
		printf "%s\n    %s: %s", (i > 1 ? "," : ""), jstr(mo[i]), jstr(mv[mo[i]]) > json
	printf "\n  },\n  \"cells\": [" > json
	for (i = 1; i <= nk; i++) {
		k = order[i]
		split(k, f, SUBSEP)
		delete a
		for (j = 1; j <= n[k]; j++) a[j] = v[k, j]
		m = asort(a)
		med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		spread = med > 0 ? (a[m] - a[1]) / med * 100 : 0
		fails = nfail[f[1] SUBSEP f[2] SUBSEP f[3]] + 0
		printf "%s,%s,%s,%s,%s,%d,%.6g,%.6g,%.6g,%.1f,%d\n", f[1], f[2], f[3], f[4], unit(f[4]),
			m, med, a[1], a[m], spread, fails > csv
		vals = ""
		for (j = 1; j <= n[k]; j++) vals = vals (j > 1 ? ", " : "") sprintf("%.6g", v[k, j])
		printf "%s\n    {\"pair\": %s, \"test\": %s, \"size\": %d, \"metric\": %s, \"unit\": %s, \"n\": %d, \"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"spread_pct\": %.1f, \"failed\": %d, \"values\": [%s]}",
			(i > 1 ? "," : ""), jstr(f[1]), jstr(f[2]), f[3], jstr(f[4]), jstr(unit(f[4])), m, med, a[1], a[m], spread, fails, vals > json
	}
	printf "\n  ],\n  \"failures\": [" > json
	for (i = 1; i <= nf; i++) {
		split(fk[i], f, SUBSEP)
		printf "%s\n    {\"round\": %d, \"pair\": %s, \"test\": %s, \"size\": %d, \"reason\": %s}",
			(i > 1 ? "," : ""), f[1], jstr(f[2]), jstr(f[3]), f[4], jstr(f[5]) > json
	}
	printf "\n  ]\n}\n" > json
}' "$raw"

# --- table.md --------------------------------------------------------------
pairs=$(meta pairs)
load_start=$(meta host_load_start)
load_end=$(meta host_load_end)
cpus=$(meta host_cpus)
{
	echo "# sroce benchmark: $(meta mode) run"
	echo
	echo "Generated by \`tools/bench/bench.sh\` (do not edit). $(meta date), git $(meta git),"
	echo "guest kernel $(meta guest_kernel), perftest $(meta guest_perftest), iperf3 $(meta guest_iperf3);"
	echo "two qemu TCG guests with $(meta guest_vcpus) vCPU each on one virtual link (MTU $(meta guest_mtu)),"
	echo "$(meta rounds) rounds, implementations alternating; bandwidth tests $(meta duration) s each (perftest -D),"
	echo "latency tests $(meta lat_iters) iterations; run time $(meta elapsed) s."
	echo
	if awk -v l="${load_start:-0}" 'BEGIN { exit !(l >= 0.5) }'; then
		echo "**The host was shared:** its load average was $load_start before the run started"
		echo "and $load_end at the end, on $cpus cores; other work competed with the guests for the CPU."
		echo "Absolute numbers are low and noisy under emulation; compare the ratios."
	else
		echo "Host load average $load_start before the run, $load_end at the end ($cpus cores)."
		echo "Absolute numbers are low under emulation; compare the ratios."
	fi
	stops=$(meta link_stops)
	if [ -n "$stops" ]; then
		echo
		echo "The rig's link stopped $(wc -w <<<"$stops") time(s), in step(s) $stops of the plan;"
		echo "each time the guests were booted again and the run went on from that step,"
		echo "measured anew (Documentation/benchmark.rst: the link that stops)."
	fi
	echo
	echo "Each cell: median over the rounds (± spread: max - min in % of the median)."
	echo "Ratios divide medians: X/rxe is pair X against rxe-rxe, sroce/link is"
	echo "sroce-sroce against iperf3 TCP on the same link (bandwidth, CPU cost) or against"
	echo "a UDP ping-pong between the same guests (send_lat). For bandwidth and message"
	echo "rate higher is better; for latency and CPU cost lower is better."
	echo "Guest a is the perftest server (responder), guest b the client (requester);"
	echo "CPU cost: guest CPU seconds per GB through its interface, measured mid-transfer"
	echo "(busy: all non-idle time, the client polls its CQ so it is always busy; kernel:"
	echo "system + irq + softirq time)."
	echo
} >"$d/table.md"

gawk -v pairs="$pairs" -F, '
FNR == NR {
	split($0, w, " ")
	if (w[5] == "fail") allfail[w[2], w[3] SUBSEP w[4]] = 1
	next
}
FNR == 1 { next }
{
	k = $2 SUBSEP $3 SUBSEP $4
	med[$1, k] = $7
	spr[$1, k] = $10
	nn[$1, k] = $6
	fl[$1, k] = $11
	unit[k] = $5
	if (!(k in seen)) { seen[k] = 1; ord[++nk] = k }
}
function cell(p, k) {
	if (!((p, k) in med)) return (failed(p, k) ? "failed" : "-")
	return sprintf("%s ±%.0f%%%s", fmt(med[p, k]), spr[p, k], fl[p, k] > 0 ? " (" fl[p, k] " failed)" : "")
}
function failed(p, k, g) {
	split(k, g, SUBSEP)
	return (p, g[1] SUBSEP g[2]) in allfail
}
function fmt(x) {
	if (x >= 100) return sprintf("%.0f", x)
	if (x >= 10) return sprintf("%.1f", x)
	if (x >= 1) return sprintf("%.2f", x)
	return sprintf("%.3g", x)
}
function ratio(p, q, k1, k2) {
	if (!((p, k1) in med) || !((q, k2) in med) || med[q, k2] == 0) return "-"
	return sprintf("%.2f", med[p, k1] / med[q, k2])
}
function label(t, s, m) {
	name = (t == "cm_lat" ? "send_lat -R (rdma_cm)" : t)
	if (t == "nvme_randread") name = "NVMe-oF fio randread"
	if (t == "nvme_seqread") name = "NVMe-oF fio read"
	if (t == "iser_randread") name = "iSER fio randread"
	if (t == "iser_seqread") name = "iSER fio read"
	if (s > 0) {
		if (s >= 1048576) name = name " " s / 1048576 " MiB"
		else if (s >= 1024) name = name " " s / 1024 " KiB"
		else name = name " " s " B"
	}
	if (m == "bw_MiBps") return name " bandwidth"
	if (m == "iops") return name " IOPS"
	if (m == "rate_kmsgps") return name " message rate"
	if (m == "typical_us") return name " latency typical"
	if (m == "p99_us") return name " latency p99"
	if (m == "cpu_a") return name " CPU busy, guest a"
	if (m == "cpu_b") return name " CPU busy, guest b"
	if (m == "ksys_a") return name " CPU kernel, guest a"
	if (m == "ksys_b") return name " CPU kernel, guest b"
	if (m == "loss_pct") return name " loss"
	return name " " m
}
# Rows of the main table: bandwidth at every size, message rate up to
# 4 KiB, latency, CPU of the 64 KiB WRITE test.
function wanted(t, s, m) {
	if (t == "tcp" || t ~ /^udp/) return 0
	if (t == "scale_write" || t == "reg_mr" || t == "cm_setup") return 0
	if (t == "nvme_randread" || t == "iser_randread") return m == "iops"
	if (t == "nvme_seqread" || t == "iser_seqread") return m == "bw_MiBps"
	if (m == "bw_MiBps" || m ~ /_us$/) return 1
	if (m == "rate_kmsgps") return s <= 4096
	if (m ~ /^(cpu|ksys)_/) return t == "write_bw" && s == 65536
	return 0
}
END {
	# Row order: the tests as planned, sizes ascending, metrics as listed.
	nt = split("write_bw read_bw send_bw write_bw_q4 write_bw_bidir send_lat cm_lat write_lat read_lat nvme_randread nvme_seqread iser_randread iser_seqread tcp udp udp64 udp_lat udp_lat_pair", T, " ")
	for (i = 1; i <= nt; i++) tix[T[i]] = i
	nmo = split("bw_MiBps iops sent_kmsgps rate_kmsgps typical_us p99_us loss_pct cpu_a cpu_b ksys_a ksys_b", M, " ")
	for (i = 1; i <= nmo; i++) mix[M[i]] = i
	for (o = 1; o <= nk; o++) {
		split(ord[o], f, SUBSEP)
		bykey[sprintf("%02d %012d %02d %s", (f[1] in tix) ? tix[f[1]] : 99, f[2], (f[3] in mix) ? mix[f[3]] : 99, f[1] f[3])] = ord[o]
	}
	ns = asorti(bykey, sk)
	for (o = 1; o <= ns; o++) ord[o] = bykey[sk[o]]
	np = split(pairs, P, " ")
	hdr = "| cell | unit |"
	sep = "| --- | --- |"
	for (i = 1; i <= np; i++) { hdr = hdr " " P[i] " |"; sep = sep " ---: |" }
	base = "rxe-rxe"
	for (i = 1; i <= np; i++) if (P[i] != base) {
		hdr = hdr " " (P[i] == "sroce-sroce" ? "sroce" : P[i]) "/rxe |"
		sep = sep " ---: |"
	}
	hdr = hdr " sroce/link |"
	sep = sep " ---: |"
	print hdr
	print sep
	tcp = "link" SUBSEP "tcp" SUBSEP "0" SUBSEP "bw_MiBps"
	for (o = 1; o <= nk; o++) {
		k = ord[o]
		split(k, f, SUBSEP)
		if (!wanted(f[1], f[2], f[3])) continue
		row = "| " label(f[1], f[2], f[3]) " | " unit[k] " |"
		for (i = 1; i <= np; i++) row = row " " cell(P[i], k) " |"
		for (i = 1; i <= np; i++) if (P[i] != base) row = row " " ratio(P[i], base, k, k) " |"
		if (f[3] == "bw_MiBps") {
			split(tcp, g, SUBSEP)
			tk = g[2] SUBSEP g[3] SUBSEP g[4]
			row = row " " ratio("sroce-sroce", "link", k, tk) " |"
		} else if (f[3] ~ /^(cpu|ksys)_/) {
			# CPU per GB against iperf3 TCP on the same guest, same measure
			row = row " " ratio("sroce-sroce", "link", k, "tcp" SUBSEP "0" SUBSEP f[3]) " |"
		} else if (f[1] == "send_lat" && f[3] ~ /_us$/) {
			# against the UDP ping-pong of the link itself
			row = row " " ratio("sroce-sroce", "link", k, "udp_lat" SUBSEP "2" SUBSEP f[3]) " |"
		} else row = row " |"
		print row
	}
	# No cliff: the rdma_cm ping-pong per 64 KiB moved, size against size.
	ncm = 0
	for (o = 1; o <= nk; o++) {
		split(ord[o], f, SUBSEP)
		if (f[1] == "cm_lat" && f[3] == "typical_us") cms[++ncm] = f[2]
	}
	if (ncm > 1) {
		print ""
		print "send_lat -R (rdma_cm), typical latency per 64 KiB of message (flat: no cliff):"
		print ""
		h = "| size |"
		sp = "| --- |"
		for (i = 1; i <= np; i++) { h = h " " P[i] " |"; sp = sp " ---: |" }
		print h
		print sp
		for (j = 1; j <= ncm; j++) {
			k = "cm_lat" SUBSEP cms[j] SUBSEP "typical_us"
			row = "| " cms[j] / 1024 " KiB |"
			for (i = 1; i <= np; i++)
				row = row " " ((P[i], k) in med ? \
					sprintf("%.0f us", med[P[i], k] * 65536 / cms[j]) : "-") " |"
			print row
		}
	}
	lrows = ""
	for (o = 1; o <= nk; o++) {
		k = ord[o]
		split(k, f, SUBSEP)
		if (f[1] != "tcp" && f[1] !~ /^udp/ || f[3] ~ /_pGB$/) continue
		lb = (f[1] == "tcp" ? "iperf3 TCP" : f[1] == "udp" ? "iperf3 UDP (4 KiB datagrams, unlimited rate)" : \
			f[1] == "udp64" ? "iperf3 UDP (64 B datagrams, unlimited rate)" : \
			f[1] == "udp_lat" ? "UDP ping-pong 2 B" : \
			"UDP ping-pong 2 B, two datagrams each way (--pair)")
		m = f[3]
		lbl = lb (m == "bw_MiBps" ? " bandwidth" : m == "loss_pct" ? " loss" : \
			m == "sent_kmsgps" ? " datagrams sent" : m == "rate_kmsgps" ? " datagrams received" : \
			m == "typical_us" ? " latency typical" : m == "p99_us" ? " latency p99" : \
			m ~ /^cpu_/ ? " CPU busy, guest " substr(m, 5) : " CPU kernel, guest " substr(m, 6))
		lrows = lrows "| " lbl " | " unit[k] " | " cell("link", k) " |\n"
	}
	# (No link tests in a run of some cells only: bench.sh --cells.)
	if (lrows != "") {
		print ""
		print "The link itself (iperf3 and a UDP ping-pong, sroce-udp-lat, between the same guests):"
		print ""
		print "| cell | unit | link |"
		print "| --- | --- | ---: |"
		printf "%s", lrows
	}
	# The 2-byte ping-pongs against the floor of the packets they need:
	# ib_send_lat and ib_write_lat signal every request and wait for its
	# ACK, so two packets go each way (the ping-pong with two datagrams).
	# (ib_read_lat reports a whole round trip and needs no program on the
	# responder: no UDP ping-pong is its floor.)
	pl = "udp_lat_pair" SUBSEP "2" SUBSEP "typical_us"
	title = "2-byte latency, typical, against the floor of the packets it needs on this link:"
	vs_line("send_lat" SUBSEP "2" SUBSEP "typical_us", pl, title,
		"send_lat against the ping-pong with two datagrams each way")
	vs_line("write_lat" SUBSEP "2" SUBSEP "typical_us", pl, title, "write_lat against the same")
	# One packet per 64-byte WRITE or SEND: the 64 B message rates against
	# the 64-byte datagrams a sender in user space got through the guests.
	ul = "udp64" SUBSEP "64" SUBSEP "rate_kmsgps"
	title = "64-byte message rate against the 64-byte datagrams iperf3 UDP moved (received):"
	vs_line("write_bw" SUBSEP "64" SUBSEP "rate_kmsgps", ul, title, "write_bw")
	vs_line("send_bw" SUBSEP "64" SUBSEP "rate_kmsgps", ul, title, "send_bw")
}
# vs_line K FK TITLE WHAT: "- WHAT: PAIR RATIO, ...", K of each pair
# against FK of the link, under TITLE (printed before the first line).
function vs_line(k, fk, title, what,   i, line) {
	if (!(("link", fk) in med)) return
	line = ""
	for (i = 1; i <= np; i++)
		if ((P[i], k) in med)
			line = line (line == "" ? "" : ", ") P[i] " " ratio(P[i], "link", k, fk)
	if (line == "") return
	if (title != last_title) {
		print ""
		print title
		print ""
		last_title = title
	}
	print "- " what ": " line
}' "$raw" "$d/results.csv" >>"$d/table.md"
# Loss recovery: per cell and pair, the medians of retries / timeouts /
# out-of-sequence requests per GB (sums of both guests; recov_snap() of
# tools/bench/guest.sh says what each device counts).
awk -F, -v pairs="$pairs" '
NR == 1 || $1 == "link" { next }
$4 ~ /_pGB$/ {
	k = $2 SUBSEP $3
	if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	v[$1, k, $4] = $7
}
END {
	if (!n) exit
	np = split(pairs, P, " ")
	print ""
	print "Loss recovery, events per GB moved (both guests): retries / local ACK timeouts /"
	print "out-of-sequence requests at the responder. rdma_rxe counts no timeouts: its column"
	print "shows completer_retry_err less rcvd_seq_err."
	print ""
	hdr = "| cell |"; sep = "| --- |"
	for (i = 1; i <= np; i++) { hdr = hdr " " P[i] " |"; sep = sep " ---: |" }
	print hdr
	print sep
	for (o = 1; o <= n; o++) {
		split(ord[o], f, SUBSEP)
		row = "| " f[1] " " f[2] " |"
		for (i = 1; i <= np; i++) {
			c = P[i] SUBSEP ord[o]
			if ((c, "retries_pGB") in v)
				row = row sprintf(" %.0f / %.0f / %.0f |", v[c, "retries_pGB"], \
					v[c, "timeouts_pGB"], v[c, "oos_pGB"])
			else
				row = row " - |"
		}
		print row
	}
}' "$d/results.csv" >>"$d/table.md"
# Scale: WRITE bandwidth over many QPs (sroce-manyqp), the QPs' setup time
# and memory, and registering memory; per pair, with sroce/rxe ratios.
awk -F, -v pairs="$pairs" '
NR == 1 { next }
($2 == "scale_write" || $2 == "reg_mr" || $2 == "cm_setup") && $4 !~ /_pGB$/ {
	k = $2 SUBSEP $3 SUBSEP $4
	if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	v[$1, k] = $7
	sp[$1, k] = $10
	u[k] = $5
}
function fmt(x) {
	if (x >= 100) return sprintf("%.0f", x)
	if (x >= 10) return sprintf("%.1f", x)
	return sprintf("%.3g", x)
}
function lbl(t, s, m) {
	if (t == "cm_setup") return "rdma_cm: " s " connections, 16 at a time"
	if (t == "reg_mr") {
		if (m == "reg_ms") return "ibv_reg_mr " s " MiB"
		if (m == "dereg_ms") return "ibv_dereg_mr " s " MiB"
		return "memory per registered 4 KiB page"
	}
	q = s " QP" (s == 1 ? "" : "s")
	if (m == "bw_MiBps") return "WRITE 64 KiB, " q ": bandwidth"
	if (m == "setup_us") return q ": setup per QP, requester"
	if (m == "peer_setup_us") return q ": setup per QP, responder"
	if (m == "mem_kib") return q ": memory per QP, requester"
	if (m == "peer_mem_kib") return q ": memory per QP, responder"
	return t " " s " " m
}
END {
	if (!n) exit
	np = split(pairs, P, " ")
	print ""
	print "Scale (sroce-manyqp): 64 KiB WRITEs over N RC QPs, 128 outstanding in all, each"
	print "completion followed by a WRITE on the next QP in turn; the time from the first"
	print "create to the last QP connected, and what MemFree lost, per QP (64 QPs or more;"
	print "the requester QPs queue ceil(128 / N) WRITEs, the responder QPs 1); registering"
	print "memory touched beforehand; rdma_cm connections from the client to the server"
	print "(resolve address and route, create a QP, connect: until the last is"
	print "established). vs 1 QP: the bandwidth against the same pair with one QP."
	print ""
	hdr = "| cell | unit |"; sep = "| --- | --- |"
	for (i = 1; i <= np; i++) { hdr = hdr " " P[i] " |"; sep = sep " ---: |" }
	for (i = 1; i <= np; i++) if (P[i] != "rxe-rxe") {
		hdr = hdr " " (P[i] == "sroce-sroce" ? "sroce" : P[i]) "/rxe |"; sep = sep " ---: |"
	}
	hdr = hdr " sroce vs 1 QP |"; sep = sep " ---: |"
	print hdr
	print sep
	# QP counts ascending, metrics grouped; reg_mr last.
	for (o = 1; o <= n; o++) {
		split(ord[o], f, SUBSEP)
		mo = f[3] == "bw_MiBps" || f[3] == "reg_ms" ? 1 : f[3] ~ /setup|dereg/ ? 2 : 3
		key[sprintf("%d %d %08d %s", f[1] == "reg_mr" ? 1 : f[1] == "cm_setup" ? 2 : 0, mo, f[2], f[3])] = ord[o]
	}
	m = asorti(key, sk)
	for (o = 1; o <= m; o++) {
		k = key[sk[o]]
		split(k, f, SUBSEP)
		row = "| " lbl(f[1], f[2], f[3]) " | " u[k] " |"
		for (i = 1; i <= np; i++)
			row = row " " (((P[i], k) in v) ? fmt(v[P[i], k]) " ±" sprintf("%.0f", sp[P[i], k]) "%" : "-") " |"
		for (i = 1; i <= np; i++) if (P[i] != "rxe-rxe") {
			r = "-"
			if (((P[i], k) in v) && (("rxe-rxe", k) in v) && v["rxe-rxe", k] > 0)
				r = sprintf("%.2f", v[P[i], k] / v["rxe-rxe", k])
			row = row " " r " |"
		}
		one = "scale_write" SUBSEP 1 SUBSEP "bw_MiBps"
		r = "-"
		if (f[1] == "scale_write" && f[3] == "bw_MiBps" && (("sroce-sroce", one) in v) && \
		    (("sroce-sroce", k) in v) && v["sroce-sroce", one] > 0)
			r = sprintf("%.2f", v["sroce-sroce", k] / v["sroce-sroce", one])
		print row " " r " |"
	}
}' "$d/results.csv" >>"$d/table.md"
if awk -F, 'NR > 1 && $11 > 0' "$d/results.csv" | grep -q . ||
	awk '$5 == "fail"' "$raw" | grep -q .; then
	{
		echo
		echo "Failed runs (round, pair, test, size: reason):"
		echo
		awk '$5 == "fail" { r = $6; gsub(/~/, " ", r); print "- " $1 ", " $2 ", " $3 ", " $4 ": " r }' "$raw"
	} >>"$d/table.md"
fi

# --- bench.png ---------------------------------------------------------------
pd=$d/plot
rm -rf "$pd"
mkdir -p "$pd"
plots=()
ci=0
colors=("#1f77b4" "#d62728" "#2ca02c" "#9467bd" "#ff7f0e")
for p in $pairs; do
	dash=1
	for t in write_bw read_bw send_bw; do
		f=$pd/bw-$p-$t.dat
		awk -F, -v p="$p" -v t="$t" 'NR > 1 && $1 == p && $2 == t && $4 == "bw_MiBps" { print $3, $7, $8, $9 }' \
			"$d/results.csv" | sort -n >"$f"
		if [ -s "$f" ]; then
			plots+=("'$f' using 1:2:3:4 with yerrorlines lw 2 dt $dash pt 7 ps 0.6 lc rgb '${colors[ci % 5]}' title '$p ${t%_bw}'")
		fi
		dash=$((dash + 1))
	done
	ci=$((ci + 1))
done
tcp=$(awk -F, '$1 == "link" && $2 == "tcp" && $4 == "bw_MiBps" { print $7 }' "$d/results.csv")
[ -n "$tcp" ] && plots+=("$tcp with lines lw 2 dt 2 lc rgb 'black' title 'link: iperf3 TCP'")
# Latency: one row per test, typical and p99 per pair.
lat=$pd/lat.dat
: >"$lat"
for t in send_lat write_lat read_lat; do
	line="$t"
	any=0
	for p in $pairs; do
		ty=$(awk -F, -v p="$p" -v t="$t" '$1 == p && $2 == t && $3 == 2 && $4 == "typical_us" { print $7 }' "$d/results.csv")
		p99=$(awk -F, -v p="$p" -v t="$t" '$1 == p && $2 == t && $3 == 2 && $4 == "p99_us" { print $7 }' "$d/results.csv")
		[ -n "$ty" ] && any=1
		line+=" ${ty:-NaN} ${ty:-NaN} ${p99:-NaN}"
	done
	[ "$any" = 1 ] && echo "$line" >>"$lat"
done
latplots=()
ci=0
col=2
for p in $pairs; do
	latplots+=("'$lat' using $col:$((col + 1)):$((col + 2)):xtic(1) lc rgb '${colors[ci % 5]}' title '$p'")
	ci=$((ci + 1))
	col=$((col + 3))
done
{
	echo "set terminal pngcairo size 1400,600 font 'sans,10' noenhanced"
	echo "set output '$d/bench.png'"
	echo "set multiplot layout 1,2 title 'sroce benchmark ($(meta mode), $(meta date), git $(meta git)): medians, bars span min..max'"
	echo "set logscale x 2"
	echo "set logscale y 10"
	echo "set grid"
	echo "set key bottom right"
	echo "set xlabel 'message size (bytes)'"
	echo "set ylabel 'bandwidth (MiB/s)'"
	echo "set xtics ('64' 64, '256' 256, '1K' 1024, '4K' 4096, '16K' 16384, '64K' 65536, '256K' 262144, '1M' 1048576)"
	echo "set xrange [48:1400000]"
	echo "set title 'bandwidth against message size (ib_write_bw, ib_read_bw, ib_send_bw)'"
	if [ ${#plots[@]} -gt 0 ]; then
		(IFS=,; echo "plot ${plots[*]}")
	else
		# An empty panel (bench.sh --cells), so the next one stays right.
		echo "unset logscale"
		echo "set label 1 'no bandwidth tests in this run' at graph 0.3, graph 0.5"
		echo "plot [0:1] [0:1] -1 notitle"
		echo "unset label 1"
		echo "set logscale y 10"
	fi
	echo "unset logscale x"
	echo "set xtics auto"
	echo "set xrange [*:*]"
	echo "set xlabel ''"
	echo "set ylabel 'latency (us)'"
	echo "set title 'latency, 2 B: bar typical, whisker up to p99'"
	echo "set style data histogram"
	echo "set style histogram errorbars gap 2 lw 1"
	echo "set style fill solid 0.7 border -1"
	echo "set key top right"
	if [ -s "$lat" ]; then
		(IFS=,; echo "plot ${latplots[*]}")
	else
		echo "unset logscale"
		echo "set label 'no latency tests in this run' at graph 0.3, graph 0.5"
		echo "plot [0:1] [0:1] -1 notitle"
	fi
	echo "unset multiplot"
} >"$pd/bench.gp"
gnuplot "$pd/bench.gp" 2>"$pd/gnuplot.log" || { cat "$pd/gnuplot.log" >&2; exit 1; }
[ -s "$d/bench.png" ] || { echo "report: gnuplot wrote no bench.png" >&2; exit 1; }

# --- scale.png: bandwidth and memory per QP against the QP count --------------
splots=()
mplots=()
ci=0
for p in $pairs; do
	f=$pd/scale-$p.dat
	# QPS bandwidth (median min max) requester KiB/QP, responder KiB/QP
	awk -F, -v p="$p" 'NR > 1 && $1 == p && $2 == "scale_write" {
		if ($4 == "bw_MiBps") { b[$3] = $7 " " $8 " " $9; q[$3] = 1 }
		if ($4 == "mem_kib") m[$3] = $7
		if ($4 == "peer_mem_kib") r[$3] = $7
	}
	END { for (x in q) print x, b[x], (x in m ? m[x] : "NaN"), (x in r ? r[x] : "NaN") }' \
		"$d/results.csv" | sort -n >"$f"
	if [ -s "$f" ]; then
		splots+=("'$f' using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.6 lc rgb '${colors[ci % 5]}' title '$p'")
		mplots+=("'$f' using 1:5 with linespoints lw 2 pt 7 ps 0.6 lc rgb '${colors[ci % 5]}' title '$p requester'")
		mplots+=("'$f' using 1:6 with linespoints lw 2 dt 2 pt 5 ps 0.6 lc rgb '${colors[ci % 5]}' title '$p responder'")
	fi
	ci=$((ci + 1))
done
if [ ${#splots[@]} -gt 0 ]; then
	{
		echo "set terminal pngcairo size 1400,600 font 'sans,10' noenhanced"
		echo "set output '$d/scale.png'"
		echo "set multiplot layout 1,2 title 'sroce benchmark, many QPs ($(meta mode), $(meta date), git $(meta git)): medians, bars span min..max'"
		echo "set logscale x 2"
		echo "set grid"
		echo "set key bottom left"
		echo "set xlabel 'RC QPs (128 WRITEs of 64 KiB outstanding in all)'"
		echo "set ylabel 'bandwidth (MiB/s)'"
		echo "set yrange [0:*]"
		echo "set title 'WRITE bandwidth against QP count (sroce-manyqp)'"
		(IFS=,; echo "plot ${splots[*]}")
		echo "set ylabel 'KiB per QP'"
		echo "set key top right"
		echo "set title 'memory per QP (MemFree lost at setup)'"
		(IFS=,; echo "plot ${mplots[*]}")
		echo "unset multiplot"
	} >"$pd/scale.gp"
	gnuplot "$pd/scale.gp" 2>>"$pd/gnuplot.log" || { cat "$pd/gnuplot.log" >&2; exit 1; }
fi
