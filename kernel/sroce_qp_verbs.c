// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: queue pairs: creation with their rings, the IBA state machine
 * (IBA 10.3.1; transitions and attribute masks are checked with the core's
 * ib_modify_qp_is_ok(), the same table every driver uses), and flushing.
 *
 * Send and receive queues of user QPs are rings the provider maps; kernel
 * QPs use the same rings in kernel memory, filled by sroce_post_send() and
 * sroce_post_recv() below. Nothing read from a user-mapped ring is trusted:
 * indices are checked against the kernel's private copies, and WQEs are
 * copied before use.
 */
#include <linux/if_vlan.h>
#include <rdma/ib_cache.h>

#include "sroce_engine.h"
#include "sroce_net.h"
#include "sroce_ack.h"
#include "sroce_retry.h"
#include "sroce_sq.h"
#include "sroce_cq.h"
#include "sroce_srq.h"
#include "sroce_verbs.h"
#include "sroce_trace.h"
#include <sroce/sroce_wire.h>

/* ------------------------------------------------------------------------
 * Creation
 */

static int sroce_qp_check_init(struct sroce_dev *sdev,
			       const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	case IB_QPT_XRC_INI:
		/* Sends only: no receive queue, no SRQ (IBA A14). */
		if (init->srq)
			return -EINVAL;
		break;
	case IB_QPT_XRC_TGT:
		/* Receives only, into the SRQs of its domain. */
		if (!init->xrcd)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SROCE_MAX_QP_WR ||
			   cap->max_recv_sge > SROCE_MAX_SGE))
		return -EINVAL;
	if (init->srq && init->qp_type == IB_QPT_GSI)
		return -EINVAL;
	return 0;
}

static int sroce_qp_alloc_qpn(struct sroce_dev *sdev, struct sroce_qp *qp,
			      enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		/* One GSI QP (QP1) per port; reserve it now, publish later. */
		err = xa_insert_irq(&sdev->qp_xa, SROCE_QPN_GSI, NULL,
				    GFP_KERNEL);
		if (err)
			return err == -EBUSY ? -EEXIST : err;
		qp->ibqp.qp_num = SROCE_QPN_GSI;
		return 0;
	}
	err = xa_alloc_cyclic_irq(&sdev->qp_xa, &qpn, NULL,
				  XA_LIMIT(SROCE_QPN_MIN, SROCE_QPN_MAX),
				  &sdev->qpn_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

static int sroce_qp_init_queues(struct sroce_dev *sdev, struct sroce_qp *qp,
				struct ib_qp_init_attr *init,
				struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 n, stride;
	int err;

	/*
	 * An XRC target sends only answers: its send queue is the smallest
	 * kernel ring, never posted to, so that the engines find one.
	 */
	if (init->qp_type == IB_QPT_XRC_TGT)
		memset(cap, 0, sizeof(*cap));
	n = sroce_ring_entries_for(cap->max_send_wr, SROCE_MAX_QP_WR);
	stride = sroce_send_wqe_stride(max_t(u32, cap->max_send_sge, 1),
				       cap->max_inline_data);
	err = sroce_queue_init(sdev, &qp->sq, udata, n, stride);
	if (err)
		return err;
	sroce_ring_kflags_set(qp->sq.hdr, SROCE_SQ_NEED_WAKEUP);
	qp->max_send_sge = min_t(u32, sroce_send_wqe_sge_room(stride),
				 SROCE_MAX_SGE);
	qp->max_inline = min_t(u32, sroce_send_wqe_inline_room(stride),
			       SROCE_MAX_INLINE);
	cap->max_send_wr = n;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_inline_data = qp->max_inline;

	if (init->srq || init->qp_type == IB_QPT_XRC_INI ||
	    init->qp_type == IB_QPT_XRC_TGT) {
		/*
		 * Receives come from the SRQ (sroce_srq.c), or from the SRQ
		 * each XRC request names; an XRC initiator has none: no RQ.
		 */
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	n = sroce_ring_entries_for(cap->max_recv_wr, SROCE_MAX_QP_WR);
	stride = sroce_recv_wqe_stride(max_t(u32, cap->max_recv_sge, 1));
	err = sroce_queue_init(sdev, &qp->rq, udata, n, stride);
	if (err) {
		sroce_queue_cleanup(&qp->sq);
		return err;
	}
	qp->max_recv_sge = min_t(u32, sroce_recv_wqe_sge_room(stride),
				 SROCE_MAX_SGE);
	cap->max_recv_wr = n;
	cap->max_recv_sge = qp->max_recv_sge;
	return 0;
}

static int sroce_qp_udata_in(struct ib_udata *udata)
{
	struct sroce_create_qp_cmd cmd = {};
	int err;

	if (!udata || !udata->inlen)
		return 0;
	err = ib_copy_from_udata(&cmd, udata, min(udata->inlen, sizeof(cmd)));
	if (err)
		return err;
	if (cmd.flags || cmd.reserved)
		return -EOPNOTSUPP;
	if (udata->inlen > sizeof(cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(cmd),
				 udata->inlen - sizeof(cmd)))
		return -EOPNOTSUPP;
	return 0;
}

/* ------------------------------------------------------------------------
 * The engines' work item and data-path state
 */

/*
 * The QP's work item: in the error state it flushes both queues (IBA
 * 10.3.1.2.6: every outstanding and newly posted WR completes with
 * WR_FLUSH_ERR) and sends the responder's last answers; otherwise it runs
 * the send engine and continues READ responses.
 */
static void sroce_qp_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, work);

	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		sroce_sq_flush(qp);
		sroce_rwqe_flush(qp);
		sroce_resp_run(qp);	/* sends what is queued (a NAK) */
		return;
	}
	sroce_req_run(qp);
	sroce_resp_run(qp);
}

