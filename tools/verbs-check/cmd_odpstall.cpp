// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check odpstall DEV (--knob PATH | --file F --server-pid P)
 * [--exit]: tearing down never
 * waits for an on-demand-paging fault. A fault runs in a work item that
 * touches the owner's memory; memory whose backing never answers (a FUSE
 * server that reads the request and does not reply) holds that work item
 * in the kernel for as long as it likes, and nothing can interrupt it.
 * PATH is sroce's debugfs knob odp_stall: while it reads 1, every fault
 * waits before it faults, as one on such memory would. With --file, the
 * ODP region is a private mapping of F, a file of the FUSE server P that
 * never answers a read ("fusehang"): the faults wait in it for real, and
 * "cleared" below means P is killed (its connection aborted, the reads
 * fail). Loopback, RC, one ODP region of 256 KiB:
 *
 *   stall     knob set; QP A sends 64 KiB from the ODP region, QP B writes
 *             64 KiB into it: both of A's sides wait for a fault, nothing
 *             completes in 1 s, and the waiting faults hold sroce.ko
 *             (/sys/module/sroce/refcnt up: rmmod is refused, not hung)
 *   teardown  destroy A and B, deregister the regions, free the CQ and PD,
 *             close the device: each returns in under 5 s while the
 *             faults still wait (a watchdog lets them go after 15 s so
 *             that a run that hangs still ends, and fails)
 *   release   knob cleared: the faults end and let go of the module
 *             (refcnt back to what it was before the device was opened)
 *   after     a new pair: a 64 KiB SEND from an ODP region and a 64 KiB
 *             WRITE into one arrive, every byte checked
 *
 * With --exit it stops after "stall", prints "stalled" and exits with its
 * objects still in place: the caller checks that the exit, deleting the
 * link and rmmod neither wait for the faults (selftests/odp_stall.sh).
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

namespace vc
{
namespace
{

constexpr uint32_t kRegion = 256 << 10;
constexpr uint32_t kMsg = 64 << 10;
constexpr unsigned kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
constexpr double kStepLimit = 5.0; /* seconds a teardown step may take */
constexpr int kWatchdog = 15;      /* seconds before the faults are let go anyway */

using Clock = std::chrono::steady_clock;

/* sroce.ko's reference count, or -1. */
long module_refs()
{
	std::ifstream f("/sys/module/sroce/refcnt");
	long n = -1;

	f >> n;
	return f ? n : -1;
}

bool write_knob(const std::string &path, int v)
{
	std::ofstream k(path);
	k << v << '\n';
	return bool(k.flush());
}

/* What holds the faults: the debugfs knob, or a FUSE server's silence. */
struct Hold {
	std::string knob;
	pid_t server = 0;

	bool set() const { return server || write_knob(knob, 1); }
	/* The knob cleared, or the server killed. */
	void clear() const
	{
		if (server)
			kill(server, SIGKILL);
		else
			write_knob(knob, 0);
	}
	const char *what() const { return server ? "the FUSE server" : knob.c_str(); }
};

/* Clears the hold after kWatchdog seconds unless stopped first. */
class Watchdog
{
      public:
	explicit Watchdog(const Hold &hold) : hold_(hold)
	{
		thread_ = std::thread([this] {
			std::unique_lock<std::mutex> l(m_);
			if (!cv_.wait_for(l, std::chrono::seconds(kWatchdog),
			                  [this] { return stop_; })) {
				fired_ = true;
				hold_.clear();
			}
		});
	}
	~Watchdog() { stop(); }
	void stop()
	{
		{
			std::lock_guard<std::mutex> l(m_);
			stop_ = true;
		}
		cv_.notify_all();
		if (thread_.joinable())
			thread_.join();
	}
	bool fired() const { return fired_; }

      private:
	const Hold &hold_;
	std::mutex m_;
	std::condition_variable cv_;
	bool stop_ = false;
	std::atomic<bool> fired_{false};
	std::thread thread_;
};

/* The objects of one loopback pair with an ODP region. */
struct Setup {
	ContextPtr ctx;
	PdPtr pd;
	CqPtr cq;
	QpPtr a, b;
	MrPtr odp, plain;
};

class StallRun
{
      public:
	StallRun(Report &r, const char *dev, const GidChoice &gid, const Hold &hold,
	         const std::string &file)
	    : r_(r), dev_(dev), gid_(gid), hold_(hold), file_(!file.empty())
	{
		/* A FUSE file's pages are its server's to give, or not. */
		if (file_)
			odp_mem_.map_file(file.c_str(), kRegion, PROT_READ | PROT_WRITE);
		else
			odp_mem_.map(kRegion, PROT_READ | PROT_WRITE);
	}
	/* Objects of @s over @odp and @plain, A and B connected. */
	bool build(const char *name, Setup *s, Mapping &odp, Mapping &plain);
	bool prepare(Setup *s) { return build("stall", s, odp_mem_, plain_mem_); }
	bool stall(Setup &s, long opened);
	void teardown(Setup &s, long base);
	void after();

