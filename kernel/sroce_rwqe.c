// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the responder's receive WQEs. One is taken from the QP's RQ, its
 * SRQ or the XRC SRQ a request names, copied out of the ring before any
 * field is used (sroce_rwqe_get()); it completes into the receive CQ with
 * its ring slot freed first (sroce_rwqe_complete()); in the error state
 * the RQ is flushed (sroce_rwqe_flush()). Below the request execution of
 * sroce_resp.c and the responder resources; it calls no engine.
 *
 * State is under qp->resp_lock.
 */
#include "sroce_engine.h"
#include "sroce_rwqe.h"
#include "sroce_ack.h"
#include "sroce_cq.h"
#include "sroce_srq.h"

/* ------------------------------------------------------------------------
 * Receive WQEs
 */

/*
 * Make sure a receive WQE is at hand: 0, -EAGAIN (none), -EIO (bad ring).
 * From a QP's own RQ the WQE keeps its slot until it completes; from an
 * SRQ it is taken out of the ring now (sroce_srq.c).
 */
int sroce_rwqe_get(struct sroce_qp *qp)
{
	u32 prod;
	int err;

	if (qp->resp.have_wqe)
		return 0;
	if (qp->ibqp.srq)
		err = sroce_srq_take(to_ssrq(qp->ibqp.srq), &qp->resp.rwqe);
	else if (qp->xrc_srq)	/* XRC target: the SRQ the request names */
		err = sroce_srq_take(qp->xrc_srq, &qp->resp.rwqe);
	else
		err = sroce_rq_fetch(&qp->rq, qp->max_recv_sge,
				     &qp->resp.rwqe, &prod);
	if (err == -EIO && !qp->ibqp.srq && !qp->xrc_srq)
		sroce_qp_ring_error(qp);
	if (err)
		return err;
	qp->resp.have_wqe = true;
	if (qp->xrc_srq)
		qp->resp.wqe_srqn = qp->xrc_srq->srq_num;
	return 0;
}

/*
 * Free the current receive WQE's ring slot, then complete it (from its
 * copy): a user who sees the completion may post a receive at once, and
 * must find the slot free (sroce_sq_retire() does the same for sends).
 */
void sroce_rwqe_complete(struct sroce_qp *qp, struct sroce_cqe *cqe,
			 bool solicited)
{
	struct sroce_queue *q = &qp->rq;
	struct ib_cq *cq = qp->ibqp.recv_cq;
	struct sroce_srq *srq, *got = NULL;
	bool user = qp->is_user;

	/*
	 * XRC target: the CQ of the SRQ the WQE came from (IBA A14), looked
	 * up again when the request at hand named none (a NAK after it): if
	 * that SRQ is gone, its CQ may be too, and the WQE with it.
	 */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		srq = qp->xrc_srq;
		if (!srq || srq->srq_num != qp->resp.wqe_srqn) {
			got = sroce_xrc_srq_get(qp->sdev, qp->resp.wqe_srqn,
						qp->ibqp.xrcd);
			srq = got;
		}
		qp->resp.have_wqe = false;
		if (!srq)
			return;
		cq = srq->ibsrq.ext.cq;
		user = srq->is_user;
	}
	cqe->wr_id = qp->resp.rwqe.wr_id;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->kernel_qp = user ? 0 : (uintptr_t)&qp->ibqp;
	qp->resp.have_wqe = false;
	if (q->hdr) {
		q->idx++;
		sroce_ring_store_cons(q->hdr, q->idx);
	}
	sroce_cq_post(to_scq(cq), cqe, solicited);
	if (got)
		sroce_srq_put(got);
}

void sroce_rwqe_complete_err(struct sroce_qp *qp, int status)
{
	struct sroce_cqe cqe = {
		.status = status,
		.opcode = IB_WC_RECV,
		.src_qp = qp->dest_qpn,
	};

	sroce_rwqe_complete(qp, &cqe, true);
}

/*
 * The WQE an SRQ QP holds is flushed; the SRQ's other WQEs stay for the
 * other QPs. Then IB_EVENT_QP_LAST_WQE_REACHED (IBA 11.6.3.2), once.
 */