/* Complete every posted WR of a QP in the Error state. */
static void sroce_qp_flush(struct sroce_qp *qp)
{
	sroce_sq_flush(qp);
	sroce_rwqe_flush(qp);
}

static int sroce_qp_data_init(struct sroce_qp *qp)
{
	int err;

	qp->shadow.slot_size = ALIGN(offsetof(struct sroce_swqe, w) +
				     qp->sq.stride, 8);
	/*
	 * Up to max_qp_wr WQEs of 32 SGEs: charged to the creator's memory
	 * cgroup like the mapped rings (sroce_queue.c), so that an
	 * unprivileged user's QPs count against its own limit; past that
	 * limit the creation fails with -ENOMEM rather than calling the
	 * cgroup's OOM killer (__GFP_RETRY_MAYFAIL).
	 */
	qp->shadow.slots = kvcalloc(qp->sq.num_entries, qp->shadow.slot_size,
				    GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
				    __GFP_NOWARN);
	if (!qp->shadow.slots)
		return -ENOMEM;
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err) {
		kvfree(qp->shadow.slots);
		return err;
	}
	err = sroce_odp_fault_init(qp);
	if (err) {
		dst_cache_destroy(&qp->dst_cache);
		kvfree(qp->shadow.slots);
		return err;
	}
	INIT_WORK(&qp->work, sroce_qp_work);
	spin_lock_init(&qp->resp_lock);
	__skb_queue_head_init(&qp->resp.txq);
	sroce_retry_init(qp);
	sroce_ack_timer_init(qp);
	return 0;
}

/*
 * Send a held ACK (sroce_ack_release()), then stop timers and the
 * work item, once the data path sees Error or Reset.
 * A work item that read the state just before it changed may arm a timer
 * after the first stop, and that timer may queue the work again after the
 * first cancel: the second round catches both. In Error or Reset nothing
 * arms a timer (sroce_retry_live()), so no callback runs after the second stop,
 * and the second cancel ends whatever the last one queued. Work queued
 * later (a packet's answers still to send) finds nothing to build.
 */
static void sroce_qp_quiesce(struct sroce_qp *qp)
{
	sroce_ack_release(qp);
	sroce_retry_timers_stop(qp);
	sroce_ack_timer_stop(qp);
	cancel_work_sync(&qp->work);
	sroce_retry_timers_stop(qp);
	sroce_ack_timer_stop(qp);
	cancel_work_sync(&qp->work);
}

/* The QP is unpublished and in Error: stop, then free the data-path state. */
static void sroce_qp_data_cleanup(struct sroce_qp *qp)
{
	/* Before the stop: no fault's kick comes after it. Not waited for. */
	sroce_odp_fault_detach(qp);
	sroce_qp_quiesce(qp);
	dst_cache_destroy(&qp->dst_cache);
	sroce_resp_cleanup(qp);
	kvfree(qp->shadow.slots);
}

/*
 * Transition to Reset (IBA 10.3.1.1): queued WRs are discarded without
 * completions and the transport state starts afresh. Reset is visible
 * first, so that no packet or work item builds anything in the old state
 * once the engines have been stopped; then the state is cleared, with the
 * answers built and not yet sent (sroce_resp_reset()).
 */
