// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: device counters, shown by `rdma statistic show link DEV/1` and in
 * /sys/class/infiniband/DEV/ports/1/hw_counters/.
 */
#include "sroce_verbs.h"

enum sroce_counter {
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_RX_PACKETS,
	SROCE_CNT_TX_ERRORS,
	SROCE_CNT_RETRANSMITS,
	SROCE_CNT_TIMEOUTS,
	SROCE_CNT_TAIL_PROBES,
	SROCE_CNT_ACKS_DELAYED,
	SROCE_CNT_ACK_DELAYS_EXPIRED,
	SROCE_CNT_RNR_NAKS_RCVD,
	SROCE_CNT_RNR_NAKS_SENT,
	SROCE_CNT_SEQ_NAKS_RCVD,
	SROCE_CNT_SEQ_NAKS_SENT,
	SROCE_CNT_ERR_NAKS_RCVD,
	SROCE_CNT_ERR_NAKS_SENT,
	SROCE_CNT_DUPLICATES,
	SROCE_CNT_FLUSHES,
	SROCE_CNT_BUSY_POLLS,
	SROCE_CNT_BUSY_POLL_HITS,
	SROCE_CNT_DROPS,	/* first of SROCE_DROP_NUM - 1 drop counters */
};

#define SROCE_NUM_COUNTERS	(SROCE_CNT_DROPS + SROCE_DROP_NUM - 1)

static const struct rdma_stat_desc sroce_counter_desc[SROCE_NUM_COUNTERS] = {
	[SROCE_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[SROCE_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[SROCE_CNT_TX_ERRORS] = { .name = "tx_errors" },
	[SROCE_CNT_RETRANSMITS] = { .name = "retransmits" },
	[SROCE_CNT_TIMEOUTS] = { .name = "ack_timeouts" },
	[SROCE_CNT_TAIL_PROBES] = { .name = "tail_probes" },
	[SROCE_CNT_ACKS_DELAYED] = { .name = "acks_delayed" },
	[SROCE_CNT_ACK_DELAYS_EXPIRED] = { .name = "ack_delays_expired" },
	[SROCE_CNT_RNR_NAKS_RCVD] = { .name = "rnr_naks_rcvd" },
	[SROCE_CNT_RNR_NAKS_SENT] = { .name = "rnr_naks_sent" },
	[SROCE_CNT_SEQ_NAKS_RCVD] = { .name = "seq_naks_rcvd" },
	[SROCE_CNT_SEQ_NAKS_SENT] = { .name = "seq_naks_sent" },
	[SROCE_CNT_ERR_NAKS_RCVD] = { .name = "err_naks_rcvd" },
	[SROCE_CNT_ERR_NAKS_SENT] = { .name = "err_naks_sent" },
	[SROCE_CNT_DUPLICATES] = { .name = "duplicates" },
	[SROCE_CNT_FLUSHES] = { .name = "flushes" },
	[SROCE_CNT_BUSY_POLLS] = { .name = "busy_polls" },
	[SROCE_CNT_BUSY_POLL_HITS] = { .name = "busy_poll_hits" },
	[SROCE_CNT_DROPS + SROCE_DROP_SHORT - 1] = { .name = "drop_short" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_TVER - 1] = { .name = "drop_bad_tver" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_OPCODE - 1] = { .name = "drop_bad_opcode" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_PAD - 1] = { .name = "drop_bad_pad" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_LENGTH - 1] = { .name = "drop_bad_length" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_QPN - 1] = { .name = "drop_bad_qpn" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_ICRC - 1] = { .name = "drop_bad_icrc" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_IP - 1] = { .name = "drop_bad_ip" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_UDP - 1] = { .name = "drop_bad_udp" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_UDP_PORT - 1] = { .name = "drop_bad_udp_port" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_PKEY - 1] = { .name = "drop_bad_pkey" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_QKEY - 1] = { .name = "drop_bad_qkey" },
	[SROCE_CNT_DROPS + SROCE_DROP_NO_QP - 1] = { .name = "drop_no_qp" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_QP_STATE - 1] = { .name = "drop_bad_qp_state" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_QP_TYPE - 1] = { .name = "drop_bad_qp_type" },
	[SROCE_CNT_DROPS + SROCE_DROP_BAD_ADDR - 1] = { .name = "drop_bad_addr" },
	[SROCE_CNT_DROPS + SROCE_DROP_PSN_OUT_OF_WINDOW - 1] = { .name = "drop_psn_window" },
	[SROCE_CNT_DROPS + SROCE_DROP_UNSUPPORTED - 1] = { .name = "drop_unsupported" },
	[SROCE_CNT_DROPS + SROCE_DROP_NO_MEM - 1] = { .name = "drop_no_resources" },
};

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	BUILD_BUG_ON(SROCE_DROP_NONE != 0);
	return rdma_alloc_hw_stats_struct(sroce_counter_desc,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct sroce_stats *st = &to_sdev(ibdev)->stats;
	u64 *v = stats->value;
	int i;

	v[SROCE_CNT_TX_PACKETS] = atomic64_read(&st->tx_packets);
	v[SROCE_CNT_RX_PACKETS] = atomic64_read(&st->rx_packets);
	v[SROCE_CNT_TX_ERRORS] = atomic64_read(&st->tx_errors);
	v[SROCE_CNT_RETRANSMITS] = atomic64_read(&st->retransmits);
	v[SROCE_CNT_TIMEOUTS] = atomic64_read(&st->timeouts);
	v[SROCE_CNT_TAIL_PROBES] = atomic64_read(&st->tail_probes);
	v[SROCE_CNT_ACKS_DELAYED] = atomic64_read(&st->acks_delayed);
	v[SROCE_CNT_ACK_DELAYS_EXPIRED] = atomic64_read(&st->ack_delays_expired);
	v[SROCE_CNT_RNR_NAKS_RCVD] = atomic64_read(&st->rnr_naks_rcvd);
	v[SROCE_CNT_RNR_NAKS_SENT] = atomic64_read(&st->rnr_naks_sent);
	v[SROCE_CNT_SEQ_NAKS_RCVD] = atomic64_read(&st->seq_naks_rcvd);
	v[SROCE_CNT_SEQ_NAKS_SENT] = atomic64_read(&st->seq_naks_sent);
	v[SROCE_CNT_ERR_NAKS_RCVD] = atomic64_read(&st->err_naks_rcvd);
	v[SROCE_CNT_ERR_NAKS_SENT] = atomic64_read(&st->err_naks_sent);
	v[SROCE_CNT_DUPLICATES] = atomic64_read(&st->duplicates);
	v[SROCE_CNT_FLUSHES] = atomic64_read(&st->flushes);
	v[SROCE_CNT_BUSY_POLLS] = atomic64_read(&st->busy_polls);
	v[SROCE_CNT_BUSY_POLL_HITS] = atomic64_read(&st->busy_poll_hits);
	for (i = 1; i < SROCE_DROP_NUM; i++)
		v[SROCE_CNT_DROPS + i - 1] = atomic64_read(&st->drops[i]);
	return SROCE_NUM_COUNTERS;
}
