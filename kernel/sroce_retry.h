/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: retransmission (sroce_retry.c), below the completer and the
 * requester: their timers, round-trip time and go-back-N. Under sq_lock
 * unless said otherwise.
 */
#ifndef SROCE_RETRY_H
#define SROCE_RETRY_H

#include "sroce_sq.h"

/*
 * The states in which the completer works and timers may be armed: in
 * Error and Reset (and before RTS) none is, which is what stopping them
 * for good relies on (sroce_qp_quiesce()).
 */
static inline bool sroce_retry_live(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE;
}

/* What the requester did (sroce_req.c). */
void sroce_retry_sent(struct sroce_qp *qp);
void sroce_retry_stopped(struct sroce_qp *qp);
void sroce_retry_nomem(struct sroce_qp *qp);
void sroce_retry_odp_resend(struct sroce_qp *qp);

/* What the completer found (sroce_comp.c). */
void sroce_retry_unblock(struct sroce_qp *qp);
bool sroce_retry_woke(struct sroce_qp *qp);
void sroce_retry_resend(struct sroce_qp *qp, u32 psn);
void sroce_retry_rnr_wait(struct sroce_qp *qp, u32 us);
void sroce_retry_progress(struct sroce_qp *qp);
void sroce_retry_remote_error(struct sroce_qp *qp, int status);

/* The QP's life cycle (process context, no lock). */
void sroce_retry_init(struct sroce_qp *qp);
void sroce_retry_timers_stop(struct sroce_qp *qp);

#endif /* SROCE_RETRY_H */
