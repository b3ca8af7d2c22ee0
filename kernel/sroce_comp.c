// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the completer (IBA 9.7.5.2 requester side of responses). It runs
 * in softirq context for every ACK, NAK, READ response and atomic ACK,
 * matches them to the shadow WQEs in order, places READ and atomic results,
 * writes CQEs and advances the send queue's cons. What an answer means for
 * retransmission (a resend, a restarted timer, a round-trip sample) it
 * hands to the layer below, sroce_retry.c, which owns the timers.
 *
 * All state is under qp->sq_lock, shared with the requester.
 */
#include "sroce_engine.h"
#include "sroce_retry.h"
#include "sroce_cq.h"
#include "sroce_trace.h"

static void sroce_comp_progress(struct sroce_qp *qp, u32 next_psn);

/*
 * Complete every WQE whose last PSN is at or before @psn: an ACK for @psn
 * acknowledges all earlier requests (IBA 9.7.5.1.1). A READ or atomic WQE
 * is only completed by its own response: if @psn covers its last PSN, that
 * response was lost, and *lost is set (an implied NAK, IBA 9.7.5.2.6; a
 * sequence NAK right after an atomic implies it too). comp.psn
 * moves to the first PSN not acknowledged, so that a resend from comp.psn
 * always starts inside the oldest outstanding WQE.
 */
static void sroce_comp_ack_upto(struct sroce_qp *qp, u32 psn, bool *lost)
{
	u32 next = qp->comp.psn, last;
	struct sroce_swqe *s;

	*lost = false;
	while (qp->sq.idx != qp->req.started_end) {
		s = sroce_swqe_get(qp, qp->sq.idx);
		last = sroce_psn_add(s->first_psn, s->npsn - 1);
		if (s->kind == SROCE_SWQE_READ || s->kind == SROCE_SWQE_ATOMIC) {
			if (sroce_psn_diff(psn, last) >= 0)
				*lost = true;
			next = s->first_psn;
			break;
		}
		if (sroce_psn_diff(last, psn) > 0)
			break;
		sroce_sq_retire(qp, s, IB_WC_SUCCESS);
		next = sroce_psn_add(last, 1);
	}
	sroce_comp_progress(qp, next);
}

/*
 * After an answer moved comp.psn: if the requester had gone back to a PSN
 * that is now acknowledged (ACKs overtook a rewind), move it forward.
 */
static void sroce_comp_resync(struct sroce_qp *qp)
{
	if (sroce_psn_diff(qp->req.psn, qp->comp.psn) < 0 ||
	    (u32)(qp->req.idx - qp->sq.idx) > qp->sq.num_entries)
		sroce_sq_rewind(qp, qp->comp.psn);
}

/*
 * Answers acknowledged PSNs up to @next_psn (exclusive). Forward progress
 * refills the retry counters and restarts the local ACK timer
 * (sroce_retry_progress()); a duplicate answer changes nothing, so that
 * it cannot postpone a timeout.
 */
static void sroce_comp_progress(struct sroce_qp *qp, u32 next_psn)
{
	if (sroce_psn_diff(next_psn, qp->comp.psn) <= 0)
		return;
	qp->comp.psn = next_psn;
	qp->comp.implied_nak = false;
	qp->comp.rewound = false;
	qp->comp.stale_answers = false;
	sroce_comp_resync(qp);
	sroce_retry_progress(qp);
}

/*
 * An answer for a later PSN showed that the response of the oldest WQE, a
 * READ or atomic, was lost (sroce_comp_ack_upto() set *lost): everything
 * before that WQE is acknowledged, and the request is sent again from its
 * first missing response (IBA 9.7.5.2.6), once per loss; further answers
 * that overtake the new request, and a second loss, are left to the local
 * ACK timeout.
 */
static void sroce_comp_implied_nak(struct sroce_qp *qp)
{
	if (!qp->comp.implied_nak) {
		qp->comp.implied_nak = true;
		sroce_retry_resend(qp, qp->comp.psn);
		sroce_qp_count(qp, SROCE_CNT_SEQ_NAKS_RCVD, 1);
	}
}

/*
 * A PSN sequence error NAK (IBA 9.7.5.2.4): go back to its PSN, which
 * sroce_comp_nak() has made comp.psn, at the cost of a retry.
 */
