// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * flush mode: RDMA FLUSH (IBA Annex A19) from the client to the server
 * (or, when only the server can post FLUSH and the client's device can be
 * its target, from the server to the client), one RC QP pair per case.
 *
 *   case          what the requester posts                want
 *   range         WRITE, FLUSH of that range, READ back   success
 *   region        WRITE, FLUSH of the whole MR, READ back success
 *   empty         WRITE, FLUSH of 0 bytes, READ back      success
 *   no_mr_access  FLUSH of an MR without FLUSH access     IBV_WC_REM_ACCESS_ERR
 *   out_of_range  FLUSH across the end of the MR          IBV_WC_REM_ACCESS_ERR
 *   no_qp_access  FLUSH to a QP without FLUSH access      IBV_WC_REM_INV_REQ_ERR
 *   persistent    FLUSH for persistence (not granted)     IBV_WC_REM_INV_REQ_ERR
 *   persistent_region  the same to a QP that grants it, as ib_cm's QPs
 *                 are, and a region that cannot          IBV_WC_REM_ACCESS_ERR
 *
 * The three work requests of a good case go out in one post, before any
 * completion: the FLUSH must complete (opcode 8, IBV_WC_FLUSH of later
 * libibverbs; byte_len 0) after the WRITE and before the READ, the READ
 * must bring back every byte the WRITE sent, and the responder, told after
 * the FLUSH completed, finds exactly those bytes in its region and zeros
 * everywhere else. A bad case is the responder's class C error: the FLUSH
 * completes with the status above, the SEND behind it with
 * IBV_WC_WR_FLUSH_ERR, both QPs end in ERR, the responder's pending
 * receive is flushed and the region stays zero. An sroce responder's
 * "flushes" counter must rise by one in a good case and stay in a bad one.
 * Only a side whose device is sroce (sysfs attribute sroce_abi) and whose
 * provider exports sroce_wr_flush() requests.
 *
 * The responder grants FLUSH with the access bit of Linux 6.2+
 * (IB_ACCESS_FLUSH_GLOBAL) on its region and QP; the requester posts FLUSH
 * through the sroce provider's sroce_wr_flush() (include/sroce/sroce_ext.h:
 * rdma-core 44 has no ibv_wr_flush()). When no side can post FLUSH to a
 * device that offers it, both print a SKIP line with the reason and exit
 * with status 4.
 */
#include "log.h"
#include "modes.h"
#include "session.h"

