// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check odp DEV [--gid-index I]: on-demand paging
 * (IBV_ACCESS_ON_DEMAND, ibv_advise_mr(3)) over loopback RC pairs. Every
 * byte that moves is checked.
 *
 *   - odp_caps: ODP for RC (send, receive, write, read, atomics, SRQ
 *     receive), XRC (the same but receives other than SRQ's), UD and UC
 *     sends; implicit ODP;
 *   - a 64 MiB ODP region over memory never touched registers without
 *     faulting anything in (the process's resident memory does not grow);
 *   - first touches by the device, each in a page nobody touched yet:
 *     RDMA WRITE into it (the responder faults: RNR NAK, then again),
 *     RDMA READ out of it, SEND into a receive on it, SEND out of it (the
 *     requester faults), READ into it and an atomic result into it (the
 *     requester faults before it starts the WQE), fetch-and-add and
 *     compare-and-swap on a word of it;
 *   - pages taken away between operations: after MADV_DONTNEED the CPU
 *     reads zeros, and so must an RDMA READ (the device must not keep the
 *     old page); a WRITE after it lands where the CPU sees it; the same
 *     after munmap and a new mapping at the same address; the resident
 *     memory drops by the range while the region stays registered
 *     (nothing pinned);
 *   - pages taken away during traffic: one thread forks (write-protecting
 *     every page: an invalidation of the whole region that keeps the
 *     data) and discards pages at the far end of the region, while RDMA
 *     WRITEs and READs and fetch-and-adds hit its first part and every
 *     result is checked;
 *   - pages swapped out (MADV_PAGEOUT; needs swap, else SKIP) between
 *     operations, and by a thread during traffic on the very range; pages
 *     moved to other frames (MADV_COLLAPSE; needs THP, else SKIP);
 *   - the range unmapped for good: a WRITE into it fails with
 *     IBV_WC_REM_ACCESS_ERR, a SEND out of it with IBV_WC_LOC_PROT_ERR;
 *   - a peer's failed fault is its own: a WRITE into a PROT_NONE page
 *     fails its fault; before the peer sends it again (RNR timer 491 ms)
 *     the owner maps the page and sends from it: the SEND succeeds;
 *   - a READ into two SGEs, each over a PROT_NONE page of an ODP region:
 *     IBV_WC_LOC_PROT_ERR within 10 s (their failed faults must not
 *     take turns for ever);
 *   - ibv_advise_mr: PREFETCH_WRITE with IBV_ADVISE_MR_FLAG_FLUSH faults
 *     the range in (resident memory grows by it), PREFETCH and
 *     PREFETCH_NO_FAULT succeed; a region that is not ODP and a bad lkey
 *     are EINVAL, a range past the region EFAULT;
 *   - implicit ODP (address 0, length SIZE_MAX): iova other than 0
 *     refused; WRITE, READ out of and into it across 64 MiB boundaries,
 *     SEND and receive, atomics, another mapping, a prefetch, a discarded
 *     range; memory not mapped gives REM_ACCESS_ERR and LOC_PROT_ERR.
 */
#include "clock.h"
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

/* Linux 6.1's value; bookworm's glibc headers predate it. */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

namespace vc
{
namespace
{

constexpr size_t kMiB = 1024 * 1024;
constexpr size_t kRegion = 64 * kMiB;
constexpr uint32_t kMsg = 64 * 1024;
constexpr int kTimeoutMs = 20000;
constexpr unsigned kQpAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
constexpr unsigned kOdpAccess = kQpAccess | IBV_ACCESS_ON_DEMAND;

bool zeros(const uint8_t *p, uint32_t len)
{
	for (uint32_t j = 0; j < len; j++)
		if (p[j])
			return false;
	return true;
}

/* Resident memory of this process in KiB (/proc/self/statm). */
long rss_kib()
{
	long size = 0, res = 0;
	FILE *f = std::fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (std::fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	std::fclose(f);
	return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* /proc/self/pagemap's entries for the pages of [p, p + len). */
std::vector<uint64_t> pagemap(const void *p, size_t len)
{
	const size_t page = size_t(sysconf(_SC_PAGESIZE));
	const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page;
	std::vector<uint64_t> e((len + page - 1) / page);
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return {};
	const ssize_t want = ssize_t(e.size() * sizeof(e[0]));
	const bool ok = pread(fd, e.data(), size_t(want), off_t(first * sizeof(e[0]))) == want;
	close(fd);
	return ok ? e : std::vector<uint64_t>();
}

constexpr uint64_t kPmPresent = 1ull << 63;
constexpr uint64_t kPmSwapped = 1ull << 62;
constexpr uint64_t kPmPfn = (1ull << 55) - 1;

/* How many pages of [p, p + len) are swapped out. */
size_t swapped_pages(const void *p, size_t len)
{
	size_t n = 0;

	for (uint64_t e : pagemap(p, len))
		n += (e & kPmSwapped) != 0;
	return n;
}

/* Is there swap space (a line past the header of /proc/swaps)? */
bool have_swap()
{
	FILE *f = std::fopen("/proc/swaps", "r");
	char line[256];
	int lines = 0;

	if (!f)
		return false;
	while (std::fgets(line, sizeof(line), f))
		lines++;
	std::fclose(f);
	return lines > 1;
}

/* An RC pair on one CQ; a, the requester, b the responder. */
struct Pair {
	QpPtr a, b;
};

/*
 * What the churn thread does, round after round, until stopped: fork and
 * discard a range away from the traffic (MADV_DONTNEED after writing it),
 * or page the traffic's own range out to swap (MADV_PAGEOUT: its data
 * must come back).
 */
struct Churn {
	std::atomic<bool> stop{false};
	bool pageout = false;
	uint8_t *range = nullptr;
	size_t range_len = 0;
	unsigned forks = 0, discards = 0;
	size_t most_swapped = 0; /* pages of the range seen swapped out at once */
	int fork_errors = 0;
};

class OdpRun
{
      public:
	OdpRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("odp") {}
	int run();

      private:
	bool caps();
	bool make_pair(Pair *p);
	int post(ibv_qp *qp, ibv_wr_opcode op, uint64_t laddr, uint32_t len, uint32_t lkey,
	         uint64_t raddr = 0, uint32_t rkey = 0, uint64_t add = 0, uint64_t swap = 0);
	int post_recv(ibv_qp *qp, uint64_t addr, uint32_t len, uint32_t lkey);
	void settle();
	void show_qps(ibv_qp *qp);
	/* Waits for @want completions; their statuses in @st (first one wrong: returned). */
	int wait(int want, ibv_wc_status *first_bad);
	bool op(ibv_qp *qp, ibv_wr_opcode opc, uint64_t laddr, uint32_t len, uint32_t lkey,
	        uint64_t raddr = 0, uint32_t rkey = 0, uint64_t add = 0, uint64_t swap = 0);
	void first_touch(Pair &p);
	void taken_away(Pair &p);
	void under_traffic(Pair &p);
	void unmapped();
	void peer_hole();
	void two_holes();
	void uc_drop();
	void advise();
	void advise_hole(Pair &p);
	void long_read(Pair &p);
	void implicit();
	void swapped(Pair &p);
	void swap_traffic(Pair &p);
	void moved(Pair &p);
	int churn_traffic(Pair &p, uint8_t *t, uint64_t *word, Churn &c, int rounds, int *bad);

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	PdPtr pd_;
	CqPtr cq_;
	std::vector<uint8_t> host_;
	MrPtr hmr_;
	uint8_t *odp_ = nullptr; /* the ODP region's memory (kRegion bytes) */
	const char *last_ = "";  /* how the last op() ended */
	int owed_ = 0;           /* completions a wait() gave up on */
	int64_t slowest_ms_ = 0; /* the slowest op() since it was last reset */
	MrPtr omr_;
};

bool OdpRun::caps()
{
	ibv_device_attr_ex dx{};
	const uint32_t rc_want = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
	                         IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
	                         IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	if (!r_.expect_ok("query", ibv_query_device_ex(ctx_, nullptr, &dx), "ibv_query_device_ex"))
		return false;
	const ibv_odp_caps &o = dx.odp_caps;
	bool ok = (o.general_caps & IBV_ODP_SUPPORT) &&
	          (o.general_caps & IBV_ODP_SUPPORT_IMPLICIT) &&
	          o.per_transport_caps.rc_odp_caps == rc_want &&
	          o.per_transport_caps.ud_odp_caps == IBV_ODP_SUPPORT_SEND &&
	          o.per_transport_caps.uc_odp_caps == IBV_ODP_SUPPORT_SEND &&
	          dx.xrc_odp_caps == (rc_want & ~IBV_ODP_SUPPORT_RECV);
	return r_.check(ok, "caps", "odp_caps general %#" PRIx64 " rc %#x uc %#x ud %#x xrc %#x",
	                uint64_t(o.general_caps), o.per_transport_caps.rc_odp_caps,
	                o.per_transport_caps.uc_odp_caps, o.per_transport_caps.ud_odp_caps,
	                dx.xrc_odp_caps);
}

/*
 * @qp to RTS towards @dest, with rnr_retry 7 (no limit): a page fault
 * answers with RNR NAKs, and a page taken away again before the retry
 * (the churn below) costs another; ODP users set it so on hardware too.
 */
bool connect(ibv_qp *qp, const GidChoice &gid, uint32_t dest)
{
	QpTransition init = to_init(IBV_QPT_RC, kQpAccess);
	QpTransition rtr = to_rtr(IBV_QPT_RC, gid, dest);
	QpTransition rts = to_rts(IBV_QPT_RC);

	rts.attr.rnr_retry = 7;
	rts.attr.sq_psn = kRqPsn; /* what the peer's to_rtr() expects */
	return !ibv_modify_qp(qp, &init.attr, init.mask) &&
	       !ibv_modify_qp(qp, &rtr.attr, rtr.mask) && !ibv_modify_qp(qp, &rts.attr, rts.mask);
}

bool OdpRun::make_pair(Pair *p)
{
	ibv_qp_init_attr ia = rc_qp_init(cq_.get(), 16, 16);

	p->a.reset(ibv_create_qp(pd_.get(), &ia));
	p->b.reset(p->a ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	return p->b && connect(p->a.get(), gid_, p->b->qp_num) &&
	       connect(p->b.get(), gid_, p->a->qp_num);
}

int OdpRun::post(ibv_qp *qp, ibv_wr_opcode opc, uint64_t laddr, uint32_t len, uint32_t lkey,
                 uint64_t raddr, uint32_t rkey, uint64_t add, uint64_t swap)
{
	ibv_sge s{laddr, len, lkey};
	ibv_send_wr w{}, *bad = nullptr;

	settle();
	w.wr_id = opc;
	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = opc;
	w.send_flags = IBV_SEND_SIGNALED;
	if (opc == IBV_WR_ATOMIC_FETCH_AND_ADD || opc == IBV_WR_ATOMIC_CMP_AND_SWP) {
		w.wr.atomic.remote_addr = raddr;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = add;
		w.wr.atomic.swap = swap;
	} else {
		w.wr.rdma.remote_addr = raddr;
		w.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &w, &bad);
}

int OdpRun::post_recv(ibv_qp *qp, uint64_t addr, uint32_t len, uint32_t lkey)
{
	ibv_sge s{addr, len, lkey};
	ibv_recv_wr w{}, *bad = nullptr;

	settle();
	w.wr_id = 1000;
	w.sg_list = &s;
	w.num_sge = 1;
	return ibv_post_recv(qp, &w, &bad);
}

/*
 * Completions a timed-out wait() gave up on are taken off the CQ before
 * the next post (waiting as long again for them): a late one must not
 * pass for the next operation's own and fail every check after the one
 * that timed out. One that does not come then is given up for good.
 */
void OdpRun::settle()
{
	const int64_t start = sroce_tools::now_ms();
	const int owed = owed_;
	ibv_wc wc[4];

	while (owed_ > 0) {
		int got = poll_cq_for(cq_.get(), wc, std::min(owed_, 4), kTimeoutMs);

		if (got <= 0)
			break;
		owed_ -= got;
	}
	if (owed)
		r_.info("%d of %d completions a wait gave up on came within %" PRId64 " ms more",
		        owed - owed_, owed, sroce_tools::now_ms() - start);
	owed_ = 0;
}

/*
 * Where the two QPs of @qp's pair stand (sroce's debugfs, when there is
 * one): what an operation without a completion leaves to go on.
 */
void OdpRun::show_qps(ibv_qp *qp)
{
	char path[128], line[160];
	std::vector<std::string> block;
	bool mine = false;

	std::snprintf(path, sizeof(path), "/sys/kernel/debug/sroce/%s/qps",
	              ibv_get_device_name(ctx_->device));
	FILE *f = std::fopen(path, "r");
	if (!f)
		return;
	while (std::fgets(line, sizeof(line), f)) {
		unsigned qpn;
		line[strcspn(line, "\n")] = 0;
		if ((std::sscanf(line, "qpn %u", &qpn) == 1 ||
		     std::sscanf(line, "dest_qpn %u", &qpn) == 1) &&
		    qpn == qp->qp_num)
			mine = true;
		if (line[0]) {
			block.push_back(line);
			continue;
		}
		for (size_t k = 0; mine && k < block.size(); k++)
			r_.info("%s", block[k].c_str());
		block.clear();
		mine = false;
	}
	std::fclose(f);
}

int OdpRun::wait(int want, ibv_wc_status *first_bad)
{
	ibv_wc wc[4];
	int got = poll_cq_for(cq_.get(), wc, want, kTimeoutMs);

	if (got >= 0 && got < want)
		owed_ += want - got;
	*first_bad = IBV_WC_SUCCESS;
	for (int i = 0; i < got; i++)
		if (wc[i].status != IBV_WC_SUCCESS && *first_bad == IBV_WC_SUCCESS)
			*first_bad = wc[i].status;
	return got;
}

bool OdpRun::op(ibv_qp *qp, ibv_wr_opcode opc, uint64_t laddr, uint32_t len, uint32_t lkey,
                uint64_t raddr, uint32_t rkey, uint64_t add, uint64_t swap)
{
	ibv_wc_status st;

	last_ = "post failed";
	if (post(qp, opc, laddr, len, lkey, raddr, rkey, add, swap))
		return false;
	const int64_t start = sroce_tools::now_ms();
	const int got = wait(1, &st);
	slowest_ms_ = std::max(slowest_ms_, sroce_tools::now_ms() - start);
	if (got != 1) {
		last_ = "no completion";
		show_qps(qp);
		return false;
	}
	last_ = ibv_wc_status_str(st);
	return st == IBV_WC_SUCCESS;
}

void OdpRun::first_touch(Pair &p)
{
	uint8_t *h = host_.data();
	const uint32_t ol = omr_->lkey, ok = omr_->rkey, hl = hmr_->lkey, hk = hmr_->rkey;
	ibv_wc_status st;

	/* WRITE into a page nobody touched: the responder faults. */
	fill_pattern(h, kMsg, 1);
	uint8_t *w = odp_ + 1 * kMiB;
	bool good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(w), ok) &&
	            same_pattern(w, kMsg, 1);
	r_.check(good, "touch.write", "RDMA WRITE of 64 KiB into untouched ODP memory");

	/* READ out of it (mapped now) and out of untouched memory (zeros). */
	std::memset(h, 0xff, kMsg);
	good = op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(w), ok) &&
	       same_pattern(h, kMsg, 1);
	r_.check(good, "touch.read_out", "RDMA READ of 64 KiB out of ODP memory");
	std::memset(h, 0xff, kMsg);
	good =
	    op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(odp_ + 2 * kMiB), ok) &&
	    zeros(h, kMsg);
	r_.check(good, "touch.read_zero", "RDMA READ of 64 KiB of untouched ODP memory: zeros");

	/* SEND into a receive on untouched memory, SEND out of fresh memory. */
	uint8_t *rcv = odp_ + 3 * kMiB;
	fill_pattern(h, kMsg, 2);
	good = !post_recv(p.b.get(), addr_of(rcv), kMsg, ol) &&
	       !post(p.a.get(), IBV_WR_SEND, addr_of(h), kMsg, hl) && wait(2, &st) == 2 &&
	       st == IBV_WC_SUCCESS && same_pattern(rcv, kMsg, 2);
	r_.check(good, "touch.recv", "SEND of 64 KiB into a receive on untouched ODP memory");
	uint8_t *snd = odp_ + 4 * kMiB;
	fill_pattern(snd, kMsg, 3); /* the CPU maps it; the device has not */
	std::memset(h + kMsg, 0, kMsg);
	good = !post_recv(p.b.get(), addr_of(h + kMsg), kMsg, hl) &&
	       !post(p.a.get(), IBV_WR_SEND, addr_of(snd), kMsg, ol) && wait(2, &st) == 2 &&
	       st == IBV_WC_SUCCESS && same_pattern(h + kMsg, kMsg, 3);
	r_.check(good, "touch.send", "SEND of 64 KiB out of ODP memory the device never mapped");

	/* READ into untouched local memory: the requester faults first. */
	fill_pattern(h, kMsg, 4);
	uint8_t *rd = odp_ + 5 * kMiB;
	good = op(p.a.get(), IBV_WR_RDMA_READ, addr_of(rd), kMsg, ol, addr_of(h), hk) &&
	       same_pattern(rd, kMsg, 4);
	r_.check(good, "touch.read_into", "RDMA READ of 64 KiB into untouched ODP memory");

	/* Atomics on an untouched word, the result into untouched memory. */
	uint64_t *word = reinterpret_cast<uint64_t *>(odp_ + 6 * kMiB + 64);
	uint64_t *res = reinterpret_cast<uint64_t *>(odp_ + 7 * kMiB + 8);
	good =
	    op(p.a.get(), IBV_WR_ATOMIC_FETCH_AND_ADD, addr_of(res), 8, ol, addr_of(word), ok, 7) &&
	    *res == 0 && *word == 7;
	r_.check(good, "touch.fetch_add",
	         "fetch-and-add 7 on an untouched word: %" PRIu64 " -> %" PRIu64, *res, *word);
	good = op(p.a.get(), IBV_WR_ATOMIC_CMP_AND_SWP, addr_of(res), 8, ol, addr_of(word), ok, 7,
	          99) &&
	       *res == 7 && *word == 99;
	r_.check(good, "touch.cmp_swap", "compare-and-swap 7 -> 99: %" PRIu64 " -> %" PRIu64, *res,
	         *word);
}

void OdpRun::taken_away(Pair &p)
{
	uint8_t *h = host_.data();
	uint8_t *t = odp_ + 8 * kMiB;
	const size_t len = 8 * kMiB;
	const uint32_t ok = omr_->rkey, hl = hmr_->lkey;
	bool good = true;

	/* Fill 8 MiB through the device, 64 KiB at a time. */
	fill_pattern(h, kMsg, 5);
	for (size_t off = 0; off < len && good; off += kMsg)
		good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(t + off), ok);
	good = good && same_pattern(t + len - kMsg, kMsg, 5);
	r_.check(good, "away.fill", "8 MiB written into ODP memory by RDMA WRITE");
	long before = rss_kib();
	good = !madvise(t, len, MADV_DONTNEED);
	long after = rss_kib();
	r_.check(good && before - after >= long(len / 1024) * 3 / 4, "away.not_pinned",
	         "MADV_DONTNEED of the 8 MiB with the region registered: resident %ld -> %ld KiB",
	         before, after);
	r_.check(zeros(t, kMsg), "away.cpu_zero", "the CPU reads zeros there");
	std::memset(h, 0xff, kMsg);
	good =
	    op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(t), ok) && zeros(h, kMsg);
	r_.check(good, "away.read_zero", "an RDMA READ there reads zeros too, not the old page");
	fill_pattern(h, kMsg, 6);
	good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(t), ok) &&
	       same_pattern(t, kMsg, 6);
	r_.check(good, "away.write_again", "an RDMA WRITE after it lands where the CPU reads");

	/* munmap, and a new mapping at the same address. */
	void *m = nullptr;
	good = !munmap(t, len);
	if (good) {
		m = mmap(t, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		         -1, 0);
		good = m == t;
	}
	if (!r_.check(good, "remap.setup", "munmap and mmap again at the same address"))
		return;
	fill_pattern(t + kMsg, kMsg, 7);
	std::memset(h, 0, kMsg);
	good = op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(t + kMsg), ok) &&
	       same_pattern(h, kMsg, 7);
	r_.check(good, "remap.read", "an RDMA READ sees what the CPU wrote into the new mapping");
	fill_pattern(h, kMsg, 8);
	good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(t + 2 * kMsg), ok) &&
	       same_pattern(t + 2 * kMsg, kMsg, 8);
	r_.check(good, "remap.write", "an RDMA WRITE lands in the new mapping");
}

