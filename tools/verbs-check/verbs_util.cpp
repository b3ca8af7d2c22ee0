// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libibverbs helpers for sroce-verbs-check (see verbs_util.h).
 */
#include "verbs_util.h"

#include "commands.h"
#include "report.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace vc
{

bool kernel_at_least(int major, int minor)
{
	utsname u{};
	int ma = 0;
	int mi = 0;

	if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

void destroy_logged(int ret, const char *what)
{
	if (ret)
		std::fprintf(stderr, "sroce-verbs-check: cleanup: destroying a %s failed: %s\n",
		             what, errno_name(ret).c_str());
}

int null_errno()
{
	return errno ? errno : -1;
}

bool open_and_query(const char *name, Report &r, ContextPtr *ctx, ibv_device_attr *attr)
{
	std::string why;

	*ctx = open_device(name, &why);
	if (!*ctx) {
		r.fail("open", "%s", why.c_str());
		return false;
	}
	if (int ret = ibv_query_device(ctx->get(), attr)) {
		r.fail("query_device", "ibv_query_device: %s", errno_name(ret).c_str());
		return false;
	}
	return true;
}

bool pick_gid(ibv_context *ctx, int wanted, GidChoice *out, std::string *why)
{
	ibv_gid_entry entry{};

	if (wanted < 0) {
		out->index = find_roce_v2_gid(ctx, GidKind::ipv4_or_any, &out->gid, why);
		out->ipv4 = out->index >= 0 && gid_is_ipv4_mapped(out->gid);
		return out->index >= 0;
	}
	if (int ret = ibv_query_gid_ex(ctx, 1, uint32_t(wanted), &entry, 0)) {
		*why = "GID index " + std::to_string(wanted) +
		       ": ibv_query_gid_ex failed: " + errno_name(ret);
		return false;
	}
	out->index = wanted;
	out->gid = entry.gid;
	out->ipv4 = gid_is_ipv4_mapped(entry.gid);
	return true;
}

const char *qp_type_name(ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	default:
		return "?";
	}
}

int wait_async_event(ibv_context *ctx, int timeout_ms, ibv_async_event *event)
{
	int flags = fcntl(ctx->async_fd, F_GETFL);
	pollfd pfd = {ctx->async_fd, POLLIN, 0};
	int n;

	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -1;
	n = poll(&pfd, 1, timeout_ms);
	if (n <= 0)
		return n;
	if (ibv_get_async_event(ctx, event))
		return errno == EAGAIN ? 0 : -1;
	return 1;
}

ibv_cq *wait_cq_event(ibv_comp_channel *channel, int timeout_ms)
{
	int flags = fcntl(channel->fd, F_GETFL);
	pollfd pfd = {channel->fd, POLLIN, 0};
	ibv_cq *cq = nullptr;
	void *cq_context = nullptr;

	if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return nullptr;
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return nullptr;
	if (ibv_get_cq_event(channel, &cq, &cq_context))
		return nullptr;
	return cq;
}

int poll_cq_for(ibv_cq *cq, ibv_wc *wc, int want, int timeout_ms)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	int got = 0;

	while (got < want) {
		int n = ibv_poll_cq(cq, want - got, wc + got);

		if (n < 0)
			return got ? got : n;
		got += n;
		if (n == 0 && std::chrono::steady_clock::now() >= end)
			break;
	}
	return got;
}

namespace
{

/* The path of every QP the checks walk: the values of verbs_util.h. */
sroce_tools::QpPath check_path(ibv_qp_type type, unsigned int access, const GidChoice &gid,
                               uint32_t dest_qpn)
{
	sroce_tools::QpPath p;

	p.type = type;
	p.access = access;
	p.qkey = kQkey;
	p.path_mtu = IBV_MTU_1024;
	p.dest_qpn = dest_qpn;
	p.rq_psn = kRqPsn;
	p.dgid = gid.gid;
	p.sgid_index = uint8_t(gid.index);
	p.hop_limit = kHopLimit;
	p.traffic_class = kTrafficClass;
	p.flow_label = kFlowLabel;
	p.max_dest_rd_atomic = kMaxDestRdAtomic;
	p.min_rnr_timer = kMinRnrTimer;
	p.sq_psn = kSqPsn;
	p.timeout = kTimeout;
	p.retry_cnt = kRetryCnt;
	p.rnr_retry = kRnrRetry;
	p.max_rd_atomic = kMaxRdAtomic;
	return p;
}

} // namespace

