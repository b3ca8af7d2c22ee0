/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce provider objects. Each embeds the libibverbs object it stands for
 * and is recovered from it with a to_*() conversion (container_of style).
 * Objects are created with zalloc() and destroyed with zfree(); their
 * members release what they own (mappings, locks) in their destructors.
 */
#ifndef SROCE_PROVIDER_OBJECTS_H
#define SROCE_PROVIDER_OBJECTS_H

#include "ring.h"
#include "util.h"
#include "verbs_private.h"

#include <rdma/sroce-abi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sroce
{

template <typename Outer, typename Inner> Outer *from_member(Inner *inner, size_t offset)
{
	return reinterpret_cast<Outer *>(reinterpret_cast<char *>(inner) - offset);
}

/*
 * A command or response buffer for an ibv_cmd_* helper: libibverbs' part
 * (Core) immediately followed by the driver's udata (Drv). The kernel's
 * structs end in flexible arrays, so Core is kept as bytes and handed to
 * libibverbs by pointer; size() is what the helper must be told.
 */
template <typename Core, typename Drv> struct WithUdata {
	alignas(Core) unsigned char core[sizeof(Core)];
	Drv drv;

	Core *ibv() { return reinterpret_cast<Core *>(core); }
	static constexpr size_t size() { return sizeof(Core) + sizeof(Drv); }
};

/* The udata must start right after the core part: no padding between. */
template <typename T> constexpr bool udata_packed()
{
	return offsetof(T, drv) == sizeof(T::core);
}

struct Device {
	verbs_device vdev;
};

/* Allocated (zeroed) by libibverbs, so trivially constructible. */
struct Context {
	verbs_context vctx;
	sroce_alloc_ucontext_resp caps; /* what the kernel reported at open */
	size_t page_size;
};

/*
 * ibv_alloc_td(): the user's promise that one thread at a time uses the
 * objects of the parent domains that hold it, so their queues take no lock.
 */
struct Td {
	ibv_td ibtd;
	uint32_t users = 0; /* parent domains that hold it (atomic) */
};

using DomainAlloc = void *(*)(ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
                              uint64_t resource_type);
using DomainFree = void (*)(ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain())
 * when @protection is set: that PD's handle in a provider-only object with
 * an optional thread domain and allocator. The kernel never sees a parent
 * domain; every command goes out with the PD's handle.
 */
struct Pd {
	ibv_pd ibpd;
	/* A PD: its parent domains; a parent domain: its QPs, CQs, SRQs (atomic). */
	uint32_t users = 0;
	Pd *protection = nullptr;
	Td *td = nullptr;
	void *pd_context = nullptr;
	DomainAlloc alloc = nullptr;
	DomainFree free = nullptr;
};

/*
 * The resource_type a parent domain's allocator is called with: the
 * rdma_driver_id in the upper 32 bits (sroce has none: RDMA_DRIVER_UNKNOWN,
 * 0), the object below. What it allocates is the provider's state of the
 * object; the rings stay in memory the kernel allocates (architecture.rst).
 */
enum : uint64_t {
	kResQp = 1,
	kResCq = 2,
	kResSrq = 3,
};

/* Where a QP's, CQ's or SRQ's own memory came from (domain_zalloc()). */
struct DomainMem {
	Pd *domain = nullptr; /* the parent domain it counts on, if any */
	uint64_t type = 0;
	bool custom = false; /* from domain->alloc: back through domain->free */
};

struct Mr {
	verbs_mr vmr;
};

struct Mw {
	ibv_mw ibmw;
};

/* Device memory: kernel pages this process maps (verbs_mem.cpp). */
struct Dm {
	verbs_dm vdm;
	uint64_t length = 0; /* what was asked for: copies stay inside it */
	void *map = nullptr; /* length rounded up to pages, mapped */
	size_t map_len = 0;
	~Dm();
};

struct Ah {
	ibv_ah ibah;
	uint32_t ah_num = 0;
	sroce_av av{}; /* resolved by the kernel at create time */
};

struct Cq {
	verbs_cq vcq;
	DomainMem mem;
	SpinLock lock;
	ConsumerRing cq;
	RingMapping mapping;
	/* Extended polling (ibv_start_poll): the entry being read, a private copy. */
	sroce_cqe cur{};
	bool cur_valid = false;
	/* Empty polls while busy polling is offered, and whether its command failed. */
	uint32_t empty_polls = 0;
	bool busy_poll_failed = false;
};

/* A work queue the provider produces into: SQ, RQ or SRQ. */
struct WorkQueue {
	SpinLock lock;
	ProducerRing pr;
	RingMapping mapping;
	uint32_t max_sge = 0;    /* per WQE, as granted and as the stride allows */
	uint32_t max_inline = 0; /* send queue only */
};

/*
 * The extended send API (ibv_wr_*, post_send_ex.cpp): the work request
 * being built, its gather list or inline bytes (copied at the call, as
 * the API requires), and the batch since ibv_wr_start(): WQEs are written
 * into the ring at once but prod is published only by ibv_wr_complete().
 */
struct QpExState {
	static constexpr unsigned kMaxSge = 32;     /* the kernel's SROCE_MAX_SGE */
	static constexpr unsigned kMaxInline = 512; /* the kernel's SROCE_MAX_INLINE */
	ibv_send_wr cur;
	ibv_sge sges[kMaxSge];
	uint8_t inline_buf[kMaxInline];
	uint64_t ops = 0;   /* send_ops_flags of the QP */
	uint32_t start = 0; /* the SQ's prod at ibv_wr_start() */
	int err = 0;        /* first error of the batch */
	bool have_cur = false;
};

struct Qp {
	verbs_qp vqp;
	DomainMem mem;
	WorkQueue sq;
	WorkQueue rq; /* no ring when the QP uses an SRQ */
	bool sq_sig_all = false;
	QpExState ex;
};

struct Srq {
	verbs_srq vsrq;
	DomainMem mem;
	WorkQueue rq;
};

/* to_*() use offsetof, which needs standard-layout types. */
static_assert(std::is_standard_layout_v<Device> && std::is_standard_layout_v<Context>);
static_assert(std::is_standard_layout_v<Dm>);
static_assert(std::is_standard_layout_v<Pd> && std::is_standard_layout_v<Mr> &&
              std::is_standard_layout_v<Mw> && std::is_standard_layout_v<Ah>);
static_assert(std::is_standard_layout_v<Cq> && std::is_standard_layout_v<Qp> &&
              std::is_standard_layout_v<Srq>);
/* libibverbs callocs the context and never runs a constructor. */
static_assert(std::is_trivially_default_constructible_v<Context>);

inline Context *to_ctx(ibv_context *ibctx)
{
	return from_member<Context>(ibctx, offsetof(Context, vctx.context));
}

inline Device *to_dev(ibv_device *ibdev)
{
	return from_member<Device>(ibdev, offsetof(Device, vdev.device));
}

inline Pd *to_pd(ibv_pd *ibpd)
{
	return from_member<Pd>(ibpd, offsetof(Pd, ibpd));
}
inline Td *to_td(ibv_td *ibtd)
{
	return from_member<Td>(ibtd, offsetof(Td, ibtd));
}
/* @ibpd's parent domain, or nullptr when it is a plain PD (or none). */
inline Pd *parent_domain_of(ibv_pd *ibpd)
{
	Pd *pd = ibpd ? to_pd(ibpd) : nullptr;

	return pd && pd->protection ? pd : nullptr;
}

/*
 * A zeroed, constructed QP, CQ or SRQ (@type kRes*): from @domain's
 * allocator when it has one that does not answer IBV_ALLOCATOR_USE_DEFAULT,
 * else calloc(). The object counts on @domain (a parent domain or nullptr)
 * until domain_free(). nullptr with errno set on failure.
 */
template <typename T> T *domain_zalloc(Pd *domain, uint64_t type)
{
	void *mem = nullptr;
	bool custom = false;

	if (domain && domain->alloc) {
		mem = domain->alloc(&domain->ibpd, domain->pd_context, sizeof(T), alignof(T), type);
		if (!mem)
			return fail<T>(ENOMEM);
		custom = mem != IBV_ALLOCATOR_USE_DEFAULT;
		if (custom && reinterpret_cast<uintptr_t>(mem) % alignof(T)) {
			domain->free(&domain->ibpd, domain->pd_context, mem, type);
			return fail<T>(EINVAL); /* the allocator broke its contract */
		}
		if (custom)
			memset(mem, 0, sizeof(T));
	}
	if (!custom)
		mem = calloc(1, sizeof(T));
	if (!mem)
		return fail<T>(ENOMEM);
	T *obj = new (mem) T();
	obj->mem = DomainMem{domain, type, custom};
	if (domain)
		__atomic_fetch_add(&domain->users, 1, __ATOMIC_RELAXED);
	return obj;
}

template <typename T> void domain_free(T *obj)
{
	if (!obj)
		return;
	const DomainMem m = obj->mem;

	obj->~T();
	if (m.custom)
		m.domain->free(&m.domain->ibpd, m.domain->pd_context, obj, m.type);
	else
		free(obj);
	if (m.domain)
		__atomic_fetch_sub(&m.domain->users, 1, __ATOMIC_RELEASE);
}

template <typename T> using DomainOwned = Owned<T, domain_free<T>>;
inline Mr *to_mr(verbs_mr *vmr)
{
	return from_member<Mr>(vmr, offsetof(Mr, vmr));
}
inline Dm *to_dm(ibv_dm *ibdm)
{
	return from_member<Dm>(ibdm, offsetof(Dm, vdm.dm));
}
inline Mw *to_mw(ibv_mw *ibmw)
{
	return from_member<Mw>(ibmw, offsetof(Mw, ibmw));
}
inline Ah *to_ah(ibv_ah *ibah)
{
	return from_member<Ah>(ibah, offsetof(Ah, ibah));
}
inline Cq *to_cq(ibv_cq *ibcq)
{
	return from_member<Cq>(ibcq, offsetof(Cq, vcq.cq));
}
inline Cq *to_cq(ibv_cq_ex *ibcq)
{
	return from_member<Cq>(ibcq, offsetof(Cq, vcq.cq_ex));
}
inline Qp *to_qp(ibv_qp *ibqp)
{
	return from_member<Qp>(ibqp, offsetof(Qp, vqp.qp));
}
inline Srq *to_srq(ibv_srq *ibsrq)
{
	return from_member<Srq>(ibsrq, offsetof(Srq, vsrq.srq));
}

/* ---- Data path (post_send.cpp, post_recv.cpp, poll_cq.cpp) ------------- */

int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
int bind_mw(ibv_qp *ibqp, ibv_mw *mw, ibv_mw_bind *mw_bind);
int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc);
/* ibv_query_rt_values_ex: the clock CQEs are stamped with. */
int query_rt_values(ibv_context *ibctx, ibv_values_ex *values);
int req_notify_cq(ibv_cq *ibcq, int solicited_only);
/* Installs the ibv_cq_ex polling callbacks for @wc_flags. */
void cq_ex_set_ops(ibv_cq_ex *cq_ex, uint64_t wc_flags);

