/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Differences between the kernel APIs sroce builds against (Debian's 6.1
 * and 6.12 LTS kernels), all in this one header, keyed on
 * LINUX_VERSION_CODE. The rest of the module is written against one API and
 * has no version tests of its own.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
/*
 * Since 6.10 ib_device_ops.create_cq takes the uverbs attribute bundle
 * (NULL for a kernel CQ) where it took the udata; the udata is in it.
 */
static inline int
sroce_compat_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		       struct uverbs_attr_bundle *attrs)
{
	return sroce_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}

#define SROCE_OP_CREATE_CQ sroce_compat_create_cq
#else
#define SROCE_OP_CREATE_CQ sroce_create_cq
#endif

#endif /* SROCE_COMPAT_H */
