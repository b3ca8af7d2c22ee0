/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: rings shared with user space or private to a kernel consumer
 * (sroce_queue.c): their memory, the only accessors of their shared
 * indices and flags, and receive WQEs taken from them.
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include "sroce.h"

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

struct sroce_mmap_entry *sroce_mmap_alloc(struct ib_ucontext *uctx,
					  size_t size);
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

/* No room in @q for an entry at @prod (a producer's check of cons). */
static inline bool sroce_queue_full(struct sroce_queue *q, u32 prod)
{
	return sroce_ring_full(prod, sroce_ring_load_cons(q->hdr),
			       q->num_entries);
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

/* Receive WQE copied out of the RQ, and progress through it. */
struct sroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	u64 offset;		/* bytes placed, at most SROCE_MAX_MSG_SIZE */
	struct sroce_sge sge[SROCE_MAX_SGE];
};

int sroce_rq_fetch(struct sroce_queue *q, u32 max_sge, struct sroce_rwqe *r,
		   u32 *prod_out);
int sroce_rq_post_kernel(struct sroce_queue *q, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);

#endif /* SROCE_QUEUE_H */