void *churn_main(void *arg)
{
	Churn *c = static_cast<Churn *>(arg);

	while (!c->stop.load()) {
		if (c->pageout) {
			if (!madvise(c->range, c->range_len, MADV_PAGEOUT))
				c->discards++;
			c->most_swapped =
			    std::max(c->most_swapped, swapped_pages(c->range, c->range_len));
			/*
			 * A page-out every 20 ms, not back to back: the
			 * responder answers a miss with an RNR NAK, and a page
			 * taken away again within the RNR timer each time would
			 * starve the retries (hardware alike).
			 */
			usleep(20000);
			continue;
		}
		if (sroce_tools::cow_fork())
			c->forks++;
		else
			c->fork_errors++;
		std::memset(c->range, 1, c->range_len);
		if (!madvise(c->range, c->range_len, MADV_DONTNEED))
			c->discards++;
	}
	return nullptr;
}

/*
 * @rounds rounds of RDMA WRITE, READ and fetch-and-add on [t, t + 1 MiB)
 * and *@word of the ODP region while @c churns in a thread of its own,
 * every result checked: how many ran; *@bad: the operation that went
 * wrong (0: none, -1: the thread did not start).
 */
int OdpRun::churn_traffic(Pair &p, uint8_t *t, uint64_t *word, Churn &c, int rounds, int *bad)
{
	uint8_t *h = host_.data();
	const uint32_t ok = omr_->rkey, hl = hmr_->lkey;
	pthread_t th;
	int i;

	*bad = 0;
	*word = 0;
	slowest_ms_ = 0;
	if (pthread_create(&th, nullptr, churn_main, &c)) {
		*bad = -1;
		return 0;
	}
	for (i = 0; i < rounds && !*bad; i++) {
		uint32_t off = uint32_t(i % 16) * kMsg;
		fill_pattern(h, kMsg, 100 + i);
		if (!op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(t + off), ok) ||
		    !same_pattern(t + off, kMsg, 100 + i))
			*bad = 1;
		std::memset(h + kMsg, 0, kMsg);
		if (!*bad && (!op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h + kMsg), kMsg, hl,
		                  addr_of(t + off), ok) ||
		              !same_pattern(h + kMsg, kMsg, 100 + i)))
			*bad = 2;
		uint64_t *res = reinterpret_cast<uint64_t *>(h + 2 * kMsg);
		*res = ~0ull;
		if (!*bad && (!op(p.a.get(), IBV_WR_ATOMIC_FETCH_AND_ADD, addr_of(res), 8, hl,
		                  addr_of(word), ok, 1) ||
		              *res != uint64_t(i)))
			*bad = 3;
	}
	c.stop = true;
	pthread_join(th, nullptr);
	return i;
}

