/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: software RoCEv2 device. Driver objects and the interfaces between
 * the files of the module (one concern per file, see Documentation/).
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/module.h>
#include <linux/netdevice.h>
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

/* Device counters (rdma statistic show link ...). */
struct sroce_stats {
	atomic64_t tx_packets;
	atomic64_t rx_packets;
	atomic64_t tx_errors;
	atomic64_t retransmits;
	atomic64_t timeouts;
	atomic64_t rnr_naks_rcvd;
	atomic64_t rnr_naks_sent;
	atomic64_t seq_naks_rcvd;
	atomic64_t seq_naks_sent;
	atomic64_t err_naks_rcvd;
	atomic64_t err_naks_sent;
	atomic64_t duplicates;
	atomic64_t flushes;		/* FLUSH requests executed */
	atomic64_t drops[SROCE_DROP_NUM];
};

struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;	/* held for the device's lifetime */
	struct list_head list;		/* sroce_dev_list */
	struct list_head rx_list;	/* receive path lookup (RCU) */
	struct sroce_stats stats;

	struct ib_device_attr attr;
	spinlock_t port_lock;		/* protects the port fields below */
	bool registered;		/* enable_driver has run */
	enum ib_port_state port_state;
	enum ib_mtu active_mtu;
	unsigned int netdev_mtu;

	struct xarray qp_xa;		/* qpn -> struct sroce_qp */
	u32 qpn_next;
	struct xarray key_xa;		/* key index -> struct sroce_mr/mw */
	u32 key_next;
	struct xarray srq_xa;
	u32 srq_next;
	struct xarray ah_xa;
	u32 ah_next;
	spinlock_t mcg_lock;		/* multicast groups (sroce_mcast.c) */
	struct list_head mcg_list;
	u32 num_mcg;

	atomic_t num_pd, num_mr, num_cq, num_qp, num_srq, num_ah, num_mw;
	atomic_t num_ucontext;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

struct sroce_pd {
	struct ib_pd ibpd;
};

static inline struct sroce_pd *to_spd(struct ib_pd *pd)
{
	return container_of(pd, struct sroce_pd, ibpd);
}

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
 * Rings (sroce_queue.c)
 */

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *vaddr;
};

/*
 * One ring. The memory is vmalloc'ed (charged to the creator's memory
 * cgroup for a user queue): for a user queue it is owned by its mmap entry
 * from creation on and freed in sroce_mmap_free() once the last user
 * mapping is gone, so the kernel may drop the queue while user space still
 * has it mapped.
 */
struct sroce_queue {
	struct sroce_ring_hdr *hdr;
	u32 num_entries;
	u32 stride;
	size_t size;
	struct sroce_mmap_entry *mentry;	/* NULL for kernel queues */
	u32 idx;	/* kernel-private copy of the index the kernel owns */
};

int sroce_queue_init(struct sroce_dev *sdev, struct sroce_queue *q,
		     struct ib_udata *udata, u32 num_entries, u32 stride);
void sroce_queue_cleanup(struct sroce_queue *q);
void sroce_queue_info(const struct sroce_queue *q,
		      struct sroce_ring_info *info);

static inline void *sroce_queue_entry(const struct sroce_queue *q, u32 idx)
{
	return sroce_ring_entry(q->hdr, idx, q->num_entries, q->stride);
}

/*
 * The only accessors of a ring's shared indices (sroce-abi.h): loads of the
 * other side's index are acquires (entries/slots are read after it), stores
 * of our own index are releases (entries written or read before it).
 */
static inline u32 sroce_ring_load_prod(struct sroce_ring_hdr *hdr)
{
	/* acquire: pairs with the producer's release store of prod */
	return smp_load_acquire(&hdr->prod);
}

static inline u32 sroce_ring_load_cons(struct sroce_ring_hdr *hdr)
{
	/* acquire: pairs with the consumer's release store of cons */
	return smp_load_acquire(&hdr->cons);
}

static inline void sroce_ring_store_prod(struct sroce_ring_hdr *hdr, u32 v)
{
	/* release: the entries written before are visible with prod */
	smp_store_release(&hdr->prod, v);
}

