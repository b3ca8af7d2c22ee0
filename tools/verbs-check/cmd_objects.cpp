// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * objects: create and destroy every object type, N times over. The caller
 * compares the kernel's object counts (rdma resource show) before and after
 * to find leaks; this program checks what each verb returns:
 *
 * - PDs; MRs on heap, aligned, mmap()ed and sub-page buffers with every
 *   sensible access flag combination, with and without an explicit IOVA;
 * - CQs of several sizes (up to max_cqe), resized up and down, extended CQs;
 * - a completion channel: an armed CQ raises one event for flush
 *   completions, the CQ is resized while it holds those completions and
 *   every one of them is still there afterwards;
 * - RC/UC/UD QPs at several capacities (granted >= requested, also as
 *   ibv_query_qp reports them), and the state walk RESET -> INIT -> RTR ->
 *   RTS -> SQD (with the SQ drained event) -> RTS -> ERR -> RESET with a
 *   loopback path, every attribute queried back;
 * - address handles; 256 CQs, QPs, MRs and AHs alive at once, destroyed
 *   out of order; a second context on the same device.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sys/mman.h>
#include <vector>

namespace vc
{

namespace
{

struct Caps {
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
};

std::string caps_str(const Caps &c)
{
	char buf[96];

	std::snprintf(buf, sizeof(buf), "%u/%u/%u/%u/%u", c.send_wr, c.recv_wr, c.send_sge,
	              c.recv_sge, c.inline_data);
	return buf;
}

std::string access_str(unsigned int access)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} names[] = {
	    {IBV_ACCESS_LOCAL_WRITE, "LW"}, {IBV_ACCESS_REMOTE_WRITE, "RW"},
	    {IBV_ACCESS_REMOTE_READ, "RR"}, {IBV_ACCESS_REMOTE_ATOMIC, "RA"},
	    {IBV_ACCESS_MW_BIND, "MWB"},    {IBV_ACCESS_RELAXED_ORDERING, "RO"},
	};
	std::string s;

	for (const auto &n : names)
		if (access & n.bit)
			s += (s.empty() ? "" : "|") + std::string(n.name);
	return s.empty() ? "none" : s;
}

struct FreeDeleter {
	void operator()(void *p) const noexcept { std::free(p); }
};

class ObjectsRun
{
      public:
	ObjectsRun(Report &r, ibv_context *ctx, const char *device, const ibv_device_attr &attr,
	           const GidChoice &gid)
	    : r_(r), ctx_(ctx), device_(device), attr_(attr), gid_(gid)
	{
	}

	void run_loop(bool first);

      private:
	void pd_cycle();
	void mr_cycle(ibv_pd *pd);
	void cq_cycle(bool first);
	void cq_ex_cycle();
	void flush_and_resize(ibv_pd *pd);
	void qp_caps(ibv_pd *pd, ibv_qp_type type);
	void qp_max_wr(ibv_pd *pd);
	void qp_state_walk(ibv_pd *pd, ibv_qp_type type);
	void check_rts_attrs(ibv_qp *qp, ibv_qp_type type, unsigned int access);
	bool modify(const std::string &name, ibv_qp *qp, ibv_qp_attr &attr, int mask,
	            const char *what);
	bool expect_state(const std::string &name, ibv_qp *qp, ibv_qp_state want);
	void expect_sq_drained(const std::string &name, ibv_qp *qp);
	void ah_cycle(ibv_pd *pd);
	void bulk(ibv_pd *pd);
	void second_context();

	CqPtr make_cq(int cqe) { return CqPtr(ibv_create_cq(ctx_, cqe, nullptr, nullptr, 0)); }
	QpPtr make_qp(ibv_pd *pd, ibv_qp_type type, ibv_cq *cq, const Caps &c,
	              ibv_qp_init_attr *ia);

	Report &r_;
	ibv_context *ctx_;
	const char *device_;
	const ibv_device_attr &attr_;
	const GidChoice &gid_;
};

void ObjectsRun::pd_cycle()
{
	std::vector<PdPtr> pds;

	for (int i = 0; i < 16; i++) {
		errno = 0;
		pds.emplace_back(ibv_alloc_pd(ctx_));
		if (!pds.back()) {
			r_.fail("pd.alloc", "ibv_alloc_pd #%d failed: %s", i,
			        errno_name(null_errno()).c_str());
			return;
		}
	}
	r_.pass("pd.alloc", "16 PDs allocated");
	for (auto &pd : pds)
		if (int ret = ibv_dealloc_pd(pd.release())) {
			r_.fail("pd.dealloc", "ibv_dealloc_pd: %s", errno_name(ret).c_str());
			return;
		}
	r_.pass("pd.dealloc", "16 PDs deallocated");
}

