// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * invalid: invalid arguments fail with the expected errno, leave the object
 * usable, and leave no trace in the kernel log (the calling script checks
 * dmesg). Each check states the errno it expects; where the value is the
 * core's (ib_uverbs, ib_core) it holds for every driver, where it is the
 * driver's it follows rdma_rxe unless the IBA spec requires otherwise
 * (see the comments at each check).
 *
 * Checks of verbs a device does not implement are reported as info lines
 * (unsupported: VERB: ERRNO) without a verdict.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace vc
{

namespace
{

struct BadAttr;
struct Required;

class InvalidRun
{
      public:
	InvalidRun(Report &r, ibv_context *ctx, const ibv_device_attr &attr,
	           const ibv_port_attr &port, const GidChoice &gid)
	    : r_(r), ctx_(ctx), attr_(attr), port_(port), gid_(gid)
	{
	}

	bool setup();
	void qp_create_limits();
	void cq_limits();
	void cq_resize_below_used();
	void busy_destroy();
	void mr_invalid();
	void rereg_readonly(Mapping &ro);
	void rc_reset_transitions();
	void rc_rtr_rts_attrs();
	void ud_transitions();
	void ah_invalid();
	void queries();
	void post_invalid();
	void unsupported();

      private:
	QpPtr make_qp(ibv_qp_type type, uint32_t send_wr = 16, uint32_t recv_wr = 16,
	              uint32_t send_sge = 1, uint32_t recv_sge = 1, uint32_t inline_data = 0,
	              ibv_qp_init_attr *granted = nullptr);
	int create_qp_errno(const std::string &what, ibv_qp_type type, const ibv_qp_cap &cap);
	int modify(ibv_qp *qp, ibv_qp_attr attr, int mask)
	{
		return ibv_modify_qp(qp, &attr, mask);
	}
	bool walk(ibv_qp *qp, ibv_qp_type type, ibv_qp_state to);
	/*
	 * Checks that a transition of @qp (of @type, in @state) fails with
	 * @want. A device that accepts it moves the QP: it is then replaced
	 * by a new one in @state, so one deviation does not spoil the next
	 * checks.
	 */
	void refuse(QpPtr &qp, ibv_qp_type type, ibv_qp_state state, const std::string &name,
	            const ibv_qp_attr &attr, int mask, int want, const char *what);
	void refuse_transition(QpPtr &qp, ibv_qp_state state, const QpTransition &t,
	                       const char *step, const char *arrow, const Required *req,
	                       size_t n_req, const BadAttr *bad, size_t n_bad);
	void expect_kernel_state(ibv_qp *qp, ibv_qp_state state, const std::string &name);
	int reg_mr_errno(void *addr, size_t len, unsigned int access);
	int empty_gid_index();

	Report &r_;
	ibv_context *ctx_;
	const ibv_device_attr &attr_;
	const ibv_port_attr &port_;
	const GidChoice &gid_;
	PdPtr pd_;
	CqPtr cq_;
	std::vector<uint8_t> buf_ = std::vector<uint8_t>(1 << 16);
	MrPtr mr_;
};

bool InvalidRun::setup()
{
	errno = 0;
	pd_.reset(ibv_alloc_pd(ctx_));
	cq_.reset(ibv_create_cq(ctx_, 256, nullptr, nullptr, 0));
	if (pd_)
		mr_.reset(ibv_reg_mr(pd_.get(), buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE));
	return r_.check(pd_ && cq_ && mr_, "setup", "PD, CQ and MR for the checks: %s",
	                pd_ && cq_ && mr_ ? "created" : errno_name(null_errno()).c_str());
}

/* A QP of @type on @pd with @cq for both queues; @ia is what was asked. */
static QpPtr create_qp_on(ibv_pd *pd, ibv_cq *cq, ibv_qp_type type, const ibv_qp_cap &cap,
                          ibv_qp_init_attr &ia)
{
	ia = {};
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = type;
	ia.cap = cap;
	errno = 0;
	return QpPtr(ibv_create_qp(pd, &ia));
}

QpPtr InvalidRun::make_qp(ibv_qp_type type, uint32_t send_wr, uint32_t recv_wr, uint32_t send_sge,
                          uint32_t recv_sge, uint32_t inline_data, ibv_qp_init_attr *granted)
{
	ibv_qp_init_attr ia;
	QpPtr qp = create_qp_on(pd_.get(), cq_.get(), type,
	                        {send_wr, recv_wr, send_sge, recv_sge, inline_data}, ia);

	if (!qp)
		r_.fail("qp.create_helper", "%s QP %u/%u/%u/%u/%u: %s", qp_type_name(type), send_wr,
		        recv_wr, send_sge, recv_sge, inline_data, errno_name(null_errno()).c_str());
	if (granted)
		*granted = ia;
	return qp;
}

/* Walks @qp from RESET to @to along the valid transitions. */
bool InvalidRun::walk(ibv_qp *qp, ibv_qp_type type, ibv_qp_state to)
{
	QpTransition t = to_init(type, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	int ret = ibv_modify_qp(qp, &t.attr, t.mask);

	if (!ret && to >= IBV_QPS_RTR) {
		t = to_rtr(type, gid_, qp->qp_num);
		ret = ibv_modify_qp(qp, &t.attr, t.mask);
	}
	if (!ret && to >= IBV_QPS_RTS) {
		t = to_rts(type);
		ret = ibv_modify_qp(qp, &t.attr, t.mask);
	}
	if (ret)
		r_.fail("qp.walk_helper", "walking a %s QP to %s failed: %s", qp_type_name(type),
		        qp_state_name(to), errno_name(ret).c_str());
	return ret == 0;
}

int InvalidRun::create_qp_errno(const std::string &what, ibv_qp_type type, const ibv_qp_cap &cap)
{
	ibv_qp_init_attr ia;
	QpPtr qp = create_qp_on(pd_.get(), cq_.get(), type, cap, ia);

	if (qp) {
		r_.info("%s: the QP was created (qp_num %u)", what.c_str(), qp->qp_num);
		return 0;
	}
	return null_errno();
}

/* IBA 11.2.4.1 / ib_core: capacities beyond the device's limits. */
void InvalidRun::qp_create_limits()
{
	const ibv_qp_cap base = {16, 16, 1, 1, 0};
	const uint32_t wr = uint32_t(attr_.max_qp_wr) + 1;
	const uint32_t sge = uint32_t(attr_.max_sge) + 1;
	struct {
		const char *name;
		ibv_qp_cap cap;
		const char *what;
	} cases[] = {
	    {"qp.create.send_wr_over_max", {wr, 16, 1, 1, 0}, "max_send_wr = max_qp_wr + 1"},
	    {"qp.create.recv_wr_over_max", {16, wr, 1, 1, 0}, "max_recv_wr = max_qp_wr + 1"},
	    {"qp.create.send_wr_u32_max", {UINT32_MAX, 16, 1, 1, 0}, "max_send_wr = 2^32-1"},
	    {"qp.create.send_sge_over_max", {16, 16, sge, 1, 0}, "max_send_sge = max_sge + 1"},
	    {"qp.create.recv_sge_over_max", {16, 16, 1, sge, 0}, "max_recv_sge = max_sge + 1"},
	    {"qp.create.inline_64k", {16, 16, 1, 1, 65536}, "max_inline_data = 65536"},
	    {"qp.create.inline_u32_max", {16, 16, 1, 1, UINT32_MAX}, "max_inline_data = 2^32-1"},
	};

	for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UD})
		for (const auto &c : cases) {
			std::string name = c.name;
			std::string what = std::string(qp_type_name(type)) + " QP, " + c.what;

			name.insert(3, std::string(qp_type_name(type)) + ".");
			r_.expect_errno(name, create_qp_errno(what, type, c.cap), EINVAL,
			                what.c_str());
		}
	/* Types the device does not implement: EOPNOTSUPP (rxe_qp_chk_init). */
	r_.expect_errno("qp.create.raw_packet",
	                create_qp_errno("RAW_PACKET", IBV_QPT_RAW_PACKET, base), EOPNOTSUPP,
	                "ibv_create_qp(IBV_QPT_RAW_PACKET)");
}

void InvalidRun::cq_limits()
{
	struct {
		const char *name;
		int cqe;
		int comp_vector;
		int want;
	} cases[] = {
	    {"cq.create.cqe_0", 0, 0, EINVAL},
	    {"cq.create.cqe_negative", -1, 0, EINVAL},
	    {"cq.create.cqe_over_max", attr_.max_cqe + 1, 0, EINVAL},
	    {"cq.create.cqe_int_max", INT_MAX, 0, EINVAL},
	    /* ib_uverbs: comp_vector >= num_comp_vectors */
	    {"cq.create.comp_vector", 16, ctx_->num_comp_vectors, EINVAL},
	};

	for (const auto &c : cases) {
		char what[96];

		std::snprintf(what, sizeof(what), "ibv_create_cq(cqe %d, comp_vector %d)", c.cqe,
		              c.comp_vector);
		errno = 0;
		CqPtr cq(ibv_create_cq(ctx_, c.cqe, nullptr, nullptr, c.comp_vector));
		r_.expect_errno(c.name, cq ? 0 : null_errno(), c.want, what);
	}

	CqPtr cq(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	if (!cq) {
		r_.fail("cq.resize.setup", "ibv_create_cq(16) failed");
		return;
	}
	for (int n : {0, -1, attr_.max_cqe + 1}) {
		std::string what = "ibv_resize_cq(" + std::to_string(n) + ")";

		r_.expect_errno("cq.resize." + std::string(n == 0  ? "cqe_0"
		                                           : n < 0 ? "cqe_negative"
		                                                   : "cqe_over_max"),
		                ibv_resize_cq(cq.get(), n), EINVAL, what.c_str());
	}
	r_.check(cq->cqe >= 16, "cq.resize.unchanged", "cqe %d after the failed resizes", cq->cqe);
	r_.expect_ok("cq.resize.still_works", ibv_resize_cq(cq.get(), 64),
	             "ibv_resize_cq(64) after the failed resizes");
}

/*
 * Resizing below the number of CQEs the CQ holds fails with EINVAL
 * (rxe_cq_chk_attr; IBA 11.2.8.3 C11-21 leaves the CQ unchanged), and every
 * CQE is still there.
 */
void InvalidRun::cq_resize_below_used()
{
	const int n = 12;
	ibv_wc wc[32];
	CqPtr cq(ibv_create_cq(ctx_, 32, nullptr, nullptr, 0));
	ibv_qp_init_attr ia{};

	if (!cq) {
		r_.fail("cq.resize_below_used", "ibv_create_cq(32) failed");
		return;
	}
	QpPtr qp = create_qp_on(pd_.get(), cq.get(), IBV_QPT_RC, {4, 16, 1, 1, 0}, ia);
	if (!qp || !walk(qp.get(), IBV_QPT_RC, IBV_QPS_INIT)) {
		r_.fail("cq.resize_below_used", "RC QP setup failed");
		return;
	}
	for (int i = 0; i < n; i++) {
		ibv_sge sge = {reinterpret_cast<uintptr_t>(buf_.data()), 64, mr_->lkey};
		ibv_recv_wr wr{}, *bad = nullptr;

		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (ibv_post_recv(qp.get(), &wr, &bad)) {
			r_.fail("cq.resize_below_used", "ibv_post_recv #%d failed", i);
			return;
		}
	}
	ibv_qp_attr err_attr{};
	err_attr.qp_state = IBV_QPS_ERR;
	if (modify(qp.get(), err_attr, IBV_QP_STATE)) {
		r_.fail("cq.resize_below_used", "INIT -> ERR failed");
		return;
	}
	/* Let the flush completions arrive (rxe flushes from a tasklet). */
	usleep(500 * 1000);
	r_.expect_errno("cq.resize.below_used", ibv_resize_cq(cq.get(), 4), EINVAL,
	                "ibv_resize_cq(4) holding 12 CQEs");
	int got = poll_cq_for(cq.get(), wc, n, 3000);
	r_.check(got == n && wc[0].wr_id == 0 && wc[n - 1].wr_id == uint64_t(n - 1),
	         "cq.resize.below_used_intact", "%d of %d CQEs still there after the failed resize",
	         got, n);
}

/* ib_core refuses to destroy objects others still use: EBUSY. */
void InvalidRun::busy_destroy()
{
	CqPtr cq(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	PdPtr pd(ibv_alloc_pd(ctx_));
	ibv_qp_init_attr ia{};
	ibv_wc wc;

	if (!cq || !pd) {
		r_.fail("busy.setup", "CQ or PD creation failed");
		return;
	}
	QpPtr qp = create_qp_on(pd.get(), cq.get(), IBV_QPT_RC, {4, 4, 1, 1, 0}, ia);
	if (!qp) {
		r_.fail("busy.setup", "QP creation failed");
		return;
	}
	r_.expect_errno("busy.destroy_cq", ibv_destroy_cq(cq.get()), EBUSY,
	                "ibv_destroy_cq of a CQ a QP uses");
	r_.check(ibv_poll_cq(cq.get(), 1, &wc) == 0, "busy.cq_still_usable",
	         "the CQ still polls (empty) after the refused destroy");
	r_.expect_errno("busy.dealloc_pd_qp", ibv_dealloc_pd(pd.get()), EBUSY,
	                "ibv_dealloc_pd of a PD with a QP");
	qp.reset();

	MrPtr mr(ibv_reg_mr(pd.get(), buf_.data(), 4096, 0));
	if (mr)
		r_.expect_errno("busy.dealloc_pd_mr", ibv_dealloc_pd(pd.get()), EBUSY,
		                "ibv_dealloc_pd of a PD with an MR");
	mr.reset();

	ibv_ah_attr aa = loopback_ah(gid_, 1);
	AhPtr ah(ibv_create_ah(pd.get(), &aa));
	if (ah)
		r_.expect_errno("busy.dealloc_pd_ah", ibv_dealloc_pd(pd.get()), EBUSY,
		                "ibv_dealloc_pd of a PD with an AH");
	ah.reset();
	r_.expect_ok("busy.dealloc_pd_after", ibv_dealloc_pd(pd.release()),
	             "ibv_dealloc_pd once its objects are gone");
	r_.expect_ok("busy.destroy_cq_after", ibv_destroy_cq(cq.release()),
	             "ibv_destroy_cq once its QP is gone");

	/* libibverbs: a channel with CQs attached. */
	ChannelPtr ch(ibv_create_comp_channel(ctx_));
	CqPtr ccq(ch ? ibv_create_cq(ctx_, 16, nullptr, ch.get(), 0) : nullptr);
	if (ccq)
		r_.expect_errno("busy.destroy_channel", ibv_destroy_comp_channel(ch.get()), EBUSY,
		                "ibv_destroy_comp_channel with a CQ attached");
}

int InvalidRun::reg_mr_errno(void *addr, size_t len, unsigned int access)
{
	errno = 0;
	MrPtr mr(ibv_reg_mr(pd_.get(), addr, len, int(access)));
	return mr ? 0 : null_errno();
}

void InvalidRun::mr_invalid()
{
	const long page = sysconf(_SC_PAGESIZE);
	uint8_t *buf = buf_.data();
	const size_t gone_len = 1 << 16;
	void *gone_addr =
	    mmap(nullptr, gone_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	Mapping none(1 << 16, PROT_NONE);
	Mapping ro(1 << 16, PROT_READ);

	/* An address that was mapped and is not any more. */
	if (gone_addr == MAP_FAILED)
		gone_addr = nullptr;
	else
		munmap(gone_addr, gone_len);

	/* ib_check_mr_access (core): IBA 10.6.3.1, remote write/atomic need local write. */
	r_.expect_errno("mr.remote_write_without_local_write",
	                reg_mr_errno(buf, 4096, IBV_ACCESS_REMOTE_WRITE), EINVAL,
	                "ibv_reg_mr(REMOTE_WRITE)");
	r_.expect_errno("mr.remote_atomic_without_local_write",
	                reg_mr_errno(buf, 4096, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ),
	                EINVAL, "ibv_reg_mr(REMOTE_ATOMIC|REMOTE_READ)");
	/*
	 * Implicit ODP (odp.sh) is a region of the whole address space at
	 * iova 0 only (as mlx5).
	 */
	errno = 0;
	MrPtr imp(ibv_reg_mr_iova(pd_.get(), nullptr, SIZE_MAX, uint64_t(page),
	                          IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE));
	r_.expect_errno("mr.on_demand_implicit_iova", imp ? 0 : null_errno(), EINVAL,
	                "ibv_reg_mr_iova(ON_DEMAND, address 0, length SIZE_MAX, iova one page)");
	/* Bit 10: undefined on both kernels (6.12 gave bits 8 and 9 to FLUSH). */
	r_.expect_errno("mr.unknown_access_bit", reg_mr_errno(buf, 4096, 1U << 10), EINVAL,
	                "ibv_reg_mr(access bit 10, undefined)");
	/* ib_umem_get(): no page at all (a page-aligned address, length 0). */
	uint8_t *aligned =
	    reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(buf) + page) & ~(page - 1));
	r_.expect_errno("mr.length_0", reg_mr_errno(aligned, 0, IBV_ACCESS_LOCAL_WRITE), EINVAL,
	                "ibv_reg_mr(page-aligned address, length 0)");
	/* ib_umem_get(): pinning fails on addresses without (suitable) pages. */
	r_.expect_errno("mr.null_address", reg_mr_errno(nullptr, 4096, IBV_ACCESS_LOCAL_WRITE),
	                EFAULT, "ibv_reg_mr(NULL, 4096)");
	if (gone_addr)
		r_.expect_errno("mr.unmapped", reg_mr_errno(gone_addr, gone_len, 0), EFAULT,
		                "ibv_reg_mr(unmapped range)");
	if (none.ok())
		r_.expect_errno("mr.prot_none",
		                reg_mr_errno(none.data(), none.size(), IBV_ACCESS_LOCAL_WRITE),
		                EFAULT, "ibv_reg_mr(PROT_NONE mapping, LOCAL_WRITE)");
	if (ro.ok()) {
		r_.expect_errno("mr.readonly_local_write",
		                reg_mr_errno(ro.data(), ro.size(), IBV_ACCESS_LOCAL_WRITE), EFAULT,
		                "ibv_reg_mr(read-only mapping, LOCAL_WRITE)");
		r_.expect_errno("mr.readonly_no_write",
		                reg_mr_errno(ro.data(), ro.size(), IBV_ACCESS_REMOTE_READ), 0,
		                "ibv_reg_mr(read-only mapping, REMOTE_READ) succeeds");
		rereg_readonly(ro);
	}
	r_.expect_errno("mr.kernel_address",
	                reg_mr_errno(reinterpret_cast<void *>(0xffff888000000000ULL), 4096, 0),
	                EFAULT, "ibv_reg_mr(kernel address)");
	r_.expect_errno("mr.address_wraps",
	                reg_mr_errno(reinterpret_cast<void *>(-2 * page), 4 * page, 0), EINVAL,
	                "ibv_reg_mr(range wraps past 2^64)");

	/* ib_uverbs: start and IOVA must have the same offset within a page. */
	errno = 0;
	MrPtr mr(ibv_reg_mr_iova(pd_.get(), aligned + 1, 4096, 0x100000, IBV_ACCESS_LOCAL_WRITE));
	r_.expect_errno("mr.iova_offset_mismatch", mr ? 0 : null_errno(), EINVAL,
	                "ibv_reg_mr_iova(addr offset 1, iova offset 0)");
}

/*
 * A region pinned read-only (its pages may be the shared zero page or a
 * file the process may not write) must not become writable by a change
 * of access alone: the pages were never pinned for writing. ib_uverbs
 * (6.1) passes the new access through unchecked; the driver must refuse.
 */
void InvalidRun::rereg_readonly(Mapping &ro)
{
	errno = 0;
	MrPtr mr(ibv_reg_mr(pd_.get(), ro.data(), ro.size(), IBV_ACCESS_REMOTE_READ));

	if (!r_.check(mr != nullptr, "mr.rereg_readonly_writable.reg",
	              "ibv_reg_mr(read-only mapping, REMOTE_READ)"))
		return;
	for (unsigned access : {unsigned(IBV_ACCESS_LOCAL_WRITE),
	                        unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)}) {
		errno = 0;
		int ret = ibv_rereg_mr(mr.get(), IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
		                       int(access));
		std::string what =
		    "ibv_rereg_mr(CHANGE_ACCESS to " +
		    std::string(access & IBV_ACCESS_REMOTE_WRITE ? "LOCAL|REMOTE_WRITE"
		                                                 : "LOCAL_WRITE") +
		    ") of a region pinned read-only";
		r_.expect_errno(access & IBV_ACCESS_REMOTE_WRITE ? "mr.rereg_readonly_remote_write"
		                                                 : "mr.rereg_readonly_local_write",
		                ret ? (errno ? errno : EIO) : 0, EACCES, what.c_str());
	}
	/* Still usable with the rights it was pinned for. */
	errno = 0;
	int ret = ibv_rereg_mr(mr.get(), IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
	                       IBV_ACCESS_REMOTE_READ);
	r_.expect_errno("mr.rereg_readonly_read", ret ? (errno ? errno : EIO) : 0, 0,
	                "ibv_rereg_mr(CHANGE_ACCESS to REMOTE_READ) of that region succeeds");
}

void InvalidRun::refuse(QpPtr &qp, ibv_qp_type type, ibv_qp_state state, const std::string &name,
                        const ibv_qp_attr &attr, int mask, int want, const char *what)
{
	if (!qp) {
		r_.skip(name, "no QP in %s to check with", qp_state_name(state));
		return;
	}
	r_.expect_errno(name, modify(qp.get(), attr, mask), want, what);
	if (qp->state == state)
		return;
	/* Accepted although it should not: start over from a QP in @state. */
	r_.info("%s moved the QP to %s: checking on with a new QP in %s", name.c_str(),
	        qp_state_name(qp->state), qp_state_name(state));
	qp = make_qp(type);
	if (qp && state != IBV_QPS_RESET && !walk(qp.get(), type, state))
		qp.reset();
}

void InvalidRun::expect_kernel_state(ibv_qp *qp, ibv_qp_state state, const std::string &name)
{
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};

	if (!qp)
		return;
	int ret = ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi);
	r_.check(ret == 0 && qa.qp_state == state, name,
	         "the QP is still in %s after the refused transitions (query: %s, state %s)",
	         qp_state_name(state), errno_name(ret).c_str(), qp_state_name(qa.qp_state));
}

