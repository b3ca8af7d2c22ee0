// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queue data path: CQE translation, ibv_poll_cq, the extended
 * (ibv_start_poll) interface and CQ arming. The kernel produces CQEs; every
 * entry is copied out of the shared ring before it is looked at, and the
 * kernel's prod index is bounded against our own cons before use.
 */
#include "datapath.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

namespace sroce
{

namespace
{

static_assert(sizeof(sroce_cqe) == SROCE_CQE_SIZE);
static_assert(offsetof(sroce_cqe, timestamp) == 48);
static_assert(int(IBV_WC_SEND) == IB_UVERBS_WC_SEND);
static_assert(int(IBV_WC_RDMA_WRITE) == IB_UVERBS_WC_RDMA_WRITE);
static_assert(int(IBV_WC_RDMA_READ) == IB_UVERBS_WC_RDMA_READ);
static_assert(int(IBV_WC_COMP_SWAP) == IB_UVERBS_WC_COMP_SWAP);
static_assert(int(IBV_WC_FETCH_ADD) == IB_UVERBS_WC_FETCH_ADD);
static_assert(int(IBV_WC_BIND_MW) == IB_UVERBS_WC_BIND_MW);
static_assert(int(IBV_WC_LOCAL_INV) == IB_UVERBS_WC_LOCAL_INV);
static_assert(IBV_WC_RECV == 128 && IBV_WC_RECV_RDMA_WITH_IMM == 129);
static_assert(IBV_WC_GENERAL_ERR == 21);

/* CQE opcodes (a u8) sroce produces; everything else is invalid. */
struct WcOpcodeTable {
	bool valid[256];
};

constexpr WcOpcodeTable make_wc_opcodes()
{
	WcOpcodeTable t{};

	t.valid[IBV_WC_SEND] = true;
	t.valid[IBV_WC_RDMA_WRITE] = true;
	t.valid[IBV_WC_RDMA_READ] = true;
	t.valid[IBV_WC_COMP_SWAP] = true;
	t.valid[IBV_WC_FETCH_ADD] = true;
	t.valid[IBV_WC_ATOMIC_WRITE] = true;
	t.valid[SROCE_WC_FLUSH] = true; /* IBV_WC_FLUSH of later libibverbs */
	t.valid[IBV_WC_BIND_MW] = true;
	t.valid[IBV_WC_LOCAL_INV] = true;
	t.valid[IBV_WC_RECV] = true;
	t.valid[IBV_WC_RECV_RDMA_WITH_IMM] = true;
	return t;
}

constexpr WcOpcodeTable wc_opcodes = make_wc_opcodes();
static_assert(!wc_opcodes.valid[IBV_WC_TSO] && int(IBV_WC_ATOMIC_WRITE) == SROCE_WC_ATOMIC_WRITE);
/* libibverbs 44 leaves 8 free for IBV_WC_FLUSH. */
static_assert(SROCE_WC_FLUSH == IBV_WC_TSO + 1 && SROCE_WC_FLUSH == IBV_WC_ATOMIC_WRITE - 1);

struct FlagMap {
	uint16_t cqe;
	unsigned int wc;
};

/* SROCE_CQE_F_SOLICITED has no ibv_wc flag: it only matters to CQ arming. */
constexpr FlagMap wc_flag_map[] = {
    {SROCE_CQE_F_WITH_IMM, IBV_WC_WITH_IMM},
    {SROCE_CQE_F_WITH_INV, IBV_WC_WITH_INV},
    {SROCE_CQE_F_GRH, IBV_WC_GRH},
    {SROCE_CQE_F_SOLICITED, 0},
};

void copy_cqe(const Ring &ring, uint32_t idx, sroce_cqe *out)
{
	memcpy(out, ring.entry(idx), sizeof(*out));
}

/* Entries published and not yet consumed; false if prod is impossible. */
bool cq_available(const ConsumerRing &cq, uint32_t *prod)
{
	*prod = cq.ring.load_prod();
	return sroce_ring_prod_valid(*prod, cq.cons, cq.ring.num_entries);
}

} /* namespace */

bool wc_opcode_from_cqe(uint8_t opcode, ibv_wc_opcode *out)
{
	if (!wc_opcodes.valid[opcode])
		return false;
	*out = ibv_wc_opcode(opcode);
	return true;
}

ibv_wc_status wc_status_from_cqe(const sroce_cqe &cqe)
{
	ibv_wc_opcode opcode;

	if (cqe.status > IBV_WC_GENERAL_ERR)
		return IBV_WC_GENERAL_ERR;
	if (cqe.status == IBV_WC_SUCCESS && !wc_opcode_from_cqe(cqe.opcode, &opcode))
		return IBV_WC_GENERAL_ERR; /* a success we could not describe */
	return ibv_wc_status(cqe.status);
}

unsigned int wc_flags_from_cqe(uint16_t flags)
{
	unsigned int wc = 0;

	for (const FlagMap &m : wc_flag_map)
		if (flags & m.cqe)
			wc |= m.wc;
	return wc;
}

void cqe_to_wc(const sroce_cqe &cqe, ibv_wc *wc)
{
	ibv_wc_opcode opcode;

	wc->wr_id = cqe.wr_id;
	wc->status = wc_status_from_cqe(cqe);
	/* The opcode of an error completion is undefined; pass it through. */
	wc->opcode = wc_opcode_from_cqe(cqe.opcode, &opcode) ? opcode : ibv_wc_opcode(cqe.opcode);
	wc->vendor_err = cqe.vendor_err;
	wc->byte_len = cqe.byte_len;
	wc->invalidated_rkey = cqe.ex.invalidated_rkey; /* or imm_data: same bits */
	wc->qp_num = cqe.qp_num;
	wc->src_qp = cqe.src_qp;
	wc->wc_flags = wc_flags_from_cqe(cqe.flags);
	wc->pkey_index = cqe.pkey_index;
	wc->slid = 0; /* RoCE has no LIDs */
	wc->sl = cqe.sl;
	wc->dlid_path_bits = 0;
}

int cq_poll(Cq &cq, int num_entries, ibv_wc *wc)
{
	SpinGuard guard(cq.lock);
	ConsumerRing &ring = cq.cq;
	uint32_t prod;
	int n = 0;

	if (!ring.ring.present() || !cq_available(ring, &prod))
		return -1;
	for (; n < num_entries && ring.cons != prod; n++, ring.cons++) {
		sroce_cqe cqe;

		copy_cqe(ring.ring, ring.cons, &cqe);
		cqe_to_wc(cqe, &wc[n]);
	}
	if (n)
		ring.ring.store_cons(ring.cons);
	else if (ring.cons == prod && (ring.ring.load_kflags() & SROCE_CQ_F_OVERFLOW))
		return -1; /* drained, and completions were lost */
	return n;
}

uint32_t cq_arm_value(uint32_t current, bool solicited_only)
{
	if (current == SROCE_CQ_ARM_NEXT)
		return SROCE_CQ_ARM_NEXT;
	return solicited_only ? SROCE_CQ_ARM_SOLICITED : SROCE_CQ_ARM_NEXT;
}

void cq_arm(const Ring &ring, bool solicited_only)
{
	uint32_t *uflags = ring.uflags();
	uint32_t cur = __atomic_load_n(uflags, __ATOMIC_RELAXED);

	/* The kernel clears uflags with a cmpxchg when it fires the event. */
	while (!__atomic_compare_exchange_n(uflags, &cur, cq_arm_value(cur, solicited_only), false,
	                                    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	full_fence();
}

namespace
{

/* The busy poll command (sroce-abi.h); false if the kernel refused it. */
bool cq_busy_poll_cmd(const ibv_cq &ibcq)
{
	struct {
		ib_uverbs_cmd_hdr hdr;
		ib_uverbs_poll_cq body;
	} cmd{};
	/* Room for the one entry asked for, never filled. */
	alignas(8) uint8_t resp[sizeof(ib_uverbs_poll_cq_resp) + sizeof(ib_uverbs_wc)] = {};

	cmd.hdr.command = IB_USER_VERBS_CMD_POLL_CQ;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.body.response = uintptr_t(resp);
	cmd.body.cq_handle = ibcq.handle;
	cmd.body.ne = 1;
	return write(ibcq.context->cmd_fd, &cmd, sizeof(cmd)) == ssize_t(sizeof(cmd));
}

} /* namespace */

/*
 * On the poll path: with busy polling off (the default) an empty poll
 * costs one load of kflags. The count is a relaxed load and store, not a
 * read-modify-write: threads polling one CQ may lose counts, which only
 * delays a busy poll.
 */
bool cq_empty_poll(Cq &cq)
{
	uint32_t n;

	if (!(cq.cq.ring.load_kflags() & SROCE_CQ_F_BUSY_POLL) ||
	    __atomic_load_n(&cq.busy_poll_failed, __ATOMIC_RELAXED))
		return false;
	n = __atomic_load_n(&cq.empty_polls, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&cq.empty_polls, n, __ATOMIC_RELAXED);
	if (n % CQ_BUSY_POLL_AFTER)
		return false;
	if (cq_busy_poll_cmd(cq.vcq.cq))
		return true;
	/* A kernel that refuses the command once will not take it later. */
	__atomic_store_n(&cq.busy_poll_failed, true, __ATOMIC_RELAXED);
	return false;
}

int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc)
{
	Cq &cq = *to_cq(ibcq);
	int n = cq_poll(cq, num_entries, wc);

	if (n == 0 && cq_empty_poll(cq))
		n = cq_poll(cq, num_entries, wc);
	return n;
}

int req_notify_cq(ibv_cq *ibcq, int solicited_only)
{
	Cq *cq = to_cq(ibcq);

	if (!cq->cq.ring.present())
		return EIO;
	cq_arm(cq->cq.ring, solicited_only != 0);
	return 0;
}

/* ---- Extended polling: ibv_start_poll / ibv_next_poll / ibv_end_poll ---- */

namespace
{

/*
 * cur_valid says whether cq.cons still points at the entry the user is
 * reading. next_poll and end_poll consume it exactly once, so an ENOENT from
 * next_poll followed by end_poll does not skip an entry.
 */
int ex_read_current(Cq &cq, ibv_cq_ex *cq_ex)
{
	ConsumerRing &ring = cq.cq;
	uint32_t prod;

	if (!cq_available(ring, &prod) || ring.cons == prod)
		return ENOENT;
	copy_cqe(ring.ring, ring.cons, &cq.cur);
	cq.cur_valid = true;
	cq_ex->wr_id = cq.cur.wr_id;
	cq_ex->status = wc_status_from_cqe(cq.cur);
	return 0;
}

void ex_consume_current(Cq &cq)
{
	if (!cq.cur_valid)
		return;
	cq.cur_valid = false;
	cq.cq.cons++;
}

int ex_start_poll(ibv_cq_ex *cq_ex, ibv_poll_cq_attr *attr)
{
	Cq &cq = *to_cq(cq_ex);
	int err;

	if (attr->comp_mask)
		return EINVAL;
	for (bool again = true;; again = false) {
		cq.lock.lock();
		err = cq.cq.ring.present() ? ex_read_current(cq, cq_ex) : EIO;
		if (!err)
			return 0;
		cq.lock.unlock(); /* the caller must not call end_poll now */
		if (err != ENOENT || !again || !cq_empty_poll(cq))
			return err;
	}
}

int ex_next_poll(ibv_cq_ex *cq_ex)
{
	Cq &cq = *to_cq(cq_ex);

	ex_consume_current(cq);
	return ex_read_current(cq, cq_ex);
}

void ex_end_poll(ibv_cq_ex *cq_ex)
{
	Cq &cq = *to_cq(cq_ex);

	ex_consume_current(cq);
	cq.cq.ring.store_cons(cq.cq.cons);
	cq.lock.unlock();
}

const sroce_cqe &cur(ibv_cq_ex *cq_ex)
{
	return to_cq(cq_ex)->cur;
}

ibv_wc_opcode ex_read_opcode(ibv_cq_ex *cq_ex)
{
	ibv_wc_opcode opcode;

	return wc_opcode_from_cqe(cur(cq_ex).opcode, &opcode) ? opcode
	                                                      : ibv_wc_opcode(cur(cq_ex).opcode);
}

uint32_t ex_read_vendor_err(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).vendor_err;
}
uint32_t ex_read_byte_len(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).byte_len;
}
__be32 ex_read_imm_data(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).ex.imm_data;
}
uint32_t ex_read_qp_num(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).qp_num;
}
uint32_t ex_read_src_qp(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).src_qp;
}
unsigned int ex_read_wc_flags(ibv_cq_ex *cq_ex)
{
	return wc_flags_from_cqe(cur(cq_ex).flags);
}
uint32_t ex_read_slid(ibv_cq_ex *)
{
	return 0;
}
uint8_t ex_read_sl(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).sl;
}
uint8_t ex_read_dlid_path_bits(ibv_cq_ex *)
{
	return 0;
}

