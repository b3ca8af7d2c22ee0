/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: ACKs and the answer queue (sroce_ack.c), below the responder
 * and the requester: answers in PSN order, their transmission queue, the
 * delayed ACK.
 */
#ifndef SROCE_ACK_H
#define SROCE_ACK_H

#include "sroce_qp.h"

/* An AETH syndrome of an ACK. */
static inline u8 sroce_ack_syndrome(void)
{
	/* End-to-end credits are not used: "invalid" credit count. */
	return sroce_aeth_ack(SROCE_AETH_CREDITS_INVALID);
}

/* The answer queue (responder, resp_lock held unless said otherwise). */
struct sk_buff *sroce_ack_skb(struct sroce_qp *qp, struct sroce_pkt *pkt,
			      u32 payload);
bool sroce_ack_build(struct sroce_qp *qp, struct sk_buff_head *out,
		     u32 psn, u8 syndrome, u32 msn);
bool sroce_ack_due(const struct sroce_qp *qp);
void sroce_ack_forget(struct sroce_qp *qp);
void sroce_ack_answer(struct sroce_qp *qp, struct sk_buff_head *out,
		      u32 psn, u8 syndrome, bool fatal);
void sroce_ack_taken(struct sroce_qp *qp);
bool sroce_ack_tx_claim(struct sroce_qp *qp, struct sk_buff_head *out);
void sroce_ack_tx_drain(struct sroce_qp *qp, struct sk_buff_head *list);

/* The delayed ACK. */
void sroce_ack_init(struct sroce_qp *qp);
void sroce_ack_pp_exit(struct sroce_qp *qp);
void sroce_ack_send_held(struct sroce_qp *qp, struct sk_buff_head *out);
bool sroce_ack_hold(struct sroce_qp *qp);
void sroce_ack_done(struct sroce_qp *qp, struct sk_buff_head *out, u32 psn,
		    bool held);
/* No QP lock held: the requester's transmission, the QP's life cycle. */
void sroce_ack_req_xmit(struct sroce_qp *qp, struct sk_buff_head *list);
void sroce_ack_release(struct sroce_qp *qp);
void sroce_ack_timer_init(struct sroce_qp *qp);
void sroce_ack_timer_stop(struct sroce_qp *qp);

#endif /* SROCE_ACK_H */
