// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce_ktest: a kernel consumer of an RDMA device, for the tests of what
 * only kernel consumers can do (fast registration: IB_WR_REG_MR and
 * IB_WR_LOCAL_INV). Loading it runs one test on the device named by dev=
 * and logs what it saw; the load fails (-EIO) when the test failed, and
 * the module is removed again by the test script. Built with sroce.ko by
 * the test rig (SROCE_KTEST=m, tools/kbuild.sh), never installed.
 *
 *   test=frwr_inval  (selftests/frwr_inval.sh) An RDMA WRITE into a fast-
 *                    registered page races the page's invalidation, the
 *                    way a storage target's late WRITE meets the host's
 *                    LOCAL_INV after a timeout. RC QPs of the device,
 *                    connected through its own RoCEv2 GID: A owns the page
 *                    (REG_MR with REMOTE_WRITE), B, connected to A, writes
 *                    1 KiB of a pattern into it from a thread bound to one
 *                    CPU, while a thread bound to another CPU posts a
 *                    LOCAL_INV of the page's rkey on C, a third QP of the
 *                    PD (on A, its work item would wait for A's responder,
 *                    which holds the WRITE, and the thread for the work
 *                    item: the race would run unseen), once the WRITE is
 *                    on its way (sroce's fault knob write_delay_ms holds
 *                    the WRITE between its rkey lookup and its copy, set by
 *                    the script; delay_ms= says how long). IBA 10.6.6.2:
 *                    once the invalidation has completed, the region's
 *                    memory is no longer accessible through the key, so
 *                    the page must look the same from the LOCAL_INV's
 *                    completion on: the WRITE either landed before it
 *                    (B's WRITE then completes successfully) or not at all
 *                    (B's completion is an error, IB_WC_REM_ACCESS_ERR).
 *                    A page that changes after the completion fails the
 *                    test; so does a run where the WRITE completed before
 *                    the LOCAL_INV was posted (the race was not run).
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

static char *dev_name_param = "sroce0";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "the RDMA device to test");

static char *test_param = "frwr_inval";
module_param_named(test, test_param, charp, 0444);
MODULE_PARM_DESC(test, "the test to run (frwr_inval)");

static unsigned int delay_ms = 300;
module_param(delay_ms, uint, 0444);
MODULE_PARM_DESC(delay_ms, "the device's WRITE delay the script set, in ms");

#define KT_LEN		1024	/* the WRITE: one packet at MTU 1024 */
/* The QPs: A owns the page, B writes into it, C invalidates it. */
enum { KT_A, KT_B, KT_C, KT_NQP };

#define KT_WR_REG	1
#define KT_WR_INV	2
#define KT_WR_WRITE	3

struct kt_ctx {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq[KT_NQP];	/* each QP's, send and receive */
	struct ib_qp *qp[KT_NQP];
	struct ib_mr *mr;
	struct page *page;	/* A's page, fast-registered */
	struct scatterlist sg;
	bool sg_mapped;
	void *src;		/* B's pattern */
	u64 src_dma;
	u8 *snap;		/* the page at the LOCAL_INV's completion */
	const struct ib_gid_attr *sgid;
	/* results of the two threads */
	struct completion write_done, inv_done;
	int write_status, inv_status;	/* ib_wc_status, or -errno */
	ktime_t t_write_post, t_write_done, t_inv_post, t_inv_done;
	bool write_was_done;		/* before the LOCAL_INV was posted */
};

/* Poll @cq for one completion, up to @ms: its status, or -ETIMEDOUT. */
static int kt_poll(struct ib_cq *cq, u64 wr_id, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct ib_wc wc;
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, &wc);
		if (n < 0)
			return n;
		if (n == 1) {
			if (wc.wr_id != wr_id) {
				pr_err("sroce_ktest: completion of wr_id %llu, expected %llu (%s)\n",
				       wc.wr_id, wr_id,
				       ib_wc_status_msg(wc.status));
				return -EPROTO;
			}
			return wc.status;
		}
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(50, 100);
	}
}

