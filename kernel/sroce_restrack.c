// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: driver details for `rdma resource show {qp,cq,mr,srq} -dd` (and
 * -j): where a QP's requester, completer and responder stand, a ring's
 * indices, a CQ's arm state, an MR's pages. The core calls these with a
 * reference on the object held and no lock of its own, after its generic
 * attributes (state, PSNs from query_qp, keys, lengths). Each value is a
 * snapshot taken under the lock the data path writes it under; rings'
 * user-written indices are shown as found, never trusted.
 */
#include <rdma/restrack.h>

#include "sroce_verbs.h"
#include "sroce_qp.h"
#include "sroce_cq.h"
#include "sroce_srq.h"
#include "sroce_mem.h"
#include "sroce_sq.h"

/* Put @n name/value pairs in one RDMA_NLDEV_ATTR_DRIVER nest. */
static int sroce_res_put(struct sk_buff *msg, const struct sroce_detail *v,
			 unsigned int n, const char *str_name, const char *str)
{
	struct nlattr *nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (rdma_nl_put_driver_u32(msg, v[i].name, v[i].val))
			goto err;
	if (str && rdma_nl_put_driver_string(msg, str_name, str))
		goto err;
	nla_nest_end(msg, nest);
	return 0;
err:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

static void sroce_res_add(struct sroce_detail *v, unsigned int *n,
			  const char *name, u32 val)
{
	v[*n].name = name;
	v[*n].val = val;
	(*n)++;
}

/* ms until @t fires, or 0 when it is not armed. */
static u32 sroce_timer_left_ms(const struct timer_list *t)
{
	unsigned long left;

	if (!timer_pending(t))
		return 0;
	left = READ_ONCE(t->expires) - jiffies;
	return (long)left > 0 ? jiffies_to_msecs(left) : 1;
}

static const char *const sroce_arm_names[] = {
	[SROCE_CQ_ARM_NONE] = "none",
	[SROCE_CQ_ARM_SOLICITED] = "solicited",
	[SROCE_CQ_ARM_NEXT] = "next",
};

static const char *sroce_arm_name(u32 arm)
{
	return arm < ARRAY_SIZE(sroce_arm_names) ? sroce_arm_names[arm] :
						   "invalid";
}

/* A ring's producer, consumer and size, under @names. */
static const char *const sroce_sq_names[] = { "sq_prod", "sq_cons", "sq_size" };
static const char *const sroce_rq_names[] = { "rq_prod", "rq_cons", "rq_size" };
static const char *const sroce_cq_names[] = { "prod", "cons", "size" };

static unsigned int sroce_res_ring(struct sroce_detail *v,
				   const char *const names[3],
				   const struct sroce_queue *q, bool we_produce)
{
	u32 other = we_produce ? READ_ONCE(q->hdr->cons) : READ_ONCE(q->hdr->prod);

	v[0] = (struct sroce_detail){ names[0], we_produce ? q->idx : other };
	v[1] = (struct sroce_detail){ names[1], we_produce ? other : q->idx };
	v[2] = (struct sroce_detail){ names[2], q->num_entries };
	return 3;
}

/*
 * Where @qp's requester, completer and responder stand, into @v (room for
 * SROCE_QP_DETAILS_MAX); returns how many. Also read by debugfs.
 */
unsigned int sroce_qp_details(struct sroce_qp *qp, struct sroce_detail *v)
{
	bool connected = qp->ibqp.qp_type == IB_QPT_RC ||
			 qp->ibqp.qp_type == IB_QPT_UC;
	unsigned int n = 0;

	spin_lock_bh(&qp->sq_lock);
	if (qp->sq.hdr)
		n += sroce_res_ring(v + n, sroce_sq_names, &qp->sq, false);
	sroce_res_add(v, &n, "req_psn", qp->req.psn);
	sroce_res_add(v, &n, "req_wqe", qp->req.idx);
	if (connected) {
		sroce_res_add(v, &n, "req_psn_max", qp->req.psn_max);
		sroce_res_add(v, &n, "req_blocked", qp->req.blocked);
		sroce_res_add(v, &n, "rd_atomic_out", qp->req.rd_atomic);
		sroce_res_add(v, &n, "comp_psn", qp->comp.psn);
		sroce_res_add(v, &n, "retry_left", qp->comp.retry_left);
		sroce_res_add(v, &n, "rnr_retry_left", qp->comp.rnr_retry_left);
		sroce_res_add(v, &n, "rnr_wait", qp->comp.rnr_wait);
		sroce_res_add(v, &n, "rto_ms",
			      sroce_timer_left_ms(&qp->comp.rto));
		sroce_res_add(v, &n, "rnr_timer_ms",
			      sroce_timer_left_ms(&qp->comp.rnr_timer));
		sroce_res_add(v, &n, "tlp_ms",
			      sroce_timer_left_ms(&qp->comp.tlp));
		sroce_res_add(v, &n, "srtt_us",
			      min_t(u64, div_u64(qp->comp.srtt, 1000), U32_MAX));
		sroce_res_add(v, &n, "mtu", qp->conn_mtu);
	}
	spin_unlock_bh(&qp->sq_lock);

	spin_lock_bh(&qp->resp_lock);
	if (qp->rq.hdr)
		n += sroce_res_ring(v + n, sroce_rq_names, &qp->rq, false);
	if (connected) {
		sroce_res_add(v, &n, "resp_epsn", qp->resp.epsn);
		sroce_res_add(v, &n, "resp_msn", qp->resp.msn);
		sroce_res_add(v, &n, "resp_res_pending", qp->resp.res_pending);
		sroce_res_add(v, &n, "resp_res_max", qp->resp.res_n);
		sroce_res_add(v, &n, "resp_nak_sent", qp->resp.nak_sent);
	}
	spin_unlock_bh(&qp->resp_lock);

	return n;
}

/*
 * A QP's live transport state (the PSN it sends next and expects next,
 * MSN, ring indices, timers) is shown to CAP_NET_ADMIN only, as the core
 * shows raw dumps: with a connection's expected PSN and its QP number, one
 * datagram from the peer's address is taken as the peer's (the receive
 * path checks addresses, sroce_rcv_from_peer(), but a loopback
 * connection's peer is the local host). Everyone else sees what the core
 * shows of every QP (type, state, numbers, the PSNs given at modify time).
 * The core does not tell us whether its reader has the capability: this
 * runs in the reader's context (the netlink request or the dump's
 * recvmsg), so the capability is asked about the reader, in the initial
 * user namespace as the core's netlink_capable() does, and without an
 * audit record per QP listed.
 */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_detail v[SROCE_QP_DETAILS_MAX];
	unsigned int n;

	if (!ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN))
		return 0;
	n = sroce_qp_details(to_sqp(ibqp), v);

	return sroce_res_put(msg, v, n, NULL, NULL);
}

