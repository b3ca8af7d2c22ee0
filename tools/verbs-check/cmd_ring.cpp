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
 *   sq_prod_back     SQ prod moved back behind WQEs   IBV_EVENT_QP_FATAL, QP ERR; the
 *                    the kernel has already fetched   fetched WQEs complete once each,
 *                    (cons <= prod < fetched), every  no slot past prod is ever sent
 *                    other slot a valid SEND          or completed, cons <= old prod
 *   flush_huge       2^17 send and 2^17 receive WQEs  every one completes with
 *                    written, prods published, QP to  IBV_WC_WR_FLUSH_ERR in order,
 *                    ERR                              exactly once
 *   flush_hostile    2^20 + 2^20 WQEs, a CQ of 64,    every WQE consumed, CQ_ERR; a
 *                    QP to ERR, both rings refilled   1 ms sleeper in the process is
 *                    and rung once                    never kept waiting 100 ms
 *   flag_race        QP cycled RTS -> ERR -> RESET    FLUSH set in the SQ's and RQ's
 *                    -> RTS while another thread      kflags in every ERR round and
 *                    rings the doorbell               clear after RESET (the updates
 *                                                     race only with 2+ CPUs)
 *
 * --quick leaves out flush_huge and flush_hostile, a minute of the debug
 * kernel's time each: stress.sh runs the tool in a loop as a side load.
 *
 * Every case runs on a fresh loopback QP pair; afterwards a pair set up at
 * the start, left alone, must still move a SEND and its bytes intact (the
 * damage stays with the QP it was done to). The rig's dmesg check proves
 * the kernel stayed clean. sroce only: the ring layout is sroce's ABI.
 */
#include "commands.h"
#include "report.h"
#include "ring_util.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>
#include <sroce/sroce_ring.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
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
/* flush_huge: as many WQEs per queue as the largest CQ holds (2^17). */
constexpr uint32_t kHugeWr = 1u << 17;
/* sq_prod_back: the wr_id of the SENDs in every slot past prod. */
constexpr uint64_t kPastProd = 0xdead;

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
	RingRun(ibv_context *ctx, const GidChoice &gid, bool quick)
	    : ctx_(ctx), gid_(gid), quick_(quick), r_("ring")
	{
	}
	int run();

      private:
	bool setup();
	bool make_pair(Pair *p, const std::string &name);
	bool connect(ibv_qp *qp, uint32_t dest);
	bool post_recv(Pair &p, uint64_t wr_id);
	bool good_send(Pair &p, const std::string &name);
	sroce_send_wqe *write_send(sroce_ring_hdr *sq, uint32_t idx, uint64_t wr_id);
	void run_case(const CaseInfo &ci);
	void expect_fatal(ibv_qp *qp, const std::string &name);
	void expect_state(ibv_qp *qp, ibv_qp_state want, const std::string &name);
	void prod_back();
	QpPtr flush_qp(const std::string &name, ibv_cq *scq, ibv_cq *rcq, uint32_t n,
	               sroce_ring_hdr **sq, sroce_ring_hdr **rq);
	bool to_error(const std::string &name, ibv_qp *qp, int64_t *t0, int64_t *t1);
	void flush_huge();
	void flush_hostile();
	void flag_race();

	ibv_context *ctx_;
	GidChoice gid_;
	bool quick_; /* --quick: no flush_huge, no flush_hostile */
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
	std::set<MapRange> before;

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

/* A signaled SEND of kMsg bytes from buf_ (one SGE), written into slot @idx of @sq. */
sroce_send_wqe *RingRun::write_send(sroce_ring_hdr *sq, uint32_t idx, uint64_t wr_id)
{
	auto *w = static_cast<sroce_send_wqe *>(sroce_ring_entry(sq, idx, sq_entries_, sq_stride_));
	auto *sge = reinterpret_cast<sroce_sge *>(w->data);

	memset(w, 0, sq_stride_);
	w->wr_id = wr_id;
	w->opcode = IBV_WR_SEND;
	w->flags = SROCE_WQE_SIGNALED;
	w->num_sge = 1;
	sge->addr = reinterpret_cast<uintptr_t>(buf_.data());
	sge->length = kMsg;
	sge->lkey = mr_->lkey;
	return w;
}

