// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: the responder resources. A READ, atomic, ATOMIC WRITE or FLUSH
 * that the responder accepted takes one of max_dest_rd_atomic entries
 * (sroce_rres_queue()); its answers go out from there in PSN order
 * (sroce_rres_build()): READ responses, in bursts continued from the work
 * item, and atomic ACKs, the atomic executed in its turn. A duplicate
 * request is answered from its entry again, never executed again
 * (sroce_rres_duplicate()). It sits below the request execution of
 * sroce_resp.c and on top of the answer queue (sroce_ack.c).
 *
 * State is under qp->resp_lock.
 */
#include "sroce_resp_res.h"

/*
 * Execute the atomic of @res, once: with the rkey looked up again, so that
 * a region deregistered meanwhile is not touched (it fails, and is NAKed
 * in its turn).
 */
static int sroce_rres_exec_atomic(struct sroce_qp *qp, struct sroce_res *res)
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
int sroce_rres_atomics_now(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_res *res;
	u32 i;

	for (i = rs->res_pending; i > 0; i--) {
		res = &rs->res[(rs->res_head + rs->res_n - i) % rs->res_n];
		if (res->atomic && sroce_rres_exec_atomic(qp, res))
			return -EAGAIN;
	}
	return 0;
}

/* The oldest resource still to answer (res_pending > 0). */
static struct sroce_res *sroce_rres_oldest(struct sroce_resp *rs)
{
	return &rs->res[(rs->res_head + rs->res_n - rs->res_pending) %
			rs->res_n];
}

/* Is @res one of the resources still to answer? */
static bool sroce_rres_pending(const struct sroce_resp *rs,
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
static void sroce_rres_failed(struct sroce_qp *qp,
			      struct sk_buff_head *out, u32 psn, u32 msn)
{
	sroce_qp_count_err_nak(qp, SROCE_NAK_REMOTE_ACCESS_ERR, true);
	sroce_ack_build(qp, out, psn,
			sroce_aeth_nak(SROCE_NAK_REMOTE_ACCESS_ERR), msn);
	sroce_ack_forget(qp);
	sroce_qp_fatal(qp);
}

/* The next READ response of @res; false to stop building for now. */
static bool sroce_rres_build_read(struct sroce_qp *qp,
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
	pkt.aeth.syndrome = sroce_ack_syndrome();
	pkt.aeth.msn = res->msn;
	skb = sroce_ack_skb(qp, &pkt, n);
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
				sroce_rres_failed(qp, out, pkt.psn,
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

static bool sroce_rres_atomic_ack(struct sroce_qp *qp,
				  struct sk_buff_head *out,
				  const struct sroce_res *res)
{
	struct sroce_pkt pkt = {
		.opcode = SROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
		.psn = res->first_psn,
		.aeth = { .syndrome = sroce_ack_syndrome(),
			  .msn = res->msn },
		.atmack_orig = res->orig,
	};
	struct sk_buff *skb = sroce_ack_skb(qp, &pkt, 0);

	if (!skb)
		return false;
	__skb_queue_tail(out, skb);
	return true;
}

/*
 * Execute the atomic of @res in its turn if it has not been already, and
 * queue its ACK; false to stop building for now.
 */
static bool sroce_rres_build_atomic(struct sroce_qp *qp,
				    struct sk_buff_head *out,
				    struct sroce_res *res)
{
	if (sroce_rres_exec_atomic(qp, res)) {
		qp->resp.odp_wait = true;
		return false;
	}
	if (res->failed) {
		sroce_rres_failed(qp, out, res->first_psn, res->msn);
		return false;
	}
	if (!sroce_rres_atomic_ack(qp, out, res))
		return false;
	qp->resp.res_pending--;
	return true;
}

/*
 * Build up to @budget answers, in PSN order: a duplicate READ's responses
 * first (sroce_rres_duplicate() starts one only when nothing else is
 * due), then those of the accepted READs and atomics, oldest first, and
 * the ACK or NAK held back behind them.
 */
void sroce_rres_build(struct sroce_qp *qp, struct sk_buff_head *out,
		      int budget)
{
	struct sroce_resp *rs = &qp->resp;
	struct sroce_xrc_ctx ctx;
	struct sroce_res *res;
	bool built;

	/* A build may find the page an ODP fault brought in: try again. */
	rs->odp_wait = false;
	while (sroce_ack_due(qp) && budget-- > 0) {
		res = rs->replay;
		if (!res && rs->res_pending)
			res = sroce_rres_oldest(rs);
		if (rs->ans_owed &&
		    (!res || sroce_psn_diff(rs->ans_psn, res->first_psn) < 0)) {
			if (!sroce_ack_build(qp, out, rs->ans_psn,
					     rs->ans_syndrome, rs->ans_msn))
				return;
			rs->ans_owed = false;
			if (rs->ans_fatal) {
				sroce_ack_forget(qp);
				sroce_qp_fatal(qp);
				return;
			}
			continue;
		}
		sroce_resp_xrc_push(qp, res->xrc_srqn, &ctx);
		built = res->atomic ? sroce_rres_build_atomic(qp, out, res) :
				      sroce_rres_build_read(qp, out, res);
		sroce_resp_xrc_pop(qp, &ctx);
		if (!built)
			return;
	}
}

/* The entry the next READ or atomic takes; NULL beyond max_dest_rd_atomic. */
struct sroce_res *sroce_rres_next(struct sroce_qp *qp)
{
	struct sroce_resp *rs = &qp->resp;

	if (!rs->res_n || rs->res_pending >= rs->res_n)
		return NULL;
	return &rs->res[rs->res_head];
}

/*
 * Accept the one-packet request @pkt, described by @r, into the next
 * responder resource (sroce_rres_next() found one): its answer goes
 * out behind every earlier one, and a duplicate is answered from it.
 */
enum sroce_resp_result sroce_rres_queue(struct sroce_qp *qp,
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
	sroce_ack_taken(qp);
	rs->msn = sroce_psn_add(rs->msn, 1);
	res->msn = rs->msn;
	sroce_rres_build(qp, out, SROCE_READ_BURST);
	if (sroce_ack_due(qp) && !rs->odp_wait)
		sroce_qp_kick(qp);
	return SROCE_RESP_ANSWERED;
}

/*
 * A request with a PSN before the expected one (IBA 9.7.5.1.2): answered
 * again, never executed again. READ responses are re-sent from the saved
 * resource, atomics get their saved result; SENDs and WRITEs are ACKed.
 */
void sroce_rres_duplicate(struct sroce_qp *qp,
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
			sroce_ack_answer(qp, out,
					 sroce_psn_add(rs->epsn, SROCE_PSN_MASK),
					 sroce_ack_syndrome(), false);
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
			 * in its turn (sroce_rres_atomics_now() may have
			 * executed it already).
			 */
			if (!sroce_rres_pending(rs, res) && !res->failed)
				sroce_rres_atomic_ack(qp, out, res);
		} else if (sroce_rres_pending(rs, res)) {
			/* Going out in its turn; if now, again from @off. */
			if (res == sroce_rres_oldest(rs) && res->sent > off)
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
			sroce_rres_build(qp, out, SROCE_READ_BURST);
			if (sroce_ack_due(qp) && !rs->odp_wait)
				sroce_qp_kick(qp);
		}
		return;
	}
}
