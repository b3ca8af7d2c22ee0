/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libibverbs helpers shared by the tools (sroce-integrity,
 * sroce-verbs-check): owning pointers for every verbs object, errno names,
 * opening a device by name, finding its RoCE v2 GID, the names of MTUs and
 * QP states, GID text and kinds, device counters, waiting for a QP state,
 * and the attribute sets that walk an RC/UC/UD QP through INIT, RTR and
 * RTS.
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

namespace sroce_tools
{

/*
 * What an owning pointer does when its destroy verb fails: nothing, unless
 * the tool sets a handler (sroce-verbs-check logs it).
 */
using DestroyFailureHandler = void (*)(int ret, const char *what);
void set_destroy_failure_handler(DestroyFailureHandler handler);
void destroy_failed(int ret, const char *what);

template <typename T> const char *object_name();
template <> inline const char *object_name<ibv_context>()
{
	return "device context";
}
template <> inline const char *object_name<ibv_pd>()
{
	return "PD";
}
template <> inline const char *object_name<ibv_mr>()
{
	return "MR";
}
template <> inline const char *object_name<ibv_cq>()
{
	return "CQ";
}
template <> inline const char *object_name<ibv_qp>()
{
	return "QP";
}
template <> inline const char *object_name<ibv_ah>()
{
	return "AH";
}
template <> inline const char *object_name<ibv_srq>()
{
	return "SRQ";
}
template <> inline const char *object_name<ibv_mw>()
{
	return "memory window";
}
template <> inline const char *object_name<ibv_comp_channel>()
{
	return "completion channel";
}

/* Destroys a verbs object with its destroy verb when its owner goes. */
template <typename T, int (*Destroy)(T *)> struct VerbsDeleter {
	void operator()(T *obj) const noexcept
	{
		if (int ret = Destroy(obj))
			destroy_failed(ret, object_name<T>());
	}
};

using ContextPtr = std::unique_ptr<ibv_context, VerbsDeleter<ibv_context, ibv_close_device>>;
using PdPtr = std::unique_ptr<ibv_pd, VerbsDeleter<ibv_pd, ibv_dealloc_pd>>;
using MrPtr = std::unique_ptr<ibv_mr, VerbsDeleter<ibv_mr, ibv_dereg_mr>>;
using CqPtr = std::unique_ptr<ibv_cq, VerbsDeleter<ibv_cq, ibv_destroy_cq>>;
using QpPtr = std::unique_ptr<ibv_qp, VerbsDeleter<ibv_qp, ibv_destroy_qp>>;
using AhPtr = std::unique_ptr<ibv_ah, VerbsDeleter<ibv_ah, ibv_destroy_ah>>;
using SrqPtr = std::unique_ptr<ibv_srq, VerbsDeleter<ibv_srq, ibv_destroy_srq>>;
using MwPtr = std::unique_ptr<ibv_mw, VerbsDeleter<ibv_mw, ibv_dealloc_mw>>;
using ChannelPtr =
    std::unique_ptr<ibv_comp_channel, VerbsDeleter<ibv_comp_channel, ibv_destroy_comp_channel>>;

/* "EINVAL" for EINVAL, "0" for 0, "errno N" for anything unnamed. */
std::string errno_name(int err);

/*
 * Opens RDMA device @name; on failure returns null and puts the reason (with
 * the list of devices libibverbs sees) into @why.
 */
ContextPtr open_device(const char *name, std::string *why);

/* Which RoCE v2 GID of port 1 find_roce_v2_gid() takes: the first one... */
enum class GidKind {
	ipv4,        /* of an IPv4 address (IPv4-mapped) */
	ipv6_global, /* of an IPv6 address that is not link-local */
	ipv4_or_any, /* of an IPv4 address, else of any address */
};

/*
 * The index of the first RoCE v2 GID of @kind on port 1, the GID in *@gid;
 * -1 with the reason in *@why when there is none.
 */
int find_roce_v2_gid(ibv_context *ctx, GidKind kind, ibv_gid *gid, std::string *why);

/* The largest MTU of at most @bytes (256 below 256). */
ibv_mtu mtu_enum(uint32_t bytes);
/* @mtu in bytes; -1 for a value that is no MTU. */
int mtu_bytes(ibv_mtu mtu);
/* "RESET" .. "ERR"; "(query failed)" for -1 (wait_qp_state()), else "?". */
const char *qp_state_name(int state);

/* @gid in IPv6 text ("::ffff:10.0.0.1" for an IPv4 one); "?" if it has none. */
std::string gid_text(const ibv_gid &gid);
/* An IPv4 address mapped into IPv6 (::ffff:a.b.c.d). */
bool gid_is_ipv4_mapped(const ibv_gid &gid);
/* An IPv6 link-local address (fe80::/10). */
bool gid_is_link_local(const ibv_gid &gid);

/* Device @dev's port 1 counter @name (hw_counters), or -1 when it has none. */
long read_counter(const std::string &dev, const char *name);

/* The state ibv_query_qp reports, or -1 when the query failed. */
int query_qp_state(ibv_qp *qp);
/*
 * Queries @qp every 10 ms until it is in @want or @timeout_ms passed (a
 * device may post an error completion a moment before it moves the QP);
 * returns the last state read, -1 if no query succeeded.
 */
int wait_qp_state(ibv_qp *qp, int want, int timeout_ms);

/*
 * Everything the walk of a QP to RTS sets (IBA 10.3.1, table 91). The
 * zero values are the tools' defaults where they set none.
 */
struct QpPath {
	ibv_qp_type type = IBV_QPT_RC;
	unsigned int access = 0; /* RC, UC: INIT's access flags */
	uint32_t qkey = 0;       /* UD: INIT's Q_Key */
	/* RTR (RC, UC): the path to the peer QP */
	ibv_mtu path_mtu = IBV_MTU_1024;
	uint32_t dest_qpn = 0;
	uint32_t rq_psn = 0;
	ibv_gid dgid{};
	uint8_t sgid_index = 0;
	uint8_t hop_limit = 64;
	uint8_t traffic_class = 0;
	uint32_t flow_label = 0;
	uint8_t max_dest_rd_atomic = 0; /* RC */
	uint8_t min_rnr_timer = 0;      /* RC */
	/* RTS */
	uint32_t sq_psn = 0;
	uint8_t timeout = 0;       /* RC */
	uint8_t retry_cnt = 0;     /* RC */
	uint8_t rnr_retry = 0;     /* RC */
	uint8_t max_rd_atomic = 0; /* RC */
};

/* The attributes and mask of one step of the walk. */
struct QpTransition {
	ibv_qp_attr attr{};
	int mask = 0;
};

QpTransition qp_to_init(const QpPath &p);
QpTransition qp_to_rtr(const QpPath &p);
QpTransition qp_to_rts(const QpPath &p);

/*
 * Walks @qp from @from (IBV_QPS_RESET: all of it, IBV_QPS_INIT: RTR and
 * RTS) to RTS along @p. Returns 0, or the errno of the step that failed and
 * the state it was going to in *@stage (IBV_QPS_INIT, _RTR or _RTS).
 */
int walk_qp_to_rts(ibv_qp *qp, const QpPath &p, ibv_qp_state from, ibv_qp_state *stage);

} // namespace sroce_tools