void ObjectsRun::mr_cycle(ibv_pd *pd)
{
	static const unsigned int accesses[] = {
	    0,
	    IBV_ACCESS_LOCAL_WRITE,
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	        IBV_ACCESS_REMOTE_ATOMIC,
	    IBV_ACCESS_REMOTE_READ,
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING,
	};
	const size_t heap_len = 1 << 20;
	std::unique_ptr<uint8_t[]> heap(new uint8_t[heap_len + 64]);
	void *aligned_raw = nullptr;
	Mapping map(2 << 20, PROT_READ | PROT_WRITE);

	if (posix_memalign(&aligned_raw, 4096, 64 << 10) || !map.ok()) {
		r_.fail("mr.buffers", "cannot allocate test buffers");
		std::free(aligned_raw);
		return;
	}
	std::unique_ptr<void, FreeDeleter> aligned(aligned_raw);
	const struct {
		const char *name;
		uint8_t *addr;
		size_t len;
	} bufs[] = {
	    {"heap+8/1MiB", heap.get() + 8, heap_len},
	    {"aligned/64KiB", static_cast<uint8_t *>(aligned.get()), 64 << 10},
	    {"mmap/2MiB", map.data(), map.size()},
	    {"mmap+100/5000B", map.data() + 100, 5000},
	    {"heap+3/1B", heap.get() + 3, 1},
	};

	for (unsigned int access : accesses) {
		std::vector<MrPtr> mrs;
		std::set<uint32_t> lkeys;
		bool ok = true;

		for (const auto &b : bufs) {
			std::string name =
			    std::string("mr.reg[") + b.name + "," + access_str(access) + "]";

			errno = 0;
			MrPtr mr(ibv_reg_mr(pd, b.addr, b.len, int(access)));
			if (!mr) {
				r_.fail(name, "ibv_reg_mr failed: %s",
				        errno_name(null_errno()).c_str());
				ok = false;
				continue;
			}
			ok &= r_.check(mr->addr == b.addr && mr->length == b.len && mr->pd == pd,
			               name, "MR addr %p length %zu pd ok (want %p %zu)", mr->addr,
			               mr->length, static_cast<void *>(b.addr), b.len);
			lkeys.insert(mr->lkey);
			mrs.push_back(std::move(mr));
		}
		if (ok)
			r_.check(lkeys.size() == mrs.size(),
			         "mr.lkeys_unique[" + access_str(access) + "]",
			         "%zu concurrent MRs have %zu distinct lkeys", mrs.size(),
			         lkeys.size());
		for (auto &mr : mrs)
			if (int ret = ibv_dereg_mr(mr.release()))
				r_.fail("mr.dereg[" + access_str(access) + "]", "ibv_dereg_mr: %s",
				        errno_name(ret).c_str());
	}

	/* An IOVA other than the address, same offset within the page. */
	uint64_t iova = 0x40000000ULL + (reinterpret_cast<uintptr_t>(map.data() + 100) & 0xfff);
	errno = 0;
	MrPtr mr(ibv_reg_mr_iova(pd, map.data() + 100, 8192, iova,
	                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	if (r_.check(mr != nullptr, "mr.reg_iova", "ibv_reg_mr_iova(iova 0x%llx) %s",
	             (unsigned long long)iova, mr ? "succeeded" : errno_name(null_errno()).c_str()))
		r_.expect_ok("mr.dereg_iova", ibv_dereg_mr(mr.release()), "ibv_dereg_mr");
}

void ObjectsRun::cq_cycle(bool first)
{
	std::vector<int> sizes = {1, 16, 100, 4096, 32767};

	if (first)
		sizes.push_back(attr_.max_cqe);
	for (int n : sizes) {
		std::string name = "cq.create[" + std::to_string(n) + "]";

		errno = 0;
		CqPtr cq = make_cq(n);
		if (!cq) {
			r_.fail(name, "ibv_create_cq(%d) failed: %s", n,
			        errno_name(null_errno()).c_str());
			continue;
		}
		r_.check(cq->cqe >= n, name, "ibv_create_cq(%d): cqe %d", n, cq->cqe);
		if (n == attr_.max_cqe && cq->cqe > attr_.max_cqe)
			r_.info("a CQ of max_cqe (%d) entries reports cqe %d > max_cqe", n,
			        cq->cqe);
		r_.expect_ok("cq.destroy[" + std::to_string(n) + "]", ibv_destroy_cq(cq.release()),
		             "ibv_destroy_cq");
	}

	/* Resize an empty CQ up and down. */
	CqPtr cq = make_cq(16);
	if (!cq) {
		r_.fail("cq.resize", "ibv_create_cq(16) failed");
		return;
	}
	for (int n : {256, 4, 4096, 16}) {
		std::string name = "cq.resize[16->" + std::to_string(n) + "]";
		int ret = ibv_resize_cq(cq.get(), n);

		if (r_.expect_ok(name, ret, ("ibv_resize_cq(" + std::to_string(n) + ")").c_str()))
			r_.check(cq->cqe >= n, name + ".cqe", "cqe %d after resize to %d", cq->cqe,
			         n);
	}
	r_.expect_ok("cq.destroy_resized", ibv_destroy_cq(cq.release()), "ibv_destroy_cq");
}

void ObjectsRun::cq_ex_cycle()
{
	ibv_cq_init_attr_ex ia{};

	ia.cqe = 64;
	ia.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
	              IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
	              IBV_WC_EX_WITH_DLID_PATH_BITS;
	errno = 0;
	ibv_cq_ex *cqx = ibv_create_cq_ex(ctx_, &ia);
	if (!cqx) {
		int err = null_errno();

		if (err == EOPNOTSUPP)
			r_.skip("cq_ex.create", "ibv_create_cq_ex: EOPNOTSUPP");
		else
			r_.fail("cq_ex.create", "ibv_create_cq_ex(standard wc_flags) failed: %s",
			        errno_name(err).c_str());
		return;
	}
	r_.check(cqx->cqe >= 64, "cq_ex.create", "ibv_create_cq_ex: cqe %d", cqx->cqe);
	r_.expect_ok("cq_ex.destroy", ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), "ibv_destroy_cq");
}

QpPtr ObjectsRun::make_qp(ibv_pd *pd, ibv_qp_type type, ibv_cq *cq, const Caps &c,
                          ibv_qp_init_attr *ia)
{
	*ia = {};
	ia->send_cq = cq;
	ia->recv_cq = cq;
	ia->qp_type = type;
	ia->sq_sig_all = 1;
	ia->cap.max_send_wr = c.send_wr;
	ia->cap.max_recv_wr = c.recv_wr;
	ia->cap.max_send_sge = c.send_sge;
	ia->cap.max_recv_sge = c.recv_sge;
	ia->cap.max_inline_data = c.inline_data;
	errno = 0;
	return QpPtr(ibv_create_qp(pd, ia));
}

/*
 * A QP in Error completes every WR with a flush error (IBA 10.3.1.2.6 and
 * C10-29): receives queued before the transition, sends and receives posted
 * after it. The armed CQ raises one completion event; it is resized up and
 * down while it holds those completions, which must all survive.
 */
void ObjectsRun::flush_and_resize(ibv_pd *pd)
{
	const int nrecv = 10, nsend = 3;
	ibv_wc wc[32];
	ibv_qp_init_attr ia;
	std::vector<uint8_t> buf(4096);

	errno = 0;
	ChannelPtr ch(ibv_create_comp_channel(ctx_));
	if (!r_.check(ch != nullptr, "channel.create", "ibv_create_comp_channel %s",
	              ch ? "succeeded" : errno_name(null_errno()).c_str()))
		return;
	errno = 0;
	CqPtr cq(ibv_create_cq(ctx_, 32, nullptr, ch.get(), 0));
	if (!r_.check(cq != nullptr, "channel.cq", "ibv_create_cq(32, channel) %s",
	              cq ? "succeeded" : errno_name(null_errno()).c_str()))
		return;
	MrPtr mr(ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE));
	QpPtr qp = make_qp(pd, IBV_QPT_RC, cq.get(), {8, 16, 1, 1, 0}, &ia);
	if (!mr || !qp) {
		r_.fail("flush.setup", "MR or RC QP creation failed: %s",
		        errno_name(null_errno()).c_str());
		return;
	}
	QpTransition t = to_init(IBV_QPT_RC, IBV_ACCESS_LOCAL_WRITE);
	if (!modify("flush.init", qp.get(), t.attr, t.mask, "RESET -> INIT"))
		return;

	int posted = 0;
	for (int i = 0; i < nrecv; i++) {
		ibv_sge sge = {reinterpret_cast<uintptr_t>(buf.data()) + 64 * i, 64, mr->lkey};
		ibv_recv_wr wr{}, *bad = nullptr;

		wr.wr_id = 100 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (int ret = ibv_post_recv(qp.get(), &wr, &bad)) {
			r_.fail("flush.post_recv", "ibv_post_recv #%d in INIT: %s", i,
			        errno_name(ret).c_str());
			break;
		}
		posted++;
	}
	if (posted == nrecv)
		r_.pass("flush.post_recv", "%d receives posted in INIT", nrecv);
	r_.expect_ok("channel.req_notify", ibv_req_notify_cq(cq.get(), 0),
	             "ibv_req_notify_cq(next)");

	ibv_qp_attr err_attr{};
	err_attr.qp_state = IBV_QPS_ERR;
	if (!modify("flush.to_err", qp.get(), err_attr, IBV_QP_STATE, "INIT -> ERR"))
		return;

	ibv_cq *ev_cq = wait_cq_event(ch.get(), 5000);
	if (r_.check(ev_cq == cq.get(), "channel.event",
	             "completion event for the armed CQ after the flush (%s)",
	             ev_cq ? "got one" : "none within 5 s"))
		ibv_ack_cq_events(ev_cq, 1);

	/* Resize while the flush completions sit in the CQ. */
	for (int n : {64, 16}) {
		std::string name = "cq.resize_with_cqes[" + std::to_string(n) + "]";
		int ret = ibv_resize_cq(cq.get(), n);

		if (r_.expect_ok(name, ret,
		                 ("ibv_resize_cq(" + std::to_string(n) + ") holding CQEs").c_str()))
			r_.check(cq->cqe >= n, name + ".cqe", "cqe %d after resize to %d", cq->cqe,
			         n);
	}

	int sent = 0;
	for (int i = 0; i < nsend; i++) {
		ibv_sge sge = {reinterpret_cast<uintptr_t>(buf.data()), 16, mr->lkey};
		ibv_send_wr wr{}, *bad = nullptr;

		wr.wr_id = 200 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (int ret = ibv_post_send(qp.get(), &wr, &bad)) {
			r_.fail("flush.post_send", "ibv_post_send #%d in ERR: %s", i,
			        errno_name(ret).c_str());
			break;
		}
		sent++;
	}
	if (sent == nsend)
		r_.pass("flush.post_send", "%d sends posted in ERR", nsend);

	int want = posted + sent;
	int got = poll_cq_for(cq.get(), wc, want, 5000);
	if (r_.check(got == want, "flush.completions", "%d flush completions (want %d)", got,
	             want)) {
		bool ok = true;

		for (int i = 0; i < got; i++) {
			uint64_t want_id = i < posted ? 100 + i : 200 + (i - posted);

			if (wc[i].status != IBV_WC_WR_FLUSH_ERR || wc[i].wr_id != want_id ||
			    wc[i].qp_num != qp->qp_num) {
				r_.fail("flush.cqe",
				        "CQE %d: wr_id %llu status %s qp %u (want "
				        "%llu, WR_FLUSH_ERR, qp %u)",
				        i, (unsigned long long)wc[i].wr_id,
				        ibv_wc_status_str(wc[i].status), wc[i].qp_num,
				        (unsigned long long)want_id, qp->qp_num);
				ok = false;
				break;
			}
		}
		if (ok)
			r_.pass("flush.cqe", "every CQE: its wr_id in order, WR_FLUSH_ERR, qp %u",
			        qp->qp_num);
	}
	r_.check(ibv_poll_cq(cq.get(), 32, wc) == 0, "flush.no_extra", "no further CQEs");

	/* A receive posted in Error is flushed as well. */
	ibv_sge sge = {reinterpret_cast<uintptr_t>(buf.data()), 64, mr->lkey};
	ibv_recv_wr rwr{}, *rbad = nullptr;
	rwr.wr_id = 300;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (r_.expect_ok("flush.post_recv_in_err", ibv_post_recv(qp.get(), &rwr, &rbad),
	                 "ibv_post_recv in ERR")) {
		got = poll_cq_for(cq.get(), wc, 1, 3000);
		r_.check(got == 1 && wc[0].wr_id == 300 && wc[0].status == IBV_WC_WR_FLUSH_ERR,
		         "flush.recv_in_err", "a receive posted in ERR completes flushed (%s)",
		         got == 1 ? ibv_wc_status_str(wc[0].status) : "no CQE within 3 s");
	}

	ibv_qp_attr reset{};
	reset.qp_state = IBV_QPS_RESET;
	modify("flush.to_reset", qp.get(), reset, IBV_QP_STATE, "ERR -> RESET");
	r_.expect_ok("flush.destroy_qp", ibv_destroy_qp(qp.release()), "ibv_destroy_qp");
	r_.expect_ok("flush.dereg_mr", ibv_dereg_mr(mr.release()), "ibv_dereg_mr");
	r_.expect_ok("channel.destroy_cq", ibv_destroy_cq(cq.release()), "ibv_destroy_cq");
	r_.expect_ok("channel.destroy", ibv_destroy_comp_channel(ch.release()),
	             "ibv_destroy_comp_channel");
}

