// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: software RoCEv2 device.
 *
 * Module life cycle, `rdma link add NAME type sroce netdev DEV`, the netdev
 * notifier that drives port state, and registration of the ib_device.
 */
#include <linux/if_arp.h>
#include <linux/etherdevice.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <rdma/rdma_netlink.h>

#include "sroce_verbs.h"
#include "sroce_engine.h"
#include "sroce_cq.h"
#include "sroce_srq.h"
#include "sroce_compat.h"
#include "sroce_net.h"

#define CREATE_TRACE_POINTS
#include "sroce_trace.h"

MODULE_AUTHOR("sroce developers");
MODULE_DESCRIPTION("Software RoCEv2 device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK(SROCE_LINK_TYPE);

/*
 * Every sroce device, so that netdev events and module unload can find
 * them. An entry is added before ib_register_device() (so two concurrent
 * `rdma link add` on one netdev cannot both succeed) and removed in
 * sroce_dealloc_driver(), once the core has finished with the device.
 */
static LIST_HEAD(sroce_dev_list);
static DEFINE_MUTEX(sroce_dev_lock);
/* Set at module exit: netdev events no longer queue unregistrations. */
static bool sroce_exiting;

static struct sroce_dev *sroce_find_locked(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_dev_lock);
	list_for_each_entry(sdev, &sroce_dev_list, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* The largest IBA MTU whose RoCEv2 packets fit in a netdev MTU of @mtu. */
enum ib_mtu sroce_mtu_from_netdev(unsigned int mtu)
{
	/* IPv6 + UDP + BTH + the largest extension headers + ICRC */
	unsigned int room = mtu > SROCE_MAX_HDR_LEN ? mtu - SROCE_MAX_HDR_LEN : 0;

	if (room >= 4096)
		return IB_MTU_4096;
	if (room >= 2048)
		return IB_MTU_2048;
	if (room >= 1024)
		return IB_MTU_1024;
	if (room >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

static void sroce_dispatch_port_event(struct sroce_dev *sdev,
				      enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/*
 * Recompute port state and MTU from the netdev; raise PORT_ACTIVE/PORT_ERR
 * on a state change. Called from netdev notifier context (RTNL held) and at
 * registration.
 */
void sroce_port_update(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	enum ib_port_state state, old;
	unsigned long flags;
	bool registered;

	state = netif_running(ndev) && netif_carrier_ok(ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;

	spin_lock_irqsave(&sdev->port_lock, flags);
	old = sdev->port_state;
	sdev->port_state = state;
	sdev->netdev_mtu = READ_ONCE(ndev->mtu);
	sdev->active_mtu = sroce_mtu_from_netdev(sdev->netdev_mtu);
	registered = sdev->registered;
	spin_unlock_irqrestore(&sdev->port_lock, flags);

	/* No events before the core has set the device up (enable_driver). */
	if (old == state || !registered)
		return;
	sroce_dbg(sdev, "port %s\n", state == IB_PORT_ACTIVE ? "active" : "down");
	sroce_dispatch_port_event(sdev, state == IB_PORT_ACTIVE ?
				  IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
}

static ssize_t sroce_abi_show(struct device *device,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", SROCE_UVERBS_ABI_VERSION);
}

/*
 * The provider matches sroce devices by this attribute, whatever the link
 * is named (the driver id is RDMA_DRIVER_UNKNOWN: we have no id of our own
 * in the kernel's enum, and a name prefix is the user's choice).
 */
static struct device_attribute dev_attr_sroce_abi =
	__ATTR(sroce_abi, 0444, sroce_abi_show, NULL);

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(parent);

static struct attribute *sroce_dev_attrs[] = {
	&dev_attr_sroce_abi.attr,
	&dev_attr_parent.attr,
	NULL,
};

static const struct attribute_group sroce_attr_group = {
	.attrs = sroce_dev_attrs,
};

/*
 * Called by the core (possibly from its unregistration workqueue) as the
 * last step of unregistering. The device leaves sroce_dev_list only at the
 * very end, so that module exit, which unregisters what is still listed,
 * waits for a concurrent unregistration instead of unloading under it.
 */
static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	WARN_ON(!xa_empty(&sdev->qp_xa));
	WARN_ON(!xa_empty(&sdev->key_xa));
	sroce_debugfs_dev_del(sdev);
	xa_destroy(&sdev->qp_xa);
	xa_destroy(&sdev->key_xa);
	xa_destroy(&sdev->srq_xa);
	xa_destroy(&sdev->xrc_srq_xa);
	xa_destroy(&sdev->ah_xa);
	mutex_destroy(&sdev->pma_lock);
	sroce_counters_cleanup(sdev);
	sroce_mcast_cleanup(sdev);
	sroce_net_dev_cleanup(sdev);
	dev_put(sdev->ndev);

	mutex_lock(&sroce_dev_lock);
	list_del(&sdev->list);
	mutex_unlock(&sroce_dev_lock);
}

/* Called by ib_register_device() once the device is fully set up. */
static int sroce_enable_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	unsigned long flags;

	spin_lock_irqsave(&sdev->port_lock, flags);
	sdev->registered = true;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	sroce_debugfs_dev_add(sdev);
	return 0;
}

/*
 * With disassociate_ucontext set, uverbs does not pin the module while user
 * contexts are open: link delete and rmmod destroy the user's objects and
 * zap its ring mappings; everything is freed through the normal destroy
 * verbs and sroce_mmap_free().
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * The core adds GIDs for the addresses of every upper device of the link's
 * netdev: a macvlan or VLAN device moved into a container's namespace
 * too. This device routes and receives in its own namespace only, so it
 * cannot serve those; listed, they would also draw rdma_cm (shared netns
 * mode) to it instead of the device made in the container for that
 * macvlan. Refuse them (rxe takes them, and cannot serve them either).
 * The core logs each refusal ("GID add failed").
 */
/* Refuses GIDs sroce could not route (sroce_gid_attr_oif()). */
static int sroce_add_gid(const struct ib_gid_attr *attr, void **context)
{
	int oif = sroce_gid_attr_oif(attr);

	return oif < 0 ? oif : 0;
}

static int sroce_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return 0;
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.add_gid = sroce_add_gid,
	.alloc_dm = sroce_alloc_dm,
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.alloc_xrcd = sroce_alloc_xrcd,
	.attach_mcast = sroce_attach_mcast,
	.counter_alloc_stats = sroce_counter_alloc_stats,
	.counter_bind_qp = sroce_counter_bind_qp,
	.counter_dealloc = sroce_counter_dealloc,
	.counter_unbind_qp = sroce_counter_unbind_qp,
	.counter_update_stats = sroce_counter_update_stats,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.create_user_ah = sroce_create_ah,
	.dealloc_dm = sroce_dealloc_dm,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.dealloc_xrcd = sroce_dealloc_xrcd,
	.del_gid = sroce_del_gid,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = sroce_detach_mcast,
	.device_group = &sroce_attr_group,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.enable_driver = sroce_enable_driver,
	.fill_res_cq_entry = sroce_fill_res_cq_entry,
	.fill_res_cq_entry_raw = sroce_fill_res_cq_entry_raw,
	.fill_res_mr_entry = sroce_fill_res_mr_entry,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.fill_res_qp_entry_raw = sroce_fill_res_qp_entry_raw,
	SROCE_OP_FILL_RES_SRQ(sroce_fill_res_srq_entry)
	.get_dev_fw_str = sroce_get_dev_fw_str,
	.get_dma_mr = sroce_get_dma_mr,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.get_netdev = sroce_get_netdev,
	.get_port_immutable = sroce_get_port_immutable,
	.map_mr_sg = sroce_map_mr_sg,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_ah = sroce_query_ah,
	.query_device = sroce_query_device,
	.process_mad = sroce_process_mad,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.advise_mr = sroce_advise_mr,
	.reg_dm_mr = sroce_reg_dm_mr,
	.reg_user_mr = sroce_reg_user_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.rereg_user_mr = sroce_rereg_user_mr,
	.resize_cq = sroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ibxrcd),
};

static void sroce_init_attr(struct sroce_dev *sdev)
{
	struct ib_device_attr *a = &sdev->attr;

	a->fw_ver = 1;
	a->vendor_id = SROCE_VENDOR_ID;
	a->max_mr_size = U64_MAX;
	a->page_size_cap = 0xfffff000;
	a->max_qp = SROCE_MAX_QP;
	a->max_qp_wr = SROCE_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_BAD_PKEY_CNTR |
			      IB_DEVICE_BAD_QKEY_CNTR |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_XRC |
			      SROCE_DEVICE_FLUSH_GLOBAL;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	if (IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)) {
		/*
		 * sroce_odp.c: RC and XRC in full (XRC receives only from
		 * SRQs); UC and UD from ODP memory only (a receive that
		 * misses a page is dropped: neither can ask the sender to
		 * wait). Implicit regions too (sroce_odp.c).
		 */
		a->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
		a->odp_caps.general_caps = IB_ODP_SUPPORT |
					   IB_ODP_SUPPORT_IMPLICIT;
		a->odp_caps.per_transport_caps.rc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
			IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
		a->odp_caps.per_transport_caps.xrc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_WRITE |
			IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
			IB_ODP_SUPPORT_SRQ_RECV;
		a->odp_caps.per_transport_caps.uc_odp_caps =
			IB_ODP_SUPPORT_SEND;
		a->odp_caps.per_transport_caps.ud_odp_caps =
			IB_ODP_SUPPORT_SEND;
	}
	a->max_send_sge = SROCE_MAX_SGE;
	a->max_recv_sge = SROCE_MAX_SGE;
	a->max_sge_rd = SROCE_MAX_SGE_RD;
	a->max_cq = SROCE_MAX_CQ;
	a->max_cqe = SROCE_MAX_CQE;
	a->max_mr = SROCE_MAX_MR;
	/* CQE timestamps are CLOCK_MONOTONIC_RAW in ns: a 1 GHz clock. */
	a->timestamp_mask = U64_MAX;
	a->hca_core_clock = 1000000;	/* kHz */
	a->max_mw = SROCE_MAX_MW;
	a->max_dm_size = SROCE_MAX_DM_SIZE;
	a->max_pd = SROCE_MAX_PD;
	a->max_qp_rd_atom = SROCE_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = SROCE_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = SROCE_MAX_RES_RD_ATOM;
	a->atomic_cap = IB_ATOMIC_HCA;
	a->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
				       SROCE_MAX_MCAST_QP_ATTACH;
	a->max_ah = SROCE_MAX_AH;
	a->max_srq = SROCE_MAX_SRQ;
	a->max_srq_wr = SROCE_MAX_SRQ_WR;
	a->max_srq_sge = SROCE_MAX_SRQ_SGE;
	a->max_fast_reg_page_list_len = SROCE_MAX_FRPL_LEN;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = SROCE_LOCAL_ACK_DELAY;
	addrconf_addr_eui48((unsigned char *)&a->sys_image_guid,
			    sdev->ndev->dev_addr);
}

static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	struct ib_device *ibdev;
	int err;

	if (ndev->type != ARPHRD_ETHER || !is_valid_ether_addr(ndev->dev_addr))
		return -EINVAL;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	ibdev = &sdev->ibdev;

	dev_hold(ndev);
	sdev->ndev = ndev;
	spin_lock_init(&sdev->port_lock);
	sdev->port_state = IB_PORT_DOWN;
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->key_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->xrc_srq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->counter_xa, XA_FLAGS_ALLOC1);
	mutex_init(&sdev->pma_lock);
	spin_lock_init(&sdev->mcg_lock);
	INIT_LIST_HEAD(&sdev->mcg_list);
	sroce_init_attr(sdev);

	strscpy(ibdev->node_desc, SROCE_DRV_NAME, sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid, ndev->dev_addr);
	/* POLL_CQ on a user CQ is the busy poll (sroce_cq.c). */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	/*
	 * Unlike rxe, give the ib_device the netdev's parent, so that
	 * /sys/class/infiniband/NAME/device/net/ lists the netdev (rdma_cm
	 * tooling looks there). Purely virtual netdevs have no parent.
	 */
	ibdev->dev.parent = ndev->dev.parent;
	ib_set_device_ops(ibdev, &sroce_dev_ops);
	ibdev->driver_def = sroce_uapi_defs;

	mutex_lock(&sroce_dev_lock);
	if (sroce_find_locked(ndev)) {
		mutex_unlock(&sroce_dev_lock);
		err = -EEXIST;
		goto err_free;
	}
	list_add_tail(&sdev->list, &sroce_dev_list);
	mutex_unlock(&sroce_dev_lock);

	err = sroce_net_dev_init(sdev);
	if (err)
		goto err_unlist;
	err = ib_device_set_netdev(ibdev, ndev, 1);
	if (err)
		goto err_net;

	rtnl_lock();
	sroce_port_update(sdev);
	rtnl_unlock();

	/* From here on the core owns sdev and frees it via dealloc_driver. */
	err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err) {
		ibdev_warn(ibdev, "registration failed: %d\n", err);
		ib_dealloc_device(ibdev);
		return err;
	}
	return 0;

