// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-cmrate: how fast rdma_cm sets up RC connections between two hosts,
 * for the benchmark (tools/bench).
 *
 *   sroce-cmrate server ADDR PORT N
 *   sroce-cmrate client ADDR PORT N PARALLEL
 *
 * The server listens on ADDR:PORT (the address picks the RDMA device) and
 * accepts N connections, each with an RC QP of its own; the client opens N
 * connections to it, PARALLEL at a time: resolve the address, resolve the
 * route, create the QP, connect, established. The client prints
 *
 *   cmrate n=N parallel=P seconds=S conn_per_s=R
 *
 * where S runs from the first rdma_resolve_addr() to the last
 * ESTABLISHED. Then it disconnects them all, and both sides wait for every
 * DISCONNECTED and tear everything down. Every connection must get
 * through: a reject or an error event fails the run (exit status 1).
 */
#include "clock.h"
#include "number.h"

#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <string>
#include <vector>

namespace
{

using sroce_tools::now_s;
using sroce_tools::parse_uint_into;

constexpr unsigned long kMaxConns = 65536;
constexpr int kTimeoutMs = 5000; /* address and route resolution */

bool fail(const std::string &why)
{
	std::fprintf(stderr, "sroce-cmrate: %s\n", why.c_str());
	return false;
}

/* The PD and the one CQ every QP of the device shares. */
struct Verbs {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;

	bool get(ibv_context *c)
	{
		if (ctx)
			return ctx == c || fail("connections on more than one device");
		ctx = c;
		pd = ibv_alloc_pd(c);
		cq = pd ? ibv_create_cq(c, 256, nullptr, nullptr, 0) : nullptr;
		return cq ||
		       fail(std::string("ibv_alloc_pd/ibv_create_cq: ") + std::strerror(errno));
	}
	~Verbs()
	{
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
	}
};

bool make_qp(rdma_cm_id *id, Verbs *v)
{
	ibv_qp_init_attr ia{};

	if (!v->get(id->verbs))
		return false;
	ia.send_cq = v->cq;
	ia.recv_cq = v->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, v->pd, &ia))
		return fail(std::string("rdma_create_qp: ") + std::strerror(errno));
	return true;
}

bool parse_addr(const char *host, const char *port, sockaddr_storage *sa)
{
	addrinfo hints{}, *res = nullptr;

	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) || !res)
		return fail(std::string("cannot resolve ") + host);
	std::memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return true;
}

/* The next event, acknowledged; its type, id and status in the outputs. */
bool next_event(rdma_event_channel *ch, rdma_cm_event_type *type, rdma_cm_id **id,
                rdma_cm_id **listen_id, int *status)
{
	rdma_cm_event *ev = nullptr;

	if (rdma_get_cm_event(ch, &ev))
		return fail(std::string("rdma_get_cm_event: ") + std::strerror(errno));
	*type = ev->event;
	*id = ev->id;
	*listen_id = ev->listen_id;
	*status = ev->status;
	rdma_ack_cm_event(ev);
	return true;
}

int run_server(char **argv)
{
	unsigned long n;
	sockaddr_storage sa{};
	rdma_event_channel *ch = rdma_create_event_channel();
	rdma_cm_id *listen_id = nullptr;
	Verbs v;
	unsigned long established = 0, gone = 0;

	if (!parse_uint_into(argv[2], 1, kMaxConns, &n, 10) || !parse_addr(argv[0], argv[1], &sa))
		return fail("usage: server ADDR PORT N"), 1;
	if (!ch || rdma_create_id(ch, &listen_id, nullptr, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen_id, reinterpret_cast<sockaddr *>(&sa)) ||
	    rdma_listen(listen_id, 1024))
		return fail(std::string("listen: ") + std::strerror(errno)), 1;
	std::printf("listening\n");
	std::fflush(stdout);
	while (gone < n) {
		rdma_cm_event_type type;
		rdma_cm_id *id, *lid;
		int status;
		rdma_conn_param cp{};

		if (!next_event(ch, &type, &id, &lid, &status))
			return 1;
		switch (type) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			cp.responder_resources = 1;
			cp.initiator_depth = 1;
			cp.rnr_retry_count = 7;
			if (!make_qp(id, &v))
				return 1;
			if (rdma_accept(id, &cp))
				return fail(std::string("rdma_accept: ") + std::strerror(errno)), 1;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			established++;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			rdma_destroy_qp(id);
			rdma_destroy_id(id);
			gone++;
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			return fail(std::string("unexpected event ") + rdma_event_str(type) +
			            " status " + std::to_string(status)),
			       1;
		}
	}
	std::printf("cmrate_server n=%lu established=%lu\n", n, established);
	rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ch);
	return established == n ? 0 : 1;
}

