/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Memory keys (lkey/rkey of MRs and MWs), shared by the kernel and the host
 * unit tests. A key is (index << 8) | tag: the 24-bit index names the slot
 * of the region in the device's key table (0 is never used, so that a
 * zeroed key never matches), the 8-bit tag is chosen at random for every
 * registration. A lookup succeeds only when the whole key matches, so a
 * stale key (same index, older tag) or a key guessed by incrementing a
 * valid one (other tag, or other index) fails. The kernel allocates indices
 * cyclically, so a freed index returns only after the 24-bit space wraps,
 * and then with a fresh random tag.
 */
#ifndef SROCE_KEYS_H
#define SROCE_KEYS_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SROCE_KEY_TAG_BITS	8
#define SROCE_KEY_INDEX_MIN	1U
#define SROCE_KEY_INDEX_MAX	0xFFFFFFU

static inline uint32_t sroce_key_compose(uint32_t index, uint8_t tag)
{
	return (index << SROCE_KEY_TAG_BITS) | tag;
}

static inline uint32_t sroce_key_index(uint32_t key)
{
	return key >> SROCE_KEY_TAG_BITS;
}

static inline uint8_t sroce_key_tag(uint32_t key)
{
	return (uint8_t)key;
}

static inline bool sroce_key_index_valid(uint32_t index)
{
	return index >= SROCE_KEY_INDEX_MIN && index <= SROCE_KEY_INDEX_MAX;
}

#ifdef __cplusplus
}
#endif

#endif /* SROCE_KEYS_H */
