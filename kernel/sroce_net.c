// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: RoCEv2 encapsulation (IBA Annex A17) over UDP port 4791.
 *
 * Transmit: the engines build BTH..payload..ICRC into a linear skb; here
 * the UDP and IP headers are added, the ICRC is computed over the masked
 * headers (it covers fields the IP stack would otherwise choose, so the IP
 * header is built here, as rxe does), and the packet goes out through
 * ip_local_out()/ip6_local_out() with a route cached per QP; consecutive
 * packets to one peer go as one UDP GSO burst (sroce_gso_chain()). Packets
 * for a local address skip the wire and enter the receive path directly.
 *
 * Receive: the UDP tunnel socket's encap_rcv hook runs in softirq context;
 * it finds the device of the netdev the packet came in on and hands the
 * packet up to the handler sroce_net_init() was given (sroce_rcv(), in
 * sroce_recv.c), as loopback does. This file calls no engine: it is the
 * bottom of the data path, and the engines call down into it.
 *
 * Sockets, routes and local delivery live in the network namespace of the
 * device's netdev: each namespace with an sroce device has its own pair of
 * sockets (IPv4, IPv6), opened with its first device and closed with its
 * last, so that sroce.ko can be loaded on a host that runs rxe (only one of
 * them can own port 4791 in a namespace). rxe's sockets and routes are
 * init_net's only, which is why it cannot serve a netdev in a container.
 */
#include <linux/if_vlan.h>
#include <net/udp_tunnel.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/sock.h>
#include <rdma/ib_cache.h>

#include "sroce_net.h"
#include "sroce_trace.h"
#include "proto/sroce_icrc.h"

/*
 * One namespace's sockets. Kernel sockets hold no reference on their
 * namespace: the namespace's exit (sroce_main.c) unregisters its devices,
 * and the last one closes the pair, before the namespace is freed.
 */
struct sroce_socks {
	struct list_head list;		/* sroce_socks_list */
	struct net *net;
	struct socket *sk4;
	struct socket *sk6;
	unsigned int users;
};

static LIST_HEAD(sroce_socks_list);
static DEFINE_MUTEX(sroce_socks_lock);	/* the list and users */

/*
 * Where received packets go (sroce_net_init()): set once at module load,
 * before any socket exists. An indirect call per packet, and the price of
 * a data path that only calls down: this file never names the engines.
 */
static void (*sroce_rx_handler)(struct sroce_dev *sdev, struct sk_buff *skb);

/* Devices by netdev for the receive path; RCU readers, mutex writers. */
static LIST_HEAD(sroce_rx_list);
static DEFINE_SPINLOCK(sroce_rx_lock);

/*
 * The device on @ndev whose sockets are in @net (the namespace of the
 * socket that took the packet). A VLAN's packets go to the device on its
 * real device; a VLAN moved into another namespace than its real device's
 * (whose packets reach that namespace's socket) must not reach a device
 * of the real device's namespace: the namespace is checked, not only the
 * netdev.
 */
static struct sroce_dev *sroce_rx_dev(struct net_device *ndev, struct net *net)
{
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &sroce_rx_list, rx_list)
		if (sdev->ndev == ndev && net_eq(sdev->net, net))
			return sdev;
	return NULL;
}

/* ------------------------------------------------------------------------
 * Transmit
 */

/*
 * Packet buffers. alloc_skb() would take each one from kmalloc, which
 * zeroes it (init_on_alloc, on in Debian's kernels): for a 4 KiB packet
 * that cost a tenth of the sender's CPU. Every byte sroce sends is written
 * before it is sent, so buffers are carved from page fragments that are
 * recycled per CPU, as TCP does with its socket page frags: a ring of
 * pages, each reused in place once the stack has freed every packet in it
 * (skb_page_frag_refill()), so a fresh (zeroed) page is only needed when
 * packets are still queued in all of them.
 */
#define SROCE_FRAG_PAGES	4

struct sroce_frag_cache {
	struct page_frag frag[SROCE_FRAG_PAGES];
	unsigned int cur;
};

static DEFINE_PER_CPU(struct sroce_frag_cache, sroce_frag_cache);

