#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics (RDMA, lib/nvmet.sh): the controller's life cycle, the
# way the block layer's test suites check a fabrics transport. Guest a is
# the target (a 128 MiB RAM disk), guest b the host.
#
#   discovery  "nvme discover" of a's port: the log has an entry for our
#              subsystem with trtype rdma, adrfam ipv4, a's address, port
#              4420, subtype nvme subsystem, qptype connected and cms
#              rdma-cm. A persistent discovery controller (keep-alive 3 s,
#              through /dev/nvme-fabrics) connects; a puts a second
#              subsystem on the port, then takes it off: each time the
#              log's generation counter grows and the entry comes and goes,
#              the discovery controller gets the discovery log change event
#              (udevadm monitor sees its uevent), stays live with no
#              message of its own (no keep-alive error, no error recovery)
#              for at least two keep-alive periods, and is deleted; a's
#              nvmet logs no keep-alive expiry meanwhile. (The deletion may
#              cancel a keep-alive in flight; 6.12 logs it as failed: that
#              is only logged here.)
#   reset      fio writes with verify_backlog (blocks read back and compared
#              as it goes) while "nvme reset" resets the controller: the
#              reset returns with the controller live again, the kernel
#              logged one "resetting controller" and set the queues up once
#              more ("creating N I/O queues"; the states sampled on the way
#              are logged: a reset on 6.12 took 90 ms, between two
#              samples); the I/O the reset
#              cancels is requeued (native multipath), so fio ends without
#              one error
#   delete     fio random reads and writes; reset_controller in sysfs, 1 s
#              later delete_controller: fio must end (with I/O errors)
#              within 20 s and the controller be gone (random reads alone
#              may not end it: see below)
#   loops      10 rounds: a makes a new subsystem and puts it on its port
#              (alone: the port starts listening), b connects with
#              "nvme connect", writes 1 MiB of a pattern (its own MiB of
#              the disk) with O_DIRECT and reads it back (sha256),
#              "nvme disconnect"; a takes the subsystem off (the port stops
#              listening) and deletes it. Every step bounded; the slowest
#              round is a metric. Last, a finds the rounds' bytes on its
#              RAM disk
# timeout: 180
# place: 6.12@3
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
# shellcheck source=lib/nvmet.sh
. "$(dirname "$0")/lib/nvmet.sh"
# sroce as target and host, and as target of rxe's host (the host's paths
# over sroce run in sroce-sroce).
rig_suites sroce-sroce sroce-rxe

nvme_test_setup

nqn2=$NVMET_NQN-2
rounds=${NVMEOF_CTRL_ROUNDS:-10}
kato=3
pattern=/tmp/nvmeof-ctrl-pattern
rig_make_pattern "$pattern" "$rounds"

# ka_msgs: how many keep-alive messages the kernel logged so far.
ka_msgs() { dmesg | grep -c -i -E 'keep.?alive'; }

# --- the target ---
if rig_is_a; then
	target_fail() {
		nvmet_target_down
		rig_fail "$*"
	}
	nvmet_target_up 128
	ka0=$(ka_msgs)
	rig_signal target-up
	rig_wait add-2 60 >/dev/null || target_fail "the host never asked for a second subsystem"
	nvmet_subsys_add "$nqn2"
	nvmet_port_on "$nqn2"
	rig_log "$nqn2 on the port"
	rig_signal added-2
	rig_wait del-2 60 >/dev/null || target_fail "the host never asked to take $nqn2 away"
	nvmet_port_off "$nqn2"
	nvmet_subsys_del "$nqn2" || target_fail "cannot delete $nqn2"
	rig_log "$nqn2 off the port and deleted"
	rig_signal deleted-2
	rig_wait disc-done 60 >/dev/null || target_fail "the host did not finish the discovery checks"
	ka=$(ka_msgs)
	[ "$ka" = "$ka0" ] || target_fail "nvmet logged keep-alive messages: $(dmesg | grep -i -E 'keep.?alive' | tail -n 2)"
	rig_wait loops 120 >/dev/null || target_fail "the host never reached the loops"
	# The loops' subsystems come and go alone on the port.
	nvmet_port_off
	for i in $(seq "$rounds"); do
		nvmet_subsys_add "$NVMET_NQN-$i"
		nvmet_port_on "$NVMET_NQN-$i"
		rig_signal "ready-$i"
		rig_wait "done-$i" 60 >/dev/null || target_fail "the host did not finish round $i"
		nvmet_port_off "$NVMET_NQN-$i"
		nvmet_subsys_del "$NVMET_NQN-$i" || target_fail "round $i: cannot delete $NVMET_NQN-$i"
	done
	rig_log "$rounds subsystems set up, on the port, off it and deleted"
	rig_wait host-done 60 >/dev/null || target_fail "the host did not finish"
	nvmet_ram_holds "$pattern" "$rounds" || target_fail "the RAM disk does not hold what the rounds wrote"
	rig_log "the RAM disk holds the $rounds MiB the rounds wrote"
	nvmet_target_down
	rig_signal target-down
	exit 0
