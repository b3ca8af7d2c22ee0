// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check qkey DEV [--gid-index I] [--no-own-qkey]: UD Q_Key rules (IBA 10.2.5,
 * C10-15) between two UD QPs of one device over a loopback address:
 *
 *   - a SEND whose Q_Key matches the receiver's arrives (payload checked);
 *   - a SEND with any other Q_Key is dropped silently: no completion on
 *     the receiver within 300 ms, the receive stays posted and takes the
 *     next good message, and the sender's completion is still a success
 *     (UD has no acknowledgements); the device's drop_bad_qkey counter (if
 *     it has one) rises by one per dropped message;
 *   - a work request Q_Key with the high-order bit set means "the sending
 *     QP's own Q_Key": it arrives when the sender's Q_Key is the
 *     receiver's and is dropped when it is not;
 *   - setting a QP's Q_Key to a controlled value (high bit set) needs
 *     CAP_NET_RAW: it succeeds for root and fails with EPERM otherwise
 *     (ib_uverbs enforces it; the check reports which case it ran).
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kGrh = 40;
constexpr uint32_t kMsg = 64;
constexpr uint32_t kQkeyRecv = 0x1234;
constexpr uint32_t kQkeyOther = 0x5678;
constexpr uint32_t kPrivileged = 0x80000000u;

class QkeyRun
{
      public:
	QkeyRun(ibv_context *ctx, const char *dev, const GidChoice &gid, bool own_qkey)
	    : ctx_(ctx), dev_(dev), gid_(gid), own_qkey_(own_qkey), r_("qkey")
	{
	}
	int run();

      private:
	bool setup();
	QpPtr make_ud(uint32_t qkey);
	bool set_qkey(ibv_qp *qp, uint32_t qkey);
	bool post_recv();
	/* Sends one message with WR Q_Key @wr_qkey; true if it arrived. */
	bool send(uint32_t wr_qkey, uint32_t tag, bool *arrived);
	long drop_counter() const;

	ibv_context *ctx_;
	std::string dev_;
	GidChoice gid_;
	bool own_qkey_;
	Report r_;
	PdPtr pd_;
	CqPtr scq_, rcq_;
	MrPtr mr_;
	AhPtr ah_;
	QpPtr sender_, receiver_;
	std::vector<uint8_t> buf_;
	bool recv_posted_ = false;
};

QpPtr QkeyRun::make_ud(uint32_t qkey)
{
	ibv_qp_init_attr ia{};

	ia.send_cq = scq_.get();
	ia.recv_cq = rcq_.get();
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	QpPtr qp(ibv_create_qp(pd_.get(), &ia));
	if (!qp)
		return qp;
	QpTransition t = to_init(IBV_QPT_UD, 0);
	t.attr.qkey = qkey;
	if (ibv_modify_qp(qp.get(), &t.attr, t.mask))
		return nullptr;
	t = to_rtr(IBV_QPT_UD, gid_, 0);
	if (ibv_modify_qp(qp.get(), &t.attr, t.mask))
		return nullptr;
	t = to_rts(IBV_QPT_UD);
	if (ibv_modify_qp(qp.get(), &t.attr, t.mask))
		return nullptr;
	return qp;
}

bool QkeyRun::set_qkey(ibv_qp *qp, uint32_t qkey)
{
	ibv_qp_attr a{};

	a.qkey = qkey;
	return ibv_modify_qp(qp, &a, IBV_QP_QKEY) == 0;
}

bool QkeyRun::setup()
{
	buf_.assign(2 * (kGrh + kMsg), 0);
	pd_.reset(ibv_alloc_pd(ctx_));
	scq_.reset(pd_ ? ibv_create_cq(ctx_, 16, nullptr, nullptr, 0) : nullptr);
	rcq_.reset(scq_ ? ibv_create_cq(ctx_, 16, nullptr, nullptr, 0) : nullptr);
	mr_.reset(rcq_ ? ibv_reg_mr(pd_.get(), buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE)
	               : nullptr);
	if (!r_.check(mr_ != nullptr, "setup", "PD, CQs and MR (%s)",
	              mr_ ? "ok" : errno_name(null_errno()).c_str()))
		return false;
	ibv_ah_attr aa = loopback_ah(gid_);
	ah_.reset(ibv_create_ah(pd_.get(), &aa));
	sender_ = make_ud(kQkeyOther);
	receiver_ = make_ud(kQkeyRecv);
	return r_.check(ah_ && sender_ && receiver_, "setup.qps",
	                "two UD QPs at RTS and an AH to our own GID %s",
	                gid_text(gid_.gid).c_str());
}

