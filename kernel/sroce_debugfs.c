// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: debugfs, /sys/kernel/debug/sroce/DEV/.
 *
 *   qps           every QP of the device, by number, a block each
 *                 ended by an empty line: its attributes and where
 *                 its requester, completer and responder stand (the fields
 *                 of rdma resource show -dd, sroce_qp_details())
 *   fault/        fault injection for tests, one packet in N at random
 *                 (0: off):
 *                 rx_drop, rx_dup (received), tx_drop (to send),
 *                 alloc_fail (a packet buffer not given); counted as
 *                 faults_injected; ack_delay_ms: an RC ACK that would
 *                 leave alone waits that long (each such ACK counts);
 *                 lookup_delay_ms: a lookup by QP number waits that long
 *                 before it takes its reference, where it can be
 *                 preempted (a preemptible RCU kernel: the debug one);
 *                 poll_delay_ms: a POLL_CQ on a user CQ waits that long
 *                 between loading the ring's header and using it;
 *                 write_delay_ms: an RDMA WRITE packet waits that long,
 *                 busy in the receive context, between the lookup of its
 *                 rkey and the copy of its payload;
 *                 qpn_next: the QP number the next QP is given if free
 *                 (a test reuses a number without 2^24 creations)
 *
 * And /sys/kernel/debug/sroce/odp_stall, for every device: while it is
 * set, on-demand-paging faults wait before they fault (sroce_sgl.c).
 *
 * DEV is the device's name when it was registered; a device renamed
 * later keeps its directory's name. One file lists the QPs, not one file
 * per QP: creating a debugfs file (an inode and a dentry) cost about a
 * tenth of an RC QP's setup time on the test rig
 * (Documentation/benchmark.rst). A block is printed with a reference on
 * its QP, which destroy waits for.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "sroce_verbs.h"
#include "sroce_qp.h"

static struct dentry *sroce_dbg_root;

static const char *sroce_dbg_qp_type(enum ib_qp_type t)
{
	switch (t) {
	case IB_QPT_RC:
		return "RC";
	case IB_QPT_UC:
		return "UC";
	case IB_QPT_UD:
		return "UD";
	case IB_QPT_GSI:
		return "GSI";
	case IB_QPT_XRC_INI:
		return "XRC_INI";
	case IB_QPT_XRC_TGT:
		return "XRC_TGT";
	default:
		return "?";
	}
}

/*
 * The QP with the lowest number >= *pos, with a reference
 * (sroce_qp_get(): a QP being destroyed is skipped), and *pos set to its
 * number; NULL past the last.
 */
static struct sroce_qp *sroce_dbg_qps_find(struct sroce_dev *sdev,
					   loff_t *pos)
{
	unsigned long idx = *pos;
	struct sroce_qp *qp = NULL;

	/* xa_find() only names the next number; the QP is taken by it. */
	while (idx <= U32_MAX &&
	       xa_find(&sdev->qp_xa, &idx, U32_MAX, XA_PRESENT)) {
		qp = sroce_qp_get(sdev, idx);
		if (qp)
			break;
		idx++;
	}
	*pos = qp ? idx : (loff_t)U32_MAX + 1;
	return qp;
}

static void *sroce_dbg_qps_start(struct seq_file *m, loff_t *pos)
{
	return sroce_dbg_qps_find(m->private, pos);
}

static void *sroce_dbg_qps_next(struct seq_file *m, void *v, loff_t *pos)
{
	sroce_qp_put(v);
	++*pos;
	return sroce_dbg_qps_find(m->private, pos);
}

static void sroce_dbg_qps_stop(struct seq_file *m, void *v)
{
	if (v)
		sroce_qp_put(v);
}

