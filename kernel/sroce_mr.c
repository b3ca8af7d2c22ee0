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
 */
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/highmem.h>
#include <linux/skbuff.h>

#include "sroce.h"
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
	return 0;

err_count:
	atomic_dec(&sdev->num_mr);
	return err;
}

/* Unpublish the key and wait until no lookup holds the region. */
static void sroce_mr_remove(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_erase_irq(&sdev->key_xa, sroce_key_index(mr->ibmr.lkey));
	sroce_mr_put(mr);
	wait_for_completion(&mr->released);
	atomic_dec(&sdev->num_mr);
}

/*
 * Look up a registered MR by lkey or rkey; any context. Returns a
 * referenced MR or NULL. The full key (tag included) must match.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->key_xa, sroce_key_index(key));
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->refs)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
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
 */
static int sroce_mr_collect_pages(struct sroce_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter piter;
	size_t n = ib_umem_num_pages(umem), i = 0;

	mr->upages = kvmalloc_array(max_t(size_t, n, 1), sizeof(*mr->upages),
				    GFP_KERNEL);
	if (!mr->upages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &piter, 0) {
		if (i == n)
			break;
		mr->upages[i++] = sg_page_iter_page(&piter);
	}
	mr->nupages = i;
	mr->upage_off = ib_umem_offset(umem);
	return 0;
}

#define SROCE_USER_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			   IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING)

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
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	mr->ibmr.page_size = PAGE_SIZE;
	err = sroce_mr_add(sdev, mr);
	if (err)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	kvfree(mr->upages);
	ib_umem_release(umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
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

	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_set_page);
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	sroce_mr_remove(sdev, mr);
	ib_umem_release(mr->umem);
	kvfree(mr->upages);
	kfree(mr->pages);
	/* A lookup may still be reading mr->ibmr.lkey under RCU. */
	kfree_rcu(mr, rcu);
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

static void sroce_pktbuf_copy(struct sroce_pktbuf *pb, void *mem, u32 n,
			      enum sroce_copy_dir dir)
{
	if (dir == SROCE_TO_MR) {
		if (pb->skb)
			skb_copy_bits(pb->skb, pb->off, mem, n);
		else
			memcpy(mem, pb->buf + pb->off, n);
	} else {
		memcpy(pb->buf + pb->off, mem, n);
	}
	pb->off += n;
}

/* Page and in-page offset of byte @iova of a user or fast-reg MR. */
static struct page *sroce_mr_page(struct sroce_mr *mr, u64 iova, u32 *pgoff)
{
	u64 pos;

	if (mr->kind == SROCE_MR_USER) {
		pos = iova - mr->iova + mr->upage_off;
		if ((pos >> PAGE_SHIFT) >= mr->nupages)
			return NULL;
		*pgoff = pos & ~PAGE_MASK;
		return mr->upages[pos >> PAGE_SHIFT];
	}
	pos = iova - mr->ibmr.iova + (mr->pages[0] & ~PAGE_MASK);
	if ((pos >> PAGE_SHIFT) >= mr->npages)
		return NULL;
	*pgoff = pos & ~PAGE_MASK;
	return virt_to_page((void *)(uintptr_t)(mr->pages[pos >> PAGE_SHIFT] &
						PAGE_MASK));
}

/*
 * Copy @len bytes between @mr at @iova and the packet buffer. The caller
 * has checked bounds and access with sroce_mr_check().
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
 * Execute an IBA atomic on the 8-byte word at @iova with a real atomic
 * instruction, so that it is atomic against the CPU and every other
 * requester (IBA 9.4.5, IB_ATOMIC_HCA). @iova is 8-byte aligned.
 */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		    u64 swap_add, u64 *orig)
{
	struct page *page = NULL;
	u32 pgoff = 0;
	u64 *word;
	void *va;

	if (mr->kind == SROCE_MR_DMA) {
		va = NULL;
		word = (u64 *)(uintptr_t)iova;
	} else {
		page = sroce_mr_page(mr, iova, &pgoff);
		if (!page)
			return -EFAULT;
		va = kmap_local_page(page);
		word = va + pgoff;
	}
	if (cmp_swap)
		*orig = cmpxchg64(word, compare, swap_add);
	else
		*orig = atomic64_fetch_add(swap_add, (atomic64_t *)word);
	if (va)
		kunmap_local(va);
	return 0;
}

/*
 * Copy @len bytes between a WQE's SGE list, starting @offset bytes into
 * it, and the packet buffer. Every key is looked up and checked against
 * the QP's PD, the SGE's own bounds and, for writes into local memory,
 * IB_ACCESS_LOCAL_WRITE. Returns -ENOSPC when the SGEs are too short
 * (LOC_LEN_ERR) and -EACCES/-EFAULT on a bad key (LOC_PROT_ERR).
 */
int sroce_sgl_copy(struct sroce_qp *qp, const struct sroce_sge *sge,
		   u32 num_sge, u32 offset, struct sroce_pktbuf *pb, u32 len,
		   enum sroce_copy_dir dir)
{
	int access = dir == SROCE_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0;
	struct sroce_mr *mr;
	u32 i, n;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - offset);
		if (!qp->is_user && sge[i].lkey == qp->sdev->ibdev.local_dma_lkey) {
			/* Kernel consumers: the address is a kernel address. */
			sroce_pktbuf_copy(pb, (void *)(uintptr_t)(sge[i].addr +
								  offset),
					  n, dir);
		} else {
			mr = sroce_mr_get(qp->sdev, sge[i].lkey);
			if (!mr)
				return -EACCES;
			err = sroce_mr_check(mr, qp->ibqp.pd, sge[i].addr,
					     sge[i].length, access);
			if (!err)
				err = sroce_mr_copy(mr, sge[i].addr + offset,
						    pb, n, dir);
			sroce_mr_put(mr);
			if (err)
				return err;
		}
		len -= n;
		offset = 0;
	}
	return len ? -ENOSPC : 0;
}
