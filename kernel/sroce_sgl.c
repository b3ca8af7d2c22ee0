// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: copies between a WQE's scatter/gather list and packets, for the
 * engines, and the work items that fault on-demand-paging memory in for
 * them (the page tables themselves: sroce_odp.c). Above the QP layer: a
 * fault done kicks the QP that waits for it.
 */
#include <linux/delay.h>
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

/*
 * Who owns a QP side's job, and whom it kicks: the side's pointer to it,
 * the job's to the side, and its QP. A global lock: it is taken once per
 * fault (a fault brings in up to SROCE_ODP_FAULT_AHEAD bytes) and at QP
 * destroy, never on a hit.
 */
static DEFINE_SPINLOCK(sroce_odp_job_lock);

/*
 * Test knob, debugfs sroce/odp_stall (sroce_debugfs.c): while it is set,
 * every fault job waits before it faults, as one would on memory whose
 * backing never answers: a FUSE server that has read the request and does
 * not reply holds the faulting thread until it does, and no signal ends
 * that wait (odp_stall.sh).
 */
bool sroce_odp_stall;

static void sroce_odp_stall_wait(void)
{
	while (READ_ONCE(sroce_odp_stall))
		msleep(20);
}

/*
 * Why a job does not hold its QP, and what it holds instead.
 *
 * A fault touches the region owner's memory (hmm_range_fault()), which may
 * wait on I/O for as long as the memory's backing likes: a FUSE server
 * that reads the request and never replies keeps the job in the kernel,
 * uninterruptibly, until it does or its connection is aborted. rxe
 * faults in its QP's own task, and destroying the QP waits for that task;
 * so did sroce, whose job held a reference that destroy waited for, and
 * the region's, which deregistration waited for: the process's exit,
 * "rdma link delete", namespace exit and rmmod then hung with it.
 *
 * So a job holds only what it uses: the region's umems (odp_holds: the
 * last holder releases them and frees the region, which deregistration
 * has unpublished already), the device's memory (get_device(): the umem's
 * release reads it) and the module (its code runs until the job returns;
 * rmmod is refused while a job waits, not hung). The QP side that waits
 * owns the job and is kicked when it ends; destroying the QP detaches it
 * (sroce_odp_fault_detach()) and lets the job free itself. So teardown
 * never waits for a fault, and what a waiting fault keeps is one job, its
 * region's tables and its module reference (odp_stall.sh).
 */
static bool sroce_odp_hold(struct sroce_mr *mr)
{
	if (!try_module_get(THIS_MODULE))
		return false;	/* being unloaded: nothing to fault for */
	/* The caller holds a lookup reference: not deregistered yet. */
	refcount_inc(&mr->odp_holds);
	get_device(&mr->ibmr.device->dev);
	return true;
}

/*
 * The job's end: the region (maybe its last holder), the device, then the
 * module. module_put() last: the work item returns into the workqueue,
 * whose destruction at rmmod waits for it.
 */
static void sroce_odp_unhold(struct sroce_mr *mr)
{
	struct device *dev = &mr->ibmr.device->dev;

	sroce_mr_odp_put(mr);
	put_device(dev);
	module_put(THIS_MODULE);
}

static void sroce_odp_fault_work(struct work_struct *work)
{
	struct sroce_odp_job *job = container_of(work, struct sroce_odp_job,
						 work);
	struct sroce_mr *mr = job->mr;
	struct sroce_odp_fault *f;
	unsigned long flags;
	bool failed;
	int err;

	sroce_odp_stall_wait();
	err = sroce_odp_fault_in(mr, job->iova, job->len, job->ahead,
				 job->write);
	failed = err == -EFAULT || err == -EPERM || err == -EINVAL ||
		 err == -EDQUOT;

	spin_lock_irqsave(&sroce_odp_job_lock, flags);
	f = job->f;
	if (f) {
		if (failed) {
			f->bad[f->bad_next] = (struct sroce_odp_bad){
				.mr = mr, .key = mr->ibmr.lkey,
				.start = job->iova,
				.end = job->iova + job->len,
			};
			f->bad_next ^= 1;
		}
		/*
		 * Free for the side's next fault before the kick, so that what
		 * the kick runs can queue one (it refills the job: nothing of
		 * it is read after the unlock). Kicked under the lock: the QP
		 * is not destroyed before it detaches.
		 */
		job->f = NULL;
		clear_bit_unlock(SROCE_ODP_FAULT_PENDING, &f->pending);
		sroce_qp_kick(job->qp);
	}
	spin_unlock_irqrestore(&sroce_odp_job_lock, flags);
	if (!f) {
		/* Nobody's (an advice, or its QP is gone): ours to free. */
		if (!job->qp)
			atomic_dec(&mr->faults);
		kfree(job);
	}
	sroce_odp_unhold(mr);
}

