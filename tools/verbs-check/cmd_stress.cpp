// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check stress DEV [--seconds S] [--churn N] [--gid-index I]
 *     [--until-removed]
 *
 * Concurrency stress of one device for S seconds (default 30), for the
 * debug guest kernel's detectors (KASAN, lockdep, KMEMLEAK) to judge what
 * the kernel does when several threads use one context at once:
 *
 *   churn (N threads, default 2)  create and destroy PDs, MRs, CQs, SRQs,
 *                                 AHs, memory windows and RC QPs (walked to
 *                                 RTS), in varying sizes and orders
 *   traffic (1 thread)            RDMA WRITE then READ back on a loopback
 *                                 RC pair, every byte compared
 *   mw_race (2 threads)           one thread binds a type 1 window to a
 *                                 fresh region while the other deregisters
 *                                 that region, or takes IBV_ACCESS_MW_BIND
 *                                 from it (ibv_rereg_mr), released at the
 *                                 same moment
 *
 * Each race has two correct outcomes (IBA 10.6.7.2.3, o10-37): the bind
 * wins and the other verb fails with EBUSY, or the other verb wins and the
 * bind completes with IBV_WC_MW_BIND_ERR. Both succeeding leaves a valid
 * window on freed kernel memory (on the debug kernel, the next bind of the
 * window is a use-after-free KASAN reports) or on a region that no longer
 * allows windows: that is a FAIL.
 *
 * Prints the number of operations of each kind ("info: ..."). With
 * --until-removed the device may vanish under the threads (rdma link
 * delete, rmmod): a thread that sees IBV_EVENT_DEVICE_FATAL or a failing
 * verb after it stops quietly, and the run passes if nothing failed before.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <poll.h>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace vc
{
namespace
{

using Clock = std::chrono::steady_clock;

/* Regions may carry windows; QPs take only the remote rights (IBA 10.2.4). */
constexpr unsigned kQpAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
constexpr unsigned kAccess = kQpAccess | IBV_ACCESS_MW_BIND;
constexpr int kWaitMs = 10000;

struct Shared {
	ibv_context *ctx = nullptr;
	GidChoice gid;
	Clock::time_point end;
	bool until_removed = false;
	std::atomic<bool> removed{false};
	std::atomic<bool> stop{false};
	std::mutex lock; /* the report */
	Report *report = nullptr;

	std::atomic<uint64_t> objects{0};
	std::atomic<uint64_t> qps{0};
	std::atomic<uint64_t> bytes{0};
	std::atomic<uint64_t> races{0};
	std::atomic<uint64_t> bind_won{0};
	std::atomic<uint64_t> other_won{0};

	bool running() const { return !stop.load(std::memory_order_relaxed) && Clock::now() < end; }

	/*
	 * A verb failed: a FAIL, unless the device is going away in an
	 * --until-removed run (then the thread just stops).
	 */
	void failed(const char *name, const std::string &what)
	{
		if (until_removed && device_gone())
			removed = true;
		else {
			std::lock_guard<std::mutex> g(lock);
			report->fail(name, "%s", what.c_str());
		}
		stop = true;
	}

	bool device_gone()
	{
		ibv_port_attr port{};

		if (removed)
			return true;
		return ibv_query_port(ctx, 1, &port) != 0 || port.state != IBV_PORT_ACTIVE;
	}
};

std::string verb_error(const char *verb, int err)
{
	return std::string(verb) + " failed: " + errno_name(err);
}

/* An RC QP with its own CQ, connected to @dest_qpn (set later). */
struct RcEnd {
	CqPtr cq;
	QpPtr qp;

	bool create(ibv_pd *pd, ibv_context *ctx, int depth)
	{
		ibv_qp_init_attr init{};

		cq.reset(ibv_create_cq(ctx, depth * 2, nullptr, nullptr, 0));
		if (!cq)
			return false;
		init.send_cq = cq.get();
		init.recv_cq = cq.get();
		init.qp_type = IBV_QPT_RC;
		init.cap.max_send_wr = uint32_t(depth);
		init.cap.max_recv_wr = uint32_t(depth);
		init.cap.max_send_sge = 1;
		init.cap.max_recv_sge = 1;
		qp.reset(ibv_create_qp(pd, &init));
		return bool(qp);
	}

	void reset()
	{
		qp.reset();
		cq.reset();
	}
};

/* Two RC QPs connected to each other. */
bool make_pair(Shared &s, ibv_pd *pd, RcEnd *a, RcEnd *b, const char *name)
{
	int err;

	if (!a->create(pd, s.ctx, 16) || !b->create(pd, s.ctx, 16)) {
		s.failed(name, verb_error("creating a CQ or an RC QP", null_errno()));
		return false;
	}
	err = connect_rc(a->qp.get(), s.gid, b->qp->qp_num, kQpAccess);
	if (!err)
		err = connect_rc(b->qp.get(), s.gid, a->qp->qp_num, kQpAccess);
	if (err) {
		s.failed(name, verb_error("connecting the RC pair", err));
		return false;
	}
	return true;
}

/* One signalled WR on @qp; waits for its completion, which must succeed. */
bool post_wait(Shared &s, ibv_qp *qp, ibv_cq *cq, ibv_send_wr *wr, const char *name)
{
	ibv_send_wr *bad = nullptr;
	ibv_wc wc{};
	int err = ibv_post_send(qp, wr, &bad);

	if (err) {
		s.failed(name, verb_error("ibv_post_send", err));
		return false;
	}
	if (poll_cq_for(cq, &wc, 1, kWaitMs) != 1) {
		s.failed(name, "no completion within 10 s");
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		s.failed(name, std::string("completion status ") + ibv_wc_status_str(wc.status));
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------------ */

void churn_qp(Shared &s, ibv_pd *pd, std::mt19937 &rng)
{
	RcEnd end;
	int depth = 1 << (rng() % 8);

	if (!end.create(pd, s.ctx, depth)) {
		s.failed("stress.churn", verb_error("creating a CQ or an RC QP", null_errno()));
		return;
	}
	/* Connected to itself: the state walk is what is exercised. */
	int err = connect_rc(end.qp.get(), s.gid, end.qp->qp_num, kQpAccess);

	if (err) {
		s.failed("stress.churn", verb_error("walking an RC QP to RTS", err));
		return;
	}
	s.qps++;
}

void churn_thread(Shared &s, unsigned seed)
{
	std::mt19937 rng(seed);
	std::vector<uint8_t> buf(256 * 1024);

	while (s.running()) {
		PdPtr pd(ibv_alloc_pd(s.ctx));

		if (!pd) {
			s.failed("stress.churn", verb_error("ibv_alloc_pd", null_errno()));
			return;
		}
		size_t len = 4096u << (rng() % 6);
		MrPtr mr(ibv_reg_mr(pd.get(), buf.data(), len, kAccess));
		CqPtr cq(ibv_create_cq(s.ctx, 1 + int(rng() % 1024), nullptr, nullptr, 0));
		ibv_srq_init_attr sattr{};

		sattr.attr.max_wr = 1 + rng() % 512;
		sattr.attr.max_sge = 1 + rng() % 4;
		SrqPtr srq(ibv_create_srq(pd.get(), &sattr));
		ibv_ah_attr ah = loopback_ah(s.gid);
		AhPtr ahp(ibv_create_ah(pd.get(), &ah));
		MwPtr mw(ibv_alloc_mw(pd.get(), rng() % 2 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2));

		if (!mr || !cq || !srq || !ahp || !mw) {
			s.failed("stress.churn",
			         verb_error("creating an MR, CQ, SRQ, AH or window", null_errno()));
			return;
		}
		s.objects += 6;
		churn_qp(s, pd.get(), rng);
		/* Destroy in another order than the reverse of creation now and then. */
		if (rng() % 2) {
			mr.reset();
			cq.reset();
		}
	}
}

/* ------------------------------------------------------------------------ */

void traffic_thread(Shared &s, unsigned seed)
{
	constexpr size_t kLen = 64 * 1024;
	std::mt19937 rng(seed);
	std::vector<uint8_t> src(kLen), dst(kLen), back(kLen);
	PdPtr pd(ibv_alloc_pd(s.ctx));
	RcEnd a, b;

	if (!pd) {
		s.failed("stress.traffic", verb_error("ibv_alloc_pd", null_errno()));
		return;
	}
	MrPtr msrc(ibv_reg_mr(pd.get(), src.data(), kLen, kAccess));
	MrPtr mdst(ibv_reg_mr(pd.get(), dst.data(), kLen, kAccess));
	MrPtr mback(ibv_reg_mr(pd.get(), back.data(), kLen, kAccess));

	if (!msrc || !mdst || !mback) {
		s.failed("stress.traffic", verb_error("ibv_reg_mr", null_errno()));
		return;
	}
	if (!make_pair(s, pd.get(), &a, &b, "stress.traffic"))
		return;
	while (s.running()) {
		size_t len = 1 + rng() % kLen;
		ibv_sge sge{};
		ibv_send_wr wr{};

		for (size_t i = 0; i < len; i++)
			src[i] = uint8_t(rng());
		sge = {uintptr_t(src.data()), uint32_t(len), msrc->lkey};
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma = {uintptr_t(dst.data()), mdst->rkey};
		if (!post_wait(s, a.qp.get(), a.cq.get(), &wr, "stress.traffic"))
			return;
		sge = {uintptr_t(back.data()), uint32_t(len), mback->lkey};
		wr.opcode = IBV_WR_RDMA_READ;
		if (!post_wait(s, a.qp.get(), a.cq.get(), &wr, "stress.traffic"))
			return;
		if (std::memcmp(src.data(), back.data(), len) != 0) {
			s.failed("stress.traffic",
			         "a READ of what was written returned other bytes (" +
			             std::to_string(len) + " bytes)");
			return;
		}
		s.bytes += 2 * len;
	}
}

/* ------------------------------------------------------------------------ */

/*
 * The two threads of the window race meet at a generation counter. Odd
 * generations race the bind against ibv_dereg_mr(), even ones against
 * ibv_rereg_mr() taking IBV_ACCESS_MW_BIND away.
 */
struct RaceGate {
	std::atomic<uint64_t> go{0};
	std::atomic<uint64_t> done{0};
	ibv_mr *mr = nullptr;
	bool rereg = false;
	int other_err = 0; /* errno of the other thread's verb, 0 if it succeeded */
};

bool wait_for(Shared &s, std::atomic<uint64_t> &word, uint64_t want)
{
	while (word.load(std::memory_order_acquire) < want)
		if (s.stop.load(std::memory_order_relaxed))
			return false;
	return true;
}

void other_thread(Shared &s, RaceGate &g)
{
	for (uint64_t gen = 1;; gen++) {
		if (!wait_for(s, g.go, gen))
			return;
		int err;

		if (g.rereg) {
			errno = 0;
			err = ibv_rereg_mr(g.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
			                   kQpAccess);
			if (err)
				err = errno ? errno : EIO;
		} else {
			err = ibv_dereg_mr(g.mr);
		}
		g.other_err = err;
		g.done.store(gen, std::memory_order_release);
	}
}

/* Type 1 bind of @mw over @mr (length 0 with a null @mr: unbind). */
int bind(ibv_qp *qp, ibv_mw *mw, ibv_mr *mr, void *addr, size_t len)
{
	ibv_mw_bind b{};

	b.wr_id = 7;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr;
	b.bind_info.addr = uintptr_t(addr);
	b.bind_info.length = len;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	return ibv_bind_mw(qp, mw, &b);
}

/* The state of one window race, for settle_race(). */
struct RaceEnds {
	ibv_pd *pd;
	RcEnd *a, *b;
	ibv_mw *mw;
};

/*
 * Judge race @gen, whose bind ended with @bound, and clean up for the next
 * one. Each race has two correct outcomes (IBA 10.6.7.2.3, o10-37): the
 * bind wins and the other verb fails with EBUSY, or the other verb wins
 * and the bind completes with IBV_WC_MW_BIND_ERR. Both succeeding leaves a
 * valid window on a freed region (dereg) or on a region that no longer
 * allows windows (rereg). Returns false when the thread must stop; sets
 * *@leak_mw when the window must never be touched again.
 */
bool settle_race(Shared &s, RaceGate &g, const RaceEnds &e, uint64_t gen, bool bound, bool *leak_mw)
{
	const char *verb = g.rereg ? "ibv_rereg_mr(CHANGE_ACCESS without MW_BIND)" : "ibv_dereg_mr";
	ibv_wc wc{};

	s.races++;
	if (bound && !g.other_err) {
		s.failed("stress.mw_race",
		         "race " + std::to_string(gen) + ": the bind and " + verb +
		             " of its region both succeeded (a valid window on a region " +
		             (g.rereg ? "that no longer allows windows)" : "that was freed)"));
		*leak_mw = !g.rereg;
		return false;
	}
	if (!bound && g.other_err) {
		s.failed("stress.mw_race",
		         verb_error((std::string("the bind failed, and so did ") + verb).c_str(),
		                    g.other_err));
		return false;
	}
	if (bound) {
		/* The bind won: the region is busy until the window lets go. */
		if (g.other_err != EBUSY) {
			s.failed("stress.mw_race",
			         verb_error((std::string(verb) +
			                     " of a region with a bound window (expected EBUSY)")
			                        .c_str(),
			                    g.other_err));
			return false;
		}
		s.bind_won++;
		if (bind(e.a->qp.get(), e.mw, nullptr, nullptr, 0) ||
		    poll_cq_for(e.a->cq.get(), &wc, 1, kWaitMs) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			s.failed("stress.mw_race", "unbinding the window failed");
			return false;
		}
	} else {
		/* The other verb won; the failed bind put the QP in ERR. */
		s.other_won++;
		e.a->reset();
		e.b->reset();
		if (!make_pair(s, e.pd, e.a, e.b, "stress.mw_race"))
			return false;
	}
	if (g.rereg || bound) {
		int err = ibv_dereg_mr(g.mr);

		if (err) {
			s.failed("stress.mw_race", verb_error("ibv_dereg_mr after the race", err));
			return false;
		}
	}
	return true;
}

void mw_race_thread(Shared &s)
{
	constexpr size_t kLen = 4096;
	std::vector<uint8_t> buf(kLen);
	PdPtr pd(ibv_alloc_pd(s.ctx));
	RcEnd a, b;
	RaceGate g;

	if (!pd || !make_pair(s, pd.get(), &a, &b, "stress.mw_race"))
		return;
	MwPtr mw(ibv_alloc_mw(pd.get(), IBV_MW_TYPE_1));
	if (!mw) {
		s.failed("stress.mw_race", verb_error("ibv_alloc_mw", null_errno()));
		return;
	}
	const RaceEnds ends = {pd.get(), &a, &b, mw.get()};
	std::thread other(other_thread, std::ref(s), std::ref(g));

	for (uint64_t gen = 1; s.running(); gen++) {
		ibv_wc wc{};
		bool leak_mw = false;

		g.mr = ibv_reg_mr(pd.get(), buf.data(), kLen, kAccess);
		if (!g.mr) {
			s.failed("stress.mw_race", verb_error("ibv_reg_mr", null_errno()));
			break;
		}
		g.rereg = gen % 2 == 0;
		/*
		 * The bind works on a copy of the MR's fields: once the gate
		 * opens, the other thread may free g.mr, and ibv_bind_mw()
		 * reads mr->pd (its PD check answered EPERM from freed memory
		 * in make test's debug run on two vCPUs). The kernel decides
		 * the race by the lkey, as before.
		 */
		ibv_mr mr_copy = *g.mr;
		g.go.store(gen, std::memory_order_release);
		int err = bind(a.qp.get(), mw.get(), &mr_copy, buf.data(), kLen);

		if (err) {
			s.failed("stress.mw_race", verb_error("ibv_bind_mw", err));
			break;
		}
		if (poll_cq_for(a.cq.get(), &wc, 1, kWaitMs) != 1) {
			s.failed("stress.mw_race", "the bind did not complete within 10 s");
			break;
		}
		if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_MW_BIND_ERR) {
			s.failed("stress.mw_race", std::string("bind completed with ") +
			                               ibv_wc_status_str(wc.status));
			break;
		}
		if (!wait_for(s, g.done, gen))
			break;
		if (!settle_race(s, g, ends, gen, wc.status == IBV_WC_SUCCESS, &leak_mw)) {
			if (leak_mw)
				(void)mw.release();
			break;
		}
	}
	s.stop = true;
	other.join();
}

/* Ends the run when the device reports itself gone (--until-removed). */
void watch_thread(Shared &s)
{
	ibv_async_event ev{};

	while (s.running()) {
		int r = wait_async_event(s.ctx, 200, &ev);

		if (r < 0)
			break;
		if (r == 0)
			continue;
		bool fatal = ev.event_type == IBV_EVENT_DEVICE_FATAL;

		ibv_ack_async_event(&ev);
		if (fatal) {
			s.removed = true;
			s.stop = true;
		}
	}
}

} /* namespace */

int cmd_stress(int argc, char **argv)
{
	Args args;
	std::string why;
	long seconds, churn, gid_index;

	if (!args.parse(
	        argc, argv,
	        {{"seconds", true}, {"churn", true}, {"gid-index", true}, {"until-removed", false}},
	        &why) ||
	    !args.number("seconds", 30, 1, 3600, &seconds, &why) ||
	    !args.number("churn", 2, 0, 16, &churn, &why) ||
	    !args.number("gid-index", -1, -1, 255, &gid_index, &why))
		return usage_error("stress", why);
	if (args.num_positional() != 1)
		return usage_error("stress", "needs DEV");

	Report report("stress");
	ContextPtr ctx = open_device(args.positional(0), &why);
	Shared s;

	if (!ctx) {
		report.fail("stress.open", "%s", why.c_str());
		return report.finish();
	}
	s.ctx = ctx.get();
	s.report = &report;
	s.until_removed = args.has("until-removed");
	if (!pick_gid(ctx.get(), int(gid_index), &s.gid, &why)) {
		report.fail("stress.gid", "%s", why.c_str());
		return report.finish();
	}
	s.end = Clock::now() + std::chrono::seconds(seconds);

	std::vector<std::thread> threads;
	for (long i = 0; i < churn; i++)
		threads.emplace_back(churn_thread, std::ref(s), unsigned(1000 + i));
	threads.emplace_back(traffic_thread, std::ref(s), 77u);
	threads.emplace_back(mw_race_thread, std::ref(s));
	if (s.until_removed)
		threads.emplace_back(watch_thread, std::ref(s));
	for (std::thread &t : threads)
		t.join();

	report.info("stress: %ld s, %ld churn threads: %" PRIu64 " objects and %" PRIu64
	            " RC QPs created and destroyed, %" PRIu64 " bytes written and read back, "
	            "%" PRIu64 " bind/dereg and bind/rereg races (bind won %" PRIu64
	            ", the other verb won %" PRIu64 ")%s",
	            seconds, churn, s.objects.load(), s.qps.load(), s.bytes.load(), s.races.load(),
	            s.bind_won.load(), s.other_won.load(),
	            s.removed ? "; the device went away" : "");
	if (!report.failures()) {
		report.check(s.races > 0 && (s.bytes > 0 || s.removed), "stress.ran",
		             "every thread did its work (races and verified bytes counted)");
	}
	return report.finish();
}

} /* namespace vc */
