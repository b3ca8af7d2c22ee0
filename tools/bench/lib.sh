#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The benchmark's plan, shared by the host driver (tools/bench/bench.sh) and
# the guest script (tools/bench/guest.sh), so that both guests and the
# progress line agree on every step. Source it, set BENCH_MODE (full, quick,
# smoke or profile) and call bench_plan_init.
#
# After bench_plan_init:
#   BENCH_ROUNDS     rounds (each round measures every pair once)
#   BENCH_PAIRS      device pairs "TYPEA-TYPEB"; guest a uses TYPEA (the
#                    perftest server, responder of WRITE and READ), guest b
#                    TYPEB (the client: the requester)
#   BENCH_DUR        seconds of each bandwidth test (perftest -D)
#   BENCH_LAT_ITERS  iterations of each latency test (perftest -n)
#   BENCH_LINK       link tests: tcp, udp, udp64 (iperf3; UDP with 4 KiB or
#                    64 B datagrams), udp_lat (sroce-udp-lat ping-pong),
#                    udp_lat_pair (the same with two datagrams each way,
#                    sroce-udp-lat --pair), or empty
#   BENCH_TESTS      one line per perftest cell: "TEST SIZE TOOL [ARGS...]"
#                    (TEST names the cell: write_bw, write_bw_q4, send_lat...);
#                    TOOL sroce-manyqp: "scale_write QPS sroce-manyqp SIZE"
#                    (WRITE bandwidth over QPS RC QPs) and "reg_mr MIB
#                    sroce-manyqp-reg" (registering MIB MiB), whose SIZE
#                    column holds the QP count and the MiB; TOOL
#                    sroce-cmrate: "cm_setup N sroce-cmrate PARALLEL" (N
#                    rdma_cm connections, PARALLEL at a time); TOOL
#                    sroce-nvmeof: "nvme_randread BS sroce-nvmeof RW" (fio
#                    over NVMe-oF, BS-byte blocks, fio's --rw RW); TOOL
#                    sroce-iser: "iser_randread BS sroce-iser RW" (the same
#                    over iSER)
# BENCH_CELLS (bench.sh --cells), when set, keeps only the cells and link
# tests it names ("iser_randread iser_seqread").
# bench_pairs_of_round R prints round R's pairs, rotated so that the order of
# the implementations alternates from round to round; bench_steps prints the
# number of steps (one per perftest or iperf3 run).

