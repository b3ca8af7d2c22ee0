// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: memory regions and their keys.
 *
 * A key is (index << 8) | tag: the index comes from a cyclic allocator (so
 * a freed index is not reused until the 24-bit space wraps) and the tag is
 * random, so a stale key, or one guessed by incrementing a valid key, fails
 * the lookup with overwhelming probability (IBA 10.6.3.1 leaves the key
 * format to the channel adapter). lkey and rkey are equal.
 *
 * The data path looks an MR up by key with sroce_mr_get(), which takes a
 * reference; deregistration removes the key and then waits for those
 * references to drain, so no packet ever touches a deregistered region.
 *
 * Fast registration (IB_WR_REG_MR, ib_alloc_mr/ib_map_mr_sg): the MR's
 * slot in the key table is fixed at allocation; REG_MR gives it the key the
 * consumer chose (same index, any tag: ib_update_fast_reg_key), the
 * address range and access, and makes it VALID; IB_WR_LOCAL_INV and a
 * SEND with Invalidate make it FREE again, after which its key matches no
 * lookup. Lookups compare against mr->key, not ibmr.lkey, which the
 * consumer rewrites before it posts the REG_MR.
 */
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <linux/vmalloc.h>

#include "sroce_qp.h"
#include "sroce_verbs.h"
#include <sroce/sroce_keys.h>

u32 sroce_key_make(u32 index)
{
	return sroce_key_compose(index, get_random_u8());
}

static int sroce_mr_add(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	u32 index;
	int err;

	if (atomic_inc_return(&sdev->num_mr) > SROCE_MAX_MR) {
		err = -ENOMEM;
		goto err_count;
	}
	err = xa_alloc_cyclic_irq(&sdev->key_xa, &index, mr,
				  XA_LIMIT(SROCE_KEY_INDEX_MIN, SROCE_KEY_INDEX_MAX),
				  &sdev->key_next, GFP_KERNEL);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_count;
	}
	refcount_set(&mr->refs, 1);
	init_completion(&mr->released);
	mr->ibmr.lkey = sroce_key_make(index);
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	return 0;

err_count:
	atomic_dec(&sdev->num_mr);
	return err;
}

/* Unpublish the key and wait until no lookup holds the region. */
static void sroce_mr_remove(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_erase_irq(&sdev->key_xa, sroce_key_index(mr->key));
	sroce_mr_put(mr);
	wait_for_completion(&mr->released);
	atomic_dec(&sdev->num_mr);
}

static struct sroce_mr *sroce_mr_lookup(struct sroce_dev *sdev, u32 key,
					bool odp_only)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->key_xa, sroce_key_index(key));
	if (xa_pointer_tag(mr))
		mr = NULL;	/* a memory window */
	if (mr && ((odp_only && mr->kind != SROCE_MR_ODP) ||
		   READ_ONCE(mr->key) != key ||
		   /* acquire: pairs with the release in sroce_mr_fast_reg() */
		   smp_load_acquire(&mr->state) != SROCE_MR_VALID ||
		   !refcount_inc_not_zero(&mr->refs)))
		mr = NULL;
	rcu_read_unlock();
	if (!mr || mr->kind != SROCE_MR_FAST)
		return mr;
	/*
	 * A fast-registration MR may have been invalidated between the check
	 * and the reference: sroce_mr_inval_drain() stores FREE and then
	 * counts the references, so one of the two of us sees the other's
	 * store (a full barrier on each side). Looked at again with ours
	 * counted, the region is still VALID under the same key, or not used.
	 */
	smp_mb();	/* refcount_inc_not_zero() orders nothing */
	if (READ_ONCE(mr->state) != SROCE_MR_VALID ||
	    READ_ONCE(mr->key) != key) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * Look up a registered MR by lkey or rkey for the data path: a referenced
 * MR or NULL. The full key (tag included) must match. A reference on a
 * fast-registration MR must be put in the same section that cannot sleep
 * or be preempted (the engines run with bottom halves off): an
 * invalidation spins until it is put (sroce_mr_inval_drain()).
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	return sroce_mr_lookup(sdev, key, false);
}

/*
 * The same for an ODP region only, from process context (ibv_advise_mr()
 * sleeps with its reference): never a fast-registration MR, so that no
 * invalidation waits for a sleeper.
 */
struct sroce_mr *sroce_mr_get_odp(struct sroce_dev *sdev, u32 key)
{
	return sroce_mr_lookup(sdev, key, true);
}

