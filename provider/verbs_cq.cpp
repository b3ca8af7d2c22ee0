// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queue control path: create (basic and extended), resize and
 * destroy. Each CQ is one kernel ring mapped at the offset the create
 * response gives.
 */
#include "datapath.h"

#include <string.h>

namespace sroce
{

namespace
{

using CreateCqResp = WithUdata<ib_uverbs_create_cq_resp, sroce_create_cq_resp>;
using CreateCqExResp = WithUdata<ib_uverbs_ex_create_cq_resp, sroce_create_cq_resp>;
using ResizeCqResp = WithUdata<ib_uverbs_resize_cq_resp, sroce_resize_cq_resp>;
static_assert(udata_packed<CreateCqResp>() && udata_packed<CreateCqExResp>() &&
              udata_packed<ResizeCqResp>());

/* What create_cq_ex accepts; extended polling reads only these fields. */
constexpr uint64_t supported_wc_flags = IBV_WC_STANDARD_FLAGS |
                                        IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
                                        IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
constexpr uint32_t supported_cq_comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
constexpr uint32_t supported_cq_flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;

int map_cq(Cq &cq, ibv_context *ibctx, const sroce_ring_info &info)
{
	const Context &ctx = *to_ctx(ibctx);
	int err;

	err = cq.mapping.map(ibctx->cmd_fd, info, SROCE_CQE_SIZE, ctx.page_size, &cq.cq.ring);
	if (!err)
		cq.cq.sync_from_ring();
	return err;
}

int check_cq_ex_attr(const ibv_cq_init_attr_ex &attr)
{
	if (attr.wc_flags & ~supported_wc_flags)
		return EOPNOTSUPP;
	if (attr.comp_mask & ~supported_cq_comp_mask)
		return EOPNOTSUPP;
	if ((attr.comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (attr.flags & ~supported_cq_flags))
		return EOPNOTSUPP;
	/* A CQ's domain must be a parent domain of this context (as mlx5's). */
	if ((attr.comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) && !parent_domain_of(attr.parent_domain))
		return EINVAL;
	return 0;
}

} /* namespace */

ibv_cq *create_cq(ibv_context *ibctx, int cqe, ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_create_cq cmd;
	CreateCqResp resp{};
	DomainOwned<Cq> cq(domain_zalloc<Cq>(nullptr, kResCq));
	int err;

	if (!cq)
		return fail<ibv_cq>(ENOMEM);
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq, &cmd, sizeof(cmd),
	                        resp.ibv(), resp.size());
	if (err)
		return fail<ibv_cq>(err);
	auto destroy = on_scope_exit([&cq] { ibv_cmd_destroy_cq(&cq->vcq.cq); });

	err = map_cq(*cq, ibctx, resp.drv.cq);
	if (err)
		return fail<ibv_cq>(err);
	destroy.dismiss();
	return &cq.release()->vcq.cq;
}

ibv_cq_ex *create_cq_ex(ibv_context *ibctx, ibv_cq_init_attr_ex *attr)
{
	struct ibv_create_cq_ex cmd;
	CreateCqExResp resp{};
	int err = check_cq_ex_attr(*attr);

	if (err)
		return fail<ibv_cq_ex>(err);
	/* check_cq_ex_attr() made sure it is a parent domain. */
	Pd *domain = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
	                 ? parent_domain_of(attr->parent_domain)
	                 : nullptr;
	if (domain && domain->ibpd.context != ibctx)
		return fail<ibv_cq_ex>(EINVAL);
	DomainOwned<Cq> cq(domain_zalloc<Cq>(domain, kResCq));
	if (!cq)
		return nullptr;
	/* One thread polls it: the user said so, or its thread domain does. */
	if ((domain && domain->td) || ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	                               (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)))
		cq->lock.single_thread();
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd, sizeof(cmd), resp.ibv(),
	                           resp.size(), 0);
	if (err)
		return fail<ibv_cq_ex>(err);
	auto destroy = on_scope_exit([&cq] { ibv_cmd_destroy_cq(&cq->vcq.cq); });

	err = map_cq(*cq, ibctx, resp.drv.cq);
	if (err)
		return fail<ibv_cq_ex>(err);
	cq_ex_set_ops(&cq->vcq.cq_ex, attr->wc_flags);
	destroy.dismiss();
	return &cq.release()->vcq.cq_ex;
}

/*
 * The kernel moves pending CQEs into the new ring and sets its indices; we
 * hold the poll lock throughout so that no CQE is consumed from the old ring
 * after the kernel has copied it. If the new ring cannot be mapped the CQ
 * is left without a ring and polling it fails.
 */
int resize_cq(ibv_cq *ibcq, int cqe)
{
	Cq *cq = to_cq(ibcq);
	struct ibv_resize_cq cmd;
	ResizeCqResp resp{};
	RingMapping fresh;
	Ring view;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	SpinGuard guard(cq->lock);
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), resp.ibv(), resp.size());
	if (err)
		return err;
	err = fresh.map(ibcq->context->cmd_fd, resp.drv.cq, SROCE_CQE_SIZE,
	                to_ctx(ibcq->context)->page_size, &view);
	if (err)
		view = Ring{};
	cq->mapping.swap(fresh); /* the old ring is unmapped with 'fresh' */
	cq->cq.ring = view;
	cq->cur_valid = false;
	if (view.present())
		cq->cq.sync_from_ring();
	return err;
}

int destroy_cq(ibv_cq *ibcq)
{
	int err = ibv_cmd_destroy_cq(ibcq);

	if (!err)
		domain_free(to_cq(ibcq));
	return err;
}

} /* namespace sroce */
