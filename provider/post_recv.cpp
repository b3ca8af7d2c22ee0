// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Receive queue and SRQ data path. The kernel consumes receive WQEs as
 * packets arrive and needs no wakeup, so posting is ring writes and one
 * release store: never a system call.
 */
#include "datapath.h"

namespace sroce
{

static_assert(sizeof(sroce_recv_wqe) == SROCE_RECV_WQE_HDR_SIZE);
static_assert(offsetof(sroce_recv_wqe, sge) == SROCE_RECV_WQE_HDR_SIZE);

int recv_wr_check(const WorkQueue &rq, const ibv_recv_wr &wr)
{
	if (wr.num_sge < 0 || uint32_t(wr.num_sge) > rq.max_sge)
		return EINVAL;
	if (wr.num_sge > 0 && !wr.sg_list)
		return EINVAL;
	return 0;
}

void recv_wqe_build(sroce_recv_wqe *wqe, const ibv_recv_wr &wr)
{
	wqe->wr_id = wr.wr_id;
	wqe->num_sge = uint32_t(wr.num_sge);
	wqe->reserved = 0;
	for (int i = 0; i < wr.num_sge; i++) {
		wqe->sge[i].addr = wr.sg_list[i].addr;
		wqe->sge[i].length = wr.sg_list[i].length;
		wqe->sge[i].lkey = wr.sg_list[i].lkey;
	}
}

int rq_post(WorkQueue &rq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	SpinGuard guard(rq.lock);
	ProducerRing &pr = rq.pr;
	const uint32_t start = pr.prod;
	int err = 0;

	if (pr.ring.present() && pr.ring.failed()) {
		*bad_wr = wr;
		return EIO;
	}
	for (; wr; wr = wr->next) {
		void *slot;

		err = recv_wr_check(rq, *wr);
		slot = err ? nullptr : pr.next_slot(&err);
		if (!slot) {
			*bad_wr = wr;
			break;
		}
		recv_wqe_build(static_cast<sroce_recv_wqe *>(slot), *wr);
		pr.prod++;
	}
	if (pr.prod != start)
		pr.publish(pr.prod);
	return err;
}

int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	Qp *qp = to_qp(ibqp);
	int err;

	if (ibqp->srq || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	err = rq_post(qp->rq, wr, bad_wr);
	/*
	 * Receives never enter the kernel, except on a QP in the error
	 * state, whose new WQEs the kernel flushes (SROCE_RING_F_FLUSH).
	 */
	full_fence();
	if (qp->rq.pr.ring.present() && (qp->rq.pr.ring.load_kflags() & SROCE_RING_F_FLUSH)) {
		int kick = qp_kernel_entry(ibqp->context->cmd_fd, ibqp->handle, true);

		if (!err)
			err = kick;
	}
	return err;
}

int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	return rq_post(to_srq(ibsrq)->rq, wr, bad_wr);
}

} /* namespace sroce */
