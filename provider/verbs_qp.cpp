// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pair and shared receive queue control path. A QP has a send ring
 * and, unless it uses an SRQ, a receive ring; an SRQ has one receive ring.
 * The kernel sizes the rings from the requested caps and returns the
 * granted caps; the provider further bounds each queue's SGE count and
 * inline size by what its ring stride can actually hold.
 */
#include "datapath.h"

#include <string.h>

#include <algorithm>

namespace sroce
{

namespace
{

using CreateQpCmd = WithUdata<struct ibv_create_qp_ex, sroce_create_qp_cmd>;
using CreateQpResp = WithUdata<ib_uverbs_ex_create_qp_resp, sroce_create_qp_resp>;
using CreateSrqResp = WithUdata<ib_uverbs_create_srq_resp, sroce_create_srq_resp>;
using ModifySrqCmd = WithUdata<struct ibv_modify_srq, sroce_modify_srq_cmd>;
static_assert(udata_packed<CreateQpCmd>() && udata_packed<CreateQpResp>());
static_assert(udata_packed<CreateSrqResp>() && udata_packed<ModifySrqCmd>());
/* Extended commands pass udata in 8-byte words. */
static_assert(sizeof(sroce_create_qp_cmd) % 8 == 0 && sizeof(sroce_create_qp_resp) % 8 == 0);

constexpr uint32_t supported_qp_comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
                                            IBV_QP_INIT_ATTR_CREATE_FLAGS |
                                            IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
constexpr uint32_t supported_srq_comp_mask =
    IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;

int check_qp_attr(const ibv_qp_init_attr_ex &attr)
{
	if (attr.comp_mask & ~supported_qp_comp_mask)
		return EOPNOTSUPP;
	if ((attr.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr.create_flags)
		return EOPNOTSUPP;
	if ((attr.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr.send_ops_flags & ~QP_EX_SUPPORTED_OPS))
		return EOPNOTSUPP;
	/* An XRC target belongs to an XRC domain; every other QP to a PD. */
	if (attr.qp_type == IBV_QPT_XRC_RECV)
		return (attr.comp_mask & IBV_QP_INIT_ATTR_XRCD) && attr.xrcd ? 0 : EINVAL;
	if (!(attr.comp_mask & IBV_QP_INIT_ATTR_PD) || !attr.pd)
		return EINVAL;
	switch (attr.qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		return 0;
	case IBV_QPT_XRC_SEND: /* sends only: no receive queue, no SRQ */
		return attr.srq ? EINVAL : 0;
	default:
		return EOPNOTSUPP;
	}
}

/* Maps a work queue's ring; a zero-size descriptor means "no ring". */
int map_wq(WorkQueue &wq, ibv_context *ibctx, const sroce_ring_info &info, uint32_t min_stride)
{
	int err;

	if (info.size == 0)
		return 0;
	err =
	    wq.mapping.map(ibctx->cmd_fd, info, min_stride, to_ctx(ibctx)->page_size, &wq.pr.ring);
	if (!err)
		wq.pr.sync_from_ring();
	return err;
}

uint32_t send_sge_room(const WorkQueue &sq)
{
	return sq.pr.ring.present() ? sroce_send_wqe_sge_room(sq.pr.ring.stride) : 0;
}

uint32_t recv_sge_room(const WorkQueue &rq)
{
	return rq.pr.ring.present() ? sroce_recv_wqe_sge_room(rq.pr.ring.stride) : 0;
}

/* Bounds the granted caps by the rings and reports the result to the user. */
void set_qp_limits(Qp &qp, const sroce_create_qp_resp &resp, ibv_qp_cap *cap, bool has_srq)
{
	const uint32_t inline_room =
	    qp.sq.pr.ring.present() ? sroce_send_wqe_inline_room(qp.sq.pr.ring.stride) : 0;

	qp.sq.max_sge = std::min(cap->max_send_sge, send_sge_room(qp.sq));
	qp.sq.max_inline = std::min(resp.max_inline, inline_room);
	cap->max_send_sge = qp.sq.max_sge;
	cap->max_inline_data = qp.sq.max_inline;
	if (has_srq)
		return;
	qp.rq.max_sge = std::min(cap->max_recv_sge, recv_sge_room(qp.rq));
	cap->max_recv_sge = qp.rq.max_sge;
}

int map_qp(Qp &qp, ibv_context *ibctx, const sroce_create_qp_resp &resp, bool has_srq)
{
	int err = map_wq(qp.sq, ibctx, resp.sq, SROCE_SEND_WQE_HDR_SIZE);

	if (err || has_srq)
		return err;
	return map_wq(qp.rq, ibctx, resp.rq, SROCE_RECV_WQE_HDR_SIZE);
}

ibv_qp *create_qp_common(ibv_context *ibctx, ibv_qp_init_attr_ex *attr)
{
	CreateQpResp resp{};
	int err = check_qp_attr(*attr);

	if (err)
		return fail<ibv_qp>(err);
	Pd *domain = attr->qp_type == IBV_QPT_XRC_RECV ? nullptr : parent_domain_of(attr->pd);
	DomainOwned<Qp> qp(domain_zalloc<Qp>(domain, kResQp));
	if (!qp)
		return nullptr;
	if (domain && domain->td) {
		qp->sq.lock.single_thread();
		qp->rq.lock.single_thread();
	}
	CreateQpCmd cmd{};
	err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, cmd.ibv(), cmd.size(), resp.ibv(),
	                            resp.size());
	if (err)
		return fail<ibv_qp>(err);
	auto destroy = on_scope_exit([&qp] { ibv_cmd_destroy_qp(&qp->vqp.qp); });

	/*
	 * An XRC target is the kernel's (it answers from the SRQs its
	 * requests name): the kernel maps no ring for it, and the response
	 * has none (resp.drv stays zero). An XRC initiator has no receive
	 * ring.
	 */
	err = map_qp(*qp, ibctx, resp.drv, attr->srq != nullptr);
	if (err)
		return fail<ibv_qp>(err);
	set_qp_limits(*qp, resp.drv, &attr->cap, attr->srq != nullptr);
	qp->sq_sig_all = attr->sq_sig_all != 0;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		err = qp_ex_setup(*qp, attr->send_ops_flags);
		if (err)
			return fail<ibv_qp>(err);
	}
	destroy.dismiss();
	return &qp.release()->vqp.qp;
}

int map_srq(Srq &srq, ibv_context *ibctx, const sroce_create_srq_resp &resp, uint32_t *max_sge)
{
	int err;

	if (resp.rq.size == 0)
		return EPROTO; /* an SRQ without a ring is useless */
	err = map_wq(srq.rq, ibctx, resp.rq, SROCE_RECV_WQE_HDR_SIZE);
	if (err)
		return err;
	srq.rq.max_sge = std::min(*max_sge, recv_sge_room(srq.rq));
	*max_sge = srq.rq.max_sge;
	if (!srq.vsrq.srq_type)
		srq.vsrq.srq_type = IBV_SRQT_BASIC;
	/* An XRC SRQ's number came with the core's response (srqn). */
	if (srq.vsrq.srq_type != IBV_SRQT_XRC)
		srq.vsrq.srq_num = resp.srq_num;
	return 0;
}

int check_srq_attr(const ibv_srq_init_attr_ex &attr)
{
	if (attr.comp_mask & ~supported_srq_comp_mask)
		return EOPNOTSUPP;
	if (!(attr.comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr.pd)
		return EINVAL;
	if (!(attr.comp_mask & IBV_SRQ_INIT_ATTR_TYPE) || attr.srq_type == IBV_SRQT_BASIC)
		return 0;
	if (attr.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	/* An XRC SRQ: of an XRC domain, with the CQ its completions go to. */
	return (attr.comp_mask & IBV_SRQ_INIT_ATTR_XRCD) && attr.xrcd &&
	               (attr.comp_mask & IBV_SRQ_INIT_ATTR_CQ) && attr.cq
	           ? 0
	           : EINVAL;
}

/* Swaps in the ring a resize produced; called with the SRQ's lock held. */
int remap_srq(Srq &srq, ibv_context *ibctx, const sroce_create_srq_resp &resp)
{
	RingMapping fresh;
	Ring view;
	int err;

	if (resp.rq.size == 0)
		return 0; /* the kernel kept the ring */
	err = fresh.map(ibctx->cmd_fd, resp.rq, SROCE_RECV_WQE_HDR_SIZE, to_ctx(ibctx)->page_size,
	                &view);
	if (err)
		view = Ring{};
	srq.rq.mapping.swap(fresh);
	srq.rq.pr.ring = view;
	if (!view.present())
		return err;
	srq.rq.pr.sync_from_ring();
	srq.rq.max_sge = std::min(srq.rq.max_sge, recv_sge_room(srq.rq));
	return 0;
}

} /* namespace */

ibv_qp *create_qp(ibv_pd *ibpd, ibv_qp_init_attr *attr)
{
	ibv_qp_init_attr_ex attr_ex;
	ibv_qp *qp;

	memset(&attr_ex, 0, sizeof(attr_ex));
	attr_ex.qp_context = attr->qp_context;
	attr_ex.send_cq = attr->send_cq;
	attr_ex.recv_cq = attr->recv_cq;
	attr_ex.srq = attr->srq;
	attr_ex.cap = attr->cap;
	attr_ex.qp_type = attr->qp_type;
	attr_ex.sq_sig_all = attr->sq_sig_all;
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = ibpd;
	qp = create_qp_common(ibpd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

ibv_qp *create_qp_ex(ibv_context *ibctx, ibv_qp_init_attr_ex *attr)
{
	return create_qp_common(ibctx, attr);
}

int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask)
{
	struct ibv_modify_qp cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	/* The kernel has stopped the QP's data path: nothing more arrives. */
	if (!err && (attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		if (ibqp->recv_cq)
			cq_clean(*to_cq(ibqp->recv_cq), ibqp->qp_num);
		if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
			cq_clean(*to_cq(ibqp->send_cq), ibqp->qp_num);
	}
	return err;
}

int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd, sizeof(cmd));
}

int destroy_qp(ibv_qp *ibqp)
{
	int err = ibv_cmd_destroy_qp(ibqp);

	if (!err)
		domain_free(to_qp(ibqp));
	return err;
}

ibv_srq *create_srq(ibv_pd *ibpd, ibv_srq_init_attr *attr)
{
	struct ibv_create_srq cmd;
	CreateSrqResp resp{};
	DomainOwned<Srq> srq(domain_zalloc<Srq>(parent_domain_of(ibpd), kResSrq));
	int err;

	if (!srq)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd), resp.ibv(),
	                         resp.size());
	if (err)
		return fail<ibv_srq>(err);
	auto destroy = on_scope_exit([&srq] { ibv_cmd_destroy_srq(&srq->vsrq.srq); });

