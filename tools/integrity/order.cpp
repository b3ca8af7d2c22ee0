// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * order mode: responses leave the responder in request order (IBA
 * 9.7.5.1). Each case posts a chain of work requests on a fresh RC QP pair
 * in one ibv_post_send(), an RDMA READ first, so that the READ's responses
 * are still going out when the requests behind it arrive:
 *
 *   case             the chain
 *   read_fetch_add   READ 1 MiB, FETCH_AND_ADD
 *   read_cmp_swap    READ 1 MiB, CMP_AND_SWAP
 *   read_send        READ 1 MiB, SEND 5000 B
 *   read_write       READ 1 MiB, RDMA WRITE 64 KiB
 *   mixed            READ 1 MiB, FETCH_AND_ADD, READ 64 KiB + 123 B,
 *                    CMP_AND_SWAP, SEND 5000 B, READ 1 MiB, FETCH_AND_ADD,
 *                    RDMA WRITE 3000 B
 *   burst_fetch_add  READ 96 MTUs, FETCH_AND_ADD
 *   burst_cmp_swap   READ 96 MTUs, CMP_AND_SWAP
 *   burst_send       READ 96 MTUs, SEND of an MTU - 77 B
 *   burst_write      READ 96 MTUs, RDMA WRITE of an MTU - 300 B
 *   burst_mixed      READ 96 MTUs, FETCH_AND_ADD, SEND, CMP_AND_SWAP,
 *                    WRITE, FETCH_AND_ADD, READ 3 MTUs + 5 B
 *   read_bind        READ 96 MTUs, BIND_MW (a type 2 window over the
 *                    requester's READ buffer; nothing posted after it)
 *   atomic_bind      FETCH_AND_ADD, BIND_MW
 *
 * A requester keeps few PSNs unanswered (sroce: 128 behind a message
 * shorter than an MTU, 128 KiB worth behind a longer one; rdma_rxe: 128):
 * behind a 1 MiB READ (256 PSNs at MTU 4096) the next request only leaves
 * once much of the READ is answered, and whether the responder is still
 * sending the rest then is a matter of timing. The burst cases fit the
 * window: their requests leave together, so the READ's responses cannot
 * all be out when the next request arrives.
 *
 * Every work request is signalled and must complete with success, in the
 * order posted, with its opcode. Every byte each READ brings back is
 * checked, and so is the original value each atomic returns; the responder
 * checks the new values of its atomic words, the SEND's receive (status,
 * length, bytes) and the bytes the WRITE placed (zeros behind them).
 *
 * And nothing may be sent twice: a response that overtakes an earlier
 * READ's makes the requester take the READ's responses for lost (an
 * implied NAK, IBA 9.7.5.2.6) and send the READ again. So the device
 * counters of retransmission and of its causes (sroce: retransmits,
 * ack_timeouts, tail_probes, seq_naks_*, duplicates, rnr/err NAKs; rdma_rxe: its
 * duplicate, sequence and retry counters), those of them the side's
 * device has, must not move during a case on either side.
 */
#include "log.h"
#include "modes.h"
#include "session.h"

#include <cerrno>
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

enum class OKind : uint8_t { read, fetch_add, cmp_swap, send, write, bind };

/* An operation of @mtus path MTUs plus @extra bytes (READ, SEND, WRITE). */
struct Op {
	OKind kind;
	uint32_t mtus;
	int32_t extra;
};

constexpr int32_t kMiB = 1024 * 1024;
constexpr unsigned kMaxOps = 8;

struct OSpec {
	const char *name;
	unsigned nops;
	Op ops[kMaxOps];
};