/* A buffer of @size bytes (with room for skb_shared_info); bh disabled. */
static void *sroce_frag_alloc(unsigned int size)
{
	struct sroce_frag_cache *fc = this_cpu_ptr(&sroce_frag_cache);
	struct page_frag *pf = &fc->frag[fc->cur];
	void *buf;

	if (!pf->page || pf->offset + size > pf->size) {
		fc->cur = (fc->cur + 1) % SROCE_FRAG_PAGES;
		pf = &fc->frag[fc->cur];
		/* Reuses the page if nothing else holds it, or takes a new one. */
		if (!skb_page_frag_refill(size, pf, GFP_ATOMIC) ||
		    pf->offset + size > pf->size)
			return NULL;
	}
	buf = page_address(pf->page) + pf->offset;
	get_page(pf->page);
	pf->offset += size;
	return buf;
}

static void sroce_frag_cache_free(void)
{
	struct sroce_frag_cache *fc;
	unsigned int i;
	int cpu;

	for_each_possible_cpu(cpu) {
		fc = per_cpu_ptr(&sroce_frag_cache, cpu);
		for (i = 0; i < SROCE_FRAG_PAGES; i++) {
			if (fc->frag[i].page)
				put_page(fc->frag[i].page);
			fc->frag[i].page = NULL;
		}
	}
}

/* A linear skb with room for @ib_len bytes from the BTH through the ICRC. */
struct sk_buff *sroce_skb_alloc(struct sroce_dev *sdev, u32 ib_len)
{
	unsigned int headroom = SROCE_SKB_HEADROOM(sdev->ndev);
	unsigned int size = SKB_DATA_ALIGN(headroom + ib_len) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *buf;

