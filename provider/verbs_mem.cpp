// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Protection domains, thread and parent domains, memory regions and
 * windows, address handles: thin wrappers over the uverbs commands. Only
 * the AH keeps driver data (the address vector the kernel resolved), for UD
 * send WQEs; thread and parent domains live in the provider alone.
 */
#include "objects.h"

#include <string.h>

namespace sroce
{

namespace
{

using CreateAhResp = WithUdata<ib_uverbs_create_ah_resp, sroce_create_ah_resp>;
static_assert(sizeof(sroce_create_ah_resp) == 40);
static_assert(udata_packed<CreateAhResp>());

} /* namespace */

ibv_pd *alloc_pd(ibv_context *ibctx)
{
	struct ibv_alloc_pd cmd;
	ib_uverbs_alloc_pd_resp resp{};
	Owned<Pd> pd(zalloc<Pd>());
	int err;

	if (!pd)
		return fail<ibv_pd>(ENOMEM);
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_alloc_pd(ibctx, &pd->ibpd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err)
		return fail<ibv_pd>(err);
	return &pd.release()->ibpd;
}

/* A parent domain goes when nothing was created on it and is still there. */
int dealloc_parent_domain(Pd *parent)
{
	if (__atomic_load_n(&parent->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	__atomic_fetch_sub(&parent->protection->users, 1, __ATOMIC_RELEASE);
	if (parent->td)
		__atomic_fetch_sub(&parent->td->users, 1, __ATOMIC_RELEASE);
	zfree(parent);
	return 0;
}

int dealloc_pd(ibv_pd *ibpd)
{
	Pd *pd = to_pd(ibpd);
	int err;

	if (pd->protection)
		return dealloc_parent_domain(pd);
	/* The kernel knows no parent domain: it would free the PD under them. */
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	err = ibv_cmd_dealloc_pd(ibpd);
	if (!err)
		zfree(pd);
	return err;
}

ibv_td *alloc_td(ibv_context *ibctx, ibv_td_init_attr *attr)
{
	if (!attr || attr->comp_mask)
		return fail<ibv_td>(EINVAL);
	Td *td = zalloc<Td>();
	if (!td)
		return fail<ibv_td>(ENOMEM);
	td->ibtd.context = ibctx;
	return &td->ibtd;
}

int dealloc_td(ibv_td *ibtd)
{
	Td *td = to_td(ibtd);

	if (__atomic_load_n(&td->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	zfree(td);
	return 0;
}

/*
 * ibv_alloc_parent_domain(): @attr->pd, a PD of this context (not another
 * parent domain), with an optional thread domain of this context, an
 * allocator pair (both or neither) and a context for it. Errors as
 * libibverbs' own check and mlx5 give them: EINVAL for a missing PD or an
 * unknown comp_mask bit.
 */
ibv_pd *alloc_parent_domain(ibv_context *ibctx, ibv_parent_domain_init_attr *attr)
{
	constexpr uint32_t known =
	    IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;

	if (!attr || !attr->pd || attr->pd->context != ibctx || (attr->comp_mask & ~known))
		return fail<ibv_pd>(EINVAL);
	Pd *protection = to_pd(attr->pd);
	if (protection->protection)
		return fail<ibv_pd>(EINVAL);
	if (attr->td && attr->td->context != ibctx)
		return fail<ibv_pd>(EINVAL);
	const bool allocators = attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	if (allocators && (!attr->alloc || !attr->free))
		return fail<ibv_pd>(EINVAL);
	Pd *parent = zalloc<Pd>();
	if (!parent)
		return fail<ibv_pd>(ENOMEM);
	parent->ibpd.context = protection->ibpd.context;
	parent->ibpd.handle = protection->ibpd.handle;
	parent->protection = protection;
	__atomic_fetch_add(&protection->users, 1, __ATOMIC_RELAXED);
	if (attr->td) {
		parent->td = to_td(attr->td);
		__atomic_fetch_add(&parent->td->users, 1, __ATOMIC_RELAXED);
	}
	if (allocators) {
		parent->alloc = attr->alloc;
		parent->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		parent->pd_context = attr->pd_context;
	return &parent->ibpd;
}

ibv_mr *reg_mr(ibv_pd *ibpd, void *addr, size_t length, uint64_t hca_va, int access)
{
	struct ibv_reg_mr cmd;
	ib_uverbs_reg_mr_resp resp{};
	Owned<Mr> mr(zalloc<Mr>());
	int err;

	if (!mr)
		return fail<ibv_mr>(ENOMEM);
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, &mr->vmr, &cmd, sizeof(cmd), &resp,
	                     sizeof(resp));
	if (err)
		return fail<ibv_mr>(err);
	return &mr.release()->vmr.ibv_mr;
}

int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *ibpd, void *addr, size_t length, int access)
{
	struct ibv_rereg_mr cmd;
	ib_uverbs_rereg_mr_resp resp{};
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_rereg_mr(vmr, uint32_t(flags), addr, length, uintptr_t(addr), access, ibpd,
	                       &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err)
		errno = err;
	return err;
}

int dereg_mr(verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		zfree(to_mr(vmr));
	return err;
}

ibv_mw *alloc_mw(ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct ibv_alloc_mw cmd;
	ib_uverbs_alloc_mw_resp resp{};
	Owned<Mw> mw(zalloc<Mw>());
	int err;

	if (!mw)
		return fail<ibv_mw>(ENOMEM);
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_alloc_mw(ibpd, type, &mw->ibmw, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err)
		return fail<ibv_mw>(err);
	return &mw.release()->ibmw;
}

int dealloc_mw(ibv_mw *ibmw)
{
	int err = ibv_cmd_dealloc_mw(ibmw);

	if (!err)
		zfree(to_mw(ibmw));
	return err;
}

ibv_ah *create_ah(ibv_pd *ibpd, ibv_ah_attr *attr)
{
	CreateAhResp resp{};
	Owned<Ah> ah(zalloc<Ah>());
	int err;

	if (!ah)
		return fail<ibv_ah>(ENOMEM);
	err = ibv_cmd_create_ah(ibpd, &ah->ibah, attr, resp.ibv(), resp.size());
	if (err)
		return fail<ibv_ah>(err);
	ah->ah_num = resp.drv.ah_num;
	ah->av = resp.drv.av;
	return &ah.release()->ibah;
}

int destroy_ah(ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (!err)
		zfree(to_ah(ibah));
	return err;
}

} /* namespace sroce */
