// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The extended send API: ibv_qp_ex's ibv_wr_* builders. Each builder call
 * that names an operation finishes the previous work request (checked and
 * written into the next ring slot by the same code as ibv_post_send) and
 * starts a new one from qp_ex->wr_id and wr_flags; the data calls fill its
 * gather list or copy its inline bytes. The SQ's lock is held from
 * ibv_wr_start() to ibv_wr_complete() or ibv_wr_abort(); the batch
 * becomes visible to the kernel with one release store of prod at
 * completion (the doorbell rules of sroce-abi.h then apply), so an abort,
 * or any error in the batch, leaves the queue as it was.
 */
#include "datapath.h"

namespace sroce
{

namespace
{

Qp &qp_of(ibv_qp_ex *qpx)
{
	return *to_qp(&qpx->qp_base);
}

/* The send_ops_flags bit that allows @opcode. */
uint64_t op_bit(uint32_t opcode)
{
	switch (opcode) {
	case IBV_WR_RDMA_WRITE:
		return IBV_QP_EX_WITH_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	case IBV_WR_SEND:
		return IBV_QP_EX_WITH_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return IBV_QP_EX_WITH_SEND_WITH_IMM;
	case IBV_WR_RDMA_READ:
		return IBV_QP_EX_WITH_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	case IBV_WR_LOCAL_INV:
		return IBV_QP_EX_WITH_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return IBV_QP_EX_WITH_BIND_MW;
	case IBV_WR_SEND_WITH_INV:
		return IBV_QP_EX_WITH_SEND_WITH_INV;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_QP_EX_WITH_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return SROCE_QP_EX_WITH_FLUSH;
	default:
		return 0;
	}
}

/* Check the work request being built and write it into the next slot. */
void ex_finish_cur(Qp &qp)
{
	QpExState &x = qp.ex;
	uint32_t inline_len = 0;
	void *slot = nullptr;
	int err;

	if (!x.have_cur)
		return;
	x.have_cur = false;
	if (x.err)
		return;
	err = send_wr_check(qp.sq, qp.vqp.qp.qp_type, x.cur, &inline_len);
	if (!err)
		slot = qp.sq.pr.next_slot(&err);
	if (!slot) {
		x.err = err;
		return;
	}
	send_wqe_build(static_cast<sroce_send_wqe *>(slot), x.cur, qp.vqp.qp.qp_type, inline_len,
	               qp.sq_sig_all);
	qp.sq.pr.prod++;
}

ibv_send_wr &ex_begin(ibv_qp_ex *qpx, uint32_t opcode)
{
	Qp &qp = qp_of(qpx);
	QpExState &x = qp.ex;

	ex_finish_cur(qp);
	memset(&x.cur, 0, sizeof(x.cur));
	x.cur.wr_id = qpx->wr_id;
	x.cur.send_flags = qpx->wr_flags;
	set_wr_opcode(&x.cur, opcode);
	x.have_cur = true;
	if (!(x.ops & op_bit(opcode)) && !x.err)
		x.err = EINVAL;
	return x.cur;
}

void ex_start(ibv_qp_ex *qpx)
{
	Qp &qp = qp_of(qpx);

	qp.sq.lock.lock();
	qp.ex.start = qp.sq.pr.prod;
	qp.ex.have_cur = false;
	qp.ex.err = qp.sq.pr.ring.present() && !qp.sq.pr.ring.failed() ? 0 : EIO;
	/* As ibv_post_send: no sends before RTS (IBA 10.3.1). */
	switch (qp.vqp.qp.state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		qp.ex.err = EINVAL;
		break;
	default:
		break;
	}
}

int ex_complete(ibv_qp_ex *qpx)
{
	Qp &qp = qp_of(qpx);
	ProducerRing &pr = qp.sq.pr;
	bool doorbell = false;
	int err;

	ex_finish_cur(qp);
	err = qp.ex.err;
	if (err) {
		pr.prod = qp.ex.start; /* nothing of the batch was published */
	} else if (pr.prod != qp.ex.start) {
		pr.publish(pr.prod);
		full_fence();
		doorbell = pr.ring.load_kflags() & (SROCE_SQ_NEED_WAKEUP | SROCE_RING_F_FLUSH);
	}
	qp.sq.lock.unlock();
	if (doorbell)
		err = qp_kernel_entry(qp.vqp.qp.context->cmd_fd, qp.vqp.qp.handle, false);
	return err;
}

void ex_abort(ibv_qp_ex *qpx)
{
	Qp &qp = qp_of(qpx);

	qp.ex.have_cur = false;
	qp.sq.pr.prod = qp.ex.start;
	qp.sq.lock.unlock();
}

void ex_send(ibv_qp_ex *qpx)
{
	ex_begin(qpx, IBV_WR_SEND);
}

void ex_send_imm(ibv_qp_ex *qpx, __be32 imm)
{
	ex_begin(qpx, IBV_WR_SEND_WITH_IMM).imm_data = imm;
}

void ex_send_inv(ibv_qp_ex *qpx, uint32_t rkey)
{
	ex_begin(qpx, IBV_WR_SEND_WITH_INV).invalidate_rkey = rkey;
}

void ex_rdma(ibv_send_wr &wr, uint32_t rkey, uint64_t addr)
{
	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = addr;
}

void ex_write(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	ex_rdma(ex_begin(qpx, IBV_WR_RDMA_WRITE), rkey, addr);
}

void ex_write_imm(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	ibv_send_wr &wr = ex_begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	ex_rdma(wr, rkey, addr);
	wr.imm_data = imm;
}

void ex_read(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	ex_rdma(ex_begin(qpx, IBV_WR_RDMA_READ), rkey, addr);
}

void ex_atomic(ibv_send_wr &wr, uint32_t rkey, uint64_t addr, uint64_t compare_add, uint64_t swap)
{
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.remote_addr = addr;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
}

void ex_cmp_swp(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap)
{
	ex_atomic(ex_begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP), rkey, addr, compare, swap);
}

void ex_fetch_add(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	ex_atomic(ex_begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD), rkey, addr, add, 0);
}

