#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma_cm between the guests: connections set up by the kernel's CM over
# the GSI QP (QP1) with MADs on UD, then traffic. rping with validated data
# (-V) over IPv4 and IPv6, ucmatose (RC connections and SENDs), udaddy (UD
# QPs, address handles from the CM), rdma_server/rdma_client, mckey (UD
# multicast: join, send, receive every message) and perftest ib_send_bw,
# ib_write_bw and ib_read_bw with -R (rdma_cm connection).
# Guest a serves, guest b connects; each case passes when both sides exit
# 0 and print no error. rdma_cm picks the RDMA device from the IP address,
# so the guest's only device (sroce0 or rxe0) is used.
# timeout: 300
# place: stock@3 sroce-rxe@1 rxe-sroce@2 6.12@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/perftest.sh
. "$(dirname "$0")/lib/perftest.sh"
# shellcheck source=lib/cm.sh
. "$(dirname "$0")/lib/cm.sh"

rig_require_peer
[ "$RIG_DEV_TYPE" = sroce ] || [ "$RIG_PEER_DEV_TYPE" = sroce ] ||
	rig_skip "runs where sroce is one of the devices"
rig_require_cmd rping ucmatose udaddy rdma_server rdma_client ib_send_bw
rig_setup_dev
modprobe rdma_ucm 2>/dev/null || rig_fail "modprobe rdma_ucm failed"

cm_case rping-v4 60 7174 "rping -s -V -C 100 -S 1000 -a $RIG_IP4 -p 7174" \
	"rping -c -V -C 100 -S 1000 -a $RIG_PEER_IP4 -p 7174"
cm_case rping-v6 60 7175 "rping -s -V -C 50 -S 4000 -a $RIG_IP6 -p 7175" \
	"rping -c -V -C 50 -S 4000 -a $RIG_PEER_IP6 -p 7175"
cm_case ucmatose 60 7471 "ucmatose -b $RIG_IP4 -c 2 -C 20" \
	"ucmatose -s $RIG_PEER_IP4 -c 2 -C 20"
cm_case udaddy 60 7174 "udaddy -b $RIG_IP4 -c 2 -C 20" \
	"udaddy -s $RIG_PEER_IP4 -c 2 -C 20"
cm_case rdma_server 60 7471 "rdma_server -s $RIG_IP4" "rdma_client -s $RIG_PEER_IP4"

# mckey: a joins the multicast group and receives, b joins and sends; the
# receiver must get every message. A join has no listening ID to wait for:
# a signals once its join is in the cm_id table (dst-addr the group).
group=239.1.77.1
if rig_is_a; then
	timeout -k 3 60 mckey -m "$group" -b "$RIG_IP4" -C 10 -S 512 \
		>"$RIG_TEST_OUT/mckey.a.log" 2>&1 &
	pid=$!
	end=$((EPOCHSECONDS + 30))
	until rdma resource show cm_id 2>/dev/null | grep -q "dst-addr $group"; do
		[ "$EPOCHSECONDS" -lt "$end" ] || rig_fail "mckey: the receiver did not join"
		rig_sleep 0.1
	done
	rig_signal mckey-joined
	rc=0
	wait "$pid" || rc=$?
else
	rig_wait mckey-joined 60 >/dev/null || rig_fail "mckey: the receiver never joined"
	rc=0
	timeout -k 3 60 mckey -m "$group" -b "$RIG_IP4" -s -C 10 -S 512 \
		>"$RIG_TEST_OUT/mckey.b.log" 2>&1 || rc=$?
fi
sed 's/^/    /' "$RIG_TEST_OUT/mckey.$RIG_ROLE.log" | tail -n 10
[ "$rc" = 0 ] || rig_fail "mckey exited $rc"
if grep -qiE 'error|fail|timed? ?out' "$RIG_TEST_OUT/mckey.$RIG_ROLE.log"; then
	rig_fail "mckey: $(grep -m 1 -iE 'error|fail|timed? ?out' "$RIG_TEST_OUT/mckey.$RIG_ROLE.log")"
fi
# The receiver reports completion only after all -C messages arrived.
if rig_is_a && ! grep -q '^data transfers complete' "$RIG_TEST_OUT/mckey.a.log"; then
	rig_fail "mckey: the receiver did not get every message"
fi
rig_barrier done-mckey 60 || rig_fail "mckey: the peer did not finish"
rig_log "mckey: ok"

# perftest over rdma_cm: perf_pair (lib/perftest.sh) with -R. IPv4 only:
# perftest 4.5 resolves the server's name for rdma_cm as IPv4 ("Address
# family for hostname not supported" for an IPv6 address, with --ipv6
# too); rping-v6 above covers rdma_cm over IPv6.
for tool in ib_send_bw ib_write_bw ib_read_bw; do
	perf_pair "${tool#ib_}-R" 60 "$tool" -R -s 4096 -n 200 -F ||
		rig_fail "$tool -R failed"
	row=$(perf_bw_row "$PERF_LOG" 4096) || rig_fail "$tool -R: no result row"
	read -r _ avg _ <<<"$row"
	is_positive "$avg" || rig_fail "$tool -R: average bandwidth $avg"
	rig_barrier "done-$tool" 60 || rig_fail "$tool -R: the peer did not finish"
	rig_log "$tool -R: $avg MB/s"
done
