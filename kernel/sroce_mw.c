// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: memory windows (IBA 10.6.7), type 1 and type 2B.
 *
 * A window shares the key table with memory regions: its slot holds the
 * window pointer tagged SROCE_KEY_TAG_MW (xa_tag_pointer), so an lkey
 * lookup never finds a window and an rkey lookup knows what it found.
 *
 * A window is FREE until a bind (the IB_WR_BIND_MW WQE that ibv_bind_mw()
 * or ibv_post_send() queues, executed in order by the requester) gives it
 * a key, a range inside a region that allows IB_ACCESS_MW_BIND, and remote
 * access rights. Type 1 windows may be bound again at any time; a type 2
 * window is bound to the binding QP and must be invalidated (LOCAL_INV or
 * a SEND with Invalidate) before it is bound again. While bound, a window
 * counts in its region's num_mw, and the region cannot be deregistered
 * (see SROCE_MR_MW_CLOSED for how a bind and a deregistration race).
 *
 * An rkey lookup that finds a window checks it (state, whole key, PD, for
 * type 2 the QP, range, rights) under mw->lock and returns its region
 * referenced. A type 2 window names its QP by the QP's serial number, not
 * its QP number: QP numbers are reused once the 24-bit space wraps, and a
 * window still bound to a destroyed QP must not open to the QP that gets
 * its number next (of any PD: IBA o10-37 asks for the PD and the QP to
 * match). Such a window can still be invalidated (by a QP of its PD) or
 * deallocated. rdma_rxe checks the PD too, and the QP by a pointer it
 * holds a reference on.
 */
#include "sroce_qp.h"
#include "sroce_verbs.h"
#include <sroce/sroce_keys.h>

static struct sroce_mw *sroce_mw_get_slot(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mw *mw = NULL;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&sdev->key_xa, sroce_key_index(key));
	if (entry && xa_pointer_tag(entry) == SROCE_KEY_TAG_MW) {
		mw = xa_untag_pointer(entry);
		if (!refcount_inc_not_zero(&mw->refs))
			mw = NULL;
	}
	rcu_read_unlock();
	return mw;
}

static void sroce_mw_put(struct sroce_mw *mw)
{
	if (refcount_dec_and_test(&mw->refs))
		complete(&mw->released);
}

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_mw) > SROCE_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&mw->lock);
	refcount_set(&mw->refs, 1);
	init_completion(&mw->released);
	mw->state = SROCE_MR_FREE;
	err = xa_alloc_cyclic_irq(&sdev->key_xa, &index,
				  xa_tag_pointer(mw, SROCE_KEY_TAG_MW),
				  XA_LIMIT(SROCE_KEY_INDEX_MIN, SROCE_KEY_INDEX_MAX),
				  &sdev->key_next, GFP_KERNEL);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_count;
	}
	mw->key = sroce_key_make(index);
	ibmw->rkey = mw->key;
	return 0;

err_count:
	atomic_dec(&sdev->num_mw);
	return err;
}

