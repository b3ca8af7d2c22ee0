// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the requester (send engine), IBA 9.7 and C9-x requester rules.
 *
 * It runs in the context of the user's doorbell system call (the queue was
 * idle) and otherwise from the QP's work item. Each WQE is copied from the
 * send queue ring into its shadow slot, and only the copy is validated and
 * used, also for retransmissions (go-back-N restarts from a PSN inside the
 * shadow slots, never from user memory).
 *
 * Locking: requester and completer state is under qp->sq_lock. Packets are
 * built under the lock into a local list and transmitted after it is
 * released, so that loopback delivery (which runs the peer's responder and
 * then our own completer) never finds the lock held.
 */
#include "sroce_engine.h"
#include "sroce_retry.h"
#include "sroce_ack.h"
#include "sroce_net.h"

/*
 * In flight per QP: at most this many unacknowledged PSNs and bytes. The
 * byte limit keeps bursts within what a receiver's NIC queue absorbs, so
 * that a slow receiver sees pacing instead of loss and go-back-N storms.
 */
#define SROCE_MAX_INFLIGHT_PSNS		128
#define SROCE_MAX_INFLIGHT_BYTES	(128 * 1024)
/*
 * And at most this many WQEs started and not completed. Memory operations
 * take no PSN, so without it any number of them could pile up behind one
 * unacknowledged request; its ACK would then retire them all at once in
 * softirq context (sroce_comp_ack_upto()), and a go-back-N rewind walk them
 * all (sroce_sq_rewind()).
 */
#define SROCE_MAX_INFLIGHT_WQES		(2 * SROCE_MAX_INFLIGHT_PSNS)
/*
 * SEND and WRITE packets ask for an ACK every this many packets, and the
 * last packet before the requester stops (sroce_req_ack_tail()): the
 * responder then answers once per run instead of once per message, as
 * coalesced ACKs allow (IBA 9.7.5.1.1). rxe asks on every message's last
 * packet; sroce's ACK traffic for small messages is 16 times lower.
 */
#define SROCE_ACK_EVERY			16
/*
 * Packets built per lock hold (and so at most per GSO burst). A memory
 * operation (LOCAL_INV, BIND_MW, REG_MR) executed counts as one packet here
 * and in the budgets below: it sends nothing, but a send queue of 2^20 of
 * them must not run in one go with bottom halves off.
 */
#define SROCE_REQ_BATCH		16
/* Packets sent per run before yielding to the work item. */
#define SROCE_REQ_BUDGET	256
/* The same from softirq context, where an ACK opened the window. */
#define SROCE_REQ_SOFTIRQ_BUDGET	64

/*
 * Which opcodes each QP type may post (IBA 10.7.3 / 11.4.1.1). Memory
 * operations without a packet (LOCAL_INV, BIND_MW; REG_MR, whose WQE
 * names a kernel MR and so only kernel consumers may post) run on RC and
 * UC QPs.
 */
static bool sroce_req_opcode_ok(struct sroce_qp *qp, u32 op)
{
	if ((op == IB_WR_LOCAL_INV || op == IB_WR_BIND_MW ||
	     (op == IB_WR_REG_MR && !qp->is_user)) &&
	    (qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC))
		return true;
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
		       op == IB_WR_SEND_WITH_INV || op == IB_WR_RDMA_WRITE ||
		       op == IB_WR_RDMA_WRITE_WITH_IMM ||
		       op == IB_WR_RDMA_READ ||
		       op == IB_WR_ATOMIC_CMP_AND_SWP ||
		       op == IB_WR_ATOMIC_FETCH_AND_ADD ||
		       op == SROCE_WR_ATOMIC_WRITE ||
		       (op == SROCE_WR_FLUSH && qp->is_user);
	case IB_QPT_XRC_INI:
		/* As RC; A19's FLUSH and ATOMIC WRITE are RC's alone. */
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
		       op == IB_WR_SEND_WITH_INV || op == IB_WR_RDMA_WRITE ||
		       op == IB_WR_RDMA_WRITE_WITH_IMM ||
		       op == IB_WR_RDMA_READ ||
		       op == IB_WR_ATOMIC_CMP_AND_SWP ||
		       op == IB_WR_ATOMIC_FETCH_AND_ADD;
	case IB_QPT_UC:
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
		       op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM;
	default:
		return false;
	}
}

