// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: memory keys, resolved in one place. A key the wire or a WQE
 * names is a memory window's (sroce_mw.c) or a region's (sroce_mr.c);
 * this file asks the windows first and the regions after, so that
 * neither of those two files needs the other's lookups (windows use
 * regions, never the reverse).
 */
#include "sroce_qp.h"

/*
 * The region a remote access by @qp names with @rkey, checked for @len
 * bytes at @va with @access: a memory window's region, or a region's own
 * rkey. Referenced, or NULL.
 */
struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				u64 len, int access)
{
	struct sroce_mr *mr;
	int err;

	mr = sroce_mw_resolve(qp, rkey, va, len, access, &err);
	if (err != -ENOENT)
		return mr;
	mr = sroce_mr_get(qp->sdev, rkey);
	if (mr && sroce_mr_check(mr, sroce_qp_pd(qp), va, len, access)) {
		sroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/*
 * The whole region behind @rkey, for a FLUSH at selectivity level "memory
 * region" (IBA A19.4.3): key, PD and @access are checked, no range. A
 * window never grants FLUSH access (sroce_mw_access_ok()), so a window key
 * is refused like a bad one.
 */
struct sroce_mr *sroce_rkey_get_region(struct sroce_qp *qp, u32 rkey,
				       int access)
{
	struct sroce_mr *mr;
	int err;

	mr = sroce_mw_resolve(qp, rkey, 0, 0, access, &err);
	if (err != -ENOENT) {
		if (mr)
			sroce_mr_put(mr);
		return NULL;
	}
	mr = sroce_mr_get(qp->sdev, rkey);
	if (mr && sroce_mr_check(mr, sroce_qp_pd(qp), mr->iova, 0, access)) {
		sroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/*
 * Invalidate @key: IB_WR_LOCAL_INV, or the rkey of a SEND with Invalidate
 * (IBA 10.6.6.2). Only a fast-registration MR of the QP's PD, or a type 2
 * window, named by its whole current key, can be invalidated (a region
 * with windows bound to it cannot). Returns 0 or -EINVAL.
 */
int sroce_key_invalidate(struct sroce_qp *qp, u32 key)
{
	int err = sroce_mw_invalidate(qp, key);

	if (err != -ENOENT)
		return err;	/* @key names a window */
	return sroce_mr_invalidate(qp, key);
}