void ObjectsRun::qp_caps(ibv_pd *pd, ibv_qp_type type)
{
	static const Caps caps[] = {
	    {1, 1, 1, 1, 0},           {16, 16, 4, 4, 64},    {100, 50, 16, 8, 128},
	    {1024, 1024, 32, 32, 256}, {4096, 4096, 1, 1, 0}, {1, 0, 1, 0, 0},
	};
	const std::string tname = qp_type_name(type);
	std::vector<QpPtr> qps;
	std::set<uint32_t> qpns;
	CqPtr cq = make_cq(64);

	if (!cq) {
		r_.fail("qp." + tname + ".cq", "ibv_create_cq(64) failed");
		return;
	}
	for (const Caps &c : caps) {
		std::string name = "qp." + tname + ".caps[" + caps_str(c) + "]";
		ibv_qp_init_attr ia;
		QpPtr qp = make_qp(pd, type, cq.get(), c, &ia);

		if (!qp) {
			r_.fail(name, "ibv_create_qp failed: %s", errno_name(null_errno()).c_str());
			continue;
		}
		const ibv_qp_cap &g = ia.cap;
		r_.check(g.max_send_wr >= c.send_wr && g.max_recv_wr >= c.recv_wr &&
		             g.max_send_sge >= c.send_sge && g.max_recv_sge >= c.recv_sge &&
		             g.max_inline_data >= c.inline_data,
		         name, "granted %u/%u/%u/%u/%u (send_wr/recv_wr/send_sge/recv_sge/inline)",
		         g.max_send_wr, g.max_recv_wr, g.max_send_sge, g.max_recv_sge,
		         g.max_inline_data);
		r_.check(qp->qp_num > 1 && qp->qp_num <= 0xffffff && qp->state == IBV_QPS_RESET &&
		             qp->qp_type == type,
		         name + ".qp", "qp_num %u state %s type %s", qp->qp_num,
		         qp_state_name(qp->state), qp_type_name(qp->qp_type));

		ibv_qp_attr qa{};
		ibv_qp_init_attr qi{};
		int ret = ibv_query_qp(qp.get(), &qa, IBV_QP_STATE | IBV_QP_CAP, &qi);
		if (r_.expect_ok(name + ".query", ret, "ibv_query_qp(STATE|CAP)")) {
			const ibv_qp_cap &q = qi.cap;
			r_.check(qa.qp_state == IBV_QPS_RESET && q.max_send_wr >= c.send_wr &&
			             q.max_recv_wr >= c.recv_wr && q.max_send_sge >= c.send_sge &&
			             q.max_recv_sge >= c.recv_sge &&
			             q.max_inline_data >= c.inline_data && qi.sq_sig_all == 1,
			         name + ".query_caps",
			         "query: state %s caps %u/%u/%u/%u/%u sq_sig_all %d",
			         qp_state_name(qa.qp_state), q.max_send_wr, q.max_recv_wr,
			         q.max_send_sge, q.max_recv_sge, q.max_inline_data, qi.sq_sig_all);
		}
		qpns.insert(qp->qp_num);
		qps.push_back(std::move(qp));
	}
	r_.check(qpns.size() == qps.size(), "qp." + tname + ".qpn_unique",
	         "%zu live QPs have %zu distinct QP numbers", qps.size(), qpns.size());
	for (auto &qp : qps)
		if (int ret = ibv_destroy_qp(qp.release()))
			r_.fail("qp." + tname + ".destroy", "ibv_destroy_qp: %s",
			        errno_name(ret).c_str());
	r_.expect_ok("qp." + tname + ".destroy_cq", ibv_destroy_cq(cq.release()), "ibv_destroy_cq");
}

