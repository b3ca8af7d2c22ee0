/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: the entry points of the transport engines: requester
 * (sroce_req.c), completer (sroce_comp.c), responder (sroce_resp.c),
 * multicast delivery (sroce_mcast.c) and the receive dispatch above
 * them (sroce_recv.c). sroce_qp_verbs.c starts, resets and stops them.
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include "sroce_qp.h"

void sroce_req_run(struct sroce_qp *qp);
void sroce_req_run_softirq(struct sroce_qp *qp);
void sroce_comp_sent(struct sroce_qp *qp);
void sroce_comp_stopped(struct sroce_qp *qp);
void sroce_comp_nomem(struct sroce_qp *qp);
void sroce_comp_odp_resend(struct sroce_qp *qp);
bool sroce_comp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt);
void sroce_comp_init(struct sroce_qp *qp);
void sroce_comp_timers_stop(struct sroce_qp *qp);
void sroce_resp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt);
void sroce_resp_run(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_cleanup(struct sroce_qp *qp);
int sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_flush(struct sroce_qp *qp);
void sroce_resp_req_xmit(struct sroce_qp *qp, struct sk_buff_head *list);
void sroce_resp_ack_release(struct sroce_qp *qp);
void sroce_resp_timer_init(struct sroce_qp *qp);
void sroce_resp_timer_stop(struct sroce_qp *qp);

void sroce_mcast_qp_gone(struct sroce_qp *qp);
void sroce_mcast_cleanup(struct sroce_dev *sdev);
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
		     const struct sroce_pkt *pkt);

void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb);

#endif /* SROCE_ENGINE_H */
