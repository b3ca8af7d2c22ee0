/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: software RoCEv2 device: the device, its limits and counters, and
 * the small objects (context, PD, AH). The bottom of the module's headers:
 * every other header builds on this one, one layer each (see
 * Documentation/architecture.rst, "Source files").
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/timer.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/sroce-abi.h>
#include <sroce/sroce_ring.h>
#include "proto/sroce_hdr.h"

#define SROCE_DRV_NAME		"sroce"
#define SROCE_LINK_TYPE		"sroce"
#define SROCE_FW_VERSION	"1.0.0"

/* Device limits: at least as generous as rdma_rxe's (rxe_param.h). */
#define SROCE_MAX_QP		BIT(20)
#define SROCE_MAX_QP_WR		BIT(20)
#define SROCE_MAX_SGE		32
#define SROCE_MAX_SGE_RD	32
#define SROCE_MAX_INLINE	512
#define SROCE_MAX_CQ		BIT(20)
#define SROCE_MAX_CQE		(BIT(17) - 1)
#define SROCE_MAX_MR		(BIT(23) - 1)
#define SROCE_MAX_MW		(BIT(23) - 1)
/* Device memory a device hands out in all (max_dm_size), in whole pages. */
#define SROCE_MAX_DM_SIZE	(1024 * 1024)
#define SROCE_MAX_PD		BIT(20)
#define SROCE_MAX_AH		(BIT(15) - 1)
#define SROCE_MAX_SRQ		BIT(20)
#define SROCE_MAX_SRQ_WR	BIT(20)
#define SROCE_MAX_SRQ_SGE	27
#define SROCE_MAX_QP_RD_ATOM	128
#define SROCE_MAX_RES_RD_ATOM	0x3f000
#define SROCE_MAX_FRPL_LEN	512
#define SROCE_MAX_MCAST_GRP	8192
#define SROCE_MAX_MCAST_QP_ATTACH 56
#define SROCE_MAX_MSG_SIZE	0x80000000U
#define SROCE_LOCAL_ACK_DELAY	15
#define SROCE_GID_TBL_LEN	1024
#define SROCE_VENDOR_ID		0xFFFFFF

/* QP numbers: 0 and 1 are special; ordinary QPs from 16 up (24 bits). */
#define SROCE_QPN_GSI		1
#define SROCE_QPN_MIN		16
#define SROCE_QPN_MAX		0xFFFFFF

/* MR/MW keys: see include/sroce/sroce_keys.h. */

/*
 * Counters (rdma statistic show link ..., hw_counters in sysfs), by index:
 * the device's set and each per-QP counter set (sroce_stats.c) have the
 * same layout, as the RDMA core sums them by index. The drop counters
 * follow SROCE_CNT_DROPS, one per drop reason but SROCE_DROP_NONE.
 */
enum sroce_counter {
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_RX_PACKETS,
	SROCE_CNT_TX_BYTES,	/* UDP payload: BTH through ICRC */
	SROCE_CNT_RX_BYTES,
	SROCE_CNT_TX_ERRORS,
	SROCE_CNT_RETRANSMITS,
	SROCE_CNT_TIMEOUTS,
	SROCE_CNT_TAIL_PROBES,
	SROCE_CNT_ACKS_DELAYED,
	SROCE_CNT_ACK_DELAYS_EXPIRED,
	SROCE_CNT_RNR_NAKS_RCVD,
	SROCE_CNT_RNR_NAKS_SENT,
	SROCE_CNT_SEQ_NAKS_RCVD,
	SROCE_CNT_SEQ_NAKS_SENT,
	SROCE_CNT_ERR_NAKS_RCVD,	/* every error NAK, of the kinds below too */
	SROCE_CNT_ERR_NAKS_SENT,
	SROCE_CNT_INV_REQ_NAKS_RCVD,	/* NAK code 1: invalid request */
	SROCE_CNT_INV_REQ_NAKS_SENT,
	SROCE_CNT_ACCESS_NAKS_RCVD,	/* NAK code 2: remote access error */
	SROCE_CNT_ACCESS_NAKS_SENT,
	SROCE_CNT_OP_NAKS_RCVD,		/* NAK code 3: remote operational error */
	SROCE_CNT_OP_NAKS_SENT,
	SROCE_CNT_DUPLICATES,
	SROCE_CNT_FLUSHES,	/* FLUSH requests executed */
	SROCE_CNT_BUSY_POLLS,	/* user CQ busy polls (sroce_cq.c) */
	SROCE_CNT_BUSY_POLL_HITS, /* ... that saw a CQE arrive */
	SROCE_CNT_FAULTS,	/* packets dropped or duplicated on purpose */
	SROCE_CNT_ECN_CE,	/* received with IP ECN "congestion experienced" */
	SROCE_CNT_CNP,		/* congestion notification packets received */
	SROCE_CNT_DROPS,
};

#define SROCE_NUM_COUNTERS	(SROCE_CNT_DROPS + SROCE_DROP_NUM - 1)
#define SROCE_CNT_DROP(why)	(SROCE_CNT_DROPS + (why) - 1)

struct sroce_stats {
	atomic64_t v[SROCE_NUM_COUNTERS];
};