err_net:
	sroce_net_dev_cleanup(sdev);
err_unlist:
	mutex_lock(&sroce_dev_lock);
	list_del(&sdev->list);
	mutex_unlock(&sroce_dev_lock);
err_free:
	/* Not yet registered: undo by hand, without dealloc_driver. */
	sdev->ibdev.ops.dealloc_driver = NULL;
	dev_put(ndev);
	ib_dealloc_device(ibdev);
	return err;
}

static struct rdma_link_ops sroce_link_ops = {
	.type = SROCE_LINK_TYPE,
	.newlink = sroce_newlink,
};

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	mutex_lock(&sroce_dev_lock);
	sdev = sroce_find_locked(ndev);
	if (!sdev || sroce_exiting)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * The core frees the device; dealloc_driver drops the netdev.
		 * The device stays listed until then, so "rdma link delete"
		 * may already be unregistering it (its refcount gone to zero):
		 * queueing a second unregistration then trips the core's
		 * WARN_ON, and the one under way finishes the job anyway.
		 */
		if (ib_device_try_get(&sdev->ibdev)) {
			ib_unregister_device_queued(&sdev->ibdev);
			ib_device_put(&sdev->ibdev);
		}
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sroce_port_update(sdev);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&sroce_dev_lock);
	return NOTIFY_OK;
}

