// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check isolation DEV [--gid-index I]
 *     [--publish FILE [--hold SECONDS]] [--foreign FILE]
 *
 * Protection domains and keys (IBA 10.6), on loopback RC QP pairs of one
 * device. Every case runs on a fresh pair whose requester and responder
 * are in PD A, issues one operation and checks its completion status, that
 * the requester QP went to ERR (and the responder too when the responder
 * refused the request), that the memory the key named (and, for a READ or
 * an atomic, the local buffer it would have landed in) holds its old bytes,
 * and that a fresh pair still moves a WRITE and a READ intact:
 *
 *   case                key used                          expected
 *   other_pd.*          rkey of an MR in PD B             IBV_WC_REM_ACCESS_ERR
 *   dereg.*             rkey of a deregistered MR         IBV_WC_REM_ACCESS_ERR
 *   mw_inval.*          type 2 window after LOCAL_INV     IBV_WC_REM_ACCESS_ERR
 *   mw_wrong_qp.read    type 2 window through a QP        IBV_WC_REM_ACCESS_ERR
 *                       it is not bound to
 *   mw_dealloc.write    type 1 window after dealloc       IBV_WC_REM_ACCESS_ERR
 *   guess.*             a valid rkey + 1, + 0x100, ...    IBV_WC_REM_ACCESS_ERR
 *   read_only.write     WRITE to an MR without            IBV_WC_REM_ACCESS_ERR
 *                       IBV_ACCESS_REMOTE_WRITE
 *   lkey_other_pd.*     local SGE with PD B's lkey        IBV_WC_LOC_PROT_ERR
 *   local_inv_mr        LOCAL_INV of an ibv_reg_mr key    IBV_WC_LOC_QP_OP_ERR, the
 *                                                         region still works
 *
 * (* = write, read, fetch_add, cmp_swp where it applies.) Control cases
 * show the same operations succeed with the right keys.
 *
 * Two processes (selftests/isolation.sh runs the second one as an
 * unprivileged user): --publish FILE registers an MR with every remote
 * right, fills it with a pattern, writes "addr rkey lkey length" to FILE
 * and holds it until FILE.done appears (at most --hold seconds), then
 * checks the pattern. --foreign FILE reads such a file and, besides its own
 * traffic, tries the other process's rkey (REM_ACCESS_ERR) and lkey
 * (LOC_PROT_ERR).
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace vc
{
namespace
{

constexpr size_t kRegion = 4096; /* bytes of every buffer */
constexpr uint32_t kMsg = 256;   /* bytes of a WRITE or READ */
constexpr int kTimeoutMs = 5000;
constexpr unsigned int kRemoteAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

enum class Op { write, read, fetch_add, cmp_swp };

const char *op_name(Op op)
{
	switch (op) {
	case Op::write:
		return "write";
	case Op::read:
		return "read";
	case Op::fetch_add:
		return "fetch_add";
	case Op::cmp_swp:
		return "cmp_swp";
	}
	return "?";
}

/* A buffer with a known pattern, to tell "untouched" from "written". */
struct Region {
	Mapping map{kRegion, PROT_READ | PROT_WRITE};
	uint8_t seed = 0;

	uint8_t *data() const { return map.data(); }
	uint64_t addr() const { return reinterpret_cast<uintptr_t>(map.data()); }
	void fill(uint8_t s)
	{
		seed = s;
		for (size_t i = 0; i < kRegion; i++)
			map.data()[i] = uint8_t(s + i * 7);
	}
	/* Offset of the first byte that differs from the pattern, or -1. */
	long changed() const
	{
		for (size_t i = 0; i < kRegion; i++)
			if (map.data()[i] != uint8_t(seed + i * 7))
				return long(i);
		return -1;
	}
};

/* The memory a remote operation points at. */
struct Target {
	uint64_t addr;
	uint32_t rkey;
	const Region *region; /* checked unchanged after a failure; may be null */
};

/* Where a READ or an atomic result lands (or a WRITE's source). */
struct Local {
	uint64_t addr;
	uint32_t lkey;
	Region *region;
};

struct Pair {
	CqPtr cq;
	QpPtr req, resp;
};

class IsolationRun
{
      public:
	IsolationRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("isolation")
	{
	}
	bool setup();
	void run_local_cases();
	void run_foreign(const char *file);

	int finish() { return r_.finish(); }

      private:
	bool make_pair(Pair *p, const std::string &name);
	/* Posts @op on @p and returns its completion status, or -1 for none. */
	int issue(Pair &p, Op op, const Target &t, const Local &l);
	void expect_state(ibv_qp *qp, ibv_qp_state want, const std::string &name);
	/* A failing operation on a fresh pair, with every check of the header. */
	void failing(const std::string &name, Op op, const Target &t, const Local &l,
	             ibv_wc_status want, Pair *use = nullptr);
	/* The same operation with valid keys succeeds (a control). */
	void succeeding(const std::string &name, Op op, const Target &t, const Local &l,
	                Pair *use = nullptr);
	/* Posts @wr on @qp and waits for its successful completion. */
	bool run_wr(ibv_qp *qp, ibv_cq *cq, ibv_send_wr &wr, const std::string &name,
	            const char *what);
	void mw2_case(Op op);
	void local_inv_mr();
	/* A fresh pair moves a WRITE and a READ intact. */
	void fresh_pair_works(const std::string &name);
	void mw_cases();
	void guess_cases();
	bool live_key(uint32_t key) const;

	Local local() { return {local_.addr(), local_mr_->lkey, &local_}; }
	Target target() { return {target_.addr(), target_mr_->rkey, &target_}; }

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	bool atomics_ = false;
	bool mw1_ = false, mw2_ = false;
	PdPtr pd_, other_pd_;
	Region local_, target_, other_, dead_, ro_, window_;
	MrPtr local_mr_, target_mr_, other_mr_, ro_mr_, window_mr_;
	uint32_t dead_rkey_ = 0;
	std::vector<uint32_t> keys_; /* every key alive in this process */
};

bool IsolationRun::setup()
{
	ibv_device_attr_ex attr{};

	if (ibv_query_device_ex(ctx_, nullptr, &attr) == 0) {
		atomics_ = attr.orig_attr.atomic_cap != IBV_ATOMIC_NONE;
		mw1_ = attr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW;
		mw2_ = attr.orig_attr.device_cap_flags &
		       (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	}
	pd_.reset(ibv_alloc_pd(ctx_));
	other_pd_.reset(ibv_alloc_pd(ctx_));
	if (!pd_ || !other_pd_ || !local_.map.ok() || !target_.map.ok() || !other_.map.ok() ||
	    !dead_.map.ok() || !ro_.map.ok() || !window_.map.ok())
		return r_.check(false, "setup", "two PDs and six buffers (%s)",
		                errno_name(null_errno()).c_str());
	local_.fill(0x10);
	target_.fill(0x20);
	other_.fill(0x30);
	dead_.fill(0x40);
	ro_.fill(0x50);
	window_.fill(0x60);
	local_mr_.reset(ibv_reg_mr(pd_.get(), local_.data(), kRegion, IBV_ACCESS_LOCAL_WRITE));
	target_mr_.reset(ibv_reg_mr(pd_.get(), target_.data(), kRegion, kRemoteAll));
	other_mr_.reset(ibv_reg_mr(other_pd_.get(), other_.data(), kRegion, kRemoteAll));
	ro_mr_.reset(ibv_reg_mr(pd_.get(), ro_.data(), kRegion,
	                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	window_mr_.reset(
	    ibv_reg_mr(pd_.get(), window_.data(), kRegion, kRemoteAll | IBV_ACCESS_MW_BIND));
	MrPtr dead(ibv_reg_mr(pd_.get(), dead_.data(), kRegion, kRemoteAll));
	if (!local_mr_ || !target_mr_ || !other_mr_ || !ro_mr_ || !window_mr_ || !dead)
		return r_.check(false, "setup", "MRs in PD A and PD B (%s)",
		                errno_name(null_errno()).c_str());
	dead_rkey_ = dead->rkey;
	if (!r_.expect_ok("setup.dereg", ibv_dereg_mr(dead.release()), "ibv_dereg_mr"))
		return false;
	for (const MrPtr *m : {&local_mr_, &target_mr_, &other_mr_, &ro_mr_, &window_mr_}) {
		keys_.push_back((*m)->lkey);
		keys_.push_back((*m)->rkey);
	}
	r_.info("keys: target rkey 0x%08x, PD B rkey 0x%08x, deregistered rkey 0x%08x",
	        target_mr_->rkey, other_mr_->rkey, dead_rkey_);
	return true;
}

bool IsolationRun::make_pair(Pair *p, const std::string &name)
{
	ibv_qp_init_attr ia{};
	const char *stage = "";
	int err;

	p->cq.reset(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	if (!p->cq)
		return r_.check(false, name + ".setup", "ibv_create_cq: %s",
		                errno_name(null_errno()).c_str());
	ia.send_cq = p->cq.get();
	ia.recv_cq = p->cq.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	p->req.reset(ibv_create_qp(pd_.get(), &ia));
	p->resp.reset(p->req ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	if (!p->resp)
		return r_.check(false, name + ".setup", "ibv_create_qp: %s",
		                errno_name(null_errno()).c_str());
	err = connect_rc(p->req.get(), gid_, p->resp->qp_num, kRemoteAll, &stage);
	if (!err)
		err = connect_rc(p->resp.get(), gid_, p->req->qp_num, kRemoteAll, &stage);
	if (err)
		return r_.check(false, name + ".setup", "connect, %s: %s", stage,
		                errno_name(err).c_str());
	return true;
}

int IsolationRun::issue(Pair &p, Op op, const Target &t, const Local &l)
{
	const bool atomic = op == Op::fetch_add || op == Op::cmp_swp;
	ibv_sge sge{l.addr, atomic ? 8u : kMsg, l.lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	ibv_wc wc{};

	wr.wr_id = 0x150;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case Op::write:
	case Op::read:
		wr.opcode = op == Op::write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = t.addr;
		wr.wr.rdma.rkey = t.rkey;
		break;
	case Op::fetch_add:
	case Op::cmp_swp:
		wr.opcode =
		    op == Op::fetch_add ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = t.addr;
		wr.wr.atomic.rkey = t.rkey;
		wr.wr.atomic.compare_add = op == Op::fetch_add ? 0x0101010101010101ull : 0;
		wr.wr.atomic.swap = 0xdeadbeefdeadbeefull;
		break;
	}
	if (int err = ibv_post_send(p.req.get(), &wr, &bad)) {
		r_.info("ibv_post_send %s: %s", op_name(op), errno_name(err).c_str());
		return -1;
	}
	if (poll_cq_for(p.cq.get(), &wc, 1, kTimeoutMs) != 1 || wc.wr_id != 0x150)
		return -1;
	return int(wc.status);
}

void IsolationRun::expect_state(ibv_qp *qp, ibv_qp_state want, const std::string &name)
{
	const int got = wait_qp_state(qp, want, 1000);

	r_.check(got == want, name, "QP %u in %s (%s)", qp->qp_num, qp_state_name(want),
	         qp_state_name(got));
}

void IsolationRun::failing(const std::string &name, Op op, const Target &t, const Local &l,
                           ibv_wc_status want, Pair *use)
{
	Pair fresh;
	Pair &p = use ? *use : fresh;

	if (!use && !make_pair(&p, name))
		return;
	const long local_before = l.region ? l.region->changed() : -1;
	const int got = issue(p, op, t, l);
	r_.check(got == int(want), name + ".status", "%s with key 0x%08x: %s (want %s)",
	         op_name(op), t.rkey,
	         got < 0 ? "no completion" : ibv_wc_status_str(ibv_wc_status(got)),
	         ibv_wc_status_str(want));
	expect_state(p.req.get(), IBV_QPS_ERR, name + ".req_state");
	/* The responder refused the request: a class C error moves it to ERR too. */
	if (want == IBV_WC_REM_ACCESS_ERR)
		expect_state(p.resp.get(), IBV_QPS_ERR, name + ".resp_state");
	if (t.region) {
		const long off = t.region->changed();
		r_.check(off < 0, name + ".target", "the memory key 0x%08x named is unchanged%s",
		         t.rkey,
		         off < 0 ? "" : (" (byte " + std::to_string(off) + " differs)").c_str());
	}
	if (op != Op::write && l.region) {
		const long off = l.region->changed();
		r_.check(off == local_before, name + ".local",
		         "the local buffer the %s would have filled is unchanged", op_name(op));
	}
	fresh_pair_works(name + ".fresh");
}

void IsolationRun::succeeding(const std::string &name, Op op, const Target &t, const Local &l,
                              Pair *use)
{
	Pair fresh;
	Pair &p = use ? *use : fresh;

	if (!use && !make_pair(&p, name))
		return;
	const int got = issue(p, op, t, l);
	r_.check(got == IBV_WC_SUCCESS, name, "%s with the right keys: %s", op_name(op),
	         got < 0 ? "no completion" : ibv_wc_status_str(ibv_wc_status(got)));
}

void IsolationRun::fresh_pair_works(const std::string &name)
{
	Pair p;

	if (!make_pair(&p, name))
		return;
	/* WRITE local[0, kMsg) to target[kMsg, 2 kMsg), READ it back to local[kMsg, ...). */
	for (uint32_t i = 0; i < kMsg; i++)
		local_.data()[i] = uint8_t(i * 11 + name.size());
	memset(local_.data() + kMsg, 0, kMsg);
	Target t{target_.addr() + kMsg, target_mr_->rkey, nullptr};
	Local src{local_.addr(), local_mr_->lkey, nullptr};
	Local dst{local_.addr() + kMsg, local_mr_->lkey, nullptr};
	const int w = issue(p, Op::write, t, src);
	const int rd = w == IBV_WC_SUCCESS ? issue(p, Op::read, t, dst) : -1;
	const bool ok = w == IBV_WC_SUCCESS && rd == IBV_WC_SUCCESS &&
	                memcmp(target_.data() + kMsg, local_.data(), kMsg) == 0 &&
	                memcmp(local_.data() + kMsg, local_.data(), kMsg) == 0;
	r_.check(ok, name, "a fresh QP pair: WRITE %s, READ %s, bytes %s",
	         w < 0 ? "none" : ibv_wc_status_str(ibv_wc_status(w)),
	         rd < 0 ? "none" : ibv_wc_status_str(ibv_wc_status(rd)), ok ? "intact" : "wrong");
	/* Restore the patterns the failing cases compare against. */
	local_.fill(local_.seed);
	target_.fill(target_.seed);
}

bool IsolationRun::live_key(uint32_t key) const
{
	for (uint32_t k : keys_)
		if (k == key)
			return true;
	return false;
}

void IsolationRun::guess_cases()
{
	static const struct {
		const char *name;
		int64_t delta;
		Op op;
	} guesses[] = {
	    {"guess.plus1", 1, Op::write},
	    {"guess.minus1", -1, Op::write},
	    {"guess.plus0x80", 0x80, Op::write},
	    {"guess.plus0x100", 0x100, Op::write},
	    {"guess.minus0x100", -0x100, Op::read},
	    {"guess.plus0x101", 0x101, Op::read},
	    {"guess.plus0x10000", 0x10000, Op::write},
	};
	const uint32_t base = target_mr_->rkey;

	for (const auto &g : guesses) {
		const uint32_t key = uint32_t(int64_t(base) + g.delta);

		if (live_key(key)) {
			/* Another of our regions has this key by chance (1 in 256). */
			r_.skip(g.name, "0x%08x is the key of another live region here", key);
			continue;
		}
		failing(g.name, g.op, {target_.addr(), key, &target_}, local(),
		        IBV_WC_REM_ACCESS_ERR);
	}
}

bool IsolationRun::run_wr(ibv_qp *qp, ibv_cq *cq, ibv_send_wr &wr, const std::string &name,
                          const char *what)
{
	ibv_send_wr *bad = nullptr;
	ibv_wc wc{};
	const int err = ibv_post_send(qp, &wr, &bad);
	const bool ok =
	    !err && poll_cq_for(cq, &wc, 1, kTimeoutMs) == 1 && wc.status == IBV_WC_SUCCESS;

	return r_.check(ok, name, "%s: %s", what,
	                err ? errno_name(err).c_str() : ibv_wc_status_str(wc.status));
}

/*
 * A type 2B window is bound to the QP that executes the bind, the one the
 * requests arrive at (the pair's responder): usable through that QP only,
 * and dead after a LOCAL_INV there.
 */
void IsolationRun::mw2_case(Op op)
{
	const std::string name = std::string("mw_inval.") + op_name(op);
	Pair p;
	MwPtr mw(ibv_alloc_mw(pd_.get(), IBV_MW_TYPE_2));

	if (!r_.check(mw != nullptr, name + ".alloc", "ibv_alloc_mw type 2 (%s)",
	              mw ? "ok" : errno_name(null_errno()).c_str()) ||
	    !make_pair(&p, name))
		return;
	const uint32_t rkey = ibv_inc_rkey(mw->rkey);
	const Target t{window_.addr(), rkey, &window_};
	ibv_send_wr wr{};
	wr.wr_id = 1;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw.get();
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = window_mr_.get();
	wr.bind_mw.bind_info.addr = window_.addr();
	wr.bind_mw.bind_info.length = kRegion;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (!run_wr(p.resp.get(), p.cq.get(), wr, name + ".bind",
	            "BIND_MW of a type 2 window on the responder QP"))
		return;
	keys_.push_back(rkey);
	succeeding(name + ".control", Op::read, t, local(), &p);
	local_.fill(local_.seed);
	if (op == Op::write)
		failing("mw_wrong_qp.read", Op::read, t, local(), IBV_WC_REM_ACCESS_ERR);
	wr = {};
	wr.wr_id = 2;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	if (!run_wr(p.resp.get(), p.cq.get(), wr, name + ".local_inv", "LOCAL_INV of the window"))
		return;
	failing(name, op, t, local(), IBV_WC_REM_ACCESS_ERR, &p);
}

/*
 * LOCAL_INV applies to fast-registration regions and windows (IBA 10.6.6);
 * a region from ibv_reg_mr keeps its key. rxe and sroce complete the WQE
 * with IBV_WC_LOC_QP_OP_ERR; the IBA's class is a memory management
 * operation error (IBV_WC_MW_BIND_ERR): either is accepted.
 */
void IsolationRun::local_inv_mr()
{
	Pair p;
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	ibv_wc wc{};

	if (!make_pair(&p, "local_inv_mr"))
		return;
	wr.wr_id = 7;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = target_mr_->rkey;
	const int err = ibv_post_send(p.req.get(), &wr, &bad);
	const int got = !err && poll_cq_for(p.cq.get(), &wc, 1, kTimeoutMs) == 1 ? wc.status : -1;
	r_.check(got == IBV_WC_LOC_QP_OP_ERR || got == IBV_WC_MW_BIND_ERR, "local_inv_mr.status",
	         "LOCAL_INV of an ibv_reg_mr region's key: %s",
	         err       ? errno_name(err).c_str()
	         : got < 0 ? "no completion"
	                   : ibv_wc_status_str(ibv_wc_status(got)));
	expect_state(p.req.get(), IBV_QPS_ERR, "local_inv_mr.req_state");
	/* The region still answers to its key. */
	fresh_pair_works("local_inv_mr.still_valid");
}

void IsolationRun::mw_cases()
{
	if (!mw2_) {
		r_.skip("mw_inval", "the device has no type 2 memory windows");
	} else {
		mw2_case(Op::write);
		mw2_case(Op::read);
	}
	if (!mw1_) {
		r_.skip("mw_dealloc", "the device has no type 1 memory windows");
		return;
	}
	Pair p;
	MwPtr mw(ibv_alloc_mw(pd_.get(), IBV_MW_TYPE_1));
	if (!r_.check(mw != nullptr, "mw_dealloc.alloc", "ibv_alloc_mw type 1 (%s)",
	              mw ? "ok" : errno_name(null_errno()).c_str()))
		return;
	if (!make_pair(&p, "mw_dealloc"))
		return;
	ibv_mw_bind bind{};
	ibv_wc wc{};
	bind.wr_id = 3;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = window_mr_.get();
	bind.bind_info.addr = window_.addr();
	bind.bind_info.length = kRegion;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	int err = ibv_bind_mw(p.req.get(), mw.get(), &bind);
	bool ok =
	    !err && poll_cq_for(p.cq.get(), &wc, 1, kTimeoutMs) == 1 && wc.status == IBV_WC_SUCCESS;
	if (!r_.check(ok, "mw_dealloc.bind", "ibv_bind_mw of a type 1 window: %s",
	              err ? errno_name(err).c_str() : ibv_wc_status_str(wc.status)))
		return;
	const uint32_t rkey = mw->rkey;
	keys_.push_back(rkey);
	succeeding("mw_dealloc.control", Op::read, {window_.addr(), rkey, &window_}, local());
	if (!r_.expect_ok("mw_dealloc.dealloc", ibv_dealloc_mw(mw.release()), "ibv_dealloc_mw"))
		return;
	local_.fill(local_.seed);
	failing("mw_dealloc.write", Op::write, {window_.addr(), rkey, &window_}, local(),
	        IBV_WC_REM_ACCESS_ERR);
}

void IsolationRun::run_local_cases()
{
	static const Op all_ops[] = {Op::write, Op::read, Op::fetch_add, Op::cmp_swp};

	/* Controls: the right keys work, so the failures below mean something. */
	for (Op op : all_ops) {
		if (!atomics_ && (op == Op::fetch_add || op == Op::cmp_swp))
			continue;
		succeeding(std::string("control.") + op_name(op), op, target(), local());
		target_.fill(target_.seed);
		local_.fill(local_.seed);
	}
	if (!atomics_)
		r_.skip("atomics", "the device reports IBV_ATOMIC_NONE");
	for (Op op : all_ops) {
		if (!atomics_ && (op == Op::fetch_add || op == Op::cmp_swp))
			continue;
		failing(std::string("other_pd.") + op_name(op), op,
		        {other_.addr(), other_mr_->rkey, &other_}, local(), IBV_WC_REM_ACCESS_ERR);
	}
	failing("dereg.write", Op::write, {dead_.addr(), dead_rkey_, &dead_}, local(),
	        IBV_WC_REM_ACCESS_ERR);
	failing("dereg.read", Op::read, {dead_.addr(), dead_rkey_, &dead_}, local(),
	        IBV_WC_REM_ACCESS_ERR);
	if (atomics_)
		failing("dereg.fetch_add", Op::fetch_add, {dead_.addr(), dead_rkey_, &dead_},
		        local(), IBV_WC_REM_ACCESS_ERR);
	failing("read_only.write", Op::write, {ro_.addr(), ro_mr_->rkey, &ro_}, local(),
	        IBV_WC_REM_ACCESS_ERR);
	mw_cases();
	local_inv_mr();
	guess_cases();
	/* A local SGE with PD B's lkey: the WRITE's source, the READ's sink. */
	failing("lkey_other_pd.write", Op::write, target(),
	        {other_.addr(), other_mr_->lkey, &other_}, IBV_WC_LOC_PROT_ERR);
	failing("lkey_other_pd.read", Op::read, target(), {other_.addr(), other_mr_->lkey, &other_},
	        IBV_WC_LOC_PROT_ERR);
	r_.check(other_.changed() < 0, "lkey_other_pd.memory",
	         "PD B's buffer is unchanged after a READ aimed at it");
}

/* "addr rkey lkey length" of another process's MR. */
struct Published {
	uint64_t addr = 0;
	uint32_t rkey = 0, lkey = 0, length = 0;
};

bool read_published(const char *file, Published *p)
{
	std::ifstream in(file);

	return bool(in >> std::hex >> p->addr >> p->rkey >> p->lkey >> p->length);
}

void IsolationRun::run_foreign(const char *file)
{
	static const Op all_ops[] = {Op::write, Op::read, Op::fetch_add, Op::cmp_swp};
	Published pub;

	r_.info("running as uid %u, euid %u", unsigned(getuid()), unsigned(geteuid()));
	if (!r_.check(read_published(file, &pub), "foreign.file", "%s names another process's MR",
	              file))
		return;
	r_.info("the other process's MR: addr 0x%" PRIx64 " rkey 0x%08x lkey 0x%08x", pub.addr,
	        pub.rkey, pub.lkey);
	fresh_pair_works("foreign.own_traffic");
	for (Op op : all_ops) {
		if (!atomics_ && (op == Op::fetch_add || op == Op::cmp_swp))
			continue;
		failing(std::string("foreign.") + op_name(op), op, {pub.addr, pub.rkey, nullptr},
		        local(), IBV_WC_REM_ACCESS_ERR);
	}
	/* Our READ landing in its memory, named by its lkey. */
	failing("foreign.lkey_read", Op::read, target(), {pub.addr, pub.lkey, nullptr},
	        IBV_WC_LOC_PROT_ERR);
}

/* The publishing process: an MR that others must not reach. */
int publish(ibv_context *ctx, const char *file, long hold)
{
	Report r("isolation");
	Region region;
	PdPtr pd(ibv_alloc_pd(ctx));
	MrPtr mr(pd && region.map.ok() ? ibv_reg_mr(pd.get(), region.data(), kRegion, kRemoteAll)
	                               : nullptr);

	if (!r.check(mr != nullptr, "publish.setup", "PD and an MR with every remote right (%s)",
	             mr ? "ok" : errno_name(null_errno()).c_str()))
		return r.finish();
	region.fill(0x77);
	const std::string tmp = std::string(file) + ".tmp";
	FILE *f = std::fopen(tmp.c_str(), "w");
	if (!f ||
	    std::fprintf(f, "%" PRIx64 " %x %x %zx\n", region.addr(), mr->rkey, mr->lkey, kRegion) <
	        0 ||
	    std::fclose(f) || chmod(tmp.c_str(), 0644) || rename(tmp.c_str(), file)) {
		r.fail("publish.file", "writing %s: %s", file, errno_name(errno).c_str());
		return r.finish();
	}
	r.info("published addr 0x%" PRIx64 " rkey 0x%08x lkey 0x%08x in %s", region.addr(),
	       mr->rkey, mr->lkey, file);
	const std::string done = std::string(file) + ".done";
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(hold);
	bool finished = false;
	while (!(finished = access(done.c_str(), F_OK) == 0) &&
	       std::chrono::steady_clock::now() < end)
		usleep(100000);
	r.check(finished, "publish.done", "the other process finished within %ld s", hold);
	const long off = region.changed();
	r.check(off < 0, "publish.memory", "the published MR's memory is unchanged%s",
	        off < 0 ? "" : (" (byte " + std::to_string(off) + " differs)").c_str());
	return r.finish();
}

} /* namespace */

int cmd_isolation(int argc, char **argv)
{
	Args args;
	std::string why;
	long gid_index, hold;

	if (!args.parse(argc, argv,
	                {{"gid-index", true}, {"publish", true}, {"hold", true}, {"foreign", true}},
	                &why))
		return usage_error("isolation", why);
	if (args.num_positional() != 1)
		return usage_error("isolation", "expects one device name");
	if (!args.number("gid-index", -1, -1, 65535, &gid_index, &why) ||
	    !args.number("hold", 60, 1, 3600, &hold, &why))
		return usage_error("isolation", why);
	if (args.has("publish") && args.has("foreign"))
		return usage_error("isolation", "--publish and --foreign exclude each other");
	ContextPtr ctx = open_device(args.positional(0), &why);
	GidChoice gid;
	if (!ctx || !pick_gid(ctx.get(), int(gid_index), &gid, &why)) {
		Report r("isolation");
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	if (args.has("publish"))
		return publish(ctx.get(), args.value("publish"), hold);
	IsolationRun run(ctx.get(), gid);
	if (run.setup()) {
		if (args.has("foreign"))
			run.run_foreign(args.value("foreign"));
		else
			run.run_local_cases();
	}
	return run.finish();
}

} /* namespace vc */
