// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the completer (IBA 9.7.5.2 requester side of responses). It runs
 * in softirq context for every ACK, NAK, READ response and atomic ACK,
 * matches them to the shadow WQEs in order, places READ and atomic results,
 * writes CQEs and advances the send queue's cons. It also owns the local
 * ACK timeout and RNR timers, which drive go-back-N retransmission, and
 * the tail probe, which finds a loss at the end of what was sent in
 * about a round trip instead of a timeout.
 *
 * All state is under qp->sq_lock, shared with the requester.
 */
#include "sroce_engine.h"
#include "sroce_sq.h"
#include "sroce_cq.h"
#include "sroce_trace.h"

/*
 * Retire the oldest WQE: free its ring slot, then a CQE if it asks for
 * one. In that order: a user who sees the completion may post at once
 * (ibv_rc_pingpong with one send WR), and its post must find the slot
 * free. The CQE is built from the shadow slot, which no one reuses while
 * sq_lock is held.
 */
static void sroce_comp_retire(struct sroce_qp *qp, struct sroce_swqe *s,
			      int status)
{
	if (s->kind == SROCE_SWQE_READ || s->kind == SROCE_SWQE_ATOMIC) {
		if (!WARN_ON_ONCE(!qp->req.rd_atomic))
			qp->req.rd_atomic--;
	}
	qp->sq.idx++;
	sroce_ring_store_cons(qp->sq.hdr, qp->sq.idx);
	if (s->signaled || status != IB_WC_SUCCESS)
		sroce_sq_cqe(qp, s, s->w.wr_id, status);
}

static bool sroce_comp_outstanding(struct sroce_qp *qp)
{
	return qp->sq.idx != qp->req.started_end;
}

/*
 * The states in which the completer works and timers may be armed: in
 * Error and Reset (and before RTS) none is, which is what stopping them
 * for good relies on (sroce_qp_quiesce()).
 */
static bool sroce_comp_live(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE;
}

/*
 * The tail probe's wait: twice the smoothed time from the requester's
 * stop to the answer of all it had sent, and at least SROCE_TLP_MIN_NS
 * (scheduling noise: the rig's 2-byte ping-pong has a p99 near 2 ms). A
 * QP probes only once it has a sample: a guess made spurious probes on
 * the debug kernel, where a fresh QP's first 64 KiB WRITE took longer
 * than 2 ms to be answered (rc_order.sh). The wait doubles with each
 * probe of a stall, of which there are at most SROCE_TLP_MAX: a probe or
 * its answer may be lost too (300 round trips of 128 KiB with 10% of
 * the tails and of the ACKs lost, a first version of rc_tail_loss.sh:
 * 234 ACK timeouts without probes, 37 with one per stall, 9 with two).
 */
#define SROCE_TLP_MIN_NS	(500 * NSEC_PER_USEC)
#define SROCE_TLP_MAX		2

static u64 sroce_comp_pto(struct sroce_qp *qp)
{
	return max_t(u64, 2 * qp->comp.srtt, SROCE_TLP_MIN_NS) <<
	       qp->comp.tlp_sent;
}

static void sroce_comp_rto_arm(struct sroce_qp *qp)
{
	u64 ns = sroce_local_ack_timeout_ns(qp->timeout);

	if (!ns || !sroce_comp_live(qp))
		return;
	/* One jiffy more: the timeout is a minimum, never cut short. */
	mod_timer(&qp->comp.rto, jiffies + nsecs_to_jiffies(ns) + 1);
}

/*
 * Wake the requester if it stopped for a reason an answer may clear: it
 * runs once sq_lock is dropped (sroce_comp_woke()).
 */
static void sroce_comp_unblock(struct sroce_qp *qp)
{
	if (qp->req.blocked) {
		qp->req.blocked = false;
		qp->comp.wake_req = true;
	}
}

/* Whether the requester must run now; called with sq_lock held. */
static bool sroce_comp_woke(struct sroce_qp *qp)
{
	bool wake = qp->comp.wake_req || qp->req.run_on_ack;

	qp->comp.wake_req = false;
	qp->req.run_on_ack = false;
	return wake;
}

