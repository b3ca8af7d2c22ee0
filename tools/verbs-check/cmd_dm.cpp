// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check dm DEV [--gid-index I]: device memory (ibv_alloc_dm(3))
 * over a loopback RC pair.
 *
 *   - max_dm_size is reported; ibv_alloc_dm of 0 bytes, of more than
 *     max_dm_size, with a comp_mask bit: refused; a context is handed
 *     out max_dm_size in all (ENOMEM past it), another context gets its
 *     own meanwhile, and what is freed is taken back;
 *   - ibv_memcpy_to_dm / _from_dm: a pattern goes in and comes back;
 *     offsets and lengths not a multiple of 4: EINVAL; past the end:
 *     EFAULT (as mlx5);
 *   - ibv_reg_dm_mr: without IBV_ACCESS_ZERO_BASED, past the end of the
 *     DM, with IBV_ACCESS_MW_BIND, at an offset not a multiple of 8 (4,
 *     4092: an atomic's word would cross a page): EINVAL; a region of 0
 *     bytes registers;
 *   - traffic (zero-based addresses, every byte checked): a SEND from
 *     host memory lands in a receive on device memory; a SEND from device
 *     memory lands in host memory; RDMA WRITE into and RDMA READ out of
 *     device memory at an offset; fetch-and-add and compare-and-swap on a
 *     word of it (the value before comes back, the word changes);
 *   - ibv_free_dm while a region uses it: EBUSY; after the region: 0.
 *
 * With SROCE_DM_ABANDON=1 in the environment it only allocates a DM,
 * registers a region on it, fills it and exits without freeing anything
 * (the kernel must clean up after the process: device_memory.sh).
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kDmLen = 64 * 1024;
constexpr uint32_t kMsg = 8192;
constexpr int kTimeoutMs = 10000;

uint8_t pattern(uint32_t seed, uint32_t j)
{
	return uint8_t(seed * 29 + j * 7 + (j >> 9));
}

struct DmDeleter {
	void operator()(ibv_dm *dm) const noexcept
	{
		if (int ret = ibv_free_dm(dm))
			destroy_logged(ret, "device memory");
	}
};
using DmPtr = std::unique_ptr<ibv_dm, DmDeleter>;

DmPtr alloc(ibv_context *ctx, size_t length, uint32_t comp_mask = 0)
{
	ibv_alloc_dm_attr a{};

	a.length = length;
	a.log_align_req = 3;
	a.comp_mask = comp_mask;
	return DmPtr(ibv_alloc_dm(ctx, &a));
}

class DmRun
{
      public:
	DmRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("dm") {}
	int run();

      private:
	void check_alloc(uint64_t max);
	void check_copies(ibv_dm *dm);
	void check_reg(ibv_dm *dm);
	bool post_and_wait(ibv_qp *qp, ibv_send_wr &wr, ibv_recv_wr *recv, ibv_qp *rqp, int want);
	void check_traffic(ibv_dm *dm);

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	PdPtr pd_;
	CqPtr cq_;
};

void DmRun::check_alloc(uint64_t max)
{
	DmPtr dm = alloc(ctx_, 0);
	r_.check(!dm, "alloc.zero", "ibv_alloc_dm of 0 bytes refused (%s)",
	         dm ? "allocated" : errno_name(errno).c_str());
	dm = alloc(ctx_, max + 1);
	r_.check(!dm, "alloc.too_big", "ibv_alloc_dm of max_dm_size + 1 refused (%s)",
	         dm ? "allocated" : errno_name(errno).c_str());
	dm = alloc(ctx_, 4096, 1);
	r_.expect_errno("alloc.comp_mask", dm ? 0 : null_errno(), EINVAL,
	                "ibv_alloc_dm with comp_mask 1");
	dm.reset();

	/* The whole budget in two halves, then one page more. */
	DmPtr a = alloc(ctx_, max / 2), b = alloc(ctx_, max / 2);
	if (!r_.check(a && b, "alloc.budget", "two DMs of max_dm_size / 2 (%s)",
	              a && b ? "ok" : errno_name(errno).c_str()))
		return;
	DmPtr c = alloc(ctx_, 4096);
	r_.expect_errno("alloc.exhausted", c ? 0 : null_errno(), ENOMEM,
	                "a page past max_dm_size in all");
	{
		/* The budget is the context's: another (process) is not starved. */
		ContextPtr other(ibv_open_device(ctx_->device));
		DmPtr d = other ? alloc(other.get(), max / 2) : nullptr;
		r_.check(
		    d != nullptr, "alloc.other_context",
		    "another context allocates max_dm_size / 2 while this one holds all of its "
		    "own (%s)",
		    d ? "ok" : errno_name(errno).c_str());
	}
	b.reset();
	c = alloc(ctx_, 4096);
	r_.check(c != nullptr, "alloc.returned", "a page again once half is freed (%s)",
	         c ? "ok" : errno_name(errno).c_str());
}

void DmRun::check_copies(ibv_dm *dm)
{
	std::vector<uint8_t> in(kDmLen), out(kDmLen);

	for (uint32_t j = 0; j < kDmLen; j++)
		in[j] = pattern(1, j);
	if (r_.expect_ok("copy.to", ibv_memcpy_to_dm(dm, 0, in.data(), kDmLen),
	                 "ibv_memcpy_to_dm of all 64 KiB") &&
	    r_.expect_ok("copy.from", ibv_memcpy_from_dm(out.data(), dm, 0, kDmLen),
	                 "ibv_memcpy_from_dm of all 64 KiB"))
		r_.check(in == out, "copy.bytes", "the 64 KiB came back unchanged");
	r_.expect_errno("copy.offset", ibv_memcpy_to_dm(dm, 2, in.data(), 8), EINVAL,
	                "ibv_memcpy_to_dm at offset 2");
	r_.expect_errno("copy.length", ibv_memcpy_from_dm(out.data(), dm, 4, 6), EINVAL,
	                "ibv_memcpy_from_dm of 6 bytes");
	r_.expect_errno("copy.past_end", ibv_memcpy_to_dm(dm, kDmLen - 4, in.data(), 8), EFAULT,
	                "ibv_memcpy_to_dm across the end");
	r_.expect_errno("copy.far", ibv_memcpy_from_dm(out.data(), dm, uint64_t(1) << 62, 4),
	                EFAULT, "ibv_memcpy_from_dm at offset 2^62");
}

void DmRun::check_reg(ibv_dm *dm)
{
	const unsigned zb = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE;
	ibv_mr *mr = ibv_reg_dm_mr(pd_.get(), dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE);

	r_.expect_errno("reg.not_zero_based", mr ? 0 : null_errno(), EINVAL,
	                "ibv_reg_dm_mr without IBV_ACCESS_ZERO_BASED");
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_dm_mr(pd_.get(), dm, 4096, kDmLen, zb);
	r_.expect_errno("reg.past_end", mr ? 0 : null_errno(), EINVAL,
	                "ibv_reg_dm_mr of 64 KiB at offset 4 KiB of a 64 KiB DM");
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_dm_mr(pd_.get(), dm, 0, 4096, zb | IBV_ACCESS_MW_BIND);
	r_.expect_errno("reg.mw_bind", mr ? 0 : null_errno(), EINVAL,
	                "ibv_reg_dm_mr with IBV_ACCESS_MW_BIND");
	if (mr)
		ibv_dereg_mr(mr);
	/*
	 * A region's 8-byte words must be 8-byte words of the DM: one at
	 * offset 4092 would put an atomic's word across two pages.
	 */
	for (uint64_t off : {uint64_t(4), uint64_t(4092)}) {
		mr = ibv_reg_dm_mr(pd_.get(), dm, off, 64,
		                   zb | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
		r_.expect_errno("reg.misaligned", mr ? 0 : null_errno(), EINVAL,
		                off == 4 ? "ibv_reg_dm_mr at offset 4"
		                         : "ibv_reg_dm_mr at offset 4092");
		if (mr)
			ibv_dereg_mr(mr);
	}
	MrPtr empty(ibv_reg_dm_mr(pd_.get(), dm, 104, 0, zb));
	r_.check(empty != nullptr, "reg.empty", "a region of 0 bytes at offset 104 (%s)",
	         empty ? "ok" : errno_name(errno).c_str());
}

/*
 * Posts @wr on @qp (and @recv on @rqp first, when given) and waits for
 * @want successful completions on the shared CQ.
 */
bool DmRun::post_and_wait(ibv_qp *qp, ibv_send_wr &wr, ibv_recv_wr *recv, ibv_qp *rqp, int want)
{
	ibv_send_wr *sbad = nullptr;
	ibv_recv_wr *rbad = nullptr;
	ibv_wc wc[2];

	if (recv && ibv_post_recv(rqp, recv, &rbad))
		return false;
	if (ibv_post_send(qp, &wr, &sbad))
		return false;
	if (poll_cq_for(cq_.get(), wc, want, kTimeoutMs) != want)
		return false;
	for (int i = 0; i < want; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			return false;
	return true;
}

void DmRun::check_traffic(ibv_dm *dm)
{
	const unsigned access = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
	                        IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	                        IBV_ACCESS_REMOTE_ATOMIC;
	const uint32_t base = 4096; /* the region starts here in the DM */
	MrPtr dmr(ibv_reg_dm_mr(pd_.get(), dm, base, kDmLen - base, access));
	std::vector<uint8_t> host(2 * kMsg + 64), back(kMsg);
	MrPtr hmr(
	    ibv_reg_mr(pd_.get(), host.data(), host.size(),
	               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
	ibv_qp_init_attr ia = rc_qp_init(cq_.get(), 4, 4);
	ia.cap.max_send_sge = 1;
	QpPtr a(dmr && hmr ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	QpPtr b(a ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	const unsigned qacc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	if (!r_.check(b && !connect_rc(a.get(), gid_, b->qp_num, qacc) &&
	                  !connect_rc(b.get(), gid_, a->qp_num, qacc),
	              "traffic.setup", "a region over the DM, an RC pair (%s)",
	              dmr ? "ok" : errno_name(errno).c_str()))
		return;
	r_.expect_errno("free.busy", ibv_free_dm(dm), EBUSY, "ibv_free_dm while a region uses it");

	/* SEND host -> DM receive at region offset 100. */
	uint8_t *src = host.data();
	for (uint32_t j = 0; j < kMsg; j++)
		src[j] = pattern(2, j);
	ibv_sge rs{100, kMsg, dmr->lkey};
	ibv_recv_wr rwr{};
	rwr.wr_id = 11;
	rwr.sg_list = &rs;
	rwr.num_sge = 1;
	ibv_sge ss{reinterpret_cast<uintptr_t>(src), kMsg, hmr->lkey};
	ibv_send_wr swr{};
	swr.wr_id = 12;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	bool ok = post_and_wait(a.get(), swr, &rwr, b.get(), 2) &&
	          !ibv_memcpy_from_dm(back.data(), dm, base + 100, kMsg) &&
	          !memcmp(back.data(), src, kMsg);
	r_.check(ok, "traffic.send_into", "a SEND of 8 KiB into a receive on device memory");

	/* SEND DM (what just arrived) -> host receive. */
	uint8_t *dst = host.data() + kMsg;
	memset(dst, 0, kMsg);
	ibv_sge rs2{reinterpret_cast<uintptr_t>(dst), kMsg, hmr->lkey};
	rwr.sg_list = &rs2;
	ibv_sge ss2{100, kMsg, dmr->lkey};
	swr.sg_list = &ss2;
	ok = post_and_wait(b.get(), swr, &rwr, a.get(), 2) && !memcmp(dst, src, kMsg);
	r_.check(ok, "traffic.send_from", "a SEND of 8 KiB from device memory into host memory");

	/* RDMA WRITE host -> DM at 20000, READ it back into host memory. */
	for (uint32_t j = 0; j < kMsg; j++)
		src[j] = pattern(3, j);
	ibv_sge ws{reinterpret_cast<uintptr_t>(src), kMsg, hmr->lkey};
	ibv_send_wr w{};
	w.wr_id = 13;
	w.sg_list = &ws;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = 20000;
	w.wr.rdma.rkey = dmr->rkey;
	ok = post_and_wait(a.get(), w, nullptr, nullptr, 1) &&
	     !ibv_memcpy_from_dm(back.data(), dm, base + 20000, kMsg) &&
	     !memcmp(back.data(), src, kMsg);
	r_.check(ok, "traffic.write", "an RDMA WRITE of 8 KiB into device memory");
	memset(dst, 0, kMsg);
	ibv_sge rd{reinterpret_cast<uintptr_t>(dst), kMsg, hmr->lkey};
	w.sg_list = &rd;
	w.opcode = IBV_WR_RDMA_READ;
	ok = post_and_wait(a.get(), w, nullptr, nullptr, 1) && !memcmp(dst, src, kMsg);
	r_.check(ok, "traffic.read", "an RDMA READ of 8 KiB out of device memory");

	/* Atomics on the word at region offset 40000. */
	const uint64_t start = 0x1122334455667788ull;
	uint64_t word = 0;
	uint64_t *res = reinterpret_cast<uint64_t *>(host.data() + 2 * kMsg);
	ok = !ibv_memcpy_to_dm(dm, base + 40000, &start, sizeof(start));
	ibv_sge as{reinterpret_cast<uintptr_t>(res), 8, hmr->lkey};
	w.sg_list = &as;
	w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w.wr.atomic.remote_addr = 40000;
	w.wr.atomic.rkey = dmr->rkey;
	w.wr.atomic.compare_add = 5;
	*res = 0;
	ok = ok && post_and_wait(a.get(), w, nullptr, nullptr, 1) && *res == start &&
	     !ibv_memcpy_from_dm(&word, dm, base + 40000, 8) && word == start + 5;
	r_.check(ok, "traffic.fetch_add",
	         "fetch-and-add 5 on device memory: %#" PRIx64 " -> %#" PRIx64, *res, word);
	w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	w.wr.atomic.compare_add = start + 5;
	w.wr.atomic.swap = 42;
	*res = 0;
	ok = post_and_wait(a.get(), w, nullptr, nullptr, 1) && *res == start + 5 &&
	     !ibv_memcpy_from_dm(&word, dm, base + 40000, 8) && word == 42;
	r_.check(ok, "traffic.cmp_swap",
	         "compare-and-swap on device memory: %#" PRIx64 " -> %" PRIu64, *res, word);
}

/* Leaves a DM, a region on it and its mapping to process exit. */
int abandon(ibv_context *ctx)
{
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ibv_dm *dm = alloc(ctx, kDmLen).release();
	ibv_mr *mr = pd && dm ? ibv_reg_dm_mr(pd, dm, 0, kDmLen,
	                                      IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
	                                          IBV_ACCESS_REMOTE_WRITE)
	                      : nullptr;
	const uint32_t word = 0x5eadbeef;

	if (!mr || ibv_memcpy_to_dm(dm, 0, &word, sizeof(word))) {
		std::printf("abandon: setup failed: %s\n", errno_name(errno).c_str());
		return 1;
	}
	std::printf("abandon: DM of %u bytes, region lkey %#x: exiting without freeing\n", kDmLen,
	            mr->lkey);
	std::fflush(stdout);
	std::_Exit(0);
}

int DmRun::run()
{
	ibv_device_attr_ex dx{};

	if (!r_.expect_ok("query", ibv_query_device_ex(ctx_, nullptr, &dx), "ibv_query_device_ex"))
		return r_.finish();
	if (!r_.check(dx.max_dm_size >= 2 * kDmLen, "max_dm_size", "max_dm_size %" PRIu64 " bytes",
	              uint64_t(dx.max_dm_size)))
		return r_.finish();
	pd_.reset(ibv_alloc_pd(ctx_));
	cq_.reset(ibv_create_cq(ctx_, 16, nullptr, nullptr, 0));
	if (!r_.check(pd_ && cq_, "setup", "a PD and a CQ"))
		return r_.finish();
	check_alloc(dx.max_dm_size);

	ibv_dm *dm = alloc(ctx_, kDmLen).release();
	if (!r_.check(dm != nullptr, "alloc", "ibv_alloc_dm of 64 KiB (%s)",
	              dm ? "ok" : errno_name(errno).c_str()))
		return r_.finish();
	check_copies(dm);
	check_reg(dm);
	check_traffic(dm);
	r_.expect_ok("free", ibv_free_dm(dm), "ibv_free_dm once its regions are gone");
	return r_.finish();
}

} /* namespace */

int cmd_dm(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("dm", argc, argv, &t, &status))
		return status;
	if (const char *a = std::getenv("SROCE_DM_ABANDON"); a && !std::strcmp(a, "1"))
		return abandon(t.ctx.get());
	DmRun run(t.ctx.get(), t.gid);
	return run.run();
}

} /* namespace vc */