	if (sroce_fault_hit(&sdev->fault.alloc_fail)) {
		sroce_dev_count(sdev, SROCE_CNT_FAULTS, 1);
		return NULL;
	}
	local_bh_disable();
	buf = sroce_frag_alloc(size);
	local_bh_enable();
	if (likely(buf)) {
		skb = build_skb(buf, size);
		if (unlikely(!skb))
			skb_free_frag(buf);
	}
	if (unlikely(!skb))
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

/*
 * The ifindex of the netdev a GID belongs to, for routing its packets: a
 * VLAN device's GIDs send through the VLAN device (tagged), as rxe's do.
 * The caller holds @attr (or the core is adding it): its netdev is read
 * under RCU alone, without the GID table's lock that
 * rdma_read_gid_attr_ndev_rcu() takes again (a UD send calls this per
 * packet, right after rdma_get_gid_attr() took it).
 */
int sroce_gid_attr_oif(const struct ib_gid_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(attr->device);
	struct net_device *ndev;
	int oif;

	rcu_read_lock();
	ndev = rcu_dereference(attr->ndev);
	if (!ndev)
		oif = -ENODEV;
	/*
	 * The core also lists GIDs of upper devices (a macvlan, a VLAN)
	 * moved to another namespace. Interface indexes are per namespace:
	 * routed in the device's own, such an index names another netdev,
	 * or none. Refuse those GIDs.
	 */
	else if (!net_eq(dev_net(ndev), sdev->net))
		oif = -ENETUNREACH;
	else
		oif = ndev->ifindex;
	rcu_read_unlock();
	return oif;
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
	xa->oif = p->oif;
	xa->rxe_flush_icrc = false;
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
	xa->oif = sroce_gid_attr_oif(attr);
	rdma_put_gid_attr(attr);
	if (xa->oif < 0)
		return xa->oif;
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
	xa->rxe_flush_icrc = false;
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
static void sroce_put_icrc(struct sk_buff *skb, unsigned int l3_len,
			   bool rxe_flush)
{
	u8 *l3 = skb_network_header(skb);
	/* The UDP payload, BTH through ICRC. */
	u32 bth_len = skb->len - l3_len - SROCE_UDP_HDR_BYTES;

	sroce_icrc_put(skb_tail_pointer(skb) - SROCE_ICRC_BYTES, rxe_flush ?
		       sroce_icrc_calc_rxe_flush(l3, l3_len, bth_len) :
		       sroce_icrc_calc(l3, l3_len, bth_len));
}

/*
 * A packet to a local address, handed to the receive path. It "arrives" on
 * the netdev it was sent from: a VLAN device's packets on that VLAN device,
 * so that a UD receive reports the VLAN as one from the wire does.
 */
static void sroce_loopback(struct sroce_dev *sdev, struct sk_buff *skb,
			   unsigned int l3_len, int oif)
{
	struct net_device *dev;

	/* The receive path runs in softirq context, under RCU. */
	local_bh_disable();
	rcu_read_lock();
	dev = sdev->ndev;
	if (oif != dev->ifindex) {
		dev = dev_get_by_index_rcu(sdev->net, oif);
		if (!dev || !is_vlan_dev(dev) ||
		    vlan_dev_real_dev(dev) != sdev->ndev)
			dev = sdev->ndev;
	}
	skb->dev = dev;
	skb->pkt_type = PACKET_HOST;
	__skb_pull(skb, l3_len);	/* data at the UDP header, as on receive */
	sroce_rx_handler(sdev, skb);
	rcu_read_unlock();
	local_bh_enable();
}

static struct rtable *sroce_route4(struct sroce_dev *sdev,
				   struct dst_cache *cache,
				   const struct sroce_xmit_addr *xa,
				   __be32 saddr, __be32 daddr)
{
	struct flowi4 fl = {
		.flowi4_oif = xa->oif,
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
	rt = ip_route_output_key(sdev->socks->net, &fl);
	if (IS_ERR(rt))
		return rt;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, saddr);
	return rt;
}

/*
 * IPv4 and UDP headers for one packet of a run, then its ICRC. IPv4 GSO
 * gives segment @id of a burst the IP ID (head's + @id) (inet_gso_segment());
 * the ICRC covers the ID, so every packet carries that ID from the start.
 */
static void sroce_hdr4(struct sk_buff *skb, const struct sroce_xmit_addr *xa,
		       struct rtable *rt, __be32 saddr, __be32 daddr, u16 id)
{
	struct iphdr *iph;

	sroce_push_udp(skb, xa->sport);
	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = xa->traffic_class;
	iph->tot_len = htons(skb->len);
	/* DF: an atomic datagram (RFC 6864), whose ID is ours to choose. */
	iph->id = htons(id);
	iph->frag_off = htons(IP_DF);
	iph->ttl = xa->hop_limit > 1 ? xa->hop_limit :
		   ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = daddr;
	ip_send_check(iph);
	sroce_put_icrc(skb, sizeof(*iph), xa->rxe_flush_icrc);
	skb->protocol = htons(ETH_P_IP);
}

static void sroce_hdr6(struct sk_buff *skb, const struct sroce_xmit_addr *xa,
		       struct dst_entry *dst)
{
	struct ipv6hdr *ip6h;

	sroce_push_udp(skb, xa->sport);
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, xa->traffic_class, htonl(xa->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = xa->hop_limit > 1 ? xa->hop_limit :
			  ip6_dst_hoplimit(dst);
	memcpy(&ip6h->saddr, xa->sgid, 16);
	memcpy(&ip6h->daddr, xa->dgid, 16);
	sroce_put_icrc(skb, sizeof(*ip6h), xa->rxe_flush_icrc);
	skb->protocol = htons(ETH_P_IPV6);
}

/*
 * Turn a run of finished packets (data at their IP headers) into one skb
 * for the IP stack: the first packet alone, or a UDP GSO burst.
 *
 * A burst is SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST: the first packet is the
 * head and the others hang on its frag_list, each with its own IP and UDP
 * headers and ICRC already in place, data at its BTH. Segmentation (in
 * software, unless the device does fraglist GSO itself) only unchains them
 * (skb_segment_list()) and rewrites the IP total length and ID with the
 * values they already hold, so the wire carries exactly the packets built
 * here, UDP checksum 0 as rxe sends them (a device that would pass the
 * burst on whole gets the packets one by one, sroce_xmit_next()). The
 * point is the driver: it gets the run as one list with xmit_more set,
 * and a virtio NIC is kicked once per burst instead of once per packet
 * (rxe sends every packet on its own; the kick was a quarter of sroce's
 * sending cost, Documentation/bench).
 * The head must be the longest packet: the stack checks gso_size (the
 * head's UDP payload) against the MTU for all of them.
 */
static struct sk_buff *sroce_gso_chain(struct sk_buff_head *run,
				       unsigned int l3_len)
{
	struct sk_buff *head = __skb_dequeue(run);
	struct sk_buff *m, **tail = &skb_shinfo(head)->frag_list;
	unsigned int n = 1;

	if (skb_queue_empty(run))
		return head;
	while ((m = __skb_dequeue(run))) {
		__skb_pull(m, l3_len + SROCE_UDP_HDR_BYTES);
		head->len += m->len;
		head->data_len += m->len;
		head->truesize += m->truesize;
		*tail = m;
		tail = &m->next;
		n++;
	}
	skb_shinfo(head)->gso_size = skb_headlen(head) - l3_len -
				     SROCE_UDP_HDR_BYTES;
	skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	skb_shinfo(head)->gso_segs = n;
	/* Nothing to checksum: UDP checksum 0, the ICRC is in each packet. */
	head->ip_summed = CHECKSUM_UNNECESSARY;
	return head;
}

/*
 * The next skb of @run for the IP stack: the run as one burst, or one
 * packet when @dev takes fraglist GSO skbs as they are
 * (NETIF_F_GSO_FRAGLIST: veth, bridges, VLAN and other software devices).
 * Those hand a burst on unsegmented, into another namespace for one, where
 * the IP layer believes the head's total length and trims the rest of the
 * burst away (sroce_ctrl_netns.sh). A physical or virtio NIC segments it
 * before the wire. @run must not be empty.
 */
static struct sk_buff *sroce_xmit_next(struct sk_buff_head *run,
				       const struct net_device *dev,
				       unsigned int l3_len)
{
	if (dev->features & NETIF_F_GSO_FRAGLIST)
		return __skb_dequeue(run);
	return sroce_gso_chain(run, l3_len);
}

static int sroce_xmit4(struct sroce_dev *sdev, struct dst_cache *cache,
		       const struct sroce_xmit_addr *xa,
		       struct sk_buff_head *run)
{
	__be32 saddr, daddr;
	struct sk_buff *skb;
	struct rtable *rt;
	int ret = 0, err;
	u16 id = 0;

	memcpy(&saddr, xa->sgid + 12, 4);
	memcpy(&daddr, xa->dgid + 12, 4);
	rt = sroce_route4(sdev, cache, xa, saddr, daddr);
	if (IS_ERR(rt)) {
		__skb_queue_purge(run);
		return PTR_ERR(rt);
	}
	skb_queue_walk(run, skb)
		sroce_hdr4(skb, xa, rt, saddr, daddr, id++);

	if (rt->rt_type == RTN_LOCAL) {
		ip_rt_put(rt);
		while ((skb = __skb_dequeue(run)))
			sroce_loopback(sdev, skb, sizeof(struct iphdr),
				       xa->oif);
		return 0;
	}
	while (!skb_queue_empty(run)) {
		skb = sroce_xmit_next(run, rt->dst.dev, sizeof(struct iphdr));
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		skb_dst_set(skb, dst_clone(&rt->dst));
		err = ip_local_out(sdev->socks->net, NULL, skb);
		if (!ret)
			ret = err;
	}
	ip_rt_put(rt);
	return ret;
}

static int sroce_xmit6(struct sroce_dev *sdev, struct dst_cache *cache,
		       const struct sroce_xmit_addr *xa,
		       struct sk_buff_head *run)
{
	struct flowi6 fl = {
		.flowi6_oif = xa->oif,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst = NULL;
	struct sk_buff *skb;
	int ret = 0, err;

	if (!IS_ENABLED(CONFIG_IPV6) || !sdev->socks->sk6) {
		__skb_queue_purge(run);
		return -EAFNOSUPPORT;
	}
	memcpy(&fl.saddr, xa->sgid, 16);
	memcpy(&fl.daddr, xa->dgid, 16);
	if (cache)
		dst = dst_cache_get_ip6(cache, &fl.saddr);
	if (!dst) {
		dst = ipv6_stub->ipv6_dst_lookup_flow(sdev->socks->net,
						      sdev->socks->sk6->sk,
						      &fl, NULL);
		if (IS_ERR(dst)) {
			__skb_queue_purge(run);
			return PTR_ERR(dst);
		}
		if (cache)
			dst_cache_set_ip6(cache, dst, &fl.saddr);
	}
	skb_queue_walk(run, skb)
		sroce_hdr6(skb, xa, dst);

	if (dst->dev->flags & IFF_LOOPBACK) {
		dst_release(dst);
		while ((skb = __skb_dequeue(run)))
			sroce_loopback(sdev, skb, sizeof(struct ipv6hdr),
				       xa->oif);
		return 0;
	}
	while (!skb_queue_empty(run)) {
		skb = sroce_xmit_next(run, dst->dev, sizeof(struct ipv6hdr));
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		skb_dst_set(skb, dst_clone(dst));
		err = ip6_local_out(sdev->socks->net, NULL, skb);
		if (!ret)
			ret = err;
	}
	dst_release(dst);
	return ret;
}

static bool sroce_tx_gso = true;
module_param_named(tx_gso, sroce_tx_gso, bool, 0644);
MODULE_PARM_DESC(tx_gso,
		 "Send runs of packets to one peer as UDP GSO bursts (default: on)");

/* A burst stays within an IPv4 datagram's 16-bit total length. */
#define SROCE_GSO_MAX_BYTES	60000
#define SROCE_GSO_MAX_SEGS	64

/*
 * Move the packets that may follow @head in one burst from @list to @run;
 * returns the burst's bytes, @head's included.
 */
static unsigned int sroce_xmit_take_run(struct sk_buff_head *list,
					struct sk_buff_head *run,
					const struct sk_buff *head)
{
	unsigned int total = head->len;
	struct sk_buff *next;

	if (!READ_ONCE(sroce_tx_gso))
		return total;
	while ((next = skb_peek(list)) &&
	       skb_queue_len(run) < SROCE_GSO_MAX_SEGS &&
	       next->len <= head->len &&
	       total + next->len <= SROCE_GSO_MAX_BYTES &&
	       !memcmp(next->cb, head->cb, sizeof(struct sroce_xmit_addr))) {
		__skb_unlink(next, list);
		__skb_queue_tail(run, next);
		total += next->len;
	}
	return total;
}

/* The tx_drop fault knob (tests only): take its packets off @list. */
static void sroce_fault_tx(struct sroce_qp *qp, struct sk_buff_head *list)
{
	struct sroce_fault *f = &qp->sdev->fault;
	struct sk_buff *skb, *tmp;

	skb_queue_walk_safe(list, skb, tmp) {
		if (!sroce_fault_hit(&f->tx_drop))
			continue;
		__skb_unlink(skb, list);
		kfree_skb(skb);
		sroce_qp_count(qp, SROCE_CNT_FAULTS, 1);
	}
}

/*
 * Send packets whose BTH..ICRC the caller built, each with its address in
 * skb->cb; consumes the list. For a connected QP (@cache set) consecutive
 * packets to its peer go as one burst; UD and GSI packets go one by one:
 * runs to one peer are rare there, and with bursts of GSI MADs the rdma_cm
 * test saw connections rejected now and then (cause not found). A packet
 * the stack drops is recovered by RC retransmission. Counted for @qp:
 * packets and bytes (BTH through ICRC) sent, or packets the stack refused.
 */
static void sroce_xmit_list(struct sroce_qp *qp, struct dst_cache *cache,
			    struct sk_buff_head *list)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_xmit_addr xa;
	struct sk_buff_head run;
	struct sk_buff *skb;
	unsigned int n, bytes;
	int ret;

	__skb_queue_head_init(&run);
	if (unlikely(READ_ONCE(sdev->fault.tx_drop)))
		sroce_fault_tx(qp, list);
	if (trace_sroce_xmit_enabled())
		skb_queue_walk(list, skb)
			trace_sroce_xmit(qp->ibqp.qp_num, skb->data, skb->len);
	/*
	 * The doorbell and the work item send too, in process context: the
	 * dst cache is per CPU and shared with the ACK softirq, so its users
	 * must keep bottom halves off (dst_cache.h).
	 */
	local_bh_disable();
	while ((skb = __skb_dequeue(list))) {
		memcpy(&xa, skb->cb, sizeof(xa));
		__skb_queue_tail(&run, skb);
		bytes = cache ? sroce_xmit_take_run(list, &run, skb) : skb->len;
		n = skb_queue_len(&run);
		ret = xa.ipv6 ? sroce_xmit6(sdev, cache, &xa, &run) :
				sroce_xmit4(sdev, cache, &xa, &run);
		if (ret && ret != NET_XMIT_CN) {
			sroce_qp_count(qp, SROCE_CNT_TX_ERRORS, n);
		} else {
			sroce_qp_count(qp, SROCE_CNT_TX_PACKETS, n);
			sroce_qp_count(qp, SROCE_CNT_TX_BYTES, bytes);
		}
	}
	local_bh_enable();
}

/* Send packets built under a QP lock, after dropping it. */
void sroce_qp_xmit_list(struct sroce_qp *qp, struct sk_buff_head *list)
{
	/* A lost packet is recovered by the retransmit timer (RC). */
	sroce_xmit_list(qp, sroce_qp_connected(qp) ? &qp->dst_cache : NULL,
			list);
}

/* ------------------------------------------------------------------------
 * Receive: up to the handler
 */

static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct sroce_dev *sdev;

	rcu_read_lock();
	sdev = sroce_rx_dev(ndev, sock_net(sk));
	if (!sdev && is_vlan_dev(ndev))
		sdev = sroce_rx_dev(vlan_dev_real_dev(ndev), sock_net(sk));
	if (sdev)
		sroce_rx_handler(sdev, skb);
	else
		kfree_skb(skb);
	rcu_read_unlock();
	return 0;
}

/* ------------------------------------------------------------------------
 * Sockets and device registration with the receive path
 */

static struct socket *sroce_udp_sock(struct net *net, bool ipv6)
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
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tnl);
	return sock;
}