static u8 sroce_req_kind(u32 op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return SROCE_SWQE_WRITE;
	case IB_WR_RDMA_READ:
		return SROCE_SWQE_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case SROCE_WR_ATOMIC_WRITE:
	case SROCE_WR_FLUSH:
		return SROCE_SWQE_ATOMIC;
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
	case IB_WR_BIND_MW:
		return SROCE_SWQE_LOCAL;
	default:
		return SROCE_SWQE_SEND;
	}
}

/*
 * Copy the WQE at @idx out of the ring into its shadow slot and validate
 * the copy. Returns 0, or the completion status to fail it with.
 */
static int sroce_req_fetch(struct sroce_qp *qp, u32 idx)
{
	struct sroce_swqe *s = sroce_swqe_get(qp, idx);
	struct sroce_send_wqe *w = &s->w;
	u64 total = 0;
	u32 i;

	/* The slot holds a whole ring entry: header and data[]. */
	memcpy((u8 *)s + offsetof(struct sroce_swqe, w),
	       sroce_queue_entry(&qp->sq, idx), qp->sq.stride);

	if (!sroce_req_opcode_ok(qp, w->opcode) ||
	    (w->flags & ~SROCE_WQE_FLAGS_ALL))
		return IB_WC_LOC_QP_OP_ERR;
	s->kind = sroce_req_kind(w->opcode);
	s->wc_opcode = sroce_wr_to_wc_opcode(w->opcode);
	s->signaled = qp->sig_all || (w->flags & SROCE_WQE_SIGNALED);
	s->ud = qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
	s->local_done = false;
	s->flush_sent = 0;
	if (s->kind == SROCE_SWQE_LOCAL) {
		s->length = 0;
		return 0;
	}

	if (w->flags & SROCE_WQE_INLINE) {
		if (s->kind == SROCE_SWQE_READ || s->kind == SROCE_SWQE_ATOMIC ||
		    w->inline_len > qp->max_inline)
			return IB_WC_LOC_QP_OP_ERR;
		total = w->inline_len;
	} else {
		if (w->num_sge > qp->max_send_sge)
			return IB_WC_LOC_QP_OP_ERR;
		for (i = 0; i < w->num_sge; i++)
			total += ((struct sroce_sge *)w->data)[i].length;
	}
	if (total > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
		/* Its 8 bytes are in the WQE; no SGE, nothing comes back. */
		if (w->num_sge || (w->flags & SROCE_WQE_INLINE))
			return IB_WC_LOC_QP_OP_ERR;
		total = sizeof(u64);
	} else if (w->opcode == SROCE_WR_FLUSH) {
		/* No payload either way (IBA oA19-2); the range is remote. */
		if (w->num_sge || (w->flags & SROCE_WQE_INLINE) ||
		    !w->wr.flush.type ||
		    (w->wr.flush.type & ~(SROCE_FLUSH_GLOBAL |
					  SROCE_FLUSH_PERSISTENT)) ||
		    w->wr.flush.level > SROCE_FLUSH_MR)
			return IB_WC_LOC_QP_OP_ERR;
		if (w->wr.flush.length > SROCE_MAX_MSG_SIZE)
			return IB_WC_LOC_LEN_ERR;
		total = 0;
	} else if (s->kind == SROCE_SWQE_ATOMIC) {
		if (total < sizeof(u64))
			return IB_WC_LOC_LEN_ERR;
		total = sizeof(u64);
	}
	if (s->ud) {
		if (total > sroce_qp_mtu(qp) ||
		    w->wr.ud.remote_qpn > SROCE_QPN_MASK)
			return IB_WC_LOC_LEN_ERR;
	}
	s->length = total;
	return 0;
}