fi

# --- the host ---

# discover NAME: "nvme discover" of a's port; the log in DISC_LOG
# ($RIG_TEST_OUT/discover-NAME.txt), its generation counter in DISC_GENCTR.
discover() {
	DISC_LOG=$RIG_TEST_OUT/discover-$1.txt
	rig_run 30 nvme discover -t rdma -a "$RIG_PEER_IP4" -s "$NVMET_SVC" >"$DISC_LOG" 2>&1 ||
		rig_fail "nvme discover ($1) failed: $(tail -n 3 "$DISC_LOG")"
	DISC_GENCTR=$(sed -n 's/.*Generation counter \([0-9]*\).*/\1/p' "$DISC_LOG")
	[ -n "$DISC_GENCTR" ] || rig_fail "no generation counter in the discovery log ($DISC_LOG)"
}

# disc_entry NQN: the entry of subsystem NQN in DISC_LOG, a "field=value"
# line per field (blanks in values as _); nothing when it has none.
disc_entry() {
	awk -v nqn="$1" '
	function flush(k) {
		if (e["subnqn"] == nqn)
			for (k in e)
				print k "=" e[k]
		delete e
	}
	/^=+Discovery Log Entry/ { flush(); next }
	/^[a-z_]+: / {
		k = $1; sub(/:$/, "", k)
		v = $0; sub(/^[^:]*: */, "", v); sub(/ +$/, "", v); gsub(/ /, "_", v)
		e[k] = v
	}
	END { flush() }' "$DISC_LOG"
}

# disc_check NQN: NQN's entry describes a's RDMA port.
disc_check() {
	local entry want
	entry=$(disc_entry "$1")
	[ -n "$entry" ] || rig_fail "no entry for $1 in the discovery log ($DISC_LOG)"
	for want in trtype=rdma adrfam=ipv4 "traddr=$RIG_PEER_IP4" "trsvcid=$NVMET_SVC" \
		subtype=nvme_subsystem rdma_qptype=connected rdma_cms=rdma-cm; do
		grep -qxF "$want" <<<"$entry" ||
			rig_fail "discovery log entry of $1: no $want in: $(tr '\n' ' ' <<<"$entry")"
	done
}

# ctrl_msgs CTRL: how many kernel messages name controller CTRL.
ctrl_msgs() { dmesg | grep -c "nvme $1: "; }

# setups: how many times $NVME_CTRL set its I/O queues up; resets: how
# many times it was reset.
setups() { dmesg | grep -c "nvme $NVME_CTRL: creating [0-9]* I/O queues"; }
resets() { dmesg | grep -c "nvme $NVME_CTRL: resetting controller"; }

# ms_since T0: milliseconds since T0 (an $EPOCHREALTIME).
ms_since() { echo $(((${EPOCHREALTIME/./} - ${1/./}) / 1000)); }

rig_wait target-up 60 >/dev/null || rig_fail "the target did not come up"
ka0=$(ka_msgs)

