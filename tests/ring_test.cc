// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Ring index and sizing arithmetic (include/sroce/sroce_ring.h), shared by
// the kernel and the provider.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>
#include <sroce/sroce_ring.h>

namespace
{

TEST(Ring, EmptyWhenProducerEqualsConsumer)
{
	EXPECT_EQ(sroce_ring_used(5, 5), 0u);
	EXPECT_FALSE(sroce_ring_full(5, 5, 8));
}

TEST(Ring, FullWhenProducerIsOneRingAhead)
{
	EXPECT_TRUE(sroce_ring_full(13, 5, 8));
	EXPECT_FALSE(sroce_ring_full(12, 5, 8));
}

TEST(Ring, CountsAcrossThe32BitWrap)
{
	uint32_t cons = UINT32_MAX - 2;
	uint32_t prod = cons + 6; // wraps to 3
	EXPECT_EQ(prod, 3u);
	EXPECT_EQ(sroce_ring_used(prod, cons), 6u);
	EXPECT_TRUE(sroce_ring_prod_valid(prod, cons, 8));
	EXPECT_FALSE(sroce_ring_full(prod, cons, 8));
	EXPECT_EQ(sroce_ring_slot(prod, 8), 3u);
	EXPECT_EQ(sroce_ring_slot(cons, 8), 5u);
}

TEST(Ring, ProducerPastTheEndIsRejected)
{
	EXPECT_TRUE(sroce_ring_prod_valid(108, 100, 8));
	EXPECT_FALSE(sroce_ring_prod_valid(109, 100, 8));
	EXPECT_FALSE(sroce_ring_prod_valid(UINT32_MAX, 0, 8));
}

TEST(Ring, ProducerBehindConsumerIsRejected)
{
	EXPECT_FALSE(sroce_ring_prod_valid(99, 100, 8));
	EXPECT_FALSE(sroce_ring_prod_valid(0, 1, 1u << 20));
}

TEST(Ring, ConsumerIndexFromUserIsCheckedTheSameWay)
{
	EXPECT_TRUE(sroce_ring_cons_valid(10, 2, 8));
	EXPECT_FALSE(sroce_ring_cons_valid(10, 1, 8));  // more than a ring used
	EXPECT_FALSE(sroce_ring_cons_valid(10, 11, 8)); // consumer ahead
}

TEST(Ring, EveryValueIsCheckedAgainstAllConsumers)
{
	// Exhaustive over a small ring: valid iff distance <= size.
	const uint32_t n = 4;
	for (uint32_t cons = UINT32_MAX - 8; cons != 8; cons++)
		for (uint32_t d = 0; d < 16; d++)
			EXPECT_EQ(sroce_ring_prod_valid(cons + d, cons, n), d <= n);
}

TEST(Ring, ProducerMovedBackOverEntriesAlreadyReadIsRejected)
{
	// cons 100, entries up to 104 read (copied) by the consumer.
	EXPECT_TRUE(sroce_ring_prod_valid_read(104, 100, 104, 8));
	EXPECT_TRUE(sroce_ring_prod_valid_read(108, 100, 104, 8));
	EXPECT_FALSE(sroce_ring_prod_valid_read(102, 100, 104, 8)); // took back 2
	EXPECT_FALSE(sroce_ring_prod_valid_read(100, 100, 104, 8));
	EXPECT_FALSE(sroce_ring_prod_valid_read(99, 100, 104, 8));  // behind cons
	EXPECT_FALSE(sroce_ring_prod_valid_read(109, 100, 104, 8)); // past the end
	// Nothing read beyond cons: the plain check.
	EXPECT_TRUE(sroce_ring_prod_valid_read(100, 100, 100, 8));
	EXPECT_FALSE(sroce_ring_prod_valid_read(99, 100, 100, 8));
}

TEST(Ring, ProducerMovedBackIsRejectedAcrossTheWrap)
{
	// Exhaustive over a small ring: valid iff read - cons <= d <= size.
	const uint32_t n = 4;
	for (uint32_t cons = UINT32_MAX - 8; cons != 8; cons++)
		for (uint32_t r = 0; r <= n; r++)
			for (uint32_t d = 0; d < 16; d++)
				EXPECT_EQ(sroce_ring_prod_valid_read(cons + d, cons, cons + r, n),
				          d >= r && d <= n);
}

TEST(Ring, RoundUpToPowerOfTwo)
{
	EXPECT_EQ(sroce_ring_roundup_pow2(1), 1u);
	EXPECT_EQ(sroce_ring_roundup_pow2(2), 2u);
	EXPECT_EQ(sroce_ring_roundup_pow2(3), 4u);
	EXPECT_EQ(sroce_ring_roundup_pow2(1000), 1024u);
	EXPECT_EQ(sroce_ring_roundup_pow2(1u << 31), 1u << 31);
	EXPECT_EQ(sroce_ring_roundup_pow2(0), 0u);
	EXPECT_EQ(sroce_ring_roundup_pow2((1u << 31) + 1), 0u);
}

TEST(Ring, EntriesForRequestAreAPowerOfTwoAtLeastOne)
{
	EXPECT_EQ(sroce_ring_entries_for(0, 1u << 20), 1u);
	EXPECT_EQ(sroce_ring_entries_for(100, 1u << 20), 128u);
	EXPECT_EQ(sroce_ring_entries_for(1u << 20, 1u << 20), 1u << 20);
}

TEST(Ring, EntriesForRequestBeyondLimitIsZero)
{
	EXPECT_EQ(sroce_ring_entries_for((1u << 20) + 1, 1u << 20), 0u);
	EXPECT_EQ(sroce_ring_entries_for(UINT32_MAX, UINT32_MAX), 0u);
}

TEST(Ring, SendStrideFitsSgesOrInlineWhicheverIsLarger)
{
	EXPECT_EQ(sroce_send_wqe_stride(1, 0), 112u);
	EXPECT_EQ(sroce_send_wqe_stride(1, 64), 160u);
	EXPECT_EQ(sroce_send_wqe_stride(32, 0), 96u + 512u);
	EXPECT_EQ(sroce_send_wqe_stride(1, 1), 112u);
	for (uint32_t sge = 1; sge <= 32; sge++)
		for (uint32_t inl = 0; inl <= 512; inl += 7) {
			uint32_t s = sroce_send_wqe_stride(sge, inl);
			EXPECT_EQ(s % SROCE_RING_STRIDE_ALIGN, 0u);
			EXPECT_GE(sroce_send_wqe_sge_room(s), sge);
			EXPECT_GE(sroce_send_wqe_inline_room(s), inl);
		}
}

TEST(Ring, RecvStrideFitsSges)
{
	EXPECT_EQ(sroce_recv_wqe_stride(1), 32u);
	EXPECT_EQ(sroce_recv_wqe_stride(32), 16u + 512u);
	for (uint32_t sge = 1; sge <= 32; sge++)
		EXPECT_GE(sroce_recv_wqe_sge_room(sroce_recv_wqe_stride(sge)), sge);
}

TEST(Ring, BytesIncludeHeaderAndRoundToPages)
{
	EXPECT_EQ(sroce_ring_bytes(1, 64, 4096), 4096u);
	EXPECT_EQ(sroce_ring_bytes(64, 64, 4096), 8192u);      // 192 + 4096
	EXPECT_EQ(sroce_ring_bytes(1u << 20, 4096, 4096), 0u); // > 2 GiB
}

TEST(Ring, EntryAddressWrapsAtRingSize)
{
	std::vector<uint8_t> mem(SROCE_RING_HDR_SIZE + 4 * 32);
	uint8_t *base = mem.data();
	EXPECT_EQ(sroce_ring_entry(base, 0, 4, 32), base + SROCE_RING_HDR_SIZE);
	EXPECT_EQ(sroce_ring_entry(base, 5, 4, 32), base + SROCE_RING_HDR_SIZE + 32);
	EXPECT_EQ(sroce_ring_entry(base, UINT32_MAX, 4, 32), base + SROCE_RING_HDR_SIZE + 3 * 32);
}

} // namespace
