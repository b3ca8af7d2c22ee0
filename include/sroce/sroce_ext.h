/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce provider extensions: verbs that rdma-core 44's libibverbs has no
 * entry point for, exported by libsroce-rdmav34.so itself.
 *
 * RDMA FLUSH (IBA Annex A19). libibverbs 44 has no ibv_wr_flush(), so the
 * provider exports sroce_wr_flush() with the same arguments, plus a status.
 * Find it at run time in the provider libibverbs has already loaded:
 *
 *	void *h = dlopen("libsroce-rdmav34.so", RTLD_NOW | RTLD_NOLOAD);
 *	sroce_wr_flush_fn fn = h ? (sroce_wr_flush_fn)dlsym(h,
 *					SROCE_WR_FLUSH_SYMBOL) : NULL;
 *
 * (with the provider's directory, /usr/lib/<triplet>/libibverbs/, in the
 * path when it is not found by name). Use it like any ibv_wr_*() builder:
 * between ibv_wr_start() and ibv_wr_complete(), on an RC QP created with
 * ibv_create_qp_ex() and SROCE_QP_EX_WITH_FLUSH in send_ops_flags. It
 * returns 0, or EINVAL when @qp is not such an sroce QP (then nothing was
 * queued). The completion has opcode SROCE_WC_FLUSH and byte_len 0.
 *
 * The responder must have granted FLUSH: on Linux 6.2 and later a region
 * registered with SROCE_ACCESS_FLUSH_GLOBAL and a QP whose access flags
 * include it (the values of later libibverbs' IBV_ACCESS_FLUSH_GLOBAL and
 * the kernel's IB_ACCESS_FLUSH_GLOBAL). sroce offers global visibility
 * only; SROCE_FLUSH_PERSISTENT is sent as asked, but an sroce responder
 * refuses it.
 */
#ifndef SROCE_EXT_H
#define SROCE_EXT_H

#include <stddef.h>
#include <stdint.h>

struct ibv_qp_ex;

#define SROCE_WR_FLUSH_SYMBOL		"sroce_wr_flush"
/* send_ops_flags bit: IBV_QP_EX_WITH_FLUSH of later libibverbs */
#define SROCE_QP_EX_WITH_FLUSH		(1ULL << 11)
/* access flag of MRs and QPs: IBV_ACCESS_FLUSH_GLOBAL of later libibverbs */
#define SROCE_ACCESS_FLUSH_GLOBAL_BIT	(1U << 8)
#define SROCE_ACCESS_FLUSH_PERSISTENT_BIT (1U << 9)
/* ibv_device_attr_ex.device_cap_flags_ex: IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define SROCE_DEVICE_FLUSH_GLOBAL_BIT	(1ULL << 38)

/*
 * @type: SROCE_FLUSH_GLOBAL and/or SROCE_FLUSH_PERSISTENT; @level:
 * SROCE_FLUSH_RANGE or SROCE_FLUSH_MR (sroce-abi.h; the values of later
 * libibverbs' IBV_FLUSH_*).
 */
typedef int (*sroce_wr_flush_fn)(struct ibv_qp_ex *qp, uint32_t rkey,
				 uint64_t remote_addr, size_t len,
				 uint8_t type, uint8_t level);

#endif /* SROCE_EXT_H */
