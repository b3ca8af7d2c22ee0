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
 * process is gone) is remembered (bad_start, bad_end): the next access
 * that misses there fails with -EFAULT (LOC_PROT_ERR, or a remote access
 * error NAK), instead of faulting forever. It is cleared by that access,
 * so memory mapped there again later is faulted in anew.
 */
#include <linux/mmu_notifier.h>
#include <rdma/ib_umem_odp.h>

#include "sroce_mem.h"

static u64 sroce_odp_uaddr(const struct sroce_mr *mr, u64 iova)
{
	return mr->odp->umem.address + (iova - mr->iova);
}

static u64 sroce_odp_access(const struct sroce_mr *mr, bool write)
{
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
}

/*
 * The kernel address of user address @ua, under odp_lock, or NULL if its
 * page is not mapped (for writing, if @write). *@room: bytes from there to
 * the end of the page.
 */
static void *sroce_odp_va(struct sroce_mr *mr, u64 ua, bool write, u32 *room)
{
	struct ib_umem_odp *odp = mr->odp;
	u64 need = sroce_odp_access(mr, write);
	u64 psz = BIT_ULL(odp->page_shift), off;
	dma_addr_t d;

	lockdep_assert_held(&mr->odp_lock);
	if (ua >= mr->inval_start && ua < mr->inval_end)
		return NULL;
	d = READ_ONCE(odp->dma_list[(ua - ib_umem_start(odp)) >>
				    odp->page_shift]);
	if ((d & need) != need)
		return NULL;
	off = ua & (psz - 1);
	*room = min_t(u64, psz - off, U32_MAX);
	return (void *)(uintptr_t)((d & ODP_DMA_ADDR_MASK) + off);
}

/*
 * A miss at @ua, under odp_lock: -EFAULT if the last failed fault covered
 * it (forgotten then, if @consume), else -EAGAIN.
 */
static int sroce_odp_miss(struct sroce_mr *mr, u64 ua, bool consume)
{
	if (ua < mr->bad_start || ua >= mr->bad_end)
		return -EAGAIN;
	if (consume) {
		mr->bad_start = 0;
		mr->bad_end = 0;
	}
	return -EFAULT;
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
			err = sroce_odp_miss(mr, ua, true);
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
		err = sroce_odp_miss(mr, ua, true);
	else if (ua & 7)
		err = -EFAULT;
	else
		sroce_word_apply(va, op);
	spin_unlock_irqrestore(&mr->odp_lock, flags);
	return err;
}

/*
 * Is [iova, iova + len) of @mr mapped (writable, if @write)? 0, -EAGAIN,
 * or -EFAULT where the last fault failed (not forgotten: the access that
 * follows reports it).
 */
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
			err = sroce_odp_miss(mr, ua, false);
		spin_unlock_irqrestore(&mr->odp_lock, flags);
	}
	return err;
}

/*
 * Map [ua, ua + len), faulting if @fault; 0 or a negative errno. A
 * success over the range of the last failed fault forgets it: what
 * failed there is mapped now.
 */
static int sroce_odp_map(struct sroce_mr *mr, u64 ua, u64 len, u64 access,
			 bool fault)
{
	unsigned long flags;
	int np;

	np = ib_umem_odp_map_dma_and_lock(mr->odp, ua, len, access, fault);
	if (np < 0)
		return np;
	mutex_unlock(&mr->odp->umem_mutex);
	if (fault) {
		spin_lock_irqsave(&mr->odp_lock, flags);
		if (ua < mr->bad_end && ua + len > mr->bad_start) {
			mr->bad_start = 0;
			mr->bad_end = 0;
		}
		spin_unlock_irqrestore(&mr->odp_lock, flags);
	}
	return 0;
}

/*
 * Fault in [iova, iova + len) of @mr, and @ahead bytes from @iova if it
 * can (the rest of a message or buffer); process context. If @record, a
 * failure for good (nothing mapped there, no write access, the process
 * gone) is remembered for the access that missed (sroce_odp_miss()); one
 * that may pass (-EBUSY from a busy mm, -ENOMEM) is not: the access
 * faults again.
 */
int sroce_odp_fault_in(struct sroce_mr *mr, u64 iova, u64 len, u64 ahead,
		       bool write, bool record)
{
	u64 ua = sroce_odp_uaddr(mr, iova);
	u64 access = sroce_odp_access(mr, write);
	unsigned long flags;
	int err;

	err = sroce_odp_map(mr, ua, ahead, access, true);
	if (err && ahead > len)
		err = sroce_odp_map(mr, ua, len, access, true);
	if (record && (err == -EFAULT || err == -EPERM || err == -EINVAL)) {
		spin_lock_irqsave(&mr->odp_lock, flags);
		mr->bad_start = ua;
		mr->bad_end = ua + len;
		spin_unlock_irqrestore(&mr->odp_lock, flags);
	}
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
	unsigned long flags;
	struct sroce_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = ALIGN_DOWN(max_t(u64, range->start, ib_umem_start(odp)), psz);
	end = ALIGN(min_t(u64, range->end, ib_umem_end(odp)), psz);
	mr = odp->private;
	if (mr) {
		spin_lock_irqsave(&mr->odp_lock, flags);
		mr->inval_start = start;
		mr->inval_end = end;
		spin_unlock_irqrestore(&mr->odp_lock, flags);
	}
	ib_umem_odp_unmap_dma_pages(odp, start, end);
	if (mr) {
		spin_lock_irqsave(&mr->odp_lock, flags);
		mr->inval_start = 0;
		mr->inval_end = 0;
		spin_unlock_irqrestore(&mr->odp_lock, flags);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = sroce_odp_invalidate,
};

/*
 * Set @mr up as an ODP region of [start, start + length). Implicit ODP
 * (the whole address space) is not offered (IB_ODP_SUPPORT_IMPLICIT is
 * not advertised).
 */
int sroce_odp_init(struct sroce_mr *mr, struct ib_device *ibdev, u64 start,
		   u64 length, int access)
{
	struct ib_umem_odp *odp;

	if (!start && length == U64_MAX)
		return -EINVAL;
	spin_lock_init(&mr->odp_lock);
	odp = ib_umem_odp_get(ibdev, start, length, access, &sroce_odp_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
	mr->odp = odp;
	mr->umem = &odp->umem;
	mr->kind = SROCE_MR_ODP;
	atomic_inc(&to_sdev(ibdev)->num_odp_mr);
	return 0;
}