#include <sroce/sroce_ext.h>
#include <uapi/rdma/sroce-abi.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace integ
{

namespace
{

enum class FCase : uint8_t {
	range,
	region,
	empty,
	no_mr_access,
	out_of_range,
	no_qp_access,
	persistent,
	persistent_region,
	count,
};

struct FSpec {
	const char *name;
	const char *what;
	int want;            /* the FLUSH's status */
	bool qp_access;      /* the server's QP grants FLUSH */
	bool flush_mr;       /* aimed at the region that grants FLUSH */
	uint8_t type, level; /* the FETH */
	bool beyond_end;     /* the range crosses the region's end */
};

constexpr FSpec kFSpecs[] = {
    {"range", "WRITE, FLUSH of that range, READ back", IBV_WC_SUCCESS, true, true,
     SROCE_FLUSH_GLOBAL, SROCE_FLUSH_RANGE, false},
    {"region", "WRITE, FLUSH of the whole region, READ back", IBV_WC_SUCCESS, true, true,
     SROCE_FLUSH_GLOBAL, SROCE_FLUSH_MR, false},
    {"empty", "WRITE, FLUSH of 0 bytes, READ back", IBV_WC_SUCCESS, true, true, SROCE_FLUSH_GLOBAL,
     SROCE_FLUSH_RANGE, false},
    {"no_mr_access", "FLUSH of a region without FLUSH access", IBV_WC_REM_ACCESS_ERR, true, false,
     SROCE_FLUSH_GLOBAL, SROCE_FLUSH_RANGE, false},
    {"out_of_range", "FLUSH across the end of the region", IBV_WC_REM_ACCESS_ERR, true, true,
     SROCE_FLUSH_GLOBAL, SROCE_FLUSH_RANGE, true},
    {"no_qp_access", "FLUSH to a QP without FLUSH access", IBV_WC_REM_INV_REQ_ERR, false, true,
     SROCE_FLUSH_GLOBAL, SROCE_FLUSH_RANGE, false},
    {"persistent", "FLUSH for persistence, which the QP does not grant", IBV_WC_REM_INV_REQ_ERR,
     true, true, SROCE_FLUSH_PERSISTENT, SROCE_FLUSH_RANGE, false},
    {"persistent_region", "FLUSH for persistence, granted by the QP, not the region",
     IBV_WC_REM_ACCESS_ERR, true, true, SROCE_FLUSH_PERSISTENT, SROCE_FLUSH_RANGE, false},
};
static_assert(sizeof(kFSpecs) / sizeof(kFSpecs[0]) == unsigned(FCase::count));

constexpr uint32_t kRegion = 256 * 1024;
constexpr uint32_t kQuietMs = 300;
constexpr int kSkipStatus = 4;

enum : uint64_t { kWrWrite = 1, kWrFlush, kWrRead, kWrSend };

bool good(const FSpec &f)
{
	return f.want == IBV_WC_SUCCESS;
}

/* Where a case writes, and how much: different for every case. */
uint32_t case_offset(unsigned k)
{
	return 4096 * (1 + k) + 13 * k + 1;
}
uint32_t case_len(unsigned k)
{
	return 3 * 4096 + 977 * (k + 1);
}
uint8_t pattern(uint64_t seed, unsigned k, uint32_t i)
{
	const uint64_t x = (seed ^ (uint64_t(k + 1) << 40)) + i * 0x9e3779b97f4a7c15ull;

	return uint8_t((x >> 29) ^ (x >> 7) ^ i);
}

sroce_wr_flush_fn find_flush_fn()
{
	/* The provider libibverbs loaded (dlopen by its DT_SONAME). */
	void *h = dlopen("libsroce-rdmav34.so", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		return nullptr;
	auto fn = reinterpret_cast<sroce_wr_flush_fn>(dlsym(h, SROCE_WR_FLUSH_SYMBOL));
	dlclose(h); /* still loaded by libibverbs */
	return fn;
}

class FlushCases
{
      public:
	FlushCases(Session &s, bool requester) : s_(s), req_(requester) {}
	bool setup(std::string *why);
	bool run_case(unsigned k);
	unsigned failed_cases() const { return failed_; }

      private:
	struct Pair {
		Cq scq, rcq;
		QpPtr qp;
		QpEnd theirs;
		std::vector<RemoteMr> peer_mrs; /* flush, no_flush */
	};

	bool make_pair(unsigned k, Pair *p, std::string *why);
	bool requester_half(unsigned k, Pair &p);
	bool responder_half(unsigned k, Pair &p);
	void expect_wc(Cq &cq, uint64_t wr_id, int status, int opcode, const char *what);
	void expect_state(ibv_qp *qp, int state, const char *whose);
	void check_region(unsigned k, bool written);

	Session &s_;
	bool req_; /* this side posts the FLUSHes */
	sroce_wr_flush_fn flush_ = nullptr;
	Buffer region_, no_flush_, local_, back_;
	MrPtr region_mr_, no_flush_mr_, local_mr_, back_mr_;
	std::string tag_;
	unsigned failed_ = 0;
};

bool FlushCases::setup(std::string *why)
{
	const unsigned flush_access = SROCE_ACCESS_FLUSH_GLOBAL_BIT;
	const unsigned rw =
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ibv_pd *pd = s_.dev.pd.get();

	if (req_) {
		flush_ = find_flush_fn();
		if (!local_.alloc(kRegion, why) || !back_.alloc(kRegion, why))
			return false;
		local_mr_ = reg_mr(pd, local_, IBV_ACCESS_LOCAL_WRITE, why);
		back_mr_ = reg_mr(pd, back_, IBV_ACCESS_LOCAL_WRITE, why);
		return local_mr_ && back_mr_;
	}
	if (!region_.alloc(kRegion, why) || !no_flush_.alloc(kRegion, why))
		return false;
	region_mr_ = reg_mr(pd, region_, rw | flush_access, why);
	no_flush_mr_ = reg_mr(pd, no_flush_, rw, why);
	return region_mr_ && no_flush_mr_;
}

bool FlushCases::make_pair(unsigned k, Pair *p, std::string *why)
{
	const FSpec &f = kFSpecs[k];
	ibv_context *ctx = s_.dev.ctx.get();
	ibv_qp_init_attr_ex ia{};
	std::vector<RemoteMr> mrs;
	QpParams qpp;
	QpEnd mine;
	Rng rng(s_.opt.seed ^ (0x5100 + k) ^ (s_.client ? 1 : 2));

	if (!p->scq.create(ctx, 16, why) || !p->rcq.create(ctx, 16, why))
		return false;
	ia.qp_type = IBV_QPT_RC;
	ia.send_cq = p->scq.get();
	ia.recv_cq = p->rcq.get();
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.pd = s_.dev.pd.get();
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (req_) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
		                    IBV_QP_EX_WITH_SEND | SROCE_QP_EX_WITH_FLUSH;
	}
	p->qp.reset(ibv_create_qp_ex(ctx, &ia));
	if (!p->qp) {
		*why = std::string("ibv_create_qp_ex: ") + std::strerror(errno);
		return false;
	}
	mine.qpn = p->qp->qp_num;
	mine.psn = pick_psn(rng);
	mine.gid = s_.dev.gid;
	if (!req_) {
		mrs.push_back({region_.addr(), region_mr_->rkey, region_.size()});
		mrs.push_back({no_flush_.addr(), no_flush_mr_->rkey, no_flush_.size()});
	}
	if (!s_.exchange_qp(mine, mrs, &p->theirs, &p->peer_mrs, why))
		return false;
	if (req_ && p->peer_mrs.size() < 2) {
		*why = "the responder sent too few memory regions";
		return false;
	}
	qpp.path_mtu = s_.path_mtu;
	qpp.access =
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	    (f.qp_access && !req_ ? SROCE_ACCESS_FLUSH_GLOBAL_BIT : 0) |
	    (FCase(k) == FCase::persistent_region && !req_ ? SROCE_ACCESS_FLUSH_PERSISTENT_BIT : 0);
	qpp.max_rd_atomic = s_.rd_atomic();
	qpp.max_dest_rd_atomic = s_.dest_rd_atomic();
	return connect_qp(p->qp.get(), s_.dev, qpp, mine, p->theirs, why);
}

void FlushCases::expect_wc(Cq &cq, uint64_t wr_id, int status, int opcode, const char *what)
{
	ibv_wc wc{};

	if (cq.wait(&wc, 1, s_.deadline()) != 1) {
		log().fail("%s: no completion for the %s within %u s, want %s", tag_.c_str(), what,
		           s_.opt.timeout, wc_status_name(status));
		return;
	}
	if (wc.wr_id != wr_id || int(wc.status) != status) {
		log().fail("%s: completion wr_id %" PRIu64 " %s, want the %s (wr_id %" PRIu64
		           ") with %s",
		           tag_.c_str(), wc.wr_id, wc_status_name(wc.status), what, wr_id,
		           wc_status_name(status));
		return;
	}
	if (status == IBV_WC_SUCCESS && int(wc.opcode) != opcode) {
		log().fail("%s: the %s completed with opcode %d, want %d", tag_.c_str(), what,
		           int(wc.opcode), opcode);
		return;
	}
	if (wr_id == kWrFlush && status == IBV_WC_SUCCESS && wc.byte_len != 0)
		log().fail("%s: the FLUSH completed with byte_len %u, want 0", tag_.c_str(),
		           wc.byte_len);
	log().info("%s: %s: %s", tag_.c_str(), what, wc_status_name(wc.status));
}

void FlushCases::expect_state(ibv_qp *qp, int state, const char *whose)
{
	const int got = wait_qp_state(qp, state, 1000);

	if (got != state)
		log().fail("%s: %s QP is in %s, want %s", tag_.c_str(), whose, qp_state_name(got),
		           qp_state_name(state));
}

bool FlushCases::requester_half(unsigned k, Pair &p)
{
	const FSpec &f = kFSpecs[k];
	const RemoteMr &target = p.peer_mrs[f.flush_mr ? 0 : 1];
	const uint32_t off = case_offset(k), len = case_len(k);
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p.qp.get());
	std::vector<uint8_t> buf;
	std::string why;
	uint64_t faddr = target.addr + off;
	size_t flen = len;
	int err;

	if (f.level == SROCE_FLUSH_MR) {
		faddr = 0; /* ignored at this level */
		flen = 0;
	} else if (f.beyond_end) {
		faddr = target.addr + target.len - 4096;
		flen = 8192;
	} else if (FCase(k) == FCase::empty) {
		flen = 0;
	}
	for (uint32_t i = 0; i < len; i++)
		local_.data()[i] = pattern(s_.opt.seed, k, i);
	std::memset(back_.data(), 0, len);
	if (!s_.chan.recv(MsgType::ready, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);

	ibv_wr_start(qpx);
	if (good(f)) {
		qpx->wr_id = kWrWrite;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(qpx, target.rkey, target.addr + off);
		ibv_wr_set_sge(qpx, local_mr_->lkey, local_.addr(), len);
	}
	qpx->wr_id = kWrFlush;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	err = flush_(qpx, target.rkey, faddr, flen, f.type, f.level);
	if (err)
		log().fail("%s: sroce_wr_flush: %s", tag_.c_str(), std::strerror(err));
	if (good(f)) {
		qpx->wr_id = kWrRead;
		ibv_wr_rdma_read(qpx, target.rkey, target.addr + off);
		ibv_wr_set_sge(qpx, back_mr_->lkey, back_.addr(), len);
	} else {
		qpx->wr_id = kWrSend;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, local_mr_->lkey, local_.addr(), 64);
	}
	err = ibv_wr_complete(qpx);
	if (err) {
		log().fail("%s: ibv_wr_complete: %s", tag_.c_str(), std::strerror(err));
	} else if (good(f)) {
		expect_wc(p.scq, kWrWrite, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "WRITE");
		expect_wc(p.scq, kWrFlush, IBV_WC_SUCCESS, SROCE_WC_FLUSH, "FLUSH");
		expect_wc(p.scq, kWrRead, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "READ back");
		if (std::memcmp(back_.data(), local_.data(), len) != 0)
			log().fail("%s: the READ brought back other bytes than the WRITE sent",
			           tag_.c_str());
		expect_state(p.qp.get(), IBV_QPS_RTS, "requester");
	} else {
		expect_wc(p.scq, kWrFlush, f.want, SROCE_WC_FLUSH, f.what);
		expect_wc(p.scq, kWrSend, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, "SEND behind it");
		expect_state(p.qp.get(), IBV_QPS_ERR, "requester");
	}
	ibv_wc extra{};
	if (p.scq.wait(&extra, 1, now_ms() + kQuietMs) == 1)
		log().fail("%s: unexpected completion wr_id %" PRIu64 " %s", tag_.c_str(),
		           extra.wr_id, wc_status_name(extra.status));

	return s_.requester_done(tag_);
}

/* The responder's region: the case's pattern where it wrote, zero elsewhere. */
void FlushCases::check_region(unsigned k, bool written)
{
	const uint32_t off = case_offset(k), len = case_len(k);
	uint32_t bad = 0, first = 0;

	for (uint32_t i = 0; i < kRegion; i++) {
		const bool in = written && i >= off && i < off + len;
		const uint8_t want = in ? pattern(s_.opt.seed, k, i - off) : 0;

		if (region_.data()[i] != want && !bad++)
			first = i;
	}
	if (bad)
		log().fail("%s: %u byte(s) of the region differ, the first at offset %u",
		           tag_.c_str(), bad, first);
	for (uint32_t i = 0; i < kRegion; i++)
		if (no_flush_.data()[i]) {
			log().fail("%s: the region without FLUSH access changed at offset %u",
			           tag_.c_str(), i);
			break;
		}
}

bool FlushCases::responder_half(unsigned k, Pair &p)
{
	const FSpec &f = kFSpecs[k];
	const uint64_t before = log().failures();
	const long flushes = read_counter(s_.dev.name, "flushes");
	std::vector<uint8_t> buf;
	std::string why;
	ibv_sge sge = {no_flush_.addr(), 64, no_flush_mr_->lkey};
	ibv_recv_wr rwr{}, *bad = nullptr;

	/* A receive for the SEND of a bad case, which must never arrive. */
	rwr.wr_id = kWrSend;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (!good(f) && ibv_post_recv(p.qp.get(), &rwr, &bad))
		log().fail("%s: ibv_post_recv failed", tag_.c_str());
	if (!s_.chan.send(MsgType::ready, &why) ||
	    !s_.chan.recv(MsgType::done, &buf, s_.peer_timeout_ms(), &why))
		return s_.give_up(tag_ + ": " + why);

	check_region(k, good(f));
	if (good(f))
		expect_state(p.qp.get(), IBV_QPS_RTS, "responder");
	else
		expect_state(p.qp.get(), IBV_QPS_ERR, "responder");
	/* sroce counts the FLUSHes it executed: one per good case, none else. */
	if (s_.self.flush & kFlushSroce) {
		const long now = read_counter(s_.dev.name, "flushes");
		const long want = flushes + (good(f) ? 1 : 0);

		if (flushes < 0 || now != want)
			log().fail("%s: counter flushes went from %ld to %ld, want %ld",
			           tag_.c_str(), flushes, now, want);
		else
			log().info("%s: counter flushes +%ld", tag_.c_str(), now - flushes);
	}
	if (!good(f)) {
		ibv_wc wc{};

		if (p.rcq.wait(&wc, 1, s_.deadline()) != 1)
			log().fail("%s: the receive never completed, want a flush error",
			           tag_.c_str());
		else if (wc.wr_id != kWrSend || wc.status != IBV_WC_WR_FLUSH_ERR)
			log().fail("%s: the receive completed with %s, want IBV_WC_WR_FLUSH_ERR",
			           tag_.c_str(), wc_status_name(wc.status));
	}
	std::memset(region_.data(), 0, kRegion);
	return s_.responder_done(tag_, before);
}

bool FlushCases::run_case(unsigned k)
{
	tag_ = kFSpecs[k].name;
	return run_case_on_pair<Pair>(
	    s_, tag_, &failed_, [&](Pair *p, std::string *why) { return make_pair(k, p, why); },
	    [&](Pair &p) { return req_ ? requester_half(k, p) : responder_half(k, p); });
}

} // namespace

