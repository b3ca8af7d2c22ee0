// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: shared receive queues (IBA 10.2.9 and 11.2.3).
 *
 * An SRQ is one receive ring, mapped by user space like a QP's RQ, that
 * the responders of every attached QP consume. A responder takes the WQE at
 * the ring's consumer index under srq->lock, copies and validates it into
 * its own struct sroce_rwqe and frees the slot at once: from then on the
 * WQE belongs to that QP, which completes it (or flushes it) on its own
 * receive CQ. A QP's private RQ instead keeps its slot until completion.
 *
 * The SRQ limit (IBA 11.2.3.3): once armed by modify_srq(IB_SRQ_LIMIT), the
 * first take that leaves fewer WQEs in the ring than the limit raises
 * IB_EVENT_SRQ_LIMIT_REACHED and disarms it.
 *
 * Resize (IB_SRQ_MAX_WR) allocates a new ring, copies the posted WQEs into
 * it at the same free-running indices, mostly without the locks
 * (sroce_srq_resize()), and swaps rings under srq->lock. User space learns
 * the new ring through sroce_modify_srq_cmd.resp_addr (uverbs has no
 * response buffer for MODIFY_SRQ); the provider holds its own SRQ lock
 * across the call so no WQE is posted to the old ring meanwhile.
 */
#include "sroce_srq.h"
#include "sroce_verbs.h"

