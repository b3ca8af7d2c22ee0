// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: device counters, shown by `rdma statistic show link DEV/1` and in
 * /sys/class/infiniband/DEV/ports/1/hw_counters/.
 */
#include <rdma/rdma_counter.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>

#include "sroce_verbs.h"
#include "sroce_qp.h"

static const struct rdma_stat_desc sroce_counter_desc[SROCE_NUM_COUNTERS] = {
	[SROCE_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[SROCE_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[SROCE_CNT_TX_BYTES] = { .name = "tx_bytes" },
	[SROCE_CNT_RX_BYTES] = { .name = "rx_bytes" },
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
	[SROCE_CNT_INV_REQ_NAKS_RCVD] = { .name = "inv_req_naks_rcvd" },
	[SROCE_CNT_INV_REQ_NAKS_SENT] = { .name = "inv_req_naks_sent" },
	[SROCE_CNT_ACCESS_NAKS_RCVD] = { .name = "access_naks_rcvd" },
	[SROCE_CNT_ACCESS_NAKS_SENT] = { .name = "access_naks_sent" },
	[SROCE_CNT_OP_NAKS_RCVD] = { .name = "op_naks_rcvd" },
	[SROCE_CNT_OP_NAKS_SENT] = { .name = "op_naks_sent" },
	[SROCE_CNT_DUPLICATES] = { .name = "duplicates" },
	[SROCE_CNT_FLUSHES] = { .name = "flushes" },
	[SROCE_CNT_BUSY_POLLS] = { .name = "busy_polls" },
	[SROCE_CNT_BUSY_POLL_HITS] = { .name = "busy_poll_hits" },
	[SROCE_CNT_FAULTS] = { .name = "faults_injected" },
	[SROCE_CNT_ECN_CE] = { .name = "ecn_ce_rcvd" },
	[SROCE_CNT_CNP] = { .name = "cnp_rcvd" },
	[SROCE_CNT_DROP(SROCE_DROP_SHORT)] = { .name = "drop_short" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_TVER)] = { .name = "drop_bad_tver" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_OPCODE)] = { .name = "drop_bad_opcode" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_PAD)] = { .name = "drop_bad_pad" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_LENGTH)] = { .name = "drop_bad_length" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_QPN)] = { .name = "drop_bad_qpn" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_ICRC)] = { .name = "drop_bad_icrc" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_IP)] = { .name = "drop_bad_ip" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_UDP)] = { .name = "drop_bad_udp" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_UDP_PORT)] = { .name = "drop_bad_udp_port" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_PKEY)] = { .name = "drop_bad_pkey" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_QKEY)] = { .name = "drop_bad_qkey" },
	[SROCE_CNT_DROP(SROCE_DROP_NO_QP)] = { .name = "drop_no_qp" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_QP_STATE)] = { .name = "drop_bad_qp_state" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_QP_TYPE)] = { .name = "drop_bad_qp_type" },
	[SROCE_CNT_DROP(SROCE_DROP_BAD_ADDR)] = { .name = "drop_bad_addr" },
	[SROCE_CNT_DROP(SROCE_DROP_PSN_OUT_OF_WINDOW)] = { .name = "drop_psn_window" },
	[SROCE_CNT_DROP(SROCE_DROP_UNSUPPORTED)] = { .name = "drop_unsupported" },
	[SROCE_CNT_DROP(SROCE_DROP_NO_MEM)] = { .name = "drop_no_resources" },
};

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	BUILD_BUG_ON(SROCE_DROP_NONE != 0);
	return rdma_alloc_hw_stats_struct(sroce_counter_desc,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static void sroce_stats_read(const struct sroce_stats *st, u64 *v)
{
	int i;

	for (i = 0; i < SROCE_NUM_COUNTERS; i++)
		v[i] = atomic64_read(&st->v[i]);
}

/* The device's own values: events of QPs bound to no counter. */
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	sroce_stats_read(&to_sdev(ibdev)->stats, stats->value);
	return SROCE_NUM_COUNTERS;
}