static void sroce_odp_job_fill(struct sroce_odp_job *job,
			       struct sroce_mr *mr, u64 iova, u64 len,
			       u64 ahead, bool write)
{
	u64 left = mr->length - (iova - mr->iova);

	job->iova = iova;
	job->len = min(max_t(u64, len, 1), left);
	job->ahead = max(job->len, min3(ahead, left, SROCE_ODP_FAULT_AHEAD));
	/* A writable region is faulted for writing, as mlx5 does. */
	job->write = write || mr->odp->umem.writable;
	job->mr = mr;
}

/*
 * Fault [iova, iova + len) of the ODP region @mr in, and up to @ahead
 * bytes from @iova if it can (the rest of the message or buffer), for
 * writing if @write, from a work item; any context, the caller holds
 * references to @mr and @qp. Each side of a QP (@side, enum
 * sroce_odp_side) has one job of its own: while it is queued or running,
 * another fault is not queued, and the one in flight kicks the QP when
 * it is done, whose engines then try again (and ask for the next fault if
 * they still miss). So a QP always gets its kick, at most two faults per
 * QP are in flight, and none is allocated here.
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
	struct sroce_odp_job *job;
	unsigned long flags;
	bool queued = false;
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
	spin_lock_irqsave(&sroce_odp_job_lock, flags);
	job = f->job;
	/* A QP being destroyed has no job left: it waits for no kick. */
	if (job && sroce_odp_hold(mr)) {
		sroce_odp_job_fill(job, mr, iova, len, ahead, write);
		job->qp = qp;
		job->f = f;
		queue_work(sroce_odp_wq, &job->work);
		queued = true;
	}
	spin_unlock_irqrestore(&sroce_odp_job_lock, flags);
	if (!queued)
		clear_bit_unlock(SROCE_ODP_FAULT_PENDING, &f->pending);
	return -EAGAIN;
}

/* The QP's two jobs, at creation; 0 or -ENOMEM. */
int sroce_odp_fault_init(struct sroce_qp *qp)
{
	struct sroce_odp_job *job;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(qp->odp_fault); i++) {
		job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
		if (!job)
			goto err;
		INIT_WORK(&job->work, sroce_odp_fault_work);
		qp->odp_fault[i].job = job;
	}
	return 0;
err:
	while (i--) {
		kfree(qp->odp_fault[i].job);
		qp->odp_fault[i].job = NULL;
	}
	return -ENOMEM;
}

/*
 * At destroy, before the last stop of the QP's work item (after it, no
 * job kicks the QP): an idle job is freed, one in flight is left to free
 * itself. Either way the side has none: the engines, still running until
 * that stop, queue no more faults.
 */
void sroce_odp_fault_detach(struct sroce_qp *qp)
{
	struct sroce_odp_job *job;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&sroce_odp_job_lock, flags);
	for (i = 0; i < ARRAY_SIZE(qp->odp_fault); i++) {
		job = qp->odp_fault[i].job;
		qp->odp_fault[i].job = NULL;
		if (!job)
			continue;
		if (job->f)
			job->f = NULL;	/* in flight: it frees itself */
		else
			kfree(job);
	}
	spin_unlock_irqrestore(&sroce_odp_job_lock, flags);
}

/* An asynchronous ibv_advise_mr() prefetch; false if none was queued. */
static bool sroce_odp_advise_async(struct sroce_mr *mr, u64 iova, u64 len,
				   bool write)
{
	struct sroce_odp_job *job;

	if (atomic_inc_return(&mr->faults) > SROCE_ODP_MAX_ADVICE)
		goto out;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		goto out;
	if (!sroce_odp_hold(mr)) {
		kfree(job);
		goto out;
	}
	INIT_WORK(&job->work, sroce_odp_fault_work);
	sroce_odp_job_fill(job, mr, iova, len, len, write);
	job->ahead = job->len;	/* the advice's range, whole */
	queue_work(sroce_odp_wq, &job->work);
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
		mr = sroce_mr_get_odp(sdev, sg_list[i].lkey);
		if (!mr)
			return -EINVAL;
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