static void sroce_qp_data_reset(struct sroce_qp *qp)
{
	u32 prod;

	sroce_qp_set_state(qp, IB_QPS_RESET);
	sroce_qp_quiesce(qp);
	spin_lock_bh(&qp->sq_lock);
	prod = sroce_ring_load_prod(qp->sq.hdr);
	if (!sroce_ring_prod_valid(prod, qp->sq.idx, qp->sq.num_entries))
		prod = qp->sq.idx;
	qp->sq.idx = prod;
	sroce_ring_store_cons(qp->sq.hdr, prod);
	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.idx = prod;
	qp->req.fetch_end = prod;
	qp->req.started_end = prod;
	qp->comp.rnr_wait = false;
	qp->comp.probe = false;
	qp->comp.implied_nak = false;
	qp->comp.rewound = false;
	qp->comp.odp_resend = false;
	qp->comp.stale_answers = false;
	qp->comp.tlp_sent = 0;
	qp->comp.rtt_timing = false;
	qp->comp.rtt_hold = false;
	qp->comp.srtt = 0;
	spin_unlock_bh(&qp->sq_lock);
	sroce_resp_reset(qp);
	dst_cache_reset(&qp->dst_cache);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_create_qp_resp resp = {};
	int err;

	/* Kernel SGEs are copied into WQEs as they are. */
	BUILD_BUG_ON(sizeof(struct ib_sge) != sizeof(struct sroce_sge));
	BUILD_BUG_ON(offsetof(struct ib_sge, lkey) !=
		     offsetof(struct sroce_sge, lkey));

	err = sroce_qp_check_init(sdev, init);
	if (err)
		return err;
	err = sroce_qp_udata_in(udata);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->num_qp) > SROCE_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->sdev = sdev;
	qp->is_user = !!udata;
	qp->serial = atomic64_inc_return(&sdev->qp_serial);
	qp->life = kzalloc(sizeof(*qp->life), GFP_KERNEL);
	if (!qp->life) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&qp->life->refs, 1);
	init_completion(&qp->life->released);
	qp->life->qp = qp;
	mutex_init(&qp->modify_lock);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->sq_post_lock);
	qp->state = IB_QPS_RESET;
	sroce_qp_set_conn_mtu(qp, IB_MTU_1024);
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;

	err = sroce_qp_alloc_qpn(sdev, qp, init->qp_type);
	if (err)
		goto err_life;
	err = sroce_qp_init_queues(sdev, qp, init, udata);
	if (err)
		goto err_qpn;
	err = sroce_qp_data_init(qp);
	if (err)
		goto err_queues;

	if (udata) {
		sroce_queue_info(&qp->sq, &resp.sq);
		sroce_queue_info(&qp->rq, &resp.rq);
		resp.max_inline = qp->max_inline;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_data;
	}

	/* Visible to the data path only now that it is complete. */
	xa_store_irq(&sdev->qp_xa, ibqp->qp_num, qp->life, GFP_KERNEL);
	sroce_dbg(sdev, "qp %u type %d created\n", ibqp->qp_num, init->qp_type);
	return 0;

err_data:
	sroce_qp_data_cleanup(qp);
err_queues:
	sroce_queue_cleanup(&qp->rq);
	sroce_queue_cleanup(&qp->sq);
err_qpn:
	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
err_life:
	kfree(qp->life);
err_count:
	atomic_dec(&sdev->num_qp);
	return err;
}

/* ------------------------------------------------------------------------
 * Modify / query
 */

static int sroce_qp_check_attr(struct sroce_qp *qp, const struct ib_qp_attr *a,
			       int mask)
{
	if ((mask & IB_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (a->path_mtu < IB_MTU_256 || a->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > SROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > SROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && a->dest_qp_num > SROCE_QPN_MAX)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_READ |
				    IB_ACCESS_REMOTE_ATOMIC |
				    SROCE_ACCESS_FLUSH_GLOBAL |
				    SROCE_ACCESS_FLUSH_PERSISTENT |
				    IB_ACCESS_LOCAL_WRITE |
				    /*
				     * A region's flag, meaningless for a QP;
				     * rdma-core's ODP tests pass a region's
				     * flags to the QP, and mlx5 and rxe take
				     * them.
				     */
				    IB_ACCESS_ON_DEMAND)))
		return -EINVAL;
	return 0;
}

