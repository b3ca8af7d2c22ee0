// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: completion queues.
 *
 * The kernel is the only producer of a CQ ring. Completion events follow
 * the arm protocol of include/uapi/rdma/sroce-abi.h: user space arms a CQ
 * by a store into the mapped uflags word (no system call, as siw does);
 * kernel consumers arm through req_notify_cq.
 */
#include <linux/delay.h>
#include <net/busy_poll.h>

#include "sroce_cq.h"
#include "sroce_verbs.h"
#include "sroce_trace.h"

/*
 * Busy polling. A user CQ is polled from its mapped ring, so a thread
 * spinning on an empty CQ waits for the receive interrupt and softirq to
 * fill it. With busy polling the provider, after a run of empty polls,
 * enters the kernel (IB_USER_VERBS_CMD_POLL_CQ), which polls the netdev's
 * receive queue from that thread until a CQE lands in this CQ, the time
 * below passes or a signal comes: SO_BUSY_POLL for a CQ, for NICs whose
 * interrupt moderation delays a packet. rxe has nothing like it. Off by
 * default: on the test rig's virtio NIC it changed no latency
 * (Documentation/architecture.rst has the numbers).
 */
static unsigned int sroce_busy_poll_us;
module_param_named(busy_poll, sroce_busy_poll_us, uint, 0644);
MODULE_PARM_DESC(busy_poll,
		 "Microseconds a user spinning on an empty CQ may poll the netdev per system call, for CQs created while it is set (default 0: never)");

static bool sroce_busy_poll_on(void)
{
	return IS_ENABLED(CONFIG_NET_RX_BUSY_POLL) && READ_ONCE(sroce_busy_poll_us);
}

static bool sroce_cq_user_arm_fires(struct sroce_cq *cq, bool solicited)
{
	struct sroce_ring_hdr *hdr = cq->q.hdr;
	u32 arm;

	/* Pairs with the full barrier user space issues after arming. */
	smp_mb();
	arm = READ_ONCE(hdr->uflags);
	if (arm != SROCE_CQ_ARM_NEXT &&
	    !(arm == SROCE_CQ_ARM_SOLICITED && solicited))
		return false;
	/* One event per arm, even if user space rewrites the word. */
	return cmpxchg(&hdr->uflags, arm, SROCE_CQ_ARM_NONE) == arm;
}

static bool sroce_cq_kernel_arm_fires(struct sroce_cq *cq, bool solicited)
{
	u8 arm = cq->knotify;

	if (arm != SROCE_CQ_ARM_NEXT &&
	    !(arm == SROCE_CQ_ARM_SOLICITED && solicited))
		return false;
	cq->knotify = SROCE_CQ_ARM_NONE;
	return true;
}

static void sroce_cq_overflow(struct sroce_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Append one CQE; any context. @solicited: the completion satisfies a
 * solicited-only arm (a solicited receive, or any error). Returns
 * -EOVERFLOW when the ring is full (the CQ is then in error, IBA 11.4.2.1)
 * or when user space wrote a consumer index that makes no sense.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited)
{
	struct sroce_ring_hdr *hdr;
	unsigned long flags;
	bool fire = false, overflow = false;
	u32 prod, cons;

	solicited |= cqe->status != IB_WC_SUCCESS;
	trace_sroce_cqe(cq->ibcq.res.id, cqe->qp_num, cqe->wr_id, cqe->status,
			cqe->opcode, cqe->byte_len);

	spin_lock_irqsave(&cq->lock, flags);
	hdr = cq->q.hdr;
	if (cq->overflowed) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return -EOVERFLOW;
	}
	prod = cq->q.idx;
	cons = sroce_ring_load_cons(hdr);
	if (!sroce_ring_cons_valid(prod, cons, cq->q.num_entries) ||
	    sroce_ring_full(prod, cons, cq->q.num_entries)) {
		cq->overflowed = true;
		sroce_ring_kflags_set(hdr, SROCE_CQ_F_OVERFLOW);
		overflow = true;
	} else {
		struct sroce_cqe *slot = sroce_queue_entry(&cq->q, prod);

		memcpy(slot, cqe, sizeof(*cqe));
		/* Completion time, the clock of hca_core_clock (1 GHz: ns). */
		slot->timestamp = ktime_get_raw_ns();
		cq->q.idx = prod + 1;
		sroce_ring_store_prod(hdr, prod + 1);
		fire = cq->is_user ? sroce_cq_user_arm_fires(cq, solicited) :
				     sroce_cq_kernel_arm_fires(cq, solicited);
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow) {
		sroce_cq_overflow(cq);
		return -EOVERFLOW;
	}
	if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

static u32 sroce_cq_entries(int cqe)
{
	if (cqe < 1 || cqe > SROCE_MAX_CQE)
		return 0;
	return sroce_ring_entries_for(cqe, SROCE_MAX_CQE + 1);
}

