// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Memory keys (include/sroce/sroce_keys.h): a lookup must match the whole
// key, so stale and guessed keys fail.
#include <cstdint>
#include <set>

#include <gtest/gtest.h>
#include <sroce/sroce_keys.h>

namespace
{

TEST(Keys, IndexAndTagRoundTrip)
{
	for (uint32_t index : {1u, 2u, 0x1234u, 0xFFFFFFu})
		for (unsigned tag : {0u, 1u, 0x7fu, 0xffu}) {
			uint32_t key = sroce_key_compose(index, uint8_t(tag));
			EXPECT_EQ(sroce_key_index(key), index);
			EXPECT_EQ(sroce_key_tag(key), tag);
		}
}

TEST(Keys, IndexZeroAndIndicesBeyond24BitsAreInvalid)
{
	EXPECT_FALSE(sroce_key_index_valid(0));
	EXPECT_TRUE(sroce_key_index_valid(1));
	EXPECT_TRUE(sroce_key_index_valid(0xFFFFFF));
	EXPECT_FALSE(sroce_key_index_valid(0x1000000));
}

TEST(Keys, ZeroKeyNeverNamesARegion)
{
	EXPECT_FALSE(sroce_key_index_valid(sroce_key_index(0)));
	EXPECT_FALSE(sroce_key_index_valid(sroce_key_index(0xff)));
}

TEST(Keys, IncrementingAKeyNeverGivesTheSameRegionWithItsTag)
{
	// key + 1 keeps the index only by changing the tag, so the full-key
	// comparison the lookup does rejects it.
	uint32_t key = sroce_key_compose(42, 0x17);
	for (uint32_t d = 1; d < 1024; d++) {
		uint32_t guess = key + d;
		bool same_region = sroce_key_index(guess) == 42;
		EXPECT_FALSE(same_region && guess == key);
		if (same_region) {
			EXPECT_NE(sroce_key_tag(guess), 0x17);
		}
	}
}

TEST(Keys, DistinctSlotsGiveDistinctKeysWhateverTheTags)
{
	std::set<uint32_t> keys;
	for (uint32_t index = 1; index <= 4096; index++)
		keys.insert(sroce_key_compose(index, uint8_t(index * 37)));
	EXPECT_EQ(keys.size(), 4096u);
}

} // namespace