/* IBA 10.3.1 table 91 as ib_modify_qp_is_ok() encodes it: EINVAL. */
void InvalidRun::rc_reset_transitions()
{
	const ibv_qp_type rc = IBV_QPT_RC;
	QpPtr qp = make_qp(rc);
	QpTransition init = to_init(rc, IBV_ACCESS_LOCAL_WRITE);
	ibv_qp_attr a;
	auto refuse_reset = [&](const char *name, const ibv_qp_attr &attr, int mask,
	                        const char *what) {
		refuse(qp, rc, IBV_QPS_RESET, name, attr, mask, EINVAL, what);
	};

	a = {};
	a.qp_state = IBV_QPS_RTS;
	refuse_reset("qp.rc.reset_to_rts", a, IBV_QP_STATE, "RESET -> RTS");
	a.qp_state = IBV_QPS_RTR;
	refuse_reset("qp.rc.reset_to_rtr", a, IBV_QP_STATE, "RESET -> RTR");
	a.qp_state = IBV_QPS_SQD;
	refuse_reset("qp.rc.reset_to_sqd", a, IBV_QP_STATE, "RESET -> SQD");
	a.qp_state = IBV_QPS_INIT;
	refuse_reset("qp.rc.init_missing_attrs", a, IBV_QP_STATE,
	             "RESET -> INIT without P_Key index, port, access flags");
	a = init.attr;
	a.qkey = 0x1234;
	refuse_reset("qp.rc.init_qkey_not_allowed", a, init.mask | IBV_QP_QKEY,
	             "RESET -> INIT of an RC QP with a Q_Key");
	/* ib_uverbs: rdma_is_port_valid() */
	a = init.attr;
	a.port_num = 2;
	refuse_reset("qp.rc.init_port_2", a, init.mask, "RESET -> INIT on port 2");
	a.port_num = 0;
	refuse_reset("qp.rc.init_port_0", a, init.mask, "RESET -> INIT on port 0");
	/*
	 * The P_Key index selects an entry of the port's P_Key table (IBA
	 * 10.9.2); rxe does not check it (see the report).
	 */
	a = init.attr;
	a.pkey_index = uint16_t(port_.pkey_tbl_len);
	refuse_reset("qp.rc.init_pkey_index", a, init.mask,
	             "RESET -> INIT with P_Key index = pkey_tbl_len");
	/*
	 * QP access flags enable remote write, read and atomic (IBA 11.2.4.2);
	 * undefined bits are refused (rxe ignores them).
	 */
	a = init.attr;
	a.qp_access_flags = 1U << 10;
	refuse_reset("qp.rc.init_access_unknown", a, init.mask,
	             "RESET -> INIT with access flag bit 10 (undefined)");
	/* ib_uverbs: a state beyond ERR */
	a = init.attr;
	a.qp_state = ibv_qp_state(7);
	refuse_reset("qp.rc.state_out_of_range", a, init.mask, "qp_state 7");
	expect_kernel_state(qp.get(), IBV_QPS_RESET, "qp.rc.still_reset");
	if (!qp || !r_.expect_ok("qp.rc.reset_to_init", modify(qp.get(), init.attr, init.mask),
	                         "RESET -> INIT"))
		return;
	a = {};
	a.qp_state = IBV_QPS_SQD;
	refuse(qp, rc, IBV_QPS_INIT, "qp.rc.init_to_sqd", a, IBV_QP_STATE, EINVAL, "INIT -> SQD");
	a.qp_state = IBV_QPS_RTS;
	refuse(qp, rc, IBV_QPS_INIT, "qp.rc.init_to_rts", a, IBV_QP_STATE, EINVAL, "INIT -> RTS");
}

