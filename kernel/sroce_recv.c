// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: receive dispatch, the top of the data path. A RoCEv2 packet the
 * UDP tunnel socket (or loopback, sroce_net.c) delivers runs here in
 * softirq context: headers are pulled into the linear area, the IP/UDP
 * framing and the ICRC are checked, the BTH and extension headers are
 * parsed and validated by the protocol core, and the packet goes to the
 * responder or completer of its QP, or to the multicast groups.
 *
 * When an answer lets the requester send again, the completer says so
 * and this file runs the requester, in the same context: the engines never
 * call each other (rxe's completer schedules its requester task itself).
 */
#include <linux/ipv6.h>
#include <net/busy_poll.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/udp.h>

#include "sroce_engine.h"
#include "sroce_net.h"
#include "sroce_trace.h"
#include "proto/sroce_icrc.h"

static void sroce_drop(struct sroce_dev *sdev, enum sroce_drop_reason why)
{
	trace_sroce_drop(why);
	if (sdev && why > SROCE_DROP_NONE && why < SROCE_DROP_NUM)
		sroce_dev_count(sdev, SROCE_CNT_DROP(why), 1);
}

/* Check the IP/UDP framing the ICRC depends on; returns the L3 length. */
static int sroce_rcv_l3(struct sk_buff *skb)
{
	unsigned int l3_len = skb_transport_offset(skb) -
			      skb_network_offset(skb);
	u8 *l3 = skb_network_header(skb);

	/* Only a bare IPv4 header or a bare IPv6 header precedes UDP. */
	if ((l3[0] >> 4) == 4 && l3_len == SROCE_IPV4_HDR_BYTES)
		return l3_len;
	if ((l3[0] >> 4) == 6 && l3_len == SROCE_IPV6_HDR_BYTES &&
	    ipv6_hdr(skb)->nexthdr == IPPROTO_UDP)
		return l3_len;
	return -SROCE_DROP_BAD_IP;
}

/* The IP header's ECN field says "congestion experienced". */
static bool sroce_rcv_ce(struct sk_buff *skb)
{
	u8 dsfield = (skb_network_header(skb)[0] >> 4) == 6 ?
		     ipv6_get_dsfield(ipv6_hdr(skb)) : ip_hdr(skb)->tos;

	return INET_ECN_is_ce(dsfield);
}

/*
 * ICRC of a received frame of @len bytes from the UDP header on: the
 * masked pseudo header through the BTH from the linear area, the rest with
 * a sequential read that copes with paged skbs. An RC FLUSH (headers only,
 * @hdr_len bytes, linear) may also carry rdma_rxe's variant of the ICRC
 * (sroce_icrc_rxe_flush()): we answer rxe's FLUSH requests too.
 */
static bool sroce_rcv_icrc_ok(struct sk_buff *skb, unsigned int l3_len,
			      unsigned int len, u8 opcode, unsigned int hdr_len)
{
	unsigned int from = SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES;
	unsigned int to = len - SROCE_ICRC_BYTES;
	struct skb_seq_state st;
	const u8 *data;
	u8 wire[SROCE_ICRC_BYTES];
	unsigned int n, consumed = 0;
	u32 crc;

	crc = sroce_icrc_begin(skb_network_header(skb), l3_len);
	skb_prepare_seq_read(skb, from, to, &st);
	/* skb_seq_read() does not clip its chunks to the upper bound. */
	while (consumed < to - from &&
	       (n = skb_seq_read(consumed, &data, &st)) != 0) {
		n = min(n, to - from - consumed);
		crc = sroce_icrc_update(crc, data, n);
		consumed += n;
	}
	skb_abort_seq_read(&st);
	if (skb_copy_bits(skb, to, wire, sizeof(wire)))
		return false;
	if (sroce_icrc_final(crc) == sroce_icrc_get(wire))
		return true;
	return opcode == SROCE_OP_RC_FLUSH &&
	       to == SROCE_UDP_HDR_BYTES + hdr_len &&
	       sroce_icrc_rxe_flush(crc, skb->data + SROCE_UDP_HDR_BYTES,
				    hdr_len) == sroce_icrc_get(wire);
}

static bool sroce_qp_accepts(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	switch (pkt->info->transport) {
	case SROCE_TRANSPORT_RC:
		return qp->ibqp.qp_type == IB_QPT_RC;
	case SROCE_TRANSPORT_UC:
		return qp->ibqp.qp_type == IB_QPT_UC;
	case SROCE_TRANSPORT_UD:
		return qp->ibqp.qp_type == IB_QPT_UD ||
		       qp->ibqp.qp_type == IB_QPT_GSI;
	case SROCE_TRANSPORT_XRC:
		/* Requests go to targets, answers to initiators. */
		return qp->ibqp.qp_type ==
		       (pkt->info->flags & SROCE_OPF_REQUEST ? IB_QPT_XRC_TGT :
							       IB_QPT_XRC_INI);
	default:
		return false;
	}
}

/*
 * A connected QP (RC, UC, XRC) takes packets from its peer only: the IP
 * source must be its path's destination and the IP destination its path's
 * source GID, as rdma_rxe checks. Without this, anyone who can send a UDP
 * datagram to port 4791 and knows a QP number and its expected PSN writes
 * into another user's connection. A QP without a path yet (RESET, INIT:
 * network_type 0) drops requests anyway; datagram QPs take any source.
 * The path is written by modify_qp (RTR) without the receive path's
 * knowledge: a packet that meets it half written is dropped and resent.
 */
static bool sroce_rcv_from_peer(const struct sroce_qp *qp,
				const struct sk_buff *skb)
{
	const struct sroce_path *p = &qp->path;
	const u8 *l3 = skb_network_header(skb);

	if (!p->av.network_type)
		return true;
	if ((l3[0] >> 4) == 4) {
		const struct iphdr *ip = ip_hdr(skb);

		return p->av.network_type == SROCE_NETWORK_IPV4 &&
		       !memcmp(p->av.dgid + 12, &ip->saddr, 4) &&
		       !memcmp(p->sgid + 12, &ip->daddr, 4);
	}
	return p->av.network_type == SROCE_NETWORK_IPV6 &&
	       !memcmp(p->av.dgid, &ipv6_hdr(skb)->saddr, 16) &&
	       !memcmp(p->sgid, &ipv6_hdr(skb)->daddr, 16);
}

/*
 * Busy polling (sroce_cq.c) polls the NAPI context that received the
 * device's last packet. Written only when it changes, so a busy receive
 * path does not keep dirtying the cache line.
 */
static void sroce_rcv_note_napi(struct sroce_dev *sdev,
				const struct sk_buff *skb)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	if (skb->napi_id >= MIN_NAPI_ID &&
	    READ_ONCE(sdev->napi_id) != skb->napi_id)
		WRITE_ONCE(sdev->napi_id, skb->napi_id);
#endif
}