/* ------------------------------------------------------------------------
 * Per-QP counters: the RDMA core's counter binding ("rdma statistic qp set
 * link DEV/1 auto type on", "rdma statistic qp bind ..."). The core keeps
 * an rdma_counter per group of QPs; sroce keeps its values in a struct
 * sroce_counter found by the counter's id in sdev->counter_xa, and a bound
 * QP counts there instead of in the device (sroce_qp_count()). The core
 * shows the port's totals as the device's values plus every counter's, and
 * folds a counter's last values into its history when the counter goes.
 * No software RDMA driver of 6.1 or 6.12 has per-QP counters.
 */

struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_desc,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * An error NAK (AETH NAK code 1 and up) received (@sent false) or sent by
 * @qp: counted in err_naks_* and, for the codes of IBA 9.7.5.2.4 that a
 * responder sends (invalid request, remote access, remote operational
 * error), in the counter of its kind.
 */
void sroce_qp_count_err_nak(struct sroce_qp *qp, u8 code, bool sent)
{
	enum sroce_counter kind;

	sroce_qp_count(qp, sent ? SROCE_CNT_ERR_NAKS_SENT :
			   SROCE_CNT_ERR_NAKS_RCVD, 1);
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		kind = sent ? SROCE_CNT_INV_REQ_NAKS_SENT :
			SROCE_CNT_INV_REQ_NAKS_RCVD;
		break;
	case SROCE_NAK_REMOTE_ACCESS_ERR:
		kind = sent ? SROCE_CNT_ACCESS_NAKS_SENT :
			SROCE_CNT_ACCESS_NAKS_RCVD;
		break;
	case SROCE_NAK_REMOTE_OP_ERR:
		kind = sent ? SROCE_CNT_OP_NAKS_SENT : SROCE_CNT_OP_NAKS_RCVD;
		break;
	default:
		return;
	}
	sroce_qp_count(qp, kind, 1);
}

/* Bind @ibqp to @counter (under counter->lock, a mutex). */
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_counter_set *cnt;
	u32 id;
	int err;

	if (!counter->id) {
		/* The counter's first QP: its values start at zero. */
		cnt = kzalloc(sizeof(*cnt), GFP_KERNEL);
		if (!cnt)
			return -ENOMEM;
		err = xa_alloc(&sdev->counter_xa, &id, cnt, xa_limit_31b,
			       GFP_KERNEL);
		if (err) {
			kfree(cnt);
			return err;
		}
		counter->id = id;
	} else {
		cnt = xa_load(&sdev->counter_xa, counter->id);
		if (WARN_ON(!cnt))
			return -EINVAL;
	}
	rcu_assign_pointer(qp->counter, cnt);
	ibqp->counter = counter;
	return 0;
}

/*
 * Unbind @ibqp. What it counted while bound stays in the counter, as the
 * core expects; from now on it counts in the device again.
 */
int sroce_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	RCU_INIT_POINTER(qp->counter, NULL);
	ibqp->counter = NULL;
	/*
	 * Let events counted for the counter land before the core reads it
	 * a last time (when its last QP goes, the values join the port's
	 * history). A mutex is held here, no spinlock: sleeping is allowed.
	 */
	synchronize_rcu();
	return 0;
}

/* The counter's last QP is gone: free its values after RCU readers. */
int sroce_counter_dealloc(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_counter_set *cnt;
	int i;

	if (!counter->id)
		return 0;
	mutex_lock(&sdev->pma_lock);
	cnt = xa_erase(&sdev->counter_xa, counter->id);
	if (cnt) {
		/* Its QPs are unbound: the values are final. For the PMA. */
		for (i = 0; i < SROCE_NUM_COUNTERS; i++)
			atomic64_add(atomic64_read(&cnt->stats.v[i]),
				     &sdev->gone.v[i]);
		kfree_rcu(cnt, rcu);
	}
	mutex_unlock(&sdev->pma_lock);
	return 0;
}

int sroce_counter_update_stats(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_counter_set *cnt;

	cnt = xa_load(&sdev->counter_xa, counter->id);
	if (!cnt)
		return -EINVAL;
	sroce_stats_read(&cnt->stats, counter->stats->value);
	return 0;
}

/*
 * The device goes: free counter sets the core left (it deallocates its
 * counters before the driver's device is released; a safety net).
 */
void sroce_counters_cleanup(struct sroce_dev *sdev)
{
	struct sroce_counter_set *cnt;
	unsigned long id;

	xa_for_each(&sdev->counter_xa, id, cnt)
		kfree(cnt);
	xa_destroy(&sdev->counter_xa);
}