int InvalidRun::empty_gid_index()
{
	for (int i = std::min(port_.gid_tbl_len, 256) - 1; i >= 0; i--) {
		ibv_gid_entry e{};

		if (ibv_query_gid_ex(ctx_, 1, uint32_t(i), &e, 0))
			return i;
	}
	return -1;
}

/*
 * One value out of range in an otherwise good INIT -> RTR or RTR -> RTS: the
 * row's setter writes it into the attributes, or returns false where the
 * device's own limit leaves no value above it to try.
 */
struct BadAttr {
	const char *name;
	const char *what;
	bool (*set)(ibv_qp_attr &a, const ibv_device_attr &dev);
};

static const BadAttr rtr_bad[] = {
    /*
     * Path MTU codes are 1..5, 256..4096 bytes (IBA 9.7.? / 11.2.4.2: the
     * ibv_mtu enum); rxe takes 0 (see the report).
     */
    {"path_mtu_0", "path_mtu 0",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.path_mtu = ibv_mtu(0), true; }},
    {"path_mtu_6", "path_mtu 6 (> 4096)",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.path_mtu = ibv_mtu(6), true; }},
    /* QP numbers are 24 bits (the BTH DestQP field, IBA 9.2). */
    {"dest_qpn_25_bits", "dest_qp_num 2^24",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.dest_qp_num = 1U << 24, true; }},
    {"max_dest_rd_atomic", "max_dest_rd_atomic = max_qp_rd_atom + 1",
     [](ibv_qp_attr &a, const ibv_device_attr &dev) {
	     a.max_dest_rd_atomic = uint8_t(dev.max_qp_rd_atom + 1);
	     return dev.max_qp_rd_atom < 255;
     }},
    /* The RNR NAK timer code is 5 bits (IBA 9.7.5.2.8, table 45). */
    {"min_rnr_timer_32", "min_rnr_timer 32",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.min_rnr_timer = 32, true; }},
    /* ib_uverbs: the AV's port must be valid and the QP's own. */
    {"av_port_2", "an AV on port 2",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.ah_attr.port_num = 2, true; }},
    /* ib_core rdma_check_ah_attr(): RoCE needs a GRH. */
    {"av_no_grh", "an AV without GRH",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.ah_attr.is_global = 0, true; }},
};

