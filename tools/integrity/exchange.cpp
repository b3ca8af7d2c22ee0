// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * exchange mode: the message patterns that decide whether a responder may
 * hold an RC ACK back until its own next request goes out (sroce's
 * delayed ACK, kernel/sroce_ack.c), each on a fresh RC QP pair, kRounds
 * SENDs each way (one_way: the client's only), 1 byte to a path MTU + 123.
 *
 *   pingpong   the client SENDs, the server answers each (request and
 *              response); the client destroys its QP right after the last
 *              reply, as ibv_rc_pingpong does when it exits, and the
 *              server's last SEND must still complete with success. Want:
 *              acks_delayed rises by kRounds / 4 or more (--min-held,
 *              percent; 16 exchanges enter the mode; a slow guest leaves
 *              it now and then),
 *              ack_delays_expired by 2 at most (the last message, which no
 *              reply follows).
 *   symmetric  both SEND, each waits for the peer's SEND and then for its
 *              own to complete before it sends again. A side that held
 *              its ACK for its own next SEND would wait on the other.
 *              Want: ack_delays_expired <= 16 (a stall ends on the
 *              holder's timer or on the peer's tail probe; the holder
 *              counts both; tail probes are logged, not judged).
 *   turn       kRounds / 2 rounds of pingpong, then symmetric with a
 *              barrier on the control connection before each SEND, so
 *              that both post at once while in ping-pong mode. Want:
 *              acks_delayed >= half of pingpong's, and ack_delays_expired <= 16
 *              (each exit from ping-pong mode doubles what it takes to
 *              enter it again).
 *   one_way    the client SENDs back to back, 16 at a time; the server
 *              only receives. Want: the server holds no ACK.
 *
 * Every SEND must complete with success (the last one's ACK is held by a
 * side that sends nothing more: its timer or the requester's tail probe
 * ends that), every receive with success, the right length and the right
 * bytes. The counters are checked on the sides whose device has them
 * (sroce); an rdma_rxe peer ACKs at once, which changes nothing here.
 * Each case's time is logged, not judged.
 *
 * The counters depend on timing: a reply later than the hold (a loaded,
 * slow guest: the debug kernel on 2 vCPUs in CI) ends ping-pong mode, and
 * each exit doubles the exchanges it takes to enter it again, so a few
 * late replies early in a case leave too few holds. A case whose data
 * passed but whose counters missed their bounds on either side runs again
 * on a fresh pair, kTries times in all; only the last try's miss is an
 * error. A mechanism that is wrong misses on every try; one or two late
 * replies do not repeat on three fresh pairs.
 */
#include "log.h"
#include "modes.h"
#include "session.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace integ
{

namespace
{

enum class XCase : uint8_t { pingpong, symmetric, turn, one_way, count };

const char *const kXNames[] = {"pingpong", "symmetric", "turn", "one_way"};
static_assert(sizeof(kXNames) / sizeof(kXNames[0]) == unsigned(XCase::count));

constexpr unsigned kRounds = 200;
constexpr unsigned kWindow = 16; /* one_way: SENDs outstanding */
constexpr unsigned kTries = 3;   /* a case whose counters missed: fresh pairs in all */

/* Message @i's length: one byte to a bit over one path MTU. */
uint32_t msg_len(unsigned i, uint32_t mtu)
{
	const uint32_t lens[] = {1, 64, 1000, mtu + 123};

	return lens[i % 4];
}

uint8_t msg_byte(uint64_t seed, bool from_client, unsigned i, uint32_t j)
{
	const uint64_t x = (seed ^ (from_client ? 0xc1ull : 0x5e7ull)) + i * 0x9e3779b97f4a7c15ull;

	return uint8_t((x >> ((j % 7) * 8)) ^ (i * 31 + j * 7));
}

__attribute__((format(printf, 1, 2))) std::string format(const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	std::vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return text;
}

struct Counters {
	long delayed = -1, expired = -1, probes = -1;
};

Counters read_counters(const std::string &dev)
{
	return {read_counter(dev, "acks_delayed"), read_counter(dev, "ack_delays_expired"),
	        read_counter(dev, "tail_probes")};
}

class ExchangeCases
{
      public:
	explicit ExchangeCases(Session &s) : s_(s), mtu_(s.path_mtu) {}
	bool setup(std::string *why);
	bool run_case(XCase c);
	unsigned failed_cases() const { return failed_; }

      private:
	struct Pair {
		Cq scq, rcq;
		QpPtr qp;
		QpEnd theirs;
	};

	bool make_pair(XCase c, Pair *p, std::string *why);
	bool post_send(Pair &p, unsigned i);
	bool wait_send(Pair &p);
	bool wait_recv(Pair &p, unsigned i);
	bool half(XCase c, Pair &p);
	bool barrier();
	std::string check_counters(XCase c, const Counters &before);
	bool judge_counters(const std::string &mine, bool data_errors, unsigned t, bool *again);

	Session &s_;
	uint32_t mtu_;
	uint32_t slot_ = 0; /* bytes per receive slot */
	Buffer send_, recv_;
	MrPtr send_mr_, recv_mr_;
	std::string tag_;
	unsigned failed_ = 0;
};

bool ExchangeCases::setup(std::string *why)
{
	ibv_pd *pd = s_.dev.pd.get();

	slot_ = msg_len(3, mtu_);
	if (!send_.alloc(size_t(slot_) * kRounds, why) ||
	    !recv_.alloc(size_t(slot_) * kRounds, why))
		return false;
	send_mr_ = reg_mr(pd, send_, IBV_ACCESS_LOCAL_WRITE, why);
	recv_mr_ = reg_mr(pd, recv_, IBV_ACCESS_LOCAL_WRITE, why);
	return send_mr_ && recv_mr_;
}

bool ExchangeCases::make_pair(XCase c, Pair *p, std::string *why)
{
	ibv_context *ctx = s_.dev.ctx.get();
	const bool receives = c != XCase::one_way || !s_.client;
	ibv_qp_cap cap{}, got{};
	QpEnd mine;
	Rng rng(s_.opt.seed ^ (0xe0 + unsigned(c)) ^ (s_.client ? 1 : 2));

	if (!p->scq.create(ctx, kRounds + 1, why) || !p->rcq.create(ctx, kRounds + 1, why))
		return false;
	cap.max_send_wr = 2 * kWindow;
	cap.max_recv_wr = kRounds;
	cap.max_send_sge = 1;
	cap.max_recv_sge = 1;
	p->qp = create_qp(s_.dev, p->scq, p->rcq, IBV_QPT_RC, cap, &got, why);
	if (!p->qp)
		return false;
	mine.qpn = p->qp->qp_num;
	mine.psn = pick_psn(rng);
	mine.gid = s_.dev.gid;
	std::vector<RemoteMr> none, theirs_mrs;
	if (!s_.exchange_qp(mine, none, &p->theirs, &theirs_mrs, why))
		return false;
	if (!connect_qp(p->qp.get(), s_.dev, s_.rc_params(), mine, p->theirs, why))
		return false;
	std::memset(recv_.data(), 0, size_t(slot_) * kRounds);
	for (unsigned i = 0; receives && i < kRounds; i++) {
		ibv_sge sge = {recv_.addr() + uint64_t(i) * slot_, slot_, recv_mr_->lkey};
		ibv_recv_wr wr{}, *bad = nullptr;

		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (ibv_post_recv(p->qp.get(), &wr, &bad)) {
			*why = "ibv_post_recv failed";
			return false;
		}
	}
	/* Every receive is posted before the peer sends. */
	std::vector<uint8_t> buf;
	return s_.chan.send(MsgType::ready, why) &&
	       s_.chan.recv(MsgType::ready, &buf, s_.peer_timeout_ms(), why);
}

bool ExchangeCases::post_send(Pair &p, unsigned i)
{
	const uint32_t len = msg_len(i, mtu_);
	uint8_t *d = send_.data() + size_t(i) * slot_;
	ibv_sge sge = {send_.addr() + uint64_t(i) * slot_, len, send_mr_->lkey};
	ibv_send_wr wr{}, *bad = nullptr;

	/* A slot per message: earlier SENDs may still be going out. */
	for (uint32_t j = 0; j < len; j++)
		d[j] = msg_byte(s_.opt.seed, s_.client, i, j);
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(p.qp.get(), &wr, &bad)) {
		log().fail("%s: ibv_post_send of message %u failed", tag_.c_str(), i);
		return false;
	}
	return true;
}

/* One SEND completion, a success; false otherwise. */
bool ExchangeCases::wait_send(Pair &p)
{
	ibv_wc wc{};

	if (p.scq.wait(&wc, 1, s_.deadline()) != 1) {
		log().fail("%s: a SEND did not complete within %u s", tag_.c_str(), s_.opt.timeout);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND) {
		log().fail("%s: SEND %" PRIu64 " completed with %s, opcode %s", tag_.c_str(),
		           wc.wr_id, wc_status_name(wc.status), wc_opcode_name(wc.opcode));
		return false;
	}
	return true;
}

/* The peer's message @i, received in its slot with every byte right. */
bool ExchangeCases::wait_recv(Pair &p, unsigned i)
{
	const uint32_t len = msg_len(i, mtu_);
	const uint8_t *d = recv_.data() + size_t(i) * slot_;
	ibv_wc wc{};

	if (p.rcq.wait(&wc, 1, s_.deadline()) != 1) {
		log().fail("%s: message %u did not arrive within %u s", tag_.c_str(), i,
		           s_.opt.timeout);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.wr_id != i ||
	    wc.byte_len != len) {
		log().fail("%s: receive %" PRIu64 " completed with %s, opcode %s, %u bytes; want "
		           "receive %u, success, %u bytes",
		           tag_.c_str(), wc.wr_id, wc_status_name(wc.status),
		           wc_opcode_name(wc.opcode), wc.byte_len, i, len);
		return false;
	}
	for (uint32_t j = 0; j < len; j++)
		if (d[j] != msg_byte(s_.opt.seed, !s_.client, i, j)) {
			log().fail("%s: message %u differs at byte %u", tag_.c_str(), i, j);
			return false;
		}
	return true;
}

bool ExchangeCases::barrier()
{
	std::vector<uint8_t> buf;
	std::string why;

	if (s_.chan.send(MsgType::ready, &why) &&
	    s_.chan.recv(MsgType::ready, &buf, s_.peer_timeout_ms(), &why))
		return true;
	log().fail("%s: %s", tag_.c_str(), why.c_str());
	return false;
}

/* This side's share of case @c; false at the first problem. */
bool ExchangeCases::half(XCase c, Pair &p)
{
	unsigned out = 0;
	/* Message @i's SEND, with at most kWindow of them out. */
	auto send_windowed = [&](unsigned i) {
		if (out == kWindow) {
			if (!wait_send(p))
				return false;
			out--;
		}
		if (!post_send(p, i))
			return false;
		out++;
		return true;
	};

	for (unsigned i = 0; i < kRounds; i++) {
		switch (c) {
		case XCase::pingpong:
			if (!s_.client && !wait_recv(p, i))
				return false;
			if (!send_windowed(i))
				return false;
			if (s_.client && !wait_recv(p, i))
				return false;
			break;
		case XCase::turn:
			if (i < kRounds / 2) {
				if (!s_.client && !wait_recv(p, i))
					return false;
				if (!post_send(p, i) || !wait_send(p))
					return false;
				if (s_.client && !wait_recv(p, i))
					return false;
				break;
			}
			/* Both post at once, as near as a barrier gets them. */
			if (!barrier())
				return false;
			[[fallthrough]];
		case XCase::symmetric:
			if (!post_send(p, i) || !wait_recv(p, i) || !wait_send(p))
				return false;
			break;
		case XCase::one_way:
			if (!s_.client) {
				if (!wait_recv(p, i))
					return false;
				break;
			}
			if (!send_windowed(i))
				return false;
			break;
		case XCase::count:
			break;
		}
	}
	for (; out; out--)
		if (!wait_send(p))
			return false;
	return true;
}

std::string ExchangeCases::check_counters(XCase c, const Counters &before)
{
	const Counters now = read_counters(s_.dev.name);

	if (before.delayed < 0 || before.expired < 0 || before.probes < 0 || now.delayed < 0 ||
	    now.expired < 0 || now.probes < 0)
		return ""; /* not an sroce device */
	const long delayed = now.delayed - before.delayed, expired = now.expired - before.expired;
	const long probes = now.probes - before.probes;
	const unsigned min_held = kRounds * s_.opt.min_held_pct / 100;

	log().info("%s: acks_delayed +%ld, ack_delays_expired +%ld, tail_probes +%ld", tag_.c_str(),
	           delayed, expired, probes);
	switch (c) {
	case XCase::pingpong:
		if (delayed < long(min_held))
			return format("%s: only %ld ACKs waited for the reply, want at least %u",
			              tag_.c_str(), delayed, min_held);
		/*
		 * The last message's ACK waits for its timer (the peer's QP
		 * is gone), and one near the start may; a reply that comes
		 * later than the hold (4 to 8 ms) expires one more, now and
		 * then on a slow, loaded guest (the debug kernel on 2 vCPUs
		 * reached 2 on each side here; CI's failed the old bound of
		 * 2 on both). A hold on a pattern that has no reply would
		 * expire nearly all of them.
		 */
		if (expired > 2 + delayed / 20)
			return format("%s: %ld of %ld held ACKs were not taken along by a reply, "
			              "want at most %ld",
			              tag_.c_str(), expired, delayed, 2 + delayed / 20);
		break;
	case XCase::symmetric:
	case XCase::turn:
		if (c == XCase::turn && delayed < long(min_held / 2))
			return format("%s: only %ld ACKs waited for the reply, want at least %u",
			              tag_.c_str(), delayed, min_held / 2);
		/*
		 * Each stall on a held ACK ends on the holder's timer or on
		 * the peer's tail probe, which the holder counts as expired
		 * too; each doubles the row of exchanges needed to hold again.
		 * Tail probes alone are logged, not judged: a slow guest (the
		 * debug kernel) sends some with no ACK held.
		 */
		if (expired > 16)
			return format("%s: %ld held ACKs were not taken along (the sides waited on "
			              "each other), want at most 16",
			              tag_.c_str(), expired);
		break;
	case XCase::one_way:
		if (!s_.client && delayed)
			return format("%s: %ld ACKs were held back on one-way traffic, want none",
			              tag_.c_str(), delayed);
		break;
	case XCase::count:
		break;
	}
	return "";
}

/*
 * Both sides tell each other whether their counters passed (@mine: why
 * not, or empty) and whether they found errors in the data (@data_errors),
 * and so decide alike: *again when the data passed on both, the counters
 * missed on either, and tries are left (@t of kTries). A miss on the last
 * try, or next to data errors, is an error on both sides.
 */
bool ExchangeCases::judge_counters(const std::string &mine, bool data_errors, unsigned t,
                                   bool *again)
{
	constexpr uint32_t kMissed = 1, kDataErrors = 2;
	std::vector<uint8_t> buf;
	std::string why;
	Writer w;

	w.u32((mine.empty() ? 0 : kMissed) | (data_errors ? kDataErrors : 0));
	if (!s_.chan.send(MsgType::verdict, w, &why) ||
	    !s_.chan.recv(MsgType::verdict, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);
	Reader r(buf);
	const uint32_t peer = r.u32();
	const bool peer_missed = peer & kMissed;

	*again = false;
	if (mine.empty() && !peer_missed)
		return true;
	if (t < kTries && !data_errors && !(peer & kDataErrors)) {
		const std::string where = mine.empty() ? tag_ + ": the " + s_.peer_side() +
		                                             "'s counters missed (see its log)"
		                                       : mine;

		log().info("%s; once more on a fresh pair", where.c_str());
		*again = true;
		return true;
	}
	if (!mine.empty())
		log().fail("%s", mine.c_str());
	if (peer_missed)
		log().fail("%s: the %s's counters missed (see its log)", tag_.c_str(),
		           s_.peer_side());
	return true;
}

bool ExchangeCases::run_case(XCase c)
{
	bool again = true;

	for (unsigned t = 1; again; t++) {
		tag_ = kXNames[unsigned(c)];
		if (t > 1)
			tag_ += " (try " + std::to_string(t) + ")";
		const bool ran = run_case_on_pair<Pair>(
		    s_, tag_, &failed_,
		    [&](Pair *p, std::string *why) { return make_pair(c, p, why); },
		    [&](Pair &p) {
			    const uint64_t before = log().failures();
			    const Counters counters = read_counters(s_.dev.name);
			    std::vector<uint8_t> buf;
			    std::string why, missed;

			    const int64_t t0 = now_ms();
			    half(c, p);
			    log().info("%s: %u rounds in %" PRId64 " ms", tag_.c_str(), kRounds,
			               now_ms() - t0);
			    if (s_.client) {
				    /*
				     * As ibv_rc_pingpong does when it exits: the QP
				     * goes at once, with the ACK of the last reply
				     * held.
				     */
				    if (c == XCase::pingpong)
					    p.qp.reset();
				    missed = check_counters(c, counters);
				    if (!s_.requester_done(tag_))
					    return false;
			    } else {
				    /*
				     * The client's last SENDs need this QP's ACKs
				     * until it is done.
				     */
				    if (!s_.chan.recv(MsgType::done, &buf, s_.peer_timeout_ms(),
				                      &why))
					    return s_.give_up(tag_ + ": " + why);
				    missed = check_counters(c, counters);
				    if (!s_.responder_done(tag_, before))
					    return false;
			    }
			    /* Data errors end the case; the counters may try again. */
			    return judge_counters(missed, log().failures() != before, t, &again);
		    });
		if (!ran)
			return false;
	}
	return true;
}

} // namespace

int run_exchange(const Options &opt)
{
	const int64_t started = now_ms();
	Session s;
	std::string why;

	if (!s.start(opt, &why)) {
		log().fail("%s", why.c_str());
		std::printf("sroce-integrity exchange: FAIL side=%s: %s\n", s.side(), why.c_str());
		return 1;
	}
	ExchangeCases x(s);
	bool broken = !x.setup(&why);
	unsigned run = 0;

	if (broken)
		s.give_up(why);
	for (unsigned c = 0; c < unsigned(XCase::count) && !broken; c++) {
		run++;
		broken = !x.run_case(XCase(c));
	}
	const bool pass = !broken && log().failures() == 0;

	std::printf("sroce-integrity exchange: %s side=%s dev=%s mtu=%u cases=%u failed=%u "
	            "errors=%" PRIu64 " time=%.1fs\n",
	            pass ? "PASS" : "FAIL", s.side(), s.dev.name.c_str(), s.path_mtu, run,
	            x.failed_cases(), log().failures(), double(now_ms() - started) / 1000.0);
	std::fflush(stdout);
	return pass ? 0 : 1;
}

} // namespace integ