/*
 * Complete the memory operations (no PSN) at the head of the send queue
 * once everything before them is answered: whoever answers the WQE before
 * one calls this, the requester when it goes past one (sroce_comp_sent())
 * and the READ and atomic answers, after which nothing else may come for
 * the QP (a READ or atomic followed only by a BIND_MW).
 */
static void sroce_comp_retire_local(struct sroce_qp *qp)
{
	struct sroce_swqe *s;

	while (sroce_comp_outstanding(qp)) {
		s = sroce_swqe_get(qp, qp->sq.idx);
		if (s->kind != SROCE_SWQE_LOCAL || s->first_psn != qp->comp.psn)
			break;
		sroce_comp_retire(qp, s, IB_WC_SUCCESS);
	}
}

/*
 * The requester has sent every packet of the WQE before req.idx. UC and
 * UD WQEs complete now (no response will come); RC ones wait for the
 * ACK under the local ACK timeout. Called with sq_lock held.
 */
void sroce_comp_sent(struct sroce_qp *qp)
{
	if (!sroce_qp_rc(qp)) {
		qp->req.started_end = qp->req.idx;
		while (qp->sq.idx != qp->req.idx)
			sroce_comp_retire(qp, sroce_swqe_get(qp, qp->sq.idx),
					  IB_WC_SUCCESS);
		return;
	}
	sroce_comp_retire_local(qp);
	if (!sroce_comp_outstanding(qp))
		return;
	if (!timer_pending(&qp->comp.rto))
		sroce_comp_rto_arm(qp);
}

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
		sroce_comp_retire(qp, s, IB_WC_SUCCESS);
		next = sroce_psn_add(last, 1);
	}
	sroce_comp_progress(qp, next);
}

/* Go back to @psn and wake the requester to send from there at once. */
static void sroce_comp_go_back(struct sroce_qp *qp, u32 psn)
{
	trace_sroce_retransmit(qp->ibqp.qp_num, qp->req.psn, psn);
	sroce_sq_rewind(qp, psn);
	qp->req.blocked = true;
	sroce_comp_unblock(qp);
}

/*
 * A loss found (NAK, ACK timeout, implied NAK, RNR NAK): an answer until
 * all that was sent is answered measures the recovery, not the path, and
 * times nothing (Karn's rule; sroce_comp_rtt_sample()).
 */
static void sroce_comp_rtt_hold(struct sroce_qp *qp)
{
	qp->comp.rtt_timing = false;
	qp->comp.rtt_hold = true;
	qp->comp.rtt_hold_psn = qp->req.psn_max;
}