/* The kernel stamps CQEs with CLOCK_MONOTONIC_RAW in ns (hca_core_clock 1 GHz). */
uint64_t ex_read_completion_ts(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).timestamp;
}

uint64_t clock_ns(clockid_t id)
{
	timespec ts{};

	clock_gettime(id, &ts);
	return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

/* Wall clock: the raw stamp moved by the current realtime - raw offset. */
uint64_t ex_read_completion_wallclock_ns(ibv_cq_ex *cq_ex)
{
	return cur(cq_ex).timestamp + (clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC_RAW));
}

} /* namespace */

int query_rt_values(ibv_context *, ibv_values_ex *values)
{
	const uint32_t supported = IBV_VALUES_MASK_RAW_CLOCK;
	const uint64_t ns = clock_ns(CLOCK_MONOTONIC_RAW);

	if (values->comp_mask & ~supported)
		return EOPNOTSUPP;
	values->raw_clock.tv_sec = time_t(ns / 1000000000ull);
	values->raw_clock.tv_nsec = long(ns % 1000000000ull);
	return 0;
}

void cq_ex_set_ops(ibv_cq_ex *cq_ex, uint64_t wc_flags)
{
	cq_ex->start_poll = ex_start_poll;
	cq_ex->next_poll = ex_next_poll;
	cq_ex->end_poll = ex_end_poll;
	cq_ex->read_opcode = ex_read_opcode;
	cq_ex->read_vendor_err = ex_read_vendor_err;
	cq_ex->read_wc_flags = ex_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cq_ex->read_byte_len = ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cq_ex->read_imm_data = ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cq_ex->read_qp_num = ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cq_ex->read_src_qp = ex_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cq_ex->read_slid = ex_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cq_ex->read_sl = ex_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cq_ex->read_dlid_path_bits = ex_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cq_ex->read_completion_ts = ex_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cq_ex->read_completion_wallclock_ns = ex_read_completion_wallclock_ns;
}

/*
 * The kernel only writes at prod and beyond, so entries in [cons, prod)
 * are ours to move: walking down from prod, kept entries slide up over
 * the dropped ones and cons advances past the freed slots.
 */
void cq_clean(Cq &cq, uint32_t qpn)
{
	SpinGuard guard(cq.lock);
	ConsumerRing &r = cq.cq;
	uint32_t prod, freed = 0;

	if (!r.ring.present() || !cq_available(r, &prod))
		return;
	for (uint32_t i = prod; i != r.cons;) {
		sroce_cqe e;

		i--;
		copy_cqe(r.ring, i, &e);
		if (e.qp_num == qpn)
			freed++;
		else if (freed)
			memcpy(r.ring.entry(i + freed), &e, sizeof(e));
	}
	if (freed) {
		r.cons += freed;
		r.ring.store_cons(r.cons);
	}
}

} /* namespace sroce */
