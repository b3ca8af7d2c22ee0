// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: retransmission, the requester's clocks: the local ACK timeout,
 * the RNR wait, the tail probe that finds a loss at the end of what was
 * sent in about a round trip instead of a timeout, the retry after a
 * failed packet buffer, the round-trip time they are set by, and the
 * go-back-N decisions they make. The requester tells it what it sent and
 * where it stopped (sroce_retry_sent(), sroce_retry_stopped()); the
 * completer, what came back. It calls neither: its timers wake the
 * requester through the QP's work item.
 *
 * State is the completer's (qp->comp), under qp->sq_lock.
 */
#include "sroce_retry.h"
#include "sroce_trace.h"

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

static u64 sroce_retry_pto(struct sroce_qp *qp)
{
	return max_t(u64, 2 * qp->comp.srtt, SROCE_TLP_MIN_NS) <<
	       qp->comp.tlp_sent;
}

static void sroce_retry_rto_arm(struct sroce_qp *qp)
{
	u64 ns = sroce_local_ack_timeout_ns(qp->timeout);

	if (!ns || !sroce_retry_live(qp))
		return;
	/* One jiffy more: the timeout is a minimum, never cut short. */
	mod_timer(&qp->comp.rto, jiffies + nsecs_to_jiffies(ns) + 1);
}

/*
 * Wake the requester if it stopped for a reason an answer may clear: it
 * runs once sq_lock is dropped (sroce_retry_woke()).
 */
void sroce_retry_unblock(struct sroce_qp *qp)
{
	if (qp->req.blocked) {
		qp->req.blocked = false;
		qp->comp.wake_req = true;
	}
}

/* Whether the requester must run now; called with sq_lock held. */
bool sroce_retry_woke(struct sroce_qp *qp)
{
	bool wake = qp->comp.wake_req || qp->req.run_on_ack;

	qp->comp.wake_req = false;
	qp->req.run_on_ack = false;
	return wake;
}

/*
 * The requester has sent every packet of the WQE before req.idx. UC and
 * UD WQEs complete now (no response will come); RC ones wait for the
 * ACK under the local ACK timeout. Called with sq_lock held.
 */
void sroce_retry_sent(struct sroce_qp *qp)
{
	if (!sroce_qp_rc(qp)) {
		qp->req.started_end = qp->req.idx;
		while (qp->sq.idx != qp->req.idx)
			sroce_sq_retire(qp, sroce_swqe_get(qp, qp->sq.idx),
					IB_WC_SUCCESS);
		return;
	}
	sroce_sq_retire_local(qp);
	if (!sroce_sq_outstanding(qp))
		return;
	if (!timer_pending(&qp->comp.rto))
		sroce_retry_rto_arm(qp);
}

/* Go back to @psn and wake the requester to send from there at once. */
static void sroce_retry_go_back(struct sroce_qp *qp, u32 psn)
{
	trace_sroce_retransmit(qp->ibqp.qp_num, qp->req.psn, psn);
	sroce_sq_rewind(qp, psn);
	qp->req.blocked = true;
	sroce_retry_unblock(qp);
}

/*
 * A loss found (NAK, ACK timeout, implied NAK, RNR NAK): an answer until
 * all that was sent is answered measures the recovery, not the path, and
 * times nothing (Karn's rule; sroce_retry_rtt_sample()).
 */
static void sroce_retry_rtt_hold(struct sroce_qp *qp)
{
	qp->comp.rtt_timing = false;
	qp->comp.rtt_hold = true;
	qp->comp.rtt_hold_psn = qp->req.psn_max;
}

/* Go back to @psn after a loss. */
void sroce_retry_resend(struct sroce_qp *qp, u32 psn)
{
	/* Whatever an ODP fault's end would have asked for again, this does. */
	qp->comp.odp_resend = false;
	qp->comp.rewound = true;
	sroce_retry_rtt_hold(qp);
	sroce_retry_go_back(qp, psn);
}

