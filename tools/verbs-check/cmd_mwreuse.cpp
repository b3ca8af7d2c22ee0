// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check mwreuse DEV --qpn-knob PATH: a type 2 memory window
 * bound to a QP that is destroyed does not open to the QP that gets its
 * number next. QP numbers are reused once their 24-bit space wraps; PATH
 * is sroce's debugfs knob fault/qpn_next, which hands a number out again
 * at once. Loopback, RC, one window of PD 1 over a 4 KiB region:
 *
 *   bound     QP A (PD 1) binds the window; QP B, connected to A, writes
 *             256 bytes through it: success, the bytes landed
 *   other_pd  A and B destroyed; a QP of PD 2 gets A's number, its peer
 *             writes with the window's key: IBV_WC_REM_ACCESS_ERR, nothing
 *             landed (IBA o10-37: the PD and the QP must match)
 *   same_pd   the same with a QP of PD 1 that gets A's number: refused
 *             too (the window is bound to the QP A was, not to a number)
 *   rebound   a new pair of PD 1: LOCAL_INV of the window succeeds, a new
 *             bind too, and a write through it lands
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kBuf = 4096;
constexpr uint32_t kWrite = 256;
constexpr unsigned kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

struct Pair {
	QpPtr a, b;
};

class MwRun
{
      public:
	MwRun(Report &r, ibv_context *ctx, const GidChoice &gid, std::string knob)
	    : r_(r), ctx_(ctx), gid_(gid), knob_(std::move(knob))
	{
	}
	bool setup();
	void run();

      private:
	/* A connected pair of @pd; A gets number @qpn if non-zero (the knob). */
	bool pair(const char *name, ibv_pd *pd, uint32_t qpn, Pair *p);
	/* B writes kWrite bytes of pattern @seed at the window; the status. */
	int write(Pair &p, ibv_mr *src, uint32_t seed);
	int post_wait(ibv_qp *qp, ibv_send_wr &wr);

	Report &r_;
	ibv_context *ctx_;
	GidChoice gid_;
	std::string knob_;
	PdPtr pd1_, pd2_;
	CqPtr cq_;
	std::vector<uint8_t> dst_ = std::vector<uint8_t>(kBuf), src_ = std::vector<uint8_t>(kBuf);
	MrPtr dst_mr_, src1_, src2_;
	MwPtr mw_;
	uint32_t rkey_ = 0;
};

bool MwRun::setup()
{
	pd1_.reset(ibv_alloc_pd(ctx_));
	pd2_.reset(ibv_alloc_pd(ctx_));
	cq_.reset(ibv_create_cq(ctx_, 64, nullptr, nullptr, 0));
	if (!pd1_ || !pd2_ || !cq_)
		return r_.check(false, "setup", "PDs, CQ: %s", errno_name(null_errno()).c_str());
	dst_mr_.reset(ibv_reg_mr(pd1_.get(), dst_.data(), kBuf, kAccess | IBV_ACCESS_MW_BIND));
	src1_.reset(ibv_reg_mr(pd1_.get(), src_.data(), kBuf, IBV_ACCESS_LOCAL_WRITE));
	src2_.reset(ibv_reg_mr(pd2_.get(), src_.data(), kBuf, IBV_ACCESS_LOCAL_WRITE));
	mw_.reset(ibv_alloc_mw(pd1_.get(), IBV_MW_TYPE_2));
	if (!dst_mr_ || !src1_ || !src2_ || !mw_)
		return r_.check(false, "setup", "regions, type 2 window: %s",
		                errno_name(null_errno()).c_str());
	return true;
}

bool MwRun::pair(const char *name, ibv_pd *pd, uint32_t qpn, Pair *p)
{
	if (qpn) {
		std::ofstream k(knob_);
		k << qpn << '\n';
		if (!k.flush())
			return r_.check(false, name, "cannot write %u into %s", qpn, knob_.c_str());
	}
	ibv_qp_init_attr ia = rc_qp_init(cq_.get(), 8, 8);
	p->a.reset(ibv_create_qp(pd, &ia));
	p->b.reset(p->a ? ibv_create_qp(pd, &ia) : nullptr);
	if (!p->b)
		return r_.check(false, name, "QPs: %s", errno_name(null_errno()).c_str());
	if (qpn && p->a->qp_num != qpn)
		return r_.check(false, name, "the knob gave QP number %u, not %u", p->a->qp_num,
		                qpn);
	int e = connect_rc(p->a.get(), gid_, p->b->qp_num, kAccess);
	if (!e)
		e = connect_rc(p->b.get(), gid_, p->a->qp_num, kAccess);
	return r_.check(!e, std::string(name) + ".connect", "QPs %u and %u connected: %s",
	                p->a->qp_num, p->b->qp_num, errno_name(e).c_str());
}

