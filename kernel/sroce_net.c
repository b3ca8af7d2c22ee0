// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: RoCEv2 encapsulation (IBA Annex A17) over UDP port 4791.
 *
 * Transmit: the engines build BTH..payload..ICRC into a linear skb; here
 * the UDP and IP headers are added, the ICRC is computed over the masked
 * headers (it covers fields the IP stack would otherwise choose, so the IP
 * header is built here, as rxe does), and the packet goes out through
 * ip_local_out()/ip6_local_out() with a route cached per QP. Packets for a
 * local address skip the wire and enter the receive path directly.
 *
 * Receive: the UDP tunnel socket's encap_rcv hook runs in softirq context.
 * Headers are pulled into the linear area, the IP/UDP framing and the ICRC
 * are checked, the BTH and extension headers are parsed and validated by
 * the protocol core, and the packet goes to the responder or completer of
 * its QP, in this context.
 *
 * sroce opens its sockets when the first device is created and closes them
 * with the last one, so that sroce.ko can be loaded on a host that runs
 * rxe (only one of them can own port 4791 at a time).
 */
#include <linux/if_vlan.h>
#include <net/udp_tunnel.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/sock.h>
#include <rdma/ib_cache.h>

#include "sroce_net.h"
#include "proto/sroce_icrc.h"

struct sroce_socks {
	struct socket *sk4;
	struct socket *sk6;
	unsigned int users;
};

static struct sroce_socks sroce_socks;
static DEFINE_MUTEX(sroce_socks_lock);

/* Devices by netdev for the receive path; RCU readers, mutex writers. */
static LIST_HEAD(sroce_rx_list);
static DEFINE_SPINLOCK(sroce_rx_lock);

static struct sroce_dev *sroce_rx_dev(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &sroce_rx_list, rx_list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

static void sroce_drop(struct sroce_dev *sdev, enum sroce_drop_reason why)
{
	if (sdev && why < SROCE_DROP_NUM)
		atomic64_inc(&sdev->stats.drops[why]);
}

/* ------------------------------------------------------------------------
 * Transmit
 */

/* A linear skb with room for @ib_len bytes from the BTH through the ICRC. */
struct sk_buff *sroce_skb_alloc(struct sroce_dev *sdev, u32 ib_len)
{
	unsigned int headroom = SROCE_SKB_HEADROOM(sdev->ndev);
	struct sk_buff *skb;

	skb = alloc_skb(headroom + ib_len, GFP_ATOMIC);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, headroom);
	skb_put(skb, ib_len);
	return skb;
}

static bool sroce_gid_is_v4(const u8 *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid);
}

void sroce_addr_from_qp(struct sroce_qp *qp, struct sroce_xmit_addr *xa)
{
	const struct sroce_path *p = &qp->path;

	xa->ipv6 = p->av.network_type == SROCE_NETWORK_IPV6;
	memcpy(xa->sgid, p->sgid, 16);
	memcpy(xa->dgid, p->av.dgid, 16);
	xa->traffic_class = p->av.traffic_class;
	xa->hop_limit = p->av.hop_limit;
	xa->flow_label = p->av.flow_label;
	xa->sport = p->udp_sport;
}

/* Resolve a UD address vector (from a WQE: nothing in it is trusted). */
int sroce_addr_from_av(struct sroce_qp *qp, const struct sroce_av *av,
		       struct sroce_xmit_addr *xa)
{
	const struct ib_gid_attr *attr;
	enum rdma_network_type type;

	attr = rdma_get_gid_attr(&qp->sdev->ibdev, 1, av->sgid_index);
	if (IS_ERR(attr))
		return PTR_ERR(attr);
	type = rdma_gid_attr_network_type(attr);
	memcpy(xa->sgid, attr->gid.raw, 16);
	rdma_put_gid_attr(attr);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;
	xa->ipv6 = type == RDMA_NETWORK_IPV6;
	if (xa->ipv6 == sroce_gid_is_v4(av->dgid))
		return -EINVAL;
	memcpy(xa->dgid, av->dgid, 16);
	xa->traffic_class = av->traffic_class;
	xa->hop_limit = av->hop_limit;
	xa->flow_label = av->flow_label & IB_GRH_FLOWLABEL_MASK;
	xa->sport = sroce_udp_sport(xa->flow_label, qp->ibqp.qp_num, 0);
	return 0;
}