/* Set up a (possibly re-sent) WQE to be transmitted from req.psn. */
static void sroce_req_start(struct sroce_qp *qp, struct sroce_swqe *s)
{
	u32 mtu = sroce_qp_mtu(qp);

	s->first_psn = qp->req.psn;
	s->sent = 0;
	s->done = 0;
	if (s->kind == SROCE_SWQE_ATOMIC)
		s->npsn = 1;
	else
		s->npsn = s->length ? DIV_ROUND_UP(s->length, mtu) : 1;
	if (s->kind == SROCE_SWQE_READ || s->kind == SROCE_SWQE_ATOMIC)
		qp->req.rd_atomic++;
	if (qp->req.idx == qp->req.started_end)
		qp->req.started_end++;
}

/* PSNs that may be in flight while @s is sent. */
static u32 sroce_req_window(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	u32 mtu = sroce_qp_mtu(qp);

	/* After an ACK timeout, one packet until an answer comes. */
	if (qp->comp.probe)
		return 1;
	/* Messages shorter than a packet: the PSN limit bounds the bytes. */
	if (s->length < mtu)
		return SROCE_MAX_INFLIGHT_PSNS;
	return clamp_t(u32, SROCE_MAX_INFLIGHT_BYTES / mtu, 4,
		       SROCE_MAX_INFLIGHT_PSNS);
}

static u8 sroce_req_opcode(struct sroce_qp *qp, struct sroce_swqe *s,
			   bool first, bool last)
{
	enum ib_qp_type t = qp->ibqp.qp_type;
	/* UC and XRC: RC's operation codes under their transport bits. */
	u8 base = t == IB_QPT_UC ? SROCE_TRANSPORT_UC :
		  t == IB_QPT_XRC_INI ? SROCE_TRANSPORT_XRC : SROCE_TRANSPORT_RC;
	u32 op = s->w.opcode;

	if (s->ud)
		return op == IB_WR_SEND_WITH_IMM ?
		       SROCE_OP_UD_SEND_ONLY_WITH_IMM : SROCE_OP_UD_SEND_ONLY;
	switch (s->kind) {
	case SROCE_SWQE_READ:
		return base | SROCE_OP_RC_RDMA_READ_REQUEST;
	case SROCE_SWQE_ATOMIC:
		if (op == SROCE_WR_ATOMIC_WRITE)
			return SROCE_OP_RC_ATOMIC_WRITE;
		if (op == SROCE_WR_FLUSH)
			return SROCE_OP_RC_FLUSH;
		return base | (op == IB_WR_ATOMIC_CMP_AND_SWP ?
			       SROCE_OP_RC_COMPARE_SWAP :
			       SROCE_OP_RC_FETCH_ADD);
	case SROCE_SWQE_WRITE:
		if (!last)
			return base | (first ? SROCE_OP_RC_RDMA_WRITE_FIRST :
					       SROCE_OP_RC_RDMA_WRITE_MIDDLE);
		if (op == IB_WR_RDMA_WRITE_WITH_IMM)
			return base | (first ?
				SROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMM :
				SROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMM);
		return base | (first ? SROCE_OP_RC_RDMA_WRITE_ONLY :
				       SROCE_OP_RC_RDMA_WRITE_LAST);
	default:
		if (!last)
			return base | (first ? SROCE_OP_RC_SEND_FIRST :
					       SROCE_OP_RC_SEND_MIDDLE);
		if (op == IB_WR_SEND_WITH_IMM)
			return base | (first ? SROCE_OP_RC_SEND_ONLY_WITH_IMM :
					       SROCE_OP_RC_SEND_LAST_WITH_IMM);
		if (op == IB_WR_SEND_WITH_INV)
			return base | (first ? SROCE_OP_RC_SEND_ONLY_WITH_INV :
					       SROCE_OP_RC_SEND_LAST_WITH_INV);
		return base | (first ? SROCE_OP_RC_SEND_ONLY :
				       SROCE_OP_RC_SEND_LAST);
	}
}

