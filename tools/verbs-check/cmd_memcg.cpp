// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check memcg DEV: the mapped rings of CQs, SRQs and QPs (RQ
 * and SQ) are charged to the memory cgroup of the process that creates
 * them. For each kind of queue, in this order:
 *
 *   - one small object (64 entries) is created and destroyed;
 *   - objects whose rings take about a quarter of BYTES each are created
 *     and kept, until one fails or the rings held reach the bound:
 *       --expect-enomem-above BYTES (run in a cgroup with memory.max
 *       BYTES): a creation must fail with ENOMEM before the rings held
 *       pass BYTES (the tool tries up to twice BYTES);
 *       --expect-success-up-to BYTES (no limit): every creation succeeds
 *       until the rings held reach BYTES;
 *   - with --cgroup DIR (the cgroup this process runs in): memory.current
 *     grew by at least 90% of the ring bytes held, and is back within
 *     2 MiB of its start once they are destroyed;
 *   - with --expect-enomem-above: a small object can be created again.
 *
 * Ring bytes are computed with sroce's ring layout (sroce_ring.h) from the
 * sizes the device granted: exact for sroce, an estimate for another
 * device. Kernel-private per-queue memory (a QP's shadow WQEs) comes on top.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>
#include <sroce/sroce_ring.h>

#include <algorithm>
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

constexpr size_t kPage = 4096;
constexpr uint32_t kSmall = 64;
constexpr uint32_t kMaxSge = 32;
constexpr long long kSlack = 2 << 20; /* memory.current noise after destroy */
constexpr size_t kMaxObjects = 1024;

enum class Kind { Cq, Srq, Rq, Sq };

const char *kind_name(Kind k)
{
	switch (k) {
	case Kind::Cq:
		return "cq";
	case Kind::Srq:
		return "srq";
	case Kind::Rq:
		return "rq";
	case Kind::Sq:
		return "sq";
	}
	return "?";
}

std::string mib(double bytes)
{
	char buf[32];

	std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / (1 << 20));
	return buf;
}

uint32_t pow2_up(uint32_t n)
{
	return sroce_ring_roundup_pow2(n ? n : 1);
}

/* Largest power of two <= @n (n >= 1). */
uint32_t pow2_down(uint64_t n)
{
	uint32_t p = 1;

	while (p <= (1U << 30) && uint64_t(p) * 2 <= n)
		p <<= 1;
	return p;
}

/* One object and the ring bytes it holds. */
struct Obj {
	CqPtr cq;
	SrqPtr srq;
	QpPtr qp;
	size_t bytes = 0;
};

class MemcgRun
{
      public:
	MemcgRun(Report &r, ibv_context *ctx, const ibv_device_attr &attr, bool enomem,
	         long long limit, const char *cgroup)
	    : r_(r), ctx_(ctx), attr_(attr), enomem_(enomem), limit_(limit),
	      cgroup_(cgroup ? cgroup : "")
	{
	}

	bool setup();
	void run_kind(Kind k);

      private:
	/* Entries for one big object of kind @k, and their stride. */
	uint32_t big_entries(Kind k) const;
	int create(Kind k, uint32_t entries, Obj *o);
	/* DIR/memory.current, or -1 (no --cgroup, or unreadable). */
	long long current() const;
	bool destroy_all(const std::string &p, std::vector<Obj> &held);

	Report &r_;
	ibv_context *ctx_;
	const ibv_device_attr &attr_;
	bool enomem_;
	long long limit_;
	std::string cgroup_;
	PdPtr pd_;
	CqPtr cq_; /* the QPs' CQ */
};