      private:
	int post(ibv_qp *qp, ibv_wr_opcode op, uint8_t *src, uint32_t lkey, uint8_t *dst,
	         uint32_t rkey);
	/* Runs @fn (a destroy verb), checks it returned 0 within kStepLimit. */
	template <typename Fn> void step(const char *what, Fn fn);

	Report &r_;
	const char *dev_;
	GidChoice gid_;
	const Hold &hold_;
	bool file_;
	Mapping odp_mem_, plain_mem_{kRegion, PROT_READ | PROT_WRITE};
};

bool StallRun::build(const char *name, Setup *s, Mapping &odp, Mapping &plain)
{
	std::string why;
	std::string n(name);

	if (!odp.ok() || !plain.ok())
		return r_.check(false, n + ".memory", "mmap: %s", errno_name(errno).c_str());
	s->ctx = open_device(dev_, &why);
	if (!s->ctx)
		return r_.check(false, n + ".open", "%s", why.c_str());
	s->pd.reset(ibv_alloc_pd(s->ctx.get()));
	s->cq.reset(s->pd ? ibv_create_cq(s->ctx.get(), 16, nullptr, nullptr, 0) : nullptr);
	ibv_qp_init_attr ia = rc_qp_init(s->cq.get(), 4, 4);
	s->a.reset(s->cq ? ibv_create_qp(s->pd.get(), &ia) : nullptr);
	s->b.reset(s->a ? ibv_create_qp(s->pd.get(), &ia) : nullptr);
	s->odp.reset(
	    s->b ? ibv_reg_mr(s->pd.get(), odp.data(), kRegion, kAccess | IBV_ACCESS_ON_DEMAND)
	         : nullptr);
	s->plain.reset(s->odp ? ibv_reg_mr(s->pd.get(), plain.data(), kRegion, kAccess) : nullptr);
	if (!s->plain)
		return r_.check(false, n + ".objects", "PD, CQ, QPs, an ODP and a plain region: %s",
		                errno_name(null_errno()).c_str());
	/*
	 * A answers B's WRITE with RNR NAKs while its fault waits: B retries
	 * without end (7), as its WRITE must still be waiting at teardown.
	 */
	int e = connect_rc(s->a.get(), gid_, s->b->qp_num, kAccess);
	if (!e)
		e = connect_rc_rnr(s->b.get(), gid_, s->a->qp_num, kAccess, 7);
	return r_.check(!e, n + ".connect", "QPs %u and %u connected: %s", s->a->qp_num,
	                s->b->qp_num, errno_name(e).c_str());
}

int StallRun::post(ibv_qp *qp, ibv_wr_opcode op, uint8_t *src, uint32_t lkey, uint8_t *dst,
                   uint32_t rkey)
{
	ibv_sge sge = {addr_of(src), kMsg, lkey};
	ibv_send_wr wr{}, *bad = nullptr;

	wr.wr_id = op;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = addr_of(dst);
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

bool StallRun::stall(Setup &s, long opened)
{
	ibv_sge rsge = {addr_of(plain_mem_.data()), kMsg, s.plain->lkey};
	ibv_recv_wr rwr{}, *rbad = nullptr;
	ibv_wc wc[4];

	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	/* A FUSE file's pages are not touched: the reads never return. */
	if (!file_)
		fill_pattern(odp_mem_.data(), kRegion, 1);
	if (!r_.check(hold_.set(), "stall.hold", "faults held by %s", hold_.what()))
		return false;
	int e = ibv_post_recv(s.b.get(), &rwr, &rbad);
	if (!e)
		e = post(s.a.get(), IBV_WR_SEND, odp_mem_.data(), s.odp->lkey, nullptr, 0);
	if (!e)
		e = post(s.b.get(), IBV_WR_RDMA_WRITE, plain_mem_.data() + kMsg, s.plain->lkey,
		         odp_mem_.data() + 2 * kMsg, s.odp->rkey);
	if (!r_.check(!e, "stall.post", "A's SEND from the ODP region, B's WRITE into it: %s",
	              errno_name(e).c_str()))
		return false;
	std::this_thread::sleep_for(std::chrono::seconds(1));
	int n = ibv_poll_cq(s.cq.get(), 4, wc);
	std::string got;
	for (int i = 0; i < n; i++)
		got += std::string(i ? ", " : ": ") + ibv_wc_status_str(wc[i].status);
	bool waits =
	    r_.check(n == 0, "stall.waits",
	             "nothing completes while the faults wait (%d completions%s)", n, got.c_str());
	long held = module_refs();
	r_.check(held > opened, "stall.module",
	         "the waiting faults hold sroce.ko: refcnt %ld with the device open, %ld now",
	         opened, held);
	return waits;
}

template <typename Fn> void StallRun::step(const char *what, Fn fn)
{
	Watchdog dog(hold_);
	auto t0 = Clock::now();
	int ret = fn();
	double s = std::chrono::duration<double>(Clock::now() - t0).count();

	dog.stop();
	r_.check(ret == 0 && s < kStepLimit && !dog.fired(), std::string("teardown.") + what,
	         "%s while the faults wait: %s in %.2f s%s (limit %.0f s)", what,
	         errno_name(ret).c_str(), s,
	         dog.fired() ? ", only after the watchdog let the faults go" : "", kStepLimit);
}

void StallRun::teardown(Setup &s, long base)
{
	step("destroy_qp_a", [&] { return ibv_destroy_qp(s.a.release()); });
	step("destroy_qp_b", [&] { return ibv_destroy_qp(s.b.release()); });
	step("dereg_odp", [&] { return ibv_dereg_mr(s.odp.release()); });
	step("dereg_plain", [&] { return ibv_dereg_mr(s.plain.release()); });
	step("destroy_cq", [&] { return ibv_destroy_cq(s.cq.release()); });
	step("dealloc_pd", [&] { return ibv_dealloc_pd(s.pd.release()); });
	step("close_device", [&] { return ibv_close_device(s.ctx.release()); });
	long held = module_refs();
	r_.check(held > base, "teardown.detached",
	         "the faults still wait, holding sroce.ko alone: refcnt %ld, %ld before the device "
	         "was opened",
	         held, base);

	hold_.clear();
	long now = held;
	for (int i = 0; i < 100 && now != base; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
		now = module_refs();
	}
	r_.check(now == base, "release", "%s let go: the faults end, refcnt %ld (want %ld)",
	         hold_.what(), now, base);
}

void StallRun::after()
{
	Mapping odp(kRegion, PROT_READ | PROT_WRITE), plain(kRegion, PROT_READ | PROT_WRITE);
	Setup s;
	ibv_wc wc[4];

	if (!build("after", &s, odp, plain))
		return;
	fill_pattern(odp.data(), kMsg, 7);
	fill_pattern(plain.data() + kMsg, kMsg, 8);
	ibv_sge rsge = {addr_of(plain.data()), kMsg, s.plain->lkey};
	ibv_recv_wr rwr{}, *rbad = nullptr;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	int e = ibv_post_recv(s.b.get(), &rwr, &rbad);
	if (!e)
		e = post(s.a.get(), IBV_WR_SEND, odp.data(), s.odp->lkey, nullptr, 0);
	if (!e)
		e = post(s.b.get(), IBV_WR_RDMA_WRITE, plain.data() + kMsg, s.plain->lkey,
		         odp.data() + 2 * kMsg, s.odp->rkey);
	int got = 0, bad = 0;
	if (!e) {
		got = poll_cq_for(s.cq.get(), wc, 3, 10000);
		for (int i = 0; i < got; i++)
			bad += wc[i].status != IBV_WC_SUCCESS;
	}
	r_.check(!e && got == 3 && !bad && same_pattern(plain.data(), kMsg, 7) &&
	             same_pattern(odp.data() + 2 * kMsg, kMsg, 8),
	         "after",
	         "a new pair: SEND from an ODP region and WRITE into one: post %s, %d of 3 "
	         "completions, %d failed, data %s/%s",
	         errno_name(e).c_str(), got, bad,
	         same_pattern(plain.data(), kMsg, 7) ? "ok" : "WRONG",
	         same_pattern(odp.data() + 2 * kMsg, kMsg, 8) ? "ok" : "WRONG");
}

} /* namespace */

int cmd_odpstall(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("odpstall");
	Hold hold;
	long pid = 0;

	if (!args.parse(argc, argv,
	                {{"knob", true}, {"file", true}, {"server-pid", true}, {"exit", false}},
	                &why))
		return usage_error("odpstall", why);
	if (args.num_positional() != 1 || args.has("knob") == args.has("file") ||
	    args.has("file") != args.has("server-pid"))
		return usage_error("odpstall",
		                   "want a device name and --knob PATH or --file F --server-pid P");
	if (!args.number("server-pid", 0, 0, 1 << 22, &pid, &why))
		return usage_error("odpstall", why);
	const char *dev = args.positional(0);
	const std::string file = args.value("file", "");
	hold.knob = args.value("knob", "");
	hold.server = pid_t(pid);
	long base = module_refs();
	if (!r.check(base >= 0, "setup", "sroce.ko's refcnt: %ld", base))
		return r.finish();

	ContextPtr probe = open_device(dev, &why);
	GidChoice gid;
	if (!probe || !pick_gid(probe.get(), -1, &gid, &why)) {
		r.fail("setup", "%s: %s", dev, why.c_str());
		return r.finish();
	}
	probe.reset();

	StallRun run(r, dev, gid, hold, file);
	Setup s;
	if (!run.prepare(&s) || !run.stall(s, module_refs())) {
		hold.clear();
		return r.finish();
	}
	if (args.has("exit")) {
		int rc = r.finish();

		std::printf("stalled\n");
		std::fflush(stdout);
		_exit(rc);
	}
	run.teardown(s, base);
	run.after();
	return r.finish();
}

} /* namespace vc */
