// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check ring DEV [--gid-index I]: hostile user space against
 * sroce's mapped rings. The tool finds the rings of a QP it created in its
 * own address space (the uverbs mappings that appeared with the QP, told
 * apart by size), writes into them what the provider never would, rings
 * the doorbell itself (an empty IB_USER_VERBS_CMD_POST_SEND on the command
 * fd), and checks the kernel's answer:
 *
 *   case             written                          expected
 *   bad_opcode       send WQE with opcode 0xff        IBV_WC_LOC_QP_OP_ERR, QP ERR
 *   num_sge          send WQE with num_sge 1000       IBV_WC_LOC_QP_OP_ERR, QP ERR
 *   inline_len       inline WQE of 2^31 - 1 bytes     IBV_WC_LOC_QP_OP_ERR, QP ERR
 *   length           SGE of 0xffffffff bytes          IBV_WC_LOC_LEN_ERR, QP ERR
 *   flags            unknown send flag bits           IBV_WC_LOC_QP_OP_ERR, QP ERR
 *   lkey_other_pd    SEND from an MR of another PD    IBV_WC_LOC_PROT_ERR, QP ERR
 *   sq_prod          SQ prod past the ring's end      IBV_EVENT_QP_FATAL, QP ERR
 *   sq_prod_behind   SQ prod behind cons              IBV_EVENT_QP_FATAL, QP ERR
 *   rq_prod          RQ prod past the end, then a     receiver: IBV_EVENT_QP_FATAL,
 *                    SEND arrives                     ERR; sender IBV_WC_REM_OP_ERR
 *
 * Every case runs on a fresh loopback QP pair; afterwards a pair set up at
 * the start, left alone, must still move a SEND and its bytes intact (the
 * damage stays with the QP it was done to). The rig's dmesg check proves
 * the kernel stayed clean. sroce only: the ring layout is sroce's ABI.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>
#include <sroce/sroce_ring.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kSendWr = 64;  /* sender SQ: 8 KiB mapping */
constexpr uint32_t kRecvWr = 256; /* receiver RQ: 12 KiB mapping */
constexpr uint32_t kMsg = 128;
constexpr int kTimeoutMs = 5000;

using Mapping = std::pair<uintptr_t, uintptr_t>; /* [start, end) */

/* The uverbs mappings of this process (the rings). */
std::set<Mapping> uverbs_mappings()
{
	std::ifstream maps("/proc/self/maps");
	std::set<Mapping> out;
	std::string line;

	while (std::getline(maps, line)) {
		unsigned long start, end;

		if (line.find("uverbs") == std::string::npos ||
		    std::sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2)
			continue;
		out.insert({start, end});
	}
	return out;
}

/* The mapping of @bytes that appeared between @before and now. */
sroce_ring_hdr *new_ring(const std::set<Mapping> &before, size_t bytes)
{
	for (const Mapping &m : uverbs_mappings())
		if (!before.count(m) && m.second - m.first == bytes)
			return reinterpret_cast<sroce_ring_hdr *>(m.first);
	return nullptr;
}

size_t ring_bytes(uint32_t entries, uint32_t stride)
{
	return sroce_ring_bytes(entries, stride, size_t(sysconf(_SC_PAGESIZE)));
}

/* An empty POST_SEND: the doorbell the provider rings when the kernel sleeps. */
int doorbell(ibv_qp *qp)
{
	struct {
		ib_uverbs_cmd_hdr hdr;
		ib_uverbs_post_send cmd;
	} req{};
	ib_uverbs_post_send_resp resp{};

	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = reinterpret_cast<uintptr_t>(&resp);
	req.cmd.qp_handle = qp->handle;
	req.cmd.wqe_size = sizeof(ib_uverbs_send_wr);
	return write(qp->context->cmd_fd, &req, sizeof(req)) == ssize_t(sizeof(req)) ? 0 : errno;
}

enum class Case {
	bad_opcode,
	num_sge,
	inline_len,
	length,
	flags,
	lkey_other_pd,
	sq_prod,
	sq_prod_behind,
	rq_prod
};

struct CaseInfo {
	Case c;
	const char *name;
	int want; /* the WQE's completion status; -1: an async event instead */
};

