// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check srq DEV [--gid-index I]: the SRQ verbs that
 * ibv_srq_pingpong does not reach, on one device over a loopback RC path.
 *
 *   - create and query (granted sizes at least what was asked, limit 0);
 *   - IBV_SRQ_LIMIT: arming above max_wr fails with EINVAL; armed at 8
 *     with 16 receives posted, the ninth message consumed raises exactly
 *     one IBV_EVENT_SRQ_LIMIT_REACHED for this SRQ, and the limit reads
 *     back as 0 (disarmed);
 *   - IBV_SRQ_MAX_WR (the device advertises IBV_DEVICE_SRQ_RESIZE):
 *     growing the SRQ while 7 receives are posted keeps
 *     them (their wr_ids and buffers come back in order), and the new
 *     size takes more receives than the old one held; shrinking below
 *     what is posted fails with EINVAL;
 *   - every message's payload is checked byte for byte;
 *   - a UD QP on the same SRQ receives a datagram (GRH area, IBV_WC_GRH,
 *     source QP and payload checked) from the next SRQ receive;
 *   - the QP attached to the SRQ reports max_recv_wr 0 and rejects
 *     ibv_post_recv; destroying the SRQ while a QP uses it fails (EBUSY),
 *     and succeeds once the QP is gone.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kMsg = 256;  /* bytes per message */
constexpr uint32_t kSlots = 64; /* receive buffers */
constexpr uint32_t kFirst = 16; /* receives posted before arming */
constexpr uint32_t kLimit = 8;  /* armed SRQ limit */
constexpr int kTimeoutMs = 5000;

class SrqRun
{
      public:
	SrqRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("srq") {}
	int run();

      private:
	bool setup();
	bool post_recvs(uint32_t first, uint32_t count);
	/* Sends messages @first .. @first + @count - 1 and checks their arrival. */
	bool exchange(uint32_t first, uint32_t count, const char *what);
	void check_limit_event();
	void check_resize();
	void check_ud();

	uint8_t fill(uint32_t msg, uint32_t i) const { return uint8_t(msg * 131 + i * 7 + 1); }
	uint8_t *send_buf(uint32_t msg) { return buf_.data() + (msg % kSlots) * kMsg; }
	uint8_t *recv_buf(uint32_t slot) { return buf_.data() + (kSlots + slot) * kMsg; }

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	PdPtr pd_;
	CqPtr cq_;
	MrPtr mr_;
	SrqPtr srq_;
	QpPtr sender_, receiver_;
	std::vector<uint8_t> buf_;
	uint32_t srq_wr_ = 0;
	uint32_t next_recv_ = 0; /* wr_id of the next receive posted */
	uint32_t next_msg_ = 0;  /* the message each arriving receive must hold */
};

