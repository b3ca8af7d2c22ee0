/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: the entry points of the transport engines: requester
 * (sroce_req.c), completer (sroce_comp.c), responder (sroce_resp.c, and
 * the receive queue's flush in sroce_rwqe.c), multicast delivery
 * (sroce_mcast.c) and the receive dispatch above them (sroce_recv.c).
 * sroce_qp_verbs.c starts, resets and stops them; the timers are
 * sroce_retry.h's, the answer queue sroce_ack.h's.
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include "sroce_qp.h"

void sroce_req_run(struct sroce_qp *qp);
void sroce_req_run_softirq(struct sroce_qp *qp);
bool sroce_comp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt);
void sroce_resp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt);
void sroce_resp_run(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_cleanup(struct sroce_qp *qp);
int sroce_resp_init(struct sroce_qp *qp);
void sroce_rwqe_flush(struct sroce_qp *qp);

void sroce_mcast_qp_gone(struct sroce_qp *qp);
void sroce_mcast_cleanup(struct sroce_dev *sdev);
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
		     const struct sroce_pkt *pkt);

void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb);

#endif /* SROCE_ENGINE_H */