/* ---- Control path (verbs_*.cpp) --------------------------------------- */

int query_device_ex(ibv_context *ibctx, const ibv_query_device_ex_input *input,
                    ibv_device_attr_ex *attr, size_t attr_size);
int query_port(ibv_context *ibctx, uint8_t port, ibv_port_attr *attr);

ibv_pd *alloc_pd(ibv_context *ibctx);
int dealloc_pd(ibv_pd *ibpd);
ibv_td *alloc_td(ibv_context *ibctx, ibv_td_init_attr *attr);
int dealloc_td(ibv_td *ibtd);
ibv_pd *alloc_parent_domain(ibv_context *ibctx, ibv_parent_domain_init_attr *attr);
ibv_mr *reg_mr(ibv_pd *ibpd, void *addr, size_t length, uint64_t hca_va, int access);
int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *ibpd, void *addr, size_t length, int access);
int dereg_mr(verbs_mr *vmr);
ibv_dm *alloc_dm(ibv_context *ibctx, ibv_alloc_dm_attr *attr);
int free_dm(ibv_dm *ibdm);
ibv_mr *reg_dm_mr(ibv_pd *ibpd, ibv_dm *ibdm, uint64_t dm_offset, size_t length,
                  unsigned int access);
ibv_mw *alloc_mw(ibv_pd *ibpd, enum ibv_mw_type type);
int dealloc_mw(ibv_mw *ibmw);
ibv_ah *create_ah(ibv_pd *ibpd, ibv_ah_attr *attr);
int destroy_ah(ibv_ah *ibah);