int run_client(char **argv)
{
	unsigned long n, par;
	sockaddr_storage sa{};
	rdma_event_channel *ch = rdma_create_event_channel();
	std::vector<rdma_cm_id *> ids;
	Verbs v;
	unsigned long started = 0, established = 0, gone = 0;

	if (!parse_uint_into(argv[2], 1, kMaxConns, &n, 10) ||
	    !parse_uint_into(argv[3], 1, kMaxConns, &par, 10) ||
	    !parse_addr(argv[0], argv[1], &sa) || !ch)
		return fail("usage: client ADDR PORT N PARALLEL"), 1;
	ids.reserve(n);
	auto start = [&]() -> bool {
		rdma_cm_id *id = nullptr;

		if (rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP) ||
		    rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr *>(&sa), kTimeoutMs))
			return fail(std::string("rdma_resolve_addr: ") + std::strerror(errno));
		ids.push_back(id);
		started++;
		return true;
	};
	const double t0 = now_s();
	double t1 = t0;

	while (started < std::min(n, par))
		if (!start())
			return 1;
	while (established < n) {
		rdma_cm_event_type type;
		rdma_cm_id *id, *lid;
		int status;
		rdma_conn_param cp{};

		if (!next_event(ch, &type, &id, &lid, &status))
			return 1;
		switch (type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(id, kTimeoutMs))
				return fail(std::string("rdma_resolve_route: ") +
				            std::strerror(errno)),
				       1;
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			cp.responder_resources = 1;
			cp.initiator_depth = 1;
			cp.retry_count = 7;
			cp.rnr_retry_count = 7;
			if (!make_qp(id, &v))
				return 1;
			if (rdma_connect(id, &cp))
				return fail(std::string("rdma_connect: ") + std::strerror(errno)),
				       1;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			established++;
			t1 = now_s();
			if (started < n && !start())
				return 1;
			break;
		default:
			return fail(std::string("connection ") + std::to_string(established + 1) +
			            ": event " + rdma_event_str(type) + ", status " +
			            std::to_string(status)),
			       1;
		}
	}
	const double secs = t1 - t0;

	std::printf("cmrate n=%lu parallel=%lu seconds=%.3f conn_per_s=%.1f\n", n, par, secs,
	            secs > 0 ? double(n) / secs : 0.0);
	std::fflush(stdout);
	for (rdma_cm_id *id : ids)
		if (rdma_disconnect(id))
			return fail(std::string("rdma_disconnect: ") + std::strerror(errno)), 1;
	while (gone < n) {
		rdma_cm_event_type type;
		rdma_cm_id *id, *lid;
		int status;

		if (!next_event(ch, &type, &id, &lid, &status))
			return 1;
		if (type == RDMA_CM_EVENT_DISCONNECTED)
			gone++;
	}
	for (rdma_cm_id *id : ids) {
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	rdma_destroy_event_channel(ch);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 5 && std::strcmp(argv[1], "server") == 0)
		return run_server(argv + 2);
	if (argc == 6 && std::strcmp(argv[1], "client") == 0)
		return run_client(argv + 2);
	std::fprintf(stderr, "usage: sroce-cmrate server ADDR PORT N\n"
	                     "       sroce-cmrate client ADDR PORT N PARALLEL\n");
	return 2;
}
