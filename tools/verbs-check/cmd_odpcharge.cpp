// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check odpcharge DEV --limit BYTES: the page tables of
 * on-demand-paging regions are paid for by their owner. The kernel's ODP
 * code allocates 16 bytes of tables per 4 KiB page of a region's range,
 * mapped or not; sroce counts them in the process's pinned memory (VmPin in
 * /proc/self/status) against RLIMIT_MEMLOCK, as ordinary regions' pinned
 * pages are. Run without CAP_IPC_LOCK and with a memlock limit of BYTES
 * (selftests/odp_memlock.sh); the tool checks that it was.
 *
 *   big       a 16 GiB region over reserved, unmapped address space
 *             (64 MiB of tables) fails with ENOMEM and VmPin is unchanged
 *   fit       64 MiB regions (256 KiB of tables each) are registered until
 *             one fails: at least one succeeds, each adds its tables to
 *             VmPin, one fails with ENOMEM before VmPin passes BYTES; all
 *             deregistered, VmPin is back, and one registers again
 *   implicit  an implicit region (the whole address space) is prefetched
 *             at one mapped page in each of 16 64 MiB chunks: each chunk's
 *             table (256 KiB) is added to VmPin, a prefetch fails before
 *             VmPin passes BYTES; a loopback peer's RDMA WRITE into the
 *             next chunk ends in a remote access error (its fault fails
 *             for good, not RNR NAKs until the retries run out);
 *             deregistered, VmPin is back
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace vc
{
namespace
{

constexpr uint64_t kChunk = 64ull << 20;        /* an implicit child's range */
constexpr uint64_t kChunkTables = 256ull << 10; /* its tables */
constexpr uint64_t kBig = 16ull << 30;
constexpr int kOdpAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND;

/* VmPin of /proc/self/status in bytes, or -1. */
long long vm_pin()
{
	std::ifstream f("/proc/self/status");
	std::string line;

	while (std::getline(f, line))
		if (line.rfind("VmPin:", 0) == 0)
			return std::stoll(line.substr(6)) * 1024;
	return -1;
}

bool has_ipc_lock()
{
	std::ifstream f("/proc/self/status");
	std::string line;

	while (std::getline(f, line))
		if (line.rfind("CapEff:", 0) == 0)
			return (std::stoull(line.substr(7), nullptr, 16) >> 14) &
			       1; /* CAP_IPC_LOCK */
	return true;
}

class Run
{
      public:
	Run(Report &r, ibv_pd *pd, uint64_t limit) : r_(r), pd_(pd), limit_(limit) {}
	void big();
	void fit();
	void implicit();
	/* A peer's WRITE into @ua, in a chunk past the limit: refused. */
	void remote_past_limit(ibv_mr *mr, uintptr_t ua);

      private:
	Report &r_;
	ibv_pd *pd_;
	uint64_t limit_;
};

void Run::big()
{
	Mapping space(kBig, PROT_NONE); /* address space only: PROT_NONE */
	long long before = vm_pin();

	if (!r_.check(space.ok(), "big.reserve", "16 GiB of address space reserved"))
		return;
	errno = 0;
	MrPtr mr(ibv_reg_mr(pd_, space.data(), kBig, kOdpAccess));
	int err = mr ? 0 : null_errno();
	r_.check(
	    !mr && err == ENOMEM, "big.refused",
	    "an ODP region of 16 GiB (64 MiB of page tables) over a %llu KiB memlock limit: %s "
	    "(want ENOMEM)",
	    (unsigned long long)(limit_ >> 10), mr ? "registered" : errno_name(err).c_str());
	mr.reset();
	r_.check(vm_pin() == before, "big.vmpin", "VmPin unchanged (%lld -> %lld bytes)", before,
	         vm_pin());
}

void Run::fit()
{
	const size_t n_max = size_t(limit_ / kChunkTables) + 4;
	Mapping space(n_max * kChunk, PROT_NONE);
	std::vector<MrPtr> mrs;
	long long base = vm_pin(), last = base;
	int err = 0;
	bool grew = true;

	if (!r_.check(space.ok(), "fit.reserve", "address space reserved"))
		return;
	for (size_t i = 0; i < n_max; i++) {
		errno = 0;
		MrPtr mr(ibv_reg_mr(pd_, space.data() + i * kChunk, kChunk, kOdpAccess));
		if (!mr) {
			err = null_errno();
			break;
		}
		long long now = vm_pin();
		grew &= uint64_t(now - last) >= kChunkTables;
		last = now;
		mrs.push_back(std::move(mr));
	}
	r_.info("fit: %zu regions of 64 MiB registered, then %s; VmPin %lld -> %lld bytes",
	        mrs.size(), err ? errno_name(err).c_str() : "no failure", base, last);
	r_.check(!mrs.empty(), "fit.some", "at least one 64 MiB ODP region fits (%zu)", mrs.size());
	r_.check(grew, "fit.counted", "each region added at least its 256 KiB of tables to VmPin");
	r_.check(err == ENOMEM && uint64_t(last) <= limit_, "fit.bounded",
	         "a region failed with ENOMEM (%s) before VmPin (%lld) passed the limit (%llu)",
	         err ? errno_name(err).c_str() : "none failed", last, (unsigned long long)limit_);
	mrs.clear();
	r_.check(vm_pin() == base, "fit.returned", "deregistered: VmPin back to %lld (%lld)", base,
	         vm_pin());
	MrPtr again(ibv_reg_mr(pd_, space.data(), kChunk, kOdpAccess));
	r_.check(bool(again), "fit.again", "a 64 MiB ODP region registers again: %s",
	         again ? "yes" : errno_name(null_errno()).c_str());
}

void Run::remote_past_limit(ibv_mr *mr, uintptr_t ua)
{
	GidChoice gid;
	std::string why;
	CqPtr cq(ibv_create_cq(pd_->context, 8, nullptr, nullptr, 0));
	ibv_qp_init_attr ia = rc_qp_init(cq.get(), 4, 4);
	QpPtr a(cq ? ibv_create_qp(pd_, &ia) : nullptr), b(a ? ibv_create_qp(pd_, &ia) : nullptr);
	if (!r_.check(b && pick_gid(pd_->context, -1, &gid, &why) &&
	                  !connect_rc(a.get(), gid, b->qp_num, kOdpAccess) &&
	                  !connect_rc(b.get(), gid, a->qp_num, kOdpAccess),
	              "implicit.remote_setup", "a loopback RC pair (%s)",
	              why.empty() ? "ok" : why.c_str()))
		return;
	uint64_t v = 0x5eed;
	ibv_sge sge = {reinterpret_cast<uintptr_t>(&v), sizeof(v), 0};
	ibv_send_wr w{}, *bad = nullptr;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	w.sg_list = &sge;
	w.num_sge = 1;
	w.wr.rdma.remote_addr = ua;
	w.wr.rdma.rkey = mr->rkey;
	ibv_wc wc{};
	int got = ibv_post_send(a.get(), &w, &bad) ? -1 : poll_cq_for(cq.get(), &wc, 1, 10000);
	r_.check(got == 1 && wc.status == IBV_WC_REM_ACCESS_ERR, "implicit.remote",
	         "a peer's RDMA WRITE into a mapped chunk past the limit: %s (want a remote access "
	         "error, not RNR NAKs until the retries run out)",
	         got == 1  ? ibv_wc_status_str(wc.status)
	         : got < 0 ? "post failed"
	                   : "no completion");
}

void Run::implicit()
{
	const size_t chunks = 16;
	/* One chunk more than needed, to align the first to 64 MiB. */
	Mapping space((chunks + 1) * kChunk, PROT_NONE);
	long long base = vm_pin(), last = base;
	size_t done = 0;
	int err = 0;

	if (!r_.check(space.ok(), "implicit.reserve", "address space reserved"))
		return;
	ibv_device_attr_ex dx{};
	if (ibv_query_device_ex(pd_->context, nullptr, &dx) ||
	    !(dx.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT)) {
		r_.skip("implicit", "the device has no implicit ODP");
		return;
	}
	uintptr_t first = (reinterpret_cast<uintptr_t>(space.data()) + kChunk - 1) & ~(kChunk - 1);
	MrPtr mr(ibv_reg_mr(pd_, nullptr, SIZE_MAX, kOdpAccess));
	if (!r_.check(bool(mr), "implicit.reg", "an implicit ODP region: %s",
	              mr ? "registered" : errno_name(null_errno()).c_str()))
		return;
	for (size_t i = 0; i < chunks; i++) {
		char *page = reinterpret_cast<char *>(first + i * kChunk);

		if (mprotect(page, 4096, PROT_READ | PROT_WRITE)) {
			r_.fail("implicit.map", "mprotect: %s", errno_name(errno).c_str());
			return;
		}
		page[0] = char(i);
		ibv_sge sge = {reinterpret_cast<uintptr_t>(page), 4096, mr->lkey};
		err = ibv_advise_mr(pd_, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		                    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		if (err)
			break;
		long long now = vm_pin();
		if (uint64_t(now - last) < kChunkTables) {
			r_.fail("implicit.counted",
			        "chunk %zu: VmPin grew by %lld bytes, want at least 256 KiB", i,
			        now - last);
			return;
		}
		last = now;
		done++;
	}
	r_.info("implicit: %zu chunks prefetched, then %s; VmPin %lld -> %lld bytes", done,
	        err ? errno_name(err).c_str() : "no failure", base, last);
	r_.check(
	    done > 0 && err && uint64_t(last) <= limit_, "implicit.bounded",
	    "a prefetch failed (%s) after %zu chunks, before VmPin (%lld) passed the limit (%llu)",
	    err ? errno_name(err).c_str() : "none failed", done, last, (unsigned long long)limit_);
	if (err && done < chunks)
		remote_past_limit(mr.get(), first + done * kChunk);
	mr.reset();
	r_.check(vm_pin() == base, "implicit.returned", "deregistered: VmPin back to %lld (%lld)",
	         base, vm_pin());
}

} /* namespace */

int cmd_odpcharge(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("odpcharge");
	long limit;

	if (!args.parse(argc, argv, {{"limit", true}}, &why))
		return usage_error("odpcharge", why);
	if (args.num_positional() != 1)
		return usage_error("odpcharge", "want a device name");
	if (!args.number("limit", 1 << 20, 1 << 16, 1L << 30, &limit, &why))
		return usage_error("odpcharge", why);
	rlimit rl{};
	getrlimit(RLIMIT_MEMLOCK, &rl);
	if (!r.check(
	        !has_ipc_lock() && rl.rlim_cur == rlim_t(limit), "setup",
	        "running without CAP_IPC_LOCK (%s) and with a memlock limit of %ld bytes (%llu)",
	        has_ipc_lock() ? "has it" : "yes", limit, (unsigned long long)rl.rlim_cur))
		return r.finish();
	ContextPtr ctx = open_device(args.positional(0), &why);
	if (!ctx) {
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	PdPtr pd(ibv_alloc_pd(ctx.get()));
	if (!pd) {
		r.fail("pd", "ibv_alloc_pd: %s", errno_name(null_errno()).c_str());
		return r.finish();
	}
	Run run(r, pd.get(), uint64_t(limit));
	run.big();
	run.fit();
	run.implicit();
	return r.finish();
}

} /* namespace vc */