constexpr Op kRead1M = {OKind::read, 0, kMiB};
/* 96 MTUs: the READ and what follows fit the requester's window at once. */
constexpr Op kReadBurst = {OKind::read, 96, 0};
constexpr Op kFetchAdd = {OKind::fetch_add, 0, 8};
constexpr Op kCmpSwap = {OKind::cmp_swap, 0, 8};
/* One packet each: a longer message waits for a smaller window. */
constexpr Op kSendSmall = {OKind::send, 1, -77};
constexpr Op kWriteSmall = {OKind::write, 1, -300};
/*
 * A memory operation sends nothing: it completes once everything before it
 * is answered, also when that is a READ or an atomic and nothing follows.
 */
constexpr Op kBind = {OKind::bind, 0, 0};

constexpr OSpec kOSpecs[] = {
    {"read_fetch_add", 2, {kRead1M, kFetchAdd}},
    {"read_cmp_swap", 2, {kRead1M, kCmpSwap}},
    {"read_send", 2, {kRead1M, {OKind::send, 0, 5000}}},
    {"read_write", 2, {kRead1M, {OKind::write, 0, 64 * 1024}}},
    {"mixed",
     8,
     {kRead1M,
      kFetchAdd,
      {OKind::read, 0, 64 * 1024 + 123},
      kCmpSwap,
      {OKind::send, 0, 5000},
      kRead1M,
      kFetchAdd,
      {OKind::write, 0, 3000}}},
    {"burst_fetch_add", 2, {kReadBurst, kFetchAdd}},
    {"burst_cmp_swap", 2, {kReadBurst, kCmpSwap}},
    {"burst_send", 2, {kReadBurst, kSendSmall}},
    {"burst_write", 2, {kReadBurst, kWriteSmall}},
    {"burst_mixed",
     7,
     {kReadBurst, kFetchAdd, kSendSmall, kCmpSwap, kWriteSmall, kFetchAdd, {OKind::read, 3, 5}}},
    {"read_bind", 2, {kReadBurst, kBind}},
    {"atomic_bind", 2, {kFetchAdd, kBind}},
};
constexpr unsigned kOCases = sizeof(kOSpecs) / sizeof(kOSpecs[0]);

/* The responder's READ source: every READ of a case reads inside it. */
constexpr uint32_t kSrcBytes = 2 * kMiB + 64 * 1024;
/* The requester's READ destinations, one after the other. */
constexpr uint32_t kBackBytes = 3 * kMiB;
constexpr uint32_t kOutBytes = 128 * 1024;
constexpr uint32_t kWriteBytes = 128 * 1024;
constexpr uint32_t kRecvBytes = 16 * 1024;
constexpr uint32_t kAtomBytes = 4096;
constexpr uint32_t kQuietMs = 300;

bool needs_atomics(const OSpec &c)
{
	for (unsigned i = 0; i < c.nops; i++)
		if (c.ops[i].kind == OKind::fetch_add || c.ops[i].kind == OKind::cmp_swap)
			return true;
	return false;
}

uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dull;
	return x ^ (x >> 33);
}

/* The responder's READ source byte at @i (the same for every case). */
uint8_t src_byte(uint64_t seed, uint32_t i)
{
	const uint64_t x = mix(seed ^ (uint64_t(i >> 3) * 0x9e3779b97f4a7c15ull));

	return uint8_t(x >> (8 * (i & 7)));
}
/* The requester's SEND/WRITE payload byte at @i of case @k. */
uint8_t out_byte(uint64_t seed, unsigned k, uint32_t i)
{
	return uint8_t(mix(seed + (uint64_t(k + 1) << 32) + i) >> 13);
}
/* Atomic number @a of case @k: the word's value before, the operand, the swap. */
uint64_t atom_init(uint64_t seed, unsigned k, unsigned a)
{
	return mix(seed ^ (0xa70000 + k * 16 + a));
}
uint64_t atom_add(uint64_t seed, unsigned k, unsigned a)
{
	return mix(seed ^ (0xadd000 + k * 16 + a)) >> 8;
}
uint64_t atom_swap(uint64_t seed, unsigned k, unsigned a)
{
	return mix(seed ^ (0x5a0000 + k * 16 + a));
}
/* Where READ number @r of a case reads in the source. */
uint32_t read_src_off(unsigned r)
{
	return 4096 * r + 17 * r + 8;
}