static int sroce_cq_copy_resp(struct sroce_cq *cq, struct ib_udata *udata)
{
	struct sroce_create_cq_resp resp = {};

	if (!udata || !udata->outlen)
		return 0;
	sroce_queue_info(&cq->q, &resp.cq);
	return ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_ARG *arg)
{
	struct ib_udata *udata = sroce_create_cq_udata(arg);
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	u32 n;
	int err;

	/* Every CQE carries its completion time (sroce_cq_post()). */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	n = sroce_cq_entries(attr->cqe);
	if (!n)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_cq) > SROCE_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	spin_lock_init(&cq->poll_lock);
	mutex_init(&cq->ring_mutex);
	cq->is_user = !!udata;
	err = sroce_queue_init(sdev, &cq->q, udata, n, SROCE_CQE_SIZE);
	if (err)
		goto err_count;
	if (!cq->is_user)
		cq->q.hdr->kflags = 0;
	else if (sroce_busy_poll_on())
		sroce_ring_kflags_set(cq->q.hdr, SROCE_CQ_F_BUSY_POLL);
	/* The ring holds n; never report more than the device maximum. */
	ibcq->cqe = min_t(u32, n, SROCE_MAX_CQE);

	err = sroce_cq_copy_resp(cq, udata);
	if (err)
		goto err_queue;
	return 0;

err_queue:
	sroce_queue_cleanup(&cq->q);
err_count:
	mutex_destroy(&cq->ring_mutex);
	atomic_dec(&sdev->num_cq);
	return err;
}

int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	sroce_queue_cleanup(&cq->q);
	mutex_destroy(&cq->ring_mutex);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}

/*
 * Move the unconsumed CQEs to a new ring of @cqe entries. User space holds
 * its CQ lock across this call and remaps; the new ring starts at index 0.
 * The copy runs with both locks held (interrupts off): at most 2^17 CQEs,
 * 8 MiB, which took 6 ms in a TCG guest and 27 ms with KASAN there, so
 * unlike an SRQ resize (2^20 WQEs of up to 448 bytes) it is not split up.
 * uverbs runs POLL_CQ beside a resize (both take the CQ read-locked):
 * ring_mutex keeps the old ring until a poll that holds it is done.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue nq, oq;
	unsigned long flags, pflags;
	u32 n, prod, cons, used, i;
	int err;

	n = sroce_cq_entries(cqe);
	if (!n)
		return -EINVAL;
	err = sroce_queue_init(sdev, &nq, udata, n, SROCE_CQE_SIZE);
	if (err)
		return err;

	mutex_lock(&cq->ring_mutex);
	spin_lock_irqsave(&cq->poll_lock, pflags);
	spin_lock_irqsave(&cq->lock, flags);
	prod = cq->q.idx;
	cons = READ_ONCE(cq->q.hdr->cons);
	used = sroce_ring_used(prod, cons);
	if (!sroce_ring_cons_valid(prod, cons, cq->q.num_entries) || used > n) {
		spin_unlock_irqrestore(&cq->lock, flags);
		spin_unlock_irqrestore(&cq->poll_lock, pflags);
		mutex_unlock(&cq->ring_mutex);
		sroce_queue_cleanup(&nq);
		return -EINVAL;
	}
	for (i = 0; i < used; i++)
		memcpy(sroce_queue_entry(&nq, i),
		       sroce_queue_entry(&cq->q, cons + i), SROCE_CQE_SIZE);
	nq.idx = used;
	nq.hdr->prod = used;
	nq.hdr->cons = 0;
	nq.hdr->kflags = cq->q.hdr->kflags;
	nq.hdr->uflags = READ_ONCE(cq->q.hdr->uflags);
	oq = cq->q;
	cq->q = nq;
	ibcq->cqe = min_t(u32, n, SROCE_MAX_CQE);
	spin_unlock_irqrestore(&cq->lock, flags);
	spin_unlock_irqrestore(&cq->poll_lock, pflags);
	sroce_queue_cleanup(&oq);
	mutex_unlock(&cq->ring_mutex);

	/* The old ring is gone either way; user space must map the new one. */
	return sroce_cq_copy_resp(cq, udata);
}