/*
 * `rdma resource show qp -r`: the rings' indices and kernel flags, then the
 * oldest send WQE not yet completed as the requester validated it (struct
 * sroce_send_wqe with its SGEs or inline data; none when the SQ is idle,
 * and none for a kernel QP).
 * The layout, in host byte order, is struct sroce_raw_qp below.
 */
struct sroce_raw_qp {
	u32 sq_prod, sq_cons, sq_kflags;
	u32 rq_prod, rq_cons, rq_kflags;	/* 0 when on an SRQ */
};

#define SROCE_RAW_MAX	1024

int sroce_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_raw_qp hdr = {};
	struct sroce_swqe *s;
	u32 len = 0, data;
	u8 *buf;
	int err;

	buf = kzalloc(SROCE_RAW_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	spin_lock_bh(&qp->sq_lock);
	if (qp->sq.hdr) {
		hdr.sq_prod = READ_ONCE(qp->sq.hdr->prod);
		hdr.sq_cons = qp->sq.idx;
		hdr.sq_kflags = READ_ONCE(qp->sq.hdr->kflags);
	}
	/*
	 * A kernel QP's WQEs hold kernel addresses (wr_id, SGEs): not shown,
	 * as no CQE of a kernel CQ is.
	 */
	if (qp->is_user && qp->sq.hdr && qp->shadow.slots &&
	    qp->sq.idx != qp->req.fetch_end) {
		s = sroce_swqe_get(qp, qp->sq.idx);
		data = s->w.flags & SROCE_WQE_INLINE ? s->w.inline_len :
			s->w.num_sge * sizeof(struct sroce_sge);
		len = min_t(u32, sizeof(s->w) + data,
			    qp->shadow.slot_size - offsetof(struct sroce_swqe, w));
		len = min_t(u32, len, SROCE_RAW_MAX - sizeof(hdr));
		memcpy(buf + sizeof(hdr), &s->w, len);
	}
	spin_unlock_bh(&qp->sq_lock);
	spin_lock_bh(&qp->resp_lock);
	if (qp->rq.hdr) {
		hdr.rq_prod = READ_ONCE(qp->rq.hdr->prod);
		hdr.rq_cons = qp->rq.idx;
		hdr.rq_kflags = READ_ONCE(qp->rq.hdr->kflags);
	}
	spin_unlock_bh(&qp->resp_lock);
	memcpy(buf, &hdr, sizeof(hdr));
	err = nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, sizeof(hdr) + len, buf);
	kfree(buf);
	return err;
}