static void sroce_srq_event(struct sroce_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

static int sroce_srq_check_attr(const struct ib_srq_attr *attr, bool resize)
{
	if (attr->max_wr > SROCE_MAX_SRQ_WR)
		return -EINVAL;
	if (!resize && attr->max_sge > SROCE_MAX_SRQ_SGE)
		return -EINVAL;
	return 0;
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_create_srq_resp resp = {};
	u32 n, stride;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	err = sroce_srq_check_attr(&init->attr, false);
	if (err)
		return err;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (atomic_inc_return(&sdev->num_srq) > SROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	srq->sdev = sdev;
	srq->is_user = !!udata;
	refcount_set(&srq->refs, 1);
	init_completion(&srq->released);
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->post_lock);
	mutex_init(&srq->resize_lock);
	/* srq_limit of the create attributes is not armed (IBA 11.2.3.1). */
	srq->limit = 0;
	n = sroce_ring_entries_for(init->attr.max_wr, SROCE_MAX_SRQ_WR);
	stride = sroce_recv_wqe_stride(max_t(u32, init->attr.max_sge, 1));
	err = sroce_queue_init(sdev, &srq->rq, udata, n, stride);
	if (err)
		goto err_count;
	srq->max_sge = min_t(u32, sroce_recv_wqe_sge_room(stride),
			     SROCE_MAX_SRQ_SGE);
	/* The number now, the SRQ for XRC lookups once it is complete. */
	err = xa_alloc_cyclic_irq(&sdev->srq_xa, &srq->srq_num, NULL,
				  XA_LIMIT(1, SROCE_MAX_SRQ), &sdev->srq_next,
				  GFP_KERNEL);
	if (err < 0)
		goto err_queue;
	/* The XRC SRQ number requesters name in the XRCETH. */
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srq_num;

	if (udata) {
		sroce_queue_info(&srq->rq, &resp.rq);
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_xa;
	}
	init->attr.max_wr = n;
	init->attr.max_sge = srq->max_sge;
	/*
	 * An XRC SRQ goes into a table of its own, which XRC targets search
	 * under RCU by the number a packet names: no basic SRQ, which ib_core
	 * frees as soon as it is destroyed, can be found there.
	 */
	if (init->srq_type == IB_SRQT_XRC) {
		err = xa_err(xa_store_irq(&sdev->xrc_srq_xa, srq->srq_num, srq,
					  GFP_KERNEL));
		if (err)
			goto err_xa;
	}
	xa_store_irq(&sdev->srq_xa, srq->srq_num, srq, GFP_KERNEL);
	sroce_dbg(sdev, "srq %u created, %u entries\n", srq->srq_num, n);
	return 0;

err_xa:
	xa_erase_irq(&sdev->srq_xa, srq->srq_num);
err_queue:
	sroce_queue_cleanup(&srq->rq);
err_count:
	atomic_dec(&sdev->num_srq);
	return err;
}

/*
 * A resize copies the posted WQEs (2^20 of up to 448 bytes) into the new
 * ring in rounds: with the locks held it reads the posted range [cons,
 * prod); while more than SROCE_SRQ_COPY_LOCKED of them are still to copy,
 * it drops the locks, copies them in process context and tries again, so
 * that only a producer's WQEs posted meanwhile are left for the next round.
 * Reading WQEs without the locks is safe: responders only read them, and a
 * producer writes only slots outside the posted range; a slot that was
 * taken and refilled meanwhile is copied again in a later round (its new
 * index is past the old prod). With 2^19 WQEs copied with interrupts off,
 * a TCG guest's CPU was held for 150 ms.
 */
#define SROCE_SRQ_COPY_LOCKED	64
#define SROCE_SRQ_COPY_BATCH	256
/*
 * Rounds before a resize gives up with -EBUSY: each copies what was posted
 * during the one before, so only a producer that keeps posting as fast as
 * the copy runs (not the provider: it holds its SRQ lock across the
 * resize) gets that far.
 */
#define SROCE_SRQ_RESIZE_ROUNDS	8

struct sroce_srq_copy {
	struct sroce_queue *to;
	bool begun;
	u32 next;	/* the first WQE not copied yet */
};

/* Copy the WQEs [c->next, @end) of @srq's ring, at the same indices. */
static void sroce_srq_copy(struct sroce_srq *srq, struct sroce_srq_copy *c,
			   u32 end, bool may_sleep)
{
	u32 i;

	for (i = c->next; i != end; i++) {
		memcpy(sroce_queue_entry(c->to, i),
		       sroce_queue_entry(&srq->rq, i), c->to->stride);
		if (may_sleep && !((i - c->next + 1) % SROCE_SRQ_COPY_BATCH))
			cond_resched();
	}
	c->next = end;
}

/*
 * With srq->lock and post_lock held: swap in the new ring if the rest of
 * the posted WQEs, up to the producer index left in *@prod, can be copied
 * now. 1 done, 0 not yet, or -EINVAL (user space broke the index, or
 * @num_entries cannot hold what is posted).
 */
static int sroce_srq_swap(struct sroce_srq *srq, struct sroce_srq_copy *c,
			  u32 num_entries, u32 *prod)
{
	struct sroce_queue *fresh = c->to, old;
	u32 cons = srq->rq.idx;

	*prod = sroce_ring_load_prod(srq->rq.hdr);
	if (!sroce_ring_prod_valid(*prod, cons, srq->rq.num_entries) ||
	    *prod - cons > num_entries)
		return -EINVAL;
	/* Taken since the last round: not needed; prod moved back: again. */
	if (!c->begun || c->next - cons > *prod - cons)
		c->next = cons;
	c->begun = true;
	if (*prod - c->next > SROCE_SRQ_COPY_LOCKED)
		return 0;
	sroce_srq_copy(srq, c, *prod, false);
	fresh->idx = cons;
	fresh->hdr->cons = cons;
	sroce_ring_store_prod(fresh->hdr, *prod);
	old = srq->rq;
	srq->rq = *fresh;
	*fresh = old;
	return 1;
}

/*
 * Replace the ring with one of @num_entries, keeping the posted WQEs and
 * their indices. For a user SRQ the new ring's location is copied to
 * @resp_addr before the swap, so a failed copy leaves the SRQ unchanged.
 * Process context.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 num_entries,
			    struct ib_udata *udata, u64 resp_addr)
{
	struct sroce_create_srq_resp resp = {};
	struct sroce_queue fresh;
	struct sroce_srq_copy c = { .to = &fresh };
	unsigned long flags;
	int err, round;
	u32 prod;

	err = sroce_queue_init(srq->sdev, &fresh, udata, num_entries,
			       srq->rq.stride);
	if (err)
		return err;
	if (udata) {
		sroce_queue_info(&fresh, &resp.rq);
		resp.srq_num = srq->srq_num;
		if (copy_to_user(u64_to_user_ptr(resp_addr), &resp,
				 sizeof(resp))) {
			sroce_queue_cleanup(&fresh);
			return -EFAULT;
		}
	}

	/* srq->rq changes only here, under resize_lock (sroce_modify_srq()). */
	for (round = 0; ; round++) {
		spin_lock_irqsave(&srq->post_lock, flags);
		spin_lock(&srq->lock);
		err = sroce_srq_swap(srq, &c, num_entries, &prod);
		spin_unlock(&srq->lock);
		spin_unlock_irqrestore(&srq->post_lock, flags);
		if (err || round == SROCE_SRQ_RESIZE_ROUNDS)
			break;
		sroce_srq_copy(srq, &c, prod, true);
	}
	/* The ring not in use: the old one, or the new one on failure. */
	sroce_queue_cleanup(&fresh);
	return err < 0 ? err : err ? 0 : -EBUSY;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_modify_srq_cmd cmd = {};
	u32 n;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EOPNOTSUPP;
	if (udata && udata->inlen) {
		err = ib_copy_from_udata(&cmd, udata,
					 min(udata->inlen, sizeof(cmd)));
		if (err)
			return err;
	}
	err = sroce_srq_check_attr(attr, true);
	if (err && (mask & IB_SRQ_MAX_WR))
		return err;

	if ((mask & IB_SRQ_MAX_WR) && udata && !cmd.resp_addr)
		return -EINVAL;
	/*
	 * uverbs does not serialise modifies of one SRQ: the ring's size is
	 * read and changed under resize_lock.
	 */
	mutex_lock(&srq->resize_lock);
	err = 0;
	if (mask & IB_SRQ_MAX_WR) {
		n = sroce_ring_entries_for(attr->max_wr, SROCE_MAX_SRQ_WR);
		if (!n) {
			err = -EINVAL;
		} else if (n != srq->rq.num_entries) {
			err = sroce_srq_resize(srq, n, udata, cmd.resp_addr);
		} else if (udata) {
			struct sroce_create_srq_resp keep = {};

			/* rq.size 0: the ring was kept. */
			if (copy_to_user(u64_to_user_ptr(cmd.resp_addr), &keep,
					 sizeof(keep)))
				err = -EFAULT;
		}
	}
	if (!err && (mask & IB_SRQ_LIMIT)) {
		if (attr->srq_limit > srq->rq.num_entries) {
			err = -EINVAL;
		} else {
			spin_lock_bh(&srq->lock);
			srq->limit = attr->srq_limit;
			spin_unlock_bh(&srq->lock);
		}
	}
	mutex_unlock(&srq->resize_lock);
	return err;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	spin_lock_bh(&srq->lock);
	attr->max_wr = srq->rq.num_entries;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	return 0;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_dev *sdev = srq->sdev;

	/*
	 * ib_core refuses while QPs are attached; XRC targets take it only
	 * by number: once unpublished, wait for those that have it, and for
	 * the RCU readers that may have found it (ib_core frees it).
	 */
	if (ibsrq->srq_type == IB_SRQT_XRC)
		xa_erase_irq(&sdev->xrc_srq_xa, srq->srq_num);
	xa_erase_irq(&sdev->srq_xa, srq->srq_num);
	sroce_srq_put(srq);
	wait_for_completion(&srq->released);
	if (ibsrq->srq_type == IB_SRQT_XRC)
		synchronize_rcu();
	sroce_queue_cleanup(&srq->rq);
	mutex_destroy(&srq->resize_lock);
	atomic_dec(&sdev->num_srq);
	sroce_dbg(sdev, "srq %u destroyed\n", srq->srq_num);
	return 0;
}

