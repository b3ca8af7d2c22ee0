// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check bound DEV [--gid-index I] [--cases LIST] [--srq-sge N]:
 * kernel work whose size user space chooses must let the CPU go. Each case
 * has sroce do as much in one request as its limits allow, while a
 * SCHED_FIFO thread of this process that sleeps 1 ms at a time (a Sleeper,
 * as cyclictest measures) records how long it was kept from running: on
 * one CPU, work done with interrupts, softirqs or preemption off (or, on a
 * kernel without preemption, without a scheduling point) shows up there as
 * one long wait. An ordinary such thread is reported too. Every case also
 * checks that the work was done right:
 *
 *   case        the kernel's work                     checked
 *   srq_resize  an SRQ holding 2^19 receives grows    every receive kept: wr_id and
 *               to 2^20 (ibv_modify_srq MAX_WR)       SGE read back from the new ring;
 *                                                     SENDs land in the first ones,
 *                                                     in order, bytes intact
 *   cq_resize   a CQ holding 2^17 CQEs (flushed       the 2^17 CQEs polled after it,
 *               receives) is resized                  in order, WR_FLUSH_ERR, no more
 *   local_sq    a SEND and 2^20 - 1 BIND_MW WQEs      every WQE completes once (cons
 *               (no packet) written into an SQ, one   at prod), every signalled one
 *               doorbell, the receiver not up yet     SUCCESS in order; the SEND's
 *               (issue: the requester starts at most  bytes arrive; an RDMA READ
 *               256 WQEs before an answer); then it   through the window returns the
 *               comes up and ACKs retire them all     region's bytes
 *               (retire)
 *   map_huge    the 256 MiB ring of an SRQ of 2^20    the mapping shows the receives
 *               WQEs of 15 SGEs mapped again (page    posted; SENDs land in them
 *               by page)                              intact
 *
 * The limit on the realtime sleeper's wait is sleeper_limit_ms(). --cases
 * runs some cases only (comma-separated); --srq-sge sets srq_resize's SGEs
 * per WQE (default 8: a 72 MiB ring copied into one of 144 MiB).
 */
#include "commands.h"
#include "report.h"
#include "ring_util.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>
#include <sroce/sroce_ring.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kMsg = 256;  /* bytes of a message */
constexpr uint32_t kSlots = 16; /* send and receive buffers of kMsg */
constexpr int kTimeoutMs = 5000;
constexpr int64_t kDrainNs = int64_t(120) * 1000000000;
/* srq_resize: receives posted, then the SRQ doubles. */
constexpr uint32_t kSrqPosted = 1u << 19;
/* cq_resize: the largest CQ, full. */
constexpr uint32_t kCqFull = 1u << 17;
/* local_sq: every this many BIND_MWs is signalled (the CQ holds them all). */
constexpr uint32_t kSignalEvery = 16;
/* local_sq: 4.3 s local ACK timeout, so the SEND outlives the issue phase. */
constexpr uint8_t kLocalTimeout = 20;
/* local_sq: how long the issue phase may take to reach prod. */
constexpr int64_t kIssueNs = int64_t(5) * 1000000000;
/* map_huge: 2^20 WQEs of this many SGEs, a 256 MiB ring. */
constexpr uint32_t kHugeSge = 15;

const char *const kCaseNames[] = {"srq_resize", "cq_resize", "local_sq", "map_huge"};

uint8_t pattern(uint32_t seed, uint32_t i)
{
	return uint8_t(seed * 151 + i * 11 + 3);
}

/* The longest waits of the two sleepers of a Probe, in ms. */
struct Gaps {
	double rt = 0, fair = 0;
};

/*
 * Two Sleepers: a realtime one, whose wait is the verdict (only code that
 * cannot be preempted delays it), and an ordinary one, whose wait is
 * reported (it also shows the CPU the scheduler gives the work item).
 */
