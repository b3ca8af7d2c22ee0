// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libibverbs plumbing (see verbs.h).
 */
#include "verbs.h"

#include "channel.h"
#include "log.h"
#include "options.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace integ
{

namespace
{

std::string err_text(int err)
{
	return std::strerror(err > 0 ? err : EIO);
}

} // namespace

bool Device::open(const Options &opt, std::string *why)
{
	ctx = open_device(opt.device.c_str(), why);
	if (!ctx)
		return false;
	name = opt.device;
	if (int err = ibv_query_device(ctx.get(), &attr)) {
		*why = "ibv_query_device: " + err_text(err);
		return false;
	}
	if (int err = ibv_query_port(ctx.get(), 1, &port)) {
		*why = "ibv_query_port: " + err_text(err);
		return false;
	}
	if (port.state != IBV_PORT_ACTIVE) {
		*why = name + ": port 1 is not ACTIVE";
		return false;
	}
	if (opt.gid_index >= 0) {
		gid_index = opt.gid_index;
	} else {
		gid_index = find_roce_v2_gid(
		    ctx.get(), opt.ipv6 ? GidKind::ipv6_global : GidKind::ipv4, &gid, why);
		if (gid_index < 0) {
			*why += " (use --gid-index)";
			return false;
		}
	}
	if (int err = ibv_query_gid(ctx.get(), 1, gid_index, &gid)) {
		*why = "ibv_query_gid " + std::to_string(gid_index) + ": " + err_text(err);
		return false;
	}
	pd.reset(ibv_alloc_pd(ctx.get()));
	if (!pd) {
		*why = "ibv_alloc_pd: " + err_text(errno);
		return false;
	}
	return true;
}

bool Buffer::alloc(size_t len, std::string *why)
{
	const size_t page = 4096;
	const size_t bytes = (len + page - 1) & ~(page - 1);

	if (!map(bytes, PROT_READ | PROT_WRITE)) {
		*why = "mmap " + std::to_string(bytes) + " bytes: " + err_text(errno);
		return false;
	}
	return true;
}

MrPtr reg_mr(ibv_pd *pd, const Buffer &buf, unsigned access, std::string *why)
{
	MrPtr mr(ibv_reg_mr(pd, buf.data(), buf.size(), int(access)));

	if (!mr)
		*why = "ibv_reg_mr of " + std::to_string(buf.size()) + " bytes: " + err_text(errno);
	return mr;
}

bool Cq::create(ibv_context *ctx, int cqe, std::string *why)
{
	channel_.reset(ibv_create_comp_channel(ctx));
	if (!channel_) {
		*why = "ibv_create_comp_channel: " + err_text(errno);
		return false;
	}
	const int flags = fcntl(channel_->fd, F_GETFL);

	fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK);
	cq_.reset(ibv_create_cq(ctx, cqe, nullptr, channel_.get(), 0));
	if (!cq_) {
		*why = "ibv_create_cq " + std::to_string(cqe) + ": " + err_text(errno);
		return false;
	}
	return true;
}

int Cq::wait(ibv_wc *wc, int n, int64_t deadline_ms)
{
	for (;;) {
		int got = ibv_poll_cq(cq_.get(), n, wc);

		if (got)
			return got < 0 ? -1 : got;
		const int64_t left = deadline_ms - now_ms();

		if (left <= 0)
			return 0;
		if (ibv_req_notify_cq(cq_.get(), 0) == 0) {
			got = ibv_poll_cq(cq_.get(), n, wc);
			if (got)
				return got < 0 ? -1 : got;
		}
		pollfd p = {channel_->fd, POLLIN, 0};

		if (::poll(&p, 1, int(std::min<int64_t>(left, 20))) > 0) {
			ibv_cq *ev_cq;
			void *ev_ctx;

			if (ibv_get_cq_event(channel_.get(), &ev_cq, &ev_ctx) == 0)
				ibv_ack_cq_events(ev_cq, 1);
		}
	}
}

SrqPtr create_srq(Device &dev, uint32_t max_wr, uint32_t max_sge, uint32_t *granted_sge,
                  std::string *why)
{
	ibv_srq_init_attr ia{};

	ia.attr.max_wr = max_wr;
	ia.attr.max_sge = max_sge;
	SrqPtr srq(ibv_create_srq(dev.pd.get(), &ia));
	if (!srq) {
		*why = "ibv_create_srq (max_wr " + std::to_string(max_wr) + " max_sge " +
		       std::to_string(max_sge) + "): " + err_text(errno);
		return srq;
	}
	*granted_sge = ia.attr.max_sge;
	return srq;
}

