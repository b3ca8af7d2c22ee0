// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Protection domains, thread and parent domains, memory regions and
 * windows, address handles: thin wrappers over the uverbs commands. Only
 * the AH keeps driver data (the address vector the kernel resolved), for UD
 * send WQEs; thread and parent domains live in the provider alone.
 */
#include "objects.h"

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

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

/* ---- Device memory ------------------------------------------------------ */

Dm::~Dm()
{
	if (map)
		munmap(map, map_len);
}

namespace
{

/*
 * UVERBS_METHOD_DM_ALLOC, issued here rather than through
 * ibv_cmd_alloc_dm(): it carries our driver attribute (where to map the
 * memory), and libibverbs chains driver attributes only through its
 * private command buffer. The attributes are the kernel's uapi.
 */
int dm_alloc_ioctl(ibv_context *ibctx, const ibv_alloc_dm_attr &attr, uint32_t *handle,
                   uint64_t *offset)
{
	constexpr unsigned kAttrs = 4;
	/* The header ends in a flexible array: header and attributes as bytes. */
	alignas(ib_uverbs_ioctl_hdr) unsigned char
	    buf[sizeof(ib_uverbs_ioctl_hdr) + kAttrs * sizeof(ib_uverbs_attr)] = {};
	auto *hdr = reinterpret_cast<ib_uverbs_ioctl_hdr *>(buf);
	ib_uverbs_attr *a = hdr->attrs;

	hdr->length = sizeof(buf);
	hdr->object_id = UVERBS_OBJECT_DM;
	hdr->method_id = UVERBS_METHOD_DM_ALLOC;
	hdr->num_attrs = kAttrs;
	hdr->driver_id = RDMA_DRIVER_UNKNOWN;
	a[0].attr_id = UVERBS_ATTR_ALLOC_DM_HANDLE; /* the kernel writes the handle to data */
	a[0].flags = UVERBS_ATTR_F_MANDATORY;
	a[1].attr_id = UVERBS_ATTR_ALLOC_DM_LENGTH;
	a[1].len = sizeof(uint64_t);
	a[1].flags = UVERBS_ATTR_F_MANDATORY;
	a[1].data = attr.length; /* inline: 8 bytes or fewer */
	a[2].attr_id = UVERBS_ATTR_ALLOC_DM_ALIGNMENT;
	a[2].len = sizeof(uint32_t);
	a[2].flags = UVERBS_ATTR_F_MANDATORY;
	a[2].data = attr.log_align_req;
	a[3].attr_id = SROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET;
	a[3].len = sizeof(*offset);
	a[3].flags = UVERBS_ATTR_F_MANDATORY;
	a[3].data = reinterpret_cast<uintptr_t>(offset);
	if (ioctl(ibctx->cmd_fd, RDMA_VERBS_IOCTL, hdr))
		return errno;
	*handle = uint32_t(a[0].data);
	return 0;
}

/*
 * [offset, offset + length) of @dm: 0, EINVAL when not in whole
 * SROCE_DM_UNITs, EFAULT when not inside the DM (mlx5's errnos).
 */
int dm_range_check(const Dm &dm, uint64_t offset, size_t length)
{
	if ((offset % SROCE_DM_UNIT) || (length % SROCE_DM_UNIT))
		return EINVAL;
	if (offset > dm.length || length > dm.length - offset)
		return EFAULT;
	return 0;
}

int memcpy_to_dm(ibv_dm *ibdm, uint64_t dm_offset, const void *host_addr, size_t length)
{
	Dm *dm = to_dm(ibdm);

	if (int err = dm_range_check(*dm, dm_offset, length))
		return err;
	memcpy(static_cast<uint8_t *>(dm->map) + dm_offset, host_addr, length);
	return 0;
}

int memcpy_from_dm(void *host_addr, ibv_dm *ibdm, uint64_t dm_offset, size_t length)
{
	Dm *dm = to_dm(ibdm);

	if (int err = dm_range_check(*dm, dm_offset, length))
		return err;
	memcpy(host_addr, static_cast<const uint8_t *>(dm->map) + dm_offset, length);
	return 0;
}

} /* namespace */

/*
 * ibv_alloc_dm(): the kernel allocates the memory (sroce_dm.c) and tells
 * where to map it; copies in and out are plain memcpy() on that mapping.
 */
ibv_dm *alloc_dm(ibv_context *ibctx, ibv_alloc_dm_attr *attr)
{
	const long page = sysconf(_SC_PAGESIZE);
	uint64_t offset = 0;
	uint32_t handle = 0;

	if (!attr || attr->comp_mask || !attr->length)
		return fail<ibv_dm>(EINVAL);
	Owned<Dm> dm(zalloc<Dm>());
	if (!dm)
		return fail<ibv_dm>(ENOMEM);
	if (int err = dm_alloc_ioctl(ibctx, *attr, &handle, &offset))
		return fail<ibv_dm>(err);
	dm->vdm.handle = handle;
	dm->vdm.dm.handle = handle;
	dm->vdm.dm.comp_mask = IBV_DM_MASK_HANDLE;
	dm->vdm.dm.context = ibctx;
	auto undo = on_scope_exit([&dm] { ibv_cmd_free_dm(&dm->vdm); });
	dm->length = attr->length;
	dm->map_len = (attr->length + page - 1) / page * page;
	void *map = mmap(nullptr, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, ibctx->cmd_fd,
	                 off_t(offset));
	if (map == MAP_FAILED)
		return fail<ibv_dm>(errno);
	dm->map = map;
	dm->vdm.dm.memcpy_to_dm = memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = memcpy_from_dm;
	undo.dismiss();
	return &dm.release()->vdm.dm;
}

int free_dm(ibv_dm *ibdm)
{
	Dm *dm = to_dm(ibdm);
	int err = ibv_cmd_free_dm(&dm->vdm);

	if (!err)
		zfree(dm);
	return err;
}

/* A zero-based region over [dm_offset, dm_offset + length) of @ibdm. */
ibv_mr *reg_dm_mr(ibv_pd *ibpd, ibv_dm *ibdm, uint64_t dm_offset, size_t length,
                  unsigned int access)
{
	Owned<Mr> mr(zalloc<Mr>());

	if (!mr)
		return fail<ibv_mr>(ENOMEM);
	if (int err = ibv_cmd_reg_dm_mr(ibpd, &to_dm(ibdm)->vdm, dm_offset, length, access,
	                                &mr->vmr, nullptr))
		return fail<ibv_mr>(err);
	return &mr.release()->vmr.ibv_mr;
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