/* Go back to @psn after a loss. */
static void sroce_comp_resend(struct sroce_qp *qp, u32 psn)
{
	/* Whatever an ODP fault's end would have asked for again, this does. */
	qp->comp.odp_resend = false;
	qp->comp.rewound = true;
	sroce_comp_rtt_hold(qp);
	sroce_comp_go_back(qp, psn);
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

/* Time the answer of everything sent so far, unless a loss is recovered. */
static void sroce_comp_rtt_start(struct sroce_qp *qp)
{
	if (qp->comp.rtt_hold)
		return;
	qp->comp.rtt_timing = true;
	qp->comp.rtt_start = ktime_get_ns();
	qp->comp.rtt_psn = qp->req.psn_max;
}

/*
 * Everything sent when the sample began is answered: fold the time into
 * comp.srtt, an average with gain 1/8 (TCP's SRTT, RFC 6298). A sample
 * starts only at a stop right after new packets went out and ends when
 * they are answered, so a resend in between can only lengthen it. One
 * across a loss's recovery is not taken (sroce_comp_rtt_hold()): taken,
 * a few ACK timeouts had pushed the probe time past the timeout itself
 * (the first version of rc_tail_loss.sh: 83 timeouts and 5 probes
 * instead of 9 and 134). A tail probe starts the sample again
 * (sroce_comp_tlp_fire()): the answer to a probe that found a loss then
 * times the probe's round trip, and the answer to the original after a
 * spurious probe a time a probe time shorter than its round trip, long
 * enough on a path that became slower to raise the average (rc_netem.sh's
 * 200 ms link after its 3 ms one), where holding every sample across a
 * probe would leave the probes spurious for good.
 */
static void sroce_comp_rtt_sample(struct sroce_qp *qp)
{
	u64 rtt = ktime_get_ns() - qp->comp.rtt_start;

	qp->comp.rtt_timing = false;
	if (!qp->comp.srtt)
		qp->comp.srtt = rtt;
	else if (rtt >= qp->comp.srtt)
		qp->comp.srtt += (rtt - qp->comp.srtt) >> 3;
	else
		qp->comp.srtt -= (qp->comp.srtt - rtt) >> 3;
}

/*
 * Answers acknowledged PSNs up to @next_psn (exclusive). Forward progress
 * refills the retry counters and restarts the local ACK timer; a
 * duplicate answer changes nothing, so that it cannot postpone a timeout.
 */
static void sroce_comp_progress(struct sroce_qp *qp, u32 next_psn)
{
	if (sroce_psn_diff(next_psn, qp->comp.psn) <= 0)
		return;
	qp->comp.psn = next_psn;
	qp->comp.implied_nak = false;
	qp->comp.rewound = false;
	qp->comp.stale_answers = false;
	qp->comp.tlp_sent = 0;
	if (qp->comp.rtt_hold &&
	    sroce_psn_diff(next_psn, qp->comp.rtt_hold_psn) >= 0)
		qp->comp.rtt_hold = false;
	if (qp->comp.rtt_timing &&
	    sroce_psn_diff(next_psn, qp->comp.rtt_psn) >= 0)
		sroce_comp_rtt_sample(qp);
	sroce_comp_resync(qp);
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_retry_left = qp->rnr_retry;
	/*
	 * The tail probe is left armed: the next stop moves it anyway, and
	 * if it fires first it finds nothing to do.
	 */
	if (sroce_comp_outstanding(qp))
		sroce_comp_rto_arm(qp);
	else
		del_timer(&qp->comp.rto);
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
		sroce_comp_resend(qp, qp->comp.psn);
		sroce_qp_count(qp, SROCE_CNT_SEQ_NAKS_RCVD, 1);
	}
}

/*
 * An answer was dropped for an ODP fault (sroce_comp_place()): once that
 * fault is done, go back to the oldest unanswered PSN, without spending a
 * retry; the responder answers the READ again from the offset asked for,
 * an atomic from its resource. Under sq_lock, from the requester's run.
 */
void sroce_comp_odp_resend(struct sroce_qp *qp)
{
	if (!qp->comp.odp_resend ||
	    test_bit(SROCE_ODP_FAULT_PENDING,
		     &qp->odp_fault[SROCE_ODP_REQ].pending))
		return;
	qp->comp.odp_resend = false;
	if (sroce_comp_outstanding(qp))
		sroce_comp_resend(qp, qp->comp.psn);
}

/* The oldest WQE failed remotely: complete it with @status, stop the QP. */
static void sroce_comp_remote_error(struct sroce_qp *qp, int status)
{
	if (!sroce_comp_outstanding(qp))
		return;		/* nothing outstanding: a stray NAK */
	sroce_sq_fail_at(qp, qp->sq.idx, status);
}