# --- discovery ---
nvme_rdma_load
discover first
disc_check "$NVMET_NQN"
g1=$DISC_GENCTR
rig_log "discovery log: $NVMET_NQN at $RIG_PEER_IP4:$NVMET_SVC (rdma, ipv4), generation $g1"

# (udevadm: the udev package, which tools/setup.sh installs.)
command -v udevadm >/dev/null ||
	rig_fail "no udevadm: the discovery log change event cannot be checked"
rig_bg uevents 60 udevadm monitor --kernel --property --subsystem-match=nvme
uev_pid=$RIG_BG_PID
t_disc=$EPOCHREALTIME
nvme_fabrics_add "$NVME_DISC_NQN" "keep_alive_tmo=$kato"
disc=$NVME_CTRL
read -r nqn <"/sys/class/nvme/$disc/subsysnqn"
read -r type <"/sys/class/nvme/$disc/cntrltype"
[ "$nqn" = "$NVME_DISC_NQN" ] || rig_fail "$disc is a controller of $nqn, not of the discovery subsystem"
[ "$type" = discovery ] || rig_fail "$disc is a $type controller, not a discovery one"
[ "$(nvme_ctrl_state)" = live ] || rig_fail "the discovery controller $disc is $(nvme_ctrl_state)"
m0=$(ctrl_msgs "$disc")
rig_log "persistent discovery controller $disc live (keep-alive $kato s)"

rig_signal add-2
rig_wait added-2 60 >/dev/null || rig_fail "the target did not add $nqn2"
discover added
disc_check "$nqn2"
disc_check "$NVMET_NQN"
g2=$DISC_GENCTR
[ "$g2" -gt "$g1" ] || rig_fail "generation counter $g1, then $g2 after $nqn2 was added"
rig_signal del-2
rig_wait deleted-2 60 >/dev/null || rig_fail "the target did not take $nqn2 away"
discover deleted
[ -z "$(disc_entry "$nqn2")" ] || rig_fail "$nqn2 is still in the discovery log ($DISC_LOG)"
disc_check "$NVMET_NQN"
g3=$DISC_GENCTR
[ "$g3" -gt "$g2" ] || rig_fail "generation counter $g2, then $g3 after $nqn2 was taken away"
rig_log "generation counter $g1, $g2 with $nqn2 on the port, $g3 without it"

# Two keep-alive periods at least, the target timing out after one.
while [ "$(ms_since "$t_disc")" -lt $((2 * kato * 1000)) ]; do
	rig_sleep 0.2
done
kill "$uev_pid" 2>/dev/null
rig_bg_wait "$uev_pid"
aens=$(grep -c '^NVME_AEN=' "$RIG_TEST_OUT/uevents.log")
[ "$aens" -ge 1 ] || rig_fail "$disc got no discovery log change event (uevents.log)"
rig_log "$disc: $aens asynchronous event(s): $(grep '^NVME_AEN=' "$RIG_TEST_OUT/uevents.log" | sort -u | tr '\n' ' ')"
[ "$(nvme_ctrl_state)" = live ] || rig_fail "the discovery controller $disc is $(nvme_ctrl_state)"
m=$(ctrl_msgs "$disc")
[ "$m" = "$m0" ] || rig_fail "the discovery controller logged: $(dmesg | grep "nvme $disc: " | tail -n 3)"
echo 1 >"/sys/class/nvme/$disc/delete_controller" || rig_fail "cannot delete the discovery controller"
[ "$(nvme_ctrl_state)" = gone ] || rig_fail "the discovery controller $disc is still there"
rig_log "discovery controller live for $(ms_since "$t_disc") ms, no message of its own, deleted"
# Its deletion cancels a keep-alive command in flight, if there is one
# (6.12 logs that as a failed keep-alive).
ka=$(dmesg | grep -i -E 'keep.?alive' | tail -n +$((ka0 + 1)) | paste -sd ';')
[ -z "$ka" ] || rig_log "at the deletion: $ka"
rig_signal disc-done

