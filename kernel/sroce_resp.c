// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the responder (IBA 9.7.5.1, responder side of RC and UC, and UD
 * receive). It runs in softirq context for every request packet: PSN and
 * opcode-sequence checks, SEND placement into the receive WQE, RDMA WRITE
 * placement by rkey, READ and atomic execution, and the ACK, NAK or RNR NAK
 * that answers. READ responses longer than a burst continue from the QP's
 * work item.
 *
 * Receive WQEs are copied out of the RQ ring before use; every rkey is
 * looked up and checked (PD, access rights, bounds) for every packet.
 * State is under qp->resp_lock; answers are built under it and sent after.
 */
#include <linux/delay.h>
#include <linux/if_vlan.h>

#include "sroce_engine.h"
#include "sroce_cq.h"
#include "sroce_srq.h"
#include "sroce_net.h"
#include "sroce_compat.h"
#include "sroce_trace.h"

/* READ response packets built per softirq or work-item pass. */
#define SROCE_READ_BURST	32
/* Rounds of sending what others queued meanwhile, per context. */
#define SROCE_RESP_TX_ROUNDS	4
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

/* What a request packet asks of the responder after processing. */
enum sroce_resp_result {
	SROCE_RESP_OK,		/* ACK if requested */
	SROCE_RESP_ANSWERED,	/* READ/atomic: response already built */
	SROCE_RESP_RNR,		/* no receive WQE: RNR NAK */
	SROCE_RESP_NAK_INV,	/* invalid request */
	SROCE_RESP_NAK_ACC,	/* remote access error */
	SROCE_RESP_NAK_OP,	/* remote operational error */
	SROCE_RESP_DROP,	/* silently dropped (UC, UD) */
};

static struct sk_buff *sroce_resp_skb(struct sroce_qp *qp,
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
static bool sroce_resp_ack(struct sroce_qp *qp, struct sk_buff_head *out,
			   u32 psn, u8 syndrome, u32 msn)
{
	struct sroce_pkt pkt = {
		.opcode = SROCE_OP_RC_ACKNOWLEDGE,
		.psn = psn,
		.aeth = { .syndrome = syndrome, .msn = msn },
	};
	struct sk_buff *skb = sroce_resp_skb(qp, &pkt, 0);

	if (!skb)
		return false;
	trace_sroce_ack_sent(qp->ibqp.qp_num, psn, syndrome, msn);
	__skb_queue_tail(out, skb);
	return true;
}

static u8 sroce_resp_ack_syndrome(void)
{
	/* End-to-end credits are not used: "invalid" credit count. */
	return sroce_aeth_ack(SROCE_AETH_CREDITS_INVALID);
}

/*
 * XRC target: what a request or answer of SRQ @srqn works with. Pushed
 * around each one, under resp_lock: the SRQ (referenced) and its PD in
 * qp->xrc_srq and qp->xrc_pd, restored after (an answer built while a
 * request executes may belong to another SRQ). An SRQ gone, or not of the
 * target's domain, leaves both NULL: every key check then fails.
 */
struct sroce_xrc_ctx {
	struct sroce_srq *srq;		/* what was there before */
	struct ib_pd *pd;
	struct sroce_srq *got;		/* referenced here, put by pop */
};

static void sroce_resp_xrc_push(struct sroce_qp *qp, u32 srqn,
				struct sroce_xrc_ctx *ctx)
{
	ctx->srq = qp->xrc_srq;
	ctx->pd = qp->xrc_pd;
	ctx->got = NULL;
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT ||
	    (qp->xrc_srq && qp->xrc_srq->srq_num == srqn))
		return;
	ctx->got = sroce_xrc_srq_get(qp->sdev, srqn, qp->ibqp.xrcd);
	qp->xrc_srq = ctx->got;
	qp->xrc_pd = ctx->got ? ctx->got->ibsrq.pd : NULL;
}

static void sroce_resp_xrc_pop(struct sroce_qp *qp, struct sroce_xrc_ctx *ctx)
{
	qp->xrc_srq = ctx->srq;
	qp->xrc_pd = ctx->pd;
	if (ctx->got)
		sroce_srq_put(ctx->got);
}

/* ------------------------------------------------------------------------
 * Receive WQEs
 */

/*
 * Make sure a receive WQE is at hand: 0, -EAGAIN (none), -EIO (bad ring).
 * From a QP's own RQ the WQE keeps its slot until it completes; from an
 * SRQ it is taken out of the ring now (sroce_srq.c).
 */
static int sroce_resp_get_wqe(struct sroce_qp *qp)
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
 * must find the slot free (sroce_comp_retire() does the same for sends).
 */