static const char *const kTrafficOp[] = {"every byte checked", "WRITE", "READ", "fetch-and-add"};

void OdpRun::under_traffic(Pair &p)
{
	uint64_t *word = reinterpret_cast<uint64_t *>(odp_ + 21 * kMiB);
	const int rounds = 150;
	Churn c;
	int bad;

	c.range = odp_ + 48 * kMiB;
	c.range_len = 4 * kMiB;
	const int i = churn_traffic(p, odp_ + 20 * kMiB, word, c, rounds, &bad);
	if (!r_.check(bad >= 0, "churn.start",
	              "a thread that forks and discards pages of the region"))
		return;
	r_.check(!bad && *word == uint64_t(rounds), "churn.traffic",
	         "%d rounds of WRITE, READ and fetch-and-add (%s%s%s) during %u forks and %u "
	         "discards (word %" PRIu64 "; the slowest operation %" PRId64 " ms)",
	         i, kTrafficOp[bad], bad ? ": " : "", bad ? last_ : "", c.forks, c.discards, *word,
	         slowest_ms_);
	r_.check(c.forks > 0 && c.discards > 0 && !c.fork_errors, "churn.ran",
	         "the churn thread forked %u times and discarded %u times, %d fork errors", c.forks,
	         c.discards, c.fork_errors);
}