void RingRun::run_case(const CaseInfo &ci)
{
	const std::string name = ci.name;
	Pair p;

	if (!make_pair(&p, name))
		return;
	sroce_ring_hdr *sq = p.sq;
	const uint32_t prod = __atomic_load_n(&sq->prod, __ATOMIC_ACQUIRE);
	sroce_send_wqe *w = write_send(sq, prod, 0xbad);
	auto *sge = reinterpret_cast<sroce_sge *>(w->data);

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

/*
 * The producer index moved back over WQEs the kernel has already fetched.
 * The receiver has no receive posted and asks for 163.84 ms between RNR
 * retries, so the sender's four SENDs stay fetched and unanswered while
 * prod is moved back by two and every other slot of the ring holds a
 * valid SEND with wr_id kPastProd; then receives arrive. The kernel must
 * refuse the index (QP_FATAL, ERR) when it next looks at prod, and never
 * send or complete a slot past prod; the four fetched WQEs complete once
 * each.
 */
void RingRun::prod_back()
{
	const std::string name = "sq_prod_back";
	ibv_qp_attr attr{};
	Pair p;

	if (!make_pair(&p, name))
		return;
	attr.min_rnr_timer = 28;
	if (ibv_modify_qp(p.receiver.get(), &attr, IBV_QP_MIN_RNR_TIMER)) {
		r_.fail(name + ".setup", "min_rnr_timer: %s", errno_name(errno).c_str());
		return;
	}
	sroce_ring_hdr *sq = p.sq;
	const uint32_t start = __atomic_load_n(&sq->prod, __ATOMIC_ACQUIRE);
	/* One post of four: one doorbell, the kernel fetches all four at once. */
	ibv_sge sge{reinterpret_cast<uintptr_t>(buf_.data()), kMsg, mr_->lkey};
	ibv_send_wr wrs[4]{};
	ibv_send_wr *bad = nullptr;
	for (int i = 0; i < 4; i++) {
		wrs[i].wr_id = uint64_t(i + 1);
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
		wrs[i].opcode = IBV_WR_SEND;
		wrs[i].send_flags = IBV_SEND_SIGNALED;
		wrs[i].next = i < 3 ? &wrs[i + 1] : nullptr;
	}
	if (ibv_post_send(p.sender.get(), wrs, &bad)) {
		r_.fail(name + ".setup", "ibv_post_send: %s", errno_name(errno).c_str());
		return;
	}
	usleep(20000);
	ibv_wc wc[16];
	int got = ibv_poll_cq(p.cq.get(), 16, wc);
	const uint32_t cons = __atomic_load_n(&sq->cons, __ATOMIC_ACQUIRE);
	if (!r_.check(got == 0 && cons == start, name + ".setup",
	              "four SENDs fetched and waiting on RNR (%d completions, cons %+d)", got,
	              int(cons - start)))
		return;
	for (uint32_t i = 4; i < sq_entries_; i++)
		write_send(sq, start + i, kPastProd);
	__atomic_store_n(&sq->prod, start + 2, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (int err = doorbell(p.sender.get())) {
		r_.fail(name + ".doorbell", "empty POST_SEND: %s", errno_name(err).c_str());
		return;
	}
	for (uint64_t i = 0; i < 8; i++)
		if (!post_recv(p, 0x1000 + i)) {
			r_.fail(name + ".setup", "ibv_post_recv: %s", errno_name(errno).c_str());
			return;
		}
	expect_fatal(p.sender.get(), name + ".event");
	expect_state(p.sender.get(), IBV_QPS_ERR, name + ".state");

	/* Every completion until none came for half a second. */
	std::map<uint64_t, int> sends;
	int recvs = 0, past = 0;
	while ((got = poll_cq_for(p.cq.get(), wc, 16, 500)) > 0)
		for (int i = 0; i < got; i++) {
			if (wc[i].wr_id >= 0x1000 && wc[i].wr_id < 0x1008)
				recvs += wc[i].status == IBV_WC_SUCCESS;
			else if (wc[i].wr_id == kPastProd)
				past++;
			else
				sends[wc[i].wr_id]++;
		}
	bool once = sends.size() == 4;
	for (const auto &kv : sends)
		once = once && kv.first >= 1 && kv.first <= 4 && kv.second == 1;
	r_.check(past == 0, name + ".past_prod",
	         "no SEND from a slot past prod was sent or completed (%d completions)", past);
	r_.check(once, name + ".fetched", "the four fetched SENDs completed once each (%zu wr_ids)",
	         sends.size());
	r_.check(recvs <= 4, name + ".receiver", "the receiver got %d SENDs (at most 4)", recvs);
	const uint32_t end = __atomic_load_n(&sq->cons, __ATOMIC_ACQUIRE);
	r_.check(end - start <= 4, name + ".cons",
	         "cons never passed the last prod the kernel accepted (%+d, at most +4)",
	         int(end - start));
}

/*
 * An RC QP on @scq and @rcq with rings of @n send and @n receive WQEs (one
 * SGE each), moved to INIT, and its rings in *sq and *rq. Null, the case
 * failed, when any of them could not be had.
 */
QpPtr RingRun::flush_qp(const std::string &name, ibv_cq *scq, ibv_cq *rcq, uint32_t n,
                        sroce_ring_hdr **sq, sroce_ring_hdr **rq)
{
	std::string why;
	QpPtr qp = ring_qp(pd_.get(), scq, rcq, n, n, sq, rq, &why);

	if (!qp) {
		r_.fail(name + ".setup", "a QP of %u + %u WQEs: %s", n, n, why.c_str());
		return nullptr;
	}
	QpTransition init = to_init(IBV_QPT_RC, IBV_ACCESS_LOCAL_WRITE);
	if (ibv_modify_qp(qp.get(), &init.attr, init.mask)) {
		r_.fail(name + ".setup", "INIT: %s", errno_name(errno).c_str());
		return nullptr;
	}
	return qp;
}

/* @qp to ERR, timed: *t0 before, *t1 after. False, the case failed, on error. */
bool RingRun::to_error(const std::string &name, ibv_qp *qp, int64_t *t0, int64_t *t1)
{
	ibv_qp_attr attr{};

	attr.qp_state = IBV_QPS_ERR;
	*t0 = now_ns();
	const int err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	*t1 = now_ns();
	if (err) {
		r_.fail(name + ".error", "to ERR: %s", errno_name(err).c_str());
		return false;
	}
	return true;
}

/*
 * A send queue and a receive queue of kHugeWr WQEs each, written straight
 * into the rings of a QP in INIT, are flushed by moving it to ERR: every
 * WQE completes with IBV_WC_WR_FLUSH_ERR, in order, exactly once, and a
 * thread of this process that sleeps 1 ms at a time is never kept from
 * running for long (the flush yields the CPU; with one CPU an unbroken
 * flush of 2^18 WQEs shows up as one long gap).
 */
void RingRun::flush_huge()
{
	const std::string name = "flush_huge";
	const uint32_t n = kHugeWr;
	const uint32_t sq_stride = sroce_send_wqe_stride(1, 0);
	const uint32_t rq_stride = sroce_recv_wqe_stride(1);
	CqPtr scq(ibv_create_cq(ctx_, int(n - 1), nullptr, nullptr, 0));
	CqPtr rcq(ibv_create_cq(ctx_, int(n - 1), nullptr, nullptr, 0));

	if (!scq || !rcq) {
		r_.fail(name + ".setup", "two CQs of %u: %s", n - 1, errno_name(errno).c_str());
		return;
	}
	sroce_ring_hdr *sq, *rq;
	QpPtr qp = flush_qp(name, scq.get(), rcq.get(), n, &sq, &rq);
	if (!qp)
		return;
	const uint32_t sp = __atomic_load_n(&sq->prod, __ATOMIC_RELAXED);
	const uint32_t rp = __atomic_load_n(&rq->prod, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < n; i++) {
		auto *w = static_cast<sroce_send_wqe *>(sroce_ring_entry(sq, sp + i, n, sq_stride));
		auto *rw =
		    static_cast<sroce_recv_wqe *>(sroce_ring_entry(rq, rp + i, n, rq_stride));

		memset(w, 0, SROCE_SEND_WQE_HDR_SIZE);
		w->wr_id = i;
		w->opcode = IBV_WR_SEND;
		w->flags = SROCE_WQE_SIGNALED;
		memset(rw, 0, SROCE_RECV_WQE_HDR_SIZE);
		rw->wr_id = (uint64_t(1) << 32) | i;
	}
	__atomic_store_n(&sq->prod, sp + n, __ATOMIC_RELEASE);
	__atomic_store_n(&rq->prod, rp + n, __ATOMIC_RELEASE);

	Sleeper sleeper;
	const double base_gap = sleeper.baseline_ms();
	int64_t t0, t1;
	if (!to_error(name, qp.get(), &t0, &t1))
		return;

	/* Both CQs in order, until everything came or 120 s passed. */
	uint32_t got[2] = {0, 0}, bad[2] = {0, 0};
	uint64_t first_bad[2] = {0, 0};
	ibv_cq *cqs[2] = {scq.get(), rcq.get()};
	const int64_t deadline = t1 + int64_t(120) * 1000000000;
	while ((got[0] < n || got[1] < n) && now_ns() < deadline) {
		bool any = false;

		for (int q = 0; q < 2; q++) {
			ibv_wc wc[256];
			const int k = ibv_poll_cq(cqs[q], 256, wc);

			for (int i = 0; i < k; i++) {
				const uint64_t want = (q ? uint64_t(1) << 32 : 0) | got[q];

				if ((wc[i].wr_id != want || wc[i].status != IBV_WC_WR_FLUSH_ERR) &&
				    !bad[q]++)
					first_bad[q] = wc[i].wr_id;
				got[q]++;
			}
			any |= k > 0;
		}
		if (!any)
			usleep(1000);
	}
	const int64_t t2 = now_ns();
	const double gap = sleeper.max_gap_ms();
	sleeper.stop();
	ibv_wc extra[4];
	const int more =
	    poll_cq_for(scq.get(), extra, 4, 200) + poll_cq_for(rcq.get(), extra, 4, 200);
	r_.info("flush_huge: ERR took %.1f ms, all completions after %.1f ms; sleeper's longest "
	        "wait %.1f ms (%.1f ms before the flush)",
	        double(t1 - t0) / 1e6, double(t2 - t0) / 1e6, gap, base_gap);
	static const char *const what[2] = {"send", "recv"};
	for (int q = 0; q < 2; q++)
		r_.check(got[q] == n && !bad[q], name + "." + what[q],
		         "%u %s WQEs completed with WR_FLUSH_ERR in order, once each (%u "
		         "completions, %u out of order or with another status, first wr_id "
		         "%#" PRIx64 ")",
		         n, what[q], got[q], bad[q], first_bad[q]);
	r_.check(more == 0, name + ".extra", "no completion after the last one (%d)", more);
	const uint32_t sc = __atomic_load_n(&sq->cons, __ATOMIC_ACQUIRE);
	const uint32_t rc = __atomic_load_n(&rq->cons, __ATOMIC_ACQUIRE);
	r_.check(sc == sp + n && rc == rp + n, name + ".cons",
	         "both rings' cons at their prod (%+d, %+d)", int(sc - sp - n), int(rc - rp - n));
}

/*
 * Hostile flush sizes: a QP with the largest rings (2^20 send and 2^20
 * receive WQEs) and a CQ of 64 is moved to ERR with both rings full, then
 * both are filled again and their doorbells rung, kHostileRounds times.
 * Only the first CQEs fit (IBV_EVENT_CQ_ERR), but every WQE must be
 * consumed (cons reaches prod), and a SCHED_FIFO thread of this process
 * that sleeps 1 ms at a time must never wait sleeper_limit_ms() or more:
 * the flush gives the CPU up between batches instead of running 2^20 WQEs
 * with softirqs off. The sleeper is realtime because the stress test runs
 * this next to busy processes, which keep an ordinary thread waiting its
 * fair share (100 ms and more on a debug kernel) whatever the flush does.
 */
void RingRun::flush_hostile()
{
	const std::string name = "flush_hostile";
	const uint32_t n = SROCE_RING_MAX_ENTRIES;
	CqPtr cq(ibv_create_cq(ctx_, 64, nullptr, nullptr, 0));

	if (!cq) {
		r_.fail(name + ".setup", "ibv_create_cq: %s", errno_name(errno).c_str());
		return;
	}
	sroce_ring_hdr *sq, *rq;
	QpPtr qp = flush_qp(name, cq.get(), cq.get(), n, &sq, &rq);
	if (!qp)
		return;
	ibv_recv_wr *rbad = nullptr;
	Sleeper sleeper(true);
	const double base_gap = sleeper.baseline_ms();
	uint32_t sprod = __atomic_load_n(&sq->prod, __ATOMIC_RELAXED) + n;
	uint32_t rprod = __atomic_load_n(&rq->prod, __ATOMIC_RELAXED) + n;
	__atomic_store_n(&sq->prod, sprod, __ATOMIC_RELEASE);
	__atomic_store_n(&rq->prod, rprod, __ATOMIC_RELEASE);
	int64_t t0, t1;
	if (!to_error(name, qp.get(), &t0, &t1))
		return;
	auto drained = [&] {
		const int64_t end = now_ns() + int64_t(120) * 1000000000;

		while (__atomic_load_n(&sq->cons, __ATOMIC_ACQUIRE) != sprod ||
		       __atomic_load_n(&rq->cons, __ATOMIC_ACQUIRE) != rprod) {
			if (now_ns() > end)
				return false;
			usleep(1000);
		}
		return true;
	};
	bool ok = drained();
	int rounds = 0;
	/*
	 * One refill: the flush of WQEs posted to a QP already in ERR is the
	 * same path every further time (two refills took 25 s more of the
	 * debug kernel's time).
	 */
	for (; ok && rounds < 1; rounds++) {
		sprod += n;
		rprod += n;
		__atomic_store_n(&sq->prod, sprod, __ATOMIC_RELEASE);
		__atomic_store_n(&rq->prod, rprod, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		/* The provider's doorbells: FLUSH is set, so both enter the kernel. */
		ok = doorbell(qp.get()) == 0 && ibv_post_recv(qp.get(), nullptr, &rbad) == 0 &&
		     drained();
	}
	const int64_t t2 = now_ns();
	const double gap = sleeper.max_gap_ms();
	sleeper.stop();
	r_.info("flush_hostile: ERR took %.1f ms, %u + %u WQEs flushed after %.1f ms; sleeper's "
	        "longest wait %.1f ms (%.1f ms before the flush)",
	        double(t1 - t0) / 1e6, (rounds + 1) * n, (rounds + 1) * n, double(t2 - t0) / 1e6,
	        gap, base_gap);
	r_.check(ok, name + ".consumed",
	         "every WQE consumed: cons at prod on both rings after %d refills (%+d, %+d)",
	         rounds, int(__atomic_load_n(&sq->cons, __ATOMIC_ACQUIRE) - sprod),
	         int(__atomic_load_n(&rq->cons, __ATOMIC_ACQUIRE) - rprod));
	ibv_async_event ev{};
	const int got = wait_async_event(ctx_, kTimeoutMs, &ev);
	r_.check(got == 1 && ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq.get(),
	         name + ".cq_err", "the CQ of 64 overflowed: %s",
	         got == 1 ? ibv_event_type_str(ev.event_type) : "no async event");
	if (got == 1)
		ibv_ack_async_event(&ev);
	const double limit = sleeper_limit_ms(base_gap);
	r_.check(gap < limit && !sleeper.demoted(), name + ".responsive",
	         "a SCHED_FIFO thread sleeping 1 ms at a time was never kept waiting %.0f ms or "
	         "more while the QP flushed (%.1f ms%s)",
	         limit, gap, sleeper.demoted() ? "; no SCHED_FIFO here" : "");
}

/*
 * The SQ's kflags word has writers under different locks: the state change
 * sets and clears SROCE_RING_F_FLUSH, the send engine sets and clears
 * SROCE_SQ_NEED_WAKEUP whenever the doorbell finds the queue idle. Here a
 * thread rings the doorbell without pause while the QP goes RTS -> ERR ->
 * RESET -> RTS again and again: FLUSH must be set in every ERR round (a
 * lost update leaves WQEs posted in ERR unflushed: a drain hangs) and
 * clear after RESET. Only with two or more CPUs can the updates meet; on
 * one CPU the loop is short and checks the protocol only.
 */
void RingRun::flag_race()
{
	const std::string name = "flag_race";
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const int rounds = cpus > 1 ? 2000 : 20;
	ibv_qp_attr attr{};
	Pair p;

	if (!make_pair(&p, name))
		return;
	sroce_ring_hdr *sq = p.sq;
	std::atomic<bool> stop{false};
	std::atomic<long> rung{0};
	std::thread ringer([&] {
		while (!stop) {
			doorbell(p.sender.get());
			rung++;
		}
	});
	int lost_set = 0, lost_clear = 0, failed = 0;
	for (int i = 0; i < rounds && !failed; i++) {
		attr.qp_state = IBV_QPS_ERR;
		failed |= ibv_modify_qp(p.sender.get(), &attr, IBV_QP_STATE);
		usleep(100);
		lost_set += !(__atomic_load_n(&sq->kflags, __ATOMIC_ACQUIRE) & SROCE_RING_F_FLUSH);
		attr.qp_state = IBV_QPS_RESET;
		failed |= ibv_modify_qp(p.sender.get(), &attr, IBV_QP_STATE);
		lost_clear +=
		    !!(__atomic_load_n(&sq->kflags, __ATOMIC_ACQUIRE) & SROCE_RING_F_FLUSH);
		failed |= !connect(p.sender.get(), p.receiver->qp_num);
	}
	stop = true;
	ringer.join();
	r_.info("flag_race: %d rounds on %ld CPUs, %ld doorbells", rounds, cpus, rung.load());
	if (!r_.check(!failed, name + ".modify", "the state walk succeeded every round"))
		return;
	r_.check(lost_set == 0 && lost_clear == 0, name + ".flush",
	         "SROCE_RING_F_FLUSH set in every ERR round and clear after every RESET "
	         "(lost %d times, stuck %d times)",
	         lost_set, lost_clear);
}

int RingRun::run()
{
	Pair bystander;

	if (!setup() || !make_pair(&bystander, "bystander"))
		return r_.finish();
	for (const CaseInfo &ci : kCases)
		run_case(ci);
	prod_back();
	if (quick_) {
		r_.info("--quick: flush_huge and flush_hostile not run");
	} else {
		flush_huge();
		flush_hostile();
	}
	flag_race();
	good_send(bystander, "bystander");
	return r_.finish();
}

} /* namespace */

int cmd_ring(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("ring", argc, argv, &t, &status, true))
		return status;
	RingRun run(t.ctx.get(), t.gid, t.quick);
	return run.run();
}

} /* namespace vc */