/*
 * Check the framing, the ICRC and the headers of the packet at skb->data
 * (its UDP header), pulling the headers its opcode has into the linear
 * area, and parse them into @pkt: 0, or minus a drop reason. *@ce: the IP
 * header says "congestion experienced".
 */
static int sroce_rcv_parse(struct sroce_dev *sdev, struct sk_buff *skb,
			   struct sroce_pkt *pkt, bool *ce)
{
	const struct sroce_opcode_info *info;
	unsigned int len;
	int l3_len, err;

	if (!pskb_may_pull(skb, SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES))
		return -SROCE_DROP_SHORT;
	len = ntohs(udp_hdr(skb)->len);
	if (len > skb->len ||
	    len < SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES + SROCE_ICRC_BYTES ||
	    (len < skb->len && pskb_trim(skb, len)))
		return -SROCE_DROP_BAD_UDP;
	l3_len = sroce_rcv_l3(skb);
	if (l3_len < 0)
		return l3_len;
	*ce = sroce_rcv_ce(skb);

	/* The opcode tells how many header bytes must be linear. */
	info = sroce_opcode_get(skb->data[SROCE_UDP_HDR_BYTES]);
	if (!info)
		return -SROCE_DROP_BAD_OPCODE;
	if (len < SROCE_UDP_HDR_BYTES + info->hdr_len + SROCE_ICRC_BYTES ||
	    !pskb_may_pull(skb, SROCE_UDP_HDR_BYTES + info->hdr_len))
		return -SROCE_DROP_SHORT;
	if (!sroce_rcv_icrc_ok(skb, l3_len, len, skb->data[SROCE_UDP_HDR_BYTES],
			       info->hdr_len))
		return -SROCE_DROP_BAD_ICRC;
	sroce_rcv_note_napi(sdev, skb);
	/* Parses the linear headers only; len bounds the payload. */
	err = sroce_parse(skb->data + SROCE_UDP_HDR_BYTES,
			  len - SROCE_UDP_HDR_BYTES, pkt);
	if (err)
		return err;
	if (!sroce_pkey_match(pkt->pkey, SROCE_DEFAULT_PKEY))
		return -SROCE_DROP_BAD_PKEY;
	/* Payload offset from skb->data, for the engines. */
	pkt->payload_off += SROCE_UDP_HDR_BYTES;
	return 0;
}

