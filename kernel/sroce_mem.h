/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: registered memory: regions (sroce_mr.c), windows (sroce_mw.c),
 * keys resolved to either (sroce_key.c) and copies between packets and
 * registered memory, for the engines.
 */
#ifndef SROCE_MEM_H
#define SROCE_MEM_H

#include "sroce.h"

enum sroce_mr_kind {
	SROCE_MR_DMA,		/* all of kernel memory (get_dma_mr) */
	SROCE_MR_USER,		/* pinned user pages (ib_umem) */
	SROCE_MR_FAST,		/* kernel fast registration (alloc_mr) */
	SROCE_MR_DEVMEM,	/* device memory (reg_dm_mr), zero based */
	SROCE_MR_ODP,		/* on-demand paging (sroce_odp.c) */
};

/*
 * Device memory (sroce_dm.c): pages the kernel allocates and the process
 * maps. Its mmap entry owns them, so they outlive the DM while the process
 * keeps them mapped; the core keeps the DM while a region uses it.
 */
struct sroce_mmap_entry;

struct sroce_dm {
	struct ib_dm ibdm;
	struct sroce_mmap_entry *mentry;
	struct sroce_ucontext *uc;	/* whose budget it counts in */
	size_t size;		/* the length rounded up to whole pages */
};

static inline struct sroce_dm *to_sdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct sroce_dm, ibdm);
}

/*
 * A fast-registration MR is FREE (its key matches nothing) from allocation
 * until IB_WR_REG_MR makes it VALID, and again after an invalidation.
 */
enum sroce_mr_state {
	SROCE_MR_FREE,
	SROCE_MR_VALID,
};

/*
 * The pages of one ODP umem (sroce_odp.c): an explicit region's, or one
 * child of an implicit region's. @inval_start, @inval_end (under the
 * region's odp_lock): the user range being invalidated; start == end:
 * none.
 */
struct sroce_odp_map {
	struct ib_umem_odp *odp;
	struct sroce_mr *mr;
	u64 inval_start;
	u64 inval_end;
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
	struct page **upages;	/* USER: pinned pages in order; DEVMEM: the DM's */
	u32 upage_off;		/* offset of iova in upages[0] */
	u32 nupages;
	u64 *pages;		/* SROCE_MR_FAST page list */
	u32 max_pages;
	u32 npages;
	u32 page_shift;		/* SROCE_MR_FAST: of the registered pages */
	u32 first_off;		/* SROCE_MR_FAST: offset of iova in pages[0] */
	atomic_t num_mw;	/* windows bound to it, or SROCE_MR_MW_CLOSED */
	/* SROCE_MR_ODP (sroce_odp.c): */
	struct ib_umem_odp *odp;	/* the region's, or the implicit root */
	struct sroce_odp_map odp_map;	/* an explicit region's pages */
	struct xarray odp_children;	/* implicit: chunk -> sroce_odp_map */
	struct mutex odp_child_mutex;	/* implicit: adds children */
	u32 odp_nchildren;		/* under odp_child_mutex */
	u64 odp_pin_limit;		/* pages of pinned_vm allowed */
	u64 odp_charged;		/* pages of tables in pinned_vm */
	spinlock_t odp_lock;	/* data path against invalidation */
	atomic_t faults;	/* advice jobs queued */
	/*
	 * 1 while registered + fault jobs in flight: the last one releases
	 * the umems and frees the region (sroce_mr_odp_put()).
	 */
	refcount_t odp_holds;
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
	u64 qp_serial;		/* type 2: the QP it is bound to */
};

static inline struct sroce_mw *to_smw(struct ib_mw *mw)
{
	return container_of(mw, struct sroce_mw, ibmw);
}