constexpr CaseInfo kCases[] = {
    {Case::bad_opcode, "bad_opcode", IBV_WC_LOC_QP_OP_ERR},
    {Case::num_sge, "num_sge", IBV_WC_LOC_QP_OP_ERR},
    {Case::inline_len, "inline_len", IBV_WC_LOC_QP_OP_ERR},
    {Case::length, "length", IBV_WC_LOC_LEN_ERR},
    {Case::flags, "flags", IBV_WC_LOC_QP_OP_ERR},
    {Case::lkey_other_pd, "lkey_other_pd", IBV_WC_LOC_PROT_ERR},
    {Case::sq_prod, "sq_prod", -1},
    {Case::sq_prod_behind, "sq_prod_behind", -1},
    {Case::rq_prod, "rq_prod", -1},
};

/* A connected loopback pair: sender -> receiver, with their rings found. */
struct Pair {
	CqPtr cq;
	QpPtr sender, receiver;
	sroce_ring_hdr *sq = nullptr; /* sender's SQ */
	sroce_ring_hdr *rq = nullptr; /* receiver's RQ */
};

class RingRun
{
      public:
	RingRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("ring") {}
	int run();

      private:
	bool setup();
	bool make_pair(Pair *p, const std::string &name);
	bool connect(ibv_qp *qp, uint32_t dest);
	bool post_recv(Pair &p, uint64_t wr_id);
	bool good_send(Pair &p, const std::string &name);
	void run_case(const CaseInfo &ci);
	void expect_fatal(ibv_qp *qp, const std::string &name);
	void expect_state(ibv_qp *qp, ibv_qp_state want, const std::string &name);

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	PdPtr pd_, other_pd_;
	MrPtr mr_, other_mr_;
	std::vector<uint8_t> buf_, other_buf_;
	uint32_t sq_stride_ = 0, sq_entries_ = 0;
};

bool RingRun::setup()
{
	buf_.assign(4 * kMsg, 0);
	other_buf_.assign(kMsg, 0x77);
	pd_.reset(ibv_alloc_pd(ctx_));
	other_pd_.reset(ibv_alloc_pd(ctx_));
	mr_.reset(pd_ ? ibv_reg_mr(pd_.get(), buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE)
	              : nullptr);
	other_mr_.reset(
	    other_pd_ ? ibv_reg_mr(other_pd_.get(), other_buf_.data(), kMsg, IBV_ACCESS_LOCAL_WRITE)
	              : nullptr);
	sq_stride_ = sroce_send_wqe_stride(1, 0);
	sq_entries_ = sroce_ring_entries_for(kSendWr, SROCE_RING_MAX_ENTRIES);
	return r_.check(mr_ && other_mr_, "setup", "two PDs with an MR each (%s)",
	                mr_ && other_mr_ ? "ok" : errno_name(null_errno()).c_str());
}

bool RingRun::connect(ibv_qp *qp, uint32_t dest)
{
	int err = connect_rc(qp, gid_, dest, IBV_ACCESS_LOCAL_WRITE);

	errno = err;
	return err == 0;
}

bool RingRun::make_pair(Pair *p, const std::string &name)
{
	ibv_qp_init_attr ia{};
	std::set<Mapping> before;

	p->cq.reset(ibv_create_cq(ctx_, 2 * kRecvWr, nullptr, nullptr, 0));
	if (!p->cq)
		return r_.check(false, name + ".setup", "ibv_create_cq: %s",
		                errno_name(errno).c_str());
	ia.send_cq = p->cq.get();
	ia.recv_cq = p->cq.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_send_wr = kSendWr;
	ia.cap.max_recv_wr = 1;
	before = uverbs_mappings();
	p->sender.reset(ibv_create_qp(pd_.get(), &ia));
	p->sq = p->sender ? new_ring(before, ring_bytes(sq_entries_, sq_stride_)) : nullptr;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = kRecvWr;
	before = uverbs_mappings();
	p->receiver.reset(p->sender ? ibv_create_qp(pd_.get(), &ia) : nullptr);
	p->rq =
	    p->receiver ? new_ring(before, ring_bytes(kRecvWr, sroce_recv_wqe_stride(1))) : nullptr;
	if (!p->receiver || !p->sq || !p->rq)
		return r_.check(false, name + ".setup", "QPs and their rings (%s, SQ %s, RQ %s)",
		                p->receiver ? "created" : errno_name(null_errno()).c_str(),
		                p->sq ? "found" : "not found", p->rq ? "found" : "not found");
	if (!connect(p->sender.get(), p->receiver->qp_num) ||
	    !connect(p->receiver.get(), p->sender->qp_num))
		return r_.check(false, name + ".setup", "connect: %s", errno_name(errno).c_str());
	return true;
}