static void sroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = htons(skb->len);
	/* Zero UDP checksum as rxe sends: the ICRC protects the payload. */
	uh->check = 0;
}

/* ICRC over the finished frame; the skb is linear. */
static void sroce_put_icrc(struct sk_buff *skb, unsigned int l3_len)
{
	u8 *l3 = skb_network_header(skb);
	/* The UDP payload, BTH through ICRC. */
	u32 bth_len = skb->len - l3_len - SROCE_UDP_HDR_BYTES;

	sroce_icrc_put(skb_tail_pointer(skb) - SROCE_ICRC_BYTES,
		       sroce_icrc_calc(l3, l3_len, bth_len));
}

static void sroce_loopback(struct sroce_dev *sdev, struct sk_buff *skb,
			   unsigned int l3_len)
{
	skb->dev = sdev->ndev;
	skb->pkt_type = PACKET_HOST;
	__skb_pull(skb, l3_len);	/* data at the UDP header, as on receive */
	/* The receive path runs in softirq context. */
	local_bh_disable();
	sroce_rcv(sdev, skb);
	local_bh_enable();
}

static struct rtable *sroce_route4(struct sroce_dev *sdev,
				   struct dst_cache *cache,
				   const struct sroce_xmit_addr *xa,
				   __be32 saddr, __be32 daddr)
{
	struct flowi4 fl = {
		.flowi4_oif = sdev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.saddr = saddr,
		.daddr = daddr,
	};
	struct rtable *rt;
	__be32 cached_saddr;

	if (cache) {
		rt = dst_cache_get_ip4(cache, &cached_saddr);
		if (rt)
			return rt;
	}
	rt = ip_route_output_key(&init_net, &fl);
	if (IS_ERR(rt))
		return rt;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, saddr);
	return rt;
}

static int sroce_xmit4(struct sroce_dev *sdev, struct dst_cache *cache,
		       const struct sroce_xmit_addr *xa, struct sk_buff *skb)
{
	__be32 saddr, daddr;
	struct rtable *rt;
	struct iphdr *iph;

	memcpy(&saddr, xa->sgid + 12, 4);
	memcpy(&daddr, xa->dgid + 12, 4);
	rt = sroce_route4(sdev, cache, xa, saddr, daddr);
	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}

	sroce_push_udp(skb, xa->sport);
	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = xa->traffic_class;
	iph->tot_len = htons(skb->len);
	/* DF and ID 0: an atomic datagram (RFC 6864), as the ICRC covers ID. */
	iph->id = 0;
	iph->frag_off = htons(IP_DF);
	iph->ttl = xa->hop_limit > 1 ? xa->hop_limit :
		   ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = daddr;
	ip_send_check(iph);
	sroce_put_icrc(skb, sizeof(*iph));
	skb->protocol = htons(ETH_P_IP);

	if (rt->rt_type == RTN_LOCAL) {
		ip_rt_put(rt);
		sroce_loopback(sdev, skb, sizeof(*iph));
		return 0;
	}
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_dst_set(skb, &rt->dst);
	return ip_local_out(&init_net, skb->sk, skb);
}