/* ------------------------------------------------------------------------
 * Performance management MADs (IBA 16.1): PortCounters and
 * PortCountersExtended from the port's totals. The core asks through
 * process_mad for /sys/class/infiniband/DEV/ports/1/counters/ (counters.sh
 * checks them); the MAD layer hands PMA Gets received on QP1 here as well.
 * (perfquery of rdma-core 44 cannot use a RoCE port: it needs the SMI,
 * which RoCE ports do not have.)
 */

/* The port's total of @c: the device's, the live counters', the gone ones'. */
static u64 sroce_port_total(struct sroce_dev *sdev, enum sroce_counter c)
{
	struct sroce_counter_set *cnt;
	unsigned long id;
	u64 v;

	v = atomic64_read(&sdev->stats.v[c]) + atomic64_read(&sdev->gone.v[c]);
	rcu_read_lock();
	xa_for_each(&sdev->counter_xa, id, cnt)
		v += atomic64_read(&cnt->stats.v[c]);
	rcu_read_unlock();
	return v;
}

static u64 sroce_port_drops(struct sroce_dev *sdev)
{
	u64 v = 0;
	int why;

	for (why = SROCE_DROP_NONE + 1; why < SROCE_DROP_NUM; why++)
		v += sroce_port_total(sdev, SROCE_CNT_DROP(why));
	return v;
}

static __be16 sroce_pma16(u64 v)
{
	return cpu_to_be16(min_t(u64, v, U16_MAX));
}

static __be32 sroce_pma32(u64 v)
{
	return cpu_to_be32(min_t(u64, v, U32_MAX));
}

int sroce_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	/* The attribute follows the PMA's 40 reserved bytes. */
	void *data = out->data + 40;
	struct ib_pma_portcounters_ext *ext = data;
	struct ib_pma_portcounters *pc = data;
	struct ib_class_port_info *cpi = data;
	u64 tx_words, rx_words;

	/* Everything else (CM, SA, other classes) goes on to its agent. */
	if (in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    in->mad_hdr.method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_SUCCESS;

	memset(out, 0, sizeof(*out));
	out->mad_hdr = in->mad_hdr;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = 0;
	/*
	 * A counter that goes moves its values to sdev->gone under pma_lock:
	 * held here, no total misses them on the way (and steps back). The
	 * core asks in process context (sysfs, the MAD layer's work queue).
	 */
	mutex_lock(&sdev->pma_lock);
	/* PortXmitData and PortRcvData count 32-bit words. */
	tx_words = sroce_port_total(sdev, SROCE_CNT_TX_BYTES) / 4;
	rx_words = sroce_port_total(sdev, SROCE_CNT_RX_BYTES) / 4;

	if (in->mad_hdr.attr_id == IB_PMA_CLASS_PORT_INFO) {
		cpi->base_version = 1;
		cpi->class_version = 1;
		cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
	} else if (in->mad_hdr.attr_id == IB_PMA_PORT_COUNTERS_EXT) {
		ext->port_select = port;
		ext->port_xmit_data = cpu_to_be64(tx_words);
		ext->port_rcv_data = cpu_to_be64(rx_words);
		ext->port_xmit_packets =
			cpu_to_be64(sroce_port_total(sdev, SROCE_CNT_TX_PACKETS));
		ext->port_rcv_packets =
			cpu_to_be64(sroce_port_total(sdev, SROCE_CNT_RX_PACKETS));
	} else if (in->mad_hdr.attr_id == IB_PMA_PORT_COUNTERS) {
		pc->port_select = port;
		pc->port_rcv_errors = sroce_pma16(sroce_port_drops(sdev));
		pc->port_xmit_discards =
			sroce_pma16(sroce_port_total(sdev, SROCE_CNT_TX_ERRORS));
		pc->port_xmit_data = sroce_pma32(tx_words);
		pc->port_rcv_data = sroce_pma32(rx_words);
		pc->port_xmit_packets =
			sroce_pma32(sroce_port_total(sdev, SROCE_CNT_TX_PACKETS));
		pc->port_rcv_packets =
			sroce_pma32(sroce_port_total(sdev, SROCE_CNT_RX_PACKETS));
	} else {
		out->mad_hdr.status =
			cpu_to_be16(IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	}
	mutex_unlock(&sdev->pma_lock);
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