uint32_t flush_caps(ibv_context *ctx)
{
	const std::string dev = ibv_get_device_name(ctx->device);
	ibv_device_attr_ex ax{};
	uint32_t caps = 0;

	/* The sroce provider's FLUSH builder, for a device it drives. */
	if (access(("/sys/class/infiniband/" + dev + "/" SROCE_SYSFS_DRIVER_ATTR).c_str(), F_OK) ==
	    0) {
		caps |= kFlushSroce;
		if (find_flush_fn())
			caps |= kFlushCanPost;
	}
	if (!ibv_query_device_ex(ctx, nullptr, &ax) &&
	    (ax.device_cap_flags_ex & SROCE_DEVICE_FLUSH_GLOBAL_BIT))
		caps |= kFlushCanTarget;
	return caps;
}

int run_flush(const Options &opt)
{
	const int64_t started = now_ms();
	Session s;
	std::string why;

	if (!s.start(opt, &why)) {
		log().fail("%s", why.c_str());
		std::printf("sroce-integrity flush: FAIL side=%s: %s\n", s.side(), why.c_str());
		return 1;
	}
	/* The client requests if it can; else the server, if it can. */
	const bool client_can = (s.client ? s.self : s.peer).flush & kFlushCanPost;
	const bool server_can = (s.client ? s.peer : s.self).flush & kFlushCanPost;
	const bool client_target = (s.client ? s.self : s.peer).flush & kFlushCanTarget;
	const bool server_target = (s.client ? s.peer : s.self).flush & kFlushCanTarget;
	const bool client_requests = client_can && server_target;
	const bool server_requests = !client_requests && server_can && client_target;
	const char *skip = client_requests || server_requests ? nullptr
	                   : !client_can && !server_can
	                       ? "neither side can post FLUSH (no sroce_wr_flush in its provider)"
	                       : "the responder's device does not offer FLUSH (Linux 6.2+ core)";

	if (skip) {
		std::printf("sroce-integrity flush: SKIP side=%s dev=%s: %s\n", s.side(),
		            s.dev.name.c_str(), skip);
		return kSkipStatus;
	}
	const bool requester = s.client ? client_requests : server_requests;

	log().info("%s is the requester", requester ? "this side" : "the peer");
	FlushCases f(s, requester);
	bool broken = !f.setup(&why);
	unsigned run = 0;

	if (broken)
		s.give_up(why);
	for (unsigned k = 0; k < unsigned(FCase::count) && !broken; k++) {
		run++;
		broken = !f.run_case(k);
	}
	const bool pass = !broken && log().failures() == 0;

	std::printf("sroce-integrity flush: %s side=%s dev=%s cases=%u failed=%u errors=%" PRIu64
	            " time=%.1fs\n",
	            pass ? "PASS" : "FAIL", s.side(), s.dev.name.c_str(), run, f.failed_cases(),
	            log().failures(), double(now_ms() - started) / 1000.0);
	std::fflush(stdout);
	return pass ? 0 : 1;
}

} // namespace integ
