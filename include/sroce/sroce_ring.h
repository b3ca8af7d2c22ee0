/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Ring index and sizing arithmetic shared by the kernel, the provider and the
 * host unit tests. Pure functions only: memory ordering (acquire/release of
 * prod and cons) is done by each side with its own primitives, as
 * include/uapi/rdma/sroce-abi.h describes.
 */
#ifndef SROCE_RING_H
#define SROCE_RING_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#endif

#include <rdma/sroce-abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest ring: 2^20 entries (as many WRs as rxe allows). */
#define SROCE_RING_MAX_ENTRIES		(1U << 20)
/* Entry strides are multiples of this. */
#define SROCE_RING_STRIDE_ALIGN		16U

/* Entries the producer has published and the consumer not yet freed. */
static inline uint32_t sroce_ring_used(uint32_t prod, uint32_t cons)
{
	return prod - cons;
}

/*
 * True if a producer index read from shared memory is consistent with the
 * consumer's private index: it may be ahead by at most num_entries. Catches
 * indices past the end and producers behind the consumer (which wrap to a
 * huge distance).
 */
static inline bool sroce_ring_prod_valid(uint32_t prod, uint32_t cons,
					 uint32_t num_entries)
{
	return prod - cons <= num_entries;
}

/*
 * The check of a consumer that has already read (copied) the entries up to
 * its private index @read, ahead of the consumer index @cons it publishes
 * (cons <= read <= cons + num_entries): the producer index must also not
 * move back over entries already read. Accepting one that did would have
 * the consumer read past prod and later publish cons > prod.
 */
static inline bool sroce_ring_prod_valid_read(uint32_t prod, uint32_t cons,
					      uint32_t read,
					      uint32_t num_entries)
{
	return prod - cons <= num_entries && prod - cons >= read - cons;
}

/* Same check seen from the producer: a consumer index read from shared memory. */
static inline bool sroce_ring_cons_valid(uint32_t prod, uint32_t cons,
					 uint32_t num_entries)
{
	return prod - cons <= num_entries;
}

static inline bool sroce_ring_full(uint32_t prod, uint32_t cons,
				   uint32_t num_entries)
{
	return prod - cons >= num_entries;
}

static inline uint32_t sroce_ring_slot(uint32_t idx, uint32_t num_entries)
{
	return idx & (num_entries - 1);
}

/* Smallest power of two >= n, for 1 <= n <= 2^31; 0 for anything else. */
static inline uint32_t sroce_ring_roundup_pow2(uint32_t n)
{
	uint32_t p = 1;

	if (n == 0 || n > (1U << 31))
		return 0;
	while (p < n)
		p <<= 1;
	return p;
}

/*
 * Number of entries for a queue that must hold @wanted outstanding entries:
 * the next power of two, at least 1; 0 if @wanted is beyond @max_entries.
 */
static inline uint32_t sroce_ring_entries_for(uint32_t wanted,
					      uint32_t max_entries)
{
	uint32_t n;

	if (wanted > max_entries)
		return 0;
	n = sroce_ring_roundup_pow2(wanted ? wanted : 1);
	if (n == 0 || n > SROCE_RING_MAX_ENTRIES)
		return 0;
	return n;
}

static inline uint32_t sroce_ring_align_stride(uint32_t bytes)
{
	return (bytes + SROCE_RING_STRIDE_ALIGN - 1) &
	       ~(SROCE_RING_STRIDE_ALIGN - 1);
}

/* Stride of a send WQE with room for @max_sge SGEs or @max_inline bytes. */
static inline uint32_t sroce_send_wqe_stride(uint32_t max_sge,
					     uint32_t max_inline)
{
	uint32_t sge_bytes = max_sge * (uint32_t)sizeof(struct sroce_sge);
	uint32_t data = sge_bytes > max_inline ? sge_bytes : max_inline;

	return sroce_ring_align_stride(SROCE_SEND_WQE_HDR_SIZE + data);
}

/* Inline bytes a send WQE of @stride can carry. */
static inline uint32_t sroce_send_wqe_inline_room(uint32_t stride)
{
	return stride - SROCE_SEND_WQE_HDR_SIZE;
}

/* SGEs a send WQE of @stride can carry. */
static inline uint32_t sroce_send_wqe_sge_room(uint32_t stride)
{
	return (stride - SROCE_SEND_WQE_HDR_SIZE) /
	       (uint32_t)sizeof(struct sroce_sge);
}

static inline uint32_t sroce_recv_wqe_stride(uint32_t max_sge)
{
	return sroce_ring_align_stride(SROCE_RECV_WQE_HDR_SIZE +
				       max_sge * (uint32_t)sizeof(struct sroce_sge));
}

static inline uint32_t sroce_recv_wqe_sge_room(uint32_t stride)
{
	return (stride - SROCE_RECV_WQE_HDR_SIZE) /
	       (uint32_t)sizeof(struct sroce_sge);
}

/*
 * Bytes of a whole ring mapping: header plus entries, rounded up to
 * @page_size (a power of two). 0 on overflow.
 */
static inline size_t sroce_ring_bytes(uint32_t num_entries, uint32_t stride,
				      size_t page_size)
{
	uint64_t bytes = (uint64_t)num_entries * stride + SROCE_RING_HDR_SIZE;

	bytes = (bytes + page_size - 1) & ~((uint64_t)page_size - 1);
	if (bytes > (uint64_t)1 << 31)
		return 0;
	return (size_t)bytes;
}

/* Address of the entry at index @idx (any free-running value). */
static inline void *sroce_ring_entry(void *ring, uint32_t idx,
				     uint32_t num_entries, uint32_t stride)
{
	return (uint8_t *)ring + SROCE_RING_HDR_SIZE +
	       (size_t)sroce_ring_slot(idx, num_entries) * stride;
}

#ifdef __cplusplus
}
#endif

#endif /* SROCE_RING_H */
