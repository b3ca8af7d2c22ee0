// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: rings shared with user space (or private to a kernel consumer).
 *
 * A ring is one vmalloc'ed buffer: struct sroce_ring_hdr followed by the
 * entries (include/uapi/rdma/sroce-abi.h). User rings are exposed with an
 * rdma_user_mmap_entry; the entry owns the memory, so a ring outlives the
 * queue that created it for as long as user space keeps it mapped.
 *
 * A user ring (up to 2 GiB; 2^20 WQEs of 32 SGEs take 608 MiB) is charged
 * to the memory cgroup of the task that creates the queue (__GFP_ACCOUNT):
 * the pages stay charged until sroce_mmap_free() frees them.
 * __GFP_RETRY_MAYFAIL makes a charge past memory.max, or an allocation the
 * system could only satisfy by killing something, fail the creation with
 * -ENOMEM instead of invoking the OOM killer (try_charge_memcg() gives up
 * without OOM on that flag; kvmalloc() documents it as supported for the
 * vmalloc path). __GFP_NOWARN: the size is user space's choice, so failing
 * is no kernel problem worth a stack dump. The rings of kernel consumers
 * belong to no user process and are not charged.
 */
#include <linux/vmalloc.h>
#include <linux/mm.h>

#include "sroce_queue.h"
#include "sroce_verbs.h"

#define SROCE_RING_GFP_USER	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN | __GFP_ZERO)
#define SROCE_RING_GFP_KERNEL	(GFP_KERNEL | __GFP_ZERO)

static struct sroce_mmap_entry *to_smentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct sroce_mmap_entry, rdma);
}

/*
 * Zeroed memory of @size bytes (a multiple of PAGE_SIZE) that @uctx can
 * map, charged to the caller's memory cgroup. Not vmalloc_user(): it takes
 * no gfp flags, so its pages cannot be charged. __vmalloc() can, but its
 * area lacks VM_USERMAP, so sroce_mmap() maps it page by page instead of
 * remap_vmalloc_range(). The entry owns the memory from here on: after
 * rdma_user_mmap_entry_remove() it is freed with the last mapping.
 */
struct sroce_mmap_entry *sroce_mmap_alloc(struct ib_ucontext *uctx,
					  size_t size)
{
	struct sroce_mmap_entry *me;
	int err;

	me = kzalloc(sizeof(*me), GFP_KERNEL_ACCOUNT);
	if (!me)
		return ERR_PTR(-ENOMEM);
	me->vaddr = __vmalloc(size, SROCE_RING_GFP_USER);
	if (!me->vaddr) {
		err = -ENOMEM;
		goto err_entry;
	}
	err = rdma_user_mmap_entry_insert(uctx, &me->rdma, size);
	if (err)
		goto err_mem;
	return me;

err_mem:
	vfree(me->vaddr);
err_entry:
	kfree(me);
	return ERR_PTR(err);
}

/*
 * Allocate a ring of @num_entries (a power of two) entries of @stride bytes.
 * With @udata the ring is made mappable by the caller's user context.
 */
int sroce_queue_init(struct sroce_dev *sdev, struct sroce_queue *q,
		     struct ib_udata *udata, u32 num_entries, u32 stride)
{
	struct sroce_ucontext *uctx;
	struct sroce_mmap_entry *me = NULL;
	size_t size;

	if (!num_entries || (num_entries & (num_entries - 1)) ||
	    num_entries > SROCE_RING_MAX_ENTRIES)
		return -EINVAL;
	size = sroce_ring_bytes(num_entries, stride, PAGE_SIZE);
	if (!size)
		return -EINVAL;

	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ibuc);
		me = sroce_mmap_alloc(&uctx->ibuc, size);
		if (IS_ERR(me))
			return PTR_ERR(me);
		q->hdr = me->vaddr;
	} else {
		q->hdr = __vmalloc(size, SROCE_RING_GFP_KERNEL);
		if (!q->hdr)
			return -ENOMEM;
	}
	q->num_entries = num_entries;
	q->stride = stride;
	q->size = size;
	q->idx = 0;
	q->mentry = me;
	return 0;
}

/*
 * Drop the kernel's hold on a ring. A user ring's memory is freed by
 * sroce_mmap_free() when its last mapping goes away.
 */
