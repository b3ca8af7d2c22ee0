// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check domains DEV [--gid-index I]: thread domains and parent
 * domains (ibv_alloc_td(3), ibv_alloc_parent_domain(3)) over a loopback RC
 * pair.
 *
 *   - errors: a TD with a comp_mask bit, a parent domain without a PD, with
 *     an unknown comp_mask bit, with an allocator but no free, or over
 *     another parent domain: EINVAL; an extended CQ whose domain is a
 *     plain PD: EINVAL;
 *   - a parent domain with a TD, an allocator pair and a pd_context: two RC
 *     QPs, an SRQ and an extended CQ created on it, an MR registered on it;
 *     64 SENDs (1 B to 8 KiB) from one QP to the other through the SRQ and
 *     16 RDMA WRITEs, every completion and every byte checked;
 *   - the allocator is called once per QP, CQ and SRQ, with the parent
 *     domain, its pd_context, the object's resource type (sroce: 1 QP,
 *     2 CQ, 3 SRQ) and an alignment the memory meets; each block comes
 *     back through free exactly once, when its object is destroyed;
 *   - while objects use them: the TD (EBUSY), the PD (EBUSY), the parent
 *     domain (EBUSY) cannot go; once the objects are gone, all three can;
 *   - an allocator that answers IBV_ALLOCATOR_USE_DEFAULT: the QP is
 *     created, free is never called for it;
 *   - a parent domain with neither TD nor allocators (rdma-core's
 *     test_without_allocators_rc_traffic): a QP on it connects.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace vc
{
namespace
{

constexpr int kSends = 64;
constexpr int kWrites = 16;
constexpr uint32_t kMaxMsg = 8192;
constexpr int kTimeoutMs = 10000;
constexpr uint64_t kResQp = 1, kResCq = 2, kResSrq = 3;

/* What the allocator pair saw; also the parent domain's pd_context. */
struct AllocLog {
	struct Block {
		void *ptr;
		uint64_t type;
		bool freed;
	};
	std::vector<Block> blocks;
	ibv_pd *want_pd = nullptr; /* set once the parent domain exists */
	bool use_default = false;
	unsigned bad_args = 0; /* a call with the wrong pd or context, or no alignment */
	unsigned bad_frees = 0;
	unsigned default_frees = 0;

	unsigned count(uint64_t type) const
	{
		unsigned n = 0;

		for (const Block &b : blocks)
			n += b.type == type;
		return n;
	}
	unsigned live() const
	{
		unsigned n = 0;

		for (const Block &b : blocks)
			n += !b.freed;
		return n;
	}
};

void *log_alloc(ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t type)
{
	auto *log = static_cast<AllocLog *>(pd_context);
	void *p = nullptr;

	if (!log)
		return nullptr;
	if ((log->want_pd && pd != log->want_pd) || !alignment || (alignment & (alignment - 1)))
		log->bad_args++;
	if (log->use_default) {
		log->blocks.push_back({IBV_ALLOCATOR_USE_DEFAULT, type, false});
		return IBV_ALLOCATOR_USE_DEFAULT;
	}
	if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size))
		return nullptr;
	memset(p, 0, size);
	log->blocks.push_back({p, type, false});
	return p;
}

void log_free(ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	auto *log = static_cast<AllocLog *>(pd_context);

	if (log->want_pd && pd != log->want_pd)
		log->bad_args++;
	if (ptr == IBV_ALLOCATOR_USE_DEFAULT) {
		log->default_frees++;
		return;
	}
	for (AllocLog::Block &b : log->blocks) {
		if (b.ptr == ptr && b.type == type && !b.freed) {
			b.freed = true;
			free(ptr);
			return;
		}
	}
	log->bad_frees++;
}

/* ibv_alloc_parent_domain() with @comp_mask's fields from the arguments. */
ibv_pd *parent(ibv_context *ctx, ibv_pd *pd, ibv_td *td, uint32_t comp_mask, AllocLog *log,
               bool with_free = true)
{
	ibv_parent_domain_init_attr a{};

	a.pd = pd;
	a.td = td;
	a.comp_mask = comp_mask;
	if (comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		a.alloc = log_alloc;
		a.free = with_free ? log_free : nullptr;
	}
	a.pd_context = log;
	return ibv_alloc_parent_domain(ctx, &a);
}

class DomainRun
{
      public:
	DomainRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("domains") {}
	int run();