# --- reset under verified writes ---
nvme_cli_connect --reconnect-delay=1 --ctrl-loss-tmo=60
n0=$(setups) r0=$(resets)
nvme_fio_bg reset 5 --rw=randwrite --verify_backlog=512 "${BLK_VERIFY[@]}"
fio_pid=$BLK_FIO_PID
t0=$EPOCHREALTIME
rig_bg nvme-reset 30 nvme reset "/dev/$NVME_CTRL"
reset_pid=$RIG_BG_PID
nvme_ctrl_states "$reset_pid"
rig_bg_wait "$reset_pid" || rig_fail "nvme reset failed: $(cat "$RIG_TEST_OUT/nvme-reset.log")"
reset_ms=$(ms_since "$t0")
reset_states=$NVME_STATES
rc=0
nvme_fio_watch "$fio_pid" || rc=$?
rig_log "nvme reset: $reset_ms ms, $NVME_CTRL went through:$reset_states"
[ "$rc" = 0 ] || rig_fail "fio across the reset: status $rc (an error or a verify mismatch)"
[ "$(resets)" = $((r0 + 1)) ] || rig_fail "$NVME_CTRL: not one reset in the kernel log ($(($(resets) - r0)))"
[ "$(nvme_ctrl_state)" = live ] || rig_fail "$NVME_CTRL is $(nvme_ctrl_state) after the reset"
n=$(setups)
[ "$n" = $((n0 + 1)) ] || rig_fail "$NVME_CTRL set its queues up $((n - n0)) times in the reset, not once"
rig_metric reset_under_io_ms "$reset_ms" ms

# --- reset, then delete, under reads and writes ---
# Reads alone would not end fio: the deleted namespace's capacity is 0,
# and an O_DIRECT read on the open disk then returns 0 bytes (its end),
# which fio takes without an error until its run time is over. A write
# there fails (ENOSPC), as does the I/O in flight at the deletion (EIO).
nvme_fio_bg delete 30 --rw=randrw
t0=$EPOCHREALTIME
rig_run 30 bash -c "echo 1 >/sys/class/nvme/$NVME_CTRL/reset_controller" ||
	rig_fail "reset_controller of $NVME_CTRL failed"
[ "$(nvme_ctrl_state)" = live ] || rig_fail "$NVME_CTRL is $(nvme_ctrl_state) after reset_controller"
rig_log "reset_controller: $(ms_since "$t0") ms, $NVME_CTRL live"
rig_sleep 1
t0=$EPOCHREALTIME
rig_run 30 bash -c "echo 1 >/sys/class/nvme/$NVME_CTRL/delete_controller" ||
	rig_fail "delete_controller of $NVME_CTRL failed"
rig_log "delete_controller: $(ms_since "$t0") ms"
blk_fio_ends "$BLK_FIO_PID" 20 "delete_controller"
[ "$(nvme_ctrl_state)" = gone ] || rig_fail "$NVME_CTRL is $(nvme_ctrl_state) after delete_controller"
rig_log "fio after delete_controller: $(blk_fio_error delete)"

# --- connect, verified I/O, disconnect: a new subsystem each round ---
rig_signal loops
worst=0
for i in $(seq "$rounds"); do
	rig_wait "ready-$i" 60 >/dev/null || rig_fail "round $i: the target did not set up $NVMET_NQN-$i"
	t0=$EPOCHREALTIME
	NVMET_NQN=$NVMET_NQN-$i nvme_cli_connect
	nvme_dd_check "$pattern" 65536 1 $((i - 1))
	NVMET_NQN=$NVMET_NQN-$i nvme_cli_disconnect
	ms=$(ms_since "$t0")
	[ "$ms" -gt "$worst" ] && worst=$ms
	rig_log "round $i: $NVME_CTRL, 1 MiB written at MiB $((i - 1)) and read back, disconnected: $ms ms"
	rig_signal "done-$i"
done
rig_metric connect_round_max_ms "$worst" ms

rig_signal host-done
rig_wait target-down 60 >/dev/null || rig_fail "the target did not shut down"
rig_unload nvme_rdma || rig_fail "cannot unload nvme-rdma"
