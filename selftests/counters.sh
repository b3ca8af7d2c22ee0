#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Counters for a known traffic pattern, on each sroce guest (an rxe peer
# just carries the traffic). ibv_rc_pingpong -c with path MTU 1024, guest
# a the server; each side sends ITERS messages of SIZE bytes.
#   bytes: 200 x 10000 B (10 packets a message). tx_bytes and rx_bytes (the
#     UDP payload: BTH through ICRC) grow by at least the data plus 16
#     bytes (BTH, ICRC) per data packet, and by at most the data plus 40
#     bytes per packet sent or received (the largest header set) plus 1024
#     bytes (the path MTU) per packet beyond the 2000 data packets: a
#     packet sent or received again carries up to that (the peer's resends
#     too: an rdma_rxe peer that resent 36 KiB after a loss once made
#     rx_bytes exceed a bound that counted only this guest's resends);
#   auto per-QP counters ("rdma statistic qp set link DEV/1 auto type
#     on"): during a 6000 x 4096 B run (SROCE_LONG_ITERS; on the debug
#     kernel 2000 is enough, 1000 is not), "rdma statistic qp show" lists a
#     counter of type RC for ibv_rc_pingpong with its QP and growing
#     tx_bytes; after the run the port's tx_bytes grew by the data once
#     (at most 1.5 times it: an event counted in the counter and in the
#     device would double it) and the counter is gone;
#   manual binding: the QP of a running transfer bound with "rdma
#     statistic qp bind ... lqpn N" gets a counter whose tx_packets grow;
#     "unbind" removes it; the transfer completes;
#   PMA: ports/1/counters/port_{xmit,rcv}_{data,packets} (the core asks
#     sroce's process_mad) equal hw_counters' tx/rx bytes / 4 and packets
#     at rest, the counters of the phases above included.
# Before sroce had counter operations, "auto type on" was accepted and no
# QP was ever bound (the core ignores a failed bind).
# timeout: 300
# place: stock@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/pingpong.sh
. "$(dirname "$0")/lib/pingpong.sh"
rig_suites sroce-sroce sroce-rxe

rig_require_peer
# Messages of the transfers that must outlast a check made 2 s into them
# (the test fails when one does not). 20000 took 50 s against rdma_rxe on
# a stock kernel (sroce-rxe), each of two; 6000, some 15 s.
LONG=${SROCE_LONG_ITERS:-6000}
rig_require_cmd ibv_rc_pingpong python3
rig_setup_dev
sroce=0
[ "$RIG_DEV_TYPE" = sroce ] && sroce=1
link=$RIG_DEV/1
hw=/sys/class/infiniband/$RIG_DEV/ports/1/hw_counters
cnt() { cat "$hw/$1"; }
cleanup() {
	local rc=$?
	[ "$sroce" = 1 ] && rdma statistic qp set link "$link" auto off 2>/dev/null
	exit "$rc"
}
trap cleanup EXIT

# qp_counters: "rdma -j statistic qp show" as lines "CNTN TYPE COMM
# TX_PACKETS TX_BYTES LQPN,LQPN..." (one per counter).
qp_counters() {
	rdma -j statistic qp show link "$link" | python3 -c '
import json, sys

def flat(obj, out, qps):
    for k, v in obj.items():
        if k.lower() == "lqpn":
            qps.extend(v if isinstance(v, list) else [v])
        elif isinstance(v, dict):
            flat(v, out, qps)
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for e in v:
                flat(e, out, qps)
        else:
            out[k] = v

for c in json.load(sys.stdin):
    out, qps = {}, []
    flat(c, out, qps)
    print(out.get("cntn"), out.get("qp-type"), out.get("comm"),
          out.get("tx_packets", 0), out.get("tx_bytes", 0),
          ",".join(str(q) for q in qps) or "-")'
}

# --- bytes --------------------------------------------------------------
if [ "$sroce" = 1 ]; then
	declare -A b
	for c in tx_bytes rx_bytes tx_packets rx_packets retransmits; do
		[ -e "$hw/$c" ] || rig_fail "no $c counter on $RIG_DEV"
		b[$c]=$(cnt "$c")
	done
fi
rig_barrier bytes-ready 60 || rig_fail "the peer is not ready"
pp_bg_start bytes 10000 200
pp_bg_wait bytes 10000 200
if [ "$sroce" = 1 ]; then
	data=$((10000 * 200)) pkts=$((10 * 200))
	tx=$(($(cnt tx_bytes) - b[tx_bytes])) rx=$(($(cnt rx_bytes) - b[rx_bytes]))
	txp=$(($(cnt tx_packets) - b[tx_packets])) rxp=$(($(cnt rx_packets) - b[rx_packets]))
	re=$(($(cnt retransmits) - b[retransmits]))
	rig_log "bytes: tx_bytes +$tx (packets +$txp), rx_bytes +$rx (packets +$rxp), retransmits +$re; data $data B in $pkts packets each way"
	[ "$tx" -ge $((data + 16 * pkts)) ] || rig_fail "tx_bytes +$tx, below the data and headers ($((data + 16 * pkts)))"
	[ "$rx" -ge $((data + 16 * pkts)) ] || rig_fail "rx_bytes +$rx, below the data and headers ($((data + 16 * pkts)))"
	extra_tx=$((txp > pkts ? txp - pkts : 0)) extra_rx=$((rxp > pkts ? rxp - pkts : 0))
	[ "$tx" -le $((data + 40 * txp + 1024 * extra_tx)) ] || rig_fail "tx_bytes +$tx, more than $txp packets can hold"
	[ "$rx" -le $((data + 40 * rxp + 1024 * extra_rx)) ] || rig_fail "rx_bytes +$rx, more than $rxp packets can hold"