/*
 * Swapped out between operations: 4 MiB written by the device, paged out
 * (MADV_PAGEOUT; /proc/self/pagemap shows the pages swapped), then read
 * back by RDMA READ (the responder faults them in from swap) and written
 * again by RDMA WRITE after another page-out. Needs swap (odp.sh sets up
 * a zram device where the kernel has swap).
 */
void OdpRun::swapped(Pair &p)
{
	uint8_t *h = host_.data();
	uint8_t *t = odp_ + 40 * kMiB;
	const size_t len = 4 * kMiB, npages = len / size_t(sysconf(_SC_PAGESIZE));
	const uint32_t ok = omr_->rkey, hl = hmr_->lkey;
	bool good = true;

	if (!have_swap()) {
		r_.skip("swap", "no swap space here (a kernel without CONFIG_SWAP?)");
		return;
	}
	for (size_t off = 0; off < len && good; off += kMsg) {
		fill_pattern(h, kMsg, uint32_t(200 + off / kMsg));
		good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(t + off), ok);
	}
	size_t out = good && !madvise(t, len, MADV_PAGEOUT) ? swapped_pages(t, len) : 0;
	r_.check(good && out >= npages * 3 / 4, "swap.out",
	         "4 MiB written by RDMA WRITE, then paged out: %zu of %zu pages swapped", out,
	         npages);
	for (size_t off = 0; off < len && good; off += kMsg) {
		std::memset(h, 0, kMsg);
		good =
		    op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(t + off), ok) &&
		    same_pattern(h, kMsg, uint32_t(200 + off / kMsg));
	}
	r_.check(good, "swap.read", "RDMA READ of the 4 MiB from swap: every byte back (%s)",
	         last_);
	out = good && !madvise(t, len, MADV_PAGEOUT) ? swapped_pages(t, len) : 0;
	fill_pattern(h, kMsg, 300);
	good = good && out > 0 &&
	       op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(t + kMsg), ok) &&
	       same_pattern(t + kMsg, kMsg, 300) && same_pattern(t, kMsg, 200);
	r_.check(good, "swap.write",
	         "paged out again (%zu pages), an RDMA WRITE lands where the CPU reads, the "
	         "page before it intact",
	         out);
}

/*
 * Swapped out during traffic: a thread pages out the very range that
 * RDMA WRITE, READ and fetch-and-add hit, again and again.
 */