static inline void sroce_ring_store_cons(struct sroce_ring_hdr *hdr, u32 v)
{
	/* release: our reads of the freed entries happen before cons */
	smp_store_release(&hdr->cons, v);
}

/*
 * kflags, the kernel's word in a ring header (sroce-abi.h), has writers
 * under different locks: qp->state_lock (SROCE_RING_F_FLUSH of an SQ and
 * an RQ), qp->sq_lock (SROCE_SQ_NEED_WAKEUP and SROCE_RING_F_ERROR of an
 * SQ), qp->resp_lock or srq->lock (SROCE_RING_F_ERROR of an RQ or an SRQ)
 * and cq->lock (SROCE_CQ_F_OVERFLOW). A load and a store would let one
 * writer undo another's bit (a lost FLUSH leaves WRs posted in Error
 * unflushed and hangs a drain; a lost NEED_WAKEUP stalls the send queue),
 * so every update of a ring user space can see is one atomic
 * read-modify-write of the word, as on an atomic_t (a new ring nobody
 * sees yet is set up with plain stores); its layout stays the __u32 the
 * provider reads. The updates order nothing by themselves: a
 * caller that must make a bit visible before it reads something else
 * follows the update with smp_mb__after_atomic(), as the doorbell
 * (sroce_req_more()) and the error state (sroce_qp_set_flush_flag()) do.
 */
static inline atomic_t *sroce_ring_kflags(struct sroce_ring_hdr *hdr)
{
	BUILD_BUG_ON(sizeof(atomic_t) != sizeof(hdr->kflags));
	BUILD_BUG_ON(offsetof(struct sroce_ring_hdr, kflags) % sizeof(atomic_t));
	return (atomic_t *)&hdr->kflags;
}

static inline void sroce_ring_kflags_set(struct sroce_ring_hdr *hdr, u32 bits)
{
	atomic_or((int)bits, sroce_ring_kflags(hdr));
}

static inline void sroce_ring_kflags_clear(struct sroce_ring_hdr *hdr,
					   u32 bits)
{
	atomic_andnot((int)bits, sroce_ring_kflags(hdr));
}

static inline u32 sroce_ring_kflags_read(struct sroce_ring_hdr *hdr)
{
	return (u32)atomic_read(sroce_ring_kflags(hdr));
}

struct sroce_rwqe;
int sroce_rq_fetch(struct sroce_queue *q, u32 max_sge, struct sroce_rwqe *r,
		   u32 *prod_out);
int sroce_rq_post_kernel(struct sroce_queue *q, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *rentry);

/* ------------------------------------------------------------------------
 * Memory regions (sroce_mr.c)
 */

enum sroce_mr_kind {
	SROCE_MR_DMA,		/* all of kernel memory (get_dma_mr) */
	SROCE_MR_USER,		/* pinned user pages (ib_umem) */
	SROCE_MR_FAST,		/* kernel fast registration (alloc_mr) */
};

/*
 * A fast-registration MR is FREE (its key matches nothing) from allocation
 * until IB_WR_REG_MR makes it VALID, and again after an invalidation.
 */
enum sroce_mr_state {
	SROCE_MR_FREE,
	SROCE_MR_VALID,
};

struct sroce_mr {
	struct ib_mr ibmr;
	enum sroce_mr_kind kind;
	u8 state;		/* enum sroce_mr_state, read locklessly */
	u32 key;		/* the key lookups match (lkey == rkey) */
	refcount_t refs;	/* lookups in flight + 1 while registered */
	struct completion released;
	struct rcu_head rcu;
	struct ib_umem *umem;
	u64 iova;
	u64 length;
	int access;
	struct page **upages;	/* SROCE_MR_USER: pinned pages, in order */
	u32 upage_off;		/* offset of iova in upages[0] */
	u32 nupages;
	u64 *pages;		/* SROCE_MR_FAST page list */
	u32 max_pages;
	u32 npages;
	u32 page_shift;		/* SROCE_MR_FAST: of the registered pages */
	u32 first_off;		/* SROCE_MR_FAST: offset of iova in pages[0] */
	atomic_t num_mw;	/* windows bound to it, or SROCE_MR_MW_CLOSED */
};