static int sroce_dbg_qps_show(struct seq_file *m, void *v)
{
	struct sroce_qp *qp = v;
	struct sroce_detail d[SROCE_QP_DETAILS_MAX];
	unsigned int i, n;

	mutex_lock(&qp->modify_lock);
	seq_printf(m, "qpn %u\ntype %s\nstate %s\n", qp->ibqp.qp_num,
		   sroce_dbg_qp_type(qp->ibqp.qp_type),
		   sroce_qp_state_str(sroce_qp_state(qp)));
	seq_printf(m, "user %d\nsq_sig_all %d\nmax_inline %u\n", qp->is_user,
		   qp->sig_all, qp->max_inline);
	seq_printf(m, "max_send_sge %u\nmax_recv_sge %u\n", qp->max_send_sge,
		   qp->max_recv_sge);
	if (sroce_qp_connected(qp)) {
		seq_printf(m, "dest_qpn %u\ninit_sq_psn %u\ninit_rq_psn %u\n",
			   qp->dest_qpn, qp->sq_psn, qp->rq_psn);
		seq_printf(m, "path_mtu %u\nsgid %pI6c\ndgid %pI6c\n",
			   ib_mtu_enum_to_int(qp->path_mtu), qp->path.sgid,
			   qp->path.av.dgid);
		seq_printf(m, "udp_sport %u\nifindex %d\nvlan_id %u\n",
			   qp->path.udp_sport, qp->path.oif, qp->path.vlan_id);
		seq_printf(m, "timeout %u\nretry_cnt %u\nrnr_retry %u\n",
			   qp->timeout, qp->retry_cnt, qp->rnr_retry);
		seq_printf(m, "min_rnr_timer %u\nmax_rd_atomic %u\n",
			   qp->min_rnr_timer, qp->max_rd_atomic);
		seq_printf(m, "max_dest_rd_atomic %u\naccess_flags 0x%x\n",
			   qp->max_dest_rd_atomic, qp->access_flags);
	} else {
		seq_printf(m, "qkey 0x%x\n", qp->qkey);
	}
	mutex_unlock(&qp->modify_lock);

	n = sroce_qp_details(qp, d);
	for (i = 0; i < n; i++)
		seq_printf(m, "%s %u\n", d[i].name, d[i].val);
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations sroce_dbg_qps_sops = {
	.start = sroce_dbg_qps_start,
	.next = sroce_dbg_qps_next,
	.stop = sroce_dbg_qps_stop,
	.show = sroce_dbg_qps_show,
};
DEFINE_SEQ_ATTRIBUTE(sroce_dbg_qps);

/*
 * Called once the device has its final name (enable_driver). The core
 * enables a device again after each move to another network namespace
 * ("rdma dev set NAME netns NS"): the folder made the first time stays,
 * until the device is deallocated. The folder keeps the
 * name the device had then ("rdma dev set NAME name NEW" does not tell the
 * driver).
 */
void sroce_debugfs_dev_add(struct sroce_dev *sdev)
{
	struct dentry *fault;

	if (IS_ERR_OR_NULL(sroce_dbg_root) || sdev->dbg)
		return;
	sdev->dbg = debugfs_create_dir(dev_name(&sdev->ibdev.dev),
				       sroce_dbg_root);
	debugfs_create_file("qps", 0400, sdev->dbg, sdev, &sroce_dbg_qps_fops);
	fault = debugfs_create_dir("fault", sdev->dbg);
	debugfs_create_u32("rx_drop", 0600, fault, &sdev->fault.rx_drop);
	debugfs_create_u32("rx_dup", 0600, fault, &sdev->fault.rx_dup);
	debugfs_create_u32("tx_drop", 0600, fault, &sdev->fault.tx_drop);
	debugfs_create_u32("alloc_fail", 0600, fault, &sdev->fault.alloc_fail);
	debugfs_create_u32("ack_delay_ms", 0600, fault,
			   &sdev->fault.ack_delay_ms);
	debugfs_create_u32("lookup_delay_ms", 0600, fault,
			   &sdev->fault.lookup_delay_ms);
	debugfs_create_u32("poll_delay_ms", 0600, fault,
			   &sdev->fault.poll_delay_ms);
	debugfs_create_u32("write_delay_ms", 0600, fault,
			   &sdev->fault.write_delay_ms);
	debugfs_create_u32("qpn_next", 0600, fault, &sdev->qpn_next);
}

void sroce_debugfs_dev_del(struct sroce_dev *sdev)
{
	debugfs_remove(sdev->dbg);
	sdev->dbg = NULL;
}

void sroce_debugfs_init(void)
{
	sroce_dbg_root = debugfs_create_dir("sroce", NULL);
	debugfs_create_bool("odp_stall", 0600, sroce_dbg_root,
			    &sroce_odp_stall);
}

void sroce_debugfs_exit(void)
{
	debugfs_remove(sroce_dbg_root);
}