void sroce_queue_cleanup(struct sroce_queue *q)
{
	if (!q->hdr)
		return;
	if (q->mentry)
		rdma_user_mmap_entry_remove(&q->mentry->rdma);
	else
		vfree(q->hdr);
	q->hdr = NULL;
	q->mentry = NULL;
}

void sroce_queue_info(const struct sroce_queue *q, struct sroce_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!q->hdr)
		return;
	info->offset = q->mentry ? rdma_user_mmap_get_offset(&q->mentry->rdma) : 0;
	info->size = q->size;
	info->num_entries = q->num_entries;
	info->stride = q->stride;
}

/*
 * Copy the receive WQE at @q's consumer index into @r and validate the
 * copy (the ring is user memory that may change under us). Returns 0,
 * -EAGAIN when the ring is empty, or -EIO when the producer index or the
 * WQE is invalid; then the ring is flagged SROCE_RING_F_ERROR. The slot
 * is not freed. *@prod_out receives the producer index that was read.
 */
int sroce_rq_fetch(struct sroce_queue *q, u32 max_sge, struct sroce_rwqe *r,
		   u32 *prod_out)
{
	const struct sroce_recv_wqe *w;
	u32 prod, num_sge;

	prod = sroce_ring_load_prod(q->hdr);
	*prod_out = prod;
	if (!sroce_ring_prod_valid(prod, q->idx, q->num_entries))
		goto bad;
	if (prod == q->idx)
		return -EAGAIN;
	w = sroce_queue_entry(q, q->idx);
	r->wr_id = READ_ONCE(w->wr_id);
	num_sge = READ_ONCE(w->num_sge);
	if (num_sge > max_sge || num_sge > ARRAY_SIZE(r->sge))
		goto bad;
	memcpy(r->sge, w->sge, num_sge * sizeof(*r->sge));
	r->num_sge = num_sge;
	r->offset = 0;
	return 0;
bad:
	sroce_ring_kflags_set(q->hdr, SROCE_RING_F_ERROR);
	return -EIO;
}

/*
 * Post receive WRs of a kernel consumer to @q (a QP's RQ or an SRQ); the
 * caller serialises producers.
 */
int sroce_rq_post_kernel(struct sroce_queue *q, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	struct sroce_recv_wqe *w;
	int err = 0;
	u32 prod;

	for (prod = q->hdr->prod; wr; wr = wr->next) {
		if (sroce_queue_full(q, prod)) {
			err = -ENOMEM;
			break;
		}
		if ((u32)wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		w = sroce_queue_entry(q, prod);
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
		prod++;
	}
	sroce_ring_store_prod(q->hdr, prod);
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * Map the whole ring at @vaddr into @vma. remap_vmalloc_range() refuses an
 * area without VM_USERMAP, and the vmalloc variants exported to modules on
 * 6.1 and 6.12 that set it (vmalloc_user(), vmalloc_32_user()) take no gfp
 * flags, so they cannot charge; __vmalloc_node_range(), which takes both,
 * is not exported. vm_insert_page() of each vmalloc_to_page() is what
 * remap_vmalloc_range() does itself, and it works alike on 6.1 and 6.12;
 * vm_map_pages() would need an array of the pages, which __vmalloc() does
 * not hand out. VM_DONTEXPAND | VM_DONTDUMP as remap_vmalloc_range() sets
 * them: the mapping cannot be grown by mremap() and stays out of core dumps.
 */
static int sroce_map_ring(struct vm_area_struct *vma, void *vaddr)
{
	unsigned long uaddr;
	int err;

	sroce_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (uaddr = vma->vm_start; uaddr < vma->vm_end; uaddr += PAGE_SIZE) {
		err = vm_insert_page(vma, uaddr, vmalloc_to_page(vaddr));
		if (err)
			return err;
		vaddr += PAGE_SIZE;
		/* Up to 2^19 pages: preemption may be voluntary only. */
		cond_resched();
	}
	return 0;
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	struct sroce_mmap_entry *me;
	int err;

	rentry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rentry)
		return -EINVAL;
	me = to_smentry(rentry);
	if (vma->vm_end - vma->vm_start != rentry->npages * PAGE_SIZE) {
		err = -EINVAL;
		goto out;
	}
	err = sroce_map_ring(vma, me->vaddr);
out:
	rdma_user_mmap_entry_put(rentry);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct sroce_mmap_entry *me = to_smentry(rentry);

	vfree(me->vaddr);
	kfree(me);
}
