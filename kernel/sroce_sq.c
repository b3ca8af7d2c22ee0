// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the send-queue core that the requester (sroce_req.c), the
 * completer (sroce_comp.c) and retransmission (sroce_retry.c) share: where
 * the requester restarts after a NAK or a timeout (go-back-N over the
 * shadow WQEs), retiring a WQE, send completions, a WQE's failure, and
 * the flush of the whole queue in the error state.
 * The shadow slots themselves are reached with sroce_swqe_get().
 *
 * rxe keeps these in its requester and completer files, which then call
 * each other; here both engines call down into this file, and the
 * completer never calls the requester: it tells its caller to run it.
 * All of it runs under qp->sq_lock, except the flush, which takes it.
 */
#include "sroce_sq.h"
#include "sroce_cq.h"

/*
 * The ICRC of the FLUSHes we send. rdma_rxe (6.2 through at least 6.12)
 * checks a FLUSH against its own variant of the ICRC and silently drops
 * one with the IBA ICRC (sroce_icrc.h); a device that follows the IBA does
 * the opposite. We cannot tell the two apart, so by default a QP starts
 * with the IBA ICRC and, while it has not learnt its peer's, switches to
 * the other variant when it must send a FLUSH again from the FLUSH itself
 * (ACK timeout, or the sequence NAK for the packet behind it:
 * sroce_sq_rewind()). A FLUSH answered after it went out with one variant
 * only teaches the QP that variant (sroce_sq_flush_answered()); one sent
 * both ways teaches nothing. Either peer answers the second try at the
 * latest; the cost is one retry per QP. Our own receive path takes both.
 */
int sroce_flush_icrc;
module_param_named(flush_icrc, sroce_flush_icrc, int, 0644);
MODULE_PARM_DESC(flush_icrc,
		 "ICRC of RDMA FLUSH requests: 0 learn per QP (default), 1 IBA, 2 rdma_rxe 6.2-6.12");

static void sroce_sq_cqe(struct sroce_qp *qp, struct sroce_swqe *s,
			 u64 wr_id, int status)
{
	struct sroce_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = s ? s->wc_opcode : IB_WC_SEND,
		.byte_len = s ? s->length : 0,
		.qp_num = qp->ibqp.qp_num,
		.kernel_qp = qp->is_user ? 0 : (uintptr_t)&qp->ibqp,
	};

	sroce_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false);
}

/*
 * WQE @idx failed with @status (IBA: the QP enters the error state). The
 * status is kept in the shadow slot; the flush then completes the WQEs in
 * order, this one with its status and the rest with WR_FLUSH_ERR.
 */
void sroce_sq_fail_at(struct sroce_qp *qp, u32 idx, int status)
{
	struct sroce_swqe *s = sroce_swqe_get(qp, idx);

	s->failed = true;
	s->status = status;
	sroce_qp_fatal(qp);
}

/*
 * Going back to the PSN of @s: is it a FLUSH we sent, not answered, whose
 * ICRC the peer may have refused (see sroce_flush_icrc)?
 */
static bool sroce_sq_resends_flush(struct sroce_qp *qp,
				   const struct sroce_swqe *s)
{
	return s->w.opcode == SROCE_WR_FLUSH && s->flush_sent &&
	       !qp->req.flush_known && !READ_ONCE(sroce_flush_icrc);
}

/* The answer to FLUSH @s came: learn the ICRC it went out with, if one. */
void sroce_sq_flush_answered(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	if (qp->req.flush_known || READ_ONCE(sroce_flush_icrc))
		return;
	if (s->flush_sent == SROCE_FLUSH_SENT_IBA ||
	    s->flush_sent == SROCE_FLUSH_SENT_RXE) {
		qp->req.flush_rxe = s->flush_sent == SROCE_FLUSH_SENT_RXE;
		qp->req.flush_known = true;
	}
}

/*
 * Continue sending from @psn (go-back-N, IBA 9.7.4.1.5), which lies in
 * [comp.psn, req.psn_max]: back after a NAK or timeout, or forward when
 * ACKs overtook an earlier rewind. The WQE that holds @psn is sent again
 * from that packet on, and every later WQE from its start; their shadow
 * slots are still valid, nothing is re-read from the ring. Called with
 * sq_lock held.
 */
void sroce_sq_rewind(struct sroce_qp *qp, u32 psn)
{
	u32 mtu = sroce_qp_mtu(qp), idx;
	struct sroce_swqe *s;
	bool back = sroce_psn_diff(psn, qp->req.psn) < 0;

	qp->req.rd_atomic = 0;
	for (idx = qp->sq.idx; idx != qp->req.started_end; idx++) {
		s = sroce_swqe_get(qp, idx);
		if (sroce_psn_diff(psn, s->first_psn) >= 0 &&
		    sroce_psn_diff(psn, sroce_psn_add(s->first_psn, s->npsn)) < 0)
			break;
		if (s->kind == SROCE_SWQE_READ || s->kind == SROCE_SWQE_ATOMIC)
			qp->req.rd_atomic++;
	}
	qp->req.idx = idx;
	qp->req.psn = psn;
	qp->req.noack_pkts = 0;
	if (idx == qp->req.started_end) {
		/* Everything sent so far is accounted for. */
		qp->req.fetched = false;
		return;
	}
	s = sroce_swqe_get(qp, idx);
	qp->req.fetched = true;
	if (back && s->first_psn == psn && sroce_sq_resends_flush(qp, s))
		qp->req.flush_rxe = !qp->req.flush_rxe;
	if (s->kind == SROCE_SWQE_READ || s->kind == SROCE_SWQE_ATOMIC)
		qp->req.rd_atomic++;
	if (s->kind == SROCE_SWQE_ATOMIC) {
		s->sent = 0;
	} else {
		s->sent = sroce_psn_diff(psn, s->first_psn) * mtu;
		if (s->kind == SROCE_SWQE_READ)
			s->done = s->sent;
	}
	if (back)
		sroce_qp_count(qp, SROCE_CNT_RETRANSMITS, 1);
}

