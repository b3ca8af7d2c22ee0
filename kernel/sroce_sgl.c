// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: copies between a WQE's scatter/gather list and packets, for the
 * engines, and the work items that fault on-demand-paging memory in for
 * them (the page tables themselves: sroce_odp.c). Above the QP layer: a
 * fault done kicks the QP that waits for it.
 */
#include <rdma/ib_umem_odp.h>

#include "sroce_qp.h"
#include "sroce_srq.h"
#include "sroce_verbs.h"

/*
 * Bytes faulted in at once, ahead of the access that missed: a fault of
 * 1 MiB took some 100 ms in the rig's emulated guests, which the answers
 * waiting for it should not much exceed.
 */
#define SROCE_ODP_FAULT_AHEAD	BIT_ULL(20)
/* Advice work items queued per region at most; more are not queued. */
#define SROCE_ODP_MAX_ADVICE	64

static struct workqueue_struct *sroce_odp_wq;

static void sroce_odp_fault_work(struct work_struct *work)
{
	struct sroce_odp_fault *f = container_of(work, struct sroce_odp_fault,
						 work);
	struct sroce_mr *mr = f->mr;
	struct sroce_qp *qp = f->qp;
	int err;

	err = sroce_odp_fault_in(mr, f->iova, f->len, f->ahead, f->write);
	if (!qp) {
		/* An advice: its own allocation; the MR's count before its put. */
		atomic_dec(&mr->faults);
		sroce_mr_put(mr);
		kfree(f);
		return;
	}
	if (err == -EFAULT || err == -EPERM || err == -EINVAL ||
	    err == -EDQUOT) {
		f->bad[f->bad_next] = (struct sroce_odp_bad){
			.mr = mr, .key = mr->ibmr.lkey,
			.start = f->iova, .end = f->iova + f->len,
		};
		f->bad_next ^= 1;
	}
	sroce_mr_put(mr);
	/*
	 * The QP's own: free for the next fault before the kick, so that
	 * what the kick runs can queue one; f is the QP's, untouched once
	 * the reference is gone.
	 */
	clear_bit_unlock(SROCE_ODP_FAULT_PENDING, &f->pending);
	sroce_qp_kick(qp);
	sroce_qp_put(qp);
}

static void sroce_odp_fault_fill(struct sroce_odp_fault *f,
				 struct sroce_mr *mr, u64 iova, u64 len,
				 u64 ahead, bool write)
{
	u64 left = mr->length - (iova - mr->iova);

	f->iova = iova;
	f->len = min(max_t(u64, len, 1), left);
	f->ahead = max(f->len, min3(ahead, left, SROCE_ODP_FAULT_AHEAD));
	/* A writable region is faulted for writing, as mlx5 does. */
	f->write = write || mr->odp->umem.writable;
	refcount_inc(&mr->refs);
	f->mr = mr;
}

/*
 * Fault [iova, iova + len) of the ODP region @mr in, and up to @ahead
 * bytes from @iova if it can (the rest of the message or buffer), for
 * writing if @write, from a work item; any context, the caller holds
 * references to @mr and @qp. Each side of a QP (@side, enum
 * sroce_odp_side) has one fault of its own: while it is queued or
 * running, another is not queued, and the one in flight kicks the QP when
 * it is done, whose engines then try again (and ask for the next fault if
 * they still miss). So a QP always gets its kick, at most two faults per
 * QP are in flight, and none is allocated.
 *
 * Returns -EAGAIN (the access waits for the fault), or -EFAULT when one
 * of this side's last faults that failed for good covers where it asks:
 * the access that asked for it, tried again after the kick, fails then
 * instead of faulting forever. Only this side's own request is failed: another QP's
 * access there faults anew (what is mapped there now is mapped in). A
 * record is taken by the request that matches it; one its retry never
 * asks for (it found the page mapped by someone else) stays until a
 * newer failure takes its slot, and fails at most one later access of
 * this side to the same range of the same region.
 */