QpTransition to_init(ibv_qp_type type, unsigned int access)
{
	return sroce_tools::qp_to_init(check_path(type, access, GidChoice(), 0));
}

QpTransition to_rtr(ibv_qp_type type, const GidChoice &gid, uint32_t dest_qpn)
{
	return sroce_tools::qp_to_rtr(check_path(type, 0, gid, dest_qpn));
}

QpTransition to_rts(ibv_qp_type type)
{
	return sroce_tools::qp_to_rts(check_path(type, 0, GidChoice(), 0));
}

ibv_send_wr bind_mw_wr(uint64_t wr_id, ibv_mw *mw, uint32_t rkey, ibv_mr *mr, uint64_t addr,
                       uint64_t length, unsigned int access)
{
	ibv_send_wr wr{};

	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw = {mw, rkey, {mr, addr, length, access}};
	return wr;
}

namespace
{
uint8_t pattern_byte(uint32_t seed, uint32_t j)
{
	return uint8_t(seed * 37 + j * 11 + (j >> 8));
}
} // namespace

void fill_pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t j = 0; j < len; j++)
		p[j] = pattern_byte(seed, j);
}

bool same_pattern(const uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t j = 0; j < len; j++)
		if (p[j] != pattern_byte(seed, j))
			return false;
	return true;
}

ibv_ah_attr loopback_ah(const GidChoice &gid, uint8_t hop_limit)
{
	ibv_ah_attr a{};

	a.is_global = 1;
	a.grh.dgid = gid.gid;
	a.grh.sgid_index = uint8_t(gid.index);
	a.grh.hop_limit = hop_limit;
	a.port_num = 1;
	return a;
}

ibv_qp_init_attr rc_qp_init(ibv_cq *cq, uint32_t send_wr, uint32_t recv_wr)
{
	ibv_qp_init_attr ia{};

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = send_wr;
	ia.cap.max_recv_wr = recv_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	return ia;
}

int connect_rc_from(ibv_qp *qp, const GidChoice &gid, uint32_t dest_qpn, unsigned int access,
                    ibv_qp_state from, uint8_t timeout, const char **stage)
{
	sroce_tools::QpPath p = check_path(IBV_QPT_RC, access, gid, dest_qpn);
	ibv_qp_state failed = IBV_QPS_RESET;

	p.sq_psn = kRqPsn; /* what the peer's to_rtr() expects */
	p.timeout = timeout;
	int err = sroce_tools::walk_qp_to_rts(
	    qp, p, from == IBV_QPS_RTR ? IBV_QPS_INIT : IBV_QPS_RESET, &failed);
	if (err && stage)
		*stage = qp_state_name(failed);
	return err;
}

int connect_rc_rnr(ibv_qp *qp, const GidChoice &gid, uint32_t dest_qpn, unsigned int access,
                   uint8_t rnr_retry)
{
	sroce_tools::QpPath p = check_path(IBV_QPT_RC, access, gid, dest_qpn);
	ibv_qp_state failed = IBV_QPS_RESET;

	p.sq_psn = kRqPsn;
	p.timeout = kTimeout;
	p.rnr_retry = rnr_retry;
	return sroce_tools::walk_qp_to_rts(qp, p, IBV_QPS_RESET, &failed);
}

int connect_rc(ibv_qp *qp, const GidChoice &gid, uint32_t dest_qpn, unsigned int access,
               const char **stage)
{
	return connect_rc_from(qp, gid, dest_qpn, access, IBV_QPS_INIT, kTimeout, stage);
}

bool open_loopback(const char *command, int argc, char **argv, LoopbackTarget *t, int *status,
                   bool takes_quick)
{
	Args args;
	std::string why;
	long gid_index;

	*status = 2;
	if (!args.parse(argc, argv, {{"gid-index", true}, {"quick", false}}, &why)) {
		usage_error(command, why);
		return false;
	}
	t->quick = args.has("quick");
	if (t->quick && !takes_quick) {
		usage_error(command, "takes no --quick");
		return false;
	}
	if (args.num_positional() != 1) {
		usage_error(command, "expects one device name");
		return false;
	}
	if (!args.number("gid-index", -1, -1, 65535, &gid_index, &why)) {
		usage_error(command, why);
		return false;
	}
	t->dev = args.positional(0);
	t->ctx = open_device(t->dev, &why);
	if (!t->ctx || !pick_gid(t->ctx.get(), int(gid_index), &t->gid, &why)) {
		Report r(command);
		r.fail("open", "%s", why.c_str());
		*status = r.finish();
		return false;
	}
	return true;
}

} /* namespace vc */