void OdpRun::swap_traffic(Pair &p)
{
	if (!have_swap()) {
		r_.skip("swap.traffic", "no swap space here");
		return;
	}
	uint8_t *t = odp_ + 56 * kMiB;
	uint64_t *word = reinterpret_cast<uint64_t *>(odp_ + 57 * kMiB);
	const int rounds = 150;
	Churn c;
	int bad;

	c.pageout = true;
	c.range = t;
	c.range_len = 2 * kMiB;
	const int i = churn_traffic(p, t, word, c, rounds, &bad);
	if (!r_.check(bad >= 0, "swap.traffic_start", "a thread that pages the range out"))
		return;
	r_.check(!bad && *word == uint64_t(rounds) && c.most_swapped > 0, "swap.traffic",
	         "%d rounds of WRITE, READ and fetch-and-add (%s%s%s) while the range was paged "
	         "out %u times (up to %zu pages swapped at once; word %" PRIu64 ")",
	         i, kTrafficOp[bad], bad ? ": " : "", bad ? last_ : "", c.discards, c.most_swapped,
	         *word);
}

/*
 * Pages moved to other frames under the region: 2 MiB of small pages
 * written by the device are collapsed into a huge page (MADV_COLLAPSE:
 * a new frame, the data copied, the old pages freed, as migration does);
 * /proc/self/pagemap shows the frame numbers change, and RDMA READ and
 * WRITE must then reach the new frames. A kernel without transparent
 * huge pages (the debug build) refuses the collapse: SKIP.
 */
void OdpRun::moved(Pair &p)
{
	const uintptr_t huge = 2 * kMiB;
	uint8_t *h = host_.data();
	uint8_t *t =
	    reinterpret_cast<uint8_t *>((addr_of(odp_ + 60 * kMiB) + huge - 1) & ~(huge - 1));
	const uint32_t ok = omr_->rkey, hl = hmr_->lkey;
	const size_t page = size_t(sysconf(_SC_PAGESIZE));

	/*
	 * Small pages first: THP may be "always" here. A kernel without
	 * THP refuses the advice (EINVAL) and could not collapse either.
	 */
	errno = 0;
	if (madvise(t, huge, MADV_NOHUGEPAGE)) {
		r_.skip("move", "MADV_NOHUGEPAGE: %s (no transparent huge pages here?)",
		        errno_name(errno).c_str());
		return;
	}
	bool good = true;
	for (size_t off = 0; off < huge && good; off += kMsg) {
		fill_pattern(h, kMsg, uint32_t(400 + off / kMsg));
		good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(t + off), ok);
	}
	const std::vector<uint64_t> before = pagemap(t, huge);
	if (!r_.check(good && !before.empty() && (before[0] & kPmPfn), "move.fill",
	              "2 MiB of small pages written by RDMA WRITE, their frames in pagemap (%s)",
	              last_))
		return;
	errno = 0;
	if (madvise(t, huge, MADV_HUGEPAGE) || madvise(t, huge, MADV_COLLAPSE)) {
		r_.skip("move", "MADV_COLLAPSE: %s (no transparent huge pages here?)",
		        errno_name(errno).c_str());
		return;
	}
	const std::vector<uint64_t> after = pagemap(t, huge);
	size_t moved = 0;
	for (size_t k = 0; k < before.size() && k < after.size(); k++)
		moved += (before[k] & kPmPfn) != (after[k] & kPmPfn);
	r_.check(moved == before.size(), "move.frames",
	         "collapsed into a huge page: %zu of %zu pages in other frames", moved,
	         before.size());
	for (size_t off = 0; off < huge && good; off += kMsg) {
		std::memset(h, 0, kMsg);
		good =
		    op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(t + off), ok) &&
		    same_pattern(h, kMsg, uint32_t(400 + off / kMsg));
	}
	r_.check(good, "move.read", "RDMA READ of the 2 MiB from the new frames: every byte (%s)",
	         last_);
	fill_pattern(h, uint32_t(page), 500);
	good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), uint32_t(page), hl,
	          addr_of(t + 5 * page), ok) &&
	       same_pattern(t + 5 * page, uint32_t(page), 500) && same_pattern(t + kMsg, kMsg, 401);
	r_.check(good, "move.write", "an RDMA WRITE into the huge page lands where the CPU reads");
}

void OdpRun::unmapped()
{
	Pair p;
	Mapping m(2 * kMiB, PROT_READ | PROT_WRITE);
	ibv_wc_status st = IBV_WC_SUCCESS;
	uint8_t *h = host_.data();

	Pair q;
	MrPtr mr(m.data() ? ibv_reg_mr(pd_.get(), m.data(), m.size(), kOdpAccess) : nullptr);
	if (!r_.check(mr && make_pair(&p) && make_pair(&q), "gone.setup",
	              "an ODP region of 2 MiB, two RC pairs"))
		return;
	/*
	 * The region stays, its memory goes: an inaccessible mapping takes
	 * its place, so that no later mmap (a ring, a stack) can land there.
	 */
	r_.check(mmap(m.data(), m.size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
	              0) == m.data(),
	         "gone.unmap", "the region's memory replaced by a PROT_NONE mapping");
	int got = post(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), 4096, hmr_->lkey,
	               addr_of(m.data()), mr->rkey)
	              ? 0
	              : wait(1, &st);
	r_.check(got == 1 && st == IBV_WC_REM_ACCESS_ERR, "gone.write",
	         "RDMA WRITE into unmapped ODP memory: %s, want IBV_WC_REM_ACCESS_ERR",
	         got == 1 ? ibv_wc_status_str(st) : "no completion");
	st = IBV_WC_SUCCESS;
	got = !post(q.a.get(), IBV_WR_RDMA_WRITE, addr_of(m.data() + 4096), 4096, mr->lkey,
	            addr_of(h), hmr_->rkey)
	          ? wait(1, &st)
	          : 0;
	r_.check(got == 1 && st == IBV_WC_LOC_PROT_ERR, "gone.local",
	         "RDMA WRITE out of unmapped ODP memory: %s, want IBV_WC_LOC_PROT_ERR",
	         got == 1 ? ibv_wc_status_str(st) : "no completion");
}

/*
 * A failed fault is remembered for the access that asked for it, not for
 * the region: a peer's WRITE into a page the process has not mapped
 * (PROT_NONE) fails its fault, and the responder answers RNR NAKs with
 * the longest timer (491.52 ms); meanwhile the owner maps the page and
 * sends from it, which must fault the page in and succeed, not fail in
 * the peer's place.
 */
