// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: a queue pair's life as the data path sees it, below the engines:
 * lookup by QP number with a reference (sroce_qp_get/put), the work item's
 * scheduling (sroce_qp_kick), the state the engines read (qp->state under
 * state_lock) and the ways out of it from any context: the error state, a
 * fatal data-path error, a broken ring, affiliated asynchronous events.
 *
 * Nothing here calls an engine: the work item the kick schedules is
 * sroce_qp_work() (sroce_qp_verbs.c), which runs them. So the requester,
 * completer and responder stand above this file and only ever call down.
 */
#include <linux/delay.h>

#include "sroce_qp.h"
#include "sroce_trace.h"

struct workqueue_struct *sroce_wq;

/*
 * The fault knob lookup_delay_ms: wait between finding the QP and taking
 * its reference, only where the wait can be preempted (process context
 * under preemptible RCU: the debugfs listing on the debug kernel), so
 * that a destroy can run inside the window; never in softirq. Each wait
 * counts as a fault injected, as it begins (qp_lookup_race.sh waits for
 * that count).
 */
static void sroce_qp_lookup_delay(struct sroce_dev *sdev)
{
	u32 ms = READ_ONCE(sdev->fault.lookup_delay_ms);

	if (unlikely(ms) && preemptible()) {
		sroce_dev_count(sdev, SROCE_CNT_FAULTS, 1);
		mdelay(min(ms, 5000U));
	}
}

/*
 * The QP numbered @qpn with a reference, or NULL. The reference count is
 * in struct sroce_qp_life, which outlives the QP by a grace period: a
 * lookup racing a destroy reads a count of zero there, never the freed QP.
 */
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp_life *life;
	struct sroce_qp *qp = NULL;

	rcu_read_lock();
	life = xa_load(&sdev->qp_xa, qpn);
	sroce_qp_lookup_delay(sdev);
	if (life && sroce_qp_tryget(life))
		qp = life->qp;
	rcu_read_unlock();
	return qp;
}

void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->life->refs))
		complete(&qp->life->released);
}

void sroce_qp_kick(struct sroce_qp *qp)
{
	queue_work(sroce_wq, &qp->work);
}

/*
 * Tell user space whether WQEs it posts must be pushed into the kernel to
 * be flushed (SROCE_RING_F_FLUSH). Called under state_lock, but the send
 * engine updates the same word under sq_lock, and the responder the RQ's
 * under resp_lock: atomic updates only (sroce_ring_kflags()).
 */
static void sroce_qp_set_flush_flag(struct sroce_qp *qp, bool on)
{
	struct sroce_queue *qs[] = { &qp->sq, &qp->rq };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(qs); i++) {
		if (!qs[i]->hdr)
			continue;
		if (on)
			sroce_ring_kflags_set(qs[i]->hdr, SROCE_RING_F_FLUSH);
		else
			sroce_ring_kflags_clear(qs[i]->hdr, SROCE_RING_F_FLUSH);
	}
	/*
	 * The flag is visible before we read prod to flush (and so before
	 * any WQE user space posts after this): pairs with the provider's
	 * full barrier between publishing prod and reading kflags.
	 */
	smp_mb__after_atomic();
}

/*
 * Move a QP to the Error state from the data path (any context). Returns
 * true if this call made the transition.
 */
bool sroce_qp_to_error(struct sroce_qp *qp)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&qp->state_lock, flags);
	changed = qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET;
	if (changed) {
		WRITE_ONCE(qp->state, IB_QPS_ERR);
		sroce_qp_set_flush_flag(qp, true);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return changed;
}

/* A data-path error that ends the QP: error state, then flush (work). */
void sroce_qp_fatal(struct sroce_qp *qp)
{
	if (sroce_qp_to_error(qp))
		sroce_qp_kick(qp);
}

/*
 * User space broke a ring of @qp (an impossible index): no completion can
 * report that, so besides the error state the consumer gets the affiliated
 * asynchronous event IB_EVENT_QP_FATAL (IBA 11.6.3.1).
 */
void sroce_qp_ring_error(struct sroce_qp *qp)
{
	if (sroce_qp_to_error(qp)) {
		sroce_qp_event(qp, IB_EVENT_QP_FATAL);
		sroce_qp_kick(qp);
	}
}

/* Publish @next to the data path (state_lock: sroce_qp_to_error()). */
static const char * const sroce_qp_state_name[] = {
	[IB_QPS_RESET] = "RESET",
	[IB_QPS_INIT] = "INIT",
	[IB_QPS_RTR] = "RTR",
	[IB_QPS_RTS] = "RTS",
	[IB_QPS_SQD] = "SQD",
	[IB_QPS_SQE] = "SQE",
	[IB_QPS_ERR] = "ERR",
};

/* "RESET" .. "ERR", for logs and debugfs. */
const char *sroce_qp_state_str(enum ib_qp_state s)
{
	return (unsigned int)s < ARRAY_SIZE(sroce_qp_state_name) ?
	       sroce_qp_state_name[s] : "?";
}

void sroce_qp_set_state(struct sroce_qp *qp, enum ib_qp_state next)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	trace_sroce_qp_state(qp->ibqp.qp_num, qp->state, next);
	WRITE_ONCE(qp->state, next);
	if (next == IB_QPS_ERR || next == IB_QPS_RESET)
		sroce_qp_set_flush_flag(qp, next == IB_QPS_ERR);
	spin_unlock_irqrestore(&qp->state_lock, flags);
}

void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}