static void sroce_resp_complete(struct sroce_qp *qp, struct sroce_cqe *cqe,
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

static void sroce_resp_complete_err(struct sroce_qp *qp, int status)
{
	struct sroce_cqe cqe = {
		.status = status,
		.opcode = IB_WC_RECV,
		.src_qp = qp->dest_qpn,
	};

	sroce_resp_complete(qp, &cqe, true);
}

/* ------------------------------------------------------------------------
 * RC/UC requests
 */

/*
 * The fault knob write_delay_ms: a WRITE packet holds its region, between
 * the lookup and the copy, that long (busy: this is the receive context),
 * so that an invalidation on another CPU falls inside (frwr_inval.sh).
 * Each wait counts as a fault injected.
 */
static void sroce_resp_write_delay(struct sroce_dev *sdev)
{
	u32 ms = READ_ONCE(sdev->fault.write_delay_ms);

	if (unlikely(ms)) {
		sroce_dev_count(sdev, SROCE_CNT_FAULTS, 1);
		mdelay(min(ms, 2000U));
	}
}

/* Look up and check an rkey for @len bytes at @va with @access. */
static struct sroce_mr *sroce_resp_mr(struct sroce_qp *qp, u32 rkey, u64 va,
				      u64 len, int access)
{
	if (!(qp->access_flags & access))
		return NULL;
	return sroce_rkey_get(qp, rkey, va, len, access);
}

/*
 * Execute the atomic of @res, once: with the rkey looked up again, so that
 * a region deregistered meanwhile is not touched (it fails, and is NAKed
 * in its turn).
 */
static int sroce_resp_exec_atomic(struct sroce_qp *qp, struct sroce_res *res)
{
	struct sroce_xrc_ctx ctx;
	struct sroce_mr *mr;
	int err = -EACCES;

	if (res->executed)
		return 0;
	sroce_resp_xrc_push(qp, res->xrc_srqn, &ctx);
	mr = sroce_resp_mr(qp, res->rkey, res->va, sizeof(u64),
			   IB_ACCESS_REMOTE_ATOMIC);
	sroce_resp_xrc_pop(qp, &ctx);
	if (mr) {
		err = sroce_mr_atomic(mr, res->va, res->cmp_swap, res->compare,
				      res->swap_add, &res->orig);
		/*
		 * An ODP page invalidated since the request was accepted
		 * (which faulted it in): not executed yet; the fault kicks
		 * the QP.
		 */
		if (err == -EAGAIN)
			err = sroce_odp_fault(mr, res->va, sizeof(u64),
					      sizeof(u64), true, qp,
					      SROCE_ODP_RESP);
		sroce_mr_put(mr);
		if (err == -EAGAIN)
			return err;
	}
	res->executed = true;
	res->failed = err != 0;
	return 0;
}

/*
 * Execute every accepted CMP_SWAP and FETCH_ADD still waiting for its
 * turn, oldest first; their ACKs still go out in their turn. A request
 * whose effect must come after theirs calls it before it acts: a SEND
 * with Invalidate (an atomic accepted under a key is not undone by a
 * later invalidation of that key, and once the receive reports the key
 * invalid nothing may use it), and an ATOMIC WRITE (its store is a
 * release of every earlier one, IBA A19.4.2). The READs before them then
 * may read the atomics' results: the IBA lets a later request overtake an
 * earlier READ unless the requester fences it (IBA 10.8.3.3).
 */
static int sroce_resp_atomics_now(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_res *res;
	u32 i;

	for (i = rs->res_pending; i > 0; i--) {
		res = &rs->res[(rs->res_head + rs->res_n - i) % rs->res_n];
		if (res->atomic && sroce_resp_exec_atomic(qp, res))
			return -EAGAIN;
	}
	return 0;
}

static enum sroce_resp_result sroce_resp_send(struct sroce_qp *qp,
					      struct sk_buff *skb,
					      const struct sroce_pkt *pkt)
{
	struct sroce_pktbuf pb = { .skb = skb, .off = pkt->payload_off };
	struct sroce_rwqe *r = &qp->resp.rwqe;
	u32 flags = pkt->info->flags;
	struct sroce_cqe cqe = {};
	int err;

	err = sroce_resp_get_wqe(qp);
	if (err == -EAGAIN)
		return SROCE_RESP_RNR;
	if (err)
		return SROCE_RESP_NAK_OP;
	if (!(flags & SROCE_OPF_LAST) && pkt->payload_len != sroce_qp_mtu(qp))
		return SROCE_RESP_NAK_INV;
	/*
	 * Remote invalidate comes after the atomics accepted before it
	 * (below); one that waits for an ODP fault holds this packet back
	 * (RNR NAK) before anything of it is placed.
	 */
	if ((flags & SROCE_OPF_IETH) && sroce_resp_atomics_now(qp))
		return SROCE_RESP_RNR;

	/*
	 * A message is at most 2^31 bytes (IBA 9.4.3, max_msg_sz), whatever
	 * the receive WQE could take: a longer SEND is too long for it, as
	 * one longer than its SGEs is.
	 */
	err = pkt->payload_len > SROCE_MAX_MSG_SIZE - r->offset ? -ENOSPC :
	      sroce_sgl_copy(qp, SROCE_ODP_RESP, r->sge, r->num_sge,
			     r->offset, &pb, pkt->payload_len, SROCE_TO_MR);
	/* An ODP page is faulted in: the packet comes again (RNR NAK). */
	if (err == -EAGAIN)
		return SROCE_RESP_RNR;
	if (err) {
		sroce_resp_complete_err(qp, err == -ENOSPC ? IB_WC_LOC_LEN_ERR :
					IB_WC_LOC_PROT_ERR);
		return err == -ENOSPC ? SROCE_RESP_NAK_INV : SROCE_RESP_NAK_OP;
	}
	r->offset += pkt->payload_len;
	qp->resp.in_send = !(flags & SROCE_OPF_LAST);
	if (qp->resp.in_send)
		return SROCE_RESP_OK;

	cqe.opcode = IB_WC_RECV;
	cqe.byte_len = r->offset;
	cqe.src_qp = qp->dest_qpn;
	if (flags & SROCE_OPF_IMMDT) {
		cqe.flags |= SROCE_CQE_F_WITH_IMM;
		memcpy(&cqe.ex.imm_data, pkt->imm, sizeof(cqe.ex.imm_data));
	} else if (flags & SROCE_OPF_IETH) {
		/*
		 * Remote invalidate (IBA 9.4.1.1.5), before the completion,
		 * after the atomics accepted before it (executed above).
		 */
		if (sroce_key_invalidate(qp, pkt->ieth_rkey)) {
			/* As rdma_rxe: the receive fails with the QP. */
			sroce_resp_complete_err(qp, IB_WC_REM_INV_REQ_ERR);
			return SROCE_RESP_NAK_INV;
		}
		cqe.flags |= SROCE_CQE_F_WITH_INV;
		cqe.ex.invalidated_rkey = pkt->ieth_rkey;
	}
	sroce_resp_complete(qp, &cqe, pkt->se);
	return SROCE_RESP_OK;
}

static enum sroce_resp_result sroce_resp_write(struct sroce_qp *qp,
					       struct sk_buff *skb,
					       const struct sroce_pkt *pkt)
{
	struct sroce_pktbuf pb = { .skb = skb, .off = pkt->payload_off };
	struct sroce_resp *rs = &qp->resp;
	u32 flags = pkt->info->flags;
	struct sroce_cqe cqe = {};
	struct sroce_mr *mr;
	int err;

	if (flags & SROCE_OPF_FIRST) {
		/* At most 2^31 bytes (IBA 9.4.3, C9-94), as for READ. */
		if (pkt->reth.dma_len > SROCE_MAX_MSG_SIZE)
			return SROCE_RESP_NAK_INV;
		rs->write_va = pkt->reth.va;
		rs->write_rkey = pkt->reth.rkey;
		rs->write_left = pkt->reth.dma_len;
		rs->write_len = pkt->reth.dma_len;
		/* A zero-length WRITE checks no key (IBA 9.7.4.1.3). */
		if (rs->write_len) {
			mr = sroce_resp_mr(qp, rs->write_rkey, rs->write_va,
					   rs->write_len, IB_ACCESS_REMOTE_WRITE);
			if (!mr)
				return SROCE_RESP_NAK_ACC;
			sroce_mr_put(mr);
		}
	}
	if (pkt->payload_len > rs->write_left ||
	    (!(flags & SROCE_OPF_LAST) && pkt->payload_len != sroce_qp_mtu(qp)) ||
	    ((flags & SROCE_OPF_LAST) && pkt->payload_len != rs->write_left))
		return SROCE_RESP_NAK_INV;
	/* WRITE with immediate consumes a receive WQE: none, no placement. */
	if (flags & SROCE_OPF_IMMDT) {
		err = sroce_resp_get_wqe(qp);
		if (err == -EAGAIN)
			return SROCE_RESP_RNR;
		if (err)
			return SROCE_RESP_NAK_OP;
	}
	if (pkt->payload_len) {
		/* Looked up per packet: a region deregistered meanwhile fails. */
		mr = sroce_resp_mr(qp, rs->write_rkey, rs->write_va,
				   pkt->payload_len, IB_ACCESS_REMOTE_WRITE);
		if (!mr)
			return SROCE_RESP_NAK_ACC;
		sroce_resp_write_delay(qp->sdev);
		err = sroce_mr_copy(mr, rs->write_va, &pb, pkt->payload_len,
				    SROCE_TO_MR);
		/*
		 * An ODP page is not mapped: fault the rest of the WRITE in
		 * and have this packet sent again after an RNR NAK, as ODP
		 * hardware does.
		 */
		if (err == -EAGAIN)
			err = sroce_odp_fault(mr, rs->write_va,
					      pkt->payload_len, rs->write_left,
					      true, qp, SROCE_ODP_RESP);
		sroce_mr_put(mr);
		if (err == -EAGAIN)
			return SROCE_RESP_RNR;
		if (err)
			return SROCE_RESP_NAK_ACC;
		rs->write_va += pkt->payload_len;
		rs->write_left -= pkt->payload_len;
	}
	rs->in_write = !(flags & SROCE_OPF_LAST);
	if (rs->in_write || !(flags & SROCE_OPF_IMMDT))
		return SROCE_RESP_OK;

	cqe.opcode = IB_WC_RECV_RDMA_WITH_IMM;
	cqe.byte_len = rs->write_len;
	cqe.src_qp = qp->dest_qpn;
	cqe.flags = SROCE_CQE_F_WITH_IMM;
	memcpy(&cqe.ex.imm_data, pkt->imm, sizeof(cqe.ex.imm_data));
	sroce_resp_complete(qp, &cqe, pkt->se);
	return SROCE_RESP_OK;
}

/*
 * Answers of earlier requests still to go out (resp_lock held): READ
 * responses, atomic ACKs, a replay, or an ACK/NAK held back behind them.
 */
static bool sroce_resp_busy(const struct sroce_qp *qp)
{
	const struct sroce_resp *rs = &qp->resp;

	return rs->res_pending || rs->replay || rs->ans_owed;
}

/* Drop every answer still to go out (the QP fails or is reset). */
static void sroce_resp_forget(struct sroce_qp *qp)
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
 * go out, it is held back and sroce_resp_build() sends it in its turn. A
 * requester takes an ACK or NAK for a later PSN as the end of every
 * earlier READ response, and sends the READ again if they have not all
 * arrived (an implied NAK, IBA 9.7.5.2.6).
 *
 * One answer is held; the newer one takes its place when it is for a
 * later PSN (ACKs are cumulative, and a NAK acknowledges everything
 * before its PSN), or for the same PSN and an ACK: the request a held RNR
 * or sequence NAK named was taken since (the requester sent it again), so
 * the NAK is stale (sroce_resp_taken()). A NAK for the PSN of a held
 * answer adds nothing. A class C NAK (@fatal) is never replaced: the QP
 * fails once it is out, and takes no request meanwhile.
 */
static void sroce_resp_answer(struct sroce_qp *qp, struct sk_buff_head *out,
			      u32 psn, u8 syndrome, bool fatal)
{
	struct sroce_resp *rs = &qp->resp;
	s32 d;

	if (!sroce_resp_busy(qp)) {
		sroce_resp_ack(qp, out, psn, syndrome, rs->msn);
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
static void sroce_resp_taken(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;

	if (!rs->ans_owed || rs->ans_fatal ||
	    sroce_aeth_type(rs->ans_syndrome) == SROCE_AETH_ACK ||
	    sroce_psn_diff(rs->ans_psn, rs->epsn) >= 0)
		return;
	rs->ans_psn = sroce_psn_add(rs->ans_psn, SROCE_PSN_MASK);
	rs->ans_syndrome = sroce_resp_ack_syndrome();
}

/*
 * Delayed ACK. rdma_rxe answers a request that asks for an ACK at once,
 * from the packet's softirq. On request/response traffic (RPC, ping-pong)
 * that puts the ACK's transmission, a packet through the UDP stack and a
 * kick of the netdev, between the request's arrival and the user seeing
 * it: on one CPU the softirq runs to its end before the user does, and
 * the ACK's packet then competes with the reply for the link. When this
 * QP's requests have been answering the peer's (ping-pong), the ACK waits
 * for the reply instead and leaves right before it (sroce_resp_req_xmit()).
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
 *   held ACK first (sroce_resp_ack_release()).
 */

/* A held ACK was not taken along by a request of ours: leave ping-pong. */
static void sroce_resp_pp_exit(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;

	sroce_qp_count(qp, SROCE_CNT_ACK_DELAYS_EXPIRED, 1);
	rs->pingpong = false;
	rs->pp_credit = 0;
	rs->pp_need = min_t(u32, rs->pp_need * 2, SROCE_PP_NEED_MAX);
}

/* Send the waiting ACK, of everything accepted so far, now. */
static void sroce_resp_dack_send(struct sroce_qp *qp, struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;

	if (!rs->ack_delayed)
		return;
	WRITE_ONCE(rs->ack_delayed, false);
	sroce_resp_answer(qp, out, sroce_psn_add(rs->epsn, SROCE_PSN_MASK),
			  sroce_resp_ack_syndrome(), false);
}

/*
 * A SEND or WRITE packet in sequence that asks for an ACK is about to be
 * executed: hold its ACK? Decided before its data or its completion is
 * visible, since the user may post the reply at once, on another CPU, and
 * sroce_resp_req_xmit() must then find the ACK held (it looks without
 * the lock first). Undone if the packet fails (sroce_resp_ack_done()).
 */
static bool sroce_resp_ack_hold(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;
	/* A hint, read without sq_lock: is our requester idle? */
	bool idle = READ_ONCE(qp->comp.psn) == READ_ONCE(qp->req.psn_max);

	if (!idle && !rs->pingpong)
		rs->pp_credit = 0;
	WRITE_ONCE(rs->rx_idle, idle);
	if (rs->ack_delayed || sroce_resp_busy(qp))
		return false;
	/* debugfs fault/ack_delay_ms: any ACK that would leave alone waits. */
	if (!READ_ONCE(qp->sdev->fault.ack_delay_ms) &&
	    (!rs->pingpong || !READ_ONCE(sroce_ack_delay)))
		return false;
	WRITE_ONCE(rs->ack_delayed, true);
	return true;
}

/* The request at @psn was accepted: its ACK is held (@held) or sent now. */
static void sroce_resp_ack_done(struct sroce_qp *qp, struct sk_buff_head *out,
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
	sroce_resp_answer(qp, out, psn, sroce_resp_ack_syndrome(), false);
}

/* The oldest resource still to answer (res_pending > 0). */
static struct sroce_res *sroce_resp_oldest(struct sroce_resp *rs)
{
	return &rs->res[(rs->res_head + rs->res_n - rs->res_pending) %
			rs->res_n];
}

/* Is @res one of the resources still to answer? */
static bool sroce_resp_res_pending(const struct sroce_resp *rs,
				   const struct sroce_res *res)
{
	u32 age = (rs->res_head + rs->res_n - 1 - (u32)(res - rs->res)) %
		  rs->res_n;

	return age < rs->res_pending;
}

/*
 * A READ or atomic failed in its turn (its region was deregistered
 * meanwhile): NAK its @psn and fail the QP; nothing after it is answered.
 */
static void sroce_resp_res_failed(struct sroce_qp *qp,
				  struct sk_buff_head *out, u32 psn, u32 msn)
{
	sroce_qp_count_err_nak(qp, SROCE_NAK_REMOTE_ACCESS_ERR, true);
	sroce_resp_ack(qp, out, psn,
		       sroce_aeth_nak(SROCE_NAK_REMOTE_ACCESS_ERR), msn);
	sroce_resp_forget(qp);
	sroce_qp_fatal(qp);
}

/* The next READ response of @res; false to stop building for now. */
static bool sroce_resp_build_read(struct sroce_qp *qp,
				  struct sk_buff_head *out,
				  struct sroce_res *res)
{
	struct sroce_resp *rs = &qp->resp;
	u32 mtu = sroce_qp_mtu(qp), n, hdr_len;
	struct sroce_pktbuf pb;
	struct sroce_pkt pkt;
	struct sroce_mr *mr;
	struct sk_buff *skb;
	bool first, last;
	int err;

	n = min(mtu, res->length - res->sent);
	first = res->sent == 0;
	last = res->sent + n == res->length;
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = first && last ? SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
		     first ? SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST :
		     last ? SROCE_OP_RC_RDMA_READ_RESPONSE_LAST :
			    SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
	pkt.psn = sroce_psn_add(res->first_psn, res->sent / mtu);
	pkt.aeth.syndrome = sroce_resp_ack_syndrome();
	pkt.aeth.msn = res->msn;
	skb = sroce_resp_skb(qp, &pkt, n);
	if (!skb)
		return false;
	if (n) {
		hdr_len = sroce_opcode_get(pkt.opcode)->hdr_len;
		pb = (struct sroce_pktbuf){ .buf = skb->data + hdr_len };
		mr = sroce_resp_mr(qp, res->rkey, res->va + res->sent, n,
				   IB_ACCESS_REMOTE_READ);
		err = mr ? sroce_mr_copy(mr, res->va + res->sent, &pb, n,
					 SROCE_FROM_MR) : -EACCES;
		/* ODP: the rest waits for the fault, which kicks. */
		if (err == -EAGAIN)
			err = sroce_odp_fault(mr, res->va + res->sent, n,
					      res->length - res->sent, false,
					      qp, SROCE_ODP_RESP);
		if (err == -EAGAIN)
			qp->resp.odp_wait = true;
		if (mr)
			sroce_mr_put(mr);
		if (err) {
			kfree_skb(skb);
			/* Else deregistered while being read. */
			if (err != -EAGAIN)
				sroce_resp_res_failed(qp, out, pkt.psn,
						      res->msn);
			return false;
		}
	}
	__skb_queue_tail(out, skb);
	res->sent += n;
	if (last && rs->replay == res)
		rs->replay = NULL;
	else if (last)
		rs->res_pending--;
	return true;
}

static bool sroce_resp_atomic_ack(struct sroce_qp *qp,
				  struct sk_buff_head *out,
				  const struct sroce_res *res)
{
	struct sroce_pkt pkt = {
		.opcode = SROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
		.psn = res->first_psn,
		.aeth = { .syndrome = sroce_resp_ack_syndrome(),
			  .msn = res->msn },
		.atmack_orig = res->orig,
	};
	struct sk_buff *skb = sroce_resp_skb(qp, &pkt, 0);

	if (!skb)
		return false;
	__skb_queue_tail(out, skb);
	return true;
}

/*
 * Execute the atomic of @res in its turn if it has not been already, and
 * queue its ACK; false to stop building for now.
 */
static bool sroce_resp_build_atomic(struct sroce_qp *qp,
				    struct sk_buff_head *out,
				    struct sroce_res *res)
{
	if (sroce_resp_exec_atomic(qp, res)) {
		qp->resp.odp_wait = true;
		return false;
	}
	if (res->failed) {
		sroce_resp_res_failed(qp, out, res->first_psn, res->msn);
		return false;
	}
	if (!sroce_resp_atomic_ack(qp, out, res))
		return false;
	qp->resp.res_pending--;
	return true;
}

/*
 * Build up to @budget answers, in PSN order: a duplicate READ's responses
 * first (sroce_resp_duplicate() starts one only when nothing else is
 * due), then those of the accepted READs and atomics, oldest first, and
 * the ACK or NAK held back behind them.
 */
static void sroce_resp_build(struct sroce_qp *qp, struct sk_buff_head *out,
			     int budget)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_xrc_ctx ctx;
	struct sroce_res *res;
	bool built;

	/* A build may find the page an ODP fault brought in: try again. */
	rs->odp_wait = false;
	while (sroce_resp_busy(qp) && budget-- > 0) {
		res = rs->replay;
		if (!res && rs->res_pending)
			res = sroce_resp_oldest(rs);
		if (rs->ans_owed &&
		    (!res || sroce_psn_diff(rs->ans_psn, res->first_psn) < 0)) {
			if (!sroce_resp_ack(qp, out, rs->ans_psn,
					    rs->ans_syndrome, rs->ans_msn))
				return;
			rs->ans_owed = false;
			if (rs->ans_fatal) {
				sroce_resp_forget(qp);
				sroce_qp_fatal(qp);
				return;
			}
			continue;
		}
		sroce_resp_xrc_push(qp, res->xrc_srqn, &ctx);
		built = res->atomic ? sroce_resp_build_atomic(qp, out, res) :
				      sroce_resp_build_read(qp, out, res);
		sroce_resp_xrc_pop(qp, &ctx);
		if (!built)
			return;
	}
}

/* The entry the next READ or atomic takes; NULL beyond max_dest_rd_atomic. */
static struct sroce_res *sroce_resp_res_next(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;

	if (!rs->res_n || rs->res_pending >= rs->res_n)
		return NULL;
	return &rs->res[rs->res_head];
}

/*
 * Accept the one-packet request @pkt, described by @r, into the next
 * responder resource (sroce_resp_res_next() found one): its answer goes
 * out behind every earlier one, and a duplicate is answered from it.
 */
static enum sroce_resp_result sroce_resp_queue(struct sroce_qp *qp,
					       const struct sroce_res *r,
					       const struct sroce_pkt *pkt,
					       struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_res *res = &rs->res[rs->res_head];

	if (rs->replay == res)
		rs->replay = NULL;	/* the requester moved on */
	*res = *r;
	res->valid = true;
	res->first_psn = pkt->psn;
	res->xrc_srqn = pkt->xrc_srqn;
	rs->res_head = (rs->res_head + 1) % rs->res_n;
	rs->res_pending++;
	rs->epsn = sroce_psn_add(pkt->psn, res->npsn);
	sroce_resp_taken(qp);
	rs->msn = sroce_psn_add(rs->msn, 1);
	res->msn = rs->msn;
	sroce_resp_build(qp, out, SROCE_READ_BURST);
	if (sroce_resp_busy(qp) && !rs->odp_wait)
		sroce_qp_kick(qp);
	return SROCE_RESP_ANSWERED;
}

static enum sroce_resp_result sroce_resp_read(struct sroce_qp *qp,
					      const struct sroce_pkt *pkt,
					      struct sk_buff_head *out)
{
	u32 len = pkt->reth.dma_len, mtu = sroce_qp_mtu(qp);
	struct sroce_res r = {};
	struct sroce_mr *mr;

	/*
	 * A message is at most 2^31 bytes (IBA 9.4.3). Longer ones would also
	 * wrap the PSN count below; only a DMA MR (an unsafe global rkey) can
	 * pass the bounds check with one.
	 */
	if (len > SROCE_MAX_MSG_SIZE)
		return SROCE_RESP_NAK_INV;
	if (len) {
		mr = sroce_resp_mr(qp, pkt->reth.rkey, pkt->reth.va, len,
				   IB_ACCESS_REMOTE_READ);
		if (!mr)
			return SROCE_RESP_NAK_ACC;
		sroce_mr_put(mr);
	} else if (!(qp->access_flags & IB_ACCESS_REMOTE_READ)) {
		return SROCE_RESP_NAK_ACC;
	}
	if (!sroce_resp_res_next(qp))
		return SROCE_RESP_NAK_INV;	/* beyond max_dest_rd_atomic */
	r.npsn = len ? DIV_ROUND_UP(len, mtu) : 1;
	r.va = pkt->reth.va;
	r.rkey = pkt->reth.rkey;
	r.length = len;
	return sroce_resp_queue(qp, &r, pkt, out);
}

/*
 * CMP_SWAP and FETCH_ADD (IBA 9.4.5). The key is checked now, so that a
 * bad request is NAKed at once; the operation itself waits for its turn
 * behind the READs before it, which read the memory as it was before,
 * unless a later request must see its result first
 * (sroce_resp_atomics_now()). A later SEND or WRITE does not wait for it:
 * the IBA orders those after an atomic only if the requester fences them
 * (IBA 10.8.3.3).
 */
static enum sroce_resp_result sroce_resp_atomic(struct sroce_qp *qp,
						const struct sroce_pkt *pkt,
						struct sk_buff_head *out)
{
	const struct sroce_atmeth *a = &pkt->atmeth;
	struct sroce_res r = {};
	struct sroce_mr *mr;
	int err;

	if (a->va & (sizeof(u64) - 1))
		return SROCE_RESP_NAK_INV;	/* IBA 9.4.5: 8-byte aligned */
	mr = sroce_resp_mr(qp, a->rkey, a->va, sizeof(u64),
			   IB_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		return SROCE_RESP_NAK_ACC;
	/*
	 * ODP: the word is faulted in before the atomic is accepted (an RNR
	 * NAK meanwhile), so that its turn rarely has to wait for it.
	 */
	if (sroce_mr_ready(mr, a->va, sizeof(u64), true) == -EAGAIN) {
		err = sroce_odp_fault(mr, a->va, sizeof(u64), sizeof(u64),
				      true, qp, SROCE_ODP_RESP);
		sroce_mr_put(mr);
		return err == -EAGAIN ? SROCE_RESP_RNR : SROCE_RESP_NAK_ACC;
	}
	sroce_mr_put(mr);
	if (!sroce_resp_res_next(qp))
		return SROCE_RESP_NAK_INV;	/* beyond max_dest_rd_atomic */
	/* Kept, so that a duplicate is answered, never executed twice. */
	r.atomic = true;
	/* RC's or XRC's: the operation is in the low five bits. */
	r.cmp_swap = (pkt->opcode & ~SROCE_OPCODE_TRANSPORT_MASK) ==
		     SROCE_OP_RC_COMPARE_SWAP;
	r.npsn = 1;
	r.va = a->va;
	r.rkey = a->rkey;
	r.compare = a->compare;
	r.swap_add = a->swap_add;
	return sroce_resp_queue(qp, &r, pkt, out);
}

/*
 * Answer the one-packet request @pkt, executed, with an empty RDMA READ
 * response ONLY through a responder resource (ATOMIC WRITE, FLUSH): it
 * keeps its place behind earlier READs, and a duplicate is answered
 * again from the resource.
 */
static enum sroce_resp_result sroce_resp_empty_read(struct sroce_qp *qp,
						    const struct sroce_pkt *pkt,
						    struct sk_buff_head *out)
{
	struct sroce_res r = {
		.npsn = 1,
		.va = pkt->reth.va,
		.rkey = pkt->reth.rkey,
	};

	return sroce_resp_queue(qp, &r, pkt, out);
}

/*
 * ATOMIC WRITE (IBA A19.4): 8 bytes stored in one access at an aligned
 * address of an MR with remote write access. It is answered like a READ of
 * no data, with an empty RDMA READ response ONLY, through a responder
 * resource: the answer keeps its place behind earlier READs, and a
 * duplicate is answered again, never executed again. The parser has
 * checked that the payload is exactly 8 bytes.
 */
static enum sroce_resp_result sroce_resp_atomic_write(struct sroce_qp *qp,
						      struct sk_buff *skb,
						      const struct sroce_pkt *pkt,
						      struct sk_buff_head *out)
{
	struct sroce_mr *mr;
	u64 value;
	int err;

	if (pkt->reth.dma_len != sizeof(u64) ||
	    (pkt->reth.va & (sizeof(u64) - 1)) ||
	    skb_copy_bits(skb, pkt->payload_off, &value, sizeof(value)))
		return SROCE_RESP_NAK_INV;
	mr = sroce_resp_mr(qp, pkt->reth.rkey, pkt->reth.va, sizeof(u64),
			   IB_ACCESS_REMOTE_WRITE);
	if (!mr)
		return SROCE_RESP_NAK_ACC;
	if (!sroce_resp_res_next(qp)) {
		sroce_mr_put(mr);
		return SROCE_RESP_NAK_INV;	/* beyond max_dest_rd_atomic */
	}
	/* Release: the earlier atomics' results are visible first. */
	err = sroce_resp_atomics_now(qp);
	if (!err)
		err = sroce_mr_atomic_write(mr, pkt->reth.va, value);
	if (err == -EAGAIN)
		err = sroce_odp_fault(mr, pkt->reth.va, sizeof(u64),
				      sizeof(u64), true, qp, SROCE_ODP_RESP);
	sroce_mr_put(mr);
	if (err == -EAGAIN)
		return SROCE_RESP_RNR;	/* an ODP page is faulted in */
	if (err)
		return SROCE_RESP_NAK_ACC;
	return sroce_resp_empty_read(qp, pkt, out);
}

/*
 * FLUSH (IBA A19.4.3, A19.8): make every earlier write to the named range,
 * or to the whole region, visible to every observer, then answer with an
 * empty RDMA READ response ONLY through a responder resource, as ATOMIC
 * WRITE is answered (a duplicate is answered again from it).
 *
 * The QP must grant every placement type asked for, else the request is
 * invalid (rdma_rxe answers so too); the region (never a window) must
 * grant them, else it is a remote access error. sroce offers global
 * visibility only (sroce_compat.h): no region grants persistence, so a
 * persistence FLUSH fails one way or the other.
 *
 * Our responder places the data of every earlier request itself, in PSN
 * order, before it gets here; those stores are visible to this CPU. The
 * full barrier orders them before the response, so whoever learns of the
 * FLUSH's completion (the requester, then anyone it tells) reads them.
 */
static enum sroce_resp_result sroce_resp_flush_req(struct sroce_qp *qp,
						   const struct sroce_pkt *pkt,
						   struct sk_buff_head *out)
{
	const struct sroce_feth *f = &pkt->feth;
	int need = 0;
	struct sroce_mr *mr;

	if (f->plt & SROCE_FLUSH_GLOBAL)
		need |= SROCE_ACCESS_FLUSH_GLOBAL;
	if (f->plt & SROCE_FLUSH_PERSISTENT)
		need |= SROCE_ACCESS_FLUSH_PERSISTENT;
	/* No placement type (need 0 too before 6.2), or an unknown one. */
	if (!need || (f->plt & ~(SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT)) ||
	    (qp->access_flags & need) != need || f->sel > SROCE_FLUSH_MR)
		return SROCE_RESP_NAK_INV;
	if (f->sel == SROCE_FLUSH_MR)
		mr = sroce_rkey_get_region(qp, pkt->reth.rkey, need);
	else
		mr = sroce_rkey_get(qp, pkt->reth.rkey, pkt->reth.va,
				    pkt->reth.dma_len, need);
	if (!mr)
		return SROCE_RESP_NAK_ACC;
	sroce_mr_put(mr);
	if (!sroce_resp_res_next(qp))
		return SROCE_RESP_NAK_INV;	/* beyond max_dest_rd_atomic */
	smp_mb();
	sroce_qp_count(qp, SROCE_CNT_FLUSHES, 1);
	return sroce_resp_empty_read(qp, pkt, out);
}

/*
 * A request with a PSN before the expected one (IBA 9.7.5.1.2): answered
 * again, never executed again. READ responses are re-sent from the saved
 * resource, atomics get their saved result; SENDs and WRITEs are ACKed.
 */
static void sroce_resp_duplicate(struct sroce_qp *qp,
				 const struct sroce_pkt *pkt,
				 struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;
	u32 flags = pkt->info->flags, i, off, mtu = sroce_qp_mtu(qp);
	struct sroce_res *res;

	sroce_qp_count(qp, SROCE_CNT_DUPLICATES, 1);
	/* ATOMIC WRITE and FLUSH resources replay like READs of no data. */
	if (!(flags & (SROCE_OPF_READ | SROCE_OPF_ATOMIC |
		       SROCE_OPF_ATOMIC_WRITE | SROCE_OPF_FLUSH))) {
		/* Re-ACK what we have, where the requester asks for an ACK. */
		if (pkt->ackreq)
			sroce_resp_answer(qp, out,
					  sroce_psn_add(rs->epsn, SROCE_PSN_MASK),
					  sroce_resp_ack_syndrome(), false);
		return;
	}
	for (i = 0; i < rs->res_n; i++) {
		res = &rs->res[i];
		if (!res->valid || res->atomic != !!(flags & SROCE_OPF_ATOMIC) ||
		    sroce_psn_diff(pkt->psn, res->first_psn) < 0 ||
		    sroce_psn_diff(pkt->psn, sroce_psn_add(res->first_psn,
							   res->npsn)) >= 0)
			continue;
		off = sroce_psn_diff(pkt->psn, res->first_psn) * mtu;
		if (res->atomic) {
			/*
			 * Answered: every answer before it is out, so its
			 * own can go again at once. Not yet: it will go out
			 * in its turn (sroce_resp_atomics_now() may have
			 * executed it already).
			 */
			if (!sroce_resp_res_pending(rs, res) && !res->failed)
				sroce_resp_atomic_ack(qp, out, res);
		} else if (sroce_resp_res_pending(rs, res)) {
			/* Going out in its turn; if now, again from @off. */
			if (res == sroce_resp_oldest(rs) && res->sent > off)
				res->sent = off;
		} else if (!rs->replay || rs->replay == res ||
			   sroce_psn_diff(res->first_psn,
					  rs->replay->first_psn) < 0) {
			/*
			 * Answered, and asked for again: the requester went
			 * back to it (go-back-N) and drops every response
			 * after it until these come, so they go out now,
			 * ahead of the answers still due (a long READ's
			 * could outlast its retry count). The allocation
			 * ring is not touched: later resources stay
			 * replayable. A duplicate of a later READ than the
			 * one replayed is left to the requester's retry.
			 */
			res->sent = off;
			rs->replay = res;
			sroce_resp_build(qp, out, SROCE_READ_BURST);
			if (sroce_resp_busy(qp) && !rs->odp_wait)
				sroce_qp_kick(qp);
		}
		return;
	}
}

/* Is @flags a legal next packet after what came before (IBA 9.8.3)? */
static bool sroce_resp_in_sequence(struct sroce_qp *qp, u32 flags)
{
	if (qp->resp.in_send)
		return (flags & SROCE_OPF_SEND) && !(flags & SROCE_OPF_FIRST);
	if (qp->resp.in_write)
		return (flags & SROCE_OPF_WRITE) && !(flags & SROCE_OPF_FIRST);
	return flags & SROCE_OPF_FIRST;
}

static enum sroce_resp_result sroce_resp_dispatch(struct sroce_qp *qp,
						  struct sk_buff *skb,
						  const struct sroce_pkt *pkt,
						  struct sk_buff_head *out)
{
	u32 flags = pkt->info->flags;

	if (!sroce_resp_in_sequence(qp, flags))
		return SROCE_RESP_NAK_INV;
	if (flags & SROCE_OPF_SEND)
		return sroce_resp_send(qp, skb, pkt);
	if (flags & SROCE_OPF_WRITE)
		return sroce_resp_write(qp, skb, pkt);
	if (flags & SROCE_OPF_READ)
		return sroce_resp_read(qp, pkt, out);
	if (flags & SROCE_OPF_ATOMIC)
		return sroce_resp_atomic(qp, pkt, out);
	if (flags & SROCE_OPF_ATOMIC_WRITE)
		return sroce_resp_atomic_write(qp, skb, pkt, out);
	if (flags & SROCE_OPF_FLUSH)
		return sroce_resp_flush_req(qp, pkt, out);
	return SROCE_RESP_NAK_INV;
}

static enum sroce_resp_result sroce_resp_execute(struct sroce_qp *qp,
						 struct sk_buff *skb,
						 const struct sroce_pkt *pkt,
						 struct sk_buff_head *out)
{
	struct sroce_xrc_ctx ctx;
	enum sroce_resp_result r;

	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return sroce_resp_dispatch(qp, skb, pkt, out);
	/*
	 * XRC (IBA A14): the request names an XRC SRQ of the target's
	 * domain, which gives the receive WQE, the CQ and the PD its keys
	 * are checked against; a message goes on into the SRQ it started
	 * in. Anything else is an invalid request.
	 */
	if ((qp->resp.have_wqe && qp->resp.wqe_srqn != pkt->xrc_srqn) ||
	    (qp->resp.in_write && qp->resp.write_srqn != pkt->xrc_srqn))
		return SROCE_RESP_NAK_INV;
	if ((pkt->info->flags & (SROCE_OPF_WRITE | SROCE_OPF_FIRST)) ==
	    (SROCE_OPF_WRITE | SROCE_OPF_FIRST))
		qp->resp.write_srqn = pkt->xrc_srqn;
	sroce_resp_xrc_push(qp, pkt->xrc_srqn, &ctx);
	r = qp->xrc_srq ? sroce_resp_dispatch(qp, skb, pkt, out) :
			  SROCE_RESP_NAK_INV;
	sroce_resp_xrc_pop(qp, &ctx);
	return r;
}

/*
 * A fatal responder error: NAK it (RC) and stop the QP (IBA 9.9.3), once
 * the answers of the requests before it are out.
 */
static void sroce_resp_nak(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			   enum sroce_nak_code code, struct sk_buff_head *out)
{
	sroce_qp_count_err_nak(qp, code, true);
	if (qp->resp.have_wqe && code != SROCE_NAK_PSN_SEQ_ERR &&
	    qp->resp.in_send)
		sroce_resp_complete_err(qp, IB_WC_REM_INV_REQ_ERR);
	sroce_resp_answer(qp, out, pkt->psn, sroce_aeth_nak(code), true);
}

/*
 * An RC request beyond the expected PSN: NAK the gap (PSN sequence error)?
 * Once per gap, not once per packet behind it (C9-114) - and once more
 * when a packet comes again that was already dropped behind the gap: the
 * requester is sending again what it sent before, from beyond the gap,
 * so our NAK was lost (its tail probe, sroce_comp_tlp_send(), resends the
 * last packet). Without the repeat a lost NAK cost a local ACK timeout
 * (67 ms at the common timeout 14; rc_nak_loss.sh). At most one repeat a
 * timer tick, so that a go-back-N whose first packet was lost again does
 * not draw a NAK from each packet behind it. rxe NAKs once per gap.
 */
static bool sroce_resp_seq_nak_due(struct sroce_qp *qp, u32 psn)
{
	struct sroce_resp *rs = &qp->resp;

	if (!rs->nak_sent) {
		rs->nak_sent = true;
		rs->oos_max = psn;
	} else if (sroce_psn_diff(psn, rs->oos_max) > 0) {
		rs->oos_max = psn;
		return false;
	} else if (!time_after(jiffies, rs->nak_at)) {
		return false;
	}
	rs->nak_at = jiffies;
	sroce_qp_count(qp, SROCE_CNT_SEQ_NAKS_SENT, 1);
	return true;
}

static void sroce_resp_rc_uc(struct sroce_qp *qp, struct sk_buff *skb,
			     const struct sroce_pkt *pkt,
			     struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;
	bool rc = sroce_qp_rc(qp);
	enum sroce_resp_result r;
	s32 d = sroce_psn_diff(pkt->psn, rs->epsn);
	bool held;

	/* Failing behind answers still to go out: nothing more is taken. */
	if (rs->ans_fatal) {
		sroce_qp_count(qp, SROCE_CNT_DROP(SROCE_DROP_BAD_QP_STATE), 1);
		return;
	}
	/*
	 * A waiting ACK goes out first when this packet is answered other
	 * than by an ACK of a SEND or WRITE in sequence.
	 */
	if (rs->ack_delayed &&
	    (d || !(pkt->info->flags & (SROCE_OPF_SEND | SROCE_OPF_WRITE)))) {
		/* A duplicate: the peer's tail probe, it gave up waiting. */
		if (d < 0 && rc)
			sroce_resp_pp_exit(qp);
		sroce_resp_dack_send(qp, out);
	}
	if (d && rc) {
		if (d < 0)
			sroce_resp_duplicate(qp, pkt, out);
		else if (sroce_resp_seq_nak_due(qp, pkt->psn))
			sroce_resp_answer(qp, out, rs->epsn,
					  sroce_aeth_nak(SROCE_NAK_PSN_SEQ_ERR),
					  false);
		return;
	}
	if (d && !rc) {
		/* UC: a gap loses the message in progress (IBA 9.8.2). */
		rs->in_send = false;
		rs->in_write = false;
		if (rs->have_wqe)
			rs->rwqe.offset = 0;
		rs->epsn = pkt->psn;
	}

	held = rc && pkt->ackreq &&
	       (pkt->info->flags & (SROCE_OPF_SEND | SROCE_OPF_WRITE)) &&
	       sroce_resp_ack_hold(qp);
	r = sroce_resp_execute(qp, skb, pkt, out);
	if (r != SROCE_RESP_OK) {
		/* Its own NAK follows; an ACK held before it goes first. */
		if (held)
			WRITE_ONCE(rs->ack_delayed, false);
		sroce_resp_dack_send(qp, out);
	}
	if (!rc && r != SROCE_RESP_OK) {
		/*
		 * UC never answers: drop and wait for the next message,
		 * which starts its receive WQE again (as after a gap).
		 */
		rs->in_send = false;
		rs->in_write = false;
		if (rs->have_wqe)
			rs->rwqe.offset = 0;
		rs->epsn = sroce_psn_add(pkt->psn, 1);
		return;
	}
	switch (r) {
	case SROCE_RESP_OK:
		rs->nak_sent = false;
		rs->epsn = sroce_psn_add(pkt->psn, 1);
		sroce_resp_taken(qp);
		if (pkt->info->flags & SROCE_OPF_LAST)
			rs->msn = sroce_psn_add(rs->msn, 1);
		if (rc && pkt->ackreq)
			sroce_resp_ack_done(qp, out, pkt->psn, held);
		break;
	case SROCE_RESP_ANSWERED:
		rs->nak_sent = false;
		break;
	case SROCE_RESP_RNR:
		sroce_qp_count(qp, SROCE_CNT_RNR_NAKS_SENT, 1);
		sroce_resp_answer(qp, out, pkt->psn,
				  sroce_aeth_rnr_nak(qp->min_rnr_timer), false);
		/*
		 * The packets sent behind the refused one are dropped as
		 * behind a NAKed gap (sroce_resp_seq_nak_due()): the
		 * requester sends them again after its RNR wait. rdma_rxe
		 * NAKs the first of them with a sequence error; a requester
		 * whose RNR wait ends before such a NAK arrives (a slow
		 * responder, a short RNR timer) takes it as a new error and
		 * spends a retry on it: the debug kernel's rc_rnr.sh
		 * rnr_stream ran out of its seven that way, every RNR round
		 * drawing one. A repeat of a dropped packet a tick later
		 * still draws the NAK, so a lost RNR NAK is found as before.
		 */
		rs->nak_sent = true;
		rs->oos_max = pkt->psn;
		rs->nak_at = jiffies;
		break;
	case SROCE_RESP_NAK_INV:
		sroce_resp_nak(qp, pkt, SROCE_NAK_INVALID_REQ, out);
		break;
	case SROCE_RESP_NAK_ACC:
		sroce_resp_nak(qp, pkt, SROCE_NAK_REMOTE_ACCESS_ERR, out);
		break;
	case SROCE_RESP_NAK_OP:
		sroce_resp_nak(qp, pkt, SROCE_NAK_REMOTE_OP_ERR, out);
		break;
	case SROCE_RESP_DROP:
		break;
	}
}

/* ------------------------------------------------------------------------
 * UD and GSI receive (IBA 11.4.1.2: a 40-byte GRH area precedes the data)
 */

static void sroce_resp_ud(struct sroce_qp *qp, struct sk_buff *skb,
			  const struct sroce_pkt *pkt)
{
	struct sroce_pktbuf pb = { .skb = skb, .off = pkt->payload_off };
	struct sroce_rwqe *r = &qp->resp.rwqe;
	struct sroce_pktbuf grh_pb;
	struct sroce_cqe cqe = {};
	u8 grh[SROCE_GRH_BYTES] = {};
	bool v4 = ip_hdr(skb)->version == 4;
	int err;

	if (pkt->deth.qkey != qp->qkey) {
		sroce_qp_count(qp, SROCE_CNT_DROP(SROCE_DROP_BAD_QKEY), 1);
		return;
	}
	if (pkt->payload_len > sroce_qp_mtu(qp) || sroce_resp_get_wqe(qp)) {
		sroce_qp_count(qp, SROCE_CNT_DROP(SROCE_DROP_NO_MEM), 1);
		return;
	}
	/* RoCEv2: the IPv4 header fills the last 20 bytes of the GRH area. */
	if (v4)
		memcpy(grh + 20, skb_network_header(skb), 20);
	else
		memcpy(grh, skb_network_header(skb), SROCE_GRH_BYTES);
	grh_pb = (struct sroce_pktbuf){ .buf = grh };
	err = sroce_sgl_copy(qp, SROCE_ODP_RESP, r->sge, r->num_sge, 0,
			     &grh_pb, SROCE_GRH_BYTES, SROCE_TO_MR);
	if (!err)
		err = sroce_sgl_copy(qp, SROCE_ODP_RESP, r->sge, r->num_sge,
				     SROCE_GRH_BYTES, &pb, pkt->payload_len,
				     SROCE_TO_MR);
	if (err == -EAGAIN) {
		/* ODP: dropped, the WQE kept for the next datagram. */
		sroce_qp_count(qp, SROCE_CNT_DROP(SROCE_DROP_NO_MEM), 1);
		return;
	}
	if (err) {
		cqe.status = err == -ENOSPC ? IB_WC_LOC_LEN_ERR :
					      IB_WC_LOC_PROT_ERR;
		cqe.opcode = IB_WC_RECV;
		sroce_resp_complete(qp, &cqe, true);
		return;
	}
	cqe.opcode = IB_WC_RECV;
	cqe.byte_len = SROCE_GRH_BYTES + pkt->payload_len;
	cqe.src_qp = pkt->deth.src_qpn;
	cqe.flags = SROCE_CQE_F_GRH;
	cqe.network_type = v4 ? SROCE_NETWORK_IPV4 : SROCE_NETWORK_IPV6;
	if (skb_mac_header_was_set(skb))
		memcpy(cqe.smac, eth_hdr(skb)->h_source, ETH_ALEN);
	else
		memcpy(cqe.smac, qp->sdev->ndev->dev_addr, ETH_ALEN);
	/*
	 * Received on a VLAN device (still skb->dev: the receive path runs
	 * under RCU to here). The CM finds the GID to answer from by it
	 * (ib_init_ah_attr_from_wc()): without it, rdma_cm over a VLAN fails.
	 */
	if (is_vlan_dev(skb->dev))
		cqe.vlan_id = vlan_dev_vlan_id(skb->dev);
	if (pkt->info->flags & SROCE_OPF_IMMDT) {
		cqe.flags |= SROCE_CQE_F_WITH_IMM;
		memcpy(&cqe.ex.imm_data, pkt->imm, sizeof(cqe.ex.imm_data));
	}
	sroce_resp_complete(qp, &cqe, pkt->se);
}

/* ------------------------------------------------------------------------
 * Entry points
 */

static bool sroce_resp_state_ok(struct sroce_qp *qp)
{
	enum ib_qp_state s = READ_ONCE(qp->state);

	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD ||
	       s == IB_QPS_SQE;
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
static bool sroce_resp_tx_claim(struct sroce_qp *qp, struct sk_buff_head *out)
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
static void sroce_resp_tx_drain(struct sroce_qp *qp, struct sk_buff_head *list)
{
	struct sroce_resp *rs = &qp->resp;
	unsigned int rounds = 0;
	bool left;

	for (;;) {
		sroce_qp_xmit_list(qp, list);
		spin_lock_bh(&qp->resp_lock);
		if (skb_queue_empty(&rs->txq) ||
		    ++rounds >= SROCE_RESP_TX_ROUNDS)
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

/* A request packet; softirq context. */
void sroce_resp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt)
{
	struct sk_buff_head out;
	bool send;

	__skb_queue_head_init(&out);
	spin_lock(&qp->resp_lock);
	if (!sroce_resp_state_ok(qp)) {
		sroce_qp_count(qp, SROCE_CNT_DROP(SROCE_DROP_BAD_QP_STATE), 1);
	} else if (qp->ibqp.qp_type == IB_QPT_UD ||
		   qp->ibqp.qp_type == IB_QPT_GSI) {
		sroce_resp_ud(qp, skb, pkt);
	} else {
		sroce_resp_rc_uc(qp, skb, pkt, &out);
	}
	send = sroce_resp_tx_claim(qp, &out);
	spin_unlock(&qp->resp_lock);
	if (send)
		sroce_resp_tx_drain(qp, &out);
}

/*
 * From the work item (process context): continue READ responses, and send
 * what is queued, also in the error state (a NAK).
 */
void sroce_resp_run(struct sroce_qp *qp)
{
	struct sk_buff_head out;
	bool more, send;

	__skb_queue_head_init(&out);
	spin_lock_bh(&qp->resp_lock);
	if (sroce_resp_state_ok(qp))
		sroce_resp_build(qp, &out, SROCE_READ_BURST);
	more = sroce_resp_busy(qp) && sroce_resp_state_ok(qp) &&
	       !qp->resp.odp_wait;
	send = sroce_resp_tx_claim(qp, &out);
	spin_unlock_bh(&qp->resp_lock);
	if (send)
		sroce_resp_tx_drain(qp, &out);
	if (more)
		sroce_qp_kick(qp);
}

/*
 * The requester of @qp is about to send @list (any context, no QP lock
 * held). A request that came while the requester was idle has now been
 * answered by one: ping-pong. A waiting ACK joins the head of @list, to
 * leave right before the requests (in a transmission of its own: a GSO
 * burst starts with its largest packet), unless other answers are queued
 * or being sent (then sroce_resp_ack_release() sends it in its turn
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
void sroce_resp_req_xmit(struct sroce_qp *qp, struct sk_buff_head *list)
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
	    !sroce_resp_busy(qp) &&
	    sroce_resp_ack(qp, &ack, sroce_psn_add(rs->epsn, SROCE_PSN_MASK),
			   sroce_resp_ack_syndrome(), rs->msn))
		WRITE_ONCE(rs->ack_delayed, false);
	spin_unlock_bh(&qp->resp_lock);
	skb_queue_splice(&ack, list);
}

/*
 * Send a held ACK now, in its turn behind the answers queued (process
 * context or softirq, no QP lock held): after the requester's
 * packets when it did not join them (sroce_resp_req_xmit()), and when the
 * QP fails, is reset or destroyed. Its request was accepted and the user
 * may have seen it (an ibv_rc_pingpong that exits after its last receive
 * destroys its QP at once): without the ACK the peer would send the
 * request again to a QP that is gone, until its retries ran out.
 */
void sroce_resp_ack_release(struct sroce_qp *qp)
{
	struct sk_buff_head out;
	bool send;

	if (!READ_ONCE(qp->resp.ack_delayed))
		return;
	__skb_queue_head_init(&out);
	spin_lock_bh(&qp->resp_lock);
	sroce_resp_dack_send(qp, &out);
	send = sroce_resp_tx_claim(qp, &out);
	spin_unlock_bh(&qp->resp_lock);
	if (send)
		sroce_resp_tx_drain(qp, &out);
}

/* No request of ours came to take the held ACK along: send it alone. */
static void sroce_resp_dack_fire(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, resp.dack);
	struct sroce_resp *rs = &qp->resp;
	struct sk_buff_head out;
	bool send;

	__skb_queue_head_init(&out);
	spin_lock_bh(&qp->resp_lock);
	/* In any state: the request it answers was accepted. */
	if (rs->ack_delayed) {
		sroce_resp_pp_exit(qp);
		sroce_resp_dack_send(qp, &out);
	}
	send = sroce_resp_tx_claim(qp, &out);
	spin_unlock_bh(&qp->resp_lock);
	if (send)
		sroce_resp_tx_drain(qp, &out);
}

void sroce_resp_timer_init(struct sroce_qp *qp)
{
	timer_setup(&qp->resp.dack, sroce_resp_dack_fire, 0);
}

void sroce_resp_timer_stop(struct sroce_qp *qp)
{
	del_timer_sync(&qp->resp.dack);
}

/* Set up responder resources when the QP enters RTR. */
int sroce_resp_init(struct sroce_qp *qp)
{
	u32 n = max_t(u32, qp->max_dest_rd_atomic, 1);
	struct sroce_res *res, *old;

	res = kcalloc(n, sizeof(*res), GFP_KERNEL_ACCOUNT);
	if (!res)
		return -ENOMEM;
	spin_lock_bh(&qp->resp_lock);
	old = qp->resp.res;
	qp->resp.res = res;
	qp->resp.res_n = qp->max_dest_rd_atomic ? n : 0;
	qp->resp.res_head = 0;
	sroce_resp_forget(qp);
	qp->resp.epsn = qp->rq_psn;
	qp->resp.msn = 0;
	qp->resp.in_send = false;
	qp->resp.in_write = false;
	qp->resp.nak_sent = false;
	qp->resp.last_wqe_sent = false;
	qp->resp.pp_credit = 0;
	qp->resp.pp_need = SROCE_PP_NEED_FIRST;
	spin_unlock_bh(&qp->resp_lock);
	kfree(old);
	return 0;
}

/*
 * Reset (process context, the engines stopped, the QP in Reset): the
 * responder starts afresh, and nothing built before may go out after:
 * the answers still queued are dropped, and a context sending what it
 * took from the queue before (a packet's softirq on another CPU) is
 * waited for. In Reset nothing new is built.
 */
void sroce_resp_reset(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->rq;
	struct sroce_resp *rs = &qp->resp;
	u32 prod;
	bool busy;

	spin_lock_bh(&qp->resp_lock);
	if (q->hdr) {
		/* The posted receives are dropped without completions. */
		prod = sroce_ring_load_prod(q->hdr);
		if (!sroce_ring_prod_valid(prod, q->idx, q->num_entries))
			prod = q->idx;
		q->idx = prod;
		sroce_ring_store_cons(q->hdr, prod);
	}
	__skb_queue_purge(&rs->txq);
	rs->have_wqe = false;
	rs->odp_wait = false;
	rs->last_wqe_sent = false;
	rs->in_send = false;
	rs->in_write = false;
	sroce_resp_forget(qp);
	busy = rs->tx_busy;
	spin_unlock_bh(&qp->resp_lock);
	while (busy) {
		usleep_range(20, 100);
		spin_lock_bh(&qp->resp_lock);
		busy = rs->tx_busy;
		spin_unlock_bh(&qp->resp_lock);
	}
}

void sroce_resp_cleanup(struct sroce_qp *qp)
{
	__skb_queue_purge(&qp->resp.txq);
	qp->resp.replay = NULL;
	kfree(qp->resp.res);
	qp->resp.res = NULL;
	qp->resp.res_n = 0;
}

/*
 * The WQE an SRQ QP holds is flushed; the SRQ's other WQEs stay for the
 * other QPs. Then IB_EVENT_QP_LAST_WQE_REACHED (IBA 11.6.3.2), once.
 */
static void sroce_resp_flush_srq(struct sroce_qp *qp, struct sroce_cqe *cqe)
{
	bool last;

	spin_lock_bh(&qp->resp_lock);
	sroce_resp_forget(qp);
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
static void sroce_resp_flush_xrc(struct sroce_qp *qp, struct sroce_cqe *cqe)
{
	spin_lock_bh(&qp->resp_lock);
	sroce_resp_forget(qp);
	if (qp->resp.have_wqe)
		sroce_resp_complete(qp, cqe, true);
	spin_unlock_bh(&qp->resp_lock);
}

/*
 * Complete the receive WQEs from the oldest up to @end with @cqe, at most
 * SROCE_FLUSH_BATCH of them, under resp_lock. False when there is nothing
 * more to do (@end reached or passed, or the QP left the error state).
 */
static bool sroce_resp_flush_batch(struct sroce_qp *qp, struct sroce_cqe *cqe,
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
void sroce_resp_flush(struct sroce_qp *qp)
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
		sroce_resp_ack_release(qp);
		sroce_resp_flush_srq(qp, &cqe);
		return;
	}
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		sroce_resp_ack_release(qp);
		sroce_resp_flush_xrc(qp, &cqe);
		return;
	}
	if (!q->hdr)
		return;
	sroce_resp_ack_release(qp);
	spin_lock_bh(&qp->resp_lock);
	sroce_resp_forget(qp);
	end = sroce_ring_load_prod(q->hdr);
	/* A WQE the responder holds completes, wherever prod moved back to. */
	held = q->idx + qp->resp.have_wqe;
	if (!sroce_ring_prod_valid_read(end, q->idx, held, q->num_entries))
		end = held;
	spin_unlock_bh(&qp->resp_lock);

	while (sroce_resp_flush_batch(qp, &cqe, end))
		cond_resched();
}