void OdpRun::peer_hole()
{
	Pair p;
	uint8_t *h = host_.data();
	Mapping hole(2 * 4096, PROT_NONE);
	uint8_t *mem = hole.data();
	MrPtr mr(mem ? ibv_reg_mr(pd_.get(), mem, hole.size(), kOdpAccess) : nullptr);
	ibv_qp_attr a{};
	a.min_rnr_timer = 31;
	if (!r_.check(mr && make_pair(&p) && !ibv_modify_qp(p.b.get(), &a, IBV_QP_MIN_RNR_TIMER),
	              "hole.setup",
	              "an ODP region over 2 PROT_NONE pages, an RC pair whose "
	              "responder's RNR timer is 491 ms"))
		return;
	fill_pattern(h, 4096, 41);
	/* The peer's WRITE into the hole: its fault fails. */
	bool ok = !post(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), 4096, hmr_->lkey, addr_of(mem),
	                mr->rkey);
	usleep(150 * 1000);
	/* The owner maps the page, fills it, sends from it to the peer. */
	ok = ok && !mprotect(mem, 4096, PROT_READ | PROT_WRITE);
	if (ok)
		fill_pattern(mem, 4096, 42);
	std::memset(h + kMsg, 0, 4096);
	ok = ok && !post_recv(p.a.get(), addr_of(h + kMsg), 4096, hmr_->lkey) &&
	     !post(p.b.get(), IBV_WR_SEND, addr_of(mem), 4096, mr->lkey);
	ibv_wc wc[3];
	int got = ok ? poll_cq_for(cq_.get(), wc, 3, kTimeoutMs) : 0;
	int send = -1;
	for (int i = 0; i < got; i++)
		if (wc[i].opcode == IBV_WC_SEND)
			send = int(wc[i].status);
	r_.check(send == IBV_WC_SUCCESS && same_pattern(h + kMsg, 4096, 42), "hole.owner",
	         "the owner's SEND from the page it mapped after a peer's fault failed there: %s, "
	         "payload %s",
	         send < 0 ? "no completion" : ibv_wc_status_str(ibv_wc_status(send)),
	         same_pattern(h + kMsg, 4096, 42) ? "as sent" : "not as sent");
	p = Pair();
}

/*
 * A READ whose two SGEs each land on a page the process has not mapped
 * (PROT_NONE) in an ODP region: each SGE's fault fails, and the READ must
 * end with a local protection error, not fault the two in turn for ever.
 */
void OdpRun::two_holes()
{
	Pair p;
	uint8_t *h = host_.data();
	Mapping holes(4 * 4096, PROT_NONE);
	uint8_t *mem = holes.data();
	MrPtr mr(mem ? ibv_reg_mr(pd_.get(), mem, holes.size(), kOdpAccess) : nullptr);
	/* Two send SGEs: make_pair()'s QPs have one. */
	ibv_qp_init_attr ia = rc_qp_init(cq_.get(), 16, 16);
	ia.cap.max_send_sge = 2;
	p.a.reset(ibv_create_qp(pd_.get(), &ia));
	p.b.reset(p.a ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	if (!r_.check(mr && p.b && connect(p.a.get(), gid_, p.b->qp_num) &&
	                  connect(p.b.get(), gid_, p.a->qp_num),
	              "holes.setup",
	              "an ODP region over 4 PROT_NONE pages, an RC pair with two "
	              "send SGEs"))
		return;
	ibv_sge sg[2] = {{addr_of(mem), 64, mr->lkey}, {addr_of(mem + 2 * 4096), 64, mr->lkey}};
	ibv_send_wr w{}, *bad = nullptr;
	w.wr_id = 7;
	w.sg_list = sg;
	w.num_sge = 2;
	w.opcode = IBV_WR_RDMA_READ;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = addr_of(h);
	w.wr.rdma.rkey = hmr_->rkey;
	ibv_wc wc{};
	int got = ibv_post_send(p.a.get(), &w, &bad) ? -1 : poll_cq_for(cq_.get(), &wc, 1, 10000);
	r_.check(got == 1 && wc.status == IBV_WC_LOC_PROT_ERR, "holes.read",
	         "an RDMA READ into two unmapped ODP pages: %s, want IBV_WC_LOC_PROT_ERR",
	         got == 1  ? ibv_wc_status_str(wc.status)
	         : got < 0 ? "post failed"
	                   : "no completion in 10 s");
	p = Pair();
}

/*
 * UC into an ODP receive buffer whose first page alone is mapped: the
 * first message's packets land until one misses a page, and the message
 * is dropped there (UC cannot ask the sender to wait); the next message
 * must fill the same receive from its start.
 */
void OdpRun::uc_drop()
{
	Mapping m(kMsg, PROT_READ | PROT_WRITE);
	MrPtr mr(m.data() ? ibv_reg_mr(pd_.get(), m.data(), m.size(), kOdpAccess) : nullptr);
	ibv_qp_init_attr ia = rc_qp_init(cq_.get(), 4, 4);
	ia.qp_type = IBV_QPT_UC;
	QpPtr a(mr ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	QpPtr b(a ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	const unsigned acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	auto up = [&](ibv_qp *qp, uint32_t dest) {
		QpTransition init = to_init(IBV_QPT_UC, acc);
		QpTransition rtr = to_rtr(IBV_QPT_UC, gid_, dest);
		QpTransition rts = to_rts(IBV_QPT_UC);
		rts.attr.sq_psn = kRqPsn;
		return !ibv_modify_qp(qp, &init.attr, init.mask) &&
		       !ibv_modify_qp(qp, &rtr.attr, rtr.mask) &&
		       !ibv_modify_qp(qp, &rts.attr, rts.mask);
	};
	if (!r_.check(b && up(a.get(), b->qp_num) && up(b.get(), a->qp_num), "uc.setup",
	              "a UC pair and an ODP receive buffer of 64 KiB"))
		return;
	ibv_sge first{addr_of(m.data()), 4096, mr->lkey};
	uint8_t *h = host_.data();
	ibv_wc_status st;
	bool good = !ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	                           IBV_ADVISE_MR_FLAG_FLUSH, &first, 1) &&
	            !post_recv(b.get(), addr_of(m.data()), kMsg, mr->lkey);
	fill_pattern(h, kMsg, 9);
	good = good && !post(a.get(), IBV_WR_SEND, addr_of(h), kMsg, hmr_->lkey) &&
	       wait(1, &st) == 1 && st == IBV_WC_SUCCESS;
	usleep(300 * 1000); /* the fault of the rest of the buffer */
	fill_pattern(h, kMsg, 10);
	ibv_wc wc[2];
	good = good && !post(a.get(), IBV_WR_SEND, addr_of(h), kMsg, hmr_->lkey) &&
	       poll_cq_for(cq_.get(), wc, 2, kTimeoutMs) == 2;
	const ibv_wc *rw = nullptr;
	for (const ibv_wc &w : wc)
		if (good && w.opcode == IBV_WC_RECV)
			rw = &w;
	r_.check(good && rw && rw->status == IBV_WC_SUCCESS && rw->byte_len == kMsg &&
	             same_pattern(m.data(), kMsg, 10),
	         "uc.drop",
	         "UC: a message dropped at an unmapped page, the next one fills the receive from "
	         "its start (%s, %u bytes)",
	         rw ? ibv_wc_status_str(rw->status) : "no receive completion",
	         rw ? rw->byte_len : 0);
}

/*
 * A READ of 16 MiB into untouched ODP memory: the requester faults in its
 * first 4 MiB before it starts; the answers past them miss, are dropped,
 * and the fault's end has the READ asked for again from there.
 */
void OdpRun::long_read(Pair &p)
{
	const size_t len = 16 * kMiB;
	std::vector<uint8_t> src(len);
	MrPtr smr(ibv_reg_mr(pd_.get(), src.data(), len, kQpAccess));
	uint8_t *dst = odp_ + 24 * kMiB;

	if (!r_.check(smr != nullptr, "long_read.setup", "a host region of 16 MiB"))
		return;
	for (size_t off = 0; off < len; off += kMsg)
		fill_pattern(src.data() + off, kMsg, uint32_t(off / kMsg));
	bool good = op(p.a.get(), IBV_WR_RDMA_READ, addr_of(dst), uint32_t(len), omr_->lkey,
	               addr_of(src.data()), smr->rkey);
	for (size_t off = 0; good && off < len; off += kMsg)
		good = same_pattern(dst + off, kMsg, uint32_t(off / kMsg));
	r_.check(good, "long_read", "RDMA READ of 16 MiB into untouched ODP memory (%s)", last_);
}

/*
 * An asynchronous prefetch over a range with an inaccessible page in it
 * fails in the background; that failure must not stick to the range: a
 * WRITE to a good page of it afterwards succeeds. The same prefetch done
 * synchronously reports EFAULT.
 */
void OdpRun::advise_hole(Pair &p)
{
	Mapping m(4 * kMiB, PROT_READ | PROT_WRITE);
	MrPtr mr(m.data() ? ibv_reg_mr(pd_.get(), m.data(), m.size(), kOdpAccess) : nullptr);
	if (!r_.check(mr && !mprotect(m.data() + 2 * kMiB, 4096, PROT_NONE), "advise.hole_setup",
	              "an ODP region of 4 MiB with an inaccessible page in its middle"))
		return;
	ibv_sge all{addr_of(m.data()), uint32_t(m.size()), mr->lkey};
	r_.expect_errno("advise.hole_sync",
	                ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	                              IBV_ADVISE_MR_FLAG_FLUSH, &all, 1),
	                EFAULT, "synchronous PREFETCH_WRITE over the inaccessible page");
	r_.expect_ok("advise.hole_async",
	             ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &all, 1),
	             "asynchronous PREFETCH_WRITE over it");
	usleep(200 * 1000); /* the prefetch fails in the background */
	uint8_t *h = host_.data();
	fill_pattern(h, 4096, 77);
	bool good = op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), 4096, hmr_->lkey,
	               addr_of(m.data()), mr->rkey) &&
	            same_pattern(m.data(), 4096, 77);
	r_.check(good, "advise.hole_write",
	         "then an RDMA WRITE to a good page of that range succeeds (%s)", last_);
}

