/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: completion queues (sroce_cq.c); the engines post CQEs here.
 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include "sroce_queue.h"

struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* producers: serialises CQE writes */
	spinlock_t poll_lock;	/* kernel consumers */
	/*
	 * User CQs: held by POLL_CQ (which uses the ring outside the
	 * producers' lock, for as long as a busy poll lasts) and by a
	 * resize, which replaces the ring and frees the old one.
	 */
	struct mutex ring_mutex;
	struct sroce_queue q;
	bool is_user;
	bool overflowed;
	u8 knotify;		/* kernel CQs: SROCE_CQ_ARM_* */
};

static inline struct sroce_cq *to_scq(struct ib_cq *cq)
{
	return container_of(cq, struct sroce_cq, ibcq);
}

int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited);

#endif /* SROCE_CQ_H */