/* Fill the header fields of the next packet of @s; returns payload bytes. */
static u32 sroce_req_fill(struct sroce_qp *qp, struct sroce_swqe *s,
			  struct sroce_pkt *pkt, u32 mtu)
{
	const struct sroce_send_wqe *w = &s->w;
	u32 off = s->sent, n = 0;
	bool first = true, last = true;

	memset(pkt, 0, sizeof(*pkt));
	if (s->kind == SROCE_SWQE_SEND || s->kind == SROCE_SWQE_WRITE) {
		n = min(mtu, s->length - off);
		first = off == 0;
		last = off + n == s->length;
	} else if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
		n = sizeof(u64);
	}
	pkt->opcode = sroce_req_opcode(qp, s, first, last);
	pkt->pkey = SROCE_DEFAULT_PKEY;
	pkt->dqpn = s->ud ? w->wr.ud.remote_qpn : qp->dest_qpn;
	pkt->psn = sroce_psn_add(s->first_psn, off / mtu);
	pkt->pad = sroce_pad_for(n);
	pkt->se = last && (w->flags & SROCE_WQE_SOLICITED);

	switch (s->kind) {
	case SROCE_SWQE_WRITE:
		pkt->reth.va = w->wr.rdma.remote_addr;
		pkt->reth.rkey = w->wr.rdma.rkey;
		pkt->reth.dma_len = s->length;
		break;
	case SROCE_SWQE_READ:
		/* A re-sent READ asks only for what is still missing. */
		pkt->reth.va = w->wr.rdma.remote_addr + off;
		pkt->reth.rkey = w->wr.rdma.rkey;
		pkt->reth.dma_len = s->length - off;
		break;
	case SROCE_SWQE_ATOMIC:
		if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
			pkt->reth.va = w->wr.atomic.remote_addr;
			pkt->reth.rkey = w->wr.atomic.rkey;
			pkt->reth.dma_len = sizeof(u64);
			break;
		}
		if (w->opcode == SROCE_WR_FLUSH) {
			pkt->reth.va = w->wr.flush.remote_addr;
			pkt->reth.rkey = w->wr.flush.rkey;
			pkt->reth.dma_len = (u32)w->wr.flush.length;
			pkt->feth.plt = w->wr.flush.type;
			pkt->feth.sel = w->wr.flush.level;
			break;
		}
		pkt->atmeth.va = w->wr.atomic.remote_addr;
		pkt->atmeth.rkey = w->wr.atomic.rkey;
		pkt->atmeth.swap_add = w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
				       w->wr.atomic.swap :
				       w->wr.atomic.compare_add;
		pkt->atmeth.compare = w->wr.atomic.compare_add;
		break;
	default:
		break;
	}
	if (last)
		memcpy(pkt->imm, &w->ex.imm_data, sizeof(pkt->imm));
	pkt->ieth_rkey = w->ex.invalidate_rkey;
	pkt->xrc_srqn = w->xrc_srqn;	/* XRC: the receiver's SRQ */
	if (s->ud) {
		/* IBA 10.2.5: a Q_Key with the high bit set means the QP's. */
		pkt->deth.qkey = (w->wr.ud.remote_qkey & 0x80000000) ?
				 qp->qkey : w->wr.ud.remote_qkey;
		pkt->deth.src_qpn = qp->ibqp.qp_num;
	}
	if (sroce_qp_rc(qp))
		pkt->ackreq = (s->kind != SROCE_SWQE_SEND &&
			       s->kind != SROCE_SWQE_WRITE) ||
			      ++qp->req.noack_pkts >= SROCE_ACK_EVERY;
	if (pkt->ackreq)
		qp->req.noack_pkts = 0;
	return n;
}

static bool sroce_req_flush_rxe(struct sroce_qp *qp)
{
	switch (READ_ONCE(sroce_flush_icrc)) {
	case 1:
		return false;
	case 2:
		return true;
	default:
		return qp->req.flush_rxe;
	}
}

/* Build the next packet of @s. Returns it, or NULL with *status set. */
static struct sk_buff *sroce_req_packet(struct sroce_qp *qp,
					struct sroce_swqe *s, int *status)
{
	u32 mtu = sroce_qp_mtu(qp);
	struct sroce_xmit_addr *xa;
	struct sroce_pktbuf pb;
	struct sroce_pkt pkt;
	struct sk_buff *skb;
	u32 n, hdr_len, off = s->sent;
	int err;

