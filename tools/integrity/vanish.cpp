// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vanish mode: the responder's host goes away in the middle of a transfer.
 *
 * Both sides set up one RC QP pair per kind of request (RDMA WRITE of two
 * packets, SEND, RDMA READ of two packets and, when both devices have
 * atomics, FETCH_AND_ADD). The requester (--requester) keeps --depth
 * signalled work requests in flight on each; the responder keeps receives
 * posted. Once every QP has completed kWarmup requests, the requester
 * sends "vanish" over the control connection, and the responder prints
 * "sroce-integrity vanish: vanishing" and goes on serving; the test script
 * then takes the responder's link down (or kills the host).
 *
 * From its last acknowledged request on, each requester QP hears nothing:
 * it must resend after every local ACK timeout (4.096 us x 2^timeout) and,
 * when retry_cnt retries are used up, complete its oldest WR with
 * IBV_WC_RETRY_EXC_ERR, every later one with IBV_WC_WR_FLUSH_ERR, in order,
 * and go to ERR (IBA spec: local ACK timeout, retry count, QP states). The
 * requester checks that, a WR posted afterwards being flushed too, and
 * measures for each QP the time from its last successful completion to the
 * error against (retry_cnt + 1) timeouts: it fails under 90% of that (a
 * coarse kernel timer may round each period down a little) or over four
 * times it plus one second.
 *
 * The responder has no verdict on the vanished traffic: it reports the
 * receives it completed before, and stops --timeout seconds after it was
 * asked to vanish (or when the script kills it).
 */
