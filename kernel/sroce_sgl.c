// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: copies between a WQE's scatter/gather list and packets, for the
 * engines, and the work items that fault on-demand-paging memory in for
 * them (the page tables themselves: sroce_odp.c). Above the QP layer: a
 * fault done kicks the QP that waits for it.
 */
#include <rdma/ib_umem_odp.h>

#include "sroce_qp.h"
#include "sroce_verbs.h"

/* Bytes faulted in at once, ahead of the access that missed. */
#define SROCE_ODP_FAULT_AHEAD	(4ULL << 20)
/* Fault work items queued per region at most; more waits for a retry. */
#define SROCE_ODP_MAX_FAULTS	64

static struct workqueue_struct *sroce_odp_wq;

struct sroce_odp_fault {
	struct work_struct work;
	struct sroce_mr *mr;		/* referenced */
	struct sroce_qp *qp;		/* referenced; kicked when done */
	u64 iova;			/* where the access missed */
	u64 len;			/* bytes that must come in */
	u64 ahead;			/* bytes tried first (>= len) */
	bool write;
};

static void sroce_odp_fault_work(struct work_struct *work)
{
	struct sroce_odp_fault *f = container_of(work, struct sroce_odp_fault,
						 work);

	sroce_odp_fault_in(f->mr, f->iova, f->len, f->ahead, f->write);
	atomic_dec(&f->mr->faults);
	sroce_mr_put(f->mr);
	if (f->qp) {
		sroce_qp_kick(f->qp);
		sroce_qp_put(f->qp);
	}
	kfree(f);
}

/*
 * Queue a fault of [iova, iova + len) of the ODP region @mr, and of up to
 * @ahead bytes from @iova if it can (the rest of the message or buffer),
 * for writing if @write; kick @qp (if any) when it is done. Any context;
 * the caller holds references to @mr and @qp. Nothing is queued when the
 * region has SROCE_ODP_MAX_FAULTS queued already or memory is short: the
 * caller's retry asks again.
 */
void sroce_odp_fault(struct sroce_mr *mr, u64 iova, u64 len, u64 ahead,
		     bool write, struct sroce_qp *qp)
{
	u64 left = mr->length - (iova - mr->iova);
	struct sroce_odp_fault *f;

	if (atomic_inc_return(&mr->faults) > SROCE_ODP_MAX_FAULTS)
		goto out;
	f = kzalloc(sizeof(*f), GFP_ATOMIC);
	if (!f)
		goto out;
	INIT_WORK(&f->work, sroce_odp_fault_work);
	f->iova = iova;
	f->len = min(max_t(u64, len, 1), left);
	f->ahead = max(f->len, min3(ahead, left, SROCE_ODP_FAULT_AHEAD));
	/* A writable region is faulted for writing, as mlx5 does. */
	f->write = write || mr->odp->umem.writable;
	refcount_inc(&mr->refs);
	f->mr = mr;
	if (qp && refcount_inc_not_zero(&qp->refs))
		f->qp = qp;
	queue_work(sroce_odp_wq, &f->work);
	return;
out:
	atomic_dec(&mr->faults);
}

/*
 * Copy @len bytes between a WQE's SGE list, starting @offset bytes into
 * it, and the packet buffer. Every key is looked up and checked against
 * the QP's PD, the SGE's own bounds and, for writes into local memory,
 * IB_ACCESS_LOCAL_WRITE. Returns -ENOSPC when the SGEs are too short
 * (LOC_LEN_ERR) and -EACCES/-EFAULT on a bad key (LOC_PROT_ERR). @offset
 * is 64-bit: up to 32 SGEs of up to 4 GiB each add up to more than a u32
 * holds. -EAGAIN: a page of ODP memory was not mapped; its fault, and
 * that of the rest of the SGE, is queued and kicks @qp when done.
 */
int sroce_sgl_copy(struct sroce_qp *qp, const struct sroce_sge *sge,
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
			if (err == -EAGAIN)
				sroce_odp_fault(mr, sge[i].addr + offset, n,
						sge[i].length - offset,
						dir == SROCE_TO_MR, qp);
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
	u32 i;

	if (!atomic_read(&qp->sdev->num_odp_mr))
		return 0;
	for (i = 0; i < num_sge; i++) {
		if (!qp->is_user && sge[i].lkey == qp->sdev->ibdev.local_dma_lkey)
			continue;
		mr = sroce_mr_get(qp->sdev, sge[i].lkey);
		if (!mr)
			continue;
		if (mr->kind == SROCE_MR_ODP &&
		    !sroce_mr_check(mr, qp->ibqp.pd, sge[i].addr,
				    sge[i].length, IB_ACCESS_LOCAL_WRITE) &&
		    sroce_mr_ready(mr, sge[i].addr, sge[i].length,
				   true) == -EAGAIN) {
			sroce_odp_fault(mr, sge[i].addr, sge[i].length,
					sge[i].length, true, qp);
			err = -EAGAIN;
		}
		sroce_mr_put(mr);
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
		} else if (!err) {
			sroce_odp_fault(mr, sg_list[i].addr, sg_list[i].length,
					sg_list[i].length, write, NULL);
		}
		sroce_mr_put(mr);
	}
	return err;
}

int sroce_odp_wq_init(void)
{
	sroce_odp_wq = alloc_workqueue("sroce_odp", WQ_UNBOUND, 0);
	return sroce_odp_wq ? 0 : -ENOMEM;
}

void sroce_odp_wq_exit(void)
{
	destroy_workqueue(sroce_odp_wq);
}