static const BadAttr rts_bad[] = {
    /* The Local ACK Timeout code is 5 bits (IBA 11.2.4.2); rxe does not check. */
    {"timeout_32", "timeout 32",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.timeout = 32, true; }},
    /* Retry counts are 3 bits (IBA 11.2.4.2). */
    {"retry_cnt_8", "retry_cnt 8",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.retry_cnt = 8, true; }},
    {"rnr_retry_8", "rnr_retry 8",
     [](ibv_qp_attr &a, const ibv_device_attr &) { return a.rnr_retry = 8, true; }},
    {"max_rd_atomic", "max_rd_atomic = max_qp_init_rd_atom + 1",
     [](ibv_qp_attr &a, const ibv_device_attr &dev) {
	     a.max_rd_atomic = uint8_t(dev.max_qp_init_rd_atom + 1);
	     return dev.max_qp_init_rd_atom < 255;
     }},
};

/* A mask bit the transition cannot go without. */
struct Required {
	int bit;
	const char *name;
};

static const Required rtr_required[] = {
    {IBV_QP_AV, "av"},
    {IBV_QP_PATH_MTU, "path_mtu"},
    {IBV_QP_DEST_QPN, "dest_qpn"},
    {IBV_QP_RQ_PSN, "rq_psn"},
    {IBV_QP_MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic"},
    {IBV_QP_MIN_RNR_TIMER, "min_rnr_timer"},
};

static const Required rts_required[] = {
    {IBV_QP_SQ_PSN, "sq_psn"},
    {IBV_QP_TIMEOUT, "timeout"},
    {IBV_QP_RETRY_CNT, "retry_cnt"},
    {IBV_QP_RNR_RETRY, "rnr_retry"},
    {IBV_QP_MAX_QP_RD_ATOMIC, "max_rd_atomic"},
};

/*
 * From @state, the transition @t (to RTR or RTS, named @step in the case
 * names and @arrow in the texts) is refused without each required bit and
 * with each bad value.
 */
void InvalidRun::refuse_transition(QpPtr &qp, ibv_qp_state state, const QpTransition &t,
                                   const char *step, const char *arrow, const Required *req,
                                   size_t n_req, const BadAttr *bad, size_t n_bad)
{
	const std::string prefix = std::string("qp.rc.") + step + "_";

	for (size_t i = 0; i < n_req; i++)
		refuse(qp, IBV_QPT_RC, state, prefix + "missing_" + req[i].name, t.attr,
		       t.mask & ~req[i].bit, EINVAL,
		       (std::string(arrow) + " without " + req[i].name).c_str());
	for (size_t i = 0; i < n_bad; i++) {
		ibv_qp_attr a = t.attr;

		if (bad[i].set(a, attr_))
			refuse(qp, IBV_QPT_RC, state, prefix + bad[i].name, a, t.mask, EINVAL,
			       (std::string(arrow) + " with " + bad[i].what).c_str());
	}
}

void InvalidRun::rc_rtr_rts_attrs()
{
	const ibv_qp_type rc = IBV_QPT_RC;
	QpPtr qp = make_qp(rc);
	QpTransition rtr, rts;
	ibv_qp_attr a;
	auto refuse_in = [&](ibv_qp_state state, const std::string &name, const ibv_qp_attr &attr,
	                     int mask, int want, const std::string &what) {
		refuse(qp, rc, state, name, attr, mask, want, what.c_str());
	};

	if (!qp || !walk(qp.get(), rc, IBV_QPS_INIT))
		return;
	rtr = to_rtr(rc, gid_, qp->qp_num);
	refuse_transition(qp, IBV_QPS_INIT, rtr, "rtr", "INIT -> RTR", rtr_required,
	                  std::size(rtr_required), rtr_bad, std::size(rtr_bad));
	/* ib_core rdma_get_gid_attr(): an empty GID slot is ENODATA. */
	int empty = empty_gid_index();
	if (empty >= 0) {
		a = rtr.attr;
		a.ah_attr.grh.sgid_index = uint8_t(empty);
		refuse_in(IBV_QPS_INIT, "qp.rc.rtr_sgid_index_empty", a, rtr.mask, ENODATA,
		          "INIT -> RTR with empty sgid_index " + std::to_string(empty));
	}
	expect_kernel_state(qp.get(), IBV_QPS_INIT, "qp.rc.still_init");
	if (!qp ||
	    !r_.expect_ok("qp.rc.init_to_rtr", modify(qp.get(), rtr.attr, rtr.mask), "INIT -> RTR"))
		return;

	rts = to_rts(rc);
	refuse_transition(qp, IBV_QPS_RTR, rts, "rts", "RTR -> RTS", rts_required,
	                  std::size(rts_required), rts_bad, std::size(rts_bad));
	expect_kernel_state(qp.get(), IBV_QPS_RTR, "qp.rc.still_rtr");
	if (!qp ||
	    !r_.expect_ok("qp.rc.rtr_to_rts", modify(qp.get(), rts.attr, rts.mask), "RTR -> RTS"))
		return;

	a = {};
	a.qp_state = IBV_QPS_RTR;
	refuse_in(IBV_QPS_RTS, "qp.rc.rts_to_rtr", a, IBV_QP_STATE, EINVAL, "RTS -> RTR");
	a.qp_state = IBV_QPS_INIT;
	refuse_in(IBV_QPS_RTS, "qp.rc.rts_to_init", a, IBV_QP_STATE, EINVAL, "RTS -> INIT");
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.path_mtu = IBV_MTU_512;
	refuse_in(IBV_QPS_RTS, "qp.rc.rts_path_mtu_not_allowed", a, IBV_QP_STATE | IBV_QP_PATH_MTU,
	          EINVAL, "RTS -> RTS changing path_mtu");
	a = {};
	a.qp_state = IBV_QPS_ERR;
	a.cur_qp_state = IBV_QPS_INIT;
	refuse_in(IBV_QPS_RTS, "qp.rc.cur_state_mismatch", a, IBV_QP_STATE | IBV_QP_CUR_STATE,
	          EINVAL, "-> ERR claiming current state INIT while in RTS");
	a = {};
	a.qp_state = IBV_QPS_ERR;
	if (!qp || !r_.expect_ok("qp.rc.to_err", modify(qp.get(), a, IBV_QP_STATE), "RTS -> ERR"))
		return;
	a.qp_state = IBV_QPS_RTS;
	refuse_in(IBV_QPS_ERR, "qp.rc.err_to_rts", a, IBV_QP_STATE, EINVAL, "ERR -> RTS");
	a.qp_state = IBV_QPS_INIT;
	refuse_in(IBV_QPS_ERR, "qp.rc.err_to_init", a, IBV_QP_STATE, EINVAL, "ERR -> INIT");
	a.qp_state = IBV_QPS_RESET;
	if (qp)
		r_.expect_ok("qp.rc.err_to_reset", modify(qp.get(), a, IBV_QP_STATE),
		             "ERR -> RESET");
}

void InvalidRun::ud_transitions()
{
	const ibv_qp_type ud = IBV_QPT_UD;
	QpPtr qp = make_qp(ud);
	QpTransition init = to_init(ud, 0);
	ibv_qp_attr a;

	refuse(qp, ud, IBV_QPS_RESET, "qp.ud.init_missing_qkey", init.attr,
	       init.mask & ~IBV_QP_QKEY, EINVAL, "UD RESET -> INIT without Q_Key");
	/*
	 * Controlled Q_Keys (bit 31, IBA 10.2.5) need CAP_NET_RAW or the
	 * privileged-qkey setting (ib_uverbs): EPERM, unless we are root.
	 */
	a = init.attr;
	a.qkey = 0x80010000;
	if (geteuid() != 0)
		refuse(qp, ud, IBV_QPS_RESET, "qp.ud.init_controlled_qkey", a, init.mask, EPERM,
		       "UD RESET -> INIT with controlled Q_Key 0x80010000");
	if (!qp || !r_.expect_ok("qp.ud.reset_to_init", modify(qp.get(), init.attr, init.mask),
	                         "UD RESET -> INIT"))
		return;
	a = to_rtr(IBV_QPT_RC, gid_, 1).attr;
	refuse(qp, ud, IBV_QPS_INIT, "qp.ud.rtr_av_not_allowed", a, IBV_QP_STATE | IBV_QP_AV,
	       EINVAL, "UD INIT -> RTR with an AV");
	a = {};
	a.qp_state = IBV_QPS_RTR;
	if (!qp ||
	    !r_.expect_ok("qp.ud.init_to_rtr", modify(qp.get(), a, IBV_QP_STATE), "UD INIT -> RTR"))
		return;
	a.qp_state = IBV_QPS_RTS;
	refuse(qp, ud, IBV_QPS_RTR, "qp.ud.rts_missing_sq_psn", a, IBV_QP_STATE, EINVAL,
	       "UD RTR -> RTS without SQ PSN");
}

void InvalidRun::ah_invalid()
{
	const ibv_ah_attr base = loopback_ah(gid_);

	auto ah_errno = [&](const ibv_ah_attr &attr) {
		ibv_ah_attr copy = attr;

		errno = 0;
		AhPtr ah(ibv_create_ah(pd_.get(), &copy));
		return ah ? 0 : null_errno();
	};
	ibv_ah_attr a = base;
	a.port_num = 2;
	r_.expect_errno("ah.port_2", ah_errno(a), EINVAL, "ibv_create_ah on port 2");
	a.port_num = 0;
	r_.expect_errno("ah.port_0", ah_errno(a), EINVAL, "ibv_create_ah on port 0");
	a = base;
	a.is_global = 0;
	r_.expect_errno("ah.no_grh", ah_errno(a), EINVAL, "ibv_create_ah without GRH on RoCE");
	int empty = empty_gid_index();
	if (empty >= 0) {
		a = base;
		a.grh.sgid_index = uint8_t(empty);
		std::string what = "ibv_create_ah with empty sgid_index " + std::to_string(empty);
		r_.expect_errno("ah.sgid_index_empty", ah_errno(a), ENODATA, what.c_str());
	}
	r_.expect_errno("ah.valid", ah_errno(base), 0, "ibv_create_ah (valid, for contrast)");
}

void InvalidRun::queries()
{
	ibv_port_attr p{};
	ibv_gid_entry e{};
	ibv_gid gid{};
	__be16 pkey = 0;

	r_.expect_errno("query.port_2", ibv_query_port(ctx_, 2, &p), EINVAL, "ibv_query_port(2)");
	r_.expect_errno("query.port_0", ibv_query_port(ctx_, 0, &p), EINVAL, "ibv_query_port(0)");
	r_.expect_errno("query.gid_ex_index_oob",
	                ibv_query_gid_ex(ctx_, 1, uint32_t(port_.gid_tbl_len), &e, 0), EINVAL,
	                "ibv_query_gid_ex(index = gid_tbl_len)");
	int empty = empty_gid_index();
	if (empty >= 0)
		r_.expect_errno("query.gid_ex_empty",
		                ibv_query_gid_ex(ctx_, 1, uint32_t(empty), &e, 0), ENODATA,
		                "ibv_query_gid_ex(an empty slot)");
	r_.expect_errno("query.gid_ex_port_2", ibv_query_gid_ex(ctx_, 2, 0, &e, 0), EINVAL,
	                "ibv_query_gid_ex(port 2)");
	r_.check(ibv_query_gid(ctx_, 1, port_.gid_tbl_len, &gid) != 0, "query.gid_index_oob",
	         "ibv_query_gid(index = gid_tbl_len) fails");
	r_.check(ibv_query_pkey(ctx_, 1, int(port_.pkey_tbl_len), &pkey) != 0,
	         "query.pkey_index_oob", "ibv_query_pkey(index = pkey_tbl_len) fails");
}

/*
 * Malformed work requests are refused before they reach a queue: EINVAL and
 * *bad_wr pointing at the offending WR (ibv_post_send(3)).
 */
void InvalidRun::post_invalid()
{
	ibv_qp_init_attr g{};
	QpPtr qp = make_qp(IBV_QPT_RC, 16, 16, 2, 2, 64, &g);
	QpPtr fresh = make_qp(IBV_QPT_RC);
	std::vector<ibv_sge> sges(g.cap.max_send_sge + g.cap.max_recv_sge + 2);
	ibv_send_wr swr{}, *sbad = nullptr;
	ibv_recv_wr rwr{}, rwr2{}, *rbad = nullptr;

	if (!qp || !fresh)
		return;
	for (auto &s : sges)
		s = {reinterpret_cast<uintptr_t>(buf_.data()), 8, mr_->lkey};

	/* IBA C10-?: posting to a QP in RESET is an immediate error. */
	rwr.wr_id = 1;
	rwr.sg_list = sges.data();
	rwr.num_sge = 1;
	r_.expect_errno("post.recv_in_reset", ibv_post_recv(fresh.get(), &rwr, &rbad), EINVAL,
	                "ibv_post_recv on a QP in RESET");
	swr.wr_id = 2;
	swr.sg_list = sges.data();
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	r_.expect_errno("post.send_in_reset", ibv_post_send(fresh.get(), &swr, &sbad), EINVAL,
	                "ibv_post_send on a QP in RESET");

	if (!walk(qp.get(), IBV_QPT_RC, IBV_QPS_RTS))
		return;
	rwr = {};
	rwr.wr_id = 3;
	rwr.sg_list = sges.data();
	rwr.num_sge = int(g.cap.max_recv_sge) + 1;
	rbad = nullptr;
	std::string what = "ibv_post_recv with num_sge " + std::to_string(rwr.num_sge) +
	                   " > granted " + std::to_string(g.cap.max_recv_sge);
	if (r_.expect_errno("post.recv_too_many_sge", ibv_post_recv(qp.get(), &rwr, &rbad), EINVAL,
	                    what.c_str()))
		r_.check(rbad == &rwr, "post.recv_bad_wr", "bad_wr points at the refused WR");

	/* A chain: the first WR is queued, the second refused and named. */
	rwr.num_sge = 1;
	rwr.next = &rwr2;
	rwr2.wr_id = 4;
	rwr2.sg_list = sges.data();
	rwr2.num_sge = int(g.cap.max_recv_sge) + 1;
	rbad = nullptr;
	if (r_.expect_errno("post.recv_chain_second_bad", ibv_post_recv(qp.get(), &rwr, &rbad),
	                    EINVAL, "ibv_post_recv of [valid, too many SGEs]"))
		r_.check(rbad == &rwr2, "post.recv_chain_bad_wr", "bad_wr points at the second WR");

	swr = {};
	swr.wr_id = 5;
	swr.sg_list = sges.data();
	swr.num_sge = int(g.cap.max_send_sge) + 1;
	swr.opcode = IBV_WR_SEND;
	sbad = nullptr;
	what = "ibv_post_send with num_sge " + std::to_string(swr.num_sge) + " > granted " +
	       std::to_string(g.cap.max_send_sge);
	if (r_.expect_errno("post.send_too_many_sge", ibv_post_send(qp.get(), &swr, &sbad), EINVAL,
	                    what.c_str()))
		r_.check(sbad == &swr, "post.send_bad_wr", "bad_wr points at the refused WR");

	std::vector<uint8_t> big(g.cap.max_inline_data + 1);
	ibv_sge inl = {reinterpret_cast<uintptr_t>(big.data()), uint32_t(big.size()), 0};
	swr = {};
	swr.wr_id = 6;
	swr.sg_list = &inl;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_INLINE;
	what = "ibv_post_send inline " + std::to_string(big.size()) + " bytes > granted " +
	       std::to_string(g.cap.max_inline_data);
	r_.expect_errno("post.send_inline_too_long", ibv_post_send(qp.get(), &swr, &sbad), EINVAL,
	                what.c_str());

	swr = {};
	swr.wr_id = 7;
	swr.sg_list = sges.data();
	swr.num_sge = 1;
	swr.opcode = ibv_wr_opcode(0x7f);
	r_.expect_errno("post.send_bad_opcode", ibv_post_send(qp.get(), &swr, &sbad), EINVAL,
	                "ibv_post_send with opcode 0x7f");
}

/* Verbs a device may not implement: reported, no verdict. */
void InvalidRun::unsupported()
{
	ibv_srq_init_attr sa{};
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	errno = 0;
	ibv_srq *srq = ibv_create_srq(pd_.get(), &sa);
	r_.info("unsupported: ibv_create_srq: %s",
	        srq ? "supported" : errno_name(null_errno()).c_str());
	if (srq)
		ibv_destroy_srq(srq);

	errno = 0;
	ibv_mw *mw = ibv_alloc_mw(pd_.get(), IBV_MW_TYPE_1);
	r_.info("unsupported: ibv_alloc_mw(type 1): %s",
	        mw ? "supported" : errno_name(null_errno()).c_str());
	if (mw)
		ibv_dealloc_mw(mw);

	MrPtr mr(ibv_reg_mr(pd_.get(), buf_.data(), 4096, IBV_ACCESS_LOCAL_WRITE));
	if (mr) {
		int ret = ibv_rereg_mr(mr.get(), IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
		                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		r_.info("unsupported: ibv_rereg_mr(CHANGE_ACCESS): %s",
		        ret == 0 ? "supported" : errno_name(errno).c_str());
	}

	ibv_cq_init_attr_ex ca{};
	ca.cqe = 16;
	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	ibv_cq_ex *cqx = ibv_create_cq_ex(ctx_, &ca);
	r_.info("unsupported: ibv_create_cq_ex(COMPLETION_TIMESTAMP): %s",
	        cqx ? "supported" : errno_name(null_errno()).c_str());
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

} /* namespace */

int cmd_invalid(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("invalid");
	long gid_index;
	ibv_device_attr attr{};
	ibv_port_attr port{};
	GidChoice gid;

	if (!args.parse(argc, argv, {{"gid-index", true}}, &why))
		return usage_error("invalid", why);
	if (args.num_positional() != 1)
		return usage_error("invalid", "want exactly one device name");
	if (!args.number("gid-index", -1, -1, 65535, &gid_index, &why))
		return usage_error("invalid", why);
	const char *device = args.positional(0);

	ContextPtr ctx;
	if (!open_and_query(device, r, &ctx, &attr))
		return r.finish();
	if (int ret = ibv_query_port(ctx.get(), 1, &port)) {
		r.fail("query_port", "ibv_query_port: %s", errno_name(ret).c_str());
		return r.finish();
	}
	if (!pick_gid(ctx.get(), int(gid_index), &gid, &why)) {
		r.fail("gid", "%s", why.c_str());
		return r.finish();
	}
	r.info("device %s, GID index %d (%s)", device, gid.index, gid_text(gid.gid).c_str());

	InvalidRun run(r, ctx.get(), attr, port, gid);
	if (!run.setup())
		return r.finish();
	run.qp_create_limits();
	run.cq_limits();
	run.cq_resize_below_used();
	run.busy_destroy();
	run.mr_invalid();
	run.rc_reset_transitions();
	run.rc_rtr_rts_attrs();
	run.ud_transitions();
	run.ah_invalid();
	run.queries();
	run.post_invalid();
	run.unsupported();
	return r.finish();
}

} /* namespace vc */
