// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: on-demand paging (IBV_ACCESS_ON_DEMAND, ibv_advise_mr()).
 *
 * An ODP region pins nothing. The core's ODP umem keeps an mmu interval
 * notifier on the range and a table of the pages mapped so far
 * (dma_list: for a virtual-DMA device such as ours each entry is the
 * page's kernel address with its read and write bits), which
 * ib_umem_odp_map_dma_and_lock() fills by faulting (hmm_range_fault(),
 * process context) and the invalidation callback empties when the mm
 * unmaps, migrates, swaps or write-protects a page.
 *
 * The data path runs in softirq and cannot sleep on the umem's mutex or
 * fault a page. It reads the table under the region's spinlock
 * (odp_lock) and copies while it holds it; a page it does not find (or
 * not writable, for a write) makes the copy return -EAGAIN, and the
 * caller queues a fault work item (sroce_odp_fault(), sroce_sgl.c) and
 * tries again later:
 *  - the responder answers a SEND, WRITE or atomic with an RNR NAK, as
 *    ODP hardware does, and the requester sends the packet again after
 *    the RNR timer; READ responses and accepted atomics wait, and the
 *    fault kicks the QP's work item, which goes on with them;
 *  - the requester stops and is kicked when the fault is done (and by its
 *    packet-buffer timer besides); before it starts a READ or an atomic
 *    it faults in the local buffers the answer will land in;
 *  - the completer drops a READ response or atomic ACK it cannot place
 *    (only an invalidation racing the WQE can cause it): the requester
 *    asks for it again (an atomic is then answered from the responder's
 *    resource, never executed twice);
 *  - a UD receive, and a UC packet, are dropped (neither can be retried;
 *    sroce advertises ODP for UD and UC sends only).
 *
 * The invalidation callback takes odp_lock only to publish the range it
 * is about to unmap (inval_start, inval_end): a copy holding the lock
 * finishes first, one that comes later sees the range and misses, so
 * the core unmaps (and marks dirty) outside our lock. The umem's mutex
 * orders it against the fault's mapping, as the core requires.
 *
 * A fault that fails (the range is not mapped in the process, or the
 * process is gone) is remembered by the QP side that asked for it
 * (struct sroce_odp_fault, sroce_sgl.c): its access, tried again, fails
 * with -EFAULT (LOC_PROT_ERR, or a remote access error NAK) instead of
 * faulting forever. Not by the region: a peer's failed fault on a hole
 * then failed the next access of anyone there, the owner's too, once
 * the owner had mapped memory at the hole (odp.sh, hole.owner).
 *
 * Implicit ODP (ibv_reg_mr(pd, NULL, SIZE_MAX, ...)): the region is the
 * process's whole address space, iova == user address. Its root umem
 * holds no pages; the first fault in each naturally aligned 64 MiB chunk
 * adds a child umem for that chunk (ib_umem_odp_alloc_child(), its own
 * interval notifier and page table), which the data path finds by chunk
 * number in an xarray (xa_load(), lockless) while it holds odp_lock; the
 * region's reference keeps every child. A child is added only where the
 * process has a readable mapping (a peer holding the rkey cannot make us
 * allocate page tables for empty or PROT_NONE address space), at most
 * SROCE_ODP_MAX_CHILDREN per region, and lives as long as the region:
 * mlx5 also frees idle children, sroce does not. 64 MiB: a child's two
 * tables take 256 KiB, the cap 256 MiB of tables for 64 GiB of memory
 * touched; past it, a fault fails (an access error).
 *
 * What the page tables cost, and who pays: the core allocates them
 * (ib_umem_odp_get(), ib_umem_odp_alloc_child()), 16 bytes per page of
 * the range whether anything is mapped there or not, with GFP_KERNEL and
 * no memory cgroup charge; a module cannot charge one itself (the kernels
 * we build for export no memcg charge function). So they count as the
 * pages of an ordinary region do: in the owner's mm->pinned_vm, against
 * RLIMIT_MEMLOCK unless the registering process has CAP_IPC_LOCK
 * (ib_umem_get()'s rule), taken before the core allocates and given back
 * with the region. An unprivileged ibv_reg_mr(1 TiB, ON_DEMAND), 4 GiB of
 * tables, then fails with ENOMEM instead of taking them. The limit is
 * read at registration, from the registering process: an implicit
 * region's children are added later, by a work item (odp_memlock.sh).
 */
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <rdma/ib_umem_odp.h>

#include "sroce_compat.h"
#include "sroce_mem.h"

#define SROCE_ODP_CHILD_SHIFT	26
#define SROCE_ODP_MAX_CHILDREN	1024

/* The core's tables per page: a pfn_list and a dma_list entry. */
#define SROCE_ODP_TABLE_BYTES	(sizeof(unsigned long) + sizeof(dma_addr_t))

static const struct mmu_interval_notifier_ops sroce_odp_ops;

/* Pages of tables for @bytes of range (a multiple of PAGE_SIZE). */
static u64 sroce_odp_table_pages(u64 bytes)
{
	return DIV_ROUND_UP_ULL((bytes >> PAGE_SHIFT) * SROCE_ODP_TABLE_BYTES,
				PAGE_SIZE);
}

/* Count @pages of tables in @mm's pinned_vm, within @mr's limit. */
static int sroce_odp_charge(struct sroce_mr *mr, struct mm_struct *mm,
			    u64 pages)
{
	if (atomic64_add_return(pages, &mm->pinned_vm) > mr->odp_pin_limit) {
		atomic64_sub(pages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mr->odp_charged += pages;
	return 0;
}

static void sroce_odp_uncharge(struct sroce_mr *mr, struct mm_struct *mm,
			       u64 pages)
{
	atomic64_sub(pages, &mm->pinned_vm);
	mr->odp_charged -= pages;
}

static u64 sroce_odp_uaddr(const struct sroce_mr *mr, u64 iova)
{
	return mr->odp->umem.address + (iova - mr->iova);
}

static u64 sroce_odp_access(const struct sroce_mr *mr, bool write)
{
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
}

static bool sroce_odp_implicit(const struct sroce_mr *mr)
{
	return mr->odp->is_implicit_odp;
}

/* The page table user address @ua is in, or NULL (no child there yet). */
static struct sroce_odp_map *sroce_odp_map_at(struct sroce_mr *mr, u64 ua)
{
	if (!sroce_odp_implicit(mr))
		return &mr->odp_map;
	return xa_load(&mr->odp_children, ua >> SROCE_ODP_CHILD_SHIFT);
}

/*
 * The kernel address of user address @ua, under odp_lock, or NULL if its
 * page is not mapped (for writing, if @write). *@room: bytes from there to
 * the end of the page.
 */
static void *sroce_odp_va(struct sroce_mr *mr, u64 ua, bool write, u32 *room)
{
	struct sroce_odp_map *m = sroce_odp_map_at(mr, ua);
	u64 need = sroce_odp_access(mr, write);
	struct ib_umem_odp *odp;
	u64 psz, off;
	dma_addr_t d;

	lockdep_assert_held(&mr->odp_lock);
	if (!m || (ua >= m->inval_start && ua < m->inval_end))
		return NULL;
	odp = m->odp;
	/* A child is found by @ua's chunk; never index past its table. */
	if (ua - ib_umem_start(odp) >= ib_umem_end(odp) - ib_umem_start(odp))
		return NULL;
	psz = BIT_ULL(odp->page_shift);
	d = READ_ONCE(odp->dma_list[(ua - ib_umem_start(odp)) >>
				    odp->page_shift]);
	if ((d & need) != need)
		return NULL;
	off = ua & (psz - 1);
	*room = min_t(u64, psz - off, U32_MAX);
	return (void *)(uintptr_t)((d & ODP_DMA_ADDR_MASK) + off);
}

int sroce_odp_copy(struct sroce_mr *mr, u64 iova, struct sroce_pktbuf *pb,
		   u32 len, enum sroce_copy_dir dir)
{
	u64 ua = sroce_odp_uaddr(mr, iova);
	unsigned long flags;
	u32 room, n;
	void *va;
	int err;

	while (len) {
		spin_lock_irqsave(&mr->odp_lock, flags);
		va = sroce_odp_va(mr, ua, dir == SROCE_TO_MR, &room);
		if (!va) {
			err = -EAGAIN;
			spin_unlock_irqrestore(&mr->odp_lock, flags);
			return err;
		}
		n = min(len, room);
		sroce_pktbuf_copy(pb, va, n, dir);
		spin_unlock_irqrestore(&mr->odp_lock, flags);
		ua += n;
		len -= n;
	}
	return 0;
}

/* Apply @op to the aligned word at @iova: 0, -EAGAIN or -EFAULT. */
int sroce_odp_word(struct sroce_mr *mr, u64 iova, struct sroce_word_op *op)
{
	u64 ua = sroce_odp_uaddr(mr, iova);
	unsigned long flags;
	int err = 0;
	u32 room;
	void *va;

	spin_lock_irqsave(&mr->odp_lock, flags);
	va = sroce_odp_va(mr, ua, true, &room);
	if (!va)
		err = -EAGAIN;
	else if (ua & 7)
		err = -EFAULT;
	else
		sroce_word_apply(va, op);
	spin_unlock_irqrestore(&mr->odp_lock, flags);
	return err;
}

/* Is [iova, iova + len) of @mr mapped (writable, if @write)? 0 or -EAGAIN. */
int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write)
{
	u64 ua = sroce_odp_uaddr(mr, iova), end = ua + len;
	unsigned long flags;
	int err = 0;
	u32 room;

	/* A page at a time: interrupts and invalidations wait for one. */
	while (ua < end && !err) {
		spin_lock_irqsave(&mr->odp_lock, flags);
		if (sroce_odp_va(mr, ua, write, &room))
			ua += room;
		else
			err = -EAGAIN;
		spin_unlock_irqrestore(&mr->odp_lock, flags);
	}
	return err;
}

/*
 * Does the process of @mm have a readable mapping of memory at @ua (not
 * PROT_NONE, not I/O)? 0 or -EFAULT.
 */
static int sroce_odp_vma_at(struct mm_struct *mm, u64 ua)
{
	struct vm_area_struct *vma;
	bool ok;

	if (!mmget_not_zero(mm))
		return -EFAULT;
	mmap_read_lock(mm);
	vma = vma_lookup(mm, ua);
	ok = vma && (vma->vm_flags & VM_READ) &&
	     !(vma->vm_flags & (VM_IO | VM_PFNMAP));
	mmap_read_unlock(mm);
	mmput(mm);
	return ok ? 0 : -EFAULT;
}

/* Publish @odp's table to the invalidation as @m's. */
static void sroce_odp_map_set(struct sroce_odp_map *m, struct sroce_mr *mr,
			      struct ib_umem_odp *odp)
{
	m->odp = odp;
	m->mr = mr;
	mutex_lock(&odp->umem_mutex);
	odp->private = m;
	mutex_unlock(&odp->umem_mutex);
}

/*
 * The child of implicit region @mr whose chunk holds @ua, added if there
 * is none and the process has a mapping at @ua; process context.
 */
static struct sroce_odp_map *sroce_odp_child(struct sroce_mr *mr, u64 ua)
{
	u64 child_pages = sroce_odp_table_pages(BIT_ULL(SROCE_ODP_CHILD_SHIFT));
	unsigned long idx = ua >> SROCE_ODP_CHILD_SHIFT;
	struct ib_umem_odp *odp;
	struct sroce_odp_map *m;
	int err;

	m = xa_load(&mr->odp_children, idx);
	if (m)
		return m;
	mutex_lock(&mr->odp_child_mutex);
	m = xa_load(&mr->odp_children, idx);
	if (m)
		goto out;
	/*
	 * Past the cap or the owner's memlock limit, a fault fails for good
	 * (-EDQUOT, an access error): trying again cannot pass.
	 */
	err = -EDQUOT;
	if (mr->odp_nchildren >= SROCE_ODP_MAX_CHILDREN)
		goto err;
	err = sroce_odp_vma_at(mr->odp->umem.owning_mm, ua);
	if (err)
		goto err;
	err = sroce_odp_charge(mr, mr->odp->umem.owning_mm, child_pages);
	if (err) {
		err = -EDQUOT;
		goto err;
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		err = -ENOMEM;
		goto err_uncharge;
	}
	odp = ib_umem_odp_alloc_child(mr->odp, idx << SROCE_ODP_CHILD_SHIFT,
				      BIT_ULL(SROCE_ODP_CHILD_SHIFT),
				      &sroce_odp_ops);
	if (IS_ERR(odp)) {
		err = PTR_ERR(odp);
		goto err_free;
	}
	sroce_odp_map_set(m, mr, odp);
	err = xa_err(xa_store(&mr->odp_children, idx, m, GFP_KERNEL));
	if (err)
		goto err_release;
	mr->odp_nchildren++;
out:
	mutex_unlock(&mr->odp_child_mutex);
	return m;

err_release:
	ib_umem_odp_release(odp);
err_free:
	kfree(m);
err_uncharge:
	sroce_odp_uncharge(mr, mr->odp->umem.owning_mm, child_pages);
err:
	mutex_unlock(&mr->odp_child_mutex);
	return ERR_PTR(err);
}

/*
 * Map [ua, ua + len), faulting if @fault; 0 or a negative errno. An
 * implicit region maps child by child; without @fault, chunks it cannot
 * have a child for are skipped.
 */
static int sroce_odp_map(struct sroce_mr *mr, u64 ua, u64 len, u64 access,
			 bool fault)
{
	u64 pos = ua, end = ua + len, n;
	struct sroce_odp_map *m;
	int np;

	while (pos < end) {
		m = sroce_odp_implicit(mr) ? sroce_odp_child(mr, pos) :
					     &mr->odp_map;
		if (IS_ERR(m) && !fault) {
			n = BIT_ULL(SROCE_ODP_CHILD_SHIFT) -
			    (pos & (BIT_ULL(SROCE_ODP_CHILD_SHIFT) - 1));
			pos += min(n, end - pos);
			continue;
		}
		if (IS_ERR(m))
			return PTR_ERR(m);
		n = min_t(u64, end - pos, ib_umem_end(m->odp) - pos);
		np = ib_umem_odp_map_dma_and_lock(m->odp, pos, n, access,
						  fault);
		if (np < 0)
			return np;
		mutex_unlock(&m->odp->umem_mutex);
		pos += n;
	}
	return 0;
}

/*
 * Fault [ua, ua + len) of the owner's memory in before the core maps it,
 * errors ignored (the mapping below reports them). The core's fault
 * (hmm_range_fault()) holds the owner's mmap_lock for as long as a page
 * takes to come in, and a page of a file whose FUSE server never answers
 * never does: the owner's own munmap() (its provider unmapping a ring at
 * destroy), and behind it every fault of its threads, would wait with
 * the job. GUP with @locked drops the lock while it waits for I/O, as a
 * user's own fault does; the job still waits, the process does not
 * (odp_fuse.sh). Pages that came in are then present for the core's
 * fault, which takes no lock for long.
 */
static void sroce_odp_prefault(struct sroce_mr *mr, u64 ua, u64 len,
			       bool write)
{
	struct mm_struct *mm = mr->odp->umem.owning_mm;
	u64 first = ua >> PAGE_SHIFT;
	u64 n = ((ua + len + PAGE_SIZE - 1) >> PAGE_SHIFT) - first;
	int locked = 1;

	if (!len || !mmget_not_zero(mm))
		return;
	mmap_read_lock(mm);
	sroce_gup_fault_in(mm, first << PAGE_SHIFT, n, write ? FOLL_WRITE : 0,
			   &locked);
	if (locked)
		mmap_read_unlock(mm);
	mmput(mm);
}

/*
 * Fault in [iova, iova + len) of @mr, and @ahead bytes from @iova if it
 * can (the rest of a message or buffer); process context. 0 or the
 * errno: -EFAULT, -EPERM, -EINVAL or -EDQUOT fail for good (nothing
 * mapped there, no write access, the process gone, no child table
 * allowed), others (-EBUSY from a busy mm, -ENOMEM) may pass.
 */
int sroce_odp_fault_in(struct sroce_mr *mr, u64 iova, u64 len, u64 ahead,
		       bool write)
{
	u64 ua = sroce_odp_uaddr(mr, iova);
	u64 access = sroce_odp_access(mr, write);
	int err;

	sroce_odp_prefault(mr, ua, ahead, write);
	err = sroce_odp_map(mr, ua, ahead, access, true);
	if (err && ahead > len)
		err = sroce_odp_map(mr, ua, len, access, true);
	return err;
}

/*
 * ibv_advise_mr() of [iova, iova + len), at once: map for writing if
 * @write, and only the pages present unless @fault.
 */
int sroce_odp_prefetch(struct sroce_mr *mr, u64 iova, u64 len, bool write,
		       bool fault)
{
	return sroce_odp_map(mr, sroce_odp_uaddr(mr, iova), len,
			     sroce_odp_access(mr, write), fault);
}

static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	u64 psz = BIT_ULL(odp->page_shift), start, end;
	struct sroce_odp_map *m;
	unsigned long flags;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = ALIGN_DOWN(max_t(u64, range->start, ib_umem_start(odp)), psz);
	end = ALIGN(min_t(u64, range->end, ib_umem_end(odp)), psz);
	/* Not set yet: nothing was mapped, no copy can be reading. */
	m = odp->private;
	if (m) {
		spin_lock_irqsave(&m->mr->odp_lock, flags);
		m->inval_start = start;
		m->inval_end = end;
		spin_unlock_irqrestore(&m->mr->odp_lock, flags);
	}
	ib_umem_odp_unmap_dma_pages(odp, start, end);
	if (m) {
		spin_lock_irqsave(&m->mr->odp_lock, flags);
		m->inval_start = 0;
		m->inval_end = 0;
		spin_unlock_irqrestore(&m->mr->odp_lock, flags);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = sroce_odp_invalidate,
};

/*
 * Set @mr up as an ODP region of [start, start + length), or as an
 * implicit one (start 0, length U64_MAX: the whole address space, whose
 * iova must be 0, as mlx5 asks).
 */
int sroce_odp_init(struct sroce_mr *mr, struct ib_device *ibdev, u64 start,
		   u64 length, u64 iova, int access)
{
	struct mm_struct *mm = current->mm;
	struct ib_umem_odp *odp;
	u64 end;
	int err;

	spin_lock_init(&mr->odp_lock);
	refcount_set(&mr->odp_holds, 1);
	mr->odp_pin_limit = capable(CAP_IPC_LOCK) ? U64_MAX :
			    rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	if (!start && length == U64_MAX) {
		if (iova)
			return -EINVAL;
		odp = ib_umem_odp_alloc_implicit(ibdev, access);
		if (IS_ERR(odp))
			return PTR_ERR(odp);
		/*
		 * The root holds no notifier, so nothing keeps the mm_struct
		 * that children are added to (ib_umem_odp_alloc_child() reads
		 * it): the region holds it until it is deregistered.
		 */
		mmgrab(odp->umem.owning_mm);
		xa_init(&mr->odp_children);
		mutex_init(&mr->odp_child_mutex);
	} else {
		if (!mm || check_add_overflow(start, length, &end) ||
		    ALIGN(end, PAGE_SIZE) < end)
			return -EOVERFLOW;
		end = ALIGN(end, PAGE_SIZE) - ALIGN_DOWN(start, PAGE_SIZE);
		err = sroce_odp_charge(mr, mm, sroce_odp_table_pages(end));
		if (err)
			return err;
		odp = ib_umem_odp_get(ibdev, start, length, access,
				      &sroce_odp_ops);
		if (IS_ERR(odp)) {
			sroce_odp_uncharge(mr, mm, mr->odp_charged);
			return PTR_ERR(odp);
		}
		sroce_odp_map_set(&mr->odp_map, mr, odp);
	}
	mr->odp = odp;
	mr->umem = &odp->umem;
	mr->kind = SROCE_MR_ODP;
	atomic_inc(&to_sdev(ibdev)->num_odp_mr);
	return 0;
}

/* Release @mr's umems; nothing reads them any more (no reference left). */
void sroce_odp_release(struct sroce_mr *mr)
{
	struct ib_umem_odp *root = mr->odp;
	struct sroce_odp_map *m;
	unsigned long idx;

	/* The mm is held by the umem (explicit) or by us (implicit). */
	sroce_odp_uncharge(mr, root->umem.owning_mm, mr->odp_charged);
	if (sroce_odp_implicit(mr)) {
		xa_for_each(&mr->odp_children, idx, m) {
			ib_umem_odp_release(m->odp);
			kfree(m);
		}
		xa_destroy(&mr->odp_children);
		mutex_destroy(&mr->odp_child_mutex);
		mmdrop(root->umem.owning_mm);
	}
	ib_umem_odp_release(root);
}

/* Pages mapped now; read without the umems' mutexes. */
u64 sroce_odp_pages_mapped(struct sroce_mr *mr)
{
	struct sroce_odp_map *m;
	unsigned long idx;
	u64 n = 0;

	if (!sroce_odp_implicit(mr))
		return READ_ONCE(mr->odp->npages);
	xa_for_each(&mr->odp_children, idx, m)
		n += READ_ONCE(m->odp->npages);
	return n;
}
