/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: the responder resources (sroce_resp_res.c), for the request
 * execution above them (sroce_resp.c): what a request's execution
 * returns, and what a request or answer works with (its XRC SRQ, its
 * rkey checked).
 */
#ifndef SROCE_RESP_RES_H
#define SROCE_RESP_RES_H

#include "sroce_ack.h"
#include "sroce_srq.h"

/* READ response packets built per softirq or work-item pass. */
#define SROCE_READ_BURST	32

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

static inline void sroce_resp_xrc_push(struct sroce_qp *qp, u32 srqn,
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

static inline void sroce_resp_xrc_pop(struct sroce_qp *qp,
				      struct sroce_xrc_ctx *ctx)
{
	qp->xrc_srq = ctx->srq;
	qp->xrc_pd = ctx->pd;
	if (ctx->got)
		sroce_srq_put(ctx->got);
}

/* Look up and check an rkey for @len bytes at @va with @access. */
static inline struct sroce_mr *sroce_resp_mr(struct sroce_qp *qp, u32 rkey,
					     u64 va, u64 len, int access)
{
	if (!(qp->access_flags & access))
		return NULL;
	return sroce_rkey_get(qp, rkey, va, len, access);
}

/* Responder resources. */
int sroce_rres_atomics_now(struct sroce_qp *qp);
void sroce_rres_build(struct sroce_qp *qp, struct sk_buff_head *out,
		      int budget);
struct sroce_res *sroce_rres_next(struct sroce_qp *qp);
enum sroce_resp_result sroce_rres_queue(struct sroce_qp *qp,
					const struct sroce_res *r,
					const struct sroce_pkt *pkt,
					struct sk_buff_head *out);
void sroce_rres_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			  struct sk_buff_head *out);

#endif /* SROCE_RESP_RES_H */
