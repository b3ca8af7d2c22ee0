// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check resdetails DEV [--gid-index I]: the driver details
 * that `rdma -dd -j resource show qp|cq|mr|srq` shows (kernel
 * sroce_restrack.c), read back for objects in a known state.
 *
 *   steady   a loopback RC pair (path MTU 1024): 5 SENDs of 100 B from a
 *            to b, all completed. a: sq_prod and sq_cons moved by 5,
 *            req_psn and comp_psn at a's first PSN + 5 (every packet
 *            ACKed), retry_left 7, no ACK timer armed, mtu 1024. b:
 *            resp_epsn at that PSN too, resp_msn 5, rq_prod and rq_cons
 *            moved by 5. The CQ: prod and cons moved by 10 (5 send and 5
 *            receive completions, all polled), the raw view (rdma -r)
 *            with the same indices and a successful newest CQE of a or
 *            b, arm "none", then "next" after ibv_req_notify_cq. The MR: kind "user", 16 pages
 *            pinned for its 64 KiB.
 *   stuck    b is reset (its packets are dropped) and a SENDs once more
 *            with a 1 s ACK timeout: after 2.5 s a has one packet
 *            unanswered (req_psn = comp_psn + 1), sq_prod = sq_cons + 1,
 *            fewer than 7 retries left and an ACK timer or tail probe
 *            armed; the raw view holds the same ring indices and the
 *            SEND's validated WQE (wr_id 99, 1 SGE); the SEND then ends
 *            in IBV_WC_RETRY_EXC_ERR.
 *   srq      (kernels with the SRQ hook, 6.12) an SRQ with 3 receives
 *            posted: rq_prod - rq_cons = 3, limit 0 then 2 once armed.
 *
 * The values come from `rdma` (iproute2) run by this program.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kMsg = 100;
constexpr unsigned kSends = 5;
constexpr size_t kBuf = 65536;

/*
 * The output of `rdma -dd -j resource show WHAT` (with @raw: `rdma -j -r`,
 * the raw view), empty on failure.
 */
std::string rdma_show(const std::string &what, bool raw = false)
{
	std::string cmd = std::string(raw ? "rdma -j -r" : "rdma -dd -j") + " resource show " +
	                  what + " 2>/dev/null";
	std::string out;
	FILE *f = popen(cmd.c_str(), "r");
	char buf[4096];
	size_t n;

	if (!f)
		return out;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		out.append(buf, n);
	pclose(f);
	return out;
}

/*
 * The value of driver field @key in @json (the first object that has it;
 * iproute2 names it "drv_KEY" there; with @prefix "" a field of the core,
 * "cqn" say): a number, or a string without its quotes; "" if absent.
 */