	n = sroce_req_fill(qp, s, &pkt, mtu);
	hdr_len = sroce_opcode_get(pkt.opcode)->hdr_len;
	skb = sroce_skb_alloc(qp->sdev, hdr_len + n + pkt.pad +
			      SROCE_ICRC_BYTES);
	if (!skb) {
		*status = -ENOMEM;
		return NULL;
	}
	sroce_build(skb->data, &pkt);
	if (s->kind == SROCE_SWQE_ATOMIC) {
		/* ATOMIC WRITE's 8 bytes (n is 0 for the other atomics). */
		memcpy(skb->data + hdr_len, &s->w.wr.atomic.compare_add, n);
	} else if (s->w.flags & SROCE_WQE_INLINE) {
		memcpy(skb->data + hdr_len, s->w.data + off, n);
	} else if (n) {
		pb = (struct sroce_pktbuf){ .buf = skb->data + hdr_len };
		err = sroce_sgl_copy(qp, SROCE_ODP_REQ,
				     (struct sroce_sge *)s->w.data,
				     s->w.num_sge, off, &pb, n, SROCE_FROM_MR);
		if (err) {
			kfree_skb(skb);
			/* -EAGAIN: an ODP page is faulted in; we come back. */
			*status = err == -EAGAIN ? -ENOMEM :
				  err == -ENOSPC ? IB_WC_LOC_LEN_ERR :
						   IB_WC_LOC_PROT_ERR;
			return NULL;
		}
	}
	memset(skb->data + hdr_len + n, 0, pkt.pad);

	BUILD_BUG_ON(sizeof(*xa) > sizeof(skb->cb));
	xa = (struct sroce_xmit_addr *)skb->cb;
	if (s->ud) {
		err = sroce_addr_from_av(qp, &s->w.av, xa);
		if (err) {
			kfree_skb(skb);
			*status = IB_WC_LOC_QP_OP_ERR;
			return NULL;
		}
	} else {
		sroce_addr_from_qp(qp, xa);
		if (s->w.opcode == SROCE_WR_FLUSH) {
			xa->rxe_flush_icrc = sroce_req_flush_rxe(qp);
			s->flush_sent |= xa->rxe_flush_icrc ?
					 SROCE_FLUSH_SENT_RXE :
					 SROCE_FLUSH_SENT_IBA;
		}
	}

	if (s->kind == SROCE_SWQE_SEND || s->kind == SROCE_SWQE_WRITE)
		s->sent += n;
	else
		s->sent = s->length;	/* one request covers it all */
	return skb;
}

static bool sroce_req_may_send(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	/* In SQD, the WQE in progress is finished, none is started. */
	return state == IB_QPS_RTS || (state == IB_QPS_SQD && qp->req.fetched);
}

/* What sroce_req_more() found at req.idx. */
enum sroce_req_next {
	SROCE_REQ_IDLE,		/* nothing posted (yet) */
	SROCE_REQ_WQE,		/* a WQE to fetch */
	SROCE_REQ_BAD_PROD,	/* an impossible producer index */
};

/*
 * Is another WQE waiting at req.idx (== req.fetch_end)? Implements the
 * engine's half of the doorbell handshake (sroce-abi.h): before declaring
 * the queue idle, raise NEED_WAKEUP, then look at prod once more.
 */
static enum sroce_req_next sroce_req_more(struct sroce_qp *qp)
{
	struct sroce_ring_hdr *hdr = qp->sq.hdr;
	u32 p = sroce_ring_load_prod(hdr);

