// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * run mode: rounds of random traffic over one RC (or UC) QP pair, the two
 * sides taking turns as requester. In a round the responder sets up its
 * memory (poison around every target, READ sources, atomic words) and posts
 * one receive per SEND / WRITE with immediate, then says "ready"; the
 * requester posts the round's work requests, at most --depth in flight,
 * checks every completion and the data READs and atomics brought back, and
 * says "done"; the responder then checks its receive completions, the
 * received bytes, every written region and the atomic words, and answers
 * with what it found.
 *
 * Memory of each side, one slot per operation of a round:
 *   local   requester's source/sink buffers, registered twice (two lkeys)
 *   remote  targets of the peer's WRITEs and sources of its READs
 *   recv    receive buffers, registered twice
 *   words   the atomic words
 *
 * --odp registers all of it on demand: the device faults pages in as it
 * touches them (the responder answers a miss with an RNR NAK, the
 * requester waits for its own pages), and --odp-churn forks in a thread
 * of its own every few milliseconds while the rounds run: each fork
 * write-protects the process's private pages, which invalidates the
 * device's mappings, and the next WRITE into them breaks copy-on-write,
 * so the device must fault in pages that moved; the data stays, and every
 * byte is checked as without ODP.
 */
#include "log.h"
#include "modes.h"
#include "plan.h"
#include "session.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <endian.h>
#include <pthread.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace integ
{

namespace
{

constexpr unsigned kMrCopies = 2;
/* Slots are sized for this many SGEs on both sides, whatever each uses. */
constexpr uint32_t kSlotSges = 32;
constexpr uint32_t kWordsBytes = 4096;

struct Counters {
	uint64_t ops[kOpKinds] = {};
	uint64_t issued_ops = 0; /* as requester */
	uint64_t issued_bytes = 0;
	uint64_t checked_ops = 0; /* as responder: receives, writes, atomics */
	uint64_t checked_bytes = 0;
	uint64_t inline_ops = 0;
	uint64_t unsignalled_ops = 0;
	uint32_t rounds = 0;
};

/* One work request of the round, as the requester builds it. */
struct Wr {
	Layout lay;
	std::vector<ibv_sge> sges;
	bool signalled = false;
	bool inlined = false;
};

ibv_wr_opcode wr_opcode(OpKind k)
{
	switch (k) {
	case OpKind::send:
		return IBV_WR_SEND;
	case OpKind::send_imm:
		return IBV_WR_SEND_WITH_IMM;
	case OpKind::write:
		return IBV_WR_RDMA_WRITE;
	case OpKind::write_imm:
		return IBV_WR_RDMA_WRITE_WITH_IMM;
	case OpKind::read:
		return IBV_WR_RDMA_READ;
	case OpKind::cmp_swap:
		return IBV_WR_ATOMIC_CMP_AND_SWP;
	default:
		return IBV_WR_ATOMIC_FETCH_AND_ADD;
	}
}

ibv_wc_opcode send_wc_opcode(OpKind k)
{
	switch (k) {
	case OpKind::send:
	case OpKind::send_imm:
		return IBV_WC_SEND;
	case OpKind::write:
	case OpKind::write_imm:
		return IBV_WC_RDMA_WRITE;
	case OpKind::read:
		return IBV_WC_RDMA_READ;
	case OpKind::cmp_swap:
		return IBV_WC_COMP_SWAP;
	default:
		return IBV_WC_FETCH_ADD;
	}
}

uint64_t make_wr_id(uint32_t round, uint32_t index)
{
	return (uint64_t(round) << 32) | index;
}

std::string layout_text(const Layout &l)
{
	std::string s;

	for (const Piece &p : l.pieces) {
		s += s.empty() ? "" : " ";
		s += std::to_string(p.off) + "+" + std::to_string(p.len);
	}
	return "[" + s + "]";
}

/* --odp-churn: the thread that forks while the rounds run. */
struct Churn {
	std::atomic<bool> stop{false};
	uint32_t every_ms = 0;
	unsigned forks = 0;
	unsigned fork_errors = 0;
};

void *churn_main(void *arg)
{
	Churn *c = static_cast<Churn *>(arg);

	while (!c->stop.load()) {
		if (sroce_tools::cow_fork())
			c->forks++;
		else
			c->fork_errors++;
		usleep(c->every_ms * 1000);
	}
	return nullptr;
}

class Traffic
{
      public:
	explicit Traffic(Session &s) : s_(s) {}
	bool setup();
	/* false when the run had to stop (QP or connection broken). */
	bool run();
	/* Exchange the totals, print the summary; the exit status. */
	int finish(bool completed, int64_t started_ms);

      private:
	bool rounds();
	bool odp_supported();
	bool plan_config();
	bool alloc_memory();
	bool make_qp();
	bool connect_peer();
	bool request_round(const RoundPlan &p);
	bool respond_round(const RoundPlan &p);
	void prepare_wrs(const RoundPlan &p, Rng &rng, std::vector<Wr> *wrs);
	bool post_chain(const RoundPlan &p, std::vector<Wr> &wrs, uint32_t first, uint32_t count);
	bool reap(const RoundPlan &p, std::vector<Wr> &wrs, uint32_t posted, uint32_t *done);
	void check_local(const RoundPlan &p, const Wr &w, uint32_t index);
	bool post_recvs(const RoundPlan &p, Rng &rng, std::vector<Layout> *lays);
	bool check_recvs(const RoundPlan &p, const std::vector<Layout> &lays);
	void check_remote(const RoundPlan &p);
	std::string op_text(const RoundPlan &p, uint32_t i) const;
	/* Checks bytes in pieces and poison everywhere else in [0, end). */
	bool check_scatter(const uint8_t *base, const Layout &lay, const uint8_t *want,
	                   uint32_t len, uint32_t salt, const std::string &what);

	/* --corrupt: damage the byte at @p once, if @what is asked for. */
	void corrupt(Corrupt what, uint8_t *p, const std::string &where);

	uint8_t *local_slot(uint32_t i) const { return local_.data() + size_t(i) * slot_; }
	uint8_t *remote_slot(uint32_t i) const { return remote_.data() + size_t(i) * slot_; }
	uint8_t *recv_slot(uint32_t i) const { return recv_.data() + size_t(i) * slot_; }

	Session &s_;
	PlanConfig cfg_{};
	uint32_t slot_ = 0;
	uint32_t send_sge_ = 1, recv_sge_ = 1, read_sge_ = 1, max_inline_ = 0;
	Buffer local_, remote_, recv_, words_;
	Cq scq_, rcq_;
	MrPtr local_mr_[kMrCopies], recv_mr_[kMrCopies], remote_mr_, words_mr_;
	SrqPtr srq_; /* --srq; destroyed after qp_ */
	QpPtr qp_;
	RemoteMr peer_remote_, peer_words_;
	Counters c_;
	uint64_t peer_failures_ = 0;
	bool corrupted_ = false;
	std::vector<uint8_t> payload_;
};

/* The round plans' parameters, from the run parameters and both devices. */
bool Traffic::plan_config()
{
	const Options &o = s_.opt;
	const uint32_t all = o.ops_mask ? o.ops_mask : kAllOps;

	cfg_.ops_mask[0] = o.client_ops ? o.client_ops : all;
	cfg_.ops_mask[1] = o.server_ops ? o.server_ops : all;
	for (uint32_t &mask : cfg_.ops_mask) {
		if (o.uc)
			mask &= kUcOps;
		if (!s_.atomics && (mask & kAtomicOps)) {
			log().info("atomics left out: a device has atomic_cap ATOMIC_NONE");
			mask &= ~kAtomicOps;
		}
		if (!mask)
			return s_.give_up("no opcode left to test");
	}
	cfg_.max_size = o.max_size;
	cfg_.mtu = s_.path_mtu;
	cfg_.batch = o.batch;
	cfg_.uc = o.uc;
	cfg_.client_only = o.directions == kClientRequests;
	cfg_.server_only = o.directions == kServerRequests;
	slot_ = slot_size(cfg_.max_size, kSlotSges);
	return true;
}

/* --odp: does the device page this transport's operations on demand? */
bool Traffic::odp_supported()
{
	const uint32_t ops = cfg_.ops_mask[0] | cfg_.ops_mask[1];
	ibv_device_attr_ex dx{};
	uint32_t want = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE;

	if (!s_.opt.uc) {
		want |= IBV_ODP_SUPPORT_READ;
		if (ops & kAtomicOps)
			want |= IBV_ODP_SUPPORT_ATOMIC;
	}
	const int err = ibv_query_device_ex(s_.dev.ctx.get(), nullptr, &dx);
	if (err)
		return s_.give_up(std::string("--odp: ibv_query_device_ex: ") + std::strerror(err));
	const uint32_t have = s_.opt.uc ? dx.odp_caps.per_transport_caps.uc_odp_caps
	                                : dx.odp_caps.per_transport_caps.rc_odp_caps;
	if (!(dx.odp_caps.general_caps & IBV_ODP_SUPPORT) || (have & want) != want)
		return s_.give_up("--odp: " + s_.dev.name + " has no on-demand paging for " +
		                  (s_.opt.uc ? "UC" : "RC") + " (general caps " +
		                  std::to_string(dx.odp_caps.general_caps) + ", transport caps " +
		                  std::to_string(have) + ", wanted " + std::to_string(want) + ")");
	log().info("memory registered on demand (ODP)%s",
	           s_.opt.odp_churn_ms ? "; a thread forks while the rounds run" : "");
	return true;
}

/* Buffers, one slot per operation of a round, and their MRs. */
bool Traffic::alloc_memory()
{
	const size_t bytes = size_t(slot_) * s_.opt.batch;
	const unsigned odp = s_.opt.odp ? IBV_ACCESS_ON_DEMAND : 0;
	ibv_pd *pd = s_.dev.pd.get();
	std::string why;

	if (s_.opt.odp && !odp_supported())
		return false;
	if (!local_.alloc(bytes, &why) || !remote_.alloc(bytes, &why) ||
	    !recv_.alloc(bytes, &why) || !words_.alloc(kWordsBytes, &why))
		return s_.give_up(why);
	for (unsigned k = 0; k < kMrCopies; k++) {
		local_mr_[k] = reg_mr(pd, local_, IBV_ACCESS_LOCAL_WRITE | odp, &why);
		recv_mr_[k] = reg_mr(pd, recv_, IBV_ACCESS_LOCAL_WRITE | odp, &why);
		if (!local_mr_[k] || !recv_mr_[k])
			return s_.give_up(why);
	}
	remote_mr_ = reg_mr(
	    pd, remote_,
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | odp, &why);
	words_mr_ = reg_mr(pd, words_,
	                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
	                       (s_.atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0) | odp,
	                   &why);
	if (!remote_mr_ || !words_mr_)
		return s_.give_up(why);
	return true;
}

/* CQs and the QP; the SGE and inline limits are what the device granted. */
bool Traffic::make_qp()
{
	const Options &o = s_.opt;
	ibv_context *ctx = s_.dev.ctx.get();
	const uint32_t sge = std::min<uint32_t>(o.max_sge, s_.self.max_sge);
	ibv_qp_cap want{}, got{};
	std::string why;

	if (!scq_.create(ctx, int(o.depth) * 2 + 16, &why) ||
	    !rcq_.create(ctx, int(o.batch) * 2 + 16, &why))
		return s_.give_up(why);
	want.max_send_wr = o.depth + 1;
	want.max_recv_wr = o.batch + 1;
	want.max_send_sge = sge;
	want.max_recv_sge = sge;
	want.max_inline_data = o.max_inline;
	uint32_t srq_sge = 0;
	if (o.srq) {
		srq_ = create_srq(s_.dev, o.batch + 1,
		                  std::min<uint32_t>(sge, uint32_t(s_.dev.attr.max_srq_sge)),
		                  &srq_sge, &why);
		if (!srq_)
			return s_.give_up(why);
		log().info("receives through an SRQ (%u SGEs)", srq_sge);
	}
	qp_ = create_qp(s_.dev, scq_, rcq_, o.uc ? IBV_QPT_UC : IBV_QPT_RC, want, &got, &why,
	                srq_.get());
	if (!qp_)
		return s_.give_up(why);
	if (srq_)
		got.max_recv_sge = srq_sge;
	send_sge_ = std::max<uint32_t>(1, std::min(sge, got.max_send_sge));
	recv_sge_ = std::max<uint32_t>(1, std::min(sge, got.max_recv_sge));
	read_sge_ = std::max<uint32_t>(1, std::min(send_sge_, s_.self.max_sge_rd));
	max_inline_ = got.max_inline_data;
	return true;
}

/* Exchange QPs and MRs with the peer and bring the QP to RTS. */
bool Traffic::connect_peer()
{
	const Options &o = s_.opt;
	Rng psn_rng(stream_key(o.seed, Stream::local, s_.client ? 1 : 2, 0xffffffff));
	std::vector<RemoteMr> mrs, peer_mrs;
	QpEnd mine, theirs;
	QpParams qpp;
	std::string why, ops;

	mine.qpn = qp_->qp_num;
	mine.psn = pick_psn(psn_rng);
	mine.gid = s_.dev.gid;
	mrs.push_back({remote_.addr(), remote_mr_->rkey, remote_.size()});
	mrs.push_back({words_.addr(), words_mr_->rkey, words_.size()});
	if (!s_.exchange_qp(mine, mrs, &theirs, &peer_mrs, &why))
		return s_.give_up(why);
	if (peer_mrs.size() < 2 || peer_mrs[0].len < size_t(slot_) * o.batch)
		return s_.give_up("the peer's buffers are too small for this run");
	peer_remote_ = peer_mrs[0];
	peer_words_ = peer_mrs[1];

	qpp.type = o.uc ? IBV_QPT_UC : IBV_QPT_RC;
	qpp.path_mtu = s_.path_mtu;
	qpp.access = o.uc
	                 ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE
	                 : IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                       IBV_ACCESS_REMOTE_READ | (s_.atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	qpp.max_rd_atomic = s_.rd_atomic();
	qpp.max_dest_rd_atomic = s_.dest_rd_atomic();
	if (!connect_qp(qp_.get(), s_.dev, qpp, mine, theirs, &why))
		return s_.give_up(why);

	for (unsigned k = 0; k < kOpKinds; k++)
		if ((cfg_.ops_mask[0] | cfg_.ops_mask[1]) & (1u << k))
			ops += std::string(ops.empty() ? "" : ",") + op_name(OpKind(k));
	log().info("%s qpn 0x%06x psn 0x%06x -> qpn 0x%06x psn 0x%06x; ops %s; sizes 0..%u; "
	           "depth %u, up to %u ops a round; sge send %u recv %u read %u; inline %u",
	           o.uc ? "UC" : "RC", mine.qpn, mine.psn, theirs.qpn, theirs.psn, ops.c_str(),
	           cfg_.max_size, o.depth, o.batch, send_sge_, recv_sge_, read_sge_, max_inline_);
	return true;
}

bool Traffic::setup()
{
	return plan_config() && alloc_memory() && make_qp() && connect_peer();
}

std::string Traffic::op_text(const RoundPlan &p, uint32_t i) const
{
	const Op &op = p.ops[i];
	char buf[160];

	std::snprintf(buf, sizeof(buf), "round %u op %u/%zu %s len %u", p.round, i, p.ops.size(),
	              op_name(op.kind), op.len);
	return buf;
}

void Traffic::corrupt(Corrupt what, uint8_t *p, const std::string &where)
{
	if (s_.opt.corrupt != what || corrupted_)
		return;
	corrupted_ = true;
	*p ^= 0x01;
	log().info("--corrupt: damaged one byte of %s on purpose", where.c_str());
}

bool Traffic::check_scatter(const uint8_t *base, const Layout &lay, const uint8_t *want,
                            uint32_t len, uint32_t salt, const std::string &what)
{
	uint32_t msg = 0, pos = 0, bad = 0, first_bad = 0;
	bool ok = true;

	for (size_t k = 0; k < lay.pieces.size(); k++) {
		const Piece &pc = lay.pieces[k];
		const size_t junk = find_unpoisoned(base, pos, pc.off, salt);

		if (junk < pc.off) {
			log().fail("%s: byte %zu before SGE %zu (at %u) was overwritten (0x%02x)",
			           what.c_str(), junk, k, pc.off, base[junk]);
			ok = false;
		}
		for (uint32_t j = 0; j < pc.len; j++, msg++) {
			const uint8_t expect =
			    msg < len ? want[msg] : poison_byte(pc.off + j, salt);

			if (base[pc.off + j] != expect) {
				if (!bad++)
					first_bad = msg;
			}
		}
		pos = pc.off + pc.len;
	}
	if (bad) {
		log().fail("%s: %u of %u bytes wrong in SGEs %s, first at message offset %u%s",
		           what.c_str(), bad, msg, layout_text(lay).c_str(), first_bad,
		           first_bad >= len ? " (past the message end)" : "");
		ok = false;
	}
	const size_t junk = find_unpoisoned(base, pos, lay.end, salt);

	if (junk < lay.end) {
		log().fail("%s: byte %zu after the last SGE (ends at %u) was overwritten (0x%02x)",
		           what.c_str(), junk, pos, base[junk]);
		ok = false;
	}
	return ok;
}

void Traffic::prepare_wrs(const RoundPlan &p, Rng &rng, std::vector<Wr> *wrs)
{
	const uint32_t salt = p.round;

	wrs->assign(p.ops.size(), Wr());
	for (uint32_t i = 0; i < p.ops.size(); i++) {
		const Op &op = p.ops[i];
		Wr &w = (*wrs)[i];
		uint8_t *slot = local_slot(i);

		if (is_atomic(op.kind)) {
			w.lay.pieces.push_back({kGuard + rng.below(kMaxStartOffset + 1), 8,
			                        uint8_t(rng.below(kMrCopies))});
			w.lay.end = w.lay.pieces[0].off + 8 + kGuard;
		} else {
			w.lay =
			    make_layout(rng, op.len,
			                op.kind == OpKind::read ? read_sge_ : send_sge_, kMrCopies);
		}
		w.inlined = local_is_source(op.kind) && op.len <= max_inline_ && rng.chance(40);
		w.signalled = rng.chance(50);
		fill_poison(slot, 0, w.lay.end, salt);
		if (local_is_source(op.kind)) {
			payload_.resize(op.len);
			op_payload(s_.opt.seed, p.round, i, payload_.data(), op.len);
			uint32_t msg = 0;

			for (const Piece &pc : w.lay.pieces) {
				std::memcpy(slot + pc.off, payload_.data() + msg, pc.len);
				msg += pc.len;
			}
		}
		for (const Piece &pc : w.lay.pieces)
			w.sges.push_back({reinterpret_cast<uintptr_t>(slot + pc.off), pc.len,
			                  local_mr_[pc.mr]->lkey});
	}
}

bool Traffic::post_chain(const RoundPlan &p, std::vector<Wr> &wrs, uint32_t first, uint32_t count)
{
	std::vector<ibv_send_wr> chain(count);
	ibv_send_wr *bad = nullptr;

	for (uint32_t k = 0; k < count; k++) {
		const uint32_t i = first + k;
		const Op &op = p.ops[i];
		Wr &w = wrs[i];
		ibv_send_wr &wr = chain[k];

		wr.wr_id = make_wr_id(p.round, i);
		wr.next = k + 1 < count ? &chain[k + 1] : nullptr;
		wr.sg_list = w.sges.empty() ? nullptr : w.sges.data();
		wr.num_sge = int(w.sges.size());
		wr.opcode = wr_opcode(op.kind);
		wr.send_flags = (w.signalled ? IBV_SEND_SIGNALED : 0) |
		                (w.inlined ? IBV_SEND_INLINE : 0) | (op.fence ? IBV_SEND_FENCE : 0);
		if (has_imm(op.kind))
			wr.imm_data = htobe32(op.imm);
		if (is_write(op.kind) || op.kind == OpKind::read) {
			wr.wr.rdma.remote_addr =
			    peer_remote_.addr + uint64_t(i) * slot_ + kGuard + op.remote_off;
			wr.wr.rdma.rkey = peer_remote_.rkey;
		} else if (is_atomic(op.kind)) {
			wr.wr.atomic.remote_addr = peer_words_.addr + 8ull * op.word;
			wr.wr.atomic.rkey = peer_words_.rkey;
			if (op.kind == OpKind::cmp_swap) {
				wr.wr.atomic.compare_add = op.compare;
				wr.wr.atomic.swap = op.swap_add;
			} else {
				wr.wr.atomic.compare_add = op.swap_add;
			}
		}
		log().debug("post %s wr_id 0x%" PRIx64 " sges %s%s%s%s", op_text(p, i).c_str(),
		            wr.wr_id, layout_text(w.lay).c_str(), w.signalled ? " signalled" : "",
		            w.inlined ? " inline" : "", op.fence ? " fence" : "");
	}
	if (int err = ibv_post_send(qp_.get(), chain.data(), &bad)) {
		const long at = bad ? long(bad - chain.data()) : -1;

		log().fail("ibv_post_send of %u WRs from %s: %s (bad_wr is #%ld)", count,
		           op_text(p, first).c_str(), std::strerror(err), at);
		return false;
	}
	/* Inline data was copied at post time: the buffer is ours again. */
	for (uint32_t k = 0; k < count; k++) {
		const Wr &w = wrs[first + k];

		if (w.inlined)
			for (const ibv_sge &sge : w.sges)
				for (uint32_t j = 0; j < sge.length; j++)
					reinterpret_cast<uint8_t *>(sge.addr)[j] ^= 0xff;
	}
	return true;
}

void Traffic::check_local(const RoundPlan &p, const Wr &w, uint32_t i)
{
	const Op &op = p.ops[i];

	if (op.kind == OpKind::read) {
		if (op.len)
			corrupt(Corrupt::read, local_slot(i) + w.lay.pieces[0].off, op_text(p, i));
		payload_.resize(op.len);
		op_payload(s_.opt.seed, p.round, i, payload_.data(), op.len);
		check_scatter(local_slot(i), w.lay, payload_.data(), op.len, p.round,
		              op_text(p, i) + " (local buffer)");
	} else if (is_atomic(op.kind)) {
		uint8_t want[8];

		corrupt(Corrupt::atomic, local_slot(i) + w.lay.pieces[0].off, op_text(p, i));
		std::memcpy(want, &op.orig, 8);
		if (!check_scatter(local_slot(i), w.lay, want, 8, p.round,
		                   op_text(p, i) + " (returned value)")) {
			uint64_t got;

			std::memcpy(&got, local_slot(i) + w.lay.pieces[0].off, 8);
			log().fail("%s: word %u returned 0x%016" PRIx64 ", want 0x%016" PRIx64
			           " (compare 0x%016" PRIx64 ", swap/add 0x%016" PRIx64 ")",
			           op_text(p, i).c_str(), op.word, got, op.orig, op.compare,
			           op.swap_add);
		}
	}
}

/*
 * Poll the send CQ once (bounded) and retire what completed. Completions
 * of signalled WRs come in posting order; each one also completes the
 * unsignalled WRs before it.
 */
bool Traffic::reap(const RoundPlan &p, std::vector<Wr> &wrs, uint32_t posted, uint32_t *done)
{
	ibv_wc wc[16];
	const int n = scq_.wait(wc, 16, s_.deadline());
	bool ok = true;

	if (n < 0) {
		log().fail("round %u: ibv_poll_cq on the send CQ failed", p.round);
		return false;
	}
	if (n == 0) {
		log().fail("round %u: no send completion within %u s (%u of %zu WRs posted, %u "
		           "completed; oldest outstanding: %s)",
		           p.round, s_.opt.timeout, posted, p.ops.size(), *done,
		           op_text(p, *done).c_str());
		return false;
	}
	for (int k = 0; k < n; k++) {
		const ibv_wc &e = wc[k];
		const uint32_t i = uint32_t(e.wr_id);

		if (e.wr_id >> 32 != p.round || i >= posted || i < *done) {
			log().fail("round %u: completion with unexpected wr_id 0x%" PRIx64
			           " (%s, status %s; %u WRs posted, %u completed)",
			           p.round, e.wr_id, wc_opcode_name(e.opcode),
			           wc_status_name(e.status), posted, *done);
			ok = false;
			continue;
		}
		const Op &op = p.ops[i];

		if (e.status != IBV_WC_SUCCESS) {
			/* Only the first error is news; the rest are flushed. */
			if (ok || e.status != IBV_WC_WR_FLUSH_ERR)
				log().fail("%s: completed with %s (vendor_err 0x%x)%s",
				           op_text(p, i).c_str(), wc_status_name(e.status),
				           e.vendor_err, wrs[i].signalled ? "" : " (unsignalled)");
			ok = false;
			continue;
		}
		if (!wrs[i].signalled) {
			log().fail("%s: successful completion of an unsignalled WR",
			           op_text(p, i).c_str());
			ok = false;
			continue;
		}
		if (e.opcode != send_wc_opcode(op.kind))
			log().fail("%s: completion opcode %s, want %s", op_text(p, i).c_str(),
			           wc_opcode_name(e.opcode),
			           wc_opcode_name(send_wc_opcode(op.kind)));
		if ((op.kind == OpKind::read || is_atomic(op.kind)) && e.byte_len != op.len)
			log().fail("%s: completion byte_len %u, want %u", op_text(p, i).c_str(),
			           e.byte_len, op.len);
		if (e.qp_num != qp_->qp_num)
			log().fail("%s: completion qp_num 0x%x, want 0x%x", op_text(p, i).c_str(),
			           e.qp_num, qp_->qp_num);
		for (uint32_t j = *done; j <= i; j++)
			check_local(p, wrs[j], j);
		*done = i + 1;
	}
	return ok;
}

bool Traffic::request_round(const RoundPlan &p)
{
	Rng rng(stream_key(s_.opt.seed, Stream::local, p.round));
	const uint32_t n = uint32_t(p.ops.size());
	const uint32_t depth = s_.opt.depth;
	/* Any run of unsignalled WRs is shorter than half the window. */
	const uint32_t max_unsignalled = std::max<uint32_t>(1, depth / 2) - 1;
	std::vector<uint8_t> buf;
	std::vector<Wr> wrs;
	uint32_t posted = 0, done = 0, run = 0;
	const uint64_t failures_before = log().failures();
	bool ok = true;
	std::string why;

	prepare_wrs(p, rng, &wrs);
	for (uint32_t i = 0; i < n; i++) {
		Wr &w = wrs[i];

		if (i == n - 1 || run >= max_unsignalled)
			w.signalled = true;
		run = w.signalled ? 0 : run + 1;
		c_.ops[unsigned(p.ops[i].kind)]++;
		c_.issued_bytes += p.ops[i].len;
		c_.inline_ops += w.inlined;
		c_.unsignalled_ops += !w.signalled;
	}
	c_.issued_ops += n;
	if (!s_.chan.recv(MsgType::ready, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(why);

	while (ok && done < n) {
		if (posted < n && posted - done < depth) {
			const uint32_t room = std::min(n - posted, depth - (posted - done));
			const uint32_t count = rng.range(1, room);

			ok = post_chain(p, wrs, posted, count);
			posted += count;
			continue;
		}
		ok = reap(p, wrs, posted, &done);
	}

	Writer w;

	w.u8(!ok).u32(uint32_t(log().failures() - failures_before));
	if (!s_.chan.send(MsgType::done, w, &why) ||
	    !s_.chan.recv(MsgType::result, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(why);
	Reader r(buf);
	const bool peer_broken = r.u8() != 0;
	const uint32_t peer_round_failures = r.u32();

	if (peer_round_failures)
		log().info("round %u: the %s found %u problem(s), see its log", p.round,
		           s_.peer_side(), peer_round_failures);
	peer_failures_ += peer_round_failures;
	return ok && !peer_broken;
}

bool Traffic::post_recvs(const RoundPlan &p, Rng &rng, std::vector<Layout> *lays)
{
	std::vector<ibv_recv_wr> wrs;
	std::vector<std::vector<ibv_sge>> sges;
	std::vector<uint32_t> index;

	lays->assign(p.ops.size(), Layout());
	for (uint32_t i = 0; i < p.ops.size(); i++) {
		const Op &op = p.ops[i];

		if (!uses_recv(op.kind))
			continue;
		/* A receive a bit larger than the message; a WRITE with
		 * immediate gets a small one that must stay untouched. */
		const uint32_t room = is_send(op.kind) ? op.len + rng.below(65) : rng.below(65);
		Layout &l = (*lays)[i];
		uint8_t *slot = recv_slot(i);

		l = make_layout(rng, room, recv_sge_, kMrCopies);
		fill_poison(slot, 0, l.end, p.round);
		sges.emplace_back();
		for (const Piece &pc : l.pieces)
			sges.back().push_back({reinterpret_cast<uintptr_t>(slot + pc.off), pc.len,
			                       recv_mr_[pc.mr]->lkey});
		index.push_back(i);
	}
	wrs.resize(index.size());
	for (size_t k = 0; k < wrs.size(); k++) {
		wrs[k].wr_id = make_wr_id(p.round, index[k]);
		wrs[k].sg_list = sges[k].empty() ? nullptr : sges[k].data();
		wrs[k].num_sge = int(sges[k].size());
	}
	/* Post them in chains of random length. */
	for (size_t k = 0; k < wrs.size();) {
		const size_t count = rng.range(1, uint32_t(wrs.size() - k));
		ibv_recv_wr *bad = nullptr;

		for (size_t j = k; j < k + count; j++)
			wrs[j].next = j + 1 < k + count ? &wrs[j + 1] : nullptr;
		const int err = srq_ ? ibv_post_srq_recv(srq_.get(), &wrs[k], &bad)
		                     : ibv_post_recv(qp_.get(), &wrs[k], &bad);
		if (err) {
			log().fail("round %u: %s of %zu WRs: %s", p.round,
			           srq_ ? "ibv_post_srq_recv" : "ibv_post_recv", count,
			           std::strerror(err));
			return false;
		}
		k += count;
	}
	return true;
}

bool Traffic::check_recvs(const RoundPlan &p, const std::vector<Layout> &lays)
{
	std::vector<uint32_t> expect;
	size_t next = 0;

	for (uint32_t i = 0; i < p.ops.size(); i++)
		if (uses_recv(p.ops[i].kind))
			expect.push_back(i);
	while (next < expect.size()) {
		ibv_wc wc[16];
		const int n = rcq_.wait(wc, 16, s_.deadline());

		if (n <= 0) {
			log().fail(
			    "round %u: %zu of %zu receive completions within %u s; missing: %s",
			    p.round, next, expect.size(), s_.opt.timeout,
			    op_text(p, expect[next]).c_str());
			return false;
		}
		for (int k = 0; k < n; k++, next++) {
			const ibv_wc &e = wc[k];

			if (next >= expect.size() || e.wr_id != make_wr_id(p.round, expect[next])) {
				log().fail("round %u: receive completion wr_id 0x%" PRIx64
				           " (%s, %s, %u bytes), want %s",
				           p.round, e.wr_id, wc_status_name(e.status),
				           wc_opcode_name(e.opcode), e.byte_len,
				           next < expect.size() ? op_text(p, expect[next]).c_str()
				                                : "none");
				return false;
			}
			const uint32_t i = expect[next];
			const Op &op = p.ops[i];
			const std::string what = op_text(p, i) + " (receive)";

			if (e.status != IBV_WC_SUCCESS) {
				log().fail("%s: completed with %s (vendor_err 0x%x)", what.c_str(),
				           wc_status_name(e.status), e.vendor_err);
				return false;
			}
			const ibv_wc_opcode want_op =
			    is_send(op.kind) ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;

			if (e.opcode != want_op)
				log().fail("%s: opcode %s, want %s", what.c_str(),
				           wc_opcode_name(e.opcode), wc_opcode_name(want_op));
			if (e.byte_len != op.len)
				log().fail("%s: byte_len %u, want %u", what.c_str(), e.byte_len,
				           op.len);
			if (bool(e.wc_flags & IBV_WC_WITH_IMM) != has_imm(op.kind))
				log().fail("%s: wc_flags 0x%x, IBV_WC_WITH_IMM %s", what.c_str(),
				           e.wc_flags, has_imm(op.kind) ? "missing" : "unexpected");
			else if (has_imm(op.kind) && e.imm_data != htobe32(op.imm))
				log().fail("%s: imm_data 0x%08x, want 0x%08x", what.c_str(),
				           be32toh(e.imm_data), op.imm);
			if (e.qp_num != qp_->qp_num)
				log().fail("%s: qp_num 0x%x, want 0x%x", what.c_str(), e.qp_num,
				           qp_->qp_num);
			if (is_send(op.kind)) {
				if (op.len)
					corrupt(Corrupt::recv, recv_slot(i) + lays[i].pieces[0].off,
					        what);
				payload_.resize(op.len);
				op_payload(s_.opt.seed, p.round, i, payload_.data(), op.len);
				check_scatter(recv_slot(i), lays[i], payload_.data(), op.len,
				              p.round, what);
			} else {
				check_scatter(recv_slot(i), lays[i], nullptr, 0, p.round,
				              what + " buffer of a WRITE with immediate");
			}
			c_.checked_ops++;
			c_.checked_bytes += op.len;
		}
	}
	ibv_wc extra;

	if (rcq_.poll(&extra, 1) > 0) {
		log().fail("round %u: extra receive completion wr_id 0x%" PRIx64 " (%s, %s)",
		           p.round, extra.wr_id, wc_status_name(extra.status),
		           wc_opcode_name(extra.opcode));
		return false;
	}
	return true;
}

void Traffic::check_remote(const RoundPlan &p)
{
	for (uint32_t i = 0; i < p.ops.size(); i++) {
		const Op &op = p.ops[i];

		if (!is_write(op.kind))
			continue;
		Layout l;

		l.pieces.push_back({kGuard + op.remote_off, op.len, 0});
		l.end = kGuard + op.remote_off + op.len + kGuard;
		if (op.len)
			corrupt(Corrupt::write, remote_slot(i) + kGuard + op.remote_off,
			        op_text(p, i));
		corrupt(Corrupt::guard, remote_slot(i) + kGuard + op.remote_off + op.len,
		        op_text(p, i) + " (the byte after it)");
		payload_.resize(op.len);
		op_payload(s_.opt.seed, p.round, i, payload_.data(), op.len);
		check_scatter(remote_slot(i), l, payload_.data(), op.len, p.round,
		              op_text(p, i) + " (written region)");
		if (op.kind == OpKind::write) {
			c_.checked_ops++;
			c_.checked_bytes += op.len;
		}
	}
	uint64_t words[kAtomicWords];

	std::memcpy(words, words_.data(), sizeof(words));
	for (unsigned w = 0; w < kAtomicWords; w++)
		if (words[w] != p.words_after[w])
			log().fail("round %u: atomic word %u is 0x%016" PRIx64
			           ", want 0x%016" PRIx64 " (was 0x%016" PRIx64 ")",
			           p.round, w, words[w], p.words_after[w], p.words_before[w]);
	const size_t junk = find_unpoisoned(words_.data(), sizeof(words), kWordsBytes, p.round);

	if (junk < kWordsBytes)
		log().fail("round %u: byte %zu of the atomic words buffer was overwritten", p.round,
		           junk);
	for (const Op &op : p.ops)
		if (is_atomic(op.kind))
			c_.checked_ops++;
}

bool Traffic::respond_round(const RoundPlan &p)
{
	Rng rng(stream_key(s_.opt.seed, Stream::receive, p.round));
	const uint64_t failures_before = log().failures();
	std::vector<Layout> lays;
	std::vector<uint8_t> buf;
	std::string why;
	bool ok = true;

	fill_poison(words_.data(), 0, kWordsBytes, p.round);
	std::memcpy(words_.data(), p.words_before.data(), sizeof(p.words_before));
	for (uint32_t i = 0; i < p.ops.size(); i++) {
		const Op &op = p.ops[i];

		if (is_write(op.kind) || op.kind == OpKind::read)
			fill_poison(remote_slot(i), 0, kGuard + op.remote_off + op.len + kGuard,
			            p.round);
		if (op.kind == OpKind::read)
			op_payload(s_.opt.seed, p.round, i, remote_slot(i) + kGuard + op.remote_off,
			           op.len);
	}
	if (!post_recvs(p, rng, &lays))
		return s_.give_up("cannot post the round's receives");
	if (!s_.chan.send(MsgType::ready, &why) ||
	    !s_.chan.recv(MsgType::done, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(why);
	Reader r(buf);
	const bool peer_broken = r.u8() != 0;

	if (peer_broken) {
		log().info("round %u: the %s stopped the round (see its log)", p.round,
		           s_.peer_side());
	} else {
		ok = check_recvs(p, lays);
		check_remote(p);
	}

	Writer w;

	w.u8(!ok).u32(uint32_t(log().failures() - failures_before));
	if (!s_.chan.send(MsgType::result, w, &why))
		return s_.give_up(why);
	return ok && !peer_broken;
}

bool Traffic::run()
{
	Churn churn;
	pthread_t th;

	churn.every_ms = s_.opt.odp_churn_ms;
	if (!churn.every_ms)
		return rounds();
	if (pthread_create(&th, nullptr, churn_main, &churn))
		return s_.give_up("--odp-churn: cannot start the thread");
	const bool completed = rounds();
	churn.stop = true;
	pthread_join(th, nullptr);
	log().info("--odp-churn: %u forks while the rounds ran", churn.forks);
	if (churn.fork_errors)
		log().fail("--odp-churn: %u of the forks failed", churn.fork_errors);
	if (!churn.forks)
		log().fail("--odp-churn: no fork while the rounds ran: nothing was invalidated");
	return completed;
}

bool Traffic::rounds()
{
	const Options &o = s_.opt;
	const int64_t start = now_ms();
	std::vector<uint8_t> buf;
	std::string why;

	for (uint32_t round = 0;; round++) {
		bool go;

		if (s_.client) {
			const uint32_t dirs = o.directions == kBothDirections ? 2 : 1;

			go = o.duration ? now_ms() - start < int64_t(o.duration) * 1000
			                : round < dirs * o.rounds;
			/* One access() a round, not one per work request. */
			if (go && !o.stop_file.empty() && access(o.stop_file.c_str(), F_OK) == 0) {
				log().info("round %u: %s exists, ending the run", round,
				           o.stop_file.c_str());
				go = false;
			}
			if (!s_.chan.send(MsgType::round, Writer().u8(go).u32(round), &why))
				return s_.give_up(why);
		} else {
			if (!s_.chan.recv(MsgType::round, &buf, s_.peer_timeout_ms(), &why))
				return s_.give_up(why);
			Reader r(buf);

			go = r.u8() != 0;
			if (r.u32() != round)
				return s_.give_up("the client is at another round");
		}
		if (!go)
			return true;
		const RoundPlan p = make_plan(cfg_, o.seed, round);
		const bool requester = p.client_requests == s_.client;

		log().debug("round %u: %zu ops, %s", round, p.ops.size(),
		            requester ? "requester" : "responder");
		if (!(requester ? request_round(p) : respond_round(p))) {
			log().info(
			    "round %u: stopping the run (the QP or the connection is broken)",
			    round);
			return false;
		}
		c_.rounds++;
	}
}

int Traffic::finish(bool completed, int64_t started_ms)
{
	const double secs = double(now_ms() - started_ms) / 1000.0;
	std::vector<uint8_t> buf;
	std::string why, by_op;
	uint64_t peer_reported = 0;
	bool have_peer = false;

	Writer w;

	w.u64(log().failures()).u8(!completed);
	if (s_.chan.send(MsgType::summary, w, &why) &&
	    s_.chan.recv(MsgType::summary, &buf, 5000, &why)) {
		Reader r(buf);

		peer_reported = r.u64();
		have_peer = r.ok();
	}
	if (!have_peer)
		log().info("no summary from the %s: %s", s_.peer_side(), why.c_str());
	for (unsigned k = 0; k < kOpKinds; k++)
		by_op += std::string(by_op.empty() ? "" : " ") + op_name(OpKind(k)) + "=" +
		         std::to_string(c_.ops[k]);
	log().info("issued by opcode: %s; inline %" PRIu64 ", unsignalled %" PRIu64, by_op.c_str(),
	           c_.inline_ops, c_.unsignalled_ops);

	const uint64_t mine = log().failures();
	const bool pass = completed && mine == 0 && have_peer && peer_reported == 0;

	std::printf("sroce-integrity run: %s side=%s dev=%s transport=%s mtu=%u seed=0x%016llx "
	            "rounds=%u ops=%" PRIu64 " bytes=%" PRIu64 " checked_ops=%" PRIu64
	            " checked_bytes=%" PRIu64 " errors=%" PRIu64 " peer_errors=%s time=%.1fs\n",
	            pass ? "PASS" : "FAIL", s_.side(), s_.dev.name.c_str(), s_.opt.uc ? "UC" : "RC",
	            s_.path_mtu, (unsigned long long)s_.opt.seed, c_.rounds, c_.issued_ops,
	            c_.issued_bytes, c_.checked_ops, c_.checked_bytes, mine,
	            have_peer ? std::to_string(peer_reported).c_str() : "?", secs);
	std::fflush(stdout);
	return pass ? 0 : 1;
}

} // namespace

int run_traffic(const Options &opt)
{
	const int64_t started = now_ms();
	Session s;
	std::string why;

	if (!s.start(opt, &why)) {
		log().fail("%s", why.c_str());
		std::printf("sroce-integrity run: FAIL side=%s: %s\n", s.side(), why.c_str());
		return 1;
	}
	Traffic t(s);

	if (!t.setup()) {
		std::printf("sroce-integrity run: FAIL side=%s: setup failed\n", s.side());
		return 1;
	}
	return t.finish(t.run(), started);
}

} // namespace integ