std::string json_value(const std::string &json, const char *key, const char *prefix = "drv_")
{
	const std::string pat = std::string("\"") + prefix + key + "\":";
	size_t at = json.find(pat);

	if (at == std::string::npos)
		return "";
	at += pat.size();
	if (at < json.size() && json[at] == '"') {
		size_t end = json.find('"', at + 1);
		return end == std::string::npos ? "" : json.substr(at + 1, end - at - 1);
	}
	size_t end = json.find_first_of(",}]", at);
	return json.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

/* "@key" as a number; -1 when absent or not a number. */
long long json_num(const std::string &json, const char *key, const char *prefix = "drv_")
{
	const std::string v = json_value(json, key, prefix);
	char *end = nullptr;

	if (v.empty())
		return -1;
	long long n = strtoll(v.c_str(), &end, 10);
	return *end ? -1 : n;
}

std::string show_qp(const char *dev, uint32_t qpn)
{
	return rdma_show("qp link " + std::string(dev) + "/1 lqpn " + std::to_string(qpn));
}

std::string show_mine(const char *what, bool raw = false)
{
	return rdma_show(std::string(what) + " pid " + std::to_string(getpid()), raw);
}

/*
 * The bytes of the raw view's "data":[...] array in @json that starts at
 * or after @from (the position after it is left there); empty when none.
 */
std::vector<uint8_t> raw_bytes(const std::string &json, size_t *from = nullptr)
{
	std::vector<uint8_t> out;
	size_t at = json.find("\"data\":[", from ? *from : 0);

	if (at == std::string::npos) {
		if (from)
			*from = json.size();
		return out;
	}
	const char *p = json.c_str() + at + 8;
	while (*p && *p != ']') {
		char *end = nullptr;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		out.push_back(uint8_t(v));
		p = *end == ',' ? end + 1 : end;
	}
	if (from)
		*from = size_t(p - json.c_str());
	return out;
}

/* The @i-th u32 (host byte order) of @b, or -1 when @b is shorter. */
long long raw_u32(const std::vector<uint8_t> &b, size_t i)
{
	uint32_t v;

	if (b.size() < (i + 1) * 4)
		return -1;
	memcpy(&v, b.data() + i * 4, 4);
	return v;
}

/* Checks one number; prints the JSON's value either way. */
bool expect_num(Report &r, const std::string &json, const char *obj, const char *key,
                long long want)
{
	long long got = json_num(json, key);

	return r.check(got == want, std::string(obj) + "." + key, "%s %s = %lld (want %lld)", obj,
	               key, got, want);
}

/* Polls @cq for @n completions within @ms; all must have status @want. */
bool poll_n(ibv_cq *cq, unsigned n, int ms, ibv_wc_status want, std::string *why)
{
	timespec t0{}, t{};
	unsigned got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		ibv_wc wc{};
		int k = ibv_poll_cq(cq, 1, &wc);

		if (k < 0) {
			*why = "ibv_poll_cq failed";
			return false;
		}
		if (k == 1) {
			if (wc.status != want) {
				*why = std::string("status ") + ibv_wc_status_str(wc.status) +
				       " for wr_id " + std::to_string(wc.wr_id);
				return false;
			}
			got++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms) {
			*why = std::to_string(got) + " of " + std::to_string(n) + " completions";
			return false;
		}
		usleep(100);
	}
	return true;
}

bool kernel_has_srq_details()
{
	utsname u{};
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 12);
}