static int sroce_qp_set_path(struct sroce_qp *qp, const struct rdma_ah_attr *ah)
{
	const struct ib_gid_attr *sgid_attr;
	struct sroce_path *path = &qp->path;
	u16 vlan_id = 0xffff;
	int err;

	err = sroce_av_from_ah_attr(qp->sdev, &path->av, ah);
	if (err)
		return err;
	sgid_attr = rdma_ah_read_grh(ah)->sgid_attr;
	memcpy(path->sgid, sgid_attr->gid.raw, sizeof(path->sgid));
	err = rdma_read_gid_l2_fields(sgid_attr, &vlan_id, path->smac);
	if (err)
		return err;
	path->vlan_id = vlan_id < VLAN_N_VID ? vlan_id : 0;
	err = sroce_gid_attr_oif(sgid_attr);
	if (err < 0)
		return err;
	path->oif = err;
	return 0;
}

static void sroce_qp_apply_attr(struct sroce_qp *qp, const struct ib_qp_attr *a,
				int mask)
{
	if (mask & IB_QP_QKEY)
		qp->qkey = a->qkey;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = a->pkey_index;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access_flags = a->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		sroce_qp_set_conn_mtu(qp, a->path_mtu);
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = a->rq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = a->sq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = a->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = a->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = a->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->sq_draining = a->en_sqd_async_notify;
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		qp->path.udp_sport =
			sroce_udp_sport(qp->path.av.flow_label,
					qp->ibqp.qp_num, qp->dest_qpn);
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->modify_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != qp->state && !(cur == IB_QPS_SQE && qp->state == IB_QPS_RTS)) {
		err = -EINVAL;
		goto out;
	}
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	if (mask & IB_QP_AV) {
		err = sroce_qp_set_path(qp, &attr->ah_attr);
		if (err)
			goto out;
	}
	/* Alternate paths (APM) are accepted and not used (as in rxe). */
	sroce_qp_apply_attr(qp, attr, mask);

	if (next == IB_QPS_RESET && qp->state != IB_QPS_RESET)
		sroce_qp_data_reset(qp);
	if (next == IB_QPS_RTR && cur == IB_QPS_INIT) {
		err = sroce_resp_init(qp);
		if (err)
			goto out;
	}
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		dst_cache_reset(&qp->dst_cache);
	if (next == IB_QPS_RTS && cur == IB_QPS_RTR) {
		spin_lock_bh(&qp->sq_lock);
		qp->req.psn = qp->sq_psn;
		qp->req.psn_max = qp->sq_psn;
		qp->comp.psn = qp->sq_psn;
		qp->comp.retry_left = qp->retry_cnt;
		qp->comp.rnr_retry_left = qp->rnr_retry;
		spin_unlock_bh(&qp->sq_lock);
	}

	sroce_qp_set_state(qp, next);
	if (cur != next)
		sroce_dbg(qp->sdev, "qp %u %s -> %s\n", ibqp->qp_num,
			  sroce_qp_state_str(cur), sroce_qp_state_str(next));
	if (next == IB_QPS_ERR)
		sroce_qp_flush(qp);
	if (next == IB_QPS_SQD && cur != IB_QPS_SQD && qp->sq_draining)
		/* In-flight WQEs are not waited for: reported drained now. */
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
	if (next == IB_QPS_RTS && cur != IB_QPS_RTS)
		sroce_qp_kick(qp);
out:
	mutex_unlock(&qp->modify_lock);
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->modify_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access_flags;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = 1;
	attr->sq_draining = 0;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->cap.max_send_wr = qp->sq.num_entries;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->rq.hdr ? qp->rq.num_entries : 0;
	attr->cap.max_recv_sge = qp->rq.hdr ? qp->max_recv_sge : 0;
	if (sroce_qp_connected(qp)) {
		struct rdma_ah_attr *ah = &attr->ah_attr;
		const struct sroce_av *av = &qp->path.av;

		ah->type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(ah, 1);
		rdma_ah_set_grh(ah, NULL, av->flow_label, av->sgid_index,
				av->hop_limit, av->traffic_class);
		rdma_ah_set_dgid_raw(ah, (void *)av->dgid);
		memcpy(ah->roce.dmac, av->dmac, ETH_ALEN);
	}
	mutex_unlock(&qp->modify_lock);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	unsigned long flags;

	/* A reader of debugfs's qps holds a reference: waited for below. */
	spin_lock_irqsave(&qp->state_lock, flags);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	/* Unpublish, then wait for every data-path user to let go. */
	sroce_mcast_qp_gone(qp);
	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
	sroce_qp_put(qp);
	wait_for_completion(&qp->life->released);
	/* A lookup that found it before the erase may still read its count. */
	kfree_rcu(qp->life, rcu);
	sroce_qp_data_cleanup(qp);

	sroce_queue_cleanup(&qp->rq);
	sroce_queue_cleanup(&qp->sq);
	mutex_destroy(&qp->modify_lock);
	atomic_dec(&sdev->num_qp);
	sroce_dbg(sdev, "qp %u destroyed\n", ibqp->qp_num);
	return 0;
}

