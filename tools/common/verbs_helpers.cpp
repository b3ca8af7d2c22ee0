// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libibverbs helpers shared by the tools (see verbs_helpers.h).
 */
#include "verbs_helpers.h"

#include "clock.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace sroce_tools
{

namespace
{

DestroyFailureHandler destroy_failure_handler;

} // namespace

void set_destroy_failure_handler(DestroyFailureHandler handler)
{
	destroy_failure_handler = handler;
}

void destroy_failed(int ret, const char *what)
{
	if (destroy_failure_handler)
		destroy_failure_handler(ret, what);
}

std::string errno_name(int err)
{
	const char *name;

	if (err == 0)
		return "0";
	name = err > 0 ? strerrorname_np(err) : nullptr;
	if (name)
		return name;
	return "errno " + std::to_string(err);
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
		*why = "ibv_get_device_list failed: " + errno_name(errno ? errno : -1);
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
			       ") failed: " + errno_name(errno ? errno : -1);
		break;
	}
	ibv_free_device_list(list);
	if (!ctx && why->empty())
		*why = std::string("no device ") + name +
		       " (libibverbs lists: " + (seen.empty() ? "none" : seen) + ")";
	return ContextPtr(ctx);
}

int find_roce_v2_gid(ibv_context *ctx, GidKind kind, ibv_gid *gid, std::string *why)
{
	ibv_port_attr port{};
	ibv_gid_entry entry{};
	int any = -1;
	ibv_gid any_gid{};

	if (int ret = ibv_query_port(ctx, 1, &port)) {
		*why = "ibv_query_port failed: " + errno_name(ret);
		return -1;
	}
	for (int i = 0; i < port.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, uint32_t(i), &entry, 0))
			continue; /* an empty slot */
		if (entry.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		const bool v4 = gid_is_ipv4_mapped(entry.gid);

		if (kind == GidKind::ipv6_global ? !v4 && !gid_is_link_local(entry.gid) : v4) {
			*gid = entry.gid;
			return i;
		}
		if (kind == GidKind::ipv4_or_any && any < 0) {
			any = i;
			any_gid = entry.gid;
		}
	}
	if (any >= 0) {
		*gid = any_gid;
		return any;
	}
	*why = std::string("port 1 has no RoCE v2 GID") +
	       (kind == GidKind::ipv4          ? " of an IPv4 address"
	        : kind == GidKind::ipv6_global ? " of a global IPv6 address"
	                                       : "");
	return -1;
}

ibv_mtu mtu_enum(uint32_t bytes)
{
	if (bytes >= 4096)
		return IBV_MTU_4096;
	if (bytes >= 2048)
		return IBV_MTU_2048;
	if (bytes >= 1024)
		return IBV_MTU_1024;
	if (bytes >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
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

	if (state == -1)
		return "(query failed)";
	if (state < 0 || size_t(state) >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[state];
}

std::string gid_text(const ibv_gid &gid)
{
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, gid.raw, buf, sizeof(buf)))
		return "?";
	return buf;
}

bool gid_is_ipv4_mapped(const ibv_gid &gid)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return std::memcmp(gid.raw, prefix, sizeof(prefix)) == 0;
}

bool gid_is_link_local(const ibv_gid &gid)
{
	return gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80;
}

long read_counter(const std::string &dev, const char *name)
{
	std::ifstream f("/sys/class/infiniband/" + dev + "/ports/1/hw_counters/" + name);
	long v = -1;

	if (!(f >> v))
		return -1;
	return v;
}

int query_qp_state(ibv_qp *qp)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

int wait_qp_state(ibv_qp *qp, int want, int timeout_ms)
{
	const int64_t deadline = now_ms() + timeout_ms;
	int state = -1;

	for (;;) {
		const int got = query_qp_state(qp);

		if (got >= 0)
			state = got;
		if (state == want || now_ms() >= deadline)
			return state;
		usleep(10 * 1000);
	}
}

QpTransition qp_to_init(const QpPath &p)
{
	QpTransition t;

	t.attr.qp_state = IBV_QPS_INIT;
	t.attr.pkey_index = 0;
	t.attr.port_num = 1;
	t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (p.type == IBV_QPT_UD) {
		t.attr.qkey = p.qkey;
		t.mask |= IBV_QP_QKEY;
	} else {
		t.attr.qp_access_flags = p.access;
		t.mask |= IBV_QP_ACCESS_FLAGS;
	}
	return t;
}

QpTransition qp_to_rtr(const QpPath &p)
{
	QpTransition t;

	t.attr.qp_state = IBV_QPS_RTR;
	t.mask = IBV_QP_STATE;
	if (p.type == IBV_QPT_UD)
		return t;
	t.attr.path_mtu = p.path_mtu;
	t.attr.dest_qp_num = p.dest_qpn;
	t.attr.rq_psn = p.rq_psn;
	t.attr.ah_attr.is_global = 1;
	t.attr.ah_attr.grh.dgid = p.dgid;
	t.attr.ah_attr.grh.sgid_index = p.sgid_index;
	t.attr.ah_attr.grh.hop_limit = p.hop_limit;
	t.attr.ah_attr.grh.traffic_class = p.traffic_class;
	t.attr.ah_attr.grh.flow_label = p.flow_label;
	t.attr.ah_attr.port_num = 1;
	t.mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	/* The responders: RC and the XRC target (not the initiator). */
	if (p.type == IBV_QPT_RC || p.type == IBV_QPT_XRC_RECV) {
		t.attr.max_dest_rd_atomic = p.max_dest_rd_atomic;
		t.attr.min_rnr_timer = p.min_rnr_timer;
		t.mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return t;
}

QpTransition qp_to_rts(const QpPath &p)
{
	QpTransition t;

	t.attr.qp_state = IBV_QPS_RTS;
	t.attr.sq_psn = p.sq_psn;
	t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	/* The requesters: RC and the XRC initiator (not the target). */
	if (p.type == IBV_QPT_RC || p.type == IBV_QPT_XRC_SEND) {
		t.attr.timeout = p.timeout;
		t.attr.retry_cnt = p.retry_cnt;
		t.attr.rnr_retry = p.rnr_retry;
		t.attr.max_rd_atomic = p.max_rd_atomic;
		t.mask |=
		    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	} else if (p.type == IBV_QPT_XRC_RECV) {
		/* ib_core wants it of an XRC target too. */
		t.attr.timeout = p.timeout;
		t.mask |= IBV_QP_TIMEOUT;
	}
	return t;
}

int walk_qp_to_rts(ibv_qp *qp, const QpPath &p, ibv_qp_state from, ibv_qp_state *stage)
{
	const QpTransition steps[] = {qp_to_init(p), qp_to_rtr(p), qp_to_rts(p)};

	for (const QpTransition &s : steps) {
		if (s.attr.qp_state <= from)
			continue;
		QpTransition t = s;

		if (int err = ibv_modify_qp(qp, &t.attr, t.mask)) {
			if (stage)
				*stage = s.attr.qp_state;
			return err;
		}
	}
	return 0;
}

} // namespace sroce_tools