/* The device's max_qp_wr in both queues (once per run: it is big). */
void ObjectsRun::qp_max_wr(ibv_pd *pd)
{
	Caps c = {uint32_t(attr_.max_qp_wr), uint32_t(attr_.max_qp_wr), 1, 1, 0};
	ibv_qp_init_attr ia;
	CqPtr cq = make_cq(64);

	if (!cq) {
		r_.fail("qp.max_wr", "ibv_create_cq(64) failed");
		return;
	}
	QpPtr qp = make_qp(pd, IBV_QPT_RC, cq.get(), c, &ia);
	if (!qp) {
		int err = null_errno();

		if (err == ENOMEM)
			r_.skip("qp.max_wr", "RC QP with max_qp_wr %d WRs: ENOMEM in this guest",
			        attr_.max_qp_wr);
		else
			r_.fail("qp.max_wr", "RC QP with max_qp_wr %d WRs: %s", attr_.max_qp_wr,
			        errno_name(err).c_str());
		return;
	}
	r_.check(ia.cap.max_send_wr >= c.send_wr && ia.cap.max_recv_wr >= c.recv_wr, "qp.max_wr",
	         "RC QP with max_qp_wr (%d) WRs: granted %u/%u", attr_.max_qp_wr,
	         ia.cap.max_send_wr, ia.cap.max_recv_wr);
	r_.expect_ok("qp.max_wr.destroy", ibv_destroy_qp(qp.release()), "ibv_destroy_qp");
}