static void sroce_socks_release(struct sroce_socks *socks)
{
	if (socks->sk6)
		udp_tunnel_sock_release(socks->sk6);
	if (socks->sk4)
		udp_tunnel_sock_release(socks->sk4);
	kfree(socks);
}

static struct sroce_socks *sroce_socks_open(struct net *net)
{
	struct sroce_socks *socks;
	struct socket *sock;

	socks = kzalloc(sizeof(*socks), GFP_KERNEL);
	if (!socks)
		return ERR_PTR(-ENOMEM);
	socks->net = net;
	sock = sroce_udp_sock(net, false);
	if (IS_ERR(sock)) {
		pr_err("sroce: cannot open UDP port %u (is rdma_rxe loaded?): %ld\n",
		       SROCE_UDP_PORT, PTR_ERR(sock));
		kfree(socks);
		return ERR_CAST(sock);
	}
	socks->sk4 = sock;

	if (IS_ENABLED(CONFIG_IPV6)) {
		sock = sroce_udp_sock(net, true);
		/* IPv6 may be disabled at boot: carry on with IPv4 only. */
		if (IS_ERR(sock) && PTR_ERR(sock) != -EAFNOSUPPORT) {
			sroce_socks_release(socks);
			return ERR_CAST(sock);
		}
		if (!IS_ERR(sock))
			socks->sk6 = sock;
	}
	return socks;
}

