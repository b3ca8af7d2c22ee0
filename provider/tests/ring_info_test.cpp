// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Ring descriptors from the kernel are checked before anything is mapped
 * or indexed.
 */
#include "ring.h"

#include <gtest/gtest.h>

namespace
{

constexpr size_t kPage = 4096;

sroce_ring_info info(uint32_t n, uint32_t stride)
{
	sroce_ring_info i{};

	i.offset = 7 * kPage;
	i.num_entries = n;
	i.stride = stride;
	i.size = uint32_t(sroce_ring_bytes(n, stride, kPage));
	return i;
}

TEST(RingInfo, WhatTheKernelAllocatesIsValid)
{
	EXPECT_TRUE(sroce::ring_info_valid(info(1, 64), 64, kPage));
	EXPECT_TRUE(sroce::ring_info_valid(info(256, 160), 96, kPage));
	EXPECT_TRUE(sroce::ring_info_valid(info(SROCE_RING_MAX_ENTRIES, 64), 64, kPage));
}

TEST(RingInfo, EntryCountMustBeANonZeroPowerOfTwoWithinTheMaximum)
{
	EXPECT_FALSE(sroce::ring_info_valid(info(0, 64), 64, kPage));
	EXPECT_FALSE(sroce::ring_info_valid(info(3, 64), 64, kPage));
	sroce_ring_info big = info(SROCE_RING_MAX_ENTRIES, 64);
	big.num_entries *= 2;
	EXPECT_FALSE(sroce::ring_info_valid(big, 64, kPage));
}

TEST(RingInfo, StrideMustHoldAnEntryHeaderAndBeAligned)
{
	EXPECT_FALSE(sroce::ring_info_valid(info(8, 80), 96, kPage));
	EXPECT_FALSE(sroce::ring_info_valid(info(8, 100), 96, kPage));
}

TEST(RingInfo, SizeMustCoverHeaderAndEveryEntry)
{
	sroce_ring_info i = info(64, 64);

	i.size = SROCE_RING_HDR_SIZE + 64 * 64 - 1;
	EXPECT_FALSE(sroce::ring_info_valid(i, 64, kPage));
	i.size = 0;
	EXPECT_FALSE(sroce::ring_info_valid(i, 64, kPage));
}

TEST(RingInfo, OffsetMustBePageAligned)
{
	sroce_ring_info i = info(8, 64);

	i.offset += 8;
	EXPECT_FALSE(sroce::ring_info_valid(i, 64, kPage));
}

TEST(RingInfo, MappingRejectsAnInvalidDescriptorWithoutMapping)
{
	sroce::RingMapping m;
	sroce::Ring view;

	EXPECT_EQ(m.map(-1, info(3, 64), 64, kPage, &view), EPROTO);
	EXPECT_FALSE(m.mapped());
	EXPECT_FALSE(view.present());
}

} /* namespace */