static int sroce_xmit6(struct sroce_dev *sdev, struct dst_cache *cache,
		       const struct sroce_xmit_addr *xa, struct sk_buff *skb)
{
	struct flowi6 fl = {
		.flowi6_oif = sdev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst = NULL;
	struct ipv6hdr *ip6h;

	if (!IS_ENABLED(CONFIG_IPV6) || !sroce_socks.sk6) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}
	memcpy(&fl.saddr, xa->sgid, 16);
	memcpy(&fl.daddr, xa->dgid, 16);
	if (cache)
		dst = dst_cache_get_ip6(cache, &fl.saddr);
	if (!dst) {
		dst = ipv6_stub->ipv6_dst_lookup_flow(&init_net,
						      sroce_socks.sk6->sk,
						      &fl, NULL);
		if (IS_ERR(dst)) {
			kfree_skb(skb);
			return PTR_ERR(dst);
		}
		if (cache)
			dst_cache_set_ip6(cache, dst, &fl.saddr);
	}

	sroce_push_udp(skb, xa->sport);
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, xa->traffic_class, htonl(xa->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = xa->hop_limit > 1 ? xa->hop_limit :
			  ip6_dst_hoplimit(dst);
	ip6h->saddr = fl.saddr;
	ip6h->daddr = fl.daddr;
	sroce_put_icrc(skb, sizeof(*ip6h));
	skb->protocol = htons(ETH_P_IPV6);

	if (dst->dev->flags & IFF_LOOPBACK) {
		dst_release(dst);
		sroce_loopback(sdev, skb, sizeof(*ip6h));
		return 0;
	}
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb_dst_set(skb, dst);
	return ip6_local_out(&init_net, skb->sk, skb);
}

/*
 * Send a packet whose BTH..ICRC the caller built. Consumes the skb. Returns
 * 0 if it was handed to the stack; NET_XMIT_DROP (positive) if the stack
 * dropped it at once (queue full: the caller may retry later), or a
 * negative errno when it cannot be routed.
 */
int sroce_xmit(struct sroce_dev *sdev, struct dst_cache *cache,
	       const struct sroce_xmit_addr *xa, struct sk_buff *skb)
{
	int ret;

	ret = xa->ipv6 ? sroce_xmit6(sdev, cache, xa, skb) :
			 sroce_xmit4(sdev, cache, xa, skb);
	if (ret == NET_XMIT_CN)
		ret = 0;
	if (ret)
		atomic64_inc(&sdev->stats.tx_errors);
	else
		atomic64_inc(&sdev->stats.tx_packets);
	return ret;
}

/* ------------------------------------------------------------------------
 * Receive
 */

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

/*
 * ICRC of a received frame of @len bytes from the UDP header on: the
 * masked pseudo header through the BTH from the linear area, the rest with
 * a sequential read that copes with paged skbs.
 */
static bool sroce_rcv_icrc_ok(struct sk_buff *skb, unsigned int l3_len,
			      unsigned int len)
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
	return sroce_icrc_final(crc) == sroce_icrc_get(wire);
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
	default:
		return false;
	}
}

/*
 * One RoCEv2 packet, skb->data at its UDP header. Consumes the skb.
 * Softirq context (or bh disabled, for loopback).
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;
	struct sroce_pkt pkt;
	struct sroce_qp *qp;
	unsigned int len;
	int l3_len, err;

	atomic64_inc(&sdev->stats.rx_packets);
	err = -SROCE_DROP_SHORT;
	if (!pskb_may_pull(skb, SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES))
		goto drop;
	len = ntohs(udp_hdr(skb)->len);
	err = -SROCE_DROP_BAD_UDP;
	if (len > skb->len ||
	    len < SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		goto drop;
	if (len < skb->len && pskb_trim(skb, len))
		goto drop;
	l3_len = sroce_rcv_l3(skb);
	if (l3_len < 0) {
		err = l3_len;
		goto drop;
	}

	/* The opcode tells how many header bytes must be linear. */
	info = sroce_opcode_get(skb->data[SROCE_UDP_HDR_BYTES]);
	err = -SROCE_DROP_BAD_OPCODE;
	if (!info)
		goto drop;
	err = -SROCE_DROP_SHORT;
	if (len < SROCE_UDP_HDR_BYTES + info->hdr_len + SROCE_ICRC_BYTES ||
	    !pskb_may_pull(skb, SROCE_UDP_HDR_BYTES + info->hdr_len))
		goto drop;

	err = -SROCE_DROP_BAD_ICRC;
	if (!sroce_rcv_icrc_ok(skb, l3_len, len))
		goto drop;
	/* Parses the linear headers only; len bounds the payload. */
	err = sroce_parse(skb->data + SROCE_UDP_HDR_BYTES,
			  len - SROCE_UDP_HDR_BYTES, &pkt);
	if (err)
		goto drop;
	err = -SROCE_DROP_BAD_PKEY;
	if (!sroce_pkey_match(pkt.pkey, SROCE_DEFAULT_PKEY))
		goto drop;

	/* Payload offset from skb->data, for the engines. */
	pkt.payload_off += SROCE_UDP_HDR_BYTES;
	if (pkt.dqpn == SROCE_MCAST_QPN) {
		err = -SROCE_DROP_BAD_QP_TYPE;
		if (pkt.info->transport != SROCE_TRANSPORT_UD)
			goto drop;
		sroce_mcast_rcv(sdev, skb, &pkt);
		consume_skb(skb);
		return;
	}
	qp = sroce_qp_get(sdev, pkt.dqpn);
	err = -SROCE_DROP_NO_QP;
	if (!qp)
		goto drop;
	if (!sroce_qp_accepts(qp, &pkt)) {
		sroce_qp_put(qp);
		err = -SROCE_DROP_BAD_QP_TYPE;
		goto drop;
	}
	if (pkt.info->flags & SROCE_OPF_REQUEST)
		sroce_resp_rcv(qp, skb, &pkt);
	else
		sroce_comp_rcv(qp, skb, &pkt);
	sroce_qp_put(qp);
	consume_skb(skb);
	return;

