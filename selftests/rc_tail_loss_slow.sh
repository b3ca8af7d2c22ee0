#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rc_tail_loss.sh on a slow path: every packet of both guests delayed
# 20 ms (netem), a round trip of 40 ms against ibv_rc_pingpong's 67 ms
# local ACK timeout. Twice the round trip, the tail probe's wait, is then
# later than the timeout: until the probe was capped at the timeout's
# edge and a probe restarted the timeout (sroce_retry_pto_jiffies(),
# sroce_retry_tlp_fire()), each lost tail cost a whole timeout and a
# retry, as with no probe at all (rc_tail_loss.sh on a CI host's debug
# kernel, 81 ms a round trip: 22 timeouts for 66 tails lost).
# 200 round trips of 8 KiB (two packets), about 40 tail packets dropped:
# at most 10 timeouts.
# On a slowed kernel (the debug one) the guests' own round trip comes
# near the timeout with no delay added: this runs on the stock kernels.
# timeout: 240
# place: stock@2
# shellcheck source=lib/guest.sh
. "$(dirname "$0")/lib/guest.sh"
rig_suites sroce-sroce
[ "${RIG_TIMEOUT_SCALE:-100}" -le 100 ] ||
	rig_skip "a 40 ms round trip on a slowed kernel comes near the 67 ms ACK timeout (stock kernels only)"
TAIL_DELAY_MS=20
TAIL_SIZE=8192
TAIL_ITERS=200
TAIL_MAX_TIMEOUTS=10
# shellcheck source=rc_tail_loss.sh
. "$(dirname "$0")/rc_tail_loss.sh"
