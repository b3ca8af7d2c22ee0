/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: the send-queue core the requester and the completer share
 * (sroce_sq.c): shadow WQEs, go-back-N, send completions, the flush.
 */
#ifndef SROCE_SQ_H
#define SROCE_SQ_H

#include "sroce_qp.h"

/* The shadow slot of send queue index @idx. */
static inline struct sroce_swqe *sroce_swqe_get(struct sroce_qp *qp, u32 idx)
{
	return (struct sroce_swqe *)(qp->shadow.slots +
		(size_t)sroce_ring_slot(idx, qp->sq.num_entries) *
		qp->shadow.slot_size);
}

/* WQEs started and not completed (sq_lock held). */
static inline bool sroce_sq_outstanding(struct sroce_qp *qp)
{
	return qp->sq.idx != qp->req.started_end;
}

/* The flush_icrc module parameter: 0 learn per QP, 1 IBA, 2 rdma_rxe. */
extern int sroce_flush_icrc;

u8 sroce_wr_to_wc_opcode(u32 wr_opcode);
void sroce_sq_fail_at(struct sroce_qp *qp, u32 idx, int status);
void sroce_sq_rewind(struct sroce_qp *qp, u32 psn);
void sroce_sq_retire(struct sroce_qp *qp, struct sroce_swqe *s, int status);
void sroce_sq_retire_local(struct sroce_qp *qp);
void sroce_sq_flush(struct sroce_qp *qp);
void sroce_sq_flush_answered(struct sroce_qp *qp, const struct sroce_swqe *s);

#endif /* SROCE_SQ_H */