drop:
	sroce_drop(sdev, -err);
	kfree_skb(skb);
}

static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct sroce_dev *sdev;

	rcu_read_lock();
	sdev = sroce_rx_dev(ndev);
	if (!sdev && is_vlan_dev(ndev))
		sdev = sroce_rx_dev(vlan_dev_real_dev(ndev));
	if (sdev)
		sroce_rcv(sdev, skb);
	else
		kfree_skb(skb);
	rcu_read_unlock();
	return 0;
}

/* ------------------------------------------------------------------------
 * Sockets and device registration with the receive path
 */

static struct socket *sroce_udp_sock(bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(SROCE_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
	}
	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tnl);
	return sock;
}

static void sroce_socks_release(void)
{
	if (sroce_socks.sk6)
		udp_tunnel_sock_release(sroce_socks.sk6);
	if (sroce_socks.sk4)
		udp_tunnel_sock_release(sroce_socks.sk4);
	sroce_socks.sk6 = NULL;
	sroce_socks.sk4 = NULL;
}

static int sroce_socks_open(void)
{
	struct socket *sock;

	sock = sroce_udp_sock(false);
	if (IS_ERR(sock)) {
		pr_err("sroce: cannot open UDP port %u (is rdma_rxe loaded?): %ld\n",
		       SROCE_UDP_PORT, PTR_ERR(sock));
		return PTR_ERR(sock);
	}
	sroce_socks.sk4 = sock;

	if (IS_ENABLED(CONFIG_IPV6)) {
		sock = sroce_udp_sock(true);
		/* IPv6 may be disabled at boot: carry on with IPv4 only. */
		if (IS_ERR(sock) && PTR_ERR(sock) != -EAFNOSUPPORT) {
			sroce_socks_release();
			return PTR_ERR(sock);
		}
		if (!IS_ERR(sock))
			sroce_socks.sk6 = sock;
	}
	return 0;
}

int sroce_net_dev_init(struct sroce_dev *sdev)
{
	int err = 0;

	mutex_lock(&sroce_socks_lock);
	if (!sroce_socks.users)
		err = sroce_socks_open();
	if (!err) {
		sroce_socks.users++;
		spin_lock_bh(&sroce_rx_lock);
		list_add_tail_rcu(&sdev->rx_list, &sroce_rx_list);
		spin_unlock_bh(&sroce_rx_lock);
	}
	mutex_unlock(&sroce_socks_lock);
	return err;
}

void sroce_net_dev_cleanup(struct sroce_dev *sdev)
{
	mutex_lock(&sroce_socks_lock);
	spin_lock_bh(&sroce_rx_lock);
	list_del_rcu(&sdev->rx_list);
	spin_unlock_bh(&sroce_rx_lock);
	/* No receive path may still look at the device once it is freed. */
	synchronize_net();
	if (!WARN_ON(!sroce_socks.users) && !--sroce_socks.users)
		sroce_socks_release();
	mutex_unlock(&sroce_socks_lock);
}

int sroce_net_init(void)
{
	return 0;
}

void sroce_net_exit(void)
{
	WARN_ON(sroce_socks.users);
}