void OdpRun::advise()
{
	Mapping m(16 * kMiB, PROT_READ | PROT_WRITE);
	MrPtr mr(m.data() ? ibv_reg_mr(pd_.get(), m.data(), m.size(), kOdpAccess) : nullptr);
	if (!r_.check(mr != nullptr, "advise.setup", "an ODP region of 16 MiB"))
		return;
	ibv_sge s{addr_of(m.data()), uint32_t(8 * kMiB), mr->lkey};
	long before = rss_kib();
	int ret = ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	                        IBV_ADVISE_MR_FLAG_FLUSH, &s, 1);
	long after = rss_kib();
	r_.check(!ret && after - before >= long(8 * kMiB / 1024) * 3 / 4, "advise.prefetch_write",
	         "PREFETCH_WRITE of 8 MiB, synchronous: %s, resident %ld -> %ld KiB",
	         ret ? errno_name(ret).c_str() : "ok", before, after);
	ibv_sge s2{addr_of(m.data() + 8 * kMiB), uint32_t(4 * kMiB), mr->lkey};
	r_.expect_ok("advise.prefetch",
	             ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s2, 1),
	             "PREFETCH of 4 MiB, asynchronous");
	r_.expect_ok("advise.no_fault",
	             ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
	                           IBV_ADVISE_MR_FLAG_FLUSH, &s, 1),
	             "PREFETCH_NO_FAULT of the 8 MiB");
	ibv_sge hs{addr_of(host_.data()), 4096, hmr_->lkey};
	r_.expect_errno("advise.not_odp",
	                ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &hs, 1), EINVAL,
	                "ibv_advise_mr on a region that is not ODP");
	ibv_sge bk{addr_of(m.data()), 4096, mr->lkey ^ 0x80};
	r_.expect_errno("advise.bad_key",
	                ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &bk, 1), EINVAL,
	                "ibv_advise_mr with a bad lkey");
	ibv_sge past{addr_of(m.data() + 15 * kMiB), uint32_t(2 * kMiB), mr->lkey};
	r_.expect_errno("advise.past_end",
	                ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &past, 1),
	                EFAULT, "ibv_advise_mr past the end of the region");
}

/*
 * Implicit ODP: one region for the whole address space (address 0,
 * length SIZE_MAX, iova 0), whose keys reach memory mapped before and
 * after it was registered; sroce maps it in chunks of 64 MiB, so the
 * operations here straddle chunk boundaries.
 */
