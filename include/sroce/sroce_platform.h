/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: what the protocol core (kernel/proto/) needs from its environment.
 *
 * The protocol core is plain C that is compiled twice: by kbuild into
 * sroce.ko, and by the host toolchain into the unit tests and fuzzers. This
 * header is the only place that knows which of the two it is; everything
 * else uses the kernel integer names (u8 ... u64, s32) and the helpers below.
 */
#ifndef SROCE_PLATFORM_H
#define SROCE_PLATFORM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/build_bug.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <errno.h>
#include <assert.h>

/* The kernel's own definitions (asm-generic/int-ll64.h). */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed int s32;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * sroce_crc32_le() - little-endian (reflected) CRC-32, polynomial 0xEDB88320,
 * with no pre- or post-inversion: the running state is whatever the caller
 * passes in. This is the contract of the kernel's lib/crc32 crc32_le(),
 * which the module uses directly; the host build gets a table-driven
 * implementation in kernel/proto/sroce_icrc.c.
 */
#ifdef __KERNEL__
static inline u32 sroce_crc32_le(u32 crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
}
#else
u32 sroce_crc32_le(u32 crc, const void *p, size_t len);
#endif

#ifdef __cplusplus
}
#endif

#endif /* SROCE_PLATFORM_H */