/* ------------------------------------------------------------------------
 * Posting from kernel consumers, and the user doorbell
 */

static int sroce_kernel_wqe_fill(struct sroce_qp *qp, struct sroce_send_wqe *w,
				 const struct ib_send_wr *wr)
{
	u32 i, len = 0;
	u8 *dst;

	memset(w, 0, SROCE_SEND_WQE_HDR_SIZE);
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->send_flags & SROCE_WQE_FLAGS_ALL;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->ex.imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR: {
		const struct ib_reg_wr *reg = reg_wr(wr);

		/* Executed by sroce_mr_fast_reg() in order with the queue. */
		w->wr.bind_mw.mr_lkey = reg->mr->lkey;
		w->wr.bind_mw.rkey = reg->key;
		w->wr.bind_mw.access = reg->access;
		w->wr.bind_mw.addr = reg->mr->iova;
		w->wr.bind_mw.length = reg->mr->length;
		return 0;
	}
	case IB_WR_LOCAL_INV:
		return 0;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		break;
	default:
		return -EINVAL;
	}
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		w->wr.ud.remote_qpn = ud->remote_qpn;
		w->wr.ud.remote_qkey = ud->remote_qkey;
		w->wr.ud.ah_num = to_sah(ud->ah)->ah_num;
		w->av = to_sah(ud->ah)->av;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		dst = w->data;
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->max_inline - len)
				return -EINVAL;
			memcpy(dst + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->inline_len = len;
		return 0;
	}
	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	w->num_sge = wr->num_sge;
	memcpy(w->data, wr->sg_list, wr->num_sge * sizeof(struct sroce_sge));
	return 0;
}

static int sroce_post_send_kernel(struct sroce_qp *qp,
				  const struct ib_send_wr *wr,
				  const struct ib_send_wr **bad_wr)
{
	struct sroce_queue *q = &qp->sq;
	enum ib_qp_state state = sroce_qp_state(qp);
	unsigned long flags;
	u32 prod;
	int err = 0;

	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq_post_lock, flags);
	for (prod = q->hdr->prod; wr; wr = wr->next) {
		if (sroce_queue_full(q, prod)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_kernel_wqe_fill(qp, sroce_queue_entry(q, prod), wr);
		if (err)
			break;
		prod++;
	}
	sroce_ring_store_prod(q->hdr, prod);
	spin_unlock_irqrestore(&qp->sq_post_lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * Kernel consumers post WRs here; for user QPs this is the doorbell (an
 * empty POST_SEND from the provider, wr == NULL, process context), which
 * runs the send engine in the caller's context. Kernel consumers may post
 * from any context, so their WQEs are sent from the work item.
 */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err;

	/*
	 * An XRC target sends only answers: nothing may be posted to it (its
	 * send queue is a placeholder, with no CQ), through uverbs either.
	 */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		if (!wr)
			return 0;
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!qp->is_user) {
		err = sroce_post_send_kernel(qp, wr, bad_wr);
		sroce_qp_kick(qp);
		return err;
	}
	if (wr)
		return -EINVAL;
	trace_sroce_doorbell(qp->ibqp.qp_num, READ_ONCE(qp->sq.hdr->prod));
	if (sroce_qp_state(qp) == IB_QPS_ERR)
		sroce_sq_flush(qp);
	else
		sroce_req_run(qp);
	return 0;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err;

	/* An XRC target receives into SRQs only. */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		if (!wr)
			return 0;
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->is_user) {
		/* A doorbell, only needed in the error state (flush). */
		if (wr)
			return -EINVAL;
		if (sroce_qp_state(qp) == IB_QPS_ERR)
			sroce_rwqe_flush(qp);
		return 0;
	}
	if (sroce_qp_state(qp) == IB_QPS_RESET || !qp->rq.hdr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	err = sroce_rq_post_kernel(&qp->rq, qp->max_recv_sge, wr, bad_wr);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (sroce_qp_state(qp) == IB_QPS_ERR)
		sroce_qp_kick(qp);
	return err;
}
