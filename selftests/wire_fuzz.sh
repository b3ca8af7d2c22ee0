#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Packet fuzzing over the wire: guest a (sroce) runs verified RC traffic
# with guest b (sroce-integrity run: every byte and atomic result checked)
# while guest b also fires sroce-wirefuzz (tools/wirefuzz) at a's device
# from its own address: valid headers with mutated fields, truncated
# packets, wrong ICRC, wrong pad and lengths, huge RETH lengths, all 256
# opcodes, PSNs at the 24-bit wrap and around the QPs' initial PSNs, P_Key
# and Q_Key variations, for a's real QPs (the integrity QP in RTS, an RC QP
# held in INIT by sroce-verbs-check hold, the GSI QP; QPNs and initial PSNs
# from a's `rdma resource show qp`) and for QPNs nobody has.
#
# Pass: a's traffic completes with every byte verified, the kernel stays
# clean (the runner checks dmesg), a's drop counters rose, and for every
# reason the receive path decides from the packet alone (short, bad_icrc,
# bad_opcode, bad_pad, ...) a's counter rose by at least one and by no
# more than the number of packets the fuzzer predicts for it with the same
# protocol core (more would mean a's kernel rejected packets the protocol
# core accepts). The fuzzer never sends an acceptable packet with a PSN the
# live QP may still expect (its safety rule): such a packet, from the
# peer's own address, would be indistinguishable from the peer's and
# legitimately change the data, so a failed transfer is always a bug.
# Longer runs by hand: SROCE_WIREFUZZ_SECONDS (fuzzing time, default 10),
# SROCE_WIREFUZZ_PPS (default 1500), SROCE_WIREFUZZ_SEED. Crash hunting:
# SROCE_WIREFUZZ_HIT_WINDOW=1 drops the safety rule (sroce-wirefuzz -W, and
# -F to aim at the PSNs the QP expects now, seen in b's own traffic):
# acceptable garbage then lands in the live connection, so the traffic may
# fail (it must end, with an error status), and only the kernel's health and
# the stateless drop counts are checked.
# timeout: 450
# place: debug@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=rc_integrity_lib.sh
. "$(dirname "$0")/rc_integrity_lib.sh"

rig_suites sroce-sroce
if [ "$RIG_DEV_TYPE" != sroce ] || [ "${RIG_PEER_DEV_TYPE:-}" != sroce ]; then
	rig_skip "wire fuzzing runs sroce-sroce"
fi
FUZZ_BIN=$RIG_REPO/build/tools/wirefuzz/sroce-wirefuzz
VC_BIN=$RIG_REPO/build/tools/verbs-check/sroce-verbs-check
[ -x "$FUZZ_BIN" ] || rig_skip "no $FUZZ_BIN (cmake --build build)"
integ_init

fuzz_secs=${SROCE_WIREFUZZ_SECONDS:-10}
pps=${SROCE_WIREFUZZ_PPS:-1500}
seed=${SROCE_WIREFUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}
# The predicted counts assume a's QPs live until the fuzzer's last packet:
# b's client runs the traffic until b has fuzzed (--stop-file), however long
# the connection took to come up (seconds on a loaded debug kernel); the
# duration is only a ceiling that a healthy run never reaches.
traffic_secs=$(rig_limit $((fuzz_secs + 120)))
hit=${SROCE_WIREFUZZ_HIT_WINDOW:-0}
port=18651

# counters: "name value" lines of this guest's device counters.
counters() {
	local f
	for f in /sys/class/infiniband/"$RIG_DEV"/ports/1/hw_counters/*; do
		echo "${f##*/} $(<"$f")"
	done
}

# wait_integrity_qp: the integrity server's QP exists and is in RTS.
wait_integrity_qp() {
	local end=$((EPOCHSECONDS + 30)) qps
	while [ "$EPOCHSECONDS" -lt "$end" ]; do
		qps=$(rdma resource show qp link "$RIG_DEV/1" 2>/dev/null)
		grep -q 'type RC state RTS .*comm sroce-integrity' <<<"$qps" && return 0
		rig_sleep 0.3
	done
	return 1
}

