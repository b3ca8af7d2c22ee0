// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the responder's request execution (IBA 9.7.5.1, the responder
 * side of RC and UC, and UD receive). It runs in softirq context for every
 * request packet: PSN and opcode-sequence checks, SEND placement into the
 * receive WQE, RDMA WRITE placement by rkey, READ and atomic acceptance,
 * and the ACK, NAK or RNR NAK that answers. Below it, and never calling
 * it: the responder resources, which answer READs and atomics and replay
 * duplicates (sroce_resp_res.c), the receive WQEs (sroce_rwqe.c), and the
 * answer queue with the delayed ACK (sroce_ack.c), which the requester
 * uses too.
 *
 * Every rkey is looked up and checked (PD, access rights, bounds) for
 * every packet. State is under qp->resp_lock; answers are built under it
 * and sent after.
 */
#include <linux/delay.h>
#include <linux/if_vlan.h>

#include "sroce_engine.h"
#include "sroce_resp_res.h"
#include "sroce_rwqe.h"
#include "sroce_compat.h"

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

static enum sroce_resp_result sroce_resp_send(struct sroce_qp *qp,
					      struct sk_buff *skb,
					      const struct sroce_pkt *pkt)
{
	struct sroce_pktbuf pb = { .skb = skb, .off = pkt->payload_off };
	struct sroce_rwqe *r = &qp->resp.rwqe;
	u32 flags = pkt->info->flags;
	struct sroce_cqe cqe = {};
	int err;

	err = sroce_rwqe_get(qp);
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
	if ((flags & SROCE_OPF_IETH) && sroce_rres_atomics_now(qp))
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
		sroce_rwqe_complete_err(qp, err == -ENOSPC ? IB_WC_LOC_LEN_ERR :
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
			sroce_rwqe_complete_err(qp, IB_WC_REM_INV_REQ_ERR);
			return SROCE_RESP_NAK_INV;
		}
		cqe.flags |= SROCE_CQE_F_WITH_INV;
		cqe.ex.invalidated_rkey = pkt->ieth_rkey;
	}
	sroce_rwqe_complete(qp, &cqe, pkt->se);
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
		err = sroce_rwqe_get(qp);
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
	sroce_rwqe_complete(qp, &cqe, pkt->se);
	return SROCE_RESP_OK;
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
	if (!sroce_rres_next(qp))
		return SROCE_RESP_NAK_INV;	/* beyond max_dest_rd_atomic */
	r.npsn = len ? DIV_ROUND_UP(len, mtu) : 1;
	r.va = pkt->reth.va;
	r.rkey = pkt->reth.rkey;
	r.length = len;
	return sroce_rres_queue(qp, &r, pkt, out);
}

/*
 * CMP_SWAP and FETCH_ADD (IBA 9.4.5). The key is checked now, so that a
 * bad request is NAKed at once; the operation itself waits for its turn
 * behind the READs before it, which read the memory as it was before,
 * unless a later request must see its result first
 * (sroce_rres_atomics_now()). A later SEND or WRITE does not wait for it:
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
	if (!sroce_rres_next(qp))
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
	return sroce_rres_queue(qp, &r, pkt, out);
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

	return sroce_rres_queue(qp, &r, pkt, out);
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
	if (!sroce_rres_next(qp)) {
		sroce_mr_put(mr);
		return SROCE_RESP_NAK_INV;	/* beyond max_dest_rd_atomic */
	}
	/* Release: the earlier atomics' results are visible first. */
	err = sroce_rres_atomics_now(qp);
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
	if (!sroce_rres_next(qp))
		return SROCE_RESP_NAK_INV;	/* beyond max_dest_rd_atomic */
	smp_mb();
	sroce_qp_count(qp, SROCE_CNT_FLUSHES, 1);
	return sroce_resp_empty_read(qp, pkt, out);
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
		sroce_rwqe_complete_err(qp, IB_WC_REM_INV_REQ_ERR);
	sroce_ack_answer(qp, out, pkt->psn, sroce_aeth_nak(code), true);
}

/*
 * An RC request beyond the expected PSN: NAK the gap (PSN sequence error)?
 * Once per gap, not once per packet behind it (C9-114) - and once more
 * when a packet comes again that was already dropped behind the gap: the
 * requester is sending again what it sent before, from beyond the gap,
 * so our NAK was lost (its tail probe, sroce_retry_tlp_send(), resends the
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

/*
 * UC: the message in progress is lost (a gap, IBA 9.8.2, or a request
 * that failed: UC never answers); its receive WQE starts again with the
 * next message, at @epsn.
 */
static void sroce_resp_uc_restart(struct sroce_qp *qp, u32 epsn)
{
	struct sroce_resp *rs = &qp->resp;

	rs->in_send = false;
	rs->in_write = false;
	if (rs->have_wqe)
		rs->rwqe.offset = 0;
	rs->epsn = epsn;
}

/*
 * The RC or UC request @pkt, in sequence, was executed with result @r:
 * move on and answer it (UC answers nothing). @held: its ACK was held
 * before it executed (sroce_ack_hold()).
 */