bool QkeyRun::post_recv()
{
	if (recv_posted_)
		return true;
	memset(buf_.data(), 0, kGrh + kMsg);
	ibv_sge sge{reinterpret_cast<uintptr_t>(buf_.data()), kGrh + kMsg, mr_->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (int err = ibv_post_recv(receiver_.get(), &wr, &bad))
		return r_.check(false, "post_recv", "ibv_post_recv: %s", errno_name(err).c_str());
	recv_posted_ = true;
	return true;
}

bool QkeyRun::send(uint32_t wr_qkey, uint32_t tag, bool *arrived)
{
	uint8_t *p = buf_.data() + kGrh + kMsg;
	ibv_wc wc{};

	*arrived = false;
	if (!post_recv())
		return false;
	for (uint32_t i = 0; i < kMsg; i++)
		p[i] = uint8_t(tag + i);
	ibv_sge sge{reinterpret_cast<uintptr_t>(p), kMsg, mr_->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = tag;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah_.get();
	wr.wr.ud.remote_qpn = receiver_->qp_num;
	wr.wr.ud.remote_qkey = wr_qkey;
	if (int err = ibv_post_send(sender_.get(), &wr, &bad))
		return r_.check(false, "send", "ibv_post_send: %s", errno_name(err).c_str());
	if (poll_cq_for(scq_.get(), &wc, 1, 5000) != 1 || wc.status != IBV_WC_SUCCESS)
		return r_.check(false, "send", "send completion: %s",
		                wc.status ? ibv_wc_status_str(wc.status) : "none");
	if (poll_cq_for(rcq_.get(), &wc, 1, 300) != 1)
		return true; /* dropped */
	recv_posted_ = false;
	if (wc.status != IBV_WC_SUCCESS || wc.byte_len != kGrh + kMsg ||
	    wc.src_qp != sender_->qp_num)
		return r_.check(false, "recv", "receive: %s, %u bytes from QP %u",
		                ibv_wc_status_str(wc.status), wc.byte_len, wc.src_qp);
	if (memcmp(buf_.data() + kGrh, p, kMsg) != 0)
		return r_.check(false, "recv", "message %#x arrived with other bytes", tag);
	*arrived = true;
	return true;
}

/* drop_bad_qkey of port 1 (sroce's hw counter), or -1 without one. */
long QkeyRun::drop_counter() const
{
	std::ifstream f("/sys/class/infiniband/" + dev_ + "/ports/1/hw_counters/drop_bad_qkey");
	long v = -1;

	if (!(f >> v))
		return -1;
	return v;
}

int QkeyRun::run()
{
	bool arrived;

	if (!setup())
		return r_.finish();
	if (send(kQkeyRecv, 0x10, &arrived))
		r_.check(arrived, "match",
		         "a SEND with the receiver's Q_Key arrives, bytes checked");
	const long before = drop_counter();
	for (uint32_t k = 0; k < 3; k++) {
		const uint32_t bad_keys[] = {kQkeyOther, kQkeyRecv + 1, 0};
		if (send(bad_keys[k], 0x20 + k, &arrived))
			r_.check(!arrived, "mismatch." + std::to_string(k),
			         "a SEND with Q_Key %#x (receiver's %#x) is dropped", bad_keys[k],
			         kQkeyRecv);
	}
	const long after = drop_counter();
	if (before < 0)
		r_.skip("mismatch.counter", "no drop_bad_qkey counter on %s", dev_.c_str());
	else
		r_.check(after - before == 3, "mismatch.counter",
		         "drop_bad_qkey rose by %ld (3 dropped)", after - before);
	if (send(kQkeyRecv, 0x30, &arrived))
		r_.check(arrived, "match_again",
		         "the receive left posted by the drops takes the next good SEND");

	/* High bit: the sender's own Q_Key (kQkeyOther) does not match... */
	if (!own_qkey_)
		r_.skip("own_qkey", "--no-own-qkey: the device sends WR Q_Keys as they are");
	else if (send(kPrivileged | kQkeyRecv, 0x40, &arrived))
		r_.check(!arrived, "own_qkey.other", "WR Q_Key %#x uses the QP's %#x: dropped",
		         kPrivileged | kQkeyRecv, kQkeyOther);
	/* ...until the sender's QP Q_Key is the receiver's. */
	if (own_qkey_ &&
	    r_.check(set_qkey(sender_.get(), kQkeyRecv), "own_qkey.modify",
	             "sender's Q_Key set to %#x", kQkeyRecv) &&
	    send(kPrivileged, 0x50, &arrived))
		r_.check(arrived, "own_qkey.match", "WR Q_Key %#x uses the QP's %#x: arrives",
		         kPrivileged, kQkeyRecv);

	const bool root = geteuid() == 0;
	ibv_qp_attr a{};
	a.qkey = kPrivileged | 1;
	int ret = ibv_modify_qp(receiver_.get(), &a, IBV_QP_QKEY);
	if (root)
		r_.expect_ok("privileged.root", ret, "a controlled Q_Key (high bit) as root");
	else
		r_.expect_errno("privileged.user", ret, EPERM,
		                "a controlled Q_Key (high bit) without CAP_NET_RAW");
	return r_.finish();
}

} /* namespace */

int cmd_qkey(int argc, char **argv)
{
	Args args;
	std::string why;
	long gid_index;

	if (!args.parse(argc, argv, {{"gid-index", true}, {"no-own-qkey", false}}, &why))
		return usage_error("qkey", why);
	if (args.num_positional() != 1)
		return usage_error("qkey", "expects one device name");
	if (!args.number("gid-index", -1, -1, 65535, &gid_index, &why))
		return usage_error("qkey", why);
	ContextPtr ctx = open_device(args.positional(0), &why);
	GidChoice gid;
	if (!ctx || !pick_gid(ctx.get(), int(gid_index), &gid, &why)) {
		Report r("qkey");
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	QkeyRun run(ctx.get(), args.positional(0), gid, !args.has("no-own-qkey"));
	return run.run();
}

} /* namespace vc */