/* Counters that count a retransmission or what causes one. */
constexpr const char *kQuietCounters[] = {
    /* sroce */
    "retransmits", "ack_timeouts", "tail_probes", "seq_naks_rcvd", "seq_naks_sent", "duplicates",
    "rnr_naks_rcvd", "rnr_naks_sent", "err_naks_rcvd", "err_naks_sent",
    /* rdma_rxe */
    "duplicate_request", "out_of_seq_request", "rcvd_seq_err", "completer_retry_err",
    "rcvd_rnr_err", "send_rnr_err", "retry_exceeded_err"};
constexpr unsigned kNumQuiet = sizeof(kQuietCounters) / sizeof(kQuietCounters[0]);

struct Counters {
	long v[kNumQuiet];
};

Counters read_counters(const std::string &dev)
{
	Counters c;

	for (unsigned i = 0; i < kNumQuiet; i++)
		c.v[i] = read_counter(dev, kQuietCounters[i]);
	return c;
}

class OrderCases
{
      public:
	explicit OrderCases(Session &s) : s_(s) {}
	bool setup(std::string *why);
	bool run_case(unsigned k, bool requester);
	unsigned cases_run() const { return run_; }
	unsigned cases_failed() const { return failed_; }

      private:
	struct Pair {
		Cq scq, rcq;
		QpPtr qp;
		QpEnd theirs;
		std::vector<RemoteMr> peer_mrs; /* src, atom, write */
	};

	bool make_pair(unsigned k, Pair *p, std::string *why);
	bool requester_half(unsigned k, Pair &p);
	bool responder_half(unsigned k, Pair &p);
	void check_counters(const Counters &before);
	uint32_t len(const Op &op) const
	{
		return uint32_t(int64_t(op.mtus) * s_.path_mtu + op.extra);
	}

	Session &s_;
	/* Responder side. */
	Buffer src_, atom_, write_, recv_;
	MrPtr src_mr_, atom_mr_, write_mr_, recv_mr_;
	/* Requester side. */
	Buffer back_, out_, res_;
	MrPtr back_mr_, out_mr_, res_mr_;
	std::string tag_;
	unsigned run_ = 0, failed_ = 0;
};

bool OrderCases::setup(std::string *why)
{
	ibv_pd *pd = s_.dev.pd.get();
	const unsigned lw = IBV_ACCESS_LOCAL_WRITE;

	if (!src_.alloc(kSrcBytes, why) || !atom_.alloc(kAtomBytes, why) ||
	    !write_.alloc(kWriteBytes, why) || !recv_.alloc(kRecvBytes, why) ||
	    !back_.alloc(kBackBytes, why) || !out_.alloc(kOutBytes, why) ||
	    !res_.alloc(kAtomBytes, why))
		return false;
	for (uint32_t i = 0; i < kSrcBytes; i++)
		src_.data()[i] = src_byte(s_.opt.seed, i);
	src_mr_ = reg_mr(pd, src_, IBV_ACCESS_REMOTE_READ | lw, why);
	if (src_mr_)
		atom_mr_ = reg_mr(pd, atom_, IBV_ACCESS_REMOTE_ATOMIC | lw, why);
	if (atom_mr_)
		write_mr_ = reg_mr(pd, write_, IBV_ACCESS_REMOTE_WRITE | lw, why);
	if (write_mr_)
		recv_mr_ = reg_mr(pd, recv_, lw, why);
	if (recv_mr_)
		back_mr_ = reg_mr(pd, back_, lw | IBV_ACCESS_MW_BIND, why);
	if (back_mr_)
		out_mr_ = reg_mr(pd, out_, 0, why);
	if (out_mr_)
		res_mr_ = reg_mr(pd, res_, lw, why);
	return res_mr_ != nullptr;
}