int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_detail v[4];
	unsigned long flags;
	unsigned int n;
	u32 arm;

	spin_lock_irqsave(&cq->lock, flags);
	n = sroce_res_ring(v, sroce_cq_names, &cq->q, true);
	sroce_res_add(v, &n, "overflowed", cq->overflowed);
	arm = cq->is_user ? READ_ONCE(cq->q.hdr->uflags) : cq->knotify;
	spin_unlock_irqrestore(&cq->lock, flags);

	return sroce_res_put(msg, v, n, "arm", sroce_arm_name(arm));
}

/*
 * `rdma resource show cq -r`: prod, cons, kflags and uflags (u32 each, host
 * byte order), then the newest CQE (struct sroce_cqe) if one was written
 * (user CQs only).
 */
int sroce_fill_res_cq_entry_raw(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct {
		u32 prod, cons, kflags, uflags;
		struct sroce_cqe cqe;
	} raw = {};
	unsigned long flags;
	u32 len = offsetof(typeof(raw), cqe);

	spin_lock_irqsave(&cq->lock, flags);
	raw.prod = cq->q.idx;
	raw.cons = READ_ONCE(cq->q.hdr->cons);
	raw.kflags = READ_ONCE(cq->q.hdr->kflags);
	raw.uflags = READ_ONCE(cq->q.hdr->uflags);
	/* A kernel CQ's CQEs hold kernel addresses: not shown. */
	if (raw.prod && cq->is_user) {
		memcpy(&raw.cqe, sroce_queue_entry(&cq->q, raw.prod - 1),
		       sizeof(raw.cqe));
		len = sizeof(raw);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, len, &raw);
}

static const char *const sroce_mr_kinds[] = {
	[SROCE_MR_DMA] = "dma",
	[SROCE_MR_USER] = "user",
	[SROCE_MR_FAST] = "fast",
	[SROCE_MR_DEVMEM] = "device memory",
	[SROCE_MR_ODP] = "on-demand",
};

int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_detail v[4];
	unsigned int n = 0;
	int mw = atomic_read(&mr->num_mw);

	switch (mr->kind) {
	case SROCE_MR_USER:
		sroce_res_add(v, &n, "pages_pinned", mr->nupages);
		break;
	case SROCE_MR_ODP:
		/* Mapped now, none pinned; read without the umem's mutex. */
		sroce_res_add(v, &n, "pages_mapped",
			      sroce_odp_pages_mapped(mr));
		break;
	case SROCE_MR_FAST:
		sroce_res_add(v, &n, "pages", READ_ONCE(mr->npages));
		sroce_res_add(v, &n, "max_pages", mr->max_pages);
		break;
	default:
		break;
	}
	sroce_res_add(v, &n, "mw_bound", mw > 0 ? mw : 0);
	return sroce_res_put(msg, v, n, "kind", mr->kind <
			     ARRAY_SIZE(sroce_mr_kinds) ?
			     sroce_mr_kinds[mr->kind] : "?");
}

int sroce_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_detail v[5];
	unsigned int n;

	spin_lock_bh(&srq->lock);
	n = sroce_res_ring(v, sroce_rq_names, &srq->rq, false);
	sroce_res_add(v, &n, "limit", srq->limit);
	sroce_res_add(v, &n, "error", srq->error);
	spin_unlock_bh(&srq->lock);
	return sroce_res_put(msg, v, n, NULL, NULL);
}