fi

# --- auto per-QP counters --------------------------------------------------
if [ "$sroce" = 1 ]; then
	rdma statistic qp set link "$link" auto type on || rig_fail "rdma statistic qp set auto type on failed"
	t0=$(cnt tx_bytes)
fi
rig_barrier auto-ready 60 || rig_fail "the peer is not ready"
pp_bg_start auto 4096 "$LONG"
if [ "$sroce" = 1 ]; then
	rig_sleep 2
	kill -0 "$PP_PID" 2>/dev/null || rig_fail "auto: the transfer ended within 2 s; make it longer"
	first=$(qp_counters | grep -E "^[0-9]+ RC ")
	rig_sleep 1
	second=$(qp_counters | grep -E "^[0-9]+ RC ")
	rig_log "auto: counters $(qp_counters | xargs)"
	[ -n "$first" ] || rig_fail "auto: no RC counter for ibv_rc_pingpong (rdma statistic qp show)"
	read -r _ _ _ _ b1 q1 <<<"$first"
	read -r _ _ _ _ b2 _ <<<"$second"
	[ "$q1" != - ] || rig_fail "auto: the counter has no QP"
	[ "${b2:-0}" -gt "${b1:-0}" ] || rig_fail "auto: the counter's tx_bytes did not grow ($b1, then $b2)"
fi
pp_bg_wait auto 4096 "$LONG"
if [ "$sroce" = 1 ]; then
	grown=$(($(cnt tx_bytes) - t0)) adata=$((4096 * LONG))
	rig_log "auto: port tx_bytes +$grown for $adata B of data"
	[ "$grown" -ge "$adata" ] || rig_fail "auto: the port's tx_bytes grew by $grown, less than the data ($adata)"
	[ "$grown" -le $((adata * 3 / 2)) ] || rig_fail "auto: the port's tx_bytes grew by $grown: counted twice?"
	left=$(qp_counters | grep -cE "^[0-9]+ RC ")
	[ "$left" = 0 ] || rig_fail "auto: $left counters left after the QPs went"
	rdma statistic qp set link "$link" auto off || rig_fail "rdma statistic qp set auto off failed"
fi

# --- manual binding ----------------------------------------------------------
rig_barrier bind-ready 60 || rig_fail "the peer is not ready"
pp_bg_start bind 4096 "$LONG"
if [ "$sroce" = 1 ]; then
	rig_sleep 2
	kill -0 "$PP_PID" 2>/dev/null || rig_fail "bind: the transfer ended within 2 s; make it longer"
	qpn=$(rdma -j resource show qp link "$link" | python3 -c '
import json, sys
for q in json.load(sys.stdin):
    if q.get("type") == "RC" and q.get("comm") == "ibv_rc_pingpong":
        print(q["lqpn"]); break')
	[ -n "$qpn" ] || rig_fail "bind: no RC QP of ibv_rc_pingpong in rdma resource show"
	rdma statistic qp bind link "$link" lqpn "$qpn" || rig_fail "bind: rdma statistic qp bind lqpn $qpn failed"
	first=$(qp_counters | grep -E " $qpn(,|\$)")
	rig_sleep 1
	second=$(qp_counters | grep -E " $qpn(,|\$)")
	[ -n "$first" ] || rig_fail "bind: no counter lists QP $qpn"
	read -r cntn _ _ p1 _ _ <<<"$first"
	read -r _ _ _ p2 _ _ <<<"$second"
	rig_log "bind: QP $qpn in counter $cntn, tx_packets $p1 then $p2"
	[ "${p2:-0}" -gt "${p1:-0}" ] || rig_fail "bind: the counter's tx_packets did not grow"
	rdma statistic qp unbind link "$link" cntn "$cntn" lqpn "$qpn" ||
		rig_fail "bind: rdma statistic qp unbind failed"
	! qp_counters | grep -qE " $qpn(,|\$)" || rig_fail "bind: QP $qpn still in a counter after unbind"
fi
pp_bg_wait bind 4096 "$LONG"

# --- PMA counters ------------------------------------------------------------
# The core reads ports/1/counters/ through sroce's performance management
# (process_mad): at rest they must be the port's totals, also those of the
# counters above that are gone (32-bit words of data).
rig_barrier pma-ready 60 || rig_fail "the peer is not ready"
if [ "$sroce" = 1 ]; then
	pma=/sys/class/infiniband/$RIG_DEV/ports/1/counters
	[ -r "$pma/port_xmit_data" ] || rig_fail "no $pma/port_xmit_data"
	for m in "port_xmit_data tx_bytes 4" "port_rcv_data rx_bytes 4" \
		"port_xmit_packets tx_packets 1" "port_rcv_packets rx_packets 1"; do
		read -r pn hn d <<<"$m"
		pv=$(cat "$pma/$pn") hv=$(cnt "$hn")
		rig_log "PMA $pn $pv, hw_counters $hn $hv"
		[ "$pv" = $((hv / d)) ] || rig_fail "PMA $pn $pv, want $hn / $d = $((hv / d))"
	done
fi
rig_barrier pma-done 60 || rig_fail "the peer did not finish"
rig_log "PASS"