static void sroce_rwqe_flush_srq(struct sroce_qp *qp, struct sroce_cqe *cqe)
{
	bool last;

	spin_lock_bh(&qp->resp_lock);
	sroce_ack_forget(qp);
	if (qp->resp.have_wqe) {
		cqe->wr_id = qp->resp.rwqe.wr_id;
		sroce_cq_post(to_scq(qp->ibqp.recv_cq), cqe, true);
		qp->resp.have_wqe = false;
	}
	last = !qp->resp.last_wqe_sent;
	qp->resp.last_wqe_sent = true;
	spin_unlock_bh(&qp->resp_lock);
	if (last)
		sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/*
 * An XRC target flushes the WQE it holds into the CQ of the SRQ it came
 * from, if that SRQ is still there; the SRQ's other WQEs stay.
 */
static void sroce_rwqe_flush_xrc(struct sroce_qp *qp, struct sroce_cqe *cqe)
{
	spin_lock_bh(&qp->resp_lock);
	sroce_ack_forget(qp);
	if (qp->resp.have_wqe)
		sroce_rwqe_complete(qp, cqe, true);
	spin_unlock_bh(&qp->resp_lock);
}

/*
 * Complete the receive WQEs from the oldest up to @end with @cqe, at most
 * SROCE_FLUSH_BATCH of them, under resp_lock. False when there is nothing
 * more to do (@end reached or passed, or the QP left the error state).
 */
static bool sroce_rwqe_flush_batch(struct sroce_qp *qp, struct sroce_cqe *cqe,
				   u32 end)
{
	struct sroce_queue *q = &qp->rq;
	const struct sroce_recv_wqe *w;
	u32 n, left;
	bool more;

	spin_lock_bh(&qp->resp_lock);
	left = end - q->idx;
	if (READ_ONCE(qp->state) != IB_QPS_ERR || left > q->num_entries) {
		spin_unlock_bh(&qp->resp_lock);
		return false;
	}
	qp->resp.res_pending = 0;
	for (n = 0; n < min_t(u32, left, SROCE_FLUSH_BATCH); n++) {
		/* The WQE the responder holds is the one at the RQ's cons. */
		if (qp->resp.have_wqe) {
			cqe->wr_id = qp->resp.rwqe.wr_id;
			qp->resp.have_wqe = false;
		} else {
			w = sroce_queue_entry(q, q->idx);
			cqe->wr_id = READ_ONCE(w->wr_id);
		}
		sroce_cq_post(to_scq(qp->ibqp.recv_cq), cqe, true);
		q->idx++;
	}
	sroce_ring_store_cons(q->hdr, q->idx);
	more = q->idx != end;
	spin_unlock_bh(&qp->resp_lock);
	return more;
}

/*
 * Error state: complete the receive WQEs with WR_FLUSH_ERR, in order.
 * Process context; as sroce_sq_flush(), in batches up to the prod read
 * at the start, giving the CPU up between them.
 */
void sroce_rwqe_flush(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->rq;
	struct sroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.kernel_qp = qp->is_user ? 0 : (uintptr_t)&qp->ibqp,
	};
	u32 end, held;

	if (qp->ibqp.srq) {
		sroce_ack_release(qp);
		sroce_rwqe_flush_srq(qp, &cqe);
		return;
	}
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		sroce_ack_release(qp);
		sroce_rwqe_flush_xrc(qp, &cqe);
		return;
	}
	if (!q->hdr)
		return;
	sroce_ack_release(qp);
	spin_lock_bh(&qp->resp_lock);
	sroce_ack_forget(qp);
	end = sroce_ring_load_prod(q->hdr);
	/* A WQE the responder holds completes, wherever prod moved back to. */
	held = q->idx + qp->resp.have_wqe;
	if (!sroce_ring_prod_valid_read(end, q->idx, held, q->num_entries))
		end = held;
	spin_unlock_bh(&qp->resp_lock);

	while (sroce_rwqe_flush_batch(qp, &cqe, end))
		cond_resched();
}