/*
 * Fault injection for tests (debugfs DEV/fault/, sroce_debugfs.c): one
 * packet received in N, at random, is dropped or delivered twice, one
 * packet to send in N is dropped, one packet buffer allocation in N
 * fails, an ACK waits N ms (sroce_ack_hold()), a lookup by QP number
 * waits N ms between finding the QP and taking its reference, where it can
 * be preempted (sroce_qp_get(): a destroy's race with a lookup, widened),
 * a POLL_CQ on a user CQ waits N ms between loading the ring's header
 * and using it (its race with a resize, widened), an RDMA WRITE packet
 * waits N ms between the lookup of its rkey and the copy of its payload
 * (its race with an invalidation on another CPU, widened);
 * 0 (the default) is off. The kernel's fault-injection framework
 * (CONFIG_FAULT_INJECTION) is off in Debian's kernels, and a test needs
 * these on the kernel it runs, so they are plain knobs.
 */
struct sroce_fault {
	u32 rx_drop;
	u32 rx_dup;
	u32 tx_drop;
	u32 alloc_fail;		/* one packet buffer in N is not given */
	u32 ack_delay_ms;	/* an RC ACK sent alone waits this long */
	u32 lookup_delay_ms;	/* sroce_qp_get() waits this long */
	u32 poll_delay_ms;	/* a user CQ's POLL_CQ waits this long */
	u32 write_delay_ms;	/* a WRITE's copy waits this long */
};

/*
 * Whether the knob @every (0: off) picks this packet: one in @every, at
 * random. Not every @every-th: a fixed period can meet the period of a
 * go-back-N resend, which then loses the same packet each time until the
 * retry count runs out (rx_drop 2 did so in a scratch test; rx_drop 13
 * ended a debugfs_faults.sh run with IBV_WC_RETRY_EXC_ERR on the debug
 * kernel). Real losses have no period either.
 */
static inline bool sroce_fault_hit(const u32 *every)
{
	u32 e = READ_ONCE(*every);

	return unlikely(e) && get_random_u32() % e == 0;
}

struct sroce_socks;

struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;	/* held for the device's lifetime */
	struct sroce_socks *socks;	/* its namespace's sockets (sroce_net.c) */
	struct net *net;		/* ... that namespace; only compared */
	struct list_head list;		/* sroce_dev_list */
	struct list_head rx_list;	/* receive path lookup (RCU) */
	unsigned int napi_id;		/* of the last packet received; busy poll */
	struct sroce_stats stats;	/* events of QPs bound to no counter */
	struct sroce_stats gone;	/* ... of counters that are gone (PMA) */
	struct mutex pma_lock;		/* gone against the PMA's totals */
	struct xarray counter_xa;	/* per-QP counter sets, by counter id */

	struct ib_device_attr attr;
	spinlock_t port_lock;		/* protects the port fields below */
	bool registered;		/* enable_driver has run */
	enum ib_port_state port_state;
	enum ib_mtu active_mtu;
	unsigned int netdev_mtu;

	struct xarray qp_xa;		/* qpn -> struct sroce_qp_life */
	u32 qpn_next;			/* debugfs fault/qpn_next sets it */
	atomic64_t qp_serial;		/* the last QP's sroce_qp.serial */
	struct xarray key_xa;		/* key index -> struct sroce_mr/mw */
	u32 key_next;
	struct xarray srq_xa;
	/* XRC SRQs alone, by number: XRC targets look them up (RCU). */
	struct xarray xrc_srq_xa;
	u32 srq_next;
	struct xarray ah_xa;
	u32 ah_next;
	spinlock_t mcg_lock;		/* multicast groups (sroce_mcast.c) */
	struct list_head mcg_list;
	u32 num_mcg;

	atomic_t num_pd, num_mr, num_cq, num_qp, num_srq, num_ah, num_mw;
	atomic_t num_xrcd;
	atomic_t num_odp_mr;		/* ODP regions (sroce_odp.c) */
	atomic_t num_ucontext;

	struct sroce_fault fault;
	struct dentry *dbg;		/* debugfs DEV/ (sroce_debugfs.c) */
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

/* Count @n events of counter @c that belong to no QP. */
static inline void sroce_dev_count(struct sroce_dev *sdev,
				   enum sroce_counter c, s64 n)
{
	atomic64_add(n, &sdev->stats.v[c]);
}

struct sroce_ucontext {
	struct ib_ucontext ibuc;
	atomic64_t dm_bytes;	/* device memory it holds (sroce_dm.c) */
};

struct sroce_pd {
	struct ib_pd ibpd;
};

static inline struct sroce_pd *to_spd(struct ib_pd *pd)
{
	return container_of(pd, struct sroce_pd, ibpd);
}

/* An XRC domain (IBA A14): the SRQs and targets of one application. */
struct sroce_xrcd {
	struct ib_xrcd ibxrcd;
};

struct sroce_ah {
	struct ib_ah ibah;
	u32 ah_num;
	struct sroce_av av;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ah)
{
	return container_of(ah, struct sroce_ah, ibah);
}

/* ------------------------------------------------------------------------
 * Device and port (sroce_main.c)
 */

enum ib_mtu sroce_mtu_from_netdev(unsigned int mtu);
void sroce_port_update(struct sroce_dev *sdev);

#define sroce_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define sroce_warn_rl(sdev, fmt, ...) \
	ibdev_warn_ratelimited(&(sdev)->ibdev, fmt, ##__VA_ARGS__)

#endif /* SROCE_H */