# shellcheck disable=SC2034 # the BENCH_* variables are for the caller
bench_plan_init() {
	local sizes_w sizes_rs sizes_lat sizes_cm="" scale_qps="" reg_mib="" cm_conns="" s
	BENCH_PAIRS=${BENCH_PAIRS_OVERRIDE:-"sroce-sroce rxe-rxe sroce-rxe"}
	BENCH_LINK="tcp udp udp64 udp_lat udp_lat_pair"
	case "${BENCH_MODE:-full}" in
	full)
		BENCH_ROUNDS=3
		BENCH_DUR=2
		BENCH_LAT_ITERS=200
		sizes_w="64 256 1024 4096 16384 65536 262144 1048576"
		sizes_rs="64 65536 1048576"
		sizes_lat="131072 1048576"
		sizes_cm="65536 131072 1048576"
		scale_qps="1 64 512 4096"
		reg_mib=1024
		cm_conns=256
		;;
	quick)
		BENCH_ROUNDS=2
		BENCH_DUR=1
		BENCH_LAT_ITERS=100
		sizes_w="64 65536 1048576"
		sizes_rs="65536"
		sizes_lat="131072"
		sizes_cm="131072"
		scale_qps="1 512"
		reg_mib=256
		cm_conns=64
		;;
	smoke)
		BENCH_ROUNDS=1
		BENCH_DUR=1
		BENCH_LAT_ITERS=50
		BENCH_PAIRS=${BENCH_PAIRS_OVERRIDE:-"sroce-sroce rxe-rxe"}
		BENCH_LINK="tcp"
		sizes_w="64 65536"
		sizes_rs=""
		;;
	profile)
		BENCH_ROUNDS=1
		BENCH_DUR=${BENCH_PROFILE_SECONDS:-8}
		BENCH_LAT_ITERS=3000
		BENCH_PAIRS=${BENCH_PAIRS_OVERRIDE:-"sroce-sroce"}
		BENCH_LINK=""
		case "${BENCH_PROFILE_TEST:-}" in
		udp_lat | udp_lat_pair) BENCH_LINK=$BENCH_PROFILE_TEST ;;
		esac
		sizes_w=${BENCH_PROFILE_SIZE:-65536}
		[ "${BENCH_PROFILE_TEST:-write_bw}" = write_bw ] || sizes_w=""
		sizes_rs=""
		;;
	*)
		echo "bench: unknown mode $BENCH_MODE" >&2
		return 1
		;;
	esac
	BENCH_ROUNDS=${BENCH_ROUNDS_OVERRIDE:-$BENCH_ROUNDS}
	BENCH_TESTS=""
	for s in $sizes_w; do
		BENCH_TESTS+="write_bw $s ib_write_bw -s $s"$'\n'
	done
	for s in $sizes_rs; do
		BENCH_TESTS+="read_bw $s ib_read_bw -s $s"$'\n'
	done
	for s in $sizes_rs; do
		BENCH_TESTS+="send_bw $s ib_send_bw -s $s"$'\n'
	done
	case "$BENCH_MODE" in
	full | quick)
		BENCH_TESTS+="write_bw_q4 65536 ib_write_bw -s 65536 -q 4"$'\n'
		BENCH_TESTS+="write_bw_bidir 65536 ib_write_bw -s 65536 -b"$'\n'
		BENCH_TESTS+="send_lat 2 ib_send_lat -s 2"$'\n'
		BENCH_TESTS+="write_lat 2 ib_write_lat -s 2"$'\n'
		BENCH_TESTS+="read_lat 2 ib_read_lat -s 2"$'\n'
		# Large messages: where a lost tail costs a local ACK timeout.
		for s in $sizes_lat; do
			BENCH_TESTS+="send_lat $s ib_send_lat -s $s"$'\n'
		done
		# The same over QPs that rdma_cm connected (its ACK timeout).
		for s in $sizes_cm; do
			BENCH_TESTS+="cm_lat $s ib_send_lat -R -s $s"$'\n'
		done
		# Many QPs: 64 KiB WRITEs, 128 outstanding in all.
		for s in $scale_qps; do
			BENCH_TESTS+="scale_write $s sroce-manyqp 65536"$'\n'
		done
		BENCH_TESTS+="reg_mr $reg_mib sroce-manyqp-reg"$'\n'
		BENCH_TESTS+="cm_setup $cm_conns sroce-cmrate 16"$'\n'
		# The block stack: NVMe over Fabrics under fio.
		BENCH_TESTS+="nvme_randread 4096 sroce-nvmeof randread"$'\n'
		BENCH_TESTS+="nvme_seqread 1048576 sroce-nvmeof read"$'\n'
		# The same through iSCSI over RDMA: LIO's ib_isert, open-iscsi's ib_iser.
		BENCH_TESTS+="iser_randread 4096 sroce-iser randread"$'\n'
		BENCH_TESTS+="iser_seqread 1048576 sroce-iser read"$'\n'
		;;
	smoke)
		BENCH_TESTS+="send_lat 2 ib_send_lat -s 2"$'\n'
		BENCH_TESTS+="nvme_randread 4096 sroce-nvmeof randread"$'\n'
		# (No iSER cell: the smoke run stays short.)
		;;
	profile)
		case "${BENCH_PROFILE_TEST:-write_bw}" in
		send_lat | write_lat | read_lat)
			BENCH_TESTS+="$BENCH_PROFILE_TEST 2 ib_$BENCH_PROFILE_TEST -s 2"$'\n'
			;;
		esac
		;;
	esac
	BENCH_TESTS=${BENCH_TESTS%$'\n'}
	[ -z "${BENCH_CELLS:-}" ] || bench_plan_filter
}

# bench_plan_filter: only the cells and link tests named in BENCH_CELLS.
bench_plan_filter() {
	local line keep="" link="" t
	while read -r line; do
		[ -n "$line" ] && [[ " $BENCH_CELLS " == *" ${line%% *} "* ]] && keep+="$line"$'\n'
	done <<<"$BENCH_TESTS"
	for t in $BENCH_LINK; do
		[[ " $BENCH_CELLS " == *" $t "* ]] && link+=" $t"
	done
	BENCH_TESTS=${keep%$'\n'}
	BENCH_LINK=${link# }
	[ -n "$BENCH_TESTS$BENCH_LINK" ] && return 0
	echo "bench: none of the cells '$BENCH_CELLS' is in the $BENCH_MODE plan" >&2
	return 1
}

bench_pairs_of_round() {
	local r=$1 p=() i n
	read -ra p <<<"$BENCH_PAIRS"
	n=${#p[@]}
	for ((i = 0; i < n; i++)); do
		echo "${p[$(((i + r - 1) % n))]}"
	done
}

bench_steps() {
	local np nt nl
	np=$(wc -w <<<"$BENCH_PAIRS")
	nt=$(grep -c . <<<"$BENCH_TESTS")
	nl=$(wc -w <<<"$BENCH_LINK")
	echo $((BENCH_ROUNDS * (np * nt + nl)))
}