static void sroce_comp_seq_nak(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	sroce_qp_count(qp, SROCE_CNT_SEQ_NAKS_RCVD, 1);
	/*
	 * Waiting out an RNR NAK: the packets sent behind the refused
	 * one draw sequence NAKs (rdma_rxe sends them), which are not
	 * a new error; the RNR timer resends from that PSN anyway.
	 */
	if (qp->comp.rnr_wait)
		return;
	/*
	 * Already gone back to this PSN (a NAK, a timeout, the end of
	 * an RNR wait) and nothing answered since: the NAK was drawn
	 * by packets sent before that resend, which a slow responder
	 * takes in late, one NAK a timer tick (sroce_resp_seq_nak_due()).
	 * Each of them spent a retry and went back over the whole
	 * window again, which drew more: on the debug kernel of a
	 * loaded host, under ODP faults and loss, seven in 130 ms
	 * failed a WRITE with IBV_WC_RETRY_EXC_ERR while the responder
	 * took every packet (rc_integrity_odp.sh). A resend that is
	 * lost again is found by the tail probe, whose NAK counts
	 * (sroce_retry_tlp_fire()), or by the timeout. A NAK past a
	 * READ whose response was lost names a later PSN and counts.
	 * rxe too takes one sequence NAK per retry until an answer
	 * moves it on.
	 */
	if (qp->comp.rewound && pkt->psn == qp->comp.psn)
		return;
	if (!qp->comp.retry_left) {
		sroce_retry_remote_error(qp, IB_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_left--;
	/* A NAK past a READ/atomic implies its response was lost. */
	sroce_retry_resend(qp, qp->comp.psn);
}

/* The work completion status of a class C NAK's code (IBA 9.7.5.2.4). */
static int sroce_comp_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REMOTE_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_REMOTE_OP_ERR:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_REM_INV_RD_REQ_ERR;
	}
}

static void sroce_comp_nak(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u8 code = sroce_aeth_value(pkt->aeth.syndrome);
	bool lost;

	/* Everything before the NAKed PSN was received (IBA 9.7.5.2.4). */
	sroce_comp_ack_upto(qp, sroce_psn_add(pkt->psn, SROCE_PSN_MASK), &lost);
	if (!lost)
		sroce_comp_progress(qp, pkt->psn);
	if (code == SROCE_NAK_PSN_SEQ_ERR) {
		sroce_comp_seq_nak(qp, pkt);
		return;
	}
	sroce_qp_count_err_nak(qp, code, false);
	sroce_retry_remote_error(qp, sroce_comp_nak_status(code));
}