static inline struct sroce_mr *to_smr(struct ib_mr *mr)
{
	return container_of(mr, struct sroce_mr, ibmr);
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
struct sroce_mr *sroce_mr_get_odp(struct sroce_dev *sdev, u32 key);
struct sroce_qp;
struct sroce_send_wqe;
int sroce_mr_fast_reg(struct sroce_qp *qp, const struct sroce_send_wqe *w);
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key);
int sroce_key_invalidate(struct sroce_qp *qp, u32 key);
struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				u64 len, int access);
struct sroce_mr *sroce_rkey_get_region(struct sroce_qp *qp, u32 rkey,
				       int access);
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w);
int sroce_mw_invalidate(struct sroce_qp *qp, u32 key);
struct sroce_mr *sroce_mw_resolve(struct sroce_qp *qp, u32 rkey, u64 va,
				  u64 len, int access, int *err);
void sroce_mr_put(struct sroce_mr *mr);
u32 sroce_key_make(u32 index);

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

static inline void sroce_pktbuf_copy(struct sroce_pktbuf *pb, void *mem,
				     u32 n, enum sroce_copy_dir dir)
{
	if (dir == SROCE_TO_MR) {
		if (pb->skb)
			skb_copy_bits(pb->skb, pb->off, mem, n);
		else
			memcpy(mem, pb->buf + pb->off, n);
	} else {
		memcpy(pb->buf + pb->off, mem, n);
	}
	pb->off += n;
}

int sroce_mr_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write);

/* An atomic on an aligned 8-byte word of a region (sroce_word_apply()). */
struct sroce_word_op {
	enum {
		SROCE_WORD_CMP_SWAP,	/* IBA CmpSwap */
		SROCE_WORD_FETCH_ADD,	/* IBA FetchAdd */
		SROCE_WORD_STORE,	/* ATOMIC WRITE: a release store */
	} kind;
	u64 compare;
	u64 value;		/* swap, add or store */
	u64 orig;		/* out: the value before (not for STORE) */
};

/*
 * Real atomic instructions, so that an atomic is atomic against the CPU
 * and every other requester (IBA 9.4.5, IB_ATOMIC_HCA). The store is a
 * release: the stores of every request before it (WRITEs, SENDs,
 * atomics) are visible before the new value (IBA A19.4.2).
 */
static inline void sroce_word_apply(u64 *word, struct sroce_word_op *op)
{
	switch (op->kind) {
	case SROCE_WORD_CMP_SWAP:
		op->orig = cmpxchg64(word, op->compare, op->value);
		break;
	case SROCE_WORD_FETCH_ADD:
		op->orig = atomic64_fetch_add(op->value, (atomic64_t *)word);
		break;
	case SROCE_WORD_STORE:
		/* Release: the responder's earlier stores come first. */
		smp_store_release(word, op->value);
		break;
	}
}

int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, struct sroce_pktbuf *pb,
		  u32 len, enum sroce_copy_dir dir);
int sroce_mr_atomic_write(struct sroce_mr *mr, u64 iova, u64 value);
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		    u64 swap_add, u64 *orig);
/* Whose ODP fault a miss queues (sroce_odp_fault()). */
enum sroce_odp_side {
	SROCE_ODP_REQ,		/* requester and completer: the SQ's buffers */
	SROCE_ODP_RESP,		/* responder: receives and remote access */
	SROCE_ODP_SIDES
};

/*
 * One fault in flight (sroce_sgl.c): a QP side's, or an advice's. It holds
 * the module, the device's memory and its region (odp_holds), not the QP:
 * a fault can wait in the owner's memory for as long as that memory's
 * backing likes, and destroying the QP, deregistering the region or
 * removing the device does not wait for it.
 */
struct sroce_odp_job {
	struct work_struct work;
	/*
	 * The QP side waiting for it, which owns it (NULL: nobody, it frees
	 * itself when done: an advice, or a fault its QP left behind).
	 * Under sroce_odp_job_lock, with qp and the side's job pointer.
	 */
	struct sroce_odp_fault *f;
	struct sroce_qp *qp;	/* f's QP, kicked when done */
	struct sroce_mr *mr;	/* held: odp_holds */
	u64 iova;		/* where the access missed */
	u64 len;		/* bytes that must come in */
	u64 ahead;		/* bytes tried first (>= len) */
	bool write;
};

