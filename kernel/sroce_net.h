/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: RoCEv2 encapsulation over a UDP tunnel socket (sroce_net.c).
 */
#ifndef SROCE_NET_H
#define SROCE_NET_H

#include "sroce_qp.h"
#include <sroce/sroce_wire.h>

/*
 * Worst-case bytes a RoCEv2 packet adds to its payload: IPv6 (40) + UDP (8)
 * + BTH (12) + RETH (16) + ImmDt (4) + ICRC (4). The path MTU is the
 * largest IBA MTU that fits the netdev MTU after these.
 */
#define SROCE_MAX_HDR_LEN	84

/*
 * Addressing of one packet, resolved from a QP's path or a UD AV; it
 * lives in skb->cb (48 bytes), so the order keeps it free of holes.
 */
struct sroce_xmit_addr {
	u8 sgid[16];
	u8 dgid[16];
	u32 flow_label;
	/*
	 * The netdev the source GID belongs to: the link's netdev or one of
	 * its VLAN devices, so that a VLAN GID's packets leave tagged.
	 */
	int oif;
	u16 sport;
	u8 traffic_class;
	u8 hop_limit;
	bool ipv6;
	bool rxe_flush_icrc;	/* an RC FLUSH with rxe's ICRC (sroce_icrc.h) */
};

/* Headroom every packet buffer leaves for Ethernet, IP and UDP headers. */
#define SROCE_SKB_HEADROOM(ndev) \
	(LL_RESERVED_SPACE(ndev) + SROCE_IPV6_HDR_BYTES + SROCE_UDP_HDR_BYTES)

struct sk_buff *sroce_skb_alloc(struct sroce_dev *sdev, u32 ib_len);
int sroce_gid_attr_oif(const struct ib_gid_attr *attr);
void sroce_addr_from_qp(struct sroce_qp *qp, struct sroce_xmit_addr *xa);
int sroce_addr_from_av(struct sroce_qp *qp, const struct sroce_av *av,
		       struct sroce_xmit_addr *xa);

void sroce_qp_xmit_list(struct sroce_qp *qp, struct sk_buff_head *list);

void sroce_net_init(void (*rcv)(struct sroce_dev *sdev, struct sk_buff *skb));
void sroce_net_exit(void);
int sroce_net_dev_init(struct sroce_dev *sdev);
void sroce_net_dev_cleanup(struct sroce_dev *sdev);

#endif /* SROCE_NET_H */