ibv_cq *create_cq(ibv_context *ibctx, int cqe, ibv_comp_channel *channel, int comp_vector);
ibv_cq_ex *create_cq_ex(ibv_context *ibctx, ibv_cq_init_attr_ex *attr);
int resize_cq(ibv_cq *ibcq, int cqe);
int destroy_cq(ibv_cq *ibcq);

ibv_qp *create_qp(ibv_pd *ibpd, ibv_qp_init_attr *attr);
ibv_qp *create_qp_ex(ibv_context *ibctx, ibv_qp_init_attr_ex *attr);
int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask);
int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr);
int destroy_qp(ibv_qp *ibqp);
ibv_qp *open_qp(ibv_context *ibctx, ibv_qp_open_attr *attr);
ibv_xrcd *open_xrcd(ibv_context *ibctx, ibv_xrcd_init_attr *attr);
int close_xrcd(ibv_xrcd *ibxrcd);
int get_srq_num(ibv_srq *ibsrq, uint32_t *srq_num);

ibv_srq *create_srq(ibv_pd *ibpd, ibv_srq_init_attr *attr);
ibv_srq *create_srq_ex(ibv_context *ibctx, ibv_srq_init_attr_ex *attr);
int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask);
int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr);
int destroy_srq(ibv_srq *ibsrq);

} /* namespace sroce */

#endif /* SROCE_PROVIDER_OBJECTS_H */