static void sroce_comp_nak(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	bool lost;

	/* Everything before the NAKed PSN was received (IBA 9.7.5.2.4). */
	sroce_comp_ack_upto(qp, sroce_psn_add(pkt->psn, SROCE_PSN_MASK), &lost);
	if (!lost)
		sroce_comp_progress(qp, pkt->psn);

	switch (sroce_aeth_value(pkt->aeth.syndrome)) {
	case SROCE_NAK_PSN_SEQ_ERR:
		sroce_qp_count(qp, SROCE_CNT_SEQ_NAKS_RCVD, 1);
		/*
		 * Waiting out an RNR NAK: the packets sent behind the refused
		 * one draw sequence NAKs (rdma_rxe sends them), which are not
		 * a new error; the RNR timer resends from that PSN anyway.
		 */
		if (qp->comp.rnr_wait)
			break;
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
		 * (sroce_comp_tlp_fire()), or by the timeout. A NAK past a
		 * READ whose response was lost names a later PSN and counts.
		 * rxe too takes one sequence NAK per retry until an answer
		 * moves it on.
		 */
		if (qp->comp.rewound && pkt->psn == qp->comp.psn)
			break;
		if (!qp->comp.retry_left) {
			sroce_comp_remote_error(qp, IB_WC_RETRY_EXC_ERR);
			return;
		}
		qp->comp.retry_left--;
		/* A NAK past a READ/atomic implies its response was lost. */
		sroce_comp_resend(qp, qp->comp.psn);
		break;
	case SROCE_NAK_INVALID_REQ:
		sroce_qp_count_err_nak(qp, SROCE_NAK_INVALID_REQ, false);
		sroce_comp_remote_error(qp, IB_WC_REM_INV_REQ_ERR);
		break;
	case SROCE_NAK_REMOTE_ACCESS_ERR:
		sroce_qp_count_err_nak(qp, SROCE_NAK_REMOTE_ACCESS_ERR, false);
		sroce_comp_remote_error(qp, IB_WC_REM_ACCESS_ERR);
		break;
	case SROCE_NAK_REMOTE_OP_ERR:
		sroce_qp_count_err_nak(qp, SROCE_NAK_REMOTE_OP_ERR, false);
		sroce_comp_remote_error(qp, IB_WC_REM_OP_ERR);
		break;
	default:
		sroce_qp_count_err_nak(qp, sroce_aeth_value(pkt->aeth.syndrome),
				       false);
		sroce_comp_remote_error(qp, IB_WC_REM_INV_RD_REQ_ERR);
		break;
	}
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
			sroce_comp_remote_error(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->comp.rnr_retry_left--;
	}
	sroce_comp_rtt_hold(qp);
	sroce_sq_rewind(qp, qp->comp.psn);
	qp->comp.rnr_wait = true;
	del_timer(&qp->comp.rto);
	mod_timer(&qp->comp.rnr_timer,
		  jiffies + max_t(unsigned long, usecs_to_jiffies(us), 1));
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
	if (!sroce_comp_outstanding(qp))
		return NULL;
	if (lost) {
		sroce_comp_implied_nak(qp);
		sroce_comp_unblock(qp);
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
	 * requester asks again from here (sroce_comp_odp_resend()).
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
		if (sroce_comp_outstanding(qp) &&
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
		sroce_comp_retire(qp, s, IB_WC_SUCCESS);
		sroce_comp_retire_local(qp);
		sroce_comp_unblock(qp);
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
		sroce_comp_retire(qp, s, IB_WC_SUCCESS);
		sroce_comp_retire_local(qp);
		sroce_comp_unblock(qp);
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
	sroce_comp_retire(qp, s, IB_WC_SUCCESS);
	sroce_comp_retire_local(qp);
	sroce_comp_unblock(qp);
}

static void sroce_comp_ack(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	bool lost;

	sroce_comp_ack_upto(qp, pkt->psn, &lost);
	if (lost)
		sroce_comp_implied_nak(qp);
	else
		sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
	sroce_comp_unblock(qp);
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

	if (!sroce_comp_live(qp)) {
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
	sroce_comp_unblock(qp);
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
	if (!sroce_comp_live(qp)) {
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
	wake = sroce_comp_woke(qp);
	spin_unlock(&qp->sq_lock);
	return wake;
}

/*
 * Local ACK timeout: resend from the oldest unacknowledged PSN, but one
 * packet (asking for an ACK) until the responder answers (comp.probe,
 * sroce_req_window(), sroce_comp_probe_answered()). The IBA leaves the
 * size of a go-back-N resend to the requester; rxe resends the window.
 * On a slow responder most timeouts are spurious: resending the window
 * buried it in up to 128 duplicates per timeout, which pushed its answers
 * past the next timeout, until the retry count ran out (ib_send_bw on the
 * debug kernel of a loaded host: 2364 duplicates at the responder,
 * IBV_WC_RETRY_EXC_ERR at the requester, not one packet lost).
 */
static void sroce_comp_rto_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.rto);
	bool wake;

	spin_lock_bh(&qp->sq_lock);
	if (!sroce_comp_live(qp) || !sroce_comp_outstanding(qp))
		goto out;
	/*
	 * An answer was dropped for a local ODP fault still running: the
	 * answers are not lost, they wait for our own page (as ODP hardware
	 * stalls the requester). No retry is spent and nothing is sent
	 * again; the fault's end does that (sroce_comp_odp_resend()).
	 */
	if (qp->comp.odp_resend &&
	    test_bit(SROCE_ODP_FAULT_PENDING,
		     &qp->odp_fault[SROCE_ODP_REQ].pending)) {
		sroce_comp_rto_arm(qp);
		goto out;
	}
	/*
	 * READ responses kept coming, none of them the one awaited: the
	 * rest of a long READ's stream after one of its responses was lost
	 * or dropped for an ODP fault, which the responder goes on sending
	 * after the request was sent again. The responder is alive and no
	 * resend brings the answer sooner, so no retry is spent: on a slow
	 * guest the requester took longer than the whole retry count to
	 * take in such a stream (a 16 MiB READ into untouched ODP memory on
	 * the debug kernel, odp.sh: 8 timeouts in 1.4 s while the responses
	 * past the miss kept coming). A stream ends, so this ends.
	 */
	if (qp->comp.stale_answers) {
		qp->comp.stale_answers = false;
		sroce_comp_rto_arm(qp);
		goto out;
	}
	sroce_qp_count(qp, SROCE_CNT_TIMEOUTS, 1);
	trace_sroce_timeout(qp->ibqp.qp_num, qp->comp.psn, qp->comp.retry_left,
			    false);
	if (!qp->comp.retry_left) {
		sroce_comp_remote_error(qp, IB_WC_RETRY_EXC_ERR);
		goto out;
	}
	qp->comp.retry_left--;
	sroce_comp_rto_arm(qp);
	qp->comp.probe = true;
	qp->comp.probe_end = qp->req.psn_max;
	sroce_comp_resend(qp, qp->comp.psn);
out:
	wake = sroce_comp_woke(qp);
	spin_unlock_bh(&qp->sq_lock);
	if (wake)
		sroce_qp_kick(qp);
}

/*
 * Waiting for answers with nothing more going out: a loss at the tail
 * of what was sent (its last packets, or their ACK) leaves the responder
 * nothing to see a gap by, and only the tail probe or the local ACK
 * timeout recovers it. With a READ or atomic (or ATOMIC WRITE, FLUSH)
 * outstanding there is no probe: its responses take as long as the
 * responder needs to read, which no round trip predicts, and a probe
 * asks for them all again (rc_order.sh: a 1 MiB READ sent again for
 * nothing, 95 responses twice); a FLUSH sent again early would also
 * learn the wrong ICRC (sroce_sq_rewind()). Those wait for the ACK
 * timeout as before.
 */
static bool sroce_comp_tail_waiting(struct sroce_qp *qp)
{
	return sroce_comp_live(qp) && !qp->comp.probe && !qp->comp.rnr_wait &&
	       !qp->req.rd_atomic && sroce_comp_outstanding(qp) &&
	       qp->req.psn == qp->req.psn_max &&
	       sroce_psn_diff(qp->req.psn_max, qp->comp.psn) > 0;
}

/*
 * The tail probe's wait in jiffies, a whole tick at least: the probe is
 * an ordinary timer, as the ACK timeout is. An hrtimer, started for each
 * message and firing every probe time, cost the rig's 2-byte ping-pong a
 * third of its latency (send_lat 202 us against 152 us: each start and
 * expiry is an emulated timer interrupt in a TCG guest); a timer wheel
 * entry moved at each stop costs nothing measurable, and even at HZ 250
 * (4 to 8 ms) the probe comes long before the 67 ms timeout.
 */
static unsigned long sroce_comp_pto_jiffies(struct sroce_qp *qp)
{
	unsigned long j = nsecs_to_jiffies(sroce_comp_pto(qp)) + 1;
	long rto_left;

	/*
	 * Never after the ACK timeout, as TCP's loss probe (Linux's
	 * tcp_schedule_loss_probe() caps it at the RTO): on a path whose
	 * round trip is above half the timeout, twice the round trip is
	 * later than the timeout, and every lost tail cost a timeout and a
	 * retry (rc_tail_loss_slow.sh: 20 ms each way against 67 ms). The
	 * probe then comes a jiffy before the timeout and restarts it
	 * (sroce_comp_tlp_fire()).
	 */
	if (timer_pending(&qp->comp.rto)) {
		rto_left = (long)(qp->comp.rto.expires - jiffies) - 1;
		if (rto_left > 0 && j > rto_left)
			j = rto_left;
	}
	return j;
}

/*
 * The requester stopped (nothing more to send, or held by the window or a
 * fence) with packets unanswered; sq_lock held. If it sent packets since
 * its last stop, the tail probe is due a probe time from now. A stop that
 * a run without packets ends (an answer woke the requester, with nothing
 * to send) leaves the timer alone. A stop right after new packets went
 * out times the answer of all of them (sroce_comp_rtt_sample()).
 */
void sroce_comp_stopped(struct sroce_qp *qp)
{
	bool fresh = qp->req.psn_max != qp->comp.stop_psn_max;

	if (!sroce_qp_rc(qp) || qp->req.pkts == qp->comp.stop_pkts)
		return;
	qp->comp.stop_pkts = qp->req.pkts;
	qp->comp.stop_psn_max = qp->req.psn_max;
	/*
	 * What went out is under the local ACK timeout, also the packets of
	 * a WQE that is not all sent yet (the window or a fence holds the
	 * rest), which sroce_comp_sent() does not see: with only those out
	 * and every answer lost, nothing else brings the QP back once its
	 * tail probes are spent or before it has a round trip to probe with
	 * (rc_window_timeout.sh; an RNR wait has its own timer).
	 */
	if (sroce_comp_outstanding(qp) && !qp->comp.rnr_wait &&
	    !timer_pending(&qp->comp.rto))
		sroce_comp_rto_arm(qp);
	if (!sroce_comp_tail_waiting(qp))
		return;
	if (fresh && !qp->comp.rtt_timing)
		sroce_comp_rtt_start(qp);
	if (!qp->comp.srtt)
		return;
	qp->comp.tlp_psn = qp->comp.psn;
	mod_timer(&qp->comp.tlp, jiffies + sroce_comp_pto_jiffies(qp));
}

/*
 * Send the tail probe: the last packet sent, asking for an ACK. A
 * responder that has it answers the duplicate with an ACK of all it has
 * (its ACK was lost; IBA 9.7.5.1.2); one that lost just that packet
 * takes it and ACKs; one that lost more sees the probe out of sequence
 * and NAKs the first PSN missing, from which the completer goes back as
 * after any NAK. A responder that already NAKed a gap and sees a packet
 * again that it dropped behind the gap: sroce's NAKs once more
 * (sroce_resp_seq_nak_due()), rxe's drops it (one NAK per gap, C9-114),
 * and a lost NAK is then left to the ACK timeout.
 */
static void sroce_comp_tlp_send(struct sroce_qp *qp)
{
	sroce_comp_go_back(qp, sroce_psn_add(qp->req.psn_max, SROCE_PSN_MASK));
}

/*
 * Tail probe (a loss probe, as TCP's RFC 8985 TLP): no answer moved
 * comp.psn for a probe time (sroce_comp_pto()) since the requester last
 * stopped, or since the last answer this callback saw. One packet goes
 * again (sroce_comp_tlp_send()), at most SROCE_TLP_MAX times per stall;
 * unlike an ACK timeout a probe takes no retry, and a spurious one costs
 * a duplicate and its ACK.
 * The IBA lets a requester resend at any time: the responder answers a
 * duplicate and does not execute it again (9.7.5.1.2). rxe has no such
 * probe: it waits the whole local ACK timeout.
 */
static void sroce_comp_tlp_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.tlp);
	bool wake;

	spin_lock_bh(&qp->sq_lock);
	if (!sroce_comp_tail_waiting(qp) ||
	    qp->comp.tlp_sent >= SROCE_TLP_MAX)
		goto out;
	if (qp->comp.psn != qp->comp.tlp_psn) {
		/* Answers came meanwhile: a whole probe time from now. */
		qp->comp.tlp_psn = qp->comp.psn;
		mod_timer(t, jiffies + sroce_comp_pto_jiffies(qp));
		goto out;
	}
	trace_sroce_timeout(qp->ibqp.qp_num, qp->comp.psn, qp->comp.retry_left,
			    true);
	sroce_comp_tlp_send(qp);
	/* The probe finds a resend lost again: its NAK is a new one. */
	qp->comp.rewound = false;
	qp->comp.tlp_sent++;
	sroce_qp_count(qp, SROCE_CNT_TAIL_PROBES, 1);
	sroce_comp_rtt_start(qp);
	/*
	 * The probe's answer is awaited a whole timeout, as TCP restarts its
	 * RTO after a probe: a probe capped at the timeout's edge would
	 * otherwise always lose the race. A stall gets at most SROCE_TLP_MAX
	 * probes, so a peer that is gone is still found: the retries count
	 * down from the first timeout, SROCE_TLP_MAX timeouts later at most.
	 */
	if (timer_pending(&qp->comp.rto))
		sroce_comp_rto_arm(qp);
out:
	wake = sroce_comp_woke(qp);
	spin_unlock_bh(&qp->sq_lock);
	if (wake)
		sroce_qp_kick(qp);
}