static struct notifier_block sroce_netdev_nb = {
	.notifier_call = sroce_netdev_event,
};

/*
 * Unregister every device, or those of namespace @net. A device whose
 * unregistration the core already queued (its netdev went away) stays
 * listed until its dealloc_driver has run; ib_unregister_device() on it
 * waits for that to finish.
 */
static void sroce_unregister_devices(struct net *net)
{
	struct sroce_dev *sdev, *found;

	for (;;) {
		found = NULL;
		mutex_lock(&sroce_dev_lock);
		list_for_each_entry(sdev, &sroce_dev_list, list) {
			if (!net || net_eq(sdev->net, net)) {
				get_device(&sdev->ibdev.dev);
				found = sdev;
				break;
			}
		}
		mutex_unlock(&sroce_dev_lock);
		if (!found)
			break;
		ib_unregister_device(&found->ibdev);
		put_device(&found->ibdev.dev);
		/* Let a concurrent dealloc_driver reach its list_del. */
		cond_resched();
	}
}

/*
 * A namespace going away. Its netdevs are already unregistered or moved to
 * init_net (the core runs device exits before subsystem exits), which
 * queued the unregistration of their sroce devices; finish those here, so
 * that the last of them closes the namespace's sockets before the
 * namespace is freed.
 */
static void sroce_net_ns_exit(struct net *net)
{
	sroce_unregister_devices(net);
}