class Probe
{
      public:
	/* Starts both, and takes their waits in 300 ms of idle as the base. */
	Probe() : rt_(true)
	{
		usleep(300000);
		base_ = take();
	}
	/* The longest waits since the last take(); starts over. */
	Gaps take()
	{
		const Gaps g{rt_.max_gap_ms(), fair_.max_gap_ms()};

		rt_.reset();
		fair_.reset();
		return g;
	}
	const Gaps &base() const { return base_; }
	bool demoted() const { return rt_.demoted(); }

      private:
	Sleeper rt_, fair_;
	Gaps base_;
};

class BoundRun
{
      public:
	BoundRun(ibv_context *ctx, const GidChoice &gid, uint32_t srq_sge)
	    : ctx_(ctx), gid_(gid), srq_sge_(srq_sge), r_("bound")
	{
	}
	int run(const std::set<std::string> &cases);

      private:
	bool setup();
	uint8_t *send_buf(uint32_t slot) { return buf_.data() + slot * kMsg; }
	uint8_t *recv_buf(uint32_t slot) { return buf_.data() + (kSlots + slot) * kMsg; }
	SrqPtr make_srq(uint32_t max_wr, uint32_t max_sge);
	bool post_srq(ibv_srq *srq, uint32_t count);
	bool srq_traffic(const std::string &name, ibv_srq *srq, uint32_t count);
	bool wait_cons(const sroce_ring_hdr *q, uint32_t prod, int64_t deadline);
	void responsive(const std::string &name, const Probe &probe, const Gaps &gap,
	                const char *what, double alloc_ms = 0);
	void srq_resize();
	void cq_resize();
	void local_sq();
	bool local_checks(const std::string &name, ibv_qp *reader, ibv_cq *cq, ibv_mw *mw);
	void map_huge();

	ibv_context *ctx_;
	GidChoice gid_;
	uint32_t srq_sge_;
	Report r_;
	PdPtr pd_;
	MrPtr mr_;
	std::vector<uint8_t> buf_;
};

bool BoundRun::setup()
{
	buf_.assign(size_t(2) * kSlots * kMsg, 0);
	pd_.reset(ibv_alloc_pd(ctx_));
	mr_.reset(
	    pd_ ? ibv_reg_mr(pd_.get(), buf_.data(), buf_.size(),
	                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND)
	        : nullptr);
	return r_.check(mr_ != nullptr, "setup", "PD and MR (%s)",
	                mr_ ? "ok" : errno_name(null_errno()).c_str());
}

/* An SRQ of @max_wr WQEs of @max_sge SGEs; null (errno set) if none. */
SrqPtr BoundRun::make_srq(uint32_t max_wr, uint32_t max_sge)
{
	ibv_srq_init_attr sia{};

	sia.attr.max_wr = max_wr;
	sia.attr.max_sge = max_sge;
	return SrqPtr(ibv_create_srq(pd_.get(), &sia));
}

/* @count receives into @srq through the provider: wr_id i, receive buffer i % kSlots. */
bool BoundRun::post_srq(ibv_srq *srq, uint32_t count)
{
	constexpr uint32_t kChunk = 256;
	ibv_recv_wr wr[kChunk];
	ibv_sge sge[kChunk];

	for (uint32_t done = 0; done < count;) {
		const uint32_t k = std::min(kChunk, count - done);
		ibv_recv_wr *bad = nullptr;

		for (uint32_t j = 0; j < k; j++) {
			const uint32_t id = done + j;

			sge[j] = {reinterpret_cast<uintptr_t>(recv_buf(id % kSlots)), kMsg,
			          mr_->lkey};
			wr[j] = {};
			wr[j].wr_id = id;
			wr[j].sg_list = &sge[j];
			wr[j].num_sge = 1;
			wr[j].next = j + 1 < k ? &wr[j + 1] : nullptr;
		}
		if (int err = ibv_post_srq_recv(srq, wr, &bad)) {
			errno = err;
			return false;
		}
		done += k;
	}
	return true;
}