/* A QP side's faults (sroce_sgl.c). */
struct sroce_odp_fault {
	unsigned long pending;	/* SROCE_ODP_FAULT_PENDING: job in flight */
	/* Allocated with the QP; NULL once the QP is being destroyed. */
	struct sroce_odp_job *job;
	/*
	 * The last faults of this QP side that failed for good (nothing
	 * mapped there, no write access, the process gone, no table
	 * allowed): the side's access tried again there fails (-EFAULT)
	 * instead of faulting forever. Two, so that two accesses of one side
	 * that take turns (a READ's placement and a SEND's data) do not
	 * erase each other's. Written by the job before it lets go of
	 * pending, read by a request after it takes it.
	 */
	struct sroce_odp_bad {
		const struct sroce_mr *mr;	/* compared, never followed */
		u32 key;
		u64 start;		/* iova */
		u64 end;
	} bad[2];
	u8 bad_next;		/* the slot the next failure takes */
};

#define SROCE_ODP_FAULT_PENDING	0

int sroce_sgl_copy(struct sroce_qp *qp, int side, const struct sroce_sge *sge,
		   u32 num_sge, u64 offset, struct sroce_pktbuf *pb, u32 len,
		   enum sroce_copy_dir dir);
int sroce_sgl_ready(struct sroce_qp *qp, const struct sroce_sge *sge,
		    u32 num_sge);

/*
 * On-demand paging (sroce_odp.c). The copies above return -EAGAIN when a
 * page of an ODP region is not mapped: the caller asks for the fault with
 * sroce_odp_fault() (work item, process context) and tries again later;
 * the QP it names is kicked once the fault is done.
 */
struct ib_umem_odp;
struct sroce_word_op;
#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
int sroce_odp_init(struct sroce_mr *mr, struct ib_device *ibdev, u64 start,
		   u64 length, u64 iova, int access);
void sroce_odp_release(struct sroce_mr *mr);
u64 sroce_odp_pages_mapped(struct sroce_mr *mr);
int sroce_odp_fault_in(struct sroce_mr *mr, u64 iova, u64 len, u64 ahead,
		       bool write);
int sroce_odp_prefetch(struct sroce_mr *mr, u64 iova, u64 len, bool write,
		       bool fault);
int sroce_odp_copy(struct sroce_mr *mr, u64 iova, struct sroce_pktbuf *pb,
		   u32 len, enum sroce_copy_dir dir);
int sroce_odp_word(struct sroce_mr *mr, u64 iova, struct sroce_word_op *op);
int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write);
#else
/* A kernel without ODP: no region is ever SROCE_MR_ODP. */
static inline int sroce_odp_init(struct sroce_mr *mr, struct ib_device *ibdev,
				 u64 start, u64 length, u64 iova, int access)
{
	return -EOPNOTSUPP;
}

static inline void sroce_odp_release(struct sroce_mr *mr)
{
}

static inline u64 sroce_odp_pages_mapped(struct sroce_mr *mr)
{
	return 0;
}

static inline int sroce_odp_fault_in(struct sroce_mr *mr, u64 iova, u64 len,
				     u64 ahead, bool write)
{
	return -EOPNOTSUPP;
}

static inline int sroce_odp_prefetch(struct sroce_mr *mr, u64 iova, u64 len,
				     bool write, bool fault)
{
	return -EOPNOTSUPP;
}

static inline int sroce_odp_copy(struct sroce_mr *mr, u64 iova,
				 struct sroce_pktbuf *pb, u32 len,
				 enum sroce_copy_dir dir)
{
	return -EFAULT;
}

static inline int sroce_odp_word(struct sroce_mr *mr, u64 iova,
				 struct sroce_word_op *op)
{
	return -EFAULT;
}

static inline int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len,
				  bool write)
{
	return 0;
}
#endif
extern bool sroce_odp_stall;
int sroce_odp_wq_init(void);
void sroce_odp_wq_exit(void);
int sroce_odp_fault(struct sroce_mr *mr, u64 iova, u64 len, u64 ahead,
		    bool write, struct sroce_qp *qp, int side);
int sroce_odp_fault_init(struct sroce_qp *qp);
void sroce_odp_fault_detach(struct sroce_qp *qp);
void sroce_mr_odp_put(struct sroce_mr *mr);
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

#endif /* SROCE_MEM_H */