/* Time the answer of everything sent so far, unless a loss is recovered. */
static void sroce_retry_rtt_start(struct sroce_qp *qp)
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
 * across a loss's recovery is not taken (sroce_retry_rtt_hold()): taken,
 * a few ACK timeouts had pushed the probe time past the timeout itself
 * (the first version of rc_tail_loss.sh: 83 timeouts and 5 probes
 * instead of 9 and 134). A tail probe starts the sample again
 * (sroce_retry_tlp_fire()): the answer to a probe that found a loss then
 * times the probe's round trip, and the answer to the original after a
 * spurious probe a time a probe time shorter than its round trip, long
 * enough on a path that became slower to raise the average (rc_netem.sh's
 * 200 ms link after its 3 ms one), where holding every sample across a
 * probe would leave the probes spurious for good.
 */
static void sroce_retry_rtt_sample(struct sroce_qp *qp)
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
 * An answer moved comp.psn forward: the probes of the stall are spent no
 * more, a round-trip sample may end, the retry counters are full again
 * and the local ACK timer restarts (or stops, with nothing outstanding).
 */
void sroce_retry_progress(struct sroce_qp *qp)
{
	u32 psn = qp->comp.psn;

	qp->comp.tlp_sent = 0;
	if (qp->comp.rtt_hold &&
	    sroce_psn_diff(psn, qp->comp.rtt_hold_psn) >= 0)
		qp->comp.rtt_hold = false;
	if (qp->comp.rtt_timing &&
	    sroce_psn_diff(psn, qp->comp.rtt_psn) >= 0)
		sroce_retry_rtt_sample(qp);
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_retry_left = qp->rnr_retry;
	/*
	 * The tail probe is left armed: the next stop moves it anyway, and
	 * if it fires first it finds nothing to do.
	 */
	if (sroce_sq_outstanding(qp))
		sroce_retry_rto_arm(qp);
	else
		del_timer(&qp->comp.rto);
}

/*
 * An answer was dropped for an ODP fault (sroce_comp_place()): once that
 * fault is done, go back to the oldest unanswered PSN, without spending a
 * retry; the responder answers the READ again from the offset asked for,
 * an atomic from its resource. Under sq_lock, from the requester's run.
 */
void sroce_retry_odp_resend(struct sroce_qp *qp)
{
	if (!qp->comp.odp_resend ||
	    test_bit(SROCE_ODP_FAULT_PENDING,
		     &qp->odp_fault[SROCE_ODP_REQ].pending))
		return;
	qp->comp.odp_resend = false;
	if (sroce_sq_outstanding(qp))
		sroce_retry_resend(qp, qp->comp.psn);
}

/* The oldest WQE failed remotely: complete it with @status, stop the QP. */
void sroce_retry_remote_error(struct sroce_qp *qp, int status)
{
	if (!sroce_sq_outstanding(qp))
		return;		/* nothing outstanding: a stray NAK */
	sroce_sq_fail_at(qp, qp->sq.idx, status);
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
static void sroce_retry_rto_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.rto);
	bool wake;

	spin_lock_bh(&qp->sq_lock);
	if (!sroce_retry_live(qp) || !sroce_sq_outstanding(qp))
		goto out;
	/*
	 * An answer was dropped for a local ODP fault still running: the
	 * answers are not lost, they wait for our own page (as ODP hardware
	 * stalls the requester). No retry is spent and nothing is sent
	 * again; the fault's end does that (sroce_retry_odp_resend()).
	 */
	if (qp->comp.odp_resend &&
	    test_bit(SROCE_ODP_FAULT_PENDING,
		     &qp->odp_fault[SROCE_ODP_REQ].pending)) {
		sroce_retry_rto_arm(qp);
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
		sroce_retry_rto_arm(qp);
		goto out;
	}
	sroce_qp_count(qp, SROCE_CNT_TIMEOUTS, 1);
	trace_sroce_timeout(qp->ibqp.qp_num, qp->comp.psn, qp->comp.retry_left,
			    false);
	if (!qp->comp.retry_left) {
		sroce_retry_remote_error(qp, IB_WC_RETRY_EXC_ERR);
		goto out;
	}
	qp->comp.retry_left--;
	sroce_retry_rto_arm(qp);
	qp->comp.probe = true;
	qp->comp.probe_end = qp->req.psn_max;
	sroce_retry_resend(qp, qp->comp.psn);