bool ObjectsRun::modify(const std::string &name, ibv_qp *qp, ibv_qp_attr &attr, int mask,
                        const char *what)
{
	return r_.expect_ok(name, ibv_modify_qp(qp, &attr, mask), what);
}

bool ObjectsRun::expect_state(const std::string &name, ibv_qp *qp, ibv_qp_state want)
{
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	int ret = ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi);

	if (ret)
		return r_.expect_ok(name, ret, "ibv_query_qp(STATE)");
	return r_.check(qa.qp_state == want && qp->state == want, name,
	                "query: state %s, ibv_qp state %s (want %s)", qp_state_name(qa.qp_state),
	                qp_state_name(qp->state), qp_state_name(want));
}

/* IBA 11.6.3: with en_sqd_async_notify, reaching SQD raises SQ Drained. */
void ObjectsRun::expect_sq_drained(const std::string &name, ibv_qp *qp)
{
	ibv_async_event ev{};

	for (;;) {
		int n = wait_async_event(ctx_, 3000, &ev);

		if (n <= 0) {
			r_.fail(name, "no IBV_EVENT_SQ_DRAINED within 3 s%s",
			        n < 0 ? " (reading the async fd failed)" : "");
			return;
		}
		ibv_event_type type = ev.event_type;
		bool ours = type == IBV_EVENT_SQ_DRAINED && ev.element.qp == qp;
		ibv_ack_async_event(&ev);
		if (ours) {
			r_.pass(name, "IBV_EVENT_SQ_DRAINED for the QP");
			return;
		}
		r_.info("async event %s (waiting for SQ_DRAINED)", ibv_event_type_str(type));
	}
}

