// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check resporder --target TDEV --inject IFACE --peer-ip ADDR
 *                             [--read-mib N] [--reset-rounds N]:
 * the responder's answers and executions while the responses of an earlier
 * RDMA READ are still going out (IBA 9.7.5.1: answers leave in PSN order,
 * so an ACK or NAK due meanwhile is held back behind them).
 *
 * Each case takes a fresh victim RC QP on TDEV connected to a forged peer
 * (forged_peer.h): the peer sends a READ of --read-mib MiB (default 8:
 * thousands of responses) and, while they are going out, the requests of
 * the case; every packet the victim sends back is read, ICRC checked, and
 * the READ responses are compared byte for byte with the region. A case
 * whose requests came after the READ's last response (the READ was too
 * short) has no verdict and fails saying so.
 *
 *   held_rnr.ack       a SEND with no receive posted (RNR NAK held back),
 *                      then a receive, then the SEND again with AckReq: it
 *                      completes into the receive, an ACK for its PSN
 *                      comes after the READ, and no RNR NAK for it at all
 *                      (a stale one makes the requester send it a third
 *                      time, spending rnr_retry)
 *   held_rnr.noack     the same, the SEND sent again without AckReq: no
 *                      NAK may follow the READ
 *   held_seq_nak.ack   a SEND one PSN ahead (PSN sequence NAK held back),
 *                      then the missing SEND with AckReq: it completes, an
 *                      ACK for its PSN comes, no sequence NAK for it
 *   reset.reconnect    the victim is reset while the READ is going out and
 *                      connected again with new PSNs (--reset-rounds times):
 *                      no packet with an old PSN may leave after the reset
 *                      returned; a READ at the new PSN is answered
 *   atomic.invalidate  a FETCH_ADD through a type 2 window waits behind the
 *                      READ; a SEND with Invalidate of the window's rkey
 *                      follows: the FETCH_ADD was accepted before the
 *                      invalidation, so it executes (the word is added to,
 *                      its atomic ACK carries the old value), the receive
 *                      reports the invalidated rkey, nothing is NAKed; a
 *                      FETCH_ADD through the window afterwards is refused
 *   atomic.atomic_write a FETCH_ADD waits behind the READ, an ATOMIC WRITE
 *                      to another word follows; read from this process
 *                      while the READ still goes out: once the ATOMIC
 *                      WRITE's value is visible, so is the FETCH_ADD's
 *                      (IBA A19.4.2: every earlier request's stores are
 *                      visible before an ATOMIC WRITE's)
 */
#include "commands.h"
#include "forged_peer.h"
#include "report.h"
#include "verbs_util.h"

#include "proto/sroce_hdr.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kSendLen = 256;  /* the forged SENDs' payload */
constexpr uint32_t kRecvLen = 4096; /* each receive buffer */
constexpr uint32_t kWordOff = 64;   /* the FETCH_ADD's word in the atomic region */
constexpr uint32_t kFlagOff = 256;  /* the ATOMIC WRITE's word */
constexpr uint64_t kWordInit = 0x0102030405060708ull;
constexpr uint64_t kAdd = 0x1000;
constexpr uint8_t kFillA = 0x3c, kFillB = 0x5b;
constexpr int kQuietMs = 400;
constexpr int kReadWaitMs = 60000;

/* The byte at offset @i of the READ region. */
uint8_t pattern(size_t i)
{
	return uint8_t(i ^ (i >> 8) ^ (i >> 16) ^ 0x5a);
}

bool is_read_resp(const Captured &c)
{
	return c.pkt.opcode >= SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST &&
	       c.pkt.opcode <= SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY;
}

bool is_nak(const Captured &c)
{
	return c.pkt.opcode == SROCE_OP_RC_ACKNOWLEDGE &&
	       sroce_aeth_type(c.pkt.aeth.syndrome) != SROCE_AETH_ACK;
}

bool is_ack(const Captured &c)
{
	return c.pkt.opcode == SROCE_OP_RC_ACKNOWLEDGE &&
	       sroce_aeth_type(c.pkt.aeth.syndrome) == SROCE_AETH_ACK;
}

const char *kind(const Captured &c)
{
	if (is_read_resp(c))
		return "READ response";
	if (c.pkt.opcode == SROCE_OP_RC_ATOMIC_ACKNOWLEDGE)
		return "atomic ACK";
	if (c.pkt.opcode != SROCE_OP_RC_ACKNOWLEDGE)
		return "packet";
	if (is_ack(c))
		return "ACK";
	return sroce_aeth_type(c.pkt.aeth.syndrome) == SROCE_AETH_RNR_NAK ? "RNR NAK" : "NAK";
}

std::string describe(const Captured &c)
{
	char s[96];
	const char *what = kind(c);

	std::snprintf(s, sizeof(s), "%s (opcode 0x%02x) PSN 0x%06x syndrome 0x%02x MSN %u", what,
	              c.pkt.opcode, c.pkt.psn, c.pkt.aeth.syndrome, c.pkt.aeth.msn);
	return s;
}

/* Index of the first packet of @v from @from on matching @pred; -1 if none. */
template <typename Pred> long find_pkt(const std::vector<Captured> &v, size_t from, Pred pred)
{
	for (size_t i = from; i < v.size(); i++)
		if (pred(v[i]))
			return long(i);
	return -1;
}

class RespOrderRun
{
      public:
	RespOrderRun() : r_("resporder") {}
	bool setup(const PeerTarget &t, uint64_t read_bytes);
	void held_rnr(bool ackreq);
	void held_seq_nak();
	void reset_reconnect(unsigned rounds);
	void atomic_invalidate();
	void atomic_write();
	int finish() { return r_.finish(); }

      private:
	/* One case: the victim and where its READ started. */
	struct Case {
		std::string name;
		QpPtr qp;
		uint32_t psn = kRqPsn; /* the READ's */
		std::vector<Captured> before, after;
		ibv_wc wc{}; /* taken_now()'s completion */
	};

	bool start(Case *c, unsigned access, uint32_t max_send_wr = 4);
	uint32_t npkts() const { return uint32_t((read_bytes_ + mtu_ - 1) / mtu_); }
	uint32_t after_read(const Case &c, uint32_t n) const
	{
		return (c.psn + npkts() + n) & SROCE_PSN_MASK;
	}
	bool inject(Case *c, const sroce_pkt &p, uint32_t len, uint8_t fill);
	bool inject_read(Case *c, uint32_t psn, uint64_t va, uint32_t len);
	bool inject_atomic(Case *c, uint32_t psn, uint64_t va, uint32_t rkey);
	bool post_recv(Case *c, uint64_t wr_id, uint8_t *buf);
	bool in_flight(Case *c);
	bool taken_now(Case *c, const char *what);
	void collect(Case *c);
	bool read_done(Case *c, long *last);
	bool no_nak_for(Case *c, uint32_t psn, const char *what);
	bool check_read(Case *c, const std::vector<Captured> &all, uint32_t psn, size_t len,
	                uint32_t msn, long *last);
	bool expect_recv(Case *c, uint64_t wr_id, const uint8_t *buf, uint8_t fill,
	                 uint32_t invalidated);
	bool expect_rts(Case *c);
	long expect_answer(Case *c, const char *what, uint32_t psn, uint32_t msn, long from,
	                   bool atomic_ack);
	bool no_nak_after(Case *c, long from, const char *why);

	Report r_;
	ForgedPeer peer_;
	Capture cap_;
	uint32_t mtu_ = 0;
	uint64_t read_bytes_ = 0;
	std::unique_ptr<Mapping> read_, recv_, atom_;
	MrPtr read_mr_, recv_mr_, atom_mr_;
};

bool RespOrderRun::setup(const PeerTarget &t, uint64_t read_bytes)
{
	std::string why;
	const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	read_bytes_ = read_bytes;
	if (!peer_.open(t, 64, &why) || !cap_.open(t.iface, peer_.ip(), t.peer_ip, &why)) {
		r_.fail("setup", "%s", why.c_str());
		return false;
	}
	mtu_ = peer_.mtu();
	read_ = std::make_unique<Mapping>(read_bytes, PROT_READ | PROT_WRITE);
	recv_ = std::make_unique<Mapping>(2 * kRecvLen, PROT_READ | PROT_WRITE);
	atom_ = std::make_unique<Mapping>(4096, PROT_READ | PROT_WRITE);
	if (!read_->ok() || !recv_->ok() || !atom_->ok()) {
		r_.fail("setup", "mmap: %s", std::strerror(errno));
		return false;
	}
	for (size_t i = 0; i < read_bytes; i++)
		read_->data()[i] = pattern(i);
	read_mr_.reset(
	    ibv_reg_mr(peer_.pd(), read_->data(), read_->size(), IBV_ACCESS_REMOTE_READ));
	recv_mr_.reset(
	    ibv_reg_mr(peer_.pd(), recv_->data(), recv_->size(), IBV_ACCESS_LOCAL_WRITE));
	atom_mr_.reset(
	    ibv_reg_mr(peer_.pd(), atom_->data(), atom_->size(), remote | IBV_ACCESS_MW_BIND));
	if (!read_mr_ || !recv_mr_ || !atom_mr_) {
		r_.fail("setup", "ibv_reg_mr: %s", errno_name(null_errno()).c_str());
		return false;
	}
	const bool rt = Unpreempted().on();

	r_.info("%s; READ of %" PRIu64 " bytes, %u responses; requests sent at %s",
	        peer_.describe().c_str(), read_bytes, npkts(),
	        rt ? "real-time priority" : "normal priority (SCHED_FIFO refused)");
	return true;
}

/* A fresh victim for @c with @access, the capture emptied. */
bool RespOrderRun::start(Case *c, unsigned access, uint32_t max_send_wr)
{
	ForgedPeer::Victim v;
	std::vector<Captured> old;
	std::string why;
	ibv_wc wc[8];

	while (ibv_poll_cq(peer_.cq(), 8, wc) > 0)
		;
	v.access = access;
	v.max_send_wr = max_send_wr;
	c->qp = peer_.victim(v, &why);
	if (!c->qp) {
		r_.fail(c->name, "%s", why.c_str());
		return false;
	}
	cap_.drain(&old);
	cap_.drops();
	std::memset(recv_->data(), 0, recv_->size());
	return true;
}

bool RespOrderRun::inject(Case *c, const sroce_pkt &p, uint32_t len, uint8_t fill)
{
	if (peer_.inj().send(peer_.inj().frame(p, len, fill)))
		return true;
	r_.fail(c->name, "sending the forged opcode 0x%02x: %s", p.opcode, std::strerror(errno));
	return false;
}

bool RespOrderRun::inject_read(Case *c, uint32_t psn, uint64_t va, uint32_t len)
{
	sroce_pkt p = peer_.request(SROCE_OP_RC_RDMA_READ_REQUEST, c->qp.get(), psn);

	p.reth.va = va;
	p.reth.rkey = read_mr_->rkey;
	p.reth.dma_len = len;
	return inject(c, p, 0, 0);
}

bool RespOrderRun::inject_atomic(Case *c, uint32_t psn, uint64_t va, uint32_t rkey)
{
	sroce_pkt p = peer_.request(SROCE_OP_RC_FETCH_ADD, c->qp.get(), psn);

	p.atmeth.va = va;
	p.atmeth.rkey = rkey;
	p.atmeth.swap_add = kAdd;
	return inject(c, p, 0, 0);
}

bool RespOrderRun::post_recv(Case *c, uint64_t wr_id, uint8_t *buf)
{
	ibv_sge sge = {uintptr_t(buf), kRecvLen, recv_mr_->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (!ibv_post_recv(c->qp.get(), &wr, &bad))
		return true;
	r_.fail(c->name, "ibv_post_recv failed");
	return false;
}

/*
 * What came so far into c->before: the READ must still be going out (its
 * last response not among them), else the case has no verdict.
 */
bool RespOrderRun::in_flight(Case *c)
{
	const uint32_t last = after_read(*c, SROCE_PSN_MASK);

	cap_.drain(&c->before);
	if (find_pkt(c->before, 0, [&](const Captured &p) {
		    return is_read_resp(p) && p.pkt.psn == last &&
		           (p.pkt.info->flags & SROCE_OPF_LAST);
	    }) < 0)
		return true;
	r_.fail(c->name,
	        "the READ's last response left before the requests that were to come while "
	        "it goes out: no verdict (raise --read-mib, now %" PRIu64 " MiB)",
	        read_bytes_ >> 20);
	return false;
}

/*
 * Inside Unpreempted, right after the SEND @what was sent: its receive
 * completed already, so it was taken in the softirq of its send, before
 * the work item could go on with the READ; and so was every request sent
 * before it (in order, on the same backlog). If not (the softirqs were
 * left to ksoftirqd), the case has no verdict.
 */
bool RespOrderRun::taken_now(Case *c, const char *what)
{
	if (ibv_poll_cq(peer_.cq(), 1, &c->wc) == 1)
		return true;
	r_.fail(c->name,
	        "%s was not taken at once (its softirq deferred): nothing shows that it came "
	        "while the READ went out; no verdict",
	        what);
	return false;
}

/* The rest, into c->after: up to the READ's last response, then until quiet. */
void RespOrderRun::collect(Case *c)
{
	const uint32_t last = after_read(*c, SROCE_PSN_MASK);
	auto is_last = [&](const Captured &p) {
		return is_read_resp(p) && p.pkt.psn == last && (p.pkt.info->flags & SROCE_OPF_LAST);
	};
	Captured p;

	if (find_pkt(c->before, 0, is_last) < 0) {
		const auto end =
		    std::chrono::steady_clock::now() + std::chrono::milliseconds(kReadWaitMs);

		while (std::chrono::steady_clock::now() < end) {
			const int got = cap_.next(&p, 1000);
			bool done;

			if (got < 0)
				break;
			if (!got)
				continue;
			done = is_last(p);
			c->after.push_back(std::move(p));
			if (done)
				break;
		}
	}
	cap_.until_quiet(&c->after, kQuietMs, 10000);
}

/*
 * The rest of the case (collect()), and the READ's responses checked over
 * everything that came: all of them, with the region's bytes, and nothing
 * else before the last one (answers leave in PSN order). *@last: the index
 * of the last one in c->after.
 */
bool RespOrderRun::read_done(Case *c, long *last)
{
	std::vector<Captured> all = c->before;

	collect(c);
	all.insert(all.end(), c->after.begin(), c->after.end());
	if (!check_read(c, all, c->psn, read_bytes_, 1, last))
		return false;
	const long early = find_pkt(all, 0, [](const Captured &p) { return !is_read_resp(p); });

	*last -= long(c->before.size());
	if (early < 0 || early > *last + long(c->before.size()))
		return true;
	r_.fail(c->name, "%s left before the READ's last response",
	        describe(all[size_t(early)]).c_str());
	return false;
}

/* No NAK for @psn came after the request there was taken (@what). */
bool RespOrderRun::no_nak_for(Case *c, uint32_t psn, const char *what)
{
	const long i =
	    find_pkt(c->after, 0, [&](const Captured &p) { return is_nak(p) && p.pkt.psn == psn; });

	if (i < 0)
		return true;
	r_.fail(c->name, "after %s at PSN 0x%06x was taken: %s", what, psn,
	        describe(c->after[size_t(i)]).c_str());
	return false;
}

/*
 * The responses of the READ of @len bytes from the region's start at @psn
 * (MSN @msn) in @all: every one, in PSN order, with the region's bytes.
 * *@last: the index of the last one.
 */
bool RespOrderRun::check_read(Case *c, const std::vector<Captured> &all, uint32_t psn, size_t len,
                              uint32_t msn, long *last)
{
	const uint32_t n = uint32_t((len + mtu_ - 1) / mtu_);
	const unsigned long dropped = cap_.drops();
	uint32_t got = 0;

	*last = -1;
	if (dropped) {
		r_.fail(c->name,
		        "the capture lost %lu frames (socket or input backlog full, GSO "
		        "bursts): no verdict",
		        dropped);
		return false;
	}
	for (size_t i = 0; i < all.size(); i++) {
		const Captured &p = all[i];
		const uint32_t want = (psn + got) & SROCE_PSN_MASK;
		const size_t off = size_t(got) * mtu_;
		const size_t bytes = std::min<size_t>(mtu_, len - off);
		const uint8_t want_op = n == 1         ? SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY
		                        : got == 0     ? SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST
		                        : got + 1 == n ? SROCE_OP_RC_RDMA_READ_RESPONSE_LAST
		                                       : SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;

		if (!is_read_resp(p) || got == n)
			continue;
		if (p.pkt.psn != want || p.pkt.opcode != want_op || p.payload.size() != bytes ||
		    std::memcmp(p.payload.data(), read_->data() + off, bytes) ||
		    ((p.pkt.info->flags & SROCE_OPF_AETH) && p.pkt.aeth.msn != msn)) {
			r_.fail(c->name,
			        "READ response %u of %u: %s with %zu bytes, want PSN 0x%06x opcode "
			        "0x%02x MSN %u and the region's %zu bytes at offset %zu",
			        got, n, describe(p).c_str(), p.payload.size(), want, want_op, msn,
			        bytes, off);
			return false;
		}
		*last = long(i);
		got++;
	}
	if (got == n)
		return true;
	r_.fail(c->name, "%u of the READ's %u responses came", got, n);
	return false;
}

/*
 * The answer for @psn (an ACK, or the atomic ACK with @atomic_ack) with
 * @msn, at or after index @from of c->after; its index, or -1 (FAIL).
 */
long RespOrderRun::expect_answer(Case *c, const char *what, uint32_t psn, uint32_t msn, long from,
                                 bool atomic_ack)
{
	const long i = find_pkt(c->after, size_t(std::max(from, 0L)), [&](const Captured &p) {
		return p.pkt.psn == psn &&
		       (atomic_ack ? p.pkt.opcode == SROCE_OP_RC_ATOMIC_ACKNOWLEDGE : is_ack(p));
	});

	if (i >= 0 && c->after[size_t(i)].pkt.aeth.msn == msn)
		return i;
	if (i >= 0)
		r_.fail(c->name, "%s: %s, want MSN %u", what, describe(c->after[size_t(i)]).c_str(),
		        msn);
	else
		r_.fail(c->name, "%s: no %s for PSN 0x%06x after the READ's responses", what,
		        atomic_ack ? "atomic ACK" : "ACK", psn);
	return -1;
}

bool RespOrderRun::no_nak_after(Case *c, long from, const char *why)
{
	const long i = find_pkt(c->after, size_t(std::max(from, 0L)), is_nak);

	if (i < 0)
		return true;
	r_.fail(c->name, "%s: %s", why, describe(c->after[size_t(i)]).c_str());
	return false;
}

/*
 * The completion taken_now() polled is receive @wr_id's, successful, with
 * kSendLen bytes of @fill in @buf (and @invalidated as the invalidated
 * rkey if not 0).
 */
bool RespOrderRun::expect_recv(Case *c, uint64_t wr_id, const uint8_t *buf, uint8_t fill,
                               uint32_t invalidated)
{
	const ibv_wc &wc = c->wc;
	const bool inv_ok =
	    invalidated ? (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == invalidated
	                : !(wc.wc_flags & IBV_WC_WITH_INV);

	if (wc.wr_id != wr_id || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != kSendLen || !inv_ok) {
		r_.fail(c->name,
		        "completion wr_id %" PRIu64 " %s opcode %d byte_len %u flags 0x%x "
		        "invalidated 0x%08x; want wr_id %" PRIu64 " IBV_WC_SUCCESS RECV of %u "
		        "bytes%s",
		        wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len, wc.wc_flags,
		        wc.invalidated_rkey, wr_id, kSendLen,
		        invalidated ? " with the invalidated rkey" : "");
		return false;
	}
	if (!all_are(buf, kSendLen, fill) || !all_are(buf + kSendLen, kRecvLen - kSendLen, 0)) {
		r_.fail(c->name, "receive %" PRIu64 ": its bytes are not the SEND's", wr_id);
		return false;
	}
	return true;
}

bool RespOrderRun::expect_rts(Case *c)
{
	const int state = wait_qp_state(c->qp.get(), IBV_QPS_RTS, 0);

	if (state == IBV_QPS_RTS)
		return true;
	r_.fail(c->name, "the victim QP is in %s, want RTS", qp_state_name(state));
	return false;
}

/*
 * READ; a SEND with no receive (RNR NAK, held back behind the READ); a
 * receive; the SEND again, with AckReq if @ackreq.
 */
void RespOrderRun::held_rnr(bool ackreq)
{
	Case c;

	c.name = ackreq ? "held_rnr.ack" : "held_rnr.noack";
	if (!start(&c, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE))
		return;
	const uint32_t send_psn = after_read(c, 0);
	sroce_pkt send = peer_.request(SROCE_OP_RC_SEND_ONLY, c.qp.get(), send_psn);

	long last;

	send.ackreq = 1;
	{
		const Unpreempted now;

		if (!inject_read(&c, c.psn, uintptr_t(read_->data()), uint32_t(read_bytes_)) ||
		    !inject(&c, send, kSendLen, kFillA) || !post_recv(&c, 1, recv_->data()) ||
		    !in_flight(&c))
			return;
		send.ackreq = ackreq;
		if (!inject(&c, send, kSendLen, kFillA) || !taken_now(&c, "the SEND sent again"))
			return;
	}
	if (!read_done(&c, &last) || !expect_recv(&c, 1, recv_->data(), kFillA, 0) ||
	    !no_nak_for(&c, send_psn, "the SEND") ||
	    !no_nak_after(&c, 0, "a NAK after the SEND was taken"))
		return;
	if ((ackreq && expect_answer(&c, "the SEND sent again", send_psn, 2, last, false) < 0) ||
	    !expect_rts(&c))
		return;
	r_.pass(c.name,
	        "RNR NAK held behind %u READ responses, SEND taken when sent again: it "
	        "completed with its %u bytes, %s, no NAK",
	        npkts(), kSendLen,
	        ackreq ? "ACKed (MSN 2) after the READ" : "nothing NAKed after the READ");
}

/* READ; a SEND one PSN ahead (sequence NAK held back); the missing SEND. */
void RespOrderRun::held_seq_nak()
{
	Case c;

	c.name = "held_seq_nak.ack";
	if (!start(&c, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE))
		return;
	const uint32_t send_psn = after_read(c, 0);
	sroce_pkt ahead = peer_.request(SROCE_OP_RC_SEND_ONLY, c.qp.get(), send_psn + 1);
	sroce_pkt send = peer_.request(SROCE_OP_RC_SEND_ONLY, c.qp.get(), send_psn);

	ibv_wc extra{};
	long last;

	ahead.ackreq = 1;
	send.ackreq = 1;
	if (!post_recv(&c, 1, recv_->data()) || !post_recv(&c, 2, recv_->data() + kRecvLen))
		return;
	{
		const Unpreempted now;

		if (!inject_read(&c, c.psn, uintptr_t(read_->data()), uint32_t(read_bytes_)) ||
		    !inject(&c, ahead, kSendLen, kFillB) || !in_flight(&c) ||
		    !inject(&c, send, kSendLen, kFillA) || !taken_now(&c, "the missing SEND"))
			return;
	}
	if (!read_done(&c, &last) || !expect_recv(&c, 1, recv_->data(), kFillA, 0))
		return;
	if (poll_cq_for(peer_.cq(), &extra, 1, 200) != 0) {
		r_.fail(c.name,
		        "receive %" PRIu64 " completed (%s): the packet past the gap was taken",
		        extra.wr_id, ibv_wc_status_str(extra.status));
		return;
	}
	if (!no_nak_for(&c, send_psn, "the missing SEND") ||
	    expect_answer(&c, "the missing SEND", send_psn, 2, last, false) < 0 || !expect_rts(&c))
		return;
	r_.pass(c.name,
	        "sequence NAK held behind %u READ responses, the missing SEND taken: it "
	        "completed, ACKed (MSN 2) after the READ, no NAK for it",
	        npkts());
}

/*
 * Rounds of: a READ going out; reset; connected again with new PSNs (4 Mi
 * PSNs on); a READ of 64 bytes at the new PSN, where the next round
 * continues.
 */
void RespOrderRun::reset_reconnect(unsigned rounds)
{
	const unsigned access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
	Case c;
	unsigned stale_rounds = 0;

	c.name = "reset.reconnect";
	if (!start(&c, access))
		return;
	for (unsigned round = 0; round < rounds; round++) {
		const uint32_t new_psn = (c.psn + 0x400000) & SROCE_PSN_MASK;
		ibv_qp_attr a{};
		Captured p;
		long last;

		c.before.clear();
		c.after.clear();
		a.qp_state = IBV_QPS_RESET;
		{
			const Unpreempted now;

			if (!inject_read(&c, c.psn, uintptr_t(read_->data()),
			                 uint32_t(read_bytes_)))
				return;
			/* Some responses out: the READ is going out. */
			for (unsigned got = 0; got < 4 && cap_.next(&p, 2000) == 1;)
				got += is_read_resp(p);
			if (ibv_modify_qp(c.qp.get(), &a, IBV_QP_STATE)) {
				r_.fail(c.name, "ibv_modify_qp to RESET failed");
				return;
			}
		}
		/* Whatever left before the reset returned, on its way to us. */
		usleep(50 * 1000);
		if (!in_flight(&c))
			return;
		const int err = peer_.connect(c.qp.get(), access, new_psn, kSqPsn + round);

		if (err) {
			r_.fail(c.name, "connecting again: %s", errno_name(err).c_str());
			return;
		}
		if (!inject_read(&c, new_psn, uintptr_t(read_->data()), 64))
			return;
		cap_.until_quiet(&c.after, kQuietMs, 10000);
		const long stale =
		    find_pkt(c.after, 0, [&](const Captured &q) { return q.pkt.psn != new_psn; });

		if (stale >= 0) {
			stale_rounds++;
			r_.fail(c.name,
			        "round %u: after the reset and the new connection (PSN 0x%06x): %s",
			        round, new_psn, describe(c.after[size_t(stale)]).c_str());
		}
		if (!check_read(&c, c.after, new_psn, 64, 1, &last) || !expect_rts(&c))
			return;
		c.psn = (new_psn + 1) & SROCE_PSN_MASK;
	}
	if (!stale_rounds)
		r_.pass(c.name,
		        "%u rounds: reset while a READ of %u responses went out, connected again "
		        "with new PSNs: no old PSN left after the reset, the new READ answered",
		        rounds, npkts());
}

/* A FETCH_ADD through a type 2 window behind the READ, then SEND with Invalidate of it. */
void RespOrderRun::atomic_invalidate()
{
	const unsigned access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE |
	                        IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_WRITE;
	auto *word = reinterpret_cast<std::atomic<uint64_t> *>(atom_->data() + kWordOff);
	ibv_send_wr wr, *bad = nullptr;
	ibv_wc wc{};
	Case c;

	c.name = "atomic.invalidate";
	if (!start(&c, access))
		return;
	MwPtr mw(ibv_alloc_mw(peer_.pd(), IBV_MW_TYPE_2));
	if (!mw) {
		r_.fail(c.name, "ibv_alloc_mw type 2: %s", errno_name(null_errno()).c_str());
		return;
	}
	const uint32_t rkey = ibv_inc_rkey(mw->rkey);

	wr = bind_mw_wr(9, mw.get(), rkey, atom_mr_.get(), uintptr_t(atom_->data()), atom_->size(),
	                IBV_ACCESS_REMOTE_ATOMIC);
	if (ibv_post_send(c.qp.get(), &wr, &bad) || poll_cq_for(peer_.cq(), &wc, 1, 5000) != 1 ||
	    wc.status != IBV_WC_SUCCESS) {
		r_.fail(c.name, "binding a type 2 window on the victim: %s",
		        ibv_wc_status_str(wc.status));
		return;
	}
	word->store(kWordInit);
	const uint32_t atomic_psn = after_read(c, 0), send_psn = after_read(c, 1);
	sroce_pkt send = peer_.request(SROCE_OP_RC_SEND_ONLY_WITH_INV, c.qp.get(), send_psn);
	long last;

	send.ackreq = 1;
	send.ieth_rkey = rkey;
	if (!post_recv(&c, 1, recv_->data()))
		return;
	{
		const Unpreempted now;

		if (!inject_read(&c, c.psn, uintptr_t(read_->data()), uint32_t(read_bytes_)) ||
		    !inject_atomic(&c, atomic_psn, uintptr_t(word), rkey) ||
		    !inject(&c, send, kSendLen, kFillA) || !in_flight(&c) ||
		    !taken_now(&c, "the SEND with Invalidate"))
			return;
	}
	if (!read_done(&c, &last) ||
	    !no_nak_after(&c, 0, "a NAK for requests accepted before the invalidation"))
		return;
	const long i = expect_answer(&c, "the FETCH_ADD", atomic_psn, 2, last, true);
	if (i < 0)
		return;
	if (c.after[size_t(i)].pkt.atmack_orig != kWordInit || word->load() != kWordInit + kAdd) {
		r_.fail(c.name,
		        "the FETCH_ADD returned 0x%016" PRIx64 " and the word is 0x%016" PRIx64
		        ", want 0x%016" PRIx64 " and 0x%016" PRIx64,
		        uint64_t(c.after[size_t(i)].pkt.atmack_orig), word->load(), kWordInit,
		        kWordInit + kAdd);
		return;
	}
	if (expect_answer(&c, "the SEND with Invalidate", send_psn, 3, i, false) < 0 ||
	    !expect_recv(&c, 1, recv_->data(), kFillA, rkey) || !expect_rts(&c))
		return;
	/* The window is invalid now: a FETCH_ADD through it is a remote access error. */
	std::vector<Captured> refused;
	const uint32_t next = after_read(c, 2);

	if (!inject_atomic(&c, next, uintptr_t(word), rkey))
		return;
	cap_.until_quiet(&refused, kQuietMs, 5000);
	const bool naked =
	    find_pkt(refused, 0, [&](const Captured &p) {
		    return is_nak(p) && p.pkt.psn == next &&
		           p.pkt.aeth.syndrome == sroce_aeth_nak(SROCE_NAK_REMOTE_ACCESS_ERR);
	    }) >= 0;
	if (!naked || word->load() != kWordInit + kAdd) {
		r_.fail(c.name,
		        "a FETCH_ADD through the invalidated window: %s, the word 0x%016" PRIx64,
		        naked ? "NAKed" : "not NAKed with a remote access error", word->load());
		return;
	}
	r_.pass(c.name,
	        "FETCH_ADD behind %u READ responses, then SEND with Invalidate of its window: "
	        "it executed (old value returned, the word added to), the receive reports the "
	        "invalidated rkey, nothing NAKed; the window refuses a FETCH_ADD afterwards",
	        npkts());
}

/* A FETCH_ADD behind the READ, then an ATOMIC WRITE: its release order. */
void RespOrderRun::atomic_write()
{
	const unsigned access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE |
	                        IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_WRITE;
	auto *word = reinterpret_cast<std::atomic<uint64_t> *>(atom_->data() + kWordOff);
	auto *flag = reinterpret_cast<std::atomic<uint64_t> *>(atom_->data() + kFlagOff);
	const uint8_t value[8] = {0xfe, 0xed, 0xfa, 0xce, 0xca, 0xfe, 0xbe, 0xef};
	uint64_t flag_value;
	Case c;

	std::memcpy(&flag_value, value, 8);
	c.name = "atomic.atomic_write";
	if (!start(&c, access))
		return;
	word->store(kWordInit);
	flag->store(0);
	const uint32_t atomic_psn = after_read(c, 0), write_psn = after_read(c, 1);
	sroce_pkt aw = peer_.request(SROCE_OP_RC_ATOMIC_WRITE, c.qp.get(), write_psn);

	aw.reth.va = uintptr_t(flag);
	aw.reth.rkey = atom_mr_->rkey;
	aw.reth.dma_len = 8;
	uint64_t seen_flag, seen_word;
	long last;

	{
		const Unpreempted now;

		if (!inject_read(&c, c.psn, uintptr_t(read_->data()), uint32_t(read_bytes_)) ||
		    !inject_atomic(&c, atomic_psn, uintptr_t(word), atom_mr_->rkey) ||
		    !peer_.inj().send(peer_.inj().frame(aw, value, 8))) {
			r_.fail(c.name, "sending the forged requests failed");
			return;
		}
		/* What an observer of the flag sees, while the READ goes out. */
		seen_flag = flag->load(std::memory_order_acquire);
		seen_word = word->load(std::memory_order_relaxed);
		if (!in_flight(&c))
			return;
	}
	if (seen_flag != flag_value) {
		r_.fail(c.name, "the ATOMIC WRITE was not executed at once (its softirq deferred): "
		                "nothing shows that it came while the READ went out; no verdict");
		return;
	}
	if (seen_word != kWordInit + kAdd) {
		r_.fail(c.name,
		        "the ATOMIC WRITE's value was visible while the earlier FETCH_ADD's was "
		        "not (word 0x%016" PRIx64 ")",
		        seen_word);
		return;
	}
	if (!read_done(&c, &last) || !no_nak_after(&c, 0, "a NAK"))
		return;
	const long i = expect_answer(&c, "the FETCH_ADD", atomic_psn, 2, last, true);
	if (i < 0)
		return;
	const long aw_resp = find_pkt(c.after, size_t(i), [&](const Captured &p) {
		return p.pkt.psn == write_psn &&
		       p.pkt.opcode == SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY && p.payload.empty() &&
		       p.pkt.aeth.msn == 3;
	});
	if (aw_resp < 0 || c.after[size_t(i)].pkt.atmack_orig != kWordInit ||
	    word->load() != kWordInit + kAdd || flag->load() != flag_value) {
		r_.fail(c.name,
		        "ATOMIC WRITE answer %s; FETCH_ADD returned 0x%016" PRIx64
		        ", word 0x%016" PRIx64 ", flag 0x%016" PRIx64,
		        aw_resp < 0 ? "missing" : "there",
		        uint64_t(c.after[size_t(i)].pkt.atmack_orig), word->load(), flag->load());
		return;
	}
	if (!expect_rts(&c))
		return;
	r_.pass(c.name,
	        "FETCH_ADD behind %u READ responses, then ATOMIC WRITE: its value visible "
	        "only with the FETCH_ADD's; both answered in order after the READ",
	        npkts());
}

} // namespace

int cmd_resporder(int argc, char **argv)
{
	Args args;
	std::string why;
	PeerTarget t;
	long read_mib, rounds;

	if (!args.parse(argc, argv,
	                {{"target", true},
	                 {"inject", true},
	                 {"peer-ip", true},
	                 {"read-mib", true},
	                 {"reset-rounds", true}},
	                &why))
		return usage_error("resporder", why);
	if (args.num_positional() != 0)
		return usage_error("resporder", "takes no device name: --target TDEV");
	if (!parse_peer_target(args, &t, &why) ||
	    !args.number("read-mib", 8, 1, 1024, &read_mib, &why) ||
	    !args.number("reset-rounds", 3, 1, 1000, &rounds, &why))
		return usage_error("resporder", why);
	if (t.dev.empty())
		return usage_error("resporder",
		                   "needs --target TDEV --inject IFACE --peer-ip ADDR");
	RespOrderRun run;

	if (run.setup(t, uint64_t(read_mib) << 20)) {
		run.held_rnr(true);
		run.held_rnr(false);
		run.held_seq_nak();
		run.reset_reconnect(unsigned(rounds));
		run.atomic_invalidate();
		run.atomic_write();
	}
	return run.finish();
}

} /* namespace vc */