/* ATOMIC WRITE: @atomic_wire's 8 bytes go on the wire as they are. */
void ex_atomic_write(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *atomic_wire)
{
	ibv_send_wr &wr = ex_begin(qpx, IBV_WR_ATOMIC_WRITE);

	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.remote_addr = addr;
	memcpy(&wr.wr.atomic.compare_add, atomic_wire, sizeof(wr.wr.atomic.compare_add));
}

/* FLUSH: the range and the FETH's fields (see flush_wr_swap()). */
void ex_flush(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, size_t len, uint8_t type, uint8_t level)
{
	ibv_send_wr &wr = ex_begin(qpx, SROCE_WR_FLUSH);

	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.remote_addr = addr;
	wr.wr.atomic.compare_add = len;
	wr.wr.atomic.swap = flush_wr_swap(type, level);
}

void ex_bind_mw(ibv_qp_ex *qpx, ibv_mw *mw, uint32_t rkey, const ibv_mw_bind_info *info)
{
	ibv_send_wr &wr = ex_begin(qpx, IBV_WR_BIND_MW);

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = *info;
}

void ex_local_inv(ibv_qp_ex *qpx, uint32_t rkey)
{
	ex_begin(qpx, IBV_WR_LOCAL_INV).invalidate_rkey = rkey;
}

void ex_set_ud_addr(ibv_qp_ex *qpx, ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	QpExState &x = qp_of(qpx).ex;

	x.cur.wr.ud.ah = ah;
	x.cur.wr.ud.remote_qpn = remote_qpn;
	x.cur.wr.ud.remote_qkey = remote_qkey;
}

void ex_set_xrc_srqn(ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	qp_of(qpx).ex.cur.qp_type.xrc.remote_srqn = remote_srqn;
}