/* RNR NAK: wait the responder's timer, then send again (IBA 9.7.5.2.8). */
static void sroce_comp_rnr(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u32 us = sroce_rnr_timer_us(sroce_aeth_value(pkt->aeth.syndrome));
	bool lost;

	sroce_qp_count(qp, SROCE_CNT_RNR_NAKS_RCVD, 1);
	sroce_comp_ack_upto(qp, sroce_psn_add(pkt->psn, SROCE_PSN_MASK), &lost);
	/* Progress first: it refills the counter this NAK then draws on. */
	if (!lost)
		sroce_comp_progress(qp, pkt->psn);
	if (qp->rnr_retry != 7) {
		if (!qp->comp.rnr_retry_left) {
			sroce_retry_remote_error(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->comp.rnr_retry_left--;
	}
	sroce_retry_rnr_wait(qp, us);
}

/*
 * The kind of response that answers @s: READ responses answer READs and,
 * empty, ATOMIC WRITEs and FLUSHes (IBA A19.4); atomic ACKs answer the
 * other atomics.
 */
static u8 sroce_comp_answer_kind(const struct sroce_swqe *s)
{
	if (s->kind == SROCE_SWQE_ATOMIC &&
	    (s->w.opcode == SROCE_WR_ATOMIC_WRITE ||
	     s->w.opcode == SROCE_WR_FLUSH))
		return SROCE_SWQE_READ;
	return s->kind;
}

/*
 * The WQE that a READ response or atomic ACK answers: the oldest one,
 * answered by @kind (sroce_comp_answer_kind()), waiting for exactly this
 * PSN. The response first acknowledges
 * every request before it. NULL for a response we no longer wait for
 * (stale, out of order: recovered by retry), or one that shows an earlier
 * response was lost (an implied NAK).
 */
static struct sroce_swqe *sroce_comp_answered(struct sroce_qp *qp,
					      const struct sroce_pkt *pkt,
					      u8 kind)
{
	struct sroce_swqe *s;
	bool lost;

	sroce_comp_ack_upto(qp, sroce_psn_add(pkt->psn, SROCE_PSN_MASK), &lost);
	if (!sroce_sq_outstanding(qp))
		return NULL;
	if (lost) {
		sroce_comp_implied_nak(qp);
		sroce_retry_unblock(qp);
		return NULL;
	}
	s = sroce_swqe_get(qp, qp->sq.idx);
	if (sroce_comp_answer_kind(s) != kind ||
	    pkt->psn != sroce_psn_add(s->first_psn,
				      s->done / sroce_qp_mtu(qp)))
		return NULL;
	return s;
}

/* Copy response data into the oldest WQE's SGEs; false if it failed. */
static bool sroce_comp_place(struct sroce_qp *qp, struct sroce_swqe *s,
			     struct sroce_pktbuf *pb, u32 len)
{
	int err = sroce_sgl_copy(qp, SROCE_ODP_REQ, (struct sroce_sge *)s->w.data,
				 s->w.num_sge, s->done, pb, len, SROCE_TO_MR);

	/*
	 * -EAGAIN: an ODP page of the buffer is not mapped (past the window
	 * the requester faulted in, or invalidated since): the answer is
	 * dropped, and once the fault is done (it kicks the QP) the
	 * requester asks again from here (sroce_retry_odp_resend()).
	 */
	if (err == -EAGAIN)
		qp->comp.odp_resend = true;
	else if (err)
		sroce_sq_fail_at(qp, qp->sq.idx, err == -ENOSPC ?
				 IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
	return !err;
}

/* Place a READ response into the oldest WQE, which must be that READ. */
static void sroce_comp_read_resp(struct sroce_qp *qp, struct sk_buff *skb,
				 const struct sroce_pkt *pkt)
{
	u32 flags = pkt->info->flags, mtu = sroce_qp_mtu(qp);
	struct sroce_pktbuf pb = { .skb = skb, .off = pkt->payload_off };
	struct sroce_swqe *s = sroce_comp_answered(qp, pkt, SROCE_SWQE_READ);

	if (!s) {
		/* Only while a READ response is what the oldest WQE awaits. */
		if (sroce_sq_outstanding(qp) &&
		    sroce_comp_answer_kind(sroce_swqe_get(qp, qp->sq.idx)) ==
		    SROCE_SWQE_READ)
			qp->comp.stale_answers = true;
		return;
	}
	if (s->kind == SROCE_SWQE_ATOMIC) {
		/* ATOMIC WRITE, FLUSH: one empty READ response ONLY. */
		if (pkt->payload_len || (flags & SROCE_OPF_ONLY) != SROCE_OPF_ONLY) {
			sroce_sq_fail_at(qp, qp->sq.idx, IB_WC_BAD_RESP_ERR);
			return;
		}
		if (s->w.opcode == SROCE_WR_FLUSH)
			sroce_sq_flush_answered(qp, s);
		sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
		sroce_sq_retire(qp, s, IB_WC_SUCCESS);
		sroce_sq_retire_local(qp);
		sroce_retry_unblock(qp);
		return;
	}
	if (pkt->payload_len > s->length - s->done ||
	    (!(flags & SROCE_OPF_LAST) && pkt->payload_len != mtu) ||
	    ((flags & SROCE_OPF_LAST) &&
	     s->done + pkt->payload_len != s->length)) {
		sroce_sq_fail_at(qp, qp->sq.idx, IB_WC_BAD_RESP_ERR);
		return;
	}
	if (!sroce_comp_place(qp, s, &pb, pkt->payload_len))
		return;
	s->done += pkt->payload_len;
	sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
	if (flags & SROCE_OPF_LAST) {
		sroce_sq_retire(qp, s, IB_WC_SUCCESS);
		sroce_sq_retire_local(qp);
		sroce_retry_unblock(qp);
	}
}

static void sroce_comp_atomic_ack(struct sroce_qp *qp,
				  const struct sroce_pkt *pkt)
{
	u64 orig = pkt->atmack_orig;
	struct sroce_pktbuf pb = { .buf = (u8 *)&orig };
	struct sroce_swqe *s = sroce_comp_answered(qp, pkt, SROCE_SWQE_ATOMIC);

	/* The original value lands in the local buffer in host order. */
	if (!s || !sroce_comp_place(qp, s, &pb, sizeof(orig)))
		return;
	sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
	sroce_sq_retire(qp, s, IB_WC_SUCCESS);
	sroce_sq_retire_local(qp);
	sroce_retry_unblock(qp);
}

static void sroce_comp_ack(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	bool lost;

	sroce_comp_ack_upto(qp, pkt->psn, &lost);
	if (lost)
		sroce_comp_implied_nak(qp);
	else
		sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
	sroce_retry_unblock(qp);
}

/*
 * An answer (@pkt, already taken) while the requester waits after an ACK
 * timeout (comp.probe); comp.psn was @old_psn and the probe took the PSNs
 * up to @sent_end (== @old_psn while it has not gone out yet). The idea is
 * RFC 5682's F-RTO: the answers after a timeout tell a spurious timeout
 * from a loss.
 *  - A NAK, or an answer that implies a lost READ or atomic response: the
 *    go-back-N rewind stands, with the whole window.
 *  - No progress (a duplicate answer): still waiting.
 *  - An ACK of exactly the probe: the responder has nothing after it (an
 *    ACK is cumulative: one that has more acknowledges more, IBA
 *    9.7.5.1.2), so what followed was lost: go-back-N from there.
 *  - Any other progress: the responder is at work on what was sent before
 *    the timeout, whose answers are on their way; the requester goes on
 *    after it (comp.probe_end) instead of sending it again. A READ
 *    response or an atomic ACK says nothing of what came after its own
 *    request, so a loss behind one is found by the sequence NAK the next
 *    packets draw, or by the next timeout.
 */
static void sroce_comp_probe_answered(struct sroce_qp *qp,
				      const struct sroce_pkt *pkt,
				      u32 old_psn, u32 sent_end)
{
	bool aeth = !(pkt->info->flags & (SROCE_OPF_READ | SROCE_OPF_ATOMIC));
	bool ack = aeth && sroce_aeth_type(pkt->aeth.syndrome) == SROCE_AETH_ACK;
	bool nak = aeth && !ack;

	if (!sroce_retry_live(qp)) {
		qp->comp.probe = false;
		return;
	}
	if (!nak && !qp->comp.implied_nak) {
		if (sroce_psn_diff(qp->comp.psn, old_psn) <= 0)
			return;
		if (!(ack && sent_end != old_psn && qp->comp.psn == sent_end) &&
		    sroce_psn_diff(qp->req.psn, qp->comp.probe_end) < 0)
			sroce_sq_rewind(qp, qp->comp.probe_end);
	}
	qp->comp.probe = false;
	qp->req.blocked = true;
	sroce_retry_unblock(qp);
}

/*
 * A response packet for an RC QP; softirq context. Returns true when the
 * requester must run now (the answer opened the window or asks for a
 * resend): the caller runs it, so that no work item stands between an
 * ACK and the next send, and the completer never calls the requester.
 */
bool sroce_comp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt)
{
	u32 flags = pkt->info->flags, old_psn, sent_end;
	bool wake, probe;

	spin_lock(&qp->sq_lock);
	if (!sroce_retry_live(qp)) {
		sroce_qp_count(qp, SROCE_CNT_DROP(SROCE_DROP_BAD_QP_STATE), 1);
		goto out;
	}
	/* Only PSNs we have sent and not yet seen answered are of interest. */
	if (sroce_psn_diff(pkt->psn, qp->req.psn_max) >= 0 ||
	    sroce_psn_diff(pkt->psn, sroce_psn_add(qp->comp.psn,
						   SROCE_PSN_MASK)) < 0) {
		sroce_qp_count(qp, SROCE_CNT_DUPLICATES, 1);
		goto out;
	}

	if (flags & SROCE_OPF_AETH)
		trace_sroce_ack_rcvd(qp->ibqp.qp_num, pkt->psn,
				     pkt->aeth.syndrome, pkt->aeth.msn);
	probe = qp->comp.probe;
	old_psn = qp->comp.psn;
	sent_end = qp->req.psn;
	if (flags & SROCE_OPF_READ) {
		sroce_comp_read_resp(qp, skb, pkt);
	} else if (flags & SROCE_OPF_ATOMIC) {
		sroce_comp_atomic_ack(qp, pkt);
	} else {
		switch (sroce_aeth_type(pkt->aeth.syndrome)) {
		case SROCE_AETH_ACK:
			sroce_comp_ack(qp, pkt);
			break;
		case SROCE_AETH_RNR_NAK:
			sroce_comp_rnr(qp, pkt);
			break;
		case SROCE_AETH_NAK:
			sroce_comp_nak(qp, pkt);
			break;
		default:
			break;
		}
	}
	if (probe)
		sroce_comp_probe_answered(qp, pkt, old_psn, sent_end);
out:
	wake = sroce_retry_woke(qp);
	spin_unlock(&qp->sq_lock);
	return wake;
}