	err = map_srq(*srq, ibpd->context, resp.drv, &attr->attr.max_sge);
	if (err)
		return fail<ibv_srq>(err);
	destroy.dismiss();
	return &srq.release()->vsrq.srq;
}

ibv_srq *create_srq_ex(ibv_context *ibctx, ibv_srq_init_attr_ex *attr)
{
	struct ibv_create_xsrq cmd;
	CreateSrqResp resp{};
	int err = check_srq_attr(*attr);

	if (err)
		return fail<ibv_srq>(err);
	/* An SRQ serves QPs of any thread: it keeps its lock in a thread domain. */
	DomainOwned<Srq> srq(domain_zalloc<Srq>(parent_domain_of(attr->pd), kResSrq));
	if (!srq)
		return nullptr;
	/* libibverbs' write fallback reads srq_type even without the TYPE bit. */
	ibv_srq_init_attr_ex basic = *attr;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		basic.srq_type = IBV_SRQT_BASIC;
	basic.comp_mask |= IBV_SRQ_INIT_ATTR_TYPE;
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, &basic, &cmd, sizeof(cmd), resp.ibv(),
	                            resp.size());
	if (err)
		return fail<ibv_srq>(err);
	auto destroy = on_scope_exit([&srq] { ibv_cmd_destroy_srq(&srq->vsrq.srq); });

	err = map_srq(*srq, ibctx, resp.drv, &basic.attr.max_sge);
	if (err)
		return fail<ibv_srq>(err);
	attr->attr = basic.attr; /* the granted sizes */
	/* ibv_create_srq_ex() does not fill these for the provider. */
	srq->vsrq.srq.pd = attr->pd;
	srq->vsrq.srq.srq_context = attr->srq_context;
	destroy.dismiss();
	return &srq.release()->vsrq.srq;
}