out:
	wake = sroce_retry_woke(qp);
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
static bool sroce_retry_tail_waiting(struct sroce_qp *qp)
{
	return sroce_retry_live(qp) && !qp->comp.probe && !qp->comp.rnr_wait &&
	       !qp->req.rd_atomic && sroce_sq_outstanding(qp) &&
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
static unsigned long sroce_retry_pto_jiffies(struct sroce_qp *qp)
{
	unsigned long j = nsecs_to_jiffies(sroce_retry_pto(qp)) + 1;
	long rto_left;

	/*
	 * Never after the ACK timeout, as TCP's loss probe (Linux's
	 * tcp_schedule_loss_probe() caps it at the RTO): on a path whose
	 * round trip is above half the timeout, twice the round trip is
	 * later than the timeout, and every lost tail cost a timeout and a
	 * retry (rc_tail_loss_slow.sh: 20 ms each way against 67 ms). The
	 * probe then comes a jiffy before the timeout and restarts it
	 * (sroce_retry_tlp_fire()).
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
 * out times the answer of all of them (sroce_retry_rtt_sample()).
 */
void sroce_retry_stopped(struct sroce_qp *qp)
{
	bool fresh = qp->req.psn_max != qp->comp.stop_psn_max;

	if (!sroce_qp_rc(qp) || qp->req.pkts == qp->comp.stop_pkts)
		return;
	qp->comp.stop_pkts = qp->req.pkts;
	qp->comp.stop_psn_max = qp->req.psn_max;
	/*
	 * What went out is under the local ACK timeout, also the packets of
	 * a WQE that is not all sent yet (the window or a fence holds the
	 * rest), which sroce_retry_sent() does not see: with only those out
	 * and every answer lost, nothing else brings the QP back once its
	 * tail probes are spent or before it has a round trip to probe with
	 * (rc_window_timeout.sh; an RNR wait has its own timer).
	 */
	if (sroce_sq_outstanding(qp) && !qp->comp.rnr_wait &&
	    !timer_pending(&qp->comp.rto))
		sroce_retry_rto_arm(qp);
	if (!sroce_retry_tail_waiting(qp))
		return;
	if (fresh && !qp->comp.rtt_timing)
		sroce_retry_rtt_start(qp);
	if (!qp->comp.srtt)
		return;
	qp->comp.tlp_psn = qp->comp.psn;
	mod_timer(&qp->comp.tlp, jiffies + sroce_retry_pto_jiffies(qp));
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
static void sroce_retry_tlp_send(struct sroce_qp *qp)
{
	sroce_retry_go_back(qp, sroce_psn_add(qp->req.psn_max, SROCE_PSN_MASK));
}

/*
 * Tail probe (a loss probe, as TCP's RFC 8985 TLP): no answer moved
 * comp.psn for a probe time (sroce_retry_pto()) since the requester last
 * stopped, or since the last answer this callback saw. One packet goes
 * again (sroce_retry_tlp_send()), at most SROCE_TLP_MAX times per stall;
 * unlike an ACK timeout a probe takes no retry, and a spurious one costs
 * a duplicate and its ACK.
 * The IBA lets a requester resend at any time: the responder answers a
 * duplicate and does not execute it again (9.7.5.1.2). rxe has no such
 * probe: it waits the whole local ACK timeout.
 */
static void sroce_retry_tlp_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.tlp);
	bool wake;

	spin_lock_bh(&qp->sq_lock);
	if (!sroce_retry_tail_waiting(qp) ||
	    qp->comp.tlp_sent >= SROCE_TLP_MAX)
		goto out;
	if (qp->comp.psn != qp->comp.tlp_psn) {
		/* Answers came meanwhile: a whole probe time from now. */
		qp->comp.tlp_psn = qp->comp.psn;
		mod_timer(t, jiffies + sroce_retry_pto_jiffies(qp));
		goto out;
	}
	trace_sroce_timeout(qp->ibqp.qp_num, qp->comp.psn, qp->comp.retry_left,
			    true);
	sroce_retry_tlp_send(qp);
	/* The probe finds a resend lost again: its NAK is a new one. */
	qp->comp.rewound = false;
	qp->comp.tlp_sent++;
	sroce_qp_count(qp, SROCE_CNT_TAIL_PROBES, 1);
	sroce_retry_rtt_start(qp);
	/*
	 * The probe's answer is awaited a whole timeout, as TCP restarts its
	 * RTO after a probe: a probe capped at the timeout's edge would
	 * otherwise always lose the race. A stall gets at most SROCE_TLP_MAX
	 * probes, so a peer that is gone is still found: the retries count
	 * down from the first timeout, SROCE_TLP_MAX timeouts later at most.
	 */
	if (timer_pending(&qp->comp.rto))
		sroce_retry_rto_arm(qp);
out:
	wake = sroce_retry_woke(qp);
	spin_unlock_bh(&qp->sq_lock);
	if (wake)
		sroce_qp_kick(qp);
}

/*
 * An RNR NAK refused the request at comp.psn: go back to it, and send it
 * again after @us (the responder's RNR timer), not on the ACK timeout.
 */
void sroce_retry_rnr_wait(struct sroce_qp *qp, u32 us)
{
	sroce_retry_rtt_hold(qp);
	sroce_sq_rewind(qp, qp->comp.psn);
	qp->comp.rnr_wait = true;
	del_timer(&qp->comp.rto);
	mod_timer(&qp->comp.rnr_timer,
		  jiffies + max_t(unsigned long, usecs_to_jiffies(us), 1));
}

static void sroce_retry_rnr_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.rnr_timer);
	bool wake;

	spin_lock_bh(&qp->sq_lock);
	qp->comp.rnr_wait = false;
	if (sroce_retry_live(qp)) {
		/* Sent again from the refused PSN (sroce_comp_rnr()). */
		qp->comp.rewound = true;
		sroce_retry_rto_arm(qp);
		qp->req.blocked = true;
		sroce_retry_unblock(qp);
	}
	wake = sroce_retry_woke(qp);
	spin_unlock_bh(&qp->sq_lock);
	if (wake)
		sroce_qp_kick(qp);
}

static void sroce_retry_nomem_fire(struct timer_list *t)
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
void sroce_retry_nomem(struct sroce_qp *qp)
{
	if (sroce_retry_live(qp) && !timer_pending(&qp->comp.nomem))
		mod_timer(&qp->comp.nomem,
			  jiffies + max(1UL, msecs_to_jiffies(1)));
}

void sroce_retry_init(struct sroce_qp *qp)
{
	timer_setup(&qp->comp.rto, sroce_retry_rto_fire, 0);
	timer_setup(&qp->comp.rnr_timer, sroce_retry_rnr_fire, 0);
	timer_setup(&qp->comp.tlp, sroce_retry_tlp_fire, 0);
	timer_setup(&qp->comp.nomem, sroce_retry_nomem_fire, 0);
}

void sroce_retry_timers_stop(struct sroce_qp *qp)
{
	del_timer_sync(&qp->comp.rto);
	del_timer_sync(&qp->comp.rnr_timer);
	del_timer_sync(&qp->comp.tlp);
	del_timer_sync(&qp->comp.nomem);
}