/* Drop the binding; called with mw->lock held. */
static void sroce_mw_unbind(struct sroce_mw *mw)
{
	if (mw->mr) {
		atomic_dec(&mw->mr->num_mw);
		mw->mr = NULL;
	}
	mw->state = SROCE_MR_FREE;
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	unsigned long flags;

	xa_erase_irq(&sdev->key_xa, sroce_key_index(mw->key));
	sroce_mw_put(mw);
	wait_for_completion(&mw->released);
	/* ib_core frees the window: no lookup may still hold the pointer. */
	synchronize_rcu();
	spin_lock_irqsave(&mw->lock, flags);
	sroce_mw_unbind(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	atomic_dec(&sdev->num_mw);
	return 0;
}

/* May a window grant @mw_access over a region with @mr_access (10.6.7.2)? */
static bool sroce_mw_access_ok(int mw_access, int mr_access)
{
	if (!(mr_access & IB_ACCESS_MW_BIND))
		return false;
	/* Local write means nothing for a window; rxe accepts it too. */
	if (mw_access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC))
		return false;
	/* Remote writes and atomics land in memory: it must be writable. */
	if ((mw_access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr_access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

/*
 * Execute IB_WR_BIND_MW from @qp: bind the window named by mw_rkey to
 * [addr, addr + length) of the region named by mr_lkey, with the new key
 * rkey (same slot). A type 1 bind of length 0 unbinds. Returns 0 or
 * -EINVAL (the WQE then completes with IB_WC_MW_BIND_ERR, as in rxe).
 *
 * The window is counted in the region first, then the region checked:
 * while it counts, no deregistration, rereg or invalidation can close the
 * count and change what was checked (sroce_mr_close_mw()); the bind fails
 * if one is under way.
 */
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w)
{
	const u32 new_key = w->wr.bind_mw.rkey;
	const u64 addr = w->wr.bind_mw.addr, len = w->wr.bind_mw.length;
	const int access = w->wr.bind_mw.access;
	struct sroce_mr *mr = NULL;
	bool counted = false;
	struct sroce_mw *mw;
	unsigned long flags;
	int err = -EINVAL;

	mw = sroce_mw_get_slot(qp->sdev, w->wr.bind_mw.mw_rkey);
	if (!mw)
		return -EINVAL;
	if (mw->ibmw.pd != qp->ibqp.pd ||
	    sroce_key_index(new_key) != sroce_key_index(mw->key))
		goto out;
	if (len || mw->ibmw.type == IB_MW_TYPE_2) {
		mr = sroce_mr_get(qp->sdev, w->wr.bind_mw.mr_lkey);
		if (!mr)
			goto out;
		counted = atomic_inc_unless_negative(&mr->num_mw);
		/* The state check (acquire) before the rights it publishes. */
		if (!counted || mr->ibmr.pd != qp->ibqp.pd ||
		    mr->kind == SROCE_MR_DMA ||
		    sroce_mr_check(mr, qp->ibqp.pd, addr, len, 0) ||
		    !sroce_mw_access_ok(access, READ_ONCE(mr->access)))
			goto out;
	}

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->state != SROCE_MR_FREE) {
		spin_unlock_irqrestore(&mw->lock, flags);
		goto out;
	}
	sroce_mw_unbind(mw);
	mw->key = new_key;
	if (mr) {
		counted = false;	/* the window holds the count now */
		mw->mr = mr;
		mw->addr = addr;
		mw->length = len;
		mw->access = access;
		mw->qp_serial = qp->serial;
		mw->state = SROCE_MR_VALID;
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	err = 0;
out:
	if (counted)
		atomic_dec(&mr->num_mw);
	if (mr)
		sroce_mr_put(mr);
	sroce_mw_put(mw);
	return err;
}

/*
 * Invalidate the type 2 window named by the whole @key (LOCAL_INV or a
 * SEND with Invalidate on @qp). -ENOENT when @key names no window.
 */
int sroce_mw_invalidate(struct sroce_qp *qp, u32 key)
{
	struct sroce_mw *mw = sroce_mw_get_slot(qp->sdev, key);
	unsigned long flags;
	int err = -EINVAL;

	if (!mw)
		return -ENOENT;
	spin_lock_irqsave(&mw->lock, flags);
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->key == key &&
	    mw->ibmw.pd == sroce_qp_pd(qp) && mw->state == SROCE_MR_VALID) {
		sroce_mw_unbind(mw);
		err = 0;
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_put(mw);
	return err;
}

/*
 * The region behind window key @rkey for a remote access by @qp of @len
 * bytes at @va needing @access: referenced, or NULL. -ENOENT in *@err
 * when @rkey names no window (the caller then tries regions).
 */
struct sroce_mr *sroce_mw_resolve(struct sroce_qp *qp, u32 rkey, u64 va,
				  u64 len, int access, int *err)
{
	struct sroce_mw *mw = sroce_mw_get_slot(qp->sdev, rkey);
	struct sroce_mr *mr = NULL;
	unsigned long flags;

	*err = -ENOENT;
	if (!mw)
		return NULL;
	*err = -EACCES;
	spin_lock_irqsave(&mw->lock, flags);
	if (mw->state == SROCE_MR_VALID && mw->key == rkey &&
	    (mw->access & access) == access &&
	    mw->ibmw.pd == sroce_qp_pd(qp) &&
	    (mw->ibmw.type == IB_MW_TYPE_1 || mw->qp_serial == qp->serial) &&
	    va >= mw->addr && len <= mw->length &&
	    va - mw->addr <= mw->length - len &&
	    refcount_inc_not_zero(&mw->mr->refs)) {
		mr = mw->mr;
		*err = 0;
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_put(mw);
	return mr;
}
