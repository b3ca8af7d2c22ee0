// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: device and port queries, user contexts, protection domains and
 * address handles. Verbs entry points only: no data path here.
 */
#include <linux/ethtool.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "sroce_verbs.h"

int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	if (udata->inlen || udata->outlen)
		return -EINVAL;
	*attr = sdev->attr;
	return 0;
}

int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	unsigned long flags;
	int err;

	/* *attr was zeroed by the core. */
	spin_lock_irqsave(&sdev->port_lock, flags);
	attr->state = sdev->port_state;
	attr->active_mtu = sdev->active_mtu;
	spin_unlock_irqrestore(&sdev->port_lock, flags);

	attr->max_mtu = IB_MTU_4096;
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;

	/* Fails once the netdev is going away: report a default speed. */
	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (err) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
		err = 0;
	}

	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (dev_get_flags(sdev->ndev) & IFF_UP)
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	return err;
}

int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *imm)
{
	struct ib_port_attr attr = {};
	int err;

	/* RoCEv2 only: ib_core then populates UDP-encapsulation GIDs only. */
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	imm->pkey_tbl_len = attr.pkey_tbl_len;
	imm->gid_tbl_len = attr.gid_tbl_len;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

struct net_device *sroce_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev = to_sdev(ibdev)->ndev;

	dev_hold(ndev);
	return ndev;
}

void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SROCE_FW_VERSION);
}

int sroce_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(uctx->device);
	struct sroce_alloc_ucontext_resp resp = {
		.abi_version = SROCE_UVERBS_ABI_VERSION,
		.ring_hdr_size = SROCE_RING_HDR_SIZE,
		.send_wqe_hdr_size = SROCE_SEND_WQE_HDR_SIZE,
		.recv_wqe_hdr_size = SROCE_RECV_WQE_HDR_SIZE,
		.cqe_size = SROCE_CQE_SIZE,
		.max_inline = SROCE_MAX_INLINE,
		.max_send_sge = SROCE_MAX_SGE,
		.max_recv_sge = SROCE_MAX_SGE,
	};
	int err;

	if (udata->outlen) {
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			return err;
	}
	atomic_inc(&sdev->num_ucontext);
	return 0;
}

void sroce_dealloc_ucontext(struct ib_ucontext *uctx)
{
	atomic_dec(&to_sdev(uctx->device)->num_ucontext);
}

int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);

	if (atomic_inc_return(&sdev->num_pd) > SROCE_MAX_PD) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pd);
	return 0;
}

/*
 * XRC domains hold nothing of ours: ib_core keeps their SRQs and targets
 * and refuses to free one in use. Counted against the PD limit.
 */
int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibxrcd->device);

	if (atomic_inc_return(&sdev->num_xrcd) > SROCE_MAX_PD) {
		atomic_dec(&sdev->num_xrcd);
		return -ENOMEM;
	}
	return 0;
}

int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibxrcd->device)->num_xrcd);
	return 0;
}

/*
 * Resolve a RoCEv2 address vector. The core has already resolved the
 * source GID entry (grh.sgid_attr) and the destination MAC (roce.dmac).
 */
int sroce_av_from_ah_attr(struct sroce_dev *sdev, struct sroce_av *av,
			  const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	switch (rdma_gid_attr_network_type(sgid_attr)) {
	case RDMA_NETWORK_IPV4:
		av->network_type = SROCE_NETWORK_IPV4;
		break;
	case RDMA_NETWORK_IPV6:
		av->network_type = SROCE_NETWORK_IPV6;
		break;
	default:
		/* RoCE v1 and IB GIDs are not ours. */
		return -EINVAL;
	}
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	av->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	av->sgid_index = sgid_attr->index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	if (attr->type == RDMA_AH_ATTR_TYPE_ROCE)
		memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	return 0;
}

/*
 * Kernel AHs may be created and destroyed in atomic context (without
 * RDMA_CREATE_AH_SLEEPABLE / RDMA_DESTROY_AH_SLEEPABLE), possibly with
 * interrupts disabled: never re-enable them.
 */
static int sroce_ah_num_alloc(struct sroce_dev *sdev, struct sroce_ah *ah,
			      u32 *ah_num, bool sleepable)
{
	unsigned long flags;
	int err;

	if (sleepable) {
		err = xa_alloc_cyclic_irq(&sdev->ah_xa, ah_num, ah,
					  XA_LIMIT(1, SROCE_MAX_AH),
					  &sdev->ah_next, GFP_KERNEL);
	} else {
		xa_lock_irqsave(&sdev->ah_xa, flags);
		err = __xa_alloc_cyclic(&sdev->ah_xa, ah_num, ah,
					XA_LIMIT(1, SROCE_MAX_AH),
					&sdev->ah_next, GFP_ATOMIC);
		xa_unlock_irqrestore(&sdev->ah_xa, flags);
	}
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	return 0;
}

static void sroce_ah_num_free(struct sroce_dev *sdev, u32 ah_num)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_erase(&sdev->ah_xa, ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	struct sroce_create_ah_resp resp = {};
	u32 ah_num;
	int err;

	err = sroce_av_from_ah_attr(sdev, &ah->av, init->ah_attr);
	if (err)
		return err;

	err = sroce_ah_num_alloc(sdev, ah, &ah_num,
				 init->flags & RDMA_CREATE_AH_SLEEPABLE);
	if (err)
		return err;
	ah->ah_num = ah_num;
	atomic_inc(&sdev->num_ah);

	if (udata && udata->outlen) {
		resp.ah_num = ah_num;
		resp.av = ah->av;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err) {
			sroce_ah_num_free(sdev, ah_num);
			atomic_dec(&sdev->num_ah);
			return err;
		}
	}
	return 0;
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct sroce_ah *ah = to_sah(ibah);

	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	rdma_ah_set_grh(attr, NULL, ah->av.flow_label, ah->av.sgid_index,
			ah->av.hop_limit, ah->av.traffic_class);
	rdma_ah_set_dgid_raw(attr, ah->av.dgid);
	if (attr->type == RDMA_AH_ATTR_TYPE_ROCE)
		memcpy(attr->roce.dmac, ah->av.dmac, ETH_ALEN);
	rdma_ah_set_port_num(attr, 1);
	return 0;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);

	sroce_ah_num_free(sdev, ah->ah_num);
	atomic_dec(&sdev->num_ah);
	return 0;
}