#include "log.h"
#include "modes.h"
#include "session.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace integ
{

namespace
{

enum class Kind : uint8_t { write, send, read, fetch_add, count };

constexpr unsigned kKinds = unsigned(Kind::count);
constexpr const char *kKindNames[kKinds] = {"RDMA WRITE", "SEND", "RDMA READ", "FETCH_AND_ADD"};
constexpr const char *kKindTokens[kKinds] = {"write", "send", "read", "fetch_add"};
constexpr ibv_wc_opcode kKindWc[kKinds] = {IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_RDMA_READ,
                                           IBV_WC_FETCH_ADD};

/* Successes every QP needs before the responder is asked to vanish. */
constexpr uint64_t kWarmup = 20;
constexpr uint32_t kSendBytes = 64;
/* Receives the responder keeps posted on the SEND QP. */
constexpr uint32_t kRecvs = 64;
constexpr uint32_t kMaxDepth = 16;
/* Room after the slots of the responder's MR: the atomic word. */
constexpr uint32_t kWordRoom = 4096;

/* One QP and, on the requester, where its work requests stand. */
struct VanishQp {
	Kind kind = Kind::write;
	QpPtr qp;
	uint64_t posted = 0, done = 0, ok = 0, flushed = 0;
	int64_t last_ok_ms = 0, err_ms = 0;
	int err = -1; /* the first unsuccessful status */

	const char *name() const { return kKindNames[unsigned(kind)]; }
};

class Vanish
{
      public:
	explicit Vanish(Session &s) : s_(s) {}
	bool setup();
	/* false when the run could not be carried out. */
	bool run() { return requester_ ? requester() : responder(); }
	bool is_requester() const { return requester_; }
	uint64_t receives() const { return receives_; }
	int64_t worst_ms() const { return worst_ms_; }
	size_t qps() const { return qps_.size(); }
	double expected_ms() const
	{
		return (s_.opt.retry_cnt + 1) * 4.096e-3 * double(1u << s_.opt.ack_timeout);
	}

      private:
	bool make_qp(Kind k);
	bool requester();
	bool responder();
	bool post(VanishQp &q);
	bool post_recv(uint32_t slot);
	VanishQp *find(uint32_t qpn);
	void account(const ibv_wc &wc, bool vanishing);
	bool all_ok_since_warmup() const;
	bool all_ended() const;
	void verdict(VanishQp &q);
	void expect_flush_after(VanishQp &q);

	Session &s_;
	bool requester_ = false;
	uint32_t depth_ = 1, slot_ = 0;
	Buffer local_, remote_, recv_;
	MrPtr local_mr_, remote_mr_, recv_mr_;
	Cq scq_, rcq_;
	std::vector<VanishQp> qps_;
	RemoteMr peer_;
	uint64_t receives_ = 0;
	int64_t worst_ms_ = 0;
};

bool Vanish::make_qp(Kind k)
{
	Rng rng(stream_key(s_.opt.seed, Stream::local, 0x2000 + unsigned(k), s_.client));
	std::vector<RemoteMr> mrs = {{remote_.addr(), remote_mr_->rkey, remote_.size()}}, theirs;
	ibv_qp_cap cap{};
	QpEnd mine, peer;
	QpParams qpp;
	VanishQp q;
	std::string why;

	cap.max_send_wr = depth_ + 1;
	cap.max_recv_wr = kRecvs + 1;
	cap.max_send_sge = 1;
	cap.max_recv_sge = 1;
	q.kind = k;
	q.qp = create_qp(s_.dev, scq_, rcq_, IBV_QPT_RC, cap, nullptr, &why);
	if (!q.qp)
		return s_.give_up(why);
	mine.qpn = q.qp->qp_num;
	mine.psn = pick_psn(rng);
	mine.gid = s_.dev.gid;
	if (!s_.exchange_qp(mine, mrs, &peer, &theirs, &why))
		return s_.give_up(why);
	if (theirs.empty() || theirs[0].len < size_t(depth_) * slot_ + kWordRoom)
		return s_.give_up("the peer's memory region is too small for this run");
	peer_ = theirs[0];
	qpp.path_mtu = s_.path_mtu;
	qpp.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	             (s_.atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	qpp.timeout = s_.opt.ack_timeout;
	qpp.retry_cnt = s_.opt.retry_cnt;
	qpp.max_rd_atomic = s_.rd_atomic();
	qpp.max_dest_rd_atomic = s_.dest_rd_atomic();
	if (!connect_qp(q.qp.get(), s_.dev, qpp, mine, peer, &why))
		return s_.give_up(why);
	log().info("%s QP: qpn 0x%06x psn 0x%06x -> qpn 0x%06x psn 0x%06x", q.name(), mine.qpn,
	           mine.psn, peer.qpn, peer.psn);
	qps_.push_back(std::move(q));
	return true;
}

bool Vanish::setup()
{
	ibv_context *ctx = s_.dev.ctx.get();
	ibv_pd *pd = s_.dev.pd.get();
	const unsigned kinds = s_.atomics ? kKinds : kKinds - 1;
	std::string why;

	requester_ = (s_.opt.directions == kClientRequests) == s_.client;
	depth_ = std::clamp<uint32_t>(s_.opt.depth, 1, kMaxDepth);
	slot_ = 2 * s_.path_mtu;
	if (!local_.alloc(size_t(kKinds) * depth_ * slot_, &why) ||
	    !remote_.alloc(size_t(depth_) * slot_ + kWordRoom, &why) ||
	    !recv_.alloc(size_t(kRecvs) * kSendBytes, &why))
		return s_.give_up(why);
	local_mr_ = reg_mr(pd, local_, IBV_ACCESS_LOCAL_WRITE, &why);
	if (local_mr_)
		remote_mr_ =
		    reg_mr(pd, remote_,
		           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		               IBV_ACCESS_REMOTE_READ | (s_.atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0),
		           &why);
	if (remote_mr_)
		recv_mr_ = reg_mr(pd, recv_, IBV_ACCESS_LOCAL_WRITE, &why);
	if (!recv_mr_)
		return s_.give_up(why);
	if (!scq_.create(ctx, int(kKinds * (depth_ + 1)) * 2 + 16, &why) ||
	    !rcq_.create(ctx, int(kRecvs) * 2 + 16, &why))
		return s_.give_up(why);
	if (!s_.atomics)
		log().info("no FETCH_AND_ADD QP: a device has atomic_cap ATOMIC_NONE");
	for (unsigned k = 0; k < kinds; k++)
		if (!make_qp(Kind(k)))
			return false;
	if (!requester_)
		for (uint32_t slot = 0; slot < kRecvs; slot++)
			if (!post_recv(slot))
				return false;
	return true;
}

bool Vanish::post(VanishQp &q)
{
	const uint32_t idx = uint32_t(q.posted % depth_);
	ibv_sge sge = {local_.addr() + (size_t(q.kind) * depth_ + idx) * slot_, slot_,
	               local_mr_->lkey};
	ibv_send_wr wr{}, *bad = nullptr;

	wr.wr_id = q.posted;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	switch (q.kind) {
	case Kind::write:
	case Kind::read:
		wr.opcode = q.kind == Kind::write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = peer_.addr + uint64_t(idx) * slot_;
		wr.wr.rdma.rkey = peer_.rkey;
		break;
	case Kind::send:
		wr.opcode = IBV_WR_SEND;
		sge.length = kSendBytes;
		break;
	default:
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		sge.length = 8;
		wr.wr.atomic.remote_addr = peer_.addr + peer_.len - 8;
		wr.wr.atomic.rkey = peer_.rkey;
		wr.wr.atomic.compare_add = 1;
		break;
	}
	if (int err = ibv_post_send(q.qp.get(), &wr, &bad)) {
		log().fail("%s QP: ibv_post_send of WR %" PRIu64 ": %s", q.name(), q.posted,
		           std::strerror(err));
		return false;
	}
	q.posted++;
	return true;
}

bool Vanish::post_recv(uint32_t slot)
{
	ibv_sge sge = {recv_.addr() + size_t(slot) * kSendBytes, kSendBytes, recv_mr_->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;

	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	for (VanishQp &q : qps_) {
		if (q.kind != Kind::send)
			continue;
		if (int err = ibv_post_recv(q.qp.get(), &wr, &bad)) {
			log().fail("SEND QP: ibv_post_recv: %s", std::strerror(err));
			return false;
		}
	}
	return true;
}

VanishQp *Vanish::find(uint32_t qpn)
{
	for (VanishQp &q : qps_)
		if (q.qp->qp_num == qpn)
			return &q;
	return nullptr;
}

/* One send completion: in order, successes only before the first error. */
void Vanish::account(const ibv_wc &wc, bool vanishing)
{
	VanishQp *q = find(wc.qp_num);

	if (!q) {
		log().fail("completion for unknown qpn 0x%x (wr_id %" PRIu64 ", %s)", wc.qp_num,
		           wc.wr_id, wc_status_name(wc.status));
		return;
	}
	if (wc.wr_id != q->done)
		log().fail("%s QP: completion of WR %" PRIu64 " (%s), want WR %" PRIu64
		           " (completions in posting order)",
		           q->name(), wc.wr_id, wc_status_name(wc.status), q->done);
	q->done++;
	if (wc.status == IBV_WC_SUCCESS) {
		if (q->err >= 0)
			log().fail("%s QP: WR %" PRIu64 " succeeded after %s", q->name(), wc.wr_id,
			           wc_status_name(q->err));
		if (wc.opcode != kKindWc[unsigned(q->kind)])
			log().fail("%s QP: completion opcode %s", q->name(),
			           wc_opcode_name(wc.opcode));
		q->ok++;
		q->last_ok_ms = now_ms();
	} else if (q->err < 0) {
		q->err = wc.status;
		q->err_ms = now_ms();
		if (!vanishing)
			log().fail("%s QP: WR %" PRIu64 " completed with %s before the peer was "
			           "asked to vanish",
			           q->name(), wc.wr_id, wc_status_name(wc.status));
	} else if (wc.status == IBV_WC_WR_FLUSH_ERR) {
		q->flushed++;
	} else {
		log().fail("%s QP: WR %" PRIu64 " completed with %s after %s, want "
		           "IBV_WC_WR_FLUSH_ERR",
		           q->name(), wc.wr_id, wc_status_name(wc.status), wc_status_name(q->err));
	}
}

bool Vanish::all_ok_since_warmup() const
{
	return std::all_of(qps_.begin(), qps_.end(),
	                   [](const VanishQp &q) { return q.ok >= kWarmup; });
}

bool Vanish::all_ended() const
{
	return std::all_of(qps_.begin(), qps_.end(),
	                   [](const VanishQp &q) { return q.err >= 0 && q.done == q.posted; });
}

/* A WR posted to the QP in ERR completes with IBV_WC_WR_FLUSH_ERR. */
void Vanish::expect_flush_after(VanishQp &q)
{
	const int64_t deadline = now_ms() + 2000;
	const uint64_t before = q.flushed;

	if (!post(q))
		return;
	while (q.done < q.posted && now_ms() < deadline) {
		ibv_wc wc[8];
		const int n = scq_.wait(wc, 8, deadline);

		for (int k = 0; k < n; k++)
			account(wc[k], true);
	}
	if (q.flushed == before)
		log().fail("%s QP: a WR posted in ERR did not complete with IBV_WC_WR_FLUSH_ERR "
		           "within 2 s",
		           q.name());
}

void Vanish::verdict(VanishQp &q)
{
	const double want = expected_ms();
	const double least = 0.9 * want, most = 4 * want + 1000;
	const int64_t ms = q.err_ms - q.last_ok_ms;
	const int64_t state_deadline = now_ms() + 1000;
	int state = query_qp_state(q.qp.get());

	if (q.err < 0) {
		log().fail("%s QP: no error completion (%" PRIu64 " WRs posted, %" PRIu64
		           " completed, the last success %" PRId64 " ms ago)",
		           q.name(), q.posted, q.done, now_ms() - q.last_ok_ms);
		return;
	}
	if (q.err != IBV_WC_RETRY_EXC_ERR)
		log().fail("%s QP: the first error was %s, want IBV_WC_RETRY_EXC_ERR", q.name(),
		           wc_status_name(q.err));
	if (q.done != q.posted)
		log().fail("%s QP: %" PRIu64 " of %" PRIu64 " WRs completed", q.name(), q.done,
		           q.posted);
	while (state != IBV_QPS_ERR && now_ms() < state_deadline) {
		usleep(10 * 1000);
		state = query_qp_state(q.qp.get());
	}
	if (state != IBV_QPS_ERR)
		log().fail("%s QP is in %s, want ERR", q.name(), qp_state_name(state));
	expect_flush_after(q);
	if (ms < least || ms > most)
		log().fail("%s QP: %s %" PRId64 " ms after its last success, want %.0f..%.0f ms "
		           "((retry_cnt %u + 1) x %.1f ms = %.1f ms)",
		           q.name(), wc_status_name(q.err), ms, least, most, s_.opt.retry_cnt,
		           want / (s_.opt.retry_cnt + 1), want);
	else
		log().info("%s QP: %s %" PRId64 " ms after its last success ((retry_cnt %u + 1) x "
		           "%.1f ms = %.1f ms); %" PRIu64 " WRs succeeded, %" PRIu64 " flushed",
		           q.name(), wc_status_name(q.err), ms, s_.opt.retry_cnt,
		           want / (s_.opt.retry_cnt + 1), want, q.ok, q.flushed);
	std::printf("vanish-qp kind=%s error_after_ms=%" PRId64 " expected_ms=%.1f ok=%" PRIu64
	            " flushed=%" PRIu64 "\n",
	            kKindTokens[unsigned(q.kind)], ms, want, q.ok, q.flushed);
	worst_ms_ = std::max(worst_ms_, ms);
}

bool Vanish::requester()
{
	const int64_t start = now_ms();
	const int64_t limit_ms = int64_t(4 * expected_ms()) + 10000;
	int64_t asked = 0;
	std::vector<uint8_t> buf;
	std::string why;

	if (!s_.chan.recv(MsgType::ready, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(why);
	log().info("%zu QPs, %u WRs in flight each, timeout %u (%.1f ms), retry_cnt %u: the "
	           "error is due %.1f ms after the last success",
	           qps_.size(), depth_, s_.opt.ack_timeout, expected_ms() / (s_.opt.retry_cnt + 1),
	           s_.opt.retry_cnt, expected_ms());
	for (;;) {
		ibv_wc wc[32];

		for (VanishQp &q : qps_)
			while (q.err < 0 && q.posted - q.done < depth_)
				if (!post(q))
					return false;
		const int n = scq_.wait(wc, 32, now_ms() + 100);

		if (n < 0) {
			log().fail("ibv_poll_cq on the send CQ failed");
			return false;
		}
		for (int k = 0; k < n; k++)
			account(wc[k], asked != 0);
		if (!asked && all_ok_since_warmup()) {
			if (!s_.chan.send(MsgType::vanish, &why))
				return s_.give_up(why);
			asked = now_ms();
			log().info("every QP completed %" PRIu64 " WRs: asked the %s to vanish",
			           kWarmup, s_.peer_side());
		}
		if (!asked && now_ms() - start > int64_t(s_.opt.timeout) * 1000) {
			log().fail("the QPs did not complete %" PRIu64 " WRs each within %u s",
			           kWarmup, s_.opt.timeout);
			return false;
		}
		if (all_ended())
			break;
		if (asked && now_ms() - asked > limit_ms) {
			log().fail("%" PRId64
			           " ms after the peer was asked to vanish, not every QP "
			           "has failed and flushed its WRs",
			           limit_ms);
			break;
		}
	}
	for (VanishQp &q : qps_)
		verdict(q);
	return true;
}

bool Vanish::responder()
{
	int64_t asked = 0;
	std::vector<uint8_t> buf;
	std::string why;

	if (!s_.chan.send(MsgType::ready, &why))
		return s_.give_up(why);
	for (;;) {
		ibv_wc wc[32];
		const int n = rcq_.wait(wc, 32, now_ms() + (asked ? 100 : 10));

		for (int k = 0; k < n; k++) {
			if (wc[k].status == IBV_WC_SUCCESS) {
				receives_++;
				if (wc[k].byte_len != kSendBytes)
					log().fail("receive of %u bytes, want %u", wc[k].byte_len,
					           kSendBytes);
				post_recv(uint32_t(wc[k].wr_id));
			} else if (!asked) {
				log().fail("receive completed with %s before vanishing",
				           wc_status_name(wc[k].status));
			}
		}
		if (!asked && s_.chan.readable(0)) {
			if (!s_.chan.recv(MsgType::vanish, &buf, 1000, &why))
				return s_.give_up(why);
			asked = now_ms();
			std::printf("sroce-integrity vanish: vanishing (after %" PRIu64
			            " receives)\n",
			            receives_);
			std::fflush(stdout);
		}
		if (asked && now_ms() - asked > int64_t(s_.opt.timeout) * 1000)
			return true;
	}
}

} // namespace

int run_vanish(const Options &opt)
{
	const int64_t started = now_ms();
	Session s;
	std::string why;

	if (!s.start(opt, &why)) {
		log().fail("%s", why.c_str());
		std::printf("sroce-integrity vanish: FAIL side=%s: %s\n", s.side(), why.c_str());
		return 1;
	}
	Vanish v(s);
	const bool completed = v.setup() && v.run();
	const bool pass = completed && log().failures() == 0;

	std::printf("sroce-integrity vanish: %s side=%s role=%s dev=%s mtu=%u qps=%zu timeout=%u "
	            "retry_cnt=%u expected_ms=%.1f worst_ms=%" PRId64 " receives=%" PRIu64
	            " errors=%" PRIu64 " time=%.1fs\n",
	            pass ? "PASS" : "FAIL", s.side(), v.is_requester() ? "requester" : "responder",
	            s.dev.name.c_str(), s.path_mtu, v.qps(), s.opt.ack_timeout, s.opt.retry_cnt,
	            v.expected_ms(), v.worst_ms(), v.receives(), log().failures(),
	            double(now_ms() - started) / 1000.0);
	std::fflush(stdout);
	return pass ? 0 : 1;
}

} // namespace integ
