// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libibverbs helpers for sroce-verbs-check (see verbs_util.h).
 */
#include "verbs_util.h"

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

Mapping::Mapping(size_t length, int prot)
{
	void *p = mmap(nullptr, length, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	addr_ = p;
	length_ = length;
}

Mapping::~Mapping()
{
	if (addr_)
		munmap(addr_, length_);
}

int null_errno()
{
	return errno ? errno : -1;
}

ContextPtr open_device(const char *name, std::string *why)
{
	ibv_device **list;
	ibv_context *ctx = nullptr;
	std::string seen;
	int n = 0;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list) {
		*why = "ibv_get_device_list failed: " + errno_name(null_errno());
		return nullptr;
	}
	for (int i = 0; i < n; i++) {
		const char *dev_name = ibv_get_device_name(list[i]);

		seen += seen.empty() ? "" : " ";
		seen += dev_name;
		if (std::strcmp(dev_name, name) != 0)
			continue;
		errno = 0;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			*why = std::string("ibv_open_device(") + name +
			       ") failed: " + errno_name(null_errno());
		break;
	}
	ibv_free_device_list(list);
	if (!ctx && why->empty())
		*why = std::string("no device ") + name +
		       " (libibverbs lists: " + (seen.empty() ? "none" : seen) + ")";
	return ContextPtr(ctx);
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

static bool gid_is_ipv4_mapped(const ibv_gid &gid)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return std::memcmp(gid.raw, prefix, sizeof(prefix)) == 0;
}

bool pick_gid(ibv_context *ctx, int wanted, GidChoice *out, std::string *why)
{
	ibv_port_attr port{};
	ibv_gid_entry entry{};
	int fallback = -1;
	ibv_gid fallback_gid{};
	int ret;

	ret = ibv_query_port(ctx, 1, &port);
	if (ret) {
		*why = "ibv_query_port failed: " + errno_name(ret);
		return false;
	}
	if (wanted >= 0) {
		ret = ibv_query_gid_ex(ctx, 1, uint32_t(wanted), &entry, 0);
		if (ret) {
			*why = "GID index " + std::to_string(wanted) +
			       ": ibv_query_gid_ex failed: " + errno_name(ret);
			return false;
		}
		out->index = wanted;
		out->gid = entry.gid;
		out->ipv4 = gid_is_ipv4_mapped(entry.gid);
		return true;
	}
	for (int i = 0; i < port.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, uint32_t(i), &entry, 0))
			continue; /* an empty slot */
		if (entry.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (gid_is_ipv4_mapped(entry.gid)) {
			out->index = i;
			out->gid = entry.gid;
			out->ipv4 = true;
			return true;
		}
		if (fallback < 0) {
			fallback = i;
			fallback_gid = entry.gid;
		}
	}
	if (fallback < 0) {
		*why = "port 1 has no RoCE v2 GID";
		return false;
	}
	out->index = fallback;
	out->gid = fallback_gid;
	out->ipv4 = false;
	return true;
}

std::string gid_str(const ibv_gid &gid)
{
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, gid.raw, buf, sizeof(buf)))
		return "?";
	return buf;
}

int mtu_bytes(ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256:
		return 256;
	case IBV_MTU_512:
		return 512;
	case IBV_MTU_1024:
		return 1024;
	case IBV_MTU_2048:
		return 2048;
	case IBV_MTU_4096:
		return 4096;
	}
	return -1;
}

const char *qp_state_name(int state)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	if (state < 0 || state >= int(sizeof(names) / sizeof(names[0])))
		return "?";
	return names[state];
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

int wait_qp_state(ibv_qp *qp, ibv_qp_state want, int timeout_ms)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	int state = -1;

	for (;;) {
		ibv_qp_attr a{};
		ibv_qp_init_attr ia{};

		if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0)
			state = a.qp_state;
		if (state == want || std::chrono::steady_clock::now() >= end)
			return state;
		usleep(10000);
	}
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

QpTransition to_init(ibv_qp_type type, unsigned int access)
{
	QpTransition t;

	t.attr.qp_state = IBV_QPS_INIT;
	t.attr.pkey_index = 0;
	t.attr.port_num = 1;
	t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (type == IBV_QPT_UD) {
		t.attr.qkey = kQkey;
		t.mask |= IBV_QP_QKEY;
	} else {
		t.attr.qp_access_flags = access;
		t.mask |= IBV_QP_ACCESS_FLAGS;
	}
	return t;
}

QpTransition to_rtr(ibv_qp_type type, const GidChoice &gid, uint32_t dest_qpn)
{
	QpTransition t;

	t.attr.qp_state = IBV_QPS_RTR;
	t.mask = IBV_QP_STATE;
	if (type == IBV_QPT_UD)
		return t;
	t.attr.path_mtu = IBV_MTU_1024;
	t.attr.dest_qp_num = dest_qpn;
	t.attr.rq_psn = kRqPsn;
	t.attr.ah_attr.is_global = 1;
	t.attr.ah_attr.grh.dgid = gid.gid;
	t.attr.ah_attr.grh.sgid_index = uint8_t(gid.index);
	t.attr.ah_attr.grh.hop_limit = kHopLimit;
	t.attr.ah_attr.grh.traffic_class = kTrafficClass;
	t.attr.ah_attr.grh.flow_label = kFlowLabel;
	t.attr.ah_attr.port_num = 1;
	t.mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (type == IBV_QPT_RC) {
		t.attr.max_dest_rd_atomic = kMaxDestRdAtomic;
		t.attr.min_rnr_timer = kMinRnrTimer;
		t.mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return t;
}

QpTransition to_rts(ibv_qp_type type)
{
	QpTransition t;

	t.attr.qp_state = IBV_QPS_RTS;
	t.attr.sq_psn = kSqPsn;
	t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		t.attr.timeout = kTimeout;
		t.attr.retry_cnt = kRetryCnt;
		t.attr.rnr_retry = kRnrRetry;
		t.attr.max_rd_atomic = kMaxRdAtomic;
		t.mask |=
		    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return t;
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
	QpTransition steps[3] = {to_init(IBV_QPT_RC, access), to_rtr(IBV_QPT_RC, gid, dest_qpn),
	                         to_rts(IBV_QPT_RC)};
	static const char *const names[3] = {"INIT", "RTR", "RTS"};

	steps[2].attr.sq_psn = kRqPsn; /* what the peer's to_rtr() expects */
	steps[2].attr.timeout = timeout;
	for (int i = from == IBV_QPS_RTR ? 1 : 0; i < 3; i++) {
		int err = ibv_modify_qp(qp, &steps[i].attr, steps[i].mask);

		if (err) {
			if (stage)
				*stage = names[i];
			return err;
		}
	}
	return 0;
}

int connect_rc(ibv_qp *qp, const GidChoice &gid, uint32_t dest_qpn, unsigned int access,
               const char **stage)
{
	return connect_rc_from(qp, gid, dest_qpn, access, IBV_QPS_INIT, kTimeout, stage);
}

} /* namespace vc */
