// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check xrc DEV [--gid-index I]: XRC (extended reliable
 * connected transport, IBA A14) on one device: an XRC initiator QP sends
 * to an XRC target QP, whose requests name an XRC SRQ of its domain.
 * Every byte that moves is checked.
 *
 *   - IBV_DEVICE_XRC is advertised; ibv_get_srq_num of an XRC SRQ gives
 *     its number, of a basic SRQ EINVAL; an XRC initiator has no receive
 *     queue (ibv_post_recv fails);
 *   - SENDs to two XRC SRQs through one initiator/target pair: each lands
 *     in a receive of the SRQ it names and completes on that SRQ's CQ,
 *     with the target's QP number; a 64 KiB SEND too (many packets);
 *   - RDMA WRITE, RDMA READ, fetch-and-add and compare-and-swap through
 *     the pair, keys of the named SRQ's PD; the 64 KiB WRITE and READ are
 *     cut to the pair's path MTU (1024), not the port's (tx_packets of
 *     rdma statistic);
 *   - ibv_open_qp opens the target by number in its domain;
 *   - refused, each on a fresh pair: an rkey of another PD than the named
 *     SRQ's (IBV_WC_REM_ACCESS_ERR), an SRQ of another XRC domain and an
 *     SRQ number that does not exist (IBV_WC_REM_INV_REQ_ERR).
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

/*
 * libibverbs' private command wrappers (IBVERBS_PRIVATE_34): the write()
 * commands themselves, without the provider, as a hostile process issues
 * them.
 */
extern "C" int ibv_cmd_post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
extern "C" int ibv_cmd_post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kMsg = 64 * 1024;
constexpr int kTimeoutMs = 20000;
constexpr unsigned kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                             IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

struct XrcdDeleter {
	void operator()(ibv_xrcd *x) const noexcept
	{
		if (int ret = ibv_close_xrcd(x))
			destroy_logged(ret, "XRC domain");
	}
};
using XrcdPtr = std::unique_ptr<ibv_xrcd, XrcdDeleter>;

XrcdPtr open_xrcd(ibv_context *ctx)
{
	ibv_xrcd_init_attr a{};

	a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	a.fd = -1; /* a domain of its own, shared with no file */
	a.oflags = O_CREAT;
	return XrcdPtr(ibv_open_xrcd(ctx, &a));
}

/* An initiator (sends) and a target (receives into SRQs) that talk. */
struct Pair {
	QpPtr ini, tgt;
};

class XrcRun
{
      public:
	XrcRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("xrc") {}
	int run();

      private:
	SrqPtr xrc_srq(ibv_xrcd *xrcd, ibv_pd *pd, ibv_cq *cq);
	bool make_pair(ibv_xrcd *xrcd, Pair *p);
	bool post_recv(ibv_srq *srq, uint8_t *buf, uint32_t len);
	int post(ibv_qp *ini, ibv_wr_opcode opc, uint32_t srqn, uint64_t laddr, uint32_t len,
	         uint32_t lkey, uint64_t raddr = 0, uint32_t rkey = 0, uint64_t add = 0,
	         uint64_t swap = 0);
	/* The one completion due on @cq; its status, or -1 if none came. */
	int one(ibv_cq *cq, ibv_wc *wc);
	void sends(Pair &p);
	void memory(Pair &p);
	void refused(uint32_t foreign_srqn);
	void hostile(Pair &p);
	void srq_gone();

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	PdPtr pd_, pd2_;
	CqPtr scq_, cqa_, cqb_;
	XrcdPtr xrcd_, xrcd2_;
	SrqPtr srqa_, srqb_;
	uint32_t srqna_ = 0, srqnb_ = 0;
	std::vector<uint8_t> buf_;
	MrPtr mr_, mr2_;
};

