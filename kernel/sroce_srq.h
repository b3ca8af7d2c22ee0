/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: shared receive queues (sroce_srq.c); the responder takes
 * receive WQEs from them.
 */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

#include "sroce_queue.h"

struct sroce_srq {
	struct ib_srq ibsrq;
	struct sroce_dev *sdev;
	bool is_user;
	spinlock_t lock;	/* consumers (responders), limit */
	spinlock_t post_lock;	/* kernel post_srq_recv (producer) */
	struct mutex resize_lock;	/* modify_srq: one at a time */
	struct sroce_queue rq;
	u32 max_sge;
	u32 limit;		/* armed SRQ limit; 0: not armed */
	bool error;		/* IB_EVENT_SRQ_ERR raised */
	u32 srq_num;
	/* XRC SRQs: XRC targets look them up by number (sroce_xrc_srq_get). */
	refcount_t refs;	/* lookups in flight + 1 while it exists */
	struct completion released;
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *srq)
{
	return container_of(srq, struct sroce_srq, ibsrq);
}

int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *r);
struct sroce_srq *sroce_xrc_srq_get(struct sroce_dev *sdev, u32 srq_num,
				    struct ib_xrcd *xrcd);
void sroce_srq_put(struct sroce_srq *srq);

#endif /* SROCE_SRQ_H */
