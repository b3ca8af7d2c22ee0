// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: ACKs and the answer queue, the layer below the responder and the
 * requester (IBA 9.7.5.1.1, 9.7.5.1.2). The responder's answers (ACKs,
 * NAKs, RNR NAKs, READ responses, atomic ACKs) are built here or through
 * sroce_ack_skb(), go out in PSN order behind the READ and atomic answers
 * still due (sroce_ack_answer()), and leave through one queue per QP that
 * one context at a time empties (sroce_ack_tx_claim()). The delayed ACK
 * lives here too: the requester, about to send, takes a held ACK along
 * ahead of its own requests (sroce_ack_req_xmit()). It calls no engine:
 * the requester, the responder and the QP's life cycle call it.
 *
 * State is the responder's (qp->resp), under qp->resp_lock; the delayed
 * ACK's flags are also read without it.
 */
#include "sroce_ack.h"
#include "sroce_net.h"
#include "sroce_trace.h"

/* Rounds of sending what others queued meanwhile, per context. */
#define SROCE_ACK_TX_ROUNDS	4
/* Timer ticks an ACK waits for the QP's own requests at most. */
#define SROCE_ACK_DELAY_TICKS	2
/*
 * Ping-pong exchanges in a row that enter ping-pong mode: first, most.
 * A hold that nothing takes along costs its sender a timer tick or two at
 * the end of a conversation; short exchanges (connection handshakes:
 * perftest -R swaps half a dozen messages, then expects the peer at once
 * to listen for its next connection) never enter the mode.
 */
#define SROCE_PP_NEED_FIRST	16
#define SROCE_PP_NEED_MAX	128

static bool sroce_ack_delay = true;
module_param_named(ack_delay, sroce_ack_delay, bool, 0644);
MODULE_PARM_DESC(ack_delay,
		 "Let an RC ACK follow the reply on request/response traffic (default: on)");

/*
 * A packet buffer for an answer of @qp with @payload bytes after the
 * headers of @pkt, which are built; the caller writes the payload.
 */
struct sk_buff *sroce_ack_skb(struct sroce_qp *qp,
			      struct sroce_pkt *pkt, u32 payload)
{
	struct sk_buff *skb;
	u32 hdr_len;

