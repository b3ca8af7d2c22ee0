// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * errors mode: one RC QP pair per case and direction, set up fresh; the
 * requester posts the work request under test followed by a good SEND,
 * and both sides check what the IBA spec (and rdma_rxe) make of it:
 *
 *   case              requester status        requester QP  responder QP
 *   bad_rkey          IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *   oob_write         IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *   oob_read          IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *   write_no_access   IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *   read_no_access    IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *   atomic_unaligned  IBV_WC_REM_INV_REQ_ERR  ERR           ERR
 *   send_too_long     IBV_WC_REM_INV_REQ_ERR  ERR           ERR (receive:
 *                                                           LOC_LEN_ERR)
 *   rnr_zero          IBV_WC_RNR_RETRY_EXC_ERR ERR          RTS
 *   rnr_late          IBV_WC_SUCCESS          RTS           RTS
 *   rnr_limit         IBV_WC_RNR_RETRY_EXC_ERR ERR          RTS
 *   rnr_stream        IBV_WC_SUCCESS (all)    RTS           RTS
 *   loc_prot          IBV_WC_LOC_PROT_ERR     ERR           RTS
 *   mw1_unbound       IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *   mw2_local_inv     IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *   mw2_remote_inv    IBV_WC_REM_ACCESS_ERR   ERR           ERR
 *
 * Memory windows (the responder binds them over its region on the case's
 * QP, then tells the requester the window's rkey and address): mw1_unbound
 * writes through a type 1 window the responder has bound and unbound again
 * (a zero-length bind); mw2_local_inv through a type 2 window the
 * responder has bound and invalidated with IBV_WR_LOCAL_INV. mw2_remote_inv
 * first writes 64 bytes through a bound type 2 window (must succeed, and
 * the responder checks they landed), then sends a SEND with Invalidate
 * naming the window (must succeed; the responder's receive reports
 * IBV_WC_WITH_INV and the rkey), then writes through it again: refused.
 *
 * rnr_limit: rnr_retry 3 and an RNR timer of 40.96 ms, no receive ever:
 * the requester must wait the timer before each of its 3 retries, so the
 * error comes no sooner than 3 x 40.96 ms. rnr_stream: a chain of SENDs (of
 * one and of three packets), an RDMA WRITE and a WRITE with immediate,
 * while the responder posts its receives late, one by one: each missing
 * receive costs RNR NAKs, the requester goes back to the NAKed PSN (the
 * WRITE behind a NAKed SEND is sent again) and everything must arrive once,
 * in order, intact. These two take a second or so each and are only run
 * when asked for by name (--cases; "all" includes them).
 *
 * rdma_rxe on Linux 6.1 differs in three places, which are accepted too
 * and reported as such: a too long SEND is a remote operational error
 * (IBV_WC_REM_OP_ERR; the receive IBV_WC_LOC_QP_OP_ERR), a bogus lkey a
 * local QP operation error (IBV_WC_LOC_QP_OP_ERR), and its provider
 * refuses an unaligned atomic at post time (EINVAL).
 *
 * Remote access violations, invalid requests and a too short receive are
 * the responder's class C errors in the IBA spec: NAK to the requester,
 * the responder QP goes to the error state and its receives are flushed.
 * An RNR NAK leaves the responder alone (class B); the requester retries
 * rnr_retry times (7: for ever). A local protection error never reaches
 * the wire. After an error the requester's QP is in ERR: the good SEND
 * behind the bad WR, and a SEND and a receive posted afterwards, complete
 * with IBV_WC_WR_FLUSH_ERR. On the responder's side the memory the bad WR
 * aimed at must be unchanged.
 */
#include "log.h"
#include "modes.h"
#include "plan.h"
#include "session.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <endian.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace integ
{

namespace
{

enum class Case : uint8_t {
	bad_rkey,
	oob_write,
	oob_read,
	write_no_access,
	read_no_access,
	atomic_unaligned,
	send_too_long,
	rnr_zero,
	rnr_late,
	rnr_limit,
	rnr_stream,
	loc_prot,
	mw1_unbound,
	mw2_local_inv,
	mw2_remote_inv,
	count,
};

constexpr unsigned kCases = unsigned(Case::count);
constexpr uint32_t kAllCases = (1u << kCases) - 1;
/* The cases run without --cases: all but the slower RNR ones. */
constexpr uint32_t kDefaultCases =
    kAllCases & ~(1u << unsigned(Case::rnr_limit)) & ~(1u << unsigned(Case::rnr_stream));

struct CaseSpec {
	const char *name;
	const char *what;
	ibv_wc_status want;    /* the requester's status for the WR under test (IBA) */
	int rxe_want;          /* what rdma_rxe (6.1) gives instead, -1: the same */
	bool requester_breaks; /* the requester's QP ends in ERR */
	bool responder_breaks; /* the responder's QP ends in ERR */
	uint32_t early_recvs;  /* receives the responder posts before "ready" */
	bool needs_atomics;
};

constexpr CaseSpec kSpecs[kCases] = {
    {"bad_rkey", "RDMA WRITE with a wrong rkey", IBV_WC_REM_ACCESS_ERR, -1, true, true, 2, false},
    {"oob_write", "RDMA WRITE across the end of the MR", IBV_WC_REM_ACCESS_ERR, -1, true, true, 2,
     false},
    {"oob_read", "RDMA READ across the end of the MR", IBV_WC_REM_ACCESS_ERR, -1, true, true, 2,
     false},
    {"write_no_access", "RDMA WRITE to an MR without REMOTE_WRITE", IBV_WC_REM_ACCESS_ERR, -1, true,
     true, 2, false},
    {"read_no_access", "RDMA READ from an MR without REMOTE_READ", IBV_WC_REM_ACCESS_ERR, -1, true,
     true, 2, false},
    {"atomic_unaligned", "FETCH_AND_ADD at an address that is not 8-byte aligned",
     IBV_WC_REM_INV_REQ_ERR, -1, true, true, 2, true},
    /* rxe 6.1 takes the overrun for a malformed WQE: NAK remote operational error */
    {"send_too_long", "SEND of 512 bytes into a 64-byte receive", IBV_WC_REM_INV_REQ_ERR,
     IBV_WC_REM_OP_ERR, true, true, 2, false},
    {"rnr_zero", "SEND with no receive posted, rnr_retry 0", IBV_WC_RNR_RETRY_EXC_ERR, -1, true,
     false, 0, false},
    {"rnr_late", "SEND with the receive posted 1 s late, rnr_retry 7", IBV_WC_SUCCESS, -1, false,
     false, 0, false},
    {"rnr_limit", "SEND with no receive posted, rnr_retry 3, RNR timer 40.96 ms",
     IBV_WC_RNR_RETRY_EXC_ERR, -1, true, false, 0, false},
    {"rnr_stream", "SENDs and WRITEs while the receives are posted late, rnr_retry 7",
     IBV_WC_SUCCESS, -1, false, false, 0, false},
    /* rxe 6.1: an lkey lookup failure is a local QP operation error */
    {"loc_prot", "SEND with a bogus lkey", IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_QP_OP_ERR, true, false,
     2, false},
    {"mw1_unbound", "RDMA WRITE through a type 1 window after it was unbound",
     IBV_WC_REM_ACCESS_ERR, -1, true, true, 2, false},
    {"mw2_local_inv", "RDMA WRITE through a type 2 window after LOCAL_INV", IBV_WC_REM_ACCESS_ERR,
     -1, true, true, 2, false},
    {"mw2_remote_inv",
     "RDMA WRITE through a type 2 window after a SEND with Invalidate of it (a WRITE before "
     "succeeds)",
     IBV_WC_REM_ACCESS_ERR, -1, true, true, 2, false},
};

constexpr bool is_mw_case(Case c)
{
	return c == Case::mw1_unbound || c == Case::mw2_local_inv || c == Case::mw2_remote_inv;
}

/* The window: one page of the responder's full_ region, remote write. */
constexpr uint32_t kMwOffset = 4096;
constexpr uint32_t kMwLen = 4096;
constexpr uint32_t kMwWrite = 64;

constexpr uint32_t kMrBytes = 128 * 1024;
constexpr uint32_t kSmallRecv = 64;
constexpr uint32_t kGoodSend = 16;
constexpr uint32_t kLateMs = 1000;

/* RNR attributes of a case's QPs, both sides (timer: IBA Table 45 code). */
struct RnrAttrs {
	uint8_t retry;
	uint8_t timer;
};

constexpr uint8_t kLimitRetries = 3;
constexpr uint8_t kLimitTimer = 24; /* 40.96 ms */
constexpr uint32_t kLimitTimerUs = 40960;

constexpr RnrAttrs rnr_attrs(Case c)
{
	switch (c) {
	case Case::rnr_zero:
		return {0, 12};
	case Case::rnr_late:
		return {7, 20}; /* 10.24 ms */
	case Case::rnr_limit:
		return {kLimitRetries, kLimitTimer};
	case Case::rnr_stream:
		return {7, 18}; /* 5.12 ms */
	default:
		return {7, 12}; /* 0.64 ms */
	}
}

/*
 * rnr_stream: the requester's chain, one slot of kStreamSlot bytes per
 * operation in its local buffer and, for WRITEs, in the responder's MR.
 * A message is @mtus path MTUs plus @extra bytes long.
 */
struct StreamOp {
	ibv_wr_opcode opcode;
	uint32_t mtus;
	uint32_t extra;
};

constexpr StreamOp kStream[] = {
    {IBV_WR_SEND, 0, 100},
    {IBV_WR_SEND, 2, 100},
    {IBV_WR_SEND, 2, 100},               /* no receive yet: RNR on its first packet */
    {IBV_WR_RDMA_WRITE, 1, 50},          /* behind it: sent again after the wait */
    {IBV_WR_RDMA_WRITE_WITH_IMM, 0, 64}, /* takes a receive: RNR again */
    {IBV_WR_SEND_WITH_IMM, 0, 32},       /* and again */
};
constexpr uint32_t kStreamOps = sizeof(kStream) / sizeof(kStream[0]);
constexpr uint32_t kStreamSlot = 16384;
static_assert(kStreamOps * kStreamSlot <= kMrBytes, "the stream fits in the buffers");
/* Receives posted before "ready"; the others after these pauses. */
constexpr uint32_t kStreamEarly = 2;
constexpr uint32_t kStreamGapMs[] = {400, 200, 200};
constexpr uint64_t kWrStream = 100;         /* wr_id of operation i: kWrStream + i */
constexpr uint32_t kStreamImm = 0x52000000; /* immediate of operation i: kStreamImm + i */

constexpr bool stream_takes_recv(ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

constexpr bool stream_is_write(ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

constexpr bool stream_has_imm(ibv_wr_opcode op)
{
	return op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

constexpr uint32_t stream_recvs()
{
	uint32_t n = 0;

	for (const StreamOp &op : kStream)
		n += stream_takes_recv(op.opcode);
	return n;
}
static_assert(stream_recvs() == kStreamEarly + sizeof(kStreamGapMs) / sizeof(kStreamGapMs[0]),
              "one pause before each late receive");
/* How long "nothing more happens" is watched for. */
constexpr int64_t kQuietMs = 300;

/* wr_ids: the WR under test, the good SEND behind it, the ones after. */
enum : uint64_t {
	kWrBad = 1,
	kWrFollow = 2,
	kWrAfter = 3,
	kWrRecvAfter = 4,
	kWrMwBind = 5,
	kWrMwInv = 6,
	kWrMwGood = 7,
	kWrMwSendInv = 8,
};

class ErrorCases
{
      public:
	explicit ErrorCases(Session &s) : s_(s) {}
	bool setup();
	/* false when the control connection broke. */
	bool run_case(Case c, bool requester);
	unsigned cases_run() const { return run_; }
	unsigned cases_failed() const { return failed_; }
	uint64_t peer_failures() const { return peer_failures_; }

      private:
	struct Pair {
		Cq scq, rcq;
		QpPtr qp;
		MwPtr mw; /* after qp: deallocated first */
		QpEnd theirs;
		std::vector<RemoteMr> peer_mrs; /* full, no_write, no_read */
		RemoteMr window;                /* mw cases: the peer's window */
	};

	bool make_pair(Case c, Pair *p, std::string *why);
	/* false when the WR under test was not sent. */
	bool requester(Case c, Pair &p);
	void responder(Case c, Pair &p);
	/* 1: posted; 0: refused at post time (fine for @c); -1: failed. */
	int post_bad(Case c, Pair &p);
	bool post_send(Pair &p, uint64_t wr_id, uint32_t len, uint32_t lkey);
	bool post_recv(Pair &p, uint64_t wr_id, uint32_t len);
	/* Wait for one completion on @cq; false after the time limit. */
	bool wait_wc(Cq &cq, ibv_wc *wc, int64_t deadline);
	void expect_wc(Cq &cq, uint64_t wr_id, int status, int alt_status, const char *what);
	void expect_quiet(Cq &cq, const char *what);
	void expect_recv_flush(Pair &p);
	void expect_state(ibv_qp *qp, int state, const char *whose);
	void check_memory();
	uint32_t stream_len(uint32_t i) const;
	void stream_payload(uint32_t i, uint8_t *p) const;
	bool post_stream_recv(Pair &p, uint32_t op, uint32_t slot);
	bool stream_requester(Pair &p);
	void stream_responder(Pair &p);
	void check_stream_recv(const ibv_wc &wc, uint32_t op, uint32_t slot);
	void check_rnr_wait(int64_t ms);
	void check_responder(Case c, Pair &p, bool sent);
	/* mw2_remote_inv: the receive of the SEND with Invalidate, the WRITE. */
	void check_send_inv(Pair &p);
	bool requester_half(Case c, Pair &p);
	/* Responder: bind (and unbind or invalidate) the case's window. */
	bool mw_prepare(Case c, Pair &p, RemoteMr *window);
	/* Post one memory-window WR on the responder's QP and reap it. */
	bool mw_post(Pair &p, ibv_send_wr &wr, const char *what);
	/* Requester, mw2_remote_inv: the good WRITE and the SEND with Invalidate. */
	bool mw_before(Pair &p);
	bool responder_half(Case c, Pair &p);
	const std::string &tag() const { return tag_; }

	Session &s_;
	Buffer full_, no_write_, no_read_, local_, recv_;
	MrPtr full_mr_, no_write_mr_, no_read_mr_, local_mr_, recv_mr_;
	MrPtr mw_mr_; /* full_ again, with MW_BIND: the windows' region */
	std::string tag_;
	uint32_t salt_ = 0;
	/* Ranges of full_ that the case wrote on purpose (checked apart). */
	std::vector<std::pair<size_t, size_t>> written_;
	unsigned run_ = 0, failed_ = 0;
	uint64_t peer_failures_ = 0;
};

bool ErrorCases::setup()
{
	ibv_pd *pd = s_.dev.pd.get();
	const unsigned local = IBV_ACCESS_LOCAL_WRITE;
	std::string why;

	if (!full_.alloc(kMrBytes, &why) || !no_write_.alloc(kMrBytes, &why) ||
	    !no_read_.alloc(kMrBytes, &why) || !local_.alloc(kMrBytes, &why) ||
	    !recv_.alloc(kMrBytes, &why))
		return s_.give_up(why);
	full_mr_ = reg_mr(pd, full_,
	                  local | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	                      (s_.atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0),
	                  &why);
	if (full_mr_)
		no_write_mr_ = reg_mr(pd, no_write_, local | IBV_ACCESS_REMOTE_READ, &why);
	if (no_write_mr_)
		no_read_mr_ = reg_mr(pd, no_read_, local | IBV_ACCESS_REMOTE_WRITE, &why);
	if (no_read_mr_)
		local_mr_ = reg_mr(pd, local_, local, &why);
	if (local_mr_)
		recv_mr_ = reg_mr(pd, recv_, local, &why);
	if (recv_mr_)
		mw_mr_ = reg_mr(pd, full_, local | IBV_ACCESS_MW_BIND, &why);
	if (!mw_mr_)
		return s_.give_up(why);
	return true;
}

bool ErrorCases::mw_post(Pair &p, ibv_send_wr &wr, const char *what)
{
	ibv_send_wr *bad = nullptr;
	ibv_wc wc{};

	wr.send_flags = IBV_SEND_SIGNALED;
	if (int err = ibv_post_send(p.qp.get(), &wr, &bad)) {
		log().fail("%s: ibv_post_send of %s: %s", tag().c_str(), what, std::strerror(err));
		return false;
	}
	if (!wait_wc(p.scq, &wc, s_.deadline()) || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != wr.wr_id) {
		log().fail("%s: %s did not complete with IBV_WC_SUCCESS (%s)", tag().c_str(), what,
		           wc_status_name(wc.status));
		return false;
	}
	return true;
}

bool ErrorCases::mw_prepare(Case c, Pair &p, RemoteMr *window)
{
	const bool type1 = c == Case::mw1_unbound;
	ibv_mw_bind_info info{};
	ibv_send_wr wr{};

	p.mw.reset(ibv_alloc_mw(s_.dev.pd.get(), type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2));
	if (!p.mw) {
		log().fail("%s: ibv_alloc_mw type %d: %s", tag().c_str(), type1 ? 1 : 2,
		           std::strerror(errno));
		return false;
	}
	info.mr = mw_mr_.get();
	info.addr = full_.addr() + kMwOffset;
	info.length = kMwLen;
	info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (type1) {
		ibv_mw_bind bind{};

		bind.wr_id = kWrMwBind;
		bind.send_flags = IBV_SEND_SIGNALED;
		bind.bind_info = info;
		ibv_wc wc{};
		if (int err = ibv_bind_mw(p.qp.get(), p.mw.get(), &bind)) {
			log().fail("%s: ibv_bind_mw: %s", tag().c_str(), std::strerror(err));
			return false;
		}
		if (!wait_wc(p.scq, &wc, s_.deadline()) || wc.status != IBV_WC_SUCCESS) {
			log().fail("%s: the bind completed with %s", tag().c_str(),
			           wc_status_name(wc.status));
			return false;
		}
		*window = {info.addr, p.mw->rkey, kMwLen};
		/* Unbind: a zero-length bind (ibv_bind_mw(3)). */
		bind.bind_info.length = 0;
		bind.bind_info.mw_access_flags = 0;
		if (int err = ibv_bind_mw(p.qp.get(), p.mw.get(), &bind)) {
			log().fail("%s: ibv_bind_mw (unbind): %s", tag().c_str(),
			           std::strerror(err));
			return false;
		}
		if (!wait_wc(p.scq, &wc, s_.deadline()) || wc.status != IBV_WC_SUCCESS) {
			log().fail("%s: the unbind completed with %s", tag().c_str(),
			           wc_status_name(wc.status));
			return false;
		}
		return true;
	}
	wr.wr_id = kWrMwBind;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = p.mw.get();
	wr.bind_mw.rkey = ibv_inc_rkey(p.mw->rkey);
	wr.bind_mw.bind_info = info;
	if (!mw_post(p, wr, "IBV_WR_BIND_MW (type 2)"))
		return false;
	*window = {info.addr, wr.bind_mw.rkey, kMwLen};
	if (c != Case::mw2_local_inv)
		return true;
	wr = {};
	wr.wr_id = kWrMwInv;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = window->rkey;
	return mw_post(p, wr, "IBV_WR_LOCAL_INV of the window");
}

bool ErrorCases::mw_before(Pair &p)
{
	ibv_sge sge = {local_.addr(), kMwWrite, local_mr_->lkey};
	ibv_sge sge_inv = {local_.addr() + 8192, kGoodSend, local_mr_->lkey};
	ibv_send_wr wr[2] = {}, *bad = nullptr;

	wr[0].wr_id = kWrMwGood;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = p.window.addr;
	wr[0].wr.rdma.rkey = p.window.rkey;
	wr[0].next = &wr[1];
	wr[1].wr_id = kWrMwSendInv;
	wr[1].sg_list = &sge_inv;
	wr[1].num_sge = 1;
	wr[1].opcode = IBV_WR_SEND_WITH_INV;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	wr[1].invalidate_rkey = p.window.rkey;
	Rng(stream_key(s_.opt.seed, Stream::err_data, unsigned(Case::mw2_remote_inv)))
	    .fill(local_.data(), 4096);
	if (int err = ibv_post_send(p.qp.get(), wr, &bad)) {
		log().fail("%s: ibv_post_send of the WRITE and SEND with Invalidate: %s",
		           tag().c_str(), std::strerror(err));
		return false;
	}
	expect_wc(p.scq, kWrMwGood, IBV_WC_SUCCESS, -1, "the WRITE through the bound window");
	expect_wc(p.scq, kWrMwSendInv, IBV_WC_SUCCESS, -1, "the SEND with Invalidate");
	return true;
}

bool ErrorCases::make_pair(Case c, Pair *p, std::string *why)
{
	ibv_context *ctx = s_.dev.ctx.get();
	ibv_qp_cap cap{};
	QpParams qpp = s_.rc_params();
	std::vector<RemoteMr> mrs;
	Rng rng(stream_key(s_.opt.seed, Stream::local, 0x1000 + unsigned(c), s_.client));

	if (!p->scq.create(ctx, 16, why) || !p->rcq.create(ctx, 16, why))
		return false;
	cap.max_send_wr = 8;
	cap.max_recv_wr = 8;
	cap.max_send_sge = 1;
	cap.max_recv_sge = 1;
	p->qp = create_qp(s_.dev, p->scq, p->rcq, IBV_QPT_RC, cap, nullptr, why);
	if (!p->qp)
		return false;
	mrs.push_back({full_.addr(), full_mr_->rkey, full_.size()});
	mrs.push_back({no_write_.addr(), no_write_mr_->rkey, no_write_.size()});
	mrs.push_back({no_read_.addr(), no_read_mr_->rkey, no_read_.size()});
	qpp.rnr_retry = rnr_attrs(c).retry;
	qpp.min_rnr_timer = rnr_attrs(c).timer;
	return s_.connect_to_peer(p->qp.get(), pick_psn(rng), mrs, 3, qpp, &p->theirs, &p->peer_mrs,
	                          why);
}

bool ErrorCases::post_send(Pair &p, uint64_t wr_id, uint32_t len, uint32_t lkey)
{
	ibv_sge sge = {local_.addr(), len, lkey};
	ibv_send_wr wr{}, *bad = nullptr;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (int err = ibv_post_send(p.qp.get(), &wr, &bad)) {
		log().fail("%s: ibv_post_send (wr_id %" PRIu64 "): %s", tag().c_str(), wr_id,
		           std::strerror(err));
		return false;
	}
	return true;
}

bool ErrorCases::post_recv(Pair &p, uint64_t wr_id, uint32_t len)
{
	ibv_sge sge = {recv_.addr() + (wr_id % 4) * 4096, len, recv_mr_->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (int err = ibv_post_recv(p.qp.get(), &wr, &bad)) {
		log().fail("%s: ibv_post_recv (wr_id %" PRIu64 "): %s", tag().c_str(), wr_id,
		           std::strerror(err));
		return false;
	}
	return true;
}

/* The WR under test and the good SEND behind it, in one chain. */
int ErrorCases::post_bad(Case c, Pair &p)
{
	const RemoteMr &full = p.peer_mrs[0];
	ibv_sge sge = {local_.addr(), 64, local_mr_->lkey};
	ibv_sge follow_sge = {local_.addr() + 8192, kGoodSend, local_mr_->lkey};
	ibv_send_wr wr[2] = {}, *bad = nullptr;

	wr[0].wr_id = kWrBad;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].next = &wr[1];
	wr[1].wr_id = kWrFollow;
	wr[1].sg_list = &follow_sge;
	wr[1].num_sge = 1;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	switch (c) {
	case Case::bad_rkey:
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wr[0].wr.rdma.remote_addr = full.addr;
		wr[0].wr.rdma.rkey = full.rkey ^ 0x5a;
		break;
	case Case::oob_write:
	case Case::oob_read:
		sge.length = 128;
		wr[0].opcode = c == Case::oob_write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr[0].wr.rdma.remote_addr = full.addr + full.len - 64;
		wr[0].wr.rdma.rkey = full.rkey;
		break;
	case Case::write_no_access:
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wr[0].wr.rdma.remote_addr = p.peer_mrs[1].addr;
		wr[0].wr.rdma.rkey = p.peer_mrs[1].rkey;
		break;
	case Case::read_no_access:
		wr[0].opcode = IBV_WR_RDMA_READ;
		wr[0].wr.rdma.remote_addr = p.peer_mrs[2].addr;
		wr[0].wr.rdma.rkey = p.peer_mrs[2].rkey;
		break;
	case Case::atomic_unaligned:
		sge.length = 8;
		wr[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr[0].wr.atomic.remote_addr = full.addr + 4;
		wr[0].wr.atomic.rkey = full.rkey;
		wr[0].wr.atomic.compare_add = 1;
		break;
	case Case::send_too_long:
		sge.length = 512;
		wr[0].opcode = IBV_WR_SEND;
		break;
	case Case::rnr_zero:
	case Case::rnr_limit:
	case Case::rnr_late:
		sge.length = 32;
		wr[0].opcode = IBV_WR_SEND;
		/* rnr_late: the SEND alone, it must succeed. */
		if (c == Case::rnr_late)
			wr[0].next = nullptr;
		break;
	case Case::loc_prot:
		wr[0].opcode = IBV_WR_SEND;
		sge.lkey = local_mr_->lkey ^ 0x5a;
		break;
	case Case::mw1_unbound:
	case Case::mw2_local_inv:
	case Case::mw2_remote_inv:
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wr[0].wr.rdma.remote_addr = p.window.addr + kMwWrite;
		wr[0].wr.rdma.rkey = p.window.rkey;
		break;
	default:
		break;
	}
	Rng(stream_key(s_.opt.seed, Stream::err_data, unsigned(c))).fill(local_.data(), 4096);
	if (int err = ibv_post_send(p.qp.get(), wr, &bad)) {
		/*
		 * A provider may check atomic alignment at post time (rdma-core's
		 * rxe provider does): then the request never reaches the wire.
		 */
		if (c == Case::atomic_unaligned && err == EINVAL && bad == &wr[0]) {
			log().info("%s: the provider refuses the WR at post time (EINVAL); the "
			           "responder's side is not exercised",
			           tag().c_str());
			return 0;
		}
		log().fail("%s: ibv_post_send of the WR under test: %s", tag().c_str(),
		           std::strerror(err));
		return -1;
	}
	return 1;
}

bool ErrorCases::wait_wc(Cq &cq, ibv_wc *wc, int64_t deadline)
{
	return cq.wait(wc, 1, deadline) == 1;
}

void ErrorCases::expect_wc(Cq &cq, uint64_t wr_id, int status, int alt_status, const char *what)
{
	ibv_wc wc{};

	if (!wait_wc(cq, &wc, s_.deadline())) {
		log().fail("%s: no completion for %s (wr_id %" PRIu64 ") within %u s, want %s",
		           tag().c_str(), what, wr_id, s_.opt.timeout, wc_status_name(status));
		return;
	}
	if (wc.wr_id != wr_id) {
		log().fail("%s: completion wr_id %" PRIu64 " (%s), want %s (wr_id %" PRIu64 ")",
		           tag().c_str(), wc.wr_id, wc_status_name(wc.status), what, wr_id);
		return;
	}
	if (int(wc.status) != status && int(wc.status) != alt_status) {
		log().fail("%s: %s completed with %s, want %s%s%s", tag().c_str(), what,
		           wc_status_name(wc.status), wc_status_name(status),
		           alt_status >= 0 ? " (IBA) or, as rdma_rxe 6.1, " : "",
		           alt_status >= 0 ? wc_status_name(alt_status) : "");
		return;
	}
	if (int(wc.status) != status)
		log().info("%s: %s: %s, as rdma_rxe 6.1 (the IBA spec says %s)", tag().c_str(),
		           what, wc_status_name(wc.status), wc_status_name(status));
	else
		log().info("%s: %s: %s", tag().c_str(), what, wc_status_name(wc.status));
}

void ErrorCases::expect_quiet(Cq &cq, const char *what)
{
	ibv_wc wc{};

	if (wait_wc(cq, &wc, now_ms() + kQuietMs))
		log().fail("%s: unexpected completion on the %s: wr_id %" PRIu64 " %s %s",
		           tag().c_str(), what, wc.wr_id, wc_opcode_name(wc.opcode),
		           wc_status_name(wc.status));
}

/* The QP state; ERR is waited for up to a second (wait_qp_state()). */
void ErrorCases::expect_state(ibv_qp *qp, int state, const char *whose)
{
	const int got = wait_qp_state(qp, state, state == IBV_QPS_ERR ? 1000 : 0);

	if (got != state)
		log().fail("%s: %s QP is in %s, want %s", tag().c_str(), whose, qp_state_name(got),
		           qp_state_name(state));
	else
		log().debug("%s: %s QP is in %s", tag().c_str(), whose, qp_state_name(got));
}

bool ErrorCases::requester(Case c, Pair &p)
{
	const CaseSpec &spec = kSpecs[unsigned(c)];
	const int64_t t0 = now_ms();

	if (c == Case::rnr_stream)
		return stream_requester(p);

	const int posted = post_bad(c, p);

	if (posted <= 0)
		return false;
	expect_wc(p.scq, kWrBad, spec.want, spec.rxe_want, spec.what);
	if (c == Case::rnr_limit)
		check_rnr_wait(now_ms() - t0);
	if (c == Case::rnr_late) {
		const int64_t ms = now_ms() - t0;

		if (ms < kLateMs / 2)
			log().fail("%s: the SEND completed after %" PRId64 " ms, before the peer "
			           "posted its receive (%u ms)",
			           tag().c_str(), ms, kLateMs);
		else
			log().info("%s: the SEND completed after %" PRId64 " ms", tag().c_str(),
			           ms);
		expect_state(p.qp.get(), IBV_QPS_RTS, "requester");
		expect_quiet(p.scq, "send CQ");
		return true;
	}
	expect_wc(p.scq, kWrFollow, IBV_WC_WR_FLUSH_ERR, -1, "the SEND behind it");
	expect_state(p.qp.get(), IBV_QPS_ERR, "requester");
	if (post_send(p, kWrAfter, kGoodSend, local_mr_->lkey))
		expect_wc(p.scq, kWrAfter, IBV_WC_WR_FLUSH_ERR, -1, "a SEND posted in ERR");
	if (post_recv(p, kWrRecvAfter, kSmallRecv))
		expect_recv_flush(p);
	expect_quiet(p.scq, "send CQ");
	return true;
}

/*
 * A receive posted to a QP in ERR completes with a flush error, as every
 * work request posted in the Error state does (IBA spec, QP states).
 * rdma_rxe on 6.1 never flushes it (its responder runs only on packets and
 * its provider posts receives without a system call); --lenient-recv-flush
 * reports that without failing.
 */
void ErrorCases::expect_recv_flush(Pair &p)
{
	const char *what = "a receive posted in ERR";
	ibv_wc wc{};

	if (!s_.opt.lenient_recv_flush) {
		expect_wc(p.rcq, kWrRecvAfter, IBV_WC_WR_FLUSH_ERR, -1, what);
		return;
	}
	if (!wait_wc(p.rcq, &wc, now_ms() + 1000)) {
		log().info("%s: %s did not complete within 1 s (allowed by --lenient-recv-flush)",
		           tag().c_str(), what);
		return;
	}
	if (wc.wr_id != kWrRecvAfter || wc.status != IBV_WC_WR_FLUSH_ERR)
		log().fail("%s: %s: wr_id %" PRIu64 " %s, want wr_id %" PRIu64
		           " IBV_WC_WR_FLUSH_ERR",
		           tag().c_str(), what, wc.wr_id, wc_status_name(wc.status),
		           uint64_t(kWrRecvAfter));
	else
		log().info("%s: %s: IBV_WC_WR_FLUSH_ERR", tag().c_str(), what);
}

/*
 * rnr_limit: before each retry the requester waits the RNR timer of the
 * NAK (IBA 9.7.5.2.8), so the retries cannot run out sooner than retries x
 * timer after the post (less 10% for a kernel timer that counts in coarse
 * ticks); on an idle rig not much later either.
 */
void ErrorCases::check_rnr_wait(int64_t ms)
{
	const double least = kLimitRetries * kLimitTimerUs / 1000.0;
	const double most = 4 * least + 2000;

	if (ms < 0.9 * least || ms > most)
		log().fail("%s: RNR retries exhausted after %" PRId64 " ms, want %u retries x %.2f "
		           "ms = %.1f ms (less 10%%) at least and %.0f ms at most",
		           tag().c_str(), ms, kLimitRetries, kLimitTimerUs / 1000.0, least, most);
	else
		log().info("%s: RNR retries exhausted after %" PRId64 " ms (%u retries x %.2f ms = "
		           "%.1f ms at least)",
		           tag().c_str(), ms, kLimitRetries, kLimitTimerUs / 1000.0, least);
}

uint32_t ErrorCases::stream_len(uint32_t i) const
{
	return kStream[i].mtus * s_.path_mtu + kStream[i].extra;
}

void ErrorCases::stream_payload(uint32_t i, uint8_t *p) const
{
	Rng(stream_key(s_.opt.seed, Stream::err_data, unsigned(Case::rnr_stream), i))
	    .fill(p, stream_len(i));
}

/* The receive of operation @op, in receive buffer slot @slot. */
bool ErrorCases::post_stream_recv(Pair &p, uint32_t op, uint32_t slot)
{
	ibv_sge sge = {recv_.addr() + size_t(slot) * kStreamSlot, kStreamSlot, recv_mr_->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;

	wr.wr_id = kWrStream + op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (int err = ibv_post_recv(p.qp.get(), &wr, &bad)) {
		log().fail("%s: ibv_post_recv (receive %u): %s", tag().c_str(), slot,
		           std::strerror(err));
		return false;
	}
	return true;
}

/* rnr_stream, requester: the whole chain at once, then its completions. */
bool ErrorCases::stream_requester(Pair &p)
{
	const RemoteMr &full = p.peer_mrs[0];
	const int64_t t0 = now_ms();
	ibv_sge sges[kStreamOps];
	ibv_send_wr wrs[kStreamOps] = {}, *bad = nullptr;
	uint32_t late_ms = 0;

	for (uint32_t ms : kStreamGapMs)
		late_ms += ms;
	for (uint32_t i = 0; i < kStreamOps; i++) {
		const ibv_wr_opcode op = kStream[i].opcode;

		stream_payload(i, local_.data() + size_t(i) * kStreamSlot);
		sges[i] = {local_.addr() + size_t(i) * kStreamSlot, stream_len(i), local_mr_->lkey};
		wrs[i].wr_id = kWrStream + i;
		wrs[i].next = i + 1 < kStreamOps ? &wrs[i + 1] : nullptr;
		wrs[i].sg_list = &sges[i];
		wrs[i].num_sge = 1;
		wrs[i].opcode = op;
		wrs[i].send_flags = IBV_SEND_SIGNALED;
		if (stream_has_imm(op))
			wrs[i].imm_data = htobe32(kStreamImm + i);
		if (stream_is_write(op)) {
			wrs[i].wr.rdma.remote_addr = full.addr + uint64_t(i) * kStreamSlot;
			wrs[i].wr.rdma.rkey = full.rkey;
		}
	}
	if (int err = ibv_post_send(p.qp.get(), wrs, &bad)) {
		log().fail("%s: ibv_post_send of %u WRs: %s", tag().c_str(), kStreamOps,
		           std::strerror(err));
		return false;
	}
	for (uint32_t i = 0; i < kStreamOps; i++) {
		const int want_op =
		    stream_is_write(kStream[i].opcode) ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
		ibv_wc wc{};

		if (!wait_wc(p.scq, &wc, s_.deadline())) {
			log().fail("%s: no completion for operation %u within %u s", tag().c_str(),
			           i, s_.opt.timeout);
			return true;
		}
		if (wc.wr_id != kWrStream + i || wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != want_op)
			log().fail("%s: completion wr_id %" PRIu64 " %s %s, want wr_id %" PRIu64
			           " IBV_WC_SUCCESS %s",
			           tag().c_str(), wc.wr_id, wc_status_name(wc.status),
			           wc_opcode_name(wc.opcode), kWrStream + i,
			           wc_opcode_name(want_op));
	}
	const int64_t ms = now_ms() - t0;

	if (ms < late_ms / 2)
		log().fail("%s: the chain completed after %" PRId64 " ms, before the peer posted "
		           "its receives (%u ms)",
		           tag().c_str(), ms, late_ms);
	else
		log().info("%s: %u WRs completed in order after %" PRId64 " ms", tag().c_str(),
		           kStreamOps, ms);
	expect_state(p.qp.get(), IBV_QPS_RTS, "requester");
	expect_quiet(p.scq, "send CQ");
	return true;
}

/* One receive completion of the stream: status, opcode, length, data. */
void ErrorCases::check_stream_recv(const ibv_wc &wc, uint32_t op, uint32_t slot)
{
	const ibv_wr_opcode kind = kStream[op].opcode;
	const bool is_send = !stream_is_write(kind);
	const int want_op = is_send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
	const uint32_t len = stream_len(op);
	const uint8_t *base = recv_.data();
	const size_t start = size_t(slot) * kStreamSlot, end = start + kStreamSlot;
	std::vector<uint8_t> want(len);

	if (wc.wr_id != kWrStream + op || wc.status != IBV_WC_SUCCESS || wc.opcode != want_op ||
	    wc.byte_len != len) {
		log().fail("%s: receive %u: wr_id %" PRIu64 " %s %s %u bytes, want wr_id %" PRIu64
		           " IBV_WC_SUCCESS %s %u bytes",
		           tag().c_str(), slot, wc.wr_id, wc_status_name(wc.status),
		           wc_opcode_name(wc.opcode), wc.byte_len, kWrStream + op,
		           wc_opcode_name(want_op), len);
		return;
	}
	if (stream_has_imm(kind) &&
	    (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.imm_data != htobe32(kStreamImm + op)))
		log().fail("%s: receive %u: wc_flags 0x%x imm_data 0x%08x, want the immediate "
		           "0x%08x",
		           tag().c_str(), slot, wc.wc_flags, be32toh(wc.imm_data), kStreamImm + op);
	if (is_send) {
		stream_payload(op, want.data());
		if (std::memcmp(base + start, want.data(), len) != 0)
			log().fail("%s: receive %u: the %u bytes of operation %u are wrong",
			           tag().c_str(), slot, len, op);
	}
	const size_t junk = find_unpoisoned(base, start + (is_send ? len : 0), end, salt_);

	if (junk < end)
		log().fail("%s: receive %u: byte %zu of its buffer changed (0x%02x), past the "
		           "message",
		           tag().c_str(), slot, junk - start, base[junk]);
}

/*
 * rnr_stream, responder: the first receives are posted; the others come
 * late, one by one, then every completion and every written byte is
 * checked.
 */
void ErrorCases::stream_responder(Pair &p)
{
	uint32_t slot = 0, checked = 0;

	for (uint32_t i = 0; i < kStreamOps; i++) {
		if (!stream_takes_recv(kStream[i].opcode))
			continue;
		if (slot >= kStreamEarly) {
			usleep(kStreamGapMs[slot - kStreamEarly] * 1000);
			if (!post_stream_recv(p, i, slot))
				return;
		}
		slot++;
	}
	slot = 0;
	for (uint32_t i = 0; i < kStreamOps; i++) {
		ibv_wc wc{};

		if (!stream_takes_recv(kStream[i].opcode))
			continue;
		if (!wait_wc(p.rcq, &wc, s_.deadline())) {
			log().fail("%s: no completion for receive %u within %u s", tag().c_str(),
			           slot, s_.opt.timeout);
			return;
		}
		check_stream_recv(wc, i, slot++);
		checked++;
	}
	for (uint32_t i = 0; i < kStreamOps; i++) {
		const size_t off = size_t(i) * kStreamSlot;
		std::vector<uint8_t> want(stream_len(i));

		if (!stream_is_write(kStream[i].opcode))
			continue;
		stream_payload(i, want.data());
		if (std::memcmp(full_.data() + off, want.data(), want.size()) != 0)
			log().fail("%s: the %zu bytes written by operation %u are wrong",
			           tag().c_str(), want.size(), i);
		written_.push_back({off, want.size()});
		checked++;
	}
	log().info("%s: %u receives and writes checked", tag().c_str(), checked);
}

/* The responder's memory must not have changed. */
void ErrorCases::check_memory()
{
	const Buffer *bufs[] = {&full_, &no_write_, &no_read_};
	const char *names[] = {"the MR", "the MR without REMOTE_WRITE",
	                       "the MR without REMOTE_READ"};

	for (unsigned k = 0; k < 3; k++) {
		size_t from = 0;

		/* written_ is sorted and only ever about the first MR. */
		for (size_t w = 0; w <= (k == 0 ? written_.size() : 0); w++) {
			const bool last = k != 0 || w == written_.size();
			const size_t to = last ? bufs[k]->size() : written_[w].first;
			const size_t junk = find_unpoisoned(bufs[k]->data(), from, to, salt_ + k);

			if (junk < to)
				log().fail("%s: byte %zu of %s changed (0x%02x)", tag().c_str(),
				           junk, names[k], bufs[k]->data()[junk]);
			if (!last)
				from = written_[w].first + written_[w].second;
		}
	}
}

void ErrorCases::responder(Case c, Pair &p)
{
	if (c == Case::rnr_stream)
		stream_responder(p);
	if (c == Case::rnr_late) {
		ibv_wc wc{};
		std::vector<uint8_t> want(32);

		usleep(kLateMs * 1000);
		if (!post_recv(p, 1, kSmallRecv))
			return;
		if (!wait_wc(p.rcq, &wc, s_.deadline())) {
			log().fail("%s: no receive completion within %u s", tag().c_str(),
			           s_.opt.timeout);
			return;
		}
		Rng(stream_key(s_.opt.seed, Stream::err_data, unsigned(c))).fill(want.data(), 32);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len != 32)
			log().fail("%s: receive completed with %s %s %u bytes, want IBV_WC_SUCCESS "
			           "RECV 32 bytes",
			           tag().c_str(), wc_status_name(wc.status),
			           wc_opcode_name(wc.opcode), wc.byte_len);
		else if (std::memcmp(recv_.data() + 4096, want.data(), 32) != 0)
			log().fail("%s: the received 32 bytes are wrong", tag().c_str());
		else
			log().info("%s: late receive: IBV_WC_SUCCESS, data ok", tag().c_str());
	}
}

/* The requester's half of a case: the WR under test and what follows. */
bool ErrorCases::requester_half(Case c, Pair &p)
{
	const CaseSpec &spec = kSpecs[unsigned(c)];
	const uint64_t failures_before = log().failures();
	std::vector<uint8_t> buf;
	std::string why;

	if (!s_.chan.recv(MsgType::ready, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);
	if (is_mw_case(c)) {
		Reader rd(buf);

		p.window.addr = rd.u64();
		p.window.rkey = rd.u32();
		p.window.len = kMwLen;
	}
	if (c == Case::mw2_remote_inv && !mw_before(p))
		return s_.give_up(tag_ + ": the WRITE before the invalidation failed to post");
	const bool sent = is_mw_case(c) && !p.window.rkey ? false : requester(c, p);
	Writer w;

	w.u32(uint32_t(log().failures() - failures_before)).u8(sent);
	if (!s_.chan.send(MsgType::done, w, &why) ||
	    !s_.chan.recv(MsgType::result, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);
	Reader r(buf);
	const uint32_t peer = r.u32();
	const bool pass = log().failures() == failures_before && !peer;

	peer_failures_ += peer;
	if (peer)
		log().info("%s: the %s found %u problem(s)", tag().c_str(), s_.peer_side(), peer);
	failed_ += !pass;
	log().info("%s %s: %s", pass ? "PASS" : "FAIL", tag().c_str(), spec.what);
	return true;
}

void ErrorCases::check_send_inv(Pair &p)
{
	std::vector<uint8_t> want(4096);
	ibv_wc wc{};

	if (!wait_wc(p.rcq, &wc, s_.deadline())) {
		log().fail("%s: no receive completion for the SEND with Invalidate", tag().c_str());
		return;
	}
	/*
	 * rdma_rxe 6.1 writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2) into
	 * user CQEs, which libibverbs reads as IBV_WC_IP_CSUM_OK: taken too,
	 * with the rkey, and reported.
	 */
	const bool rxe_flag = !(wc.wc_flags & IBV_WC_WITH_INV) && (wc.wc_flags & IBV_WC_IP_CSUM_OK);
	if (rxe_flag)
		log().info("%s: the SEND with Invalidate's receive has flags %#x (rdma_rxe 6.1's "
		           "value for IB_WC_WITH_INVALIDATE)",
		           tag().c_str(), unsigned(wc.wc_flags));
	if (wc.wr_id != 1 || wc.status != IBV_WC_SUCCESS ||
	    !((wc.wc_flags & IBV_WC_WITH_INV) || rxe_flag) ||
	    wc.invalidated_rkey != p.window.rkey || wc.byte_len != kGoodSend)
		log().fail("%s: the SEND with Invalidate arrived as wr_id %" PRIu64
		           " %s, %u bytes, "
		           "flags %#x, rkey %#x (want IBV_WC_WITH_INV of %#x)",
		           tag().c_str(), wc.wr_id, wc_status_name(wc.status), wc.byte_len,
		           unsigned(wc.wc_flags), wc.invalidated_rkey, p.window.rkey);
	else
		log().info("%s: receive of the SEND with Invalidate: IBV_WC_WITH_INV, rkey %#x",
		           tag().c_str(), wc.invalidated_rkey);
	/* The WRITE through the window before it, byte for byte. */
	Rng(stream_key(s_.opt.seed, Stream::err_data, unsigned(Case::mw2_remote_inv)))
	    .fill(want.data(), 4096);
	if (std::memcmp(full_.data() + kMwOffset, want.data(), kMwWrite) != 0)
		log().fail("%s: the %u bytes written through the window are not there",
		           tag().c_str(), kMwWrite);
}

/*
 * After the requester is done: the QP state, the receives (flushed after
 * a class C error), no other completion, untouched memory.
 */
void ErrorCases::check_responder(Case c, Pair &p, bool sent)
{
	const CaseSpec &spec = kSpecs[unsigned(c)];
	/* When nothing reached us, the QP must be as it was. */
	const bool breaks = spec.responder_breaks && sent;

	expect_state(p.qp.get(), breaks ? IBV_QPS_ERR : IBV_QPS_RTS, "responder");
	for (uint32_t k = 0; breaks && k < spec.early_recvs; k++) {
		/*
		 * The receive the too long SEND landed in: the IBA spec says
		 * Local Length Error, rdma_rxe (6.1) reports a local QP
		 * operation error; both are taken.
		 */
		if (c == Case::send_too_long && k == 0)
			expect_wc(p.rcq, 1, IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_QP_OP_ERR,
			          "the receive of the too long SEND");
		else if (c == Case::mw2_remote_inv && k == 0)
			check_send_inv(p);
		else
			expect_wc(p.rcq, 1 + k, IBV_WC_WR_FLUSH_ERR, -1,
			          "a receive pending at the error");
	}
	expect_quiet(p.rcq, "receive CQ");
	check_memory();
}

/* The responder's half: memory and receives ready, then the checks. */
bool ErrorCases::responder_half(Case c, Pair &p)
{
	const CaseSpec &spec = kSpecs[unsigned(c)];
	const uint64_t failures_before = log().failures();
	std::vector<uint8_t> buf;
	std::string why;

	fill_poison(full_.data(), 0, full_.size(), salt_);
	fill_poison(no_write_.data(), 0, no_write_.size(), salt_ + 1);
	fill_poison(no_read_.data(), 0, no_read_.size(), salt_ + 2);
	for (uint32_t k = 0; k < spec.early_recvs; k++)
		if (!post_recv(p, 1 + k, kSmallRecv))
			break;
	if (c == Case::rnr_stream) {
		fill_poison(recv_.data(), 0, recv_.size(), salt_);
		for (uint32_t i = 0, slot = 0; i < kStreamOps && slot < kStreamEarly; i++)
			if (stream_takes_recv(kStream[i].opcode))
				post_stream_recv(p, i, slot++);
	}
	Writer ready;
	if (is_mw_case(c)) {
		RemoteMr window;

		if (!mw_prepare(c, p, &window))
			window = {};
		p.window = window;
		ready.u64(window.addr).u32(window.rkey);
		if (c == Case::mw2_remote_inv)
			written_.push_back({kMwOffset, kMwWrite});
	}
	if (!s_.chan.send(MsgType::ready, ready, &why))
		return s_.give_up(tag_ + ": " + why);
	responder(c, p);
	if (!s_.chan.recv(MsgType::done, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);
	Reader r(buf);

	peer_failures_ += r.u32();
	check_responder(c, p, r.u8() != 0);

	const uint32_t mine = uint32_t(log().failures() - failures_before);

	if (!s_.chan.send(MsgType::result, Writer().u32(mine), &why))
		return s_.give_up(tag_ + ": " + why);
	failed_ += mine != 0;
	log().info("%s %s: responder side", mine ? "FAIL" : "PASS", tag().c_str());
	return true;
}

bool ErrorCases::run_case(Case c, bool requester_side)
{
	const CaseSpec &spec = kSpecs[unsigned(c)];
	std::string why;
	Pair p;

	tag_ = std::string(spec.name) + " (" + (requester_side ? s_.side() : s_.peer_side()) +
	       " requests)";
	salt_ = 0x100 * unsigned(c) + (requester_side ? 1 : 2);
	written_.clear();
	run_++;
	if (!make_pair(c, &p, &why))
		return s_.give_up(tag_ + ": " + why);
	return requester_side ? requester_half(c, p) : responder_half(c, p);
}

} // namespace

const char *case_names()
{
	static std::string names;

	if (names.empty())
		for (const CaseSpec &s : kSpecs)
			names += std::string(names.empty() ? "" : ",") + s.name;
	return names.c_str();
}

bool parse_cases(const char *list, uint32_t *mask)
{
	std::string s(list);
	size_t pos = 0;

	*mask = 0;
	while (pos <= s.size()) {
		const size_t comma = std::min(s.find(',', pos), s.size());
		const std::string name = s.substr(pos, comma - pos);
		unsigned k = 0;

		while (k < kCases && name != kSpecs[k].name)
			k++;
		if (name == "all")
			*mask |= kAllCases;
		else if (k == kCases)
			return false;
		else
			*mask |= 1u << k;
		pos = comma + 1;
	}
	return *mask != 0;
}

int run_errors(const Options &opt)
{
	const int64_t started = now_ms();
	Session s;
	std::string why;

	if (!s.start(opt, &why)) {
		log().fail("%s", why.c_str());
		std::printf("sroce-integrity errors: FAIL side=%s: %s\n", s.side(), why.c_str());
		return 1;
	}
	ErrorCases e(s);
	const uint32_t mask = s.opt.cases_mask ? s.opt.cases_mask : kDefaultCases;
	bool broken = !e.setup();
	unsigned skipped = 0;

	for (unsigned k = 0; k < kCases && !broken; k++) {
		if (!(mask & (1u << k)))
			continue;
		if (kSpecs[k].needs_atomics && !s.atomics) {
			log().info("SKIP %s: a device has no atomics", kSpecs[k].name);
			skipped++;
			continue;
		}
		for (unsigned d = 0; d < 2 && !broken; d++) {
			const uint32_t dir = d == 0 ? kClientRequests : kServerRequests;

			if (s.opt.directions & dir)
				broken = !e.run_case(Case(k), (dir == kClientRequests) == s.client);
		}
	}

	const bool pass = !broken && log().failures() == 0 && e.peer_failures() == 0;

	std::printf("sroce-integrity errors: %s side=%s dev=%s mtu=%u seed=0x%016llx cases=%u "
	            "failed=%u skipped=%u errors=%" PRIu64 " peer_errors=%" PRIu64 " time=%.1fs\n",
	            pass ? "PASS" : "FAIL", s.side(), s.dev.name.c_str(), s.path_mtu,
	            (unsigned long long)s.opt.seed, e.cases_run(), e.cases_failed(), skipped,
	            log().failures(), e.peer_failures(), double(now_ms() - started) / 1000.0);
	std::fflush(stdout);
	return pass ? 0 : 1;
}

} // namespace integ