int sroce_odp_fault(struct sroce_mr *mr, u64 iova, u64 len, u64 ahead,
		    bool write, struct sroce_qp *qp, int side)
{
	struct sroce_odp_fault *f = &qp->odp_fault[side];
	u64 end = iova + max_t(u64, len, 1);
	u32 i;

	if (test_and_set_bit_lock(SROCE_ODP_FAULT_PENDING, &f->pending))
		return -EAGAIN;
	for (i = 0; i < ARRAY_SIZE(f->bad); i++) {
		struct sroce_odp_bad *b = &f->bad[i];

		if (b->mr == mr && b->key == mr->ibmr.lkey &&
		    iova < b->end && end > b->start) {
			b->mr = NULL;
			clear_bit_unlock(SROCE_ODP_FAULT_PENDING, &f->pending);
			return -EFAULT;
		}
	}
	/* A QP being destroyed waits for no kick. */
	if (!sroce_qp_tryget(qp->life)) {
		clear_bit_unlock(SROCE_ODP_FAULT_PENDING, &f->pending);
		return -EAGAIN;
	}
	sroce_odp_fault_fill(f, mr, iova, len, ahead, write);
	f->qp = qp;
	queue_work(sroce_odp_wq, &f->work);
	return -EAGAIN;
}

void sroce_odp_fault_init(struct sroce_qp *qp)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(qp->odp_fault); i++)
		INIT_WORK(&qp->odp_fault[i].work, sroce_odp_fault_work);
}

/* An asynchronous ibv_advise_mr() prefetch; false if none was queued. */
static bool sroce_odp_advise_async(struct sroce_mr *mr, u64 iova, u64 len,
				   bool write)
{
	struct sroce_odp_fault *f;

	if (atomic_inc_return(&mr->faults) > SROCE_ODP_MAX_ADVICE)
		goto out;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		goto out;
	INIT_WORK(&f->work, sroce_odp_fault_work);
	sroce_odp_fault_fill(f, mr, iova, len, len, write);
	f->ahead = f->len;	/* the advice's range, whole */
	queue_work(sroce_odp_wq, &f->work);
	return true;
out:
	atomic_dec(&mr->faults);
	return false;
}

/*
 * Is the WQE whose SGEs @side copies a kernel consumer's, whose SGEs may
 * name kernel addresses with local_dma_lkey? An XRC target is a kernel
 * object (ib_core creates it without user data) but its receive WQEs come
 * from the SRQs its requests name, which user space fills: only a kernel
 * SRQ's are.
 */
static bool sroce_sgl_kernel(const struct sroce_qp *qp, int side)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return side == SROCE_ODP_RESP && qp->xrc_srq &&
		       !qp->xrc_srq->is_user;
	return !qp->is_user;
}

/*
 * Copy @len bytes between a WQE's SGE list, starting @offset bytes into
 * it, and the packet buffer. Every key is looked up and checked against
 * the QP's PD, the SGE's own bounds and, for writes into local memory,
 * IB_ACCESS_LOCAL_WRITE. Returns -ENOSPC when the SGEs are too short
 * (LOC_LEN_ERR) and -EACCES/-EFAULT on a bad key (LOC_PROT_ERR). @offset
 * is 64-bit: up to 32 SGEs of up to 4 GiB each add up to more than a u32
 * holds. -EAGAIN: a page of ODP memory was not mapped; its fault, and
 * that of the rest of the SGE, is queued on @qp's @side (enum
 * sroce_odp_side) and kicks @qp when done.
 */
int sroce_sgl_copy(struct sroce_qp *qp, int side, const struct sroce_sge *sge,
		   u32 num_sge, u64 offset, struct sroce_pktbuf *pb, u32 len,
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
		n = min_t(u64, len, sge[i].length - offset);
		if (sroce_sgl_kernel(qp, side) &&
		    sge[i].lkey == qp->sdev->ibdev.local_dma_lkey) {
			/* Kernel consumers: the address is a kernel address. */
			sroce_pktbuf_copy(pb, (void *)(uintptr_t)(sge[i].addr +
								  offset),
					  n, dir);
		} else {
			mr = sroce_mr_get(qp->sdev, sge[i].lkey);
			if (!mr)
				return -EACCES;
			err = sroce_mr_check(mr, sroce_qp_pd(qp), sge[i].addr,
					     sge[i].length, access);
			if (!err)
				err = sroce_mr_copy(mr, sge[i].addr + offset,
						    pb, n, dir);
			if (err == -EAGAIN)
				err = sroce_odp_fault(mr, sge[i].addr + offset,
						      n, sge[i].length - offset,
						      dir == SROCE_TO_MR, qp,
						      side);
			sroce_mr_put(mr);
			if (err)
				return err;
		}
		len -= n;
		offset = 0;
	}
	return len ? -ENOSPC : 0;
}

