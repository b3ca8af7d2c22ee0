// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Send queue data path: WR validation, send WQE encoding, publication and
 * the doorbell decision. No heap; one system call at most (the doorbell),
 * and only when the kernel's send engine has stopped.
 */
#include "datapath.h"

#include <cstddef>
#include <string.h>
#include <unistd.h>

namespace sroce
{

namespace
{

/* The WQE opcode, flags and layout are libibverbs values by ABI. */
static_assert(sizeof(sroce_send_wqe) == SROCE_SEND_WQE_HDR_SIZE);
static_assert(offsetof(sroce_send_wqe, data) == SROCE_SEND_WQE_HDR_SIZE);
static_assert(offsetof(sroce_send_wqe, wr) == 32);
static_assert(offsetof(sroce_send_wqe, av) == 64);
static_assert(sizeof(sroce_av) == 32);
static_assert(sizeof(sroce_sge) == 16);
static_assert(SROCE_WQE_FENCE == IBV_SEND_FENCE);
static_assert(SROCE_WQE_SIGNALED == IBV_SEND_SIGNALED);
static_assert(SROCE_WQE_SOLICITED == IBV_SEND_SOLICITED);
static_assert(SROCE_WQE_INLINE == IBV_SEND_INLINE);
static_assert(int(IBV_WR_RDMA_WRITE) == IB_UVERBS_WR_RDMA_WRITE);
static_assert(int(IBV_WR_RDMA_WRITE_WITH_IMM) == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
static_assert(int(IBV_WR_SEND) == IB_UVERBS_WR_SEND);
static_assert(int(IBV_WR_SEND_WITH_IMM) == IB_UVERBS_WR_SEND_WITH_IMM);
static_assert(int(IBV_WR_RDMA_READ) == IB_UVERBS_WR_RDMA_READ);
static_assert(int(IBV_WR_ATOMIC_CMP_AND_SWP) == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
static_assert(int(IBV_WR_ATOMIC_FETCH_AND_ADD) == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
static_assert(int(IBV_WR_LOCAL_INV) == IB_UVERBS_WR_LOCAL_INV);
static_assert(int(IBV_WR_BIND_MW) == IB_UVERBS_WR_BIND_MW);
static_assert(int(IBV_WR_SEND_WITH_INV) == IB_UVERBS_WR_SEND_WITH_INV);
static_assert(int(IBV_WR_ATOMIC_WRITE) == SROCE_WR_ATOMIC_WRITE);

constexpr uint16_t qpt(ibv_qp_type type)
{
	return uint16_t(1u << type);
}

constexpr uint16_t RC = qpt(IBV_QPT_RC);
constexpr uint16_t UC = qpt(IBV_QPT_UC);
constexpr uint16_t UD = qpt(IBV_QPT_UD);
/* XRC initiator: RC's operations but A19's (IBA A14). */
constexpr uint16_t XS = qpt(IBV_QPT_XRC_SEND);
static_assert(IBV_QPT_XRC_RECV < 16, "QP type bits must fit in SendOpInfo::qp_types");

struct SendOpTable {
	SendOpInfo op[SEND_OPCODE_COUNT];
};

constexpr SendOpTable make_send_ops()
{
	SendOpTable t{};
	const uint8_t data = SEND_OP_SGES | SEND_OP_INLINE;

	t.op[IBV_WR_SEND] = {SendKind::send, RC | UC | UD | XS, data};
	t.op[IBV_WR_SEND_WITH_IMM] = {SendKind::send, RC | UC | UD | XS, data | SEND_OP_IMM};
	t.op[IBV_WR_SEND_WITH_INV] = {SendKind::send, RC | XS, data | SEND_OP_INV};
	t.op[IBV_WR_RDMA_WRITE] = {SendKind::rdma_write, RC | UC | XS, data};
	t.op[IBV_WR_RDMA_WRITE_WITH_IMM] = {SendKind::rdma_write, RC | UC | XS, data | SEND_OP_IMM};
	t.op[IBV_WR_RDMA_READ] = {SendKind::rdma_read, RC | XS, SEND_OP_SGES};
	t.op[IBV_WR_ATOMIC_CMP_AND_SWP] = {SendKind::atomic, RC | XS, SEND_OP_SGES};
	t.op[IBV_WR_ATOMIC_FETCH_AND_ADD] = {SendKind::atomic, RC | XS, SEND_OP_SGES};
	t.op[IBV_WR_LOCAL_INV] = {SendKind::local_inv, RC | UC, SEND_OP_INV};
	t.op[IBV_WR_BIND_MW] = {SendKind::bind_mw, RC | UC, 0};
	t.op[IBV_WR_ATOMIC_WRITE] = {SendKind::atomic_write, RC, SEND_OP_EX_ONLY};
	t.op[SROCE_WR_FLUSH] = {SendKind::flush, RC, SEND_OP_EX_ONLY};
	/* IBV_WR_TSO, IBV_WR_DRIVER1 and gaps: invalid. */
	return t;
}

constexpr SendOpTable send_ops = make_send_ops();

static_assert(send_ops.op[IBV_WR_TSO].kind == SendKind::invalid);
static_assert(send_ops.op[IBV_WR_DRIVER1].kind == SendKind::invalid);
static_assert(send_ops.op[IBV_WR_ATOMIC_WRITE].flags == SEND_OP_EX_ONLY);
static_assert(IBV_WR_ATOMIC_WRITE < SEND_OPCODE_COUNT && SROCE_WR_FLUSH < SEND_OPCODE_COUNT);
/* libibverbs 44 leaves 14 free for IBV_WR_FLUSH (its later value). */
static_assert(SROCE_WR_FLUSH == IBV_WR_ATOMIC_WRITE - 1);
static_assert(send_ops.op[SROCE_WR_FLUSH].flags == SEND_OP_EX_ONLY);
static_assert(send_ops.op[IBV_WR_SEND].qp_types == (RC | UC | UD | XS));
static_assert(send_ops.op[IBV_WR_RDMA_READ].qp_types == (RC | XS));

constexpr SendOpInfo invalid_op{SendKind::invalid, 0, 0};

/* Sum of SGE lengths; 64-bit so that no list can wrap it. */
uint64_t sge_bytes(const ibv_send_wr &wr)
{
	uint64_t total = 0;

	for (int i = 0; i < wr.num_sge; i++)
		total += wr.sg_list[i].length;
	return total;
}

int check_sges(const WorkQueue &sq, const SendOpInfo &op, const ibv_send_wr &wr,
               uint32_t *inline_len)
{
	*inline_len = 0;
	if (!(op.flags & SEND_OP_SGES))
		return 0; /* the list is ignored: the WQE carries none */
	if (wr.num_sge < 0 || uint32_t(wr.num_sge) > sq.max_sge)
		return EINVAL;
	if (wr.num_sge > 0 && !wr.sg_list)
		return EINVAL;
	if (wr.send_flags & IBV_SEND_INLINE) {
		uint64_t bytes = sge_bytes(wr);

		if (bytes > sq.max_inline)
			return EINVAL;
		*inline_len = uint32_t(bytes);
	}
	return 0;
}

int check_kind(const SendOpInfo &op, const ibv_send_wr &wr)
{
	switch (op.kind) {
	case SendKind::atomic:
		if (sge_bytes(wr) < sizeof(uint64_t) || (wr.wr.atomic.remote_addr & 7))
			return EINVAL;
		return 0;
	case SendKind::atomic_write:
		return (wr.wr.atomic.remote_addr & 7) ? EINVAL : 0;
	case SendKind::flush: {
		const uint8_t type = flush_wr_type(wr);

		if (!type || (type & ~(SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT)) ||
		    flush_wr_level(wr) > SROCE_FLUSH_MR || wr.wr.atomic.compare_add > (1ULL << 31))
			return EINVAL;
		return 0;
	}
	case SendKind::bind_mw:
		if (!wr.bind_mw.mw ||
		    (wr.bind_mw.bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED))
			return EINVAL;
		return 0;
	default:
		return 0;
	}
}

void build_sges(sroce_send_wqe *wqe, const ibv_send_wr &wr)
{
	sroce_sge *out = reinterpret_cast<sroce_sge *>(wqe->data);

	for (int i = 0; i < wr.num_sge; i++) {
		out[i].addr = wr.sg_list[i].addr;
		out[i].length = wr.sg_list[i].length;
		out[i].lkey = wr.sg_list[i].lkey;
	}
	wqe->num_sge = uint32_t(wr.num_sge);
}

void gather_inline(sroce_send_wqe *wqe, const ibv_send_wr &wr, uint32_t inline_len)
{
	uint8_t *out = wqe->data;

	for (int i = 0; i < wr.num_sge; i++) {
		const ibv_sge &sge = wr.sg_list[i];

		memcpy(out, reinterpret_cast<const void *>(uintptr_t(sge.addr)), sge.length);
		out += sge.length;
	}
	wqe->inline_len = inline_len;
}

void build_ud(sroce_send_wqe *wqe, const ibv_send_wr &wr)
{
	const Ah *ah = to_ah(wr.wr.ud.ah);

	wqe->wr.ud.remote_qpn = wr.wr.ud.remote_qpn;
	wqe->wr.ud.remote_qkey = wr.wr.ud.remote_qkey;
	wqe->wr.ud.ah_num = ah->ah_num;
	wqe->av = ah->av;
}

void build_bind_mw(sroce_send_wqe *wqe, const ibv_send_wr &wr)
{
	const ibv_mw_bind_info &info = wr.bind_mw.bind_info;

	wqe->wr.bind_mw.addr = info.addr;
	wqe->wr.bind_mw.length = info.length;
	wqe->wr.bind_mw.mr_lkey = info.mr ? info.mr->lkey : 0;
	wqe->wr.bind_mw.mw_rkey = wr.bind_mw.mw->rkey;
	wqe->wr.bind_mw.rkey = wr.bind_mw.rkey;
	wqe->wr.bind_mw.access = info.mw_access_flags;
}

void build_remote(sroce_send_wqe *wqe, const SendOpInfo &op, const ibv_send_wr &wr, bool ud)
{
	switch (op.kind) {
	case SendKind::send:
		if (ud)
			build_ud(wqe, wr);
		break;
	case SendKind::rdma_write:
	case SendKind::rdma_read:
		wqe->wr.rdma.remote_addr = wr.wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr.wr.rdma.rkey;
		break;
	case SendKind::atomic:
	case SendKind::atomic_write: /* compare_add: the 8 bytes to write */
		wqe->wr.atomic.remote_addr = wr.wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr.wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr.wr.atomic.swap;
		wqe->wr.atomic.rkey = wr.wr.atomic.rkey;
		break;
	case SendKind::flush:
		wqe->wr.flush.remote_addr = wr.wr.atomic.remote_addr;
		wqe->wr.flush.length = wr.wr.atomic.compare_add;
		wqe->wr.flush.rkey = wr.wr.atomic.rkey;
		wqe->wr.flush.type = flush_wr_type(wr);
		wqe->wr.flush.level = flush_wr_level(wr);
		break;
	case SendKind::bind_mw:
		build_bind_mw(wqe, wr);
		break;
	case SendKind::local_inv:
	case SendKind::invalid:
		break;
	}
}

} /* namespace */

const SendOpInfo &send_op_info(uint32_t opcode)
{
	return opcode < SEND_OPCODE_COUNT ? send_ops.op[opcode] : invalid_op;
}

int send_wr_check(const WorkQueue &sq, ibv_qp_type qp_type, const ibv_send_wr &wr,
                  uint32_t *inline_len)
{
	const SendOpInfo &op = send_op_info(wr_opcode(wr));
	int err;

	if (op.kind == SendKind::invalid || uint32_t(qp_type) >= 16 ||
	    !(op.qp_types & qpt(qp_type)))
		return EINVAL;
	if (wr.send_flags & ~SROCE_WQE_FLAGS_ALL)
		return EINVAL;
	if ((wr.send_flags & IBV_SEND_INLINE) && !(op.flags & SEND_OP_INLINE))
		return EINVAL;
	if (qp_type == IBV_QPT_UD && !wr.wr.ud.ah)
		return EINVAL;
	err = check_sges(sq, op, wr, inline_len);
	if (err)
		return err;
	return check_kind(op, wr);
}

void send_wqe_build(sroce_send_wqe *wqe, const ibv_send_wr &wr, ibv_qp_type qp_type,
                    uint32_t inline_len, bool sq_sig_all)
{
	const uint32_t opcode = wr_opcode(wr);
	const SendOpInfo &op = send_op_info(opcode);

	memset(wqe, 0, SROCE_SEND_WQE_HDR_SIZE);
	wqe->wr_id = wr.wr_id;
	wqe->opcode = opcode;
	wqe->flags = wr.send_flags | (sq_sig_all ? SROCE_WQE_SIGNALED : 0);
	if (op.flags & SEND_OP_IMM)
		wqe->ex.imm_data = wr.imm_data;
	else if (op.flags & SEND_OP_INV)
		wqe->ex.invalidate_rkey = wr.invalidate_rkey;
	build_remote(wqe, op, wr, qp_type == IBV_QPT_UD);
	if (qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr.qp_type.xrc.remote_srqn;
	if (!(op.flags & SEND_OP_SGES))
		return;
	if (wr.send_flags & IBV_SEND_INLINE)
		gather_inline(wqe, wr, inline_len);
	else
		build_sges(wqe, wr);
}

SqPostResult sq_post(WorkQueue &sq, ibv_qp_type qp_type, bool sq_sig_all, ibv_send_wr *wr,
                     ibv_send_wr **bad_wr)
{
	SpinGuard guard(sq.lock);
	ProducerRing &pr = sq.pr;
	const uint32_t start = pr.prod;
	SqPostResult res{0, false};

	if (pr.ring.present() && pr.ring.failed()) {
		*bad_wr = wr;
		return {EIO, false};
	}
	for (; wr; wr = wr->next) {
		uint32_t inline_len;
		void *slot;

		res.err = send_wr_check(sq, qp_type, *wr, &inline_len);
		if (!res.err && (send_op_info(wr_opcode(*wr)).flags & SEND_OP_EX_ONLY))
			res.err = EINVAL;
		slot = res.err ? nullptr : pr.next_slot(&res.err);
		if (!slot) {
			*bad_wr = wr;
			break;
		}
		send_wqe_build(static_cast<sroce_send_wqe *>(slot), *wr, qp_type, inline_len,
		               sq_sig_all);
		pr.prod++;
	}
	if (pr.prod != start) {
		pr.publish(pr.prod);
		full_fence();
		/* Idle engine, or a QP in error whose new WQEs must be flushed. */
		res.ring_doorbell =
		    pr.ring.load_kflags() & (SROCE_SQ_NEED_WAKEUP | SROCE_RING_F_FLUSH);
	}
	return res;
}

/*
 * Both kernel entries of the data path are empty post commands on the QP
 * handle: POST_SEND is the SQ doorbell, POST_RECV makes the kernel flush
 * the RQ of a QP in error. The two commands share one layout.
 */
static_assert(sizeof(struct ibv_post_send) == sizeof(struct ibv_post_recv), "post cmd layouts");
static_assert(offsetof(struct ibv_post_send, core_payload.wqe_size) ==
                  offsetof(struct ibv_post_recv, core_payload.wqe_size),
              "post cmd layouts");

int qp_kernel_entry(int cmd_fd, uint32_t qp_handle, bool recv)
{
	struct ibv_post_send cmd;
	ib_uverbs_post_send_resp resp{};
	ssize_t n;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = recv ? IB_USER_VERBS_CMD_POST_RECV : IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = uintptr_t(&resp);
	cmd.core_payload.qp_handle = qp_handle;
	cmd.core_payload.wr_count = 0;
	cmd.core_payload.sge_count = 0;
	cmd.core_payload.wqe_size = recv ? sizeof(ib_uverbs_recv_wr) : sizeof(ib_uverbs_send_wr);
	n = write(cmd_fd, &cmd, sizeof(cmd));
	if (n == ssize_t(sizeof(cmd)))
		return 0;
	return n < 0 ? errno : EIO;
}

int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr)
{
	Qp *qp = to_qp(ibqp);
	SqPostResult res;
	int err;

	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		*bad_wr = wr;
		return EINVAL;
	default:
		break;
	}
	res = sq_post(qp->sq, ibqp->qp_type, qp->sq_sig_all, wr, bad_wr);
	if (!res.ring_doorbell)
		return res.err;
	err = qp_kernel_entry(ibqp->context->cmd_fd, ibqp->handle, false);
	if (res.err)
		return res.err;
	if (err)
		*bad_wr = nullptr; /* every WR was queued; the kick failed */
	return err;
}

int bind_mw(ibv_qp *ibqp, ibv_mw *mw, ibv_mw_bind *mw_bind)
{
	ibv_send_wr wr;
	ibv_send_wr *bad_wr;
	int err;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = post_send(ibqp, &wr, &bad_wr);
	if (err) {
		errno = err;
		return err;
	}
	/* Type 1 windows take their new rkey at post time (ibv_bind_mw(3)). */
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

} /* namespace sroce */