	/* An XRC target answers with XRC's codes for RC's answers. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		pkt->opcode |= SROCE_TRANSPORT_XRC;
	hdr_len = sroce_opcode_get(pkt->opcode)->hdr_len;
	pkt->pkey = SROCE_DEFAULT_PKEY;
	pkt->dqpn = qp->dest_qpn;
	pkt->pad = sroce_pad_for(payload);
	skb = sroce_skb_alloc(qp->sdev, hdr_len + payload + pkt->pad +
			      SROCE_ICRC_BYTES);
	if (!skb)
		return NULL;
	sroce_build(skb->data, pkt);
	memset(skb->data + hdr_len + payload, 0, pkt->pad);
	sroce_addr_from_qp(qp, (struct sroce_xmit_addr *)skb->cb);
	return skb;
}

/* Queue an ACK, NAK or RNR NAK for @psn; false when out of memory. */
bool sroce_ack_build(struct sroce_qp *qp, struct sk_buff_head *out,
		     u32 psn, u8 syndrome, u32 msn)
{
	struct sroce_pkt pkt = {
		.opcode = SROCE_OP_RC_ACKNOWLEDGE,
		.psn = psn,
		.aeth = { .syndrome = syndrome, .msn = msn },
	};
	struct sk_buff *skb = sroce_ack_skb(qp, &pkt, 0);

	if (!skb)
		return false;
	trace_sroce_ack_sent(qp->ibqp.qp_num, psn, syndrome, msn);
	__skb_queue_tail(out, skb);
	return true;
}

/*
 * Answers of earlier requests still to go out (resp_lock held): READ
 * responses, atomic ACKs, a replay, or an ACK/NAK held back behind them.
 */
bool sroce_ack_due(const struct sroce_qp *qp)
{
	const struct sroce_resp *rs = &qp->resp;

	return rs->res_pending || rs->replay || rs->ans_owed;
}

/* Drop every answer still to go out (the QP fails or is reset). */
void sroce_ack_forget(struct sroce_qp *qp)
{
	qp->resp.res_pending = 0;
	qp->resp.replay = NULL;
	qp->resp.ans_owed = false;
	qp->resp.ans_fatal = false;
	WRITE_ONCE(qp->resp.ack_delayed, false);
	qp->resp.pingpong = false;
}

/*
 * Answer a request with an ACK, NAK or RNR NAK for @psn, in PSN order (IBA
 * 9.7.5.1): while the answers of earlier READs and atomics are still to
 * go out, it is held back and sroce_rres_build() sends it in its turn. A
 * requester takes an ACK or NAK for a later PSN as the end of every
 * earlier READ response, and sends the READ again if they have not all
 * arrived (an implied NAK, IBA 9.7.5.2.6).
 *
 * One answer is held; the newer one takes its place when it is for a
 * later PSN (ACKs are cumulative, and a NAK acknowledges everything
 * before its PSN), or for the same PSN and an ACK: the request a held RNR
 * or sequence NAK named was taken since (the requester sent it again), so
 * the NAK is stale (sroce_ack_taken()). A NAK for the PSN of a held
 * answer adds nothing. A class C NAK (@fatal) is never replaced: the QP
 * fails once it is out, and takes no request meanwhile.
 */
void sroce_ack_answer(struct sroce_qp *qp, struct sk_buff_head *out,
		      u32 psn, u8 syndrome, bool fatal)
{
	struct sroce_resp *rs = &qp->resp;
	s32 d;

	if (!sroce_ack_due(qp)) {
		sroce_ack_build(qp, out, psn, syndrome, rs->msn);
		if (fatal)
			sroce_qp_fatal(qp);
		return;
	}
	if (rs->ans_owed && !fatal) {
		d = sroce_psn_diff(psn, rs->ans_psn);
		if (rs->ans_fatal || d < 0 ||
		    (!d && sroce_aeth_type(syndrome) != SROCE_AETH_ACK))
			return;
	}
	rs->ans_owed = true;
	rs->ans_fatal = fatal;
	rs->ans_psn = psn;
	rs->ans_syndrome = syndrome;
	rs->ans_msn = rs->msn;
}

/*
 * epsn has just moved on: if an RNR or sequence NAK held back names a PSN
 * now taken, the requester sent that request again and it was accepted;
 * the NAK, sent after the READ responses, would make it send it once more
 * and spend a retry (rnr_retry or retry_cnt) on a request already done.
 * What the NAK also said, that every PSN before its own was received,
 * stays true: it becomes an ACK of the PSN before, with the MSN it
 * carried. A later answer replaces it as any held ACK.
 */
void sroce_ack_taken(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;

	if (!rs->ans_owed || rs->ans_fatal ||
	    sroce_aeth_type(rs->ans_syndrome) == SROCE_AETH_ACK ||
	    sroce_psn_diff(rs->ans_psn, rs->epsn) >= 0)
		return;
	rs->ans_psn = sroce_psn_add(rs->ans_psn, SROCE_PSN_MASK);
	rs->ans_syndrome = sroce_ack_syndrome();
}

/*
 * Delayed ACK. rdma_rxe answers a request that asks for an ACK at once,
 * from the packet's softirq. On request/response traffic (RPC, ping-pong)
 * that puts the ACK's transmission, a packet through the UDP stack and a
 * kick of the netdev, between the request's arrival and the user seeing
 * it: on one CPU the softirq runs to its end before the user does, and
 * the ACK's packet then competes with the reply for the link. When this
 * QP's requests have been answering the peer's (ping-pong), the ACK waits
 * for the reply instead and leaves right before it (sroce_ack_req_xmit()).
 *
 * - At most one ACK waits: the next request that asks for one is ACKed at
 *   once, for both (ACKs are cumulative), so a stream still sees every
 *   other ACK it asks for.
 * - Anything else answered (a NAK, a duplicate, a READ or atomic) sends
 *   the waiting ACK first, in PSN order.
 * - A wait ends after SROCE_ACK_DELAY_TICKS timer ticks at most (4-8 ms
 *   at HZ=250, well below the local ACK timeouts in use), or when the
 *   peer's tail probe (a duplicate) asks for the ACK; either ends
 *   ping-pong mode: the peer waits for the ACK instead of answering.
 * - An exchange looks like ping-pong when a request asking for an ACK
 *   comes while this QP's requester has nothing unacknowledged, and the
 *   requester sends next; ping-pong mode starts after SROCE_PP_NEED_FIRST
 *   of them in a row. A request that comes while the requester has
 *   something unacknowledged breaks the row (outside ping-pong mode).
 * - Two sides that send at once, then wait for their own sends to
 *   complete before they send again, would each hold the ACK the other
 *   waits for, until the peer's tail probe asks for it. Such traffic
 *   mostly breaks the row, but not always (the sides drift in and out of
 *   step): each exit doubles the row needed to enter again, so the
 *   stalls are logarithmic in the length of such traffic, not linear.
 *   rc_ack_delay.sh checks both patterns and the change from one to the
 *   other.
 * - The cost: the last message of a conversation in ping-pong mode is
 *   ACKed when the hold ends, or when the peer's tail probe asks, a timer
 *   tick or so late. A QP that fails, is reset or destroyed sends its
 *   held ACK first (sroce_ack_release()).
 */

/* A held ACK was not taken along by a request of ours: leave ping-pong. */
void sroce_ack_pp_exit(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;

	sroce_qp_count(qp, SROCE_CNT_ACK_DELAYS_EXPIRED, 1);
	rs->pingpong = false;
	rs->pp_credit = 0;
	rs->pp_need = min_t(u32, rs->pp_need * 2, SROCE_PP_NEED_MAX);
}

/* Send the waiting ACK, of everything accepted so far, now. */
void sroce_ack_send_held(struct sroce_qp *qp, struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;

	if (!rs->ack_delayed)
		return;
	WRITE_ONCE(rs->ack_delayed, false);
	sroce_ack_answer(qp, out, sroce_psn_add(rs->epsn, SROCE_PSN_MASK),
			 sroce_ack_syndrome(), false);
}

/*
 * A SEND or WRITE packet in sequence that asks for an ACK is about to be
 * executed: hold its ACK? Decided before its data or its completion is
 * visible, since the user may post the reply at once, on another CPU, and
 * sroce_ack_req_xmit() must then find the ACK held (it looks without
 * the lock first). Undone if the packet fails (sroce_ack_done()).
 */
bool sroce_ack_hold(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;
	/* A hint, read without sq_lock: is our requester idle? */
	bool idle = READ_ONCE(qp->comp.psn) == READ_ONCE(qp->req.psn_max);

	if (!idle && !rs->pingpong)
		rs->pp_credit = 0;
	WRITE_ONCE(rs->rx_idle, idle);
	if (rs->ack_delayed || sroce_ack_due(qp))
		return false;
	/* debugfs fault/ack_delay_ms: any ACK that would leave alone waits. */
	if (!READ_ONCE(qp->sdev->fault.ack_delay_ms) &&
	    (!rs->pingpong || !READ_ONCE(sroce_ack_delay)))
		return false;
	WRITE_ONCE(rs->ack_delayed, true);
	return true;
}

/* The request at @psn was accepted: its ACK is held (@held) or sent now. */
void sroce_ack_done(struct sroce_qp *qp, struct sk_buff_head *out,
		    u32 psn, bool held)
{
	struct sroce_resp *rs = &qp->resp;

	if (held) {
		u32 ms = READ_ONCE(qp->sdev->fault.ack_delay_ms);

		sroce_qp_count(qp, SROCE_CNT_ACKS_DELAYED, 1);
		if (ms) {
			sroce_dev_count(qp->sdev, SROCE_CNT_FAULTS, 1);
			mod_timer(&rs->dack, jiffies + msecs_to_jiffies(ms));
			return;
		}
		/* Unchanged within a tick: mod_timer() returns at once. */
		mod_timer(&rs->dack, jiffies + SROCE_ACK_DELAY_TICKS);
		return;
	}
	/* Not held: a held one is ACKed with it (ACKs are cumulative). */
	WRITE_ONCE(rs->ack_delayed, false);
	sroce_ack_answer(qp, out, psn, sroce_ack_syndrome(), false);
}

/*
 * Transmission in the order of building (resp_lock held). Answers are
 * built under resp_lock and sent after it is dropped, from softirq (a
 * request) and from the work item (READ responses), so two contexts could
 * overtake each other between the two: an ACK built just after the last
 * READ responses could leave before them. Everything built goes through
 * qp->resp.txq instead, and one context at a time empties it. Appends
 * @out to the queue; true when this context is now the one to send, with
 * the queue moved to @out.
 */
bool sroce_ack_tx_claim(struct sroce_qp *qp, struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;

	skb_queue_splice_tail_init(out, &rs->txq);
	if (rs->tx_busy || skb_queue_empty(&rs->txq))
		return false;
	rs->tx_busy = true;
	skb_queue_splice_init(&rs->txq, out);
	return true;
}

/*
 * Send @list, then whatever was queued meanwhile, for a few rounds; then
 * let go of the queue (the work item takes over what is left).
 */
void sroce_ack_tx_drain(struct sroce_qp *qp, struct sk_buff_head *list)
{
	struct sroce_resp *rs = &qp->resp;
	unsigned int rounds = 0;
	bool left;

	for (;;) {
		sroce_qp_xmit_list(qp, list);
		spin_lock_bh(&qp->resp_lock);
		if (skb_queue_empty(&rs->txq) ||
		    ++rounds >= SROCE_ACK_TX_ROUNDS)
			break;
		skb_queue_splice_init(&rs->txq, list);
		spin_unlock_bh(&qp->resp_lock);
	}
	rs->tx_busy = false;
	left = !skb_queue_empty(&rs->txq);
	spin_unlock_bh(&qp->resp_lock);
	if (left)
		sroce_qp_kick(qp);
}

/*
 * The requester of @qp is about to send @list (any context, no QP lock
 * held). A request that came while the requester was idle has now been
 * answered by one: ping-pong. A waiting ACK joins the head of @list, to
 * leave right before the requests (in a transmission of its own: a GSO
 * burst starts with its largest packet), unless other answers are queued
 * or being sent (then sroce_ack_release() sends it in its turn
 * after @list).
 * Before, not behind: the peer then finds its requester idle when our
 * request comes, and counts the exchange as ping-pong too. Behind it, the
 * peer saw its reply still unacknowledged, and whichever side entered
 * ping-pong mode first kept the other out of it for good (with 2 vCPUs a
 * side's ACK sent at once is now and then overtaken by its next request,
 * so the two sides do not enter together).
 * An ACK sent this way can be overtaken by an answer a packet's softirq
 * sends meanwhile; it then arrives stale, and ACKs are cumulative.
 */
void sroce_ack_req_xmit(struct sroce_qp *qp, struct sk_buff_head *list)
{
	struct sroce_resp *rs = &qp->resp;
	struct sk_buff_head ack;

	if (!READ_ONCE(rs->ack_delayed) && !READ_ONCE(rs->rx_idle))
		return;
	__skb_queue_head_init(&ack);
	spin_lock_bh(&qp->resp_lock);
	if (rs->rx_idle) {
		WRITE_ONCE(rs->rx_idle, false);
		if (!rs->pingpong && ++rs->pp_credit >= rs->pp_need)
			rs->pingpong = true;
	}
	if (rs->ack_delayed && !rs->tx_busy && skb_queue_empty(&rs->txq) &&
	    !sroce_ack_due(qp) &&
	    sroce_ack_build(qp, &ack, sroce_psn_add(rs->epsn, SROCE_PSN_MASK),
			    sroce_ack_syndrome(), rs->msn))
		WRITE_ONCE(rs->ack_delayed, false);
	spin_unlock_bh(&qp->resp_lock);
	skb_queue_splice(&ack, list);
}

/*
 * Send a held ACK now, in its turn behind the answers queued (process
 * context or softirq, no QP lock held): after the requester's
 * packets when it did not join them (sroce_ack_req_xmit()), and when the
 * QP fails, is reset or destroyed. Its request was accepted and the user
 * may have seen it (an ibv_rc_pingpong that exits after its last receive
 * destroys its QP at once): without the ACK the peer would send the
 * request again to a QP that is gone, until its retries ran out.
 */
void sroce_ack_release(struct sroce_qp *qp)
{
	struct sk_buff_head out;
	bool send;

	if (!READ_ONCE(qp->resp.ack_delayed))
		return;
	__skb_queue_head_init(&out);
	spin_lock_bh(&qp->resp_lock);
	sroce_ack_send_held(qp, &out);
	send = sroce_ack_tx_claim(qp, &out);
	spin_unlock_bh(&qp->resp_lock);
	if (send)
		sroce_ack_tx_drain(qp, &out);
}

/* No request of ours came to take the held ACK along: send it alone. */
static void sroce_ack_dack_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, resp.dack);
	struct sroce_resp *rs = &qp->resp;
	struct sk_buff_head out;
	bool send;

	__skb_queue_head_init(&out);
	spin_lock_bh(&qp->resp_lock);
	/* In any state: the request it answers was accepted. */
	if (rs->ack_delayed) {
		sroce_ack_pp_exit(qp);
		sroce_ack_send_held(qp, &out);
	}
	send = sroce_ack_tx_claim(qp, &out);
	spin_unlock_bh(&qp->resp_lock);
	if (send)
		sroce_ack_tx_drain(qp, &out);
}

/* Ping-pong mode off, the row to enter it at its first length (resp_lock). */
void sroce_ack_init(struct sroce_qp *qp)
{
	qp->resp.pp_credit = 0;
	qp->resp.pp_need = SROCE_PP_NEED_FIRST;
}

void sroce_ack_timer_init(struct sroce_qp *qp)
{
	timer_setup(&qp->resp.dack, sroce_ack_dack_fire, 0);
}

void sroce_ack_timer_stop(struct sroce_qp *qp)
{
	del_timer_sync(&qp->resp.dack);
}
