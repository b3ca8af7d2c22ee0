// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check fuzz DEV [--seed S] [--iters N] [--seconds S] [--verbose]
 *
 * Verbs argument fuzzing: a random sequence (from --seed) of create,
 * modify, query and destroy of PDs, MRs, CQs, QPs, SRQs, AHs and memory
 * windows, posts of valid and invalid send and receive WRs, and CQ polls,
 * with partly invalid attributes (sizes around and past the device's
 * limits, unknown flag bits, states, types and opcodes, keys of live,
 * dead and made-up regions, addresses outside any region). Nothing is
 * checked against an expected value: every result is tallied per verb
 * (printed at the end) and the kernel must simply survive, which the
 * caller (selftests/verbs_fuzz.sh) checks together with the object counts
 * after killing fuzzers at random points.
 *
 * The tool never hands libibverbs a pointer it would dereference in user
 * space that is not valid (a destroyed object, an inline source outside
 * mapped memory): that would only crash this process. Addresses in
 * non-inline SGEs, keys and all numbers go to the kernel as they are.
 * Paths name this device's own GIDs (loopback) or an unused address on
 * the rig's link; nothing is sent anywhere else.
 *
 * Output: "progress N" every 64 iterations (a killed run's count), then
 * "tally VERB RESULT COUNT" lines and the summary.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <random>
#include <string>
#include <sys/mman.h>
#include <vector>

namespace vc
{
namespace
{

constexpr size_t kArena = 256 * 1024; /* registered and posted memory */
constexpr size_t kMaxObjects = 12;    /* per object type */
constexpr int kMaxSge = 8;
constexpr uint32_t kBigSize = 4096; /* the largest valid size asked for */

struct QpRec {
	ibv_qp *qp;
	ibv_qp_type type;
	uint32_t max_send_sge, max_recv_sge;
	bool has_srq;
	bool connected; /* walked to RTS by connect_qp(), not modified since */
};

class Fuzzer
{
      public:
	Fuzzer(ibv_context *ctx, uint64_t seed, bool verbose)
	    : ctx_(ctx), rng_(seed), verbose_(verbose)
	{
	}
	bool setup(Report &r);
	void step();
	void cleanup();
	void print_tally() const;

      private:
	uint32_t rnd(uint32_t n) { return n ? uint32_t(rng_() % n) : 0; }
	bool coin(unsigned int pct) { return rnd(100) < pct; }
	/* A size near 0, near @limit (the device's maximum) or anything. */
	uint32_t size(uint32_t limit);
	uint32_t any32() { return uint32_t(rng_()); }
	template <typename T> T *pick(const std::vector<T *> &v)
	{
		return v.empty() ? nullptr : v[rnd(uint32_t(v.size()))];
	}
	template <typename T> void forget(std::vector<T> &v, size_t i)
	{
		v[i] = v.back();
		v.pop_back();
	}
	/* Tallies a create verb; keeps what it made. */
	template <typename T> void keep(std::vector<T *> &v, T *obj, const char *verb)
	{
		note(verb, obj ? 0 : null_errno());
		if (obj)
			v.push_back(obj);
	}
	/* Destroys element @i of @v (forgotten if that worked); returns the result. */
	template <typename T>
	int destroy_at(std::vector<T *> &v, size_t i, int (*destroy)(T *), const char *verb)
	{
		const int err = destroy(v[i]);

		note(verb, err);
		if (!err)
			forget(v, i);
		return err;
	}
	template <typename T>
	void destroy_any(std::vector<T *> &v, int (*destroy)(T *), const char *verb)
	{
		if (!v.empty())
			destroy_at(v, rnd(uint32_t(v.size())), destroy, verb);
	}
	void note(const char *verb, int err);
	/* A QP to post on: mostly one that connect_qp() brought to RTS. */
	QpRec &pick_qp();
	void note_result(const char *verb, const char *result);

	/* Random pieces. */
	unsigned int access();
	uint64_t addr(bool mapped);
	uint32_t lkey();
	uint32_t rkey();
	uint32_t qpn();
	void sges(ibv_sge *sg, int n, bool inl);
	/* An SGE or a remote range inside a live MR (a post that can work). */
	void clean_sge(ibv_sge *sg, uint32_t len);
	uint64_t inside(const ibv_mr *mr, uint32_t len);
	void clean_remote(uint64_t *remote, uint32_t *key, uint32_t len);
	void clean_wr(ibv_send_wr &w, const QpRec &q, ibv_sge *sg);
	void random_wr(ibv_send_wr &w, const QpRec &q, ibv_sge *sg);
	void ah_attr(ibv_ah_attr *a);

	/* One verb each. */
	void alloc_pd();
	void dealloc_pd();
	void reg_mr();
	void dereg_mr();
	void rereg_mr();
	void create_cq();
	void destroy_cq();
	void resize_cq();
	void create_qp();
	void modify_qp();
	void connect_qp();
	void query_qp();
	void destroy_qp();
	void create_srq();
	void modify_srq();
	void destroy_srq();
	void create_ah();
	void destroy_ah();
	void alloc_mw();
	void bind_mw();
	void dealloc_mw();
	void post_send();
	void post_recv();
	void poll_cq();
	void req_notify();
	void drain_async();
	void query();

	ibv_context *ctx_;
	std::mt19937_64 rng_;
	bool verbose_;
	ibv_device_attr dev_{};
	Mapping arena_{kArena, PROT_READ | PROT_WRITE};
	std::vector<ibv_gid> gids_; /* [i] is GID index i ("::" if empty) */
	GidChoice gid_;
	std::vector<ibv_pd *> pds_;
	std::vector<ibv_mr *> mrs_;
	std::vector<ibv_cq *> cqs_;
	std::vector<QpRec> qps_;
	std::vector<ibv_srq *> srqs_;
	std::vector<ibv_ah *> ahs_;
	std::vector<ibv_mw *> mws_;
	std::vector<uint32_t> dead_keys_;
	std::map<std::string, std::map<std::string, unsigned long>> tally_;
};

bool Fuzzer::setup(Report &r)
{
	ibv_port_attr port{};
	std::string why;

	if (!arena_.ok())
		return r.check(false, "setup", "mmap of the arena failed");
	if (int err = ibv_query_device(ctx_, &dev_))
		return r.check(false, "setup", "ibv_query_device: %s", errno_name(err).c_str());
	if (int err = ibv_query_port(ctx_, 1, &port))
		return r.check(false, "setup", "ibv_query_port: %s", errno_name(err).c_str());
	if (!pick_gid(ctx_, -1, &gid_, &why))
		return r.check(false, "setup", "%s", why.c_str());
	for (int i = 0; i < port.gid_tbl_len && i < 16; i++) {
		ibv_gid g{};
		ibv_query_gid(ctx_, 1, i, &g);
		gids_.push_back(g);
	}
	for (size_t i = 0; i < kArena; i++)
		arena_.data()[i] = uint8_t(i);
	return true;
}

void Fuzzer::note_result(const char *verb, const char *result)
{
	std::string r = result;

	for (char &c : r)
		if (c == ' ')
			c = '_'; /* one word: the tally lines have three fields */
	tally_[verb][r]++;
	if (verbose_)
		std::printf("%s -> %s\n", verb, r.c_str());
}

void Fuzzer::note(const char *verb, int err)
{
	note_result(verb, err ? errno_name(err).c_str() : "ok");
}

/*
 * Valid sizes stay at or below kBigSize: sroce allows 2^20 WRs of 32 SGEs,
 * and a few such queues (ring plus kernel shadow) exhaust a 1 GiB guest.
 * Past the limit anything goes: those must fail before allocating.
 */
uint32_t Fuzzer::size(uint32_t limit)
{
	switch (rnd(8)) {
	case 0:
		return 0;
	case 1:
		return 1 + rnd(4);
	case 2:
		return std::min(limit, kBigSize);
	case 3:
		return limit + 1;
	case 4:
		return limit + 1 + rnd(~limit);
	default:
		return 1 + rnd(limit < 64 ? limit + 1 : 64);
	}
}

QpRec &Fuzzer::pick_qp()
{
	QpRec &any = qps_[rnd(uint32_t(qps_.size()))];
	uint32_t n = 0;

	for (const QpRec &q : qps_)
		n += q.connected;
	if (!n || coin(25))
		return any;
	n = rnd(n);
	for (QpRec &q : qps_)
		if (q.connected && n-- == 0)
			return q;
	return any;
}

unsigned int Fuzzer::access()
{
	static const unsigned int bits[] = {IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
	                                    IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC,
	                                    IBV_ACCESS_MW_BIND,     IBV_ACCESS_ZERO_BASED,
	                                    IBV_ACCESS_ON_DEMAND,   IBV_ACCESS_RELAXED_ORDERING};
	unsigned int a = 0;

	if (coin(5))
		return any32();
	for (unsigned int b : bits)
		if (coin(b == IBV_ACCESS_ON_DEMAND || b == IBV_ACCESS_ZERO_BASED ? 5 : 50))
			a |= b;
	return a;
}

uint64_t Fuzzer::addr(bool mapped)
{
	if (mapped || coin(75))
		return reinterpret_cast<uintptr_t>(arena_.data()) + rnd(kArena);
	switch (rnd(3)) {
	case 0:
		return 0;
	case 1:
		return ~0ull - rnd(4096);
	default:
		return rng_();
	}
}

uint32_t Fuzzer::lkey()
{
	if (!mrs_.empty() && coin(75))
		return pick(mrs_)->lkey;
	if (!dead_keys_.empty() && coin(30))
		return dead_keys_[rnd(uint32_t(dead_keys_.size()))];
	return any32();
}

uint32_t Fuzzer::rkey()
{
	if (!mws_.empty() && coin(20))
		return pick(mws_)->rkey;
	if (!mrs_.empty() && coin(70))
		return pick(mrs_)->rkey + (coin(10) ? 1 + rnd(0x200) : 0);
	if (!dead_keys_.empty() && coin(30))
		return dead_keys_[rnd(uint32_t(dead_keys_.size()))];
	return any32();
}

uint32_t Fuzzer::qpn()
{
	if (!qps_.empty() && coin(80))
		return qps_[rnd(uint32_t(qps_.size()))].qp->qp_num;
	return coin(50) ? rnd(64) : any32() & 0xffffff;
}

void Fuzzer::sges(ibv_sge *sg, int n, bool inl)
{
	for (int i = 0; i < n; i++) {
		const uint64_t a = addr(inl);
		const uint64_t room = reinterpret_cast<uintptr_t>(arena_.data()) + kArena - a;

		sg[i].addr = a;
		sg[i].lkey = lkey();
		if (inl)
			sg[i].length =
			    uint32_t(std::min<uint64_t>(room, rnd(coin(80) ? 64 : 4096)));
		else
			sg[i].length = coin(80) ? rnd(coin(70) ? 512 : 65536) : any32();
	}
}

/* [addr, addr + len) inside @mr; 8-byte aligned for len 8 (atomics) if possible. */
uint64_t Fuzzer::inside(const ibv_mr *mr, uint32_t len)
{
	const uint64_t base = reinterpret_cast<uintptr_t>(mr->addr);
	const uint64_t end = base + mr->length;
	const uint64_t first = len == 8 ? (base + 7) & ~7ull : base;

	if (first + len > end)
		return base;
	return first +
	       (rnd(uint32_t((end - len - first) / (len == 8 ? 8 : 1) + 1)) * (len == 8 ? 8 : 1));
}

void Fuzzer::clean_sge(ibv_sge *sg, uint32_t len)
{
	const ibv_mr *mr = pick(mrs_);

	sg->length = uint32_t(std::min<size_t>(mr->length, len));
	sg->addr = inside(mr, sg->length);
	sg->lkey = mr->lkey;
}

void Fuzzer::clean_remote(uint64_t *remote, uint32_t *key, uint32_t len)
{
	const ibv_mr *mr = pick(mrs_);

	*remote = inside(mr, uint32_t(std::min<size_t>(mr->length, len)));
	*key = mr->rkey;
}

/* A WR that has a fair chance to work: real traffic for the data path. */
void Fuzzer::clean_wr(ibv_send_wr &w, const QpRec &q, ibv_sge *sg)
{
	static const ibv_wr_opcode ops[] = {IBV_WR_SEND,
	                                    IBV_WR_SEND_WITH_IMM,
	                                    IBV_WR_RDMA_WRITE,
	                                    IBV_WR_RDMA_WRITE_WITH_IMM,
	                                    IBV_WR_RDMA_READ,
	                                    IBV_WR_ATOMIC_CMP_AND_SWP,
	                                    IBV_WR_ATOMIC_FETCH_AND_ADD};
	const bool atomic_ok = q.type == IBV_QPT_RC;

	w.opcode = ops[rnd(q.type == IBV_QPT_UD ? 2 : q.type == IBV_QPT_UC ? 4 : 7)];
	w.send_flags = IBV_SEND_SIGNALED;
	w.num_sge = q.max_send_sge ? int(1 + rnd(std::min<uint32_t>(q.max_send_sge, kMaxSge))) : 0;
	const bool atomic = atomic_ok && (w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	                                  w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD);
	if (atomic)
		w.num_sge = 1;
	for (int i = 0; i < w.num_sge; i++)
		clean_sge(&sg[i], atomic ? 8 : 1 + rnd(q.type == IBV_QPT_UD ? 1024 : 8192));
	w.sg_list = sg;
	if (atomic) {
		clean_remote(&w.wr.atomic.remote_addr, &w.wr.atomic.rkey, 8);
		w.wr.atomic.compare_add = rng_();
		w.wr.atomic.swap = rng_();
	} else {
		clean_remote(&w.wr.rdma.remote_addr, &w.wr.rdma.rkey, 1 + rnd(8192));
	}
}

void Fuzzer::ah_attr(ibv_ah_attr *a)
{
	*a = {};
	a->is_global = !coin(5);
	a->port_num = coin(95) ? 1 : uint8_t(rnd(4));
	a->dlid = uint16_t(rnd(4));
	a->sl = uint8_t(rnd(16));
	a->static_rate = uint8_t(rnd(20));
	a->grh.sgid_index = uint8_t(coin(80) ? gid_.index : rnd(uint32_t(gids_.size()) + 2));
	a->grh.hop_limit = uint8_t(rnd(256));
	a->grh.traffic_class = uint8_t(rnd(256));
	a->grh.flow_label = any32() & (coin(90) ? 0xfffff : 0xffffffff);
	if (coin(97) && !gids_.empty()) {
		/* This device's own addresses: loopback, or an empty slot. */
		a->grh.dgid = coin(80) ? gid_.gid : gids_[rnd(uint32_t(gids_.size()))];
	} else {
		/* An unused address on the rig's link (192.168.77.123). */
		static const uint8_t unused[16] = {0, 0, 0,    0,    0,   0,   0,  0,
		                                   0, 0, 0xff, 0xff, 192, 168, 77, 123};
		memcpy(a->grh.dgid.raw, unused, 16);
	}
}

void Fuzzer::alloc_pd()
{
	if (pds_.size() >= 4)
		return dealloc_pd();
	errno = 0;
	ibv_pd *pd = ibv_alloc_pd(ctx_);
	keep(pds_, pd, "alloc_pd");
}

void Fuzzer::dealloc_pd()
{
	destroy_any(pds_, ibv_dealloc_pd, "dealloc_pd");
}

void Fuzzer::reg_mr()
{
	ibv_pd *pd = pick(pds_);
	if (!pd)
		return alloc_pd();
	if (mrs_.size() >= kMaxObjects)
		return dereg_mr();
	const uint64_t a = addr(coin(90));
	const size_t len = coin(85) ? 1 + rnd(8192) : (coin(50) ? 0 : rng_() >> rnd(64));
	errno = 0;
	ibv_mr *mr = ibv_reg_mr(pd, reinterpret_cast<void *>(a), len, int(access()));
	keep(mrs_, mr, "reg_mr");
}

void Fuzzer::dereg_mr()
{
	if (mrs_.empty())
		return;
	const size_t i = rnd(uint32_t(mrs_.size()));
	const uint32_t key = mrs_[i]->rkey;
	if (!destroy_at(mrs_, i, ibv_dereg_mr, "dereg_mr") && dead_keys_.size() < 64)
		dead_keys_.push_back(key);
}

void Fuzzer::rereg_mr()
{
	ibv_mr *mr = pick(mrs_);
	if (!mr)
		return reg_mr();
	ibv_pd *pd = pick(pds_);
	/* The provider reads the new PD: a live one or the flag is off. */
	const int flags = int(rnd(16)) & (pd ? ~0 : ~IBV_REREG_MR_CHANGE_PD);
	const uint64_t a = addr(true);
	const size_t len = 1 + rnd(8192);
	const int ret =
	    ibv_rereg_mr(mr, flags, pd, reinterpret_cast<void *>(a), len, int(access()));
	/* IBV_REREG_MR_ERR_* are negative; any error leaves the MR usable or not. */
	note_result("rereg_mr", ret == 0 ? "ok" : ("ret " + std::to_string(ret)).c_str());
}

void Fuzzer::create_cq()
{
	if (cqs_.size() >= 6)
		return destroy_cq();
	errno = 0;
	ibv_cq *cq = ibv_create_cq(ctx_, int(size(uint32_t(dev_.max_cqe))), nullptr, nullptr,
	                           coin(90) ? 0 : int(rnd(4)));
	keep(cqs_, cq, "create_cq");
}

void Fuzzer::destroy_cq()
{
	destroy_any(cqs_, ibv_destroy_cq, "destroy_cq");
}

void Fuzzer::resize_cq()
{
	ibv_cq *cq = pick(cqs_);
	if (cq)
		note("resize_cq", ibv_resize_cq(cq, int(size(uint32_t(dev_.max_cqe)))));
}

void Fuzzer::create_qp()
{
	static const ibv_qp_type types[] = {IBV_QPT_RC,     IBV_QPT_RC,         IBV_QPT_UC,
	                                    IBV_QPT_UD,     IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND,
	                                    ibv_qp_type(0), ibv_qp_type(77)};
	ibv_qp_init_attr ia{};
	ibv_pd *pd = pick(pds_);

	if (!pd || cqs_.empty())
		return pds_.empty() ? alloc_pd() : create_cq();
	if (qps_.size() >= kMaxObjects)
		return destroy_qp();
	ia.qp_type = coin(90) ? types[rnd(4)] : types[rnd(8)];
	ia.send_cq = pick(cqs_);
	ia.recv_cq = coin(70) ? ia.send_cq : pick(cqs_);
	ia.srq = coin(20) ? pick(srqs_) : nullptr;
	ia.sq_sig_all = int(rnd(2));
	/* One dimension at a time goes to the edges (memory, see size()). */
	const uint32_t edge = coin(80) ? 4 : rnd(4);
	ia.cap.max_send_wr = edge == 0 ? size(uint32_t(dev_.max_qp_wr)) : 1 + rnd(64);
	ia.cap.max_recv_wr = edge == 1 ? size(uint32_t(dev_.max_qp_wr)) : 1 + rnd(64);
	ia.cap.max_send_sge = edge == 2 ? size(uint32_t(dev_.max_sge)) : 1 + rnd(4);
	ia.cap.max_recv_sge = edge == 3 ? size(uint32_t(dev_.max_sge)) : 1 + rnd(4);
	ia.cap.max_inline_data = coin(50) ? 0 : (coin(80) ? rnd(256) : any32());
	errno = 0;
	ibv_qp *qp = ibv_create_qp(pd, &ia);
	note("create_qp", qp ? 0 : null_errno());
	if (qp)
		qps_.push_back({qp, ia.qp_type, ia.cap.max_send_sge, ia.cap.max_recv_sge,
		                ia.srq != nullptr, false});
}

void Fuzzer::modify_qp()
{
	static const int bits[] = {IBV_QP_STATE,
	                           IBV_QP_CUR_STATE,
	                           IBV_QP_EN_SQD_ASYNC_NOTIFY,
	                           IBV_QP_ACCESS_FLAGS,
	                           IBV_QP_PKEY_INDEX,
	                           IBV_QP_PORT,
	                           IBV_QP_QKEY,
	                           IBV_QP_AV,
	                           IBV_QP_PATH_MTU,
	                           IBV_QP_TIMEOUT,
	                           IBV_QP_RETRY_CNT,
	                           IBV_QP_RNR_RETRY,
	                           IBV_QP_RQ_PSN,
	                           IBV_QP_MAX_QP_RD_ATOMIC,
	                           IBV_QP_ALT_PATH,
	                           IBV_QP_MIN_RNR_TIMER,
	                           IBV_QP_SQ_PSN,
	                           IBV_QP_MAX_DEST_RD_ATOMIC,
	                           IBV_QP_PATH_MIG_STATE,
	                           IBV_QP_CAP,
	                           IBV_QP_DEST_QPN,
	                           IBV_QP_RATE_LIMIT};
	if (qps_.empty())
		return create_qp();
	QpRec &q = qps_[rnd(uint32_t(qps_.size()))];
	ibv_qp_attr a{};
	int mask = IBV_QP_STATE;

	for (int b : bits)
		if (coin(30))
			mask |= b;
	if (coin(3))
		mask |= int(any32());
	a.qp_state = ibv_qp_state(rnd(8));
	a.cur_qp_state = ibv_qp_state(rnd(8));
	a.qp_access_flags = access();
	a.pkey_index = uint16_t(coin(90) ? 0 : rnd(70000));
	a.port_num = uint8_t(coin(90) ? 1 : rnd(4));
	a.qkey = any32();
	ah_attr(&a.ah_attr);
	a.path_mtu = ibv_mtu(rnd(8));
	a.timeout = uint8_t(coin(90) ? 1 + rnd(14) : rnd(256));
	a.retry_cnt = uint8_t(rnd(9));
	a.rnr_retry = uint8_t(rnd(9));
	a.rq_psn = any32();
	a.sq_psn = any32();
	a.max_rd_atomic = uint8_t(rnd(20));
	a.max_dest_rd_atomic = uint8_t(rnd(20));
	a.min_rnr_timer = uint8_t(rnd(40));
	a.dest_qp_num = qpn();
	a.cap.max_send_wr = size(uint32_t(dev_.max_qp_wr));
	a.cap.max_recv_wr = size(uint32_t(dev_.max_qp_wr));
	a.path_mig_state = ibv_mig_state(rnd(4));
	a.en_sqd_async_notify = uint8_t(rnd(2));
	a.rate_limit = any32();
	q.connected = false;
	note("modify_qp", ibv_modify_qp(q.qp, &a, mask));
}

/* The legal walk to RTS towards another QP of ours: real traffic follows. */
void Fuzzer::connect_qp()
{
	if (qps_.empty())
		return create_qp();
	QpRec &q = qps_[rnd(uint32_t(qps_.size()))];
	const uint32_t dest = qpn();
	ibv_qp_attr reset{};

	reset.qp_state = IBV_QPS_RESET;
	if (coin(50)) {
		note("modify_qp.reset", ibv_modify_qp(q.qp, &reset, IBV_QP_STATE));
	}
	if (q.type != IBV_QPT_RC && q.type != IBV_QPT_UC && q.type != IBV_QPT_UD)
		return;
	auto rtr = [&](uint32_t to) {
		QpTransition t = to_rtr(q.type, gid_, to);
		if (q.type == IBV_QPT_UC)
			t.mask &= ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
		t.attr.min_rnr_timer = 1;
		return t;
	};
	QpTransition steps[3] = {to_init(q.type, access()), rtr(dest), to_rts(q.type)};
	if (q.type == IBV_QPT_UC)
		steps[2].mask &= ~(IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		                   IBV_QP_MAX_QP_RD_ATOMIC);
	steps[2].attr.sq_psn = kRqPsn;
	steps[2].attr.timeout = uint8_t(8 + rnd(6)); /* about 1 ms .. 33 ms */
	steps[2].attr.retry_cnt = uint8_t(rnd(4));
	steps[2].attr.rnr_retry = uint8_t(rnd(4));
	q.connected = false;
	for (QpTransition &t : steps) {
		const int err = ibv_modify_qp(q.qp, &t.attr, t.mask);
		note("modify_qp.connect", err);
		if (err)
			return;
	}
	q.connected = true;
	/* Mostly a pair: connect the destination back, so that traffic flows. */
	for (QpRec &d : qps_) {
		if (d.qp->qp_num != dest || d.type != q.type || d.qp == q.qp || coin(20))
			continue;
		d.connected = false;
		note("modify_qp.reset", ibv_modify_qp(d.qp, &reset, IBV_QP_STATE));
		steps[1] = rtr(q.qp->qp_num);
		for (QpTransition &t : steps) {
			const int err = ibv_modify_qp(d.qp, &t.attr, t.mask);
			note("modify_qp.connect", err);
			if (err)
				return;
		}
		d.connected = true;
	}
}

void Fuzzer::query_qp()
{
	if (qps_.empty())
		return;
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	note("query_qp", ibv_query_qp(qps_[rnd(uint32_t(qps_.size()))].qp, &a,
	                              coin(90) ? int(any32()) : IBV_QP_STATE, &ia));
}

void Fuzzer::destroy_qp()
{
	if (qps_.empty())
		return;
	const size_t i = rnd(uint32_t(qps_.size()));
	const int err = ibv_destroy_qp(qps_[i].qp);
	note("destroy_qp", err);
	if (!err)
		forget(qps_, i);
}

void Fuzzer::create_srq()
{
	ibv_pd *pd = pick(pds_);
	ibv_srq_init_attr ia{};

	if (!pd)
		return alloc_pd();
	if (srqs_.size() >= 4)
		return destroy_srq();
	const bool wr_edge = coin(10), sge_edge = !wr_edge && coin(10);
	ia.attr.max_wr = wr_edge ? size(uint32_t(dev_.max_srq_wr)) : 1 + rnd(128);
	ia.attr.max_sge = sge_edge ? size(uint32_t(dev_.max_srq_sge)) : 1 + rnd(4);
	ia.attr.srq_limit = coin(80) ? 0 : any32();
	errno = 0;
	ibv_srq *srq = ibv_create_srq(pd, &ia);
	keep(srqs_, srq, "create_srq");
}

void Fuzzer::modify_srq()
{
	ibv_srq *srq = pick(srqs_);
	ibv_srq_attr a{};

	if (!srq)
		return create_srq();
	a.max_wr = coin(70) ? 1 + rnd(256) : size(uint32_t(dev_.max_srq_wr));
	a.srq_limit = coin(70) ? rnd(64) : any32();
	note("modify_srq", ibv_modify_srq(srq, &a, coin(95) ? int(1 + rnd(3)) : int(any32())));
}

void Fuzzer::destroy_srq()
{
	destroy_any(srqs_, ibv_destroy_srq, "destroy_srq");
}

void Fuzzer::create_ah()
{
	ibv_pd *pd = pick(pds_);
	ibv_ah_attr a;

	if (!pd)
		return alloc_pd();
	if (ahs_.size() >= 6)
		return destroy_ah();
	ah_attr(&a);
	errno = 0;
	ibv_ah *ah = ibv_create_ah(pd, &a);
	keep(ahs_, ah, "create_ah");
}

void Fuzzer::destroy_ah()
{
	destroy_any(ahs_, ibv_destroy_ah, "destroy_ah");
}

void Fuzzer::alloc_mw()
{
	ibv_pd *pd = pick(pds_);

	if (!pd)
		return alloc_pd();
	if (mws_.size() >= 6)
		return dealloc_mw();
	errno = 0;
	ibv_mw *mw = ibv_alloc_mw(pd, coin(95) ? ibv_mw_type(1 + rnd(2)) : ibv_mw_type(rnd(9)));
	keep(mws_, mw, "alloc_mw");
}

void Fuzzer::bind_mw()
{
	ibv_mw *mw = pick(mws_);
	ibv_mw_bind b{};

	if (!mw || qps_.empty())
		return alloc_mw();
	b.wr_id = rng_();
	b.send_flags = coin(90) ? unsigned(IBV_SEND_SIGNALED) : any32();
	b.bind_info.mr = coin(90) ? pick(mrs_) : nullptr;
	b.bind_info.addr = addr(false);
	b.bind_info.length = coin(80) ? rnd(8192) : rng_();
	b.bind_info.mw_access_flags = access();
	note("bind_mw", ibv_bind_mw(qps_[rnd(uint32_t(qps_.size()))].qp, mw, &b));
}

void Fuzzer::dealloc_mw()
{
	if (mws_.empty())
		return;
	const size_t i = rnd(uint32_t(mws_.size()));
	const uint32_t key = mws_[i]->rkey;
	if (!destroy_at(mws_, i, ibv_dealloc_mw, "dealloc_mw") && dead_keys_.size() < 64)
		dead_keys_.push_back(key);
}

/* Any WR: opcodes, flags, counts, keys and addresses partly invalid. */
void Fuzzer::random_wr(ibv_send_wr &w, const QpRec &q, ibv_sge *sg)
{
	static const ibv_wr_opcode common[] = {IBV_WR_SEND,
	                                       IBV_WR_SEND_WITH_IMM,
	                                       IBV_WR_RDMA_WRITE,
	                                       IBV_WR_RDMA_WRITE_WITH_IMM,
	                                       IBV_WR_RDMA_READ,
	                                       IBV_WR_ATOMIC_CMP_AND_SWP,
	                                       IBV_WR_ATOMIC_FETCH_AND_ADD,
	                                       IBV_WR_LOCAL_INV,
	                                       IBV_WR_BIND_MW,
	                                       IBV_WR_SEND_WITH_INV};
	static const struct {
		unsigned int bit, pct;
	} flag_bits[] = {{IBV_SEND_SIGNALED, 80},
	                 {IBV_SEND_SOLICITED, 15},
	                 {IBV_SEND_INLINE, 10},
	                 {IBV_SEND_FENCE, 10},
	                 {IBV_SEND_IP_CSUM, 2}};

	w.opcode = coin(95) ? common[rnd(10)] : ibv_wr_opcode(rnd(256));
	for (const auto &f : flag_bits)
		if (coin(f.pct))
			w.send_flags |= f.bit;
	if (coin(2))
		w.send_flags |= any32();
	const bool inl = w.send_flags & IBV_SEND_INLINE;
	w.num_sge = int(rnd(std::min<uint32_t>(q.max_send_sge + (coin(10) ? 2 : 1), kMaxSge + 1)));
	if (coin(2))
		w.num_sge = int(any32()); /* the provider must refuse it unread */
	sges(sg, std::min(std::max(w.num_sge, 0), kMaxSge), inl);
	if (w.num_sge > kMaxSge && !coin(2))
		w.num_sge = kMaxSge;
	w.sg_list = sg;
	w.imm_data = any32();
	switch (w.opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w.wr.atomic.remote_addr = addr(false) & (coin(90) ? ~7ull : ~0ull);
		w.wr.atomic.rkey = rkey();
		w.wr.atomic.compare_add = rng_();
		w.wr.atomic.swap = rng_();
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		w.invalidate_rkey = rkey();
		break;
	case IBV_WR_BIND_MW:
		w.bind_mw.mw = pick(mws_);
		if (!w.bind_mw.mw)
			w.opcode = IBV_WR_SEND;
		w.bind_mw.rkey = w.bind_mw.mw ? ibv_inc_rkey(w.bind_mw.mw->rkey) : 0;
		w.bind_mw.bind_info.mr = coin(90) ? pick(mrs_) : nullptr;
		w.bind_mw.bind_info.addr = addr(false);
		w.bind_mw.bind_info.length = coin(80) ? rnd(8192) : rng_();
		w.bind_mw.bind_info.mw_access_flags = access();
		break;
	default:
		w.wr.rdma.remote_addr = addr(false);
		w.wr.rdma.rkey = rkey();
		break;
	}
}

void Fuzzer::post_send()
{
	ibv_send_wr wr[3]{};
	ibv_sge sg[3][kMaxSge]{};
	ibv_send_wr *bad = nullptr;

	if (qps_.empty())
		return create_qp();
	const QpRec &q = pick_qp();
	const int n = 1 + int(rnd(3));
	for (int i = 0; i < n; i++) {
		ibv_send_wr &w = wr[i];
		w.wr_id = rng_();
		w.next = i + 1 < n ? &wr[i + 1] : nullptr;
		if (!mrs_.empty() && coin(50))
			clean_wr(w, q, sg[i]);
		else
			random_wr(w, q, sg[i]);
		if (q.type == IBV_QPT_UD) {
			/* The provider reads the AH: only a live one, or none posted. */
			w.wr.ud.ah = pick(ahs_);
			if (!w.wr.ud.ah)
				return create_ah();
			w.wr.ud.remote_qpn = qpn();
			w.wr.ud.remote_qkey = coin(50) ? kQkey : any32();
		}
	}
	const int err = ibv_post_send(q.qp, wr, &bad);
	if (verbose_ && err && bad)
		std::printf("post_send: QP %u %s%s, WR %d opcode %d flags 0x%x num_sge %d\n",
		            q.qp->qp_num, qp_type_name(q.type), q.connected ? " connected" : "",
		            int(bad - wr), int(bad->opcode), bad->send_flags, bad->num_sge);
	note("post_send", err);
}

void Fuzzer::post_recv()
{
	ibv_recv_wr wr[3]{};
	ibv_sge sg[3][kMaxSge]{};
	ibv_recv_wr *bad = nullptr;
	const bool to_srq = !srqs_.empty() && coin(30);

	if (!to_srq && qps_.empty())
		return create_qp();
	const QpRec *q = to_srq ? nullptr : &pick_qp();
	const int n = 1 + int(rnd(3));
	for (int i = 0; i < n; i++) {
		wr[i].wr_id = rng_();
		wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
		wr[i].num_sge =
		    int(rnd(std::min<uint32_t>((q ? q->max_recv_sge : 4) + 2, kMaxSge + 1)));
		sges(sg[i], wr[i].num_sge, false);
		wr[i].sg_list = sg[i];
	}
	if (to_srq)
		note("post_srq_recv", ibv_post_srq_recv(pick(srqs_), wr, &bad));
	else
		note("post_recv", ibv_post_recv(q->qp, wr, &bad));
}

void Fuzzer::poll_cq()
{
	ibv_cq *cq = pick(cqs_);
	ibv_wc wc[8];

	if (!cq)
		return create_cq();
	const int n = ibv_poll_cq(cq, 1 + int(rnd(8)), wc);
	if (n < 0) {
		/* -1: the CQ overflowed and completions were lost. */
		note_result("poll_cq", "failed");
		return;
	}
	for (int i = 0; i < n; i++)
		note_result("wc", ibv_wc_status_str(wc[i].status));
	note_result("poll_cq", n ? "completions" : "empty");
}

void Fuzzer::req_notify()
{
	ibv_cq *cq = pick(cqs_);

	if (cq)
		note("req_notify_cq", ibv_req_notify_cq(cq, int(rnd(2))));
}

/* Every event taken must be acked, or destroying its object waits forever. */
void Fuzzer::drain_async()
{
	int flags = fcntl(ctx_->async_fd, F_GETFL);
	ibv_async_event ev;

	if (flags < 0 || fcntl(ctx_->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return;
	while (ibv_get_async_event(ctx_, &ev) == 0) {
		note_result("async_event", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

void Fuzzer::query()
{
	ibv_port_attr port{};
	ibv_gid g{};
	ibv_device_attr d{};

	switch (rnd(3)) {
	case 0:
		note("query_port", ibv_query_port(ctx_, uint8_t(coin(80) ? 1 : rnd(256)), &port));
		break;
	case 1:
		note("query_gid", ibv_query_gid(ctx_, 1, coin(80) ? int(rnd(16)) : int(any32()), &g)
		                      ? EINVAL
		                      : 0);
		break;
	default:
		note("query_device", ibv_query_device(ctx_, &d));
		break;
	}
}

void Fuzzer::step()
{
	/* Weights: posts and polls dominate, as in a real program. */
	static const struct {
		void (Fuzzer::*fn)();
		unsigned int weight;
	} actions[] = {
	    {&Fuzzer::alloc_pd, 2},    {&Fuzzer::dealloc_pd, 1},  {&Fuzzer::reg_mr, 6},
	    {&Fuzzer::dereg_mr, 3},    {&Fuzzer::rereg_mr, 1},    {&Fuzzer::create_cq, 3},
	    {&Fuzzer::destroy_cq, 1},  {&Fuzzer::resize_cq, 2},   {&Fuzzer::create_qp, 6},
	    {&Fuzzer::modify_qp, 6},   {&Fuzzer::connect_qp, 6},  {&Fuzzer::query_qp, 2},
	    {&Fuzzer::destroy_qp, 3},  {&Fuzzer::create_srq, 2},  {&Fuzzer::modify_srq, 2},
	    {&Fuzzer::destroy_srq, 1}, {&Fuzzer::create_ah, 2},   {&Fuzzer::destroy_ah, 1},
	    {&Fuzzer::alloc_mw, 2},    {&Fuzzer::bind_mw, 2},     {&Fuzzer::dealloc_mw, 1},
	    {&Fuzzer::post_send, 20},  {&Fuzzer::post_recv, 10},  {&Fuzzer::poll_cq, 16},
	    {&Fuzzer::req_notify, 2},  {&Fuzzer::drain_async, 2}, {&Fuzzer::query, 1},
	};
	unsigned int total = 0;

	for (const auto &a : actions)
		total += a.weight;
	unsigned int x = rnd(total);
	for (const auto &a : actions) {
		if (x < a.weight) {
			(this->*a.fn)();
			return;
		}
		x -= a.weight;
	}
}

/* Dependents first; what still fails is tallied ("cleanup.*"). */
void Fuzzer::cleanup()
{
	drain_async();
	for (const QpRec &q : qps_)
		note("cleanup.destroy_qp", ibv_destroy_qp(q.qp));
	for (ibv_ah *ah : ahs_)
		note("cleanup.destroy_ah", ibv_destroy_ah(ah));
	for (ibv_mw *mw : mws_)
		note("cleanup.dealloc_mw", ibv_dealloc_mw(mw));
	for (ibv_srq *srq : srqs_)
		note("cleanup.destroy_srq", ibv_destroy_srq(srq));
	for (ibv_mr *mr : mrs_)
		note("cleanup.dereg_mr", ibv_dereg_mr(mr));
	for (ibv_cq *cq : cqs_)
		note("cleanup.destroy_cq", ibv_destroy_cq(cq));
	for (ibv_pd *pd : pds_)
		note("cleanup.dealloc_pd", ibv_dealloc_pd(pd));
	qps_.clear();
	ahs_.clear();
	mws_.clear();
	srqs_.clear();
	mrs_.clear();
	cqs_.clear();
	pds_.clear();
}

void Fuzzer::print_tally() const
{
	for (const auto &verb : tally_)
		for (const auto &res : verb.second)
			std::printf("tally %s %s %lu\n", verb.first.c_str(), res.first.c_str(),
			            res.second);
}

} /* namespace */

int cmd_fuzz(int argc, char **argv)
{
	Args args;
	std::string why;
	long seed, iters, seconds;

	if (!args.parse(argc, argv,
	                {{"seed", true}, {"iters", true}, {"seconds", true}, {"verbose", false}},
	                &why))
		return usage_error("fuzz", why);
	if (args.num_positional() != 1)
		return usage_error("fuzz", "expects one device name");
	if (!args.number("seed", 1, 0, 0x7fffffff, &seed, &why) ||
	    !args.number("iters", 100000000, 1, 0x7fffffff, &iters, &why) ||
	    !args.number("seconds", 3600, 1, 86400, &seconds, &why))
		return usage_error("fuzz", why);
	Report r("fuzz");
	ContextPtr ctx = open_device(args.positional(0), &why);
	if (!ctx) {
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	Fuzzer f(ctx.get(), uint64_t(seed), args.has("verbose"));
	if (!f.setup(r))
		return r.finish();
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	long done = 0;
	while (done < iters && std::chrono::steady_clock::now() < end) {
		f.step();
		if (++done % 64 == 0)
			std::printf("progress %ld\n", done);
	}
	f.cleanup();
	f.print_tally();
	r.pass("fuzz", "seed %ld: %ld iterations, the process survived and cleaned up", seed, done);
	r.info("iterations %ld", done);
	return r.finish();
}

} /* namespace vc */