void ObjectsRun::check_rts_attrs(ibv_qp *qp, ibv_qp_type type, unsigned int access)
{
	const std::string p = std::string("qp.") + qp_type_name(type) + ".query.";
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_SQ_PSN | IBV_QP_CAP;
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	int ret;

	if (type == IBV_QPT_UD)
		mask |= IBV_QP_QKEY;
	else
		mask |= IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		        IBV_QP_AV;
	if (type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		        IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	ret = ibv_query_qp(qp, &qa, mask, &qi);
	if (!r_.expect_ok(p + "all", ret, "ibv_query_qp(every attribute)"))
		return;

	auto eq = [&](const char *field, unsigned long long got, unsigned long long want) {
		r_.check(got == want, p + field, "%s %llu (want %llu)", field, got, want);
	};
	eq("qp_state", qa.qp_state, IBV_QPS_RTS);
	eq("pkey_index", qa.pkey_index, 0);
	eq("port_num", qa.port_num, 1);
	eq("sq_psn", qa.sq_psn, kSqPsn);
	eq("qp_type", qi.qp_type, type);
	if (type == IBV_QPT_UD) {
		eq("qkey", qa.qkey, kQkey);
		return;
	}
	const ibv_ah_attr &ah = qa.ah_attr;
	eq("qp_access_flags", qa.qp_access_flags, access);
	eq("path_mtu", qa.path_mtu, IBV_MTU_1024);
	eq("dest_qp_num", qa.dest_qp_num, qp->qp_num);
	eq("rq_psn", qa.rq_psn, kRqPsn);
	eq("ah.is_global", ah.is_global, 1);
	eq("ah.port_num", ah.port_num, 1);
	eq("ah.sgid_index", ah.grh.sgid_index, uint8_t(gid_.index));
	eq("ah.hop_limit", ah.grh.hop_limit, kHopLimit);
	eq("ah.traffic_class", ah.grh.traffic_class, kTrafficClass);
	eq("ah.flow_label", ah.grh.flow_label, kFlowLabel);
	r_.check(std::memcmp(ah.grh.dgid.raw, gid_.gid.raw, 16) == 0, p + "ah.dgid",
	         "dgid %s (want %s)", gid_text(ah.grh.dgid).c_str(), gid_text(gid_.gid).c_str());
	if (type != IBV_QPT_RC)
		return;
	eq("timeout", qa.timeout, kTimeout);
	eq("retry_cnt", qa.retry_cnt, kRetryCnt);
	eq("rnr_retry", qa.rnr_retry, kRnrRetry);
	eq("max_rd_atomic", qa.max_rd_atomic, kMaxRdAtomic);
	eq("max_dest_rd_atomic", qa.max_dest_rd_atomic, kMaxDestRdAtomic);
	eq("min_rnr_timer", qa.min_rnr_timer, kMinRnrTimer);
}

void ObjectsRun::qp_state_walk(ibv_pd *pd, ibv_qp_type type)
{
	const std::string p = std::string("qp.") + qp_type_name(type) + ".";
	const unsigned int access = type == IBV_QPT_RC
	                                ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC
	                                : IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	ibv_qp_init_attr ia;
	CqPtr cq = make_cq(64);
	QpPtr qp = cq ? make_qp(pd, type, cq.get(), {16, 16, 1, 1, 0}, &ia) : nullptr;

	if (!qp) {
		r_.fail(p + "walk", "CQ or QP creation failed: %s",
		        errno_name(null_errno()).c_str());
		return;
	}
	QpTransition t = to_init(type, access);
	if (!modify(p + "reset_to_init", qp.get(), t.attr, t.mask, "RESET -> INIT") ||
	    !expect_state(p + "state_init", qp.get(), IBV_QPS_INIT))
		return;
	if (type != IBV_QPT_UD) {
		/* INIT -> INIT changes the access flags (table 91, optional). */
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
		modify(p + "init_to_init", qp.get(), a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS,
		       "INIT -> INIT (access flags)");
		a.qp_access_flags = access;
		modify(p + "init_to_init_back", qp.get(), a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS,
		       "INIT -> INIT (access flags back)");
	}
	t = to_rtr(type, gid_, qp->qp_num);
	if (!modify(p + "init_to_rtr", qp.get(), t.attr, t.mask,
	            type == IBV_QPT_UD ? "INIT -> RTR" : "INIT -> RTR (loopback path)") ||
	    !expect_state(p + "state_rtr", qp.get(), IBV_QPS_RTR))
		return;
	t = to_rts(type);
	if (!modify(p + "rtr_to_rts", qp.get(), t.attr, t.mask, "RTR -> RTS"))
		return;
	check_rts_attrs(qp.get(), type, access);

	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_SQD;
	a.en_sqd_async_notify = 1;
	if (modify(p + "rts_to_sqd", qp.get(), a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY,
	           "RTS -> SQD (notify)")) {
		expect_sq_drained(p + "sq_drained", qp.get());
		a = {};
		a.qp_state = IBV_QPS_RTS;
		modify(p + "sqd_to_rts", qp.get(), a, IBV_QP_STATE, "SQD -> RTS");
		expect_state(p + "state_rts", qp.get(), IBV_QPS_RTS);
	}
	a = {};
	a.qp_state = IBV_QPS_ERR;
	if (modify(p + "to_err", qp.get(), a, IBV_QP_STATE, "RTS -> ERR"))
		expect_state(p + "state_err", qp.get(), IBV_QPS_ERR);
	a.qp_state = IBV_QPS_RESET;
	if (modify(p + "err_to_reset", qp.get(), a, IBV_QP_STATE, "ERR -> RESET"))
		expect_state(p + "state_reset", qp.get(), IBV_QPS_RESET);
	t = to_init(type, access);
	modify(p + "reset_to_init_again", qp.get(), t.attr, t.mask, "RESET -> INIT again");
	r_.expect_ok(p + "destroy", ibv_destroy_qp(qp.release()), "ibv_destroy_qp");
}

void ObjectsRun::ah_cycle(ibv_pd *pd)
{
	std::vector<AhPtr> ahs;
	ibv_ah_attr aa = loopback_ah(gid_);
	ibv_gid gid0{};

	for (int i = 0; i < 8; i++) {
		aa.grh.flow_label = uint32_t(i);
		errno = 0;
		ahs.emplace_back(ibv_create_ah(pd, &aa));
		if (!ahs.back()) {
			r_.fail("ah.create", "ibv_create_ah #%d to %s: %s", i,
			        gid_text(gid_.gid).c_str(), errno_name(null_errno()).c_str());
			ahs.pop_back();
			break;
		}
	}
	if (ahs.size() == 8)
		r_.pass("ah.create", "8 AHs to our own GID %s (index %d)",
		        gid_text(gid_.gid).c_str(), gid_.index);
	/* Source and destination: the link-local default GID. */
	if (ibv_query_gid(ctx_, 1, 0, &gid0) == 0) {
		aa.grh.dgid = gid0;
		aa.grh.sgid_index = 0;
		errno = 0;
		AhPtr ah(ibv_create_ah(pd, &aa));
		if (r_.check(ah != nullptr, "ah.create_link_local", "ibv_create_ah to %s: %s",
		             gid_text(gid0).c_str(),
		             ah ? "succeeded" : errno_name(null_errno()).c_str()))
			ahs.push_back(std::move(ah));
	}
	for (auto &ah : ahs)
		if (int ret = ibv_destroy_ah(ah.release()))
			r_.fail("ah.destroy", "ibv_destroy_ah: %s", errno_name(ret).c_str());
}

/*
 * Many objects at once, destroyed in an order unlike creation (every
 * other one first, then the rest backwards): the QP number, key and AH
 * number allocators see holes.
 */
void ObjectsRun::bulk(ibv_pd *pd)
{
	const int n = 256;
	std::vector<uint8_t> buf(4096);
	std::vector<CqPtr> cqs;
	std::vector<QpPtr> qps;
	std::vector<MrPtr> mrs;
	std::vector<AhPtr> ahs;
	ibv_ah_attr aa = loopback_ah(gid_);
	int failed = 0;

	for (int i = 0; i < n && !failed; i++) {
		ibv_qp_init_attr ia;

		errno = 0;
		cqs.emplace_back(make_cq(4));
		if (!cqs.back()) {
			failed = null_errno();
			break;
		}
		qps.push_back(make_qp(pd, i % 3 == 2 ? IBV_QPT_UD : IBV_QPT_RC, cqs.back().get(),
		                      {1, 1, 1, 1, 0}, &ia));
		mrs.emplace_back(ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE));
		ahs.emplace_back(ibv_create_ah(pd, &aa));
		if (!qps.back() || !mrs.back() || !ahs.back())
			failed = null_errno();
	}
	if (!r_.check(!failed, "bulk.create", "%d CQs, QPs, MRs and AHs alive at once%s%s", n,
	              failed ? ": " : "", failed ? errno_name(failed).c_str() : ""))
		return;

	auto destroy_all = [&](auto &objs, auto destroy, const char *what) {
		int errors = 0;

		for (size_t i = 0; i < objs.size(); i += 2)
			errors += destroy(objs[i].release()) != 0;
		for (size_t i = objs.size(); i-- > 0;)
			if (objs[i])
				errors += destroy(objs[i].release()) != 0;
		r_.check(!errors, std::string("bulk.destroy_") + what,
		         "%zu %ss destroyed, %d errors", objs.size(), what, errors);
	};
	destroy_all(ahs, ibv_destroy_ah, "AH");
	destroy_all(mrs, ibv_dereg_mr, "MR");
	destroy_all(qps, ibv_destroy_qp, "QP");
	destroy_all(cqs, ibv_destroy_cq, "CQ");
}