bool MemcgRun::setup()
{
	errno = 0;
	pd_.reset(ibv_alloc_pd(ctx_));
	cq_.reset(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	if (!pd_ || !cq_) {
		r_.fail("memcg.setup", "PD or CQ for the QPs: %s",
		        errno_name(null_errno()).c_str());
		return false;
	}
	if (!cgroup_.empty() && current() < 0) {
		r_.fail("memcg.setup", "cannot read %s/memory.current", cgroup_.c_str());
		return false;
	}
	return true;
}

long long MemcgRun::current() const
{
	long long v = -1;

	if (cgroup_.empty())
		return -1;
	std::ifstream f(cgroup_ + "/memory.current");
	if (!(f >> v))
		return -1;
	return v;
}

uint32_t MemcgRun::big_entries(Kind k) const
{
	uint64_t target = uint64_t(limit_) / 4, stride = 0, max = 0;
	uint32_t sge;

	switch (k) {
	case Kind::Cq:
		stride = SROCE_CQE_SIZE;
		max = uint64_t(attr_.max_cqe);
		break;
	case Kind::Srq:
		sge = std::min<uint32_t>(kMaxSge, uint32_t(attr_.max_srq_sge));
		stride = sroce_recv_wqe_stride(sge);
		max = uint64_t(attr_.max_srq_wr);
		break;
	case Kind::Rq:
		sge = std::min<uint32_t>(kMaxSge, uint32_t(attr_.max_sge));
		stride = sroce_recv_wqe_stride(sge);
		max = uint64_t(attr_.max_qp_wr);
		break;
	case Kind::Sq:
		sge = std::min<uint32_t>(kMaxSge, uint32_t(attr_.max_sge));
		stride = sroce_send_wqe_stride(sge, 0);
		max = uint64_t(attr_.max_qp_wr);
		break;
	}
	if (target > SROCE_RING_HDR_SIZE + stride)
		target -= SROCE_RING_HDR_SIZE;
	return uint32_t(std::min<uint64_t>(pow2_down(target / stride), std::max<uint64_t>(max, 1)));
}

/* Returns 0 or the errno of the failed creation. */
int MemcgRun::create(Kind k, uint32_t entries, Obj *o)
{
	uint32_t sge;

	errno = 0;
	switch (k) {
	case Kind::Cq:
		o->cq.reset(ibv_create_cq(ctx_, int(entries), nullptr, nullptr, 0));
		if (!o->cq)
			return null_errno();
		o->bytes = sroce_ring_bytes(pow2_up(uint32_t(o->cq->cqe)), SROCE_CQE_SIZE, kPage);
		return 0;
	case Kind::Srq: {
		ibv_srq_init_attr ia{};

		ia.attr.max_wr = entries;
		ia.attr.max_sge = std::min<uint32_t>(kMaxSge, uint32_t(attr_.max_srq_sge));
		o->srq.reset(ibv_create_srq(pd_.get(), &ia));
		if (!o->srq)
			return null_errno();
		o->bytes = sroce_ring_bytes(pow2_up(ia.attr.max_wr),
		                            sroce_recv_wqe_stride(ia.attr.max_sge), kPage);
		return 0;
	}
	case Kind::Rq:
	case Kind::Sq: {
		ibv_qp_init_attr ia{};

		sge = std::min<uint32_t>(kMaxSge, uint32_t(attr_.max_sge));
		ia.send_cq = cq_.get();
		ia.recv_cq = cq_.get();
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = k == Kind::Sq ? entries : 1;
		ia.cap.max_send_sge = k == Kind::Sq ? sge : 1;
		ia.cap.max_recv_wr = k == Kind::Rq ? entries : 1;
		ia.cap.max_recv_sge = k == Kind::Rq ? sge : 1;
		o->qp.reset(ibv_create_qp(pd_.get(), &ia));
		if (!o->qp)
			return null_errno();
		o->bytes = sroce_ring_bytes(pow2_up(ia.cap.max_send_wr),
		                            sroce_send_wqe_stride(std::max(ia.cap.max_send_sge, 1U),
		                                                  ia.cap.max_inline_data),
		                            kPage) +
		           sroce_ring_bytes(
		               pow2_up(ia.cap.max_recv_wr),
		               sroce_recv_wqe_stride(std::max(ia.cap.max_recv_sge, 1U)), kPage);
		return 0;
	}
	}
	return EINVAL;
}

bool MemcgRun::destroy_all(const std::string &p, std::vector<Obj> &held)
{
	int errors = 0;

	for (auto it = held.rbegin(); it != held.rend(); ++it) {
		if (it->qp)
			errors += ibv_destroy_qp(it->qp.release()) != 0;
		if (it->srq)
			errors += ibv_destroy_srq(it->srq.release()) != 0;
		if (it->cq)
			errors += ibv_destroy_cq(it->cq.release()) != 0;
	}
	r_.check(!errors, p + ".destroy", "%zu objects destroyed, %d errors", held.size(), errors);
	held.clear();
	return !errors;
}

void MemcgRun::run_kind(Kind k)
{
	const std::string p = std::string("memcg.") + kind_name(k);
	const uint32_t entries = big_entries(k);
	const long long bound = enomem_ ? 2 * limit_ : limit_;
	std::vector<Obj> held;
	long long start, peak, now = -1;
	size_t total = 0;
	int err = 0;

	{
		Obj o;

		err = create(k, kSmall, &o);
		r_.check(!err, p + ".small", "%s of %u entries: %s", kind_name(k), kSmall,
		         err ? errno_name(err).c_str() : "created");
	}
	start = current();
	while (total < size_t(bound) && held.size() < kMaxObjects) {
		Obj o;

		err = create(k, entries, &o);
		if (err)
			break;
		if (held.empty())
			r_.info("%s: %u entries asked, %s of rings per object", kind_name(k),
			        entries, mib(double(o.bytes)).c_str());
		total += o.bytes;
		held.push_back(std::move(o));
	}
	peak = current();
	if (enomem_) {
		if (!err)
			r_.fail(p + ".enomem",
			        "%zu objects hold %s of rings: none failed (limit %s)", held.size(),
			        mib(double(total)).c_str(), mib(limit_).c_str());
		else if (err != ENOMEM)
			r_.fail(p + ".enomem", "object #%zu failed with %s, want ENOMEM",
			        held.size() + 1, errno_name(err).c_str());
		else
			r_.check(total <= size_t(limit_), p + ".enomem",
			         "object #%zu failed with ENOMEM; the %zu before it hold %s of "
			         "rings (limit %s)",
			         held.size() + 1, held.size(), mib(double(total)).c_str(),
			         mib(limit_).c_str());
	} else {
		r_.check(!err, p + ".success", "%zu objects hold %s of rings%s%s", held.size(),
		         mib(double(total)).c_str(), err ? "; the next failed with " : "",
		         err ? errno_name(err).c_str() : "");
	}
	if (start >= 0 && peak >= 0)
		r_.check(double(peak - start) >= 0.9 * double(total), p + ".charged",
		         "memory.current grew by %s while the rings held take %s",
		         mib(peak - start).c_str(), mib(double(total)).c_str());

	destroy_all(p, held);
	if (start >= 0) {
		/* A QP's kernel-private memory may be freed shortly after. */
		for (int i = 0; i < 50; i++) {
			now = current();
			if (now <= start + kSlack)
				break;
			usleep(100 * 1000);
		}
		r_.check(now >= 0 && now <= start + kSlack, p + ".uncharged",
		         "memory.current after destroy %s, before the objects %s (peak %s)",
		         mib(now).c_str(), mib(start).c_str(), mib(peak).c_str());
	}
	if (enomem_) {
		Obj o;

		err = create(k, kSmall, &o);
		r_.check(!err, p + ".small_after", "%s of %u entries after ENOMEM: %s",
		         kind_name(k), kSmall, err ? errno_name(err).c_str() : "created");
	}
}

} /* namespace */