int MwRun::post_wait(ibv_qp *qp, ibv_send_wr &wr)
{
	ibv_send_wr *bad = nullptr;
	ibv_wc wc{};

	if (int e = ibv_post_send(qp, &wr, &bad))
		return -e;
	if (poll_cq_for(cq_.get(), &wc, 1, 5000) != 1)
		return -ETIMEDOUT;
	return wc.status;
}

int MwRun::write(Pair &p, ibv_mr *src, uint32_t seed)
{
	ibv_sge sge = {addr_of(src_.data()), kWrite, src->lkey};
	ibv_send_wr wr{};

	fill_pattern(src_.data(), kWrite, seed);
	std::memset(dst_.data(), 0, kBuf);
	wr.wr_id = seed;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = addr_of(dst_.data());
	wr.wr.rdma.rkey = rkey_;
	return post_wait(p.b.get(), wr);
}

bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

const char *status_name(int st)
{
	return st < 0 ? "post or poll failed" : ibv_wc_status_str(ibv_wc_status(st));
}

void MwRun::run()
{
	Pair p;

	if (!pair("bound", pd1_.get(), 0, &p))
		return;
	rkey_ = ibv_inc_rkey(mw_->rkey);
	ibv_send_wr bind = bind_mw_wr(1, mw_.get(), rkey_, dst_mr_.get(), addr_of(dst_.data()),
	                              kBuf, IBV_ACCESS_REMOTE_WRITE);
	int st = post_wait(p.a.get(), bind);
	if (!r_.check(st == IBV_WC_SUCCESS, "bound.bind", "QP %u binds the window: %s", p.a->qp_num,
	              status_name(st)))
		return;
	st = write(p, src1_.get(), 1);
	r_.check(st == IBV_WC_SUCCESS && same_pattern(dst_.data(), kWrite, 1), "bound",
	         "a write through the window to its QP: %s, data %s", status_name(st),
	         same_pattern(dst_.data(), kWrite, 1) ? "landed" : "wrong");
	const uint32_t qpn = p.a->qp_num;
	p = Pair{};

	const struct {
		const char *name;
		ibv_pd *pd;
		ibv_mr *src;
	} reuse[] = {{"other_pd", pd2_.get(), src2_.get()}, {"same_pd", pd1_.get(), src1_.get()}};
	for (const auto &c : reuse) {
		if (!pair(c.name, c.pd, qpn, &p))
			return;
		st = write(p, c.src, 2);
		r_.check(st == IBV_WC_REM_ACCESS_ERR && all_zero(dst_.data(), kBuf), c.name,
		         "QP %u (a new QP, its number reused) writes through the window: %s (want "
		         "remote access error), target %s",
		         qpn, status_name(st),
		         all_zero(dst_.data(), kBuf) ? "untouched" : "WRITTEN");
		p = Pair{};
	}

	if (!pair("rebound", pd1_.get(), 0, &p))
		return;
	ibv_send_wr inv{};
	inv.wr_id = 3;
	inv.opcode = IBV_WR_LOCAL_INV;
	inv.send_flags = IBV_SEND_SIGNALED;
	inv.invalidate_rkey = rkey_;
	st = post_wait(p.a.get(), inv);
	r_.check(st == IBV_WC_SUCCESS, "rebound.invalidate", "LOCAL_INV of the window: %s",
	         status_name(st));
	rkey_ = ibv_inc_rkey(rkey_);
	bind = bind_mw_wr(4, mw_.get(), rkey_, dst_mr_.get(), addr_of(dst_.data()), kBuf,
	                  IBV_ACCESS_REMOTE_WRITE);
	st = post_wait(p.a.get(), bind);
	r_.check(st == IBV_WC_SUCCESS, "rebound.bind", "a new bind to QP %u: %s", p.a->qp_num,
	         status_name(st));
	st = write(p, src1_.get(), 5);
	r_.check(st == IBV_WC_SUCCESS && same_pattern(dst_.data(), kWrite, 5), "rebound",
	         "a write through the rebound window: %s, data %s", status_name(st),
	         same_pattern(dst_.data(), kWrite, 5) ? "landed" : "wrong");
}

} /* namespace */

int cmd_mwreuse(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("mwreuse");
	GidChoice gid;

	if (!args.parse(argc, argv, {{"qpn-knob", true}}, &why))
		return usage_error("mwreuse", why);
	if (args.num_positional() != 1 || !args.has("qpn-knob"))
		return usage_error("mwreuse", "want a device name and --qpn-knob PATH");
	ContextPtr ctx = open_device(args.positional(0), &why);
	if (!ctx || !pick_gid(ctx.get(), -1, &gid, &why)) {
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	MwRun run(r, ctx.get(), gid, args.value("qpn-knob"));
	if (run.setup())
		run.run();
	return r.finish();
}

} /* namespace vc */