	/*
	 * With at least SROCE_ACK_EVERY packets unacknowledged, an ACK is
	 * due soon and the completer will look at the queue again then
	 * (run_on_ack): NEED_WAKEUP stays clear, and WQEs posted meanwhile
	 * go out with that ACK's run, in one burst, without a doorbell
	 * system call each. With fewer in flight (a latency-bound flow),
	 * the doorbell wakes the engine at once as usual.
	 */
	if (p == qp->req.idx && sroce_qp_rc(qp) &&
	    sroce_psn_diff(qp->req.psn, qp->comp.psn) >= SROCE_ACK_EVERY) {
		qp->req.run_on_ack = true;
		return SROCE_REQ_IDLE;
	}
	if (p == qp->req.idx) {
		sroce_ring_kflags_set(hdr, SROCE_SQ_NEED_WAKEUP);
		/* Pairs with the provider's barrier between prod and kflags. */
		smp_mb__after_atomic();
		p = sroce_ring_load_prod(hdr);
		if (p == qp->req.idx)
			return SROCE_REQ_IDLE;
	}
	if (sroce_ring_kflags_read(hdr) & SROCE_SQ_NEED_WAKEUP)
		sroce_ring_kflags_clear(hdr, SROCE_SQ_NEED_WAKEUP);
	/*
	 * WQEs [sq.idx, fetch_end) are fetched already: prod may neither
	 * pass the ring's end nor move back over them, or the next fetch
	 * would read a slot past prod.
	 */
	if (!sroce_ring_prod_valid_read(p, qp->sq.idx, qp->req.fetch_end,
					qp->sq.num_entries)) {
		sroce_ring_kflags_set(hdr, SROCE_RING_F_ERROR);
		return SROCE_REQ_BAD_PROD;
	}
	return SROCE_REQ_WQE;
}

/*
 * Execute a memory operation WQE (no packet). Returns 0 or the completion
 * status (rdma_rxe's: IB_WC_LOC_QP_OP_ERR for a bad LOCAL_INV or REG_MR,
 * IB_WC_MW_BIND_ERR for a bad bind).
 */
static int sroce_req_local(struct sroce_qp *qp, struct sroce_swqe *s)
{
	int err;

	switch (s->w.opcode) {
	case IB_WR_LOCAL_INV:
		err = sroce_key_invalidate(qp, s->w.ex.invalidate_rkey);
		break;
	case IB_WR_REG_MR:
		err = sroce_mr_fast_reg(qp, &s->w);
		break;
	case IB_WR_BIND_MW:
		return sroce_mw_bind(qp, &s->w) ? IB_WC_MW_BIND_ERR : 0;
	default:
		err = -EINVAL;
		break;
	}
	return err ? IB_WC_LOC_QP_OP_ERR : 0;
}

/*
 * The memory operation at req.idx: executed once (a go-back-N resend that
 * walks over it again does not repeat it), it takes no PSN and completes
 * once every WQE before it has (sroce_retry_sent()). False if it failed.
 */
static bool sroce_req_do_local(struct sroce_qp *qp, struct sroce_swqe *s)
{
	int status;

	/*
	 * LOCAL_INV waits until every earlier WQE has completed, so that no
	 * retransmission reads a region after it was invalidated.
	 */
	if (!s->local_done && s->w.opcode == IB_WR_LOCAL_INV &&
	    qp->req.idx != qp->sq.idx) {
		qp->req.blocked = true;
		return false;
	}
	if (!s->local_done) {
		status = sroce_req_local(qp, s);
		s->local_done = true;
		if (status) {
			sroce_sq_fail_at(qp, qp->req.idx, status);
			return false;
		}
	}
	s->first_psn = qp->req.psn;
	s->npsn = 0;
	s->sent = 0;
	s->done = 0;
	if (qp->req.idx == qp->req.started_end)
		qp->req.started_end++;
	qp->req.idx++;
	sroce_retry_sent(qp);
	return true;
}

/* Fail the WQE at req.idx, which was never sent, and stop the QP. */
static void sroce_req_fail(struct sroce_qp *qp, int status)
{
	struct sroce_swqe *s = sroce_swqe_get(qp, qp->req.idx);

	if (qp->req.fetched && (s->kind == SROCE_SWQE_READ ||
				s->kind == SROCE_SWQE_ATOMIC))
		qp->req.rd_atomic--;
	qp->req.fetched = false;
	sroce_sq_fail_at(qp, qp->req.idx, status);
}