int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask)
{
	Srq *srq = to_srq(ibsrq);
	ModifySrqCmd cmd{};
	sroce_create_srq_resp resp{};
	int err;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, cmd.ibv(), cmd.size());

	cmd.drv.resp_addr = uintptr_t(&resp);
	SpinGuard guard(srq->rq.lock);
	err = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, cmd.ibv(), cmd.size());
	if (err)
		return err;
	return remap_srq(*srq, ibsrq->context, resp);
}

int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int get_srq_num(ibv_srq *ibsrq, uint32_t *srq_num)
{
	const Srq *srq = to_srq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

ibv_xrcd *open_xrcd(ibv_context *ibctx, ibv_xrcd_init_attr *attr)
{
	struct ibv_open_xrcd cmd;
	ib_uverbs_open_xrcd_resp resp{};
	Owned<verbs_xrcd> xrcd(zalloc<verbs_xrcd>());
	int err;

	if (!xrcd)
		return fail<ibv_xrcd>(ENOMEM);
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_open_xrcd(ibctx, xrcd.get(), sizeof(*xrcd), attr, &cmd, sizeof(cmd), &resp,
	                        sizeof(resp));
	if (err)
		return fail<ibv_xrcd>(err);
	return &xrcd.release()->xrcd;
}

int close_xrcd(ibv_xrcd *ibxrcd)
{
	verbs_xrcd *xrcd = from_member<verbs_xrcd>(ibxrcd, offsetof(verbs_xrcd, xrcd));
	int err = ibv_cmd_close_xrcd(xrcd);

	if (!err)
		zfree(xrcd);
	return err;
}

/* Another process's (or this one's) XRC target, by number: no rings. */
ibv_qp *open_qp(ibv_context *ibctx, ibv_qp_open_attr *attr)
{
	struct ibv_open_qp cmd;
	ib_uverbs_create_qp_resp resp{};
	DomainOwned<Qp> qp(domain_zalloc<Qp>(nullptr, kResQp));
	int err;

	if (!qp)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd, sizeof(cmd), &resp,
	                      sizeof(resp));
	if (err)
		return fail<ibv_qp>(err);
	return &qp.release()->vqp.qp;
}

int destroy_srq(ibv_srq *ibsrq)
{
	int err = ibv_cmd_destroy_srq(ibsrq);

	if (!err)
		domain_free(to_srq(ibsrq));
	return err;
}

} /* namespace sroce */