SrqPtr XrcRun::xrc_srq(ibv_xrcd *xrcd, ibv_pd *pd, ibv_cq *cq)
{
	ibv_srq_init_attr_ex a{};

	a.attr.max_wr = 16;
	a.attr.max_sge = 1;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
	              IBV_SRQ_INIT_ATTR_CQ;
	a.srq_type = IBV_SRQT_XRC;
	a.pd = pd;
	a.xrcd = xrcd;
	a.cq = cq;
	return SrqPtr(ibv_create_srq_ex(ctx_, &a));
}

bool XrcRun::make_pair(ibv_xrcd *xrcd, Pair *p)
{
	ibv_qp_init_attr_ex ia{};

	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ia.xrcd = xrcd;
	p->tgt.reset(ibv_create_qp_ex(ctx_, &ia));
	ia = {};
	ia.qp_type = IBV_QPT_XRC_SEND;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = pd_.get();
	ia.send_cq = scq_.get();
	ia.cap.max_send_wr = 8;
	ia.cap.max_send_sge = 1;
	p->ini.reset(p->tgt ? ibv_create_qp_ex(ctx_, &ia) : nullptr);
	if (!p->ini)
		return false;
	const QpTransition ti = to_init(IBV_QPT_XRC_RECV, kAccess),
	                   tr = to_rtr(IBV_QPT_XRC_RECV, gid_, p->ini->qp_num);
	QpTransition ts = to_rts(IBV_QPT_XRC_RECV);
	const QpTransition ii = to_init(IBV_QPT_XRC_SEND, 0),
	                   ir = to_rtr(IBV_QPT_XRC_SEND, gid_, p->tgt->qp_num);
	QpTransition is = to_rts(IBV_QPT_XRC_SEND);
	/* Each side's send PSN is what the other's to_rtr() expects. */
	ts.attr.sq_psn = kRqPsn;
	is.attr.sq_psn = kRqPsn;
	return !ibv_modify_qp(p->tgt.get(), const_cast<ibv_qp_attr *>(&ti.attr), ti.mask) &&
	       !ibv_modify_qp(p->tgt.get(), const_cast<ibv_qp_attr *>(&tr.attr), tr.mask) &&
	       !ibv_modify_qp(p->tgt.get(), &ts.attr, ts.mask) &&
	       !ibv_modify_qp(p->ini.get(), const_cast<ibv_qp_attr *>(&ii.attr), ii.mask) &&
	       !ibv_modify_qp(p->ini.get(), const_cast<ibv_qp_attr *>(&ir.attr), ir.mask) &&
	       !ibv_modify_qp(p->ini.get(), &is.attr, is.mask);
}

bool XrcRun::post_recv(ibv_srq *srq, uint8_t *buf, uint32_t len)
{
	ibv_sge s{addr_of(buf), len, mr_->lkey};
	ibv_recv_wr w{}, *bad = nullptr;

	w.wr_id = addr_of(buf);
	w.sg_list = &s;
	w.num_sge = 1;
	return !ibv_post_srq_recv(srq, &w, &bad);
}