      private:
	void check_errors();
	bool traffic(ibv_qp *a, ibv_cq *cq, ibv_srq *srq);
	void check_default_allocator();
	void check_plain_parent();

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	PdPtr pd_;
	ibv_td *td_ = nullptr;
	AllocLog log_;
	std::vector<uint8_t> buf_;
};

void DomainRun::check_errors()
{
	ibv_td_init_attr ta{};

	ta.comp_mask = 1;
	ibv_td *td = ibv_alloc_td(ctx_, &ta);
	r_.expect_errno("td.comp_mask", td ? 0 : null_errno(), EINVAL,
	                "ibv_alloc_td with comp_mask 1");
	if (td)
		ibv_dealloc_td(td);

	ibv_pd *p = parent(ctx_, nullptr, nullptr, 0, nullptr);
	r_.expect_errno("parent.no_pd", p ? 0 : null_errno(), EINVAL,
	                "ibv_alloc_parent_domain without a PD");
	if (p)
		ibv_dealloc_pd(p);
	p = parent(ctx_, pd_.get(), nullptr, 1u << 7, nullptr);
	r_.expect_errno("parent.comp_mask", p ? 0 : null_errno(), EINVAL,
	                "ibv_alloc_parent_domain with comp_mask bit 7");
	if (p)
		ibv_dealloc_pd(p);
	p = parent(ctx_, pd_.get(), nullptr, IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS, &log_, false);
	r_.expect_errno("parent.no_free", p ? 0 : null_errno(), EINVAL,
	                "ibv_alloc_parent_domain with an allocator but no free");
	if (p)
		ibv_dealloc_pd(p);

	PdPtr outer(parent(ctx_, pd_.get(), nullptr, 0, nullptr));
	if (!r_.check(outer != nullptr, "parent.plain", "a parent domain with no TD, no allocator"))
		return;
	p = parent(ctx_, outer.get(), nullptr, 0, nullptr);
	r_.expect_errno("parent.nested", p ? 0 : null_errno(), EINVAL,
	                "a parent domain over another parent domain");
	if (p)
		ibv_dealloc_pd(p);

	ibv_cq_init_attr_ex ca{};
	ca.cqe = 8;
	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	ca.parent_domain = pd_.get();
	ibv_cq_ex *cqx = ibv_create_cq_ex(ctx_, &ca);
	r_.expect_errno("cq.plain_pd", cqx ? 0 : null_errno(), EINVAL,
	                "ibv_create_cq_ex whose parent_domain is a plain PD");
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

/* Byte @j of message @i. */
uint8_t pattern(int i, uint32_t j)
{
	return uint8_t(i * 37 + j * 13 + (j >> 8));
}

uint32_t msg_len(int i)
{
	const uint32_t lens[] = {1, 63, 1000, 4096, 4097, kMaxMsg};

	return lens[i % 6];
}

/*
 * SENDs from @a into the SRQ of its peer, then WRITEs from @a, through an
 * MR on @a's parent domain: each completion and each byte checked.
 */
bool DomainRun::traffic(ibv_qp *a, ibv_cq *cq, ibv_srq *srq)
{
	MrPtr mr(ibv_reg_mr(a->pd, buf_.data(), buf_.size(),
	                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
	if (!r_.check(mr != nullptr, "mr", "ibv_reg_mr on the parent domain (%s)",
	              mr ? "ok" : errno_name(errno).c_str()))
		return false;
	uint8_t *src = buf_.data(), *dst = buf_.data() + kMaxMsg;
	uint8_t *wsrc = buf_.data() + 2 * kMaxMsg, *wdst = buf_.data() + 3 * kMaxMsg;
	int bad_status = 0, bad_bytes = 0, done = 0;

	for (int i = 0; i < kSends; i++) {
		const uint32_t len = msg_len(i);
		ibv_sge rs{reinterpret_cast<uintptr_t>(dst), kMaxMsg, mr->lkey};
		ibv_recv_wr rwr{};
		ibv_recv_wr *rbad = nullptr;

		memset(dst, 0, kMaxMsg);
		for (uint32_t j = 0; j < len; j++)
			src[j] = pattern(i, j);
		rwr.wr_id = 1000 + i;
		rwr.sg_list = &rs;
		rwr.num_sge = 1;
		ibv_sge ss{reinterpret_cast<uintptr_t>(src), len, mr->lkey};
		ibv_send_wr swr{};
		ibv_send_wr *sbad = nullptr;
		swr.wr_id = i;
		swr.sg_list = &ss;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		if (ibv_post_srq_recv(srq, &rwr, &rbad) || ibv_post_send(a, &swr, &sbad)) {
			r_.fail("send.post", "message %d: %s", i, errno_name(errno).c_str());
			return false;
		}
		ibv_wc wc[2];
		if (poll_cq_for(cq, wc, 2, kTimeoutMs) != 2) {
			r_.fail("send.complete", "message %d: not both completions", i);
			return false;
		}
		for (const ibv_wc &w : wc) {
			const bool recv = w.opcode == IBV_WC_RECV;

			if (w.status != IBV_WC_SUCCESS ||
			    w.wr_id != uint64_t(recv ? 1000 + i : i) || (recv && w.byte_len != len))
				bad_status++;
		}
		for (uint32_t j = 0; j < len; j++)
			bad_bytes += dst[j] != pattern(i, j);
		done++;
	}
	r_.check(done == kSends && !bad_status && !bad_bytes, "send",
	         "%d SENDs (1 B to %u B) through the SRQ: %d bad completions, %d bytes differ",
	         done, kMaxMsg, bad_status, bad_bytes);

	bad_status = bad_bytes = done = 0;
	for (int i = 0; i < kWrites; i++) {
		const uint32_t len = msg_len(i + 3);
		ibv_sge ss{reinterpret_cast<uintptr_t>(wsrc), len, mr->lkey};
		ibv_send_wr swr{};
		ibv_send_wr *sbad = nullptr;

		memset(wdst, 0, kMaxMsg);
		for (uint32_t j = 0; j < len; j++)
			wsrc[j] = pattern(i + 100, j);
		swr.wr_id = 500 + i;
		swr.sg_list = &ss;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_RDMA_WRITE;
		swr.send_flags = IBV_SEND_SIGNALED;
		swr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(wdst);
		swr.wr.rdma.rkey = mr->rkey;
		ibv_wc wc{};
		if (ibv_post_send(a, &swr, &sbad) || poll_cq_for(cq, &wc, 1, kTimeoutMs) != 1) {
			r_.fail("write", "WRITE %d did not complete", i);
			return false;
		}
		bad_status += wc.status != IBV_WC_SUCCESS || wc.wr_id != uint64_t(500 + i);
		for (uint32_t j = 0; j < len; j++)
			bad_bytes += wdst[j] != pattern(i + 100, j);
		done++;
	}
	return r_.check(done == kWrites && !bad_status && !bad_bytes, "write",
	                "%d RDMA WRITEs: %d bad completions, %d bytes differ", done, bad_status,
	                bad_bytes);
}

void DomainRun::check_default_allocator()
{
	AllocLog log;

	log.use_default = true;
	PdPtr p(parent(
	    ctx_, pd_.get(), nullptr,
	    IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT, &log));
	if (!r_.check(p != nullptr, "default.parent", "a parent domain whose allocator defers"))
		return;
	log.want_pd = p.get();
	CqPtr cq(ibv_create_cq(ctx_, 8, nullptr, nullptr, 0));
	ibv_qp_init_attr ia = rc_qp_init(cq.get(), 4, 4);
	QpPtr qp(cq ? ibv_create_qp(p.get(), &ia) : nullptr);
	r_.check(qp && log.count(kResQp) == 1, "default.create",
	         "a QP whose allocator answered IBV_ALLOCATOR_USE_DEFAULT (%s, %u call)",
	         qp ? "ok" : errno_name(errno).c_str(), log.count(kResQp));
	if (qp)
		r_.expect_ok("default.destroy", ibv_destroy_qp(qp.release()), "ibv_destroy_qp");
	r_.check(!log.default_frees && !log.bad_frees && !log.bad_args, "default.free",
	         "free never called for memory it left to the provider (%u calls)",
	         log.default_frees + log.bad_frees);
}

void DomainRun::check_plain_parent()
{
	PdPtr p(parent(ctx_, pd_.get(), nullptr, 0, nullptr));
	CqPtr cq(ibv_create_cq(ctx_, 8, nullptr, nullptr, 0));
	ibv_qp_init_attr ia = rc_qp_init(cq.get(), 4, 4);
	QpPtr a(p && cq ? ibv_create_qp(p.get(), &ia) : nullptr);
	QpPtr b(a ? ibv_create_qp(p.get(), &ia) : nullptr);

	r_.check(b && !connect_rc(a.get(), gid_, b->qp_num, IBV_ACCESS_LOCAL_WRITE) &&
	             !connect_rc(b.get(), gid_, a->qp_num, IBV_ACCESS_LOCAL_WRITE),
	         "plain", "an RC pair on a parent domain with neither TD nor allocators connects");
}

int DomainRun::run()
{
	pd_.reset(ibv_alloc_pd(ctx_));
	if (!r_.check(pd_ != nullptr, "pd", "ibv_alloc_pd"))
		return r_.finish();
	buf_.assign(4 * kMaxMsg, 0);
	check_errors();

	ibv_td_init_attr ta{};
	td_ = ibv_alloc_td(ctx_, &ta);
	if (!r_.check(td_ != nullptr, "td", "ibv_alloc_td (%s)",
	              td_ ? "ok" : errno_name(errno).c_str()))
		return r_.finish();
	ibv_pd *pdom = parent(
	    ctx_, pd_.get(), td_,
	    IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT, &log_);
	if (!r_.check(pdom != nullptr, "parent",
	              "a parent domain with TD, allocators, context (%s)",
	              pdom ? "ok" : errno_name(errno).c_str()))
		return r_.finish();
	log_.want_pd = pdom;
	{
		ibv_cq_init_attr_ex ca{};
		ca.cqe = 64;
		ca.wc_flags = IBV_WC_STANDARD_FLAGS;
		ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
		ca.parent_domain = pdom;
		ibv_cq_ex *cqx = ibv_create_cq_ex(ctx_, &ca);
		CqPtr cq(cqx ? ibv_cq_ex_to_cq(cqx) : nullptr);
		ibv_srq_init_attr sa{};
		sa.attr.max_wr = 16;
		sa.attr.max_sge = 1;
		SrqPtr srq(cq ? ibv_create_srq(pdom, &sa) : nullptr);
		ibv_qp_init_attr ia = rc_qp_init(cq.get(), 8, 8);
		QpPtr a(srq ? ibv_create_qp(pdom, &ia) : nullptr);
		ia.srq = srq.get();
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
		QpPtr b(a ? ibv_create_qp(pdom, &ia) : nullptr);
		const unsigned access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

		if (!r_.check(b && !connect_rc(a.get(), gid_, b->qp_num, access) &&
		                  !connect_rc(b.get(), gid_, a->qp_num, access),
		              "setup", "CQ, SRQ and an RC pair on the parent domain (%s)",
		              b ? "ok" : errno_name(errno).c_str()))
			return r_.finish();
		r_.check(a->pd == pdom && b->pd == pdom, "qp.pd",
		         "the QPs report the parent domain");
		r_.check(log_.count(kResQp) == 2 && log_.count(kResCq) == 1 &&
		             log_.count(kResSrq) == 1 && log_.blocks.size() == 4 && !log_.bad_args,
		         "alloc",
		         "allocator calls: %u QP, %u CQ, %u SRQ of %zu, %u with wrong arguments",
		         log_.count(kResQp), log_.count(kResCq), log_.count(kResSrq),
		         log_.blocks.size(), log_.bad_args);
		traffic(a.get(), cq.get(), srq.get());

		r_.expect_errno("busy.td", ibv_dealloc_td(td_), EBUSY,
		                "ibv_dealloc_td while a parent domain holds it");
		r_.expect_errno("busy.pd", ibv_dealloc_pd(pd_.get()), EBUSY,
		                "ibv_dealloc_pd while a parent domain stands on it");
		r_.expect_errno("busy.parent", ibv_dealloc_pd(pdom), EBUSY,
		                "ibv_dealloc_pd of the parent domain while its QPs live");
		r_.check(log_.live() == 4, "alloc.live", "%u blocks in use, none freed early",
		         log_.live());
	}
	r_.check(log_.live() == 0 && !log_.bad_frees && !log_.bad_args, "free",
	         "after the objects: %u blocks in use, %u frees of unknown blocks", log_.live(),
	         log_.bad_frees);
	r_.expect_ok("dealloc.parent", ibv_dealloc_pd(pdom), "ibv_dealloc_pd of the parent domain");
	r_.expect_ok("dealloc.td", ibv_dealloc_td(td_), "ibv_dealloc_td");
	check_default_allocator();
	check_plain_parent();
	r_.expect_ok("dealloc.pd", ibv_dealloc_pd(pd_.release()), "ibv_dealloc_pd of the PD");
	return r_.finish();
}

} /* namespace */

int cmd_domains(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("domains", argc, argv, &t, &status))
		return status;
	DomainRun run(t.ctx.get(), t.gid);
	return run.run();
}

} /* namespace vc */