/*
 * Build packets into @list and execute memory operations, taking one unit
 * of *@budget for each, until it is spent. Returns false when the engine
 * has nothing more it may do now.
 */
static bool sroce_req_build_some(struct sroce_qp *qp,
				 struct sk_buff_head *list, int *budget)
{
	enum sroce_req_next next;
	struct sroce_swqe *s;
	struct sk_buff *skb;
	int status;

	while (*budget > 0) {
		if (!sroce_req_may_send(qp) || qp->comp.rnr_wait)
			return false;
		if (!qp->req.fetched) {
			/* A new WQE: the answers to the oldest ones come first. */
			if (qp->req.idx == qp->req.started_end &&
			    qp->req.started_end - qp->sq.idx >=
			    SROCE_MAX_INFLIGHT_WQES) {
				qp->req.blocked = true;
				return false;
			}
			if (qp->req.idx == qp->req.fetch_end) {
				next = sroce_req_more(qp);
				if (next == SROCE_REQ_BAD_PROD)
					sroce_qp_ring_error(qp);
				if (next != SROCE_REQ_WQE)
					return false;
				status = sroce_req_fetch(qp, qp->req.idx);
				qp->req.fetch_end++;
				if (status) {
					sroce_req_fail(qp, status);
					return false;
				}
			}
			s = sroce_swqe_get(qp, qp->req.idx);
			/* Fence: wait for earlier READs/atomics (IBA 10.8.3.3). */
			if (((s->w.flags & SROCE_WQE_FENCE) && qp->req.rd_atomic) ||
			    ((s->kind == SROCE_SWQE_READ ||
			      s->kind == SROCE_SWQE_ATOMIC) &&
			     qp->req.rd_atomic >= max_t(u32, qp->max_rd_atomic, 1))) {
				qp->req.blocked = true;
				return false;
			}
			if (s->kind == SROCE_SWQE_LOCAL) {
				if (!sroce_req_do_local(qp, s))
					return false;
				(*budget)--;
				continue;
			}
			/*
			 * The buffers a READ's or an atomic's answer lands in
			 * are faulted in first, where they are ODP memory: the
			 * completer, in softirq, could only drop the answer.
			 */
			if ((s->kind == SROCE_SWQE_READ ||
			     s->kind == SROCE_SWQE_ATOMIC) && qp->is_user &&
			    sroce_sgl_ready(qp, (struct sroce_sge *)s->w.data,
					    s->w.num_sge)) {
				qp->req.nomem = true;
				return false;
			}
			sroce_req_start(qp, s);
			qp->req.fetched = true;
		}
		s = sroce_swqe_get(qp, qp->req.idx);
		if (sroce_qp_rc(qp) &&
		    sroce_psn_diff(qp->req.psn, qp->comp.psn) >=
		    sroce_req_window(qp, s)) {
			qp->req.blocked = true;
			return false;
		}

		skb = sroce_req_packet(qp, s, &status);
		if (!skb) {
			if (status == -ENOMEM) {
				qp->req.nomem = true;
				return false;
			}
			sroce_req_fail(qp, status);
			return false;
		}
		__skb_queue_tail(list, skb);
		(*budget)--;
		qp->req.pkts++;

		if (s->sent == s->length) {
			/* Every packet of this WQE is out: on to the next. */
			qp->req.psn = sroce_psn_add(s->first_psn, s->npsn);
			qp->req.idx++;
			qp->req.fetched = false;
		} else {
			qp->req.psn = sroce_psn_add(qp->req.psn, 1);
		}
		if (sroce_psn_diff(qp->req.psn, qp->req.psn_max) > 0)
			qp->req.psn_max = qp->req.psn;
		if (!qp->req.fetched)
			sroce_retry_sent(qp);
	}
	return true;
}

/*
 * The last packet of a run asks for an ACK, so that every packet sent is
 * answered without waiting for SROCE_ACK_EVERY more. Its ICRC is computed
 * at transmit time, after this.
 */