/*
 * A region's window count is closed (SROCE_MR_MW_CLOSED) while it is
 * deregistered, or while its access or state changes: the swap from 0 is
 * one atomic step, and a bind counts its window with
 * atomic_inc_unless_negative() before it checks the region, so a bind
 * racing the deregistration (or rereg, or invalidation) either is counted
 * first (the other verb then fails with -EBUSY or -EINVAL, and the bind
 * checks the region as it stays) or finds the count closed and fails.
 * Checking the count and then unpublishing the region would leave a
 * window bound to freed memory; checking the region before counting would
 * let a bind use rights a concurrent rereg just took away.
 */
#define SROCE_MR_MW_CLOSED	INT_MIN

static inline bool sroce_mr_close_mw(struct sroce_mr *mr)
{
	return atomic_cmpxchg(&mr->num_mw, 0, SROCE_MR_MW_CLOSED) == 0;
}

static inline void sroce_mr_reopen_mw(struct sroce_mr *mr)
{
	atomic_set(&mr->num_mw, 0);
}

/* Key table entries that are memory windows carry this xarray tag. */
#define SROCE_KEY_TAG_MW	1

/* A memory window (sroce_mw.c). */
struct sroce_mw {
	struct ib_mw ibmw;
	spinlock_t lock;	/* binding state: the fields from state on */
	refcount_t refs;	/* lookups in flight + 1 while allocated */
	struct completion released;
	u8 state;		/* enum sroce_mr_state */
	u32 key;		/* current rkey */
	struct sroce_mr *mr;	/* bound region, NULL when FREE */
	u64 addr;
	u64 length;
	int access;
	u32 qpn;		/* type 2: the QP it is bound to */
};

static inline struct sroce_mw *to_smw(struct ib_mw *mw)
{
	return container_of(mw, struct sroce_mw, ibmw);
}

static inline struct sroce_mr *to_smr(struct ib_mr *mr)
{
	return container_of(mr, struct sroce_mr, ibmr);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
struct sroce_qp;
struct sroce_send_wqe;
int sroce_mr_fast_reg(struct sroce_qp *qp, const struct sroce_send_wqe *w);
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key);
struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				u64 len, int access);
struct sroce_mr *sroce_rkey_get_region(struct sroce_qp *qp, u32 rkey,
				       int access);
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w);
int sroce_mw_invalidate(struct sroce_qp *qp, u32 key);
struct sroce_mr *sroce_mw_resolve(struct sroce_qp *qp, u32 rkey, u64 va,
				  u64 len, int access, int *err);
void sroce_mr_put(struct sroce_mr *mr);
u32 sroce_key_make(u32 index);

/* ------------------------------------------------------------------------
 * Completion queues (sroce_cq.c)
 */

struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* producers: serialises CQE writes */
	spinlock_t poll_lock;	/* kernel consumers */
	struct sroce_queue q;
	bool is_user;
	bool overflowed;
	u8 knotify;		/* kernel CQs: SROCE_CQ_ARM_* */
};

static inline struct sroce_cq *to_scq(struct ib_cq *cq)
{
	return container_of(cq, struct sroce_cq, ibcq);
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited);

/* ------------------------------------------------------------------------
 * Shared receive queues (sroce_srq.c)
 */

struct sroce_srq {
	struct ib_srq ibsrq;
	struct sroce_dev *sdev;
	bool is_user;
	spinlock_t lock;	/* consumers (responders), limit */
	spinlock_t post_lock;	/* kernel post_srq_recv (producer) */
	struct mutex resize_lock;	/* modify_srq: one at a time */
	struct sroce_queue rq;
	u32 max_sge;
	u32 limit;		/* armed SRQ limit; 0: not armed */
	bool error;		/* IB_EVENT_SRQ_ERR raised */
	u32 srq_num;
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *srq)
{
	return container_of(srq, struct sroce_srq, ibsrq);
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *r);