/* A referenced MR by the index of @key, whatever its tag and state. */
static struct sroce_mr *sroce_mr_get_slot(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->key_xa, sroce_key_index(key));
	if (xa_pointer_tag(mr) || (mr && !refcount_inc_not_zero(&mr->refs)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/*
 * Execute IB_WR_REG_MR (kernel QPs only): the WQE carries the MR's current
 * key, the new key, the range ib_map_mr_sg() mapped and the access. The MR
 * must be a fast-registration MR of the QP's PD in the FREE state, and the
 * new key must name the same slot. Returns 0 or -EINVAL.
 */
int sroce_mr_fast_reg(struct sroce_qp *qp, const struct sroce_send_wqe *w)
{
	u32 key = w->wr.bind_mw.rkey;
	struct sroce_mr *mr;
	int err = -EINVAL;

	mr = sroce_mr_get_slot(qp->sdev, w->wr.bind_mw.mr_lkey);
	if (!mr)
		return -EINVAL;
	if (mr->kind != SROCE_MR_FAST || mr->ibmr.pd != qp->ibqp.pd ||
	    sroce_key_index(key) != sroce_key_index(mr->key) ||
	    READ_ONCE(mr->state) != SROCE_MR_FREE || !mr->npages ||
	    !is_power_of_2(mr->ibmr.page_size) ||
	    mr->ibmr.page_size < PAGE_SIZE)
		goto out;
	mr->iova = w->wr.bind_mw.addr;
	mr->length = w->wr.bind_mw.length;
	mr->access = w->wr.bind_mw.access;
	mr->page_shift = ilog2(mr->ibmr.page_size);
	WRITE_ONCE(mr->key, key);
	/* Publish the range before the state that lets lookups use it. */
	smp_store_release(&mr->state, SROCE_MR_VALID);
	err = 0;
out:
	sroce_mr_put(mr);
	return err;
}

/*
 * An invalidated region's last accesses: wait until no packet that found
 * it VALID is still reading or writing its pages. IBA 10.6.6.2: once the
 * invalidation completes, the memory is no longer accessible through the
 * key, and a kernel consumer reuses the pages at that completion (a
 * storage host after a timed-out command: the target's late WRITE must
 * not land in them). Every data-path reference on a fast-registration MR
 * is held for one packet's copy in a section that cannot sleep
 * (sroce_mr_get()), and no new one is taken once FREE is visible, so the
 * wait is short; it spins because the requester and the responder, which
 * invalidate, cannot sleep either. The references that stay are the
 * registration's and the caller's (sroce_mr_get_slot()); another slot
 * reference is a REG_MR or another invalidation in its own short section
 * (that invalidation fails: the window count is closed until we are
 * done). rdma_rxe checks the state at lookup only and completes the
 * invalidation at once.
 */
static void sroce_mr_inval_drain(struct sroce_mr *mr)
{
	/* FREE visible before the count is read: see sroce_mr_lookup(). */
	smp_mb();
	while (refcount_read(&mr->refs) > 2)
		cpu_relax();
	/* The copies were done before their puts (release): seen done. */
	smp_acquire__after_ctrl_dep();
}

/*
 * Invalidate the region behind @key (sroce_key_invalidate()): only a
 * fast-registration MR of the QP's PD, named by its whole current key and
 * with no window bound to it, can be. Returns 0 or -EINVAL.
 */
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	mr = sroce_mr_get_slot(qp->sdev, key);
	if (!mr)
		return -EINVAL;
	if (mr->kind == SROCE_MR_FAST && mr->ibmr.pd == sroce_qp_pd(qp) &&
	    READ_ONCE(mr->key) == key && sroce_mr_close_mw(mr)) {
		WRITE_ONCE(mr->state, SROCE_MR_FREE);
		sroce_mr_inval_drain(mr);
		sroce_mr_reopen_mw(mr);
		err = 0;
	}
	sroce_mr_put(mr);
	return err;
}

void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->refs))
		complete(&mr->released);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct sroce_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->kind = SROCE_MR_DMA;
	mr->state = SROCE_MR_VALID;
	mr->access = access;
	mr->length = U64_MAX;
	err = sroce_mr_add(sdev, mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/*
 * Remember the pinned pages of a user MR in order, so that the data path
 * finds the page of any offset with one division.
 *
 * Entry by entry, not with the page iterator (for_each_sgtable_page()):
 * its out-of-line step per page was a third of the time ibv_reg_mr of
 * 1 GiB spent in sroce (Documentation/architecture.rst). ib_umem_get() builds
 * the table from whole pages, so an entry is a run of contiguous pages.
 */
static int sroce_mr_collect_pages(struct sroce_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	size_t n = ib_umem_num_pages(umem), i = 0;
	struct scatterlist *sg;
	unsigned int k, j, np;
	struct page *first;

	mr->upages = kvmalloc_array(max_t(size_t, n, 1), sizeof(*mr->upages),
				    GFP_KERNEL_ACCOUNT);
	if (!mr->upages)
		return -ENOMEM;
	for_each_sgtable_sg(&umem->sgt_append.sgt, sg, k) {
		first = nth_page(sg_page(sg), sg->offset >> PAGE_SHIFT);
		np = DIV_ROUND_UP((sg->offset & ~PAGE_MASK) + sg->length,
				  PAGE_SIZE);
		for (j = 0; j < np && i < n; j++)
			mr->upages[i++] = nth_page(first, j);
	}
	mr->nupages = i;
	mr->upage_off = ib_umem_offset(umem);
	return 0;
}

/* A user region's umem, whatever its kind; none is in use any more. */
static void sroce_mr_release_umem(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	if (mr->kind == SROCE_MR_ODP) {
		atomic_dec(&sdev->num_odp_mr);
		sroce_odp_release(mr);
	} else {
		ib_umem_release(mr->umem);
	}
}

#define SROCE_USER_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			   IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING | \
			   SROCE_ACCESS_FLUSH_GLOBAL | IB_ACCESS_ON_DEMAND | \
			   IB_ACCESS_HUGETLB)

struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct ib_umem *umem;
	struct sroce_mr *mr;
	int err;

	if (access & ~SROCE_USER_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	/* The region's offset within its first page is the same in iova. */
	if ((start ^ iova) & ~PAGE_MASK)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	if (access & IB_ACCESS_ON_DEMAND) {
		err = sroce_odp_init(mr, pd->device, start, length, iova,
				     access);
		if (err)
			goto err_free;
	} else {
		umem = ib_umem_get(pd->device, start, length, access);
		if (IS_ERR(umem)) {
			err = PTR_ERR(umem);
			goto err_free;
		}
		mr->umem = umem;
		err = sroce_mr_collect_pages(mr);
		if (err)
			goto err_umem;
		mr->kind = SROCE_MR_USER;
	}
	mr->state = SROCE_MR_VALID;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	mr->ibmr.page_size = PAGE_SIZE;
	err = sroce_mr_add(sdev, mr);
	if (err)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	sroce_mr_release_umem(sdev, mr);
	kvfree(mr->upages);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/* What a region over device memory may grant; always zero based. */
#define SROCE_DM_ACCESS (IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE | \
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

/*
 * ibv_reg_dm_mr(): a zero-based region over [offset, offset + length) of
 * device memory (the core has checked that range and IB_ZERO_BASED). Its
 * page list points into the DM's pages, which stay as long as the region
 * does: the core frees no DM that a region uses. Nothing is pinned.
 * @offset must be a multiple of 8: the responder checks that an atomic's
 * iova is 8-byte aligned, and a user region's iova has its address's
 * offset in the page, but a zero-based region's iova 0 sits at @offset in
 * the DM, so an offset of 4092 would put the word across two pages that
 * vmalloc need not have made neighbours (mlx5 asks for 8-byte alignment of
 * device memory too).
 */
struct ib_mr *sroce_reg_dm_mr(struct ib_pd *pd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct sroce_dm *dm = to_sdm(ibdm);
	u64 first = attr->offset >> PAGE_SHIFT;
	u64 end = PAGE_ALIGN(attr->offset + attr->length) >> PAGE_SHIFT;
	struct sroce_mr *mr;
	u8 *base = dm->mentry->vaddr;
	u64 i;
	int err;

	if ((attr->access_flags & ~SROCE_DM_ACCESS) || (attr->offset & 7) ||
	    end > dm->size >> PAGE_SHIFT)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->upages = kvmalloc_array(max_t(u64, end - first, 1),
				    sizeof(*mr->upages), GFP_KERNEL);
	if (!mr->upages) {
		err = -ENOMEM;
		goto err_free;
	}
	for (i = first; i < end; i++)
		mr->upages[i - first] = vmalloc_to_page(base + i * PAGE_SIZE);
	mr->nupages = end - first;
	mr->upage_off = attr->offset & ~PAGE_MASK;
	mr->kind = SROCE_MR_DEVMEM;
	mr->state = SROCE_MR_VALID;
	mr->iova = 0;
	mr->length = attr->length;
	mr->access = attr->access_flags;
	mr->ibmr.page_size = PAGE_SIZE;
	err = sroce_mr_add(sdev, mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	kvfree(mr->upages);
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * ibv_rereg_mr(). A new translation (IB_MR_REREG_TRANS) is a new region:
 * it is registered as one and returned, and ib_core swaps it in and
 * deregisters the old one (so the keys change, as the verb allows). A new
 * PD (ib_core updates ibmr.pd) or access alone changes the region in
 * place; data-path checks read both at every access.
 */
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (mr->kind != SROCE_MR_USER)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (access & ~SROCE_USER_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	if (flags & IB_MR_REREG_TRANS)
		return sroce_reg_user_mr(pd, start, length, iova, access, udata);
	/*
	 * Pages pinned without FOLL_WRITE (a read-only mapping: the zero
	 * page, a file opened read-only) must never become writable by a
	 * change of rights alone; ib_uverbs does not check it on 6.1.
	 */
	if (ib_access_writable(access) && !mr->umem->writable)
		return ERR_PTR(-EACCES);
	/* Not while a window is bound, nor while a bind counts one. */
	if (!sroce_mr_close_mw(mr))
		return ERR_PTR(-EBUSY);
	WRITE_ONCE(mr->access, access);
	sroce_mr_reopen_mw(mr);
	return NULL;
}

struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FRPL_LEN)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->kind = SROCE_MR_FAST;
	mr->state = SROCE_MR_FREE;
	mr->max_pages = max_num_sg;
	err = sroce_mr_add(sdev, mr);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kfree(mr->pages);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int n;

	mr->npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_set_page);
	/* ib_sg_to_pages() set iova to the first byte's DMA address. */
	if (n > 0 && ibmr->page_size)
		mr->first_off = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/* A deregistered region, unpublished, that nothing reads any more. */
static void sroce_mr_free(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	sroce_mr_release_umem(sdev, mr);
	kvfree(mr->upages);
	kfree(mr->pages);
	/* A lookup may still be reading mr->ibmr.lkey under RCU. */
	kfree_rcu(mr, rcu);
}

/*
 * An ODP region's hold let go: by its deregistration, after the key is
 * gone and the lookups have drained, or by a fault job that ended
 * (sroce_sgl.c). The last one frees it: deregistration does not wait for
 * a fault, which may wait in the owner's memory without end. A job holds
 * the device's memory until after this (the umem's release reads it).
 */
void sroce_mr_odp_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->odp_holds))
		sroce_mr_free(to_sdev(mr->ibmr.device), mr);
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	/*
	 * IBA 10.6.7.2.3: not while windows are bound to it (as rxe); from
	 * here on no bind can count a window in it.
	 */
	if (!sroce_mr_close_mw(mr))
		return -EBUSY;

	sroce_mr_remove(sdev, mr);
	if (mr->kind == SROCE_MR_ODP) {
		/* A fault job may still be in its umems: the last one frees. */
		sroce_mr_odp_put(mr);
		return 0;
	}
	sroce_mr_free(sdev, mr);
	return 0;
}