int cmd_memcg(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("memcg");
	long long limit;
	long enomem_bytes, success_bytes;
	ibv_device_attr attr{};

	if (!args.parse(argc, argv,
	                {{"expect-enomem-above", true},
	                 {"expect-success-up-to", true},
	                 {"cgroup", true},
	                 {"kinds", true}},
	                &why))
		return usage_error("memcg", why);
	if (args.num_positional() != 1)
		return usage_error("memcg", "want exactly one device name");
	if (!args.number("expect-enomem-above", 0, 1 << 20, 1L << 40, &enomem_bytes, &why) ||
	    !args.number("expect-success-up-to", 0, 1 << 20, 1L << 40, &success_bytes, &why))
		return usage_error("memcg", why);
	if (!enomem_bytes == !success_bytes)
		return usage_error("memcg", "want one of --expect-enomem-above and "
		                            "--expect-success-up-to");
	limit = enomem_bytes ? enomem_bytes : success_bytes;

	std::vector<Kind> kinds;
	std::string list = args.value("kinds", "cq,srq,rq,sq");
	for (size_t pos = 0; pos <= list.size();) {
		size_t comma = list.find(',', pos);
		std::string name =
		    list.substr(pos, comma == std::string::npos ? comma : comma - pos);
		bool found = false;

		for (Kind k : {Kind::Cq, Kind::Srq, Kind::Rq, Kind::Sq})
			if (name == kind_name(k)) {
				kinds.push_back(k);
				found = true;
			}
		if (!found)
			return usage_error("memcg", "--kinds: unknown kind '" + name + "'");
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}

	const char *device = args.positional(0);
	ContextPtr ctx;
	if (!open_and_query(device, r, &ctx, &attr))
		return r.finish();
	std::ifstream self("/proc/self/cgroup");
	std::string cg;
	std::getline(self, cg);
	r.info("device %s, %s %s, this process in cgroup %s", device,
	       enomem_bytes ? "ENOMEM expected above" : "success expected up to",
	       mib(limit).c_str(), cg.c_str());

	MemcgRun run(r, ctx.get(), attr, enomem_bytes != 0, limit, args.value("cgroup"));
	if (run.setup())
		for (Kind k : kinds)
			run.run_kind(k);
	return r.finish();
}

} /* namespace vc */