/* ------------------------------------------------------------------------
 * Queue pairs (sroce_qp.c)
 */

/* Responder/requester addressing of a connected QP, resolved at RTR. */
struct sroce_path {
	struct sroce_av av;
	u8 sgid[16];
	u8 smac[6];
	u16 vlan_id;
	u16 udp_sport;
};

/*
 * A send WQE as the requester keeps it: the validated copy of the ring slot
 * (header and SGEs or inline data) plus its transmission state. Slots are
 * indexed like the SQ ring; a WQE's slot is live from fetch to completion.
 */
enum sroce_swqe_kind {
	SROCE_SWQE_SEND,
	SROCE_SWQE_WRITE,
	SROCE_SWQE_READ,
	SROCE_SWQE_ATOMIC,	/* also ATOMIC WRITE: one PSN, one answer */
	SROCE_SWQE_LOCAL,	/* LOCAL_INV, REG_MR: no packet */
};

struct sroce_swqe {
	u32 first_psn;
	u32 npsn;		/* PSNs consumed: packets, or READ responses */
	u32 length;		/* message length in bytes */
	u32 sent;		/* bytes sent (READ: bytes requested) */
	u32 done;		/* READ: response bytes placed */
	u8 kind;		/* enum sroce_swqe_kind */
	u8 wc_opcode;
	bool signaled;
	bool ud;
	bool failed;		/* complete with status when flushed */
	bool local_done;	/* SROCE_SWQE_LOCAL: executed */
	u8 flush_sent;		/* FLUSH: ICRCs sent, SROCE_FLUSH_SENT_* */
	u8 status;
	struct sroce_send_wqe w;	/* validated copy; data[] follows */
};

struct sroce_swqe_ring {
	u8 *slots;
	u32 slot_size;
};

/* Requester state; indices are SQ ring indices. */
struct sroce_req {
	u32 psn;		/* next PSN to send */
	u32 psn_max;		/* PSN after the highest ever sent */
	u32 idx;		/* WQE being sent or next to send */
	u32 fetch_end;		/* slots [sq.idx, fetch_end) are valid */
	u32 started_end;	/* WQEs [sq.idx, started_end) have PSNs */
	bool fetched;		/* WQE idx has been started */
	u32 rd_atomic;		/* outstanding READ/atomic WQEs */
	u32 noack_pkts;		/* packets since the last AckReq */
	bool blocked;		/* stopped until an answer arrives */
	bool run_on_ack;	/* look for new WQEs on the next answer */
	bool flush_rxe;		/* FLUSH with rdma_rxe's ICRC (sroce_req.c) */
	bool flush_known;	/* a FLUSH was answered: keep that ICRC */
};

#define SROCE_FLUSH_SENT_IBA	BIT(0)
#define SROCE_FLUSH_SENT_RXE	BIT(1)

/* Completer state (the SQ's published cons is sq.idx = oldest WQE). */
struct sroce_comp {
	u32 psn;		/* oldest unacknowledged PSN */
	u8 retry_left;
	u8 rnr_retry_left;
	bool rnr_wait;
	bool implied_nak;	/* rewound for a lost READ/atomic response */
	bool probe;		/* after an ACK timeout: one packet, then wait */
	u32 probe_end;		/* req.psn_max at the timeout */
	bool wake_req;		/* an answer unblocked the requester */
	struct timer_list rto;		/* local ACK timeout */
	struct timer_list rnr_timer;
};

/* Receive WQE copied out of the RQ, and progress through it. */
struct sroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	u64 offset;		/* bytes placed, at most SROCE_MAX_MSG_SIZE */
	struct sroce_sge sge[SROCE_MAX_SGE];
};

/*
 * A READ, atomic, ATOMIC WRITE or FLUSH request the responder has accepted
 * (IBA 9.7.5.1.2): its answer goes out in its turn, and is kept so that a
 * duplicate is answered again. CMP_SWAP and FETCH_ADD are executed in
 * their turn too, after every earlier READ has been read.
 */
