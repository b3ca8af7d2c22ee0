// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Protection domains, memory regions and windows, address handles: thin
 * wrappers over the uverbs commands. Only the AH keeps driver data (the
 * address vector the kernel resolved), for UD send WQEs.
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

int dealloc_pd(ibv_pd *ibpd)
{
	int err = ibv_cmd_dealloc_pd(ibpd);

	if (!err)
		zfree(to_pd(ibpd));
	return err;
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