bool OrderCases::make_pair(unsigned k, Pair *p, std::string *why)
{
	ibv_qp_cap want{}, got{};
	std::vector<RemoteMr> mrs;
	QpParams qpp = s_.rc_params();
	Rng rng(s_.opt.seed ^ (0x0d00 + k) ^ (s_.client ? 1 : 2));

	if (!p->scq.create(s_.dev.ctx.get(), 2 * kMaxOps, why) ||
	    !p->rcq.create(s_.dev.ctx.get(), 2 * kMaxOps, why))
		return false;
	want.max_send_wr = kMaxOps;
	want.max_recv_wr = 4;
	want.max_send_sge = 1;
	want.max_recv_sge = 1;
	p->qp = create_qp(s_.dev, p->scq, p->rcq, IBV_QPT_RC, want, &got, why);
	if (!p->qp)
		return false;
	mrs.push_back({src_.addr(), src_mr_->rkey, src_.size()});
	mrs.push_back({atom_.addr(), atom_mr_->rkey, atom_.size()});
	mrs.push_back({write_.addr(), write_mr_->rkey, write_.size()});
	/*
	 * 4.096 us << 20 = 4.3 s: a TCG guest on a loaded host can stall for
	 * half a second, and the retransmission the local ACK timeout would
	 * then cause is not what the case looks for (an answer out of order
	 * makes the requester send again at once, whatever the timeout).
	 */
	qpp.timeout = 20;
	return s_.connect_to_peer(p->qp.get(), pick_psn(rng), mrs, 3, qpp, &p->theirs, &p->peer_mrs,
	                          why);
}

/* No counter of retransmission (or of its causes) moved since @before. */
void OrderCases::check_counters(const Counters &before)
{
	const Counters now = read_counters(s_.dev.name);
	unsigned seen = 0;

	for (unsigned i = 0; i < kNumQuiet; i++) {
		if (before.v[i] < 0 || now.v[i] < 0)
			continue;
		seen++;
		if (now.v[i] != before.v[i])
			log().fail("%s: counter %s went from %ld to %ld, want no change",
			           tag_.c_str(), kQuietCounters[i], before.v[i], now.v[i]);
	}
	if (!seen)
		log().info("%s: %s has none of the retransmission counters", tag_.c_str(),
		           s_.dev.name.c_str());
}

int wc_opcode_of(OKind k)
{
	switch (k) {
	case OKind::read:
		return IBV_WC_RDMA_READ;
	case OKind::fetch_add:
		return IBV_WC_FETCH_ADD;
	case OKind::cmp_swap:
		return IBV_WC_COMP_SWAP;
	case OKind::send:
		return IBV_WC_SEND;
	case OKind::bind:
		return IBV_WC_BIND_MW;
	default:
		return IBV_WC_RDMA_WRITE;
	}
}