void check_srq(Report &r, ibv_pd *pd, ibv_mr *mr, uint8_t *buf)
{
	if (!kernel_has_srq_details()) {
		r.skip("srq", "this kernel has no driver hook for SRQ details (6.12 has)");
		return;
	}
	ibv_srq_init_attr sa{};
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 1;
	SrqPtr srq(ibv_create_srq(pd, &sa));
	if (!r.check(srq != nullptr, "srq.create", "an SRQ of 8"))
		return;
	const std::string before = show_mine("srq");
	for (int i = 0; i < 3; i++) {
		ibv_sge sge{reinterpret_cast<uintptr_t>(buf + i * kMsg), kMsg, mr->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;

		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (!r.expect_ok("srq.post", ibv_post_srq_recv(srq.get(), &wr, &bad),
		                 "ibv_post_srq_recv"))
			return;
	}
	std::string j = show_mine("srq");
	r.check(json_num(j, "rq_prod") - json_num(j, "rq_cons") == 3 &&
	            json_num(j, "rq_prod") == json_num(before, "rq_prod") + 3,
	        "srq.ring", "rq_prod %lld (was %lld), rq_cons %lld: 3 receives posted",
	        json_num(j, "rq_prod"), json_num(before, "rq_prod"), json_num(j, "rq_cons"));
	expect_num(r, j, "srq", "limit", 0);
	ibv_srq_attr la{};
	la.srq_limit = 2;
	if (r.expect_ok("srq.arm", ibv_modify_srq(srq.get(), &la, IBV_SRQ_LIMIT),
	                "ibv_modify_srq(LIMIT 2)"))
		expect_num(r, show_mine("srq"), "srq", "limit", 2);
}

int run(const char *dev, ibv_context *ctx, const GidChoice &gid)
{
	Report r("resdetails");
	CqPtr cq(ibv_create_cq(ctx, 64, nullptr, nullptr, 0));
	PdPtr pd(ibv_alloc_pd(ctx));
	void *mem = nullptr;

	if (posix_memalign(&mem, 4096, kBuf)) {
		r.fail("setup", "no memory");
		return r.finish();
	}
	uint8_t *buf = static_cast<uint8_t *>(mem);
	memset(buf, 0x5a, kBuf);
	MrPtr mr(pd ? ibv_reg_mr(pd.get(), buf, kBuf, IBV_ACCESS_LOCAL_WRITE) : nullptr);
	ibv_qp_init_attr ia{};
	ia.send_cq = cq.get();
	ia.recv_cq = cq.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap = {16, 16, 1, 1, 0};
	QpPtr a(mr && cq ? ibv_create_qp(pd.get(), &ia) : nullptr);
	QpPtr b(a ? ibv_create_qp(pd.get(), &ia) : nullptr);
	/* a's ACK timeout: 4.096 us * 2^18 = 1.07 s, for the stuck phase. */
	if (!r.check(b &&
	                 connect_rc_from(a.get(), gid, b->qp_num, IBV_ACCESS_LOCAL_WRITE,
	                                 IBV_QPS_RESET, 18) == 0 &&
	                 connect_rc(b.get(), gid, a->qp_num, IBV_ACCESS_LOCAL_WRITE) == 0,
	             "setup", "a loopback RC pair on one CQ")) {
		free(mem);
		return r.finish();
	}
	if (rdma_show("qp").empty()) {
		r.fail("rdma", "`rdma -dd -j resource show qp` printed nothing");
		free(mem);
		return r.finish();
	}

	/* --- steady ------------------------------------------------------- */
	const std::string a0 = show_qp(dev, a->qp_num), b0 = show_qp(dev, b->qp_num);
	const std::string cq0 = show_mine("cq");
	std::string why;
	for (unsigned i = 0; i < kSends; i++) {
		ibv_sge rs{reinterpret_cast<uintptr_t>(buf + 4096 + i * kMsg), kMsg, mr->lkey};
		ibv_recv_wr rwr{};
		ibv_recv_wr *rbad = nullptr;
		rwr.wr_id = 100 + i;
		rwr.sg_list = &rs;
		rwr.num_sge = 1;
		ibv_sge ss{reinterpret_cast<uintptr_t>(buf), kMsg, mr->lkey};
		ibv_send_wr swr{};
		ibv_send_wr *sbad = nullptr;
		swr.wr_id = i;
		swr.sg_list = &ss;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		if (ibv_post_recv(b.get(), &rwr, &rbad) || ibv_post_send(a.get(), &swr, &sbad)) {
			r.fail("steady.post", "posting: %s", errno_name(errno).c_str());
			free(mem);
			return r.finish();
		}
	}
	if (!r.check(poll_n(cq.get(), 2 * kSends, 10000, IBV_WC_SUCCESS, &why), "steady.traffic",
	             "5 SENDs of 100 B and their receives completed (%s)",
	             why.empty() ? "ok" : why.c_str())) {
		free(mem);
		return r.finish();
	}
	/* The last ACK may leave a timer to be stopped a moment later. */
	std::string aj;
	for (int tries = 0; tries < 50; tries++) {
		aj = show_qp(dev, a->qp_num);
		if (json_num(aj, "rto_ms") == 0 && json_num(aj, "tlp_ms") == 0)
			break;
		usleep(20000);
	}
	const std::string bj = show_qp(dev, b->qp_num);
	const long long psn0 = json_num(a0, "req_psn");
	r.check(psn0 == kRqPsn, "steady.a.psn0", "a req_psn %lld before traffic (want %u)", psn0,
	        kRqPsn);
	expect_num(r, aj, "a", "req_psn", psn0 + kSends);
	expect_num(r, aj, "a", "comp_psn", psn0 + kSends);
	expect_num(r, aj, "a", "sq_prod", json_num(a0, "sq_prod") + kSends);
	expect_num(r, aj, "a", "sq_cons", json_num(a0, "sq_cons") + kSends);
	expect_num(r, aj, "a", "retry_left", 7);
	expect_num(r, aj, "a", "rto_ms", 0);
	expect_num(r, aj, "a", "mtu", 1024);
	expect_num(r, aj, "a", "rd_atomic_out", 0);
	expect_num(r, bj, "b", "resp_epsn", psn0 + kSends);
	expect_num(r, bj, "b", "resp_msn", json_num(b0, "resp_msn") + kSends);
	expect_num(r, bj, "b", "rq_prod", json_num(b0, "rq_prod") + kSends);
	expect_num(r, bj, "b", "rq_cons", json_num(b0, "rq_cons") + kSends);

	std::string cj = show_mine("cq");
	expect_num(r, cj, "cq", "prod", json_num(cq0, "prod") + 2 * kSends);
	expect_num(r, cj, "cq", "cons", json_num(cq0, "cons") + 2 * kSends);
	/*
	 * The raw listing: rdma(8) does not filter it by pid, and names no
	 * cqn in it; the device's kernel CQs (QP1's) come in it too, with no
	 * CQE. Ours is the entry with a CQE and the indices above.
	 */
	const std::string craw_json = rdma_show("cq", true);
	std::vector<uint8_t> craw;
	for (size_t at = 0; at < craw_json.size();) {
		std::vector<uint8_t> e = raw_bytes(craw_json, &at);

		if (e.size() >= 16 + sizeof(sroce_cqe) && raw_u32(e, 0) == json_num(cj, "prod") &&
		    raw_u32(e, 1) == json_num(cj, "cons"))
			craw = e;
	}
	if (craw.empty())
		r.info("rdma -j -r resource show cq: %s", craw_json.c_str());
	/* prod, cons, kflags, uflags, then the newest CQE (struct sroce_cqe). */
	r.check(raw_u32(craw, 0) == json_num(cj, "prod") &&
	            raw_u32(craw, 1) == json_num(cj, "cons") &&
	            craw.size() >= 16 + sizeof(sroce_cqe),
	        "cq.raw", "rdma -r: %zu bytes, prod %lld, cons %lld", craw.size(), raw_u32(craw, 0),
	        raw_u32(craw, 1));
	if (craw.size() >= 16 + sizeof(sroce_cqe)) {
		sroce_cqe cqe;

		memcpy(&cqe, craw.data() + 16, sizeof(cqe));
		r.check(cqe.status == IBV_WC_SUCCESS &&
		            (cqe.qp_num == a->qp_num || cqe.qp_num == b->qp_num),
		        "cq.raw_cqe", "the newest CQE: status %u, QP %u, wr_id %" PRIu64,
		        cqe.status, cqe.qp_num, uint64_t(cqe.wr_id));
	}
	r.check(json_value(cj, "arm") == "none", "cq.arm", "cq arm \"%s\" (want none)",
	        json_value(cj, "arm").c_str());
	if (r.expect_ok("cq.notify", ibv_req_notify_cq(cq.get(), 0), "ibv_req_notify_cq")) {
		cj = show_mine("cq");
		r.check(json_value(cj, "arm") == "next", "cq.arm_next",
		        "cq arm \"%s\" after ibv_req_notify_cq (want next)",
		        json_value(cj, "arm").c_str());
	}

	const std::string mj = show_mine("mr");
	r.check(json_value(mj, "kind") == "user", "mr.kind", "mr kind \"%s\" (want user)",
	        json_value(mj, "kind").c_str());
	expect_num(r, mj, "mr", "pages_pinned", kBuf / 4096);

	/* --- stuck -------------------------------------------------------- */
	ibv_qp_attr reset{};
	reset.qp_state = IBV_QPS_RESET;
	if (!r.expect_ok("stuck.reset", ibv_modify_qp(b.get(), &reset, IBV_QP_STATE),
	                 "ibv_modify_qp(b, RESET)")) {
		free(mem);
		return r.finish();
	}
	const std::string s0 = show_qp(dev, a->qp_num);
	ibv_sge ss{reinterpret_cast<uintptr_t>(buf), kMsg, mr->lkey};
	ibv_send_wr swr{};
	ibv_send_wr *sbad = nullptr;
	swr.wr_id = 99;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (!r.expect_ok("stuck.post", ibv_post_send(a.get(), &swr, &sbad), "ibv_post_send")) {
		free(mem);
		return r.finish();
	}
	usleep(2500000);
	const std::string sj = show_qp(dev, a->qp_num);
	const long long req = json_num(sj, "req_psn"), comp = json_num(sj, "comp_psn");
	r.check(req == json_num(s0, "req_psn") + 1 && comp == req - 1, "stuck.psn",
	        "a req_psn %lld, comp_psn %lld: one packet unanswered", req, comp);
	expect_num(r, sj, "a", "sq_prod", json_num(s0, "sq_prod") + 1);
	expect_num(r, sj, "a", "sq_cons", json_num(s0, "sq_cons"));
	const long long left = json_num(sj, "retry_left");
	r.check(left >= 0 && left < 7, "stuck.retry_left", "a retry_left %lld after 2.5 s", left);
	const long long rto = json_num(sj, "rto_ms"), tlp = json_num(sj, "tlp_ms");
	r.check(rto > 0 || tlp > 0, "stuck.timer", "a rto_ms %lld, tlp_ms %lld: a timer armed", rto,
	        tlp);
	r.info("stuck: %s", sj.c_str());
	/*
	 * The raw view: sq_prod, sq_cons, sq_kflags, rq_prod, rq_cons,
	 * rq_kflags, then the unfinished SEND as the kernel validated it
	 * (struct sroce_send_wqe: wr_id first, num_sge at byte 16).
	 */
	const std::vector<uint8_t> raw = raw_bytes(rdma_show(
	    "qp link " + std::string(dev) + "/1 lqpn " + std::to_string(a->qp_num), true));
	uint64_t raw_wr_id = 0;
	if (raw.size() >= 24 + 20)
		memcpy(&raw_wr_id, raw.data() + 24, 8);
	r.check(raw_u32(raw, 0) == json_num(sj, "sq_prod") &&
	            raw_u32(raw, 1) == json_num(sj, "sq_cons") && raw_wr_id == 99 &&
	            raw_u32(raw, 10) == 1,
	        "stuck.raw",
	        "rdma -r: %zu bytes, sq_prod %lld, sq_cons %lld, WQE wr_id %" PRIu64
	        ", num_sge %lld (want the SEND: wr_id 99, 1 SGE)",
	        raw.size(), raw_u32(raw, 0), raw_u32(raw, 1), raw_wr_id, raw_u32(raw, 10));
	why.clear();
	r.check(poll_n(cq.get(), 1, 20000, IBV_WC_RETRY_EXC_ERR, &why), "stuck.end",
	        "the SEND ended in IBV_WC_RETRY_EXC_ERR (%s)", why.empty() ? "ok" : why.c_str());

	check_srq(r, pd.get(), mr.get(), buf + 8192);
	a.reset();
	b.reset();
	mr.reset();
	free(mem);
	return r.finish();
}

} /* namespace */

int cmd_resdetails(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("resdetails", argc, argv, &t, &status))
		return status;
	return run(t.dev, t.ctx.get(), t.gid);
}

} /* namespace vc */