static struct pernet_operations sroce_net_ops = {
	.exit = sroce_net_ns_exit,
};

static int __init sroce_module_init(void)
{
	int err;

	sroce_wq = alloc_workqueue("sroce", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!sroce_wq)
		return -ENOMEM;
	err = sroce_odp_wq_init();
	if (err)
		goto err_odp;
	/* Received packets go to the receive dispatch (sroce_recv.c). */
	sroce_net_init(sroce_rcv);
	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		goto err_net;
	err = register_netdevice_notifier(&sroce_netdev_nb);
	if (err)
		goto err_pernet;
	sroce_debugfs_init();
	rdma_link_register(&sroce_link_ops);
	pr_info("sroce: loaded (ABI %u)\n", SROCE_UVERBS_ABI_VERSION);
	return 0;

err_pernet:
	unregister_pernet_subsys(&sroce_net_ops);
err_net:
	sroce_net_exit();
	sroce_odp_wq_exit();
err_odp:
	destroy_workqueue(sroce_wq);
	return err;
}

static void __exit sroce_module_exit(void)
{
	rdma_link_unregister(&sroce_link_ops);
	/*
	 * unregister_netdevice_notifier() replays DOWN and UNREGISTER for
	 * every netdev: they must not queue unregistrations that would run
	 * after the module is gone.
	 */
	mutex_lock(&sroce_dev_lock);
	sroce_exiting = true;
	mutex_unlock(&sroce_dev_lock);
	unregister_netdevice_notifier(&sroce_netdev_nb);
	sroce_unregister_devices(NULL);
	unregister_pernet_subsys(&sroce_net_ops);
	sroce_net_exit();
	sroce_odp_wq_exit();
	destroy_workqueue(sroce_wq);
	sroce_debugfs_exit();
	pr_info("sroce: unloaded\n");
}

module_init(sroce_module_init);
module_exit(sroce_module_exit);