bool OrderCases::requester_half(unsigned k, Pair &p)
{
	const OSpec &c = kOSpecs[k];
	const RemoteMr &src = p.peer_mrs[0], &atom = p.peer_mrs[1], &wr_target = p.peer_mrs[2];
	const uint64_t seed = s_.opt.seed;
	ibv_send_wr wr[kMaxOps]{}, *bad = nullptr;
	ibv_sge sge[kMaxOps]{};
	uint32_t back_off[kMaxOps]{}, back = 0, nread = 0, natom = 0, out_off = 0;
	unsigned atom_no[kMaxOps]{};
	std::vector<uint8_t> buf;
	std::string why;
	MwPtr mw;

	std::memset(back_.data(), 0, kBackBytes);
	std::memset(res_.data(), 0, kAtomBytes);
	for (uint32_t i = 0; i < kOutBytes; i++)
		out_.data()[i] = out_byte(seed, k, i);
	for (unsigned i = 0; i < c.nops; i++) {
		const Op &op = c.ops[i];

		wr[i].wr_id = i + 1;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i + 1 < c.nops ? &wr[i + 1] : nullptr;
		switch (op.kind) {
		case OKind::read:
			back_off[i] = back;
			sge[i] = {back_.addr() + back, len(op), back_mr_->lkey};
			wr[i].opcode = IBV_WR_RDMA_READ;
			wr[i].wr.rdma.remote_addr = src.addr + read_src_off(nread++);
			wr[i].wr.rdma.rkey = src.rkey;
			back += (len(op) + 4095) & ~4095u;
			break;
		case OKind::fetch_add:
		case OKind::cmp_swap:
			atom_no[i] = natom;
			sge[i] = {res_.addr() + 8 * natom, 8, res_mr_->lkey};
			wr[i].wr.atomic.remote_addr = atom.addr + 8 * natom;
			wr[i].wr.atomic.rkey = atom.rkey;
			if (op.kind == OKind::fetch_add) {
				wr[i].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
				wr[i].wr.atomic.compare_add = atom_add(seed, k, natom);
			} else {
				wr[i].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
				wr[i].wr.atomic.compare_add = atom_init(seed, k, natom);
				wr[i].wr.atomic.swap = atom_swap(seed, k, natom);
			}
			natom++;
			break;
		case OKind::send:
		case OKind::write:
			sge[i] = {out_.addr() + out_off, len(op), out_mr_->lkey};
			if (op.kind == OKind::send) {
				wr[i].opcode = IBV_WR_SEND;
			} else {
				wr[i].opcode = IBV_WR_RDMA_WRITE;
				wr[i].wr.rdma.remote_addr = wr_target.addr;
				wr[i].wr.rdma.rkey = wr_target.rkey;
			}
			out_off += len(op);
			break;
		case OKind::bind:
			mw.reset(ibv_alloc_mw(s_.dev.pd.get(), IBV_MW_TYPE_2));
			if (!mw) {
				log().fail("%s: ibv_alloc_mw type 2: %s", tag_.c_str(),
				           std::strerror(errno));
				return s_.give_up(tag_ + ": no window");
			}
			wr[i].sg_list = nullptr;
			wr[i].num_sge = 0;
			wr[i].opcode = IBV_WR_BIND_MW;
			wr[i].bind_mw.mw = mw.get();
			wr[i].bind_mw.rkey = ibv_inc_rkey(mw->rkey);
			wr[i].bind_mw.bind_info = {back_mr_.get(), back_.addr(), 4096,
			                           IBV_ACCESS_REMOTE_READ};
			break;
		}
	}
	if (!s_.chan.recv(MsgType::ready, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);
	const Counters before = read_counters(s_.dev.name);

	if (ibv_post_send(p.qp.get(), &wr[0], &bad)) {
		log().fail("%s: ibv_post_send failed at WR %td", tag_.c_str(), bad ? bad - wr : -1);
	} else {
		for (unsigned i = 0; i < c.nops; i++) {
			ibv_wc wc{};

			if (p.scq.wait(&wc, 1, s_.deadline()) != 1) {
				log().fail("%s: no completion for WR %u within %u s", tag_.c_str(),
				           i + 1, s_.opt.timeout);
				break;
			}
			if (wc.wr_id != i + 1 || wc.status != IBV_WC_SUCCESS ||
			    int(wc.opcode) != wc_opcode_of(c.ops[i].kind)) {
				log().fail("%s: completion %u is wr_id %" PRIu64
				           " %s opcode %s, want "
				           "wr_id %u IBV_WC_SUCCESS opcode %s",
				           tag_.c_str(), i + 1, wc.wr_id, wc_status_name(wc.status),
				           wc_opcode_name(wc.opcode), i + 1,
				           wc_opcode_name(wc_opcode_of(c.ops[i].kind)));
				break;
			}
		}
		ibv_wc extra{};
		if (p.scq.wait(&extra, 1, now_ms() + kQuietMs) == 1)
			log().fail("%s: unexpected completion wr_id %" PRIu64 " %s", tag_.c_str(),
			           extra.wr_id, wc_status_name(extra.status));
	}

	/* Every byte of every READ, the original value of every atomic. */
	nread = 0;
	for (unsigned i = 0; i < c.nops; i++) {
		const Op &op = c.ops[i];

		if (op.kind == OKind::read) {
			const uint32_t from = read_src_off(nread++);
			uint32_t bad_bytes = 0, first = 0;

			for (uint32_t j = 0; j < len(op); j++)
				if (back_.data()[back_off[i] + j] != src_byte(seed, from + j) &&
				    !bad_bytes++)
					first = j;
			if (bad_bytes)
				log().fail("%s: READ %u (WR %u, %u bytes): %u byte(s) differ, the "
				           "first at offset %u",
				           tag_.c_str(), nread, i + 1, len(op), bad_bytes, first);
			for (uint32_t j = back_off[i] + len(op);
			     j < back_off[i] + ((len(op) + 4095) & ~4095u); j++)
				if (back_.data()[j]) {
					log().fail("%s: READ %u wrote past its end, at offset %u",
					           tag_.c_str(), nread, j - back_off[i]);
					break;
				}
		} else if (op.kind == OKind::fetch_add || op.kind == OKind::cmp_swap) {
			uint64_t orig;

			std::memcpy(&orig, res_.data() + 8 * atom_no[i], 8);
			if (orig != atom_init(seed, k, atom_no[i]))
				log().fail("%s: atomic %u (WR %u) returned 0x%016" PRIx64
				           ", want the original 0x%016" PRIx64,
				           tag_.c_str(), atom_no[i] + 1, i + 1, orig,
				           atom_init(seed, k, atom_no[i]));
		}
	}
	check_counters(before);

	return s_.requester_done(tag_);
}

bool OrderCases::responder_half(unsigned k, Pair &p)
{
	const OSpec &c = kOSpecs[k];
	const uint64_t seed = s_.opt.seed, before_fail = log().failures();
	std::vector<uint8_t> buf;
	std::string why;
	ibv_sge sge = {recv_.addr(), kRecvBytes, recv_mr_->lkey};
	ibv_recv_wr rwr{}, *bad = nullptr;
	uint32_t natom = 0, out_off = 0, send_len = 0, send_off = 0, write_len = 0, write_off = 0;

	std::memset(atom_.data(), 0, kAtomBytes);
	std::memset(write_.data(), 0, kWriteBytes);
	std::memset(recv_.data(), 0, kRecvBytes);
	for (unsigned i = 0; i < c.nops; i++) {
		const Op &op = c.ops[i];

		if (op.kind == OKind::fetch_add || op.kind == OKind::cmp_swap) {
			const uint64_t v = atom_init(seed, k, natom);

			std::memcpy(atom_.data() + 8 * natom++, &v, 8);
		} else if (op.kind == OKind::send) {
			send_len = len(op);
			send_off = out_off;
			out_off += len(op);
		} else if (op.kind == OKind::write) {
			write_len = len(op);
			write_off = out_off;
			out_off += len(op);
		}
	}
	rwr.wr_id = 77;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (send_len && ibv_post_recv(p.qp.get(), &rwr, &bad))
		log().fail("%s: ibv_post_recv failed", tag_.c_str());
	const Counters before = read_counters(s_.dev.name);

	if (!s_.chan.send(MsgType::ready, &why) ||
	    !s_.chan.recv(MsgType::done, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);

	natom = 0;
	for (unsigned i = 0; i < c.nops; i++) {
		const OKind kind = c.ops[i].kind;
		uint64_t v, want;

		if (kind != OKind::fetch_add && kind != OKind::cmp_swap)
			continue;
		std::memcpy(&v, atom_.data() + 8 * natom, 8);
		want = kind == OKind::fetch_add
		           ? atom_init(seed, k, natom) + atom_add(seed, k, natom)
		           : atom_swap(seed, k, natom);
		if (v != want)
			log().fail("%s: atomic %u (WR %u) left 0x%016" PRIx64
			           ", want 0x%016" PRIx64,
			           tag_.c_str(), natom + 1, i + 1, v, want);
		natom++;
	}
	if (send_len) {
		ibv_wc wc{};

		if (p.rcq.wait(&wc, 1, s_.deadline()) != 1) {
			log().fail("%s: the SEND's receive never completed", tag_.c_str());
		} else if (wc.wr_id != 77 || wc.status != IBV_WC_SUCCESS ||
		           wc.opcode != IBV_WC_RECV || wc.byte_len != send_len) {
			log().fail("%s: the receive completed with wr_id %" PRIu64 " %s opcode %s "
			           "byte_len %u, want IBV_WC_SUCCESS IBV_WC_RECV %u",
			           tag_.c_str(), wc.wr_id, wc_status_name(wc.status),
			           wc_opcode_name(wc.opcode), wc.byte_len, send_len);
		} else {
			for (uint32_t j = 0; j < kRecvBytes; j++) {
				const uint8_t want =
				    j < send_len ? out_byte(seed, k, send_off + j) : 0;

				if (recv_.data()[j] != want) {
					log().fail("%s: received byte %u is 0x%02x, want 0x%02x",
					           tag_.c_str(), j, recv_.data()[j], want);
					break;
				}
			}
		}
	}
	for (uint32_t j = 0; j < kWriteBytes; j++) {
		const uint8_t want = j < write_len ? out_byte(seed, k, write_off + j) : 0;

		if (write_.data()[j] != want) {
			log().fail("%s: written byte %u is 0x%02x, want 0x%02x", tag_.c_str(), j,
			           write_.data()[j], want);
			break;
		}
	}
	if (wait_qp_state(p.qp.get(), IBV_QPS_RTS, 1000) != IBV_QPS_RTS)
		log().fail("%s: the responder's QP left RTS", tag_.c_str());
	check_counters(before);

	return s_.responder_done(tag_, before_fail);
}

bool OrderCases::run_case(unsigned k, bool requester)
{
	tag_ = std::string(kOSpecs[k].name) +
	       (s_.client == requester ? " (client requests)" : " (server requests)");
	run_++;
	return run_case_on_pair<Pair>(
	    s_, tag_, &failed_, [&](Pair *p, std::string *why) { return make_pair(k, p, why); },
	    [&](Pair &p) { return requester ? requester_half(k, p) : responder_half(k, p); });
}

} // namespace

int run_order(const Options &opt)
{
	const int64_t started = now_ms();
	Session s;
	std::string why;

	if (!s.start(opt, &why)) {
		log().fail("%s", why.c_str());
		std::printf("sroce-integrity order: FAIL side=%s: %s\n", s.side(), why.c_str());
		return 1;
	}
	OrderCases o(s);
	bool broken = !o.setup(&why);
	unsigned skipped = 0;

	if (broken)
		s.give_up(why);
	for (unsigned k = 0; k < kOCases && !broken; k++) {
		if (needs_atomics(kOSpecs[k]) && !s.atomics) {
			log().info("SKIP %s: a device has no atomics", kOSpecs[k].name);
			skipped++;
			continue;
		}
		for (unsigned d = 0; d < 2 && !broken; d++) {
			const uint32_t dir = d == 0 ? kClientRequests : kServerRequests;

			if (s.opt.directions & dir)
				broken = !o.run_case(k, (dir == kClientRequests) == s.client);
		}
	}
	const bool pass = !broken && log().failures() == 0;

	std::printf("sroce-integrity order: %s side=%s dev=%s mtu=%u seed=0x%016llx cases=%u "
	            "failed=%u skipped=%u errors=%" PRIu64 " time=%.1fs\n",
	            pass ? "PASS" : "FAIL", s.side(), s.dev.name.c_str(), s.path_mtu,
	            (unsigned long long)s.opt.seed, o.cases_run(), o.cases_failed(), skipped,
	            log().failures(), double(now_ms() - started) / 1000.0);
	std::fflush(stdout);
	return pass ? 0 : 1;
}

} // namespace integ