/*
 * Flush the WQEs from the oldest up to @end, at most SROCE_FLUSH_BATCH of
 * them, under sq_lock. False when there is nothing more to do: @end
 * reached (or passed by another flusher), or the QP left the error state.
 */
static bool sroce_sq_flush_batch(struct sroce_qp *qp, u32 end)
{
	struct sroce_queue *q = &qp->sq;
	const struct sroce_send_wqe *w;
	struct sroce_swqe *s;
	u32 n, left;
	bool more;

	spin_lock_bh(&qp->sq_lock);
	left = end - q->idx;
	if (READ_ONCE(qp->state) != IB_QPS_ERR || left > q->num_entries) {
		spin_unlock_bh(&qp->sq_lock);
		return false;
	}
	for (n = 0; n < min_t(u32, left, SROCE_FLUSH_BATCH); n++) {
		if (q->idx != qp->req.fetch_end) {
			s = sroce_swqe_get(qp, q->idx);
			sroce_sq_cqe(qp, s, s->w.wr_id, s->failed ?
				       s->status : IB_WC_WR_FLUSH_ERR);
		} else {
			w = sroce_queue_entry(q, q->idx);
			sroce_sq_cqe(qp, NULL, READ_ONCE(w->wr_id),
				     IB_WC_WR_FLUSH_ERR);
			qp->req.fetch_end++;
		}
		q->idx++;
	}
	sroce_ring_store_cons(q->hdr, q->idx);
	/* Nothing is sent in Error: no WQE in [sq.idx, fetch_end) is started. */
	qp->req.idx = qp->req.fetch_end;
	qp->req.started_end = qp->req.fetch_end;
	qp->req.fetched = false;
	qp->req.rd_atomic = 0;
	qp->comp.rnr_wait = false;
	more = q->idx != end;
	spin_unlock_bh(&qp->sq_lock);
	return more;
}

/*
 * The QP is in the error state: complete every WQE from the oldest to the
 * ring's prod, in order (IBA 10.3.1.2.6). WQEs the requester has copied
 * are completed from their shadow slots (a failed one with its own
 * status), the rest from the ring. Process context: the ring may hold
 * 2^20 WQEs, so they are flushed SROCE_FLUSH_BATCH at a time under
 * sq_lock, giving the CPU up between batches. prod is read once: WQEs
 * posted meanwhile are flushed by the doorbell user space rings for them
 * (SROCE_RING_F_FLUSH), so one call never chases a producer that keeps
 * posting. Each WQE is completed by exactly one batch, in ring order,
 * also when the doorbell and the work item flush at the same time.
 */
void sroce_sq_flush(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq;
	u32 end;

	spin_lock_bh(&qp->sq_lock);
	end = sroce_ring_load_prod(q->hdr);
	/* Every fetched WQE completes, wherever prod moved back to. */
	if (!sroce_ring_prod_valid_read(end, q->idx, qp->req.fetch_end,
					q->num_entries))
		end = qp->req.fetch_end;
	spin_unlock_bh(&qp->sq_lock);

	while (sroce_sq_flush_batch(qp, end))
		cond_resched();
}

/* The completion opcode of a send WR opcode (enum ib_wr_opcode). */
u8 sroce_wr_to_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_WC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return SROCE_WC_FLUSH;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Retire the oldest WQE: free its ring slot, then a CQE if it asks for
 * one. In that order: a user who sees the completion may post at once
 * (ibv_rc_pingpong with one send WR), and its post must find the slot
 * free. The CQE is built from the shadow slot, which no one reuses while
 * sq_lock is held.
 */
void sroce_sq_retire(struct sroce_qp *qp, struct sroce_swqe *s,
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

/*
 * Complete the memory operations (no PSN) at the head of the send queue
 * once everything before them is answered: whoever answers the WQE before
 * one calls this, the requester when it goes past one (sroce_retry_sent())
 * and the READ and atomic answers, after which nothing else may come for
 * the QP (a READ or atomic followed only by a BIND_MW).
 */
void sroce_sq_retire_local(struct sroce_qp *qp)
{
	struct sroce_swqe *s;

	while (sroce_sq_outstanding(qp)) {
		s = sroce_swqe_get(qp, qp->sq.idx);
		if (s->kind != SROCE_SWQE_LOCAL || s->first_psn != qp->comp.psn)
			break;
		sroce_sq_retire(qp, s, IB_WC_SUCCESS);
	}
}