/* The device's RoCEv2 GID of an IPv4 address (port 1), referenced. */
static const struct ib_gid_attr *kt_find_gid(struct ib_device *dev)
{
	const struct ib_gid_attr *attr;
	unsigned int i;

	for (i = 0; i < 32; i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw))
			return attr;
		rdma_put_gid_attr(attr);
	}
	return NULL;
}

static struct ib_qp *kt_create_qp(struct kt_ctx *c, struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(c->pd, &init);
}

/* INIT, RTR and RTS, connected to @peer_qpn through the device's own GID. */
static int kt_connect(struct kt_ctx *c, struct ib_qp *qp, u32 peer_qpn)
{
	struct ib_qp_attr attr = {};
	struct net_device *ndev;
	union ib_gid gid;
	int err;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = 1;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = peer_qpn;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(c->dev, 1);
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	gid = c->sgid->gid;
	rdma_ah_set_grh(&attr.ah_attr, &gid, 0, c->sgid->index, 64, 0);
	/* A kernel consumer resolves the address itself: its own netdev's. */
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(c->sgid);
	if (!IS_ERR(ndev))
		ether_addr_copy(attr.ah_attr.roce.dmac, ndev->dev_addr);
	rcu_read_unlock();
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/* Fast-register A's page for REMOTE_WRITE with a new key. */
static int kt_register(struct kt_ctx *c)
{
	struct ib_reg_wr reg = {};
	int n, st;

	sg_init_table(&c->sg, 1);
	sg_set_page(&c->sg, c->page, PAGE_SIZE, 0);
	if (ib_dma_map_sg(c->dev, &c->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;
	c->sg_mapped = true;
	n = ib_map_mr_sg(c->mr, &c->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(c->mr, ib_inc_rkey(c->mr->rkey));
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.wr.wr_id = KT_WR_REG;
	reg.mr = c->mr;
	reg.key = c->mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	n = ib_post_send(c->qp[KT_A], &reg.wr, NULL);
	if (n)
		return n;
	st = kt_poll(c->cq[KT_A], KT_WR_REG, 5000);
	if (st) {
		pr_err("sroce_ktest: REG_MR: %d (%s)\n", st,
		       st > 0 ? ib_wc_status_msg(st) : "no completion");
		return -EIO;
	}
	return 0;
}

/* Thread on one CPU: B writes the pattern into A's page, and waits. */
static int kt_writer(void *arg)
{
	struct kt_ctx *c = arg;
	struct ib_sge sge = {
		.addr = c->src_dma,
		.length = KT_LEN,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = KT_WR_WRITE,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = c->mr->iova,
		.rkey = c->mr->rkey,
	};

	c->t_write_post = ktime_get();
	c->write_status = ib_post_send(c->qp[KT_B], &wr.wr, NULL);
	if (!c->write_status)
		c->write_status = kt_poll(c->cq[KT_B], KT_WR_WRITE,
					  10 * delay_ms + 10000);
	c->t_write_done = ktime_get();
	/* Never back in this module's text once the waiter may go on. */
	kthread_complete_and_exit(&c->write_done, 0);
}

/*
 * Thread on another CPU: once the WRITE is held in the device, A
 * invalidates the page's key; at the completion, the page is copied.
 */
static int kt_invalidator(void *arg)
{
	struct kt_ctx *c = arg;
	struct ib_send_wr wr = {
		.wr_id = KT_WR_INV,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = c->mr->rkey,
	};

	msleep(delay_ms / 3);
	c->write_was_done = completion_done(&c->write_done);
	c->t_inv_post = ktime_get();
	c->inv_status = ib_post_send(c->qp[KT_C], &wr, NULL);
	if (!c->inv_status)
		c->inv_status = kt_poll(c->cq[KT_C], KT_WR_INV,
					10 * delay_ms + 10000);
	c->t_inv_done = ktime_get();
	memcpy(c->snap, page_address(c->page), PAGE_SIZE);
	kthread_complete_and_exit(&c->inv_done, 0);
}

static struct task_struct *kt_start_on(int (*fn)(void *), struct kt_ctx *c,
				       unsigned int cpu, const char *name)
{
	struct task_struct *t = kthread_create(fn, c, "%s", name);

	if (IS_ERR(t))
		return t;
	kthread_bind(t, cpu);
	wake_up_process(t);
	return t;
}

static s64 kt_ms(ktime_t from, ktime_t to)
{
	return ktime_ms_delta(to, from);
}

static int kt_frwr_inval(struct kt_ctx *c)
{
	struct task_struct *tw, *ti;
	unsigned int cpu_w, cpu_i;
	bool changed, landed;
	u8 *now;
	int err;

	if (num_online_cpus() < 2) {
		pr_err("sroce_ktest: frwr_inval needs two CPUs (%u online)\n",
		       num_online_cpus());
		return -EINVAL;
	}
	cpu_w = cpumask_first(cpu_online_mask);
	cpu_i = cpumask_next(cpu_w, cpu_online_mask);

	c->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(c->mr)) {
		err = PTR_ERR(c->mr);
		c->mr = NULL;
		return err;
	}
	c->page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	c->src = kmalloc(KT_LEN, GFP_KERNEL);
	c->snap = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!c->page || !c->src || !c->snap)
		return -ENOMEM;
	memset(c->src, 0xa5, KT_LEN);
	c->src_dma = ib_dma_map_single(c->dev, c->src, KT_LEN, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(c->dev, c->src_dma)) {
		c->src_dma = 0;
		return -ENOMEM;
	}
	err = kt_register(c);
	if (err)
		return err;

	init_completion(&c->write_done);
	init_completion(&c->inv_done);
	tw = kt_start_on(kt_writer, c, cpu_w, "sroce_kt_write");
	if (IS_ERR(tw))
		return PTR_ERR(tw);
	ti = kt_start_on(kt_invalidator, c, cpu_i, "sroce_kt_inval");
	if (IS_ERR(ti)) {
		wait_for_completion(&c->write_done);
		return PTR_ERR(ti);
	}
	wait_for_completion(&c->write_done);
	wait_for_completion(&c->inv_done);

	now = page_address(c->page);
	changed = memcmp(now, c->snap, PAGE_SIZE) != 0;
	landed = !memchr_inv(now, 0xa5, KT_LEN) && !memchr_inv(now + KT_LEN, 0,
							       PAGE_SIZE - KT_LEN);
	pr_info("sroce_ktest: frwr_inval: WRITE on CPU %u: %s after %lld ms; LOCAL_INV on CPU %u posted at %lld ms: %s after %lld ms; pattern %s\n",
		cpu_w, c->write_status >= 0 ?
		ib_wc_status_msg(c->write_status) : "error",
		kt_ms(c->t_write_post, c->t_write_done), cpu_i,
		kt_ms(c->t_write_post, c->t_inv_post),
		c->inv_status >= 0 ? ib_wc_status_msg(c->inv_status) : "error",
		kt_ms(c->t_inv_post, c->t_inv_done),
		landed ? "in the page" : "not in the page");

	if (c->inv_status) {
		pr_err("sroce_ktest: frwr_inval: FAIL: LOCAL_INV %d\n",
		       c->inv_status);
		return -EIO;
	}
	if (c->write_was_done) {
		pr_err("sroce_ktest: frwr_inval: FAIL: the WRITE completed before the LOCAL_INV was posted: the race did not run (is the device's write_delay_ms set?)\n");
		return -EIO;
	}
	if (changed) {
		pr_err("sroce_ktest: frwr_inval: FAIL: the page changed after the LOCAL_INV completed (a WRITE landed in invalidated memory)\n");
		return -EIO;
	}
	if (c->write_status == IB_WC_SUCCESS && !landed) {
		pr_err("sroce_ktest: frwr_inval: FAIL: the WRITE completed successfully but its data is not in the page\n");
		return -EIO;
	}
	if (c->write_status != IB_WC_SUCCESS &&
	    c->write_status != IB_WC_REM_ACCESS_ERR) {
		pr_err("sroce_ktest: frwr_inval: FAIL: WRITE status %d, expected success or remote access error\n",
		       c->write_status);
		return -EIO;
	}
	if (c->write_status != IB_WC_SUCCESS && memchr_inv(now, 0, PAGE_SIZE)) {
		pr_err("sroce_ktest: frwr_inval: FAIL: the WRITE failed but the page changed\n");
		return -EIO;
	}
	pr_info("sroce_ktest: frwr_inval: ok\n");
	return 0;
}

static void kt_teardown(struct kt_ctx *c)
{
	unsigned int i;

	for (i = 0; i < KT_NQP; i++)
		if (c->qp[i])
			ib_destroy_qp(c->qp[i]);
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->sg_mapped)
		ib_dma_unmap_sg(c->dev, &c->sg, 1, DMA_BIDIRECTIONAL);
	if (c->src_dma)
		ib_dma_unmap_single(c->dev, c->src_dma, KT_LEN, DMA_TO_DEVICE);
	for (i = 0; i < KT_NQP; i++)
		if (c->cq[i])
			ib_free_cq(c->cq[i]);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	if (c->sgid)
		rdma_put_gid_attr(c->sgid);
	if (c->page)
		__free_page(c->page);
	kfree(c->src);
	kfree(c->snap);
	ib_device_put(c->dev);
}

static int kt_run(struct kt_ctx *c)
{
	unsigned int i;
	int err;

	c->sgid = kt_find_gid(c->dev);
	if (!c->sgid) {
		pr_err("sroce_ktest: %s has no RoCEv2 GID of an IPv4 address\n",
		       dev_name_param);
		return -ENODEV;
	}
	c->pd = ib_alloc_pd(c->dev, 0);
	if (IS_ERR(c->pd)) {
		err = PTR_ERR(c->pd);
		c->pd = NULL;
		return err;
	}
	for (i = 0; i < KT_NQP; i++) {
		c->cq[i] = ib_alloc_cq(c->dev, NULL, 16, 0, IB_POLL_DIRECT);
		if (IS_ERR(c->cq[i])) {
			err = PTR_ERR(c->cq[i]);
			c->cq[i] = NULL;
			return err;
		}
		c->qp[i] = kt_create_qp(c, c->cq[i]);
		if (IS_ERR(c->qp[i])) {
			err = PTR_ERR(c->qp[i]);
			c->qp[i] = NULL;
			return err;
		}
	}
	err = kt_connect(c, c->qp[KT_A], c->qp[KT_B]->qp_num);
	if (!err)
		err = kt_connect(c, c->qp[KT_B], c->qp[KT_A]->qp_num);
	if (!err)
		err = kt_connect(c, c->qp[KT_C], c->qp[KT_C]->qp_num);
	if (err) {
		pr_err("sroce_ktest: connecting the QPs: %d\n", err);
		return err;
	}
	if (!strcmp(test_param, "frwr_inval"))
		return kt_frwr_inval(c);
	pr_err("sroce_ktest: unknown test %s\n", test_param);
	return -EINVAL;
}

static int __init sroce_ktest_init(void)
{
	struct kt_ctx *c;
	int err;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->dev = ib_device_get_by_name(dev_name_param, RDMA_DRIVER_UNKNOWN);
	if (!c->dev) {
		pr_err("sroce_ktest: no RDMA device %s\n", dev_name_param);
		kfree(c);
		return -ENODEV;
	}
	err = kt_run(c);
	kt_teardown(c);
	kfree(c);
	if (err)
		pr_err("sroce_ktest: %s: FAIL (%d)\n", test_param, err);
	return err ? -EIO : 0;
}

static void __exit sroce_ktest_exit(void)
{
}

module_init(sroce_ktest_init);
module_exit(sroce_ktest_exit);

MODULE_DESCRIPTION("sroce test rig: kernel consumer tests (fast registration)");
MODULE_LICENSE("Dual BSD/GPL");