/* The sockets of @net, opened if it has none; sroce_socks_lock held. */
static struct sroce_socks *sroce_socks_get(struct net *net)
{
	struct sroce_socks *socks;

	list_for_each_entry(socks, &sroce_socks_list, list) {
		if (net_eq(socks->net, net)) {
			socks->users++;
			return socks;
		}
	}
	socks = sroce_socks_open(net);
	if (IS_ERR(socks))
		return socks;
	socks->users = 1;
	list_add_tail(&socks->list, &sroce_socks_list);
	return socks;
}

int sroce_net_dev_init(struct sroce_dev *sdev)
{
	struct sroce_socks *socks;

	mutex_lock(&sroce_socks_lock);
	socks = sroce_socks_get(dev_net(sdev->ndev));
	if (!IS_ERR(socks)) {
		sdev->socks = socks;
		sdev->net = socks->net;
		spin_lock_bh(&sroce_rx_lock);
		list_add_tail_rcu(&sdev->rx_list, &sroce_rx_list);
		spin_unlock_bh(&sroce_rx_lock);
	}
	mutex_unlock(&sroce_socks_lock);
	return PTR_ERR_OR_ZERO(socks);
}

void sroce_net_dev_cleanup(struct sroce_dev *sdev)
{
	struct sroce_socks *socks = sdev->socks;

	mutex_lock(&sroce_socks_lock);
	spin_lock_bh(&sroce_rx_lock);
	list_del_rcu(&sdev->rx_list);
	spin_unlock_bh(&sroce_rx_lock);
	/* No receive path may still look at the device once it is freed. */
	synchronize_net();
	sdev->socks = NULL;
	if (!WARN_ON(!socks->users) && !--socks->users) {
		list_del(&socks->list);
		sroce_socks_release(socks);
	}
	mutex_unlock(&sroce_socks_lock);
}

void sroce_net_init(void (*rcv)(struct sroce_dev *sdev, struct sk_buff *skb))
{
	sroce_rx_handler = rcv;
}

void sroce_net_exit(void)
{
	WARN_ON(!list_empty(&sroce_socks_list));
	/* Packets still queued keep their own page references. */
	sroce_frag_cache_free();
}