if rig_is_a; then
	before=$(counters)
	hold_pid=
	if [ -x "$VC_BIN" ]; then
		rig_bg hold $((traffic_secs + 40)) "$VC_BIN" hold "$RIG_DEV" $((traffic_secs + 30))
		hold_pid=$RIG_BG_PID
	fi
	gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
	rig_bg integrity $((traffic_secs + 60)) "$INTEG_BIN" run -d "$RIG_DEV" -g "$gid" \
		-p "$port" -T 60 --duration "$traffic_secs"
	integ_pid=$RIG_BG_PID
	rig_wait_listen "$port" 30 || rig_fail "the integrity server did not start"
	rig_signal listen
	wait_integrity_qp || rig_fail "no integrity QP in RTS after 30 s"
	rdma resource show qp link "$RIG_DEV/1" >"$RIG_TEST_SYNC/a.qps" 2>&1
	rdma resource show mr dev "$RIG_DEV" >"$RIG_TEST_SYNC/a.mrs" 2>&1
	rig_log "a's QPs:"
	sed 's/^/    /' "$RIG_TEST_SYNC/a.qps"
	rig_signal qps

	rc=0
	rig_bg_wait "$integ_pid" || rc=$?
	sed 's/^/    /' "$RIG_TEST_OUT/integrity.log"
	# The held QP is one of the fuzzer's targets: keep it until b is done.
	rig_wait fuzzed 60 >/dev/null || rig_fail "the fuzzer did not finish"
	[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null
	after=$(counters)
	fuzz_log=$RIG_TEST_SYNC/b.wirefuzz
	sed 's/^/    /' "$fuzz_log"
	if [ "$hit" = 1 ]; then
		# The connection may break; it must still end, with a summary.
		rig_log "hitting live windows: sroce-integrity exited $rc"
		grep -q '^sroce-integrity run: ' "$RIG_TEST_OUT/integrity.log" ||
			rig_fail "sroce-integrity ended without a summary"
	elif [ "$rc" != 0 ]; then
		integ_diag
		rig_fail "the traffic under fuzzing failed (sroce-integrity exited $rc)"
	else
		grep -q '^sroce-integrity run: PASS' "$RIG_TEST_OUT/integrity.log" ||
			rig_fail "no PASS summary from sroce-integrity"
	fi

	declare -A b4 af
	while read -r n v; do b4[$n]=$v; done <<<"$before"
	while read -r n v; do af[$n]=$v; done <<<"$after"
	delta() { echo $((${af[$1]:-0} - ${b4[$1]:-0})); }

	# The fuzzer's predictions ("expect NAME N"), summed over its runs.
	declare -A want_of
	while read -r n v; do want_of[$n]=$v; done < <(awk '
		/^expect / { w[$2] += $3 }
		/^sroce-wirefuzz: sent / { w["sent"] += $3 }
		END { for (k in w) print k, w[k] }' "$fuzz_log")
	sent=${want_of[sent]:-0}
	[ "${sent:-0}" -gt 0 ] || rig_fail "the fuzzer sent nothing"
	# Reasons decided from the packet alone: the fuzzer predicts them.
	stateless=" drop_short drop_bad_udp drop_bad_opcode drop_bad_tver drop_bad_pad "
	stateless+="drop_bad_length drop_bad_qpn drop_bad_icrc drop_bad_pkey drop_bad_qp_type "
	total=0
	bad=""
	rig_log "drops on $RIG_DEV by reason (kernel counter, fuzzer's prediction):"
	for n in "${!af[@]}"; do
		case $n in drop_*) ;; *) continue ;; esac
		d=$(delta "$n")
		total=$((total + d))
		want=${want_of[$n]:-}
		[ "$d" = 0 ] && [ -z "$want" ] && continue
		rig_log "    $n $d (predicted ${want:-0})"
		case $stateless in *" $n "*) ;; *) continue ;; esac
		# The link loses nothing, but allow for a starved receiver. With
		# --hit-window the QP may be gone early (no_qp, not bad_qp_type).
		if [ "$hit" != 1 ] && { [ "$d" -lt $((${want:-0} * 9 / 10)) ] ||
			{ [ "${want:-0}" -gt 0 ] && [ "$d" = 0 ]; }; }; then
			bad+=" $n: $d counted, ${want:-0} predicted;"
		elif [ "$d" -gt "${want:-0}" ]; then
			bad+=" $n: $d counted, only ${want:-0} predicted;"
		fi
	done
	dups=$(delta duplicates)
	rig_log "duplicates $dups, seq_naks_sent $(delta seq_naks_sent), rx_packets $(delta rx_packets)"
	rig_log "wire fuzz: $sent packets sent by b, $total dropped by a"
	[ -z "$bad" ] || rig_fail "drop counters disagree with the packets sent:$bad"
	[ "$total" -gt 0 ] || rig_fail "no drops counted"
	[ "$hit" = 1 ] || [ "$dups" -gt 0 ] || rig_fail "no duplicates counted (old PSNs for the live QP)"
	rig_metric wire_fuzz_packets "$sent" packets
	rig_metric wire_fuzz_drops "$total" packets