/* ------------------------------------------------------------------------
 * Data path access to registered memory
 */

/*
 * May @pd access [iova, iova + len) of @mr with @access (IB_ACCESS_* bits
 * required in the MR's access flags)? Overflow-safe.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access)
{
	if (mr->ibmr.pd != pd)
		return -EACCES;
	if ((mr->access & access) != access)
		return -EACCES;
	if (mr->kind == SROCE_MR_DMA)
		return 0;
	if (iova < mr->iova || len > mr->length ||
	    iova - mr->iova > mr->length - len)
		return -EFAULT;
	return 0;
}

/* Page and in-page offset of byte @iova of a user or fast-reg MR. */
static struct page *sroce_mr_page(struct sroce_mr *mr, u64 iova, u32 *pgoff)
{
	u64 pos, blk, va;

	if (mr->kind == SROCE_MR_USER || mr->kind == SROCE_MR_DEVMEM) {
		pos = iova - mr->iova + mr->upage_off;
		if ((pos >> PAGE_SHIFT) >= mr->nupages)
			return NULL;
		*pgoff = pos & ~PAGE_MASK;
		return mr->upages[pos >> PAGE_SHIFT];
	}
	/*
	 * Fast registration: pages[] holds the DMA addresses ib_map_mr_sg()
	 * produced, which for a virtual-DMA device are kernel addresses of
	 * blocks of 2^page_shift bytes (a block is contiguous memory).
	 */
	blk = BIT_ULL(mr->page_shift);
	pos = iova - mr->iova + mr->first_off;
	if ((pos >> mr->page_shift) >= mr->npages)
		return NULL;
	va = (mr->pages[pos >> mr->page_shift] & ~(blk - 1)) + (pos & (blk - 1));
	*pgoff = va & ~PAGE_MASK;
	return virt_to_page((void *)(uintptr_t)va);
}