int XrcRun::post(ibv_qp *ini, ibv_wr_opcode opc, uint32_t srqn, uint64_t laddr, uint32_t len,
                 uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add, uint64_t swap)
{
	ibv_sge s{laddr, len, lkey};
	ibv_send_wr w{}, *bad = nullptr;

	w.wr_id = opc;
	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = opc;
	w.send_flags = IBV_SEND_SIGNALED;
	w.qp_type.xrc.remote_srqn = srqn;
	if (opc == IBV_WR_ATOMIC_FETCH_AND_ADD || opc == IBV_WR_ATOMIC_CMP_AND_SWP) {
		w.wr.atomic.remote_addr = raddr;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = add;
		w.wr.atomic.swap = swap;
	} else {
		w.wr.rdma.remote_addr = raddr;
		w.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(ini, &w, &bad);
}

int XrcRun::one(ibv_cq *cq, ibv_wc *wc)
{
	return poll_cq_for(cq, wc, 1, kTimeoutMs) == 1 ? int(wc->status) : -1;
}

void XrcRun::sends(Pair &p)
{
	uint8_t *src = buf_.data(), *ra = src + kMsg, *rb = src + 2 * kMsg;
	const uint32_t tgtqpn = p.tgt->qp_num;
	ibv_wc sw{}, rw{};

	struct Case {
		const char *name;
		ibv_srq *srq;
		uint32_t srqn;
		ibv_cq *cq, *other;
		uint8_t *dst;
		uint32_t len;
	} cases[] = {
	    {"send.srq_a", srqa_.get(), srqna_, cqa_.get(), cqb_.get(), ra, 100},
	    {"send.srq_b", srqb_.get(), srqnb_, cqb_.get(), cqa_.get(), rb, 4000},
	    {"send.long", srqa_.get(), srqna_, cqa_.get(), cqb_.get(), ra, kMsg},
	};
	uint32_t seed = 1;
	for (const Case &c : cases) {
		fill_pattern(src, c.len, seed);
		memset(c.dst, 0, kMsg);
		bool ok = post_recv(c.srq, c.dst, kMsg) &&
		          !post(p.ini.get(), IBV_WR_SEND, c.srqn, addr_of(src), c.len, mr_->lkey) &&
		          one(scq_.get(), &sw) == IBV_WC_SUCCESS &&
		          one(c.cq, &rw) == IBV_WC_SUCCESS;
		ibv_wc stray;
		bool elsewhere = ibv_poll_cq(c.other, 1, &stray) != 0;
		r_.check(ok && !elsewhere && rw.qp_num == tgtqpn && rw.byte_len == c.len &&
		             rw.wr_id == addr_of(c.dst) && same_pattern(c.dst, c.len, seed),
		         c.name,
		         "SEND of %u bytes to XRC SRQ %u: its CQ (%s), qp_num %u (target %u), "
		         "%u bytes",
		         c.len, c.srqn, elsewhere ? "and the other CQ too" : "only", rw.qp_num,
		         tgtqpn, rw.byte_len);
		seed++;
	}
}

/*
 * Counter @name of port 1 of @dev as `rdma statistic show link` gives it:
 * the device's own count plus that of every counter QPs are bound to
 * (hw_counters in sysfs has the first only), or -1.
 */
long link_counter(const std::string &dev, const char *name)
{
	const std::string cmd = "rdma statistic show link " + dev + "/1 2>/dev/null";
	FILE *f = popen(cmd.c_str(), "r");
	char word[128];
	bool next = false;
	long v = -1;

	if (!f)
		return -1;
	while (std::fscanf(f, "%127s", word) == 1) {
		if (next) {
			v = std::strtol(word, nullptr, 10);
			break;
		}
		next = std::strcmp(word, name) == 0;
	}
	pclose(f);
	return v;
}

void XrcRun::memory(Pair &p)
{
	uint8_t *src = buf_.data(), *dst = src + 3 * kMsg;
	ibv_wc w{};

	fill_pattern(src, kMsg, 10);
	memset(dst, 0, kMsg);
	/*
	 * The pair's path MTU is 1024 (to_rtr()), below the port's: a
	 * connection's packets are cut to its path MTU, which both ends
	 * agreed on, whatever the port's MTU (RC, UC and XRC alike). The
	 * port's transmit counter sees the WRITE's requests and the READ's
	 * responses (and ACKs): at least 64 of each.
	 */
	const std::string dev = ibv_get_device_name(ctx_->device);
	const long tx0 = link_counter(dev, "tx_packets");
	bool ok = !post(p.ini.get(), IBV_WR_RDMA_WRITE, srqna_, addr_of(src), kMsg, mr_->lkey,
	                addr_of(dst), mr_->rkey) &&
	          one(scq_.get(), &w) == IBV_WC_SUCCESS && same_pattern(dst, kMsg, 10);
	r_.check(ok, "write", "RDMA WRITE of 64 KiB through XRC, a key of the SRQ's PD");
	memset(src, 0, kMsg);
	ok = !post(p.ini.get(), IBV_WR_RDMA_READ, srqna_, addr_of(src), kMsg, mr_->lkey,
	           addr_of(dst), mr_->rkey) &&
	     one(scq_.get(), &w) == IBV_WC_SUCCESS && same_pattern(src, kMsg, 10);
	r_.check(ok, "read", "RDMA READ of 64 KiB through XRC");
	const long tx1 = link_counter(dev, "tx_packets");
	r_.check(tx0 >= 0 && tx1 - tx0 >= 2 * long(kMsg / 1024), "path_mtu",
	         "the 64 KiB WRITE and READ took %ld packets (%s tx_packets %ld -> %ld; want at "
	         "least 128: path MTU 1024)",
	         tx1 - tx0, dev.c_str(), tx0, tx1);

	uint64_t *word = reinterpret_cast<uint64_t *>(dst + 64);
	uint64_t *res = reinterpret_cast<uint64_t *>(src + 128);
	*word = 40;
	*res = 0;
	ok = !post(p.ini.get(), IBV_WR_ATOMIC_FETCH_AND_ADD, srqnb_, addr_of(res), 8, mr_->lkey,
	           addr_of(word), mr_->rkey, 2) &&
	     one(scq_.get(), &w) == IBV_WC_SUCCESS && *res == 40 && *word == 42;
	r_.check(ok, "fetch_add", "fetch-and-add 2 through XRC: %" PRIu64 " -> %" PRIu64, *res,
	         *word);
	ok = !post(p.ini.get(), IBV_WR_ATOMIC_CMP_AND_SWP, srqnb_, addr_of(res), 8, mr_->lkey,
	           addr_of(word), mr_->rkey, 42, 7) &&
	     one(scq_.get(), &w) == IBV_WC_SUCCESS && *res == 42 && *word == 7;
	r_.check(ok, "cmp_swap", "compare-and-swap 42 -> 7 through XRC: %" PRIu64 " -> %" PRIu64,
	         *res, *word);
}

void XrcRun::refused(uint32_t foreign_srqn)
{
	uint8_t *src = buf_.data(), *dst = src + 3 * kMsg;
	struct Case {
		const char *name, *what;
		ibv_wr_opcode opc;
		uint32_t srqn, rkey;
		ibv_wc_status want;
	} cases[] = {
	    {"refused.other_pd", "RDMA WRITE with an rkey of another PD than the SRQ's",
	     IBV_WR_RDMA_WRITE, srqna_, mr2_->rkey, IBV_WC_REM_ACCESS_ERR},
	    {"refused.other_xrcd", "SEND to an XRC SRQ of another XRC domain", IBV_WR_SEND,
	     foreign_srqn, 0, IBV_WC_REM_INV_REQ_ERR},
	    {"refused.no_srq", "SEND to an SRQ number that does not exist", IBV_WR_SEND, 0xfffff0,
	     0, IBV_WC_REM_INV_REQ_ERR},
	};
	for (const Case &c : cases) {
		Pair p;
		ibv_wc w{};
		int st =
		    make_pair(xrcd_.get(), &p) && !post(p.ini.get(), c.opc, c.srqn, addr_of(src),
		                                        64, mr_->lkey, addr_of(dst), c.rkey)
		        ? one(scq_.get(), &w)
		        : -2;
		r_.check(st == int(c.want), c.name, "%s: %s, want %s", c.what,
		         st >= 0    ? ibv_wc_status_str(ibv_wc_status(st))
		         : st == -1 ? "no completion"
		                    : "setup failed",
		         ibv_wc_status_str(c.want));
	}
}

/*
 * What a hostile process can try on an XRC target, which ib_core creates
 * as a kernel object: a receive of an XRC SRQ naming lkey 0 (a kernel
 * consumer's local DMA key) and a kernel address must fail like any bad
 * key, not be written to; SEND and receive commands issued to the target
 * straight through uverbs are refused.
 */
void XrcRun::hostile(Pair &p)
{
	uint8_t *src = buf_.data();
	ibv_sge bad{8, 64, 0};
	ibv_recv_wr rw{}, *rbad = nullptr;
	ibv_wc sw{}, w{};

	rw.wr_id = 99;
	rw.sg_list = &bad;
	rw.num_sge = 1;
	fill_pattern(src, 64, 5);
	int rst = -2, sst = -2;
	if (!ibv_post_srq_recv(srqa_.get(), &rw, &rbad) &&
	    !post(p.ini.get(), IBV_WR_SEND, srqna_, addr_of(src), 64, mr_->lkey)) {
		rst = one(cqa_.get(), &w);
		sst = one(scq_.get(), &sw);
	}
	r_.check(rst == IBV_WC_LOC_PROT_ERR && w.wr_id == 99, "hostile.kernel_lkey",
	         "a receive naming lkey 0 and address 8: %s, want local protection error (the "
	         "sender: %s)",
	         rst >= 0 ? ibv_wc_status_str(ibv_wc_status(rst)) : "no completion",
	         sst >= 0 ? ibv_wc_status_str(ibv_wc_status(sst)) : "no completion");

	Pair q;
	ibv_sge s{addr_of(src), 64, mr_->lkey};
	ibv_send_wr wr{}, *sbad = nullptr;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	bool made = make_pair(xrcd_.get(), &q);
	int ret = made ? ibv_cmd_post_send(q.tgt.get(), &wr, &sbad) : -1;
	r_.check(made && ret == EINVAL, "hostile.tgt_send",
	         "IB_USER_VERBS_CMD_POST_SEND to an XRC target: %s, want EINVAL",
	         ret < 0 ? "setup failed"
	         : ret   ? errno_name(ret).c_str()
	                 : "accepted");
	ibv_sge rs{addr_of(src), 64, mr_->lkey};
	ibv_recv_wr r2{};
	r2.sg_list = &rs;
	r2.num_sge = 1;
	ret = made ? ibv_cmd_post_recv(q.tgt.get(), &r2, &rbad) : -1;
	r_.check(made && ret == EINVAL, "hostile.tgt_recv",
	         "IB_USER_VERBS_CMD_POST_RECV to an XRC target: %s, want EINVAL",
	         ret < 0 ? "setup failed"
	         : ret   ? errno_name(ret).c_str()
	                 : "accepted");
}

/*
 * The SRQ a long SEND goes into is destroyed while its packets arrive:
 * the target, which holds a WQE of it, NAKs the rest (the SRQ is gone)
 * or the SEND completes first; either way nothing else happens.
 */
void XrcRun::srq_gone()
{
	const uint32_t len = 1024 * 1024;
	std::vector<uint8_t> big(2 * len);
	MrPtr bmr(ibv_reg_mr(pd_.get(), big.data(), big.size(), kAccess));
	CqPtr cq(ibv_create_cq(ctx_, 4, nullptr, nullptr, 0));
	SrqPtr srq(bmr && cq ? xrc_srq(xrcd_.get(), pd_.get(), cq.get()) : nullptr);
	uint32_t srqn = 0;
	Pair p;
	ibv_sge rs{addr_of(big.data() + len), len, bmr ? bmr->lkey : 0};
	ibv_recv_wr rw{}, *rbad = nullptr;
	rw.sg_list = &rs;
	rw.num_sge = 1;
	if (!r_.check(srq && !ibv_get_srq_num(srq.get(), &srqn) && make_pair(xrcd_.get(), &p) &&
	                  !ibv_post_srq_recv(srq.get(), &rw, &rbad),
	              "gone.setup", "an XRC SRQ with a receive of 1 MiB, a pair"))
		return;
	ibv_wc w{};
	int st = post(p.ini.get(), IBV_WR_SEND, srqn, addr_of(big.data()), len, bmr->lkey) ? -2 : 0;
	srq.reset(); /* while the SEND's packets arrive */
	if (!st)
		st = one(scq_.get(), &w);
	r_.check(st == IBV_WC_SUCCESS || st == IBV_WC_REM_INV_REQ_ERR, "gone.srq",
	         "a 1 MiB SEND whose XRC SRQ is destroyed under it: %s",
	         st >= 0    ? ibv_wc_status_str(ibv_wc_status(st))
	         : st == -1 ? "no completion"
	                    : "post failed");
}

int XrcRun::run()
{
	ibv_device_attr_ex dx{};

	if (!r_.expect_ok("query", ibv_query_device_ex(ctx_, nullptr, &dx), "ibv_query_device_ex"))
		return r_.finish();
	if (!r_.check(dx.orig_attr.device_cap_flags & IBV_DEVICE_XRC, "cap", "IBV_DEVICE_XRC"))
		return r_.finish();
	pd_.reset(ibv_alloc_pd(ctx_));
	pd2_.reset(ibv_alloc_pd(ctx_));
	scq_.reset(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	cqa_.reset(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	cqb_.reset(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	buf_.assign(4 * kMsg, 0);
	mr_.reset(pd_ ? ibv_reg_mr(pd_.get(), buf_.data(), buf_.size(), kAccess) : nullptr);
	mr2_.reset(pd2_ ? ibv_reg_mr(pd2_.get(), buf_.data(), buf_.size(), kAccess) : nullptr);
	xrcd_ = open_xrcd(ctx_);
	xrcd2_ = open_xrcd(ctx_);
	if (!r_.check(pd_ && pd2_ && scq_ && cqa_ && cqb_ && mr_ && mr2_ && xrcd_ && xrcd2_,
	              "setup", "PDs, CQs, regions and two XRC domains (%s)",
	              xrcd_ ? "ok" : errno_name(errno).c_str()))
		return r_.finish();
	srqa_ = xrc_srq(xrcd_.get(), pd_.get(), cqa_.get());
	srqb_ = xrc_srq(xrcd_.get(), pd_.get(), cqb_.get());
	SrqPtr foreign = xrc_srq(xrcd2_.get(), pd_.get(), cqa_.get());
	uint32_t srqn_foreign = 0;
	bool ok = srqa_ && srqb_ && foreign && !ibv_get_srq_num(srqa_.get(), &srqna_) &&
	          !ibv_get_srq_num(srqb_.get(), &srqnb_) &&
	          !ibv_get_srq_num(foreign.get(), &srqn_foreign) && srqna_ && srqnb_ &&
	          srqna_ != srqnb_;
	if (!r_.check(ok, "srq", "three XRC SRQs, numbers %u %u %u", srqna_, srqnb_, srqn_foreign))
		return r_.finish();
	ibv_srq_init_attr ba{};
	ba.attr.max_wr = 4;
	ba.attr.max_sge = 1;
	SrqPtr basic(ibv_create_srq(pd_.get(), &ba));
	uint32_t n = 0;
	r_.expect_errno("srq_num.basic", basic ? ibv_get_srq_num(basic.get(), &n) : EIO, EINVAL,
	                "ibv_get_srq_num of a basic SRQ");

	Pair p;
	if (!r_.check(make_pair(xrcd_.get(), &p), "pair", "an XRC initiator and target, connected"))
		return r_.finish();
	ibv_recv_wr rw{}, *bad = nullptr;
	r_.check(ibv_post_recv(p.ini.get(), &rw, &bad) != 0, "ini.no_rq",
	         "ibv_post_recv on an XRC initiator fails (it has no receive queue)");
	sends(p);
	memory(p);

	ibv_qp_open_attr oa{};
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = p.tgt->qp_num;
	oa.xrcd = xrcd_.get();
	oa.qp_type = IBV_QPT_XRC_RECV;
	QpPtr opened(ibv_open_qp(ctx_, &oa));
	r_.check(opened && opened->qp_num == p.tgt->qp_num, "open_qp",
	         "ibv_open_qp of the target by number (%s)",
	         opened ? "ok" : errno_name(errno).c_str());
	opened.reset();
	hostile(p);
	refused(srqn_foreign);
	srq_gone();
	return r_.finish();
}

} /* namespace */

int cmd_xrc(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("xrc", argc, argv, &t, &status))
		return status;
	XrcRun run(t.ctx.get(), t.gid);
	return run.run();
}

} /* namespace vc */