static void sroce_resp_answer_result(struct sroce_qp *qp,
				     const struct sroce_pkt *pkt,
				     enum sroce_resp_result r, bool held,
				     struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;
	bool rc = sroce_qp_rc(qp);

	if (r != SROCE_RESP_OK) {
		/* Its own NAK follows; an ACK held before it goes first. */
		if (held)
			WRITE_ONCE(rs->ack_delayed, false);
		sroce_ack_send_held(qp, out);
		if (!rc) {
			sroce_resp_uc_restart(qp, sroce_psn_add(pkt->psn, 1));
			return;
		}
	}
	switch (r) {
	case SROCE_RESP_OK:
		rs->nak_sent = false;
		rs->epsn = sroce_psn_add(pkt->psn, 1);
		sroce_ack_taken(qp);
		if (pkt->info->flags & SROCE_OPF_LAST)
			rs->msn = sroce_psn_add(rs->msn, 1);
		if (rc && pkt->ackreq)
			sroce_ack_done(qp, out, pkt->psn, held);
		break;
	case SROCE_RESP_ANSWERED:
		rs->nak_sent = false;
		break;
	case SROCE_RESP_RNR:
		sroce_qp_count(qp, SROCE_CNT_RNR_NAKS_SENT, 1);
		sroce_ack_answer(qp, out, pkt->psn,
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

static void sroce_resp_rc_uc(struct sroce_qp *qp, struct sk_buff *skb,
			     const struct sroce_pkt *pkt,
			     struct sk_buff_head *out)
{
	struct sroce_resp *rs = &qp->resp;
	bool rc = sroce_qp_rc(qp);
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
			sroce_ack_pp_exit(qp);
		sroce_ack_send_held(qp, out);
	}
	if (d && rc) {
		if (d < 0)
			sroce_rres_duplicate(qp, pkt, out);
		else if (sroce_resp_seq_nak_due(qp, pkt->psn))
			sroce_ack_answer(qp, out, rs->epsn,
					 sroce_aeth_nak(SROCE_NAK_PSN_SEQ_ERR),
					 false);
		return;
	}
	if (d)		/* UC: a gap loses the message in progress */
		sroce_resp_uc_restart(qp, pkt->psn);

	held = rc && pkt->ackreq &&
	       (pkt->info->flags & (SROCE_OPF_SEND | SROCE_OPF_WRITE)) &&
	       sroce_ack_hold(qp);
	sroce_resp_answer_result(qp, pkt, sroce_resp_execute(qp, skb, pkt, out),
				 held, out);
}

/* ------------------------------------------------------------------------
 * UD and GSI receive (IBA 11.4.1.2: a 40-byte GRH area precedes the data)
 */

/* The completion of the datagram @pkt, received in @skb. */
static void sroce_resp_ud_cqe(struct sroce_qp *qp, const struct sk_buff *skb,
			      const struct sroce_pkt *pkt,
			      struct sroce_cqe *cqe)
{
	cqe->opcode = IB_WC_RECV;
	cqe->byte_len = SROCE_GRH_BYTES + pkt->payload_len;
	cqe->src_qp = pkt->deth.src_qpn;
	cqe->flags = SROCE_CQE_F_GRH;
	cqe->network_type = ip_hdr(skb)->version == 4 ? SROCE_NETWORK_IPV4 :
							  SROCE_NETWORK_IPV6;
	if (skb_mac_header_was_set(skb))
		memcpy(cqe->smac, eth_hdr(skb)->h_source, ETH_ALEN);
	else
		memcpy(cqe->smac, qp->sdev->ndev->dev_addr, ETH_ALEN);
	/*
	 * Received on a VLAN device (still skb->dev: the receive path runs
	 * under RCU to here). The CM finds the GID to answer from by it
	 * (ib_init_ah_attr_from_wc()): without it, rdma_cm over a VLAN fails.
	 */
	if (is_vlan_dev(skb->dev))
		cqe->vlan_id = vlan_dev_vlan_id(skb->dev);
	if (pkt->info->flags & SROCE_OPF_IMMDT) {
		cqe->flags |= SROCE_CQE_F_WITH_IMM;
		memcpy(&cqe->ex.imm_data, pkt->imm, sizeof(cqe->ex.imm_data));
	}
}

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
	if (pkt->payload_len > sroce_qp_mtu(qp) || sroce_rwqe_get(qp)) {
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
		sroce_rwqe_complete(qp, &cqe, true);
		return;
	}
	sroce_resp_ud_cqe(qp, skb, pkt, &cqe);
	sroce_rwqe_complete(qp, &cqe, pkt->se);
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
	send = sroce_ack_tx_claim(qp, &out);
	spin_unlock(&qp->resp_lock);
	if (send)
		sroce_ack_tx_drain(qp, &out);
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
		sroce_rres_build(qp, &out, SROCE_READ_BURST);
	more = sroce_ack_due(qp) && sroce_resp_state_ok(qp) &&
	       !qp->resp.odp_wait;
	send = sroce_ack_tx_claim(qp, &out);
	spin_unlock_bh(&qp->resp_lock);
	if (send)
		sroce_ack_tx_drain(qp, &out);
	if (more)
		sroce_qp_kick(qp);
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
	sroce_ack_forget(qp);
	qp->resp.epsn = qp->rq_psn;
	qp->resp.msn = 0;
	qp->resp.in_send = false;
	qp->resp.in_write = false;
	qp->resp.nak_sent = false;
	qp->resp.last_wqe_sent = false;
	sroce_ack_init(qp);
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
	sroce_ack_forget(qp);
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