void ObjectsRun::second_context()
{
	std::string why;
	ContextPtr ctx2 = open_device(device_, &why);

	if (!r_.check(ctx2 != nullptr, "context.second", "a second ibv_open_device: %s",
	              ctx2 ? "succeeded" : why.c_str()))
		return;
	PdPtr pd1(ibv_alloc_pd(ctx_));
	PdPtr pd2(ibv_alloc_pd(ctx2.get()));
	r_.check(pd1 && pd2 && pd1->context == ctx_ && pd2->context == ctx2.get(),
	         "context.second_pd", "a PD in each of two contexts");
	pd2.reset();
	pd1.reset();
	r_.expect_ok("context.second_close", ibv_close_device(ctx2.release()),
	             "ibv_close_device(second context)");
}

void ObjectsRun::run_loop(bool first)
{
	errno = 0;
	PdPtr pd(ibv_alloc_pd(ctx_));

	if (!pd) {
		r_.fail("pd.alloc", "ibv_alloc_pd failed: %s", errno_name(null_errno()).c_str());
		return;
	}
	pd_cycle();
	mr_cycle(pd.get());
	cq_cycle(first);
	cq_ex_cycle();
	flush_and_resize(pd.get());
	for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD})
		qp_caps(pd.get(), type);
	if (first)
		qp_max_wr(pd.get());
	for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD})
		qp_state_walk(pd.get(), type);
	ah_cycle(pd.get());
	bulk(pd.get());
	second_context();
	r_.expect_ok("pd.dealloc_main", ibv_dealloc_pd(pd.release()), "ibv_dealloc_pd");
}

} /* namespace */