bool SrqRun::setup()
{
	buf_.assign(size_t(2) * kSlots * kMsg, 0);
	pd_.reset(ibv_alloc_pd(ctx_));
	cq_.reset(pd_ ? ibv_create_cq(ctx_, 256, nullptr, nullptr, 0) : nullptr);
	mr_.reset(cq_ ? ibv_reg_mr(pd_.get(), buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE)
	              : nullptr);
	if (!r_.check(mr_ != nullptr, "setup", "PD, CQ and MR (%s)",
	              mr_ ? "ok" : errno_name(null_errno()).c_str()))
		return false;

	ibv_srq_init_attr sia{};
	sia.attr.max_wr = 32;
	sia.attr.max_sge = 1;
	srq_.reset(ibv_create_srq(pd_.get(), &sia));
	if (!r_.check(srq_ != nullptr, "create", "ibv_create_srq max_wr 32 (%s)",
	              srq_ ? "ok" : errno_name(null_errno()).c_str()))
		return false;
	r_.check(sia.attr.max_wr >= 32 && sia.attr.max_sge >= 1, "create.granted",
	         "granted max_wr %u >= 32, max_sge %u >= 1", sia.attr.max_wr, sia.attr.max_sge);
	ibv_srq_attr qa{};
	if (r_.expect_ok("query", ibv_query_srq(srq_.get(), &qa), "ibv_query_srq"))
		r_.check(qa.max_wr == sia.attr.max_wr && qa.srq_limit == 0, "query.values",
		         "query: max_wr %u (granted %u), srq_limit %u (0)", qa.max_wr,
		         sia.attr.max_wr, qa.srq_limit);
	srq_wr_ = qa.max_wr;

	ibv_qp_init_attr qia{};
	qia.send_cq = cq_.get();
	qia.recv_cq = cq_.get();
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = 64;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_wr = 1;
	qia.cap.max_recv_sge = 1;
	sender_.reset(ibv_create_qp(pd_.get(), &qia));
	qia.srq = srq_.get();
	receiver_.reset(sender_ ? ibv_create_qp(pd_.get(), &qia) : nullptr);
	if (!r_.check(receiver_ != nullptr, "qp", "sender QP and a QP on the SRQ (%s)",
	              receiver_ ? "ok" : errno_name(null_errno()).c_str()))
		return false;
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	if (r_.expect_ok("qp.query", ibv_query_qp(receiver_.get(), &attr, IBV_QP_CAP, &init),
	                 "ibv_query_qp"))
		r_.check(init.srq == srq_.get() && attr.cap.max_recv_wr == 0, "qp.no_rq",
		         "the SRQ QP reports its SRQ and max_recv_wr %u (0)", attr.cap.max_recv_wr);

	ibv_qp *pair[2] = {sender_.get(), receiver_.get()};
	for (int i = 0; i < 2; i++) {
		const char *stage = "";
		int err =
		    connect_rc(pair[i], gid_, pair[1 - i]->qp_num, IBV_ACCESS_LOCAL_WRITE, &stage);
		if (err)
			return r_.check(false, "qp.connect", "%s: %s", stage,
			                errno_name(err).c_str());
	}
	r_.pass("qp.connect", "sender -> SRQ QP over the loopback path");

	ibv_sge sge{reinterpret_cast<uintptr_t>(recv_buf(0)), kMsg, mr_->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	r_.expect_errno("qp.post_recv", ibv_post_recv(receiver_.get(), &wr, &bad), EINVAL,
	                "ibv_post_recv on a QP that uses an SRQ");
	return true;
}

bool SrqRun::post_recvs(uint32_t first, uint32_t count)
{
	for (uint32_t k = 0; k < count; k++) {
		const uint32_t id = first + k;
		ibv_sge sge{reinterpret_cast<uintptr_t>(recv_buf(id % kSlots)), kMsg, mr_->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;

		memset(recv_buf(id % kSlots), 0, kMsg);
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (int err = ibv_post_srq_recv(srq_.get(), &wr, &bad))
			return r_.check(false, "post_srq_recv", "receive %u: %s", id,
			                errno_name(err).c_str());
	}
	next_recv_ = first + count;
	return true;
}

bool SrqRun::exchange(uint32_t first, uint32_t count, const char *what)
{
	const std::string name = std::string("traffic.") + what;

	for (uint32_t k = 0; k < count; k++) {
		const uint32_t msg = first + k;
		uint8_t *p = send_buf(msg);
		for (uint32_t i = 0; i < kMsg; i++)
			p[i] = fill(msg, i);
		ibv_sge sge{reinterpret_cast<uintptr_t>(p), kMsg, mr_->lkey};
		ibv_send_wr wr{};
		ibv_send_wr *bad = nullptr;
		wr.wr_id = 1000000 + msg;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (int err = ibv_post_send(sender_.get(), &wr, &bad))
			return r_.check(false, name, "ibv_post_send of message %u: %s", msg,
			                errno_name(err).c_str());
		/* One at a time: the receive completion order is then known. */
		ibv_wc wc[2];
		int got = poll_cq_for(cq_.get(), wc, 2, kTimeoutMs);
		if (got != 2)
			return r_.check(false, name, "message %u: %d of 2 completions", msg, got);
		for (const ibv_wc &c : wc) {
			if (c.status != IBV_WC_SUCCESS)
				return r_.check(false, name, "message %u: %s (wr_id %llu)", msg,
				                ibv_wc_status_str(c.status),
				                static_cast<unsigned long long>(c.wr_id));
			if (c.opcode != IBV_WC_RECV)
				continue;
			const uint32_t id = uint32_t(c.wr_id);
			if (id != next_msg_ || c.byte_len != kMsg || c.qp_num != receiver_->qp_num)
				return r_.check(
				    false, name,
				    "message %u landed in receive %u (want %u), %u bytes, "
				    "qp %u",
				    msg, id, next_msg_, c.byte_len, c.qp_num);
			const uint8_t *q = recv_buf(id % kSlots);
			for (uint32_t i = 0; i < kMsg; i++)
				if (q[i] != fill(msg, i))
					return r_.check(false, name,
					                "message %u byte %u: %#x, want %#x", msg, i,
					                q[i], fill(msg, i));
			next_msg_++;
		}
	}
	r_.pass(name, "%u messages through the SRQ, every byte checked", count);
	return true;
}

void SrqRun::check_limit_event()
{
	ibv_srq_attr a{};
	ibv_async_event ev{};

	a.srq_limit = srq_wr_ + 1;
	r_.expect_errno("limit.too_big", ibv_modify_srq(srq_.get(), &a, IBV_SRQ_LIMIT), EINVAL,
	                "srq_limit above max_wr");
	a.srq_limit = kLimit;
	if (!r_.expect_ok("limit.arm", ibv_modify_srq(srq_.get(), &a, IBV_SRQ_LIMIT),
	                  "ibv_modify_srq IBV_SRQ_LIMIT 8"))
		return;
	/* 16 posted: 8 messages leave 8, not below the limit: no event. */
	if (!exchange(next_msg_, kFirst - kLimit, "above_limit"))
		return;
	r_.check(wait_async_event(ctx_, 300, &ev) == 0, "limit.quiet",
	         "no async event while %u receives remain", kLimit);
	if (!exchange(next_msg_, 1, "below_limit"))
		return;
	int got = wait_async_event(ctx_, kTimeoutMs, &ev);
	if (!r_.check(got == 1, "limit.event", "an async event after the ninth message (%s)",
	              got == 1 ? ibv_event_type_str(ev.event_type) : "none"))
		return;
	r_.check(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq_.get(),
	         "limit.event_type", "%s for this SRQ", ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	r_.check(wait_async_event(ctx_, 300, &ev) == 0, "limit.once", "the event came once");
	if (r_.expect_ok("limit.query", ibv_query_srq(srq_.get(), &a), "ibv_query_srq"))
		r_.check(a.srq_limit == 0, "limit.disarmed",
		         "srq_limit reads %u after the event (0)", a.srq_limit);
}

void SrqRun::check_resize()
{
	const uint32_t posted = next_recv_ - next_msg_;
	ibv_srq_attr a{};
	ibv_device_attr da{};

	/* What it does, it says (IB_DEVICE_SRQ_RESIZE, as rxe does). */
	if (r_.expect_ok("resize.advertised.query", ibv_query_device(ctx_, &da),
	                 "ibv_query_device"))
		r_.check(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE, "resize.advertised",
		         "device_cap_flags 0x%08x has IBV_DEVICE_SRQ_RESIZE", da.device_cap_flags);
	a.max_wr = (posted + 1) / 2; /* rounded up to a power of two: < posted */
	if (posted > 2)
		r_.expect_errno("resize.too_small", ibv_modify_srq(srq_.get(), &a, IBV_SRQ_MAX_WR),
		                EINVAL, "max_wr below the receives posted");
	a.max_wr = 2 * srq_wr_;
	if (!r_.expect_ok("resize.grow", ibv_modify_srq(srq_.get(), &a, IBV_SRQ_MAX_WR),
	                  "ibv_modify_srq IBV_SRQ_MAX_WR (grow, receives posted)"))
		return;
	ibv_srq_attr q{};
	if (!r_.expect_ok("resize.query", ibv_query_srq(srq_.get(), &q), "ibv_query_srq"))
		return;
	r_.check(q.max_wr >= 2 * srq_wr_, "resize.size", "max_wr %u after growing from %u",
	         q.max_wr, srq_wr_);
	/* The receives posted before the resize are still there, in order. */
	if (!exchange(next_msg_, posted, "kept_receives"))
		return;
	/* More than the old ring could hold. */
	const uint32_t more = srq_wr_ + 8 <= kSlots ? srq_wr_ + 8 : kSlots;
	if (post_recvs(next_recv_, more))
		exchange(next_msg_, more, "after_resize");
}

/* A UD QP shares the SRQ with the RC one: a datagram takes its receive. */
void SrqRun::check_ud()
{
	constexpr uint32_t kGrh = 40, kLen = 64;
	ibv_qp_init_attr qia{};
	ibv_wc wc[2];

	qia.send_cq = cq_.get();
	qia.recv_cq = cq_.get();
	qia.qp_type = IBV_QPT_UD;
	qia.cap.max_send_wr = 4;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_wr = 1;
	qia.cap.max_recv_sge = 1;
	QpPtr from(ibv_create_qp(pd_.get(), &qia));
	qia.srq = srq_.get();
	QpPtr to(from ? ibv_create_qp(pd_.get(), &qia) : nullptr);
	ibv_ah_attr aa = loopback_ah(gid_);
	AhPtr ah(to ? ibv_create_ah(pd_.get(), &aa) : nullptr);
	if (!r_.check(ah != nullptr, "ud.setup", "a UD QP on the SRQ, a UD sender, an AH (%s)",
	              ah ? "ok" : errno_name(null_errno()).c_str()))
		return;
	for (ibv_qp *qp : {from.get(), to.get()}) {
		QpTransition t = to_init(IBV_QPT_UD, 0);
		if (ibv_modify_qp(qp, &t.attr, t.mask))
			return (void)r_.check(false, "ud.setup", "INIT: %s",
			                      errno_name(errno).c_str());
		t = to_rtr(IBV_QPT_UD, gid_, 0);
		if (ibv_modify_qp(qp, &t.attr, t.mask))
			return (void)r_.check(false, "ud.setup", "RTR: %s",
			                      errno_name(errno).c_str());
		t = to_rts(IBV_QPT_UD);
		if (ibv_modify_qp(qp, &t.attr, t.mask))
			return (void)r_.check(false, "ud.setup", "RTS: %s",
			                      errno_name(errno).c_str());
	}
	const uint32_t id = next_recv_;
	if (!post_recvs(id, 1))
		return;
	uint8_t *p = send_buf(id);
	for (uint32_t i = 0; i < kLen; i++)
		p[i] = fill(id, i);
	ibv_sge sge{reinterpret_cast<uintptr_t>(p), kLen, mr_->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = 2000000;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah.get();
	wr.wr.ud.remote_qpn = to->qp_num;
	wr.wr.ud.remote_qkey = kQkey;
	if (int err = ibv_post_send(from.get(), &wr, &bad))
		return (void)r_.check(false, "ud.send", "ibv_post_send: %s",
		                      errno_name(err).c_str());
	if (poll_cq_for(cq_.get(), wc, 2, kTimeoutMs) != 2)
		return (void)r_.check(false, "ud.recv", "no send and receive completion");
	for (const ibv_wc &c : wc) {
		if (c.opcode != IBV_WC_RECV)
			continue;
		const uint8_t *q = recv_buf(id % kSlots) + kGrh;
		bool same = true;
		for (uint32_t i = 0; i < kLen; i++)
			same = same && q[i] == fill(id, i);
		r_.check(c.status == IBV_WC_SUCCESS && c.wr_id == id && c.qp_num == to->qp_num &&
		             c.src_qp == from->qp_num && (c.wc_flags & IBV_WC_GRH) &&
		             c.byte_len == kGrh + kLen && same,
		         "ud.recv",
		         "datagram into SRQ receive %u: %s, wr_id %llu, qp %u from %u, %u bytes, "
		         "GRH %s, payload %s",
		         id, ibv_wc_status_str(c.status), static_cast<unsigned long long>(c.wr_id),
		         c.qp_num, c.src_qp, c.byte_len, (c.wc_flags & IBV_WC_GRH) ? "yes" : "no",
		         same ? "intact" : "wrong");
		next_msg_ = id + 1;
	}
}

int SrqRun::run()
{
	if (setup() && post_recvs(0, kFirst)) {
		check_limit_event();
		check_resize();
		check_ud();
		r_.expect_errno("destroy.busy", ibv_destroy_srq(srq_.get()), EBUSY,
		                "ibv_destroy_srq while a QP uses it");
		receiver_.reset();
		r_.expect_ok("destroy", ibv_destroy_srq(srq_.release()),
		             "ibv_destroy_srq after the QP");
	}
	return r_.finish();
}

} /* namespace */

int cmd_srq(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("srq", argc, argv, &t, &status))
		return status;
	SrqRun run(t.ctx.get(), t.gid);
	return run.run();
}

} /* namespace vc */