/*
 * The packet @pkt for one QP: to its responder or completer, counted for
 * it (@bytes, @ce) before it may answer. 0, or minus a drop reason; the
 * caller consumes the skb.
 */
static int sroce_rcv_qp(struct sroce_dev *sdev, struct sk_buff *skb,
			const struct sroce_pkt *pkt, s64 bytes, bool ce)
{
	struct sroce_qp *qp = sroce_qp_get(sdev, pkt->dqpn);
	int err = 0;

	if (!qp)
		return -SROCE_DROP_NO_QP;
	if (!sroce_qp_accepts(qp, pkt))
		err = -SROCE_DROP_BAD_QP_TYPE;
	else if (pkt->info->transport != SROCE_TRANSPORT_UD &&
		 !sroce_rcv_from_peer(qp, skb))
		err = -SROCE_DROP_BAD_ADDR;
	if (err) {
		sroce_qp_put(qp);
		return err;
	}
	trace_sroce_recv(pkt->dqpn, pkt->opcode, pkt->psn, bytes);
	sroce_qp_count(qp, SROCE_CNT_RX_PACKETS, 1);
	sroce_qp_count(qp, SROCE_CNT_RX_BYTES, bytes);
	if (ce)
		sroce_qp_count(qp, SROCE_CNT_ECN_CE, 1);
	if (pkt->info->flags & SROCE_OPF_REQUEST)
		sroce_resp_rcv(qp, skb, pkt);
	else if (sroce_comp_rcv(qp, skb, pkt))
		sroce_req_run_softirq(qp);	/* the answer opened the window */
	sroce_qp_put(qp);
	return 0;
}

/*
 * One RoCEv2 packet, skb->data at its UDP header. Consumes the skb.
 * Softirq context (or bh disabled, for loopback).
 */
static void sroce_rcv_one(struct sroce_dev *sdev, struct sk_buff *skb)
{
	/* The UDP payload, BTH through ICRC (the IP layer trimmed the frame). */
	s64 bytes = skb->len > SROCE_UDP_HDR_BYTES ?
		    skb->len - SROCE_UDP_HDR_BYTES : 0;
	struct sroce_pkt pkt;
	bool ce = false;
	int err;

	err = sroce_rcv_parse(sdev, skb, &pkt, &ce);
	if (err)
		goto drop;
	/*
	 * A CNP asks the sender of a flow to slow down (IBA A17.9). sroce has
	 * no rate control to apply it to: counted, then ignored (rxe, which
	 * does not know the opcode, drops it).
	 */
	if (pkt.info->transport == SROCE_TRANSPORT_CNP) {
		sroce_dev_count(sdev, SROCE_CNT_CNP, 1);
		consume_skb(skb);
		goto count_dev;
	}
	if (pkt.dqpn == SROCE_MCAST_QPN) {
		err = -SROCE_DROP_BAD_QP_TYPE;
		if (pkt.info->transport != SROCE_TRANSPORT_UD)
			goto drop;
		sroce_mcast_rcv(sdev, skb, &pkt);
		consume_skb(skb);
		goto count_dev;
	}
	err = sroce_rcv_qp(sdev, skb, &pkt, bytes, ce);
	if (err)
		goto drop;
	consume_skb(skb);
	return;

drop:
	sroce_drop(sdev, -err);
	kfree_skb(skb);
count_dev:
	sroce_dev_count(sdev, SROCE_CNT_RX_PACKETS, 1);
	sroce_dev_count(sdev, SROCE_CNT_RX_BYTES, bytes);
	if (ce)
		sroce_dev_count(sdev, SROCE_CNT_ECN_CE, 1);
}

/*
 * A packet for @sdev from the UDP socket or the loopback path; the fault
 * knobs (tests only, off by default) may drop it or deliver it twice.
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sk_buff *dup;

	if (sroce_fault_hit(&sdev->fault.rx_drop)) {
		sroce_dev_count(sdev, SROCE_CNT_FAULTS, 1);
		kfree_skb(skb);
		return;
	}
	if (sroce_fault_hit(&sdev->fault.rx_dup)) {
		/* A copy: the receive path may write the headers it checks. */
		dup = skb_copy(skb, GFP_ATOMIC);
		if (dup) {
			sroce_dev_count(sdev, SROCE_CNT_FAULTS, 1);
			sroce_rcv_one(sdev, dup);
		}
	}
	sroce_rcv_one(sdev, skb);
}
