/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce tracepoints, system "sroce": `perf record -e 'sroce:*'`,
 * `trace-cmd record -e sroce`, /sys/kernel/tracing/events/sroce/. Off,
 * each costs a static branch; on, the fields below. Every QP event
 * carries the QP number; PSNs are 24-bit. Documentation/debugging.rst
 * shows them on a lossy transfer.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>

/* A packet handed to the IP stack: @bth is its BTH, @len its UDP payload. */
TRACE_EVENT(sroce_xmit,
	TP_PROTO(u32 qpn, const u8 *bth, u32 len),
	TP_ARGS(qpn, bth, len),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->opcode = bth[0];
		__entry->dqpn = bth[5] << 16 | bth[6] << 8 | bth[7];
		__entry->psn = bth[9] << 16 | bth[10] << 8 | bth[11];
		__entry->len = len;
	),
	TP_printk("qpn %u dqpn %u opcode 0x%02x psn %u len %u",
		  __entry->qpn, __entry->dqpn, __entry->opcode, __entry->psn,
		  __entry->len)
);

/* A packet that passed the checks and reached QP @qpn. */
TRACE_EVENT(sroce_recv,
	TP_PROTO(u32 qpn, u8 opcode, u32 psn, u32 len),
	TP_ARGS(qpn, opcode, psn, len),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->opcode = opcode;
		__entry->psn = psn;
		__entry->len = len;
	),
	TP_printk("qpn %u opcode 0x%02x psn %u len %u", __entry->qpn,
		  __entry->opcode, __entry->psn, __entry->len)
);

/* A received packet dropped; @reason is the drop_* counter's index. */
TRACE_EVENT(sroce_drop,
	TP_PROTO(int reason),
	TP_ARGS(reason),
	TP_STRUCT__entry(
		__field(int, reason)
	),
	TP_fast_assign(
		__entry->reason = reason;
	),
	TP_printk("reason %d", __entry->reason)
);

/*
 * An ACK or NAK (AETH @syndrome: 0x00-0x1f ACK, 0x20-0x3f RNR NAK,
 * 0x60-0x7f NAK) a QP sent (@sent) or received.
 */
DECLARE_EVENT_CLASS(sroce_ack_class,
	TP_PROTO(u32 qpn, u32 psn, u8 syndrome, u32 msn),
	TP_ARGS(qpn, psn, syndrome, msn),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, msn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
		__entry->msn = msn;
	),
	TP_printk("qpn %u psn %u syndrome 0x%02x msn %u", __entry->qpn,
		  __entry->psn, __entry->syndrome, __entry->msn)
);

DEFINE_EVENT(sroce_ack_class, sroce_ack_sent,
	TP_PROTO(u32 qpn, u32 psn, u8 syndrome, u32 msn),
	TP_ARGS(qpn, psn, syndrome, msn));

DEFINE_EVENT(sroce_ack_class, sroce_ack_rcvd,
	TP_PROTO(u32 qpn, u32 psn, u8 syndrome, u32 msn),
	TP_ARGS(qpn, psn, syndrome, msn));

/* The requester goes back from @from (next PSN it would send) to @to. */
TRACE_EVENT(sroce_retransmit,
	TP_PROTO(u32 qpn, u32 from, u32 to),
	TP_ARGS(qpn, from, to),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, from)
		__field(u32, to)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("qpn %u from psn %u to psn %u", __entry->qpn,
		  __entry->from, __entry->to)
);

/*
 * The local ACK timeout (@tail_probe 0) or the tail probe timer (1) fired
 * with @psn the oldest unanswered; @retry_left retries remain.
 */
TRACE_EVENT(sroce_timeout,
	TP_PROTO(u32 qpn, u32 psn, u8 retry_left, bool tail_probe),
	TP_ARGS(qpn, psn, retry_left, tail_probe),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, retry_left)
		__field(u8, tail_probe)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->retry_left = retry_left;
		__entry->tail_probe = tail_probe;
	),
	TP_printk("qpn %u psn %u retry_left %u tail_probe %u", __entry->qpn,
		  __entry->psn, __entry->retry_left, __entry->tail_probe)
);

/* A QP's state as the data path sees it (enum ib_qp_state values). */
TRACE_EVENT(sroce_qp_state,
	TP_PROTO(u32 qpn, int from, int to),
	TP_ARGS(qpn, from, to),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(int, from)
		__field(int, to)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("qpn %u state %d -> %d", __entry->qpn, __entry->from,
		  __entry->to)
);

/* A completion written into CQ @cqn (its restrack id). */
TRACE_EVENT(sroce_cqe,
	TP_PROTO(u32 cqn, u32 qpn, u64 wr_id, u8 status, u8 opcode,
		 u32 byte_len),
	TP_ARGS(cqn, qpn, wr_id, status, opcode, byte_len),
	TP_STRUCT__entry(
		__field(u64, wr_id)
		__field(u32, cqn)
		__field(u32, qpn)
		__field(u32, byte_len)
		__field(u8, status)
		__field(u8, opcode)
	),
	TP_fast_assign(
		__entry->cqn = cqn;
		__entry->qpn = qpn;
		__entry->wr_id = wr_id;
		__entry->status = status;
		__entry->opcode = opcode;
		__entry->byte_len = byte_len;
	),
	TP_printk("cqn %u qpn %u wr_id 0x%llx status %u opcode %u byte_len %u",
		  __entry->cqn, __entry->qpn, __entry->wr_id, __entry->status,
		  __entry->opcode, __entry->byte_len)
);

/* A user QP's send doorbell (an empty POST_SEND) with its SQ at @prod. */
TRACE_EVENT(sroce_doorbell,
	TP_PROTO(u32 qpn, u32 prod),
	TP_ARGS(qpn, prod),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, prod)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->prod = prod;
	),
	TP_printk("qpn %u sq_prod %u", __entry->qpn, __entry->prod)
);

#endif /* SROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sroce_trace
#include <trace/define_trace.h>
