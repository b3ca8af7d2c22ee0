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
#include <linux/mm.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
/*
 * Since 6.10 ib_device_ops.create_cq takes the uverbs attribute bundle
 * (NULL for a kernel CQ) where it took the udata; the udata is in it.
 */
#define SROCE_CREATE_CQ_ARG struct uverbs_attr_bundle

static inline struct ib_udata *
sroce_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SROCE_CREATE_CQ_ARG struct ib_udata

static inline struct ib_udata *sroce_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
/*
 * RDMA FLUSH (IBA A19) came to the core in 6.2: the device capability, and
 * the MR and QP access bit that lets a peer FLUSH. sroce offers global
 * visibility only; persistence would need persistent memory behind the
 * region, which it cannot vouch for. Before 6.2 no region can grant FLUSH
 * access (the bit is 0), so every FLUSH that reaches us is refused.
 */
#define SROCE_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#define SROCE_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
/*
 * Only as a QP permission: ib_cm grants a connected QP both FLUSH bits as
 * soon as the device offers either kind (cm_init_qp_init_attr()).
 */
#define SROCE_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#else
#define SROCE_DEVICE_FLUSH_GLOBAL	0
#define SROCE_ACCESS_FLUSH_GLOBAL	0
#define SROCE_ACCESS_FLUSH_PERSISTENT	0
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
/* Since 6.3 a VMA's flags change only through the vm_flags_*() helpers. */
static inline void sroce_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}
#else
static inline void sroce_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * Fault [start, start + nr_pages pages) of @mm in without taking pages,
 * mmap_lock read-held by the caller; GUP may drop it while it waits for
 * I/O (*locked is then 0). 6.5 dropped the vmas argument.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
static inline long sroce_gup_fault_in(struct mm_struct *mm,
				      unsigned long start,
				      unsigned long nr_pages,
				      unsigned int gup_flags, int *locked)
{
	return get_user_pages_remote(mm, start, nr_pages, gup_flags, NULL,
				     locked);
}
#else
static inline long sroce_gup_fault_in(struct mm_struct *mm,
				      unsigned long start,
				      unsigned long nr_pages,
				      unsigned int gup_flags, int *locked)
{
	return get_user_pages_remote(mm, start, nr_pages, gup_flags, NULL,
				     NULL, locked);
}
#endif

/*
 * Driver details of an SRQ in `rdma resource show srq -dd`: the op is in
 * 6.12, not in 6.1 (the 6.1 core shows the generic attributes only).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define SROCE_OP_FILL_RES_SRQ(fn)	.fill_res_srq_entry = (fn),
#else
#define SROCE_OP_FILL_RES_SRQ(fn)
#endif

#endif /* SROCE_COMPAT_H */
