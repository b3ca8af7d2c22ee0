// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: device memory (ibv_alloc_dm(3)).
 *
 * A device's "own" memory is, for a software device, kernel memory: pages
 * allocated here, charged to the caller's memory cgroup like the rings,
 * mapped by the process (ibv_memcpy_to_dm() and _from_dm() are copies in
 * the provider) and registered as zero-based regions (sroce_reg_dm_mr() in
 * sroce_mr.c), which the engines read and write like pinned user pages.
 * What it buys an application is what it buys on mlx5: a buffer the device
 * owns, which survives the process's own mappings, addressed by offset.
 *
 * The provider learns where to map the memory from a driver attribute of
 * UVERBS_METHOD_DM_ALLOC (SROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET), as mlx5
 * reports its start offset. max_dm_size (SROCE_MAX_DM_SIZE) is what one
 * user context (one ibv_open_device()) is handed out in all: a hardware
 * device's memory is one pool, which one user can take whole and starve
 * the others; sroce's pages are the caller's own (charged to its memory
 * cgroup), so there is nothing to share and each context has its own
 * budget. Allocations are counted in whole pages, and a freed DM's pages
 * are counted no more, though a process that still maps them keeps them
 * (charged, as rings are) until it unmaps. rxe has no device memory.
 */
#define UVERBS_MODULE_NAME sroce_ib
#include <rdma/uverbs_named_ioctl.h>

#include "sroce_mem.h"
#include "sroce_queue.h"
#include "sroce_verbs.h"

struct ib_dm *sroce_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *uctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct sroce_ucontext *uc = container_of(uctx, struct sroce_ucontext,
						 ibuc);
	struct sroce_mmap_entry *me;
	struct sroce_dm *dm;
	size_t size;
	u64 offset;
	int err;

	/* The memory is page aligned: no alignment above a page is kept. */
	if (!attr->length || attr->length > SROCE_MAX_DM_SIZE ||
	    attr->alignment > PAGE_SHIFT)
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(attr->length);
	if (atomic64_add_return(size, &uc->dm_bytes) > SROCE_MAX_DM_SIZE) {
		err = -ENOMEM;
		goto err_budget;
	}
	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	if (!dm) {
		err = -ENOMEM;
		goto err_budget;
	}
	me = sroce_mmap_alloc(uctx, size);
	if (IS_ERR(me)) {
		err = PTR_ERR(me);
		goto err_dm;
	}
	dm->mentry = me;
	dm->uc = uc;
	dm->size = size;
	offset = rdma_user_mmap_get_offset(&me->rdma);
	err = uverbs_copy_to(attrs, SROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err)
		goto err_entry;
	return &dm->ibdm;

err_entry:
	rdma_user_mmap_entry_remove(&me->rdma);
err_dm:
	kfree(dm);
err_budget:
	atomic64_sub(size, &uc->dm_bytes);
	return ERR_PTR(err);
}

/* The core calls this once no region uses the DM (dm->usecnt). */
int sroce_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct sroce_dm *dm = to_sdm(ibdm);

	rdma_user_mmap_entry_remove(&dm->mentry->rdma);
	atomic64_sub(dm->size, &dm->uc->dm_bytes);
	kfree(dm);
	return 0;
}

ADD_UVERBS_ATTRIBUTES_SIMPLE(sroce_dm_alloc_attrs, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(SROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

const struct uapi_definition sroce_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &sroce_dm_alloc_attrs),
	{},
};