static int sroce_wc_flags(const struct sroce_cqe *cqe)
{
	int flags = 0;

	if (cqe->flags & SROCE_CQE_F_WITH_IMM)
		flags |= IB_WC_WITH_IMM;
	if (cqe->flags & SROCE_CQE_F_WITH_INV)
		flags |= IB_WC_WITH_INVALIDATE;
	if (cqe->flags & SROCE_CQE_F_GRH)
		flags |= IB_WC_GRH;
	if (cqe->network_type) {
		flags |= IB_WC_WITH_NETWORK_HDR_TYPE | IB_WC_WITH_SMAC;
		if (cqe->vlan_id)
			flags |= IB_WC_WITH_VLAN;
	}
	return flags;
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp = (struct ib_qp *)(uintptr_t)cqe->kernel_qp;
	if (cqe->flags & SROCE_CQE_F_WITH_INV)
		wc->ex.invalidate_rkey = cqe->ex.invalidated_rkey;
	else
		wc->ex.imm_data = cqe->ex.imm_data;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = sroce_wc_flags(cqe);
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
	wc->port_num = 1;
	memcpy(wc->smac, cqe->smac, ETH_ALEN);
	wc->vlan_id = cqe->vlan_id;
	wc->network_hdr_type = cqe->network_type == SROCE_NETWORK_IPV6 ?
			       RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
}

#ifdef CONFIG_NET_RX_BUSY_POLL
/*
 * Called with preemption off: only reads. The indices come from the
 * mapped page, which user space can scribble on; they only end the loop.
 */
static bool sroce_cq_busy_poll_end(void *arg, unsigned long start)
{
	struct sroce_cq *cq = arg;
	struct sroce_ring_hdr *hdr = cq->q.hdr;

	return READ_ONCE(hdr->prod) != READ_ONCE(hdr->cons) ||
	       signal_pending(current) ||
	       time_after(busy_loop_current_time(),
			  start + READ_ONCE(sroce_busy_poll_us));
}

static void sroce_cq_busy_poll(struct sroce_cq *cq)
{
	struct sroce_dev *sdev = to_sdev(cq->ibcq.device);
	unsigned int napi_id = READ_ONCE(sdev->napi_id);
	struct sroce_ring_hdr *hdr = cq->q.hdr;

	sroce_dev_count(sdev, SROCE_CNT_BUSY_POLLS, 1);
	if (!napi_id)
		return;	/* nothing received yet */
	napi_busy_loop(napi_id, sroce_cq_busy_poll_end, cq, false,
		       BUSY_POLL_BUDGET);
	if (READ_ONCE(hdr->prod) != READ_ONCE(hdr->cons))
		sroce_dev_count(sdev, SROCE_CNT_BUSY_POLL_HITS, 1);
}
#else
static void sroce_cq_busy_poll(struct sroce_cq *cq)
{
}
#endif

/*
 * The fault knob poll_delay_ms: POLL_CQ (process context) waits between
 * loading the ring's header and using it, so that a resize can run in
 * that window (cq_resize_race.sh). Each wait counts as a fault injected,
 * as it begins.
 */
static void sroce_cq_poll_delay(struct sroce_dev *sdev)
{
	u32 ms = READ_ONCE(sdev->fault.poll_delay_ms);

	if (unlikely(ms)) {
		sroce_dev_count(sdev, SROCE_CNT_FAULTS, 1);
		msleep(min(ms, 5000U));
	}
}

/*
 * User CQs are polled from the mapped ring; POLL_CQ on one is the busy
 * poll, which returns no completion (the CQEs stay in the ring).
 */
static int sroce_poll_user_cq(struct sroce_cq *cq)
{
	struct sroce_ring_hdr *hdr;

	mutex_lock(&cq->ring_mutex);
	hdr = cq->q.hdr;
	sroce_cq_poll_delay(to_sdev(cq->ibcq.device));
	if (!sroce_busy_poll_on())
		sroce_ring_kflags_clear(hdr, SROCE_CQ_F_BUSY_POLL);
	else
		sroce_cq_busy_poll(cq);
	mutex_unlock(&cq->ring_mutex);
	return 0;
}

int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ring_hdr *hdr;
	unsigned long flags;
	u32 prod, cons;
	int n = 0;

	if (cq->is_user)
		return sroce_poll_user_cq(cq);
	spin_lock_irqsave(&cq->poll_lock, flags);
	hdr = cq->q.hdr;
	cons = hdr->cons;
	prod = sroce_ring_load_prod(hdr);
	while (n < num_entries && cons != prod) {
		sroce_cqe_to_wc(sroce_queue_entry(&cq->q, cons), &wc[n]);
		n++;
		cons++;
	}
	sroce_ring_store_cons(hdr, cons);
	spin_unlock_irqrestore(&cq->poll_lock, flags);
	return n;
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ring_hdr *hdr;
	unsigned long irqflags;
	u8 arm = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		 SROCE_CQ_ARM_SOLICITED : SROCE_CQ_ARM_NEXT;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	hdr = cq->q.hdr;
	if (cq->is_user) {
		/* The uverbs path; the provider normally arms by a store. */
		if (READ_ONCE(hdr->uflags) != SROCE_CQ_ARM_NEXT)
			WRITE_ONCE(hdr->uflags, arm);
	} else {
		if (cq->knotify != SROCE_CQ_ARM_NEXT)
			cq->knotify = arm;
		if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
		    READ_ONCE(hdr->cons) != cq->q.idx)
			ret = 1;
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