void OdpRun::implicit()
{
	const uintptr_t chunk = 64 * kMiB;
	uint8_t *h = host_.data();
	ibv_wc_status st;
	Pair p, q, r;

	errno = 0;
	ibv_mr *iova = ibv_reg_mr_iova(pd_.get(), nullptr, SIZE_MAX, chunk, kOdpAccess);
	r_.check(!iova && errno == EINVAL, "implicit.iova",
	         "an implicit region with iova 64 MiB refused: %s, want EINVAL",
	         iova ? "registered" : errno_name(errno).c_str());
	if (iova)
		ibv_dereg_mr(iova);
	MrPtr imr(ibv_reg_mr(pd_.get(), nullptr, SIZE_MAX, kOdpAccess));
	Mapping m(200 * kMiB, PROT_READ | PROT_WRITE); /* mapped after the region */
	if (!r_.check(imr && m.data() && make_pair(&p) && make_pair(&q) && make_pair(&r),
	              "implicit.setup", "an implicit ODP region (%s), 200 MiB mapped after it",
	              imr ? "ok" : errno_name(errno).c_str()))
		return;
	const uint32_t il = imr->lkey, ik = imr->rkey, hl = hmr_->lkey, hk = hmr_->rkey;
	uint8_t *x =
	    reinterpret_cast<uint8_t *>((addr_of(m.data() + kMiB) + chunk - 1) & ~(chunk - 1));
	uint8_t *y = x + chunk;

	fill_pattern(h, kMsg, 31);
	bool good =
	    op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(x - kMsg / 2), ik) &&
	    same_pattern(x - kMsg / 2, kMsg, 31);
	r_.check(good, "implicit.write", "RDMA WRITE of 64 KiB across a 64 MiB boundary (%s)",
	         last_);
	std::memset(h, 0xff, kMsg);
	good = op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(x - kMsg / 2), ik) &&
	       same_pattern(h, kMsg, 31);
	r_.check(good, "implicit.read_out", "RDMA READ of it back (%s)", last_);
	fill_pattern(h, kMsg, 32);
	good = op(p.a.get(), IBV_WR_RDMA_READ, addr_of(y - kMsg / 2), kMsg, il, addr_of(h), hk) &&
	       same_pattern(y - kMsg / 2, kMsg, 32);
	r_.check(good, "implicit.read_into",
	         "RDMA READ of 64 KiB into untouched memory across the next boundary (%s)", last_);

	/* host_ was mapped (and registered otherwise) before the region. */
	uint8_t *snd = h + 2 * kMsg, *rcv = x + 8 * kMiB;
	fill_pattern(snd, kMsg, 33);
	good = !post_recv(p.b.get(), addr_of(rcv), kMsg, il) &&
	       !post(p.a.get(), IBV_WR_SEND, addr_of(snd), kMsg, il) && wait(2, &st) == 2 &&
	       st == IBV_WC_SUCCESS && same_pattern(rcv, kMsg, 33);
	r_.check(good, "implicit.send_recv",
	         "SEND out of memory mapped before the region into a receive on memory mapped "
	         "after it, both through the implicit lkey");

	uint64_t *word = reinterpret_cast<uint64_t *>(y + 4 * kMiB);
	uint64_t *res = reinterpret_cast<uint64_t *>(x + 4 * kMiB + 8);
	good =
	    op(p.a.get(), IBV_WR_ATOMIC_FETCH_AND_ADD, addr_of(res), 8, il, addr_of(word), ik, 5) &&
	    *res == 0 &&
	    op(p.a.get(), IBV_WR_ATOMIC_CMP_AND_SWP, addr_of(res), 8, il, addr_of(word), ik, 5,
	       77) &&
	    *res == 5 && *word == 77;
	r_.check(good, "implicit.atomics",
	         "fetch-and-add 5, then compare-and-swap 5 -> 77 on an untouched word: %" PRIu64,
	         *word);

	Mapping far(kMiB, PROT_READ | PROT_WRITE);
	fill_pattern(h, kMsg, 34);
	good = far.data() &&
	       op(p.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), kMsg, hl, addr_of(far.data()), ik) &&
	       same_pattern(far.data(), kMsg, 34);
	r_.check(good, "implicit.other_mapping", "RDMA WRITE into another mapping (%s)", last_);

	ibv_sge pre{addr_of(y + 60 * kMiB), uint32_t(8 * kMiB), il};
	long before = rss_kib();
	int ret = ibv_advise_mr(pd_.get(), IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	                        IBV_ADVISE_MR_FLAG_FLUSH, &pre, 1);
	long after = rss_kib();
	r_.check(!ret && after - before >= long(8 * kMiB / 1024) * 3 / 4, "implicit.prefetch",
	         "PREFETCH_WRITE of 8 MiB across a boundary: %s, resident %ld -> %ld KiB",
	         ret ? errno_name(ret).c_str() : "ok", before, after);

	good = !madvise(x - kMsg / 2, kMsg, MADV_DONTNEED) && zeros(x - kMsg / 2, kMsg);
	std::memset(h, 0xff, kMsg);
	good = good &&
	       op(p.a.get(), IBV_WR_RDMA_READ, addr_of(h), kMsg, hl, addr_of(x - kMsg / 2), ik) &&
	       zeros(h, kMsg);
	r_.check(good, "implicit.discarded",
	         "after MADV_DONTNEED, an RDMA READ there reads zeros like the CPU (%s)", last_);

	/* Where the process has no memory: a range it unmapped, the first page. */
	void *gone = mmap(nullptr, kMiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	good = gone != MAP_FAILED && !munmap(gone, kMiB);
	st = IBV_WC_SUCCESS;
	int got =
	    good && !post(q.a.get(), IBV_WR_RDMA_WRITE, addr_of(h), 4096, hl, addr_of(gone), ik)
	        ? wait(1, &st)
	        : 0;
	r_.check(got == 1 && st == IBV_WC_REM_ACCESS_ERR, "implicit.unmapped_remote",
	         "RDMA WRITE into unmapped memory: %s, want IBV_WC_REM_ACCESS_ERR",
	         got == 1 ? ibv_wc_status_str(st) : "no completion");
	st = IBV_WC_SUCCESS;
	got =
	    !post(r.a.get(), IBV_WR_RDMA_WRITE, 4096, 4096, il, addr_of(h), hk) ? wait(1, &st) : 0;
	r_.check(got == 1 && st == IBV_WC_LOC_PROT_ERR, "implicit.unmapped_local",
	         "RDMA WRITE out of address 4096 (never mapped): %s, want IBV_WC_LOC_PROT_ERR",
	         got == 1 ? ibv_wc_status_str(st) : "no completion");
	p = Pair();
	q = Pair();
	r = Pair();
	r_.expect_ok("implicit.dereg", ibv_dereg_mr(imr.release()), "ibv_dereg_mr of the region");
}

int OdpRun::run()
{
	if (!caps())
		return r_.finish();
	pd_.reset(ibv_alloc_pd(ctx_));
	cq_.reset(ibv_create_cq(ctx_, 64, nullptr, nullptr, 0));
	host_.assign(4 * kMsg, 0);
	hmr_.reset(pd_ ? ibv_reg_mr(pd_.get(), host_.data(), host_.size(), kQpAccess) : nullptr);
	if (!r_.check(pd_ && cq_ && hmr_, "setup", "a PD, a CQ and a host region"))
		return r_.finish();

	Mapping region(kRegion, PROT_READ | PROT_WRITE);
	long before = rss_kib();
	omr_.reset(region.data() ? ibv_reg_mr(pd_.get(), region.data(), kRegion, kOdpAccess)
	                         : nullptr);
	long after = rss_kib();
	if (!r_.check(omr_ != nullptr, "reg", "ODP region of 64 MiB over untouched memory (%s)",
	              omr_ ? "ok" : errno_name(errno).c_str()))
		return r_.finish();
	r_.check(after - before < 1024, "reg.untouched",
	         "registering it faulted nothing in: resident %ld -> %ld KiB", before, after);
	odp_ = region.data();

	Pair p;
	if (!r_.check(make_pair(&p), "pair", "an RC pair"))
		return r_.finish();
	/* rdma-core's tests give a QP the region's flags, ON_DEMAND too. */
	ibv_qp_init_attr ia = rc_qp_init(cq_.get(), 1, 1);
	QpPtr q(ibv_create_qp(pd_.get(), &ia));
	QpTransition init = to_init(IBV_QPT_RC, kOdpAccess);
	r_.expect_ok("qp.access_on_demand", q ? ibv_modify_qp(q.get(), &init.attr, init.mask) : EIO,
	             "a QP to INIT with IBV_ACCESS_ON_DEMAND among its access flags");
	q.reset();
	first_touch(p);
	long_read(p);
	advise_hole(p);
	taken_away(p);
	under_traffic(p);
	swapped(p);
	swap_traffic(p);
	moved(p);
	p = Pair();
	omr_.reset();
	unmapped();
	peer_hole();
	two_holes();
	uc_drop();
	advise();
	implicit();
	return r_.finish();
}

} /* namespace */

int cmd_odp(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("odp", argc, argv, &t, &status))
		return status;
	OdpRun run(t.ctx.get(), t.gid);
	return run.run();
}

} /* namespace vc */