static void sroce_comp_rnr_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.rnr_timer);
	bool wake;

	spin_lock_bh(&qp->sq_lock);
	qp->comp.rnr_wait = false;
	if (sroce_comp_live(qp)) {
		/* Sent again from the refused PSN (sroce_comp_rnr()). */
		qp->comp.rewound = true;
		sroce_comp_rto_arm(qp);
		qp->req.blocked = true;
		sroce_comp_unblock(qp);
	}
	wake = sroce_comp_woke(qp);
	spin_unlock_bh(&qp->sq_lock);
	if (wake)
		sroce_qp_kick(qp);
}

static void sroce_comp_nomem_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.nomem);

	sroce_qp_kick(qp);
}

/*
 * The requester stopped for want of a packet buffer (GFP_ATOMIC, from
 * the page fragments or the slab): it tries again in a millisecond. The
 * ACK timer would bring it back only with a packet in flight, and the
 * first packet of a message has none (a QP then waited for the next
 * doorbell or answer, forever if neither came: debugfs_faults.sh,
 * alloc_fail). Under sq_lock.
 */
void sroce_comp_nomem(struct sroce_qp *qp)
{
	if (sroce_comp_live(qp) && !timer_pending(&qp->comp.nomem))
		mod_timer(&qp->comp.nomem,
			  jiffies + max(1UL, msecs_to_jiffies(1)));
}

void sroce_comp_init(struct sroce_qp *qp)
{
	timer_setup(&qp->comp.rto, sroce_comp_rto_fire, 0);
	timer_setup(&qp->comp.rnr_timer, sroce_comp_rnr_fire, 0);
	timer_setup(&qp->comp.tlp, sroce_comp_tlp_fire, 0);
	timer_setup(&qp->comp.nomem, sroce_comp_nomem_fire, 0);
}

void sroce_comp_timers_stop(struct sroce_qp *qp)
{
	del_timer_sync(&qp->comp.rto);
	del_timer_sync(&qp->comp.rnr_timer);
	del_timer_sync(&qp->comp.tlp);
	del_timer_sync(&qp->comp.nomem);
}