void ex_set_sge_list(ibv_qp_ex *qpx, size_t num_sge, const ibv_sge *sg_list)
{
	QpExState &x = qp_of(qpx).ex;

	if (num_sge > QpExState::kMaxSge) {
		x.err = x.err ? x.err : EINVAL;
		return;
	}
	memcpy(x.sges, sg_list, num_sge * sizeof(*sg_list));
	x.cur.sg_list = x.sges;
	x.cur.num_sge = int(num_sge);
	x.cur.send_flags &= ~unsigned(IBV_SEND_INLINE);
}

void ex_set_sge(ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	const ibv_sge sge{addr, length, lkey};

	ex_set_sge_list(qpx, 1, &sge);
}

void ex_set_inline_data_list(ibv_qp_ex *qpx, size_t num_buf, const ibv_data_buf *bufs)
{
	QpExState &x = qp_of(qpx).ex;
	size_t total = 0;

	for (size_t i = 0; i < num_buf; i++) {
		if (bufs[i].length > QpExState::kMaxInline - total) {
			x.err = x.err ? x.err : EINVAL;
			return;
		}
		memcpy(x.inline_buf + total, bufs[i].addr, bufs[i].length);
		total += bufs[i].length;
	}
	/* One SGE over our copy: send_wqe_build() gathers it into the WQE. */
	x.sges[0] = {reinterpret_cast<uintptr_t>(x.inline_buf), uint32_t(total), 0};
	x.cur.sg_list = x.sges;
	x.cur.num_sge = 1;
	x.cur.send_flags |= IBV_SEND_INLINE;
}

void ex_set_inline_data(ibv_qp_ex *qpx, void *addr, size_t length)
{
	const ibv_data_buf buf{addr, length};

	ex_set_inline_data_list(qpx, 1, &buf);
}

} /* namespace */

int qp_ex_setup(Qp &qp, uint64_t send_ops_flags)
{
	ibv_qp_ex &q = qp.vqp.qp_ex;

	if (send_ops_flags & ~uint64_t(QP_EX_SUPPORTED_OPS))
		return EOPNOTSUPP;
	qp.ex.ops = send_ops_flags;
	qp.vqp.comp_mask |= VERBS_QP_EX;
	q.wr_start = ex_start;
	q.wr_complete = ex_complete;
	q.wr_abort = ex_abort;
	q.wr_send = ex_send;
	q.wr_send_imm = ex_send_imm;
	q.wr_send_inv = ex_send_inv;
	q.wr_rdma_write = ex_write;
	q.wr_rdma_write_imm = ex_write_imm;
	q.wr_rdma_read = ex_read;
	q.wr_atomic_cmp_swp = ex_cmp_swp;
	q.wr_atomic_fetch_add = ex_fetch_add;
	q.wr_atomic_write = ex_atomic_write;
	q.wr_bind_mw = ex_bind_mw;
	q.wr_local_inv = ex_local_inv;
	q.wr_set_ud_addr = ex_set_ud_addr;
	q.wr_set_xrc_srqn = ex_set_xrc_srqn;
	q.wr_set_sge = ex_set_sge;
	q.wr_set_sge_list = ex_set_sge_list;
	q.wr_set_inline_data = ex_set_inline_data;
	q.wr_set_inline_data_list = ex_set_inline_data_list;
	return 0;
}

} /* namespace sroce */

/*
 * The one symbol the provider exports (sroce_ext.h): FLUSH for libibverbs
 * versions without ibv_wr_flush(). Only a QP whose builders are ours, and
 * that was created with the FLUSH send op, takes it.
 */
extern "C" __attribute__((visibility("default"))) int sroce_wr_flush(ibv_qp_ex *qpx, uint32_t rkey,
                                                                     uint64_t remote_addr,
                                                                     size_t len, uint8_t type,
                                                                     uint8_t level)
{
	if (!qpx || qpx->wr_start != sroce::ex_start ||
	    !(sroce::qp_of(qpx).ex.ops & SROCE_QP_EX_WITH_FLUSH))
		return EINVAL;
	sroce::ex_flush(qpx, rkey, remote_addr, len, type, level);
	return 0;
}