/*
 * Copy @len bytes between @mr at @iova and the packet buffer. The caller
 * has checked bounds and access with sroce_mr_check(). -EAGAIN: a page of
 * an ODP region is not mapped (sroce_odp.c).
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, struct sroce_pktbuf *pb,
		  u32 len, enum sroce_copy_dir dir)
{
	struct page *page;
	u32 pgoff, n;
	void *va;

	if (mr->kind == SROCE_MR_DMA) {
		sroce_pktbuf_copy(pb, (void *)(uintptr_t)iova, len, dir);
		return 0;
	}
	if (mr->kind == SROCE_MR_ODP)
		return sroce_odp_copy(mr, iova, pb, len, dir);
	while (len) {
		page = sroce_mr_page(mr, iova, &pgoff);
		if (!page)
			return -EFAULT;
		n = min_t(u32, len, PAGE_SIZE - pgoff);
		va = kmap_local_page(page);
		sroce_pktbuf_copy(pb, va + pgoff, n, dir);
		kunmap_local(va);
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * The 8-byte aligned word at @iova, mapped: *@va is what to kunmap_local()
 * afterwards (NULL for a DMA MR, whose iova is a kernel address). NULL if
 * no page backs it.
 */
static u64 *sroce_mr_word(struct sroce_mr *mr, u64 iova, void **va)
{
	struct page *page;
	u32 pgoff = 0;

	*va = NULL;
	if (mr->kind == SROCE_MR_DMA)
		return (u64 *)(uintptr_t)iova;
	page = sroce_mr_page(mr, iova, &pgoff);
	/* Never a word across two pages, whatever the region's layout. */
	if (!page || (pgoff & 7))
		return NULL;
	*va = kmap_local_page(page);
	return *va + pgoff;
}

/* Apply @op to the word at @iova of @mr: 0, -EFAULT or (ODP) -EAGAIN. */
static int sroce_mr_word_op(struct sroce_mr *mr, u64 iova,
			    struct sroce_word_op *op)
{
	void *va;
	u64 *word;

	if (mr->kind == SROCE_MR_ODP)
		return sroce_odp_word(mr, iova, op);
	word = sroce_mr_word(mr, iova, &va);
	if (!word)
		return -EFAULT;
	sroce_word_apply(word, op);
	if (va)
		kunmap_local(va);
	return 0;
}

/* Execute an IBA atomic on the 8-byte aligned word at @iova. */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		    u64 swap_add, u64 *orig)
{
	struct sroce_word_op op = {
		.kind = cmp_swap ? SROCE_WORD_CMP_SWAP : SROCE_WORD_FETCH_ADD,
		.compare = compare,
		.value = swap_add,
	};
	int err = sroce_mr_word_op(mr, iova, &op);

	if (!err)
		*orig = op.orig;
	return err;
}

/*
 * ATOMIC WRITE (IBA A19.4): store the 8 bytes of @value, as they came off
 * the wire, at the 8-byte aligned @iova in one access, ordered after every
 * earlier store of the responder (release).
 */
int sroce_mr_atomic_write(struct sroce_mr *mr, u64 iova, u64 value)
{
	struct sroce_word_op op = {
		.kind = SROCE_WORD_STORE,
		.value = value,
	};

	return sroce_mr_word_op(mr, iova, &op);
}

/*
 * 0 if [iova, iova + len) of @mr can be accessed without a fault (always,
 * but for an ODP region); else -EAGAIN (a failed fault is the caller's
 * to know: sroce_odp_fault()).
 */
int sroce_mr_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write)
{
	if (mr->kind != SROCE_MR_ODP)
		return 0;
	return sroce_odp_ready(mr, iova, len, write);
}
