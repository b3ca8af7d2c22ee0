// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: multicast groups of UD QPs (IBA 10.5, RoCEv2 Annex A17.4.5).
 *
 * A UD QP attached to a multicast GID receives every UD packet sent to that
 * group with destination QP 0xFFFFFF. The group's IP membership (IGMP/MLD,
 * hence the netdev's multicast filter) is joined by the consumer, as
 * rdma_cm does for RoCE; the device only maps GIDs to attached QPs.
 * Sending to a group is an ordinary UD send whose address vector holds the
 * multicast GID: the IP stack maps it to the Ethernet multicast MAC and
 * loops a copy back to local members.
 */
#include <rdma/ib_addr.h>

#include "sroce_engine.h"
#include "sroce_verbs.h"

struct sroce_mcg {
	struct list_head node;		/* sdev->mcg_list */
	u8 mgid[16];
	u32 nqps;
	struct sroce_qp *qps[SROCE_MAX_MCAST_QP_ATTACH];
};

static struct sroce_mcg *sroce_mcg_find(struct sroce_dev *sdev,
					const u8 *mgid)
{
	struct sroce_mcg *g;

	lockdep_assert_held(&sdev->mcg_lock);
	list_for_each_entry(g, &sdev->mcg_list, node)
		if (!memcmp(g->mgid, mgid, sizeof(g->mgid)))
			return g;
	return NULL;
}

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *g, *new;
	int err = 0;
	u32 i;

	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;

	spin_lock_bh(&sdev->mcg_lock);
	g = sroce_mcg_find(sdev, gid->raw);
	if (!g) {
		if (sdev->num_mcg >= SROCE_MAX_MCAST_GRP) {
			err = -ENOMEM;
			goto out;
		}
		g = new;
		new = NULL;
		memcpy(g->mgid, gid->raw, sizeof(g->mgid));
		list_add_tail(&g->node, &sdev->mcg_list);
		sdev->num_mcg++;
	}
	for (i = 0; i < g->nqps; i++)
		if (g->qps[i] == qp)
			goto out;	/* attaching twice is not an error */
	if (g->nqps == ARRAY_SIZE(g->qps)) {
		err = -ENOMEM;
		goto out;
	}
	g->qps[g->nqps++] = qp;
out:
	spin_unlock_bh(&sdev->mcg_lock);
	kfree(new);
	return err;
}

static void sroce_mcg_remove_qp(struct sroce_dev *sdev, struct sroce_mcg *g,
				struct sroce_qp *qp, struct list_head *freed)
{
	u32 i;

	for (i = 0; i < g->nqps; i++) {
		if (g->qps[i] != qp)
			continue;
		g->qps[i] = g->qps[--g->nqps];
		break;
	}
	if (!g->nqps) {
		list_move(&g->node, freed);
		sdev->num_mcg--;
	}
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_mcg *g, *tmp;
	LIST_HEAD(freed);
	int err = -EINVAL;

	spin_lock_bh(&sdev->mcg_lock);
	g = sroce_mcg_find(sdev, gid->raw);
	if (g) {
		sroce_mcg_remove_qp(sdev, g, to_sqp(ibqp), &freed);
		err = 0;
	}
	spin_unlock_bh(&sdev->mcg_lock);
	list_for_each_entry_safe(g, tmp, &freed, node)
		kfree(g);
	return err;
}

/* Destroying a QP detaches it from every group it is still in. */
void sroce_mcast_qp_gone(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcg *g, *tmp;
	LIST_HEAD(freed);

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	spin_lock_bh(&sdev->mcg_lock);
	list_for_each_entry_safe(g, tmp, &sdev->mcg_list, node)
		sroce_mcg_remove_qp(sdev, g, qp, &freed);
	spin_unlock_bh(&sdev->mcg_lock);
	list_for_each_entry_safe(g, tmp, &freed, node)
		kfree(g);
}

void sroce_mcast_cleanup(struct sroce_dev *sdev)
{
	struct sroce_mcg *g, *tmp;

	list_for_each_entry_safe(g, tmp, &sdev->mcg_list, node)
		kfree(g);
	INIT_LIST_HEAD(&sdev->mcg_list);
}

/*
 * Deliver a UD packet for destination QP 0xFFFFFF to every QP attached to
 * the group of its destination address; softirq context.
 */
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
		     const struct sroce_pkt *pkt)
{
	struct sroce_qp *qps[SROCE_MAX_MCAST_QP_ATTACH];
	struct sroce_mcg *g;
	u8 mgid[16];
	u32 i, n = 0;

	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid);
	else
		memcpy(mgid, &ipv6_hdr(skb)->daddr, sizeof(mgid));

	spin_lock(&sdev->mcg_lock);
	g = sroce_mcg_find(sdev, mgid);
	for (i = 0; g && i < g->nqps; i++)
		if (sroce_qp_tryget(g->qps[i]->life))
			qps[n++] = g->qps[i];
	spin_unlock(&sdev->mcg_lock);

	if (!n)
		sroce_dev_count(sdev, SROCE_CNT_DROP(SROCE_DROP_NO_QP), 1);
	for (i = 0; i < n; i++) {
		sroce_resp_rcv(qps[i], skb, pkt);
		sroce_qp_put(qps[i]);
	}
}