QpPtr create_qp(Device &dev, Cq &send_cq, Cq &recv_cq, ibv_qp_type type, const ibv_qp_cap &want,
                ibv_qp_cap *granted, std::string *why, ibv_srq *srq)
{
	ibv_qp_init_attr ia{};

	ia.send_cq = send_cq.get();
	ia.recv_cq = recv_cq.get();
	ia.srq = srq;
	ia.qp_type = type;
	ia.sq_sig_all = 0;
	ia.cap = want;
	if (srq) {
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
	}
	QpPtr qp(ibv_create_qp(dev.pd.get(), &ia));

	if (!qp && want.max_inline_data) {
		log().info("ibv_create_qp with max_inline_data %u failed (%s); trying without "
		           "inline data",
		           want.max_inline_data, err_text(errno).c_str());
		ia.cap.max_inline_data = 0;
		qp.reset(ibv_create_qp(dev.pd.get(), &ia));
	}
	if (!qp) {
		*why = "ibv_create_qp (send_wr " + std::to_string(want.max_send_wr) + " recv_wr " +
		       std::to_string(want.max_recv_wr) + " send_sge " +
		       std::to_string(want.max_send_sge) + " recv_sge " +
		       std::to_string(want.max_recv_sge) + "): " + err_text(errno);
		return qp;
	}
	if (granted)
		*granted = ia.cap;
	return qp;
}

bool connect_qp(ibv_qp *qp, const Device &dev, const QpParams &p, const QpEnd &local,
                const QpEnd &remote, std::string *why)
{
	sroce_tools::QpPath path;
	ibv_qp_state failed = IBV_QPS_RESET;

	path.type = p.type;
	path.access = p.access;
	path.path_mtu = mtu_enum(p.path_mtu);
	path.dest_qpn = remote.qpn;
	path.rq_psn = remote.psn;
	path.dgid = remote.gid;
	path.sgid_index = uint8_t(dev.gid_index);
	path.max_dest_rd_atomic = p.max_dest_rd_atomic;
	path.min_rnr_timer = p.min_rnr_timer;
	path.sq_psn = local.psn;
	path.timeout = p.timeout;
	path.retry_cnt = p.retry_cnt;
	path.rnr_retry = p.rnr_retry;
	path.max_rd_atomic = p.max_rd_atomic;
	if (int err = sroce_tools::walk_qp_to_rts(qp, path, IBV_QPS_RESET, &failed)) {
		*why = std::string(failed == IBV_QPS_INIT  ? "RESET -> INIT: "
		                   : failed == IBV_QPS_RTR ? "INIT -> RTR: "
		                                           : "RTR -> RTS: ") +
		       err_text(err);
		return false;
	}
	return true;
}

const char *wc_status_name(int status)
{
	static const char *const names[] = {
	    "IBV_WC_SUCCESS",
	    "IBV_WC_LOC_LEN_ERR",
	    "IBV_WC_LOC_QP_OP_ERR",
	    "IBV_WC_LOC_EEC_OP_ERR",
	    "IBV_WC_LOC_PROT_ERR",
	    "IBV_WC_WR_FLUSH_ERR",
	    "IBV_WC_MW_BIND_ERR",
	    "IBV_WC_BAD_RESP_ERR",
	    "IBV_WC_LOC_ACCESS_ERR",
	    "IBV_WC_REM_INV_REQ_ERR",
	    "IBV_WC_REM_ACCESS_ERR",
	    "IBV_WC_REM_OP_ERR",
	    "IBV_WC_RETRY_EXC_ERR",
	    "IBV_WC_RNR_RETRY_EXC_ERR",
	    "IBV_WC_LOC_RDD_VIOL_ERR",
	    "IBV_WC_REM_INV_RD_REQ_ERR",
	    "IBV_WC_REM_ABORT_ERR",
	    "IBV_WC_INV_EECN_ERR",
	    "IBV_WC_INV_EEC_STATE_ERR",
	    "IBV_WC_FATAL_ERR",
	    "IBV_WC_RESP_TIMEOUT_ERR",
	    "IBV_WC_GENERAL_ERR",
	    "IBV_WC_TM_ERR",
	    "IBV_WC_TM_RNDV_INCOMPLETE",
	};
	static_assert(sizeof(names) / sizeof(names[0]) == IBV_WC_TM_RNDV_INCOMPLETE + 1,
	              "one name per ibv_wc_status");

	if (status < 0 || size_t(status) >= sizeof(names) / sizeof(names[0]))
		return "IBV_WC_(unknown)";
	return names[status];
}

const char *wc_opcode_name(int opcode)
{
	switch (opcode) {
	case IBV_WC_SEND:
		return "SEND";
	case IBV_WC_RDMA_WRITE:
		return "RDMA_WRITE";
	case IBV_WC_RDMA_READ:
		return "RDMA_READ";
	case IBV_WC_COMP_SWAP:
		return "COMP_SWAP";
	case IBV_WC_FETCH_ADD:
		return "FETCH_ADD";
	case IBV_WC_BIND_MW:
		return "BIND_MW";
	case IBV_WC_LOCAL_INV:
		return "LOCAL_INV";
	case IBV_WC_RECV:
		return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return "RECV_RDMA_WITH_IMM";
	default:
		return "(other)";
	}
}

} // namespace integ