else
	rig_wait listen 60 >/dev/null || rig_fail "the integrity server never listened"
	gid=$(rig_gid_index "$RIG_DEV" "$RIG_IP4") || rig_fail "no RoCEv2 GID for $RIG_IP4"
	stop=$RIG_TEST_OUT/stop-traffic
	rm -f "$stop"
	rig_bg integrity $((traffic_secs + 60)) "$INTEG_BIN" run -d "$RIG_DEV" -g "$gid" \
		-p "$port" -T 60 --duration "$traffic_secs" --stop-file "$stop" \
		--seed "$seed" "$RIG_PEER_IP4"
	integ_pid=$RIG_BG_PID
	rig_wait qps 60 >/dev/null || rig_fail "a did not list its QPs"
	fuzz_args=()
	while read -r k; do
		fuzz_args+=(-k "$k")
	done < <(grep 'comm sroce-integrity' "$RIG_TEST_SYNC/a.mrs" |
		sed -n 's/.* rkey \(0x[0-9a-f]*\) .*/\1/p')
	fuzz_rc=0
	[ "$hit" = 1 ] && fuzz_args+=(-W -F "$RIG_IFACE")
	# Two thirds of the time over IPv4, the rest over IPv6 (the ICRC
	# covers either header); the traffic itself runs over IPv4.
	v4_secs=$(((fuzz_secs * 2 + 2) / 3))
	log=$RIG_TEST_OUT/wirefuzz.log
	rig_run $((v4_secs + 30)) "$FUZZ_BIN" -d "$RIG_PEER_IP4" -s "$RIG_IP4" \
		-f "$RIG_TEST_SYNC/a.qps" "${fuzz_args[@]}" -S "$seed" -D "$v4_secs" \
		-r "$pps" -n 10000000 >"$log" 2>&1 || fuzz_rc=$?
	if [ "$fuzz_rc" = 0 ] && [ "$fuzz_secs" -gt "$v4_secs" ]; then
		rig_run $((fuzz_secs - v4_secs + 30)) "$FUZZ_BIN" -d "$RIG_PEER_IP6" \
			-s "$RIG_IP6" -f "$RIG_TEST_SYNC/a.qps" "${fuzz_args[@]}" \
			-S $((seed + 1)) -D $((fuzz_secs - v4_secs)) -r "$pps" -n 10000000 \
			>>"$log" 2>&1 || fuzz_rc=$?
	fi
	# Fuzzed while the QPs lived, or the predictions do not hold.
	kill -0 "$integ_pid" 2>/dev/null || traffic_ended=1
	: >"$stop"
	cp "$log" "$RIG_TEST_SYNC/b.wirefuzz"
	rig_signal fuzzed
	grep '^sroce-wirefuzz: sent' "$log"
	[ "$fuzz_rc" = 0 ] || rig_fail "sroce-wirefuzz exited $fuzz_rc"
	rc=0
	rig_bg_wait "$integ_pid" || rc=$?
	sed 's/^/    /' "$RIG_TEST_OUT/integrity.log"
	if [ "$hit" = 1 ]; then
		rig_log "hitting live windows: sroce-integrity exited $rc"
	elif [ "$rc" != 0 ]; then
		integ_diag
		rig_fail "the client's traffic failed (sroce-integrity exited $rc)"
	fi
	[ "$hit" = 1 ] || [ -z "${traffic_ended:-}" ] ||
		rig_fail "the traffic ended (its ${traffic_secs} s ceiling) before the fuzzer did"
fi
rig_barrier finished 60 || rig_fail "the peer did not finish"