static void sroce_req_ack_tail(struct sroce_qp *qp, struct sk_buff_head *list)
{
	struct sk_buff *skb = skb_peek_tail(list);

	if (!skb || !sroce_qp_rc(qp) || !qp->req.noack_pkts)
		return;
	skb->data[8] |= SROCE_BTH_ACKREQ;	/* BTH byte 8 */
	qp->req.noack_pkts = 0;
}

static bool sroce_req_build(struct sroce_qp *qp, struct sk_buff_head *list,
			    int *budget)
{
	bool more;

	sroce_retry_odp_resend(qp);
	more = sroce_req_build_some(qp, list, budget);

	sroce_req_ack_tail(qp, list);
	if (!more)
		sroce_retry_stopped(qp);
	if (qp->req.nomem) {
		qp->req.nomem = false;
		sroce_retry_nomem(qp);
	}
	return more;
}

/*
 * Three contexts run the send engine: the doorbell system call, the
 * completer when an ACK opens the window (softirq), and the work item.
 * Packets are built under sq_lock but sent after it is dropped, so one
 * runner at a time per QP keeps them in PSN order on the wire; a context
 * that finds the engine busy leaves SROCE_REQ_AGAIN for the runner.
 * (rxe serializes its requester as a task instead; sroce runs it at once
 * in whichever context has the work, without a scheduling hop.)
 */
enum { SROCE_REQ_RUNNING, SROCE_REQ_AGAIN };

static bool sroce_req_claim(struct sroce_qp *qp)
{
	if (!test_and_set_bit_lock(SROCE_REQ_RUNNING, &qp->req_run))
		return true;
	set_bit(SROCE_REQ_AGAIN, &qp->req_run);
	/* AGAIN before the second try; pairs with sroce_req_release(). */
	smp_mb__after_atomic();
	/* The runner may have let go before it saw AGAIN. */
	return !test_and_set_bit_lock(SROCE_REQ_RUNNING, &qp->req_run);
}

/* Let go of the engine; true if another context asked for a run. */
static bool sroce_req_release(struct sroce_qp *qp)
{
	clear_bit_unlock(SROCE_REQ_RUNNING, &qp->req_run);
	/* Let go before looking at AGAIN; pairs with sroce_req_claim(). */
	smp_mb__after_atomic();
	return test_bit(SROCE_REQ_AGAIN, &qp->req_run);
}

static void sroce_req_run_budget(struct sroce_qp *qp, int budget)
{
	struct sk_buff_head list;
	bool more, sent;
	int batch;

	if (!sroce_req_claim(qp))
		return;
	__skb_queue_head_init(&list);
again:
	clear_bit(SROCE_REQ_AGAIN, &qp->req_run);
	/* A request from now on is seen at release, not lost in this run. */
	smp_mb__after_atomic();
	do {
		batch = min(budget, SROCE_REQ_BATCH);
		budget -= batch;
		spin_lock_bh(&qp->sq_lock);
		more = sroce_req_build(qp, &list, &batch);
		spin_unlock_bh(&qp->sq_lock);
		budget += batch;	/* what the batch left */
		/* A delayed ACK leads our requests (sroce_ack.c). */
		sent = !skb_queue_empty(&list);
		if (sent)
			sroce_ack_req_xmit(qp, &list);
		sroce_qp_xmit_list(qp, &list);
		if (sent)
			sroce_ack_release(qp);
	} while (more && budget > 0);
	if (sroce_req_release(qp)) {
		if (budget <= 0)
			more = true;
		else if (sroce_req_claim(qp))
			goto again;
	}
	/* Spent: the work item goes on, after whatever else is due. */
	if (more)
		sroce_qp_kick(qp);
}

/* Run the send engine; process context with bh enabled. */
void sroce_req_run(struct sroce_qp *qp)
{
	sroce_req_run_budget(qp, SROCE_REQ_BUDGET);
}

/* Run the send engine from the receive path (softirq). */
void sroce_req_run_softirq(struct sroce_qp *qp)
{
	sroce_req_run_budget(qp, SROCE_REQ_SOFTIRQ_BUDGET);
}