/*
 * Before a READ or an atomic starts: are the local buffers its answer
 * lands in mapped, where they are ODP memory? -EAGAIN (faults queued,
 * @qp kicked when they are done) or 0 (also for a bad key: the answer's
 * placement reports that).
 */
int sroce_sgl_ready(struct sroce_qp *qp, const struct sroce_sge *sge,
		    u32 num_sge)
{
	struct sroce_mr *mr;
	int err = 0;
	u64 win;
	u32 i;

	if (!atomic_read(&qp->sdev->num_odp_mr))
		return 0;
	for (i = 0; i < num_sge; i++) {
		if (sroce_sgl_kernel(qp, SROCE_ODP_REQ) &&
		    sge[i].lkey == qp->sdev->ibdev.local_dma_lkey)
			continue;
		mr = sroce_mr_get(qp->sdev, sge[i].lkey);
		if (!mr)
			continue;
		/*
		 * The first SROCE_ODP_FAULT_AHEAD bytes only: the rest of a
		 * long READ is faulted as its answers miss (the completer
		 * drops one, and the fault's kick asks for it again).
		 */
		win = min_t(u64, sge[i].length, SROCE_ODP_FAULT_AHEAD);
		if (mr->kind == SROCE_MR_ODP &&
		    !sroce_mr_check(mr, sroce_qp_pd(qp), sge[i].addr,
				    sge[i].length, IB_ACCESS_LOCAL_WRITE) &&
		    sroce_mr_ready(mr, sge[i].addr, win, true) == -EAGAIN)
			err = sroce_odp_fault(mr, sge[i].addr, win, win, true,
					      qp, SROCE_ODP_REQ);
		sroce_mr_put(mr);
		/*
		 * A fault that failed for good: the READ goes at once, and
		 * its answer's placement reports the error (waiting for the
		 * other SGEs' faults would take that record's turn).
		 */
		if (err == -EFAULT)
			return 0;
	}
	return err;
}

/*
 * ibv_advise_mr() (IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH*): fault the SGEs'
 * ranges in now (IB_UVERBS_ADVISE_MR_FLAG_FLUSH) or from a work item.
 * PREFETCH maps for reading, PREFETCH_WRITE for writing, PREFETCH_NO_FAULT
 * maps only what is present (always at once). Every SGE must name an ODP region of @pd
 * (EINVAL otherwise, as mlx5) within its bounds (EFAULT).
 */
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct sroce_mr *mr;
	int err = 0;
	u32 i;

	if (advice > IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge && !err; i++) {
		mr = sroce_mr_get(sdev, sg_list[i].lkey);
		if (!mr)
			return -EINVAL;
		if (mr->kind != SROCE_MR_ODP)
			err = -EINVAL;
		else
			err = sroce_mr_check(mr, pd, sg_list[i].addr,
					     sg_list[i].length,
					     write ? IB_ACCESS_LOCAL_WRITE : 0);
		if (!err && !sg_list[i].length) {
			/* nothing to map */
		} else if (!err && ((flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH) ||
				    !fault)) {
			/* NO_FAULT costs no more than the call: done now. */
			err = sroce_odp_prefetch(mr, sg_list[i].addr,
						 sg_list[i].length, write, fault);
		} else if (!err &&
			   !sroce_odp_advise_async(mr, sg_list[i].addr,
						   sg_list[i].length, write)) {
			/* Too many queued: this one now. */
			err = sroce_odp_prefetch(mr, sg_list[i].addr,
						 sg_list[i].length, write, true);
		}
		sroce_mr_put(mr);
	}
	return err;
}

int sroce_odp_wq_init(void)
{
	/* High priority: engines wait for it (a user spinning on a CQ too). */
	sroce_odp_wq = alloc_workqueue("sroce_odp", WQ_UNBOUND | WQ_HIGHPRI, 0);
	return sroce_odp_wq ? 0 : -ENOMEM;
}

void sroce_odp_wq_exit(void)
{
	destroy_workqueue(sroce_odp_wq);
}
