/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A view of one mapped sroce ring and the only code that touches its shared
 * indices and flags. include/uapi/rdma/sroce-abi.h defines who owns what:
 *
 *   SQ, RQ, SRQ: user space produces (writes prod), the kernel consumes.
 *   CQ:          the kernel produces, user space consumes (writes cons).
 *
 * A producer publishes entries with store_prod() (release) and learns about
 * freed slots with load_cons() (acquire); a consumer sees new entries with
 * load_prod() (acquire) and frees them with store_cons() (release). The
 * doorbell and CQ-arm protocols each need one full barrier, full_fence().
 *
 * Every Ring member is private state of the provider object that owns it and
 * is protected by that object's lock; only *hdr is shared with the kernel.
 */
#ifndef SROCE_PROVIDER_RING_H
#define SROCE_PROVIDER_RING_H

#include <rdma/sroce-abi.h>
#include <sroce/sroce_ring.h>

#include <errno.h>

#include <cstddef>
#include <cstdint>

namespace sroce
{

static_assert(sizeof(sroce_ring_hdr) == SROCE_RING_HDR_SIZE);
static_assert(offsetof(sroce_ring_hdr, prod) == 0 * SROCE_CACHE_LINE);
static_assert(offsetof(sroce_ring_hdr, cons) == 1 * SROCE_CACHE_LINE);
static_assert(offsetof(sroce_ring_hdr, kflags) == 2 * SROCE_CACHE_LINE);
static_assert(offsetof(sroce_ring_hdr, uflags) == 2 * SROCE_CACHE_LINE + 4);
static_assert(sizeof(sroce_ring_info) == 24);

inline void full_fence()
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

struct Ring {
	sroce_ring_hdr *hdr = nullptr; /* nullptr: the queue has no ring */
	uint32_t num_entries = 0;      /* power of two */
	uint32_t stride = 0;           /* bytes per entry */

	bool present() const { return hdr != nullptr; }

	void *entry(uint32_t idx) const { return sroce_ring_entry(hdr, idx, num_entries, stride); }

	uint32_t load_prod() const { return __atomic_load_n(&hdr->prod, __ATOMIC_ACQUIRE); }
	uint32_t load_cons() const { return __atomic_load_n(&hdr->cons, __ATOMIC_ACQUIRE); }
	void store_prod(uint32_t v) const { __atomic_store_n(&hdr->prod, v, __ATOMIC_RELEASE); }
	void store_cons(uint32_t v) const { __atomic_store_n(&hdr->cons, v, __ATOMIC_RELEASE); }
	uint32_t load_kflags() const { return __atomic_load_n(&hdr->kflags, __ATOMIC_ACQUIRE); }
	uint32_t *uflags() const { return &hdr->uflags; }

	bool failed() const { return load_kflags() & SROCE_RING_F_ERROR; }
};

/*
 * Producer side of a work queue (SQ, RQ, SRQ). prod is ours and only ever
 * published; cons is the kernel's, cached and refreshed only when the cached
 * value says the ring is full.
 */
struct ProducerRing {
	Ring ring;
	uint32_t prod = 0;
	uint32_t cons_cache = 0;

	/* Adopt the indices the kernel left in a freshly mapped ring. */
	void sync_from_ring()
	{
		prod = __atomic_load_n(&ring.hdr->prod, __ATOMIC_RELAXED);
		cons_cache = ring.load_cons();
	}

	/*
	 * The slot for the next entry, or nullptr with *err set: ENOMEM when
	 * the ring is full (or absent), EIO when the kernel reports a cons
	 * index that cannot be right.
	 */
	void *next_slot(int *err)
	{
		if (!ring.present()) {
			*err = ENOMEM;
			return nullptr;
		}
		if (sroce_ring_full(prod, cons_cache, ring.num_entries)) {
			uint32_t cons = ring.load_cons();

			if (!sroce_ring_cons_valid(prod, cons, ring.num_entries)) {
				*err = EIO;
				return nullptr;
			}
			cons_cache = cons;
			if (sroce_ring_full(prod, cons_cache, ring.num_entries)) {
				*err = ENOMEM;
				return nullptr;
			}
		}
		return ring.entry(prod);
	}

	void publish(uint32_t new_prod) { ring.store_prod(new_prod); }
};

/* Consumer side of a completion queue: cons is ours, prod the kernel's. */
struct ConsumerRing {
	Ring ring;
	uint32_t cons = 0;

	void sync_from_ring() { cons = __atomic_load_n(&ring.hdr->cons, __ATOMIC_RELAXED); }
};

/* True if @info describes a ring the provider can map and index safely. */
bool ring_info_valid(const sroce_ring_info &info, uint32_t min_stride, size_t page_size);

/* mmap() of one ring on the uverbs command fd; unmapped on destruction. */
class RingMapping
{
      public:
	RingMapping() = default;
	RingMapping(const RingMapping &) = delete;
	RingMapping &operator=(const RingMapping &) = delete;
	~RingMapping() { reset(); }

	/* 0, or a positive errno. The view is filled on success. */
	int map(int cmd_fd, const sroce_ring_info &info, uint32_t min_stride, size_t page_size,
	        Ring *view);
	void reset();
	void swap(RingMapping &other);
	bool mapped() const { return addr_ != nullptr; }

      private:
	void *addr_ = nullptr;
	size_t len_ = 0;
};

} /* namespace sroce */

#endif /* SROCE_PROVIDER_RING_H */