bool RingRun::post_recv(Pair &p, uint64_t wr_id)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(buf_.data() + 2 * kMsg), kMsg, mr_->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(p.receiver.get(), &wr, &bad) == 0;
}

/* A SEND through the provider, bytes checked on arrival. */
bool RingRun::good_send(Pair &p, const std::string &name)
{
	uint8_t *src = buf_.data(), *dst = buf_.data() + 2 * kMsg;
	ibv_sge sge{reinterpret_cast<uintptr_t>(src), kMsg, mr_->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	ibv_wc wc[2];

	for (uint32_t i = 0; i < kMsg; i++)
		src[i] = uint8_t(i * 13 + 5);
	memset(dst, 0, kMsg);
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (!post_recv(p, 2) || ibv_post_send(p.sender.get(), &wr, &bad))
		return r_.check(false, name, "posting a SEND and its receive: %s",
		                errno_name(errno).c_str());
	const int got = poll_cq_for(p.cq.get(), wc, 2, kTimeoutMs);
	const bool ok = got == 2 && wc[0].status == IBV_WC_SUCCESS &&
	                wc[1].status == IBV_WC_SUCCESS && memcmp(src, dst, kMsg) == 0;
	return r_.check(ok, name, "a SEND on an untouched QP pair arrives intact (%d completions)",
	                got);
}

void RingRun::expect_state(ibv_qp *qp, ibv_qp_state want, const std::string &name)
{
	const int got = wait_qp_state(qp, want, 1000);

	r_.check(got == want, name, "QP %u in %s (%s)", qp->qp_num, qp_state_name(want),
	         qp_state_name(got));
}

void RingRun::expect_fatal(ibv_qp *qp, const std::string &name)
{
	ibv_async_event ev{};
	const int got = wait_async_event(ctx_, kTimeoutMs, &ev);

	if (got != 1) {
		r_.fail(name, "no async event for QP %u", qp->qp_num);
		return;
	}
	r_.check(ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == qp, name, "%s for QP %u",
	         ibv_event_type_str(ev.event_type), qp->qp_num);
	ibv_ack_async_event(&ev);
}

void RingRun::run_case(const CaseInfo &ci)
{
	const std::string name = ci.name;
	Pair p;

	if (!make_pair(&p, name))
		return;
	sroce_ring_hdr *sq = p.sq;
	const uint32_t prod = __atomic_load_n(&sq->prod, __ATOMIC_ACQUIRE);
	auto *w =
	    static_cast<sroce_send_wqe *>(sroce_ring_entry(sq, prod, sq_entries_, sq_stride_));
	auto *sge = reinterpret_cast<sroce_sge *>(w->data);

	memset(w, 0, sq_stride_);
	w->wr_id = 0xbad;
	w->opcode = IBV_WR_SEND;
	w->flags = SROCE_WQE_SIGNALED;
	w->num_sge = 1;
	sge->addr = reinterpret_cast<uintptr_t>(buf_.data());
	sge->length = kMsg;
	sge->lkey = mr_->lkey;
	switch (ci.c) {
	case Case::bad_opcode:
		w->opcode = 0xff;
		break;
	case Case::num_sge:
		w->num_sge = 1000;
		break;
	case Case::inline_len:
		w->flags |= SROCE_WQE_INLINE;
		w->num_sge = 0;
		w->inline_len = 0x7fffffff;
		break;
	case Case::length:
		sge->length = 0xffffffff;
		break;
	case Case::flags:
		w->flags |= 0x100;
		break;
	case Case::lkey_other_pd:
		sge->addr = reinterpret_cast<uintptr_t>(other_buf_.data());
		sge->lkey = other_mr_->lkey;
		break;
	default:
		break;
	}
	if (!post_recv(p, 3)) {
		r_.fail(name + ".setup", "ibv_post_recv: %s", errno_name(errno).c_str());
		return;
	}
	switch (ci.c) {
	case Case::sq_prod:
		__atomic_store_n(&sq->prod, prod + sq_entries_ + 7, __ATOMIC_RELEASE);
		break;
	case Case::sq_prod_behind:
		__atomic_store_n(&sq->prod, prod - 3, __ATOMIC_RELEASE);
		break;
	case Case::rq_prod:
		/* The receiver's RQ: the provider's receive is there, prod is not. */
		__atomic_store_n(&p.rq->prod,
		                 __atomic_load_n(&p.rq->prod, __ATOMIC_RELAXED) + kRecvWr + 9,
		                 __ATOMIC_RELEASE);
		__atomic_store_n(&sq->prod, prod + 1, __ATOMIC_RELEASE);
		break;
	default:
		__atomic_store_n(&sq->prod, prod + 1, __ATOMIC_RELEASE);
		break;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (int err = doorbell(p.sender.get())) {
		r_.fail(name + ".doorbell", "empty POST_SEND: %s", errno_name(err).c_str());
		return;
	}

	if (ci.c == Case::sq_prod || ci.c == Case::sq_prod_behind) {
		expect_fatal(p.sender.get(), name + ".event");
		expect_state(p.sender.get(), IBV_QPS_ERR, name + ".state");
		return;
	}
	ibv_wc wc{};
	if (ci.c == Case::rq_prod) {
		expect_fatal(p.receiver.get(), name + ".event");
		expect_state(p.receiver.get(), IBV_QPS_ERR, name + ".state");
		/* The sender's SEND: NAKed (remote operational error). */
		int got = poll_cq_for(p.cq.get(), &wc, 1, kTimeoutMs);
		while (got == 1 && wc.wr_id != 0xbad)
			got = poll_cq_for(p.cq.get(), &wc, 1, kTimeoutMs);
		r_.check(got == 1 && wc.status == IBV_WC_REM_OP_ERR, name + ".sender",
		         "the SEND into the broken RQ: %s (want %s)",
		         got == 1 ? ibv_wc_status_str(wc.status) : "no completion",
		         ibv_wc_status_str(IBV_WC_REM_OP_ERR));
		return;
	}
	const int got = poll_cq_for(p.cq.get(), &wc, 1, kTimeoutMs);
	r_.check(got == 1 && wc.wr_id == 0xbad && int(wc.status) == ci.want, name + ".status",
	         "the forged WQE completes with %s (want %s)",
	         got == 1 ? ibv_wc_status_str(wc.status) : "nothing",
	         ibv_wc_status_str(ibv_wc_status(ci.want)));
	expect_state(p.sender.get(), IBV_QPS_ERR, name + ".state");
	if (ci.c == Case::lkey_other_pd)
		r_.check(other_buf_[0] == 0x77, name + ".memory",
		         "the other PD's buffer is untouched");
}

int RingRun::run()
{
	Pair bystander;

	if (!setup() || !make_pair(&bystander, "bystander"))
		return r_.finish();
	for (const CaseInfo &ci : kCases)
		run_case(ci);
	good_send(bystander, "bystander");
	return r_.finish();
}

} /* namespace */

int cmd_ring(int argc, char **argv)
{
	Args args;
	std::string why;
	long gid_index;

	if (!args.parse(argc, argv, {{"gid-index", true}}, &why))
		return usage_error("ring", why);
	if (args.num_positional() != 1)
		return usage_error("ring", "expects one device name");
	if (!args.number("gid-index", -1, -1, 65535, &gid_index, &why))
		return usage_error("ring", why);
	ContextPtr ctx = open_device(args.positional(0), &why);
	GidChoice gid;
	if (!ctx || !pick_gid(ctx.get(), int(gid_index), &gid, &why)) {
		Report r("ring");
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	RingRun run(ctx.get(), gid);
	return run.run();
}

} /* namespace vc */