int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err;

	/* User SRQs are posted to through the mapped ring only. */
	if (srq->is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->post_lock, flags);
	err = sroce_rq_post_kernel(&srq->rq, srq->max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&srq->post_lock, flags);
	return err;
}

/*
 * The XRC SRQ numbered @srq_num if it belongs to @xrcd (IBA A14: an XRC
 * target receives only into the SRQs of its domain), referenced; NULL
 * otherwise. Any context.
 */
struct sroce_srq *sroce_xrc_srq_get(struct sroce_dev *sdev, u32 srq_num,
				    struct ib_xrcd *xrcd)
{
	struct sroce_srq *srq;

	/*
	 * RCU, not the table's lock: the device's xarrays share one lock
	 * class, which process context takes with softirqs on. Only XRC
	 * SRQs are in this table (sroce_create_srq()).
	 */
	rcu_read_lock();
	srq = xa_load(&sdev->xrc_srq_xa, srq_num);
	if (srq && (srq->ibsrq.ext.xrc.xrcd != xrcd ||
		    !refcount_inc_not_zero(&srq->refs)))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}

void sroce_srq_put(struct sroce_srq *srq)
{
	if (refcount_dec_and_test(&srq->refs))
		complete(&srq->released);
}

/*
 * Take the next receive WQE of @srq for a responder: 0, -EAGAIN (none
 * posted) or -EIO (user space broke the ring). Softirq or process context.
 */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *r)
{
	bool limit_hit = false;
	u32 prod;
	int err;

	spin_lock(&srq->lock);
	err = sroce_rq_fetch(&srq->rq, srq->max_sge, r, &prod);
	if (!err) {
		srq->rq.idx++;
		sroce_ring_store_cons(srq->rq.hdr, srq->rq.idx);
		if (srq->limit && prod - srq->rq.idx < srq->limit) {
			srq->limit = 0;
			limit_hit = true;
		}
	}
	spin_unlock(&srq->lock);
	if (limit_hit)
		sroce_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	/* A broken ring (IBA 11.6.3.1: SRQ catastrophic error), once. */
	if (err == -EIO && !srq->error) {
		srq->error = true;
		sroce_srq_event(srq, IB_EVENT_SRQ_ERR);
	}
	return err;
}