/*
 * @count SENDs from a fresh QP to a QP on @srq, one at a time: message m
 * must land in receive m (posted by post_srq()) with every byte intact.
 */
bool BoundRun::srq_traffic(const std::string &name, ibv_srq *srq, uint32_t count)
{
	CqPtr cq(ibv_create_cq(ctx_, 64, nullptr, nullptr, 0));
	ibv_qp_init_attr ia = rc_qp_init(cq.get(), 16, 1);
	QpPtr from(cq ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	ia.srq = srq;
	QpPtr to(from ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	if (!to)
		return r_.check(false, name + ".traffic", "a QP pair on the SRQ: %s",
		                errno_name(null_errno()).c_str());
	const char *stage = "";
	int err = connect_rc(from.get(), gid_, to->qp_num, IBV_ACCESS_LOCAL_WRITE, &stage);
	if (!err)
		err = connect_rc(to.get(), gid_, from->qp_num, IBV_ACCESS_LOCAL_WRITE, &stage);
	if (err)
		return r_.check(false, name + ".traffic", "connect, %s: %s", stage,
		                errno_name(err).c_str());
	for (uint32_t m = 0; m < count; m++) {
		uint8_t *src = send_buf(m % kSlots);
		ibv_sge sge{reinterpret_cast<uintptr_t>(src), kMsg, mr_->lkey};
		ibv_send_wr wr{};
		ibv_send_wr *bad = nullptr;
		ibv_wc wc[2];

		for (uint32_t i = 0; i < kMsg; i++)
			src[i] = pattern(m, i);
		wr.wr_id = 1000000 + m;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		if ((err = ibv_post_send(from.get(), &wr, &bad)))
			return r_.check(false, name + ".traffic", "ibv_post_send: %s",
			                errno_name(err).c_str());
		const int got = poll_cq_for(cq.get(), wc, 2, kTimeoutMs);
		bool ok = got == 2;
		for (int k = 0; ok && k < 2; k++) {
			ok = wc[k].status == IBV_WC_SUCCESS;
			if (ok && wc[k].opcode == IBV_WC_RECV)
				ok = wc[k].wr_id == m && wc[k].byte_len == kMsg &&
				     memcmp(recv_buf(m % kSlots), src, kMsg) == 0;
		}
		if (!ok)
			return r_.check(false, name + ".traffic",
			                "message %u: %d of 2 completions, or a wrong status, "
			                "receive or byte",
			                m, got);
	}
	return r_.check(true, name + ".traffic",
	                "%u SENDs landed in receives 0..%u of the SRQ in order, bytes intact",
	                count, count - 1);
}

/* Wait until @q's cons reaches @prod; false at @deadline. */
bool BoundRun::wait_cons(const sroce_ring_hdr *q, uint32_t prod, int64_t deadline)
{
	while (__atomic_load_n(&q->cons, __ATOMIC_ACQUIRE) != prod) {
		if (now_ns() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * @alloc_ms: the sleeper's longest wait while a ring of the size the work
 * allocates was created and destroyed. That part is the kernel's (the page
 * allocator, memcg charging, KASAN's shadow for the vmalloc area: on a
 * debug kernel with preemption "none" this alone kept the sleeper waiting
 * about 100 ms for 144 MiB), not sroce's, so it is added to the limit.
 */
void BoundRun::responsive(const std::string &name, const Probe &probe, const Gaps &gap,
                          const char *what, double alloc_ms)
{
	const double limit = sleeper_limit_ms(probe.base().rt) + alloc_ms;
	char alloc[96] = "";

	if (alloc_ms > 0)
		snprintf(alloc, sizeof(alloc), ", %.1f ms of it allowed for allocating the ring",
		         alloc_ms);
	r_.check(gap.rt < limit && !probe.demoted(), name,
	         "a SCHED_FIFO thread sleeping 1 ms at a time was never kept waiting %.0f ms or "
	         "more %s (longest %.1f ms, %.1f ms before%s; an ordinary one: %.1f ms, %.1f ms "
	         "before%s)",
	         limit, what, gap.rt, probe.base().rt, alloc, gap.fair, probe.base().fair,
	         probe.demoted() ? "; no SCHED_FIFO here" : "");
}

/*
 * An SRQ of kSrqPosted WQEs, every one posted, grows to twice that: the
 * kernel moves every posted WQE into the new ring. Afterwards the new ring,
 * as mapped, holds them all (wr_id, SGE) at their indices, and SENDs land
 * in the first receives in order.
 */
void BoundRun::srq_resize()
{
	const std::string name = "srq_resize";
	const uint32_t n = kSrqPosted;
	const uint32_t stride = sroce_recv_wqe_stride(srq_sge_);
	SrqPtr srq = make_srq(n, srq_sge_);

	if (!srq || !post_srq(srq.get(), n)) {
		r_.fail(name + ".setup", "an SRQ of %u WQEs of %u SGEs, all posted: %s", n,
		        srq_sge_, errno_name(null_errno()).c_str());
		return;
	}
	Probe probe;
	/* The kernel's share: a ring of the new size created and destroyed. */
	if (!make_srq(2 * n, srq_sge_)) {
		r_.fail(name + ".setup", "an SRQ of %u WQEs of %u SGEs: %s", 2 * n, srq_sge_,
		        errno_name(null_errno()).c_str());
		return;
	}
	const Gaps alloc = probe.take();
	const std::set<MapRange> before = uverbs_mappings();
	ibv_srq_attr a{};
	a.max_wr = 2 * n;
	const int64_t t0 = now_ns();
	const int err = ibv_modify_srq(srq.get(), &a, IBV_SRQ_MAX_WR);
	const int64_t t1 = now_ns();
	const Gaps gap = probe.take();
	r_.info("srq_resize: %u posted WQEs of %u bytes moved into a ring of %u in %.1f ms", n,
	        stride, 2 * n, double(t1 - t0) / 1e6);
	if (!r_.expect_ok(name + ".modify", err, "ibv_modify_srq IBV_SRQ_MAX_WR 2^20"))
		return;
	sroce_ring_hdr *ring = new_ring(before, ring_bytes(2 * n, stride));
	if (!r_.check(ring != nullptr, name + ".ring", "the new ring of %u entries is mapped",
	              2 * n))
		return;
	const uint32_t cons = __atomic_load_n(&ring->cons, __ATOMIC_ACQUIRE);
	const uint32_t prod = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE);
	uint32_t wrong = 0, first = 0;
	for (uint32_t i = 0; i < n && prod - cons == n; i++) {
		const auto *w = static_cast<const sroce_recv_wqe *>(
		    sroce_ring_entry(ring, cons + i, 2 * n, stride));
		const sroce_sge &s = w->sge[0];

		if (w->wr_id != i || w->num_sge != 1 ||
		    s.addr != reinterpret_cast<uintptr_t>(recv_buf(i % kSlots)) ||
		    s.length != kMsg || s.lkey != mr_->lkey) {
			if (!wrong++)
				first = i;
		}
	}
	r_.check(prod - cons == n && !wrong, name + ".kept",
	         "the new ring holds the %u posted receives at their indices, wr_id and SGE "
	         "intact (%u posted, %u wrong, the first %u)",
	         n, prod - cons, wrong, first);
	srq_traffic(name, srq.get(), kSlots);
	responsive(name + ".responsive", probe, gap, "while the SRQ was resized", alloc.rt);
}

/*
 * The largest CQ, full: kCqFull receives of a QP are flushed into it. It is
 * resized (to the same size: it cannot grow, and every CQE must move); then
 * every CQE must come out of it, in order, once.
 */
void BoundRun::cq_resize()
{
	const std::string name = "cq_resize";
	const uint32_t n = kCqFull;
	CqPtr cq(ibv_create_cq(ctx_, int(n - 1), nullptr, nullptr, 0));
	CqPtr scq(ibv_create_cq(ctx_, 1, nullptr, nullptr, 0));
	sroce_ring_hdr *sq, *rq;
	std::string why = errno_name(null_errno());
	QpPtr qp =
	    cq && scq ? ring_qp(pd_.get(), scq.get(), cq.get(), 1, n, &sq, &rq, &why) : nullptr;
	QpTransition t = to_init(IBV_QPT_RC, IBV_ACCESS_LOCAL_WRITE);
	if (qp)
		why = "INIT: " + errno_name(ibv_modify_qp(qp.get(), &t.attr, t.mask));
	if (!qp || why != "INIT: 0") {
		r_.fail(name + ".setup", "a CQ of %u and a QP in INIT with %u receives: %s", n - 1,
		        n, why.c_str());
		return;
	}
	const uint32_t rp = __atomic_load_n(&rq->prod, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < n; i++) {
		auto *w = static_cast<sroce_recv_wqe *>(
		    sroce_ring_entry(rq, rp + i, n, sroce_recv_wqe_stride(1)));

		memset(w, 0, SROCE_RECV_WQE_HDR_SIZE);
		w->wr_id = i;
	}
	__atomic_store_n(&rq->prod, rp + n, __ATOMIC_RELEASE);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	const int to_err = ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE);
	if (to_err || !wait_cons(rq, rp + n, now_ns() + kDrainNs)) {
		r_.fail(name + ".setup", "%u receives flushed into the CQ (to ERR: %s)", n,
		        errno_name(to_err).c_str());
		return;
	}
	Probe probe;
	const int64_t t0 = now_ns();
	const int err = ibv_resize_cq(cq.get(), int(n - 1));
	const int64_t t1 = now_ns();
	const Gaps gap = probe.take();
	r_.info("cq_resize: %u CQEs moved in %.1f ms", n, double(t1 - t0) / 1e6);
	if (!r_.expect_ok(name + ".resize", err, "ibv_resize_cq of a full CQ"))
		return;
	uint32_t got = 0, wrong = 0;
	uint64_t first = 0;
	ibv_wc wc[256];
	int k;
	while (got <= n && (k = poll_cq_for(cq.get(), wc, 256, 200)) > 0)
		for (int i = 0; i < k; i++, got++)
			if ((wc[i].wr_id != got || wc[i].status != IBV_WC_WR_FLUSH_ERR) && !wrong++)
				first = wc[i].wr_id;
	r_.check(got == n && !wrong, name + ".kept",
	         "the %u CQEs came out after the resize, in order, WR_FLUSH_ERR, once each (%u, "
	         "%u wrong, the first wr_id %#" PRIx64 ")",
	         n, got, wrong, first);
	responsive(name + ".responsive", probe, gap, "while the CQ was resized");
}

/*
 * A SEND, then BIND_MW WQEs (memory operations: no packet, they take no
 * PSN) in every other slot of the largest SQ, written into the ring and
 * published with one doorbell while the receiving QP is still in INIT: the
 * SEND is dropped there and stays unacknowledged, and the requester works
 * through the WQEs behind it (issue). Then the receiver comes up; the SEND
 * is retransmitted when the local ACK timer fires, and its ACK covers
 * every WQE the requester has gone through (retire). Neither phase may keep
 * the sleeper waiting; every WQE must complete once, in order.
 */
void BoundRun::local_sq()
{
	const std::string name = "local_sq";
	const uint32_t n = SROCE_RING_MAX_ENTRIES;
	const uint32_t stride = sroce_send_wqe_stride(1, 0);
	CqPtr acq(ibv_create_cq(ctx_, int(kCqFull - 1), nullptr, nullptr, 0));
	CqPtr bcq(ibv_create_cq(ctx_, 64, nullptr, nullptr, 0));
	MwPtr mw(ibv_alloc_mw(pd_.get(), IBV_MW_TYPE_1));
	sroce_ring_hdr *sq, *rq;
	std::string why = errno_name(null_errno());
	QpPtr a = mw && acq && bcq ? ring_qp(pd_.get(), acq.get(), acq.get(), n, 1, &sq, &rq, &why)
	                           : nullptr;
	ibv_qp_init_attr ia = rc_qp_init(bcq.get(), 4, 4);
	QpPtr b(a ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	if (!b) {
		r_.fail(name + ".setup", "a window, an SQ of %u and a peer QP: %s", n,
		        a ? errno_name(null_errno()).c_str() : why.c_str());
		return;
	}
	const unsigned access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	QpTransition t = to_init(IBV_QPT_RC, access);
	ibv_sge rsge{reinterpret_cast<uintptr_t>(recv_buf(0)), kMsg, mr_->lkey};
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	const char *stage = "";
	int err =
	    connect_rc_from(a.get(), gid_, b->qp_num, access, IBV_QPS_INIT, kLocalTimeout, &stage);
	if (!err && (err = ibv_modify_qp(b.get(), &t.attr, t.mask)))
		stage = "peer INIT";
	if (!err && (err = ibv_post_recv(b.get(), &rwr, &rbad)))
		stage = "peer receive";
	if (err) {
		r_.fail(name + ".setup", "%s: %s", stage, errno_name(err).c_str());
		return;
	}

	for (uint32_t i = 0; i < 2 * kMsg; i++)
		send_buf(0)[i] = pattern(7, i);
	const uint32_t start = __atomic_load_n(&sq->prod, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < n; i++) {
		auto *w = static_cast<sroce_send_wqe *>(sroce_ring_entry(sq, start + i, n, stride));

		memset(w, 0, stride);
		w->wr_id = i;
		if (i == 0 || i % kSignalEvery == 0 || i == n - 1)
			w->flags = SROCE_WQE_SIGNALED;
		if (i == 0) {
			auto *sge = reinterpret_cast<sroce_sge *>(w->data);

			w->opcode = IBV_WR_SEND;
			w->num_sge = 1;
			*sge = {reinterpret_cast<uintptr_t>(send_buf(0)), kMsg, mr_->lkey};
			continue;
		}
		/* The window over the region of send_buf(1), bound again and again. */
		w->opcode = IBV_WR_BIND_MW;
		w->wr.bind_mw.addr = reinterpret_cast<uintptr_t>(send_buf(1));
		w->wr.bind_mw.length = kMsg;
		w->wr.bind_mw.mr_lkey = mr_->lkey;
		w->wr.bind_mw.mw_rkey = mw->rkey;
		w->wr.bind_mw.rkey = mw->rkey;
		w->wr.bind_mw.access = IBV_ACCESS_REMOTE_READ;
	}
	__atomic_store_n(&sq->prod, start + n, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);

	Probe probe;
	const int64_t t0 = now_ns();
	err = doorbell(a.get());
	const int64_t t1 = now_ns();
	/*
	 * The requester asks for a doorbell again when it went through them
	 * all; it stops after 256 (SROCE_MAX_INFLIGHT_WQES) while the SEND at
	 * their head is not answered, so this waits kIssueNs.
	 */
	auto idle = [sq] {
		return (__atomic_load_n(&sq->kflags, __ATOMIC_ACQUIRE) & SROCE_SQ_NEED_WAKEUP) != 0;
	};
	while (!err && !idle() && now_ns() < t1 + kIssueNs)
		usleep(1000);
	const int64_t t2 = now_ns();
	const bool reached = idle();
	const Gaps issue_gap = probe.take();
	if (err) {
		r_.fail(name + ".doorbell", "empty POST_SEND: %s", errno_name(err).c_str());
		return;
	}

	err = connect_rc_from(b.get(), gid_, a->qp_num, access, IBV_QPS_RTR, kTimeout, &stage);
	if (err) {
		r_.fail(name + ".setup", "peer %s: %s", stage, errno_name(err).c_str());
		return;
	}
	/* Every signalled WQE, in order, until cons reaches prod. */
	uint32_t got = 0, wrong = 0, want = 0, first = 0;
	const int64_t deadline = now_ns() + kDrainNs;
	bool drained = false;
	for (;;) {
		ibv_wc wc[256];
		const int k = ibv_poll_cq(acq.get(), 256, wc);

		for (int i = 0; i < k; i++, got++) {
			const ibv_wc_opcode op = want ? IBV_WC_BIND_MW : IBV_WC_SEND;

			if ((wc[i].wr_id != want || wc[i].status != IBV_WC_SUCCESS ||
			     wc[i].opcode != op) &&
			    !wrong++)
				first = got;
			want = want == 0 ? kSignalEvery : std::min(want + kSignalEvery, n - 1);
		}
		if (drained && k == 0)
			break;
		drained = __atomic_load_n(&sq->cons, __ATOMIC_ACQUIRE) == start + n;
		if (!k && !drained && now_ns() > deadline)
			break;
		if (!k)
			usleep(1000);
	}
	const int64_t t3 = now_ns();
	const Gaps retire_gap = probe.take();
	const uint32_t signalled = 1 + (n - 2) / kSignalEvery + 1;
	r_.info("local_sq: doorbell %.1f ms, the requester %s after %.1f ms; all %u WQEs "
	        "completed %.1f ms after the peer came up",
	        double(t1 - t0) / 1e6,
	        reached ? "went through every WQE"
	                : "stopped short of prod (256 WQEs started, none answered)",
	        double(t2 - t0) / 1e6, n, double(t3 - t2) / 1e6);
	r_.check(drained, name + ".cons", "every WQE consumed: cons at prod (%+d)",
	         int(__atomic_load_n(&sq->cons, __ATOMIC_ACQUIRE) - start - n));
	r_.check(got == signalled && !wrong, name + ".completions",
	         "the SEND and every %uth BIND_MW completed: SUCCESS, in order, once each (%u of "
	         "%u, %u wrong, the first at %u)",
	         kSignalEvery, got, signalled, wrong, first);
	local_checks(name, b.get(), bcq.get(), mw.get());
	responsive(name + ".issue_responsive", probe, issue_gap,
	           "while the requester went through the WQEs");
	responsive(name + ".retire_responsive", probe, retire_gap,
	           "while the peer's ACKs completed them");
}

/* The peer @reader got the SEND intact, and reads the window's bytes. */
bool BoundRun::local_checks(const std::string &name, ibv_qp *reader, ibv_cq *cq, ibv_mw *mw)
{
	ibv_wc wc{};
	int got = poll_cq_for(cq, &wc, 1, kTimeoutMs);
	r_.check(got == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == kMsg &&
	             memcmp(recv_buf(0), send_buf(0), kMsg) == 0,
	         name + ".send", "the SEND before the BIND_MWs arrived intact (%s, %u bytes)",
	         got == 1 ? ibv_wc_status_str(wc.status) : "no completion", wc.byte_len);

	ibv_sge sge{reinterpret_cast<uintptr_t>(recv_buf(1)), kMsg, mr_->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(send_buf(1));
	wr.wr.rdma.rkey = mw->rkey;
	got = ibv_post_send(reader, &wr, &bad) ? -1 : poll_cq_for(cq, &wc, 1, kTimeoutMs);
	return r_.check(got == 1 && wc.status == IBV_WC_SUCCESS &&
	                    memcmp(recv_buf(1), send_buf(1), kMsg) == 0,
	                name + ".window",
	                "an RDMA READ through the window the BIND_MWs bound returns the region's "
	                "bytes (%s)",
	                got == 1 ? ibv_wc_status_str(wc.status) : "no completion");
}

/*
 * An SRQ with the largest ring that fits a small guest (2^20 WQEs of
 * kHugeSge SGEs, 256 MiB). Its ring is mapped once more, timed alone (the
 * provider maps it in ibv_create_srq(), after the kernel allocated it):
 * the kernel inserts it page by page, and the sleeper must not wait long.
 * The second mapping must show the receives posted through the first,
 * and SENDs must land in them.
 */
void BoundRun::map_huge()
{
	const std::string name = "map_huge";
	const uint32_t n = SROCE_RING_MAX_ENTRIES;
	const uint32_t stride = sroce_recv_wqe_stride(kHugeSge);
	const size_t bytes = ring_bytes(n, stride);
	const std::set<MapRange> before = uverbs_mappings();
	SrqPtr srq = make_srq(n, kHugeSge);
	sroce_ring_hdr *ring = srq ? new_ring(before, bytes) : nullptr;
	const long offset = ring ? mapping_offset(ring) : -1;

	if (!srq || offset < 0) {
		r_.fail(name + ".setup", "an SRQ of %u WQEs of %u SGEs and its ring: %s", n,
		        kHugeSge, srq ? "not found" : errno_name(null_errno()).c_str());
		return;
	}
	Probe probe;
	const int64_t t0 = now_ns();
	void *again =
	    mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ctx_->cmd_fd, offset);
	const int64_t t1 = now_ns();
	const Gaps gap = probe.take();
	r_.info("map_huge: a ring of %zu MiB mapped again in %.1f ms", bytes >> 20,
	        double(t1 - t0) / 1e6);
	if (again == MAP_FAILED) {
		r_.fail(name + ".mmap", "mmap of the ring again: %s", errno_name(errno).c_str());
		return;
	}
	bool same = post_srq(srq.get(), kSlots);
	auto *hdr = static_cast<sroce_ring_hdr *>(again);
	for (uint32_t i = 0; same && i < kSlots; i++)
		same = static_cast<const sroce_recv_wqe *>(sroce_ring_entry(hdr, i, n, stride))
		           ->wr_id == i;
	same = same && __atomic_load_n(&hdr->prod, __ATOMIC_ACQUIRE) == kSlots;
	munmap(again, bytes);
	r_.check(same, name + ".mapping",
	         "the second mapping of the %zu-byte ring shows the %u receives posted through "
	         "the first",
	         bytes, kSlots);
	srq_traffic(name, srq.get(), kSlots);
	responsive(name + ".responsive", probe, gap, "while the ring was mapped");
}

int BoundRun::run(const std::set<std::string> &cases)
{
	if (!setup())
		return r_.finish();
	if (cases.count("srq_resize"))
		srq_resize();
	if (cases.count("cq_resize"))
		cq_resize();
	if (cases.count("local_sq"))
		local_sq();
	if (cases.count("map_huge"))
		map_huge();
	return r_.finish();
}

} /* namespace */

int cmd_bound(int argc, char **argv)
{
	Args args;
	std::string why;
	long gid_index, srq_sge;

	if (!args.parse(argc, argv, {{"gid-index", true}, {"cases", true}, {"srq-sge", true}},
	                &why))
		return usage_error("bound", why);
	if (args.num_positional() != 1)
		return usage_error("bound", "expects one device name");
	if (!args.number("gid-index", -1, -1, 65535, &gid_index, &why) ||
	    !args.number("srq-sge", 8, 1, 27, &srq_sge, &why))
		return usage_error("bound", why);
	std::set<std::string> cases;
	std::istringstream list(args.value("cases", "srq_resize,cq_resize,local_sq,map_huge"));
	for (std::string c; std::getline(list, c, ',');) {
		if (std::find(std::begin(kCaseNames), std::end(kCaseNames), c) ==
		    std::end(kCaseNames))
			return usage_error("bound", "unknown case " + c);
		cases.insert(c);
	}
	ContextPtr ctx = open_device(args.positional(0), &why);
	GidChoice gid;
	if (!ctx || !pick_gid(ctx.get(), int(gid_index), &gid, &why)) {
		Report r("bound");
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	BoundRun run(ctx.get(), gid, uint32_t(srq_sge));
	return run.run(cases);
}

} /* namespace vc */