struct sroce_res {
	bool valid;
	bool atomic;		/* CMP_SWAP or FETCH_ADD: an atomic ACK */
	bool cmp_swap;
	bool executed;		/* atomic: done, @orig holds the result */
	bool failed;		/* atomic: executing it failed (NAK in its turn) */
	u32 first_psn;
	u32 npsn;
	u32 msn;		/* the MSN its answers carry */
	u64 va;
	u32 rkey;
	u32 length;
	u32 sent;		/* READ response bytes sent */
	u64 compare;		/* atomic operands */
	u64 swap_add;
	u64 orig;		/* atomic: value before the operation */
};

struct sroce_resp {
	u32 epsn;		/* next expected PSN */
	u32 msn;
	bool in_send;		/* a multi-packet SEND is in progress */
	bool in_write;		/* a multi-packet WRITE is in progress */
	bool have_wqe;
	bool nak_sent;		/* one sequence NAK per gap */
	bool last_wqe_sent;	/* SRQ: IB_EVENT_QP_LAST_WQE_REACHED raised */
	struct sroce_rwqe rwqe;
	u64 write_va;		/* next byte of an RDMA WRITE */
	u32 write_left;
	u32 write_rkey;
	u32 write_len;		/* total length (for WRITE_WITH_IMM's CQE) */
	struct sroce_res *res;	/* max_dest_rd_atomic entries */
	u32 res_n;
	u32 res_head;		/* next entry to use, below res_n */
	u32 res_pending;	/* entries before res_head still to answer */
	struct sroce_res *replay;	/* duplicate READ being answered again */
	/*
	 * An ACK, NAK or RNR NAK held back behind answers still to go out
	 * (responses leave in PSN order, IBA 9.7.5.1); with ans_fatal the
	 * QP fails once the NAK is out, and takes no request meanwhile.
	 */
	bool ans_owed;
	bool ans_fatal;
	u8 ans_syndrome;
	u32 ans_psn;
	u32 ans_msn;
	/* Built, to be sent in this order (sroce_resp_tx_claim()). */
	struct sk_buff_head txq;
	bool tx_busy;		/* a context is sending from txq */
};

struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_dev *sdev;
	bool is_user;
	refcount_t refs;		/* data-path lookups + 1 while alive */
	struct completion released;

	struct mutex modify_lock;	/* serialises modify/query/destroy */
	spinlock_t state_lock;		/* state as seen by the data path */
	enum ib_qp_state state;
	spinlock_t sq_lock;		/* requester + completer state */
	spinlock_t rq_lock;		/* kernel post_recv (producer) */
	spinlock_t sq_post_lock;	/* kernel post_send (producer) */

	bool sig_all;			/* IB_SIGNAL_ALL_WR: every WR completes */
	struct sroce_queue sq;
	struct sroce_queue rq;		/* absent when attached to an SRQ */
	u32 max_inline;
	u32 max_send_sge;
	u32 max_recv_sge;

	/* Attributes (struct ib_qp_attr subset the transport uses). */
	u32 qkey;
	u16 pkey_index;
	u32 dest_qpn;
	u32 sq_psn;
	u32 rq_psn;
	enum ib_mtu path_mtu;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 sq_draining;
	int access_flags;
	struct sroce_path path;

	/* Data path (sroce_req.c, sroce_resp.c, sroce_comp.c). */
	struct work_struct work;	/* send engine, read responses, flush */
	struct sroce_swqe_ring shadow;	/* validated copies of sent WQEs */
	struct sroce_req req;		/* under sq_lock */
	unsigned long req_run;		/* SROCE_REQ_RUNNING, SROCE_REQ_AGAIN */
	struct sroce_comp comp;		/* under sq_lock */
	struct sroce_resp resp;		/* under resp_lock */
	spinlock_t resp_lock;
	struct dst_cache dst_cache;
	bool dst_cache_ready;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *qp)
{
	return container_of(qp, struct sroce_qp, ibqp);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
void sroce_qp_flush(struct sroce_qp *qp);
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_put(struct sroce_qp *qp);
bool sroce_qp_to_error(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);
void sroce_qp_ring_error(struct sroce_qp *qp);
u8 sroce_wr_to_wc_opcode(u32 wr_opcode);

/* ------------------------------------------------------------------------
 * Data path
 */

extern struct workqueue_struct *sroce_wq;

/* Direction of a copy between a packet buffer and registered memory. */
enum sroce_copy_dir {
	SROCE_TO_MR,		/* write into the region */
	SROCE_FROM_MR,		/* read from the region */
};

/*
 * The packet side of a copy: a received skb (read with skb_copy_bits) or a
 * linear buffer (packets we build, atomic results).
 */
struct sroce_pktbuf {
	const struct sk_buff *skb;	/* NULL: use buf */
	u8 *buf;
	u32 off;
};

int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, struct sroce_pktbuf *pb,
		  u32 len, enum sroce_copy_dir dir);
