// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check spoof --target TDEV --inject IFACE --peer-ip ADDR
 *                        --spoof-ip SADDR --other-ip DADDR:
 * a connected QP takes packets from its peer only. A forged peer
 * (forged_peer.h) at ADDR has a victim RC QP of TDEV connected to it, with
 * receives posted; then, each a SEND ONLY of 64 bytes at the PSN the QP
 * expects:
 *
 *   source   from SADDR (on the subnet, not the peer): no completion
 *            within 500 ms, drop_bad_addr grows by 1
 *   peer     from ADDR: the receive completes, 64 bytes, its payload
 *            (the spoofed one's never lands)
 *   dest     from ADDR to DADDR, another address of TDEV's netdev (not
 *            the QP's source GID): no completion, drop_bad_addr grows
 *   again    from ADDR to the QP's address, the next PSN: completes
 */
#include "commands.h"
#include "forged_peer.h"
#include "report.h"
#include "verbs_util.h"

#include "proto/sroce_opcode.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kLen = 64;

/* The next completion of @cq within @ms: 1, 0 (none) or -1. */
int wait_wc(ibv_cq *cq, int ms, ibv_wc *wc)
{
	for (int i = 0; i < ms; i++) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

class SpoofRun
{
      public:
	SpoofRun(Report &r, ForgedPeer &fp) : r_(r), fp_(fp) {}
	bool setup(std::string *why);
	/* A SEND ONLY at @psn of @fill bytes through @inj; whether it must land. */
	void send_case(const char *name, Injector &inj, uint32_t psn, uint8_t fill, bool lands,
	               const char *what);

      private:
	bool post(uint64_t id);
	Report &r_;
	ForgedPeer &fp_;
	QpPtr qp_;
	std::vector<uint8_t> buf_ = std::vector<uint8_t>(4 * kLen);
	MrPtr mr_;
	uint64_t posted_ = 0;
};

bool SpoofRun::post(uint64_t id)
{
	ibv_sge sge = {reinterpret_cast<uintptr_t>(buf_.data() + (id % 4) * kLen), kLen, mr_->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;

	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp_.get(), &wr, &bad) == 0;
}

bool SpoofRun::setup(std::string *why)
{
	qp_ = fp_.victim(ForgedPeer::Victim{}, why);
	if (!qp_)
		return false;
	mr_.reset(ibv_reg_mr(fp_.pd(), buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE));
	if (!mr_ || !post(0) || !post(1)) {
		*why = "MR or receives: " + errno_name(errno);
		return false;
	}
	posted_ = 2;
	return true;
}

void SpoofRun::send_case(const char *name, Injector &inj, uint32_t psn, uint8_t fill, bool lands,
                         const char *what)
{
	const long drops0 = read_counter(fp_.dev(), "drop_bad_addr");
	sroce_pkt p = fp_.request(SROCE_OP_RC_SEND_ONLY, qp_.get(), psn);

	if (!r_.check(inj.send(inj.frame(p, kLen, fill)), std::string(name) + ".send",
	              "a SEND ONLY %s to QP %u at PSN %#x", what, qp_->qp_num, psn))
		return;
	ibv_wc wc{};
	int n = wait_wc(fp_.cq(), 500, &wc);
	if (!lands) {
		long drops = wait_counter(fp_.dev(), "drop_bad_addr", drops0 + 1);
		r_.check(n == 0 && drops == drops0 + 1, name,
		         "%s: %s; drop_bad_addr %ld -> %ld (want no completion, +1)", what,
		         n ? ibv_wc_status_str(wc.status) : "no completion", drops0, drops);
		return;
	}
	const uint8_t *got = buf_.data() + (wc.wr_id % 4) * kLen;
	r_.check(n == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	             wc.byte_len == kLen && all_are(got, kLen, fill),
	         name, "%s: %s, %u bytes, payload %s", what,
	         n ? ibv_wc_status_str(wc.status) : "no completion", n ? wc.byte_len : 0,
	         n && all_are(got, kLen, fill) ? "as sent" : "not as sent");
	if (n == 1)
		post(posted_++);
}

int run(const PeerTarget &t, const uint8_t spoof_ip[4], const uint8_t other_ip[4])
{
	Report r("spoof");
	ForgedPeer fp;
	std::string why;

	if (!r.check(fp.open(t, 16, &why), "open", "%s", why.empty() ? "ok" : why.c_str()))
		return r.finish();
	SpoofRun run(r, fp);
	if (!r.check(run.setup(&why), "victim", "an RC QP connected to the forged peer (%s)",
	             why.empty() ? "ok" : why.c_str()))
		return r.finish();
	r.info("%s", fp.describe().c_str());
	if (!r.check(read_counter(fp.dev(), "drop_bad_addr") >= 0, "counter",
	             "%s has drop_bad_addr", fp.dev().c_str()))
		return r.finish();
	Injector spoofed, misaddressed;
	if (!r.check(spoofed.open(fp.iface(), fp.netdev(), spoof_ip, fp.ip(), &why) &&
	                 misaddressed.open(fp.iface(), fp.netdev(), fp.peer_ip(), other_ip, &why),
	             "inject", "injectors from the spoofed source and to the other address (%s)",
	             why.empty() ? "ok" : why.c_str()))
		return r.finish();
	run.send_case("source", spoofed, kRqPsn, 0xab, false, "from another source address");
	run.send_case("peer", fp.inj(), kRqPsn, 0x5c, true, "from the peer");
	run.send_case("dest", misaddressed, kRqPsn + 1, 0xcd, false,
	              "from the peer to another address of the target");
	run.send_case("again", fp.inj(), kRqPsn + 1, 0x3e, true, "from the peer, next PSN");
	return r.finish();
}

} /* namespace */

int cmd_spoof(int argc, char **argv)
{
	Args args;
	std::string why;
	PeerTarget t;
	uint8_t spoof_ip[4]{}, other_ip[4]{};

	if (!args.parse(argc, argv,
	                {{"target", true},
	                 {"inject", true},
	                 {"peer-ip", true},
	                 {"spoof-ip", true},
	                 {"other-ip", true}},
	                &why))
		return usage_error("spoof", why);
	if (args.num_positional() != 0 || !parse_peer_target(args, &t, &why))
		return usage_error("spoof", why.empty() ? "takes no device name" : why);
	if (t.dev.empty() || !args.has("spoof-ip") || !args.has("other-ip") ||
	    inet_pton(AF_INET, args.value("spoof-ip"), spoof_ip) != 1 ||
	    inet_pton(AF_INET, args.value("other-ip"), other_ip) != 1)
		return usage_error("spoof", "needs --target, --inject, --peer-ip, --spoof-ip and "
		                            "--other-ip (IPv4)");
	return run(t, spoof_ip, other_ip);
}

} /* namespace vc */