int cmd_objects(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("objects");
	long loops, gid_index;
	ibv_device_attr attr{};
	GidChoice gid;

	if (!args.parse(argc, argv, {{"loops", true}, {"gid-index", true}, {"verbose", false}},
	                &why))
		return usage_error("objects", why);
	if (args.num_positional() != 1)
		return usage_error("objects", "want exactly one device name");
	if (!args.number("loops", 1, 1, 1000000, &loops, &why) ||
	    !args.number("gid-index", -1, -1, 65535, &gid_index, &why))
		return usage_error("objects", why);
	const char *device = args.positional(0);

	ContextPtr ctx;
	if (!open_and_query(device, r, &ctx, &attr))
		return r.finish();
	if (!pick_gid(ctx.get(), int(gid_index), &gid, &why)) {
		r.fail("gid", "%s", why.c_str());
		return r.finish();
	}
	r.info("device %s, GID index %d (%s), %ld loops", device, gid.index,
	       gid_text(gid.gid).c_str(), loops);

	ObjectsRun run(r, ctx.get(), device, attr, gid);
	for (long i = 0; i < loops; i++) {
		unsigned before = r.failures();

		r.set_quiet(i > 0 && !args.has("verbose"));
		r.set_context("loop " + std::to_string(i + 1));
		run.run_loop(i == 0);
		r.set_quiet(false);
		std::printf("loop %ld/%ld: %u new failures\n", i + 1, loops, r.failures() - before);
		/* A removed device fails every verb with EIO: no point going on. */
		ibv_port_attr port{};
		if (ibv_query_port(ctx.get(), 1, &port) == EIO) {
			r.info("the device is gone (ibv_query_port: EIO): stopping after loop %ld",
			       i + 1);
			break;
		}
	}
	r.set_context("");
	return r.finish();
}

} /* namespace vc */