int sroce_mr_atomic_write(struct sroce_mr *mr, u64 iova, u64 value);
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		    u64 swap_add, u64 *orig);
int sroce_sgl_copy(struct sroce_qp *qp, const struct sroce_sge *sge,
		   u32 num_sge, u64 offset, struct sroce_pktbuf *pb, u32 len,
		   enum sroce_copy_dir dir);

void sroce_qp_kick(struct sroce_qp *qp);
void sroce_qp_work(struct work_struct *work);
int sroce_qp_data_init(struct sroce_qp *qp);
void sroce_qp_data_cleanup(struct sroce_qp *qp);
void sroce_qp_data_reset(struct sroce_qp *qp);
void sroce_qp_fatal(struct sroce_qp *qp);
u32 sroce_qp_mtu(struct sroce_qp *qp);

struct sroce_swqe *sroce_swqe_get(struct sroce_qp *qp, u32 idx);
void sroce_req_run(struct sroce_qp *qp);
void sroce_req_run_softirq(struct sroce_qp *qp);
void sroce_comp_sent(struct sroce_qp *qp);
void sroce_comp_fail_at(struct sroce_qp *qp, u32 idx, int status);
void sroce_req_rewind(struct sroce_qp *qp, u32 psn);
/*
 * WQEs completed per hold of sq_lock or resp_lock when a QP in Error is
 * flushed (sroce_req_flush(), sroce_resp_flush()); the CPU is given up
 * between batches.
 */
#define SROCE_FLUSH_BATCH	64
void sroce_req_flush(struct sroce_qp *qp);
void sroce_req_flush_answered(struct sroce_qp *qp,
			      const struct sroce_swqe *s);
void sroce_comp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt);
void sroce_comp_init(struct sroce_qp *qp);
void sroce_comp_timers_stop(struct sroce_qp *qp);
void sroce_comp_arm(struct sroce_qp *qp);
void sroce_resp_rcv(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct sroce_pkt *pkt);
void sroce_resp_run(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_cleanup(struct sroce_qp *qp);
int sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_flush(struct sroce_qp *qp);
void sroce_resp_forget(struct sroce_qp *qp);
void sroce_qp_xmit_list(struct sroce_qp *qp, struct sk_buff_head *list);

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_qp_gone(struct sroce_qp *qp);
void sroce_mcast_cleanup(struct sroce_dev *sdev);
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
		     const struct sroce_pkt *pkt);

/* ------------------------------------------------------------------------
 * Other verbs (sroce_verbs.c)
 */

int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *imm);
enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port);
struct net_device *sroce_get_netdev(struct ib_device *ibdev, u32 port);
void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str);
int sroce_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void sroce_dealloc_ucontext(struct ib_ucontext *uctx);
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int sroce_av_from_ah_attr(struct sroce_dev *sdev, struct sroce_av *av,
			  const struct rdma_ah_attr *attr);

/* ------------------------------------------------------------------------
 * Device and port (sroce_main.c)
 */

enum ib_mtu sroce_mtu_from_netdev(unsigned int mtu);
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
void sroce_port_update(struct sroce_dev *sdev);

#define sroce_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define sroce_warn_rl(sdev, fmt, ...) \
	ibdev_warn_ratelimited(&(sdev)->ibdev, fmt, ##__VA_ARGS__)

#endif /* SROCE_H */
